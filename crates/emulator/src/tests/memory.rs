//! Parameter-space addresses and TMA copies.

use super::{approx, copies, param, read, run, unverifiable_reason, views, write};
use crate::{Config, ValueSource, Why};
use weft_program::{CommandView, MbarrierOp, ThreadEnd};

/// The address of a by-value struct parameter (`mov` of the parameter symbol), `ld.param`
/// through a register, and `cvta.param` + generic loads read the parameter bytes: known
/// where `--param` fixed them, unknown (naming the parameter and byte range) elsewhere.
#[test]
fn parameter_space_addresses() {
    let body = r#"
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    .reg .pred %p;
    mov.b64 %rd1, P;
    add.s64 %rd2, %rd1, 64;
    ld.param.u32 %r1, [%rd2+-44];
    cvta.param.u64 %rd3, %rd1;
    ld.u32 %r2, [%rd3+24];
    ld.param.u32 %r3, [P+28];
    add.s32 %r4, %r1, %r2;
    add.s32 %r4, %r4, %r3;
    mov.u32 %r5, 0;
L:
    bar.sync 0;
    add.s32 %r5, %r5, 1;
    setp.lt.u32 %p, %r5, %r4;
    @%p bra L;
    ret;
    "#;
    let params = ".param .u32 pad, .param .align 8 .b8 P[32]";
    let (_, reg, sources) = unverifiable_reason(body, params, &Config::default());
    assert_eq!(reg.as_deref(), Some("%p"));
    assert_eq!(
        sources,
        vec![
            ValueSource::ParamBytes {
                index: 1,
                name: "P".into(),
                start: 20,
                end: 24
            },
            ValueSource::ParamBytes {
                index: 1,
                name: "P".into(),
                start: 24,
                end: 28
            },
            ValueSource::ParamBytes {
                index: 1,
                name: "P".into(),
                start: 28,
                end: 32
            },
        ]
    );
    let cfg = Config {
        params: vec![
            param("P", Some((20, 4)), 1),
            param("1", Some((24, 4)), 1),
            param("P", Some((28, 4)), 1),
        ],
        ..Config::default()
    };
    let e = run(body, params, &cfg);
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    // Three iterations of the barrier, then exit.
    assert_eq!(views(&e, 0).len(), 4);
    // A half-fixed field names only the unknown bytes.
    let cfg = Config {
        params: vec![
            param("P", Some((20, 2)), 1),
            param("P", Some((24, 4)), 1),
            param("P", Some((28, 4)), 1),
        ],
        ..Config::default()
    };
    let e = run(body, params, &cfg);
    assert!(
        e.unverifiable[0].sources.iter().any(|s| matches!(
            s,
            ValueSource::ParamBytes {
                start: 22,
                end: 24,
                ..
            }
        )),
        "{:?}",
        e.unverifiable
    );
}

/// A `.param` address in a 32-bit register (`mov.b32 %r, P`, as Triton writes it before
/// `cvt.u64.u32` and `cvta.param.u64`) still names the parameter: `cvta.param` and
/// `ld.param` through it read the parameter bytes (they were unknown "not a kernel
/// parameter" addresses, so Triton's TMA tensor maps were not recognized as parameters).
#[test]
fn parameter_space_addresses_in_32_bit_registers() {
    let body = r#"
    .reg .b32 %r<8>;
    .reg .b64 %rd<8>;
    .reg .pred %p;
    mov.b32 %r6, P;
    cvt.u64.u32 %rd1, %r6;
    cvta.param.u64 %rd2, %rd1;
    ld.u32 %r1, [%rd2+20];
    ld.param.u32 %r2, [%r6+24];
    add.s32 %r4, %r1, %r2;
    mov.u32 %r5, 0;
L:
    bar.sync 0;
    add.s32 %r5, %r5, 1;
    setp.lt.u32 %p, %r5, %r4;
    @%p bra L;
    ret;
    "#;
    let params = ".param .u32 pad, .param .align 8 .b8 P[32]";
    let (_, reg, sources) = unverifiable_reason(body, params, &Config::default());
    assert_eq!(reg.as_deref(), Some("%p"));
    let bytes = |start, end| ValueSource::ParamBytes {
        index: 1,
        name: "P".into(),
        start,
        end,
    };
    assert_eq!(sources, vec![bytes(20, 24), bytes(24, 28)]);
    let cfg = Config {
        params: vec![param("P", Some((20, 4)), 1), param("P", Some((24, 4)), 1)],
        ..Config::default()
    };
    let e = run(body, params, &cfg);
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    assert_eq!(views(&e, 0).len(), 3);
}

const TMA: &str = r#"
    .shared .align 8 .b8 bar[8];
    .shared .align 128 .b8 buf[256];
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .reg .pred %p<3>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, bar;
    mov.u32 %r3, buf;
    setp.eq.u32 %p1, %r1, 0;
    @%p1 mbarrier.init.shared.b64 [%r2], 1;
    bar.sync 0;
    @!%p1 bra WAIT;
    mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], TX;
    mov.b64 %rd1, tmap;
    cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1, {%r1, %r1}], [%r2];
    SECOND
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    @!%p2 bra WAIT;
    ld.shared.u32 %r5, [%r3+4];
    ret;
"#;

/// TMA loads complete the transaction bytes their mbarrier still expects, after the last
/// copy of the batch; one copy per expect_tx gets the exact extent, several get an upper
/// bound clipped to the shared window; the assumption is a note.
#[test]
fn tma_loads_complete_expected_bytes() {
    let second = "add.s32 %r4, %r3, 128;\n    cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r4], [%rd1, {%r1, %r1}], [%r2];";
    let body = TMA.replace("TX", "256").replace("SECOND", second);
    let e = run(&body, ".param .u64 tmap", &Config::default());
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    assert!(e.findings.is_empty(), "{:?}", e.findings);
    assert!(
        e.notes.iter().any(|n| n.starts_with("TMA loads")),
        "{:?}",
        e.notes
    );
    let v = views(&e, 0);
    let tail: Vec<_> = v.iter().skip(4).cloned().collect();
    // Two copies of one tensor map towards one phase: one box each, 128 bytes, exact. Each
    // copy has its own complete_tx (commands 4 and 5, after the init's write of the
    // object, the init and the arrive.expect_tx), ending before the phase it is counted in;
    // the bytes are split 1 + 255 so that the phase completes exactly when both are
    // counted.
    assert_eq!(
        copies(&e)
            .into_iter()
            .filter(|c| c.0 == 0)
            .collect::<Vec<_>>(),
        vec![
            (0, 4, write(128, 128), None, vec![4]),
            (0, 5, write(256, 128), None, vec![5]),
        ]
    );
    let tx = |v: &CommandView| match v {
        CommandView::Mbarrier {
            op: MbarrierOp::CompleteTx,
            value,
            ..
        } => Some(*value),
        _ => None,
    };
    assert_eq!(
        (tx(&tail[0]), tx(&tail[1])),
        (Some(1), Some(255)),
        "{tail:?}"
    );
    assert!(e.program.threads.iter().all(|t| t.end == ThreadEnd::Exited));
    // Copies of two tensor maps: both extents are upper bounds, flagged `approx` (256 bytes
    // less 16 for the other copy); the first's is clipped at the second's destination (TMA
    // loads into different destinations are assumed not to overlap), the second's at the
    // 384-byte window. So are copies of an unknown tensor map, and of one map when the
    // bytes do not split evenly (a box of another size than the phase announces).
    let first_two = |second: &str, tx: &str, params: &str| -> Vec<CommandView> {
        let body = TMA.replace("TX", tx).replace("SECOND", second);
        let e = run(&body, params, &Config::default());
        assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
        copies(&e)
            .into_iter()
            .filter(|c| c.0 == 0)
            .map(|c| c.2)
            .collect()
    };
    // Each bound's first 16 bytes are an exact write of their own (a copy appended after
    // the others), the rest an upper bound.
    let bounds = vec![
        approx(write(144, 112)),
        approx(write(272, 112)),
        write(128, 16),
        write(256, 16),
    ];
    let other = "mov.b64 %rd2, tmap2;\n    add.s32 %r4, %r3, 128;\n    cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r4], [%rd2, {%r1, %r1}], [%r2];";
    let two_maps = ".param .u64 tmap, .param .u64 tmap2";
    assert_eq!(first_two(other, "256", two_maps), bounds);
    let unknown = "ld.param.u64 %rd2, [tmap];\n    add.s32 %r4, %r3, 128;\n    cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r4], [%rd2, {%r1, %r1}], [%r2];";
    assert_eq!(first_two(unknown, "256", ".param .u64 tmap"), bounds);
    assert_eq!(first_two(second, "255", ".param .u64 tmap"), bounds);
    // One known address outside the kernel's parameters (a map in global memory, which
    // `tensormap.replace` may rewrite between the copies): upper bounds too.
    let global = TMA
        .replace("mov.b64 %rd1, tmap;", "mov.b64 %rd1, 4096;")
        .replace("TX", "256")
        .replace("SECOND", second);
    let e = run(&global, ".param .u64 tmap", &Config::default());
    let two: Vec<_> = copies(&e)
        .into_iter()
        .filter(|c| c.0 == 0)
        .map(|c| c.2)
        .collect();
    assert_eq!(two, bounds);
    // One copy per expect_tx: the extent is exact, not flagged.
    let body = TMA.replace("TX", "256").replace("SECOND", "");
    let e = run(&body, ".param .u64 tmap", &Config::default());
    assert!(e.findings.is_empty(), "{:?}", e.findings);
    assert_eq!(copies(&e)[0].2, write(128, 256));
    // A TMA store reads from its source to the end of shared memory: an upper bound.
    let store = "add.s32 %r4, %r3, 192;\n    cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%rd1, {%r1, %r1}], [%r4];";
    let body = TMA.replace("TX", "256").replace("SECOND", store);
    let e = run(&body, ".param .u64 tmap", &Config::default());
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    let v: Vec<CommandView> = copies(&e).into_iter().map(|c| c.2).collect();
    assert!(v.contains(&approx(read(320, 64))), "{v:?}");
    assert!(v.contains(&write(128, 256)), "{v:?}");
    // One copy: the extent is exact, and an overrun is a finding.
    let body = TMA.replace("TX", "512").replace("SECOND", "");
    let e = run(&body, ".param .u64 tmap", &Config::default());
    assert_eq!(e.findings.len(), 1, "{:?}", e.findings);
    // A plain arrive completes phase 0 before the copy is issued: the copy goes towards
    // phase 1, which never completes, so its byte count cannot be derived.
    let body = TMA
        .replace(
            "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], TX;",
            "mbarrier.arrive.shared::cta.b64 _, [%r2];",
        )
        .replace("SECOND", "");
    let (why, _, _) = unverifiable_reason(&body, ".param .u64 tmap", &Config::default());
    assert_eq!(why, Why::TmaPhaseNeverCompletes);
    // Fewer announced bytes than copies: no byte split is possible.
    let body = TMA.replace("TX", "1").replace("SECOND", second);
    let (why, _, _) = unverifiable_reason(&body, ".param .u64 tmap", &Config::default());
    assert_eq!(
        why,
        Why::TmaTooFewBytes {
            copies: 2,
            bytes: 1
        }
    );
}

/// Copies of two tensor maps interleaved in one phase: each is an upper bound clipped at the
/// next destination, and since every copy of one map moves the same box, the last copy of
/// the second map (which nothing clips but the window: 160 bytes) is bounded by its map's
/// other copy (32 bytes). quack's RMSNorm backward for sm100 read its last dout box over the
/// reduction buffer.
#[test]
fn copies_of_one_tensor_map_share_the_smallest_bound() {
    let copy = |off: u32, map: &str| {
        format!(
            "add.s32 %r4, %r3, {off};\n    cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r4], [{map}, {{%r1, %r1}}], [%r2];\n    "
        )
    };
    let second = format!(
        "mov.b64 %rd2, tmap2;\n    {}{}{}",
        copy(32, "%rd2"),
        copy(64, "%rd1"),
        copy(96, "%rd2")
    );
    let body = TMA.replace("TX", "256").replace("SECOND", &second);
    let e = run(
        &body,
        ".param .u64 tmap, .param .u64 tmap2",
        &Config::default(),
    );
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    let v: Vec<CommandView> = copies(&e).into_iter().map(|c| c.2).collect();
    assert_eq!(
        v,
        vec![
            approx(write(144, 16)),
            approx(write(176, 16)),
            approx(write(208, 16)),
            approx(write(240, 16)),
            write(128, 16),
            write(160, 16),
            write(192, 16),
            write(224, 16),
        ]
    );
}

/// DeepGEMM and Triton's warp-specialized matmul: copies issued before the expect_tx that
/// announces their bytes, by another thread than the one announcing them, and separated by a
/// named barrier all belong to the phase their mbarrier operand names.
#[test]
fn tma_copies_before_expect_tx_and_across_a_barrier_join_their_phase() {
    let body = r#"
    .shared .align 8 .b8 bar[8];
    .shared .align 128 .b8 buf[256];
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .reg .pred %p<4>;
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, bar;
    mov.u32 %r3, buf;
    add.s32 %r4, %r3, 128;
    setp.eq.u32 %p1, %r1, 0;
    setp.eq.u32 %p3, %r1, 32;
    @%p1 mbarrier.init.shared.b64 [%r2], 1;
    bar.sync 0;
    mov.b64 %rd1, tmap;
    @%p1 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r3], [%rd1, {%r1, %r1}], [%r2];
    bar.sync 1, 64;
    @%p1 cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r4], [%rd1, {%r1, %r1}], [%r2];
    @%p3 mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 256;
WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 %p2, [%r2], 0;
    @!%p2 bra WAIT;
    ld.shared.u32 %r5, [%r3+4];
    ret;
"#;
    let e = run(body, ".param .u64 tmap", &Config::default());
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    assert!(e.findings.is_empty(), "{:?}", e.findings);
    assert!(
        e.program
            .threads
            .iter()
            .all(|t| t.end == weft_program::ThreadEnd::Exited)
    );
    let c = copies(&e);
    assert_eq!(c.len(), 2, "{c:?}");
    // Copies of one tensor map: one box each, exact.
    assert_eq!(c[0].2, write(128, 128));
    assert_eq!(c[1].2, write(256, 128));
}

/// cp.async copies are agents: committed into groups, completed by wait_group N (all but
/// the N most recent groups), wait_all (everything, committed or not) and the phase of a
/// cp.async.mbarrier.arrive; nothing is recorded in the issuing thread at issue.
#[test]
fn cp_async_groups_complete_at_waits() {
    let body = r#"
    .shared .align 8 .b8 bar[8];
    .shared .align 4 .b8 buf[64];
    .reg .b32 %r<4>;
    .reg .b64 %rd<2>;
    mov.u32 %r1, buf;
    mov.u32 %r2, bar;
    mbarrier.init.shared.b64 [%r2], 1;
    cp.async.ca.shared.global [%r1], [%rd1], 4;
    cp.async.commit_group;
    cp.async.ca.shared.global [%r1+4], [%rd1], 8;
    cp.async.commit_group;
    cp.async.ca.shared.global [%r1+16], [%rd1], 16;
    cp.async.wait_group 1;
    ld.shared.u32 %r3, [%r1];
    cp.async.mbarrier.arrive.noinc.shared.b64 [%r2];
    cp.async.wait_all;
    ld.shared.u32 %r3, [%r1+16];
    cp.async.ca.shared.global [%r1+32], [%rd1], 4;
    cp.async.mbarrier.arrive.shared.b64 [%r2];
    mbarrier.arrive.shared.b64 %rd1, [%r2];
    ret;
"#;
    let e = run(body, ".param .u64 g", &Config::default());
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    let v = views(&e, 0);
    // the init's write of the object and the init, read (after wait_group 1), the
    // asynchronous arrive (noinc), read (after wait_all), expect_tx 0 (the increment of
    // cp.async.mbarrier.arrive), arrive, exit.
    assert_eq!(v[0], write(0, 8));
    assert_eq!(v[2], read(8, 4));
    assert_eq!(
        v[3],
        CommandView::Mbarrier {
            op: MbarrierOp::AsyncArrive,
            addr: 0,
            value: 1
        }
    );
    assert_eq!(v[4], read(24, 4));
    assert_eq!(
        v[5],
        CommandView::Mbarrier {
            op: MbarrierOp::ExpectTx,
            addr: 0,
            value: 0
        }
    );
    let of_thread0: Vec<_> = copies(&e).into_iter().filter(|c| c.0 == 0).collect();
    assert_eq!(
        of_thread0,
        vec![
            // Group 0: completed by wait_group 1 (position 2), tracked by the arrive (3).
            (0, 2, write(8, 4), Some(2), vec![]),
            // Group 1: still pending at wait_group 1; wait_all completes it (position 4).
            (0, 2, write(12, 8), Some(4), vec![3]),
            // Uncommitted at wait_group 1; wait_all completes it.
            (0, 2, write(24, 16), Some(4), vec![3]),
            // Issued after wait_all: only the phase of the second arrive (command 5).
            (0, 5, write(40, 4), None, vec![5]),
        ]
    );
}

/// Issue 15: a 1 GiB shared array and 1 MiB of local memory per thread cost the pages
/// written; values stay exact across pages.
#[test]
fn huge_windows_cost_the_pages_touched() {
    let body = r#"
    .reg .b32 %r<8>;
    .shared .align 4 .b8 s[1073741824];
    .local .align 4 .b8 l[1048576];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 20;
    mov.u32 %r3, s;
    add.s32 %r4, %r3, %r2;
    st.local.u32 [l+1048572], %r1;
    ld.local.u32 %r5, [l+1048572];
    st.shared.u32 [%r4+4094], %r5;
    bar.sync 0;
    ld.shared.u32 %r6, [%r4+4094];
    sub.s32 %r7, %r6, %r1;
    add.s32 %r7, %r7, 1;
    bar.sync %r7, 64;
    ret;
    "#;
    // 64 MiB is far below the 5 GiB the dense windows took, and above what is touched.
    let cfg = Config {
        max_memory: 64 << 20,
        ..Config::default()
    };
    let e = run(body, "", &cfg);
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    // Each thread read back its own id across a page boundary: the barrier id is known (1).
    let v = views(&e, 5);
    assert_eq!(v.len(), 5, "{v:?}");
    assert_eq!(
        v[3],
        super::sync(1, weft_program::BarrierCount::Threads(64))
    );
}

/// Runs `body` under a 1 MiB memory budget; its one unverifiable reason.
fn over_a_mebibyte(body: &str, params: &str) -> (crate::Emulation, Why) {
    let cfg = Config {
        max_memory: 1 << 20,
        ..Config::default()
    };
    let e = run(body, params, &cfg);
    let reasons: Vec<Why> = e.unverifiable.iter().map(|u| u.why.clone()).collect();
    assert_eq!(reasons.len(), 1, "{reasons:?}");
    (e, reasons[0].clone())
}

#[test]
fn the_memory_budget_makes_the_kernel_unverifiable() {
    let body = r#"
    .reg .b32 %r<4>;
    .reg .pred %p;
    mov.u32 %r1, 0;
L:
    bar.sync 0;
    add.s32 %r1, %r1, 1;
    setp.lt.u32 %p, %r1, 1000000;
    @%p bra L;
    ret;
    "#;
    let (e, why) = over_a_mebibyte(body, "");
    assert!(
        matches!(why, Why::MemoryBudget { limit, .. } if limit == 1 << 20),
        "{why:?}"
    );
    let commands: usize = e.program.threads.iter().map(|t| t.commands.len()).sum();
    assert!(commands < (1 << 20) / 96 + 1024, "{commands}");
    let cfg = Config {
        max_memory: 1 << 20,
        ..Config::default()
    };

    // A register file over the budget is refused before the first instruction. Only the
    // registers instructions name take room: 4000 of them x 64 threads.
    let uses: String = (0..4000).map(|k| format!(" mov.u32 %r{k}, 0;\n")).collect();
    let body = format!(".reg .b32 %r<1000000>;\n{uses} ret;");
    let src = super::kernel_source("", &body);
    let module = ptx_parser::parse(&src).expect("parses");
    let err = crate::emulate(&module, "k", &cfg).expect_err("over budget");
    assert!(
        matches!(err, crate::Error::MemoryBudget { limit, .. } if limit == 1 << 20),
        "{err}"
    );
    assert!(err.to_string().contains("--max-memory"), "{err}");
}

#[test]
fn asynchronous_copies_count_against_the_memory_budget() {
    // A loop issuing 16-byte cp.async copies: nothing is recorded in the issuing threads,
    // so only the agents take room (a CuTe DSL GEMM mutant filled 2.5 GB with tensor-core
    // operand agents the budget did not count, and reached the 10 s CPU limit first).
    let body = r#"
    .shared .align 16 .b8 buf[256];
    .reg .b32 %r<4>;
    .reg .b64 %rd<2>;
    .reg .pred %p;
    mov.u32 %r1, buf;
    mov.u32 %r2, 0;
L:
    cp.async.cg.shared.global [%r1], [%rd1], 16;
    cp.async.cg.shared.global [%r1+16], [%rd1], 16;
    add.s32 %r2, %r2, 1;
    setp.lt.u32 %p, %r2, 1000000;
    @%p bra L;
    ret;
"#;
    let (e, why) = over_a_mebibyte(body, ".param .u64 g");
    let Why::MemoryBudget { agents, .. } = why else {
        panic!("{why:?}");
    };
    // Each agent: its record, its pending entry, the race entries of 16 bytes (five).
    let bytes = crate::exec::AGENT_RECORD + crate::exec::AGENT_BYTES + 5 * 16;
    assert_eq!(
        crate::exec::AGENT_RECORD,
        72,
        "docs/semantics.md §6.1 names the size"
    );
    assert!(agents > 0 && agents <= (1 << 20) / bytes + 1024, "{agents}");
    assert_eq!(e.program.asyncs.copies.len() as u64, agents);
}

#[test]
fn too_many_registers_are_an_input_error() {
    let decls = ".reg .b32 %r<1000000>;\n".repeat(5);
    let src = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n.maxntid 64, 1, 1\n{{\n{decls} ret;\n}}\n"
    );
    let module = ptx_parser::parse(&src).expect("parses");
    let err = crate::emulate(&module, "k", &Config::default()).expect_err("too many registers");
    assert!(err.to_string().contains("registers declared"), "{err}");
}

/// `%nctaid` of CTA u32::MAX (no overflow panic in debug builds).
#[test]
fn the_last_cta_index_has_a_grid() {
    let body = r#"
    .reg .b32 %r<4>;
    mov.u32 %r1, %nctaid.x;
    bar.sync 0, %r1;
    ret;
    "#;
    let cfg = Config {
        cta: [u32::MAX, 0, 0],
        ..Config::default()
    };
    let e = run(body, "", &cfg);
    // u32::MAX threads cannot arrive at a 64-thread CTA's barrier: the count is known.
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
}

#[test]
fn declared_registers_no_instruction_names_take_no_room() {
    // A mutant of a FlashInfer kernel declared `.reg .b32 %r<100000>`: every fork of an
    // unknown branch copied 100,000 registers per thread (46 s, 443 MiB). Only named
    // registers are placed in the register file.
    let body = ".reg .b32 %r<100000>;\n .reg .b32 %q<3>;\n mov.u32 %r99999, 1;\n mov.u32 %q2, %r99999;\n add.u32 %r7, %q2, %r99999;\n ret;";
    let ir = super::lower_kernel("", body);
    assert_eq!(ir.reg_names, vec!["%r99999", "%q2", "%r7"]);
}

#[test]
fn a_finding_repeated_in_a_loop_is_recorded_once_per_thread() {
    // A mutant stored out of bounds once per trip of a 10^9-trip barrier loop: every trip
    // recorded a finding (with its message), 8.7 GiB past the memory budget. The report
    // names each thread once per instruction and kind, so one finding per thread is kept.
    let body = "
    .reg .b32 %r<4>;
    .reg .pred %p<2>;
    mov.u32 %r1, 1048576;
LOOP:
    bar.sync 0;
    add.s32 %r1, %r1, 4;
    st.shared.u32 [%r1], %r1;
    setp.lt.u32 %p1, %r1, 1049576;
    @%p1 bra LOOP;
    ret;";
    let e = run(body, "", &Config::default());
    let oob: Vec<_> = e
        .findings
        .iter()
        .filter(|f| f.kind == crate::FindingKind::SharedOutOfBounds)
        .collect();
    assert_eq!(oob.len(), 64, "{} findings", oob.len());
    let mut threads: Vec<u32> = oob.iter().map(|f| f.thread.0).collect();
    threads.sort_unstable();
    threads.dedup();
    assert_eq!(threads.len(), 64);
}

/// `tensormap.replace` on a tensor map in shared memory is a write of the whole 128-byte
/// object (the ISA: "a weak memory operation, on the entire 1024-bit opaque tensor-map
/// object"), not skipped; on a map in global memory it touches nothing the check covers.
/// A tensormap instruction on shared memory weft has no semantics for is unverifiable.
#[test]
fn tensor_maps_in_shared_memory_are_not_skipped() {
    let body = "
    .shared .align 128 .b8 smap[128];
    .reg .b32 %r<4>;
    .reg .b64 %rd<4>;
    mov.u32 %r1, smap;
    mov.b64 %rd1, 0;
    mov.b64 %rd2, 4096;
    tensormap.replace.tile.global_address.global.b1024.b64 [%rd2], %rd1;
    SHARED
    ret;";
    let e = run(&body.replace("SHARED", ""), "", &Config::default());
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    let shared = "tensormap.replace.tile.global_address.shared::cta.b1024.b64 [%r1], %rd1;";
    let e = run(&body.replace("SHARED", shared), "", &Config::default());
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    let writes: Vec<(u32, u32)> = views(&e, 0)
        .into_iter()
        .filter_map(|v| match v {
            CommandView::Access {
                kind: weft_program::AccessKind::Write,
                addr,
                len,
                ..
            } => Some((addr, len)),
            _ => None,
        })
        .collect();
    assert_eq!(writes, [(0, 128)]);
    let other = "tensormap.future_op.shared::cta.b1024.b64 [%r1], %rd1;";
    let (why, _, _) = unverifiable_reason(&body.replace("SHARED", other), "", &Config::default());
    assert!(matches!(why, Why::Unsupported), "{why:?}");
}

/// A register holds 64 bits: a 128-bit value (`ld.shared.b128`, `mov.b128` of two 64-bit
/// registers, as CUTLASS and the CuTe DSL move cluster launch control's answers) is known
/// only while its upper 64 bits are known zeros, and its parts beyond 64 bits unpack as
/// those zeros. Before, packing a nonzero upper half shifted by 64 bits (a debug-build
/// panic; in release the halves were ORed together) and a 128-bit load dropped the upper
/// half of a known value.
#[test]
fn values_wider_than_a_register_are_known_only_with_a_zero_upper_half() {
    let body = |upper: &str, via: &str| {
        format!(
            r#"
    .shared .align 16 .b8 buf[16];
    .reg .b32 %r<12>;
    .reg .b64 %rd<4>;
    .reg .b128 %q<2>;
    mov.u32 %r1, buf;
    mov.u32 %r2, 32;
    mov.u32 %r3, {upper};
    st.shared.v4.u32 [%r1], {{%r2, %r2, %r3, %r3}};
    bar.sync 0;
    {via}
    mov.b128 {{%r4, %r5, %r6, %r7}}, %q1;
    bar.sync 1, %r4;
    bar.sync 1, %r5;
    ret;
    "#
        )
    };
    let load = "ld.shared.b128 %q1, [%r1];";
    let pack = "ld.shared.v2.u64 {%rd1, %rd2}, [%r1];\n    mov.b128 %q1, {%rd1, %rd2};";
    for via in [load, pack] {
        // Upper half zero: the lower words are known (the barrier counts are 32).
        let e = run(&body("0", via), "", &Config::default());
        assert!(e.unverifiable.is_empty(), "{via}: {:?}", e.unverifiable);
        // Upper half nonzero: the whole value is unknown, so is the barrier count.
        let (why, _, sources) = unverifiable_reason(&body("7", via), "", &Config::default());
        assert!(matches!(why, Why::Unknown(_)), "{via}: {why:?}");
        assert!(
            sources.iter().any(|s| matches!(
                s,
                ValueSource::Other(m) if m.contains("beyond 64")
            )),
            "{via}: {sources:?}"
        );
    }
}

/// A function-local static's source name is its own, not nvcc's mangling; other names are
/// unchanged, and a malformed mangling stays as it is.
#[test]
fn shared_symbols_name_their_source() {
    let name = |n: &str| {
        crate::SharedSymbol {
            name: n.into(),
            offset: 0,
            size: None,
            align: 1,
        }
        .source_name()
        .to_owned()
    };
    assert_eq!(name("_ZZ15missing_barrierPKfPfE1s"), "s");
    assert_eq!(name("_ZZ4skewPfE5tileA"), "tileA");
    assert_eq!(name("buf"), "buf");
    assert_eq!(
        name("_ZZ1kE18446744073709551615x"),
        "_ZZ1kE18446744073709551615x"
    );
    assert_eq!(name("_ZZ4fooE"), "_ZZ4fooE");
}

/// Alignment is decided up to the declared alignment of the variable an address lies in:
/// an 8-byte store 4 bytes into a `.align 8` array is misaligned wherever the array sits; an
/// 8-byte store 2 bytes into a `.align 2` array is aligned or not depending on where the
/// compiler puts it (not reported), a 4-byte store 1 byte into it is misaligned anyway; a
/// lane-varying address is reported for the lanes it is misaligned in only.
#[test]
fn misalignment_is_decided_by_the_declared_alignment() {
    let body = r#"
    .shared .align 8 .b8 a[64];
    .shared .align 2 .b8 b[64];
    .reg .pred %p1;
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    mov.u32 %r1, %tid.x;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra DONE;
    mov.u64 %rd1, 7;
    st.shared.u64 [a+4], %rd1;
    st.shared.u64 [b+2], %rd1;
    st.shared.u32 [b+1], %r1;
    st.shared.u64 [a+8], %rd1;
DONE:
    bar.sync 0;
    and.b32 %r2, %r1, 1;
    shl.b32 %r3, %r2, 2;
    mov.u32 %r4, a;
    add.s32 %r5, %r4, %r3;
    ld.shared.u64 %rd2, [%r5+32];
    ret;
    "#;
    let e = run(body, "", &Config::default());
    let misaligned: Vec<&crate::Finding> = e
        .findings
        .iter()
        .filter(|f| f.kind == crate::FindingKind::MisalignedAddress)
        .collect();
    let messages: Vec<&str> = misaligned.iter().map(|f| f.message.as_str()).collect();
    assert_eq!(misaligned.len(), 2 + 32, "{messages:#?}");
    assert!(
        messages[0].contains("4 bytes into `a`") && messages[0].contains("aligned to 8 bytes"),
        "{messages:#?}"
    );
    assert!(
        messages[1].contains("1 bytes into `b`") && messages[1].contains("aligned to 4 bytes"),
        "{messages:#?}"
    );
    let load = misaligned[2].inst;
    let mut threads: Vec<u32> = misaligned[2..].iter().map(|f| f.thread.0).collect();
    threads.sort_unstable();
    assert!(misaligned[2..].iter().all(|f| f.inst == load));
    assert_eq!(threads, (0..32).map(|k| 2 * k + 1).collect::<Vec<u32>>());
}
