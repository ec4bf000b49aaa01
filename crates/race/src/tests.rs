use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use weft_oracle::{Exploration, explore, program_from_text, strategy};
use weft_program::{Command, CtaShape, ThreadEnd, ThreadProgram};

use super::*;

/// Definition 4 happens-before, straight from the exhaustive oracle.
struct OracleHb(Exploration);

impl HappensBeforeQuery for OracleHb {
    fn ordered(&self, first: (ThreadId, u32), second: (ThreadId, u32)) -> bool {
        self.0
            .memory_happens_before((first.0.0, first.1), (second.0.0, second.1))
    }
}

/// No two commands of different threads are ordered (a CTA without barriers).
struct Unordered;

impl HappensBeforeQuery for Unordered {
    fn ordered(&self, _: (ThreadId, u32), _: (ThreadId, u32)) -> bool {
        false
    }
}

type Pair = ((u32, u32), (u32, u32));

fn pairs(report: &RaceReport) -> BTreeSet<Pair> {
    report
        .races
        .iter()
        .map(|r| {
            (
                (r.first.thread.0, r.first.index),
                (r.second.thread.0, r.second.index),
            )
        })
        .collect()
}

fn check_text(threads: &[&str]) -> (RaceReport, BTreeSet<Pair>) {
    let program = program_from_text(threads);
    let e = explore(&program).expect("in the oracle's fragment");
    assert!(e.well_synchronized);
    let expected = e.races().unwrap_or_default();
    let report = find_races(&program, &OracleHb(e), &Config::default());
    (report, expected)
}

#[test]
fn figure_3_is_race_free() {
    let (report, expected) = check_text(&[
        "sync 0 2; write 0; arrive 1 2; sync 0 2; sync 1 2; read 0",
        "sync 0 2; sync 1 2; read 0; sync 0 2; write 0; arrive 1 2",
    ]);
    assert!(expected.is_empty());
    assert!(report.races.is_empty());
    assert_eq!(report.stats.accesses, 4);
    assert_eq!(report.stats.shared_addresses, 1);
    // write/read, write/write, read/write across threads: P's write vs Q's read and write,
    // P's read vs Q's write = 3 pairs of P x Q with a write... plus P's read vs Q's read is
    // read/read. P has {w, r}, Q has {r, w}: pairs with a write = 4 - 1.
    assert_eq!(report.stats.naive_pairs, 3);
}

#[test]
fn missing_sync_is_a_read_after_write() {
    let (report, expected) = check_text(&[
        "sync 0 2; write 0; arrive 1 2; sync 0 2",
        "sync 0 2; read 0; sync 1 2; sync 0 2",
    ]);
    assert_eq!(pairs(&report), expected);
    let race = &report.races[0];
    assert_eq!(race.hazard, Hazard::ReadAfterWrite);
    assert_eq!(race.hazard.as_str(), "read-after-write");
    assert_eq!(race.addr, 0);
    assert_eq!(race.thread_pairs, 1);
}

#[test]
fn write_after_read_names_the_lower_thread_first() {
    let (report, _) = check_text(&["read 1", "write 1"]);
    assert_eq!(report.races.len(), 1);
    assert_eq!(report.races[0].hazard, Hazard::WriteAfterRead);
    assert_eq!(report.races[0].addr, 4);
}

#[test]
fn partial_overlaps_are_exact_and_reported_once() {
    // 8-byte write over two chunks vs a 2-byte read in the second chunk, a 16-byte write vs a
    // 16-byte write (four common chunks, one report), disjoint bytes of one chunk, atomics.
    let (report, expected) = check_text(&[
        "write @0+8; write @16+16; write @40+2; atomic @48+4",
        "read @6+2; write @20+16; read @42+2; atomic @48+4; read @48+4",
    ]);
    assert_eq!(pairs(&report), expected);
    let addrs: Vec<u32> = report.races.iter().map(|r| r.addr).collect();
    assert_eq!(addrs, [6, 20, 48]);
}

#[test]
fn groups_by_instruction_pair_with_lowest_threads() {
    // Four threads run the same code without barriers: every pair of threads races on
    // (write, write) and on (write, read).
    let mut program = program_from_text(&["write 0; read 0"; 4]);
    for thread in &mut program.threads {
        for (i, c) in thread.commands.iter_mut().enumerate() {
            *c = with_inst(*c, InstId(i as u32));
        }
    }
    let config = Config {
        warp_sync: false,
        detail: true,
        max_word_tests: None,
    };
    let report = find_races(&program, &Unordered, &config);
    assert_eq!(report.races.len(), 2);
    let ww = &report.races[0];
    assert_eq!(
        (ww.first.thread, ww.second.thread),
        (ThreadId(0), ThreadId(1))
    );
    assert_eq!(ww.hazard, Hazard::WriteAfterWrite);
    assert_eq!(ww.thread_pairs, 6);
    assert_eq!(ww.details.len(), 6);
    let wr = &report.races[1];
    assert_eq!((wr.first.index, wr.second.index), (0, 1));
    assert_eq!(wr.hazard, Hazard::ReadAfterWrite);
    // (0,1),(0,2),(0,3),(1,2),(1,3),(2,3), each in both directions but counted once.
    assert_eq!(wr.thread_pairs, 6);
    assert!(!wr.details_truncated);
}

fn with_inst(c: Command, inst: InstId) -> Command {
    match c.view() {
        CommandView::Access {
            kind,
            addr,
            len,
            may,
            approx,
        } => Command::access(kind, addr, len, may, inst).with_approx(approx),
        _ => Command::exit(inst),
    }
}

fn uniform(threads: u32, warp_size: u32, commands: Vec<Command>) -> Program {
    Program::new(
        CtaShape::linear(threads),
        warp_size,
        (0..threads)
            .map(|_| ThreadProgram {
                commands: commands.clone(),
                end: ThreadEnd::Exited,
                steps: (0..commands.len() as u32).collect(),
            })
            .collect(),
    )
    .expect("a valid program")
}

#[test]
fn warp_sync_orders_lanes_of_a_warp() {
    // Each lane reads then writes word 0 (two instructions): lanes of one warp race on the
    // read/write pairs unless they run in lock-step.
    let r = Command::access(AccessKind::Read, 0, 4, false, InstId(0));
    let w = Command::access(AccessKind::Write, 0, 4, true, InstId(1));
    let program = uniform(4, 2, vec![r, w]);
    let plain = find_races(&program, &Unordered, &Config::default());
    let by_insts = |report: &RaceReport, a: u32, b: u32| {
        report
            .races
            .iter()
            .find(|r| {
                (
                    r.first.inst.0.min(r.second.inst.0),
                    r.first.inst.0.max(r.second.inst.0),
                ) == (a, b)
            })
            .map(|r| r.thread_pairs)
    };
    assert_eq!(by_insts(&plain, 0, 1), Some(6));
    // The write/write pairs of one warp are one instruction: only the 4 cross-warp pairs.
    assert_eq!(by_insts(&plain, 1, 1), Some(4));
    assert_eq!(plain.stats.same_instruction_writes, 2);
    assert!(plain.races.iter().all(|r| r.second.may));
    let lockstep = Config {
        warp_sync: true,
        detail: false,
        max_word_tests: None,
    };
    let report = find_races(&program, &Unordered, &lockstep);
    // Only pairs across warps {0,1} x {2,3} remain.
    assert_eq!(by_insts(&report, 0, 1), Some(4));
    assert_eq!(by_insts(&report, 1, 1), Some(4));
    assert_eq!(
        (report.races[0].first.thread, report.races[0].second.thread),
        (ThreadId(0), ThreadId(2))
    );
    // Same warp step, same instruction: counted the same way under lock-step.
    assert_eq!(report.stats.same_instruction_writes, 2);
}

fn write(addr: u32, len: u32, inst: u32) -> Command {
    Command::access(AccessKind::Write, addr, len, false, InstId(inst))
}

fn read(addr: u32, len: u32, inst: u32) -> Command {
    Command::access(AccessKind::Read, addr, len, false, InstId(inst))
}

fn sync_all(inst: u32) -> Command {
    Command::barrier(
        weft_program::BarrierOp::Sync,
        0,
        weft_program::BarrierCount::All,
        true,
        InstId(inst),
    )
}

/// `bar.sync id, threads`.
fn warp_barrier(id: u32, threads: u32) -> Command {
    Command::barrier(
        weft_program::BarrierOp::Sync,
        id,
        weft_program::BarrierCount::Threads(threads),
        true,
        InstId(98),
    )
}

/// `threads` threads of warp size `warp_size`, thread `t` running `code(t)`; steps are the
/// command indices (lock-step when every lane runs the same number of commands).
fn per_thread(threads: u32, warp_size: u32, code: impl Fn(u32) -> Vec<Command>) -> Program {
    Program::new(
        CtaShape::linear(threads),
        warp_size,
        (0..threads)
            .map(|t| {
                let commands = code(t);
                ThreadProgram {
                    steps: (0..commands.len() as u32).collect(),
                    commands,
                    end: ThreadEnd::Exited,
                }
            })
            .collect(),
    )
    .expect("a valid program")
}

/// Triton's warp reduction: every lane of each of two warps stores its warp's partial result
/// to `smem[warp]` with one instruction, a barrier, then every thread reads both partials.
fn triton_reduction() -> Program {
    per_thread(64, 32, |t| {
        vec![
            write(4 * (t / 32), 4, 10),
            sync_all(11),
            read(0, 4, 12),
            read(4, 4, 13),
            Command::exit(InstId(14)),
        ]
    })
}

#[test]
fn one_store_by_all_lanes_of_a_warp_is_not_a_race() {
    let program = triton_reduction();
    let analysis = barrier_graph::analyze(&program);
    let hb = analysis.happens_before.as_ref().expect("well-synchronized");
    for warp_sync in [false, true] {
        let config = Config {
            warp_sync,
            detail: true,
            max_word_tests: None,
        };
        let report = find_races(&program, hb, &config);
        assert!(report.races.is_empty(), "{warp_sync}: {:?}", report.races);
        // C(32, 2) lane pairs per warp, two warps.
        assert_eq!(report.stats.same_instruction_writes, 2 * 496, "{warp_sync}");
    }
    // Without the barrier the reads race with the stores (and the stores still do not race
    // among the lanes of one warp).
    let unsynced = per_thread(64, 32, |t| vec![write(4 * (t / 32), 4, 10), read(0, 4, 12)]);
    let report = find_races(&unsynced, &Unordered, &Config::default());
    assert_eq!(report.races.len(), 1);
    assert_eq!(report.races[0].hazard, Hazard::ReadAfterWrite);
    assert_eq!(report.races[0].first.inst, InstId(10));
    assert_eq!(report.stats.same_instruction_writes, 2 * 496);
}

#[test]
fn one_instruction_in_two_loop_iterations_races() {
    // Two lanes of one warp run a loop body `smem[0] = x` twice without a barrier: the first
    // iteration of one lane and the second of the other are two instructions of the warp.
    let program = per_thread(2, 32, |_| vec![write(0, 4, 5), write(0, 4, 5)]);
    for warp_sync in [false, true] {
        let config = Config {
            warp_sync,
            detail: true,
            max_word_tests: None,
        };
        let report = find_races(&program, &Unordered, &config);
        assert_eq!(report.stats.same_instruction_writes, 2, "{warp_sync}");
        if warp_sync {
            // Lock-step orders the iterations.
            assert!(report.races.is_empty());
            continue;
        }
        assert_eq!(report.races.len(), 1);
        let race = &report.races[0];
        assert_eq!(race.hazard, Hazard::WriteAfterWrite);
        assert_eq!((race.first.inst, race.second.inst), (InstId(5), InstId(5)));
        assert_ne!(race.first.index, race.second.index, "a real racing pair");
        assert_eq!(race.thread_pairs, 1);
    }
}

#[test]
fn two_store_instructions_of_one_warp_race() {
    let program = per_thread(2, 32, |_| vec![write(0, 4, 1), write(0, 4, 2)]);
    let report = find_races(&program, &Unordered, &Config::default());
    assert_eq!(report.races.len(), 1);
    let race = &report.races[0];
    assert_eq!(
        (
            race.first.inst.min(race.second.inst),
            race.first.inst.max(race.second.inst)
        ),
        (InstId(1), InstId(2))
    );
    assert_eq!(report.stats.same_instruction_writes, 2);
    // Lanes that store with different instructions only (e.g. `if (lane == 0) ... else ...`).
    let program = per_thread(2, 32, |t| vec![write(0, 4, 1 + t)]);
    let report = find_races(&program, &Unordered, &Config::default());
    assert_eq!(report.races.len(), 1);
    assert_eq!(report.stats.same_instruction_writes, 0);
}

#[test]
fn one_instruction_of_different_warps_races() {
    // Two warps of two lanes store to one word with one instruction: the 4 cross-warp thread
    // pairs race, the 2 same-warp pairs are one instruction each.
    let program = per_thread(4, 2, |_| vec![write(0, 4, 0)]);
    let report = find_races(
        &program,
        &Unordered,
        &Config {
            warp_sync: false,
            detail: true,
            max_word_tests: None,
        },
    );
    assert_eq!(report.races.len(), 1);
    let race = &report.races[0];
    assert_eq!(race.thread_pairs, 4);
    assert_eq!(
        race.details
            .iter()
            .map(|d| (d.1.0, d.2.0))
            .collect::<Vec<_>>(),
        [(0, 2), (0, 3), (1, 2), (1, 3)]
    );
    assert_eq!(report.stats.same_instruction_writes, 2);
}

#[test]
fn atomics_and_reads_of_one_instruction_id_still_race() {
    // Not produced by the emulator (an instruction is one kind of access), but the rule is
    // for plain writes only: an atomic or a read against a write of the same id races.
    for other in [AccessKind::Atomic, AccessKind::Read] {
        let program = per_thread(2, 32, |t| {
            let kind = if t == 0 { other } else { AccessKind::Write };
            vec![Command::access(kind, 0, 4, false, InstId(3))]
        });
        let report = find_races(&program, &Unordered, &Config::default());
        assert_eq!(report.races.len(), 1, "{other:?}");
        assert_eq!(report.stats.same_instruction_writes, 0);
    }
}

#[test]
fn may_and_vector_writes_of_one_instruction_do_not_race() {
    // One 16-byte store instruction; lane 1 under an input-dependent guard, at an offset
    // overlapping lane 0's bytes 4..16 (first common byte 4: counted once, in chunk 1).
    let program = per_thread(2, 32, |t| {
        vec![Command::access(
            AccessKind::Write,
            4 * t,
            16,
            t == 1,
            InstId(9),
        )]
    });
    let report = find_races(&program, &Unordered, &Config::default());
    assert!(report.races.is_empty(), "{:?}", report.races);
    assert_eq!(report.stats.same_instruction_writes, 1);
}

#[test]
fn a_racy_loop_within_a_warp_costs_one_test_per_access() {
    // Two lanes of one warp, 1,000 executions each of one store to one word: every pair of
    // different iterations races, the 1,000 same-iteration pairs do not.
    let program = per_thread(2, 32, |_| vec![write(0, 4, 7); 1000]);
    let report = find_races(&program, &Unordered, &Config::default());
    assert_eq!(report.races.len(), 1);
    assert_ne!(report.races[0].first.index, report.races[0].second.index);
    assert_eq!(report.stats.same_instruction_writes, 1000);
    assert!(
        report.stats.race_tests <= 2 * 2000 + 2 * 1000,
        "{:?}",
        report.stats
    );
}

#[test]
fn a_racy_loop_costs_one_test_per_access() {
    // 1,000 writes per thread to one word, no barriers: a million racing dynamic pairs per
    // thread pair, one instruction pair.
    let w = Command::access(AccessKind::Write, 0, 4, false, InstId(7));
    let program = uniform(3, 1, vec![w; 1000]);
    let config = Config {
        warp_sync: false,
        detail: true,
        max_word_tests: None,
    };
    let report = find_races(&program, &Unordered, &config);
    assert_eq!(report.races.len(), 1);
    assert_eq!(report.races[0].thread_pairs, 3);
    assert_eq!(report.races[0].details.len(), 3);
    assert_eq!(report.stats.naive_pairs, 3 * 1000 * 1000);
    assert!(
        report.stats.race_tests <= 3 * 2 * 2000,
        "{:?}",
        report.stats
    );
}

#[test]
fn details_are_capped() {
    // 150 threads x 1 word: C(150, 2) = 11,175 thread pairs.
    let w = Command::access(AccessKind::Write, 0, 4, false, InstId(0));
    let program = uniform(150, 1, vec![w]);
    let config = Config {
        warp_sync: false,
        detail: true,
        max_word_tests: None,
    };
    let report = find_races(&program, &Unordered, &config);
    let race = &report.races[0];
    // Once DETAILS_CAP thread pairs race on the instruction, the rest are not tested.
    assert_eq!(race.thread_pairs, DETAILS_CAP as u64);
    assert!(race.thread_pairs_at_least);
    assert_eq!(race.details.len(), DETAILS_CAP);
    assert!(race.details_truncated);
    assert_eq!(race.details[0], (0, ThreadId(0), ThreadId(1)));
}

/// Races expected from the oracle, grouped the way `find_races` groups them.
fn oracle_groups(
    program: &Program,
    races: &BTreeSet<Pair>,
) -> BTreeMap<(InstId, InstId), BTreeSet<(u32, u32)>> {
    let mut groups: BTreeMap<(InstId, InstId), BTreeSet<(u32, u32)>> = BTreeMap::new();
    for &((t1, i1), (t2, i2)) in races {
        let a = program.threads[t1 as usize].commands[i1 as usize].inst();
        let b = program.threads[t2 as usize].commands[i2 as usize].inst();
        groups
            .entry((a.min(b), a.max(b)))
            .or_default()
            .insert((t1.min(t2), t1.max(t2)));
    }
    groups
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    /// With the oracle's own happens-before, `find_races` finds exactly the oracle's racing
    /// pairs (every command its own instruction), and groups SIMT-style programs exactly.
    #[test]
    fn agrees_with_the_oracle_given_its_happens_before(spec in strategy::spec()) {
        let program = spec.build(true);
        let e = explore(&program).expect("generated programs are in the fragment");
        if let Some(expected) = e.races() {
            let report = find_races(&program, &OracleHb(e.clone()), &Config::default());
            prop_assert_eq!(pairs(&report), expected.clone());
            prop_assert!(report.possible.is_empty());
            prop_assert!(report.races.iter().all(|r| r.thread_pairs == 1));

            let shared = spec.build(false);
            let report = find_races(&shared, &OracleHb(e), &Config { warp_sync: false, detail: true, max_word_tests: None });
            let groups = oracle_groups(&shared, &expected);
            let got: BTreeMap<(InstId, InstId), BTreeSet<(u32, u32)>> = report
                .races
                .iter()
                .map(|r| {
                    let key = (r.first.inst.min(r.second.inst), r.first.inst.max(r.second.inst));
                    let pairs = r.details.iter().map(|d| (d.1.0, d.2.0)).collect();
                    (key, pairs)
                })
                .collect();
            prop_assert_eq!(&got, &groups);
            for r in &report.races {
                let key = (r.first.inst.min(r.second.inst), r.first.inst.max(r.second.inst));
                prop_assert_eq!(r.thread_pairs as usize, groups[&key].len());
                let lowest = groups[&key].first().copied();
                prop_assert_eq!(Some((r.first.thread.0, r.second.thread.0)), lowest);
            }
        }
    }
}

#[test]
fn sparse_addresses_take_the_sorted_run_starts() {
    // Two words 1 GiB apart: too sparse for the per-chunk lists.
    let (report, expected) = check_text(&[
        "write @0+4; write @1073741824+8",
        "read @1073741828+4; read @0+2",
    ]);
    assert_eq!(pairs(&report), expected);
    assert_eq!(report.races.len(), 2);
    assert_eq!(report.stats.shared_addresses, 3);
}

/// A TMA-style write whose extent is an upper bound, unordered with a read inside that
/// extent: undecidable, so a possible race and not a race.
#[test]
fn approximate_extents_give_possible_races() {
    let program = per_thread(2, 1, |t| {
        if t == 0 {
            vec![
                Command::approx_access(AccessKind::Write, 0, 256, false, InstId(1)),
                write(512, 4, 2),
            ]
        } else {
            vec![read(128, 4, 3), read(512, 4, 4)]
        }
    });
    let report = find_races(&program, &Unordered, &Config::default());
    // The exact write/read pair is a race as before.
    assert_eq!(report.races.len(), 1);
    assert_eq!(
        (report.races[0].first.inst, report.races[0].second.inst),
        (InstId(2), InstId(4))
    );
    assert!(!report.races[0].first.approx && !report.races[0].second.approx);
    // The approximate write against the read: possible only.
    assert_eq!(report.possible.len(), 1);
    let p = &report.possible[0];
    assert_eq!((p.first.inst, p.second.inst), (InstId(1), InstId(3)));
    assert!(p.first.approx && !p.second.approx);
    assert_eq!(p.hazard, Hazard::ReadAfterWrite);
    assert_eq!(p.addr, 128);
    assert_eq!(report.stats.approx_accesses, 1);
    assert_eq!(report.stats.possible_thread_pairs, 1);
    // An approximate read (a TMA store's source) against an exact write: possible.
    let program = per_thread(2, 1, |t| {
        if t == 0 {
            vec![Command::approx_access(
                AccessKind::Read,
                64,
                64,
                false,
                InstId(1),
            )]
        } else {
            vec![write(100, 4, 2)]
        }
    });
    let report = find_races(&program, &Unordered, &Config::default());
    assert!(report.races.is_empty(), "{:?}", report.races);
    assert_eq!(report.possible.len(), 1);
    assert_eq!(report.possible[0].hazard, Hazard::WriteAfterRead);
}

/// Two exact accesses race exactly as before; nothing is possible.
#[test]
fn exact_extents_give_no_possible_races() {
    let program = per_thread(2, 1, |t| {
        if t == 0 {
            vec![write(0, 256, 1)]
        } else {
            vec![read(128, 4, 3)]
        }
    });
    let report = find_races(&program, &Unordered, &Config::default());
    assert_eq!(report.races.len(), 1);
    assert!(report.possible.is_empty());
    assert_eq!(report.stats.approx_accesses, 0);
    assert_eq!(report.stats.possible_thread_pairs, 0);
}

#[test]
fn racy_programs_cost_accesses_not_thread_pairs() {
    // 1024 threads x 100 read-modify-writes of one word: every thread pair races on all four
    // instruction pairs (ld/st, st/st, st/ld): 523,776 thread pairs of 400 accesses.
    let r = Command::access(AccessKind::Read, 0, 4, false, InstId(0));
    let w = Command::access(AccessKind::Write, 0, 4, false, InstId(1));
    let program = uniform(1024, 1, [r, w].repeat(100));
    let report = find_races(&program, &Unordered, &Config::default());
    let accesses = report.stats.accesses;
    assert_eq!(accesses, 1024 * 200);
    let pairs: Vec<(InstId, InstId, bool)> = report
        .races
        .iter()
        .map(|r| {
            (
                r.first.inst.min(r.second.inst),
                r.first.inst.max(r.second.inst),
                r.thread_pairs_at_least,
            )
        })
        .collect();
    assert_eq!(
        pairs,
        vec![(InstId(0), InstId(1), true), (InstId(1), InstId(1), true)],
        "{report:?}"
    );
    for race in &report.races {
        assert!(race.thread_pairs >= u64::from(SATURATION), "{race:?}");
        assert!(race.thread_pairs < 1024 * 1023 / 2, "{race:?}");
    }
    // The first thread pair is still the representative.
    assert_eq!(
        (report.races[0].first.thread, report.races[0].second.thread),
        (ThreadId(0), ThreadId(1))
    );
    // Linear in the accesses (plus the saturated pairs): without saturation this is
    // 523,776 thread pairs x ~400 tests.
    assert!(
        report.stats.race_tests < 20 * accesses,
        "{} tests for {accesses} accesses",
        report.stats.race_tests
    );
}

#[test]
fn racy_threads_with_many_distinct_instructions_still_saturate() {
    // A mutant of the one-word stress input (issue 15): 12 distinct loads of the word, then
    // 100 read-modify-writes. 14 distinct instructions per thread is more than
    // MAX_SKIP_SITES, but far fewer than the square root of the 212 accesses' merge cost
    // bound, so saturation must still apply: every instruction pair that races is
    // reported, the later thread pairs only counted as "at least".
    let mut commands: Vec<Command> = (10..22)
        .map(|i| Command::access(AccessKind::Read, 0, 4, false, InstId(i)))
        .collect();
    let r = Command::access(AccessKind::Read, 0, 4, false, InstId(0));
    let w = Command::access(AccessKind::Write, 0, 4, false, InstId(1));
    commands.extend([r, w].repeat(100));
    let program = uniform(1024, 1, commands);
    let report = find_races(&program, &Unordered, &Config::default());
    let accesses = report.stats.accesses;
    assert_eq!(accesses, 1024 * 212);
    // The write races with every load (13) and with itself.
    assert_eq!(report.races.len(), 14, "{report:?}");
    assert!(report.races.iter().all(|r| r.thread_pairs_at_least));
    assert!(
        report.stats.race_tests < 20 * accesses,
        "{} tests for {accesses} accesses",
        report.stats.race_tests
    );
}

#[test]
fn a_chunk_whose_instruction_pairs_are_all_saturated_skips_its_thread_pairs() {
    // Another mutant of the one-word stress input: a loop body of 100 distinct stores, run
    // 50 times by 256 threads. Each thread pair could race on 5,050 instruction pairs, too
    // many to look up per thread pair; once all are saturated the rest are skipped.
    let body: Vec<Command> = (0..100)
        .map(|i| Command::access(AccessKind::Write, 0, 4, false, InstId(i)))
        .collect();
    let program = uniform(256, 1, body.repeat(50));
    let report = find_races(&program, &Unordered, &Config::default());
    let accesses = report.stats.accesses;
    assert_eq!(report.races.len(), 5050, "{:?}", report.stats);
    assert!(report.races.iter().all(|r| r.thread_pairs_at_least));
    assert!(
        report.stats.race_tests < 200 * accesses,
        "{} tests for {accesses} accesses",
        report.stats.race_tests
    );
}

#[test]
fn many_racing_instruction_pairs_share_the_chunks_records() {
    // The shape of a mutation-run-24 mutant (issue 15): one word written by copies of 100
    // instructions, 100 of each, none ordered, 5,050 instruction pairs; at 64 thread pairs
    // each before saturating, the chunk made 323,200 merges (14 s for 128 such words).
    // They share SATURATION_RECORDS instead, each saturating after one: every pair is
    // still reported, counted as "at least". (90 instructions here: 4,095 pairs, under
    // MAX_RACING_PAIRS_PER_CHUNK.)
    let program = per_thread(9_000, 1, |t| vec![write(0, 4, t % 90)]);
    let report = find_races(&program, &Unordered, &Config::default());
    const { assert!(4095 < MAX_RACING_PAIRS_PER_CHUNK) };
    assert_eq!(report.stats.chunks_stopped, 0);
    assert_eq!(report.races.len(), 4095, "{:?}", report.stats);
    assert!(
        report
            .races
            .iter()
            .all(|r| r.thread_pairs >= 1 && r.thread_pairs_at_least)
    );
    let visited = report.stats.thread_pairs_visited;
    assert!(visited < 100_000, "{visited} thread pairs visited");
    // With details nothing saturates early: 10 copies per instruction, every count exact.
    let program = per_thread(900, 1, |t| vec![write(0, 4, t % 90)]);
    let detail = Config {
        warp_sync: false,
        detail: true,
        max_word_tests: None,
    };
    let report = find_races(&program, &Unordered, &detail);
    assert_eq!(report.races.len(), 4095);
    for r in &report.races {
        let pairs = if r.first.inst == r.second.inst {
            45
        } else {
            100
        };
        assert_eq!((r.thread_pairs, r.thread_pairs_at_least), (pairs, false));
    }
}

#[test]
fn a_row_ends_once_every_class_ahead_is_saturated() {
    // The shape of a mutation-run-20 mutant (issue 15): per word, five writers of one
    // instruction each, then thousands of writers of one more instruction. The five
    // instructions' self pairs can never race (one thread each), so the chunk never
    // saturates as a whole; each later row used to pass over every writer before it and
    // every saturated one after it, one by one (quadratic: the mutant never ended).
    let n = 4000u32;
    let program = per_thread(n + 5, 1, |t| vec![write(0, 4, t.min(5))]);
    let report = find_races(&program, &Unordered, &Config::default());
    // Every pair of distinct instructions races, and instruction 5 with itself.
    assert_eq!(report.races.len(), 15 + 1, "{report:?}");
    let visited = report.stats.thread_pairs_visited;
    // The five singletons' rows visit every thread; the others end at their first
    // thread: far fewer than the 8 million thread pairs.
    assert!(
        visited < 10 * u64::from(n) + 5 * u64::from(n),
        "{visited} thread pairs visited"
    );
}

#[test]
fn the_memory_budget_charges_at_least_an_entry_per_word() {
    // The emulator charges `--max-memory` for this stage's entries before they exist (a
    // 16-byte charge per word let 7 million 128-byte agents ask for 4.5 GB here and abort).
    assert!(std::mem::size_of::<crate::entries::Entry>() as u64 <= weft_program::RACE_ENTRY_BYTES);
    assert_eq!(weft_program::race_entries(2, 4), 2);
    assert_eq!(weft_program::race_entries(16, 128), 32);
    assert_eq!(weft_program::race_entries(17, 128), 33);
    assert_eq!(weft_program::race_entries(0, 0), 0);
}

#[test]
fn a_row_passes_over_the_classes_found_saturated() {
    // The shape of a mutation-run-21 mutant (issue 15): before the thousands of writers of
    // one instruction, 40 writers of another and five of one instruction each. The five
    // singletons' pairs with the 40 never saturate (40 thread pairs each), so the rows of
    // the 40 could not end early: each passed over the thousands one by one.
    let n = 4000u32;
    let program = per_thread(40 + 5 + n, 1, |t| {
        let inst = match t {
            0..40 => 9,
            40..45 => t - 40,
            _ => 5,
        };
        vec![write(0, 4, inst)]
    });
    let report = find_races(&program, &Unordered, &Config::default());
    // Every pair of distinct instructions races, and 5 and 9 with themselves.
    assert_eq!(report.races.len(), 21 + 2, "{report:?}");
    let visited = report.stats.thread_pairs_visited;
    assert!(visited < 3 * u64::from(n), "{visited} thread pairs visited");
}

#[test]
fn saturation_never_hides_an_instruction_pair() {
    // Threads 0..60 race on instruction 0 (one word: 1,770 thread pairs, saturated after
    // 64); thread 50 also writes with instruction 7 at the same word, which only it uses:
    // that pair must still be found, with each of its 59 thread pairs.
    let w = Command::access(AccessKind::Write, 0, 4, false, InstId(0));
    let mut program = uniform(60, 1, vec![w]);
    program.threads[50]
        .commands
        .push(Command::access(AccessKind::Write, 0, 4, false, InstId(7)));
    let report = find_races(&program, &Unordered, &Config::default());
    let with_7: Vec<&Race> = report
        .races
        .iter()
        .filter(|r| r.first.inst == InstId(7) || r.second.inst == InstId(7))
        .collect();
    assert_eq!(with_7.len(), 1, "{report:?}");
    assert_eq!(with_7[0].thread_pairs, 59);
    assert!(!with_7[0].thread_pairs_at_least);
    let only_0 = report
        .races
        .iter()
        .find(|r| r.first.inst == InstId(0) && r.second.inst == InstId(0))
        .expect("instruction 0 races with itself");
    assert!(only_0.thread_pairs_at_least);
}

#[test]
fn same_instruction_write_counts_stop_at_a_cap() {
    // One warp, 200 executions of one store to one word: 496 lane pairs x 200 dynamic
    // instructions = 99,200 exempt pairs, more than the per-word cap.
    let w = Command::access(AccessKind::Write, 0, 4, false, InstId(0));
    let program = uniform(32, 32, vec![w; 200]);
    let report = find_races(&program, &Unordered, &Config::default());
    assert_eq!(report.stats.same_instruction_writes, SAME_INSTRUCTION_CAP);
    assert!(report.stats.same_instruction_writes_at_least);
    // Different executions still race.
    assert_eq!(report.races.len(), 1, "{report:?}");
    // Below the cap the count is exact.
    let program = uniform(32, 32, vec![w; 100]);
    let report = find_races(&program, &Unordered, &Config::default());
    assert_eq!(report.stats.same_instruction_writes, 49_600);
    assert!(!report.stats.same_instruction_writes_at_least);
}

#[test]
fn writes_of_the_same_known_value_are_a_benign_race() {
    // values: id 1 = 0x2a (4 bytes), id 2 = 0x2b, id 3 = 0x2a2a_0000_002a (8 bytes).
    let mut program = per_thread(3, 1, |t| match t {
        0 => vec![write(0, 4, 0).with_value(1)],
        1 => vec![write(0, 4, 1).with_value(1)],
        _ => vec![read(0, 4, 2)],
    });
    program.values = vec![0x2a, 0x2b, 0x2a2a_0000_002a];
    let report = find_races(&program, &Unordered, &Config::default());
    // The two writes: benign. The read against each write: races.
    assert_eq!(report.benign.len(), 1);
    assert_eq!(
        (report.benign[0].first.inst, report.benign[0].second.inst),
        (InstId(0), InstId(1))
    );
    assert_eq!(report.races.len(), 2);
    assert!(
        report
            .races
            .iter()
            .all(|r| r.hazard != Hazard::WriteAfterWrite)
    );

    // Another value, or an unknown one: a race.
    for other in [Some(2), None] {
        let mut p = per_thread(2, 1, |t| {
            let w = write(0, 4, t);
            vec![match (t, other) {
                (0, _) => w.with_value(1),
                (_, Some(id)) => w.with_value(id),
                (_, None) => w,
            }]
        });
        p.values = program.values.clone();
        let report = find_races(&p, &Unordered, &Config::default());
        assert!(report.benign.is_empty());
        assert_eq!(report.races.len(), 1);
    }

    // Overlapping writes of different widths agreeing on the common bytes: benign; an
    // 8-byte write whose upper half differs from a 4-byte write there: a race.
    let mut p = per_thread(3, 1, |t| match t {
        0 => vec![write(0, 8, 0).with_value(3)],
        1 => vec![write(0, 4, 1).with_value(1)],
        _ => vec![write(4, 4, 2).with_value(1)],
    });
    p.values = program.values.clone();
    let report = find_races(&p, &Unordered, &Config::default());
    let insts = |v: &[Race]| -> Vec<(u32, u32)> {
        v.iter()
            .map(|r| (r.first.inst.0, r.second.inst.0))
            .collect()
    };
    assert_eq!(insts(&report.benign), [(0, 1)]);
    assert_eq!(insts(&report.races), [(0, 2)]);
}

/// Explicitly listed orderings (besides program order).
struct Listed(Vec<((u32, u32), (u32, u32))>);

impl HappensBeforeQuery for Listed {
    fn ordered(&self, first: (ThreadId, u32), second: (ThreadId, u32)) -> bool {
        (first.0 == second.0 && first.1 <= second.1)
            || self
                .0
                .contains(&((first.0.0, first.1), (second.0.0, second.1)))
    }
}

/// A generic write read through the async proxy (a tensor-core operand) without a fence is
/// a missing fence, unless an async-proxy load surely overwrote those bytes in between.
#[test]
fn proxy_fence_not_needed_for_bytes_a_load_overwrote() {
    use weft_program::{AccessKind, AsyncCopy, Proxy};
    let t0 = ThreadProgram {
        commands: vec![
            Command::access(AccessKind::Write, 0, 4, false, InstId(1)),
            Command::exit(InstId(2)),
        ],
        end: ThreadEnd::Exited,
        steps: Vec::new(),
    };
    let mk = |load: Option<Command>| {
        let mut p = Program::new(CtaShape::linear(1), 1, vec![t0.clone()]).expect("valid");
        let read = Command::access(AccessKind::Read, 0, 32, false, InstId(3));
        p.asyncs
            .copies
            .push(AsyncCopy::new(ThreadId(0), 1, read, Proxy::Async));
        if let Some(l) = load {
            p.asyncs
                .copies
                .push(AsyncCopy::new(ThreadId(0), 1, l, Proxy::Async));
        }
        p
    };
    // Agents: the read is 1, the load 2. The write happens before both; the load completes
    // before the read starts.
    let hb = Listed(vec![((0, 0), (1, 0)), ((0, 0), (2, 0)), ((2, 0), (1, 0))]);
    let fences = missing_proxy_fences(&mk(None), &hb);
    assert_eq!(fences.len(), 1);
    assert_eq!(
        (fences[0].write.thread, fences[0].copy.thread),
        (ThreadId(0), ThreadId(1))
    );
    let exact = Command::access(AccessKind::Write, 0, 64, false, InstId(4));
    assert!(missing_proxy_fences(&mk(Some(exact)), &hb).is_empty());
    // An upper-bound extent surely covers its first 16 bytes only.
    let approx = Command::approx_access(AccessKind::Write, 0, 64, false, InstId(4));
    assert!(missing_proxy_fences(&mk(Some(approx)), &hb).is_empty());
    let unordered = Command::approx_access(AccessKind::Write, 0, 64, false, InstId(4));
    let late = Listed(vec![((0, 0), (1, 0)), ((0, 0), (2, 0))]);
    // Not ordered before the read: no longer an overwrite.
    assert_eq!(missing_proxy_fences(&mk(Some(unordered)), &late).len(), 1);
    let short = Command::access(AccessKind::Write, 2, 64, false, InstId(4));
    assert_eq!(missing_proxy_fences(&mk(Some(short)), &hb).len(), 1);
}

/// [`Listed`] with exact `before_bound`s (the longest prefix of `other`'s commands ordered
/// before `second`), which `missing_proxy_fences` keeps per issue position.
struct Bounded<'a>(&'a Listed, &'a Program);

impl HappensBeforeQuery for Bounded<'_> {
    fn ordered(&self, first: (ThreadId, u32), second: (ThreadId, u32)) -> bool {
        self.0.ordered(first, second)
    }

    fn before_bound(&self, second: (ThreadId, u32), other: ThreadId) -> Option<u32> {
        let len = self.1.threads.get(other.index())?.commands.len() as u32;
        Some(
            (0..len)
                .take_while(|&i| self.0.ordered((other, i), second))
                .count() as u32,
        )
    }
}

/// Copies issued at different positions of one thread get their own bounds: a write after
/// the earlier copy's issue is a race with it (not reported here), a missing fence for the
/// later copy; thread 1's fenced write is neither.
#[test]
fn proxy_fence_bounds_are_per_issue_position() {
    use weft_program::{AccessKind, AsyncCopy, Proxy};
    let w = |addr, inst| Command::access(AccessKind::Write, addr, 4, false, InstId(inst));
    let t0 = ThreadProgram {
        commands: vec![w(0, 1), w(8, 9), w(0, 5), Command::exit(InstId(6))],
        end: ThreadEnd::Exited,
        steps: Vec::new(),
    };
    let t1 = ThreadProgram {
        commands: vec![w(4, 2), Command::exit(InstId(7))],
        end: ThreadEnd::Exited,
        steps: Vec::new(),
    };
    let mut p = Program::new(CtaShape::linear(2), 1, vec![t0, t1]).expect("valid");
    let read = |inst| Command::access(AccessKind::Read, 0, 8, false, InstId(inst));
    // Agent 2 is issued at thread 0's position 3, agent 3 at its position 1.
    p.asyncs
        .copies
        .push(AsyncCopy::new(ThreadId(0), 3, read(3), Proxy::Async));
    p.asyncs
        .copies
        .push(AsyncCopy::new(ThreadId(0), 1, read(4), Proxy::Async));
    p.asyncs.proxy_fences = vec![Vec::new(), vec![1]];
    let hb = Listed(vec![
        ((0, 0), (2, 0)),
        ((0, 1), (2, 0)),
        ((0, 2), (2, 0)),
        ((0, 0), (3, 0)),
        ((1, 0), (2, 0)),
        ((1, 1), (2, 0)),
        ((1, 0), (3, 0)),
        ((1, 1), (3, 0)),
    ]);
    let plain = missing_proxy_fences(&p, &hb);
    let pairs = |f: &[crate::MissingProxyFence]| -> Vec<(u32, u32, u64)> {
        let mut v: Vec<_> = f
            .iter()
            .map(|x| (x.write.inst.0, x.copy.inst.0, x.pairs))
            .collect();
        v.sort_unstable();
        v
    };
    // Agent 2: both writes of [0, 4) of thread 0; agent 3: only the first (the second is
    // after its issue).
    assert_eq!(pairs(&plain), [(1, 3, 1), (1, 4, 1), (5, 3, 1)]);
    assert_eq!(missing_proxy_fences(&p, &Bounded(&hb, &p)), plain);
}

proptest! {
    /// With exact per-position bounds ([`Bounded`] over a relation in which what happens
    /// before a copy is a prefix of each thread, the same for every copy of one issue
    /// position), `missing_proxy_fences` tests only the writes below a thread's bound whose
    /// own next fence is not: the same findings as testing every pair ([`Listed`], no
    /// bounds). Warps of 1 and 2 lanes, with and without warp steps.
    #[test]
    fn proxy_fence_candidates_match_testing_every_pair(
        warp in 1u32..=2,
        stepped in any::<bool>(),
        threads in prop::collection::vec(
            prop::collection::vec((0u32..4, 0u32..3, any::<bool>()), 1..6),
            2..=4,
        ),
        copies in prop::collection::vec((0usize..4, 0u32..6, 0u32..4, 1u32..3), 1..6),
        cuts in prop::collection::vec(0u32..7, 16),
        links in prop::collection::vec((0usize..4, 0u32..6, 0usize..4, 0u32..6), 0..6),
    ) {
        use weft_program::{AccessKind, AsyncCopy, Proxy};
        let n = threads.len();
        // Per thread: (word, write or fence, 4 or 8 bytes) per step.
        let mut fences = vec![Vec::new(); n];
        let programs: Vec<ThreadProgram> = threads
            .iter()
            .enumerate()
            .map(|(t, steps)| {
                let mut commands = Vec::new();
                for (k, &(word, kind, wide)) in steps.iter().enumerate() {
                    if kind == 0 {
                        fences[t].push(commands.len() as u32);
                        commands.push(Command::access(AccessKind::Read, 64, 4, false, InstId(90)));
                    } else {
                        let len = if wide { 8 } else { 4 };
                        let inst = InstId((t * 10 + k) as u32);
                        commands.push(Command::access(AccessKind::Write, word * 4, len, false, inst));
                    }
                }
                commands.push(Command::exit(InstId(99)));
                let steps = if stepped { (0..commands.len() as u32).collect() } else { Vec::new() };
                ThreadProgram { commands, end: ThreadEnd::Exited, steps }
            })
            .collect();
        let lens: Vec<u32> = programs.iter().map(|p| p.commands.len() as u32).collect();
        let mut p = Program::new(CtaShape::linear(n as u32), warp, programs).expect("valid");
        p.asyncs.proxy_fences = fences;
        // Happens-before: program order, a few thread-to-thread pairs, and per copy the
        // prefix of each thread below its position's cut (the issuer: below the issue).
        let mut pairs = Vec::new();
        for &(a, i, b, j) in &links {
            let (a, b) = (a % n, b % n);
            if a != b {
                pairs.push(((a as u32, i % lens[a]), (b as u32, j % lens[b])));
            }
        }
        let mut positions: Vec<(usize, u32)> = Vec::new();
        for (g, &(issuer, issue, word, words)) in copies.iter().enumerate() {
            let issuer = issuer % n;
            let issue = issue % lens[issuer];
            let read = Command::access(AccessKind::Read, word * 4, words * 4, false, InstId(50 + g as u32));
            p.asyncs.copies.push(AsyncCopy::new(ThreadId(issuer as u32), issue, read, Proxy::Async));
            let k = positions.iter().position(|&q| q == (issuer, issue)).unwrap_or_else(|| {
                positions.push((issuer, issue));
                positions.len() - 1
            });
            for t in 0..n {
                let bound = if t == issuer { issue } else { cuts[(k * 4 + t) % cuts.len()] % (lens[t] + 1) };
                for i in 0..bound {
                    pairs.push(((t as u32, i), ((n + g) as u32, 0)));
                }
            }
        }
        let hb = Listed(pairs);
        let plain = missing_proxy_fences(&p, &hb);
        prop_assert_eq!(missing_proxy_fences(&p, &Bounded(&hb, &p)), plain);
    }
}

#[test]
fn benign_pairs_saturate_only_where_every_write_is_the_same() {
    // A mutant of the one-word stress input: every thread stores the same constant once,
    // then loads the word 100 times. The store/store pair is benign in every thread pair,
    // so it saturates like a race and the thread pairs after saturation are skipped.
    let mut commands = vec![write(0, 4, 0).with_value(1)];
    commands.extend(std::iter::repeat_n(read(0, 4, 1), 100));
    let mut program = uniform(1024, 1, commands.clone());
    program.values = vec![0x2a, 0x2b];
    let report = find_races(&program, &Unordered, &Config::default());
    let accesses = report.stats.accesses;
    assert_eq!(report.benign.len(), 1, "{report:?}");
    assert!(report.benign[0].thread_pairs_at_least);
    assert_eq!(report.races.len(), 1, "{report:?}");
    assert!(report.races[0].thread_pairs_at_least);
    assert!(
        report.stats.race_tests < 20 * accesses,
        "{} tests for {accesses} accesses",
        report.stats.race_tests
    );

    // The same program where thread 900 stores another value with the same instruction:
    // the store/store pair is no longer the same everywhere, so its benign thread pairs
    // never saturate it, and the real race of thread 900's store with the others' must be
    // found (then saturating as a race).
    let mut program = uniform(1024, 1, commands);
    program.values = vec![0x2a, 0x2b];
    program.threads[900].commands[0] = write(0, 4, 0).with_value(2);
    let report = find_races(&program, &Unordered, &Config::default());
    let store_store = report
        .races
        .iter()
        .find(|r| r.first.inst == InstId(0) && r.second.inst == InstId(0))
        .expect("the stores of thread 900 race with every other thread's");
    assert_eq!(store_store.second.thread, ThreadId(900), "{store_store:?}");
    assert!(store_store.thread_pairs >= u64::from(SATURATION));
}

#[test]
fn benign_pairs_of_different_widths_saturate_where_each_instruction_writes_one_value() {
    // Mutation run 40's timeout: every thread stores a word of four equal bytes and one byte
    // of the same value, then reads the word. The byte store and the word store are benign in
    // every thread pair, but they were taken to saturate only where both write the same
    // (address, width, value), so every thread pair was merged (247 s for 256 threads of
    // 109 such stores). Each writes one (address, width, value) in the word: the pair is
    // benign in every thread pair, and saturates.
    let mut commands = vec![write(0, 4, 0).with_value(1), write(0, 1, 1).with_value(2)];
    commands.extend(std::iter::repeat_n(read(0, 4, 2), 20));
    let mut program = uniform(512, 1, commands);
    program.values = vec![0x0303_0303, 0x03];
    let report = find_races(&program, &Unordered, &Config::default());
    let pair = report
        .benign
        .iter()
        .find(|r| {
            r.first.inst.min(r.second.inst) == InstId(0)
                && r.first.inst.max(r.second.inst) == InstId(1)
        })
        .expect("the word store and the byte store are benign");
    assert!(pair.thread_pairs_at_least, "{pair:?}");
    let accesses = report.stats.accesses;
    assert!(
        report.stats.race_tests < 20 * accesses,
        "{} tests for {accesses} accesses",
        report.stats.race_tests
    );
}

/// `H`'s tests and bounds with the sweep's order replaced: `None`, no epochs (the sweep is
/// off); `Some(step)`, the order `index / step` (non-decreasing in program order, unrelated
/// to happens-before).
struct Epochs<'a, H>(&'a H, Option<u32>);

impl<H: HappensBeforeQuery> HappensBeforeQuery for Epochs<'_, H> {
    fn ordered(&self, first: (ThreadId, u32), second: (ThreadId, u32)) -> bool {
        self.0.ordered(first, second)
    }

    fn before_bound(&self, second: (ThreadId, u32), other: ThreadId) -> Option<u32> {
        self.0.before_bound(second, other)
    }

    fn chain_key(&self, c: (ThreadId, u32)) -> u32 {
        self.0.chain_key(c)
    }

    fn ordered_at(&self, first: (ThreadId, u32), second: (ThreadId, u32), key: u32) -> bool {
        self.0.ordered_at(first, second, key)
    }

    fn before_bound_at(&self, second: (ThreadId, u32), key: u32, other: ThreadId) -> Option<u32> {
        self.0.before_bound_at(second, key, other)
    }

    fn epoch(&self, command: (ThreadId, u32), _key: u32) -> Option<u32> {
        self.1.map(|step| command.1 / step)
    }
}

/// A report without its cost: what the sweep must leave unchanged.
fn findings(report: &RaceReport) -> (Vec<Race>, Vec<Race>, Vec<Race>, [u64; 4]) {
    let s = &report.stats;
    (
        report.races.clone(),
        report.benign.clone(),
        report.possible.clone(),
        [
            s.accesses,
            s.naive_pairs,
            s.same_instruction_writes,
            u64::from(s.same_instruction_writes_at_least),
        ],
    )
}

/// One access of a generated phase: kind (0 read, 1 write, 2 atomic), word, byte offset and
/// length within it, instruction, value id (0: none).
type Op = (u8, u32, u32, u32, u32, u16);

fn phase_op() -> impl Strategy<Value = Op> {
    (0u8..3, 0u32..3, 0u32..4, 0u32..4, 0u32..4, 0u16..3).prop_map(|(k, w, off, len, inst, v)| {
        let len = [1, 2, 4, 8][len as usize].min(4 - off).max(1);
        (k, w, off, len, inst, v)
    })
}

/// 3-8 threads (warp size 1 or 2) running the same number of phases separated by CTA
/// barriers, each phase a few accesses to three words: races where two threads meet in a
/// phase, race-free chunks where they never do. With `steps`, each command's step is its
/// index (as [`per_thread`]), else no steps (a run without `--warp-sync`).
fn phased() -> impl Strategy<Value = Program> {
    (3u32..9, 1u32..3, 1usize..5, any::<bool>()).prop_flat_map(|(threads, warp, phases, steps)| {
        proptest::collection::vec(
            proptest::collection::vec(proptest::collection::vec(phase_op(), 0..3), phases),
            threads as usize,
        )
        .prop_map(move |code| {
            let mut program = per_thread(threads, warp, |t| {
                let mut out = Vec::new();
                for (p, ops) in code[t as usize].iter().enumerate() {
                    out.push(sync_all(100 + p as u32));
                    for &(k, w, off, len, inst, v) in ops {
                        let kind =
                            [AccessKind::Read, AccessKind::Write, AccessKind::Atomic][k as usize];
                        let c = Command::access(kind, w * 4 + off, len, false, InstId(inst));
                        out.push(if kind == AccessKind::Write && v != 0 {
                            c.with_value(v)
                        } else {
                            c
                        });
                    }
                }
                out
            });
            if !steps {
                for thread in &mut program.threads {
                    thread.steps.clear();
                }
            }
            program
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    /// The race-free sweep only skips chunks that have nothing to report: with the
    /// barrier-graph's relation, its epochs or an order unrelated to happens-before, the
    /// report is the one the merges alone give.
    #[test]
    fn the_race_free_sweep_changes_no_report(program in phased(), step in 1u32..4) {
        let analysis = barrier_graph::analyze(&program);
        let hb = analysis.happens_before.as_ref().expect("one barrier, all threads");
        for config in [Config::default(), Config { warp_sync: true, detail: false, max_word_tests: None },
                       Config { warp_sync: false, detail: true, max_word_tests: None }] {
            let merged = findings(&find_races(&program, &Epochs(hb, None), &config));
            prop_assert_eq!(&findings(&find_races(&program, hb, &config)), &merged);
            prop_assert_eq!(&findings(&find_races(&program, &Epochs(hb, Some(step)), &config)), &merged);
        }
    }
}

#[test]
fn a_rotation_over_barriers_costs_accesses_not_thread_pairs() {
    // A mutant of samples/sizes/no_period.ptx (issue 15): 128 threads, each visiting word
    // (t + k) % 128 on trip k, a CTA barrier between trips. Race-free, but every thread pair
    // meets on every word: the merges alone made 128 x 127 / 2 merges per word.
    let trips = 256u32;
    let mut program = per_thread(128, 32, |t| {
        (0..trips)
            .flat_map(|k| {
                let addr = (t + k) % 128 * 4;
                [sync_all(0), read(addr, 4, 1), write(addr, 4, 2)]
            })
            .collect()
    });
    // A run without --warp-sync records no warp steps.
    for thread in &mut program.threads {
        thread.steps.clear();
    }
    let analysis = barrier_graph::analyze(&program);
    let hb = analysis.happens_before.as_ref().expect("well-synchronized");
    let report = find_races(&program, hb, &Config::default());
    assert!(
        report.races.is_empty() && report.benign.is_empty(),
        "{report:?}"
    );
    let accesses = report.stats.accesses;
    assert_eq!(accesses, 128 * u64::from(trips) * 2);
    assert!(
        report.stats.race_tests < 2 * accesses,
        "{} tests for {accesses} accesses",
        report.stats.race_tests
    );
}

/// Many plain writes of different values to a few words, lanes of a warp running the same
/// instructions (so the same-instruction rule applies) with values of their own: windows of
/// many slots that differ only in their value, for the grouped tests and the window index.
fn valued() -> impl Strategy<Value = Program> {
    // (kind: 0 read, 1 write, 2 atomic; word; offset; length; instruction), per warp.
    let op = (0u8..3, 0u32..2, 0u32..4, 0u32..3, 0u32..3).prop_map(|(k, w, off, len, inst)| {
        let len = [1, 2, 4][len as usize].min(4 - off).max(1);
        (k, w, off, len, inst)
    });
    (1u32..4, 1usize..3, any::<bool>(), any::<bool>()).prop_flat_map(
        move |(warp, warps, sync, steps)| {
            let threads = warp * warps as u32 + 1;
            (
                proptest::collection::vec(proptest::collection::vec(op.clone(), 1..24), warps + 1),
                proptest::collection::vec(
                    proptest::collection::vec(0u16..48, 24),
                    threads as usize,
                ),
            )
                .prop_map(move |(code, values)| {
                    let mut program = per_thread(threads, warp, |t| {
                        let ops = &code[(t / warp) as usize];
                        let mut out = Vec::new();
                        for (i, &(k, w, off, len, inst)) in ops.iter().enumerate() {
                            if sync && i == ops.len() / 2 {
                                out.push(sync_all(100));
                            }
                            let kind = [AccessKind::Read, AccessKind::Write, AccessKind::Atomic]
                                [k as usize];
                            let c = Command::access(kind, w * 4 + off, len, false, InstId(inst));
                            let v = values[t as usize][i];
                            out.push(if kind == AccessKind::Write && v != 0 {
                                c.with_value(v)
                            } else {
                                c
                            });
                        }
                        if sync && ops.len() == 1 {
                            out.push(sync_all(100));
                        }
                        out
                    });
                    // Ids 1..=40 are known values, interned as the emulator does (distinct
                    // ids, distinct values; below 256, so a value is the same at every
                    // width), 41..=47 symbolic terms.
                    program.values = (1..=47u128).collect();
                    program.symbolic_values = (41..=47).collect();
                    if !steps {
                        for thread in &mut program.threads {
                            thread.steps.clear();
                        }
                    }
                    program
                })
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    /// The window index and the grouped tests of a window change no report: testing every
    /// `b` slot by slot with linear searches, or grouping every window from its second `b`
    /// with every window indexed, gives the report of the default tuning.
    #[test]
    fn grouped_windows_change_no_report(program in valued()) {
        let plain = Tuning {
            window_index_slots: usize::MAX,
            group_min_slots: usize::MAX,
            ..Tuning::default()
        };
        let eager = Tuning { window_index_slots: 0, group_min_slots: 0, ..Tuning::default() };
        tunings_agree(&program, plain, eager)?;
    }
}

/// `got` and `expected` are the same races, except that `got` may count a pair of
/// instructions "at least" where `expected` counts it exactly: a tuning that skips more (the
/// write merges of saturated thread pairs, `Tuning::writes_apart`) leaves thread pairs
/// untested that might race on it, which is what the flag says ([`Race::thread_pairs_at_least`]),
/// even where they do not.
fn same_races(got: &[Race], expected: &[Race]) -> Result<(), TestCaseError> {
    prop_assert_eq!(got.len(), expected.len());
    for (g, e) in got.iter().zip(expected) {
        prop_assert!(
            g.thread_pairs_at_least || !e.thread_pairs_at_least,
            "{g:?} lost `at least` of {e:?}"
        );
        prop_assert!(
            g.details_truncated || !e.details_truncated,
            "{g:?} lost truncation of {e:?}"
        );
        let loose = |r: &Race| Race {
            thread_pairs_at_least: false,
            details_truncated: false,
            ..r.clone()
        };
        prop_assert_eq!(loose(g), loose(e));
    }
    Ok(())
}

/// Under each configuration, the `eager` and the default tuning give `program` the report
/// of the `plain` one (up to [`same_races`]), visiting no more thread pairs.
fn tunings_agree(program: &Program, plain: Tuning, eager: Tuning) -> Result<(), TestCaseError> {
    let analysis = barrier_graph::analyze(program);
    let Some(hb) = analysis.happens_before.as_ref() else {
        return Ok(());
    };
    for config in [
        Config::default(),
        Config {
            warp_sync: true,
            detail: false,
            max_word_tests: None,
        },
        Config {
            warp_sync: false,
            detail: true,
            max_word_tests: None,
        },
    ] {
        let expected = find_races_tuned(program, hb, &config, plain);
        for tuning in [eager, Tuning::default()] {
            let got = find_races_tuned(program, hb, &config, tuning);
            same_races(&got.races, &expected.races)?;
            same_races(&got.benign, &expected.benign)?;
            same_races(&got.possible, &expected.possible)?;
            prop_assert_eq!(findings(&got).3, findings(&expected).3);
            prop_assert!(got.stats.thread_pairs_visited <= expected.stats.thread_pairs_visited);
        }
    }
    Ok(())
}

/// Many threads of a few kinds (each thread runs one of a few codes, some with one more
/// access) over two words, with an optional barrier: chunks whose threads fall into few
/// classes of sites, where rows visit their threads by class and quiet rows are skipped.
fn classed() -> impl Strategy<Value = Program> {
    let op = (0u8..3, 0u32..2, 0u32..4, 0u32..4).prop_map(|(k, w, off, inst)| (k, w, off, inst));
    (
        proptest::collection::vec(proptest::collection::vec(op, 1..5), 1..4),
        16u32..120,
        prop_oneof![Just(1u32), Just(4u32)],
        any::<bool>(),
        proptest::collection::vec((0u32..120, 4u32..8), 0..4),
    )
        .prop_map(|(codes, threads, warp, sync, extra)| {
            per_thread(threads, warp, |t| {
                let code = &codes[(t as usize * 7 / 3) % codes.len()];
                let mut out = Vec::new();
                for (i, &(k, w, off, inst)) in code.iter().enumerate() {
                    if sync && i == code.len() / 2 {
                        out.push(sync_all(100));
                    }
                    let kind =
                        [AccessKind::Read, AccessKind::Write, AccessKind::Atomic][k as usize];
                    out.push(Command::access(kind, w * 4 + off, 1, false, InstId(inst)));
                }
                for &(who, inst) in &extra {
                    if who == t {
                        out.push(write(0, 4, inst));
                    }
                }
                out
            })
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Visiting a row's threads by class and passing over quiet rows change no report:
    /// the same as visiting every thread of every row.
    #[test]
    fn rows_by_class_change_no_report(program in classed()) {
        let plain = Tuning {
            row_classes_factor: usize::MAX,
            quiet_rows: false,
            ..Tuning::default()
        };
        let eager = Tuning { row_classes_factor: 0, ..Tuning::default() };
        tunings_agree(&program, plain, eager)?;
    }

    /// Skipping the merge of two threads' writes once those alone are saturated changes no
    /// report: the same as merging them.
    #[test]
    fn saturated_writes_apart_change_no_report(program in classed()) {
        let plain = Tuning { writes_apart: false, ..Tuning::default() };
        tunings_agree(&program, plain, Tuning::default())?;
    }

    /// Remembering the class pairs found saturated, and leaving them out of later rows,
    /// changes no report: the same as checking their sites again in every row.
    #[test]
    fn remembered_class_pairs_change_no_report(program in classed()) {
        let plain = Tuning { class_pairs: false, ..Tuning::default() };
        let eager = Tuning { row_classes_factor: 0, ..Tuning::default() };
        tunings_agree(&program, plain, eager)?;
    }

    /// Hot from the first race on, a chunk loses no instruction pair: counts only become
    /// lower bounds, and say so ([`loosely_same`]).
    #[test]
    fn hot_chunks_lose_no_instruction_pair(program in classed()) {
        let analysis = barrier_graph::analyze(&program);
        let Some(hb) = analysis.happens_before.as_ref() else {
            return Ok(());
        };
        let plain = Tuning { hot_records: u64::MAX, ..Tuning::default() };
        let hot = Tuning { hot_records: 0, ..Tuning::default() };
        for config in [
            Config::default(),
            Config { warp_sync: true, ..Config::default() },
            Config { detail: true, ..Config::default() },
        ] {
            let expected = find_races_tuned(&program, hb, &config, plain);
            let got = find_races_tuned(&program, hb, &config, hot);
            loosely_same(&got.races, &expected.races)?;
            loosely_same(&got.benign, &expected.benign)?;
            loosely_same(&got.possible, &expected.possible)?;
        }
    }
}

#[test]
fn racing_agents_saturate_in_every_chunk_they_span() {
    use weft_program::{AsyncCopy, Proxy};
    // Two threads each issue six 16-byte copies per trip for 200 trips into their own 16
    // bytes, none waited for: 1,200 agents racing on four chunks per thread. Agents had no
    // sites (never skipped), and a chunk after the first that the copies span reports
    // nothing (a pair is reported in the chunk of the first byte both access), so it never
    // saturated: every pair of agents was merged there (1.8·10⁸ tests for 100 trips of 128
    // threads, 24 s).
    let mut program = per_thread(2, 1, |_| Vec::new());
    for t in 0..2u32 {
        for trip in 0..200u32 {
            for inst in 0..6u32 {
                let write = Command::access(AccessKind::Write, t * 16, 16, false, InstId(inst));
                program.asyncs.copies.push(AsyncCopy::new(
                    ThreadId(t),
                    trip,
                    write,
                    Proxy::Generic,
                ));
            }
        }
    }
    let report = find_races(&program, &Unordered, &Config::default());
    let accesses = report.stats.accesses;
    assert_eq!(accesses, 2400);
    // Every pair of the six instructions races, each in at least 64 agent pairs.
    assert_eq!(report.races.len(), 21, "{report:?}");
    assert!(
        report
            .races
            .iter()
            .all(|r| r.thread_pairs_at_least && r.thread_pairs >= u64::from(SATURATION)),
        "{report:?}"
    );
    assert!(
        report.stats.race_tests < 1000 * accesses,
        "{} tests for {accesses} accesses",
        report.stats.race_tests
    );
}

/// Threads and agents with accesses of up to 40 bytes at any offset, some far apart (the
/// sparse collection), written values, an optional barrier: chunks that repeat the one
/// before them (every byte of the same accesses) next to partial and boundary chunks.
fn wide() -> impl Strategy<Value = Program> {
    // (kind, address, length, instruction, value id, far)
    let op = (0u8..3, 0u32..48, 0u32..41, 0u32..5, 0u16..3, any::<bool>());
    (
        proptest::collection::vec(proptest::collection::vec(op.clone(), 1..6), 2..7),
        prop_oneof![Just(1u32), Just(4u32)],
        any::<bool>(),
        proptest::collection::vec((0u32..6, op), 0..5),
    )
        .prop_map(|(codes, warp, sync, agents)| {
            let place = |addr: u32, far: bool| if far { addr + (1 << 20) } else { addr };
            let access = |(k, addr, len, inst, v, far): (u8, u32, u32, u32, u16, bool)| {
                let kind = [AccessKind::Read, AccessKind::Write, AccessKind::Atomic][k as usize];
                let c = Command::access(kind, place(addr, far && k == 0), len, false, InstId(inst));
                if kind == AccessKind::Write && v != 0 {
                    c.with_value(v)
                } else {
                    c
                }
            };
            let threads = codes.len() as u32;
            let mut program = per_thread(threads, warp, |t| {
                let code = &codes[t as usize];
                let mut out = Vec::new();
                for (i, &op) in code.iter().enumerate() {
                    if sync && i == code.len() / 2 {
                        out.push(sync_all(100));
                    }
                    out.push(access(op));
                }
                if sync && code.len() == 1 {
                    out.push(sync_all(100));
                }
                out
            });
            for (t, (k, addr, len, inst, v, far)) in agents {
                let write = access((k.max(1), addr, len, inst + 5, v, far));
                program.asyncs.copies.push(weft_program::AsyncCopy::new(
                    ThreadId(t % threads),
                    0,
                    write,
                    weft_program::Proxy::Generic,
                ));
            }
            program.values = vec![0x2a, 0x2a2a_2a2a];
            program
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Passing over the chunks that repeat the one before changes no report and no count
    /// but the tests made: the same as checking every chunk.
    #[test]
    fn repeated_chunks_change_no_report(program in wide()) {
        let plain = Tuning { repeats: false, ..Tuning::default() };
        tunings_agree(&program, plain, Tuning::default())?;
        if let Some(hb) = barrier_graph::analyze(&program).happens_before.as_ref() {
            let config = Config::default();
            let every = find_races_tuned(&program, hb, &config, plain);
            let runs = find_races_tuned(&program, hb, &config, Tuning::default());
            prop_assert_eq!(runs.stats.shared_addresses, every.stats.shared_addresses);
        }
    }
}

#[test]
fn a_wide_access_is_checked_once_per_run_of_chunks() {
    // Two threads write the same 4 KiB (1,024 chunks) unordered, and a third reads 2 bytes
    // in its middle: the chunks are runs [0, 512), 512, [513, 1024).
    let program = per_thread(3, 1, |t| match t {
        0 => vec![write(0, 4096, 0)],
        1 => vec![write(0, 4096, 1)],
        _ => vec![read(2049, 2, 2)],
    });
    let every = find_races_tuned(
        &program,
        &Unordered,
        &Config::default(),
        Tuning {
            repeats: false,
            ..Tuning::default()
        },
    );
    let runs = find_races(&program, &Unordered, &Config::default());
    assert_eq!(runs.races, every.races);
    assert_eq!(runs.races.len(), 3);
    assert_eq!(runs.stats.shared_addresses, 1024);
    assert_eq!(runs.stats.naive_pairs, every.stats.naive_pairs);
    // One pair in each of the two long runs' first chunk, three in chunk 512; checking
    // every chunk visits 1,023 + 3.
    assert_eq!(runs.stats.thread_pairs_visited, 1 + 3 + 1);
    assert_eq!(every.stats.thread_pairs_visited, 1023 + 3);
}

/// Threads with two plain accesses around a barrier, and copies (`cp.async`) issued
/// between their commands, some completed by a wait of their issuer (every copy it has
/// outstanding, as `cp.async.wait_all`): chains of copies ordered by their issuer's waits,
/// and copies in flight together. Events are issued round robin over the threads, which
/// numbers the copies and gives each wait its count of copies issued.
fn chained() -> impl Strategy<Value = Program> {
    let event = prop_oneof![
        3 => (0u32..3, 0u32..3, any::<bool>()).prop_map(Some),
        1 => Just(None),
    ];
    (
        proptest::collection::vec(
            (
                (0u32..3, any::<bool>(), 0u32..3, any::<bool>()),
                proptest::collection::vec((0u32..2, event), 0..10),
            ),
            2..5,
        ),
        any::<bool>(),
    )
        .prop_map(|(threads, sync)| {
            let access = |word: u32, write: bool, inst: u32| {
                let kind = if write {
                    AccessKind::Write
                } else {
                    AccessKind::Read
                };
                Command::access(kind, word * 4, 4, false, InstId(inst))
            };
            let n = threads.len() as u32;
            let mut program = per_thread(n, 1, |t| {
                let ((w0, k0, w1, k1), _) = threads[t as usize];
                let mut out = vec![access(w0, k0, 1)];
                if sync {
                    out.push(sync_all(100));
                }
                out.push(access(w1, k1, 2));
                out
            });
            let len = if sync { 3 } else { 2 };
            let mut pos = vec![0u32; threads.len()];
            let mut outstanding: Vec<Vec<usize>> = vec![Vec::new(); threads.len()];
            let longest = threads.iter().map(|(_, e)| e.len()).max().unwrap_or(0);
            for k in 0..longest {
                for (t, (_, events)) in threads.iter().enumerate() {
                    let Some(&(step, event)) = events.get(k) else {
                        continue;
                    };
                    pos[t] = (pos[t] + step).min(len);
                    match event {
                        Some((word, inst, write)) => {
                            outstanding[t].push(program.asyncs.copies.len());
                            program.asyncs.copies.push(weft_program::AsyncCopy::new(
                                ThreadId(t as u32),
                                pos[t],
                                access(word, write, 10 + inst),
                                weft_program::Proxy::Generic,
                            ));
                        }
                        None => {
                            let seq = program.asyncs.copies.len() as u32;
                            for g in outstanding[t].drain(..) {
                                program.asyncs.copies[g].complete_at(pos[t], seq);
                            }
                        }
                    }
                }
            }
            program
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1000, ..ProptestConfig::default() })]

    /// Passing over the copies of an issuer that its waits order after a copy changes no
    /// report: the same as merging every pair.
    #[test]
    fn copy_chains_change_no_report(program in chained()) {
        let plain = Tuning { copy_chains: false, ..Tuning::default() };
        tunings_agree(&program, plain, Tuning::default())?;
    }
}

#[test]
fn a_chain_of_waited_copies_costs_its_copies_not_their_pairs() {
    // The shape of a mutation-run-27 mutant (issue 15): per word, three copies in flight
    // together (they race), then thousands each waited for before the next is issued.
    // Every pair of the chain is ordered; it was merged pair by pair (1.5·10⁹ pairs per
    // word for 55,000 copies: the run never ended).
    let n = 3000u32;
    let mut program = per_thread(1, 1, |_| Vec::new());
    program.threads[0].commands = vec![sync_all(100)];
    for g in 0..3 + n {
        let write = Command::access(AccessKind::Write, 0, 4, false, InstId(g.min(3)));
        let mut copy =
            weft_program::AsyncCopy::new(ThreadId(0), 0, write, weft_program::Proxy::Generic);
        if g >= 2 {
            // Waited for after its issue, before the next copy's.
            copy.complete_at(0, g + 1);
        }
        program.asyncs.copies.push(copy);
    }
    let analysis = barrier_graph::analyze(&program);
    let hb = analysis.happens_before.as_ref().expect("well synchronized");
    let report = find_races(&program, hb, &Config::default());
    // Copies 0, 1 and 2 race pairwise; copies 0 and 1 with every later copy too (never
    // waited for).
    assert!(!report.races.is_empty());
    let visited = report.stats.thread_pairs_visited;
    assert!(
        visited < 10 * u64::from(n),
        "{visited} thread pairs visited"
    );
}

#[test]
fn merges_after_an_instruction_pair_saturates_record_nothing_for_it() {
    // The shape of a mutation-run-27 mutant of stencil_1d (issue 15): every thread stores
    // to one word with 20 instructions, then loads it after a barrier. The load never races
    // (ordered), so the word never saturates as a whole and every thread pair is merged;
    // each merge recorded its 400 races into 210 sets of thread pairs (cubic in the stores:
    // 100 stores over 128 threads ran past 30 s). Once an instruction pair is saturated a
    // merge keeps its representative and marks its count "at least", recording nothing.
    let n = 64u32;
    let program = per_thread(n, 1, |_| {
        let mut code: Vec<Command> = (0..20).map(|i| write(0, 4, i)).collect();
        code.push(sync_all(100));
        code.push(read(0, 4, 50));
        code
    });
    let analysis = barrier_graph::analyze(&program);
    let hb = analysis.happens_before.as_ref().expect("well synchronized");
    let report = find_races(&program, hb, &Config::default());
    assert_eq!(report.races.len(), 210, "{:?}", report.stats);
    let all = u64::from(n * (n - 1) / 2);
    for r in &report.races {
        assert!(r.thread_pairs_at_least && r.thread_pairs < all, "{r:?}");
        assert_eq!(
            (r.first.thread, r.second.thread),
            (ThreadId(0), ThreadId(1))
        );
    }
    // With details every thread pair is recorded.
    let detail = Config {
        warp_sync: false,
        detail: true,
        max_word_tests: None,
    };
    let exact = find_races(&program, hb, &detail);
    assert!(
        exact
            .races
            .iter()
            .all(|r| r.thread_pairs == all && !r.thread_pairs_at_least)
    );
}

#[test]
fn a_word_stops_after_its_racing_instruction_pair_budget() {
    // Three threads each store to word 0 with the same 100 instructions: the first thread
    // pair already races on all 5,050 instruction pairs, more than
    // MAX_RACING_PAIRS_PER_CHUNK, so the word's search stops there.
    let program = per_thread(3, 1, |_| (0..100).map(|i| write(0, 4, i)).collect());
    let report = find_races(&program, &Unordered, &Config::default());
    const { assert!(MAX_RACING_PAIRS_PER_CHUNK < 5050) };
    assert_eq!(report.stats.chunks_stopped, 1);
    assert_eq!(report.races.len(), 5050);
    assert!(report.races.iter().all(|r| r.thread_pairs_at_least));
    // Only threads 0 and 1 were tested.
    assert!(
        report.races.iter().all(|r| r.thread_pairs == 1),
        "{:?}",
        report.races[0]
    );
    assert_eq!(report.stats.thread_pairs_visited, 1);

    // 16-byte stores: four words of the same accesses, checked once, all four stopped.
    let program = per_thread(3, 1, |_| (0..100).map(|i| write(0, 16, i)).collect());
    let report = find_races(&program, &Unordered, &Config::default());
    assert_eq!(report.stats.chunks_stopped, 4);
    assert_eq!(report.races.len(), 5050);

    // Under the budget nothing stops: 60 instructions, 1,830 pairs, each in 3 thread pairs.
    let program = per_thread(3, 1, |_| (0..60).map(|i| write(0, 4, i)).collect());
    let report = find_races(&program, &Unordered, &Config::default());
    assert_eq!(report.stats.chunks_stopped, 0);
    assert_eq!(report.races.len(), 1830);
}

#[test]
fn benign_pairs_do_not_spend_the_racing_pair_budget() {
    // The same 100 stores, all of one known value: benign pairs only, never a stop.
    let mut program = per_thread(3, 1, |_| {
        (0..100).map(|i| write(0, 4, i).with_value(1)).collect()
    });
    program.values = vec![0x2a];
    let report = find_races(&program, &Unordered, &Config::default());
    assert_eq!(report.stats.chunks_stopped, 0);
    assert!(report.races.is_empty());
    assert_eq!(report.benign.len(), 5050);
}

#[test]
fn benign_pairs_are_capped_per_word_and_real_races_still_found() {
    // 130 stores of one value (8,515 benign pairs, more than the cap) in three threads;
    // thread 2 also reads the word: real races with every store of the others.
    let mut program = per_thread(3, 1, |t| {
        let mut c: Vec<Command> = (0..130).map(|i| write(0, 4, i).with_value(1)).collect();
        if t == 2 {
            c.push(read(0, 4, 200));
        }
        c
    });
    program.values = vec![0x2a];
    let report = find_races(&program, &Unordered, &Config::default());
    assert_eq!(report.benign.len(), crate::MAX_BENIGN_PAIRS_PER_CHUNK);
    assert_eq!(report.stats.benign_words_capped, 1);
    // The read races with each of the 130 store instructions.
    assert_eq!(report.races.len(), 130);
    assert_eq!(report.stats.chunks_stopped, 0);
    // Under the cap nothing is dropped: 100 stores make 5,050 pairs (the test above).
    let mut small = per_thread(3, 1, |_| {
        (0..100).map(|i| write(0, 4, i).with_value(1)).collect()
    });
    small.values = vec![0x2a];
    let report = find_races(&small, &Unordered, &Config::default());
    assert_eq!(report.benign.len(), 5050);
    assert_eq!(report.stats.benign_words_capped, 0);
}

/// Each thread's first command happens before every other command of the other threads (a
/// barrier after it); nothing else is ordered.
struct FirstBeforeRest;

impl HappensBeforeQuery for FirstBeforeRest {
    fn ordered(&self, a: (ThreadId, u32), b: (ThreadId, u32)) -> bool {
        a.1 == 0 && b.1 > 0
    }
}

/// `got` reports every instruction pair `expected` does, in the same class, with the same
/// count unless `got` says "at least" (then no more than `expected`'s), and "at least"
/// wherever `expected` does: what a hot chunk may lose ([`crate::HOT_RECORDS`]).
fn loosely_same(got: &[Race], expected: &[Race]) -> Result<(), TestCaseError> {
    // (The hazard is the representative's, which a skipped thread pair may have lowered.)
    let by_pair = |races: &[Race]| -> BTreeMap<(InstId, InstId), Race> {
        races
            .iter()
            .map(|r| {
                let (i, j) = (
                    r.first.inst.min(r.second.inst),
                    r.first.inst.max(r.second.inst),
                );
                ((i, j), r.clone())
            })
            .collect()
    };
    let (g, e) = (by_pair(got), by_pair(expected));
    prop_assert_eq!(g.keys().collect::<Vec<_>>(), e.keys().collect::<Vec<_>>());
    for (k, gr) in &g {
        let er = &e[k];
        prop_assert!(
            gr.thread_pairs_at_least || !er.thread_pairs_at_least,
            "{gr:?} {er:?}"
        );
        if gr.thread_pairs_at_least {
            prop_assert!(gr.thread_pairs <= er.thread_pairs, "{gr:?} {er:?}");
        } else {
            prop_assert_eq!(gr.thread_pairs, er.thread_pairs, "{:?} {:?}", gr, er);
        }
    }
    Ok(())
}

#[test]
fn a_hot_chunk_passes_over_thread_pairs_ordered_on_every_open_instruction_pair() {
    // Every thread stores one value, then (after a barrier) another with 30 instructions: the
    // 30 are benign pairs that saturate at once, but each pairs with the first store, never
    // found racing (ordered), so no thread pair saturates and each is merged, recording 900
    // benign races (3·10⁸ for 100 instructions and 256 threads: 245 s). Once hot, a thread
    // pair whose only unsaturated pairs are ordered in it is passed over.
    let mut commands = vec![write(0, 4, 0).with_value(1)];
    commands.extend((1..=30).map(|i| write(0, 4, i).with_value(2)));
    let mut program = uniform(64, 1, commands);
    program.values = vec![0xa, 0xb];
    let tuned = |hot_records| {
        find_races_tuned(
            &program,
            &FirstBeforeRest,
            &Config::default(),
            Tuning {
                hot_records,
                ..Tuning::default()
            },
        )
    };
    let (plain, hot) = (tuned(u64::MAX), tuned(0));
    assert!(plain.races.is_empty() && hot.races.is_empty(), "{hot:?}");
    // The 30 instructions' 465 pairs (each with itself too: every thread is its own warp),
    // and the first store with itself.
    assert_eq!(plain.benign.len(), 466, "{:?}", plain.stats);
    loosely_same(&hot.benign, &plain.benign).expect("the same benign pairs");
    assert!(hot.benign.iter().all(|r| r.thread_pairs_at_least));
    // Plain: every one of the 2,016 thread pairs merged; hot: the first few.
    assert!(
        hot.stats.race_tests * 20 < plain.stats.race_tests,
        "{:?} vs {:?}",
        hot.stats,
        plain.stats
    );
}

/// Commands of different threads are ordered exactly when the first has the lower index: a
/// barrier between every two commands of each thread.
struct Trips;

impl HappensBeforeQuery for Trips {
    fn ordered(&self, a: (ThreadId, u32), b: (ThreadId, u32)) -> bool {
        a.1 < b.1
    }
}

#[test]
fn a_word_over_its_test_budget_stops_and_says_so() {
    // Every thread stores the trip number to one word in each of 100 trips, a barrier
    // between trips: the stores of a trip are a benign pair (one value), but the values
    // differ from trip to trip, so the pair never saturates and every thread pair is merged.
    let commands: Vec<Command> = (0..100u16)
        .map(|k| write(0, 4, 0).with_value(k + 1))
        .collect();
    let mut program = uniform(128, 1, commands);
    program.values = (0..100).map(|k| 0x1000 + k).collect();
    let full = find_races(&program, &Trips, &Config::default());
    assert!(full.races.is_empty(), "{full:?}");
    assert_eq!(full.benign.len(), 1, "{full:?}");
    assert_eq!(full.stats.words_over_budget, 0);
    assert!(full.stats.race_tests > 100_000, "{:?}", full.stats);
    let budget = Config {
        max_word_tests: Some(10_000),
        ..Config::default()
    };
    let cut = find_races(&program, &Trips, &budget);
    assert_eq!(cut.stats.words_over_budget, 1, "{:?}", cut.stats);
    // It stops at the first thread pair past the budget: one merge (two lists of 100) over.
    assert!(cut.stats.race_tests < 10_000 + 1_000, "{:?}", cut.stats);
    assert!(cut.races.is_empty(), "{cut:?}");
    assert_eq!(cut.benign.len(), 1, "{cut:?}");
    assert!(cut.benign[0].thread_pairs_at_least, "{cut:?}");
}

/// Threads of the CTA running `code(t)`, with no warp steps (the lane shifts apply only
/// then), warps of `warp_size`.
fn unstepped(threads: u32, warp_size: u32, code: impl Fn(u32) -> Vec<Command>) -> Program {
    Program::new(
        CtaShape::linear(threads),
        warp_size,
        (0..threads)
            .map(|t| ThreadProgram {
                commands: code(t),
                end: ThreadEnd::Exited,
                steps: Vec::new(),
            })
            .collect(),
    )
    .expect("a valid program")
}

/// The report without its time.
fn timeless(mut report: RaceReport) -> RaceReport {
    report.stats.seconds = 0.0;
    report
}

/// Warps whose lanes make their warp's accesses at `base + 4·lane` (a lane-shifted word per
/// lane), in phases between barriers every thread takes; one lane of a warp may be odd (an
/// access moved across a barrier, a different address, an extra access), and lanes may write
/// values of their own: chunks that are the chunk before on the next lanes, next to chunks
/// that only look like it.
fn laned() -> impl Strategy<Value = Program> {
    // (kind, block, byte offset, length, instruction, phase)
    let op = (0u8..3, 0u32..3, 0u32..4, 1u32..5, 0u32..4, 0u32..3);
    let warp = (
        proptest::collection::vec(op, 1..5),
        // The odd lane (4: none) and what is odd about it.
        (0u32..5, 0u8..3),
        any::<bool>(),
    );
    (proptest::collection::vec(warp, 1..4), 1u32..3).prop_map(|(warps, syncs)| {
        let ws = 4;
        let threads = ws * warps.len() as u32;
        let mut program = unstepped(threads, ws, |t| {
            let (ops, (odd, how), valued) = &warps[(t / ws) as usize];
            let lane = t % ws;
            let odd = *odd == lane;
            let mut out = Vec::new();
            for phase in 0..=syncs {
                for (k, &(kind, block, off, len, inst, p)) in ops.iter().enumerate() {
                    // The odd lane's first access moves to the next phase.
                    let p = if odd && *how == 0 && k == 0 { p + 1 } else { p };
                    if p.min(syncs) != phase {
                        continue;
                    }
                    let addr = 64 * block + 4 * lane + off + if odd && *how == 1 { 4 } else { 0 };
                    let kind =
                        [AccessKind::Read, AccessKind::Write, AccessKind::Atomic][kind as usize];
                    let c = Command::access(kind, addr, len, false, InstId(inst));
                    out.push(if kind == AccessKind::Write && *valued {
                        c.with_value((lane % 2 + 1) as u16)
                    } else {
                        c
                    });
                }
                if odd && *how == 2 && phase == 0 {
                    out.push(write(64 + 4 * lane, 4, 9));
                }
                if phase < syncs {
                    out.push(sync_all(100 + phase));
                }
            }
            out
        });
        program.values = vec![0x2a, 0x2b];
        program
    })
}

/// Whether `program`'s race report, counts included, is the same with the `plain` tuning as
/// with the default one, under the default configuration, `detail`, and a budget of
/// `word_tests` tests per word.
fn same_report_as(
    program: &Program,
    plain: Tuning,
    word_tests: u64,
) -> Result<(), proptest::test_runner::TestCaseError> {
    let analysis = barrier_graph::analyze(program);
    let Some(hb) = analysis.happens_before.as_ref() else {
        return Ok(());
    };
    for config in [
        Config::default(),
        Config {
            detail: true,
            ..Config::default()
        },
        Config {
            max_word_tests: Some(word_tests),
            ..Config::default()
        },
    ] {
        let expected = timeless(find_races_tuned(program, hb, &config, plain));
        let got = timeless(find_races_tuned(program, hb, &config, Tuning::default()));
        prop_assert_eq!(got, expected);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Passing over the chunks that are the chunk before on the next lanes changes nothing
    /// in the report, its counts included: each adds what the check of the chunk it repeats
    /// added.
    #[test]
    fn lane_shifts_change_no_report(program in laned()) {
        same_report_as(&program, Tuning { lane_shifts: false, ..Tuning::default() }, 3)?;
    }
}

/// Warps whose lanes make their warp's accesses (1 to 9 bytes, some over several words)
/// at `base + lane·d`, `d` a multiple of 4 or -4, in phases between barriers; the lanes of a
/// warp from one on may be moved further, and warps start at words of their own: threads
/// followed by lanes that are them moved ([`shift::Lanes::followers`]), by distances that
/// change within a warp, next to chunks that are not lane shifts.
fn followed() -> impl Strategy<Value = Program> {
    // (kind, block, byte offset, length, instruction, phase)
    let op = (0u8..3, 0u32..3, 0u32..4, 1u32..10, 0u32..4, 0u32..3);
    let warp = (
        proptest::collection::vec(op, 1..5),
        prop::sample::select(vec![0u32, 4, 8, 12, 4u32.wrapping_neg()]),
        // The lane from which the distance grows (4: none), and by how many words.
        (0u32..5, 1u32..3),
        // The words the warp's accesses are moved by (warps meet in some words).
        0u32..6,
    );
    (proptest::collection::vec(warp, 1..4), 1u32..3).prop_map(|(warps, syncs)| {
        let ws = 4;
        let threads = ws * warps.len() as u32;
        unstepped(threads, ws, |t| {
            let (ops, d, (from, more), words) = &warps[(t / ws) as usize];
            let lane = t % ws;
            let moved = lane.wrapping_mul(*d).wrapping_add(if lane >= *from {
                4 * more * (lane - from + 1)
            } else {
                0
            });
            let mut out = Vec::new();
            for phase in 0..=syncs {
                for &(kind, block, off, len, inst, p) in ops {
                    if p.min(syncs) != phase {
                        continue;
                    }
                    let addr = (64 + 64 * block + 4 * words + off).wrapping_add(moved);
                    let kind =
                        [AccessKind::Read, AccessKind::Write, AccessKind::Atomic][kind as usize];
                    out.push(Command::access(kind, addr, len, false, InstId(inst)));
                }
                if phase < syncs {
                    out.push(sync_all(100 + phase));
                }
            }
            out
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    /// Reading the accesses of a thread's followers from its commands collects what reading
    /// their own does: the same chunks, entries, runs and chunks not collected.
    #[test]
    fn followers_collect_as_their_commands(program in followed()) {
        let analysis = barrier_graph::analyze(&program);
        let Some(hb) = analysis.happens_before.as_ref() else {
            return Ok(());
        };
        let lanes = shift::Lanes::of(&program, hb, true);
        for repeats in [true, false] {
            let own = collect_entries(&program, hb, repeats, false, &lanes);
            let moved = collect_entries(&program, hb, repeats, true, &lanes);
            prop_assert_eq!(moved, own);
        }
        let config = Config::default();
        let own = Tuning { followers: false, ..Tuning::default() };
        let expected = timeless(find_races_tuned(&program, hb, &config, own));
        let got = timeless(find_races_tuned(&program, hb, &config, Tuning::default()));
        prop_assert_eq!(got, expected);
    }
}

/// `H`'s answers, counting the bounds and tests asked.
struct Counting<'a, H>(&'a H, std::sync::atomic::AtomicU64);

impl<H: HappensBeforeQuery> Counting<'_, H> {
    fn count(&self) {
        self.1.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    }
}

impl<H: HappensBeforeQuery> HappensBeforeQuery for Counting<'_, H> {
    fn ordered(&self, first: (ThreadId, u32), second: (ThreadId, u32)) -> bool {
        self.count();
        self.0.ordered(first, second)
    }

    fn before_bound(&self, second: (ThreadId, u32), other: ThreadId) -> Option<u32> {
        self.count();
        self.0.before_bound(second, other)
    }

    fn chain_key(&self, c: (ThreadId, u32)) -> u32 {
        self.0.chain_key(c)
    }

    fn chain_keys(&self, thread: ThreadId) -> Option<&[u32]> {
        self.0.chain_keys(thread)
    }

    fn lanes_agree(&self, key: u32, warp: u32) -> bool {
        self.0.lanes_agree(key, warp)
    }

    fn ordered_at(&self, first: (ThreadId, u32), second: (ThreadId, u32), key: u32) -> bool {
        self.count();
        self.0.ordered_at(first, second, key)
    }

    fn before_bound_at(&self, second: (ThreadId, u32), key: u32, other: ThreadId) -> Option<u32> {
        self.count();
        self.0.before_bound_at(second, key, other)
    }

    fn epoch(&self, command: (ThreadId, u32), key: u32) -> Option<u32> {
        self.0.epoch(command, key)
    }
}

#[test]
fn a_warp_copy_pipeline_is_checked_once_per_warp() {
    // CudaDMA's shape: a producer warp writes a word per lane and trip, a consumer warp
    // reads it, barriers between (each trip's words: 4 lanes × 2 blocks). The words of one
    // block are each the one before on the next lanes: one in four is checked.
    let trips = 6u32;
    let program = unstepped(8, 4, |t| {
        let lane = t % 4;
        let mut out = Vec::new();
        for k in 0..trips {
            let buffer = 32 * (k % 2);
            if t < 4 {
                out.push(write(buffer + 4 * lane, 4, 0).with_value(1 + (lane % 2) as u16));
                out.push(write(buffer + 16 + 4 * lane, 4, 1));
            }
            out.push(sync_all(2));
            if t >= 4 {
                out.push(read(buffer + 4 * lane, 4, 3));
                out.push(read(buffer + 16 + 4 * lane, 4, 4));
            }
            out.push(sync_all(5));
        }
        out
    });
    let mut program = program;
    program.values = vec![0x2a, 0x2b];
    let plain = Tuning {
        lane_shifts: false,
        ..Tuning::default()
    };
    let (got, all, some) = report_and_queries(&program, plain);
    assert!(got.races.is_empty(), "{got:?}");
    assert!(all > 0 && some * 4 <= all, "{some} queries of {all}");
}

/// `program`'s race report with the default tuning, which must be its report with `plain`,
/// and the happens-before queries each made: (report, queries with `plain`, queries with
/// the default tuning).
fn report_and_queries(program: &Program, plain: Tuning) -> (RaceReport, u64, u64) {
    let analysis = barrier_graph::analyze(program);
    let hb = analysis.happens_before.as_ref().expect("well synchronized");
    let config = Config::default();
    let every = Counting(hb, 0.into());
    let expected = timeless(find_races_tuned(program, &every, &config, plain));
    let tuned = Counting(hb, 0.into());
    let got = timeless(find_races_tuned(
        program,
        &tuned,
        &config,
        Tuning::default(),
    ));
    assert_eq!(got, expected);
    (got, every.1.into_inner(), tuned.1.into_inner())
}

/// Warps whose lanes all make the same accesses (a warp matrix store: every lane writes the
/// warp's fragment), some at an address of their own lane, in phases between barriers;
/// one lane of a warp may be odd (an access moved across a barrier, an extra access to
/// another word before each barrier, a value of its own, an access less, an mbarrier arrival that orders its
/// accesses alone before another warp's), and
/// the writes may carry values: chunks of twin lanes, next to lanes that only look like
/// twins, with races between lanes of one warp and across warps.
fn twinned() -> impl Strategy<Value = Program> {
    // (kind, word, byte offset, length, instruction, phase, at the lane's own word)
    let op = (
        0u8..3,
        0u32..3,
        0u32..4,
        1u32..6,
        0u32..4,
        0u32..3,
        prop::bool::weighted(0.2),
    );
    let warp = (
        proptest::collection::vec(op, 1..6),
        // The odd lane (4: none) and what is odd about it.
        (0u32..5, 0u8..5),
        // Values: none, one for every lane, one per lane.
        0u8..3,
    );
    (proptest::collection::vec(warp, 1..4), 1u32..3).prop_map(|(warps, syncs)| {
        let ws = 4;
        let threads = ws * warps.len() as u32;
        // The first warp (not the last) whose odd lane alone arrives at an mbarrier in the
        // second phase, which the last warp waits at before its second phase: that lane's
        // accesses of the phase happen before the last warp's, its twins' do not.
        let last = warps.len() - 1;
        let arriver = warps
            .iter()
            .position(|(_, (odd, how), _)| *odd < ws && *how == 4)
            .filter(|&w| w != last);
        let mbarrier = |op, value| Command::mbarrier(op, 256, value, InstId(99));
        use weft_program::MbarrierOp;
        let mut program = unstepped(threads, ws, |t| {
            let (ops, (odd, how), valued) = &warps[(t / ws) as usize];
            let lane = t % ws;
            let odd = *odd == lane;
            let mut out = Vec::new();
            let warp = (t / ws) as usize;
            if arriver.is_some() && t == last as u32 * ws {
                out.push(mbarrier(MbarrierOp::Init, 1));
            }
            for phase in 0..=syncs {
                if phase == 1 && arriver.is_some() && warp == last {
                    out.push(mbarrier(MbarrierOp::WaitParity, 0));
                    // Each lane's wait is a node of its own: a barrier of the warp after
                    // them gives its lanes' accesses one chain key.
                    out.push(warp_barrier(1, ws));
                }
                for (k, &(kind, word, off, len, inst, p, own)) in ops.iter().enumerate() {
                    let p = if odd && *how == 0 && k == 0 { p + 1 } else { p };
                    if p.min(syncs) != phase || (odd && *how == 3 && k + 1 == ops.len()) {
                        continue;
                    }
                    let addr = 4 * word + off + if own { 16 + 4 * lane } else { 0 };
                    let kind =
                        [AccessKind::Read, AccessKind::Write, AccessKind::Atomic][kind as usize];
                    let c = Command::access(kind, addr, len, false, InstId(inst));
                    out.push(match (kind, valued) {
                        (AccessKind::Write, 1) => c.with_value(1),
                        (AccessKind::Write, 2) => c.with_value((lane % 2 + 1) as u16),
                        _ if odd && *how == 2 && kind == AccessKind::Write => c.with_value(2),
                        _ => c,
                    });
                }
                if phase == 1 && arriver == Some(warp) {
                    out.push(if odd {
                        mbarrier(MbarrierOp::Arrive, 1)
                    } else {
                        write(128 + 4 * lane, 4, 9)
                    });
                }
                if phase < syncs {
                    if odd && *how == 1 {
                        out.push(write(128 + 4 * lane, 4, 9));
                    }
                    out.push(sync_all(100 + phase));
                }
            }
            out
        });
        program.values = vec![0x2a, 0x2b];
        program
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    /// Adding the counts of a quiet class pair of twin lanes for each later thread pair of
    /// it, unmerged (and the same-instruction count of a class pair for each later lane
    /// pair), changes nothing in the report, its counts included.
    #[test]
    fn twin_lanes_change_no_report(program in twinned()) {
        same_report_as(&program, Tuning { twins: false, ..Tuning::default() }, 5)?;
    }
}

#[test]
fn a_warp_matrix_store_is_merged_once_per_class_pair() {
    // A CUTLASS wmma epilogue's shape: each warp stores its fragment from every lane (the
    // whole fragment per lane), a barrier, every thread reads a word of it, a barrier, and
    // again. The lanes of a warp are twins in every word of its fragment.
    let (warps, ws, trips) = (4u32, 8u32, 3u32);
    let program = unstepped(warps * ws, ws, |t| {
        let (warp, lane) = (t / ws, t % ws);
        let mut out = Vec::new();
        for _ in 0..trips {
            out.push(write(64 * warp, 64, 1));
            out.push(sync_all(2));
            out.push(read(
                4 * (t % 16) + 64 * ((warp + 1) % warps),
                4,
                3 + lane % 2,
            ));
            out.push(sync_all(5));
        }
        out
    });
    let plain = Tuning {
        twins: false,
        ..Tuning::default()
    };
    let (got, all, some) = report_and_queries(&program, plain);
    assert!(got.races.is_empty(), "{got:?}");
    assert!(got.stats.same_instruction_writes > 0, "{got:?}");
    assert!(all > 0 && some * 4 <= all, "{some} queries of {all}");
}

#[test]
fn racing_twin_lanes_are_merged_once_per_class_pair() {
    // A Triton warp-specialized kernel's shape: every lane of four warps stores the same
    // flag word, at the start and, with another value, at the end, and other threads read
    // it in between. The lanes of a warp are twins, and the thread pairs of two warps race
    // (benign): one merge per class pair notes those races, each later pair records the
    // same on its own threads. The two stores are ordered, so the class pair never
    // saturates: every thread pair counts.
    let (warps, ws) = (4u32, 8u32);
    let mut program = unstepped((warps + 1) * ws, ws, |t| {
        let mut out = Vec::new();
        if t < warps * ws {
            out.push(write(0, 4, 1).with_value(1));
        }
        out.push(sync_all(5));
        if t >= warps * ws {
            out.push(read(0, 1, 3));
        }
        out.push(sync_all(6));
        if t < warps * ws {
            out.push(write(0, 4, 2).with_value(2));
        }
        out
    });
    program.values = vec![0x2a, 0x2b];
    let plain = Tuning {
        twins: false,
        ..Tuning::default()
    };
    let (got, all, some) = report_and_queries(&program, plain);
    assert!(got.races.is_empty(), "{got:?}");
    assert_eq!(got.benign.len(), 2, "{got:?}");
    assert!(
        got.benign
            .iter()
            .all(|r| r.thread_pairs == 384 && !r.thread_pairs_at_least),
        "{got:?}"
    );
    assert!(all > 0 && some * 4 <= all, "{some} queries of {all}");
}

#[test]
fn twins_whose_lanes_disagree_are_merged_one_by_one() {
    // The lanes of warp 0 store one word alike, but only lane 1 arrives at the mbarrier
    // that warp 1 waits at before reading it: lanes 0, 2 and 3 race with warp 1, lane 1
    // does not. Lane 1's pairs are quiet; those of its twins after it must still be merged.
    use weft_program::MbarrierOp;
    let mbarrier = |op, value| Command::mbarrier(op, 256, value, InstId(50));
    let program = unstepped(8, 4, |t| {
        let mut out = Vec::new();
        if t == 4 {
            out.push(mbarrier(MbarrierOp::Init, 1));
        }
        out.push(sync_all(100));
        if t >= 4 {
            // Each lane's wait is a node of its own: a barrier of the warp after them gives
            // its lanes' reads one chain key.
            out.push(mbarrier(MbarrierOp::WaitParity, 0));
            out.push(warp_barrier(1, 4));
            out.push(read(0, 4, 3));
        } else {
            out.push(write(0, 4, 1));
            out.push(if t == 1 {
                mbarrier(MbarrierOp::Arrive, 1)
            } else {
                write(128 + 4 * t, 4, 9)
            });
        }
        out.push(sync_all(101));
        out
    });
    let analysis = barrier_graph::analyze(&program);
    let hb = analysis.happens_before.as_ref().expect("well synchronized");
    let config = Config::default();
    let plain = Tuning {
        twins: false,
        ..Tuning::default()
    };
    let expected = timeless(find_races_tuned(&program, hb, &config, plain));
    let got = timeless(find_races_tuned(&program, hb, &config, Tuning::default()));
    assert_eq!(got, expected);
    assert_eq!(got.races.len(), 1, "{got:?}");
    assert_eq!(got.races[0].thread_pairs, 12, "{got:?}");
}

/// [`shift::lane_shift`] as it was first written: command by command, through the views.
fn lane_shift_by_views(prev: &[Command], cur: &[Command]) -> Option<u32> {
    if prev.len() != cur.len() {
        return None;
    }
    let mut d: Option<u32> = None;
    for (x, y) in prev.iter().zip(cur) {
        if !x.is_access() {
            if x != y {
                return None;
            }
            continue;
        }
        if x.inst() != y.inst() {
            return None;
        }
        let (
            CommandView::Access {
                kind,
                addr,
                len,
                may,
                approx,
            },
            CommandView::Access {
                kind: kind2,
                addr: addr2,
                len: len2,
                may: may2,
                approx: approx2,
            },
        ) = (x.view(), y.view())
        else {
            return None;
        };
        if (kind, len, may, approx) != (kind2, len2, may2, approx2) {
            return None;
        }
        let moved = addr2.wrapping_sub(addr);
        if *d.get_or_insert(moved) != moved {
            return None;
        }
    }
    d.filter(|d| d % CHUNK as u32 == 0)
}

/// One command of a lane, from a small alphabet so that two lanes' often agree: (shape,
/// operand, length or second operand, instruction, flag, value).
fn lane_command((shape, a, b, inst, flag, value): (u8, u32, u32, u32, bool, u16)) -> Command {
    use weft_program::{BarrierCount, BarrierOp, ExecOp, MbarrierOp};
    let inst = InstId(inst);
    let kinds = [AccessKind::Read, AccessKind::Write, AccessKind::Atomic];
    match shape {
        0..=2 => Command::access(kinds[shape as usize], a, b, flag, inst).with_value(value),
        3 => Command::approx_access(AccessKind::Write, a, b, flag, inst).with_value(value),
        4 => Command::barrier(BarrierOp::Sync, a, BarrierCount::Threads(b), flag, inst),
        5 => Command::barrier(BarrierOp::Arrive, a, BarrierCount::All, flag, inst),
        6 => Command::warp_sync(a, inst),
        7 => Command::mbarrier(MbarrierOp::Arrive, a, b, inst),
        8 => Command::exec(ExecOp::Sync, a, inst),
        _ => Command::exit(inst),
    }
}

/// Two lanes' commands: the first's, and the second's as the first's with every access
/// moved by one distance and other values written, then a few commands edited: one field
/// changed (the address, length, instruction, flag, kind or operand) or the command replaced.
fn lane_pair() -> impl Strategy<Value = (Vec<Command>, Vec<Command>)> {
    let command = (0u8..10, 0u32..24, 0u32..6, 0u32..3, any::<bool>(), 0u16..3);
    let edit = (0usize..200, 0u8..7, command.clone());
    (
        proptest::collection::vec(command, 0..150),
        prop::sample::select(vec![0u32, 4, 8, 2, 4u32.wrapping_neg(), 1 << 31]),
        proptest::collection::vec(edit, 0..3),
        0u32..3,
    )
        .prop_map(|(commands, d, edits, extra)| {
            let prev: Vec<Command> = commands.iter().copied().map(lane_command).collect();
            let mut fields: Vec<_> = commands
                .iter()
                .map(|&(shape, a, b, inst, flag, value)| {
                    let a = if shape <= 3 { a.wrapping_add(d) } else { a };
                    // The values written differ from lane to lane.
                    (shape, a, b, inst, flag, value.wrapping_add(1) % 3)
                })
                .collect();
            for (at, field, other) in edits {
                let n = fields.len().max(1);
                if let Some(f) = fields.get_mut(at % n) {
                    match field {
                        0 => f.1 = f.1.wrapping_add(4),
                        1 => f.2 += 1,
                        2 => f.3 += 1,
                        3 => f.4 = !f.4,
                        // Another kind of access, or another command.
                        4 => f.0 = (f.0 + 1) % 4,
                        5 => f.0 = (f.0 + 1) % 10,
                        _ => *f = other,
                    }
                }
            }
            let mut cur: Vec<Command> = fields.into_iter().map(lane_command).collect();
            // Lanes of different lengths now and then.
            cur.truncate(cur.len().saturating_sub(extra.saturating_sub(1) as usize));
            (prev, cur)
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    /// The lane comparison by words gives the distance the comparison by views does.
    #[test]
    fn lane_shift_compares_as_the_views((prev, cur) in lane_pair()) {
        prop_assert_eq!(shift::lane_shift(&prev, &cur), lane_shift_by_views(&prev, &cur));
    }
}

/// The lists of one chunk's entries, per thread and then reads and writes, as
/// [`Context::check_chunk`] makes them.
fn thread_lists(entries: &[Entry]) -> Vec<ThreadLists<'_>> {
    entries
        .chunk_by(|a, b| a.thread == b.thread)
        .map(|slice| {
            let split = slice.partition_point(|e| e.writes() == 0);
            ThreadLists {
                thread: slice[0].thread,
                reads: &slice[..split],
                writes: &slice[split..],
            }
        })
        .collect()
}

/// Whether some chunk of `program` whose classes [`Context::may_have_twins`] says have one
/// lane each has a class of several lanes when built (an error: the pre-test would lose
/// twins), and how many chunks it passed over.
fn pretest_loses_twins(program: &Program) -> Result<usize, TestCaseError> {
    let analysis = barrier_graph::analyze(program);
    let Some(hb) = analysis.happens_before.as_ref() else {
        return Ok(0);
    };
    let config = Config::default();
    let ctx = Context {
        program,
        hb,
        config: &config,
        sweepable: program.threads.iter().all(|t| t.steps.is_empty()),
        tuning: Tuning::default(),
        sides: first_sides(program),
    };
    let lanes = shift::Lanes::of(program, hb, false);
    let collected = collect_entries(program, hb, false, false, &lanes);
    let mut passed = 0;
    for chunk in &collected.chunks {
        let lists = thread_lists(&chunk.entries);
        let cta = lists.partition_point(|l| (l.thread as usize) < program.threads.len());
        if ctx.may_have_twins(&lists[..cta]) {
            continue;
        }
        passed += 1;
        let built = ctx.classes(&lists, &mut FxHashMap::default(), Twins::default(), false);
        prop_assert!(
            !built.any_shared(),
            "chunk {} has twins the pre-test missed",
            chunk.chunk
        );
    }
    Ok(passed)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 600, ..ProptestConfig::default() })]

    /// Where the pre-test of the twin classes finds no two lanes of a warp alike, the classes
    /// built have one lane each: the pre-test drops no twins.
    #[test]
    fn twin_pretest_keeps_every_twin(program in twinned()) {
        pretest_loses_twins(&program)?;
    }

    /// The same on warps whose lanes make their accesses moved (lane shifts, distance 0
    /// included: lanes of one warp in one word).
    #[test]
    fn twin_pretest_keeps_every_twin_of_moved_lanes(program in followed()) {
        pretest_loses_twins(&program)?;
    }
}
