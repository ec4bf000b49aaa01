//! Race detection at the scale of the WEFT paper's largest CudaDMA kernel (`saxpy_single`:
//! 320 threads, 8,192 dynamic barriers, 3.7 million commands, 1.9 billion naive race pairs).
//!
//! The generated CTA is a double-buffered producer/consumer pipeline: warps 0–1 produce
//! (each thread stores 16 bytes per iteration into the current half of a 2 × 1 KiB buffer),
//! warps 2–9 consume (each thread loads one word). Named barriers 1/2 say "buffer half full"
//! (producers arrive, consumers sync), 3/4 say "half empty" (consumers arrive, producers
//! sync before refilling it two iterations later, and once more at the end). 4,096
//! iterations give 8,192 dynamic barriers; the kernel is well-synchronized and race-free.
//!
//! Run with `cargo bench -p race` (uses 2 rayon threads, like the target machine; set
//! `RACE_BENCH_THREADS` to change). A first run prints the statistics, the throughput in
//! commands and naive race pairs per second, and the process's peak resident memory
//! (VmHWM); criterion then times barrier-graph + race and race alone, with commands as its
//! throughput unit.

use std::time::Instant;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use race::{Config, find_races};
use weft_program::{
    AccessKind, BarrierCount, BarrierOp, Command, CtaShape, InstId, Program, ThreadEnd,
    ThreadProgram,
};

const PRODUCERS: u32 = 64;
const CONSUMERS: u32 = 256;
const ITERATIONS: u32 = 4096;
const WORDS: u32 = 256;

fn pipeline() -> Program {
    let threads = PRODUCERS + CONSUMERS;
    let all = BarrierCount::Threads(threads);
    let full = |b: u32| 1 + b;
    let empty = |b: u32| 3 + b;
    let word = |b: u32, w: u32| (b * WORDS + w) * 4;
    let programs = (0..threads)
        .map(|t| {
            let mut commands = Vec::new();
            for k in 0..ITERATIONS {
                let b = k % 2;
                if t < PRODUCERS {
                    if k >= 2 {
                        commands.push(Command::barrier(
                            BarrierOp::Sync,
                            empty(b),
                            all,
                            true,
                            InstId(0),
                        ));
                    }
                    commands.push(Command::access(
                        AccessKind::Write,
                        word(b, 4 * t),
                        16,
                        false,
                        InstId(1),
                    ));
                    commands.push(Command::barrier(
                        BarrierOp::Arrive,
                        full(b),
                        all,
                        true,
                        InstId(2),
                    ));
                } else {
                    let c = t - PRODUCERS;
                    commands.push(Command::barrier(
                        BarrierOp::Sync,
                        full(b),
                        all,
                        true,
                        InstId(3),
                    ));
                    commands.push(Command::access(
                        AccessKind::Read,
                        word(b, c % WORDS),
                        4,
                        false,
                        InstId(4),
                    ));
                    commands.push(Command::barrier(
                        BarrierOp::Arrive,
                        empty(b),
                        all,
                        true,
                        InstId(5),
                    ));
                }
            }
            if t < PRODUCERS {
                // Drain: wait for the consumers' last release of both halves.
                for b in [ITERATIONS % 2, (ITERATIONS + 1) % 2] {
                    commands.push(Command::barrier(
                        BarrierOp::Sync,
                        empty(b),
                        all,
                        true,
                        InstId(0),
                    ));
                }
            }
            commands.push(Command::exit(InstId(6)));
            ThreadProgram {
                commands,
                end: ThreadEnd::Exited,
                steps: Vec::new(),
            }
        })
        .collect();
    Program::new(CtaShape::linear(threads), 32, programs).expect("a valid program")
}

fn vm_hwm_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map_or(f64::NAN, |kb| kb / 1024.0)
}

fn bench(c: &mut Criterion) {
    // `cargo bench` passes `--bench`; a filter argument of `cargo test --benches` is ignored.
    let workers = std::env::var("RACE_BENCH_THREADS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(2);
    if rayon::ThreadPoolBuilder::new()
        .num_threads(workers)
        .build_global()
        .is_err()
    {
        eprintln!("rayon pool already initialized");
    }
    let start = Instant::now();
    let program = pipeline();
    let commands = program.num_commands();
    println!(
        "generated {} threads, {commands} commands in {:.2} s; VmHWM {:.0} MB",
        program.num_threads(),
        start.elapsed().as_secs_f64(),
        vm_hwm_mb()
    );
    // One reported run first: criterion's own timing follows.
    let runs = 1;
    let mut best_total = f64::INFINITY;
    let mut best_race = f64::INFINITY;
    let mut last = None;
    for _ in 0..runs {
        let start = Instant::now();
        let analysis = barrier_graph::analyze(&program);
        let graph_s = start.elapsed().as_secs_f64();
        let Some(hb) = analysis.happens_before.as_ref() else {
            eprintln!("not well-synchronized: {:?}", analysis.violations.first());
            std::process::exit(1);
        };
        let graph_hwm = vm_hwm_mb();
        let report = find_races(&program, hb, &Config::default());
        let total = start.elapsed().as_secs_f64();
        best_total = best_total.min(total);
        best_race = best_race.min(report.stats.seconds);
        println!(
            "  run: barrier-graph {graph_s:.3} s, race {:.3} s, total {total:.3} s; \
             VmHWM {graph_hwm:.0} MB after barrier-graph, {:.0} MB after race",
            report.stats.seconds,
            vm_hwm_mb()
        );
        last = Some((analysis.stats, report));
    }
    let Some((graph, report)) = last else {
        return;
    };
    let stats = report.stats;
    println!(
        "dynamic barriers {}, shared words {}, accesses {}, races {}, race tests {}, naive pairs {}",
        graph.dynamic_barriers,
        stats.shared_addresses,
        stats.accesses,
        report.races.len(),
        stats.race_tests,
        stats.naive_pairs
    );
    println!(
        "barrier-graph + race: {best_total:.3} s = {:.1} M commands/s, {:.2} G naive pairs/s",
        commands as f64 / best_total / 1e6,
        stats.naive_pairs as f64 / best_total / 1e9
    );
    println!(
        "race alone:           {best_race:.3} s = {:.1} M commands/s, {:.2} G naive pairs/s",
        commands as f64 / best_race / 1e6,
        stats.naive_pairs as f64 / best_race / 1e9
    );
    println!(
        "peak memory (VmHWM): {:.0} MB with {workers} rayon threads",
        vm_hwm_mb()
    );

    let mut group = c.benchmark_group("paper_scale");
    group.throughput(Throughput::Elements(commands as u64));
    group.sample_size(10);
    group.bench_function("barrier_graph_and_race", |b| {
        b.iter(|| {
            let analysis = barrier_graph::analyze(&program);
            let hb = analysis.happens_before.as_ref().expect("well-synchronized");
            find_races(&program, hb, &Config::default()).races.len()
        })
    });
    let analysis = barrier_graph::analyze(&program);
    let hb = analysis.happens_before.as_ref().expect("well-synchronized");
    group.bench_function("race_alone", |b| {
        b.iter(|| find_races(&program, hb, &Config::default()).races.len())
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
