//! Tests on hand-written PTX: each asserts concrete commands.

use weft_program::{
    AccessKind, BarrierCount, BarrierOp, CommandView, CtaShape, ExecOp, MbarrierOp, ThreadEnd,
};

use crate::{
    Config, Emulation, GuardedOp, ParamBinding, ParamRef, ParamValue, Region, ScalarType, Value,
    ValueSource, Why, emulate,
};
use weft_program::InstId;

/// The module of one kernel `k` (sm_90, at most 64 threads) with parameters `params` and
/// body `body`.
pub(crate) fn kernel_source(params: &str, body: &str) -> String {
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k({params})\n.maxntid 64, 1, 1\n{{\n{body}\n}}\n"
    )
}

fn run(body: &str, params: &str, cfg: &Config) -> Emulation {
    let src = kernel_source(params, body);
    let module = ptx_parser::parse(&src).expect("test PTX parses");
    emulate(&module, "k", cfg).expect("emulation runs")
}

/// The IR of the kernel `k` with parameters `params` and body `body` (sm_90, 64 threads).
pub(crate) fn lower_kernel(params: &str, body: &str) -> crate::ir::Ir {
    let src = kernel_source(params, body);
    let module = ptx_parser::parse(&src).expect("test PTX parses");
    crate::ir::lower(
        &module,
        module.function("k").expect("kernel"),
        &Config::default(),
    )
    .expect("lowers")
}

fn views(e: &Emulation, t: usize) -> Vec<CommandView> {
    e.program.threads[t]
        .commands
        .iter()
        .map(|c| c.view())
        .collect()
}

/// The asynchronous copies: (issuer, issue position, access, completing position, phase
/// commands).
type CopyView = (u32, u32, CommandView, Option<u32>, Vec<u32>);

fn copies(e: &Emulation) -> Vec<CopyView> {
    e.program
        .asyncs
        .copies
        .iter()
        .map(|c| {
            (
                c.issuer.0,
                c.issue,
                c.access.view(),
                c.done,
                c.phases.clone(),
            )
        })
        .collect()
}

fn read(addr: u32, len: u32) -> CommandView {
    CommandView::Access {
        kind: AccessKind::Read,
        addr,
        len,
        may: false,
        approx: false,
    }
}
fn approx(v: CommandView) -> CommandView {
    match v {
        CommandView::Access {
            kind,
            addr,
            len,
            may,
            ..
        } => CommandView::Access {
            kind,
            addr,
            len,
            may,
            approx: true,
        },
        other => other,
    }
}
fn write(addr: u32, len: u32) -> CommandView {
    CommandView::Access {
        kind: AccessKind::Write,
        addr,
        len,
        may: false,
        approx: false,
    }
}
fn sync(id: u32, count: BarrierCount) -> CommandView {
    CommandView::Barrier {
        op: BarrierOp::Sync,
        id,
        count,
        aligned: true,
    }
}

const EXCHANGE: &str = r#"
    .reg .b32 %r<10>;
    .reg .f32 %f<3>;
    .shared .align 4 .b8 pad[8];
    .shared .align 4 .b8 s[256];
    .shared .align 8 .b8 o[264];
    mov.u32 %r1, %tid.x;
    shl.b32 %r2, %r1, 2;
    mov.u32 %r3, s;
    add.s32 %r4, %r3, %r2;
    st.shared.u32 [%r4], %r1;
    bar.sync 0;
    sub.s32 %r5, 63, %r1;
    shl.b32 %r6, %r5, 2;
    add.s32 %r7, %r3, %r6;
    ld.shared.u32 %r8, [%r7];
    shl.b32 %r9, %r8, 2;
    mov.u32 %r3, o;
    add.s32 %r9, %r9, %r3;
    st.shared.v2.f32 [%r9+0], {%f1, %f2};
    ret;
"#;

#[test]
fn shared_round_trip_keeps_values_known() {
    let e = run(EXCHANGE, "", &Config::default());
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    assert_eq!(e.shared[1].offset, 8);
    // Thread 5 writes s[5], reads s[58] (which holds 58), then writes 8 bytes at s[58].
    assert_eq!(
        views(&e, 5),
        vec![
            write(8 + 20, 4),
            sync(0, BarrierCount::All),
            read(8 + 58 * 4, 4),
            write(264 + 58 * 4, 8),
            CommandView::Exit
        ]
    );
    assert_eq!(e.program.threads[5].end, ThreadEnd::Exited);
    assert_eq!(e.stats.instructions, 64 * 15);
}

#[test]
fn barrier_ids_and_counts_from_tid() {
    let body = r#"
    .reg .b32 %r<6>;
    mov.u32 %r1, %tid.x;
    shr.u32 %r2, %r1, 5;
    add.s32 %r3, %r2, 1;
    shl.b32 %r4, %r3, 5;
    bar.arrive 5, 64;
    barrier.sync %r3, %r4;
    exit;
    "#;
    let cfg = Config {
        threads: Some(CtaShape::linear(64)),
        ..Config::default()
    };
    let e = run(body, "", &cfg);
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    assert_eq!(
        views(&e, 40)[..2],
        [
            CommandView::Barrier {
                op: BarrierOp::Arrive,
                id: 5,
                count: BarrierCount::Threads(64),
                aligned: true
            },
            CommandView::Barrier {
                op: BarrierOp::Sync,
                id: 2,
                count: BarrierCount::Threads(64),
                aligned: false
            },
        ]
    );
    assert_eq!(
        views(&e, 3)[1],
        CommandView::Barrier {
            op: BarrierOp::Sync,
            id: 1,
            count: BarrierCount::Threads(32),
            aligned: false
        }
    );
}

#[test]
fn elect_with_a_sink_lane_id_elects_one_lane_per_warp() {
    // FlashAttention-4's inline asm writes `elect.sync _|leader, -1;`.
    let body = r#"
    .reg .pred leader;
    .shared .align 4 .b8 s[8];
    elect.sync _|leader, -1;
    @leader st.shared.u32 [s], 1;
    ret;
"#;
    let e = run(body, "", &Config::default());
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    let s = e.shared[0].offset;
    // Each warp's lanes met at the collective: one execution event per warp, the same in
    // all its lanes.
    let event = |t: usize| match views(&e, t)[0] {
        CommandView::Exec {
            op: ExecOp::Sync,
            event,
        } => event,
        v => panic!("thread {t} starts with {v:?}"),
    };
    assert_ne!(event(0), event(32));
    assert_eq!(views(&e, 0)[1..], [write(s, 4), CommandView::Exit]);
    assert_eq!(views(&e, 32)[1..], [write(s, 4), CommandView::Exit]);
    for t in (1..32).chain(33..64) {
        assert_eq!(event(t), event(t / 32 * 32), "thread {t}");
        assert_eq!(views(&e, t)[1..], [CommandView::Exit], "thread {t}");
    }
}

#[test]
fn shuffles_exchange_known_values() {
    let body = r#"
    .reg .b32 %r<8>;
    .reg .pred %p1;
    .shared .align 4 .b8 s[512];
    mov.u32 %r1, %laneid;
    shfl.sync.down.b32 %r2|%p1, %r1, 3, 31, -1;
    shfl.sync.bfly.b32 %r3, %r1, 1, 31, -1;
    shfl.sync.idx.b32 %r4, %r1, 7, 31, -1;
    add.s32 %r5, %r2, %r3;
    add.s32 %r5, %r5, %r4;
    shl.b32 %r6, %r5, 2;
    mov.u32 %r7, s;
    add.s32 %r6, %r6, %r7;
    st.shared.u32 [%r6], %r1;
    ret;
    "#;
    let e = run(body, "", &Config::default());
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    // Three rendezvous of the same lanes with nothing between them: one execution event
    // (the later two would order nothing new), then the store.
    // lane 2: down 3 -> 5, bfly 1 -> 3, idx 7 -> 7: 15.
    assert_eq!(views(&e, 2)[1], write(15 * 4, 4));
    // lane 30: down 3 is out of range -> own value 30; bfly -> 31; idx -> 7: 68.
    assert_eq!(views(&e, 30)[1], write(68 * 4, 4));
    assert!(matches!(
        views(&e, 30)[0],
        CommandView::Exec {
            op: ExecOp::Sync,
            ..
        }
    ));
}

#[test]
fn device_function_call_with_params() {
    let src = r#"
.version 8.0
.target sm_80
.address_size 64
.func (.param .b32 ret0) twice(.param .b32 a)
{
    .reg .b32 %r<3>;
    ld.param.b32 %r1, [a];
    shl.b32 %r2, %r1, 1;
    st.param.b32 [ret0], %r2;
    ret;
}
.visible .entry k()
.reqntid 32
{
    .reg .b32 %r<5>;
    .shared .align 4 .b8 s[256];
    mov.u32 %r1, %tid.x;
    {
    .param .b32 p0;
    st.param.b32 [p0], %r1;
    .param .b32 r0;
    call.uni (r0), twice, (p0);
    ld.param.b32 %r2, [r0];
    }
    shl.b32 %r3, %r2, 2;
    mov.u32 %r1, s;
    add.s32 %r3, %r3, %r1;
    mov.u32 %r1, %tid.x;
    st.shared.u32 [%r3], %r1;
    ret;
}
"#;
    let module = ptx_parser::parse(src).expect("parses");
    let e = emulate(&module, "k", &Config::default()).expect("runs");
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    assert_eq!(views(&e, 7), vec![write(56, 4), CommandView::Exit]);
}

const BOUNDS: &str = r#"
    .reg .b32 %r<8>;
    .reg .b64 %rd<4>;
    .reg .f32 %f1;
    .reg .pred %p1;
    .shared .align 4 .b8 s[512];
    ld.param.u32 %r1, [n];
    ld.param.u64 %rd1, [out];
    mov.u32 %r2, %tid.x;
    setp.ge.u32 %p1, %r2, %r1;
    @%p1 bra DONE;
    sub.s32 %r3, 127, %r2;
    shl.b32 %r4, %r3, 2;
    mov.u32 %r5, s;
    add.s32 %r6, %r5, %r4;
    ld.shared.f32 %f1, [%r6];
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    st.global.f32 [%rd3], %f1;
    mov.u32 %r7, 5;
DONE:
    bar.sync 0;
    ret;
"#;

#[test]
fn unknown_branch_around_accesses_is_may() {
    let e = run(BOUNDS, ".param .u32 n, .param .u64 out", &Config::default());
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    assert_eq!(
        views(&e, 3),
        vec![
            CommandView::Access {
                kind: AccessKind::Read,
                addr: 124 * 4,
                len: 4,
                may: true,
                approx: false,
            },
            sync(0, BarrierCount::All),
            CommandView::Exit
        ]
    );
}

#[test]
fn unknown_branch_bound_by_param_is_exact() {
    let cfg = Config {
        params: vec![param("n", None, 10)],
        ..Config::default()
    };
    let e = run(BOUNDS, ".param .u32 n, .param .u64 out", &cfg);
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    assert_eq!(views(&e, 3)[0], read(124 * 4, 4));
    assert_eq!(
        views(&e, 12),
        vec![sync(0, BarrierCount::All), CommandView::Exit]
    );
}

fn unverifiable_reason(
    body: &str,
    params: &str,
    cfg: &Config,
) -> (Why, Option<String>, Vec<ValueSource>) {
    let e = run(body, params, cfg);
    let u = e
        .unverifiable
        .first()
        .unwrap_or_else(|| panic!("expected unverifiable: {:?}", views(&e, 0)));
    (u.why.clone(), u.register.clone(), u.sources.clone())
}

/// Parameter `target` (an index, else a name) fixed to `value`: the whole parameter, or
/// the field of `bytes` bytes at `field`.
fn param(target: &str, field: Option<(u64, u8)>, value: i128) -> ParamBinding {
    ParamBinding {
        target: match target.parse() {
            Ok(i) => ParamRef::Index(i),
            Err(_) => ParamRef::Name(target.into()),
        },
        field: field.map(|(at, bytes)| (at, ScalarType::Unsigned(bytes))),
        value: ParamValue::Int(value),
    }
}

fn param_n() -> Vec<ValueSource> {
    vec![ValueSource::Param {
        index: 0,
        name: "n".into(),
        offset: None,
    }]
}

#[test]
fn unknown_barrier_id_is_unverifiable() {
    let body = "ld.param.u32 %r1, [n];\n bar.sync %r1;\n ret;\n .reg .b32 %r1;";
    let (why, reg, sources) = unverifiable_reason(body, ".param .u32 n", &Config::default());
    assert_eq!(why, Why::Unknown(Value::BarrierId));
    assert_eq!(reg.as_deref(), Some("%r1"));
    assert_eq!(sources, param_n());
}

#[test]
fn unknown_barrier_count_is_unverifiable() {
    let body = ".reg .b32 %r1;\n ld.param.u32 %r1, [n];\n bar.sync 1, %r1;\n ret;";
    let (why, reg, sources) = unverifiable_reason(body, ".param .u32 n", &Config::default());
    assert_eq!(why, Why::Unknown(Value::BarrierCount));
    assert_eq!(reg.as_deref(), Some("%r1"));
    assert_eq!(sources, param_n());
}

#[test]
fn unknown_shared_address_is_unverifiable() {
    let body = ".reg .b32 %r<3>;\n .shared .b8 s[64];\n ld.param.u32 %r1, [n];\n st.shared.u32 [%r1], 0;\n ret;";
    let (why, reg, _) = unverifiable_reason(body, ".param .u32 n", &Config::default());
    assert_eq!(why, Why::Unknown(Value::SharedAddress));
    assert_eq!(reg.as_deref(), Some("%r1"));
}

#[test]
fn unknown_branch_around_barrier_is_unverifiable() {
    let body = ".reg .b32 %r1;\n .reg .pred %p;\n ld.param.u32 %r1, [n];\n setp.eq.u32 %p, %r1, 0;\n @%p bra L;\n bar.sync 0;\n L:\n ret;";
    let (why, reg, sources) = unverifiable_reason(body, ".param .u32 n", &Config::default());
    // The `bar.sync` is instruction 3 (after `ld`, `setp`, `bra`).
    assert_eq!(why, Why::BranchDecidesSync(Region::Synchronizes(InstId(3))));
    assert_eq!(reg.as_deref(), Some("%p"));
    assert_eq!(sources, param_n());
}

#[test]
fn guarded_barrier_is_unverifiable() {
    let body = ".reg .b32 %r1;\n .reg .pred %p;\n ld.param.u32 %r1, [n];\n setp.eq.u32 %p, %r1, 0;\n @%p bar.sync 0;\n ret;";
    let (why, reg, _) = unverifiable_reason(body, ".param .u32 n", &Config::default());
    assert_eq!(why, Why::Guarded(GuardedOp::Synchronization));
    assert_eq!(reg.as_deref(), Some("%p"));
}

const PARAM_LOOP: &str = r#"
    .reg .b32 %r<4>;
    .reg .pred %p;
    ld.param.u32 %r1, [n];
    mov.u32 %r2, 0;
LOOP:
    bar.sync 0;
    add.s32 %r2, %r2, 1;
    setp.lt.u32 %p, %r2, %r1;
    @%p bra LOOP;
    ret;
"#;

#[test]
fn parameter_bound_loop_needs_param() {
    let (why, _, sources) = unverifiable_reason(PARAM_LOOP, ".param .u32 n", &Config::default());
    assert!(matches!(why, Why::BranchDecidesSync(_)), "{why:?}");
    assert_eq!(sources, param_n());
    let cfg = Config {
        params: vec![param("0", None, 3)],
        ..Config::default()
    };
    let e = run(PARAM_LOOP, ".param .u32 n", &cfg);
    assert!(e.unverifiable.is_empty());
    assert_eq!(
        views(&e, 9),
        vec![sync(0, BarrierCount::All); 3]
            .into_iter()
            .chain([CommandView::Exit])
            .collect::<Vec<_>>()
    );
}

#[test]
fn step_budget_stops_runaway_loops() {
    let body = "L:\n bra L;\n";
    let cfg = Config {
        step_limit: 1000,
        ..Config::default()
    };
    let (why, _, _) = unverifiable_reason(body, "", &cfg);
    assert!(why == Why::StepBudget { limit: 1000 }, "{why:?}");
}

#[test]
fn two_dimensional_cta() {
    let body = r#"
    .reg .b32 %r<6>;
    .shared .align 4 .b8 s[1024];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, %tid.y;
    mov.u32 %r3, %ntid.x;
    mad.lo.s32 %r4, %r2, %r3, %r1;
    shl.b32 %r5, %r4, 2;
    mov.u32 %r1, s;
    add.s32 %r5, %r5, %r1;
    st.shared.u32 [%r5], %r2;
    ret;
    "#;
    let cfg = Config {
        threads: Some(CtaShape { x: 8, y: 4, z: 2 }),
        ..Config::default()
    };
    let e = run(body, "", &cfg);
    // Thread 8*4 + 8*1 + 3 = 43 is (3, 1, 1): linear index within a z-slice is 11.
    assert_eq!(views(&e, 43)[0], write(11 * 4, 4));
    assert_eq!(e.program.threads.len(), 64);
}

#[test]
fn warp_sync_records_steps() {
    let body = r#"
    .reg .b32 %r<4>;
    .reg .pred %p;
    .shared .align 4 .b8 s[256];
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p, %r1, 16;
    @%p bra A;
    st.shared.u32 [s+4], %r1;
    bra.uni B;
A:
    st.shared.u32 [s], %r1;
B:
    bar.warp.sync -1;
    ld.shared.u32 %r2, [s];
    ret;
    "#;
    let cfg = Config {
        warp_sync: true,
        threads: Some(CtaShape::linear(32)),
        ..Config::default()
    };
    let e = run(body, "", &cfg);
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    let t0 = &e.program.threads[0];
    let t20 = &e.program.threads[20];
    assert_eq!(
        views(&e, 0),
        vec![
            write(0, 4),
            CommandView::WarpSync { mask: u32::MAX },
            read(0, 4),
            CommandView::Exit
        ]
    );
    assert_eq!(views(&e, 20)[0], write(4, 4));
    // Lanes 16.. run their side first (lower PC), then lanes 0..16; they reconverge at B.
    assert!(t20.steps[0] < t0.steps[0]);
    assert_eq!(t0.steps[1], t20.steps[1]);
    assert_eq!(t0.steps[2], t20.steps[2]);
}

const MBAR: &str = r#"
    .reg .b32 %r<6>;
    .reg .pred %p<3>;
    .shared .align 8 .b8 bar[8];
    .shared .align 4 .b8 buf[128];
    mov.u32 %r1, %tid.x;
    mov.u32 %r2, bar;
    setp.ne.u32 %p1, %r1, 0;
    @%p1 bra WAIT;
    mbarrier.init.shared::cta.b64 [%r2], 1;
    mbarrier.arrive.expect_tx.shared::cta.b64 _, [%r2], 64;
    cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [buf], [%rd1], 64, [%r2];
WAIT:
    bar.sync 0;
    {
    .reg .pred P1;
LAB_WAIT:
    mbarrier.try_wait.parity.shared::cta.b64 P1, [%r2], 0;
    @P1 bra DONE;
    bra LAB_WAIT;
DONE:
    }
    ld.shared.u32 %r3, [buf];
    ret;
    .reg .b64 %rd1;
"#;

#[test]
fn mbarrier_pipeline_blocks_and_wakes() {
    let e = run(MBAR, "", &Config::default());
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    assert!(e.findings.is_empty(), "{:?}", e.findings);
    let v0 = views(&e, 0);
    // The init writes the object's 8 bytes (an access of the race stage) before it counts.
    assert_eq!(v0[0], write(0, 8));
    assert_eq!(
        v0[1],
        CommandView::Mbarrier {
            op: MbarrierOp::Init,
            addr: 0,
            value: 1
        }
    );
    assert_eq!(
        v0[2],
        CommandView::Mbarrier {
            op: MbarrierOp::ArriveExpectTx,
            addr: 0,
            value: 64
        }
    );
    // The copy's write is an agent of its own, issued before its complete_tx (command 3),
    // ending before the phase that command is counted in.
    assert_eq!(
        v0[3],
        CommandView::Mbarrier {
            op: MbarrierOp::CompleteTx,
            addr: 0,
            value: 64
        }
    );
    assert_eq!(copies(&e), vec![(0, 3, write(8, 64), None, vec![3])]);
    assert_eq!(
        views(&e, 9),
        vec![
            sync(0, BarrierCount::All),
            CommandView::Mbarrier {
                op: MbarrierOp::WaitParity,
                addr: 0,
                value: 0
            },
            read(8, 4),
            CommandView::Exit
        ]
    );
}

#[test]
fn deadlock_leaves_threads_blocked() {
    let body = ".reg .b32 %r1;\n .reg .pred %p;\n mov.u32 %r1, %tid.x;\n setp.lt.u32 %p, %r1, 32;\n @%p bra L;\n bar.sync 1, 64;\n L:\n ret;";
    let e = run(body, "", &Config::default());
    assert!(e.unverifiable.is_empty());
    assert_eq!(e.program.threads[40].end, ThreadEnd::Blocked);
    assert_eq!(e.program.threads[0].end, ThreadEnd::Exited);
}

#[test]
fn bar_red_popc_result() {
    let body = r#"
    .reg .b32 %r<4>;
    .reg .pred %p;
    .shared .align 4 .b8 s[1024];
    mov.u32 %r1, %tid.x;
    setp.lt.u32 %p, %r1, 10;
    bar.red.popc.u32 %r2, 0, %p;
    shl.b32 %r3, %r2, 2;
    mov.u32 %r1, s;
    add.s32 %r3, %r3, %r1;
    mov.u32 %r1, %tid.x;
    st.shared.u32 [%r3], %r1;
    ret;
    "#;
    let e = run(body, "", &Config::default());
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    assert_eq!(views(&e, 33)[1], write(40, 4));
}

/// `bfind` is computed (PTX ISA, *bfind*): the address each thread stores to is the bit
/// position (or, with `.shiftamt`, the shift) its operand gives, and `0xffffffff` for no
/// bit; a signed operand finds its most significant bit that differs from the sign.
#[test]
fn bfind_is_computed() {
    let cases: [(&str, u32, u32); 6] = [
        ("bfind.u32", 0x10, 4),
        ("bfind.shiftamt.u32", 0x10, 27),
        ("bfind.u32", 0, 0xffff_ffff),
        ("bfind.s32", 0xffff_fffe, 0),
        ("bfind.s32", 0xffff_ffff, 0xffff_ffff),
        ("bfind.shiftamt.s32", 0x0000_00ff, 24),
    ];
    for (op, operand, expect) in cases {
        let body = format!(
            ".reg .b32 %r<4>;\n .shared .align 4 .b8 s[1024];\n mov.u32 %r1, {operand};\n \
             {op} %r2, %r1;\n and.b32 %r3, %r2, 1023;\n st.shared.u8 [%r3], 0;\n ret;"
        );
        let e = run(&body, "", &Config::default());
        assert!(
            e.unverifiable.is_empty(),
            "{op} {operand:#x}: {:?}",
            e.unverifiable
        );
        assert_eq!(
            views(&e, 0)[0],
            write(expect & 1023, 1),
            "{op} {operand:#x}"
        );
    }
}

#[test]
fn shared_out_of_bounds_is_a_finding() {
    let body = ".reg .b32 %r1;\n .shared .align 4 .b8 s[16];\n mov.u32 %r1, %tid.x;\n shl.b32 %r1, %r1, 2;\n st.shared.u32 [%r1], 0;\n ret;";
    let e = run(body, "", &Config::default());
    assert_eq!(e.findings.len(), 60);
    assert!(
        e.findings[0]
            .message
            .contains("lies outside the 16-byte shared window"),
        "{}",
        e.findings[0].message
    );
}

#[test]
fn unknown_guarded_store_is_may_and_clobbers() {
    let body = r#"
    .reg .b32 %r<6>;
    .reg .pred %p1;
    .shared .align 4 .b8 s[256];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    setp.lt.u32 %p1, %r2, %r1;
    shl.b32 %r3, %r2, 2;
    @%p1 st.shared.u32 [%r3], %r2;
    @%p1 ld.shared.u32 %r4, [%r3];
    bar.sync 0;
    ld.shared.u32 %r5, [%r3];
    ret;
    "#;
    let e = run(body, ".param .u32 n", &Config::default());
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    assert_eq!(
        views(&e, 4),
        vec![
            CommandView::Access {
                kind: AccessKind::Write,
                addr: 16,
                len: 4,
                may: true,
                approx: false,
            },
            CommandView::Access {
                kind: AccessKind::Read,
                addr: 16,
                len: 4,
                may: true,
                approx: false,
            },
            sync(0, BarrierCount::All),
            read(16, 4),
            CommandView::Exit
        ]
    );
}

#[test]
fn struct_param_field_binding() {
    let body = r#"
    .reg .b32 %r<4>;
    .reg .pred %p;
    ld.param.u32 %r1, [P+12];
    mov.u32 %r2, 0;
L:
    bar.sync 0;
    add.s32 %r2, %r2, 1;
    setp.lt.u32 %p, %r2, %r1;
    @%p bra L;
    ret;
    "#;
    let params = ".param .align 8 .b8 P[32]";
    let (why, _, sources) = unverifiable_reason(body, params, &Config::default());
    assert!(matches!(why, Why::BranchDecidesSync(_)), "{why:?}");
    assert_eq!(
        sources,
        vec![ValueSource::ParamBytes {
            index: 0,
            name: "P".into(),
            start: 12,
            end: 16,
        }]
    );
    let cfg = Config {
        params: vec![param("P", Some((12, 4)), 2)],
        ..Config::default()
    };
    let e = run(body, params, &cfg);
    assert!(e.unverifiable.is_empty());
    assert_eq!(views(&e, 0).len(), 3);
}

mod calls;
mod collectives;
mod control;
mod explore;
mod induct;
mod memory;
mod samples;
mod tensor;
mod warp;
mod warpgroup;
