//! Benchmark: replay + graph + intervals + recycling check on a generated warp-specialized
//! program with 8,000 dynamic barriers and 400 threads.
//!
//! Shape: warp size 8, five independent pipelines of 80 threads (2 producer warps, 8
//! consumer warps). Pipeline `k` recycles barrier `1 + 2k` ("full": producers arrive,
//! consumers sync) and `2 + 2k` ("empty": consumers arrive, producers sync), 800 rounds
//! each, with a shared-memory write per producer and a read per consumer per round.

use criterion::{Criterion, criterion_group, criterion_main};
use weft_program::{
    AccessKind, BarrierCount, BarrierOp, Command, CtaShape, InstId, Program, ThreadEnd,
    ThreadProgram,
};

const PIPELINES: u32 = 5;
const PRODUCERS: u32 = 16;
const CONSUMERS: u32 = 64;
const ROUNDS: u32 = 800;

fn generate() -> Program {
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
    Program::new(CtaShape::linear(PIPELINES * per), 8, threads).expect("a valid program")
}

fn bench(c: &mut Criterion) {
    let program = generate();
    let a = barrier_graph::analyze(&program);
    assert!(a.violations.is_empty(), "{:?}", a.violations.first());
    assert_eq!(a.stats.dynamic_barriers, (2 * PIPELINES * ROUNDS) as usize);
    eprintln!(
        "{} dynamic barriers, {} edges, {} threads, {} commands: {:.3} s",
        a.stats.dynamic_barriers,
        a.stats.edges,
        program.threads.len(),
        program.num_commands(),
        a.stats.seconds
    );
    let mut group = c.benchmark_group("graph");
    group.sample_size(10);
    group.bench_function("analyze_8000_barriers_400_threads", |b| {
        b.iter(|| barrier_graph::analyze(std::hint::black_box(&program)))
    });
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
