//! Tensor-core operand reads: `wgmma.mma_async` and `tcgen05.mma` agents.

use super::{CopyView, copies, read, views};
use crate::{Config, Emulation, MatrixIssue, Value, Why, emulate};
use weft_program::{AccessKind, CommandView, MbarrierOp, ThreadId};

fn run_on(target: &str, threads: u32, body: &str) -> Emulation {
    let src = format!(
        ".version 8.7\n.target {target}\n.address_size 64\n.visible .entry k(.param .u64 g)\n.reqntid {threads}, 1, 1\n{{\n{body}\n}}\n"
    );
    let module = ptx_parser::parse(&src).expect("test PTX parses");
    emulate(&module, "k", &Config::default()).expect("emulation runs")
}

/// Descriptor bits above the start address: LBO 128, SBO 256, no swizzle.
const LAYOUT: u64 = (128 >> 4) << 16 | (256 >> 4) << 32;

/// A warpgroup's wgmma: A (64 x 32 bytes) and B (8 x 32 bytes) K-major without swizzling,
/// each one contiguous run; lane-dependent work before the wait (lane 0 of warp 1 stores).
fn wgmma_body(b_offset_by_lane: bool) -> String {
    let b_desc = if b_offset_by_lane {
        // Lanes of warp 3 name a B 16 bytes further on.
        "shr.u32 %r9, %r5, 5;\n    setp.eq.u32 %p3, %r9, 3;\n    selp.b32 %r10, 16, 0, %p3;\n    add.s32 %r3, %r3, %r10;"
    } else {
        ""
    };
    format!(
        r#"
    .shared .align 1024 .b8 sA[2048];
    .shared .align 1024 .b8 sB[1024];
    .reg .b32 %r<12>;
    .reg .b64 %rd<6>;
    .reg .f32 %f<4>;
    .reg .pred %p<4>;
    mov.u32 %r5, %tid.x;
    mov.u32 %r1, sA;
    mov.u32 %r3, sB;
    {b_desc}
    shr.u32 %r2, %r1, 4;
    shr.u32 %r4, %r3, 4;
    cvt.u64.u32 %rd1, %r2;
    cvt.u64.u32 %rd2, %r4;
    or.b64 %rd1, %rd1, {LAYOUT};
    or.b64 %rd2, %rd2, {LAYOUT};
    setp.eq.u32 %p1, %r5, 0;
    wgmma.fence.sync.aligned;
    wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {{%f0, %f1, %f2, %f3}}, %rd1, %rd2, %p1, 1, 1, 0, 0;
    wgmma.commit_group.sync.aligned;
    @%p1 st.shared.u32 [sB+768], %r5;
    wgmma.wait_group.sync.aligned 0;
    st.shared.u32 [sB+512], %r5;
    ret;
"#
    )
}

/// One warpgroup-level operation: the first lane's issue makes one agent per run (async
/// proxy), completed at its own wait; every other lane's wait joins the completion set.
#[test]
fn wgmma_reads_are_agents_of_the_warpgroup() {
    let e = run_on("sm_90a", 128, &wgmma_body(false));
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    assert!(
        !e.notes.iter().any(|n| n.contains("tensor")),
        "{:?}",
        e.notes
    );
    // Lane 0: the issue (after its `exec.arrive` of the warpgroup's ordering event) at
    // position 1; its store, then its retiring wait (`exec.wait`, position 2): complete
    // from position 3 on.
    let c = copies(&e);
    assert_eq!(
        c,
        vec![
            (0, 1, read(0, 2048), Some(3), vec![]),
            (0, 1, read(2048, 256), Some(3), vec![]),
        ]
    );
    let asyncs = &e.program.asyncs;
    assert!(
        asyncs
            .copies
            .iter()
            .all(|c| c.proxy == weft_program::Proxy::Async)
    );
    let joint = asyncs.joint_of(&asyncs.copies[0]);
    assert_eq!(joint.len(), 127);
    // The other lanes: arrive (0), wait (1), complete from position 2 on.
    assert!(joint.iter().all(|&(t, p)| t != ThreadId(0) && p == 2));
    assert_eq!(asyncs.joint_of(&asyncs.copies[1]), joint);
}

/// A lane naming other bytes is not the warpgroup's operation: its reads are agents of its
/// own, completed by its own wait only.
#[test]
fn wgmma_lane_with_other_operands_gets_its_own_agents() {
    let e = run_on("sm_90a", 128, &wgmma_body(true));
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    let c = copies(&e);
    // Warps 0-2 share the first operation; each lane of warp 3 reads B at +16.
    let shifted: Vec<_> = c.iter().filter(|c| c.2 == read(2048 + 16, 256)).collect();
    assert_eq!(shifted.len(), 32);
    let asyncs = &e.program.asyncs;
    let first = asyncs.joint_of(&asyncs.copies[0]);
    assert_eq!(first.len(), 95);
    assert!(first.iter().all(|&(t, _)| t.0 < 96));
}

/// An unknown descriptor makes the kernel unverifiable: its reads cannot be placed.
#[test]
fn wgmma_unknown_descriptor_is_unverifiable() {
    let body = wgmma_body(false).replace(
        "or.b64 %rd2, %rd2,",
        "ld.param.u64 %rd3, [g];\n    add.s64 %rd2, %rd2, %rd3;\n    or.b64 %rd2, %rd2,",
    );
    let e = run_on("sm_90a", 128, &body);
    let u = e.unverifiable.first().expect("unverifiable");
    assert_eq!(u.why, Why::Unknown(Value::MatrixDescriptor));
    assert_eq!(u.register.as_deref(), Some("%rd2"));
}

/// tcgen05.mma by one thread: its reads end before the phase of the first commit after it
/// on each mbarrier; a commit tracks every earlier operation of the thread.
#[test]
fn tcgen05_reads_end_at_the_commits_that_track_them() {
    // idesc: kind::f16, M = 64 (bits 24-28: 4), N = 8 (bits 17-22: 1), K-major.
    let idesc: u64 = (4 << 24) | (1 << 17);
    // tcgen05 descriptors: version bits 46-48 = 1, no swizzle.
    let layout = LAYOUT | (1 << 46);
    let body = format!(
        r#"
    .shared .align 1024 .b8 sA[2048];
    .shared .align 1024 .b8 sB[1024];
    .shared .align 8 .b8 bar[16];
    .reg .b32 %r<8>;
    .reg .b64 %rd<6>;
    .reg .pred %p<2>;
    mov.u32 %r1, sA;
    mov.u32 %r3, sB;
    shr.u32 %r2, %r1, 4;
    shr.u32 %r4, %r3, 4;
    cvt.u64.u32 %rd1, %r2;
    cvt.u64.u32 %rd2, %r4;
    or.b64 %rd1, %rd1, {layout};
    or.b64 %rd2, %rd2, {layout};
    mov.u32 %r6, bar;
    mbarrier.init.shared.b64 [%r6], 1;
    mbarrier.init.shared.b64 [%r6+8], 1;
    mov.u32 %r5, {idesc};
    setp.ne.u32 %p1, %r5, 0;
    mov.u32 %r7, 0;
    tcgen05.mma.cta_group::1.kind::f16 [%r7], %rd1, %rd2, %r5, %p1;
    tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r6];
    tcgen05.mma.cta_group::1.kind::f16 [%r7], [%r7], %rd2, %r5, %p1;
    tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%r6+8];
    ret;
"#
    );
    let e = run_on("sm_100a", 1, &body);
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    let v = views(&e, 0);
    let arrive = |addr| CommandView::Mbarrier {
        op: MbarrierOp::AsyncArrive,
        addr,
        value: 1,
    };
    // After each init's write of its object and the init.
    assert_eq!(v[4], arrive(2048 + 1024));
    assert_eq!(v[5], arrive(2048 + 1024 + 8));
    let tmem = |c: &CopyView| match c.2 {
        CommandView::Access { addr, .. } => weft_program::tmem_cell(addr).is_some(),
        _ => false,
    };
    let (in_tmem, shared): (Vec<_>, Vec<_>) = copies(&e).into_iter().partition(|c| tmem(c));
    assert_eq!(
        shared,
        vec![
            // The first mma (A and B): the first commit on each mbarrier after it.
            (0, 4, read(0, 2048), None, vec![4, 5]),
            (0, 4, read(2048, 256), None, vec![4, 5]),
            // The second reads A from tensor memory: B only, the second commit.
            (0, 5, read(2048, 256), None, vec![5]),
        ]
    );
    // Tensor memory (M = 64, data path layout F: the first 16 lanes of each warp's quarter):
    // the first mma writes 8 columns of those 64 lanes; the second writes them and reads A
    // (16 bits · 16 of K: 8 columns) from the same cells; each ends at the commits after it.
    // The accumulator is f16 (descriptor bits 4-5: 0), which may pack two elements per
    // column: its N columns are an upper bound.
    let cell = |kind, lane: u32| CommandView::Access {
        kind,
        addr: weft_program::tmem_address(lane, 0).unwrap_or(0),
        len: 32,
        may: false,
        approx: kind == AccessKind::Write,
    };
    let lanes: Vec<u32> = (0..4)
        .flat_map(|q| (0..16).map(move |x| 32 * q + x))
        .collect();
    let mut want = Vec::new();
    for (issue, phases) in [(4, vec![4, 5]), (5, vec![5])] {
        for &lane in &lanes {
            want.push((
                0,
                issue,
                cell(AccessKind::Write, lane),
                None,
                phases.clone(),
            ));
        }
    }
    for &lane in &lanes {
        want.push((0, 5, cell(AccessKind::Read, lane), None, vec![5]));
    }
    assert_eq!(in_tmem, want);
}

/// Layouts weft does not model are unverifiable, never skipped.
#[test]
fn tcgen05_pair_and_unknown_kinds_are_unverifiable() {
    let e = run_on(
        "sm_100a",
        32,
        r#"
    .reg .b32 %r<8>;
    .reg .b64 %rd<6>;
    .reg .pred %p<2>;
    tcgen05.mma.cta_group::2.kind::f16 [%r7], %rd1, %rd2, %r5, %p1;
    ret;
"#,
    );
    assert_eq!(
        e.unverifiable.first().map(|u| u.why.clone()),
        Some(Why::MatrixOperand(MatrixIssue::CtaPair))
    );
}

/// An instruction descriptor with an empty M or N, or a transposed packed 4-bit operand,
/// describes no layout weft models: unverifiable, not a read of nothing.
#[test]
fn tcgen05_descriptors_without_a_shape_are_unverifiable() {
    for (kind, idesc) in [
        // kind::f16 with M = 0 (bits 24-28), N = 8.
        ("f16", 1u32 << 17),
        // kind::mxf4 with M = 128 (bits 27-28), N = 0.
        ("mxf4.block_scale", 1 << 27),
        // kind::mxf4, M = 128, N = 8, A transposed (bit 15).
        ("mxf4.block_scale", (1 << 27) | (1 << 17) | (1 << 15)),
    ] {
        let scales = if kind.starts_with("mx") {
            ", [%r7], [%r7]"
        } else {
            ""
        };
        let body = format!(
            r#"
    .shared .align 1024 .b8 s[4096];
    .reg .b32 %r<8>;
    .reg .b64 %rd<6>;
    .reg .pred %p<2>;
    mov.u32 %r1, s;
    shr.u32 %r2, %r1, 4;
    cvt.u64.u32 %rd1, %r2;
    mov.u32 %r5, {idesc};
    mov.u32 %r7, 0;
    setp.eq.u32 %p1, %r7, 0;
    tcgen05.mma.cta_group::1.kind::{kind} [%r7], %rd1, %rd1, %r5{scales}, %p1;
    ret;
"#
        );
        let e = run_on("sm_100a", 32, &body);
        assert_eq!(
            e.unverifiable.first().map(|u| u.why.clone()),
            Some(Why::MatrixOperand(MatrixIssue::Shape)),
            "{kind} {idesc:#x}"
        );
    }
}

/// tcgen05.alloc writes the tensor-memory address to shared memory in every lane of the
/// warp; the note says tensor memory itself is not modelled.
#[test]
fn tcgen05_alloc_writes_shared_memory() {
    let e = run_on(
        "sm_100a",
        32,
        r#"
    .shared .align 4 .b8 slot[4];
    .reg .b32 %r<4>;
    mov.u32 %r1, slot;
    tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;
    ld.shared.u32 %r2, [%r1];
    tcgen05.ld.sync.aligned.32x32b.x1.b32 {%r3}, [%r2];
    tcgen05.wait::ld.sync.aligned;
    tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;
    ret;
"#,
    );
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    assert!(matches!(
        views(&e, 5)[0],
        CommandView::Access {
            kind: weft_program::AccessKind::Write,
            addr: 0,
            len: 4,
            ..
        }
    ));
    assert!(
        e.notes.iter().any(|n| n.starts_with("tensor memory")),
        "{:?}",
        e.notes
    );
}

/// The tensor-memory allocation protocol: counted once per warp instruction, balanced at
/// exit; an invalid count and an allocation after relinquishing the permit are findings.
#[test]
fn tensor_memory_allocation_protocol() {
    let body = |cols: u32, dealloc: &str, relinquish_first: bool| {
        format!(
            r#"
    .shared .align 4 .b8 slot[4];
    .reg .b32 %r<4>;
    mov.u32 %r1, slot;
    {}
    tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], {cols};
    ld.shared.u32 %r2, [%r1];
    {dealloc}
    ret;
"#,
            if relinquish_first {
                "tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;"
            } else {
                ""
            }
        )
    };
    let kinds = |e: &Emulation| -> Vec<String> {
        e.findings
            .iter()
            .filter(|f| f.kind == crate::FindingKind::TensorMemory)
            .map(|f| f.message.clone())
            .collect()
    };
    let free = "tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 64;";
    // Two warps, each allocating and freeing 64 columns: balanced.
    let e = run_on("sm_100a", 64, &body(64, free, false));
    assert!(kinds(&e).is_empty(), "{:?}", kinds(&e));
    // No dealloc: 128 columns (one count per warp, not per lane) left allocated.
    let e = run_on("sm_100a", 64, &body(64, "", false));
    let k = kinds(&e);
    assert_eq!(k.len(), 1, "{k:?}");
    assert!(
        k[0].contains("allocate 128 tensor-memory columns"),
        "{}",
        k[0]
    );
    assert!(k[0].contains("deallocate 0"), "{}", k[0]);
    // Freeing more than allocated.
    let twice = format!("{free}\n    {free}");
    let e = run_on("sm_100a", 32, &body(64, &twice, false));
    assert!(kinds(&e).iter().any(|m| m.contains("deallocate 128")));
    // An invalid count.
    let e = run_on("sm_100a", 32, &body(48, "", false));
    assert!(kinds(&e).iter().any(|m| m.contains("power of 2")));
    // Allocating after relinquishing the permit.
    let e = run_on("sm_100a", 32, &body(64, free, true));
    assert!(kinds(&e).iter().any(|m| m.contains("relinquish")));
}

/// The matrix extents `wmma.load`/`wmma.store` decode to (PTX ISA, *Matrix Storage for
/// WMMA*): instances of the leading dimension, elements per instance and element bits; a
/// form weft does not know (no layout, an unknown shape or type) is unsupported.
#[test]
fn wmma_forms_decode_to_their_matrix_extents() {
    use crate::ir::{Op, WmmaMem};
    let cases = [
        (
            "wmma.load.a.sync.aligned.row.m16n16k16.shared.f16 {%r1, %r2}, [%r0], 16;",
            Some((false, 16, 16, 16)),
        ),
        (
            "wmma.load.a.sync.aligned.col.m32n8k16.f16 {%r1, %r2}, [%r0];",
            Some((false, 16, 32, 16)),
        ),
        (
            "wmma.load.b.sync.aligned.row.m8n32k16.shared.bf16 {%r1, %r2}, [%r0];",
            Some((false, 16, 32, 16)),
        ),
        (
            "wmma.load.b.sync.aligned.col.m8n32k16.shared.u8 {%r1, %r2}, [%r0];",
            Some((false, 32, 16, 8)),
        ),
        (
            "wmma.load.c.sync.aligned.col.m32n8k16.shared.f32 {%r1, %r2}, [%r0];",
            Some((false, 8, 32, 32)),
        ),
        (
            "wmma.load.a.sync.aligned.row.m16n16k8.shared.tf32 {%r1, %r2}, [%r0];",
            Some((false, 16, 8, 32)),
        ),
        (
            "wmma.load.a.sync.aligned.row.m8n8k4.shared.f64 {%r1}, [%r0];",
            Some((false, 8, 4, 64)),
        ),
        (
            "wmma.load.a.sync.aligned.row.m8n8k32.shared.s4 {%r1}, [%r0];",
            Some((false, 8, 32, 4)),
        ),
        (
            "wmma.load.b.sync.aligned.col.m8n8k128.shared.b1 {%r1}, [%r0];",
            Some((false, 8, 128, 1)),
        ),
        (
            "wmma.store.d.sync.aligned.row.m16n16k16.shared.f32 [%r0], {%r1, %r2}, 24;",
            Some((true, 16, 16, 32)),
        ),
        (
            "wmma.store.d.sync.aligned.col.m8n32k16.shared.f16 [%r0], {%r1, %r2};",
            Some((true, 32, 8, 16)),
        ),
        (
            "wmma.load.a.sync.aligned.m16n16k16.shared.f16 {%r1, %r2}, [%r0];",
            None,
        ),
        (
            "wmma.load.a.sync.aligned.row.m16n16k16.shared.e4m3 {%r1, %r2}, [%r0];",
            None,
        ),
        (
            "wmma.store.c.sync.aligned.row.m16n16k16.shared.f32 [%r0], {%r1, %r2};",
            None,
        ),
    ];
    for (inst, want) in cases {
        let body = format!(".reg .b32 %r<4>;\n.reg .f64 %fd<2>;\n{inst}\nret;");
        let ir = crate::tests::lower_kernel("", &body);
        let op = ir.insts[0].op;
        match want {
            Some((store, instances, len, ebits)) => assert_eq!(
                op,
                Op::Wmma(WmmaMem {
                    store,
                    instances,
                    len,
                    ebits
                }),
                "{inst}"
            ),
            None => assert_eq!(op, Op::Unsupported, "{inst}"),
        }
    }
}
