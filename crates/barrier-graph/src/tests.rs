//! Tests of the whole stage on hand-built programs, and an exhaustive-interleaving check of
//! the verdict and of `ordered` on small random programs.

use proptest::prelude::*;
use weft_program::{
    BarrierCount, BarrierFile, BarrierKey, BarrierOp, Command, CommandView, CtaShape, Event,
    InstId, Participant, Program, ThreadEnd, ThreadId, ThreadProgram,
};

use super::*;

/// A command of the test language (the paper's, plus red, warp sync, exit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum C {
    /// `sync b n`.
    S(u32, u32),
    /// `arrive b n`.
    A(u32, u32),
    /// `sync b` for all threads.
    SAll(u32),
    /// Non-aligned `barrier.arrive b n`.
    ANa(u32, u32),
    /// `red b n`.
    Red(u32, u32),
    /// Non-aligned `barrier.sync b n`.
    SNa(u32, u32),
    /// `bar.warp.sync mask`.
    Ws(u32),
    /// read of shared byte address.
    R(u32),
    /// write.
    W(u32),
    /// exit.
    X,
    /// An mbarrier operation on shared address `addr` with value `v`: `op` 0 init, 1
    /// arrive, 2 wait for parity `v % 2`, 3 inval.
    Mb(u8, u32, u32),
    /// An execution-event operation on event `e`: `op` 0 arrive, 1 sync, 2 wait.
    Ex(u8, u32),
}

fn cmd(c: C, inst: u32) -> Command {
    let i = InstId(inst);
    let b = |op, id, count, aligned| Command::barrier(op, id, count, aligned, i);
    match c {
        C::S(id, n) => b(BarrierOp::Sync, id, BarrierCount::Threads(n), true),
        C::A(id, n) => b(BarrierOp::Arrive, id, BarrierCount::Threads(n), true),
        C::SAll(id) => b(BarrierOp::Sync, id, BarrierCount::All, true),
        C::ANa(id, n) => b(BarrierOp::Arrive, id, BarrierCount::Threads(n), false),
        C::Red(id, n) => b(BarrierOp::Red, id, BarrierCount::Threads(n), true),
        C::SNa(id, n) => b(BarrierOp::Sync, id, BarrierCount::Threads(n), false),
        C::Ws(mask) => Command::warp_sync(mask, i),
        C::R(a) => Command::access(weft_program::AccessKind::Read, a, 4, false, i),
        C::W(a) => Command::access(weft_program::AccessKind::Write, a, 4, false, i),
        C::X => Command::exit(i),
        C::Mb(op, addr, v) => {
            let op = match op {
                0 => weft_program::MbarrierOp::Init,
                1 => weft_program::MbarrierOp::Arrive,
                2 => weft_program::MbarrierOp::WaitParity,
                _ => weft_program::MbarrierOp::Inval,
            };
            let v = if op == weft_program::MbarrierOp::WaitParity {
                v % 2
            } else {
                v
            };
            Command::mbarrier(op, addr, v, i)
        }
        C::Ex(op, e) => {
            let op = match op {
                0 => weft_program::ExecOp::Arrive,
                1 => weft_program::ExecOp::Sync,
                _ => weft_program::ExecOp::Wait,
            };
            Command::exec(op, e, i)
        }
    }
}

/// A thread running `text`; instruction ids are `base + position`. An exit is appended
/// unless the text ends with one.
pub(crate) fn thread(text: &[C], base: u32) -> ThreadProgram {
    let mut commands: Vec<Command> = text
        .iter()
        .enumerate()
        .map(|(k, &c)| cmd(c, base + k as u32))
        .collect();
    if text.last() != Some(&C::X) {
        commands.push(cmd(C::X, base + 999));
    }
    ThreadProgram {
        commands,
        end: ThreadEnd::Exited,
        steps: Vec::new(),
    }
}

pub(crate) fn program(warp_size: u32, threads: Vec<ThreadProgram>) -> Program {
    Program::new(CtaShape::linear(threads.len() as u32), warp_size, threads)
        .expect("a valid program")
}

/// Warp size 1: one thread per text (instruction base 1000 * thread).
fn threads1(texts: &[&[C]]) -> Program {
    program(
        1,
        texts
            .iter()
            .enumerate()
            .map(|(t, text)| thread(text, 1000 * t as u32))
            .collect(),
    )
}

/// Warp size 32: one warp per text, every lane running it.
fn warps32(texts: &[&[C]]) -> Program {
    program(
        32,
        texts
            .iter()
            .enumerate()
            .flat_map(|(w, text)| (0..32).map(move |_| thread(text, 1000 * w as u32)))
            .collect(),
    )
}

fn kinds(a: &Analysis) -> Vec<ViolationKind> {
    a.violations.iter().map(|v| v.kind).collect()
}

fn assert_clean(a: &Analysis) {
    assert!(
        a.violations.is_empty(),
        "unexpected violations: {:#?}",
        a.violations
    );
    assert!(a.happens_before.is_some());
}

fn t(x: u32) -> ThreadId {
    ThreadId(x)
}

// ---------------------------------------------------------------------------------------
// The paper's examples.

/// Listing 1: warp 0 `sync 0 64; arrive 1 64`, warp 1 `sync 1 64; arrive 0 64`.
#[test]
fn listing1_deadlocks_with_a_cycle() {
    let p = warps32(&[&[C::S(0, 64), C::A(1, 64)], &[C::S(1, 64), C::A(0, 64)]]);
    let a = analyze(&p);
    assert_eq!(kinds(&a), [ViolationKind::Deadlock]);
    assert!(a.happens_before.is_none());
    let v = &a.violations[0];
    assert_eq!(v.blocked.len(), 2);
    let b0 = &v.blocked[0];
    assert_eq!(b0.key, BarrierKey::Named(0));
    assert_eq!((b0.generation, b0.registered, b0.expected), (1, 32, 64));
    assert_eq!(b0.blocked.len(), 1);
    assert_eq!(b0.blocked[0].0.to_string(), "warp 0");
    assert_eq!(b0.blocked[0].1, InstId(0));
    assert_eq!(b0.absent.len(), 1);
    assert_eq!(b0.absent[0].0.to_string(), "warp 1");
    assert!(matches!(
        b0.absent[0].1,
        ThreadState::Blocked {
            key: BarrierKey::Named(1),
            generation: 1,
            inst: InstId(1000)
        }
    ));
    assert_eq!(
        v.cycle,
        [(BarrierKey::Named(0), 1), (BarrierKey::Named(1), 1)]
    );
    assert!(
        v.message.contains("wait-for cycle: barrier 0 generation 1 -> barrier 1 generation 1 -> barrier 0 generation 1"),
        "{}",
        v.message
    );
    assert!(
        v.message.contains("warp 0 at instruction #0"),
        "{}",
        v.message
    );
    assert_eq!(v.commands.len(), 2);
}

/// Figure 3 (Listing 2): P is warp 0, Q warp 1.
fn figure3() -> Program {
    let p: &[C] = &[
        C::S(0, 64),
        C::W(0),
        C::A(1, 64),
        C::S(0, 64),
        C::S(1, 64),
        C::R(0),
        C::X,
    ];
    let q: &[C] = &[
        C::S(0, 64),
        C::S(1, 64),
        C::R(0),
        C::S(0, 64),
        C::W(0),
        C::A(1, 64),
        C::X,
    ];
    warps32(&[p, q])
}

#[test]
fn figure3_is_well_synchronized_with_the_papers_generations() {
    let prog = figure3();
    let a = analyze(&prog);
    assert_clean(&a);
    let g = |th: u32, c: u32| a.graph.generation_of(t(th), c);
    let b = BarrierKey::Named;
    for lane in [0, 17, 31] {
        let (p, q) = (lane, 32 + lane);
        // P: 1 sync 0 (1); 3 arrive 1 (1); 4 sync 0 (2); 5 sync 1 (2).
        assert_eq!(g(p, 0), Some((b(0), 1)));
        assert_eq!(g(p, 1), None);
        assert_eq!(g(p, 2), Some((b(1), 1)));
        assert_eq!(g(p, 3), Some((b(0), 2)));
        assert_eq!(g(p, 4), Some((b(1), 2)));
        // Q: 1 sync 0 (1); 2 sync 1 (1); 4 sync 0 (2); 6 arrive 1 (2).
        assert_eq!(g(q, 0), Some((b(0), 1)));
        assert_eq!(g(q, 1), Some((b(1), 1)));
        assert_eq!(g(q, 3), Some((b(0), 2)));
        assert_eq!(g(q, 5), Some((b(1), 2)));
    }
    // n1..n4 of §5.2.
    let nodes: Vec<(BarrierKey, u32, usize)> = a
        .graph
        .nodes
        .iter()
        .filter(|n| !n.gather)
        .map(|n| (n.key.barrier().unwrap(), n.generation, n.participants.len()))
        .collect();
    assert_eq!(
        nodes,
        [(b(0), 1, 64), (b(1), 1, 64), (b(0), 2, 64), (b(1), 2, 64)]
    );
    // Each warp's arrive is a warp gather of its 32 lanes.
    let gathers: Vec<(BarrierKey, u32, usize)> = a
        .graph
        .nodes
        .iter()
        .filter(|n| n.gather)
        .map(|n| (n.key.barrier().unwrap(), n.generation, n.participants.len()))
        .collect();
    assert_eq!(gathers, [(b(1), 1, 32), (b(1), 2, 32)]);
    assert_eq!(a.stats.dynamic_barriers, 4);
    assert_eq!(a.stats.physical_barriers, 2);
    let hb = a.happens_before.as_ref().unwrap();
    let (p, q) = (t(0), t(32));
    // write P2 -> read Q3, read Q3 -> write Q5 (program order) -> read P6.
    assert!(hb.ordered((p, 1), (q, 2)));
    assert!(!hb.ordered((q, 2), (p, 1)));
    assert!(hb.ordered((q, 4), (p, 5)));
    assert!(hb.ordered((p, 1), (q, 4)));
    assert!(hb.ordered((q, 2), (p, 5)));
    // Syncs of one generation are ordered both ways (Definition 4).
    assert!(hb.ordered((p, 0), (q, 0)) && hb.ordered((q, 0), (p, 0)));
    // The arrive P3 is not after Q's sync 1 ... but P's write is not after Q's read.
    assert!(!hb.ordered((q, 1), (p, 2)));
    // The paper's barrier interval of c2^P in Q is (c1^Q, c3^Q): 0-based (0, 2).
    assert_eq!(hb.before_bound((p, 1), q), 1);
    assert_eq!(hb.after_start((p, 1), q), Some(1));
    assert!(hb.ordered((p, 1), (q, 1)));
    let dot = a.graph.to_dot();
    assert!(
        dot.contains("n0 -> n2") || dot.contains("n1 -> n2"),
        "{dot}"
    );
}

// ---------------------------------------------------------------------------------------
// Singe-style recycling.

/// Barrier 2 is used by T0 (arrive) and T1 (sync), then by T1 (arrive) and T2 (sync);
/// T2 is ordered after generation 1 through barrier 3 (T1 arrives after its sync).
#[test]
fn singe_recycling_through_a_chain_is_safe() {
    let prog = threads1(&[
        &[C::W(0), C::A(2, 2)],
        &[C::S(2, 2), C::R(0), C::A(3, 2), C::A(2, 2)],
        &[C::S(3, 2), C::R(0), C::S(2, 2)],
    ]);
    let a = analyze(&prog);
    assert_clean(&a);
    assert_eq!(
        a.graph.generation_of(t(2), 2),
        Some((BarrierKey::Named(2), 2))
    );
    let hb = a.happens_before.as_ref().unwrap();
    assert!(hb.ordered((t(0), 0), (t(2), 1)));
    assert!(hb.ordered((t(0), 0), (t(1), 1)));
    assert!(!hb.ordered((t(1), 1), (t(0), 0)));
    // T1's read precedes its arrive at barrier 3, which T2 waits for.
    assert!(hb.ordered((t(1), 1), (t(2), 1)) && !hb.ordered((t(2), 1), (t(1), 1)));
    assert!(!hb.ordered((t(2), 2), (t(1), 3)) && !hb.ordered((t(1), 3), (t(2), 1)));
}

#[test]
fn singe_recycling_without_a_chain_is_unsafe() {
    let prog = threads1(&[
        &[C::W(0), C::A(2, 2)],
        &[C::S(2, 2), C::A(2, 2)],
        &[C::S(2, 2)],
    ]);
    let a = analyze(&prog);
    assert_eq!(kinds(&a), [ViolationKind::UnsafeRecycling]);
    let v = &a.violations[0];
    assert_eq!(v.barrier, Some(BarrierKey::Named(2)));
    assert_eq!(v.generations, [1, 2]);
    assert_eq!(v.commands[0].thread, t(2));
    assert_eq!(v.threads[0].to_string(), "thread 2");
    assert!(a.happens_before.is_none());
}

/// samples/singe/unsafe_recycle: two pairs of warps handshake on barrier 1.
#[test]
fn two_pairs_on_one_barrier_is_unsafe_recycling_not_deadlock() {
    let text: &[C] = &[C::S(1, 64)];
    let a = analyze(&warps32(&[text, text, text, text]));
    assert_eq!(kinds(&a), [ViolationKind::UnsafeRecycling]);
    assert_eq!(a.violations[0].threads[0].to_string(), "warps 2-3");
}

/// samples/barrier-errors/too_many_participants: three warps sync 1, 64.
#[test]
fn too_many_participants_is_a_deadlock_only() {
    let text: &[C] = &[C::S(1, 64)];
    let a = analyze(&warps32(&[text, text, text]));
    assert_eq!(kinds(&a), [ViolationKind::Deadlock]);
    let b = &a.violations[0].blocked[0];
    assert_eq!((b.generation, b.registered, b.expected), (2, 32, 64));
}

// ---------------------------------------------------------------------------------------
// Every violation kind.

#[test]
fn deadlock_counted_barrier_is_not_released_by_exits() {
    for prog in [
        threads1(&[&[C::S(1, 2)], &[]]),
        warps32(&[&[C::S(1, 64)], &[]]),
    ] {
        let a = analyze(&prog);
        assert_eq!(kinds(&a), [ViolationKind::Deadlock]);
        let v = &a.violations[0];
        assert!(v.cycle.is_empty());
        assert_eq!(v.blocked[0].absent[0].1, ThreadState::Exited);
        assert!(v.message.contains("never came"), "{}", v.message);
    }
}

#[test]
fn all_threads_barrier_is_released_by_exits() {
    for prog in [
        threads1(&[
            &[C::W(0), C::SAll(0), C::R(0)],
            &[C::X],
            &[C::SAll(0), C::W(0)],
        ]),
        warps32(&[&[C::SAll(0), C::SAll(0)], &[C::X]]),
    ] {
        let a = analyze(&prog);
        assert_clean(&a);
    }
    let prog = threads1(&[
        &[C::W(4), C::SAll(0), C::R(0)],
        &[C::W(0), C::X],
        &[C::SAll(0)],
    ]);
    let a = analyze(&prog);
    assert_clean(&a);
    let hb = a.happens_before.unwrap();
    // Thread 1's write happens before its exit, which the barrier counted.
    assert!(hb.ordered((t(1), 0), (t(0), 2)));
    assert_eq!(a.graph.nodes[0].exited, [(t(1), 1)]);
}

#[test]
fn stopped_threads_are_not_deadlocked() {
    let mut prog = threads1(&[&[C::S(1, 2)], &[]]);
    prog.threads[1].commands.clear();
    prog.threads[1].end = ThreadEnd::Stopped;
    let a = analyze(&prog);
    assert_clean(&a);
}

#[test]
fn count_mismatch() {
    for prog in [
        threads1(&[&[C::A(1, 2)], &[C::S(1, 3)], &[]]),
        warps32(&[&[C::A(1, 64)], &[C::S(1, 96)], &[]]),
    ] {
        let a = analyze(&prog);
        assert_eq!(kinds(&a), [ViolationKind::BarrierCountMismatch]);
        let v = &a.violations[0];
        assert_eq!(v.generations, [1]);
        assert_eq!(v.commands.len(), 2);
        assert!(v.message.contains("configured for"), "{}", v.message);
    }
}

#[test]
fn red_mixed_with_sync_is_a_count_mismatch() {
    let a = analyze(&threads1(&[&[C::Red(0, 2)], &[C::S(0, 2)]]));
    assert_clean(&analyze(&threads1(&[&[C::Red(0, 2)], &[C::Red(0, 2)]])));
    assert_clean(&analyze(&threads1(&[&[C::ANa(0, 2)], &[C::S(0, 2)]])));
    assert_eq!(kinds(&a), [ViolationKind::BarrierCountMismatch]);
    assert!(a.violations[0].message.contains("bar.red"));
}

#[test]
fn overflow_when_a_partial_warp_registered_first() {
    // CTA of 48 threads: warp 0 (32 lanes) waits at barrier 0 for warp 1 (16 lanes), which
    // first arrives at barrier 1 (count 32). Warp 0 then registers 32 more: 48 > 32.
    let mut threads = Vec::new();
    for _ in 0..32 {
        threads.push(thread(&[C::SAll(0), C::S(1, 32)], 0));
    }
    for _ in 0..16 {
        threads.push(thread(&[C::A(1, 32), C::SAll(0)], 100));
    }
    let a = analyze(&program(32, threads));
    assert_eq!(kinds(&a), [ViolationKind::BarrierOverflow]);
    assert_eq!(a.violations[0].counts, Some((48, 32)));
}

#[test]
fn invalid_barrier_id() {
    for prog in [
        threads1(&[&[C::S(16, 2)], &[C::S(16, 2)]]),
        warps32(&[&[C::SAll(20)]]),
    ] {
        let a = analyze(&prog);
        assert_eq!(kinds(&a), [ViolationKind::InvalidBarrierId]);
        assert!(a.violations[0].message.contains("out of range"));
    }
}

#[test]
fn invalid_thread_count() {
    for prog in [
        threads1(&[&[C::S(1, 3)], &[C::S(1, 3)]]),
        threads1(&[&[C::S(1, 0)]]),
        warps32(&[&[C::S(1, 48)], &[C::S(1, 48)]]),
    ] {
        let a = analyze(&prog);
        assert_eq!(kinds(&a), [ViolationKind::InvalidThreadCount]);
    }
}

#[test]
fn no_waiter_for_every_arrive_only_generation() {
    // Generation 1 is two arrivals of thread 0; thread 1's generation 2 is unordered.
    let a = analyze(&threads1(&[
        &[C::A(1, 2), C::A(1, 2)],
        &[C::A(1, 2), C::S(1, 2)],
    ]));
    assert_eq!(kinds(&a), [ViolationKind::NoWaiter]);
    assert_eq!(a.violations[0].generations, [1, 2]);
    assert!(a.happens_before.is_none());
    // A last arrive-only generation is a lost signal: reported, but well-synchronized.
    for lost in [
        analyze(&threads1(&[&[C::A(1, 2)], &[C::A(1, 2)]])),
        analyze(&warps32(&[&[C::A(1, 64)], &[C::A(1, 64)]])),
    ] {
        assert_eq!(kinds(&lost), [ViolationKind::NoWaiter]);
        assert_eq!(lost.violations[0].generations, [1]);
        assert!(lost.happens_before.is_some());
    }
    // So is one ordered before the next generation.
    let ordered = analyze(&threads1(&[
        &[C::A(1, 2), C::SAll(0), C::S(1, 2)],
        &[C::A(1, 2), C::SAll(0), C::A(1, 2)],
    ]));
    assert_eq!(kinds(&ordered), [ViolationKind::NoWaiter]);
    assert!(ordered.happens_before.is_some());
}

#[test]
fn divergence_two_aligned_instructions_in_one_warp() {
    let mut threads = Vec::new();
    for _ in 0..2 {
        for lane in 0..32u32 {
            // Two branches: lanes 0-15 at instruction 10, 16-31 at instruction 20.
            let base = if lane < 16 { 10 } else { 20 };
            threads.push(thread(&[C::S(1, 64)], base));
        }
    }
    let a = analyze(&program(32, threads));
    // The state machine stops at the first lane that diverges from its warp's gather.
    assert_eq!(kinds(&a), [ViolationKind::BarrierDivergence]);
    let v = &a.violations[0];
    assert!(
        v.message
            .contains("warp 0 lane 16 (command 0, instruction #20)")
            && v.message
                .contains("warp 0 lane 0 (command 0, instruction #10)"),
        "{}",
        v.message
    );
    // Non-aligned: lanes at different instructions of the same operation gather together.
    let mut threads = Vec::new();
    for _ in 0..2 {
        for lane in 0..32u32 {
            let base = if lane < 16 { 10 } else { 20 };
            threads.push(thread(&[C::SNa(1, 64)], base));
        }
    }
    assert_clean(&analyze(&program(32, threads)));
}

#[test]
fn divergence_part_of_a_warp_at_an_aligned_barrier() {
    // Warps 0 and 2: lanes 0-15 at barrier 1, lanes 16-31 at barrier 2; warp 1 at barrier 1.
    // Lanes of one warp at different barrier ids diverge, aligned or not.
    for aligned in [true, false] {
        let mut threads = Vec::new();
        for w in 0..3 {
            for lane in 0..32 {
                let text: &[C] = match (w == 1 || lane < 16, aligned) {
                    (true, true) => &[C::S(1, 64)],
                    (true, false) => &[C::SNa(1, 64)],
                    (false, true) => &[C::S(2, 32)],
                    (false, false) => &[C::SNa(2, 32)],
                };
                threads.push(thread(text, 0));
            }
        }
        let a = analyze(&program(32, threads));
        assert_eq!(kinds(&a), [ViolationKind::BarrierDivergence]);
        assert_eq!(a.violations[0].threads[0].to_string(), "warp 0 lane 16");
    }
}

#[test]
fn deadlock_of_a_half_gathered_warp_names_the_missing_lanes() {
    // Lanes 0-15 of warp 0 reach an aligned bar.sync; lanes 16-31 are blocked elsewhere
    // (the emulator ended them blocked, e.g. at an mbarrier wait).
    let mut threads = Vec::new();
    for lane in 0..32 {
        if lane < 16 {
            threads.push(thread(&[C::S(1, 32)], 0));
        } else {
            let mut th = thread(&[], 0);
            th.commands.clear();
            th.end = ThreadEnd::Blocked;
            threads.push(th);
        }
    }
    let a = analyze(&program(32, threads));
    assert_eq!(
        kinds(&a),
        [ViolationKind::Deadlock, ViolationKind::BarrierDivergence]
    );
    let msg = &a.violations[0].message;
    assert!(
        msg.starts_with("16 thread(s) blocked forever")
            && msg.contains("warp 0 lanes 0-15 at instruction #0 waiting for the rest of warp 0 at barrier 1 generation 1; never came: warp 0 lanes 16-31 (stopped)"),
        "{msg}"
    );
    assert_eq!(a.violations[1].threads[0].to_string(), "warp 0 lanes 16-31");
}

#[test]
fn warp_sync_lane_outside_mask_is_divergence() {
    let mut threads: Vec<ThreadProgram> = (0..32).map(|_| thread(&[C::Ws(0xffff)], 0)).collect();
    threads.truncate(17);
    let prog = Program::new(CtaShape::linear(17), 32, threads).expect("a valid program");
    let a = analyze(&prog);
    assert_eq!(kinds(&a), [ViolationKind::BarrierDivergence]);
    // Full mask: fine, and generations per warp barrier.
    let prog = warps32(&[&[C::W(0), C::Ws(u32::MAX), C::R(4)]]);
    let a = analyze(&prog);
    assert_clean(&a);
    assert_eq!(
        a.graph.generation_of(t(5), 1),
        Some((BarrierKey::Warp(0), 1))
    );
    assert!(a.happens_before.unwrap().ordered((t(3), 0), (t(9), 2)));
}

#[test]
fn lanes_of_a_warp_at_different_barriers_diverge() {
    // Warp size 2: w0 = {T0, T1}, w1 = {T2, T3}, w2 = {T4, T5}. T0 and T1 are at different
    // barriers: T0 waits for T1 at barrier 1, which never comes. (Per-thread semantics
    // made this an exit racing with a counted completion; per-warp arrival makes it
    // divergence, and a warp registers only once all its non-exited lanes are there, so no
    // exit can race with a completion its warp registered at.)
    let prog = program(
        2,
        vec![
            thread(&[C::SNa(1, 2)], 0),
            thread(&[C::SNa(2, 2)], 10),
            thread(&[C::SNa(1, 2)], 0),
            thread(&[], 20),
            thread(&[C::ANa(2, 2)], 30),
            thread(&[], 40),
        ],
    );
    assert!(!Oracle::run(&prog).well);
    let a = analyze(&prog);
    assert_eq!(kinds(&a), [ViolationKind::BarrierDivergence]);
    // Without T1's barrier, warp 0 registers with T1's exit counted.
    let prog = program(
        2,
        vec![
            thread(&[C::SNa(1, 4)], 0),
            thread(&[], 10),
            thread(&[C::SNa(1, 4)], 0),
            thread(&[], 20),
        ],
    );
    assert!(Oracle::run(&prog).well);
    assert_clean(&analyze(&prog));
}

#[test]
fn emulator_error_not_reproduced_is_reported() {
    let mut prog = threads1(&[&[C::S(1, 2)], &[C::S(1, 2)]]);
    prog.threads[1].end = ThreadEnd::BarrierError;
    prog.threads[1].commands.pop();
    let a = analyze(&prog);
    assert_eq!(kinds(&a), [ViolationKind::UnsafeRecycling]);
}

#[test]
fn malformed_programs_do_not_panic() {
    // A program shorter than its shape, an ended-without-exit thread, a blocked end.
    let mut prog = threads1(&[&[C::S(1, 2)], &[C::S(1, 2), C::W(0)]]);
    prog.shape = CtaShape::linear(5);
    prog.threads[1].commands.pop();
    prog.threads[0].end = ThreadEnd::Blocked;
    let a = analyze(&prog);
    let _ = a.violations;
    let hb = analyze(&figure3()).happens_before.unwrap();
    assert!(!hb.ordered((t(0), 1000), (t(40), 3)));
    assert!(!hb.ordered((t(0), 1), (t(4000), 3)));
    assert_eq!(hb.prev_blocking(t(0), 99), None);
}

// ---------------------------------------------------------------------------------------
// Exhaustive interleavings: the verdict and `ordered` against Definitions 4 and 6.

/// Explores every interleaving of every command (each command is a step; a sync's time is
/// its generation's completion step, Definition 3).
struct Oracle<'p> {
    program: &'p Program,
    well: bool,
    gens: Option<Vec<Vec<u32>>>,
    /// `le[a * c + b]`: `t(a) <= t(b)` in every complete trace so far.
    le: Vec<bool>,
    offsets: Vec<usize>,
    traces: u64,
}

#[derive(Clone)]
struct St {
    file: BarrierFile,
    pc: Vec<usize>,
    blocked: Vec<bool>,
    exited: Vec<bool>,
    gens: Vec<Vec<u32>>,
    time: Vec<Vec<u32>>,
    step: u32,
}

impl<'p> Oracle<'p> {
    fn run(program: &'p Program) -> Self {
        let mut offsets = vec![0];
        for th in &program.threads {
            offsets.push(offsets.last().unwrap() + th.commands.len());
        }
        let c = *offsets.last().unwrap();
        let mut o = Oracle {
            program,
            well: true,
            gens: None,
            le: vec![true; c * c],
            offsets,
            traces: 0,
        };
        let n = program.threads.len();
        let st = St {
            file: BarrierFile::new(n as u32, program.warp_size()),
            pc: vec![0; n],
            blocked: vec![false; n],
            exited: vec![false; n],
            gens: program
                .threads
                .iter()
                .map(|t| vec![0; t.commands.len()])
                .collect(),
            time: program
                .threads
                .iter()
                .map(|t| vec![0; t.commands.len()])
                .collect(),
            step: 0,
        };
        o.dfs(st);
        o
    }

    fn dfs(&mut self, st: St) {
        if !self.well {
            return;
        }
        let n = self.program.threads.len();
        let ready: Vec<usize> = (0..n)
            .filter(|&t| {
                !st.blocked[t] && !st.exited[t] && st.pc[t] < self.program.threads[t].commands.len()
            })
            .collect();
        if ready.is_empty() {
            if (0..n).all(|t| st.exited[t]) {
                self.traces += 1;
                match &self.gens {
                    None => self.gens = Some(st.gens.clone()),
                    Some(g) if *g != st.gens => self.well = false,
                    Some(_) => {}
                }
                let c = *self.offsets.last().unwrap();
                let flat: Vec<u32> = st.time.iter().flatten().copied().collect();
                for a in 0..c {
                    for b in 0..c {
                        if flat[a] > flat[b] {
                            self.le[a * c + b] = false;
                        }
                    }
                }
            } else {
                self.well = false;
            }
            return;
        }
        for t in ready {
            let mut s = st.clone();
            if !Self::step(self.program, &mut s, t) {
                self.well = false;
                return;
            }
            self.dfs(s);
        }
    }

    fn wake(s: &mut St, c: &weft_program::Completion, now: u32) {
        for p in &c.participants {
            if p.op.blocks() {
                s.time[p.thread.index()][p.command as usize] = now;
                s.blocked[p.thread.index()] = false;
            }
        }
    }

    /// A warp registered: its lanes get their generation; non-blocking lanes, which waited
    /// for the warp, continue now (their time is the gather's completion).
    fn events(s: &mut St, events: Vec<Event>, now: u32) {
        for e in events {
            match e {
                Event::WarpRegistered {
                    generation, lanes, ..
                } => {
                    for p in lanes {
                        s.gens[p.thread.index()][p.command as usize] = generation;
                        if !p.op.blocks() {
                            s.time[p.thread.index()][p.command as usize] = now;
                            s.blocked[p.thread.index()] = false;
                        }
                    }
                }
                Event::Completed(c) => Self::wake(s, &c, now),
            }
        }
    }

    fn step(program: &Program, s: &mut St, t: usize) -> bool {
        let pc = s.pc[t];
        s.pc[t] += 1;
        s.step += 1;
        let now = s.step;
        s.time[t][pc] = now;
        let cmd = program.threads[t].commands[pc];
        let thread = ThreadId(t as u32);
        let result = match cmd.view() {
            CommandView::Barrier {
                op,
                id,
                count,
                aligned,
            } => {
                let p = Participant {
                    thread,
                    command: pc as u32,
                    op,
                };
                s.file.register(p, id, count, cmd.inst(), aligned)
            }
            CommandView::WarpSync { mask } => {
                let p = Participant {
                    thread,
                    command: pc as u32,
                    op: BarrierOp::Sync,
                };
                s.file.register_warp(p, mask)
            }
            CommandView::Exit => {
                s.exited[t] = true;
                s.file.exit(thread)
            }
            _ => return true,
        };
        // A barrier lane waits for its warp (and a blocking one for the generation) until
        // the events release it.
        if !s.exited[t] {
            s.blocked[t] = true;
        }
        match result {
            Ok(events) => {
                Self::events(s, events, now);
                true
            }
            Err(_) => false,
        }
    }
}

fn arb_command(threads: u32, ws: u32, accesses: bool) -> impl Strategy<Value = C> {
    let counts: Vec<u32> = (1..=threads / ws).map(|k| k * ws).collect();
    let count = proptest::sample::select(counts);
    let barrier = 0..2u32;
    let mut options: Vec<BoxedStrategy<C>> = vec![
        (barrier.clone(), count.clone())
            .prop_map(|(b, n)| C::S(b, n))
            .boxed(),
        (barrier.clone(), count.clone())
            .prop_map(|(b, n)| C::A(b, n))
            .boxed(),
        (barrier.clone(), count)
            .prop_map(|(b, n)| C::S(b, n))
            .boxed(),
        Just(C::SAll(1)).boxed(),
    ];
    if accesses {
        options.push((0..2u32).prop_map(C::W).boxed());
        options.push((0..2u32).prop_map(C::R).boxed());
    }
    if ws > 1 {
        // Warp barriers: the whole warp, or one lane (the other lane's is a divergence).
        let masks = proptest::sample::select(vec![u32::MAX, 1, 2]);
        options.push(masks.prop_map(C::Ws).boxed());
    }
    proptest::strategy::Union::new(options)
}

fn arb_program(
    threads: u32,
    ws: u32,
    max_len: usize,
    accesses: bool,
) -> impl Strategy<Value = Program> {
    proptest::collection::vec(
        proptest::collection::vec(arb_command(threads, ws, accesses), 0..=max_len),
        threads as usize,
    )
    .prop_map(move |texts| {
        let threads = texts
            .iter()
            .enumerate()
            .map(|(t, text)| {
                // Non-aligned barriers for warp size > 1 (per-thread semantics).
                let mut th = thread(text, 100 * t as u32);
                for c in &mut th.commands {
                    if let CommandView::Barrier { op, id, count, .. } = c.view() {
                        *c = Command::barrier(op, id, count, ws == 1, c.inst());
                    }
                }
                th
            })
            .collect();
        program(ws, threads)
    })
}

fn check_against_oracle(prog: &Program, check_hb: bool) -> Result<(), TestCaseError> {
    let a = analyze(prog);
    let o = Oracle::run(prog);
    prop_assert_eq!(
        a.happens_before.is_some(),
        o.well,
        "verdict differs: violations {:#?}",
        a.violations
    );
    // On a well-synchronized program the only findings are lost signals.
    if o.well {
        prop_assert!(
            a.violations
                .iter()
                .all(|v| v.kind == ViolationKind::NoWaiter),
            "well-synchronized, yet: {:#?}",
            a.violations
        );
    }
    if let (true, Some(hb)) = (check_hb && o.well, &a.happens_before) {
        let c = *o.offsets.last().unwrap();
        let n = prog.threads.len();
        for t1 in 0..n {
            for t2 in 0..n {
                for i in 0..prog.threads[t1].commands.len() {
                    for j in 0..prog.threads[t2].commands.len() {
                        let (x, y) = (o.offsets[t1] + i, o.offsets[t2] + j);
                        let expect = o.le[x * c + y];
                        let got = hb.ordered((t(t1 as u32), i as u32), (t(t2 as u32), j as u32));
                        prop_assert_eq!(got, expect, "ordered(({}, {}), ({}, {}))", t1, i, t2, j);
                    }
                }
            }
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Warp size 1 (the paper's semantics): exact verdict, and `ordered` equals
    /// "t(a) <= t(b) in every trace" on well-synchronized programs.
    #[test]
    fn verdict_and_ordered_match_exhaustive_interleavings(prog in arb_program(3, 1, 4, true)) {
        check_against_oracle(&prog, true)?;
    }

    /// Two threads, longer programs.
    #[test]
    fn verdict_matches_on_two_threads(prog in arb_program(2, 1, 6, true)) {
        check_against_oracle(&prog, true)?;
    }

    /// Warp size 2 with per-thread (non-aligned) barriers: exited lanes count per warp.
    #[test]
    fn verdict_matches_with_warps_of_two(prog in arb_program(4, 2, 3, false)) {
        check_against_oracle(&prog, false)?;
    }

    /// Warp size 2 with accesses and warp barriers: the verdict, and `ordered` on
    /// well-synchronized programs (one-warp generations store only their warp's lanes).
    #[test]
    fn ordered_matches_with_warps_of_two(prog in arb_program(4, 2, 3, true)) {
        check_against_oracle(&prog, true)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// `first_after_any` (one binary search per thread over its chain, the nodes decided
    /// once) is, per thread, the least `after_start` of the given commands: the rows of
    /// the completion phases asynchronous copies are ordered before.
    #[test]
    fn first_after_any_is_the_least_after_start(
        prog in arb_program(4, 1, 5, true),
        picks in proptest::collection::vec((0u32..4, 0u32..6), 0..6),
    ) {
        first_after_any_matches(&prog, &picks)?;
    }

    /// The same with warps of two lanes: one-warp nodes keep only their warp's bounds over
    /// a shared row ([`crate::hb`]'s `Row::Gather`).
    #[test]
    fn first_after_any_is_the_least_after_start_with_warps_of_two(
        prog in arb_program(4, 2, 4, true),
        picks in proptest::collection::vec((0u32..4, 0u32..5), 0..6),
    ) {
        first_after_any_matches(&prog, &picks)?;
    }
}

fn first_after_any_matches(prog: &Program, picks: &[(u32, u32)]) -> Result<(), TestCaseError> {
    let Some(hb) = analyze(prog).happens_before else {
        return Ok(());
    };
    let obs: Vec<(ThreadId, u32)> = picks
        .iter()
        .filter_map(|&(x, i)| {
            let len = prog.threads.get(x as usize)?.commands.len() as u32;
            (len > 0).then_some((t(x), i % len))
        })
        .collect();
    let fast = hb.first_after_any(&obs);
    prop_assert_eq!(fast.len(), prog.threads.len());
    for (u, &got) in fast.iter().enumerate() {
        let naive = obs
            .iter()
            .filter_map(|&w| hb.after_start(w, t(u as u32)))
            .min()
            .unwrap_or(u32::MAX);
        prop_assert_eq!(got, naive, "thread {} of {:?}", u, obs);
    }
    Ok(())
}

/// The generator finds well-synchronized programs too (so the property is not vacuous).
#[test]
fn oracle_sees_well_synchronized_programs() {
    let prog = figure3();
    // Shrink figure 3 to two threads of warp size 1 with counts 2.
    let small = threads1(&[
        &[
            C::S(0, 2),
            C::W(0),
            C::A(1, 2),
            C::S(0, 2),
            C::S(1, 2),
            C::R(0),
        ],
        &[
            C::S(0, 2),
            C::S(1, 2),
            C::R(0),
            C::S(0, 2),
            C::W(0),
            C::A(1, 2),
        ],
    ]);
    let o = Oracle::run(&small);
    assert!(o.well && o.traces > 1);
    check_against_oracle(&small, true).unwrap();
    assert!(analyze(&prog).violations.is_empty());
}

/// An asynchronous copy completing on an mbarrier phase: ordered after its issue, before the
/// commands after a wait that observed the phase (of any thread, the issuer included), and
/// unordered with everything else.
#[test]
fn async_copy_ends_before_the_phase_its_bytes_complete() {
    use weft_program::{AccessKind, AsyncCopy, MbarrierOp, Proxy};
    let i = |k: u32| InstId(k);
    let mb = |op, v, k| Command::mbarrier(op, 0x100, v, i(k));
    let read = |k| Command::access(AccessKind::Read, 0, 4, false, i(k));
    let sync = |k| Command::barrier(BarrierOp::Sync, 0, BarrierCount::All, true, i(k));
    let t0 = ThreadProgram {
        commands: vec![
            mb(MbarrierOp::Init, 1, 1),           // 0
            sync(2),                              // 1
            mb(MbarrierOp::ArriveExpectTx, 8, 3), // 2
            mb(MbarrierOp::CompleteTx, 8, 4),     // 3: the copy's complete_tx, at its issue
            read(5),                              // 4: the issuer before its own wait
            mb(MbarrierOp::WaitParity, 0, 6),     // 5
            read(7),                              // 6
            Command::exit(i(8)),
        ],
        end: ThreadEnd::Exited,
        steps: Vec::new(),
    };
    let t1 = ThreadProgram {
        commands: vec![
            read(10),                         // 0: before the barrier: before the issue
            sync(2),                          // 1
            read(11),                         // 2: after the barrier only
            mb(MbarrierOp::WaitParity, 0, 6), // 3
            read(12),                         // 4: after the wait
            Command::exit(i(13)),
        ],
        end: ThreadEnd::Exited,
        steps: Vec::new(),
    };
    let mut p = program(1, vec![t0, t1]);
    let mut copy = AsyncCopy::new(
        ThreadId(0),
        3,
        Command::access(AccessKind::Write, 0, 8, false, i(4)),
        Proxy::Async,
    );
    copy.phases.push(3);
    p.asyncs.copies.push(copy);
    let a = analyze(&p);
    assert_clean(&a);
    let hb = a.happens_before.as_ref().expect("well-synchronized");
    let agent = (ThreadId(2), 0);
    assert_eq!(hb.num_agents(), 1);
    // Before the issue: the issuer's commands before it, the other thread's before the barrier.
    assert!(hb.ordered((ThreadId(0), 2), agent));
    assert!(!hb.ordered((ThreadId(0), 3), agent));
    assert!(hb.ordered((ThreadId(1), 0), agent));
    assert!(!hb.ordered((ThreadId(1), 2), agent));
    // After the completion: only commands after a wait that observed the phase.
    assert!(!hb.ordered(agent, (ThreadId(0), 4)));
    assert!(hb.ordered(agent, (ThreadId(0), 6)));
    assert!(!hb.ordered(agent, (ThreadId(1), 2)));
    assert!(hb.ordered(agent, (ThreadId(1), 4)));
    // The bounds the race stage uses agree with `ordered`.
    assert_eq!(hb.before_bound(agent, ThreadId(1)), 2);
    assert_eq!(hb.before_bound(agent, ThreadId(0)), 3);
    assert_eq!(hb.before_bound((ThreadId(1), 4), ThreadId(2)), 1);
    assert_eq!(hb.before_bound((ThreadId(1), 2), ThreadId(2)), 0);
}

/// A copy completed by its issuer's wait (`cp.async.wait_group`): ordered before what the
/// issuer does after the wait and what follows it through barriers; two copies of one thread
/// are ordered only when the first one's wait precedes the second's issue.
#[test]
fn async_copy_ends_at_its_issuers_wait() {
    use weft_program::{AccessKind, AsyncCopy, Proxy};
    let p0 = thread(&[C::SAll(0), C::R(0), C::SAll(0)], 0);
    let p1 = thread(&[C::SAll(0), C::R(0), C::SAll(0), C::R(0)], 1000);
    let mut p = program(1, vec![p0, p1]);
    let w = |k| Command::access(AccessKind::Write, 0, 4, false, InstId(k));
    // Issued before the first barrier, completed before the issuer's read (position 1).
    let mut first = AsyncCopy::new(ThreadId(0), 0, w(500), Proxy::Generic);
    first.complete_at(1, 1);
    // Issued at position 1, never completed.
    let second = AsyncCopy::new(ThreadId(0), 1, w(501), Proxy::Generic);
    p.asyncs.copies.extend([first, second]);
    let a = analyze(&p);
    assert_clean(&a);
    let hb = a.happens_before.as_ref().expect("well-synchronized");
    let (g0, g1) = ((ThreadId(2), 0), (ThreadId(3), 0));
    assert!(hb.ordered(g0, (ThreadId(0), 1)));
    // The other thread's read after the first barrier is not after the issuer's wait.
    assert!(!hb.ordered(g0, (ThreadId(1), 1)));
    assert!(hb.ordered(g0, (ThreadId(1), 3)));
    assert!(hb.ordered(g0, g1));
    assert!(!hb.ordered(g1, g0));
    assert!(!hb.ordered(g1, (ThreadId(1), 3)));
    assert!(hb.ordered((ThreadId(1), 0), g1));
    assert!(!hb.ordered((ThreadId(1), 1), g1));
}

/// The tensor pipe orders one thread's `tcgen05.mma` and `tcgen05.cp` operations in issue
/// order, with no wait; operations of different threads, and accesses outside the pipe,
/// are not.
#[test]
fn the_tensor_pipe_orders_one_threads_mmas() {
    use weft_program::{AccessKind, AsyncCopy, Proxy};
    let p0 = thread(&[C::SAll(0), C::R(0)], 0);
    let p1 = thread(&[C::SAll(0), C::R(0)], 1000);
    let mut p = program(1, vec![p0, p1]);
    let w = |k| Command::access(AccessKind::Write, 0, 4, false, InstId(k));
    let agent = |issuer, pipe| {
        let mut c = AsyncCopy::new(ThreadId(issuer), 1, w(500), Proxy::Tensor);
        c.tensor_pipe = pipe;
        c
    };
    // A copy, two MMAs, a copy, another issuer's MMA, and a load (outside the pipe).
    p.asyncs.copies.extend([
        agent(0, true),
        agent(0, true),
        agent(0, true),
        agent(0, true),
        agent(1, true),
        agent(0, false),
    ]);
    let a = analyze(&p);
    assert_clean(&a);
    let hb = a.happens_before.as_ref().expect("well-synchronized");
    let g = |k: u32| (ThreadId(2 + k), 0);
    assert!(hb.ordered(g(0), g(1)));
    assert!(hb.ordered(g(1), g(2)));
    assert!(!hb.ordered(g(2), g(1)));
    assert!(hb.ordered(g(1), g(3)));
    // Another issuer's MMA, and an access outside the pipe (a tcgen05.ld), are not ordered.
    assert!(!hb.ordered(g(2), g(4)));
    assert!(!hb.ordered(g(2), g(5)));
}

/// A copy with a joint completion set (a warpgroup's wgmma, retired by every lane's
/// `wgmma.wait_group`): ordered before what follows any listed position, in its thread and
/// through barriers; a later copy issued after a listed position of its issuer starts after
/// it, one issued at that very position does not; a copy issued after a barrier that follows
/// a listed position starts after it, also where only the joint set orders the two.
#[test]
fn async_copy_ends_before_every_joint_completion() {
    use weft_program::{AccessKind, AsyncCopy, Proxy};
    // Thread 0 issues at 0 and completes at 1; thread 1 completes at 2 (after its second
    // read), then both meet at a barrier; thread 2 lists no completion.
    let p0 = thread(&[C::R(0), C::R(0), C::SAll(0), C::R(0)], 0);
    let p1 = thread(&[C::R(0), C::R(0), C::R(0), C::SAll(0), C::R(0)], 1000);
    let p2 = thread(&[C::R(0), C::SAll(0), C::R(0)], 2000);
    let mut p = program(1, vec![p0, p1, p2]);
    let r = |k| Command::access(AccessKind::Read, 0, 4, false, InstId(k));
    let mut wg = AsyncCopy::new(ThreadId(0), 0, r(500), Proxy::Async);
    wg.complete_at(1, 1);
    wg.joint = Some(0);
    // Issued by thread 1 at position 2 (its completion position), and at 3.
    let at_wait = AsyncCopy::new(ThreadId(1), 2, r(501), Proxy::Async);
    let after = AsyncCopy::new(ThreadId(1), 3, r(502), Proxy::Async);
    // Issued by thread 2 before its barrier, and after it.
    let early = AsyncCopy::new(ThreadId(2), 1, r(503), Proxy::Async);
    let late = AsyncCopy::new(ThreadId(2), 2, r(504), Proxy::Async);
    p.asyncs.copies.extend([wg, at_wait, after, early, late]);
    p.asyncs.joint_done.push(vec![(ThreadId(1), 2)]);
    let a = analyze(&p);
    assert_clean(&a);
    let hb = a.happens_before.as_ref().expect("well-synchronized");
    let (g, h1, h2) = ((ThreadId(3), 0), (ThreadId(4), 0), (ThreadId(5), 0));
    // Thread 1: not before its completion position, from it on.
    assert!(!hb.ordered(g, (ThreadId(1), 1)));
    assert!(hb.ordered(g, (ThreadId(1), 2)));
    assert!(hb.ordered(g, (ThreadId(1), 4)));
    // Thread 2: only after the barrier that follows the completions.
    assert!(!hb.ordered(g, (ThreadId(2), 0)));
    assert!(hb.ordered(g, (ThreadId(2), 2)));
    // Copies of thread 1: the one issued at the completion position is unordered with it.
    assert!(!hb.ordered(g, h1));
    assert!(hb.ordered(g, h2));
    // Copies of thread 2: through thread 1's completion and the barrier, only the later.
    let (h3, h4) = ((ThreadId(6), 0), (ThreadId(7), 0));
    assert!(!hb.ordered(g, h3));
    assert!(hb.ordered(g, h4));
    // Without the joint set, thread 1 would only be ordered after the barrier.
    let mut q = p.clone();
    q.asyncs.copies[0].joint = None;
    let a = analyze(&q);
    let hb = a.happens_before.as_ref().expect("well-synchronized");
    assert!(!hb.ordered(g, (ThreadId(1), 2)));
    assert!(hb.ordered(g, (ThreadId(1), 4)));
    assert!(!hb.ordered(g, h2));
    // Without the issuer's completing wait, only the joint set orders the copy with thread
    // 2's commands and copies, through the barrier after thread 1's completion.
    let mut q = p.clone();
    q.asyncs.copies[0].done = None;
    let a = analyze(&q);
    let hb = a.happens_before.as_ref().expect("well-synchronized");
    assert!(!hb.ordered(g, (ThreadId(0), 1)));
    assert!(hb.ordered(g, (ThreadId(0), 3)));
    assert!(hb.ordered(g, (ThreadId(1), 2)));
    assert!(!hb.ordered(g, (ThreadId(2), 0)));
    assert!(hb.ordered(g, (ThreadId(2), 2)));
    assert!(!hb.ordered(g, h3));
    assert!(hb.ordered(g, h4));
    // A completion right after thread 1's barrier (its position 4) orders nothing of
    // thread 2's.
    let mut q = q.clone();
    q.asyncs.joint_done[0] = vec![(ThreadId(1), 4)];
    let a = analyze(&q);
    let hb = a.happens_before.as_ref().expect("well-synchronized");
    assert!(hb.ordered(g, (ThreadId(1), 4)));
    assert!(!hb.ordered(g, (ThreadId(2), 2)));
    assert!(!hb.ordered(g, h4));
}

#[test]
fn a_loop_of_arrive_only_generations_is_folded_into_one_violation_per_shape() {
    // Two threads each arrive at barrier 1 (count 2) five times from one instruction and
    // never wait. The replay runs thread 0 first: generations 1 and 2 are its own arrivals,
    // 3 its last and thread 1's first, 4 and 5 thread 1's. Thread 1 registers at 3 and 4
    // unordered after arrive-only generations 2 and 3 (one shape: instruction #1000,
    // thread 1); 1 is thread 0's lost signal, 4 and 5 thread 1's (another shape). Each
    // shape is one violation listing its later generations: five generations, three
    // violations (unfolded, one per generation).
    let looped = |inst: u32| ThreadProgram {
        commands: (0..5)
            .map(|_| cmd(C::A(1, 2), inst))
            .chain([cmd(C::X, inst + 999)])
            .collect(),
        end: ThreadEnd::Exited,
        steps: Vec::new(),
    };
    let a = analyze(&program(1, vec![looped(0), looped(1000)]));
    let shapes: Vec<(Vec<u32>, Vec<u32>)> = a
        .violations
        .iter()
        .map(|v| (v.generations.clone(), v.also.clone()))
        .collect();
    assert!(
        kinds(&a).iter().all(|&k| k == ViolationKind::NoWaiter),
        "{a:#?}"
    );
    assert_eq!(
        shapes,
        [(vec![2, 3], vec![3]), (vec![1], vec![]), (vec![4], vec![5])],
        "{a:#?}"
    );
    assert!(a.happens_before.is_none());
}

/// A thread the emulated execution left blocked at a parity wait that this replay's order
/// passes (the replay reaches the wait while the previous phase of that parity is the
/// completed one: here because the arrival that began the next phase, which the emulation
/// ran first, is not in the programs) is reported beside the deadlock it leads to: before,
/// only the threads blocked behind it were named (a CuTe DSL GEMM mutant listed the load
/// and scheduler warps, not the MMA warp that was stuck).
#[test]
fn a_wait_blocked_only_in_the_emulation_is_reported() {
    use weft_program::MbarrierOp;
    let i = |k: u32| InstId(k);
    let mb = |op, addr, v, k| Command::mbarrier(op, addr, v, i(k));
    let sync = |k| Command::barrier(BarrierOp::Sync, 0, BarrierCount::All, true, i(k));
    let t0 = ThreadProgram {
        commands: vec![
            mb(MbarrierOp::Init, 0x100, 1, 1),
            mb(MbarrierOp::Init, 0x108, 1, 2),
            sync(3),
            mb(MbarrierOp::WaitParity, 0x100, 1, 4),
        ],
        end: ThreadEnd::Blocked,
        steps: Vec::new(),
    };
    let t1 = ThreadProgram {
        commands: vec![sync(3), mb(MbarrierOp::WaitParity, 0x108, 0, 6)],
        end: ThreadEnd::Blocked,
        steps: Vec::new(),
    };
    let a = analyze(&program(1, vec![t0, t1]));
    assert_eq!(
        kinds(&a),
        [ViolationKind::Deadlock, ViolationKind::MbarrierPhaseRace],
        "{:?}",
        a.violations
    );
    let race = &a.violations[1];
    assert_eq!(race.commands.len(), 1);
    assert_eq!(race.commands[0].thread, ThreadId(0));
    assert_eq!(race.commands[0].inst, InstId(4));
    assert!(
        race.message.contains("mbarrier 0x100 for parity 1"),
        "{}",
        race.message
    );
}
