//! `activemask` and warp collectives that never complete.

use weft_program::CommandView;

use crate::{Config, Emulation, FindingKind, emulate};

fn run(body: &str) -> Emulation {
    let src = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n.maxntid 64, 1, 1\n{{\n.reg .pred %p<4>;\n.reg .b32 %r<20>;\n.shared .align 4 .b8 s[256];\n{body}\n}}\n"
    );
    let module = ptx_parser::parse(&src).expect("test PTX parses");
    emulate(&module, "k", &Config::default()).expect("emulation runs")
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
    let first_access = |t: usize| {
        e.program.threads[t]
            .commands
            .iter()
            .find_map(|c| match c.view() {
                CommandView::Access { addr, .. } => Some(addr),
                _ => None,
            })
    };
    assert_eq!(first_access(3), Some(12));
    assert_eq!(first_access(25), Some(128 + 100));
}

#[test]
fn a_full_mask_shuffle_on_one_side_of_a_branch_deadlocks() {
    let e = run(
        "mov.u32 %r1, %laneid;\n setp.lt.u32 %p1, %r1, 20;\n @%p1 bra LOW;\n shfl.sync.idx.b32 %r2, %r1, 20, 31, -1;\n ret;\nLOW:\n shfl.sync.idx.b32 %r2, %r1, 0, 31, -1;\n ret;",
    );
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    let deadlocks: Vec<_> = e
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::CollectiveDeadlock)
        .collect();
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
