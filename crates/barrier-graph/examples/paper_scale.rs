//! Times [`barrier_graph::analyze`] on the two generated benchmark shapes, for profiling
//! (`perf record`, `valgrind --tool=callgrind`) without criterion's repetitions.
//!
//! `cargo run --release -p barrier-graph --example paper_scale -- [paper|graph] [runs]`.
//! `paper`: the race bench's CudaDMA-shaped pipeline (320 threads, warp size 32, 8,192
//! dynamic barriers, 3.7 million commands); `graph`: the graph bench's five pipelines
//! (400 threads, warp size 8, 8,000 dynamic barriers).

use std::time::Instant;

use weft_program::{
    AccessKind, BarrierCount, BarrierOp, Command, CtaShape, InstId, Program, ThreadEnd,
    ThreadProgram,
};

/// The race bench's pipeline (`crates/race/benches/race.rs`).
fn paper() -> Program {
    const PRODUCERS: u32 = 64;
    const CONSUMERS: u32 = 256;
    const ITERATIONS: u32 = 4096;
    const WORDS: u32 = 256;
    let threads = PRODUCERS + CONSUMERS;
    let all = BarrierCount::Threads(threads);
    let bar = |op, id, inst| Command::barrier(op, id, all, true, InstId(inst));
    let word = |b: u32, w: u32| (b * WORDS + w) * 4;
    let programs = (0..threads)
        .map(|t| {
            let mut commands = Vec::new();
            for k in 0..ITERATIONS {
                let b = k % 2;
                if t < PRODUCERS {
                    if k >= 2 {
                        commands.push(bar(BarrierOp::Sync, 3 + b, 0));
                    }
                    commands.push(Command::access(
                        AccessKind::Write,
                        word(b, 4 * t),
                        16,
                        false,
                        InstId(1),
                    ));
                    commands.push(bar(BarrierOp::Arrive, 1 + b, 2));
                } else {
                    let c = t - PRODUCERS;
                    commands.push(bar(BarrierOp::Sync, 1 + b, 3));
                    commands.push(Command::access(
                        AccessKind::Read,
                        word(b, c % WORDS),
                        4,
                        false,
                        InstId(4),
                    ));
                    commands.push(bar(BarrierOp::Arrive, 3 + b, 5));
                }
            }
            if t < PRODUCERS {
                for b in [ITERATIONS % 2, (ITERATIONS + 1) % 2] {
                    commands.push(bar(BarrierOp::Sync, 3 + b, 0));
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
    Program {
        shape: CtaShape::linear(threads),
        warp_size: 32,
        threads: programs,
    }
}

/// The graph bench's five pipelines (`benches/graph.rs`).
fn graph() -> Program {
    const PIPELINES: u32 = 5;
    const PRODUCERS: u32 = 16;
    const CONSUMERS: u32 = 64;
    const ROUNDS: u32 = 800;
    let per = PRODUCERS + CONSUMERS;
    let mut threads = Vec::new();
    for k in 0..PIPELINES {
        let (full, empty) = (1 + 2 * k, 2 + 2 * k);
        let count = BarrierCount::Threads(per);
        for lane in 0..per {
            let mut commands = Vec::new();
            let bar = |op, id, inst| Command::barrier(op, id, count, true, InstId(inst));
            for round in 0..ROUNDS {
                let slot = 4 * (k * per + lane) + 2048 * (round % 2);
                if lane < PRODUCERS {
                    commands.push(bar(BarrierOp::Sync, empty, 0));
                    commands.push(Command::access(
                        AccessKind::Write,
                        slot,
                        4,
                        false,
                        InstId(1),
                    ));
                    commands.push(bar(BarrierOp::Arrive, full, 2));
                } else {
                    commands.push(bar(BarrierOp::Arrive, empty, 3));
                    commands.push(bar(BarrierOp::Sync, full, 4));
                    let src = 4 * (k * per + lane % PRODUCERS) + 2048 * (round % 2);
                    commands.push(Command::access(AccessKind::Read, src, 4, false, InstId(5)));
                }
            }
            commands.push(Command::exit(InstId(6)));
            threads.push(ThreadProgram {
                commands,
                end: ThreadEnd::Exited,
                steps: Vec::new(),
            });
        }
    }
    Program {
        shape: CtaShape::linear(PIPELINES * per),
        warp_size: 8,
        threads,
    }
}

fn main() {
    let mut args = std::env::args().skip(1);
    let shape = args.next().unwrap_or_else(|| "paper".to_string());
    let runs: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(5);
    let program = if shape == "graph" { graph() } else { paper() };
    let mut best = f64::INFINITY;
    for _ in 0..runs {
        let start = Instant::now();
        let a = barrier_graph::analyze(std::hint::black_box(&program));
        let s = start.elapsed().as_secs_f64();
        best = best.min(s);
        assert!(a.violations.is_empty(), "{:?}", a.violations.first());
        println!(
            "{shape}: {} dynamic barriers, {} nodes, {} edges: {s:.3} s",
            a.stats.dynamic_barriers,
            a.graph.nodes.len(),
            a.stats.edges
        );
    }
    println!("{shape}: best of {runs}: {best:.3} s");
}
