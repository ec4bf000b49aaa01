//! What the command line asks of every kernel, once it is parsed.

use crate::cli::ParamSpec;

/// What the command line asks of every kernel.
#[derive(Debug, Clone)]
pub struct Options {
    /// `-n`: CTA shape override.
    pub threads: Option<[u32; 3]>,
    /// `-b`: the emulated CTA's index.
    pub cta: [u32; 3],
    /// `-g`: grid shape.
    pub grid: [u32; 3],
    /// `-s`.
    pub warp_sync: bool,
    /// `--strict`: benign races are violations.
    pub strict: bool,
    /// Read initialized module variables (`--no-initializers` clears it).
    pub initializers: bool,
    /// `-p`.
    pub params: Vec<ParamSpec>,
    /// `-k` (empty: every kernel).
    pub kernels: Vec<String>,
    /// `-d`.
    pub detail: bool,
    /// `--parse-only`.
    pub parse_only: bool,
    /// `--dot`: keep the barrier graph.
    pub dot: bool,
    /// `--max-steps`: instructions per thread before the kernel is unverifiable.
    pub max_steps: u64,
    /// `--max-memory`: bytes the emulation may charge before the kernel is unverifiable.
    pub max_memory: u64,
}

/// A usage error found once the input is parsed (a `-k` or `--param` that names nothing).
#[derive(Debug)]
pub struct UsageError(pub String);
