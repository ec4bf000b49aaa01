//! Fast paths against their references.
//!
//! - The replay registers the lanes of a warp that follow each other in its queue in one
//!   call (`replay::Replayer::register_followers`), numbers an arrive's gather node before
//!   pushing its lanes' registrations when no lane of the warp has exited, and looks for
//!   uncounted lanes only in warps some lane of which did not take part in a completion,
//!   and lets the lanes of a warp with the same synchronization commands share one list of
//!   them (`replay::Lists`), and stores the registrations of the lanes of a warp that
//!   register alike once (`Registrations`); registering every lane in its own run, by the
//!   general paths, each with its own list and its own registrations, is the reference.
//!   Both must give the same trace: nodes, registrations, exits, violations, mbarrier and
//!   execution-event records.
//! - The recycling check summarizes, per generation without a waiter and blocking point,
//!   the commands that point does not order (`check::Unordered`), and a lane takes the
//!   answer of the lane before it in its warp at the same registration
//!   (`check::Verdict`); testing each registration and exit of the generation, each lane
//!   on its own, is the reference. Both must report the same violations.
//! - [`HappensBefore::ordered_at`] and [`HappensBefore::before_bound_at`] take a command's
//!   chain key instead of looking it up: they must answer as [`HappensBefore::ordered`] and
//!   [`HappensBefore::before_bound`].
//! - The lanes whose blocking registrations and lengths are the lane before's share its row
//!   of chain keys (`hb::Chains`): every thread's keys must be the definition's, its last
//!   blocking node at or before each command.

use proptest::prelude::*;

use weft_program::ThreadId;

use crate::replay::{replay, replay_one_by_one};
use crate::tests::{C, program, thread};
use crate::{HappensBefore, analyze};

/// One command of a warp's text: barriers (aligned and not, all kinds), warp barriers,
/// accesses and exits, with ids 0–1 and counts that are multiples of the warp size.
fn arb_command(threads: u32, ws: u32) -> impl Strategy<Value = C> {
    let counts: Vec<u32> = (1..=threads / ws).map(|k| k * ws).collect();
    let count = proptest::sample::select(counts);
    let id = 0..2u32;
    prop_oneof![
        4 => (id.clone(), count.clone()).prop_map(|(b, n)| C::S(b, n)),
        4 => (id.clone(), count.clone()).prop_map(|(b, n)| C::A(b, n)),
        1 => (id.clone(), count.clone()).prop_map(|(b, n)| C::ANa(b, n)),
        1 => (id.clone(), count.clone()).prop_map(|(b, n)| C::SNa(b, n)),
        1 => (id.clone(), count).prop_map(|(b, n)| C::Red(b, n)),
        1 => id.clone().prop_map(C::SAll),
        2 => proptest::sample::select(vec![u32::MAX, u32::MAX, 0b11, 0b1010]).prop_map(C::Ws),
        2 => id.clone().prop_map(C::R),
        2 => id.prop_map(C::W),
        1 => Just(C::X),
    ]
}

/// [`arb_command`], or an mbarrier or execution-event operation (two objects, two events):
/// the steps of the replay that do not block, or block elsewhere than at a barrier.
fn arb_command_or_async(threads: u32, ws: u32) -> impl Strategy<Value = C> {
    let addr = proptest::sample::select(vec![0x100u32, 0x108]);
    prop_oneof![
        6 => arb_command(threads, ws),
        1 => (0..4u8, addr, 1..=8u32).prop_map(|(op, a, v)| C::Mb(op, a, v)),
        1 => (0..3u8, 0..2u32).prop_map(|(op, e)| C::Ex(op, e)),
    ]
}

/// Programs whose lanes mostly run their warp's text (where the replay takes lanes
/// together), some cut short (an exit part way) or with a command of their own: divergence,
/// exited lanes and gathers that complete early.
fn arb_convergent(threads: u32, ws: u32, max_len: usize) -> impl Strategy<Value = Vec<Vec<C>>> {
    arb_convergent_of(threads, ws, max_len, move || arb_command(threads, ws))
}

/// [`arb_convergent`] of the commands `command` generates.
fn arb_convergent_of<S: Strategy<Value = C>>(
    threads: u32,
    ws: u32,
    max_len: usize,
    command: impl Fn() -> S,
) -> impl Strategy<Value = Vec<Vec<C>>> {
    let warps = threads.div_ceil(ws) as usize;
    (
        proptest::collection::vec(proptest::collection::vec(command(), 0..=max_len), warps),
        proptest::collection::vec((0..8u32, 0..=max_len, command()), threads as usize),
    )
        .prop_map(move |(texts, lanes)| {
            lanes
                .iter()
                .enumerate()
                .map(|(t, &(change, at, c))| {
                    let mut text = texts[t / ws as usize].clone();
                    let at = at.min(text.len());
                    match change {
                        0 => text.truncate(at),
                        1 => text.insert(at, c),
                        2 if at < text.len() => text[at] = c,
                        _ => {}
                    }
                    text
                })
                .collect()
        })
}

fn same_trace(ws: u32, texts: &[Vec<C>]) -> Result<(), TestCaseError> {
    let threads = texts.iter().map(|text| thread(text, 0)).collect::<Vec<_>>();
    let p = program(ws, threads);
    let (a, b) = (replay(&p), replay_one_by_one(&p));
    prop_assert_eq!(&a.nodes, &b.nodes);
    prop_assert_eq!(&a.registrations, &b.registrations);
    prop_assert_eq!(&a.exit_index, &b.exit_index);
    prop_assert_eq!(&a.uncounted, &b.uncounted);
    prop_assert_eq!(&a.violations, &b.violations);
    prop_assert_eq!(a.stuck, b.stuck);
    // The mbarrier and execution-event records, as their debug forms (maps sorted: their
    // order is the hasher's).
    let sorted = |m: Vec<String>| {
        let mut m = m;
        m.sort();
        m
    };
    let (ma, mb) = (&a.mbarriers, &b.mbarriers);
    prop_assert_eq!(format!("{:?}", ma.objects), format!("{:?}", mb.objects));
    prop_assert_eq!(format!("{:?}", ma.waiting), format!("{:?}", mb.waiting));
    prop_assert_eq!(&ma.edges, &mb.edges);
    prop_assert_eq!(ma.errors, mb.errors);
    for (x, y) in [
        (
            ma.live.iter().map(|e| format!("{e:?}")).collect(),
            mb.live.iter().map(|e| format!("{e:?}")).collect(),
        ),
        (
            ma.init_occ.iter().map(|e| format!("{e:?}")).collect(),
            mb.init_occ.iter().map(|e| format!("{e:?}")).collect(),
        ),
        (
            ma.reported.iter().map(|e| format!("{e:?}")).collect(),
            mb.reported.iter().map(|e| format!("{e:?}")).collect(),
        ),
    ] {
        prop_assert_eq!(sorted(x), sorted(y));
    }
    prop_assert_eq!(
        format!("{:?}", a.exec.waiting),
        format!("{:?}", b.exec.waiting)
    );
    prop_assert_eq!(&a.exec.edges, &b.exec.edges);
    prop_assert_eq!(a.exec.any, b.exec.any);
    Ok(())
}

/// Every pair of commands (and one index past each program's end): the keyed queries
/// answer as the plain ones.
fn same_answers(ws: u32, texts: &[Vec<C>]) -> Result<(), TestCaseError> {
    let threads = texts.iter().map(|text| thread(text, 0)).collect::<Vec<_>>();
    let p = program(ws, threads);
    let Some(hb) = analyze(&p).happens_before else {
        return Ok(());
    };
    let hb: &HappensBefore = &hb;
    let cmds = |t: usize| 0..=p.threads[t].commands.len() as u32;
    for t in 0..p.threads.len() {
        for i in cmds(t) {
            let a = (ThreadId(t as u32), i);
            for u in 0..p.threads.len() {
                let key = |j| hb.chain_key(ThreadId(u as u32), j);
                prop_assert_eq!(
                    hb.before_bound_at(a, hb.chain_key(a.0, i), ThreadId(u as u32)),
                    hb.before_bound(a, ThreadId(u as u32))
                );
                for j in cmds(u) {
                    let b = (ThreadId(u as u32), j);
                    prop_assert_eq!(hb.ordered_at(a, b, key(j)), hb.ordered(a, b));
                }
            }
        }
    }
    Ok(())
}

/// Each thread's chain keys, shared or not, against the definition: at command `i`, one
/// more than the last node at which the thread blocked (a blocking registration, or its
/// warp's gather) at or before `i`; 0 before the first.
fn same_chain_keys(ws: u32, texts: &[Vec<C>]) -> Result<(), TestCaseError> {
    let threads = texts.iter().map(|text| thread(text, 0)).collect::<Vec<_>>();
    let p = program(ws, threads);
    let Some(hb) = analyze(&p).happens_before else {
        return Ok(());
    };
    let trace = replay(&p);
    for (t, regs) in trace.registrations.iter().enumerate() {
        let len = p.threads[t].commands.len();
        let expected: Vec<u32> = (0..len as u32)
            .map(|i| {
                regs.iter()
                    .rev()
                    .filter(|r| r.command <= i)
                    .find_map(|r| match r.gather() {
                        Some(g) => Some(g.0 + 1),
                        None if r.op.blocks() => r.node().map(|m| m.0 + 1),
                        None => None,
                    })
                    .unwrap_or(0)
            })
            .collect();
        prop_assert_eq!(hb.chain_keys(ThreadId(t as u32)), Some(&expected[..]));
    }
    Ok(())
}

/// The violations with the recycling check's summaries and with its reference.
fn same_recycling(ws: u32, texts: &[Vec<C>]) -> Result<(), TestCaseError> {
    let threads = texts.iter().map(|text| thread(text, 0)).collect::<Vec<_>>();
    let p = program(ws, threads);
    let fast = analyze(&p).violations;
    crate::check::REFERENCE.with(|r| r.set(true));
    let reference = analyze(&p).violations;
    crate::check::REFERENCE.with(|r| r.set(false));
    prop_assert_eq!(fast, reference);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// The recycling check on the same programs, and on ones of ten warps of four lanes
    /// mostly arriving (generations without a waiter, blocking points before them).
    #[test]
    fn recycling_summaries_answer_as_the_definition(texts in arb_convergent(8, 4, 6)) {
        same_recycling(4, &texts)?;
    }

    #[test]
    fn recycling_summaries_with_many_arrivals(texts in arb_convergent(40, 4, 8)) {
        same_recycling(4, &texts)?;
    }

    /// Two warps of four lanes.
    #[test]
    fn batched_replay_is_the_one_by_one_replay(texts in arb_convergent(8, 4, 6)) {
        same_trace(4, &texts)?;
    }

    /// Lanes that run their warp's text share one list of its commands and follow each
    /// other in registrations (`replay::Lists`); with mbarrier and execution-event steps
    /// between barriers, lanes that run on alone, lanes that leave the text part way.
    #[test]
    fn class_replay_with_mbarriers_and_events(
        texts in arb_convergent_of(8, 4, 8, || arb_command_or_async(8, 4))
    ) {
        same_trace(4, &texts)?;
    }

    /// The same with warps of eight lanes and a partial last warp.
    #[test]
    fn class_replay_with_a_partial_warp(
        texts in arb_convergent_of(20, 8, 6, || arb_command_or_async(20, 8))
    ) {
        same_trace(8, &texts)?;
    }

    /// The keyed happens-before queries, on the same programs.
    #[test]
    fn keyed_queries_answer_as_the_plain_ones(texts in arb_convergent(8, 4, 6)) {
        same_answers(4, &texts)?;
    }

    /// The shared rows of chain keys, on the same programs (whose lanes mostly run their
    /// warp's text: many share) and on a partial last warp.
    #[test]
    fn shared_chain_keys_are_the_definition(texts in arb_convergent(8, 4, 6)) {
        same_chain_keys(4, &texts)?;
    }

    #[test]
    fn shared_chain_keys_with_a_partial_warp(texts in arb_convergent(20, 8, 5)) {
        same_chain_keys(8, &texts)?;
    }

    /// A partial last warp, warps of eight lanes.
    #[test]
    fn batched_replay_with_a_partial_warp(texts in arb_convergent(20, 8, 5)) {
        same_trace(8, &texts)?;
    }
}

/// Warps of 32 lanes running one text: the case the batching is for.
#[test]
fn batched_replay_of_full_warps() {
    let text = [
        C::S(0, 64),
        C::W(0),
        C::A(1, 64),
        C::R(1),
        C::S(1, 64),
        C::X,
    ];
    let texts: Vec<Vec<C>> = (0..64).map(|_| text.to_vec()).collect();
    same_trace(32, &texts).unwrap();
    let mut cut = texts.clone();
    cut[40].truncate(2);
    cut[5] = vec![C::A(0, 64), C::X];
    same_trace(32, &cut).unwrap();
}
