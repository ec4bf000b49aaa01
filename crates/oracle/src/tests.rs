use super::*;

fn explore_text(threads: &[&str]) -> Exploration {
    explore(&program_from_text(threads)).expect("inside the fragment")
}

/// Listing 1: each warp blocks on the barrier the other arrives at later.
#[test]
fn listing_1_deadlocks_in_every_trace() {
    let e = explore_text(&["sync 0 2; arrive 1 2", "sync 1 2; arrive 0 2"]);
    assert!(e.deadlock);
    assert!(!e.done_reachable);
    assert!(!e.error);
    assert!(!e.well_synchronized);
    assert_eq!(e.races(), None);
}

/// Figure 3 (Listing 2): well-synchronized, race-free, with the paper's generations.
#[test]
fn figure_3_is_well_synchronized_and_race_free() {
    let e = explore_text(&[
        "sync 0 2; write 0; arrive 1 2; sync 0 2; sync 1 2; read 0",
        "sync 0 2; sync 1 2; read 0; sync 0 2; write 0; arrive 1 2",
    ]);
    assert!(e.well_synchronized, "{e:?}");
    assert_eq!(
        e.unique_generations(),
        Some(vec![vec![1, 0, 1, 2, 2, 0, 0], vec![1, 1, 0, 2, 0, 2, 0]])
    );
    assert_eq!(e.races(), Some(BTreeSet::new()));
    // The write of P happens before the read of Q, and the read of Q before the write of Q's
    // second phase... and P's final read after Q's second write.
    assert!(e.happens_before((0, 1), (1, 2)));
    assert!(e.happens_before((1, 4), (0, 5)));
    assert!(!e.happens_before((1, 2), (0, 1)));
    // Syncs completed together are simultaneous.
    assert!(e.happens_before((0, 0), (1, 0)) && e.happens_before((1, 0), (0, 0)));
}

/// Dropping Q's first sync on barrier 1 makes its read race with P's write.
#[test]
fn missing_sync_races() {
    let e = explore_text(&[
        "sync 0 2; write 0; arrive 1 2; sync 0 2",
        "sync 0 2; read 0; sync 1 2; sync 0 2",
    ]);
    assert!(e.well_synchronized);
    assert_eq!(e.races(), Some(BTreeSet::from([((0, 1), (1, 1))])));
}

#[test]
fn count_mismatch_is_an_error_in_some_trace() {
    let e = explore_text(&["arrive 0 2", "arrive 0 3", "read 0"]);
    assert!(e.error);
    assert!(!e.well_synchronized);
}

/// An arrive whose generation depends on the schedule: thread 0 arrives twice on barrier 0
/// with count 2 and thread 1 syncs once. Either both arrivals complete generation 1 (and the
/// sync registers in generation 2 and deadlocks) or the sync takes part in generation 1.
#[test]
fn schedule_dependent_generations_are_not_well_synchronized() {
    let e = explore_text(&["arrive 0 2; arrive 0 2", "sync 0 2"]);
    assert!(!e.well_synchronized);
    assert!(e.done_reachable);
    assert!(e.deadlock);
    assert_eq!(e.generations[1][0], BTreeSet::from([1, 2]));
}

#[test]
fn byte_ranges_and_atomics() {
    // A 2-byte write inside a 4-byte read races; disjoint bytes do not; atomics don't race
    // with each other but do with plain reads.
    let e = explore_text(&[
        "write @2+2; write @8+2; atomic 4",
        "read @0+4; read @10+2; atomic 4; read 4",
    ]);
    assert_eq!(
        e.races(),
        Some(BTreeSet::from([((0, 0), (1, 0)), ((0, 2), (1, 3))]))
    );
}

#[test]
fn rejects_commands_outside_the_fragment() {
    let mut program = program_from_text(&["read 0"]);
    program.threads[0].commands[0] = Command::warp_sync(1, InstId(0));
    assert_eq!(
        explore(&program).unwrap_err(),
        Unsupported::Command {
            thread: 0,
            index: 0
        }
    );
}
