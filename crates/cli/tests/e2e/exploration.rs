//! The exploration of problem sizes (docs/semantics.md §6.5) against concrete runs, on
//! generated kernels of four parameter fields `a, b, c, d`: an early exit on a guard over
//! `a, b`, then a loop over a trip count over the fields whose trip `K` skips the barrier
//! between a thread's write and its neighbour's read (a race whenever the loop runs more
//! than `K` trips; no bug when `K` is out of reach; `K` = 20 is beyond the trips the
//! exploration runs, where only the induction over the trip count could claim those inputs).
//!
//! Soundness: a violation reproduces at its failing input (by the kernel's known truth);
//! a verified report with complete coverage has no failing input; a bounded one names the
//! values it did not explore (before the witness search took independent fields apart, an
//! exit on `a == 0 || b == 0` followed by a loop over `min(c, d)` abandoned the path past
//! the exit and the report said "verified" with nothing listed). And the exploration is
//! not vacuous: where small inputs race, it finds a violation. Each input checked
//! concretely (all four fields fixed) agrees with the truth.

use crate::common::{temp_dir, weft_in};
use proptest::prelude::*;
use std::path::Path;

/// The guard: the kernel exits early when it holds.
#[derive(Debug, Clone, Copy)]
enum Guard {
    Never,
    EitherZero,
    Less,
    LowBits,
    MinBelow2,
}

/// The loop's trip count.
#[derive(Debug, Clone, Copy)]
enum Trips {
    C,
    MinCD,
    SumCD,
    MaxCDOver8,
    MinCAOver16,
    /// `(int)((float)c * 0.25f)`: floating-point arithmetic (docs/semantics.md §6.6).
    QuarterC,
}

impl Guard {
    fn ptx(self) -> &'static str {
        match self {
            Guard::Never => "setp.ne.u32 %p1, %r1, %r1;",
            Guard::EitherZero => {
                "setp.eq.u32 %p1, %r1, 0;\n    setp.eq.u32 %p4, %r2, 0;\n    or.pred %p1, %p1, %p4;"
            }
            Guard::Less => "setp.lt.u32 %p1, %r1, %r2;",
            Guard::LowBits => "and.b32 %r14, %r1, 3;\n    setp.eq.u32 %p1, %r14, 1;",
            Guard::MinBelow2 => "min.s32 %r14, %r1, %r2;\n    setp.lt.s32 %p1, %r14, 2;",
        }
    }

    fn exits(self, a: u32, b: u32) -> bool {
        match self {
            Guard::Never => false,
            Guard::EitherZero => a == 0 || b == 0,
            Guard::Less => a < b,
            Guard::LowBits => a & 3 == 1,
            Guard::MinBelow2 => (a as i32).min(b as i32) < 2,
        }
    }
}

impl Trips {
    fn ptx(self) -> &'static str {
        match self {
            Trips::C => "mov.u32 %r5, %r3;",
            Trips::MinCD => "min.u32 %r5, %r3, %r4;",
            Trips::SumCD => "add.u32 %r5, %r3, %r4;",
            Trips::MaxCDOver8 => {
                "max.u32 %r5, %r3, %r4;\n    add.u32 %r5, %r5, 7;\n    shr.u32 %r5, %r5, 3;"
            }
            Trips::MinCAOver16 => {
                "min.u32 %r5, %r3, %r1;\n    add.u32 %r5, %r5, 15;\n    shr.u32 %r5, %r5, 4;"
            }
            Trips::QuarterC => {
                "cvt.rn.f32.u32 %f1, %r3;\n    mul.f32 %f2, %f1, 0f3E800000;\n    cvt.rzi.u32.f32 %r5, %f2;"
            }
        }
    }

    fn count(self, a: u32, c: u32, d: u32) -> u64 {
        let (a, c, d) = (u64::from(a), u64::from(c), u64::from(d));
        match self {
            Trips::C => c,
            Trips::MinCD => c.min(d),
            Trips::SumCD => (c + d) & 0xffff_ffff,
            Trips::MaxCDOver8 => ((c.max(d) + 7) & 0xffff_ffff) >> 3,
            Trips::MinCAOver16 => ((c.min(a) + 15) & 0xffff_ffff) >> 4,
            // Rust's casts round to nearest even and truncate, as `cvt.rn` and `cvt.rzi` do.
            Trips::QuarterC => u64::from((c as f32 * 0.25) as u32),
        }
    }
}

fn kernel(guard: Guard, trips: Trips, k: u32) -> String {
    format!(
        r#".version 8.0
.target sm_80
.address_size 64

.visible .entry gen(
    .param .u32 a,
    .param .u32 b,
    .param .u32 c,
    .param .u32 d
)
.reqntid 64, 1, 1
{{
    .reg .b32 %r<16>;
    .reg .f32 %f<4>;
    .reg .pred %p<6>;
    .shared .align 4 .b8 s[256];
    ld.param.u32 %r1, [a];
    ld.param.u32 %r2, [b];
    ld.param.u32 %r3, [c];
    ld.param.u32 %r4, [d];
    {guard}
    @%p1 bra DONE;
    {trips}
    mov.u32 %r7, %tid.x;
    shl.b32 %r8, %r7, 2;
    mov.u32 %r9, s;
    add.u32 %r10, %r9, %r8;
    add.u32 %r11, %r7, 1;
    and.b32 %r11, %r11, 63;
    shl.b32 %r11, %r11, 2;
    add.u32 %r12, %r9, %r11;
    mov.u32 %r6, 0;
    setp.lt.u32 %p2, %r6, %r5;
    @!%p2 bra DONE;
TOP:
    st.shared.u32 [%r10], %r6;
    setp.eq.u32 %p3, %r6, {k};
    @%p3 bra SKIP;
    bar.sync 0;
SKIP:
    ld.shared.u32 %r13, [%r12];
    bar.sync 0;
    add.u32 %r6, %r6, 1;
    setp.lt.u32 %p2, %r6, %r5;
    @%p2 bra TOP;
DONE:
    ret;
}}
"#,
        guard = guard.ptx(),
        trips = trips.ptx(),
    )
}

/// Whether the kernel races for the input `(a, b, c, d)`.
fn races(guard: Guard, trips: Trips, k: u32, [a, b, c, d]: [u32; 4]) -> bool {
    !guard.exits(a, b) && trips.count(a, c, d) > u64::from(k)
}

/// Field values the concrete runs take.
const VALUES: [u32; 10] = [0, 1, 2, 3, 5, 8, 16, 17, 40, 100];

fn pinned(dir: &Path, input: [u32; 4]) -> bool {
    let params: Vec<String> = input
        .iter()
        .enumerate()
        .map(|(i, v)| format!("{i}={v}"))
        .collect();
    let mut args = vec!["gen.ptx"];
    for p in &params {
        args.extend(["--param", p.as_str()]);
    }
    let run = weft_in(dir, &args);
    assert!(run.code == 0 || run.code == 1, "{input:?}: {run:?}");
    run.code == 1
}

fn check(guard: Guard, trips: Trips, k: u32, picks: &[[usize; 4]]) {
    let dir = temp_dir("exploration");
    std::fs::write(dir.join("gen.ptx"), kernel(guard, trips, k)).expect("writes");
    let what = format!("{guard:?} {trips:?} K = {k}");
    let inputs: Vec<[u32; 4]> = picks.iter().map(|p| p.map(|i| VALUES[i])).collect();
    for &input in &inputs {
        assert_eq!(
            pinned(&dir, input),
            races(guard, trips, k, input),
            "{what}: the concrete run with {input:?} disagrees with the truth"
        );
    }
    let run = weft_in(&dir, &["gen.ptx", "--format", "json"]);
    let doc = run.json();
    let kernel = &doc["kernels"][0];
    let coverage = &kernel["coverage"];
    // Small inputs that race within a few trips (the default bound explores 8 per loop):
    // the exploration must find one.
    let small = [0u32, 1, 2, 3, 8, 16, 64, 100, 200];
    let small_race = (0..=8u32).any(|a| {
        (0..=8u32).any(|b| {
            small.iter().any(|&c| {
                small
                    .iter()
                    .any(|&d| trips.count(a, c, d) <= 6 && races(guard, trips, k, [a, b, c, d]))
            })
        })
    });
    match kernel["verdict"].as_str() {
        Some("violation") => {
            let mut input = [0u32; 4];
            for v in coverage["failing_inputs"].as_array().into_iter().flatten() {
                let term = v["term"].as_str().unwrap_or_default();
                let field = ["param 0", "param 1", "param 2", "param 3"]
                    .iter()
                    .position(|p| term.starts_with(p))
                    .unwrap_or_else(|| panic!("{what}: failing input {term}"));
                input[field] = v["value"]
                    .as_u64()
                    .and_then(|x| u32::try_from(x).ok())
                    .unwrap_or(0);
            }
            assert!(
                races(guard, trips, k, input),
                "{what}: the violation's input {input:?} does not race: {kernel}"
            );
        }
        Some("verified") => {
            assert!(
                !small_race,
                "{what}: verified, although small inputs race: {kernel}"
            );
            let listed = coverage["variables"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|v| v["not_explored"].as_array().is_some_and(|a| !a.is_empty()));
            if coverage["complete"] == true {
                for &input in &inputs {
                    assert!(
                        !races(guard, trips, k, input),
                        "{what}: complete coverage, yet {input:?} races: {kernel}"
                    );
                }
            } else {
                assert!(
                    listed || !coverage["inputs"].is_null(),
                    "{what}: bounded coverage that names nothing left out: {kernel}"
                );
            }
        }
        other => panic!("{what}: unexpected verdict {other:?}: {kernel}"),
    }
    std::fs::remove_dir_all(&dir).ok();
}

fn guard_of(i: u8) -> Guard {
    [
        Guard::Never,
        Guard::EitherZero,
        Guard::Less,
        Guard::LowBits,
        Guard::MinBelow2,
    ][usize::from(i % 5)]
}

fn trips_of(i: u8) -> Trips {
    [
        Trips::C,
        Trips::MinCD,
        Trips::SumCD,
        Trips::MaxCDOver8,
        Trips::MinCAOver16,
        Trips::QuarterC,
    ][usize::from(i % 6)]
}

/// The shape the witness search lost before it took independent fields apart.
#[test]
fn an_exit_on_two_fields_and_a_loop_over_two_others_are_explored() {
    let picks: Vec<[usize; 4]> = vec![[1, 1, 3, 3], [0, 1, 5, 5], [2, 2, 1, 9], [9, 9, 9, 9]];
    check(Guard::EitherZero, Trips::MinCD, 2, &picks);
    check(Guard::EitherZero, Trips::MinCD, u32::MAX, &picks);
}

/// A trip count computed by floating-point arithmetic, `(int)((float)c * 0.25f)`: its term
/// is explored and evaluated as the concrete runs compute it.
#[test]
fn a_trip_count_of_float_arithmetic_is_explored() {
    let picks: Vec<[usize; 4]> = vec![[1, 1, 3, 3], [0, 1, 5, 5], [2, 2, 9, 1], [9, 9, 9, 9]];
    check(Guard::Never, Trips::QuarterC, 1, &picks);
    check(Guard::Less, Trips::QuarterC, u32::MAX, &picks);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Random guards, trip counts and bugs: the same agreement.
    #[test]
    fn random_guards_and_trip_counts_agree_with_concrete_runs(
        guard in 0u8..5,
        trips in 0u8..6,
        k in prop::sample::select(vec![0u32, 1, 2, 4, 20, u32::MAX]),
        picks in prop::collection::vec(
            [0usize..VALUES.len(), 0usize..VALUES.len(), 0usize..VALUES.len(), 0usize..VALUES.len()],
            6,
        ),
    ) {
        check(guard_of(guard), trips_of(trips), k, &picks);
    }
}
