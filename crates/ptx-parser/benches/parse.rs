//! Parser throughput on a multi-megabyte module built from realistic kernels.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;

mod common;
use common::big_module;

fn bench_parse(c: &mut Criterion) {
    let text = big_module(8 << 20);
    let m = ptx_parser::parse(&text).expect("benchmark module parses");
    assert!(m.functions.len() > 100);
    let mut group = c.benchmark_group("parse");
    group.throughput(Throughput::Bytes(text.len() as u64));
    group.sample_size(10);
    group.bench_function("8MB_module", |b| {
        b.iter(|| ptx_parser::parse(black_box(&text)).expect("parses"))
    });
    group.finish();
}

criterion_group!(benches, bench_parse);
criterion_main!(benches);
