//! Full verification of the fixtures: verdicts, exit codes, kernel selection, order, source
//! resolution, JSON/SARIF of real findings, --dot and --stats.

use crate::common::{repo_root, weft, weft_in};
use crate::formats::{check_sarif, check_schema};

fn verdicts(doc: &serde_json::Value) -> Vec<(String, String)> {
    doc["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .map(|k| {
            (
                k["kernel"].as_str().unwrap().to_owned(),
                k["verdict"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn pairs(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items
        .iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

#[test]
fn exit_status_for_each_verdict() {
    for (args, code) in [
        (&["verified.ptx"][..], 0),
        (&["deadlock.ptx"], 1),
        (&["race.ptx"], 1),
        (&["noshape.ptx"], 3),
        (&["-n", "32", "noshape.ptx"], 0),
        (&["malformed.ptx", "verified.ptx"], 2),
        // A violation outranks an input error, which outranks an unverifiable kernel.
        (&["malformed.ptx", "race.ptx"], 1),
        (&["malformed.ptx", "noshape.ptx"], 2),
        (&["noshape.ptx", "verified.ptx"], 3),
        (&["noshape.ptx", "deadlock.ptx"], 1),
    ] {
        let run = weft(args);
        assert_eq!(run.code, code, "weft {args:?}: {run:?}");
    }
}

#[test]
fn multi_kernel_file_and_kernel_selection() {
    let run = weft(&["--format", "json", "multi.ptx"]);
    assert_eq!(run.code, 1, "{run:?}");
    let doc = run.json();
    check_schema(&doc);
    assert_eq!(
        verdicts(&doc),
        pairs(&[
            ("first", "verified"),
            ("second", "violation"),
            ("third", "verified")
        ])
    );

    let run = weft(&[
        "--format",
        "json",
        "-k",
        "third",
        "-k",
        "first",
        "multi.ptx",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(
        verdicts(&run.json()),
        pairs(&[("first", "verified"), ("third", "verified")])
    );

    let run = weft(&["--format", "json", "-k", "second", "multi.ptx"]);
    assert_eq!(run.code, 1, "{run:?}");
    let doc = run.json();
    assert_eq!(verdicts(&doc), pairs(&[("second", "violation")]));
    assert_eq!(doc["kernels"][0]["violations"][0]["kind"], "race");
}

#[test]
fn many_files_keep_input_order() {
    let files = [
        "race.ptx",
        "verified.ptx",
        "multi.ptx",
        "noshape.ptx",
        "deadlock.ptx",
        "missing_source.ptx",
    ];
    let mut args = vec!["--format", "json", "-j", "3"];
    args.extend(files);
    let run = weft(&args);
    assert_eq!(run.code, 1, "{run:?}");
    let doc = run.json();
    check_schema(&doc);
    let order: Vec<(String, String)> = doc["kernels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["file"].as_str().unwrap().to_owned(),
                k["kernel"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        order,
        pairs(&[
            ("race.ptx", "race"),
            ("verified.ptx", "verified"),
            ("multi.ptx", "first"),
            ("multi.ptx", "second"),
            ("multi.ptx", "third"),
            ("noshape.ptx", "noshape"),
            ("deadlock.ptx", "deadlock"),
            ("missing_source.ptx", "gone"),
        ])
    );
}

#[test]
fn json_of_real_findings() {
    let run = weft(&[
        "--format",
        "json",
        "deadlock.ptx",
        "race.ptx",
        "noshape.ptx",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    let doc = run.json();
    check_schema(&doc);

    let deadlock = &doc["kernels"][0];
    assert_eq!(deadlock["verdict"], "violation");
    assert_eq!(deadlock["cta_shape"], serde_json::json!([64, 1, 1]));
    let v = &deadlock["violations"][0];
    assert_eq!(v["kind"], "deadlock");
    let lines: Vec<u64> = v["locations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| l["line"].as_u64().unwrap())
        .collect();
    assert_eq!(lines, [6, 9], "CUDA lines of the two blocked bar.syncs");
    assert_eq!(v["locations"][0]["file"], "deadlock.cu");
    assert_eq!(v["locations"][0]["ptx_line"], 28);
    assert_eq!(v["locations"][0]["opcode"], "bar.sync");

    let race = &doc["kernels"][1]["violations"][0];
    assert_eq!(race["kind"], "race");
    assert!(
        race["message"].as_str().unwrap().contains("shared `buf`"),
        "{race}"
    );
    assert_eq!(race["locations"].as_array().unwrap().len(), 2);
    assert_eq!(race["locations"][0]["file"], "race.cu");

    let noshape = &doc["kernels"][2];
    assert_eq!(noshape["verdict"], "unverifiable");
    assert_eq!(noshape["cta_shape"], serde_json::Value::Null);
    assert_eq!(noshape["unverifiable"][0]["reason"], "no CTA shape");
    assert!(
        noshape["unverifiable"][0]["hint"]
            .as_str()
            .unwrap()
            .contains("-n")
    );
}

#[test]
fn sarif_of_real_findings() {
    let run = weft(&[
        "--format",
        "sarif",
        "deadlock.ptx",
        "race.ptx",
        "noshape.ptx",
        "missing_source.ptx",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    let doc = run.json();
    check_sarif(&doc);
    let mut rules: Vec<&str> = doc["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["id"].as_str().unwrap())
        .collect();
    rules.sort();
    assert_eq!(rules, ["deadlock", "race", "unverifiable"]);
    let results = doc["runs"][0]["results"].as_array().unwrap();
    let levels: Vec<(&str, &str)> = results
        .iter()
        .map(|r| (r["ruleId"].as_str().unwrap(), r["level"].as_str().unwrap()))
        .collect();
    assert_eq!(
        levels,
        [
            ("deadlock", "error"),
            ("race", "error"),
            ("unverifiable", "warning"),
            ("race", "error")
        ]
    );
    // The deadlock points at the CUDA line and relates the other blocked barrier and the
    // PTX lines.
    let deadlock = &results[0];
    let primary = &deadlock["locations"][0]["physicalLocation"];
    assert_eq!(primary["artifactLocation"]["uri"], "deadlock.cu");
    assert_eq!(primary["region"]["startLine"], 6);
    let related: Vec<(String, u64)> = deadlock["relatedLocations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|l| {
            let p = &l["physicalLocation"];
            (
                p["artifactLocation"]["uri"].as_str().unwrap().to_owned(),
                p["region"]["startLine"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        related,
        [
            ("deadlock.cu".to_owned(), 9),
            ("deadlock.ptx".to_owned(), 28),
            ("deadlock.ptx".to_owned(), 35)
        ]
    );
    // Without the CUDA file, the result points at the PTX line, by the name .file gave.
    let gone = &results[3]["locations"][0]["physicalLocation"];
    assert_eq!(gone["artifactLocation"]["uri"], "nowhere/gone.cu");
}

#[test]
fn cuda_sources_are_found_next_to_the_ptx() {
    // From the repository root: race.cu is found relative to the PTX file's directory and
    // deadlock.cu (written as an absolute path of another machine) by its basename.
    let run = weft_in(
        &repo_root(),
        &[
            "--color",
            "never",
            "crates/cli/tests/fixtures/race.ptx",
            "crates/cli/tests/fixtures/deadlock.ptx",
        ],
    );
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout.contains("┌─ crates/cli/tests/fixtures/race.cu:"),
        "{run:?}"
    );
    assert!(run.stdout.contains("    buf[t] = t;"), "{run:?}");
    assert!(
        run.stdout
            .contains("┌─ crates/cli/tests/fixtures/deadlock.cu:6:9"),
        "{run:?}"
    );
}

#[test]
fn missing_cuda_file_shows_the_ptx_line() {
    let run = weft(&["--color", "never", "missing_source.ptx"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(run.stdout.contains("┌─ missing_source.ptx:"), "{run:?}");
    assert!(run.stdout.contains("st.shared.f32"), "{run:?}");
    assert!(run.stdout.contains("(nowhere/gone.cu:6:5)"), "{run:?}");
}

#[test]
fn dot_has_one_cluster_per_kernel() {
    let dir = std::env::temp_dir().join(format!("weft-dot-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let dot = dir.join("graph.dot");
    let run = weft(&[
        "-q",
        "--dot",
        dot.to_str().unwrap(),
        "verified.ptx",
        "deadlock.ptx",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    let text = std::fs::read_to_string(&dot).unwrap();
    std::fs::remove_dir_all(&dir).ok();
    assert!(text.starts_with("digraph weft {"), "{text}");
    assert_eq!(text.matches("subgraph cluster_").count(), 2, "{text}");
    assert!(text.contains("label=\"bar 0 gen 1\""), "{text}");
    assert!(text.contains("label=\"bar 1 gen 1 (blocked)\""), "{text}");
}

#[test]
fn stats_and_no_progress_when_not_a_terminal() {
    let run = weft(&["--stats", "--color", "never", "verified.ptx"]);
    assert_eq!(run.code, 0, "{run:?}");
    for needle in [
        "threads 64",
        "dynamic barriers 1 (1 physical)",
        "shared addresses",
        "race tests",
        "naive pairs",
        "commands",
        "peak memory",
        "parse",
        "emulate",
        "graph",
        "race ",
    ] {
        assert!(run.stdout.contains(needle), "{needle}: {run:?}");
    }
    // No progress bar (and no escape codes) when stderr is not a terminal.
    assert_eq!(run.stderr, "", "{run:?}");
    assert!(!run.stdout.contains('\u{1b}'), "{run:?}");
}

#[test]
fn color_always_colors() {
    let run = weft(&["--color", "always", "race.ptx"]);
    assert!(run.stdout.contains('\u{1b}'), "{run:?}");
}

#[test]
fn params_are_reported() {
    let run = weft(&["--format", "json", "-p", "0=4096", "race.ptx"]);
    let doc = run.json();
    assert_eq!(doc["kernels"][0]["params"], serde_json::json!(["0=4096"]));
}

#[test]
fn kernel_that_cannot_be_lowered_is_an_input_error() {
    let run = weft(&["--color", "never", "undeclared.ptx"]);
    assert_eq!(run.code, 2, "{run:?}");
    assert_eq!(
        run.stderr,
        "error: undeclared.ptx:13: kernel `undeclared`: undeclared register `%r1`\n"
    );
    // The other kernel of the file is still verified.
    assert_eq!(run.stdout, "kernel fine in undeclared.ptx: verified\n");

    let doc = weft(&["--format", "json", "undeclared.ptx"]).json();
    check_schema(&doc);
    assert_eq!(doc["errors"][0]["line"], 13);
    assert_eq!(verdicts(&doc), pairs(&[("fine", "verified")]));
}

#[test]
fn detail_lists_every_racing_pair() {
    let plain = weft(&["--format", "json", "race.ptx"]).json();
    let detail = weft(&["--format", "json", "-d", "race.ptx"]).json();
    let notes = |doc: &serde_json::Value| {
        doc["kernels"][0]["violations"][0]["notes"]
            .as_array()
            .unwrap()
            .len()
    };
    assert_eq!(notes(&plain), 1);
    // One line per racing (address, thread pair): each of the 64 threads reads its
    // neighbour's word.
    assert_eq!(notes(&detail), 1 + 64);
}

/// Two TMA copies into one expect_tx get upper-bound extents; a read that overlaps only the
/// over-approximated part is a possible race: the kernel is unverifiable (exit 3), not a
/// violation, and every format says why.
#[test]
fn possible_race_on_an_approximate_tma_extent_is_unverifiable() {
    let run = weft(&["tma_possible_race.ptx", "--format", "json"]);
    assert_eq!(run.code, 3, "{run:?}");
    let doc = run.json();
    check_schema(&doc);
    let kernel = &doc["kernels"][0];
    assert_eq!(kernel["verdict"], "unverifiable", "{kernel:#}");
    assert_eq!(kernel["violations"].as_array().unwrap().len(), 0);
    let reasons = kernel["unverifiable"].as_array().unwrap();
    assert_eq!(reasons.len(), 1, "{kernel:#}");
    let u = &reasons[0];
    let reason = u["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("possible write-after-read race on shared `buf`+300: between `ld.shared.u32` at PTX line 55 (read of 4 bytes by warp 1 lane 0) and the TMA copy `cp.async.bulk.tensor"),
        "{reason}"
    );
    assert!(reason.contains("at PTX line 44"), "{reason}");
    assert!(reason.contains("extent over-approximated"), "{reason}");
    assert!(
        reason.contains("`ld.shared.u32` at PTX line 55 (read of 4 bytes by warp 1 lane 0)"),
        "{reason}"
    );
    assert!(
        reason.contains("weft cannot bound the copy's extent"),
        "{reason}"
    );
    assert_eq!(u["location"]["ptx_line"], 44);
    assert_eq!(u["related_locations"][0]["ptx_line"], 55);
    assert_eq!(u["related_locations"][0]["opcode"], "ld.shared.u32");

    let text = weft(&["tma_possible_race.ptx", "--color", "never"]);
    assert_eq!(text.code, 3, "{text:?}");
    assert!(
        text.stdout
            .contains("warning[unverifiable]: could not verify: possible write-after-read race"),
        "{text:?}"
    );
    assert!(
        text.stdout
            .contains("could not verify: possible write-after-read race on shared `buf`+300\n"),
        "{text:?}"
    );

    let sarif = weft(&["tma_possible_race.ptx", "--format", "sarif"]);
    assert_eq!(sarif.code, 3, "{sarif:?}");
    let log = sarif.json();
    check_sarif(&log);
    let results = log["runs"][0]["results"].as_array().unwrap();
    assert_eq!(results.len(), 1, "{log:#}");
    assert_eq!(results[0]["ruleId"], "unverifiable");
    assert_eq!(results[0]["level"], "warning");
    assert_eq!(results[0]["relatedLocations"].as_array().unwrap().len(), 1);
}

/// Problem sizes without `--param` (docs/semantics.md §6.5): the pipeline that breaks from
/// the third trip on is caught with the smallest failing trip count, its fixed version gets
/// a bounded verdict that says which trip counts were not explored, and `--param` still
/// pins the size (no exploration).
#[test]
fn explored_sizes_report_their_coverage() {
    let root = repo_root();
    let bug = weft_in(
        &root,
        &["samples/sizes/pipeline_bug.ptx", "--format", "json"],
    );
    assert_eq!(bug.code, 1, "{bug:?}");
    let doc = bug.json();
    check_schema(&doc);
    let k = &doc["kernels"][0];
    assert_eq!(k["verdict"], "violation");
    let inputs = k["coverage"]["failing_inputs"].as_array().expect("inputs");
    assert_eq!(inputs.len(), 1);
    assert_eq!(inputs[0]["value"], 3);
    assert!(inputs[0]["term"].as_str().unwrap().starts_with("param 2"));
    let text = weft_in(&root, &["samples/sizes/pipeline_bug.ptx"]);
    assert!(text.stdout.contains("found with param 2"), "{text:?}");
    assert!(text.stdout.contains("= 3 "), "{text:?}");

    // The fixed pipeline: the exploration alone (--max-trips 4) covers trip counts up to 8;
    // the induction over the trip count covers every larger one up to the no-overflow bound.
    let ok = weft_in(
        &root,
        &[
            "samples/sizes/pipeline.ptx",
            "--format",
            "json",
            "--max-trips",
            "4",
        ],
    );
    assert_eq!(ok.code, 0, "{ok:?}");
    let doc = ok.json();
    check_schema(&doc);
    let c = &doc["kernels"][0]["coverage"];
    assert_eq!(c["complete"], false);
    assert_eq!(c["max_trips"], 4);
    assert_eq!(c["induction"]["concluded"], true, "{c}");
    let v = &c["variables"][0];
    assert_eq!(
        v["not_explored"],
        serde_json::json!([[2147483646u64, 2147483647u64]])
    );
    assert_eq!(c["inputs"]["verified"], serde_json::json!([[0, 16384]]));
    let text = weft_in(&root, &["samples/sizes/pipeline.ptx", "--max-trips", "4"]);
    assert!(
        text.stdout.contains(
            "coverage: verified for every value of param 2 (_Z8pipelinePKfPfi_param_2) except \
             2147483646..=2147483647"
        ),
        "{text:?}"
    );
    // A bounded verdict when the induction does not conclude: the late bug.
    let late = weft_in(&root, &["samples/sizes/late_bug.ptx", "--max-trips", "4"]);
    assert_eq!(late.code, 0, "{late:?}");
    assert!(
        late.stdout
            .contains("coverage: bounded: verified only for param 2"),
        "{late:?}"
    );
    assert!(!late.stdout.contains("every value"), "{late:?}");

    let pinned = weft_in(
        &root,
        &[
            "samples/sizes/pipeline_bug.ptx",
            "--param",
            "2=2",
            "--format",
            "json",
        ],
    );
    assert_eq!(pinned.code, 0, "{pinned:?}");
    assert!(pinned.json()["kernels"][0]["coverage"].is_null());
}

/// A path abandoned at its first choice on a variable (no witness for either side) leaves
/// that variable's values unexplored with none explored: the coverage lists it, and the
/// bounded verdict's "except those with these values" names it (it listed only variables
/// some path had explored, so the exception named nothing).
#[test]
fn a_variable_no_path_explored_is_listed_as_not_explored() {
    let root = repo_root();
    let fixture = "crates/cli/tests/fixtures/abandoned_variable.ptx";
    let run = weft_in(&root, &[fixture, "--format", "json"]);
    assert_eq!(run.code, 0, "{run:?}");
    let doc = run.json();
    check_schema(&doc);
    let c = &doc["kernels"][0]["coverage"];
    assert_eq!(c["complete"], false, "{c}");
    let vars = c["variables"].as_array().expect("variables");
    let sum = vars
        .iter()
        .find(|v| {
            v["term"]
                .as_str()
                .is_some_and(|t| t.contains("param 4 (e)"))
        })
        .unwrap_or_else(|| panic!("the five-field sum is listed: {c}"));
    assert_eq!(sum["explored"], serde_json::json!([]), "{c}");
    assert_eq!(
        sum["not_explored"],
        serde_json::json!([[0u64, 4294967295u64]]),
        "{c}"
    );
    let text = weft_in(&root, &[fixture]);
    assert!(
        text.stdout.contains("+ param 4 (e)) = 0..=4294967295"),
        "{text:?}"
    );
}

/// A shared address that depends on a size is decided value by value, like a synchronization
/// operand: a buffer picked by the parity of a block count is verified for the values
/// explored, with or without a range that excludes 0 (it was unverifiable: plain shared
/// addresses were never split).
#[test]
fn a_shared_address_over_a_size_is_decided_value_by_value() {
    let fixture = "crates/cli/tests/fixtures/parity_address.ptx";
    for args in [&[][..], &["--param", "0=1.."][..]] {
        let mut all = vec![fixture];
        all.extend_from_slice(args);
        let run = weft_in(&repo_root(), &all);
        assert_eq!(run.code, 0, "{run:?}");
        assert!(run.stdout.contains(": verified"), "{run:?}");
        assert!(run.stdout.contains("..=9"), "{run:?}");
    }
}

/// The periodicity of the explored programs (docs/induction.md §3) is evidence in the
/// coverage; a verdict for the values not explored comes only from the induction over
/// the trip count (docs/induction.md): the pipeline (period 2, its two stages) is verified
/// for every trip count up to the no-overflow bound, the loop whose iterations grow and the
/// kernel that repeats in every explored program but races from 41 trips on stay bounded,
/// with the induction's reason.
#[test]
fn only_the_induction_widens_a_bounded_verdict() {
    let root = repo_root();
    let bounded = |ptx: &str| {
        let run = weft_in(&root, &[ptx]);
        assert_eq!(run.code, 0, "{run:?}");
        assert!(run.stdout.contains("coverage: bounded"), "{run:?}");
        assert!(!run.stdout.contains("every value"), "{run:?}");
        run.stdout
            .lines()
            .find(|l| l.contains("induction: not concluded: "))
            .unwrap_or_else(|| panic!("no induction line: {run:?}"))
            .to_owned()
    };
    let pipeline = weft_in(&root, &["samples/sizes/pipeline.ptx", "--format", "json"]);
    assert_eq!(pipeline.code, 0, "{pipeline:?}");
    let doc = pipeline.json();
    check_schema(&doc);
    let c = &doc["kernels"][0]["coverage"];
    assert!(
        c["periodicity"]["reason"].as_str().is_some_and(|r| r
            .contains("repeat with period 2 from param 2")
            && r.contains("= 4 to 12")),
        "{c}"
    );
    let i = &c["induction"];
    assert_eq!(i["concluded"], true, "{c}");
    assert_eq!(i["period"], 2);
    assert_eq!(i["family"], serde_json::json!([6, 2147483645u64]));
    // Its shared accumulators hold known floats (`acc += 1.0f`, computed since 2026-11-30),
    // different at every trip: no two trips' states are alike.
    let none = bounded("samples/sizes/no_period.ptx");
    assert!(
        none.contains("the machine's state repeats at none of the first"),
        "{none}"
    );
    let late = bounded("samples/sizes/late_bug.ptx");
    assert!(
        late.contains("not by its distance to the trip count"),
        "{late}"
    );
    let deep = weft_in(
        &root,
        &[
            "samples/sizes/late_bug.ptx",
            "--max-trips",
            "48",
            "--format",
            "json",
        ],
    );
    assert_eq!(deep.code, 1, "{deep:?}");
    let doc = deep.json();
    check_schema(&doc);
    assert_eq!(
        doc["kernels"][0]["coverage"]["failing_inputs"][0]["value"],
        41
    );
}

/// Two unordered writes of one symbolic value (a function of the kernel's inputs only) are a
/// benign race, like writes of one known value; writes of different symbolic values race.
#[test]
fn writes_of_one_symbolic_value_are_a_benign_race() {
    let run = weft(&[
        "symbolic_values.ptx",
        "--kernel",
        "same",
        "--color",
        "never",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("benign race: unordered writes of the same value to shared `buf`"),
        "{run:?}"
    );
    let run = weft(&[
        "symbolic_values.ptx",
        "--kernel",
        "differ",
        "--color",
        "never",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .contains("error[race]: write-after-write on shared `buf`+8"),
        "{run:?}"
    );
}

/// A branch on a value a volatile load read from global memory and a parameter (Liger's
/// cross entropy, `if y == ignore_index`, with the label read volatile) is unverifiable; the
/// hint names the parameter and says the load stays unknown whatever it is.
#[test]
fn a_hint_says_when_a_load_keeps_the_value_unknown() {
    let run = weft(&["loaded_label_branch.ptx", "--color", "never"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(
        run.stdout.contains(
            "help: fix the input with --param 1=VALUE (or --param label_branch_param_1=VALUE); \
             the value also depends on a load from memory, which no option fixes, so that may \
             not decide it"
        ),
        "{run:?}"
    );
}

/// Value terms (`value_terms.ptx`): two warps store a result computed from two unknown
/// shared values read in opposite orders. Operations whose operands commute bit for bit
/// (f32 `add`, `max`, `fma`'s factors, integer `add`, a split `f32x2` packed again, a mean
/// through `div.approx` of constants, a warp's `redux.sync.add` of the same lanes' values,
/// the two 32-bit words of a 64-bit value stored whole)
/// store one value, a benign race; the others race (`sub`, `fma`'s addend, half-precision
/// `max` and packed `add.f16x2`, whose order weft keeps, the halves of a pair swapped, a sum against one lane's
/// value). Before value terms every one of them was a race.
#[test]
fn value_terms_tell_commuted_results_from_different_ones() {
    let cases = [
        ("add_f32", true),
        ("sub_f32", false),
        ("max_f32", true),
        ("max_f16", false),
        ("add_f16x2", false),
        ("add_s32", true),
        ("fma_addend", false),
        ("fma_factors", true),
        ("mean_of_constants", true),
        ("f32x2_split_pack", true),
        ("f32x2_halves_swapped", false),
        ("redux_add", true),
        ("redux_add_against_one", false),
        ("words_of_a_pair", true),
        ("words_of_two_pairs", false),
        ("redux_max_f32", true),
    ];
    for (kernel, benign) in cases {
        let k = &kernel_report("value_terms.ptx", kernel, if benign { 0 } else { 1 });
        let kinds: Vec<(&str, bool)> = k["violations"]
            .as_array()
            .expect("violations")
            .iter()
            .map(|v| (v["kind"].as_str().expect("kind"), v["benign"] == true))
            .collect();
        if benign {
            assert_eq!(kinds, [("benign-race", true)], "{kernel}");
        } else {
            assert_eq!(kinds, [("race", false)], "{kernel}");
        }
        let compared = k["notes"].as_array().expect("notes").iter().any(|n| {
            n.as_str()
                .is_some_and(|n| n.contains("compared symbolically"))
        });
        assert!(compared, "{kernel}: the second run's note is missing: {k}");
    }
}

/// A predicate on an input combined with a known one that decides it (`p && false`) is
/// known: only the real choice (`n > 5`, through `p || false`) is explored, and the
/// coverage is every value of `n`.
#[test]
fn known_predicates_decide_combinations_with_unknown_ones() {
    let run = weft(&[
        "symbolic_values.ptx",
        "--kernel",
        "decided",
        "--color",
        "never",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(
            "coverage: verified for every value of param 0 (n) (2 paths explored, none cut short)"
        ),
        "{run:?}"
    );
}

/// A tensor map filled in shared memory (Triton's device-side descriptors):
/// `tensormap.replace` writes the whole 128-byte object and `tensormap.cp_fenceproxy` reads
/// it, so the warp's copy must come after the filling thread's replaces. Before, both were
/// unverifiable ("a tensor map in shared memory is not modelled").
#[test]
fn a_tensor_map_in_shared_memory_is_written_whole_and_copied() {
    let run = weft(&[
        "tensormap_shared.ptx",
        "--kernel",
        "devdesc",
        "--color",
        "never",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains("note: tensor maps in shared memory"),
        "{run:?}"
    );
    let k = kernel_report("tensormap_shared.ptx", "devdesc_unsynced", 1);
    let violations = k["violations"].as_array().expect("violations");
    assert!(!violations.is_empty(), "{k}");
    for v in violations {
        assert_eq!(v["kind"], "race", "{v}");
        let opcodes = violation_opcodes(v);
        assert!(
            opcodes.iter().any(|o| o.starts_with("tensormap.replace"))
                && opcodes
                    .iter()
                    .any(|o| o.starts_with("tensormap.cp_fenceproxy")),
            "{opcodes:?}"
        );
    }
}

/// Triton's flattened loop keeps its inner counter as `ki = ki == n - 1 ? 0 : ki + 1`: a
/// `selp` per trip on a comparison the path's choices have decided by the next trip. Each
/// use resolves those `selp`s (and results built on them are not cached), so the counter's
/// term stays small and the branch on it stays a choice: before, it nested one level per
/// trip, passed the term cap at 6 trips and the kernel was unverifiable.
#[test]
fn a_wrapping_counter_stays_a_choice_across_trips() {
    let run = weft(&["flattened_counter.ptx", "--color", "never"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(
            "coverage: bounded: verified only for param 0 (flat_counter_param_0) = 0..=9"
        ),
        "{run:?}"
    );
}

/// A kernel that reads its cluster shape and asserts it holds two CTAs (CUTLASS's 2-SM
/// pipelines, whose cluster shape is a launch setting): with the CTA alone in its cluster
/// the assertion fails, which says only that the kernel needs a larger cluster. weft reported
/// `trap-reachable` ("fails whatever the input"); now it cannot verify the kernel and says
/// why.
#[test]
fn a_trap_that_needs_a_larger_cluster_is_not_a_violation() {
    let run = weft(&["cluster_assert.ptx", "--color", "never"]);
    assert_eq!(run.code, 3, "{run:?}");
    assert!(!run.stdout.contains("trap-reachable"), "{run:?}");
    assert!(
        run.stdout.contains(
            "could not verify: a trap (or failed assertion) is reached with the CTA alone in \
             its cluster"
        ),
        "{run:?}"
    );
}

/// Vector register variables (`.reg .v4 .s32 abcd;`, components `abcd.x` … `abcd.w`, the
/// whole vector as an operand) parse, and their components carry values: quack's GEMM with
/// a 2x1 cluster was an input error ("undeclared symbol `abcd.x`").
#[test]
fn vector_register_variables_carry_their_components() {
    let run = weft(&["vector_register.ptx", "--color", "never"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("benign race: unordered writes of the same value to shared `buf`"),
        "{run:?}"
    );
}

/// Two `int` fields of a by-value struct read with one `ld.param.b64` and split with
/// `mov.b64 {lo, hi}` (nvcc's code for CUTLASS's problem shape): each half is its field, so
/// the branch on `k == 0` is explored like a field read alone (it was "a branch on an unknown
/// predicate").
#[test]
fn halves_of_a_wide_parameter_load_are_its_fields() {
    let run = weft(&["param_b64_split.ptx", "--color", "never"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(
            "coverage: verified for every value of param 0 bytes 4..8 (2 paths explored, none \
             cut short)"
        ),
        "{run:?}"
    );
}

/// An asynchronous operation nothing completes may outlive the CTA
/// (`store_pending_at_exit.ptx`): weft checks races within the CTA's lifetime, so the kernel
/// verifies, and a note names the operation.
#[test]
fn an_operation_pending_at_exit_is_noted() {
    let pending = |k: &serde_json::Value| {
        k["notes"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|n| n.as_str())
            .any(|n| n.contains("completed by no wait of their thread"))
    };
    let k = assert_verified("store_pending_at_exit.ptx", "exit_pending");
    assert!(pending(&k), "{k}");
    let k = kernel_report("store_pending_at_exit.ptx", "exit_waited", 0);
    assert!(!pending(&k), "{k}");
}

/// Polls of an mbarrier (`mbarrier_polls.ptx`): a wait's polling starts where the thread
/// reaches it, so a wait not ordered after the init there may poll an uninitialized
/// object; and after a peek answered "not ready" (its phase incomplete), a second peek for
/// the other parity returns at once (the phase before is complete), so the thread runs on
/// unsynchronized: reported (as the wait the replay cannot satisfy).
#[test]
fn polls_start_where_the_thread_reaches_them() {
    let k = kernel_report("mbarrier_polls.ptx", "poll_before_init", 1);
    assert_eq!(violation_kinds(&k), ["mbarrier-uninitialized"], "{k}");
    assert_verified("mbarrier_polls.ptx", "poll_after_init");
    let k = kernel_report("mbarrier_polls.ptx", "peek_wrong_parity", 1);
    assert!(!violation_kinds(&k).is_empty(), "{k}");
    assert_verified("mbarrier_polls.ptx", "peek_right_parity");
    // A peek at a phase that never comes answers "not ready" even in the run with peeks
    // waiting (it was a deadlock there); a spinning wait for that phase after it is one.
    assert_verified("mbarrier_polls.ptx", "peek_past_the_last_phase");
    let k = kernel_report("mbarrier_polls.ptx", "wait_past_the_last_phase", 1);
    assert_eq!(violation_kinds(&k), ["deadlock"], "{k}");
}

/// A phase armed again before the copy that completes its bytes is known to have landed
/// (`expect_tx_before_copy_lands.ptx`): the copy's complete_tx lands after its issue, so
/// the second arrive.expect_tx may count in the first phase (FlashAttention-4 with its
/// producer's tail waits deleted verified).
#[test]
fn a_phase_armed_before_its_copy_lands_is_a_phase_race() {
    let k = kernel_report("expect_tx_before_copy_lands.ptx", "rearm_early", 1);
    assert_eq!(violation_kinds(&k), ["mbarrier-phase-race"], "{k}");
    assert_verified("expect_tx_before_copy_lands.ptx", "rearm_after_wait");
}

/// mbarrier objects' lifetimes (`mbarrier_lifetime.ptx`): an `mbarrier.init` writes the
/// object's bytes, so one placed on an operand a `tcgen05.mma` still reads races with the
/// MMA; an asynchronous arrival (`tcgen05.commit`) whose phase no wait observes before the
/// object's `mbarrier.inval` may land on the invalidated object, unless a later commit of
/// the same thread was observed (one thread's commits arrive in issue order); an inval
/// while other threads may still poll the object is a use after the inval.
#[test]
fn mbarrier_bytes_and_async_arrivals_respect_the_objects_lifetime() {
    let k = kernel_report("mbarrier_lifetime.ptx", "init_over_operand", 1);
    assert_eq!(violation_kinds(&k), ["race"], "{k}");
    let opcodes = violation_opcodes(&k["violations"][0]);
    assert!(
        opcodes.iter().any(|o| o.starts_with("mbarrier.init")),
        "{opcodes:?}"
    );
    assert!(
        opcodes.iter().any(|o| o.starts_with("tcgen05.mma")),
        "{opcodes:?}"
    );
    assert_verified("mbarrier_lifetime.ptx", "init_after_wait");
    let k = kernel_report("mbarrier_lifetime.ptx", "inval_pending_commit", 1);
    assert_eq!(violation_kinds(&k), ["mbarrier-uninitialized"], "{k}");
    let message = k["violations"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("reach it in phase 0"), "{message}");
    assert_verified("mbarrier_lifetime.ptx", "inval_after_later_commit");
    let k = kernel_report("mbarrier_lifetime.ptx", "inval_while_polled", 1);
    let kinds = violation_kinds(&k);
    assert!(!kinds.is_empty(), "{k}");
    assert!(
        kinds.iter().all(|&kind| kind == "mbarrier-uninitialized"),
        "{k}"
    );
}

/// The memory of a live mbarrier object (`mbarrier_reused.ptx`): a store, a load or a
/// `cp.async` of its bytes ordered after its `mbarrier.init` and not after an
/// `mbarrier.inval` is `mbarrier-reused` (each verified before: the object's bytes were
/// accessed only by its init and inval); the same stores after the inval, and data in the
/// memory before the init, verify.
#[test]
fn a_live_mbarriers_memory_is_not_reused() {
    for (kernel, inval, opcode) in [
        ("store_no_inval", false, "st.shared.b32"),
        ("load_before_inval", true, "ld.shared.b32"),
        ("copy_into_live", false, "cp.async.ca.shared.global"),
    ] {
        let k = kernel_report("mbarrier_reused.ptx", kernel, 1);
        assert_eq!(violation_kinds(&k), ["mbarrier-reused"], "{k}");
        let v = &k["violations"][0];
        let message = v["message"].as_str().unwrap_or_default();
        assert!(message.starts_with("mbarrier 0x0: "), "{message}");
        assert_eq!(
            message.contains("and before its mbarrier.inval"),
            inval,
            "{message}"
        );
        assert_eq!(
            message.contains("with no mbarrier.inval before them"),
            !inval,
            "{message}"
        );
        let opcodes = violation_opcodes(v);
        assert!(opcodes.contains(&opcode), "{opcodes:?}");
        assert!(
            opcodes.iter().any(|o| o.starts_with("mbarrier.init")),
            "{opcodes:?}"
        );
    }
    assert_verified("mbarrier_reused.ptx", "store_after_inval");
    assert_verified("mbarrier_reused.ptx", "data_before_init");
}

/// Shared addresses not aligned as the PTX ISA requires (`misaligned.ptx`): a 16-byte vector
/// load at 4 bytes into a `.align 16` array, a word store at 2 bytes, an mbarrier object at
/// 4 bytes and a bulk copy into 8 bytes are each `misaligned-address` (all four verified
/// before: weft checked bounds, not alignment); the same operations at aligned addresses
/// verify, and so does a 16-byte load from an array declared `.align 4`, whose alignment
/// depends on where the compiler places it.
#[test]
fn misaligned_shared_addresses_are_reported() {
    for (kernel, opcodes, need) in [
        ("vector_load", &["ld.shared.v4.u32"][..], 16),
        ("scalar_store", &["st.shared.u32"][..], 4),
        (
            "mbarrier_at_4",
            &[
                "mbarrier.init.shared::cta.b64",
                "mbarrier.arrive.shared::cta.b64",
                "mbarrier.try_wait.parity.shared::cta.b64",
            ][..],
            8,
        ),
        (
            "bulk_copy_at_8",
            &["cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes"][..],
            16,
        ),
    ] {
        let k = kernel_report("misaligned.ptx", kernel, 1);
        let kinds = violation_kinds(&k);
        assert_eq!(kinds.len(), opcodes.len(), "{k}");
        assert!(
            kinds.iter().all(|&kind| kind == "misaligned-address"),
            "{k}"
        );
        let violations = k["violations"].as_array().expect("violations");
        for (v, opcode) in violations.iter().zip(opcodes) {
            assert_eq!(violation_opcodes(v), [*opcode], "{v}");
            let message = v["message"].as_str().unwrap_or_default();
            assert!(
                message.contains(&format!("is not aligned to {need} bytes")),
                "{message}"
            );
            assert!(message.contains("into `buf`"), "{message}");
        }
    }
    // Every thread that executes the misaligned load is named.
    let k = kernel_report("misaligned.ptx", "vector_load", 1);
    let threads = &k["violations"][0]["threads"];
    assert_eq!(threads[0]["first"], 0, "{k}");
    assert_eq!(threads[0]["last"], 63, "{k}");
    assert_verified("misaligned.ptx", "aligned");
    assert_verified("misaligned.ptx", "beyond_declared");
}

/// Floating-point parameters that decide synchronization are explored by their bit
/// patterns (`float_params.ptx`; each kernel was unverifiable before): `beta != 0` skips a
/// barrier at beta = +0, a race found with bit pattern 0; a barrier on either side of
/// `x > 1.0` verifies for every value (two paths); an `.f64` `x > 1.5` without a barrier
/// races, found with the smallest double above 1.5.
#[test]
fn float_parameters_deciding_synchronization_are_explored() {
    let k = kernel_report("float_params.ptx", "race_when_zero", 1);
    assert_eq!(violation_kinds(&k), ["race"], "{k}");
    assert_eq!(k["coverage"]["failing_inputs"][0]["value"], 0, "{k}");
    assert_eq!(k["coverage"]["failing_inputs"][0]["float"], "0.0", "{k}");
    let k = assert_verified("float_params.ptx", "synced_either_way");
    assert_eq!(k["coverage"]["paths"], 2, "{k}");
    assert_eq!(k["coverage"]["complete"], true, "{k}");
    let k = kernel_report("float_params.ptx", "race_above", 1);
    assert_eq!(violation_kinds(&k), ["race"], "{k}");
    assert_eq!(
        k["coverage"]["failing_inputs"][0]["value"], 0x3ff8_0000_0000_0001u64,
        "{k}"
    );
    // The witness of a float parameter is shown as the float too.
    assert_eq!(
        k["coverage"]["failing_inputs"][0]["float"], "1.5000000000000002",
        "{k}"
    );
    // Confirmed by a run with the witness's bytes pinned: as the number 1065353217.0 (the
    // bit pattern read as an integer) it would not reproduce the race.
    let k = kernel_report("float_params.ptx", "race_between", 1);
    assert_eq!(violation_kinds(&k), ["race"], "{k}");
    assert_eq!(
        k["coverage"]["failing_inputs"][0]["value"], 0x3f80_0001,
        "{k}"
    );
    // `.ftz` compares a subnormal as zero: fixed to the smallest subnormal, the barrier is
    // skipped; to the smallest normal, it is not. Free, the flush has no term.
    let verdict = |value: &str| {
        let spec = format!("beta={value}");
        let run = weft(&[
            "float_params.ptx",
            "--kernel",
            "ftz_flushes",
            "--param",
            &spec,
            "--format",
            "json",
        ]);
        run.json()["kernels"][0]["verdict"].clone()
    };
    assert_eq!(verdict("1e-45"), "violation");
    assert_eq!(verdict("1.2e-38"), "verified");
    let k = kernel_report("float_params.ptx", "ftz_flushes", 3);
    assert_eq!(k["verdict"], "unverifiable", "{k}");
}

/// Floating-point arithmetic on known values and on parameters is computed
/// (`float_arith.ptx`; each kernel was unverifiable before): `(int)(s * 4.0f)` decides a
/// barrier by the value of `s`; CUTLASS example 63's `(int)((float)k * 0.25)` is a term over
/// `k` whose race is found at k = 4; an unmarked `mul` and `add` that ptxas may fuse into one
/// `fma` are not computed (the two roundings differ at a = 1 + 2^-12), and with `add.rn`,
/// which ptxas may not fuse, they are.
#[test]
fn float_arithmetic_deciding_synchronization_is_computed() {
    let run = |kernel: &str, param: &str| {
        let mut args = vec!["float_arith.ptx", "--kernel", kernel, "--format", "json"];
        if !param.is_empty() {
            args.extend(["--param", param]);
        }
        weft(&args).json()["kernels"][0].clone()
    };
    assert_eq!(run("known_scale", "s=0.5")["verdict"], "verified");
    let k = run("known_scale", "s=0.25");
    assert_eq!(violation_kinds(&k), ["race"], "{k}");
    let k = kernel_report("float_arith.ptx", "tile_count", 1);
    assert_eq!(violation_kinds(&k), ["race"], "{k}");
    assert_eq!(k["coverage"]["failing_inputs"][0]["value"], 4, "{k}");
    // An integer parameter's witness is no float.
    assert!(
        k["coverage"]["failing_inputs"][0].get("float").is_none(),
        "{k}"
    );
    let k = run("maybe_fused", "a=1.000244140625");
    assert_eq!(k["verdict"], "unverifiable", "{k}");
    let hint = k["unverifiable"][0]["hint"].as_str().unwrap_or_default();
    let reason = k["unverifiable"][0].to_string();
    assert!(
        reason.contains("floating-point arithmetic"),
        "{reason} {hint}"
    );
    assert_eq!(run("not_fused", "a=1.000244140625")["verdict"], "verified");
    // A packed `.f32x2` add is not computed (it read as an integer add of no type, known 0).
    let k = kernel_report("float_arith.ptx", "packed_pair", 3);
    assert_eq!(k["verdict"], "unverifiable", "{k}");
}

/// A bulk copy's byte count must be a multiple of 16 (`misaligned.ptx`): a 40-byte bulk load
/// and a 24-byte bulk store, each at an aligned shared address, are `bulk-copy-size` (both
/// verified before); the 64-byte copy of `aligned` verifies.
#[test]
fn bulk_copy_sizes_not_a_multiple_of_16_are_reported() {
    for (kernel, opcode, bytes) in [
        (
            "bulk_copy_size_40",
            "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes",
            40,
        ),
        (
            "bulk_store_size_24",
            "cp.async.bulk.global.shared::cta.bulk_group",
            24,
        ),
    ] {
        let k = kernel_report("misaligned.ptx", kernel, 1);
        assert_eq!(violation_kinds(&k), ["bulk-copy-size"], "{k}");
        let v = &k["violations"][0];
        assert_eq!(violation_opcodes(v), [opcode], "{v}");
        let message = v["message"].as_str().unwrap_or_default();
        assert!(
            message.contains(&format!("copies {bytes} bytes")),
            "{message}"
        );
        assert_eq!(v["threads"][0]["first"], 0, "{k}");
        assert_eq!(v["threads"][0]["last"], 0, "{k}");
    }
}

/// A failing path whose first witness (the smallest values) does not reproduce what it
/// found is re-run with other inputs that follow it (`alternative_witness.ptx`): the path
/// "n <= 1" races only at n = 1, which confirms it (unverifiable before, from n = 0 alone).
/// A path whose two racing stores need n = 0 and n = 1 at once reproduces with neither; its
/// stores are under guards with terms, so the exploration runs again with them as choices
/// and verifies (unverifiable before). A race of two values equal for every input that the
/// symbolic run cannot show equal, with no branch run both ways, stays unverifiable.
#[test]
fn a_failing_path_is_confirmed_with_its_other_inputs() {
    let k = kernel_report("alternative_witness.ptx", "race_at_one", 1);
    assert_eq!(violation_kinds(&k), ["race"], "{k}");
    assert_eq!(k["coverage"]["failing_inputs"][0]["value"], 1, "{k}");
    let k = kernel_report("alternative_witness.ptx", "never_both", 0);
    assert_eq!(k["verdict"], "verified", "{k}");
    assert!(
        k["notes"].as_array().is_some_and(|n| n.iter().any(|n| n
            .as_str()
            .is_some_and(|n| n.contains("explored as choices")))),
        "{k}"
    );
    let k = kernel_report("alternative_witness.ptx", "equal_only_concretely", 3);
    assert_eq!(k["verdict"], "unverifiable", "{k}");
    let reason = k["unverifiable"][0]["reason"].as_str().unwrap_or_default();
    assert!(
        reason.contains("race that does not reproduce with its input values fixed"),
        "{reason}"
    );
    assert!(violation_kinds(&k).is_empty(), "{k}");
}

/// `wmma.load` and `wmma.store` are shared accesses of the whole matrix from every lane
/// (`wmma_forms.ptx`; all of these verified before, when wmma was skipped): a `.col` load
/// without a stride operand covers its 32 contiguous columns (a store into the last one
/// races, one just past it does not), a padded row's padding is not read, a stride that puts
/// a row off 16 bytes is misaligned (and a sub-byte stride that starts a row inside a byte),
/// a lane's read of the warp's own store is a race without
/// a `__syncwarp` (and not one under `--warp-sync`), another warp's read after `bar.sync` is
/// not, and a `.global` load touches no shared memory.
#[test]
fn wmma_loads_and_stores_are_shared_accesses() {
    let k = kernel_report("wmma_forms.ptx", "col_no_stride", 1);
    assert_eq!(violation_kinds(&k), ["race"], "{k}");
    assert_eq!(
        violation_opcodes(&k["violations"][0]),
        [
            "wmma.load.b.sync.aligned.col.m8n32k16.shared.f16",
            "st.shared.u32"
        ],
        "{k}"
    );
    let k = kernel_report("wmma_forms.ptx", "misaligned_stride", 1);
    assert_eq!(violation_kinds(&k), ["misaligned-address"], "{k}");
    let message = k["violations"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("at shared address 0x18"), "{message}");
    assert!(message.contains("not aligned to 16 bytes"), "{message}");
    let k = kernel_report("wmma_forms.ptx", "sub_byte_stride", 1);
    assert_eq!(violation_kinds(&k), ["misaligned-address"], "{k}");
    let message = k["violations"][0]["message"].as_str().unwrap_or_default();
    assert!(message.contains("starts inside the byte"), "{message}");
    let k = kernel_report("wmma_forms.ptx", "store_read_by_lane", 1);
    assert_eq!(violation_kinds(&k), ["race"], "{k}");
    let notes = k["notes"].to_string();
    assert!(notes.contains("wmma.store"), "{notes}");
    let run = weft(&[
        "wmma_forms.ptx",
        "--kernel",
        "store_read_by_lane",
        "--warp-sync",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    for kernel in [
        "col_past_the_end",
        "padded_rows",
        "store_then_other_warp_reads",
        "global_load",
        "sub_byte_rows",
    ] {
        assert_verified("wmma_forms.ptx", kernel);
    }
}

/// Unknown generic addresses computed from a generic address into shared memory
/// (`generic_shared_pointer.ptx`) are shared addresses, not global ones: a store through
/// `cvta.shared(s) + 4 * idx` (an `add`, or one `mad.wide`) is explored over the parameter
/// and races at idx = 0 (verified before: the unknown generic address was taken as global
/// memory), a load through the
/// `cvta` of an unknown shared address is unverifiable naming the mark, and the same
/// arithmetic on a global pointer parameter stays global memory.
#[test]
fn unknown_generic_pointers_into_shared_memory_are_shared_accesses() {
    for kernel in ["unknown_offset_store", "mad_offset_store"] {
        let k = kernel_report("generic_shared_pointer.ptx", kernel, 1);
        assert_eq!(violation_kinds(&k), ["race"], "{k}");
        assert_eq!(k["coverage"]["failing_inputs"][0]["value"], 0, "{k}");
    }
    let k = kernel_report("generic_shared_pointer.ptx", "cvta_of_unknown", 3);
    let reason = &k["unverifiable"][0];
    assert!(
        reason["reason"]
            .as_str()
            .is_some_and(|r| r.contains("shared-memory address")),
        "{k}"
    );
    assert!(
        reason["inputs"]
            .to_string()
            .contains("a generic pointer into shared memory"),
        "{k}"
    );
    assert_verified("generic_shared_pointer.ptx", "global_unknown_offset");
}

/// `.relaxed` mbarrier arrivals and waits (`mbarrier_relaxed.ptx`) order memory only with a
/// fence beside them, which weft does not model: such a kernel is unverifiable, naming the
/// instruction (both verified before: every wait was taken as an acquire, every arrival as
/// a release); the explicit `.acquire`/`.release` forms verify.
#[test]
fn relaxed_mbarrier_operations_are_not_taken_as_acquire_or_release() {
    for (kernel, opcode) in [
        (
            "relaxed_wait",
            "mbarrier.try_wait.parity.relaxed.cta.shared::cta.b64",
        ),
        (
            "relaxed_arrive",
            "mbarrier.arrive.relaxed.cta.shared::cta.b64",
        ),
    ] {
        let k = kernel_report("mbarrier_relaxed.ptx", kernel, 3);
        assert_eq!(k["verdict"], "unverifiable", "{k}");
        let reason = k["unverifiable"][0]["reason"].as_str().unwrap_or_default();
        assert!(
            reason.starts_with(&format!("`{opcode}` has `.relaxed` semantics")),
            "{reason}"
        );
    }
    assert_verified("mbarrier_relaxed.ptx", "acquire_release");
}

/// One lane releasing what its whole warp read (`lockstep_release.ptx`): under
/// `--warp-sync` every lane's load runs before lane 0's arrival, so before the producer's
/// refill (it was a race: lock-step was not combined with barrier paths in the race check);
/// with the arrival before the loads the refill still races with them; without
/// `--warp-sync` nothing orders the other lanes before the arrival.
#[test]
fn lock_step_orders_a_warps_accesses_before_one_lanes_release() {
    // Both ways round: the producer in the higher warp, and in the lower one.
    for (kernel, verified) in [
        ("read_then_release", true),
        ("consumer_first", true),
        ("release_then_read", false),
        ("consumer_first_release_then_read", false),
    ] {
        let run = weft(&[
            "lockstep_release.ptx",
            "--kernel",
            kernel,
            "--warp-sync",
            "--format",
            "json",
        ]);
        let doc = run.json();
        let k = &doc["kernels"][0];
        if verified {
            assert_eq!(run.code, 0, "{kernel}: {run:?}");
            assert_eq!(k["verdict"], "verified", "{kernel}: {run:?}");
        } else {
            assert_eq!(run.code, 1, "{kernel}: {run:?}");
            assert_eq!(violation_kinds(k), ["race"], "{kernel}: {run:?}");
        }
    }
    let k = kernel_report("lockstep_release.ptx", "read_then_release", 1);
    assert_eq!(violation_kinds(&k), ["mbarrier-phase-race"], "{k}");
}

/// An input-dependent assertion met after a loop over the same input
/// (`assert_after_choice.ptx`): the path that chose 0 trips meets it with a known predicate;
/// it was "an assertion fails whatever the input" (and the induction's run with the value
/// fixed said the same), and is now an assumption, as when the assertion comes first,
/// because other paths avoid it. An assertion no input passes stays trap-reachable.
#[test]
fn an_assertion_met_after_a_choice_is_still_an_assumption() {
    for kernel in ["loop_then_assert", "assert_then_loop"] {
        let k = assert_verified("assert_after_choice.ptx", kernel);
        let assumptions = k["assumptions"].as_array().map_or(0, Vec::len);
        assert_eq!(assumptions, 1, "{k}");
        let induction = k["coverage"]["induction"]["reason"]
            .as_str()
            .unwrap_or_default();
        assert!(
            induction.contains("except 0 (a run with such a value fails an assertion"),
            "{induction}"
        );
    }
    for kernel in ["loop_then_failing_assert", "known_failing_assert"] {
        let k = kernel_report("assert_after_choice.ptx", kernel, 1);
        assert_eq!(violation_kinds(&k), ["trap-reachable"], "{k}");
        // Its failure, not an assumption as well.
        assert_eq!(k["assumptions"].as_array().map(Vec::len), Some(0), "{k}");
    }
}

/// Terms through `mov.b64 {lo, hi}` packs and `cvta.global` (`packed_terms.ptx`): a trip
/// count packed beside another input's function and unpacked again is its own term, so
/// its loop is explored like one over the parameter (it was "a branch on an unknown
/// predicate", Triton's tutorial 03 matmul on sm_100a); a known half stays known through the
/// pack; the converted pointer keeps its term, so every warp storing its halves to one word
/// is a benign race (it was a race).
#[test]
fn packs_and_global_conversions_keep_their_terms() {
    let k = assert_verified("packed_terms.ptx", "packed_trips");
    let coverage = k["coverage"].to_string();
    assert!(coverage.contains("packed_trips_param_2"), "{coverage}");
    assert!(!coverage.contains("packed_trips_param_0"), "{coverage}");
    let k = assert_verified("packed_terms.ptx", "packed_known");
    assert_eq!(k["unverifiable"].as_array().map(Vec::len), Some(0), "{k}");
    let k = kernel_report("packed_terms.ptx", "cvta_store", 0);
    assert_eq!(violation_kinds(&k), ["benign-race", "benign-race"], "{k}");
}

/// A size computed from a parameter, stored to shared memory by one warp and loaded by all
/// after a barrier (Triton's warp-specialized persistent matmul, quack's tile scheduler):
/// the load reads the stored value's term, so the loop bounded by it is explored like one
/// bounded by the parameter itself (it was "a branch on an unknown predicate"). Without the
/// barrier the load races with the store, and that race is reported.
#[test]
fn a_size_handed_through_shared_memory_keeps_its_term() {
    let run = weft(&["shared_handoff.ptx", "--color", "never"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("coverage: bounded: verified only for param 0 (handoff_param_0) = 0..=576"),
        "{run:?}"
    );
    let run = weft(&["shared_handoff_race.ptx", "--color", "never"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .contains("error[race]: read-after-write on shared `smem`"),
        "{run:?}"
    );
}

/// CUTLASS example 77's backward load: `arrive.expect_tx` (one arrival, the Q bytes), then
/// a second `expect_tx` (the K bytes), then the two TMA loads. The second `expect_tx` comes
/// before the copies whose `complete_tx` the phase needs, so it is counted in the phase in
/// every execution; weft accepted only an `expect_tx` ordered before an arrival and
/// reported an `mbarrier-phase-race`. Both orders verify.
#[test]
fn an_expect_tx_before_the_phase_copies_is_in_the_phase() {
    let run = weft(&["expect_tx_after_arrive.ptx", "--color", "never"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert_eq!(run.stdout.matches(": verified").count(), 2, "{run:?}");
}

/// quack's RMSNorm backward prologue: each thread prefetches its row by `cp.async` when the
/// row exists (`row < m`), else zero-fills its slot; the loop that waits for the copies runs
/// only when `m > 0`. Both sides of the prefetch branch are emulated, so on the path with
/// `m = 0` the copy of the "row exists" side was still pending at the buffer's reuse: a race
/// that did not reproduce with `m = 0` fixed, and the kernel was unverifiable. A copy whose
/// side the path's choices rule out is now no access.
#[test]
fn a_copy_on_a_side_the_path_rules_out_is_no_access() {
    let run = weft(&["copy_side_ruled_out.ptx", "--color", "never"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout
            .contains("coverage: verified for every value of param 1"),
        "{run:?}"
    );
}

/// The prefetch's guard and the row loop read different terms of M: the path that runs no
/// trip (M = 0) cannot rule the copy out, and its race does not reproduce on a concrete run
/// with M = 0 (unverifiable before). The exploration repeated with the guard's branch as a
/// choice gives each side its own path: verified, and the report says how.
#[test]
fn a_phantom_copy_under_a_data_branch_is_split_off() {
    let run = weft(&["copy_side_other_term.ptx", "--color", "never"]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(run.stdout.contains(": verified"), "{run:?}");
    assert!(
        run.stdout.contains(
            "the exploration was repeated with such branches and guards explored as choices"
        ),
        "{run:?}"
    );
}

/// The same, with the loop reading its slot before it waits for the prefetch: a real race
/// for M >= 1, hidden before behind the M = 0 path's unconfirmed phantom (unverifiable);
/// the split exploration confirms it with M = 1.
#[test]
fn a_real_race_behind_a_phantom_copy_is_found() {
    let run = weft(&[
        "copy_read_early.ptx",
        "--color",
        "never",
        "--format",
        "json",
    ]);
    assert_eq!(run.code, 1, "{run:?}");
    let doc: serde_json::Value = serde_json::from_str(&run.stdout).expect("json");
    let k = &doc["kernels"][0];
    assert_eq!(k["verdict"], "violation", "{run:?}");
    assert_eq!(k["violations"][0]["kind"], "race", "{run:?}");
    assert_eq!(k["coverage"]["failing_inputs"][0]["value"], 1, "{run:?}");
}

/// A data guard in a 1000-trip loop, split into choices, pins the size on every path, which
/// makes two stored values known and equal: the unconfirmed race of the first exploration is
/// a benign race of a verified (bounded) kernel.
#[test]
fn split_guards_in_a_loop_pin_the_size() {
    let k = kernel_report("split_guard_in_loop.ptx", "guard_in_loop", 0);
    assert_eq!(k["verdict"], "verified", "{k}");
    let v = k["violations"].as_array().expect("violations");
    assert!(v.len() == 1 && v[0]["benign"] == true, "{k}");
    assert_eq!(k["coverage"]["complete"], false, "{k}");
}

/// A TMA load nobody waits for, its mbarrier invalidated later (Triton's epilogue
/// invalidates its mbarriers): the reads of the destination race with the copy. weft said
/// "a TMA copy signals an mbarrier phase that never completes (its arrivals are missing)";
/// the phase had all its arrivals, only no waiter. The invalidation now lets the bytes land
/// first. And since no wait orders the copy's completion before the inval, the copy may
/// complete its bytes on the invalidated object in another execution (undefined in the ISA):
/// reported too, without hiding the race.
#[test]
fn an_unwaited_tma_load_before_an_inval_is_a_race() {
    let run = weft(&["tma_nowait_inval.ptx", "--color", "never"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout.contains(
            "error[mbarrier-uninitialized]: mbarrier 0x4000: the asynchronous operations of \
             warp 0 lane 0"
        ),
        "{run:?}"
    );
    assert!(
        run.stdout
            .contains("error[race]: write-after-read on shared `buf`"),
        "{run:?}"
    );
}

/// A read within the first 16 bytes at a TMA load's destination, unordered with the copy:
/// every TMA box's inner dimension is a multiple of 16 bytes, so the copy writes those bytes
/// whatever its box, and the race is a violation (it was a "possible" race, the kernel
/// unverifiable, whenever copies of two maps shared a phase: a skipped stage wait in quack's
/// RMSNorm backward). A read past them stays a possible race
/// (`possible_race_on_an_approximate_tma_extent_is_unverifiable`).
#[test]
fn a_race_on_a_tma_loads_first_bytes_is_a_violation() {
    let run = weft(&["tma_first_bytes_race.ptx", "--color", "never"]);
    assert_eq!(run.code, 1, "{run:?}");
    assert!(
        run.stdout
            .contains("error[race]: write-after-read on shared `buf`+132"),
        "{run:?}"
    );
}

/// `tcgen05.cp` reads its shared-memory source in the async proxy until a `tcgen05.commit`
/// tracks it, and block-scaled `tcgen05.mma` kinds lay out their operands (`tcgen05_cp.ptx`:
/// K = 96 of `kind::mxf4nvf4` reads a third 16-byte unit per row that K = 64 does not).
/// Before, the copy's reads were not recorded and the block-scaled kinds were unverifiable.
#[test]
fn tcgen05_cp_and_block_scaled_mma_read_shared_memory() {
    let cases = [
        ("cp_released_by_commit", 0, None),
        ("cp_without_proxy_fence", 1, Some("missing-proxy-fence")),
        ("cp_overwritten_early", 1, Some("race")),
        ("mma_mxf4_k64", 0, None),
        ("mma_mxf4_k96", 1, Some("race")),
    ];
    for (kernel, code, kind) in cases {
        let k = &kernel_report("tcgen05_cp.ptx", kernel, code);
        assert_eq!(
            violation_kinds(k),
            kind.into_iter().collect::<Vec<_>>(),
            "{kernel}: {k}"
        );
        if let Some(v) = k["violations"].as_array().and_then(|v| v.first()) {
            let opcodes = violation_opcodes(v);
            assert!(
                opcodes.iter().any(|o| o.starts_with("tcgen05.")),
                "{kernel}: {opcodes:?}"
            );
        }
    }
}

/// Tensor memory (`tcgen05_tmem.ptx`): the accumulator a `tcgen05.mma` writes until the
/// `tcgen05.commit` that tracks it, the cells `tcgen05.ld` reads until `tcgen05.wait::ld` (or
/// the first use of its registers) and `tcgen05.st` writes until `tcgen05.wait::st`, an MMA's
/// A operand in tensor memory, and the columns `tcgen05.dealloc` frees are race-checked. Before, tensor memory was not
/// modelled and every kernel here verified.
#[test]
fn tensor_memory_accesses_are_race_checked() {
    let cases: [(&str, i32, &[&str]); 10] = [
        ("acc_released_after_wait", 0, &[]),
        ("acc_released_before_wait", 1, &["race"]),
        ("acc_released_after_use", 0, &[]),
        ("acc_read_before_commit", 1, &["race"]),
        ("acc_freed_while_loading", 1, &["race"]),
        ("p_stored_then_mma", 0, &[]),
        // The store races with the MMA that reads it, and with the deallocation.
        ("p_stored_unwaited", 1, &["race", "race"]),
        (
            "ld_outside_lane_quarter",
            1,
            &["tensor-memory", "tensor-memory"],
        ),
        ("m64_released_after_wait", 0, &[]),
        ("m64_released_before_wait", 1, &["race"]),
    ];
    for (kernel, code, kinds) in cases {
        let k = &kernel_report("tcgen05_tmem.ptx", kernel, code);
        assert_eq!(violation_kinds(k), kinds, "{kernel}: {k}");
        if let Some(v) = k["violations"].as_array().and_then(|v| v.first()) {
            assert!(
                v["message"]
                    .as_str()
                    .is_some_and(|m| m.contains("on tensor memory lane")
                        || m.contains("accesses tensor memory lane")),
                "{kernel}: {v}"
            );
            let opcodes = violation_opcodes(v);
            assert!(
                opcodes.iter().all(|o| o.starts_with("tcgen05.")),
                "{kernel}: {opcodes:?}"
            );
        }
        // The register-use ordering is an approximation the kernel's notes list.
        let notes = k["notes"].to_string();
        assert_eq!(
            notes.contains("tcgen05.ld reads of tensor memory are complete once"),
            kernel == "acc_released_after_use",
            "{kernel}: {notes}"
        );
    }
}

/// Cluster launch control (`cluster_launch_control.ptx`): the answers to a CTA's
/// `clusterlaunchcontrol.try_cancel` requests are explored through the variable
/// `clusterlaunchcontrol.canceled` (how many are answered "canceled"), like a trip count;
/// the answer is an asynchronous write that completes on the request's mbarrier. Before,
/// every such kernel was unverifiable at its first request.
#[test]
fn cluster_launch_control_answers_are_explored() {
    let shown = "`clusterlaunchcontrol.canceled` (the cluster launch control requests answered \
                 \"canceled\")";
    let run = weft(&[
        "cluster_launch_control.ptx",
        "--kernel",
        "clc_steal",
        "--color",
        "never",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(
        run.stdout.contains(&format!(
            "coverage: bounded: verified only for {shown} = 0..=8"
        )),
        "{run:?}"
    );
    // Fixed with --param by its name: one path, nothing bounded.
    let run = weft(&[
        "cluster_launch_control.ptx",
        "--kernel",
        "clc_steal",
        "--param",
        "clusterlaunchcontrol.canceled=3",
        "--color",
        "never",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    assert!(!run.stdout.contains("coverage"), "{run:?}");
    // Undefined (PTX ISA): requesting again after reading an answer that may say "not
    // canceled". Reading the CTA id such an answer carries is not reported (an unknown).
    let k = kernel_report("cluster_launch_control.ptx", "clc_request_after_failure", 1);
    assert_eq!(violation_kinds(&k), ["cluster-launch-control"], "{k}");
    let run = weft(&[
        "cluster_launch_control.ptx",
        "--kernel",
        "clc_ctaid_unguarded",
        "--color",
        "never",
    ]);
    assert_eq!(run.code, 0, "{run:?}");
    for (kernel, kind, found) in [
        ("clc_steal_early", "deadlock", 1),
        ("clc_read_unwaited", "race", 0),
    ] {
        let run = weft(&[
            "cluster_launch_control.ptx",
            "--kernel",
            kernel,
            "--color",
            "never",
        ]);
        assert_eq!(run.code, 1, "{kernel}: {run:?}");
        assert!(
            run.stdout.contains(&format!("error[{kind}]")),
            "{kernel}: {run:?}"
        );
        assert!(
            run.stdout
                .contains(&format!("coverage: found with {shown} = {found} ")),
            "{kernel}: {run:?}"
        );
    }
}

/// Runs `weft FILE --kernel KERNEL --format json` on a fixture, checks the document's schema
/// and the exit code `code`, and returns the kernel's report.
fn kernel_report(file: &str, kernel: &str, code: i32) -> serde_json::Value {
    let run = weft(&[file, "--kernel", kernel, "--format", "json"]);
    let doc = run.json();
    check_schema(&doc);
    assert_eq!(run.code, code, "{kernel}: {run:?}");
    doc["kernels"][0].clone()
}

/// Asserts that `kernel` of `file` verifies (exit 0, verdict `verified`); its report.
fn assert_verified(file: &str, kernel: &str) -> serde_json::Value {
    let k = kernel_report(file, kernel, 0);
    assert_eq!(k["verdict"], "verified", "{k}");
    k
}

/// The kinds of a JSON kernel report's violations, in order.
fn violation_kinds(kernel: &serde_json::Value) -> Vec<&str> {
    kernel["violations"]
        .as_array()
        .expect("violations")
        .iter()
        .map(|v| v["kind"].as_str().expect("kind"))
        .collect()
}

/// The opcodes of a JSON violation's locations.
fn violation_opcodes(violation: &serde_json::Value) -> Vec<&str> {
    violation["locations"]
        .as_array()
        .expect("locations")
        .iter()
        .filter_map(|l| l["opcode"].as_str())
        .collect()
}
