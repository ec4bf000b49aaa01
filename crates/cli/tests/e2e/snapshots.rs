//! Golden text output (`--color never`), with paths relative to the fixtures directory.

use crate::common::{repo_root, weft, weft_in};

fn snapshot(args: &[&str]) -> String {
    let run = weft(args);
    format!(
        "exit {}\n--- stdout\n{}--- stderr\n{}",
        run.code, run.stdout, run.stderr
    )
}

#[test]
fn deadlock_text() {
    insta::assert_snapshot!(snapshot(&["--color", "never", "deadlock.ptx"]));
}

#[test]
fn race_text() {
    insta::assert_snapshot!(snapshot(&["--color", "never", "race.ptx"]));
}

#[test]
fn multi_kernel_text_without_loc() {
    insta::assert_snapshot!(snapshot(&["--color", "never", "multi.ptx"]));
}

#[test]
fn unverifiable_without_shape_text() {
    insta::assert_snapshot!(snapshot(&[
        "--color",
        "never",
        "noshape.ptx",
        "verified.ptx"
    ]));
}

#[test]
fn parse_error_text() {
    insta::assert_snapshot!(snapshot(&[
        "--color",
        "never",
        "malformed.ptx",
        "verified.ptx"
    ]));
}

#[test]
fn unverifiable_parameter_text() {
    let run = weft_in(
        &repo_root(),
        &[
            "--color",
            "never",
            "--threads",
            "128",
            "samples/params/float_exp_loop.ptx",
        ],
    );
    insta::assert_snapshot!(format!(
        "exit {}\n--- stdout\n{}--- stderr\n{}",
        run.code, run.stdout, run.stderr
    ));
}
