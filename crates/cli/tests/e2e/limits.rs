//! Honest exits at the edges of the input (issue 15): usage errors for shapes CUDA cannot
//! launch, files with nothing to verify, standard input, closed pipes, CUDA source given as
//! PTX, long mangled names.

use std::io::{Read, Write};
use std::process::{Command, Stdio};

use crate::common::{fixtures, weft};

fn assert_usage_error(args: &[&str], needle: &str) {
    let run = weft(args);
    assert_eq!(run.code, 2, "weft {args:?}: {run:?}");
    assert!(run.stdout.is_empty(), "weft {args:?}: {run:?}");
    assert!(run.stderr.contains(needle), "weft {args:?}: {run:?}");
}

#[test]
fn cta_outside_the_grid_is_a_usage_error() {
    assert_usage_error(
        &["--cta", "5,5,5", "--grid", "2x2x2", "race.ptx"],
        "error: `--cta 5,5,5` lies outside `--grid 2x2x2`: CTA indices in x run from 0 to 1",
    );
    assert_usage_error(
        &["--cta", "0,0,3", "--grid", "1x1x3", "race.ptx"],
        "CTA indices in z run from 0 to 2",
    );
}

#[test]
fn cta_index_beyond_cuda_grids_is_a_usage_error() {
    // Was "verified" in release builds (%nctaid wrapped to 0) and an overflow panic in debug.
    assert_usage_error(
        &["--cta", "4294967295", "race.ptx"],
        "error: `--cta 4294967295,0,0`: a grid has at most 2147483647 CTAs in x",
    );
    assert_usage_error(
        &["--grid", "1x65536", "race.ptx"],
        "a grid has at most 65535 CTAs in y",
    );
}

#[test]
fn cta_given_alone_gets_the_smallest_grid_holding_it() {
    // `--cta 3` is CTA (3,0,0) of a 4x1x1 grid: the race in race.ptx does not depend on it.
    let run = weft(&["--cta", "3", "--format", "json", "race.ptx"]);
    assert_eq!(run.code, 1, "{run:?}");
}

#[test]
fn empty_grid_dimensions_are_usage_errors() {
    assert_usage_error(
        &["--grid", "0x1x1", "race.ptx"],
        "error: `--grid 0x1x1`: every dimension must be at least 1",
    );
    assert_usage_error(
        &["-n", "32x0", "race.ptx"],
        "error: `--threads 32x0x1`: every dimension must be at least 1",
    );
}

#[test]
fn cta_shapes_beyond_hardware_limits_are_usage_errors() {
    assert_usage_error(
        &["-n", "1x1x65", "race.ptx"],
        "a CTA has at most 64 threads in z",
    );
    assert_usage_error(
        &["-n", "2048", "race.ptx"],
        "a CTA has at most 1024 threads in x",
    );
    assert_usage_error(
        &["-n", "64x32", "race.ptx"],
        "`--threads 64x32x1`: 2048 threads; a CTA has at most 1024",
    );
    // The limits themselves are accepted.
    let run = weft(&["-n", "16x1x64", "race.ptx"]);
    assert_eq!(run.code, 1, "{run:?}");
}

#[test]
fn repeated_param_for_the_same_bytes_is_a_usage_error() {
    assert_usage_error(
        &["--param", "0=4", "--param", "0=5", "race.ptx"],
        "error: `--param 0=4` and `--param 0=5` both set bytes 0..8 of parameter 0 (`race_param_0`) of `race`",
    );
    // By index and by name, and a field inside the scalar.
    assert_usage_error(
        &["-p", "0=4", "-p", "race_param_0+4:u32=1", "race.ptx"],
        "both set bytes 4..8 of parameter 0",
    );
    // Disjoint bytes of one parameter are fine.
    let run = weft(&[
        "-p",
        "race_param_0+0:u32=1",
        "-p",
        "race_param_0+4:u32=0",
        "race.ptx",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
}

#[test]
fn param_offset_near_u64_max_is_an_error_not_an_overflow() {
    let run = weft(&["-p", "race_param_0+18446744073709551615:u32=1", "race.ptx"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("lie outside parameter 0"), "{run:?}");
}

#[test]
fn a_file_without_kernels_is_a_warning_and_exit_2() {
    for file in ["empty.ptx", "no_kernel.ptx"] {
        let run = weft(&[file]);
        assert_eq!(run.code, 2, "{file}: {run:?}");
        assert_eq!(
            run.stderr,
            format!("warning: {file}: no kernel (.entry) in this file: nothing was verified\n"),
        );
        let run = weft(&["--format", "json", file]);
        assert_eq!(run.code, 2, "{file}: {run:?}");
        let doc = run.json();
        assert_eq!(doc["warnings"][0]["file"], file, "{run:?}");
        assert_eq!(doc["kernels"].as_array().map(Vec::len), Some(0), "{run:?}");
    }
    // Beside a file with a violation, the violation decides the status.
    let run = weft(&["empty.ptx", "race.ptx"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stderr.contains("warning: empty.ptx"), "{run:?}");
}

#[test]
fn cuda_source_gets_a_hint() {
    let run = weft(&["race.cu"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .contains("this looks like CUDA source: compile it with `nvcc -ptx` first"),
        "{run:?}"
    );
}

#[test]
fn devices_are_refused_not_read_forever() {
    let run = weft(&["/dev/zero"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(
        run.stderr
            .contains("/dev/zero: cannot read: it is a device or socket, not a file"),
        "{run:?}"
    );
    let run = weft(&["."]);
    assert_eq!(run.code, 2, "{run:?}");
    assert!(run.stderr.contains("it is a directory"), "{run:?}");
}

/// Runs weft in the fixtures directory with `stdin` on its standard input.
fn weft_stdin(args: &[&str], stdin: &[u8]) -> (i32, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_weft"))
        .current_dir(fixtures())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the weft binary runs");
    let mut input = child.stdin.take().expect("piped stdin");
    // weft may exit before reading its input (a usage error such as `- -`): the write then
    // fails with a broken pipe, which is not what these tests check.
    if let Err(e) = input.write_all(stdin) {
        assert_eq!(
            e.kind(),
            std::io::ErrorKind::BrokenPipe,
            "writing weft's input: {e}"
        );
    }
    drop(input);
    let output = child.wait_with_output().expect("weft ends");
    (
        output.status.code().expect("weft exits normally"),
        String::from_utf8(output.stdout).expect("UTF-8"),
        String::from_utf8(output.stderr).expect("UTF-8"),
    )
}

#[test]
fn dash_reads_standard_input() {
    let text = std::fs::read(fixtures().join("race.ptx")).expect("fixture");
    let (code, stdout, stderr) = weft_stdin(&["-"], &text);
    assert_eq!(code, 1, "{stdout}\n{stderr}");
    assert!(
        stdout.contains("kernel race in <stdin>: 1 violation (race)"),
        "{stdout}\n{stderr}"
    );
    let (code, stdout, stderr) = weft_stdin(&["-", "-"], &text);
    assert_eq!(code, 2, "{stdout}\n{stderr}");
    assert!(stderr.contains("`-` (standard input) can be given only once"));
}

#[test]
fn a_closed_pipe_keeps_the_verdict_status() {
    for format in ["text", "json", "sarif"] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_weft"))
            .current_dir(fixtures())
            .args(["--format", format, "race.ptx"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("the weft binary runs");
        // Close the reading end before weft writes its report.
        drop(child.stdout.take());
        let mut stderr = String::new();
        if let Some(mut err) = child.stderr.take() {
            err.read_to_string(&mut stderr).expect("stderr");
        }
        let status = child.wait().expect("weft ends");
        assert_eq!(status.code(), Some(1), "--format {format}: {stderr}");
        assert!(stderr.is_empty(), "--format {format}: {stderr}");
    }
}

#[test]
fn jobs_beyond_the_cores_are_capped() {
    // Without the cap this asked the OS for 1,000,000 threads.
    let run = weft(&["-j", "1000000", "race.ptx"]);
    assert_eq!(run.code, 1, "{run:?}");
}

const MANGLED: &str = "_ZN7cutlass13device_kernelINS_4gemm6kernel13GemmUniversalINS_5tupleIJiiiiEEENS1_10collective13CollectiveMmaINS_17MainloopSm90TmaGmmaWarpSpecializedILi7ELi2ENS_5tupleIJNS_1CILi1EEESD_SD_EEEEEEEEEvT_";

#[test]
fn long_mangled_names_are_elided_and_selected_by_their_unqualified_name() {
    let run = weft(&["-k", "device_kernel", "mangled.ptx"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        run.stdout,
        "kernel _ZN7cutlass13device_kernelINS_4gemm6kern… (`device_kernel`, 197 characters) \
         in mangled.ptx: verified\n"
    );
    // JSON keeps the whole name.
    let run = weft(&["-k", "device_kernel", "--format", "json", "mangled.ptx"]);
    assert_eq!(run.json()["kernels"][0]["kernel"], MANGLED, "{run:?}");
    // The full name selects it too; a namespace does not.
    assert_eq!(weft(&["-k", MANGLED, "mangled.ptx"]).code, 0);
    assert_eq!(weft(&["-k", "cutlass", "mangled.ptx"]).code, 2);
}

#[test]
fn the_step_budget_is_an_option_and_its_end_is_unverifiable() {
    let run = weft(&["--max-steps", "3", "verified.ptx"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(
        run.stdout
            .contains("exceeded the step budget of 3 instructions"),
        "{run:?}"
    );
    assert_eq!(weft(&["--max-steps", "1000", "verified.ptx"]).code, 0);
}

/// A scratch directory for one test, emptied first.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("weft-e2e-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

#[test]
fn source_lines_with_non_ascii_text_or_edited_since_compiling_do_not_panic() {
    // Issue 15's panic: the `.loc` column sliced the CUDA line as a byte index.
    let dir = scratch("nonascii");
    let ptx = std::fs::read_to_string(fixtures().join("race.ptx")).expect("fixture");
    std::fs::write(dir.join("race.ptx"), &ptx).expect("write");
    for cuda in [
        // Non-ASCII characters before every column the .locs name.
        "// ééééé\n// ééééé\n// ééééé\n// ééééé\n//éééééééééééééééééééé\n//éééé\n//ééééééééééééééé\n//éé\n//é\n",
        // Edited since compiling: lines shorter than the columns, or missing.
        "x\n",
        "",
    ] {
        std::fs::write(dir.join("race.cu"), cuda).expect("write");
        let run = crate::common::weft_in(&dir, &["race.ptx"]);
        assert_eq!(run.code, 1, "{run:?}");
        assert!(run.stdout.contains("1 violation (race)"), "{run:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn budget_options_take_sizes_and_counts() {
    for args in [
        &["--max-memory", "4Q", "race.ptx"][..],
        &["--max-memory", "0", "race.ptx"],
        &["--max-steps", "-1", "race.ptx"],
    ] {
        let run = weft(args);
        assert_eq!(run.code, 2, "weft {args:?}: {run:?}");
        assert!(run.stdout.is_empty(), "weft {args:?}: {run:?}");
    }
    assert_eq!(weft(&["--max-memory", "512M", "race.ptx"]).code, 1);
    assert_eq!(weft(&["--max-memory", "1073741824", "race.ptx"]).code, 1);
}

/// The issue-15 stress inputs whose memory is bounded by what they touch stay answerable
/// under a 1 GiB address-space limit (`ulimit -v`): a 1 GiB `.shared` array once cost 4 GiB
/// in the warp passes' reorder tracker, and the process aborted on the allocation.
#[test]
fn huge_declared_windows_fit_in_a_small_address_space() {
    let stress = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/stress");
    for (file, verdict) in [
        ("shared_1gib.ptx", "verified"),
        ("local_1mib.ptx", "verified"),
    ] {
        let out = Command::new("sh")
            .arg("-c")
            .arg("ulimit -v 1048576 && exec \"$0\" \"$1\"")
            .arg(env!("CARGO_BIN_EXE_weft"))
            .arg(format!("{stress}/{file}"))
            .output()
            .expect("sh runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{file}: {out:?}");
        assert!(stdout.contains(verdict), "{file}: {stdout}");
    }
}

/// A TMA store whose extent runs to the end of a 1 GiB `.shared` array (mutation run 13's
/// one signal): its race-stage entries and reorder-tracker pages are charged to the memory
/// budget before anything is allocated, so under a 1 GiB address-space limit the answer is
/// "unverifiable at the memory budget", not an abort on the allocation.
#[test]
fn a_huge_async_extent_is_charged_before_it_is_allocated() {
    let file = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/stress/tma_store_1gib.ptx"
    );
    let out = Command::new("sh")
        .arg("-c")
        .arg("ulimit -v 1048576 && exec \"$0\" \"$1\"")
        .arg(env!("CARGO_BIN_EXE_weft"))
        .arg(file)
        .output()
        .expect("sh runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{out:?}");
    assert!(
        stdout.contains("could not verify: the emulation reached the memory budget of 3 GiB"),
        "{stdout}"
    );
}

/// A TMA store's extent runs to the end of the shared allocation until the emulation ends
/// and clips it at the next TMA address; the race stage's memory for it is charged once
/// clipped. 1,600 stores from 16 subtiles of a 64 KiB array need about 26 MB clipped and
/// over 200 MB unclipped: within a 64 MiB budget the kernel is verified.
#[test]
fn tma_store_extents_are_charged_once_clipped() {
    let run = weft(&["--max-memory", "64M", "tma_store_subtiles.ptx"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains("tma_store_subtiles"), "{run:?}");
    assert!(run.stdout.contains(": verified"), "{run:?}");
    // At a budget below what the clipped extents need, the answer names the budget.
    let run = weft(&["--max-memory", "16M", "tma_store_subtiles.ptx"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(run.stdout.contains("memory budget of 16 MiB"), "{run:?}");
}
