//! `wgmma` over warpgroups: the execution events of a warpgroup operation and the
//! alignment of its `.sync.aligned` instructions.

use weft_program::{CommandView, ExecOp};

use crate::{Config, Emulation, FindingKind, emulate};

/// One CTA of two warpgroups (256 threads) running `body`; the operand reads of `MMA`
/// (descriptors 0: 128 bytes at shared address 0 each) land in `s`.
fn run(body: &str) -> Emulation {
    let src = format!(
        ".version 8.0\n.target sm_90a\n.address_size 64\n.visible .entry k()\n.maxntid 256, 1, 1\n{{\n.shared .align 16 .b8 s[256];\n.reg .pred %p<4>;\n.reg .b32 %r<20>;\n.reg .b64 %rd<4>;\n.reg .f32 %f<4>;\n{body}\n}}\n"
    );
    let module = ptx_parser::parse(&src).expect("test PTX parses");
    emulate(&module, "k", &Config::default()).expect("emulation runs")
}

const MMA: &str = "wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd1, %rd2, 1, 1, 1, 0, 0;";

fn exec(e: &Emulation, t: usize) -> Vec<(ExecOp, u32)> {
    e.program.threads[t]
        .commands
        .iter()
        .filter_map(|c| match c.view() {
            CommandView::Exec { op, event } => Some((op, event)),
            _ => None,
        })
        .collect()
}

#[test]
fn a_warpgroup_operation_is_one_event_issued_by_every_lane_and_waited_by_its_wait_group() {
    let e = run(&format!(
        "mov.b64 %rd1, 0;\nmov.b64 %rd2, 0;\nwgmma.fence.sync.aligned;\n{MMA}\n{MMA}\nwgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\nret;"
    ));
    assert!(e.findings.is_empty(), "{:?}", e.findings);
    // Two operations issued back to back: each lane arrives at the first one's event (the
    // second's arrival would order nothing more), then its wait_group retires it.
    let first = exec(&e, 0);
    assert_eq!(first.len(), 2);
    assert_eq!(first[0].0, ExecOp::Arrive);
    assert_eq!(first[1], (ExecOp::Wait, first[0].1));
    // The same events in every thread of warpgroup 0, others in warpgroup 1.
    for t in 1..128 {
        assert_eq!(exec(&e, t), first, "thread {t}");
    }
    let second = exec(&e, 128);
    assert_ne!(second[0].1, first[0].1);
    assert_eq!(exec(&e, 255), second);
}

#[test]
fn issues_separated_by_synchronization_are_events_of_their_own() {
    // An mbarrier arrival between the two issues: each issue is an arrival of its own.
    let e = run(&format!(
        ".shared .align 8 .b8 bar[8];\nmov.b64 %rd1, 0;\nmov.b64 %rd2, 0;\nmov.u32 %r1, bar;\nmov.u32 %r2, %tid.x;\nsetp.eq.u32 %p1, %r2, 0;\n@%p1 mbarrier.init.shared.b64 [%r1], 256;\nbar.sync 0;\n{MMA}\nmbarrier.arrive.shared.b64 %rd3, [%r1];\n{MMA}\nwgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 0;\nret;"
    ));
    assert!(e.findings.is_empty(), "{:?}", e.findings);
    let ops = exec(&e, 7);
    assert_eq!(ops.len(), 4, "{ops:?}");
    let (a, b) = (ops[0].1, ops[1].1);
    assert_ne!(a, b);
    assert_eq!(
        ops,
        [
            (ExecOp::Arrive, a),
            (ExecOp::Arrive, b),
            (ExecOp::Wait, a),
            (ExecOp::Wait, b)
        ]
    );
}

#[test]
fn a_wait_group_retires_only_the_older_groups() {
    let e = run(&format!(
        "mov.b64 %rd1, 0;\nmov.b64 %rd2, 0;\n{MMA}\nwgmma.commit_group.sync.aligned;\n{MMA}\nwgmma.commit_group.sync.aligned;\nwgmma.wait_group.sync.aligned 1;\nwgmma.wait_group.sync.aligned 0;\nret;"
    ));
    let ops = exec(&e, 5);
    let (a, b) = (ops[0].1, ops[1].1);
    assert_eq!(ops[2..], [(ExecOp::Wait, a), (ExecOp::Wait, b)]);
}

#[test]
fn a_warp_or_lanes_skipping_an_aligned_wgmma_instruction_are_reported() {
    // Warp 3 (threads 96-127) skips the wait_group of warpgroup 0.
    let e = run(&format!(
        "mov.b64 %rd1, 0;\nmov.b64 %rd2, 0;\nmov.u32 %r1, %tid.x;\n{MMA}\nwgmma.commit_group.sync.aligned;\nsetp.ge.u32 %p1, %r1, 96;\nsetp.lt.u32 %p2, %r1, 128;\nand.pred %p3, %p1, %p2;\n@!%p3 wgmma.wait_group.sync.aligned 0;\nret;"
    ));
    let f: Vec<_> = e
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::WarpgroupDivergence)
        .collect();
    let threads: Vec<u32> = f.iter().map(|f| f.thread.0).collect();
    assert_eq!(threads, (96..128).collect::<Vec<u32>>());
    assert!(
        f[0].message
            .contains("threads 0-95 execute `wgmma.wait_group"),
        "{}",
        f[0].message
    );
    assert!(
        f[0].message
            .contains("threads 96-127 execute no further wgmma"),
        "{}",
        f[0].message
    );
    // Lanes of one warp diverging around a fence: lanes 16-31 of every warp skip it.
    let e = run(
        "mov.u32 %r1, %laneid;\nsetp.lt.u32 %p1, %r1, 16;\n@%p1 wgmma.fence.sync.aligned;\nret;",
    );
    assert_eq!(
        e.findings
            .iter()
            .filter(|f| f.kind == FindingKind::WarpgroupDivergence)
            .count(),
        128
    );
}

#[test]
fn lanes_skipping_another_aligned_instruction_are_reported() {
    // Lanes 16-31 of every warp skip an `ldmatrix` (`.sync.aligned` over the warp).
    let e = run(
        ".shared .align 16 .b8 tile[512];\nmov.u32 %r1, %laneid;\nmov.u32 %r2, tile;\nsetp.lt.u32 %p1, %r1, 16;\n@%p1 ldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r3}, [%r2];\nret;",
    );
    let f: Vec<_> = e
        .findings
        .iter()
        .filter(|f| f.kind == FindingKind::WarpgroupDivergence)
        .collect();
    assert_eq!(f.len(), 8 * 16);
    assert!(f.iter().all(|f| f.thread.0 % 32 >= 16));
    assert!(
        f[0].message.contains("every lane of the warp"),
        "{}",
        f[0].message
    );
    // All lanes executing it: nothing to report.
    let e = run(
        ".shared .align 16 .b8 tile[512];\nmov.u32 %r2, tile;\nldmatrix.sync.aligned.m8n8.x1.shared.b16 {%r3}, [%r2];\nret;",
    );
    assert!(e.findings.is_empty(), "{:?}", e.findings);
}
