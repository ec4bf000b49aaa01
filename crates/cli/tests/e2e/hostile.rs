//! Hostile and huge input (issue 15): every stress input of the issue ends with an answer —
//! verified, a violation, or unverifiable naming the budget it reached — and a seed corpus of
//! mutated PTX (`tests/mutants`, written by `scripts/mutants.py --write`) never panics.
//!
//! Budgets are lowered where the default one would take seconds in a test build;
//! `scripts/stress.sh` runs the same inputs with the default budgets on a release build.

use std::path::Path;

use crate::common::{Run, weft_in};

fn stress(args: &[&str]) -> Run {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/stress");
    weft_in(&dir, args)
}

fn assert_answer(run: &Run, code: i32, needle: &str) {
    assert_eq!(run.code, code, "{run:?}");
    assert!(run.stdout.contains(needle), "{run:?}");
    assert!(!run.stderr.contains("panicked"), "{run:?}");
}

#[test]
fn huge_local_arrays_cost_only_the_pages_touched() {
    // 1024 threads x eight 1 MiB arrays asked for 32 GiB, one 1 MiB array for 4.2 GB.
    for file in ["local_8x1mib.ptx", "local_1mib.ptx"] {
        let run = stress(&[file]);
        assert_answer(&run, 0, ": verified");
    }
}

#[test]
fn a_one_gib_shared_array_costs_only_the_pages_touched() {
    let run = stress(&["shared_1gib.ptx"]);
    assert_answer(&run, 0, "kernel shared_1gib in shared_1gib.ptx: verified");
    // Its page table alone is over a tiny budget: unverifiable before the first instruction.
    let run = stress(&["--max-memory", "1M", "shared_1gib.ptx"]);
    assert_answer(
        &run,
        3,
        "could not verify: the emulation needs 4 MiB before its first instruction",
    );
    assert!(run.stdout.contains("--max-memory"), "{run:?}");
}

#[test]
fn long_barrier_loops_reach_the_memory_budget_not_an_abort() {
    // 10^9 iterations over 1024 threads aborted at 16 GiB; 10^6 over 64 threads used 5.2 GB.
    for file in ["barrier_loop_1024x1e9.ptx", "barrier_loop_64x1e6.ptx"] {
        let run = stress(&["--max-memory", "64M", file]);
        assert_answer(
            &run,
            3,
            "could not verify: the emulation reached the memory budget of 64 MiB",
        );
        assert!(run.stdout.contains("raise it with --max-memory"), "{run:?}");
    }
}

#[test]
fn the_step_budget_names_its_option() {
    // One thread: its own budget ends it before the CTA-wide one (8 x).
    let run = stress(&["-n", "1", "--max-steps", "1000", "barrier_loop_64x1e6.ptx"]);
    assert_answer(&run, 3, "exceeded the step budget of 1000 instructions");
    assert!(
        run.stdout.contains("raise the budget with --max-steps"),
        "{run:?}"
    );
}

#[test]
fn a_collective_loop_reaches_the_cta_step_budget() {
    let run = stress(&["--max-steps", "1000", "shfl_loop_forever.ptx"]);
    assert_answer(
        &run,
        3,
        "could not verify: the CTA's threads exceeded their budget of 8000 instructions in all",
    );
}

#[test]
fn many_shared_accesses_reach_the_memory_budget() {
    // 1024 threads x 10^6 shared stores aborted at 16 GiB.
    let run = stress(&["--max-memory", "64M", "shared_1024x1e6.ptx"]);
    assert_answer(
        &run,
        3,
        "could not verify: the emulation reached the memory budget of 64 MiB",
    );
}

#[test]
fn a_racy_word_reports_its_races_without_testing_every_pair() {
    // 1024 threads took 435 s and 21.4 billion tests; 128 threads keep the test build fast
    // and still saturate (BENCHMARKS.md times the 1024-thread case on a release build).
    let run = stress(&["-n", "128", "--stats", "race_one_word.ptx"]);
    assert_answer(&run, 1, "2 violations (race)");
    assert!(
        run.stdout
            .contains("at least 64 thread pairs race on these two instructions"),
        "{run:?}"
    );
    assert!(
        run.stdout
            .contains("at least 65536 write pair(s) by lanes of one warp"),
        "{run:?}"
    );
}

#[test]
fn a_racy_word_of_many_values_reports_its_races_and_benign_races() {
    // Every trip stores a new value: the windows held 5,000 keys differing only in their
    // value, each access tested against all of them (92 s in the race stage at 1024
    // threads); a window's keys are now grouped by all but the value. The stores of one
    // value by two threads are a benign race, the others a race.
    let run = stress(&["-n", "128", "race_many_values.ptx"]);
    assert_answer(&run, 1, "2 violations (race, benign-race)");
    assert!(
        run.stdout
            .contains("at least 64 thread pairs race on these two instructions"),
        "{run:?}"
    );
}

#[test]
fn asynchronous_copies_end_at_the_memory_budget() {
    // 42 million cp.async agents: the vector holding them doubled past a 4 GiB address
    // space (SIGABRT); the budget counts it, so a small budget ends the run early.
    let run = stress(&["--max-memory", "64M", "cp_async_agents.ptx"]);
    assert_answer(
        &run,
        3,
        "asynchronous-copy or tensor-core operand accesses recorded",
    );
}

#[test]
fn racing_copies_of_one_instruction_end_their_rows() {
    // 7 million racing cp.async agents, 55,000 per word of one instruction after five of
    // one each: the rows of the race merges passed over the agents one by one (never
    // ended). Each of the 55,000-agent instruction's pairs saturates; the five singletons'
    // pairs are exact.
    let run = stress(&["cp_async_agents_tail.ptx"]);
    assert_answer(&run, 1, "16 violations (race)");
    assert_eq!(
        run.stdout
            .matches("at least 8192 thread pairs race")
            .count(),
        6,
        "{run:?}"
    );
}

#[test]
fn generations_of_arrivals_only_are_each_reported_once() {
    // 80,000 generations completed by `bar.arrive` alone: each is one no-waiter violation
    // (the check of those already reported was quadratic in them).
    let run = stress(&["arrive_only_80000.ptx"]);
    // One violation per shape (instruction and threads), listing its later generations:
    // 80,000 violations were 36 MB of text.
    assert_answer(&run, 1, "17 violations (no-waiter)");
    assert!(
        run.stdout
            .contains("the same at 4999 later generations, with the same instructions and threads: 31, 47, 63,"),
        "{run:?}"
    );
    // JSON lists the folded generations; a violation that does not repeat has no field.
    let run = stress(&["--format", "json", "arrive_only_80000.ptx"]);
    let doc = run.json();
    let later: Vec<usize> = doc["kernels"][0]["violations"]
        .as_array()
        .expect("violations")
        .iter()
        .map(|v| {
            v.get("later_generations")
                .and_then(|g| g.as_array())
                .map_or(0, Vec::len)
        })
        .collect();
    assert_eq!(later.len(), 17);
    assert_eq!(later.iter().sum::<usize>() + 17, 80_000, "{later:?}");
    assert!(later.contains(&0), "{later:?}");
}

#[test]
fn the_happens_before_rows_of_many_generations_are_charged() {
    // 550,400 generations of 1,024 threads: 2.25 GB of rows asked for at once in the
    // barrier graph (an abort under 4 GiB); the emulation now charges them.
    let run = stress(&["arrive_rows_4300.ptx"]);
    assert_answer(&run, 3, "the emulation reached the memory budget of 3 GiB");
}

#[test]
fn wide_copies_charge_the_race_entries_of_every_word() {
    // 7 million 128-byte agents: the race stage's entries were charged 16 of their 20 bytes
    // per word, so the emulation ended under the budget and the race stage's allocation
    // aborted the process under a 4 GiB address space.
    let run = stress(&["cp_async_wide_agents.ptx"]);
    assert_answer(&run, 3, "the emulation reached the memory budget of 3 GiB");
}

#[test]
fn many_racing_instructions_per_thread_saturate() {
    // 64 threads, ~100 store instructions each on one word: every thread pair was merged
    // (10⁴ records each) because the saturation check was judged dearer than the merge.
    let run = stress(&["racy_unrolled_stores.ptx"]);
    assert_answer(&run, 1, "4950 violations (race)");
    // 5,150 instruction pairs share the word's 4,096 found thread pairs: each saturates
    // after one thread pair, and later merges record no race on it (the counts, "at least
    // 1", are checked in crates/race). The word's search stops once 4,096 of them were
    // found: the thread pair that crossed it found 4,950.
    assert!(
        run.stdout
            .contains("the race check stopped in 1 shared word(s) once it had found 4096"),
        "{run:?}"
    );
}

#[test]
fn copies_of_many_instructions_share_a_words_saturation() {
    // 55,000 copies per word from 100 instructions: 5,050 instruction pairs made 64 merges
    // each in every word (24 s of CPU). They share the word's records; each word's search
    // stops at 4,096 racing instruction pairs (mutation run 29's mutants of this file, with
    // 306 instructions, reported 47,000 pairs in 95 MB of JSON after 11 s), and says so.
    let run = stress(&["cp_async_many_instructions.ptx"]);
    assert_answer(&run, 1, "4096 violations (race)");
    assert!(run.stdout.contains("at least"), "{run:?}");
    assert!(
        run.stdout
            .contains("the race check stopped in 512 shared word(s)"),
        "{run:?}"
    );
}

#[test]
fn repeated_arrival_rows_end_at_the_default_budget() {
    // Mutation run 26's SIGABRT: 280,704 generations without a waiter charged 3.84 GB of a
    // 4 GiB budget, and the recycling check's failures then outgrew a 4 GiB address space.
    let run = stress(&["arrive_rows_repeated.ptx"]);
    assert_answer(&run, 3, "the emulation reached the memory budget of 3 GiB");
}

#[test]
fn a_rotation_over_barriers_costs_its_accesses_in_race_tests() {
    // Race-free: every thread visits every word, a barrier between visits. The merges
    // tested every thread pair of every word (1.1e8 tests at n = 4, 6.7e8 with the default
    // exploration); the race-free sweep tests each access about once.
    let run = stress(&["--param", "1=4", "--format", "json", "rotation_2048.ptx"]);
    assert_eq!(run.code, 0, "{run:?}");
    let json = run.json();
    let kernel = &json["kernels"][0];
    assert_eq!(kernel["verdict"], "verified", "{run:?}");
    let stats = &kernel["stats"];
    let commands = stats["commands"].as_u64().expect("commands");
    let tests = stats["race_tests"].as_u64().expect("race_tests");
    assert!(commands > 700_000, "{stats}");
    assert!(
        tests < commands,
        "{tests} race tests for {commands} commands"
    );
}

#[test]
fn endless_loops_of_mutants_end_at_a_budget() {
    // A lone lane issuing TMA stores forever (its warp's other lanes returned), and a
    // remainder loop whose counter wraps under every value of its bound.
    let run = stress(&["--max-steps", "20000", "tma_store_loop_forever.ptx"]);
    assert_answer(&run, 3, "exceeded the step budget of 20000 instructions");
    let run = stress(&["--max-steps", "20000", "param_loop_no_exit.ptx"]);
    assert_answer(&run, 3, "could not verify");
    // Bulk groups committed at every trip and never waited for.
    let run = stress(&["--max-steps", "20000", "bulk_commit_no_wait.ptx"]);
    assert_answer(&run, 3, "exceeded the step budget of 20000 instructions");
    // A wait that keeps every bulk group in flight.
    let run = stress(&["--max-steps", "20000", "bulk_wait_keeps_all.ptx"]);
    assert_answer(&run, 3, "exceeded the step budget of 20000 instructions");
    // A wait that keeps 4,095 bulk groups in flight.
    let run = stress(&["--max-steps", "20000", "bulk_wait_keeps_4095.ptx"]);
    assert_answer(&run, 3, "exceeded the step budget of 20000 instructions");
}

#[test]
fn an_induction_run_far_longer_than_predicted_stops() {
    // The remainder loop's counter no longer steps: the induction's probe ran the path
    // that never ends to the whole CTA budget (10 s). Each run is capped at 16 times the
    // explored paths' prediction.
    let run = stress(&["param_loop_counter_stuck.ptx"]);
    assert_answer(&run, 0, "verified only for param 1");
    assert!(
        run.stdout
            .contains("or one ran past 16 times the length the explored paths predict"),
        "{run:?}"
    );
}

#[test]
fn the_induction_runs_within_the_budget_the_exploration_left() {
    // Hostile input (a mutant of no_period.ptx with a 2,048-trip inner loop) made the
    // induction's probe and observation each run a full CTA budget after the exploration:
    // all of a kernel's runs now share one. The pipeline sample concludes with the default
    // budget; with 20,000 steps per thread its exploration fits, its induction does not.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/sizes");
    let run = weft_in(&dir, &["--max-steps", "20000", "pipeline.ptx"]);
    assert_answer(&run, 0, "pipeline.ptx: verified");
    assert!(
        run.stdout.contains(
            "induction: not concluded: its runs do not fit in the instruction or search budget the \
             exploration left"
        ),
        "{run:?}"
    );
    let run = weft_in(&dir, &["--max-steps", "1000000", "pipeline.ptx"]);
    assert_answer(
        &run,
        0,
        "induction: the emulator's state repeats every 2 trips",
    );
}

#[test]
fn a_branch_that_chooses_on_a_new_variable_every_trip_is_bounded() {
    // The remainder loop's counter term is rebuilt at every trip: one path made 65,468
    // choices at one branch, each on a new variable, until the search budget ran out
    // (exit 3 after 8-15 s of CPU). The branch's choices are now bounded per path: the
    // values of n whose loop wraps (n % 4 == 0) are left unexplored, the others verified.
    let run = stress(&["param_loop_no_exit.ptx"]);
    assert_answer(
        &run,
        0,
        "coverage: bounded: verified only for param 1 (_Z10param_loopPKfiPf_param_1) = 0..=3, \
         5..=7, 9..=11,",
    );
}

#[test]
fn the_induction_runs_a_bounded_number_of_tails() {
    // A counter stepping by 65,536 per trip: the family's launches end the loop with 65,536
    // distinct distances, one tail run and one kept program each (24 s and 3 GB before).
    let run = stress(&["tails_65536.ptx"]);
    assert_answer(&run, 0, "tails_65536.ptx: verified");
    assert!(
        run.stdout.contains(
            "induction: not concluded: the loop's last trips end in 65536 different ways"
        ),
        "{run:?}"
    );
    // Every value the scan reached is verified: the coverage names only the larger ones.
    assert!(
        run.stdout
            .contains("= 0..=16384 (10 paths, --max-trips 8); larger values were not checked"),
        "{run:?}"
    );
}

#[test]
fn mutants_end_with_an_answer() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/mutants");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/mutants exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "ptx"))
        .collect();
    files.sort();
    assert!(files.len() >= 50, "{} mutants", files.len());
    for file in files {
        let name = file.file_name().and_then(|n| n.to_str()).expect("a name");
        let run = weft_in(
            &dir,
            &[
                "--max-memory",
                "256M",
                "--max-steps",
                "100000",
                "-j",
                "1",
                name,
            ],
        );
        assert!((0..=3).contains(&run.code), "{name}: {run:?}");
        assert!(!run.stderr.contains("panicked"), "{name}: {run:?}");
    }
}

#[test]
fn a_loop_of_wgmma_commits_without_a_wait_is_linear() {
    // Each commit scanned every pending issue of the thread (80 s at the step budget; at
    // the default 3 GiB the memory budget ends it first).
    let run = stress(&[
        "--max-memory",
        "4G",
        "--kernel",
        "_Z18wgmma_skipped_wait9TensorMapS_Pf",
        "wgmma_commit_loop.ptx",
    ]);
    assert_answer(&run, 3, "the thread exceeded the step budget");
}

#[test]
fn a_loop_of_warp_barriers_fits_the_default_memory_budget() {
    // 608,000 `bar.warp.sync` generations of 32 lanes: one row of happens-before bounds
    // for every thread of the CTA each took 2.5 GB, beyond the default budget the
    // emulation's charge per command assumes.
    let run = stress(&["warp_sync_loop_19000.ptx"]);
    assert_answer(&run, 0, "verified");
}

#[test]
fn a_loop_of_mbarrier_protocol_errors_is_one_violation_per_thread() {
    // 7 million arrivals on an uninitialized mbarrier were 7 million violations: 12 GB, an
    // abort under a 4 GiB address space (mutation run 36).
    let run = stress(&["mbarrier_uninit_loop.ptx"]);
    assert_answer(&run, 1, "128 violations (mbarrier-uninitialized)");
}

#[test]
fn races_recorded_count_against_the_word_budget() {
    // 401 stores of one word around a barrier, 256 threads: each thread pair's merge makes
    // about 800 tests but records 1.6·10⁵ races (mutation run 47: past 120 s). Counted as
    // tests, the records stop the word long before the tests alone reach the budget.
    let run = stress(&[
        "--max-race-tests",
        "1000000",
        "--format",
        "json",
        "stores_around_a_barrier_401.ptx",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("JSON");
    let k = &doc["kernels"][0];
    assert_eq!(k["verdict"], "violation", "{k}");
    let budget = k["unverifiable"].as_array().into_iter().flatten().any(|u| {
        u["reason"]
            .as_str()
            .is_some_and(|r| r.contains("reached its budget"))
    });
    assert!(budget, "{k}");
    let tests = k["stats"]["race_tests"].as_u64().expect("race tests");
    assert!(
        tests < 1_000_000,
        "the tests alone reached the budget: {tests}"
    );
}

#[test]
fn a_word_over_the_race_test_budget_is_unverifiable_naming_it() {
    // 1024 threads x 5,000 trips of benign stores whose value changes every trip: 7.9·10⁹
    // tests, 200 s (mutation run 37). A lowered budget keeps the debug build quick.
    let run = stress(&["--max-race-tests", "1000000", "benign_values_per_trip.ptx"]);
    assert_answer(
        &run,
        3,
        "could not verify: the race check reached its budget of 1000000 happens-before \
         tests (a race recorded counts as 4) in 1 shared word(s)",
    );
    assert!(
        run.stdout.contains("raise it with --max-race-tests"),
        "{run:?}"
    );
    // What it found stands: the benign pair, its count a lower bound.
    assert!(run.stdout.contains("at least"), "{run:?}");
}

#[test]
fn benign_stores_behind_one_ordered_store_skip_the_thread_pairs_they_cannot_add_to() {
    // 256 threads store one value to a word, then after a barrier another with 100
    // instructions: the first store pairs with each of the 100 but never races (ordered),
    // so no thread pair saturated and each recorded 10⁴ benign races (mutation run 39's
    // Triton mutant: 245 s, 760 MB). A hot word now passes over the thread pairs whose
    // unsaturated instruction pairs are all ordered in them.
    let run = stress(&["benign_stores_after_ordered_store.ptx"]);
    assert_answer(&run, 0, ": verified, with 5051 benign races (warning)");
    assert!(run.stdout.contains("at least"), "{run:?}");
}

#[test]
fn ordered_pairs_beyond_the_old_open_pair_cap_do_not_merge_every_thread_pair() {
    // 101 stores per thread to one word with a barrier after the 45th: 4,950 ordered
    // instruction pairs (both ways round) stay open, more than the hot-chunk check took, so
    // every thread pair of 256 was merged (mutation run 45: 45 s, 1.4 GB). Every racing
    // instruction pair is still reported, the benign ones counting "at least".
    let run = stress(&["benign_stores_around_a_barrier.ptx"]);
    assert_answer(&run, 1, ": 2621 violations (race, benign-race)");
    assert!(run.stdout.contains("at least"), "{run:?}");
}

#[test]
fn a_byte_store_benign_with_word_stores_saturates_with_them() {
    // A byte store of a word's repeated byte is benign with each word store in every thread
    // pair, yet such a pair never saturated (the two did not write the same width): every
    // thread pair was merged (mutation run 40: 247 s, 3.2 GB).
    let run = stress(&["benign_word_and_byte_stores.ptx"]);
    assert_answer(&run, 0, ": verified, with 5151 benign races (warning)");
}

#[test]
fn benign_pairs_over_the_per_word_cap_are_not_listed_and_the_report_says_so() {
    // 130 unordered stores of one value: 8,515 benign instruction pairs on one word. Mutation
    // run 44's mutants (800 such stores) reported 320,401 warnings in 16 s of CPU.
    let run = stress(&["benign_stores_over_the_cap.ptx"]);
    assert_answer(&run, 0, ": verified, with 8192 benign races (warning)");
    assert!(
        run.stdout
            .contains("1 shared word(s) had more than 8192 benign instruction pairs"),
        "{run:?}"
    );
}

#[test]
fn a_chain_of_waited_copies_is_not_merged_pair_by_pair() {
    // 55,000 copies per word, each waited for before the next: 1.5·10⁹ ordered pairs per
    // word were merged one by one (mutation run 27: the run never ended).
    let run = stress(&["cp_async_wait_chain.ptx"]);
    assert_answer(&run, 1, "15 violations (race)");
}

#[test]
fn stores_of_one_word_ordered_before_its_loads_record_each_race_once() {
    // 100 store instructions of 128 threads on one word whose loads never race: every
    // thread pair merged, each recording 10⁴ races (mutation run 27: past 30 s).
    let run = stress(&["stencil_one_word_stores.ptx"]);
    assert_answer(&run, 1, "5050 violations (race)");
    assert!(
        run.stdout
            .contains("the race check stopped in 1 shared word(s)"),
        "{run:?}"
    );
}
