//! `weft._native`: the Rust side of the `weft` Python package.
//!
//! One function, [`verify`], calls `weft::verify` (the entry point the `weft` binary calls)
//! on a PTX text and returns the report as the JSON document of `weft --format json` plus
//! each kernel's text rendering. The Python side (`weft/__init__.py`) turns the document into
//! typed report objects; keeping the boundary at the documented JSON schema means the Python
//! objects have exactly its fields.

use std::path::PathBuf;
use std::sync::Arc;

use codespan_reporting::term::termcolor::NoColor;
use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use weft::cli::ParamSpec;
use weft::progress::Progress;
use weft::report::PtxFile;
use weft::text::{TextOptions, write_kernel};

/// Verifies every selected kernel of one PTX text.
///
/// Returns `(document, texts)`: the JSON document of `weft --format json` and, per kernel
/// of the document (same order), its text diagnostics without color. Raises `ValueError` for
/// a `params` spec that does not parse or a kernel or parameter that names nothing.
#[pyfunction]
#[pyo3(signature = (ptx, *, filename, threads, cta, grid, params, warp_sync, initializers, kernels, detail, max_steps, max_memory, strict, max_trips=None))]
#[allow(clippy::too_many_arguments)]
fn verify(
    py: Python<'_>,
    ptx: String,
    filename: String,
    threads: Option<[u32; 3]>,
    cta: [u32; 3],
    grid: [u32; 3],
    params: Vec<String>,
    warp_sync: bool,
    initializers: bool,
    kernels: Vec<String>,
    detail: bool,
    max_steps: Option<u64>,
    max_memory: Option<u64>,
    strict: bool,
    max_trips: Option<u32>,
) -> PyResult<(String, Vec<String>)> {
    let params = params
        .iter()
        .map(|p| p.parse::<ParamSpec>())
        .collect::<Result<Vec<_>, String>>()
        .map_err(PyValueError::new_err)?;
    let options = weft::Options {
        threads,
        cta,
        grid,
        warp_sync,
        initializers,
        params,
        kernels,
        detail,
        parse_only: false,
        dot: false,
        max_steps: max_steps.unwrap_or(weft::cli::DEFAULT_MAX_STEPS),
        max_trips: max_trips.unwrap_or(emulator::DEFAULT_MAX_TRIPS),
        max_memory: max_memory.unwrap_or(emulator::DEFAULT_MAX_MEMORY),
        max_race_tests: race::DEFAULT_MAX_WORD_TESTS,
        strict,
    };
    let input = Ok(Arc::new(PtxFile {
        path: PathBuf::from(filename),
        text: Arc::from(ptx),
    }));
    // The verifier touches no Python object: other Python threads run meanwhile.
    let run = py
        .detach(|| weft::verify(vec![input], &options, &Progress::new(false)))
        .map_err(|weft::UsageError(message)| PyValueError::new_err(message))?;
    let document = serde_json::to_string(&weft::json::document(&run))
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    let mut texts = Vec::with_capacity(run.kernels.len());
    for kernel in &run.kernels {
        let mut out = NoColor::new(Vec::new());
        write_kernel(&mut out, kernel, TextOptions { stats: false })
            .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
        texts.push(String::from_utf8_lossy(&out.into_inner()).into_owned());
    }
    Ok((document, texts))
}

/// The Rust side of the `weft` package.
#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(verify, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
