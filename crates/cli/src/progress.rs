//! A progress bar on stderr, only when stderr is a terminal.
//!
//! Redirected output (CI logs, tests, pipes) never sees a progress bar or its escape codes.

use std::io::IsTerminal;
use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// The progress display; a no-op when stderr is not a terminal or `--quiet` is given.
#[derive(Debug)]
pub struct Progress {
    bar: Option<ProgressBar>,
}

impl Progress {
    /// A progress bar if `enabled` and stderr is a terminal.
    pub fn new(enabled: bool) -> Self {
        let bar = (enabled && std::io::stderr().is_terminal()).then(|| {
            let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
            bar.set_style(
                ProgressStyle::with_template("{spinner} [{pos}/{len}] {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_spinner()),
            );
            bar.enable_steady_tick(Duration::from_millis(120));
            bar
        });
        Progress { bar }
    }

    /// A stage that concerns the whole run.
    pub fn stage(&self, stage: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(stage.to_owned());
        }
    }

    /// The number of kernels to verify is known.
    pub fn start_kernels(&self, kernels: u64) {
        if let Some(bar) = &self.bar {
            bar.set_length(kernels);
            bar.set_position(0);
        }
    }

    /// A kernel enters a stage.
    pub fn kernel_stage(&self, stage: &str, kernel: &str) {
        if let Some(bar) = &self.bar {
            bar.set_message(format!("{stage} {}", crate::report::shown_name(kernel)));
        }
    }

    /// A kernel is done.
    pub fn kernel_done(&self) {
        if let Some(bar) = &self.bar {
            bar.inc(1);
        }
    }

    /// All kernels are done: remove the bar before the report is printed.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
