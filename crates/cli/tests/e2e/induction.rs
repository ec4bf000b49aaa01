//! The induction over trip counts (docs/induction.md) against concrete runs: generated
//! two-warp pipelines, correct and with bugs that show only at some trip counts, each
//! verified once without `--param` and once per trip count `n = 0..=N` with `n` fixed.
//!
//! Soundness: whenever the unpinned run says every value of `n` up to some bound is
//! verified by induction, every pinned run up to `N` within that bound is verified; a
//! reported violation reproduces at its failing input. And the argument is not vacuous:
//! the correct pipelines with a power-of-two stage count are verified for every `n` the
//! no-overflow bound allows.

use crate::common::{temp_dir, weft_in};
use proptest::prelude::*;
use std::path::Path;

/// Trip counts checked concretely.
const N: u64 = 20;

/// What is wrong with a generated pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Bug {
    None,
    /// The producer skips its wait for a free stage at trip `k` (a race there).
    SkipWaitAt(u32),
    /// The consumer frees a stage when `i + S + d < n`, not `i + S < n`.
    LookAhead(i32),
    /// The producer starts waiting for free stages one trip late (a race at trip `S`).
    WaitLate,
}

/// A two-warp pipeline over `stages` shared-memory stages, `n` (param 1) trips: warp 0
/// fills stage `i % S` from a global pointer it advances by a stride (param 2, unknown: a
/// term that differs at every trip, which the induction must leave out of its comparison,
/// `global_address_registers`) and arrives on its full barrier (1 + s), warp 1 waits on it, reads,
/// and frees the stage (empty barrier 1 + S + s) while a later trip will refill it. With
/// `mbar`, the full and empty barriers are mbarriers (32 arrivals per phase, waits on the
/// phase parity `(i / S) & 1`).
fn pipeline(stages: u32, bug: Bug, mbar: bool) -> String {
    if mbar {
        return mbarrier_pipeline(stages, bug);
    }
    let s = stages;
    let (wait_from, skip, ahead) = knobs(s, bug);
    format!(
        r#".version 8.0
.target sm_80
.address_size 64

.visible .entry pipe(
    .param .u64 pipe_param_0,
    .param .u32 pipe_param_1,
    .param .u64 pipe_param_2
)
.maxntid 64, 1, 1
{{
    .reg .b32 %r<32>;
    .reg .b64 %rd<4>;
    .reg .f32 %f<4>;
    .reg .pred %p<8>;
    .shared .align 4 .b8 buf[{bytes}];
    ld.param.u64 %rd1, [pipe_param_0];
    ld.param.u32 %r1, [pipe_param_1];
    ld.param.u64 %rd2, [pipe_param_2];
    mov.u32 %r2, %tid.x;
    shr.u32 %r3, %r2, 5;
    and.b32 %r4, %r2, 31;
    shl.b32 %r5, %r4, 2;
    mov.u32 %r6, buf;
    add.u32 %r5, %r5, %r6;
    setp.eq.u32 %p2, %r3, 0;
    mov.u32 %r10, 0;
    setp.lt.s32 %p1, %r10, %r1;
    @!%p1 bra DONE;
LOOP:
    and.b32 %r11, %r10, {mask};
    shl.b32 %r12, %r11, 7;
    add.u32 %r13, %r5, %r12;
    @!%p2 bra CONSUMER;
    setp.ge.s32 %p3, %r10, {wait_from};
{skip}    @!%p3 bra FILL;
    add.u32 %r14, %r11, {empty};
    bar.sync %r14, 64;
FILL:
    ld.global.f32 %f1, [%rd1];
    add.s64 %rd1, %rd1, %rd2;
    st.shared.f32 [%r13], %f1;
    add.u32 %r15, %r11, 1;
    bar.arrive %r15, 64;
    bra.uni NEXT;
CONSUMER:
    add.u32 %r15, %r11, 1;
    bar.sync %r15, 64;
    ld.shared.f32 %f2, [%r13];
    add.s32 %r16, %r10, {ahead};
    setp.lt.s32 %p5, %r16, %r1;
    @!%p5 bra NEXT;
    add.u32 %r14, %r11, {empty};
    bar.arrive %r14, 64;
NEXT:
    add.s32 %r10, %r10, 1;
    setp.lt.s32 %p1, %r10, %r1;
    @%p1 bra LOOP;
DONE:
    ret;
}}
"#,
        bytes = s * 128,
        mask = s - 1,
        empty = 1 + s,
    )
}

/// What a bug changes in the generated code: the trip from which the producer waits for a
/// free stage, the instructions that skip one wait, and the consumer's look-ahead.
fn knobs(s: u32, bug: Bug) -> (u32, String, i32) {
    let wait_from = if bug == Bug::WaitLate { s + 1 } else { s };
    let skip = match bug {
        Bug::SkipWaitAt(k) => {
            format!("    setp.ne.s32 %p4, %r10, {k};\n    and.pred %p3, %p3, %p4;\n")
        }
        _ => String::new(),
    };
    let ahead = match bug {
        Bug::LookAhead(d) => s as i32 + d,
        _ => s as i32,
    };
    (wait_from, skip, ahead)
}

/// [`pipeline`] over mbarriers.
fn mbarrier_pipeline(stages: u32, bug: Bug) -> String {
    let s = stages;
    let (wait_from, skip, ahead) = knobs(s, bug);
    let inits: String = (0..2 * s)
        .map(|k| format!("    mbarrier.init.shared::cta.b64 [%r20+{}], 32;\n", 8 * k))
        .collect();
    format!(
        r#".version 8.0
.target sm_90
.address_size 64

.visible .entry pipe(
    .param .u64 pipe_param_0,
    .param .u32 pipe_param_1,
    .param .u64 pipe_param_2
)
.maxntid 64, 1, 1
{{
    .reg .b32 %r<32>;
    .reg .b64 %rd<4>;
    .reg .f32 %f<4>;
    .reg .pred %p<8>;
    .shared .align 8 .b8 bars[{bar_bytes}];
    .shared .align 4 .b8 buf[{bytes}];
    ld.param.u64 %rd1, [pipe_param_0];
    ld.param.u32 %r1, [pipe_param_1];
    ld.param.u64 %rd2, [pipe_param_2];
    mov.u32 %r2, %tid.x;
    shr.u32 %r3, %r2, 5;
    and.b32 %r4, %r2, 31;
    shl.b32 %r5, %r4, 2;
    mov.u32 %r6, buf;
    add.u32 %r5, %r5, %r6;
    mov.u32 %r20, bars;
    setp.eq.u32 %p6, %r2, 0;
    @!%p6 bra INITED;
{inits}INITED:
    bar.sync 0;
    setp.eq.u32 %p2, %r3, 0;
    mov.u32 %r10, 0;
    setp.lt.s32 %p1, %r10, %r1;
    @!%p1 bra DONE;
LOOP:
    and.b32 %r11, %r10, {mask};
    shr.u32 %r17, %r10, {log};
    and.b32 %r18, %r17, 1;
    shl.b32 %r19, %r11, 3;
    add.u32 %r21, %r20, %r19;
    add.u32 %r22, %r21, {empty_off};
    shl.b32 %r12, %r11, 7;
    add.u32 %r13, %r5, %r12;
    @!%p2 bra CONSUMER;
    setp.ge.s32 %p3, %r10, {wait_from};
{skip}    @!%p3 bra FILL;
    xor.b32 %r23, %r18, 1;
PWAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p7, [%r22], %r23;
    @!%p7 bra PWAIT;
FILL:
    ld.global.f32 %f1, [%rd1];
    add.s64 %rd1, %rd1, %rd2;
    st.shared.f32 [%r13], %f1;
    mbarrier.arrive.shared::cta.b64 _, [%r21];
    bra.uni NEXT;
CONSUMER:
CWAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p7, [%r21], %r18;
    @!%p7 bra CWAIT;
    ld.shared.f32 %f2, [%r13];
    add.s32 %r16, %r10, {ahead};
    setp.lt.s32 %p5, %r16, %r1;
    @!%p5 bra NEXT;
    mbarrier.arrive.shared::cta.b64 _, [%r22];
NEXT:
    add.s32 %r10, %r10, 1;
    setp.lt.s32 %p1, %r10, %r1;
    @%p1 bra LOOP;
DONE:
    ret;
}}
"#,
        bar_bytes = 16 * s,
        bytes = s * 128,
        mask = s - 1,
        log = s.trailing_zeros(),
        empty_off = 8 * s,
    )
}

/// The verdict with `n` fixed: `true` when verified.
fn pinned(dir: &Path, n: u64) -> bool {
    let run = weft_in(dir, &["pipe.ptx", "--param", &format!("1={n}")]);
    assert!(run.code == 0 || run.code == 1, "{run:?}");
    run.code == 0
}

/// Checks one pipeline; returns whether the induction concluded.
fn check(stages: u32, bug: Bug, mbar: bool) -> bool {
    let dir = temp_dir(&format!(
        "induction-{stages}-{}",
        format!("{bug:?}").replace(['(', ')', '-'], "_")
    ));
    std::fs::write(dir.join("pipe.ptx"), pipeline(stages, bug, mbar)).expect("writes");
    let run = weft_in(&dir, &["pipe.ptx", "--format", "json"]);
    let doc = run.json();
    let k = &doc["kernels"][0];
    let truth: Vec<bool> = (0..=N).map(|n| pinned(&dir, n)).collect();
    let concluded = k["coverage"]["induction"]["concluded"].as_bool() == Some(true);
    match k["verdict"].as_str() {
        Some("violation") => {
            let input = k["coverage"]["failing_inputs"][0]["value"].as_u64();
            let n = input.unwrap_or_else(|| panic!("{stages} {bug:?}: no failing input: {k}"));
            if n <= N {
                assert!(
                    !truth[n as usize],
                    "{stages} {bug:?}: violation at n = {n} does not reproduce"
                );
            }
        }
        Some("verified") if concluded => {
            let top = k["coverage"]["induction"]["family"][1]
                .as_u64()
                .expect("family");
            for (n, ok) in truth.iter().enumerate() {
                assert!(
                    *ok || n as u64 > top,
                    "{stages} {bug:?}: the induction covers n = {n}, which fails: {k}"
                );
            }
        }
        Some("verified") => {
            // Bounded: the explored values must be verified concretely too.
            let explored = &k["coverage"]["variables"][0]["explored"];
            for (n, ok) in truth.iter().enumerate() {
                let covered = explored.as_array().into_iter().flatten().any(|r| {
                    r[0].as_u64().is_some_and(|a| a <= n as u64)
                        && r[1].as_u64().is_some_and(|b| n as u64 <= b)
                });
                assert!(
                    *ok || !covered,
                    "{stages} {bug:?}: n = {n} explored as verified but fails"
                );
            }
        }
        other => panic!("{stages} {bug:?}: unexpected verdict {other:?}: {k}"),
    }
    std::fs::remove_dir_all(&dir).ok();
    eprintln!(
        "{stages} stages{}, {bug:?}: {} (induction {}), fails at {:?}",
        if mbar { " (mbarriers)" } else { "" },
        k["verdict"],
        if concluded {
            "concluded"
        } else {
            "not concluded"
        },
        (0..=N).filter(|&n| !truth[n as usize]).collect::<Vec<_>>()
    );
    concluded
}

/// The correct pipelines with a power-of-two stage count, over named barriers or mbarriers,
/// are verified by induction; the late bug and the others never make it claim a failing
/// trip count.
#[test]
fn generated_pipelines_agree_with_concrete_runs() {
    for mbar in [false, true] {
        for s in [1, 2, 4] {
            assert!(
                check(s, Bug::None, mbar),
                "the correct {s}-stage pipeline (mbarriers: {mbar}) is not concluded"
            );
        }
        for s in [1, 2, 4] {
            for bug in [
                Bug::LookAhead(1),
                Bug::LookAhead(-1),
                Bug::WaitLate,
                Bug::SkipWaitAt(13),
            ] {
                check(s, bug, mbar);
            }
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 8, ..ProptestConfig::default() })]

    /// Random stage counts and bugs: the same agreement.
    #[test]
    fn random_pipelines_agree_with_concrete_runs(
        s in prop::sample::select(vec![1u32, 2, 4]),
        k in 0u32..20,
        d in -2i32..3,
        kind in 0u8..4,
        mbar in any::<bool>(),
    ) {
        let bug = match kind {
            0 => Bug::None,
            1 => Bug::SkipWaitAt(k),
            2 => Bug::LookAhead(d),
            _ => Bug::WaitLate,
        };
        check(s, bug, mbar);
    }
}
