//! Usage errors, --help and --version.

use crate::common::weft;

#[test]
fn help_documents_examples_and_exit_codes() {
    let run = weft(&["--help"]);
    assert_eq!(run.code, 0, "{run:?}");
    for needle in [
        "Examples:",
        "Exit status:",
        "--threads",
        "--warp-sync",
        "--param",
        "--kernel",
        "--format",
        "--parse-only",
        "  1  some kernel has a violation",
        "  3  some kernel could not be verified",
    ] {
        assert!(
            run.stdout.contains(needle),
            "--help lacks {needle:?}: {run:?}"
        );
    }
}

#[test]
fn version() {
    let run = weft(&["--version"]);
    assert_eq!(run.code, 0);
    assert_eq!(
        run.stdout.trim(),
        format!("weft {}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn bad_flags_exit_2() {
    for args in [
        &["--no-such-flag", "race.ptx"][..],
        &["-n", "32x", "race.ptx"],
        &["-n", "1x2x3x4", "race.ptx"],
        &["-p", "nonsense", "race.ptx"],
        &["-p", "0+4=1", "race.ptx"],
        &["--format", "xml", "race.ptx"],
        &["--color", "sometimes", "race.ptx"],
        &[],
    ] {
        let run = weft(args);
        assert_eq!(run.code, 2, "weft {args:?}: {run:?}");
        assert!(run.stdout.is_empty(), "weft {args:?}: {run:?}");
        assert!(!run.stderr.is_empty(), "weft {args:?}: {run:?}");
    }
}

#[test]
fn jobs_zero_is_a_usage_error() {
    let run = weft(&["-j", "0", "--parse-only", "race.ptx"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("--jobs"), "{run:?}");
}

#[test]
fn unknown_kernel_is_a_usage_error() {
    let run = weft(&["-k", "nope", "--parse-only", "multi.ptx", "race.ptx"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(
        run.stderr,
        "error: no kernel named `nope` in the input files\n"
    );
    assert!(run.stdout.is_empty(), "{run:?}");
}

#[test]
fn param_that_names_no_parameter_is_a_usage_error() {
    let run = weft(&["-p", "no_such_param=3", "race.ptx"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .contains("`--param no_such_param=3` names no parameter"),
        "{run:?}"
    );
}

#[test]
fn param_that_does_not_fit_is_a_usage_error() {
    // race_param_0 is a .u64: a field at byte 8 lies outside it.
    let run = weft(&["-p", "race_param_0+8:u32=1", "race.ptx"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("lie outside parameter 0"), "{run:?}");
}

/// A `--param` range restricts an explored field (a precondition, not a pin): the text
/// coverage line says the verdict holds within it, JSON lists it, and ranges that are
/// ambiguous, empty, negative or beyond the field are usage errors.
#[test]
fn param_ranges_restrict_the_exploration_and_say_so() {
    let root = crate::common::repo_root();
    let late = ["--threads", "64", "samples/sizes/late_bug.ptx"];
    let run = crate::common::weft_in(&root, &[&["--param", "2=3..=5"], &late[..]].concat());
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("within the --param range 2=3..=5 (3 paths explored, none cut short)"),
        "{run:?}"
    );
    let run = crate::common::weft_in(
        &root,
        &[&["--param", "2=3..=5", "--format", "json"], &late[..]].concat(),
    );
    let coverage = &run.json()["kernels"][0]["coverage"];
    assert_eq!(
        coverage["ranges"],
        serde_json::json!(["2=3..=5"]),
        "{run:?}"
    );
    assert_eq!(coverage["complete"], true, "{run:?}");
    for (spec, needle) in [
        ("2=1..8", "write an inclusive range as LO..=HI"),
        ("2=5..=3", "the range 5..=3 is not within 0..=4294967295"),
        ("2=-1..", "is not within 0..=4294967295"),
        ("2=0..=4294967296", "is not within 0..=4294967295"),
    ] {
        let run = crate::common::weft_in(&root, &[&["--param", spec], &late[..]].concat());
        assert_eq!(run.code, 2, "{spec}: {run:?}");
        assert!(run.stderr.contains(needle), "{spec}: {run:?}");
    }
}
