//! The emulator-level half of the induction over trip counts (`crate::induct`).

use crate::induct::{NotConcluded, induct};
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
    )
    .unwrap();
    let ind = r.unwrap();
    eprintln!("{ind:?}");
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
    )
    .unwrap();
    eprintln!("{r:?}");
    assert!(matches!(r, Err(NotConcluded::Undecided { .. })), "{r:?}");
}
