//! Every entry of `samples/manifest.json`: weft run with the entry's arguments (plus
//! `--format json`) from the repository root must give the expected verdict and kinds.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::common::{repo_root, weft_in};
use crate::formats::check_schema;

/// Entries where today's pipeline disagrees with the manifest, with what it reports today.
/// The test asserts today's behaviour for them so that a fix shows up as a failure here:
/// then delete the entry.
const KNOWN_DIFFERENCES: &[(&str, &str, &[&str])] = &[];

#[test]
fn manifest_verdicts() {
    let root = repo_root();
    let manifest: Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("samples/manifest.json")).expect("manifest exists"),
    )
    .expect("manifest is JSON");
    let samples = manifest["samples"].as_array().expect("samples");
    assert!(!samples.is_empty());
    let mut failures = Vec::new();
    for sample in samples {
        let name = sample["name"].as_str().expect("name");
        let mut args: Vec<String> = vec!["--format".into(), "json".into()];
        args.push(sample["ptx"].as_str().expect("ptx").to_owned());
        args.extend(
            sample["args"]
                .as_array()
                .expect("args")
                .iter()
                .map(|a| a.as_str().expect("string arg").to_owned()),
        );
        if let Some(kernel) = sample["kernel"].as_str() {
            args.push("--kernel".into());
            args.push(kernel.to_owned());
        }
        let argv: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = weft_in(&root, &argv);
        let doc = run.json();
        check_schema(&doc);
        let kernels = doc["kernels"].as_array().expect("kernels");
        assert!(!kernels.is_empty(), "{name}: no kernel reported: {run:?}");
        assert!(
            doc["errors"].as_array().unwrap().is_empty(),
            "{name}: {run:?}"
        );

        let (verdict, kinds): (&str, Vec<&str>) =
            match KNOWN_DIFFERENCES.iter().find(|(n, _, _)| *n == name) {
                Some((_, verdict, kinds)) => (verdict, kinds.to_vec()),
                None => (
                    sample["expect"]["verdict"].as_str().expect("verdict"),
                    sample["expect"]["kinds"]
                        .as_array()
                        .expect("kinds")
                        .iter()
                        .map(|k| k.as_str().expect("kind"))
                        .collect(),
                ),
            };
        let expected_kinds: BTreeSet<&str> = kinds.into_iter().collect();
        for kernel in kernels {
            let got_verdict = kernel["verdict"].as_str().unwrap();
            let got_kinds: BTreeSet<&str> = kernel["violations"]
                .as_array()
                .unwrap()
                .iter()
                .map(|v| v["kind"].as_str().unwrap())
                .collect();
            if got_verdict != verdict || got_kinds != expected_kinds {
                failures.push(format!(
                    "{name} ({}): expected {verdict} {expected_kinds:?}, got {got_verdict} {got_kinds:?}",
                    kernel["kernel"]
                ));
            }
        }
        let expected_code = match verdict {
            "violation" => 1,
            "unverifiable" => 3,
            _ => 0,
        };
        if run.code != expected_code {
            failures.push(format!(
                "{name}: exit {} instead of {expected_code}",
                run.code
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
