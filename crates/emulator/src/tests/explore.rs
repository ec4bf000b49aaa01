//! Choices on symbolic predicates and their bounded exploration (`crate::explore`).

use crate::{Config, Emulation, Expr, Why, emulate, explore};
use weft_program::{BarrierOp, CommandView};

fn module(body: &str, params: &str) -> String {
    super::kernel_source(params, body)
}

/// `bar.sync 0` once per trip of a loop bounded by `n` (param 0); the trip count is
/// compared as `i < n` (signed).
const LOOP: &str = "
    .reg .b32 %r<4>;
    .reg .pred %p<2>;
    ld.param.u32 %r1, [n];
    mov.u32 %r2, 0;
    setp.lt.s32 %p1, %r2, %r1;
    @!%p1 bra DONE;
TOP:
    bar.sync 0;
    add.s32 %r2, %r2, 1;
    setp.lt.s32 %p1, %r2, %r1;
    @%p1 bra TOP;
DONE:
    ret;";

fn syncs(e: &Emulation, t: usize) -> usize {
    e.program.threads[t]
        .commands
        .iter()
        .filter(|c| {
            matches!(
                c.view(),
                CommandView::Barrier {
                    op: BarrierOp::Sync,
                    ..
                }
            )
        })
        .count()
}

#[test]
fn without_choices_the_loop_is_unverifiable() {
    let src = module(LOOP, ".param .u32 n");
    let m = ptx_parser::parse(&src).unwrap();
    let e = emulate(&m, "k", &Config::default()).unwrap();
    assert!(matches!(
        e.unverifiable.first().map(|u| &u.why),
        Some(Why::BranchDecidesSync(_))
    ));
}

#[test]
fn exploration_runs_each_trip_count_up_to_the_bound() {
    let src = module(LOOP, ".param .u32 n");
    let m = ptx_parser::parse(&src).unwrap();
    let mut trips = Vec::new();
    let x = explore(&m, "k", &Config::default(), 3, |e| {
        assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
        // Every thread makes the same choices: the same number of barriers.
        let n = syncs(e, 0);
        assert!((0..64).all(|t| syncs(e, t) == n));
        trips.push(n);
        true
    })
    .unwrap();
    // The entry test, then three free choices at the back edge; the fourth takes the
    // smaller side only.
    assert_eq!(trips, vec![0, 1, 2, 3, 4]);
    assert_eq!(x.paths, 5);
    assert!(!x.failed && !x.incomplete);
    // The variable is the parameter itself; values n >= 4 (signed) were not explored.
    let (v, explored) = &x.coverage.explored[0];
    assert!(matches!(v.expr, Expr::Param { index: 0, .. }));
    assert_eq!(v.bits, 32);
    assert_eq!(explored, &vec![(0, 4), (0x8000_0000, 0xffff_ffff)]);
    assert_eq!(x.coverage.not_explored[0].1, vec![(5, 0x7fff_ffff)]);
}

#[test]
fn the_check_stops_at_the_first_failing_path() {
    let src = module(LOOP, ".param .u32 n");
    let m = ptx_parser::parse(&src).unwrap();
    let x = explore(&m, "k", &Config::default(), 8, |e| syncs(e, 0) < 2).unwrap();
    assert!(x.failed);
    assert_eq!(x.paths, 3);
    // The failing path: n in 2..=2 (the smallest failing trip count).
    assert_eq!(x.emulation.path_values[0].1, vec![(2, 2)]);
}

/// A count-down loop (`rem = n; do { ...; rem -= 1 } while (rem > 0)`): the affine form
/// `n - k > 0` constrains `n` itself, so choices stay consistent with the first test.
#[test]
fn affine_predicates_constrain_their_base() {
    let body = "
    .reg .b32 %r<4>;
    .reg .pred %p<2>;
    ld.param.u32 %r1, [n];
    setp.lt.u32 %p1, %r1, 1;
    @%p1 bra DONE;
    setp.gt.u32 %p1, %r1, 1000;
    @%p1 bra DONE;
TOP:
    bar.sync 0;
    add.s32 %r1, %r1, -1;
    setp.gt.u32 %p1, %r1, 0;
    @%p1 bra TOP;
DONE:
    ret;";
    let src = module(body, ".param .u32 n");
    let m = ptx_parser::parse(&src).unwrap();
    let mut trips = Vec::new();
    let x = explore(&m, "k", &Config::default(), 3, |e| {
        trips.push(syncs(e, 0));
        true
    })
    .unwrap();
    // n = 0, then n in 1..=1000: n = 1, 2, 3 and (bounded) n = 4, then n > 1000.
    assert_eq!(trips, vec![0, 1, 2, 3, 4, 0]);
    assert!(!x.incomplete);
    assert_eq!(x.coverage.not_explored[0].1, vec![(5, 1000)]);
}

/// Choices made by one thread hold for every thread: a branch on `n > 5` taken by thread 0
/// is not an independent choice for thread 1.
#[test]
fn the_same_predicate_gets_the_same_answer_in_every_thread() {
    let body = "
    .reg .b32 %r<4>;
    .reg .pred %p<2>;
    ld.param.u32 %r1, [n];
    setp.gt.u32 %p1, %r1, 5;
    @%p1 bra SKIP;
    bar.sync 0;
SKIP:
    ret;";
    let src = module(body, ".param .u32 n");
    let m = ptx_parser::parse(&src).unwrap();
    let mut seen = Vec::new();
    let x = explore(&m, "k", &Config::default(), 8, |e| {
        seen.push((0..64).map(|t| syncs(e, t)).collect::<Vec<_>>());
        e.choices.len() == 1
    })
    .unwrap();
    assert_eq!(x.paths, 2);
    assert_eq!(seen, vec![vec![1; 64], vec![0; 64]]);
    assert!(x.coverage.not_explored.is_empty());
}

/// A predicate on a value with no term (a volatile global load, which other threads may
/// write while the kernel runs) stays unverifiable.
#[test]
fn predicates_without_terms_are_not_choices() {
    let body = "
    .reg .b32 %r<4>;
    .reg .b64 %rd<2>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [n];
    ld.volatile.global.u32 %r1, [%rd1];
    setp.gt.u32 %p1, %r1, 5;
    @%p1 bra SKIP;
    bar.sync 0;
SKIP:
    ret;";
    let src = module(body, ".param .u64 n");
    let m = ptx_parser::parse(&src).unwrap();
    let x = explore(&m, "k", &Config::default(), 8, |e| {
        e.unverifiable.is_empty()
    })
    .unwrap();
    assert!(x.failed);
    assert_eq!(x.paths, 1);
}

/// A weak global load of one address in every thread reads one global input
/// (docs/semantics.md §6.5): the branch on it is a choice that all threads take alike, two
/// paths, the note says what is assumed, and the variable is named by its address. A load
/// of each thread's own address reads a variable per thread: the threads' branches are
/// choices of their own, and a path where they disagree deadlocks.
#[test]
fn global_inputs_are_choices() {
    let uniform = "
    .reg .b32 %r<4>;
    .reg .b64 %rd<2>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [n];
    ld.global.u32 %r1, [%rd1+8];
    setp.gt.u32 %p1, %r1, 5;
    @%p1 bra SKIP;
    bar.sync 0;
SKIP:
    ret;";
    let src = module(uniform, ".param .u64 n");
    let m = ptx_parser::parse(&src).unwrap();
    let mut seen = Vec::new();
    let x = explore(&m, "k", &Config::default(), 8, |e| {
        seen.push((0..64).map(|t| syncs(e, t)).collect::<Vec<_>>());
        assert!(e.notes.iter().any(|n| n.contains("inputs of the launch")));
        let Some(c) = e.choices.first() else {
            return false;
        };
        matches!(
            &c.variable.expr,
            Expr::Input { size: 4, address, .. } if matches!(&**address, Expr::Plus { k: 8, .. })
        ) && e.unverifiable.is_empty()
    })
    .unwrap();
    assert!(!x.failed);
    assert_eq!(x.paths, 2);
    assert_eq!(seen, vec![vec![1; 64], vec![0; 64]]);

    let per_thread = "
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    .reg .pred %p<2>;
    ld.param.u64 %rd1, [n];
    mov.u32 %r2, %tid.x;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u32 %r1, [%rd3];
    setp.gt.u32 %p1, %r1, 5;
    @%p1 bra SKIP;
    bar.sync 0;
SKIP:
    ret;";
    let src = module(per_thread, ".param .u64 n");
    let m = ptx_parser::parse(&src).unwrap();
    // Four threads: a branch makes at most a few choices per path (`--max-trips`).
    let cfg = Config {
        threads: Some(weft_program::CtaShape { x: 4, y: 1, z: 1 }),
        ..Config::default()
    };
    let mut disagree = false;
    explore(&m, "k", &cfg, 8, |e| {
        let s: Vec<usize> = (0..4).map(|t| syncs(e, t)).collect();
        disagree |= s.iter().any(|&x| x != s[0]);
        true
    })
    .unwrap();
    assert!(disagree, "no path where the threads' inputs differ");
}

/// All paths together run at most the CTA-wide instruction budget of one emulation: a
/// hostile kernel cannot multiply it by the number of paths (issue 15).
#[test]
fn the_paths_share_one_instruction_budget() {
    let src = module(LOOP, ".param .u32 n");
    let m = ptx_parser::parse(&src).unwrap();
    // Each path stays under 8 x 400 = 3,200 thread-instructions (64 threads, at most 41
    // each); the ten paths of the bound 8 together would not.
    let cfg = Config {
        step_limit: 400,
        ..Config::default()
    };
    let all = explore(&m, "k", &Config::default(), 8, |_| true).unwrap();
    assert_eq!(all.paths, 10);
    assert!(!all.incomplete);
    let x = explore(&m, "k", &cfg, 8, |e| {
        assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
        true
    })
    .unwrap();
    assert!(x.incomplete);
    assert!(x.paths < 10, "{} paths", x.paths);
    assert!(x.instructions >= 3_200, "{} instructions", x.instructions);
    // Each path may run only what the earlier ones left: the last is cut short there (it
    // ran its own full budget, nearly doubling the total), not checked, and not counted.
    assert!(
        x.instructions <= 3_200 + 64,
        "{} instructions",
        x.instructions
    );
}

/// `k` branches around `bar.sync 0`, each on a different non-affine term of four parameters:
/// every branch is a choice on a new variable, and the search for an input that follows a
/// path evaluates every earlier variable's term.
fn many_variables(k: u32) -> String {
    let mut body = String::from(
        "
    .reg .b32 %r<20>;
    .reg .pred %p<2>;
    ld.param.u32 %r1, [a];
    ld.param.u32 %r2, [b];
    ld.param.u32 %r3, [c];
    ld.param.u32 %r4, [d];",
    );
    for i in 1..=k {
        body.push_str(&format!(
            "
    mul.lo.s32 %r10, %r1, {i};
    xor.b32 %r11, %r10, %r2;
    add.s32 %r12, %r11, %r3;
    mul.lo.s32 %r13, %r12, %r4;
    setp.gt.u32 %p1, %r13, {};
    @%p1 bra SKIP{i};
    bar.sync 0;
SKIP{i}:",
            1000 + i
        ));
    }
    body.push_str("\n    ret;");
    module(
        &body,
        ".param .u32 a, .param .u32 b, .param .u32 c, .param .u32 d",
    )
}

#[test]
fn the_witness_search_stops_at_its_budget_and_says_so() {
    // 40 variables: the search took 20 s (a mutant of the size samples took 40-60 s).
    let src = many_variables(40);
    let m = ptx_parser::parse(&src).unwrap();
    let cfg = Config {
        search_budget: 20_000,
        ..Config::default()
    };
    let x = explore(&m, "k", &cfg, 8, |_| true).unwrap();
    assert!(x.search_exhausted && x.incomplete, "{x:?}");
    assert!(!x.failed);
    // The path the budget cut short leaves its values unexplored, by name.
    assert!(!x.coverage.not_explored.is_empty());
    // A few variables fit the default budget: every path is explored.
    let src = many_variables(3);
    let m = ptx_parser::parse(&src).unwrap();
    let x = explore(&m, "k", &Config::default(), 8, |_| true).unwrap();
    assert!(!x.search_exhausted && !x.incomplete, "{x:?}");
    assert!(x.paths > 1);
}

#[test]
fn a_trip_count_over_two_fields_is_explored_trip_by_trip() {
    // `(min(a, b) + 127) >> 7` trips: trip count t needs min(a, b) in 128(t-1)+1..=128t. The
    // search proposed powers of two for a term over two fields (trip counts 1, 2, 4, 8 ...);
    // it now also proposes where the term crosses a bound with both fields equal.
    let body = barrier_loop(
        "ld.param.u32 %r1, [a];
    ld.param.u32 %r3, [b];
    min.u32 %r1, %r1, %r3;
    add.u32 %r1, %r1, 127;
    shr.u32 %r8, %r1, 7;",
    );
    let trips = explored_trips(&body, ".param .u32 a, .param .u32 b", 6);
    assert_eq!(trips, vec![0, 1, 2, 3, 4, 5, 6, 7]);
}

#[test]
fn independent_fields_are_searched_apart() {
    // An early exit on a == 0 || b == 0, then a loop over c | d: the four fields are two
    // groups. Searched together (the last field fastest, 20,000 proposals at most), the
    // proposals gave up before `a` left 0: the path past the exit was abandoned.
    let body = barrier_loop(
        "ld.param.u32 %r1, [a];
    ld.param.u32 %r2, [b];
    ld.param.u32 %r3, [c];
    ld.param.u32 %r4, [d];
    setp.eq.u32 %p2, %r1, 0;
    setp.eq.u32 %p3, %r2, 0;
    or.pred %p2, %p2, %p3;
    @%p2 bra DONE;
    or.b32 %r8, %r3, %r4;",
    );
    let params = ".param .u32 a, .param .u32 b, .param .u32 c, .param .u32 d";
    let trips = explored_trips(&body, params, 3);
    // The exit (no barrier), then the loop's trip counts.
    assert!(
        trips.len() > 2 && trips.contains(&1) && trips.contains(&2),
        "{trips:?}"
    );
}

/// `bar.sync 0` once per trip of a loop of `%r8` trips (unsigned), after `setup`, which
/// computes `%r8` (and may branch to `DONE`).
fn barrier_loop(setup: &str) -> String {
    format!(
        "
    .reg .b32 %r<10>;
    .reg .pred %p<4>;
    {setup}
    mov.u32 %r9, 0;
    setp.lt.u32 %p1, %r9, %r8;
    @!%p1 bra DONE;
TOP:
    bar.sync 0;
    add.s32 %r9, %r9, 1;
    setp.lt.u32 %p1, %r9, %r8;
    @%p1 bra TOP;
DONE:
    ret;"
    )
}

/// The barrier counts of thread 0 on every path of `body` explored with `max_trips`, sorted;
/// the exploration must end with every path verified and explored.
fn explored_trips(body: &str, params: &str, max_trips: u32) -> Vec<usize> {
    let src = module(body, params);
    let m = ptx_parser::parse(&src).unwrap();
    let mut trips = Vec::new();
    let x = explore(&m, "k", &Config::default(), max_trips, |e| {
        trips.push(syncs(e, 0));
        true
    })
    .unwrap();
    assert!(!x.failed && !x.incomplete, "{x:?}");
    trips.sort_unstable();
    trips
}

/// The exploration on a pool of two workers, which emulates each next path while `check`
/// runs on the last one, checks the same paths in the same order with the same results as
/// on a pool of one, which runs them one after the other: each prefetched path is used only
/// when its plan and budgets are the ones the loop reaches. A failing path ends both the
/// same way (the path emulated ahead of it is dropped).
#[test]
fn two_workers_check_the_paths_one_worker_checks() {
    let src = module(LOOP, ".param .u32 n");
    let m = ptx_parser::parse(&src).unwrap();
    let run = |threads: usize, fail_at: usize| {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("pool");
        pool.install(|| {
            let mut seen = Vec::new();
            let x = explore(&m, "k", &Config::default(), 6, |e| {
                seen.push((e.choices.clone(), e.program.clone(), e.stats.instructions));
                syncs(e, 0) < fail_at
            })
            .unwrap();
            (seen, x.paths, x.failed, x.instructions, x.coverage)
        })
    };
    for fail_at in [3, 100] {
        let one = run(1, fail_at);
        let two = run(2, fail_at);
        // Paths of 0, 1, 2 trips pass, 3 fails (and its concrete run is checked too); or
        // every path to the bound passes.
        assert_eq!(one.0.len(), if fail_at == 3 { 5 } else { 8 });
        assert_eq!(one.2, fail_at == 3);
        assert!(one == two, "fail at {fail_at}");
    }
}

/// Paths resumed from checkpoints of earlier paths' runs are the paths emulated from their
/// start, also when the CTA-wide budget the earlier paths left cuts a later path short (a
/// checkpoint fits only a budget on the same side of every count its run compared with
/// it), and under the search budget and the bound.
#[test]
fn resumed_paths_are_the_paths_emulated_from_the_start() {
    let src = module(LOOP, ".param .u32 n");
    let m = ptx_parser::parse(&src).unwrap();
    for step_limit in [400, 1000, Config::default().step_limit] {
        let cfg = Config {
            step_limit,
            ..Config::default()
        };
        let run = |resume: bool| {
            let mut seen = Vec::new();
            let mut resumed = 0;
            let mut x = crate::explore::explore_resuming(
                &m,
                "k",
                &cfg,
                8,
                |e| {
                    seen.push((
                        e.choices.clone(),
                        e.program.clone(),
                        e.unverifiable.clone(),
                        e.stats.instructions,
                    ));
                    resumed += e.stats.resumed;
                    true
                },
                resume,
            )
            .unwrap();
            x.emulation.stats.seconds = 0.0;
            x.emulation.stats.resumed = 0;
            (seen, x, resumed)
        };
        let (a, b) = (run(false), run(true));
        assert_eq!(a.2, 0);
        assert!(a.0 == b.0, "step limit {step_limit}: the paths differ");
        assert!(
            a.1 == b.1,
            "step limit {step_limit}: the explorations differ"
        );
        // Paths resumed after the earlier paths' shared trips.
        assert!(b.2 > 0, "step limit {step_limit}: nothing resumed");
    }
}

/// The checkpoints the exploration keeps (`explore::useful`): those that agree with the
/// next path's choice stack and are the deepest of their start below a choice still to
/// flip, or below the stack's top (the choice the next path flips).
#[test]
fn the_exploration_keeps_the_checkpoints_a_later_path_can_resume_from() {
    use crate::exec::Paths::{Fast, Lanes};
    // Answers T F T T F; choice 1 is still open, choice 4 (the top) is flipped next.
    let stack = [
        (true, false),
        (false, true),
        (true, false),
        (true, false),
        (false, false),
    ];
    let held: [(&[bool], _); 7] = [
        (&[true], Fast),                           // the deepest below open choice 1
        (&[true, false], Fast),                    // only closed choices 2 and 3 above it
        (&[true, false, true, true], Fast),        // the deepest below the top
        (&[true, true], Fast),                     // disagrees at choice 1
        (&[true, false, true, true, false], Fast), // as deep as the stack
        (&[true, false, true], Lanes),             // the deepest of its start
        (&[], Lanes),                              // its start's deepest below open choice 1
    ];
    assert_eq!(
        crate::explore::useful(&held, &stack),
        [true, false, true, false, false, true, true]
    );
    // Without the deepest one below the top, the one below it serves the top.
    assert_eq!(crate::explore::useful(&held[..2], &stack), [true, true]);
}
