//! The real-world corpus: kernels nobody on this project wrote (CUTLASS, Triton), built at CI
//! time by `corpus/build.sh` into the ignored `corpus/build/`.
//!
//! The test asserts that weft parses every kernel and gives each one a verdict — verified, a
//! violation with locations, or unverifiable with a reason that names an instruction — and
//! that the verdict and violation kinds are those `corpus/expected.json` records (the ones
//! `corpus/README.md` defends; `corpus/report.py --write-expected` rewrites it). `.ci/run`
//! builds the corpus and sets `WEFT_CORPUS=required`, so a missing corpus, or a kernel of
//! `corpus/expected.json` that did not build (a missing install step), fails CI; on a
//! developer machine without the corpus the test checks nothing and says so on the console
//! (past the harness's output capture), as it says how many kernels it checked when it ran.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `corpus/expected.json`: `{"kernels": {NAME: {"verdict": ..., "kinds": [...]}}}`.
fn expected_verdicts() -> Value {
    let path = repo_root().join("corpus/expected.json");
    let text = std::fs::read_to_string(&path).expect("corpus/expected.json is committed");
    serde_json::from_str(&text).expect("corpus/expected.json is valid JSON")
}

/// The difference between `kernel`'s verdict and kinds and `expected`'s entry for `name`.
fn mismatch(name: &str, kernel: &Value, expected: &Value) -> Option<String> {
    let verdict = kernel["verdict"].as_str().unwrap_or_default();
    let mut kinds: Vec<&str> = kernel["violations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["kind"].as_str())
        .collect();
    kinds.sort_unstable();
    kinds.dedup();
    let Some(want) = expected["kernels"].get(name) else {
        return Some(format!(
            "{name}: {verdict} {kinds:?}, and corpus/expected.json has no entry for it (add \
             one once corpus/README.md defends the verdict: corpus/report.py --write-expected)"
        ));
    };
    let want_kinds: Vec<&str> = want["kinds"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    (want["verdict"] != verdict || want_kinds != kinds).then(|| {
        format!(
            "{name}: {verdict} {kinds:?}, but corpus/expected.json says {} {want_kinds:?}",
            want["verdict"]
        )
    })
}

fn corpus_manifest() -> Option<Value> {
    let path = repo_root().join("corpus/build/manifest.json");
    let text = std::fs::read_to_string(&path).ok()?;
    Some(serde_json::from_str(&text).expect("corpus/build/manifest.json is valid JSON"))
}

#[test]
fn every_corpus_kernel_gets_a_verdict() {
    let required = std::env::var("WEFT_CORPUS").is_ok_and(|v| v == "required");
    let Some(manifest) = corpus_manifest() else {
        assert!(
            !required,
            "WEFT_CORPUS=required but corpus/build/manifest.json is missing: run corpus/build.sh"
        );
        // Written past the test harness's capture, so that a run that checked nothing says so
        // on the console even when the test passes.
        loud(
            "warning: every_corpus_kernel_gets_a_verdict CHECKED NOTHING: \
             corpus/build/manifest.json not found; run `bash corpus/build.sh` (CI sets \
             WEFT_CORPUS=required, which makes this a failure)",
        );
        return;
    };
    let entries = manifest["samples"]
        .as_array()
        .expect("manifest has samples");
    assert!(!entries.is_empty(), "the corpus manifest lists no kernel");
    let expected = expected_verdicts();
    let mut mismatches = Vec::new();
    let mut checked = 0;
    for entry in entries {
        let name = entry["name"].as_str().expect("entry has a name");
        let ptx = entry["ptx"].as_str().expect("entry has a ptx path");
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_weft"));
        cmd.current_dir(repo_root())
            .arg(ptx)
            .args(["--format", "json"]);
        for arg in entry["args"].as_array().into_iter().flatten() {
            cmd.arg(arg.as_str().expect("args are strings"));
        }
        if let Some(kernel) = entry["kernel"].as_str() {
            cmd.args(["--kernel", kernel]);
        }
        let out = cmd.output().expect("weft runs");
        let code = out.status.code();
        assert!(
            matches!(code, Some(0 | 1 | 3)),
            "{name}: weft exited with {code:?} (2 = input error): {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let report: Value = serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("{name}: JSON report does not parse: {e}"));
        assert!(
            report["errors"].as_array().is_some_and(Vec::is_empty),
            "{name}: input errors: {}",
            report["errors"]
        );
        let kernels = report["kernels"].as_array().expect("report lists kernels");
        assert!(!kernels.is_empty(), "{name}: no kernel verified");
        for kernel in kernels {
            match kernel["verdict"].as_str() {
                Some("verified") => {
                    // Only benign-race warnings may accompany a verified kernel.
                    assert!(
                        kernel["violations"]
                            .as_array()
                            .is_some_and(|v| v.iter().all(|v| v["benign"] == true)),
                        "{name}: {}",
                        kernel["violations"]
                    );
                    assert!(kernel["unverifiable"].as_array().is_some_and(Vec::is_empty));
                }
                Some("violation") => {
                    for v in kernel["violations"].as_array().expect("violations") {
                        assert!(
                            v["kind"].as_str().is_some_and(|k| !k.is_empty()),
                            "{name}: {v}"
                        );
                        assert!(
                            v["locations"].as_array().is_some_and(|l| !l.is_empty()),
                            "{name}: a violation without a location: {v}"
                        );
                    }
                }
                Some("unverifiable") => {
                    let reasons = kernel["unverifiable"].as_array().expect("reasons");
                    assert!(!reasons.is_empty(), "{name}: unverifiable without a reason");
                    for r in reasons {
                        let reason = r["reason"].as_str().unwrap_or_default();
                        assert!(!reason.is_empty(), "{name}: empty reason: {r}");
                        assert!(
                            r["location"]["ptx_line"].as_u64().is_some()
                                || reason.contains("PTX line"),
                            "{name}: the reason names no instruction: {r}"
                        );
                    }
                }
                other => panic!("{name}: unexpected verdict {other:?}"),
            }
            mismatches.extend(mismatch(name, kernel, &expected));
            checked += 1;
        }
    }
    assert!(checked > 0, "the corpus reports no kernel");
    if required {
        // Every kernel the expectations name was built: a kernel that failed to compile (a
        // package the build did not install) is not silently left out.
        let built: Vec<&str> = entries.iter().filter_map(|e| e["name"].as_str()).collect();
        for name in expected["kernels"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(n, _)| n)
        {
            if !built.contains(&name.as_str()) {
                mismatches.push(format!(
                    "{name}: in corpus/expected.json but not built (see corpus/build/{name}.log)"
                ));
            }
        }
    }
    assert!(
        mismatches.is_empty(),
        "{} corpus kernel(s) differ from corpus/expected.json:\n{}",
        mismatches.len(),
        mismatches.join("\n")
    );
    loud(&format!(
        "corpus: {checked} kernels of {} entries got a verdict",
        entries.len()
    ));
}

/// Writes `line` to the process's standard error directly: the test harness captures
/// `eprintln!`, not writes to the stream.
fn loud(line: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "{line}");
}
