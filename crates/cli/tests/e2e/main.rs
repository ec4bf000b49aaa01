//! End-to-end tests of the `weft` binary: hand-written fixtures under `tests/fixtures/` and
//! the project's samples (`samples/manifest.json`).
//!
//! Fixture runs use the fixtures directory as the current directory and relative file names,
//! so reports contain stable paths without normalization.

mod common;
mod exploration;
mod formats;
mod hostile;
mod induction;
mod limits;
mod parse_only;
mod samples;
mod snapshots;
mod usage;
mod verify;
