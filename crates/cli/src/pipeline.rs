//! The driver: read and parse every file, select kernels, and run each kernel through the
//! stages in parallel, turning each stage's typed output into [`crate::report`] records.
//!
//! Stages, in order: parse (per file), emulate, barrier graph, race (per kernel). A kernel
//! stops at the first stage that finds it unverifiable; a violation found by one stage does
//! not stop the next unless that stage needs what was missing (a barrier-graph violation
//! leaves no happens-before to test races against).
//!
//! Architecture invariant: only this module knows the stage crates' types; the writers see
//! [`KernelReport`]s.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use ptx_parser::{Function, Module};
use rayon::prelude::*;

use crate::cli::ParamSpec;
pub use crate::options::{Options, UsageError};
use crate::progress::Progress;
use crate::report::simple_name;
use crate::report::{InputError, KernelReport, PtxFile, RunReport, Stats, Verdict};

fn name_matches(selector: &str, kernel: &str) -> bool {
    selector == kernel || selector == simple_name(kernel)
}

/// The largest PTX input weft reads (1 GiB): a larger input is an error, not an unbounded read.
const MAX_PTX_BYTES: u64 = 1 << 30;

/// The name standard input is reported under.
const STDIN_NAME: &str = "<stdin>";

/// Reads a PTX input: `-` is standard input; devices, directories and sockets are refused
/// (`/dev/zero` would never end); at most [`MAX_PTX_BYTES`] are read.
fn read_input(path: &Path) -> std::io::Result<Vec<u8>> {
    use std::io::Read;
    let too_large = || {
        std::io::Error::other(format!(
            "the input is larger than {} MiB",
            MAX_PTX_BYTES >> 20
        ))
    };
    let mut bytes = Vec::new();
    if path.as_os_str() == "-" {
        std::io::stdin()
            .lock()
            .take(MAX_PTX_BYTES + 1)
            .read_to_end(&mut bytes)?;
    } else {
        let kind = std::fs::metadata(path)?.file_type();
        if kind.is_dir() {
            return Err(std::io::Error::other("it is a directory"));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::FileTypeExt;
            if kind.is_char_device() || kind.is_block_device() || kind.is_socket() {
                return Err(std::io::Error::other(
                    "it is a device or socket, not a file (use `-` to read standard input)",
                ));
            }
        }
        let file = std::fs::File::open(path)?;
        if file.metadata()?.len() > MAX_PTX_BYTES {
            return Err(too_large());
        }
        file.take(MAX_PTX_BYTES + 1).read_to_end(&mut bytes)?;
    }
    if bytes.len() as u64 > MAX_PTX_BYTES {
        return Err(too_large());
    }
    Ok(bytes)
}

/// Whether an input that is not valid PTX is probably CUDA C++ source given by mistake.
fn looks_like_cuda(path: &Path, text: &str) -> bool {
    let extension = path.extension().and_then(|e| e.to_str());
    matches!(extension, Some("cu" | "cuh"))
        || text.contains("__global__")
        || text.lines().any(|l| l.trim_start().starts_with("#include"))
}

/// The hint for a CUDA source given as PTX.
const CUDA_HINT: &str = "this looks like CUDA source: compile it with `nvcc -ptx` first";

fn read_file(path: &Path) -> Result<Arc<PtxFile>, InputError> {
    let shown = if path.as_os_str() == "-" {
        Path::new(STDIN_NAME)
    } else {
        path
    };
    match read_input(path) {
        Ok(bytes) => match String::from_utf8(bytes) {
            Ok(text) => Ok(Arc::new(PtxFile {
                path: shown.to_path_buf(),
                text: Arc::from(text),
            })),
            Err(e) => {
                let valid = &e.as_bytes()[..e.utf8_error().valid_up_to()];
                let line = valid.iter().filter(|&&b| b == b'\n').count() as u32 + 1;
                let column = valid.iter().rev().take_while(|&&b| b != b'\n').count() as u32 + 1;
                Err(InputError {
                    file: shown.display().to_string(),
                    line,
                    column,
                    message: "the file is not UTF-8 text".to_owned(),
                })
            }
        },
        Err(e) => Err(InputError {
            file: shown.display().to_string(),
            line: 0,
            column: 0,
            message: format!("cannot read: {e}"),
        }),
    }
}

/// Resolves the `--param` specs that apply to `function` (the emulator's resolution) and
/// returns their bindings, or the usage error that a spec which does not fit is.
fn resolve_params(
    function: &Function<'_>,
    specs: &[ParamSpec],
    used: &mut [bool],
) -> Result<Vec<usize>, String> {
    let bindings: Vec<emulator::ParamBinding> = specs.iter().map(ParamSpec::binding).collect();
    match emulator::resolve_params(function, &bindings, used) {
        Ok(resolved) => Ok(resolved.iter().map(|r| r.binding).collect()),
        Err(e) => Err(param_error(&e, specs, function.name)),
    }
}

/// The usage error for a `--param` that does not fit kernel `kernel`.
fn param_error(e: &emulator::ParamError, specs: &[ParamSpec], kernel: &str) -> String {
    use emulator::ParamError as E;
    let text = |k: &usize| specs.get(*k).map_or("?", |s| s.text.as_str());
    match e {
        E::Aggregate {
            binding,
            param,
            name,
            size,
        } => format!(
            "`--param {}`: parameter {param} (`{name}`) of `{kernel}` is a {}-byte aggregate; \
             name a field with `{name}+OFFSET:TYPE=VALUE`",
            text(binding),
            size.map(|t| t.to_string()).unwrap_or_else(|| "?".into()),
        ),
        E::OutOfRange {
            binding,
            param,
            name,
            start,
            end,
            size,
        } => format!(
            "`--param {}`: bytes {start}..{end} lie outside parameter {param} (`{name}`, {size} bytes) of `{kernel}`",
            text(binding)
        ),
        E::NeedsInteger { binding, size } => format!(
            "`{}`: a {size}-byte integer parameter needs an integer",
            text(binding)
        ),
        E::DoesNotFit {
            binding,
            value,
            size,
        } => format!(
            "`{}`: {value} does not fit in {size} byte{}",
            text(binding),
            if *size == 1 { "" } else { "s" }
        ),
        E::BadRange {
            binding,
            lo,
            hi,
            max,
            size,
        } => {
            if *max == 0 {
                format!(
                    "`--param {}`: a range needs an integer field, not a float",
                    text(binding)
                )
            } else {
                format!(
                    "`--param {}`: the range {lo}..={hi} is not within 0..={max}, the sizes a {size}-byte field holds",
                    text(binding)
                )
            }
        }
        E::Overlap {
            first,
            second,
            param,
            name,
            start,
            end,
        } => format!(
            "`--param {}` and `--param {}` both set bytes {start}..{end} of parameter {param} (`{name}`) of `{kernel}`",
            text(first),
            text(second)
        ),
    }
}

/// One kernel to verify.
struct Job<'m> {
    file: usize,
    function: &'m Function<'m>,
    /// The `--param` specs (indices into the options') that apply to the kernel.
    params: Vec<usize>,
}

/// One input of [`verify`]: a PTX text with the name reports give it, or why it could not
/// be read (reported as an input error, in input order).
pub type Input = Result<Arc<PtxFile>, InputError>;

/// Reads `files` (in parallel) for [`verify`].
pub fn read_inputs(files: &[PathBuf]) -> Vec<Input> {
    files.par_iter().map(|p| read_file(p)).collect()
}

/// The one entry point of weft, shared by the binary and the Python package: parses every
/// input, selects kernels, and verifies each selected kernel in parallel (on the current
/// rayon pool). A CTA shape, grid or CTA index outside CUDA's limits
/// ([`Options::check_shapes`]) and a `-k` or `--param` that names nothing are
/// [`UsageError`]s; a file that cannot be read or parsed is an input error in the report.
pub fn verify(
    read: Vec<Input>,
    options: &Options,
    progress: &Progress,
) -> Result<RunReport, UsageError> {
    options.check_shapes()?;
    progress.stage("parsing");
    let parsed: Vec<Option<(Result<Module<'_>, InputError>, f64)>> = read
        .par_iter()
        .map(|file| {
            let file = file.as_ref().ok()?;
            let start = Instant::now();
            let module = ptx_parser::parse(&file.text).map_err(|e| InputError {
                file: file.path.display().to_string(),
                line: e.line,
                column: e.column,
                message: if looks_like_cuda(&file.path, &file.text) {
                    format!("{CUDA_HINT} (not PTX: {})", e.message)
                } else {
                    e.message
                },
            });
            Some((module, start.elapsed().as_secs_f64()))
        })
        .collect();

    let mut run = RunReport::default();
    let mut jobs = Vec::new();
    let mut kernel_used = vec![false; options.kernels.len()];
    let mut param_used = vec![false; options.params.len()];
    let mut usage = Vec::new();
    for (index, (file, module)) in read.iter().zip(&parsed).enumerate() {
        let module = match (file, module) {
            (Err(e), _) => {
                run.errors.push(e.clone());
                continue;
            }
            (Ok(_), Some((Err(e), _))) => {
                run.errors.push(e.clone());
                continue;
            }
            (Ok(_), Some((Ok(module), _))) => module,
            (Ok(_), None) => continue,
        };
        if module.entries().next().is_none() && !options.parse_only {
            let Ok(file) = file else { continue };
            let mut message = "no kernel (.entry) in this file: nothing was verified".to_owned();
            if looks_like_cuda(&file.path, &file.text) {
                message = format!("{message}; {CUDA_HINT}");
            }
            run.warnings.push(InputError {
                file: file.path.display().to_string(),
                line: 0,
                column: 0,
                message,
            });
            continue;
        }
        for function in module.entries() {
            if !options.kernels.is_empty() {
                let mut selected = false;
                for (selector, used) in options.kernels.iter().zip(&mut kernel_used) {
                    if name_matches(selector, function.name) {
                        *used = true;
                        selected = true;
                    }
                }
                if !selected {
                    continue;
                }
            }
            let params = if options.parse_only {
                Vec::new()
            } else {
                match resolve_params(function, &options.params, &mut param_used) {
                    Ok(params) => params,
                    Err(message) => {
                        usage.push(message);
                        Vec::new()
                    }
                }
            };
            jobs.push(Job {
                file: index,
                function,
                params,
            });
        }
    }
    for (selector, used) in options.kernels.iter().zip(&kernel_used) {
        if !used {
            usage.push(format!("no kernel named `{selector}` in the input files"));
        }
    }
    if !options.parse_only {
        for (spec, used) in options.params.iter().zip(&param_used) {
            if !used && !jobs.is_empty() {
                usage.push(format!(
                    "`--param {}` names no parameter of any selected kernel",
                    spec.text
                ));
            }
        }
    }
    if !usage.is_empty() {
        return Err(UsageError(usage.join("\n")));
    }

    progress.start_kernels(jobs.len() as u64);
    let results: Vec<Result<KernelReport, InputError>> = jobs
        .par_iter()
        .map(|job| {
            let Ok(file) = &read[job.file] else {
                unreachable!("jobs are only made for files that were read")
            };
            let Some((Ok(module), parse_seconds)) = &parsed[job.file] else {
                unreachable!("jobs are only made for files that parsed")
            };
            let report = verify_kernel(file, module, job, *parse_seconds, options, progress);
            progress.kernel_done();
            report
        })
        .collect();
    progress.finish();
    for result in results {
        match result {
            Ok(kernel) => run.kernels.push(kernel),
            Err(error) => run.errors.push(error),
        }
    }
    Ok(run)
}

/// Peak resident set size of this process in KiB (`VmHWM`), on Linux.
pub fn peak_memory_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn verify_kernel(
    file: &Arc<PtxFile>,
    module: &Module<'_>,
    job: &Job<'_>,
    parse_seconds: f64,
    options: &Options,
    progress: &Progress,
) -> Result<KernelReport, InputError> {
    let start = Instant::now();
    let function = job.function;
    let mut report = KernelReport {
        file: file.clone(),
        kernel: function.name.to_owned(),
        verdict: if options.parse_only {
            Verdict::Parsed
        } else {
            Verdict::Verified
        },
        cta_shape: options
            .threads
            .or(function.perf.reqntid)
            .or(function.perf.maxntid),
        warp_sync: options.warp_sync,
        strict: options.strict,
        params: job
            .params
            .iter()
            .map(|&k| options.params[k].text.clone())
            .collect(),
        violations: Vec::new(),
        unverifiable: Vec::new(),
        assumptions: Vec::new(),
        notes: Vec::new(),
        stats: Stats::default(),
        peak_memory_kib: None,
        dot: None,
        coverage: None,
    };
    report.stats.stage_seconds.parse = parse_seconds;
    if options.parse_only {
        report.stats.seconds = parse_seconds;
        return Ok(report);
    }

    let params: Vec<emulator::ParamBinding> = job
        .params
        .iter()
        .map(|&k| options.params[k].binding())
        .collect();
    if let Err(e) = crate::stages::verify(&mut report, module, &params, options, progress) {
        return Err(InputError {
            file: file.path.display().to_string(),
            line: e.line,
            column: 0,
            message: format!("kernel `{}`: {}", function.name, e.message),
        });
    }

    report.stats.seconds = parse_seconds + start.elapsed().as_secs_f64();
    report.peak_memory_kib = peak_memory_kib();
    report.settle();
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unmangles_simple_names() {
        assert_eq!(simple_name("_Z14missing_arrivePKfPf"), "missing_arrive");
        assert_eq!(simple_name("_ZL3fooi"), "foo");
        assert_eq!(simple_name("triton_kernel"), "triton_kernel");
        assert_eq!(simple_name("_Z99x"), "_Z99x");
        // A length that overflows `usize` is not a name (and no panic in debug builds).
        assert_eq!(
            simple_name("_Z18446744073709551615x"),
            "_Z18446744073709551615x"
        );
        assert_eq!(
            simple_name("_Z99999999999999999999999x"),
            "_Z99999999999999999999999x"
        );
        assert_eq!(
            simple_name("_ZN7cutlass13device_kernelINS_4gemm6kernel7GemmI_EEEEvT_"),
            "device_kernel"
        );
        assert_eq!(simple_name("_ZN4cute6detail3fooEv"), "foo");
        assert_eq!(simple_name("_ZNSt3vecE"), "vec");
        assert_eq!(simple_name("_ZN12_GLOBAL__N_16kernelEPf"), "kernel");
        assert_eq!(simple_name("_ZN"), "_ZN");
        assert_eq!(
            simple_name("_ZN18446744073709551616x"),
            "_ZN18446744073709551616x"
        );
    }

    fn options() -> Options {
        Options {
            threads: None,
            cta: [0; 3],
            grid: [1; 3],
            warp_sync: false,
            strict: false,
            initializers: true,
            params: Vec::new(),
            kernels: Vec::new(),
            detail: false,
            parse_only: false,
            dot: false,
            max_steps: crate::cli::DEFAULT_MAX_STEPS,
            max_trips: emulator::DEFAULT_MAX_TRIPS,
            max_memory: emulator::DEFAULT_MAX_MEMORY,
            max_race_tests: race::DEFAULT_MAX_WORD_TESTS,
        }
    }

    fn text(name: &str, text: &str) -> Input {
        Ok(Arc::new(PtxFile {
            path: PathBuf::from(name),
            text: Arc::from(text),
        }))
    }

    /// In-memory texts (as the Python package passes them) and read errors are reported in
    /// input order, each kernel with its own verdict.
    #[test]
    fn verifies_texts_in_memory() {
        let racy = include_str!("../../../samples/classic/missing_barrier.ptx");
        let unreadable = Err(InputError {
            file: "gone.ptx".into(),
            line: 0,
            column: 0,
            message: "cannot read".into(),
        });
        let inputs = vec![
            text("racy.ptx", racy),
            unreadable,
            text("bad.ptx", ".version 8.0\n.entry k( {"),
        ];
        let run = verify(inputs, &options(), &Progress::new(false)).expect("no usage error");
        assert_eq!(run.kernels.len(), 1);
        assert_eq!(run.kernels[0].verdict, Verdict::Violation);
        assert_eq!(run.kernels[0].violations[0].kind, crate::report::Kind::Race);
        let files: Vec<&str> = run.errors.iter().map(|e| e.file.as_str()).collect();
        assert_eq!(files, ["gone.ptx", "bad.ptx"]);

        for (threads, grid, cta) in [
            (Some([0, 1, 1]), [1; 3], [0; 3]),
            (Some([1025, 1, 1]), [1; 3], [0; 3]),
            (Some([32, 32, 2]), [1; 3], [0; 3]),
            (None, [1, 0, 1], [0; 3]),
            (None, [1, 65536, 1], [0; 3]),
            (None, [2, 1, 1], [2, 0, 0]),
        ] {
            let shapes = Options {
                threads,
                grid,
                cta,
                ..options()
            };
            let inputs = vec![text("racy.ptx", racy)];
            assert!(verify(inputs, &shapes, &Progress::new(false)).is_err());
        }

        let mut selective = options();
        selective.kernels = vec!["nothing".into()];
        let inputs = vec![text("racy.ptx", racy)];
        assert!(verify(inputs, &selective, &Progress::new(false)).is_err());
    }
}
