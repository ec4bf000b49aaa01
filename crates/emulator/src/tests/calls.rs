//! Calls to functions without a body, assertions and initialized module data.

use weft_program::{CommandView, ThreadEnd};

use crate::{Config, Emulation, FindingKind, Value, Why, emulate};

const PRELUDE: &str = r#"
.extern .func __assertfail
(
	.param .b64 __assertfail_param_0,
	.param .b64 __assertfail_param_1,
	.param .b32 __assertfail_param_2,
	.param .b64 __assertfail_param_3,
	.param .b64 __assertfail_param_4
)
;
.extern .func (.param .b32 func_retval0) vprintf
(
	.param .b64 vprintf_param_0,
	.param .b64 vprintf_param_1
)
;
.extern .func mystery
(
	.param .b32 mystery_param_0
)
;
.global .align 1 .b8 $str[7] = {116, 32, 33, 61, 32, 53};
.global .align 1 .b8 $str$1[5] = {107, 46, 99, 117};
.global .align 1 .b8 $str$2[4] = {102, 110, 40, 41};
.global .align 1 .b8 $fmt[4] = {37, 100, 10};
.global .align 4 .b8 perm[16] = {3, 0, 0, 0, 2, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0};
"#;

/// The `__assertfail` call nvcc emits for `assert(t != 5)` in `fn()` at k.cu:7.
const ASSERT_CALL: &str = r#"
	mov.u64 %rd5, $str;
	cvta.global.u64 %rd6, %rd5;
	mov.u64 %rd7, $str$1;
	cvta.global.u64 %rd8, %rd7;
	mov.u64 %rd9, $str$2;
	cvta.global.u64 %rd10, %rd9;
	{
	.param .b64 param0;
	st.param.b64 [param0+0], %rd6;
	.param .b64 param1;
	st.param.b64 [param1+0], %rd8;
	.param .b32 param2;
	st.param.b32 [param2+0], 7;
	.param .b64 param3;
	st.param.b64 [param3+0], %rd10;
	.param .b64 param4;
	st.param.b64 [param4+0], 1;
	call.uni __assertfail, (param0, param1, param2, param3, param4);
	}
"#;

fn run_with(body: &str, cfg: &Config) -> Emulation {
    let src = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n{PRELUDE}\n.visible .entry k(.param .u64 k_p0)\n.maxntid 64, 1, 1\n{{\n.reg .pred %p<4>;\n.reg .b32 %r<20>;\n.reg .b64 %rd<20>;\n.shared .align 4 .b8 s[256];\n{body}\n}}\n"
    );
    let module = ptx_parser::parse(&src).expect("test PTX parses");
    emulate(&module, "k", cfg).expect("emulation runs")
}

fn run(body: &str) -> Emulation {
    run_with(body, &Config::default())
}

fn reasons(e: &Emulation) -> Vec<&Why> {
    e.unverifiable.iter().map(|u| &u.why).collect()
}

fn barriers(e: &Emulation, t: usize) -> usize {
    e.program.threads[t]
        .commands
        .iter()
        .filter(|c| matches!(c.view(), CommandView::Barrier { .. }))
        .count()
}

#[test]
fn an_assertion_failing_for_known_values_traps_that_thread_only() {
    let e = run(&format!(
        "mov.u32 %r1, %tid.x;\n setp.ne.s32 %p1, %r1, 5;\n @%p1 bra DONE;\n{ASSERT_CALL}\nDONE:\n ret;"
    ));
    assert!(e.unverifiable.is_empty(), "{:?}", reasons(&e));
    assert_eq!(e.findings.len(), 1, "{:?}", e.findings);
    let f = &e.findings[0];
    assert_eq!(f.kind, FindingKind::TrapReachable);
    assert_eq!(f.thread.0, 5);
    let a = f.assertion.as_ref().expect("the assertion is decoded");
    assert_eq!(a.message.as_deref(), Some("t != 5"));
    assert_eq!(a.file.as_deref(), Some("k.cu"));
    assert_eq!(a.line, Some(7));
    assert_eq!(a.function.as_deref(), Some("fn()"));
    assert!(f.message.contains("t != 5"), "{}", f.message);
    assert!(matches!(e.program.threads[5].end, ThreadEnd::Trapped(_)));
    // The other threads are not stopped by the trap: they run to their end.
    assert_eq!(e.program.threads[4].end, ThreadEnd::Exited);
    assert_eq!(e.program.threads[63].end, ThreadEnd::Exited);
}

#[test]
fn an_assertion_on_an_input_is_assumed_and_the_barriers_after_it_are_emulated() {
    let e = run(&format!(
        "ld.param.u64 %rd1, [k_p0];\n ld.global.u32 %r1, [%rd1];\n setp.gt.s32 %p1, %r1, -1;\n @%p1 bra OK;\n{ASSERT_CALL}\nOK:\n bar.sync 0;\n bar.sync 0;\n ret;"
    ));
    assert!(e.unverifiable.is_empty(), "{:?}", reasons(&e));
    assert!(e.findings.is_empty(), "{:?}", e.findings);
    assert_eq!(e.assumptions.len(), 1, "{:?}", e.assumptions);
    let a = &e.assumptions[0];
    assert_eq!(
        a.assertion.as_ref().and_then(|a| a.message.as_deref()),
        Some("t != 5")
    );
    assert!(a.branch.0 < a.inst.0);
    assert_eq!(barriers(&e, 0), 2);
    assert_eq!(barriers(&e, 63), 2);
}

#[test]
fn a_trap_guarded_by_an_input_is_assumed_not_reached() {
    let e = run(
        "ld.param.u64 %rd1, [k_p0];\n ld.global.u32 %r1, [%rd1];\n setp.eq.s32 %p1, %r1, 0;\n @%p1 trap;\n bar.sync 0;\n ret;",
    );
    assert!(e.unverifiable.is_empty(), "{:?}", reasons(&e));
    assert_eq!(e.assumptions.len(), 1);
    assert!(e.assumptions[0].assertion.is_none());
    assert_eq!(barriers(&e, 0), 1);
}

#[test]
fn a_failing_side_that_synchronizes_is_not_an_assertion() {
    let e = run(&format!(
        "ld.param.u64 %rd1, [k_p0];\n ld.global.u32 %r1, [%rd1];\n setp.gt.s32 %p1, %r1, -1;\n @%p1 bra OK;\n bar.sync 1, 64;\n{ASSERT_CALL}\nOK:\n bar.sync 0;\n ret;"
    ));
    assert!(e.assumptions.is_empty());
    assert_eq!(e.unverifiable.len(), 1, "{:?}", reasons(&e));
    assert!(matches!(reasons(&e)[0], Why::BranchDecidesSync(_)));
}

const TABLE_INDEX: &str = r#"
    mov.u32 %r1, %tid.x;
    and.b32 %r2, %r1, 3;
    mul.wide.u32 %rd2, %r2, 4;
    mov.u64 %rd3, perm;
    add.s64 %rd4, %rd3, %rd2;
    ld.global.nc.u32 %r3, [%rd4];
    and.b32 %r4, %r1, -4;
    add.s32 %r5, %r4, %r3;
    shl.b32 %r6, %r5, 2;
    mov.u32 %r7, s;
    add.s32 %r8, %r7, %r6;
    st.shared.u32 [%r8], %r1;
"#;

#[test]
fn loads_from_an_initialized_table_are_known() {
    let e = run(&format!("{TABLE_INDEX}\n ret;"));
    assert!(e.unverifiable.is_empty(), "{:?}", reasons(&e));
    // Thread 1 reads perm[1] = 2: it writes slot 2.
    assert_eq!(
        e.program.threads[1].commands[0].view(),
        CommandView::Access {
            kind: weft_program::AccessKind::Write,
            addr: 8,
            len: 4,
            may: false,
            approx: false
        }
    );
    assert!(
        e.notes.iter().any(|n| n.contains("`perm`")),
        "{:?}",
        e.notes
    );

    let no_init = Config {
        initializers: false,
        ..Config::default()
    };
    let e = run_with(&format!("{TABLE_INDEX}\n ret;"), &no_init);
    assert_eq!(e.unverifiable.len(), 1);
    assert_eq!(reasons(&e)[0], &Why::Unknown(Value::SharedAddress));
    assert!(!e.notes.iter().any(|n| n.contains("`perm`")));
}

#[test]
fn a_table_the_kernel_writes_is_unknown() {
    let e = run(&format!(
        "{TABLE_INDEX}\n mov.u64 %rd9, perm;\n st.global.u32 [%rd9+4], %r1;\n ret;"
    ));
    assert_eq!(e.unverifiable.len(), 1, "{:?}", reasons(&e));
    assert_eq!(reasons(&e)[0], &Why::Unknown(Value::SharedAddress));
    assert!(
        e.notes
            .iter()
            .any(|n| n.contains("writes the initialized variables `perm`")),
        "{:?}",
        e.notes
    );
}

#[test]
fn an_unknown_extern_function_is_unverifiable_only_when_called() {
    let called = run(
        "mov.u32 %r1, %tid.x;\n {\n .param .b32 param0;\n st.param.b32 [param0+0], %r1;\n call.uni mystery, (param0);\n }\n ret;",
    );
    assert_eq!(called.unverifiable.len(), 1);
    assert!(
        matches!(reasons(&called)[0], Why::ExternCall { name } if name == "mystery"),
        "{:?}",
        reasons(&called)
    );

    let skipped = run(
        "mov.u32 %r1, %tid.x;\n setp.lt.u32 %p1, %r1, 1000;\n @%p1 bra DONE;\n {\n .param .b32 param0;\n st.param.b32 [param0+0], %r1;\n call.uni mystery, (param0);\n }\nDONE:\n ret;",
    );
    assert!(skipped.unverifiable.is_empty(), "{:?}", reasons(&skipped));
}

#[test]
fn printf_has_no_effect_but_an_unknown_result() {
    let e = run(
        "mov.u64 %rd1, $fmt;\n cvta.global.u64 %rd2, %rd1;\n {\n .param .b64 param0;\n st.param.b64 [param0+0], %rd2;\n .param .b64 param1;\n st.param.b64 [param1+0], 0;\n .param .b32 retval0;\n call.uni (retval0), vprintf, (param0, param1);\n ld.param.b32 %r1, [retval0+0];\n }\n setp.eq.s32 %p1, %r1, 0;\n @%p1 bra DONE;\n st.shared.u32 [s], %r1;\nDONE:\n bar.sync 0;\n ret;",
    );
    assert!(e.unverifiable.is_empty(), "{:?}", reasons(&e));
    assert!(
        e.notes.iter().all(|n| !n.contains("printf")),
        "{:?}",
        e.notes
    );
    // The store depends on printf's unknown result: a may-happen access.
    assert!(matches!(
        e.program.threads[0].commands[0].view(),
        CommandView::Access { may: true, .. }
    ));
}

#[test]
fn a_label_before_the_closing_brace_returns() {
    let e = run(
        "mov.u32 %r1, %tid.x;\n setp.lt.u32 %p1, %r1, 32;\n @%p1 bra END;\n bar.sync 1, 32;\nEND:",
    );
    assert!(e.unverifiable.is_empty(), "{:?}", reasons(&e));
    assert_eq!(e.program.threads[0].end, ThreadEnd::Exited);
    assert_eq!(barriers(&e, 0), 0);
    assert_eq!(barriers(&e, 32), 1);
}
