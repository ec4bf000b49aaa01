//! The JSON document's schema (README.md, "JSON output") and SARIF structure.

use serde_json::Value;

use crate::common::weft;

/// The stable violation kinds of DESIGN.md.
pub const KINDS: &[&str] = &[
    "deadlock",
    "barrier-count-mismatch",
    "barrier-overflow",
    "no-waiter",
    "unsafe-recycling",
    "invalid-barrier-id",
    "invalid-thread-count",
    "barrier-divergence",
    "race",
    "shared-out-of-bounds",
    "misaligned-address",
    "trap-reachable",
    "missing-proxy-fence",
    "benign-race",
    "tensor-memory",
    "cluster-launch-control",
    "bulk-copy-size",
];

fn is_kind(kind: &str) -> bool {
    KINDS.contains(&kind) || kind.starts_with("mbarrier-")
}

fn field<'a>(object: &'a Value, name: &str) -> &'a Value {
    object
        .get(name)
        .unwrap_or_else(|| panic!("missing `{name}` in {object:#}"))
}

fn check_location(loc: &Value) {
    assert!(field(loc, "file").is_string(), "{loc:#}");
    for n in ["line", "column", "ptx_line", "ptx_column"] {
        assert!(field(loc, n).is_u64(), "{n} in {loc:#}");
    }
    assert!(field(loc, "ptx_file").is_string(), "{loc:#}");
    assert!(field(loc, "opcode").is_string(), "{loc:#}");
    assert!(field(loc, "label").is_string(), "{loc:#}");
}

/// Asserts that `doc` follows the documented schema.
pub fn check_schema(doc: &Value) {
    assert_eq!(field(doc, "tool"), "weft");
    assert!(field(doc, "version").is_string());
    for kernel in field(doc, "kernels")
        .as_array()
        .expect("kernels is an array")
    {
        assert!(field(kernel, "file").is_string());
        assert!(field(kernel, "kernel").is_string());
        let verdict = field(kernel, "verdict")
            .as_str()
            .expect("verdict is a string");
        assert!(
            ["verified", "violation", "unverifiable", "parsed"].contains(&verdict),
            "{verdict}"
        );
        let shape = field(kernel, "cta_shape");
        assert!(
            shape.is_null()
                || shape
                    .as_array()
                    .is_some_and(|a| a.len() == 3 && a.iter().all(Value::is_u64)),
            "{shape}"
        );
        assert!(field(kernel, "warp_sync").is_boolean());
        let coverage = field(kernel, "coverage");
        if !coverage.is_null() {
            assert!(field(coverage, "paths").as_u64().is_some_and(|n| n >= 1));
            assert!(field(coverage, "max_trips").is_u64());
            assert!(field(coverage, "complete").is_boolean());
            assert!(field(coverage, "incomplete").is_boolean());
            let ranges = |v: &Value| {
                v.as_array().is_some_and(|a| {
                    a.iter().all(|r| {
                        r.as_array().is_some_and(|r| {
                            r.len() == 2
                                && r.iter().all(Value::is_u64)
                                && r[0].as_u64() <= r[1].as_u64()
                        })
                    })
                })
            };
            let inputs = field(coverage, "inputs");
            if !inputs.is_null() {
                assert!(field(inputs, "term").is_string());
                assert!(ranges(field(inputs, "verified")));
                assert!(field(inputs, "checked_up_to").is_u64());
            }
            for v in field(coverage, "variables").as_array().expect("variables") {
                assert!(field(v, "term").is_string());
                assert!(field(v, "bits").is_u64());
                assert!(ranges(field(v, "explored")));
                assert!(ranges(field(v, "not_explored")));
            }
            for v in field(coverage, "failing_path")
                .as_array()
                .expect("failing_path")
            {
                assert!(field(v, "term").is_string());
                assert!(ranges(field(v, "values")));
            }
            for v in field(coverage, "failing_inputs")
                .as_array()
                .expect("failing_inputs")
            {
                assert!(field(v, "term").is_string());
                assert!(field(v, "value").is_u64());
                assert!(v.get("float").is_none_or(Value::is_string), "{v}");
            }
            let periodicity = field(coverage, "periodicity");
            if !periodicity.is_null() {
                let period = field(periodicity, "period");
                assert!(period.is_null() || period.as_u64().is_some_and(|p| p >= 1));
                for k in ["from", "to"] {
                    let v = field(periodicity, k);
                    assert_eq!(v.is_null(), period.is_null(), "{periodicity}");
                    assert!(v.is_null() || v.is_u64());
                }
                assert!(field(periodicity, "reason").is_string());
            }
        }
        assert!(
            field(kernel, "params")
                .as_array()
                .is_some_and(|a| a.iter().all(Value::is_string))
        );
        let violations = field(kernel, "violations")
            .as_array()
            .expect("violations is an array");
        let unverifiable = field(kernel, "unverifiable")
            .as_array()
            .expect("unverifiable is an array");
        for a in field(kernel, "assumptions")
            .as_array()
            .expect("assumptions is an array")
        {
            assert!(["assertion", "trap"].contains(&field(a, "kind").as_str().expect("kind")));
            assert!(field(a, "message").is_string() || field(a, "message").is_null());
            check_location(field(a, "location"));
            check_location(field(a, "branch"));
        }
        // Benign races are warnings listed with the violations; a violation only with
        // --strict.
        let benign = |v: &Value| field(v, "benign").as_bool().expect("benign is a boolean");
        let errors = violations.iter().filter(|v| !benign(v)).count();
        let strict = field(kernel, "strict")
            .as_bool()
            .expect("strict is a boolean");
        match verdict {
            "violation" => assert!(errors > 0 || (strict && !violations.is_empty())),
            "unverifiable" => assert!(errors == 0 && !unverifiable.is_empty()),
            _ => assert!(
                errors == 0 && (!strict || violations.is_empty()) && unverifiable.is_empty(),
                "{kernel:#}"
            ),
        }
        for v in violations {
            let kind = field(v, "kind").as_str().expect("kind is a string");
            assert!(is_kind(kind), "unstable kind {kind}");
            assert!(field(v, "message").is_string());
            let locations = field(v, "locations").as_array().expect("locations");
            assert!(!locations.is_empty(), "{v:#}");
            locations.iter().for_each(check_location);
            for r in field(v, "threads").as_array().expect("threads") {
                assert!(
                    field(r, "first").as_u64() <= field(r, "last").as_u64(),
                    "{r}"
                );
            }
            assert!(field(v, "threads_text").is_string());
            assert!(field(v, "barrier").is_null() || field(v, "barrier").is_u64());
            assert!(field(v, "generation").is_null() || field(v, "generation").is_u64());
            assert!(field(v, "notes").is_array());
        }
        for u in unverifiable {
            assert!(field(u, "reason").is_string());
            let loc = field(u, "location");
            if !loc.is_null() {
                check_location(loc);
            }
            field(u, "related_locations")
                .as_array()
                .expect("related_locations is an array")
                .iter()
                .for_each(check_location);
            assert!(field(u, "register").is_null() || field(u, "register").is_string());
            assert!(field(u, "inputs").is_array());
            assert!(field(u, "hint").is_null() || field(u, "hint").is_string());
        }
        assert!(
            field(kernel, "notes")
                .as_array()
                .is_some_and(|a| a.iter().all(Value::is_string))
        );
        let stats = field(kernel, "stats");
        for n in [
            "threads",
            "commands",
            "dynamic_barriers",
            "physical_barriers",
            "shared_addresses",
            "race_tests",
            "naive_race_pairs",
            "instructions",
        ] {
            assert!(field(stats, n).is_u64(), "{n}");
        }
        assert!(field(stats, "seconds").is_f64());
    }
    for error in field(doc, "errors").as_array().expect("errors is an array") {
        assert!(field(error, "file").is_string());
        assert!(field(error, "line").is_u64());
        assert!(field(error, "column").is_u64());
        assert!(field(error, "message").is_string());
    }
}

/// Asserts the SARIF 2.1.0 structure weft promises.
pub fn check_sarif(doc: &Value) {
    assert_eq!(field(doc, "version"), "2.1.0");
    let runs = field(doc, "runs").as_array().expect("runs");
    assert_eq!(runs.len(), 1);
    let driver = field(field(&runs[0], "tool"), "driver");
    assert_eq!(field(driver, "name"), "weft");
    let rules: Vec<&str> = field(driver, "rules")
        .as_array()
        .expect("rules")
        .iter()
        .map(|r| field(r, "id").as_str().expect("rule id"))
        .collect();
    for result in field(&runs[0], "results").as_array().expect("results") {
        let rule = field(result, "ruleId").as_str().expect("ruleId");
        assert!(rules.contains(&rule), "{rule} not in {rules:?}");
        assert!(
            is_kind(rule) || rule == "unverifiable" || rule == "input-error",
            "{rule}"
        );
        let level = field(result, "level").as_str().expect("level");
        assert!(["error", "warning"].contains(&level));
        assert!(field(field(result, "message"), "text").is_string());
        let locations = field(result, "locations").as_array().expect("locations");
        assert!(!locations.is_empty());
        for loc in locations.iter().chain(
            result
                .get("relatedLocations")
                .and_then(Value::as_array)
                .into_iter()
                .flatten(),
        ) {
            let uri = field(
                field(field(loc, "physicalLocation"), "artifactLocation"),
                "uri",
            )
            .as_str()
            .expect("uri");
            assert!(!uri.starts_with('/'), "{uri} is not relative");
        }
    }
}

#[test]
fn json_parse_only_document() {
    let run = weft(&[
        "--parse-only",
        "--format",
        "json",
        "multi.ptx",
        "malformed.ptx",
    ]);
    assert_eq!(run.code, 2, "{run:?}");
    let doc = run.json();
    check_schema(&doc);
    let kernels: Vec<&str> = doc["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k["kernel"].as_str().unwrap())
        .collect();
    assert_eq!(kernels, ["first", "second", "third"]);
    assert_eq!(
        doc["kernels"][2]["cta_shape"],
        serde_json::json!([32, 1, 1])
    );
    assert_eq!(doc["errors"][0]["file"], "malformed.ptx");
    assert_eq!(doc["errors"][0]["line"], 12);
    assert!(
        run.stderr.is_empty(),
        "JSON mode reports errors in the document: {run:?}"
    );
}

#[test]
fn sarif_reports_input_errors() {
    let run = weft(&[
        "--parse-only",
        "--format",
        "sarif",
        "malformed.ptx",
        "race.ptx",
    ]);
    assert_eq!(run.code, 2, "{run:?}");
    let doc = run.json();
    check_sarif(&doc);
    let results = doc["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1);
    assert_eq!(results[0]["ruleId"], "input-error");
    let region = &results[0]["locations"][0]["physicalLocation"]["region"];
    assert_eq!(region["startLine"], 12);
}
