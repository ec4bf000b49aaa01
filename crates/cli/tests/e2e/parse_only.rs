//! `--parse-only`: parse errors, order of many files, kernel selection, exit codes.

use crate::common::{repo_root, weft, weft_in};

#[test]
fn well_formed_files_exit_0_in_input_order() {
    let run = weft(&[
        "--parse-only",
        "--color",
        "never",
        "verified.ptx",
        "multi.ptx",
        "deadlock.ptx",
        "race.ptx",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        "kernel verified in verified.ptx: parsed\n\
         kernel first in multi.ptx: parsed\n\
         kernel second in multi.ptx: parsed\n\
         kernel third in multi.ptx: parsed\n\
         kernel deadlock in deadlock.ptx: parsed\n\
         kernel race in race.ptx: parsed\n"
    );
    assert!(run.stderr.is_empty(), "{run:?}");
}

#[test]
fn malformed_file_is_reported_as_file_line_column_and_exits_2() {
    let run = weft(&["--parse-only", "race.ptx", "malformed.ptx", "third.ptx"]);
    assert_eq!(run.code, 2, "{run:?}");
    let lines: Vec<&str> = run.stderr.lines().collect();
    assert_eq!(lines.len(), 2, "{run:?}");
    assert!(lines[0].starts_with("error: malformed.ptx:12:"), "{run:?}");
    assert!(
        lines[1].starts_with("error: third.ptx: cannot read"),
        "{run:?}"
    );
    // The good file is still reported.
    assert_eq!(run.stdout, "kernel race in race.ptx: parsed\n");
}

#[test]
fn kernel_selection_by_mangled_or_plain_name_keeps_file_order() {
    let run = weft(&["--parse-only", "-k", "third", "-k", "first", "multi.ptx"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        "kernel first in multi.ptx: parsed\nkernel third in multi.ptx: parsed\n"
    );

    let run = weft_in(
        &repo_root(),
        &[
            "--parse-only",
            "-k",
            "two_warp_cycle",
            "-k",
            "_Z16three_warp_cyclePf",
            "samples/deadlock/three_warp_cycle.ptx",
            "samples/deadlock/two_warp_cycle.ptx",
        ],
    );
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        "kernel _Z16three_warp_cyclePf in samples/deadlock/three_warp_cycle.ptx: parsed\n\
         kernel _Z14two_warp_cyclePf in samples/deadlock/two_warp_cycle.ptx: parsed\n"
    );
}

#[test]
fn many_files_in_parallel_keep_input_order() {
    let root = repo_root();
    let mut files: Vec<String> = Vec::new();
    for dir in ["samples/classic", "samples/deadlock", "samples/cudadma"] {
        let mut names: Vec<String> = std::fs::read_dir(root.join(dir))
            .expect("samples exist")
            .filter_map(|e| e.ok())
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.ends_with(".ptx"))
            .map(|n| format!("{dir}/{n}"))
            .collect();
        names.sort();
        files.extend(names);
    }
    // Reverse the natural order so that sorted output would be wrong.
    files.reverse();
    let mut args = vec!["--parse-only", "-j", "4"];
    args.extend(files.iter().map(String::as_str));
    let run = weft_in(&root, &args);
    assert_eq!(run.code, 0, "{run:?}");
    let reported: Vec<&str> = run
        .stdout
        .lines()
        .map(|l| {
            l.split(" in ")
                .nth(1)
                .and_then(|r| r.split(':').next())
                .unwrap_or("")
        })
        .collect();
    let expected: Vec<&str> = files.iter().map(String::as_str).collect();
    assert_eq!(reported, expected, "{run:?}");
}

#[test]
fn quiet_prints_nothing_but_keeps_the_exit_code() {
    let run = weft(&["--parse-only", "-q", "race.ptx"]);
    assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{run:?}");
    let run = weft(&["--parse-only", "-q", "malformed.ptx"]);
    assert_eq!((run.code, run.stdout.as_str()), (2, ""), "{run:?}");
    assert!(run.stderr.contains("malformed.ptx:12:"), "{run:?}");
}
