//! `--format json`: one document on stdout. The schema is documented in README.md and checked
//! by `tests/json.rs`; change both together.

use serde::Serialize;

use crate::report::{self, InputError, KernelReport, RunReport, Stats, ThreadRange};

/// The whole document.
#[derive(Debug, Serialize)]
pub struct Document<'a> {
    tool: &'static str,
    version: &'static str,
    kernels: Vec<Kernel<'a>>,
    errors: &'a [InputError],
    warnings: &'a [InputError],
}

#[derive(Debug, Serialize)]
struct Kernel<'a> {
    file: String,
    kernel: &'a str,
    verdict: &'static str,
    cta_shape: Option<[u32; 3]>,
    warp_sync: bool,
    strict: bool,
    params: &'a [String],
    violations: Vec<Violation<'a>>,
    unverifiable: Vec<Unverifiable<'a>>,
    assumptions: Vec<Assumption<'a>>,
    notes: &'a [String],
    stats: &'a Stats,
    coverage: Option<&'a report::Coverage>,
}

#[derive(Debug, Serialize)]
struct Assumption<'a> {
    kind: &'static str,
    message: Option<&'a str>,
    location: Location<'a>,
    branch: Location<'a>,
}

#[derive(Debug, Serialize)]
struct Violation<'a> {
    kind: &'a str,
    message: &'a str,
    locations: Vec<Location<'a>>,
    threads: &'a [ThreadRange],
    threads_text: String,
    barrier: Option<u32>,
    generation: Option<u32>,
    /// Absent when the violation does not repeat.
    #[serde(skip_serializing_if = "<[u32]>::is_empty")]
    later_generations: &'a [u32],
    notes: &'a [String],
    benign: bool,
}

#[derive(Debug, Serialize)]
struct Unverifiable<'a> {
    reason: &'a str,
    location: Option<Location<'a>>,
    related_locations: Vec<Location<'a>>,
    register: Option<&'a str>,
    inputs: &'a [String],
    hint: Option<&'a str>,
}

/// A location: `file`/`line`/`column` are the CUDA position when `.loc` gives one, else the
/// PTX position; `ptx_file`/`ptx_line`/`ptx_column` are always the PTX position.
#[derive(Debug, Serialize)]
struct Location<'a> {
    file: &'a str,
    line: u32,
    column: u32,
    ptx_file: &'a str,
    ptx_line: u32,
    ptx_column: u32,
    opcode: &'a str,
    label: &'a str,
}

impl<'a> From<&'a report::Location> for Location<'a> {
    fn from(loc: &'a report::Location) -> Self {
        let (file, line, column) = match &loc.cuda_file {
            Some(file) => (file.as_str(), loc.cuda_line, loc.cuda_column),
            None => (loc.ptx_file.as_str(), loc.ptx_line, loc.ptx_column),
        };
        Location {
            file,
            line,
            column,
            ptx_file: &loc.ptx_file,
            ptx_line: loc.ptx_line,
            ptx_column: loc.ptx_column,
            opcode: &loc.opcode,
            label: &loc.label,
        }
    }
}

fn kernel(k: &KernelReport) -> Kernel<'_> {
    Kernel {
        file: k.file.path.display().to_string(),
        kernel: &k.kernel,
        verdict: k.verdict.as_str(),
        cta_shape: k.cta_shape,
        warp_sync: k.warp_sync,
        strict: k.strict,
        params: &k.params,
        violations: k
            .violations
            .iter()
            .map(|v| Violation {
                kind: v.kind.as_str(),
                message: &v.message,
                locations: v.locations.iter().map(Location::from).collect(),
                threads: &v.threads,
                threads_text: report::describe_threads(&v.threads, weft_program::WARP_SIZE),
                barrier: v.barrier,
                generation: v.generation,
                later_generations: &v.later_generations,
                notes: &v.notes,
                benign: v.benign,
            })
            .collect(),
        unverifiable: k
            .unverifiable
            .iter()
            .map(|u| Unverifiable {
                reason: &u.reason,
                location: u.location.as_ref().map(Location::from),
                related_locations: u.related.iter().map(Location::from).collect(),
                register: u.register.as_deref(),
                inputs: &u.inputs,
                hint: u.hint.as_deref(),
            })
            .collect(),
        assumptions: k
            .assumptions
            .iter()
            .map(|a| Assumption {
                kind: a.kind,
                message: a.message.as_deref(),
                location: Location::from(&a.location),
                branch: Location::from(&a.branch),
            })
            .collect(),
        notes: &k.notes,
        stats: &k.stats,
        coverage: k.coverage.as_ref(),
    }
}

/// Builds the document.
pub fn document(run: &RunReport) -> Document<'_> {
    Document {
        tool: "weft",
        version: env!("CARGO_PKG_VERSION"),
        kernels: run.kernels.iter().map(kernel).collect(),
        errors: &run.errors,
        warnings: &run.warnings,
    }
}
