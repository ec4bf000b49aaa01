//! rustc-like text output through codespan-reporting.
//!
//! Each violation is one diagnostic with a primary label (a caret line) under every source
//! location involved: the CUDA line when `.loc` names a file that can be found, else the PTX
//! line. Notes name threads as warp/lane ranges, barriers and counts. One summary line per
//! kernel follows its diagnostics.

use std::io;

use codespan_reporting::diagnostic::{Diagnostic, Label, Severity};
use codespan_reporting::files::SimpleFiles;
use codespan_reporting::term::{self, termcolor::WriteColor};

use crate::report::{KernelReport, Kind, Location, RunReport, Unverifiable, Verdict, Violation};
use crate::sources::span_of;

/// Options of the text writer.
#[derive(Debug, Clone, Copy)]
pub struct TextOptions {
    /// Print the per-kernel statistics block.
    pub stats: bool,
}

/// Writes every kernel's diagnostics and summary line, in order.
pub fn write_run(
    out: &mut dyn WriteColor,
    run: &RunReport,
    options: TextOptions,
) -> io::Result<()> {
    for kernel in &run.kernels {
        write_kernel(out, kernel, options)?;
    }
    if run.kernels.len() > 1 && run.kernels.iter().any(|k| k.verdict != Verdict::Parsed) {
        for line in file_summaries(run) {
            writeln!(out, "{line}")?;
        }
    }
    Ok(())
}

/// One line per file, in input order: `FILE: 3 kernels: 1 verified, 1 with violations, 1
/// unverifiable`.
fn file_summaries(run: &RunReport) -> Vec<String> {
    let mut files: Vec<(&std::path::Path, [usize; 4])> = Vec::new();
    for k in &run.kernels {
        let path = k.file.path.as_path();
        let at = match files.iter().position(|(p, _)| *p == path) {
            Some(i) => i,
            None => {
                files.push((path, [0; 4]));
                files.len() - 1
            }
        };
        let slot = match k.verdict {
            Verdict::Verified => 0,
            Verdict::Violation => 1,
            Verdict::Unverifiable => 2,
            Verdict::Parsed => 3,
        };
        files[at].1[slot] += 1;
    }
    files
        .into_iter()
        .map(|(path, [verified, violation, unverifiable, parsed])| {
            let total = verified + violation + unverifiable + parsed;
            let mut parts = Vec::new();
            if parsed > 0 {
                parts.push(format!("{parsed} parsed"));
            } else {
                parts.push(format!("{verified} verified"));
                parts.push(format!("{violation} with violations"));
                parts.push(format!("{unverifiable} unverifiable"));
            }
            format!(
                "{}: {total} kernel{}: {}",
                path.display(),
                if total == 1 { "" } else { "s" },
                parts.join(", ")
            )
        })
        .collect()
}

/// Writes `error: MESSAGE`; input errors read `error: file:line:col: message`.
pub fn write_error(out: &mut dyn WriteColor, message: &str) -> io::Result<()> {
    use codespan_reporting::term::termcolor::{Color, ColorSpec};
    out.set_color(ColorSpec::new().set_fg(Some(Color::Red)).set_bold(true))?;
    write!(out, "error")?;
    out.reset()?;
    writeln!(out, ": {message}")
}

/// Writes `warning: MESSAGE`.
pub fn write_warning(out: &mut dyn WriteColor, message: &str) -> io::Result<()> {
    use codespan_reporting::term::termcolor::{Color, ColorSpec};
    out.set_color(ColorSpec::new().set_fg(Some(Color::Yellow)).set_bold(true))?;
    write!(out, "warning")?;
    out.reset()?;
    writeln!(out, ": {message}")
}

/// A set of files for one diagnostic, each added once.
struct Files {
    files: SimpleFiles<String, std::sync::Arc<str>>,
    ids: Vec<(String, usize)>,
}

impl Files {
    fn new() -> Self {
        Files {
            files: SimpleFiles::new(),
            ids: Vec::new(),
        }
    }

    fn id(&mut self, name: &str, text: &std::sync::Arc<str>) -> usize {
        if let Some((_, id)) = self.ids.iter().find(|(n, _)| n == name) {
            return *id;
        }
        let id = self.files.add(name.to_owned(), text.clone());
        self.ids.push((name.to_owned(), id));
        id
    }
}

/// Where a location is shown: the CUDA line if its file was found, else the PTX line.
fn label_for(
    files: &mut Files,
    kernel: &KernelReport,
    loc: &Location,
    cuda_text: Option<&std::sync::Arc<str>>,
) -> Option<Label<usize>> {
    let cuda = match (&loc.cuda_file, cuda_text) {
        (Some(name), Some(text)) => {
            span_of(text, loc.cuda_line, loc.cuda_column).map(|span| (name, text, span))
        }
        _ => None,
    };
    if let Some((name, text, span)) = cuda {
        let id = files.id(name, text);
        let message = if loc.label.is_empty() {
            format!("PTX line {}", loc.ptx_line)
        } else {
            format!("{} (PTX line {})", loc.label, loc.ptx_line)
        };
        return Some(Label::primary(id, span).with_message(message));
    }
    let text = &kernel.file.text;
    let span = span_of(text, loc.ptx_line, loc.ptx_column)?;
    let id = files.id(&kernel.file.path.display().to_string(), text);
    let mut message = loc.label.clone();
    if loc.cuda_file.is_some() {
        // The CUDA file named by `.file` was not found: still say where it points.
        let at = format!(
            "{}:{}:{}",
            loc.cuda_file.as_deref().unwrap_or(""),
            loc.cuda_line,
            loc.cuda_column
        );
        message = if message.is_empty() {
            at
        } else {
            format!("{message} ({at})")
        };
    }
    Some(Label::primary(id, span).with_message(message))
}

fn labels(
    files: &mut Files,
    kernel: &KernelReport,
    locations: &[Location],
    notes: &mut Vec<String>,
) -> Vec<Label<usize>> {
    let mut labels = Vec::new();
    for loc in locations {
        match label_for(files, kernel, loc, loc.cuda_text.as_ref()) {
            Some(label) => labels.push(label),
            None => notes.push(format!("note: at {}: {}", loc.describe(), loc.label)),
        }
    }
    labels
}

fn emit(out: &mut dyn WriteColor, files: &Files, diagnostic: &Diagnostic<usize>) -> io::Result<()> {
    let config = term::Config::default();
    term::emit(out, &config, &files.files, diagnostic).map_err(|e| match e {
        codespan_reporting::files::Error::Io(e) => e,
        other => io::Error::other(other.to_string()),
    })
}

/// The diagnostic's headline. A deadlock's message spells out every blocked generation,
/// which the labels and notes show one by one, so its headline is the first clause.
fn headline(violation: &Violation) -> &str {
    if violation.kind == Kind::Deadlock {
        first_clause(&violation.message)
    } else {
        &violation.message
    }
}

/// The text before the first `: ` or `. `.
fn first_clause(message: &str) -> &str {
    let end = [message.find(": "), message.find(". ")]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(message.len());
    &message[..end]
}

#[cold]
fn write_violation(
    out: &mut dyn WriteColor,
    kernel: &KernelReport,
    violation: &Violation,
) -> io::Result<()> {
    let mut files = Files::new();
    let mut notes = Vec::new();
    let labels = labels(&mut files, kernel, &violation.locations, &mut notes);
    notes.extend(violation.notes.iter().map(|n| format!("note: {n}")));
    let severity = if violation.benign {
        Severity::Warning
    } else {
        Severity::Error
    };
    let diagnostic = Diagnostic::new(severity)
        .with_code(violation.kind.as_str())
        .with_message(headline(violation))
        .with_labels(labels)
        .with_notes(notes);
    emit(out, &files, &diagnostic)
}

#[cold]
fn write_unverifiable(
    out: &mut dyn WriteColor,
    kernel: &KernelReport,
    unverifiable: &Unverifiable,
) -> io::Result<()> {
    let mut files = Files::new();
    let mut notes = Vec::new();
    let locations: Vec<Location> = unverifiable
        .location
        .iter()
        .chain(&unverifiable.related)
        .cloned()
        .collect();
    let labels = labels(&mut files, kernel, &locations, &mut notes);
    // A location's label names the register; without one, a note does.
    if let (Some(register), None) = (&unverifiable.register, &unverifiable.location) {
        notes.push(format!(
            "note: register `{register}` holds an unknown value"
        ));
    }
    if !unverifiable.inputs.is_empty() {
        notes.push(format!(
            "note: it depends on {}",
            unverifiable.inputs.join(", ")
        ));
    }
    if let Some(hint) = &unverifiable.hint {
        notes.push(format!("help: {hint}"));
    }
    let diagnostic = Diagnostic::new(Severity::Warning)
        .with_code("unverifiable")
        .with_message(format!("could not verify: {}", unverifiable.reason))
        .with_labels(labels)
        .with_notes(notes);
    emit(out, &files, &diagnostic)
}

/// The summary line: `kernel K in FILE: verified`.
pub fn summary(kernel: &KernelReport) -> String {
    let benign = kernel.violations.iter().filter(|v| v.benign).count();
    let what = match kernel.verdict {
        Verdict::Verified if benign > 0 => format!(
            "verified, with {benign} benign race{} (warning)",
            if benign == 1 { "" } else { "s" }
        ),
        Verdict::Verified => "verified".to_owned(),
        Verdict::Parsed => "parsed".to_owned(),
        Verdict::Violation => {
            let n = kernel.violations.len();
            let mut kinds: Vec<&str> = kernel.violations.iter().map(|v| v.kind.as_str()).collect();
            kinds.dedup();
            format!(
                "{n} violation{} ({})",
                if n == 1 { "" } else { "s" },
                kinds.join(", ")
            )
        }
        Verdict::Unverifiable => {
            // Each distinct reason once, with how many times it was given (36
            // `tensormap.replace` of one kernel were one 2.8 KB line).
            let mut reasons: Vec<(&str, usize)> = Vec::new();
            for u in &kernel.unverifiable {
                let r = first_clause(&u.reason);
                match reasons.iter_mut().find(|(x, _)| *x == r) {
                    Some((_, n)) => *n += 1,
                    None => reasons.push((r, 1)),
                }
            }
            let reasons: Vec<String> = reasons
                .into_iter()
                .map(|(r, n)| match n {
                    1 => r.to_owned(),
                    n => format!("{r} ({n} times)"),
                })
                .collect();
            format!("could not verify: {}", reasons.join("; "))
        }
    };
    format!(
        "kernel {} in {}: {what}",
        crate::report::shown_name(&kernel.kernel),
        kernel.file.path.display()
    )
}

/// What the exploration of choices on input-dependent branches covers, in words: bounded
/// coverage says which values were not explored, and never reads as "every value".
pub fn coverage_lines(kernel: &KernelReport) -> Vec<String> {
    let Some(c) = &kernel.coverage else {
        return Vec::new();
    };
    let mut lines = Vec::new();
    let paths = format!("{} path{}", c.paths, if c.paths == 1 { "" } else { "s" });
    if !c.failing_path.is_empty() {
        let values: Vec<String> = if c.failing_inputs.is_empty() {
            c.failing_path
                .iter()
                .map(|v| format!("{} = {}", v.term, crate::reasons::ranges(&v.values, v.bits)))
                .collect()
        } else {
            c.failing_inputs
                .iter()
                .map(|v| match &v.float {
                    Some(f) => format!("{} = {f} (bit pattern {:#x})", v.term, v.value),
                    None => format!("{} = {}", v.term, v.value),
                })
                .collect()
        };
        let what = match kernel.verdict {
            Verdict::Violation => "found",
            _ => "stopped",
        };
        lines.push(format!(
            "coverage: {what} with {} (path {} of the exploration, smaller values first)",
            values.join(", "),
            c.paths
        ));
        return lines;
    }
    if kernel.verdict != Verdict::Verified {
        return lines;
    }
    let terms: Vec<&str> = c.variables.iter().map(|v| v.term.as_str()).collect();
    let within = if c.ranges.is_empty() {
        String::new()
    } else {
        format!(
            " within the --param range{} {}",
            if c.ranges.len() == 1 { "" } else { "s" },
            c.ranges.join(", ")
        )
    };
    let induction = c.induction.as_ref();
    if let Some(i) = induction.filter(|i| i.concluded) {
        let left: Vec<String> = c
            .variables
            .iter()
            .filter(|v| !v.not_explored.is_empty())
            .map(|v| {
                let values = crate::reasons::ranges(&v.not_explored, v.bits);
                if c.variables.len() == 1 {
                    values
                } else {
                    format!("{} = {values}", v.term)
                }
            })
            .collect();
        let left_vars: Vec<&crate::report::CoverageVariable> = c
            .variables
            .iter()
            .filter(|v| !v.not_explored.is_empty())
            .collect();
        if let [v] = left_vars[..] {
            // One variable left with values: the others are functions of it.
            lines.push(format!(
                "coverage: verified for every value of {}{within} except {} (by induction over \
                 the trip count, which leaves out the values at which a counter or bound on the \
                 way could wrap around)",
                v.term,
                crate::reasons::ranges(&v.not_explored, v.bits)
            ));
        } else if left.is_empty() {
            lines.push(format!(
                "coverage: verified for every value of {}{within} (by induction over the trip \
                 count)",
                terms.join(", ")
            ));
        } else {
            lines.push(format!(
                "coverage: verified for every value of {}{within} except {} (by induction over \
                 the trip count, which leaves out the values at which a counter or bound on the \
                 way could wrap around)",
                terms.join(", "),
                left.join(", ")
            ));
        }
        lines.push(format!("induction: {}", i.reason));
        return lines;
    }
    let not_concluded = induction.map(|i| format!("induction: not concluded: {}", i.reason));
    if c.complete {
        lines.push(format!(
            "coverage: verified for every value of {}{within} ({paths} explored, none cut \
             short)",
            terms.join(", ")
        ));
    } else {
        if let Some(i) = &c.inputs {
            // Every value up to the scan's end followed an explored path (a loop whose
            // counter steps past the scanned values in one trip): only larger ones are left.
            let others = if i.verified[..] == [[0, i.checked_up_to]] {
                String::new()
            } else {
                format!(
                    "the other values up to {} follow paths that were not explored{}, ",
                    i.checked_up_to,
                    if c.ranges.is_empty() {
                        ""
                    } else {
                        " or lie outside the ranges"
                    }
                )
            };
            lines.push(format!(
                "coverage: bounded: verified only for {} = {}{within} ({paths}, --max-trips \
                 {}); {others}larger values were not checked",
                i.term,
                crate::reasons::ranges(&i.verified, 64),
                c.max_trips,
            ));
            match (&not_concluded, &c.periodicity) {
                (Some(n), _) => lines.push(n.clone()),
                (None, Some(p)) => lines.push(format!("induction: not concluded: {}", p.reason)),
                (None, None) => {}
            }
            return lines;
        }
        lines.push(format!(
            "coverage: bounded: verified for every input{within} except those with these \
             values, which were not explored ({paths}, --max-trips {}):",
            c.max_trips
        ));
        for v in c.variables.iter().filter(|v| !v.not_explored.is_empty()) {
            lines.push(format!(
                "  {} = {}",
                v.term,
                crate::reasons::ranges(&v.not_explored, v.bits)
            ));
        }
        lines.extend(not_concluded);
    }
    lines
}

/// Writes one kernel's diagnostics, summary line and notes (and statistics if asked).
pub fn write_kernel(
    out: &mut dyn WriteColor,
    kernel: &KernelReport,
    options: TextOptions,
) -> io::Result<()> {
    for violation in &kernel.violations {
        write_violation(out, kernel, violation)?;
    }
    if kernel.verdict != Verdict::Violation {
        for unverifiable in &kernel.unverifiable {
            write_unverifiable(out, kernel, unverifiable)?;
        }
    }
    use codespan_reporting::term::termcolor::{Color, ColorSpec};
    let color = match kernel.verdict {
        Verdict::Verified | Verdict::Parsed => Color::Green,
        Verdict::Violation => Color::Red,
        Verdict::Unverifiable => Color::Yellow,
    };
    out.set_color(ColorSpec::new().set_fg(Some(color)).set_bold(true))?;
    write!(out, "{}", summary(kernel))?;
    out.reset()?;
    writeln!(out)?;
    for a in &kernel.assumptions {
        writeln!(
            out,
            "  note: assumes {} holds: the branch at PTX line {} that fails it depends on an input, and failing only aborts the kernel",
            a.describe(),
            a.branch.ptx_line
        )?;
    }
    for line in coverage_lines(kernel) {
        writeln!(out, "  {line}")?;
    }
    for note in &kernel.notes {
        writeln!(out, "  note: {note}")?;
    }
    if options.stats {
        write_stats(out, kernel)?;
    }
    Ok(())
}

fn write_stats(out: &mut dyn WriteColor, kernel: &KernelReport) -> io::Result<()> {
    let s = &kernel.stats;
    let t = &s.stage_seconds;
    writeln!(
        out,
        "  threads {}, commands {}, dynamic barriers {} ({} physical), shared addresses {}, \
         race tests {} (naive pairs {}), instructions {}",
        s.threads,
        s.commands,
        s.dynamic_barriers,
        s.physical_barriers,
        s.shared_addresses,
        s.race_tests,
        s.naive_race_pairs,
        s.instructions
    )?;
    let memory = match kernel.peak_memory_kib {
        Some(kib) => format!("{:.1} MiB", kib as f64 / 1024.0),
        None => "unknown".to_owned(),
    };
    writeln!(
        out,
        "  time: parse {}, emulate {}, graph {}, race {}, total {}; peak memory {memory}",
        duration(t.parse),
        duration(t.emulate),
        duration(t.graph),
        duration(t.race),
        duration(s.seconds)
    )
}

/// `1.234 s` or `12.345 ms`.
fn duration(seconds: f64) -> String {
    if seconds >= 1.0 {
        format!("{seconds:.3} s")
    } else {
        format!("{:.3} ms", seconds * 1000.0)
    }
}
