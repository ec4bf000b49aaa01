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
            failures.extend(
                check_details(&sample["expect"], kernel)
                    .into_iter()
                    .map(|f| format!("{name}: {f}")),
            );
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

/// The optional expectations of a manifest entry beyond verdict and kinds:
/// - `assumptions`: how many traps the verdict assumes are not reached;
/// - `notes_contain`: texts each of which some note or assumed assertion contains;
/// - `messages_contain`: texts each of which some violation message or unverifiable reason
///   contains;
/// - `threads`: the inclusive thread ranges of the (one) violation;
/// - `bounded`: the verdict comes from an exploration that left values out (coverage with
///   `complete` false), never a verdict for every value;
/// - `periodicity_contains`: a text the coverage's periodicity reason contains;
/// - `induction`: whether the induction over the trip count concluded (docs/induction.md);
/// - `failing_input`: the value of the (one) parameter field the failing path was found with,
///   or the values of its fields in the report's order.
fn check_details(expect: &Value, kernel: &Value) -> Vec<String> {
    let mut failures = Vec::new();
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    };
    let assumptions = kernel["assumptions"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if let Some(n) = expect["assumptions"].as_u64()
        && assumptions.len() as u64 != n
    {
        failures.push(format!("expected {n} assumptions, got {assumptions:?}"));
    }
    let mut notes = strings(&kernel["notes"]);
    notes.extend(
        assumptions
            .iter()
            .filter_map(|a| a["message"].as_str().map(str::to_owned)),
    );
    for want in strings(&expect["notes_contain"]) {
        if !notes.iter().any(|n| n.contains(&want)) {
            failures.push(format!("no note contains `{want}`: {notes:?}"));
        }
    }
    let mut messages: Vec<String> = kernel["violations"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|v| v["message"].as_str().map(str::to_owned))
        .collect();
    messages.extend(
        kernel["unverifiable"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|u| u["reason"].as_str().map(str::to_owned)),
    );
    for want in strings(&expect["messages_contain"]) {
        if !messages.iter().any(|m| m.contains(&want)) {
            failures.push(format!("no message contains `{want}`: {messages:?}"));
        }
    }
    let coverage = &kernel["coverage"];
    if let Some(bounded) = expect["bounded"].as_bool() {
        let complete = coverage["complete"].as_bool();
        if complete != Some(!bounded) {
            failures.push(format!(
                "expected a coverage with complete = {}, got {coverage}",
                !bounded
            ));
        }
    }
    if let Some(want) = expect["periodicity_contains"].as_str() {
        let reason = coverage["periodicity"]["reason"].as_str().unwrap_or("");
        if !reason.contains(want) {
            failures.push(format!(
                "the periodicity reason does not contain `{want}`: {coverage}"
            ));
        }
    }
    if let Some(want) = expect["induction"].as_bool() {
        let got = coverage["induction"]["concluded"].as_bool();
        if got != Some(want) {
            failures.push(format!(
                "expected the induction concluded = {want}, got {coverage}"
            ));
        }
    }
    let want: Option<Vec<u64>> = match &expect["failing_input"] {
        Value::Array(values) => Some(values.iter().filter_map(Value::as_u64).collect()),
        v => v.as_u64().map(|x| vec![x]),
    };
    if let Some(want) = want {
        let got: Vec<u64> = coverage["failing_inputs"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v["value"].as_u64())
            .collect();
        if got != want {
            failures.push(format!("expected failing inputs {want:?}, got {got:?}"));
        }
    }
    if let Some(ranges) = expect["threads"].as_array() {
        let want: Vec<(u64, u64)> = ranges
            .iter()
            .filter_map(|r| Some((r[0].as_u64()?, r[1].as_u64()?)))
            .collect();
        let got: Vec<(u64, u64)> = kernel["violations"][0]["threads"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|r| Some((r["first"].as_u64()?, r["last"].as_u64()?)))
            .collect();
        if got != want {
            failures.push(format!("expected threads {want:?}, got {got:?}"));
        }
    }
    failures
}
