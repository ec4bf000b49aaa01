//! The sample kernels of `samples/`: every manifest entry emulates, and the fast path
//! computes exactly what the general interpreter computes.

use crate::exec::Paths;
use crate::{
    Config, Emulation, ParamBinding, ParamRef, ParamValue, ScalarType, emulate, emulate_on,
};
use weft_program::{CtaShape, ThreadEnd};

/// The manifest's entries: (name, PTX path relative to the repository, kernel (every kernel
/// of the file when absent), arguments).
fn manifest() -> Vec<(String, String, Option<String>, Vec<String>)> {
    let path = repo().join("samples/manifest.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (the samples are part of the repository)",
            path.display()
        )
    });
    entries(&text)
}

/// The entries of a manifest in the samples' format.
fn entries(text: &str) -> Vec<(String, String, Option<String>, Vec<String>)> {
    let json: serde_json::Value = serde_json::from_str(text).expect("the manifest is JSON");
    let field = |e: &serde_json::Value, k: &str| e[k].as_str().expect("a string field").to_string();
    json["samples"]
        .as_array()
        .expect("the manifest lists samples")
        .iter()
        .map(|e| {
            let args = e["args"].as_array().map_or(Vec::new(), |a| {
                a.iter()
                    .map(|x| x.as_str().expect("a string argument").to_string())
                    .collect()
            });
            (
                field(e, "name"),
                field(e, "ptx"),
                e["kernel"].as_str().map(str::to_string),
                args,
            )
        })
        .collect()
}

fn repo() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The emulator configuration of a manifest entry's command-line arguments (the options
/// the manifest uses; any other fails the test, so a new one is not silently ignored).
fn config_of(args: &[String]) -> Config {
    let mut cfg = Config::default();
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--threads" => {
                let v = it.next().expect("--threads takes a value");
                let d: Vec<u32> = v
                    .split('x')
                    .map(|x| x.parse().expect("a dimension"))
                    .collect();
                let at = |k: usize| d.get(k).copied().unwrap_or(1);
                cfg.threads = Some(CtaShape {
                    x: at(0),
                    y: at(1),
                    z: at(2),
                });
            }
            "--param" => {
                let v = it.next().expect("--param takes a value");
                cfg.params.push(binding(v));
            }
            "--warp-sync" => cfg.warp_sync = true,
            "--cta" => {
                let v = it.next().expect("--cta takes a value");
                let d: Vec<u32> = v.split(',').map(|x| x.parse().expect("an index")).collect();
                for (k, x) in d.into_iter().take(3).enumerate() {
                    cfg.cta[k] = x;
                }
            }
            "--no-initializers" => cfg.initializers = false,
            // A verdict option of the cli: the emulation is the same.
            "--strict" => {}
            // The exploration's bound: one emulation (these tests run one) is the same.
            "--max-trips" => {
                it.next().expect("--max-trips takes a value");
            }
            other => panic!("the manifest uses `{other}`: teach this test its configuration"),
        }
    }
    cfg
}

/// A `--param` of the manifests: `TARGET=INTEGER` for a whole parameter, or
/// `TARGET+OFFSET:TYPE=VALUE` for a scalar field (`u8`..`u64`, `s8`..`s64`, `f32`, `f64`);
/// the value may be a range, `LO..=HI` or `LO..`.
fn binding(v: &str) -> ParamBinding {
    let (lhs, value) = v.split_once('=').expect("TARGET=VALUE");
    let (target, field) = match lhs.split_once('+') {
        None => (lhs, None),
        Some((target, field)) => {
            let (off, ty) = field.split_once(':').expect("OFFSET:TYPE");
            let bytes = |b: &str| b.parse::<u8>().expect("a width") / 8;
            let ty = match ty.split_at(1) {
                ("u" | "b", b) => ScalarType::Unsigned(bytes(b)),
                ("s", b) => ScalarType::Signed(bytes(b)),
                ("f", "32") => ScalarType::F32,
                ("f", "64") => ScalarType::F64,
                _ => panic!("the manifest uses type `{ty}`: teach this test"),
            };
            (target, Some((off.parse().expect("an offset"), ty)))
        }
    };
    let value = match field {
        // A range, `LO..=HI` or `LO..` (the cli's syntax; the open end is the field's largest).
        _ if value.contains("..") => {
            let (lo, hi) = value.split_once("..").expect("LO..");
            ParamValue::Range {
                lo: lo.parse().expect("an integer"),
                hi: hi
                    .strip_prefix('=')
                    .map_or(i128::MAX, |h| h.parse().expect("an integer")),
            }
        }
        Some((_, ScalarType::F32 | ScalarType::F64)) => {
            ParamValue::Float(value.parse().expect("a number"))
        }
        _ => ParamValue::Int(value.parse().expect("an integer")),
    };
    ParamBinding {
        target: match target.parse() {
            Ok(i) => ParamRef::Index(i),
            Err(_) => ParamRef::Name(target.into()),
        },
        field,
        value,
    }
}

/// A thread's commands with written values, its steps and its end.
type ResolvedThread = (
    Vec<(weft_program::Command, Option<u128>)>,
    Vec<u32>,
    ThreadEnd,
);

/// A thread program with each written value's id replaced by the value: value ids number
/// the distinct values in the order the emulation first wrote them, which depends on the
/// schedule; the values do not.
fn resolved(e: &Emulation) -> Vec<ResolvedThread> {
    e.program
        .threads
        .iter()
        .map(|t| {
            let commands = t
                .commands
                .iter()
                .map(|c| {
                    let value = c.value_id().and_then(|id| e.program.written_value(id));
                    (c.with_value(0), value)
                })
                .collect();
            (commands, t.steps.clone(), t.end)
        })
        .collect()
}

/// Asserts that two emulations of one kernel computed the same: each thread's commands
/// (written values compared by value), steps and end, the asynchronous copies, every
/// unverifiable reason, finding, assumption and note, and the counts.
pub(super) fn assert_same(name: &str, a: &Emulation, b: &Emulation) {
    assert_eq!(resolved(a), resolved(b), "{name}: programs differ");
    assert_eq!(
        a.program.asyncs, b.program.asyncs,
        "{name}: asynchronous copies differ"
    );
    assert_eq!(a.unverifiable, b.unverifiable, "{name}");
    assert_eq!(a.findings, b.findings, "{name}");
    assert_eq!(a.assumptions, b.assumptions, "{name}");
    assert_eq!(a.notes, b.notes, "{name}");
    assert_eq!(a.stats.instructions, b.stats.instructions, "{name}");
    assert_eq!(a.stats.commands, b.stats.commands, "{name}");
}

/// Calls `f` with each kernel of each entry of a manifest (`path`, relative to the
/// repository): the entry's name, the parsed module, the kernel's name and the entry's
/// arguments.
fn each_kernel(path: &str, mut f: impl FnMut(&str, &ptx_parser::Module<'_>, &str, &[String])) {
    let text = std::fs::read_to_string(repo().join(path)).expect("the manifest is readable");
    let entries = entries(&text);
    assert!(!entries.is_empty(), "{path} lists no kernel");
    for (name, ptx, kernel, args) in &entries {
        let path = repo().join(ptx);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{name}: {}: {e}", path.display()));
        let module = ptx_parser::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let kernels: Vec<&str> = match kernel {
            Some(k) => vec![k.as_str()],
            None => module.entries().map(|f| f.name).collect(),
        };
        for kernel in kernels {
            f(name, &module, kernel, args);
        }
    }
}

/// Every entry of a manifest (`path`, relative to the repository) emulates alike with
/// warp-level execution and lane by lane, as the manifest configures it and with
/// `--warp-sync` switched (so both schedules of the `warp` module run on every kernel);
/// returns the thread-instructions compared.
fn warp_path_agrees(path: &str) -> u64 {
    let mut instructions = 0;
    each_kernel(path, |name, module, kernel, args| {
        for switch in [false, true] {
            let mut cfg = config_of(args);
            cfg.warp_sync ^= switch;
            let warp = emulate_on(module, kernel, &cfg, Paths::Fast);
            let lanes = emulate_on(module, kernel, &cfg, Paths::Lanes);
            let name = format!("{name} ({kernel}, warp-sync {})", cfg.warp_sync);
            match (warp, lanes) {
                (Ok(w), Ok(l)) => {
                    assert_same(&name, &w, &l);
                    instructions += w.stats.instructions;
                }
                (Err(w), Err(l)) => assert_eq!(w.to_string(), l.to_string(), "{name}"),
                (w, l) => panic!("{name}: warp {:?} but lanes {:?}", w.err(), l.err()),
            }
        }
    });
    instructions
}

/// Warp-level execution computes exactly what lane-by-lane execution computes, on every
/// sample, with and without `--warp-sync`.
#[test]
fn warp_execution_agrees_with_lanes_on_every_sample() {
    assert!(warp_path_agrees("samples/manifest.json") > 0);
}

/// The same on the real-world corpus (`corpus/build`, built by `corpus/build.sh`): run
/// with `cargo test -p emulator -- --ignored` once it is built (the kernels are large for
/// the test profile).
#[test]
#[ignore = "needs corpus/build (corpus/build.sh); slow in the test profile"]
fn warp_execution_agrees_with_lanes_on_the_corpus() {
    assert!(warp_path_agrees("corpus/build/manifest.json") > 0);
}

/// Every entry of a manifest (`path`, relative to the repository) explores alike with
/// paths resumed from checkpoints of earlier paths' runs and with every path emulated from
/// its start: the same paths in the same order, each the same emulation, and the same
/// exploration. Every path is checked as passing, so that every path to the manifest's
/// bound (`--max-trips`) is explored. Returns the thread-instructions the resumed paths
/// did not execute again (so that the comparison is not vacuous).
fn checkpoints_agree(path: &str) -> u64 {
    let mut resumed = 0;
    each_kernel(path, |name, module, kernel, args| {
        let cfg = config_of(args);
        let max_trips = args
            .iter()
            .position(|a| a == "--max-trips")
            .and_then(|k| args.get(k + 1))
            .map_or(crate::DEFAULT_MAX_TRIPS, |v| v.parse().expect("a bound"));
        let run = |resume: bool| {
            let mut seen = Vec::new();
            let x = crate::explore::explore_resuming(
                module,
                kernel,
                &cfg,
                max_trips,
                |e| {
                    seen.push(e.clone());
                    true
                },
                resume,
            );
            (seen, x)
        };
        let (plain, from_start) = run(false);
        let (seen, resuming) = run(true);
        let name = format!("{name} ({kernel})");
        match (from_start, resuming) {
            (Ok(mut a), Ok(mut b)) => {
                assert_eq!(plain.len(), seen.len(), "{name}: paths checked");
                for (k, (p, s)) in plain.iter().zip(&seen).enumerate() {
                    assert_same(&format!("{name}, path {k}"), p, s);
                    assert_eq!(p.choices, s.choices, "{name}, path {k}");
                    assert_eq!(p.witness, s.witness, "{name}, path {k}");
                    assert_eq!(p.stats.resumed, 0, "{name}, path {k}");
                    resumed += s.stats.resumed;
                }
                for x in [&mut a, &mut b] {
                    x.emulation.stats.seconds = 0.0;
                    x.emulation.stats.resumed = 0;
                }
                assert_eq!(a, b, "{name}: explorations differ");
            }
            (Err(a), Err(b)) => assert_eq!(a.to_string(), b.to_string(), "{name}"),
            (a, b) => panic!(
                "{name}: from the start {:?} but resuming {:?}",
                a.err(),
                b.err()
            ),
        }
    });
    resumed
}

/// Resuming paths from checkpoints changes no exploration of any sample (and resumes some).
#[test]
fn checkpoints_change_no_sample_exploration() {
    assert!(checkpoints_agree("samples/manifest.json") > 0);
}

/// The same on the real-world corpus (`corpus/build`): run with `cargo test -p emulator --
/// --ignored` once it is built.
#[test]
#[ignore = "needs corpus/build (corpus/build.sh); slow in the test profile"]
fn checkpoints_change_no_corpus_exploration() {
    assert!(checkpoints_agree("corpus/build/manifest.json") > 0);
}

/// Every entry of a manifest (`path`, relative to the repository) records the same programs
/// with value terms (`Config::value_terms`) as without, also on the first path of the
/// choices on input-dependent branches: value terms never decide a branch, an address or a
/// wait. Returns how many writes the value terms tagged that the plain run did not (so the
/// comparison is not vacuous).
fn value_terms_agree(path: &str) -> usize {
    let mut tagged = 0;
    each_kernel(path, |name, module, kernel, args| {
        for explore in [false, true] {
            let mut cfg = config_of(args);
            if explore {
                cfg.choices = Some(crate::ChoicePlan {
                    max_trips: crate::DEFAULT_MAX_TRIPS,
                    search_budget: cfg.search_budget,
                    ..crate::ChoicePlan::default()
                });
            }
            let plain = emulate(module, kernel, &cfg);
            cfg.value_terms = true;
            // (A run whose value terms ran out says so: the one note the plain run lacks.)
            let valued = emulate(module, kernel, &cfg).map(|mut v| {
                v.notes.retain(|n| !n.starts_with("value terms ran out"));
                v
            });
            let name = format!("{name} ({kernel}, choices {explore})");
            match (plain, valued) {
                (Ok(p), Ok(v)) => {
                    assert_same(&name, &p, &v);
                    assert_eq!(p.choices, v.choices, "{name}");
                    let symbolic = |e: &Emulation| {
                        e.program
                            .threads
                            .iter()
                            .flat_map(|t| &t.commands)
                            .filter(|c| {
                                c.value_id()
                                    .is_some_and(|id| e.program.is_symbolic_value(id))
                            })
                            .count()
                    };
                    tagged += symbolic(&v).saturating_sub(symbolic(&p));
                }
                (Err(p), Err(v)) => assert_eq!(p.to_string(), v.to_string(), "{name}"),
                (p, v) => panic!("{name}: plain {:?} but valued {:?}", p.err(), v.err()),
            }
        }
    });
    tagged
}

/// Value terms change no program of any sample (and tag some writes).
#[test]
fn value_terms_change_no_sample_program() {
    assert!(value_terms_agree("samples/manifest.json") > 0);
}

/// The same on the real-world corpus (`corpus/build`): run with `cargo test -p emulator --
/// --ignored` once it is built.
#[test]
#[ignore = "needs corpus/build (corpus/build.sh); slow in the test profile"]
fn value_terms_change_no_corpus_program() {
    assert!(value_terms_agree("corpus/build/manifest.json") > 0);
}

/// Every manifest entry emulates (or fails with the same error) on the fast path and on the
/// general interpreter alone, and the two runs agree on everything they compute: each
/// thread's commands, steps and end, every unverifiable reason, finding, assumption and
/// note, and the number of instructions executed.
#[test]
fn fast_path_agrees_with_the_general_interpreter_on_every_sample() {
    let entries = manifest();
    assert!(!entries.is_empty(), "samples/manifest.json lists no sample");
    let mut compared = 0;
    let mut instructions = 0u64;
    for (name, ptx, kernel, args) in &entries {
        let path = repo().join(ptx);
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("{name}: {}: {e}", path.display()));
        let module = ptx_parser::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        let cfg = config_of(args);
        let kernels: Vec<&str> = match kernel {
            Some(k) => vec![k.as_str()],
            None => module.entries().map(|f| f.name).collect(),
        };
        assert!(!kernels.is_empty(), "{name}: no kernel");
        for kernel in kernels {
            let fast = emulate_on(&module, kernel, &cfg, Paths::Lanes);
            let general = emulate_on(&module, kernel, &cfg, Paths::GeneralOnly);
            match (fast, general) {
                (Ok(f), Ok(g)) => {
                    assert_eq!(f.program, g.program, "{name}: programs differ");
                    assert_same(name, &f, &g);
                    assert_eq!(f.unverifiable, g.unverifiable, "{name}");
                    assert_eq!(f.findings, g.findings, "{name}");
                    assert_eq!(f.assumptions, g.assumptions, "{name}");
                    assert_eq!(f.notes, g.notes, "{name}");
                    assert_eq!(f.stats.instructions, g.stats.instructions, "{name}");
                    assert_eq!(f.stats.commands, g.stats.commands, "{name}");
                    instructions += f.stats.instructions;
                }
                (Err(f), Err(g)) => assert_eq!(f.to_string(), g.to_string(), "{name}"),
                (f, g) => panic!("{name}: fast {:?} but general {:?}", f.err(), g.err()),
            }
        }
        compared += 1;
    }
    assert_eq!(compared, entries.len());
    assert!(instructions > 0, "no sample executed an instruction");
}

/// Sample configurations from `samples/README.md` emulate completely (the later stages
/// decide the verdicts).
#[test]
fn sample_configurations_emulate_completely() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples");
    /// (file, shape, warp-synchronous, whole parameters fixed to integers).
    type Case<'a> = (&'a str, CtaShape, bool, &'a [(&'a str, i128)]);
    let cases: [Case; 5] = [
        (
            "cudadma/single_buffer.ptx",
            CtaShape::linear(192),
            true,
            &[],
        ),
        (
            "classic/reduce_warp_tail.ptx",
            CtaShape::linear(256),
            true,
            &[],
        ),
        (
            "classic/transpose.ptx",
            CtaShape { x: 32, y: 8, z: 1 },
            false,
            &[],
        ),
        (
            "params/param_loop.ptx",
            CtaShape::linear(128),
            false,
            &[("1", 4)],
        ),
        (
            "mbarrier/mbar_pipeline.ptx",
            CtaShape::linear(64),
            false,
            &[],
        ),
    ];
    for (file, shape, warp_sync, params) in cases {
        let text = std::fs::read_to_string(dir.join(file))
            .unwrap_or_else(|e| panic!("{file}: {e} (the samples are part of the repository)"));
        let module = ptx_parser::parse(&text).expect("sample parses");
        let kernel = module.entries().next().expect("a kernel").name;
        let cfg = Config {
            threads: Some(shape),
            warp_sync,
            params: params
                .iter()
                .map(|(target, value)| super::param(target, None, *value))
                .collect(),
            ..Config::default()
        };
        let e = emulate(&module, kernel, &cfg).expect("emulates");
        assert!(e.unverifiable.is_empty(), "{file}: {:?}", e.unverifiable);
        assert!(e.findings.is_empty(), "{file}: {:?}", e.findings);
        assert!(
            e.program.threads.iter().all(|t| t.end == ThreadEnd::Exited),
            "{file}"
        );
        if warp_sync {
            assert!(
                e.program
                    .threads
                    .iter()
                    .all(|t| t.steps.len() == t.commands.len())
            );
        }
    }
}

/// Vector `mov`s (a register list packed into one register, one register unpacked into a
/// list with `_` parts) compute on the fast path what they compute in the general
/// interpreter: known parts, immediates, and parts of unknown values, read back as shared
/// addresses so that the commands show every value.
#[test]
fn vector_movs_agree_on_the_fast_path_and_the_general_interpreter() {
    let src = "
.version 8.0
.target sm_90
.address_size 64
.visible .entry k(.param .u32 n)
.maxntid 64, 1, 1
{
    .reg .b32 %r<16>;
    .reg .b64 %rd<8>;
    .reg .b16 %h<4>;
    .shared .align 8 .b8 s[4096];
    mov.u32 %r1, %tid.x;
    ld.param.u32 %r2, [n];
    shl.b32 %r3, %r1, 2;
    mov.b64 %rd1, {%r3, %r1};
    mov.b64 {%r4, %r5}, %rd1;
    mov.b64 %rd2, {%r1, 7};
    mov.b64 {_, %r6}, %rd2;
    mov.b32 {%h1, %h2}, %r3;
    mov.b32 %r7, {%h2, %h1};
    mov.b64 %rd3, {%r2, %r1};
    mov.b64 {%r8, %r9}, %rd3;
    and.b32 %r10, %r7, 1020;
    st.shared.u32 [%r4], %r5;
    st.shared.u32 [%r10], %r6;
    add.u32 %r11, %r9, 2048;
    st.shared.u32 [%r11], %r8;
    ret;
}
";
    let module = ptx_parser::parse(src).expect("parses");
    let cfg = Config {
        threads: Some(CtaShape::linear(64)),
        ..Config::default()
    };
    let fast = emulate_on(&module, "k", &cfg, Paths::Lanes).expect("emulates");
    let general = emulate_on(&module, "k", &cfg, Paths::GeneralOnly).expect("emulates");
    assert_eq!(fast.program, general.program);
    assert_eq!(fast.unverifiable, general.unverifiable);
    assert_eq!(fast.findings, general.findings);
    assert_eq!(fast.stats.instructions, general.stats.instructions);
    // Thread 5 stores its id at 20 (the unpacked low half) and 7 at (20 << 16) & 1020 = 0
    // (the halves swapped); the third address unpacks the known half of a register packed
    // with the unknown n: its id again, 5 + 2048 (the whole register was unknown before a
    // pack kept its parts' terms, and the kernel unverifiable), on both paths alike.
    let t5: Vec<_> = fast.program.threads[5]
        .commands
        .iter()
        .filter_map(|c| match c.view() {
            weft_program::CommandView::Access { addr, .. } => Some(addr),
            _ => None,
        })
        .collect();
    assert_eq!(t5, [20, 0, 2053]);
    assert!(fast.unverifiable.is_empty(), "{:?}", fast.unverifiable);
}
