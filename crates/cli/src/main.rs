//! `weft`: verifies deadlock freedom, safe barrier recycling and shared-memory race freedom of
//! PTX kernels.
//!
//! A thin binary over the `weft` library, in the style of ripgrep: `main` only turns the
//! result of [`try_main`] into the documented exit status; [`try_main`] parses the command
//! line, reads the files and hands them to `weft::verify`, the entry point the Python
//! package calls too, then writes the report. Only this crate knows terminals, files and
//! JSON.
//!
//! Exit status: 1 if any kernel has a violation; else 2 on a usage or input error; else 3 if
//! any kernel could not be verified; else 0.

#![deny(missing_docs)]

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use anyhow::Context;
use clap::Parser;
use codespan_reporting::term::termcolor::{BufferedStandardStream, ColorChoice, StandardStream};

use weft::cli::{Cli, ColorWhen, Format};
use weft::{dot, json, pipeline, progress, sarif, text};

/// Exit status for a usage or input error.
const EXIT_INPUT_ERROR: u8 = 2;

fn main() -> ExitCode {
    match try_main() {
        Ok(code) => ExitCode::from(code),
        Err(err) => {
            eprintln!("weft: error: {err:#}");
            ExitCode::from(EXIT_INPUT_ERROR)
        }
    }
}

fn color_choice(when: ColorWhen, is_terminal: bool) -> ColorChoice {
    match when {
        ColorWhen::Always => ColorChoice::Always,
        ColorWhen::Never => ColorChoice::Never,
        ColorWhen::Auto if is_terminal => ColorChoice::Auto,
        ColorWhen::Auto => ColorChoice::Never,
    }
}

/// Whether `err` is a write to a closed pipe (`weft … | head`).
fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| {
        cause
            .downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}

/// Runs weft and returns the exit status.
fn try_main() -> anyhow::Result<u8> {
    // clap exits with status 2 on a usage error and 0 for --help/--version.
    let cli = Cli::parse();
    let usage_error = |message: &str| -> anyhow::Result<u8> {
        let mut stderr =
            StandardStream::stderr(color_choice(cli.color, std::io::stderr().is_terminal()));
        for line in message.lines() {
            text::write_error(&mut stderr, line)?;
        }
        Ok(EXIT_INPUT_ERROR)
    };

    let grid = match cli.check_shapes() {
        Ok(grid) => grid,
        Err(message) => return usage_error(&message),
    };
    if cli.files.iter().filter(|f| f.as_os_str() == "-").count() > 1 {
        return usage_error("`-` (standard input) can be given only once");
    }
    let options = pipeline::Options {
        threads: cli.threads.map(|d| d.0),
        cta: cli.cta.0,
        grid,
        warp_sync: cli.warp_sync,
        strict: cli.strict,
        initializers: !cli.no_initializers,
        params: cli.params.clone(),
        kernels: cli.kernels.clone(),
        detail: cli.detail,
        parse_only: cli.parse_only,
        dot: cli.dot.is_some(),
        max_steps: cli.max_steps,
        max_trips: cli.max_trips,
        max_memory: cli.max_memory.0,
        max_race_tests: cli.max_race_tests,
    };
    // Kernels run in parallel and the race stage splits one kernel's work across the same
    // threads, so more threads than cores only costs memory and start-up time.
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = match cli.jobs {
        Some(0) => return usage_error("--jobs must be at least 1"),
        Some(jobs) => jobs.min(cores),
        None => cores,
    };
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .context("cannot start the worker threads")?;

    let progress = progress::Progress::new(!cli.quiet);
    let run =
        match pool.install(|| weft::verify(weft::read_inputs(&cli.files), &options, &progress)) {
            Ok(run) => run,
            Err(weft::UsageError(message)) => {
                progress.finish();
                return usage_error(&message);
            }
        };

    if let Some(path) = &cli.dot {
        std::fs::write(path, dot::render(&run))
            .with_context(|| format!("cannot write {}", path.display()))?;
    }

    match write_reports(&cli, &run) {
        Ok(()) => Ok(run.exit_code()),
        // A reader that stops early (`weft … | head`) does not change the verdicts.
        Err(err) if is_broken_pipe(&err) => Ok(run.exit_code()),
        Err(err) => Err(err),
    }
}

/// Writes the run's reports in the chosen format: diagnostics on stdout, input errors and
/// warnings on stderr (text) or in the document (JSON, SARIF).
fn write_reports(cli: &Cli, run: &weft::report::RunReport) -> anyhow::Result<()> {
    match cli.format {
        Format::Text => {
            let mut stderr =
                StandardStream::stderr(color_choice(cli.color, std::io::stderr().is_terminal()));
            for error in &run.errors {
                text::write_error(&mut stderr, &error.to_string())?;
            }
            for warning in &run.warnings {
                text::write_warning(&mut stderr, &warning.to_string())?;
            }
            if !cli.quiet {
                // Buffered: stdout is line-buffered, and a report of 10⁵ violations is
                // millions of lines.
                let mut stdout = BufferedStandardStream::stdout(color_choice(
                    cli.color,
                    std::io::stdout().is_terminal(),
                ));
                let options = text::TextOptions { stats: cli.stats };
                text::write_run(&mut stdout, run, options)?;
                stdout.flush()?;
            }
        }
        Format::Json => {
            // Buffered: stdout is line-buffered, and pretty JSON is a line per field (95 MB
            // and 3·10⁶ lines for 47,000 violations).
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            serde_json::to_writer_pretty(&mut stdout, &json::document(run))
                .map_err(std::io::Error::from)?;
            writeln!(stdout)?;
            stdout.flush()?;
        }
        Format::Sarif => {
            let mut stdout = std::io::BufWriter::new(std::io::stdout().lock());
            serde_json::to_writer_pretty(&mut stdout, &sarif::document(run))
                .map_err(std::io::Error::from)?;
            writeln!(stdout)?;
            stdout.flush()?;
        }
    }
    Ok(())
}
