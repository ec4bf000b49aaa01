//! `activemask` and warp collectives that never complete.

use weft_program::CommandView;

use crate::{Config, Emulation, FindingKind, emulate};

fn run(body: &str) -> Emulation {
    run_on("sm_90", body)
}

fn run_on(target: &str, body: &str) -> Emulation {
    let src = format!(
        ".version 8.0\n.target {target}\n.address_size 64\n.visible .entry k()\n.maxntid 64, 1, 1\n{{\n.reg .pred %p<4>;\n.reg .b32 %r<20>;\n.shared .align 4 .b8 s[256];\n{body}\n}}\n"
    );
    let module = ptx_parser::parse(&src).expect("test PTX parses");
    emulate(&module, "k", &Config::default()).expect("emulation runs")
}

/// What `pick` takes from thread `t`'s first command it takes anything from.
fn first<T>(e: &Emulation, t: usize, pick: impl Fn(CommandView) -> Option<T>) -> Option<T> {
    e.program.threads[t]
        .commands
        .iter()
        .find_map(|c| pick(c.view()))
}

/// The address of thread `t`'s first shared access.
fn first_access(e: &Emulation, t: usize) -> Option<u32> {
    first(e, t, |v| match v {
        CommandView::Access { addr, .. } => Some(addr),
        _ => None,
    })
}

/// Lanes 0-19 and 20-31 run different sides; each side stores its `activemask` at
/// `s[lane]`.
const BRANCH: &str = r#"
    mov.u32 %r1, %laneid;
    setp.lt.u32 %p1, %r1, 20;
    @%p1 bra LOW;
    activemask.b32 %r2;
    bra.uni JOIN;
LOW:
    activemask.b32 %r2;
JOIN:
    shl.b32 %r3, %r1, 2;
    mov.u32 %r4, s;
    add.s32 %r5, %r4, %r3;
    setp.eq.u32 %p2, %r2, 1048575;
    @%p2 bra LOWSTORE;
    st.shared.u32 [%r5+128], %r2;
    ret;
LOWSTORE:
    st.shared.u32 [%r5], %r2;
    ret;
"#;

#[test]
fn activemask_in_a_lane_dependent_branch_returns_each_side_without_waiting() {
    let e = run(BRANCH);
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    assert!(e.findings.is_empty(), "{:?}", e.findings);
    // Lane 3 saw the low group 0x000fffff and stored at s[3]; lane 25 saw 0xfff00000 and
    // stored at s[32 + 25].
    assert_eq!(first_access(&e, 3), Some(12));
    assert_eq!(first_access(&e, 25), Some(128 + 100));
}

/// Lanes 0-19 shuffle from lane 0 and lanes 20-31 from lane 20, at two `shfl.sync`
/// instructions with the full member mask (`samples/collectives/full_mask_branch.cu`); each
/// lane then stores at `s[4 * result]`. `OTHER_SIDE` is the high lanes' code.
fn two_sided(other_side: &str) -> String {
    format!(
        "mov.u32 %r1, %laneid;\n setp.lt.u32 %p1, %r1, 20;\n @%p1 bra LOW;\n {other_side}\n bra.uni STORE;\nLOW:\n shfl.sync.idx.b32 %r2, %r1, 0, 31, -1;\nSTORE:\n shl.b32 %r3, %r2, 2;\n mov.u32 %r4, s;\n add.s32 %r5, %r4, %r3;\n st.shared.u32 [%r5], %r1;\n ret;"
    )
}

fn collective_deadlocks(e: &Emulation) -> Vec<&crate::Finding> {
    e.findings
        .iter()
        .filter(|f| f.kind == FindingKind::CollectiveDeadlock)
        .collect()
}

#[test]
fn full_mask_shuffles_on_both_sides_of_a_branch_meet_from_sm_70() {
    // PTX ISA: each waits "until all non-exited threads corresponding to membermask have
    // executed shfl.sync with the same qualifiers and same membermask value"; an H200 runs
    // the sample to completion (scripts/hw).
    let e = run(&two_sided("shfl.sync.idx.b32 %r2, %r1, 20, 31, -1;"));
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    assert!(e.findings.is_empty(), "{:?}", e.findings);
    // Each side reads its own source lane's operand: lane 3 got 0, lane 25 got 20, and in
    // the second warp likewise.
    assert_eq!(first_access(&e, 3), Some(0));
    assert_eq!(first_access(&e, 25), Some(80));
    assert_eq!(first_access(&e, 32 + 25), Some(80));
    // Both sides' lanes record the execution event of one collective.
    let event = |t: usize| {
        first(&e, t, |v| match v {
            CommandView::Exec { event, .. } => Some(event),
            _ => None,
        })
    };
    assert!(event(3).is_some());
    assert_eq!(event(3), event(25));
    assert_ne!(event(3), event(32 + 3));
}

#[test]
fn before_sm_70_full_mask_shuffles_on_both_sides_of_a_branch_deadlock() {
    // "For .target sm_6x or below, all threads in membermask must execute the same
    // shfl.sync instruction in convergence."
    let e = run_on(
        "sm_60",
        &two_sided("shfl.sync.idx.b32 %r2, %r1, 20, 31, -1;"),
    );
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    let deadlocks = collective_deadlocks(&e);
    // Every lane of both warps is stuck at one of the two shuffles.
    assert_eq!(deadlocks.len(), 64);
    assert!(
        deadlocks
            .iter()
            .any(|f| f.message.contains("lanes 20-31 wait at")),
        "{:?}",
        deadlocks[0].message
    );
}

#[test]
fn shuffles_of_different_modes_do_not_meet() {
    let e = run(&two_sided("shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;"));
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    assert_eq!(collective_deadlocks(&e).len(), 64);
}

#[test]
fn shuffles_with_different_member_masks_do_not_meet() {
    // The high lanes name lane 0 too, not their own 12 lanes alone: neither side's mask is
    // the other's value, and neither side's lanes all reach its own instruction.
    let e = run(&two_sided("shfl.sync.idx.b32 %r2, %r1, 20, 31, -1048575;"));
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    assert!(!collective_deadlocks(&e).is_empty());
}

#[test]
fn a_full_mask_shuffle_deadlocks_when_the_other_lanes_block_at_a_barrier() {
    // The high lanes never shuffle: they wait at bar.sync 0 for the low lanes, which wait
    // at the shuffle for them.
    let e = run(&two_sided("bar.sync 0;\n mov.u32 %r2, 0;"));
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    let deadlocks = collective_deadlocks(&e);
    assert!(!deadlocks.is_empty());
    assert!(
        deadlocks.iter().any(|f| f
            .message
            .contains("lanes 20-31 are blocked at a named barrier")),
        "{:?}",
        deadlocks[0].message
    );
}

#[test]
fn elects_on_both_sides_of_a_branch_elect_one_leader() {
    // An H200 runs two `elect.sync` of the full mask on the two sides of a lane-dependent
    // branch as one: lane 0 is elected for all 32 lanes (samples/collectives/two_sided.cu).
    // Each lane stores at s[4 * leader + 128 * elected]; both sides elect.
    let elect = "elect.sync %r2|%p3, -1;\n selp.u32 %r6, 32, 0, %p3;\n add.u32 %r2, %r2, %r6;";
    let e = run(&two_sided(elect).replace("shfl.sync.idx.b32 %r2, %r1, 0, 31, -1;", elect));
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    assert!(e.findings.is_empty(), "{:?}", e.findings);
    assert_eq!(first_access(&e, 0), Some(128));
    assert_eq!(first_access(&e, 3), Some(0));
    assert_eq!(first_access(&e, 25), Some(0));
    assert_eq!(first_access(&e, 32), Some(128));
}
