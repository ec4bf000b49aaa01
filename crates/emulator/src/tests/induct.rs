//! The emulator-level half of the induction over trip counts (`crate::induct`).

use crate::induct::{Left, NotConcluded, induct};
use crate::{Config, Expr, Variable};

fn sample(path: &str) -> String {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    std::fs::read_to_string(format!("{root}/{path}")).expect("sample exists")
}

fn n_of(index: u32, name: &str) -> Variable {
    Variable {
        expr: Expr::Param {
            index,
            name: name.to_owned(),
            start: 0,
            end: 4,
            whole: true,
            signed: false,
            float: false,
        },
        bits: 32,
    }
}

#[test]
fn the_pipeline_sample_repeats_with_period_two() {
    let src = sample("samples/sizes/pipeline.ptx");
    let m = ptx_parser::parse(&src).unwrap();
    let r = induct(
        &m,
        "_Z8pipelinePKfPfi",
        &Config::default(),
        &n_of(2, "_Z8pipelinePKfPfi_param_2"),
        &[],
        &mut Left::unlimited(),
        (0, 1),
    )
    .unwrap();
    let ind = r.unwrap();
    assert_eq!(ind.period, 2);
}

#[test]
fn late_bug_is_not_concluded() {
    let src = sample("samples/sizes/late_bug.ptx");
    let m = ptx_parser::parse(&src).unwrap();
    let r = induct(
        &m,
        "_Z8late_bugPKfPfi",
        &Config::default(),
        &n_of(2, "_Z8late_bugPKfPfi_param_2"),
        &[],
        &mut Left::unlimited(),
        (0, 1),
    )
    .unwrap();
    assert!(matches!(r, Err(NotConcluded::Undecided { .. })), "{r:?}");
}

#[test]
fn every_family_value_has_its_periods_and_tail() {
    let src = sample("samples/sizes/pipeline.ptx");
    let m = ptx_parser::parse(&src).unwrap();
    let ind = induct(
        &m,
        "_Z8pipelinePKfPfi",
        &Config::default(),
        &n_of(2, "_Z8pipelinePKfPfi_param_2"),
        &[],
        &mut Left::unlimited(),
        (0, 1),
    )
    .unwrap()
    .unwrap();
    // The tails cover every distance the family's launches end with.
    let (lo, _) = ind.family;
    for x in lo..lo + 40 {
        let (m, r) = ind.periods(x);
        assert!(m >= 1, "{x}");
        assert!(r >= ind.far - ind.step && r < ind.far, "{x}: {r}");
        assert!(
            ind.tails.iter().any(|(d, _, _)| *d == r),
            "{x}: no tail {r}"
        );
        assert!(ind.values_with(m).contains(&x), "{x}");
    }
    // Two periods of two trips: the values with m periods are two consecutive trip counts.
    assert_eq!(ind.values_with(3).len(), 2);
    // The block is the same number of commands for every thread of a warp.
    assert!(ind.block[..32].iter().all(|&b| b == ind.block[0]));
    assert!(ind.block.iter().all(|&b| b > 0));
}

#[test]
fn the_liveness_of_a_loop_counter_spans_the_loop() {
    let src = sample("samples/sizes/pipeline.ptx");
    let m = ptx_parser::parse(&src).unwrap();
    let (ir, _) = crate::prepare(&m, "_Z8pipelinePKfPfi", &Config::default()).unwrap();
    let live = crate::ir::liveness(&ir);
    let reg = |name: &str| ir.reg_names.iter().position(|r| r == name).unwrap();
    let exit = ir
        .insts
        .iter()
        .rposition(|i| i.op == crate::ir::Op::Bra && i.guard.is_some())
        .unwrap() as u32;
    // At the loop's exit branch the counter (%r43) and the bound (%r12) are live; a value
    // computed and consumed inside one trip (%r28 = i << 7) is not.
    assert!(live.live(exit, reg("%r43")));
    assert!(live.live(exit, reg("%r12")));
    assert!(!live.live(exit, reg("%r28")));
}

/// Which registers the induction may leave out of its comparison: those whose every use is
/// a `.global` address or arithmetic into such registers (a row pointer advanced by a
/// stride). A register that also reaches a comparison, a generic or shared address, or a
/// stored value counts; so does every register once the module has initialized data, which
/// a `.global` address may read.
#[test]
fn global_address_registers_are_only_global_addresses() {
    let body = "
        .reg .pred %p<4>;
        .reg .b32 %r<8>;
        .reg .b64 %rd<16>;
        ld.param.u64 %rd1, [p];
        ld.param.u64 %rd2, [ld];
        shl.b64 %rd3, %rd2, 2;
        add.s64 %rd4, %rd1, %rd3;
        ld.global.u32 %r1, [%rd4];
        add.s64 %rd5, %rd1, 8;
        ld.global.u32 %r2, [%rd5];
        setp.eq.s64 %p1, %rd5, 0;
        @%p1 bra $SKIP;
        add.s64 %rd6, %rd1, 16;
        ld.u32 %r3, [%rd6];
        add.s64 %rd7, %rd1, 24;
        st.global.u64 [%rd4], %rd7;
    $SKIP:
        ret;";
    let params = ".param .u64 p, .param .u64 ld";
    let ir = crate::tests::lower_kernel(params, body);
    let kept = crate::ir::global_address_registers(&ir);
    let is = |name: &str| {
        let r = ir
            .reg_names
            .iter()
            .position(|n| n == name)
            .expect("register");
        kept[r]
    };
    // %rd1..%rd4: the pointer, the stride and their sum, used only as `.global` addresses.
    for r in ["%rd2", "%rd3", "%rd4"] {
        assert!(is(r), "{r}");
    }
    // %rd1 also feeds %rd5 (compared), %rd6 (a generic address) and %rd7 (a stored value).
    for r in ["%rd1", "%rd5", "%rd6", "%rd7", "%p1"] {
        assert!(!is(r), "{r}");
    }
    let src = format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.global .align 4 .u32 table[2] = {{1, 2}};\n.visible .entry k({params})\n.maxntid 64, 1, 1\n{{\n{body}\n}}\n"
    );
    let module = ptx_parser::parse(&src).expect("parses");
    let ir = crate::ir::lower(
        &module,
        module.function("k").expect("kernel"),
        &crate::Config::default(),
    )
    .expect("lowers");
    assert!(crate::ir::global_address_registers(&ir).iter().all(|&k| !k));
}
