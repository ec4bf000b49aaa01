//! The sample kernels of `samples/`: every manifest entry emulates, and the fast path
//! computes exactly what the general interpreter computes.

use crate::exec::Paths;
use crate::{Config, emulate, emulate_on};
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
    let json: serde_json::Value = serde_json::from_str(&text).expect("the manifest is JSON");
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
                // The manifest fixes whole parameters: `INDEX_OR_NAME=INTEGER`.
                let (target, value) = v.split_once('=').expect("TARGET=VALUE");
                let value = value.parse().expect("an integer");
                cfg.params.push(super::param(target, None, value));
            }
            "--warp-sync" => cfg.warp_sync = true,
            "--no-initializers" => cfg.initializers = false,
            // A verdict option of the cli: the emulation is the same.
            "--strict" => {}
            other => panic!("the manifest uses `{other}`: teach this test its configuration"),
        }
    }
    cfg
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
            let fast = emulate_on(&module, kernel, &cfg, Paths::Fast);
            let general = emulate_on(&module, kernel, &cfg, Paths::GeneralOnly);
            match (fast, general) {
                (Ok(f), Ok(g)) => {
                    assert_eq!(f.program, g.program, "{name}: programs differ");
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
