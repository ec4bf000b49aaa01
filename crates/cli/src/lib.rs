//! weft as a library: the pipeline behind the `weft` binary and the Python package.
//!
//! What weft promises (verdicts, the PTX ISA facts it relies on with their sections, the rules
//! for exited threads, mbarrier parity and same-instruction writes, every approximation) is
//! written down in the repository's `docs/semantics.md`.
//!
//! [`verify`] is the one entry point: it takes PTX texts (read from files by the binary,
//! handed over as strings by the Python package), runs parse → emulate → barrier graph →
//! race per kernel, in parallel, and returns plain [`report`] records. The writers
//! ([`text`], [`json`], [`sarif`], [`dot`]) only format them. The binary (`main.rs`) parses
//! the command line, reads the files, calls [`verify`] and writes the result.

#![deny(missing_docs)]

pub mod cli;
pub mod dot;
mod induction;
pub mod json;
pub mod options;
pub mod pipeline;
pub mod progress;
pub mod reasons;
pub mod report;
pub mod sarif;
pub mod sources;
pub mod stages;
pub mod text;

pub use options::{Options, UsageError};
pub use pipeline::{Input, read_inputs, verify};
