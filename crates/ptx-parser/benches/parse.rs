//! Parser throughput on a multi-megabyte module built from realistic kernels, plus (when
//! `corpus/build.sh` has been run) the real nvcc/Triton files of the corpus.

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
    // Real compiler output, if the (git-ignored) corpus has been built.
    let corpus = concat!(env!("CARGO_MANIFEST_DIR"), "/../../corpus/build");
    let mut files: Vec<_> = std::fs::read_dir(corpus)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ptx"))
        .collect();
    files.sort();
    for path in files {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        if ptx_parser::parse(&text).is_err() {
            continue;
        }
        let name = path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default();
        group.throughput(Throughput::Bytes(text.len() as u64));
        group.bench_function(format!("corpus/{name}"), |b| {
            b.iter(|| ptx_parser::parse(black_box(&text)).expect("parses"))
        });
    }
    group.finish();
}

criterion_group!(benches, bench_parse);
criterion_main!(benches);
