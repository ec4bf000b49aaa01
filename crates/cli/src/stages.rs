//! Runs the emulator, barrier-graph and race stages for one kernel and turns their typed
//! findings into [`crate::report`] records.
//!
//! Each stage's output is translated once, here, with every instruction resolved to its PTX
//! and CUDA locations; the writers never see a stage type.

use std::collections::BTreeMap;
use std::time::Instant;

use barrier_graph::{BlockedGeneration, SyncViolation, ThreadState};
use emulator::{Emulation, FindingKind};
use ptx_parser::Module;
use rustc_hash::FxHashSet;
use weft_program::{BarrierKey, CtaShape, InstId, Program, ThreadId};

use crate::options::Options;
use crate::reasons;
use crate::report::{
    self, DotGraph, DotNode, KernelReport, Kind, Location, PtxFile, ThreadRange, Unverifiable,
    Violation,
};
use crate::sources::location;

/// A per-kernel error that is the input's fault (exit status 2), not a verdict.
#[derive(Debug)]
pub struct KernelInputError {
    /// 1-based PTX line, 0 when unknown.
    pub line: u32,
    /// What is wrong.
    pub message: String,
}

fn warp_size(program: &Program) -> u32 {
    program.warp_size()
}

fn ranges_of(ranges: &[barrier_graph::ThreadRange]) -> Vec<ThreadRange> {
    ranges
        .iter()
        .map(|r| ThreadRange {
            first: r.first.0,
            last: r.last.0,
        })
        .collect()
}

fn describe(ranges: &[ThreadRange], program: &Program) -> String {
    report::describe_threads(ranges, warp_size(program))
}

fn one_thread(thread: ThreadId, program: &Program) -> String {
    let ws = warp_size(program);
    match program.agent(thread) {
        Some(copy) => format!(
            "the asynchronous {} issued by warp {} lane {}",
            if copy.proxy == weft_program::Proxy::Tensor {
                "tensor-memory access"
            } else {
                "copy"
            },
            copy.issuer.warp(ws),
            copy.issuer.lane(ws)
        ),
        None => format!("warp {} lane {}", thread.warp(ws), thread.lane(ws)),
    }
}

/// The CTA thread behind a race participant: the issuer of an asynchronous copy.
fn cta_thread(thread: ThreadId, program: &Program) -> ThreadId {
    program.agent(thread).map_or(thread, |c| c.issuer)
}

fn barrier_name(key: BarrierKey) -> String {
    match key {
        BarrierKey::Named(id) => format!("barrier {id}"),
        BarrierKey::Warp(w) => format!("the warp barrier of warp {w}"),
    }
}

/// What the second run of a kernel with peeks says when it agrees with the first.
const PEEKS_BOTH_WAYS: &str = "mbarrier.try_wait peeks (a try_wait or test_wait whose \
    \"not ready\" answer does not lead back to it, before a blocking fallback) were checked \
    both ways: waiting for their phase, and answering \"not ready\" at once";

/// Runs every stage on one kernel, filling `report`. A kernel whose runs execute peeks
/// (`emulator::Config::peeks_fail`) and verify is run a second time with every peek
/// answering "not ready": each answer is possible in some execution, and a fallback that
/// waits for the wrong phase (or none) is only reached that way.
pub fn verify(
    report: &mut KernelReport,
    module: &Module<'_>,
    params: &[emulator::ParamBinding],
    options: &Options,
    progress: &crate::progress::Progress,
) -> Result<(), KernelInputError> {
    let template = report.clone();
    let plain = Runs::default();
    let peeks = verify_once(report, module, params, options, progress, plain)?;
    let mut runs = plain;
    if peeks != 0 && report.passes(options.strict) {
        let peeks_fail = Runs {
            peeks_fail: true,
            ..plain
        };
        let mut second = template.clone();
        verify_once(&mut second, module, params, options, progress, peeks_fail)?;
        if !second.passes(options.strict) {
            runs = peeks_fail;
        }
        peeks_both_ways(report, second, options.strict);
    }
    compare_values(report, template, module, params, options, progress, runs)
}

/// How [`verify_once`] runs the emulator.
#[derive(Debug, Clone, Copy, Default)]
struct Runs {
    /// `emulator::Config::peeks_fail`.
    peeks_fail: bool,
    /// `emulator::Config::value_terms`.
    value_terms: bool,
    /// `emulator::Config::split_data_branches`.
    split: bool,
}

/// What [`verify_paths`] tells [`verify_once`].
#[derive(Default)]
struct Explored {
    /// Peeks the checked paths executed.
    peeks: u64,
    /// The exploration's failing path did not reproduce on a concrete run
    /// (`emulator::Exploration::unconfirmed`).
    unconfirmed: bool,
    /// That path ran both sides of a branch whose predicate has a term
    /// (`emulator::Emulation::data_forks`).
    data_forks: bool,
}

/// What a report says when its exploration split the branches that decide no
/// synchronization ([`verify_once`]).
const SPLIT_DATA_BRANCHES: &str = "a path of the exploration found what a run with its input \
    values fixed did not reproduce, after running both sides of a branch on the inputs that \
    decides no synchronization (its accesses marked \"may happen\"); the exploration was \
    repeated with such branches and guards explored as choices, each side a path of its own, \
    and this is its verdict (docs/semantics.md §6.5)";

/// What the run with value terms says when it found some write-after-write races to be
/// writes of equal values.
const VALUES_COMPARED: &str = "write-after-write races were checked again with the values \
    written compared symbolically (a value loaded from shared memory is named by the store \
    it reads, a floating-point result it does not compute by its instruction and operands): \
    writes of values found equal are benign races, and the races left write values weft \
    cannot show equal";

/// A kernel [`verify_once`] found racing in a write-after-write is run again with value
/// terms (`emulator::Config::value_terms`): writes that store equal values computed from
/// unknown data (a Triton reduction's row sums, replicated over the threads that store them
/// for a layout conversion) are benign races, not races. That run decides every branch,
/// address and wait as the first (value terms decide nothing), so its report replaces the
/// first one unless it could not finish as far (more reasons it could not verify, such as
/// the memory its terms took) or found more races.
fn compare_values(
    report: &mut KernelReport,
    template: KernelReport,
    module: &Module<'_>,
    params: &[emulator::ParamBinding],
    options: &Options,
    progress: &crate::progress::Progress,
    runs: Runs,
) -> Result<(), KernelInputError> {
    let waw = race::Hazard::WriteAfterWrite.as_str();
    if !report
        .violations
        .iter()
        .any(|v| v.kind == Kind::Race && v.message.starts_with(waw))
    {
        return Ok(());
    }
    let mut again = template;
    let runs = Runs {
        value_terms: true,
        ..runs
    };
    verify_once(&mut again, module, params, options, progress, runs)?;
    let races = |r: &KernelReport| {
        r.violations
            .iter()
            .filter(|v| !v.benign && v.kind == Kind::Race)
            .count()
    };
    // With as many races, the second report still names better witnesses: its thread pairs
    // exclude the ones that write equal values.
    if again.unverifiable.len() > report.unverifiable.len() || races(&again) > races(report) {
        return Ok(());
    }
    again
        .stats
        .stage_seconds
        .add_run(&report.stats.stage_seconds);
    again.notes.push(VALUES_COMPARED.to_owned());
    *report = again;
    Ok(())
}

/// Folds the run with every peek answering "not ready" (`second`) into `report`.
fn peeks_both_ways(report: &mut KernelReport, mut second: KernelReport, strict: bool) {
    if second.passes(strict) {
        report
            .stats
            .stage_seconds
            .add_run(&second.stats.stage_seconds);
        report.notes.push(PEEKS_BOTH_WAYS.to_owned());
    } else {
        second.notes.push(
            "found with every mbarrier.try_wait peek (a try_wait or test_wait whose \"not \
             ready\" answer does not lead back to it) answering \"not ready\" at once, which \
             an execution in which the phase is late does; with the peeks waiting for their \
             phase the kernel verifies"
                .to_owned(),
        );
        *report = second;
    }
}

/// [`verify`]'s one run, as `runs` says: the number of peeks the checked paths executed.
/// When the exploration's failing path does not reproduce concretely and ran both sides of
/// a branch on the inputs that decides no synchronization, the exploration is repeated with
/// such branches as choices (`emulator::Config::split_data_branches`): a path then follows
/// one side, as a concrete run does. Its report replaces the first when it is a verdict
/// (verified, or a confirmed violation), not when it is unverifiable too.
fn verify_once(
    report: &mut KernelReport,
    module: &Module<'_>,
    params: &[emulator::ParamBinding],
    options: &Options,
    progress: &crate::progress::Progress,
    runs: Runs,
) -> Result<u64, KernelInputError> {
    let template = report.clone();
    let first = verify_paths(report, module, params, options, progress, runs)?;
    if !(first.unconfirmed && first.data_forks) {
        return Ok(first.peeks);
    }
    let mut again = template;
    let split = Runs {
        split: true,
        ..runs
    };
    let second = verify_paths(&mut again, module, params, options, progress, split)?;
    // Only a verdict replaces the first report: an exploration that stopped short (more
    // paths, the same budgets) says less than the first one's located finding.
    if second.unconfirmed || !again.unverifiable.is_empty() {
        return Ok(first.peeks);
    }
    again
        .stats
        .stage_seconds
        .add_run(&report.stats.stage_seconds);
    again.notes.push(SPLIT_DATA_BRANCHES.to_owned());
    *report = again;
    Ok(second.peeks)
}

/// One exploration of the kernel's paths as `runs` says, checked by the later stages.
fn verify_paths(
    report: &mut KernelReport,
    module: &Module<'_>,
    params: &[emulator::ParamBinding],
    options: &Options,
    progress: &crate::progress::Progress,
    runs: Runs,
) -> Result<Explored, KernelInputError> {
    let file = report.file.clone();
    let kernel = report.kernel.clone();
    // The `--param` ranges, as written (the report's specs are the bindings', in order).
    let ranges: Vec<String> = params
        .iter()
        .zip(&report.params)
        .filter(|(b, _)| matches!(b.value, emulator::ParamValue::Range { .. }))
        .map(|(_, text)| text.clone())
        .collect();

    progress.kernel_stage("emulate", &kernel);
    let config = emulator::Config {
        threads: options.threads.map(|[x, y, z]| CtaShape { x, y, z }),
        cta: options.cta,
        grid: options.grid,
        warp_sync: options.warp_sync,
        params: params.to_vec(),
        initializers: options.initializers,
        step_limit: options.max_steps,
        max_memory: options.max_memory,
        peeks_fail: runs.peeks_fail,
        value_terms: runs.value_terms,
        split_data_branches: runs.split,
        ..emulator::Config::default()
    };
    // Each path of the choices on input-dependent branches is one emulation, checked by the
    // later stages; the exploration stops at the first path that is not verified.
    let template = report.clone();
    let mut chosen: Option<KernelReport> = None;
    // The report of the last path `check` rejected: when the concrete re-runs of a failing
    // path (its witness, then other inputs that follow it) all pass, the path's own report.
    let mut failing: Option<KernelReport> = None;
    let mut benign: Vec<Violation> = Vec::new();
    // `benign`'s indices by the hash of (message, locations): a kernel of 500 stores of one
    // word has 125,000 benign pairs, each compared with every one kept (10¹⁰ comparisons).
    let mut benign_seen: rustc_hash::FxHashMap<u64, Vec<usize>> = Default::default();
    let mut times = report.stats.stage_seconds;
    let start = Instant::now();
    let mut peeks = 0u64;
    let explored = emulator::explore(module, &kernel, &config, options.max_trips, |emulation| {
        peeks = peeks.saturating_add(emulation.peeks);
        let mut r = template.clone();
        check(&mut r, &file, emulation, options, progress);
        times.graph += r.stats.stage_seconds.graph;
        times.race += r.stats.stage_seconds.race;
        let ok = r.passes(options.strict);
        if ok {
            for v in r.violations.iter().filter(|v| v.benign) {
                let hash = {
                    use std::hash::{Hash, Hasher};
                    let mut h = rustc_hash::FxHasher::default();
                    (&v.message, &v.locations).hash(&mut h);
                    h.finish()
                };
                let same = benign_seen.entry(hash).or_default();
                if !same
                    .iter()
                    .any(|&i| benign[i].message == v.message && benign[i].locations == v.locations)
                {
                    same.push(benign.len());
                    benign.push(v.clone());
                }
            }
        }
        if !ok {
            failing = Some(r.clone());
        }
        chosen = Some(r);
        ok
    });
    let exploration = match explored {
        Ok(exploration) => exploration,
        Err(emulator::Error::NoCtaShape { .. }) => {
            report.cta_shape = None;
            report.unverifiable.push(Unverifiable {
                reason: "no CTA shape".to_owned(),
                location: None,
                related: Vec::new(),
                register: None,
                inputs: Vec::new(),
                hint: Some(
                    "the kernel declares neither .reqntid nor .maxntid; pass the shape with \
                     -n/--threads, e.g. -n 256 or -n 32x8"
                        .to_owned(),
                ),
            });
            return Ok(Explored {
                peeks,
                ..Explored::default()
            });
        }
        Err(error @ emulator::Error::MemoryBudget { .. }) => {
            report.unverifiable.push(Unverifiable {
                reason: error.to_string(),
                location: None,
                related: Vec::new(),
                register: None,
                inputs: Vec::new(),
                hint: Some(
                    "raise the budget with --max-memory (e.g. --max-memory 16G), or verify a \
                     smaller CTA with -n"
                        .to_owned(),
                ),
            });
            return Ok(Explored {
                peeks,
                ..Explored::default()
            });
        }
        Err(emulator::Error::Lowering { line, message }) => {
            return Err(KernelInputError { line, message });
        }
        Err(other) => {
            return Err(KernelInputError {
                line: 0,
                message: other.to_string(),
            });
        }
    };
    if exploration.unconfirmed && exploration.rechecked {
        // The concrete re-runs (the last reports) passed: keep the path's own report, the
        // last one rejected. (When none could be checked, the last report is the path's own
        // already: taking the one before it lost the path's race, and a kernel read as
        // verified.)
        chosen = failing;
    }
    let Some(mut last) = chosen else {
        // Every path was abandoned: nothing was checked.
        report.coverage = Some(coverage(&exploration, &ranges));
        report.unverifiable.push(Unverifiable {
            reason: "no path of the choices on input-dependent branches could be explored"
                .to_owned(),
            location: None,
            related: Vec::new(),
            register: None,
            inputs: Vec::new(),
            hint: Some("fix the sizes with --param".to_owned()),
        });
        return Ok(Explored::after(peeks, &exploration));
    };
    if !exploration.failed {
        // The benign races of every verified path (the last path's are among them).
        last.violations.retain(|v| !v.benign);
        last.violations.extend(benign);
    }
    // Emulation is everything the exploration did outside the later stages: every path
    // (abandoned ones and the confirmation run included) and the search for inputs.
    let explored_for = start.elapsed().as_secs_f64();
    times.emulate = report.stats.stage_seconds.emulate
        + (explored_for
            - (times.graph - report.stats.stage_seconds.graph)
            - (times.race - report.stats.stage_seconds.race))
            .max(0.0);
    last.stats.stage_seconds = times;
    if exploration.unconfirmed {
        // What the path found did not reproduce with its witness values fixed: not a
        // violation weft can stand behind, and not a verified path either.
        let found: Vec<String> = last
            .violations
            .iter()
            .filter(|v| !v.benign)
            .map(|v| v.kind.as_str().to_owned())
            .collect();
        // Where the first of them was found, and the other places it names: the report
        // points at the code even when it cannot stand behind the finding.
        let mut places = last
            .violations
            .iter()
            .filter(|v| !v.benign)
            .flat_map(|v| v.locations.iter().cloned());
        let (first_place, other_places) = (places.next(), places.take(8).collect::<Vec<_>>());
        last.violations.retain(|v| v.benign);
        if !found.is_empty() {
            last.unverifiable.push(Unverifiable {
                reason: if exploration.rechecked {
                    format!(
                        "a path of the choices on input-dependent branches reports {} that \
                         does not reproduce with its input values fixed (the symbolic values \
                         on the path are less precise than a concrete run)",
                        found.join(", ")
                    )
                } else {
                    format!(
                        "a path of the choices on input-dependent branches reports {} that a \
                         run with its input values fixed could not confirm (that run could \
                         not be checked: it stopped at a value the witness does not fix)",
                        found.join(", ")
                    )
                },
                location: first_place,
                related: other_places,
                register: None,
                inputs: Vec::new(),
                hint: Some("fix the sizes with --param to verify given values".to_owned()),
            });
        }
    }
    let emulation = &exploration.emulation;
    if exploration.paths > 1 || !emulation.choices.is_empty() {
        last.coverage = Some(coverage(&exploration, &ranges));
    }
    // A verdict the bound cut short: the induction over the trip count may cover the values
    // left out.
    if last.passes(options.strict)
        && !exploration.failed
        && !exploration.unconfirmed
        && let Some(cov) = last.coverage.as_mut()
    {
        progress.kernel_stage("induction", &kernel);
        let mut check_one = |e: &Emulation| {
            let mut r = template.clone();
            check(&mut r, &file, e, options, progress);
            r
        };
        let failed = crate::induction::extend(
            module,
            &kernel,
            &config,
            &exploration,
            cov,
            options.strict,
            &mut check_one,
        );
        if let Some((r, term, x)) = failed {
            let mut cov = cov.clone();
            cov.failing_inputs = vec![report::InputValue {
                term,
                value: x,
                float: None,
            }];
            cov.failing_path = Vec::new();
            let mut r = *r;
            r.coverage = Some(cov);
            r.stats.stage_seconds = last.stats.stage_seconds;
            *report = r;
            return Ok(Explored::after(peeks, &exploration));
        }
    }
    if exploration.incomplete {
        last.unverifiable.push(Unverifiable {
            reason: if exploration.search_exhausted {
                format!(
                    "exploring the answers of branches on kernel inputs stopped after {} paths \
                     with paths left: the search for inputs that follow them ran its budget \
                     of {} term nodes evaluated",
                    exploration.paths,
                    emulator::DEFAULT_SEARCH_BUDGET
                )
            } else if exploration.paths >= emulator::DEFAULT_MAX_PATHS {
                format!(
                    "exploring the answers of branches on kernel inputs stopped after {} paths \
                     with paths left",
                    exploration.paths
                )
            } else {
                format!(
                    "exploring the answers of branches on kernel inputs stopped after {} paths \
                     with paths left: together they ran {} thread-instructions, the budget of \
                     one emulation ({} x the step budget)",
                    exploration.paths,
                    exploration.instructions,
                    emulator::CTA_STEP_FACTOR
                )
            },
            location: None,
            related: Vec::new(),
            register: None,
            inputs: Vec::new(),
            hint: Some("fix some of the sizes with --param, or lower --max-trips".to_owned()),
        });
    }
    *report = last;
    Ok(Explored::after(peeks, &exploration))
}

impl Explored {
    /// [`verify_paths`]'s answer after `exploration`.
    fn after(peeks: u64, exploration: &emulator::Exploration) -> Explored {
        Explored {
            peeks,
            unconfirmed: exploration.unconfirmed,
            data_forks: exploration.emulation.data_forks,
        }
    }
}

/// The periodicity evidence in words (`docs/induction.md` §3).
fn periodicity(p: &emulator::Periodicity, field: &str) -> report::PeriodicityRecord {
    use emulator::{Mismatch, Periodicity};
    let more = |longest: u32| {
        if longest < emulator::MAX_PERIOD {
            " (longer periods need more explored values: raise --max-trips)"
        } else {
            ""
        }
    };
    let (period, from, to, reason) = match *p {
        Periodicity::Repeats { period, from, to } => (
            Some(period),
            Some(from),
            Some(to),
            format!(
                "the explored programs repeat with period {period} from {field} = {from} to \
                 {to}, but weft does not compare the emulator's state at the loop head yet, \
                 so this does not cover larger values (docs/induction.md)"
            ),
        ),
        Periodicity::None {
            longest,
            thread,
            t,
            mismatch: Mismatch::NotInsertion,
        } => (
            None,
            None,
            None,
            format!(
                "no period of at most {} repeats {} times among the explored values; for \
                 period 1, thread {thread}'s program for {field} = {} is not its program for \
                 {t} with one block of commands inserted{}",
                longest,
                emulator::MIN_PERIODS,
                t + 1,
                more(longest)
            ),
        ),
        Periodicity::None {
            longest,
            thread,
            t,
            mismatch: Mismatch::BlockChanges,
        } => (
            None,
            None,
            None,
            format!(
                "no period of at most {} repeats {} times among the explored values; for \
                 period 1, the commands thread {thread} adds from {field} = {t} to {} differ \
                 from those it adds from {} to {}{}",
                longest,
                emulator::MIN_PERIODS,
                t + 1,
                t + 1,
                t + 2,
                more(longest)
            ),
        ),
        Periodicity::TooFew { explored } => (
            None,
            None,
            None,
            format!(
                "too few consecutive values of {field} explored to look for a period \
                 ({explored}, at least {} needed)",
                emulator::MIN_PERIODS + 1
            ),
        ),
        Periodicity::TooLarge => (
            None,
            None,
            None,
            "the explored programs are too large to compare for a period".to_owned(),
        ),
    };
    report::PeriodicityRecord {
        period,
        from,
        to,
        reason,
    }
}

/// The report's coverage record of an exploration.
fn coverage(x: &emulator::Exploration, ranges: &[String]) -> report::Coverage {
    let pairs = |s: &[(u64, u64)]| s.iter().map(|&(a, b)| [a, b]).collect::<Vec<_>>();
    let not_explored = |v: &emulator::Variable| {
        x.coverage
            .not_explored
            .iter()
            .find(|(w, _)| w == v)
            .map_or_else(Vec::new, |(_, s)| pairs(s))
    };
    report::Coverage {
        periodicity: x.coverage.periodicity.as_ref().map(|(v, p)| {
            let term = v
                .as_ref()
                .map_or_else(|| "the trip count".to_owned(), |v| reasons::expr(&v.expr));
            periodicity(p, &term)
        }),
        induction: None,
        paths: x.paths,
        max_trips: x.coverage.max_trips,
        complete: x.coverage.not_explored.is_empty() && !x.incomplete,
        ranges: ranges.to_vec(),
        incomplete: x.incomplete,
        inputs: match (&x.coverage.inputs, x.coverage.inputs_unknown) {
            (Some((e, s)), false) => Some(report::InputCoverage {
                term: reasons::expr(e),
                verified: pairs(s),
                checked_up_to: emulator::SCAN_LIMIT,
            }),
            _ => None,
        },
        // Every variable a choice met: explored on some path, or only left out (a path
        // abandoned at its first choice on it explored none of its values).
        variables: x
            .coverage
            .explored
            .iter()
            .map(|(v, s)| report::CoverageVariable {
                term: reasons::expr(&v.expr),
                bits: v.bits,
                explored: pairs(s),
                not_explored: not_explored(v),
            })
            .chain(
                x.coverage
                    .not_explored
                    .iter()
                    .filter(|(v, _)| !x.coverage.explored.iter().any(|(w, _)| w == v))
                    .map(|(v, s)| report::CoverageVariable {
                        term: reasons::expr(&v.expr),
                        bits: v.bits,
                        explored: Vec::new(),
                        not_explored: pairs(s),
                    }),
            )
            .collect(),
        failing_inputs: if x.failed {
            x.emulation
                .witness
                .iter()
                .map(|(e, v)| report::InputValue {
                    term: reasons::expr(e),
                    value: *v,
                    float: reasons::float_value(e, *v),
                })
                .collect()
        } else {
            Vec::new()
        },
        failing_path: if x.failed {
            x.emulation
                .path_values
                .iter()
                .map(|(v, s)| report::PathValue {
                    term: reasons::expr(&v.expr),
                    bits: v.bits,
                    values: pairs(s),
                })
                .collect()
        } else {
            Vec::new()
        },
    }
}

/// Runs the barrier-graph and race stages on one emulated path, filling `report`.
fn check(
    report: &mut KernelReport,
    file: &PtxFile,
    emulation: &Emulation,
    options: &Options,
    progress: &crate::progress::Progress,
) {
    let kernel = report.kernel.clone();
    let program = &emulation.program;
    let shape = program.shape;
    report.cta_shape = Some([shape.x, shape.y, shape.z]);
    report.notes.extend(emulation.notes.iter().cloned());
    report.stats.threads = u64::from(program.num_threads());
    report.stats.commands = emulation.stats.commands;
    report.stats.instructions = emulation.stats.instructions;

    report.violations.extend(findings(file, emulation));
    report.assumptions = assumptions(file, emulation);
    if !emulation.unverifiable.is_empty() {
        for u in &emulation.unverifiable {
            report.unverifiable.push(unverifiable(file, emulation, u));
        }
        // The programs are incomplete or depend on unknown inputs: the later stages would
        // check something other than the kernel.
        return;
    }

    progress.kernel_stage("barrier graph", &kernel);
    let start = Instant::now();
    let analysis = barrier_graph::analyze(program);
    report.stats.stage_seconds.graph = start.elapsed().as_secs_f64();
    report.stats.dynamic_barriers = analysis.stats.dynamic_barriers as u64;
    report.stats.physical_barriers = analysis.stats.physical_barriers as u64;
    for v in &analysis.violations {
        report.violations.push(sync_violation(file, emulation, v));
    }
    // An over-approximated extent that may reach a live mbarrier: not a violation, and the
    // kernel is not verified.
    for v in &analysis.undecided {
        let v = sync_violation(file, emulation, v);
        report.unverifiable.push(Unverifiable {
            reason: format!("possible {}: {}", v.kind.as_str(), v.message),
            location: v.locations.first().cloned(),
            related: v.locations.iter().skip(1).cloned().collect(),
            register: None,
            inputs: Vec::new(),
            hint: None,
        });
    }
    if options.dot {
        report.dot = Some(dot_graph(&analysis));
    }

    // The race stage needs only the relation: the graph's nodes and registrations (tens of
    // bytes per sync command) are freed before it allocates its own tables.
    let barrier_graph::Analysis {
        happens_before,
        graph,
        ..
    } = analysis;
    drop(graph);
    let Some(happens_before) = &happens_before else {
        // Not well-synchronized: there is no happens-before relation to test races against.
        return;
    };
    progress.kernel_stage("race", &kernel);
    let start = Instant::now();
    let races = race::find_races(
        program,
        happens_before,
        &race::Config {
            warp_sync: options.warp_sync,
            detail: options.detail,
            max_word_tests: Some(options.max_race_tests),
        },
    );
    report.stats.stage_seconds.race = start.elapsed().as_secs_f64();
    report.stats.shared_addresses = races.stats.shared_addresses;
    report.stats.race_tests = races.stats.race_tests;
    report.stats.naive_race_pairs = races.stats.naive_pairs;
    for r in &races.races {
        report.violations.push(race_violation(file, emulation, r));
    }
    // Unordered writes of one value: a warning (a violation only under --strict).
    for r in &races.benign {
        let mut v = race_violation(file, emulation, r);
        v.kind = report::Kind::BenignRace;
        v.message = format!(
            "benign race: unordered writes of the same value to {}",
            shared_name(emulation, r.addr)
        );
        v.notes.push(
            "both writes store the same bytes (known, or one function of the kernel's inputs), so \
             whichever lands last the memory \
             holds that value; a read racing with them is reported as a race (--strict \
             makes this a violation)"
                .to_owned(),
        );
        v.benign = true;
        report.violations.push(v);
    }
    // A race on an over-approximated extent cannot be decided: the kernel is not verified,
    // and no violation is claimed.
    for r in &races.possible {
        report.unverifiable.push(possible_race(file, emulation, r));
    }
    for f in race::missing_proxy_fences(program, happens_before) {
        let v = proxy_fence_violation(file, emulation, &f);
        if f.copy.approx {
            // The copy's extent is an upper bound: the write may lie outside what it reads.
            report.unverifiable.push(Unverifiable {
                reason: format!(
                    "possible missing fence.proxy.async: {} (the store's extent is \
                     over-approximated, so the write may lie outside what it reads)",
                    v.message
                ),
                location: v.locations.first().cloned(),
                related: v.locations.get(1).cloned().into_iter().collect(),
                register: None,
                inputs: Vec::new(),
                hint: Some(
                    "execute fence.proxy.async (e.g. fence.proxy.async.shared::cta) after \
                     the shared-memory writes and before the barrier that orders them before \
                     the store"
                        .to_owned(),
                ),
            });
        } else {
            report.violations.push(v);
        }
    }
    if races.stats.words_over_budget > 0 {
        // Races there may be missing: nothing is proved race-free (races found stand).
        report.unverifiable.push(Unverifiable {
            reason: format!(
                "the race check reached its budget of {} happens-before tests (a race \
                 recorded counts as 4) in {} shared word(s): races there may be unreported, and \
                 the thread-pair counts of those found are lower bounds",
                options.max_race_tests, races.stats.words_over_budget
            ),
            location: None,
            related: Vec::new(),
            register: None,
            inputs: Vec::new(),
            hint: Some(
                "raise it with --max-race-tests (writes of values that differ from trip to \
                 trip, unordered within a trip, make every thread pair be tested)"
                    .to_owned(),
            ),
        });
    }
    if races.stats.chunks_stopped > 0 {
        report.notes.push(format!(
            "the race check stopped in {} shared word(s) once it had found {} or more racing \
             instruction pairs in each: other instruction pairs may race there too, and the \
             thread-pair counts of those reported are lower bounds",
            races.stats.chunks_stopped,
            race::MAX_RACING_PAIRS_PER_CHUNK
        ));
    }
    if races.stats.benign_words_capped > 0 {
        report.notes.push(format!(
            "{} shared word(s) had more than {cap} benign instruction pairs: only the first \
             {cap} found in each are reported (benign races are warnings; real races there \
             were still searched for)",
            races.stats.benign_words_capped,
            cap = race::MAX_BENIGN_PAIRS_PER_CHUNK
        ));
    }
    if races.stats.same_instruction_writes > 0 {
        report.notes.push(format!(
            "{}{} write pair(s) by lanes of one warp in one instruction were not reported: {}",
            if races.stats.same_instruction_writes_at_least {
                "at least "
            } else {
                ""
            },
            races.stats.same_instruction_writes,
            race::SAME_INSTRUCTION_WRITES_NOTE
        ));
    }
}

/// What an access address names: `shared \`buf\`+128`, `shared address 0x80` outside every
/// known symbol, or `tensor memory lane 3, column 17`.
fn shared_name(emulation: &Emulation, addr: u32) -> String {
    if let Some((lane, column)) = weft_program::tmem_cell(addr) {
        return format!("tensor memory lane {lane}, column {column}");
    }
    match emulator::shared_symbol_at(&emulation.shared, addr) {
        Some(s) if addr == s.offset => format!("shared `{}`", s.source_name()),
        Some(s) => format!("shared `{}`+{}", s.source_name(), addr - s.offset),
        None => format!("shared address {addr:#x}"),
    }
}

/// The traps the verdict assumes are not reached, with their locations.
fn assumptions(file: &PtxFile, emulation: &Emulation) -> Vec<report::Assumption> {
    emulation
        .assumptions
        .iter()
        .map(|a| {
            let (kind, message) = match &a.assertion {
                Some(assertion) => ("assertion", assertion.message.clone()),
                None => ("trap", None),
            };
            report::Assumption {
                kind,
                message,
                location: location(file, &emulation.sources, a.inst, "assumed not reached"),
                branch: location(
                    file,
                    &emulation.sources,
                    a.branch,
                    "the branch on an input-dependent value",
                ),
            }
        })
        .collect()
}

#[cold]
fn findings(file: &PtxFile, emulation: &Emulation) -> Vec<Violation> {
    // One violation per (kind, instruction), naming every thread that hit it.
    let mut groups: BTreeMap<(Kind, InstId), (Vec<u32>, &str)> = BTreeMap::new();
    for f in &emulation.findings {
        let kind = match f.kind {
            FindingKind::SharedOutOfBounds => Kind::SharedOutOfBounds,
            FindingKind::MisalignedAddress => Kind::MisalignedAddress,
            FindingKind::TrapReachable => Kind::TrapReachable,
            FindingKind::TensorMemory => Kind::TensorMemory,
            FindingKind::ClusterLaunchControl => Kind::ClusterLaunchControl,
            FindingKind::BulkCopySize => Kind::BulkCopySize,
            FindingKind::CollectiveDeadlock => Kind::Deadlock,
            // An `.aligned` instruction some threads of its group skip, as for barriers.
            FindingKind::WarpgroupDivergence => {
                Kind::Sync(barrier_graph::ViolationKind::BarrierDivergence)
            }
        };
        let entry = groups
            .entry((kind, f.inst))
            .or_insert_with(|| (Vec::new(), f.message.as_str()));
        entry.0.push(f.thread.0);
    }
    let program = &emulation.program;
    groups
        .into_iter()
        .map(|((kind, inst), (threads, message))| {
            let threads = report::thread_ranges(threads);
            let who = describe(&threads, program);
            Violation {
                kind,
                message: message.to_owned(),
                locations: vec![location(file, &emulation.sources, inst, who)],
                threads,
                barrier: None,
                generation: None,
                later_generations: Vec::new(),
                notes: Vec::new(),
                benign: false,
            }
        })
        .collect()
}

#[cold]
fn unverifiable(file: &PtxFile, emulation: &Emulation, u: &emulator::Unverifiable) -> Unverifiable {
    let label = match (&u.register, u.thread) {
        (Some(reg), Some(t)) => format!(
            "`{reg}` is unknown here (in {})",
            one_thread(t, &emulation.program)
        ),
        (Some(reg), None) => format!("`{reg}` is unknown here"),
        (None, Some(t)) => format!("in {}", one_thread(t, &emulation.program)),
        (None, None) => String::new(),
    };
    let location = u
        .inst
        .map(|inst| location(file, &emulation.sources, inst, label));
    let mut hints = Vec::new();
    for hint in u.sources.iter().filter_map(reasons::param_fix) {
        if !hints.contains(&hint) {
            hints.push(hint);
        }
    }
    // A value that also depends on memory the kernel reads (a label loaded from global
    // memory: Liger's cross entropy) stays unknown whatever the parameters are.
    let loaded = u.sources.iter().any(|s| {
        matches!(
            s,
            emulator::ValueSource::GlobalLoad(_)
                | emulator::ValueSource::ConstLoad(_)
                | emulator::ValueSource::TextureLoad(_)
        )
    });
    // Floating-point arithmetic the emulator does not compute (`ex2.approx`, an `add` ptxas
    // may fuse) stays unknown whatever its operands are.
    let float = u
        .sources
        .iter()
        .any(|s| matches!(s, emulator::ValueSource::Float(_)));
    let hint = if hints.is_empty() {
        None
    } else if loaded {
        Some(format!(
            "fix the input with {}; the value also depends on a load from memory, which no \
             option fixes, so that may not decide it",
            hints.join(", ")
        ))
    } else if float {
        Some(format!(
            "fix the input with {}; the value also depends on floating-point arithmetic weft \
             does not compute (docs/semantics.md §6.6), which no option makes known, so that \
             may not decide it",
            hints.join(", ")
        ))
    } else {
        Some(format!("fix the input with {}", hints.join(", ")))
    };
    Unverifiable {
        reason: reasons::why(
            &u.why,
            &emulation.sources,
            u.inst
                .and_then(|i| emulation.sources.sites.get(i.index()))
                .map(|site| &*site.opcode),
        ),
        location,
        related: Vec::new(),
        register: u.register.clone(),
        inputs: u
            .sources
            .iter()
            .map(|s| reasons::source(s, &emulation.sources))
            .collect(),
        hint,
    }
}

/// Locations of a blocked generation: one per blocking or arriving instruction.
fn blocked_locations(
    file: &PtxFile,
    emulation: &Emulation,
    b: &BlockedGeneration,
    out: &mut Vec<Location>,
) {
    let program = &emulation.program;
    let mut per_inst: Vec<(InstId, Vec<ThreadRange>, &str)> = Vec::new();
    let groups = b
        .blocked
        .iter()
        .map(|(r, i)| (r, i, "blocked"))
        .chain(b.arrived.iter().map(|(r, i)| (r, i, "arrived")));
    for (range, inst, what) in groups {
        let r = ThreadRange {
            first: range.first.0,
            last: range.last.0,
        };
        match per_inst
            .iter_mut()
            .find(|(i, _, w)| i == inst && *w == what)
        {
            Some((_, ranges, _)) => ranges.push(r),
            None => per_inst.push((*inst, vec![r], what)),
        }
    }
    for (inst, ranges, what) in per_inst {
        let label = format!(
            "{} {what} at {} generation {} ({} of {} threads arrived)",
            describe(&ranges, program),
            barrier_name(b.key),
            b.generation,
            b.registered,
            b.expected
        );
        out.push(location(file, &emulation.sources, inst, label));
    }
}

fn blocked_note(emulation: &Emulation, b: &BlockedGeneration) -> String {
    let program = &emulation.program;
    let mut note = format!(
        "{} generation {}: {} of {} threads arrived",
        barrier_name(b.key),
        b.generation,
        b.registered,
        b.expected
    );
    let join = |items: &[(barrier_graph::ThreadRange, InstId)]| {
        let ranges: Vec<ThreadRange> = items
            .iter()
            .map(|(r, _)| ThreadRange {
                first: r.first.0,
                last: r.last.0,
            })
            .collect();
        describe(&ranges, program)
    };
    if !b.blocked.is_empty() {
        note.push_str(&format!("; blocked: {}", join(&b.blocked)));
    }
    if !b.arrived.is_empty() {
        note.push_str(&format!("; arrived: {}", join(&b.arrived)));
    }
    if !b.absent.is_empty() {
        let absent: Vec<String> = b
            .absent
            .iter()
            .map(|(r, state)| {
                let who = describe(
                    &[ThreadRange {
                        first: r.first.0,
                        last: r.last.0,
                    }],
                    program,
                );
                match state {
                    ThreadState::Blocked {
                        key, generation, ..
                    } => format!(
                        "{who} (blocked at {} generation {generation})",
                        barrier_name(*key)
                    ),
                    ThreadState::Exited => format!("{who} (exited)"),
                    ThreadState::Stopped => format!("{who} (stopped)"),
                }
            })
            .collect();
        note.push_str(&format!("; never came: {}", absent.join(", ")));
    }
    note
}

#[cold]
fn sync_violation(file: &PtxFile, emulation: &Emulation, v: &SyncViolation) -> Violation {
    let program = &emulation.program;
    let mut locations = Vec::new();
    let mut notes = Vec::new();
    for b in &v.blocked {
        blocked_locations(file, emulation, b, &mut locations);
        notes.push(blocked_note(emulation, b));
    }
    if !v.cycle.is_empty() {
        let mut steps: Vec<String> = v
            .cycle
            .iter()
            .map(|(key, generation)| format!("{} generation {generation}", barrier_name(*key)))
            .collect();
        steps.push(steps[0].clone());
        notes.push(format!("wait-for cycle: {}", steps.join(" -> ")));
    }
    let mut seen: Vec<InstId> = Vec::new();
    if v.blocked.is_empty() {
        for c in &v.commands {
            if seen.contains(&c.inst) {
                continue;
            }
            seen.push(c.inst);
            let command = program
                .threads
                .get(c.thread.index())
                .and_then(|t| t.commands.get(c.index as usize))
                .map(|c| format!("`{c}`"))
                .unwrap_or_default();
            let label = format!("{command} by {}", one_thread(c.thread, program))
                .trim()
                .to_owned();
            locations.push(location(file, &emulation.sources, c.inst, label));
        }
    }
    if let Some((registered, expected)) = v.counts.filter(|_| v.blocked.is_empty()) {
        notes.push(format!("{registered} of {expected} threads registered"));
    }
    let threads = ranges_of(&v.threads);
    if !threads.is_empty() && v.blocked.is_empty() {
        notes.push(format!("threads: {}", describe(&threads, program)));
    }
    if !v.also.is_empty() {
        let what = if v.mbarrier.is_some() {
            "phases"
        } else {
            "generations"
        };
        let shown: Vec<String> = v.also.iter().take(8).map(u32::to_string).collect();
        let more = if v.also.len() > shown.len() {
            ", …"
        } else {
            ""
        };
        notes.push(format!(
            "the same at {} later {what}, with the same instructions and threads: {}{more}",
            v.also.len(),
            shown.join(", ")
        ));
    }
    Violation {
        kind: v.kind.into(),
        message: v.message.clone(),
        locations,
        threads,
        barrier: match v.barrier {
            Some(BarrierKey::Named(id)) => Some(id),
            _ => None,
        },
        generation: v.generations.first().copied(),
        later_generations: v.also.clone(),
        notes,
        benign: false,
    }
}

/// The location of one access of a race-like finding, labelled with who accessed what.
fn access_location(file: &PtxFile, emulation: &Emulation, site: &race::AccessSite) -> Location {
    location(
        file,
        &emulation.sources,
        site.inst,
        access_label(site, &emulation.program),
    )
}

fn access_label(site: &race::AccessSite, program: &Program) -> String {
    let what = match site.kind {
        weft_program::AccessKind::Read => "read",
        weft_program::AccessKind::Write => "write",
        weft_program::AccessKind::Atomic => "atomic",
    };
    let may = if site.may {
        " (may happen: under an input-dependent branch)"
    } else {
        ""
    };
    format!(
        "{what} of {} bytes by {}{may}",
        site.len,
        one_thread(site.thread, program)
    )
}

/// `the TMA copy `cp.async…` at PTX line 57 (…)` or `` `ld.shared.u32` at PTX line 60 (read of 4
/// bytes by warp 1 lane 0)``.
fn possible_race_side(site: &race::AccessSite, loc: &Location, program: &Program) -> String {
    let what = format!(
        "`{}` at PTX line {}",
        if loc.opcode.is_empty() {
            "?"
        } else {
            &loc.opcode
        },
        loc.ptx_line
    );
    if !site.approx {
        return format!("{what} ({})", access_label(site, program));
    }
    match site.kind {
        weft_program::AccessKind::Read => format!(
            "the TMA store {what} by {} (extent over-approximated: its extent lives in the \
             tensor map, so it is recorded as reading {} bytes from its source, up to the next \
             TMA tile or the end of shared memory)",
            one_thread(site.thread, program),
            site.len
        ),
        _ => format!(
            "the TMA copy {what} by {} (extent over-approximated: its byte count lives in the \
             tensor map and it shares its mbarrier phase with other copies, so it is recorded \
             as writing up to {} bytes from its destination: the phase's bytes less 16 per \
             other copy, clipped at the next TMA tile and the end of shared memory)",
            one_thread(site.thread, program),
            site.len
        ),
    }
}

/// A race in which an access has an over-approximated extent: a reason the kernel could not
/// be verified, not a violation.
#[cold]
fn possible_race(file: &PtxFile, emulation: &Emulation, r: &race::Race) -> Unverifiable {
    let program = &emulation.program;
    let loc = |site: &race::AccessSite| {
        let mut label = access_label(site, program);
        if site.approx {
            label.push_str(" (extent over-approximated)");
        }
        location(file, &emulation.sources, site.inst, label)
    };
    let (first, second) = (loc(&r.first), loc(&r.second));
    let reason = format!(
        "possible {} race on {}: between {} and {}{}; weft cannot bound the {} extent, \
         so the common bytes may lie outside what the copy really accesses",
        r.hazard.as_str(),
        shared_name(emulation, r.addr),
        possible_race_side(&r.first, &first, program),
        possible_race_side(&r.second, &second, program),
        if r.thread_pairs > 1 {
            format!(
                ", not ordered by any barrier ({}{} thread pairs)",
                if r.thread_pairs_at_least {
                    "at least "
                } else {
                    ""
                },
                r.thread_pairs
            )
        } else {
            ", not ordered by any barrier".to_owned()
        },
        if r.first.approx && r.second.approx {
            "copies'"
        } else {
            "copy's"
        },
    );
    // The approximate access is the primary location.
    let (primary, related) = if r.first.approx {
        (first, second)
    } else {
        (second, first)
    };
    let inputs = [&r.first, &r.second]
        .into_iter()
        .filter(|s| s.approx)
        .map(|s| {
            let line = emulation
                .sources
                .sites
                .get(s.inst.index())
                .map_or(0, |site| site.ptx_line);
            format!("the tensor map of the TMA copy at PTX line {line}")
        })
        .collect::<Vec<_>>();
    Unverifiable {
        reason,
        location: Some(primary),
        related: vec![related],
        register: None,
        inputs,
        hint: Some(
            "a TMA copy alone in its mbarrier phase gets an exact extent (the phase's bytes); \
             if the accesses are in fact disjoint or ordered, this race is an artifact of the \
             bound"
                .to_owned(),
        ),
    }
}

#[cold]
fn race_violation(file: &PtxFile, emulation: &Emulation, r: &race::Race) -> Violation {
    let program = &emulation.program;
    let message = format!(
        "{} on {}",
        r.hazard.as_str(),
        shared_name(emulation, r.addr)
    );
    let locations = vec![
        access_location(file, emulation, &r.first),
        access_location(file, emulation, &r.second),
    ];
    let mut notes = vec![format!(
        "{} and {} are not ordered by any barrier{}",
        one_thread(r.first.thread, program),
        one_thread(r.second.thread, program),
        if r.thread_pairs > 1 {
            format!(
                "; {}{} thread pairs race on these two instructions",
                if r.thread_pairs_at_least {
                    "at least "
                } else {
                    ""
                },
                r.thread_pairs
            )
        } else {
            String::new()
        }
    )];
    if program.agent(r.first.thread).is_some() || program.agent(r.second.thread).is_some() {
        notes.push(ASYNC_NOTE.to_owned());
    }
    for (addr, a, b) in &r.details {
        notes.push(format!(
            "{}: {} and {}",
            shared_name(emulation, *addr),
            one_thread(*a, program),
            one_thread(*b, program)
        ));
    }
    if r.details_truncated {
        notes.push(format!(
            "(only the first {} racing pairs are listed)",
            r.details.len()
        ));
    }
    Violation {
        kind: Kind::Race,
        message,
        locations,
        threads: report::thread_ranges([
            cta_thread(r.first.thread, program).0,
            cta_thread(r.second.thread, program).0,
        ]),
        barrier: None,
        generation: None,
        later_generations: Vec::new(),
        notes,
        benign: false,
    }
}

#[cold]
fn proxy_fence_violation(
    file: &PtxFile,
    emulation: &Emulation,
    f: &race::MissingProxyFence,
) -> Violation {
    let program = &emulation.program;
    let message = format!(
        "generic-proxy write to {} is read by an async-proxy copy with no \
         fence.proxy.async between them",
        shared_name(emulation, f.addr)
    );
    let locations = vec![
        access_location(file, emulation, &f.copy),
        access_location(file, emulation, &f.write),
    ];
    let notes = vec![format!(
        "the write happens before the copy, but bulk and TMA copies read shared memory \
             through the async proxy: without fence.proxy.async after the write (in any thread \
             on the path from the write to the copy's issue) the copy may read stale data \
             (PTX ISA, memory consistency model: proxies); {} such pair(s)",
        f.pairs
    )];
    Violation {
        kind: Kind::MissingProxyFence,
        message,
        locations,
        threads: report::thread_ranges([
            cta_thread(f.write.thread, program).0,
            cta_thread(f.copy.thread, program).0,
        ]),
        barrier: None,
        generation: None,
        later_generations: Vec::new(),
        notes,
        benign: false,
    }
}

/// Why an asynchronous copy races with what its issuer's barriers seem to order.
const ASYNC_NOTE: &str = "an asynchronous copy accesses shared memory at an unknown time \
between its issue and its completion: for cp.async, the issuing thread's \
cp.async.wait_group/wait_all (or the mbarrier phase of its cp.async.mbarrier.arrive); for a \
bulk or TMA load, the mbarrier phase its bytes complete, observed by a wait; for a bulk or TMA \
store, the issuing thread's cp.async.bulk.wait_group[.read]; for a tensor-core operand read \
(wgmma.mma_async, tcgen05.mma, tcgen05.cp), the wgmma.wait_group that retires it in any lane of its \
warpgroup, or the mbarrier phase of a tcgen05.commit that tracks it; for a tensor-memory \
access, the tcgen05.commit that tracks a tcgen05.mma or tcgen05.cp, and the issuing warp's \
tcgen05.wait::ld or ::st (or the thread's first use of a register a tcgen05.ld wrote) for \
tcgen05.ld and tcgen05.st. A barrier orders nothing the copy does before it completes";

fn dot_graph(analysis: &barrier_graph::Analysis) -> DotGraph {
    // The (barrier or mbarrier, generation) pairs of the violations, looked up per node (a
    // no-waiter violation lists every generation of a loop of arrivals).
    let mut named: FxHashSet<(BarrierKey, u32)> = FxHashSet::default();
    let mut phases: FxHashSet<(Option<u32>, u32)> = FxHashSet::default();
    for v in &analysis.violations {
        for &g in v.generations.iter().chain(&v.also) {
            if let Some(key) = v.barrier {
                named.insert((key, g));
            }
            phases.insert((v.mbarrier, g));
        }
    }
    let violated = |key: BarrierKey, generation: u32| named.contains(&(key, generation));
    let label = |key: BarrierKey, generation: u32| match key {
        BarrierKey::Named(id) => format!("bar {id} gen {generation}"),
        BarrierKey::Warp(w) => format!("warp {w} gen {generation}"),
    };
    let mut graph = DotGraph {
        nodes: analysis
            .graph
            .nodes
            .iter()
            .map(|n| DotNode {
                label: match n.key.barrier() {
                    Some(key) => label(key, n.generation),
                    None => format!("{} phase {}", n.key, n.generation),
                },
                violated: match n.key.barrier() {
                    Some(key) => violated(key, n.generation),
                    None => phases.contains(&(n.key.mbarrier(), n.generation)),
                },
            })
            .collect(),
        edges: analysis
            .graph
            .edges
            .iter()
            .map(|(a, b)| (a.index(), b.index()))
            .collect(),
    };
    // Generations a deadlock left open are not dynamic barriers; show them too.
    for v in &analysis.violations {
        for b in &v.blocked {
            graph.nodes.push(DotNode {
                label: format!("{} (blocked)", label(b.key, b.generation)),
                violated: true,
            });
        }
    }
    graph
}
