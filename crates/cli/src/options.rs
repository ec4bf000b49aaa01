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
    /// `--max-race-tests`: happens-before tests the race check may make in one shared word
    /// before the kernel is unverifiable.
    pub max_race_tests: u64,
    /// `--max-trips`: choices one branch makes on one input-derived variable per explored
    /// path (a loop's trip counts) before larger values are left unexplored.
    pub max_trips: u32,
}

impl Options {
    /// The shape limits every caller of [`crate::verify`] gets (the binary checks them
    /// earlier, with messages in terms of its flags): a CTA of at most 1024x1024x64 and 1024
    /// threads with no empty dimension, a grid within CUDA's limits with no empty dimension,
    /// and the emulated CTA inside the grid.
    pub fn check_shapes(&self) -> Result<(), UsageError> {
        use crate::cli::{MAX_CTA_DIMS, MAX_CTA_THREADS, MAX_GRID_DIMS};
        let show = |[x, y, z]: [u32; 3]| format!("{x}x{y}x{z}");
        if let Some(threads) = self.threads {
            let total: u64 = threads.iter().map(|&n| u64::from(n)).product();
            let within = threads.iter().zip(MAX_CTA_DIMS).all(|(&n, max)| n <= max);
            if total == 0 || !within || total > MAX_CTA_THREADS {
                return Err(UsageError(format!(
                    "CTA shape {}: CUDA CTAs have 1 to {MAX_CTA_THREADS} threads, at most {} per dimension",
                    show(threads),
                    show(MAX_CTA_DIMS)
                )));
            }
        }
        let within = self
            .grid
            .iter()
            .zip(MAX_GRID_DIMS)
            .all(|(&n, max)| n <= max);
        if self.grid.contains(&0) || !within {
            return Err(UsageError(format!(
                "grid {}: CUDA grids have at least 1 and at most {} CTAs per dimension",
                show(self.grid),
                show(MAX_GRID_DIMS)
            )));
        }
        if self.cta.iter().zip(&self.grid).any(|(c, n)| c >= n) {
            return Err(UsageError(format!(
                "CTA index {} lies outside the grid {}",
                show(self.cta),
                show(self.grid)
            )));
        }
        Ok(())
    }
}

/// A usage error found once the input is parsed (a `-k` or `--param` that names nothing).
#[derive(Debug)]
pub struct UsageError(pub String);
