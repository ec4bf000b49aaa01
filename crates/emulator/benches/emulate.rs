//! Emulation throughput on a generated warp-specialized producer/consumer kernel and on a
//! shuffle-heavy one (Singe-like butterfly reductions without `--warp-sync`).
//!
//! A criterion benchmark whose throughput unit is thread-instructions (criterion prints them
//! per second as `elem/s`); it also prints bytes per recorded command (including the
//! per-thread `Vec` overhead). Run with `cargo bench -p emulator --bench emulate`.

use std::fmt::Write as _;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use emulator::{Config, Emulation, emulate};

/// The start of a 256-thread kernel `entry` up to its register declarations.
fn header(entry: &str) -> String {
    format!(
        ".version 8.0\n.target sm_80\n.address_size 64\n.visible .entry {entry}()\n\
         .reqntid 256, 1, 1\n{{\n    .reg .b32 %r<32>;\n    .reg .pred %p<4>;\n"
    )
}

/// A 256-thread kernel: warps 0–3 produce into a double buffer, warps 4–7 consume, with
/// named barriers 1–4 and `iters` loop iterations of integer work per stage.
fn kernel(iters: u32) -> String {
    let mut s = String::new();
    s.push_str(&header("pc"));
    let _ = write!(
        s,
        r#"    .shared .align 16 .b8 buf[8192];
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 127;
    shl.b32 %r3, %r2, 2;
    mov.u32 %r4, buf;
    add.s32 %r5, %r4, %r3;
    mov.u32 %r6, 0;
    setp.ge.u32 %p1, %r1, 128;
    @%p1 bra CONSUMER;
PLOOP:
    and.b32 %r7, %r6, 1;
    shl.b32 %r8, %r7, 12;
    add.s32 %r9, %r5, %r8;
    add.s32 %r10, %r7, 1;
    bar.sync %r10, 256;
    mad.lo.s32 %r11, %r6, 17, %r1;
    xor.b32 %r12, %r11, 0x55;
    shr.u32 %r13, %r12, 3;
    add.s32 %r14, %r13, %r11;
    mul.lo.s32 %r15, %r14, 3;
    st.shared.u32 [%r9], %r15;
    st.shared.u32 [%r9+512], %r14;
    add.s32 %r16, %r7, 3;
    bar.arrive %r16, 256;
    add.s32 %r6, %r6, 1;
    setp.lt.u32 %p2, %r6, {iters};
    @%p2 bra PLOOP;
    ret;
CONSUMER:
    bar.arrive 1, 256;
    bar.arrive 2, 256;
CLOOP:
    and.b32 %r7, %r6, 1;
    shl.b32 %r8, %r7, 12;
    add.s32 %r9, %r5, %r8;
    add.s32 %r16, %r7, 3;
    bar.sync %r16, 256;
    ld.shared.u32 %r17, [%r9];
    ld.shared.u32 %r18, [%r9+512];
    add.s32 %r19, %r17, %r18;
    shl.b32 %r20, %r19, 1;
    or.b32 %r21, %r20, %r6;
    selp.b32 %r22, %r21, %r19, %p1;
    add.s32 %r10, %r7, 1;
    add.s32 %r6, %r6, 1;
    setp.lt.u32 %p3, %r6, {iters};
    @%p3 bar.arrive %r10, 256;
    @%p3 bra CLOOP;
    ret;
}}
"#
    );
    s
}

/// A 256-thread kernel: every lane runs `iters` trips of 20 butterfly `shfl.sync` steps with
/// an add after each (the warp's lanes meet at every shuffle).
fn shuffles(iters: u32) -> String {
    let mut steps = String::new();
    for i in 0..20 {
        let _ = write!(
            steps,
            "    shfl.sync.bfly.b32 %r21, %r20, {}, 31, -1;\n    add.s32 %r20, %r20, %r21;\n",
            1 << (i % 5)
        );
    }
    let header = header("sh");
    format!(
        r#"{header}    mov.u32 %r1, %tid.x;
    mov.u32 %r20, %r1;
    mov.u32 %r2, 0;
LOOP:
{steps}    add.s32 %r2, %r2, 1;
    setp.lt.u32 %p1, %r2, {iters};
    @%p1 bra LOOP;
    ret;
}}
"#
    )
}

/// Benchmarks the emulation of kernel `entry` of `text` as `emulate/{name}`, its throughput
/// in thread-instructions; returns one emulation of it (checked: nothing unverifiable).
fn bench_kernel(c: &mut Criterion, name: &str, text: &str, entry: &str) -> Emulation {
    let module = ptx_parser::parse(text).expect("generated PTX parses");
    let config = Config::default();
    let e = emulate(&module, entry, &config).expect("emulates");
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    let mut group = c.benchmark_group("emulate");
    group.throughput(Throughput::Elements(e.stats.instructions));
    group.sample_size(10);
    group.bench_function(name, |b| {
        b.iter(|| emulate(&module, entry, &config).expect("emulates"))
    });
    group.finish();
    e
}

fn bench(c: &mut Criterion) {
    let e = bench_kernel(c, "producer_consumer", &kernel(2000), "pc");
    let commands = e.program.num_commands();
    let bytes: usize = e
        .program
        .threads
        .iter()
        .map(|t| {
            t.commands.capacity() * std::mem::size_of::<weft_program::Command>()
                + std::mem::size_of::<weft_program::ThreadProgram>()
        })
        .sum();
    println!(
        "emulate/producer_consumer: {} thread-instructions per run; {commands} commands, {:.2} bytes/command (Command is {} bytes; Vec capacity and headers included)",
        e.stats.instructions,
        bytes as f64 / commands as f64,
        std::mem::size_of::<weft_program::Command>()
    );
    bench_kernel(c, "shuffles", &shuffles(200), "sh");
}

criterion_group!(benches, bench);
criterion_main!(benches);
