//! Bounded exploration of the choices on symbolic predicates (`docs/semantics.md` §6.5).
//!
//! [`explore`] emulates the kernel once per *path*: a sequence of answers to the choices a
//! run meets ([`crate::Choice`]). The first run answers every choice with the side of the
//! smaller values; each later run replays a prefix of an earlier path and flips its last
//! choice whose other side was feasible and not explored (depth first, like loom's path
//! exploration). Each path is an ordinary [`Emulation`], checked by the caller's `check`
//! (the barrier-graph and race stages), which says whether the path is verified; the
//! exploration stops at the first path that is not.
//!
//! Every concrete input follows exactly one sequence of answers, so when every path was
//! explored and verified, the kernel is verified for every input, except the values the
//! bound left out: a variable's choices beyond [`crate::ChoicePlan::max_trips`] on one path
//! take the smaller side only, and [`Coverage::not_explored`] names the other side.

use crate::exec::terms::{Set, union};
use crate::period::{Periodicity, Programs};
use crate::unverifiable::Why;
use crate::{
    ChoicePlan, Config, Emulation, Error, Expr, InputBinding, ParamBinding, ParamRef, ParamValue,
    ScalarType, Variable,
};
use ptx_parser::Module;

/// The default bound on choices per variable per path (`--max-trips`).
pub const DEFAULT_MAX_TRIPS: u32 = 8;

/// The largest parameter value [`Coverage::inputs`] checks.
pub const SCAN_LIMIT: u64 = 1 << 14;

/// The most paths [`explore`] runs before it gives up (the result says so).
pub const DEFAULT_MAX_PATHS: u32 = 512;

/// Term nodes all paths of an exploration may evaluate searching for inputs that follow
/// their choices (each `Terms::eval` counted at its term's size; about 1.5 s on the
/// slowest searches measured).
pub const DEFAULT_SEARCH_BUDGET: u64 = 40_000_000;

/// Other inputs a failing path's replay looks for when its first witness does not
/// reproduce what it found ([`Config::alternative_witnesses`]); each costs a concrete run.
pub const MAX_ALTERNATIVE_WITNESSES: u32 = 3;

/// Which inputs the explored paths cover.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Coverage {
    /// The variables the choices decided on, in order of first choice, each with the union
    /// of the values the explored paths allow.
    pub explored: Vec<(Variable, Vec<(u64, u64)>)>,
    /// Values no path explored because of the bound (per variable: the union of the sides
    /// not taken at bounded choices). Empty when every feasible path was explored.
    pub not_explored: Vec<(Variable, Vec<(u64, u64)>)>,
    /// The bound in force.
    pub max_trips: u32,
    /// When every explored path's choices are on terms of one parameter field: that field
    /// and its values in `0..=SCAN_LIMIT` that follow a verified path (every other value in
    /// that range follows a path that was not explored). `None` otherwise.
    pub inputs: Option<(Expr, Vec<(u64, u64)>)>,
    /// Some path's choices read more than one field, or none: [`Coverage::inputs`] is
    /// not known.
    pub inputs_unknown: bool,
    /// Whether the programs of the verified paths that fix a variable to one value (a trip
    /// count; the variable with the most such paths) repeat from some value on
    /// (`docs/induction.md` §3): evidence, never a verdict for values not explored. The
    /// variable is `None` when the programs were too large to keep; the whole is `None`
    /// when no path fixed a variable.
    pub periodicity: Option<(Option<Variable>, Periodicity)>,
}

/// The result of [`explore`].
#[derive(Debug, Clone, PartialEq)]
pub struct Exploration {
    /// The first path `check` rejected, or else the last path explored.
    pub emulation: Emulation,
    /// Paths emulated.
    pub paths: u32,
    /// `check` rejected [`Exploration::emulation`].
    pub failed: bool,
    /// The rejected path did not reproduce: with its witness values fixed as parameters
    /// ([`Emulation::witness`]), an ordinary emulation of the kernel passed `check` (the
    /// path's symbolic values were less precise than the concrete run), or could not be
    /// checked ([`Exploration::rechecked`]), so what the path found is not confirmed.
    /// [`Exploration::emulation`] is the symbolic path.
    pub unconfirmed: bool,
    /// With [`Exploration::unconfirmed`]: the concrete run was checked (it was the last
    /// emulation handed to `check`, which passed). False when it could not be checked (it
    /// stopped at a choice of its own, was abandoned, or failed to emulate): then `check`
    /// last saw the symbolic path itself.
    pub rechecked: bool,
    /// The exploration stopped at [`DEFAULT_MAX_PATHS`] paths, when its paths had run the
    /// CTA-wide instruction budget of one emulation in all (see
    /// [`Exploration::instructions`]), or when its search for inputs ran out, with paths
    /// left.
    pub incomplete: bool,
    /// The exploration stopped because the search for inputs that follow its paths'
    /// choices ran out of its budget ([`Config::search_budget`]); [`Exploration::incomplete`]
    /// is set too.
    pub search_exhausted: bool,
    /// Thread-instructions executed over all paths (the confirmation run of a failing
    /// path included).
    pub instructions: u64,
    /// Thread-instructions of the longest path (the induction's estimate of its own runs).
    pub longest: u64,
    /// Term nodes the paths' searches for inputs evaluated, of [`Config::search_budget`].
    pub search: u64,
    /// What the verified paths cover (before the failing one, when one failed).
    pub coverage: Coverage,
}

fn add(list: &mut Vec<(Variable, Set)>, v: &Variable, s: &[(u64, u64)]) {
    match list.iter_mut().find(|(x, _)| x == v) {
        Some((_, have)) => *have = union(have, s),
        None => list.push((v.clone(), s.to_vec())),
    }
}

/// Emulates `kernel` along every path of its choices (bounded by `max_trips`), calling
/// `check` on each; stops at the first path `check` returns `false` for. Without choices
/// this is one [`crate::emulate`].
pub fn explore(
    module: &Module<'_>,
    kernel: &str,
    config: &Config,
    max_trips: u32,
    check: impl FnMut(&Emulation) -> bool,
) -> Result<Exploration, Error> {
    explore_resuming(module, kernel, config, max_trips, check, true)
}

/// [`explore`], resuming paths from checkpoints of earlier ones when `resume` (the same
/// exploration either way; tests compare them).
pub(crate) fn explore_resuming(
    module: &Module<'_>,
    kernel: &str,
    config: &Config,
    max_trips: u32,
    mut check: impl FnMut(&Emulation) -> bool,
    resume: bool,
) -> Result<Exploration, Error> {
    // Each decided choice: its answer and whether the other side is still to explore.
    let mut stack: Vec<(bool, bool)> = Vec::new();
    let mut coverage = Coverage {
        max_trips,
        ..Coverage::default()
    };
    let mut paths = 0u32;
    // All paths together may run what one emulation may: hostile input must not multiply
    // the budget by the number of paths.
    let budget = config.step_limit.saturating_mul(crate::CTA_STEP_FACTOR);
    let mut instructions = 0u64;
    let mut longest = 0u64;
    let mut search = 0u64;
    // The programs of verified paths that one value of the field follows (for the
    // periodicity evidence of the coverage).
    let mut programs = Programs::default();
    // Assertions that paths' inputs fail (`Emulation::failed_assertions`): a path that
    // reaches only such traps is held back, unchecked, like an abandoned one. Once another
    // path avoids them they are assumptions (docs/semantics.md §6.2: the assertion met
    // after a choice made what it tests known); if none does, the first held path is
    // checked as the exploration's failing one.
    let mut assumed: Vec<crate::Assumption> = Vec::new();
    let mut held: Option<(Emulation, u32)> = None;
    let mut clean = false;
    let mut recheck: Option<(Emulation, u32)> = None;
    // The next path, emulated while `check` ran on this one ([`Prefetch`]).
    let mut prefetched: Option<Prefetch> = None;
    let lowered = crate::Lowered::new(module, kernel, config);
    let emulate =
        |cfg: &Config| crate::emulate_lowered(lowered.as_ref(), module, kernel, cfg, None);
    // Copies of earlier paths' runs after their choices (`crate::exec::Checkpoint`): a path
    // resumes from the deepest one its plan agrees with instead of emulating that prefix
    // again, within a quarter of the memory budget.
    let mut checkpoints = resume.then(|| crate::exec::Checkpoints::new(config.max_memory / 4));
    loop {
        // A path may run what the earlier ones left of the budget (each ran to its own full
        // budget before, and the last one nearly doubled the total: 10 s of CPU).
        let left = budget.saturating_sub(instructions);
        let cfg = path_config(config, &stack, max_trips, search, left);
        let checking_held = recheck.is_some();
        let ahead = prefetched.take();
        let mut emulation = match recheck.take() {
            Some((e, p)) => {
                paths = p - 1;
                e
            }
            None => match ahead {
                // Emulated with exactly this path's plan and budgets: its run.
                Some(p) if p.matches(&cfg) => p.emulation?,
                _ => {
                    let at = Path {
                        cfg: &cfg,
                        stack: &stack,
                    };
                    resume_path(lowered.as_ref(), module, kernel, at, checkpoints.as_mut())?
                }
            },
        };
        paths += 1;
        if !checking_held {
            instructions = instructions.saturating_add(emulation.stats.instructions);
            longest = longest.max(emulation.stats.instructions);
            search = search.saturating_add(emulation.search_work);
        }
        let cut_short = left < budget
            && emulation
                .unverifiable
                .iter()
                .any(|u| matches!(u.why, Why::CtaStepBudget { limit } if limit < budget));
        if cut_short {
            // Not the path's verdict: the exploration ran out of its budget on it.
            coverage.periodicity = programs.periodicity();
            return Ok(Exploration {
                emulation,
                paths: paths - 1,
                failed: false,
                unconfirmed: false,
                rechecked: false,
                incomplete: true,
                search_exhausted: false,
                instructions,
                longest,
                search,
                coverage,
            });
        }
        for (v, s) in &emulation.not_explored {
            add(&mut coverage.not_explored, v, s);
        }
        // A held path checked because no path avoided its assertions: they are not
        // assumptions but its failure.
        if !checking_held {
            add_assumptions(&mut emulation.assumptions, &assumed);
        }
        let mut fails_assertions =
            !checking_held && !emulation.abandoned && emulation.fails_only_assertions();
        // An abandoned path has no verdict of its own (its inputs are not explored, or it
        // has none).
        let ok = if emulation.abandoned || fails_assertions {
            true
        } else {
            // While `check` runs on this path, the next one (the path the exploration takes
            // if this one passes) is emulated on another worker of the pool, if it has one.
            // (The conditions under which the loop below goes on to another path.)
            let goes_on = !checking_held
                && paths < DEFAULT_MAX_PATHS
                && instructions < budget
                && !emulation.search_exhausted;
            let next = if goes_on && pipelines(config, &emulation) {
                next_stack(&stack, &emulation.choices).map(|next| {
                    let left = budget.saturating_sub(instructions);
                    (path_config(config, &next, max_trips, search, left), next)
                })
            } else {
                None
            };
            match next {
                Some(next) => {
                    let mut ran = None;
                    let mut store = checkpoints.take();
                    let ok = rayon::in_place_scope(|s| {
                        s.spawn(|_| {
                            let at = Path {
                                cfg: &next.0,
                                stack: &next.1,
                            };
                            ran = Some(resume_path(
                                lowered.as_ref(),
                                module,
                                kernel,
                                at,
                                store.as_mut(),
                            ))
                        });
                        check(&emulation)
                    });
                    checkpoints = store;
                    prefetched = ran.map(|emulation| Prefetch {
                        config: next.0,
                        emulation,
                    });
                    ok
                }
                None => check(&emulation),
            }
        };
        let mut unconfirmed = false;
        let mut rechecked = false;
        if !ok {
            // Confirm on a concrete launch: the witness fixes every field the choices read.
            // Without choices the path is the kernel's only one: nothing to confirm.
            // A path stopped at a budget is not confirmed: the concrete run would stop at
            // the same budget, at the same cost again.
            let budget_stop = emulation.findings.is_empty()
                && emulation.unverifiable.iter().any(|u| u.why.is_budget());
            unconfirmed = !emulation.choices.is_empty() && !budget_stop;
            // The path's witness first; when its concrete run passes, other inputs that
            // follow the path (`Config::alternative_witnesses`, from a replay of the path).
            let mut witnesses = vec![emulation.witness.clone()];
            let mut next = 0;
            while let Some(witness) = witnesses.get(next).cloned() {
                next += 1;
                if witness.is_empty() || budget_stop || fails_assertions || !unconfirmed {
                    break;
                }
                let mut pinned = config.clone();
                // The witness fixes the fields the choices read, ranged ones included (it
                // lies in their ranges): the ranges themselves would overlap the pins.
                pinned
                    .params
                    .retain(|b| !matches!(b.value, ParamValue::Range { .. }));
                for (e, v) in &witness {
                    // A global input the witness gives whole: its loads read the value.
                    if let Expr::Input {
                        inst,
                        nth,
                        size,
                        start: 0,
                        end,
                        ..
                    } = e
                        && end == size
                    {
                        pinned.inputs.push(InputBinding {
                            inst: *inst,
                            nth: *nth,
                            size: *size,
                            value: *v,
                        });
                    }
                    if let Expr::Param {
                        index,
                        start,
                        end,
                        whole,
                        float,
                        ..
                    } = e
                    {
                        let size = (end - start).clamp(1, 8) as u8;
                        pinned.params.push(ParamBinding {
                            target: ParamRef::Index(*index),
                            // A float parameter's witness is a bit pattern: pinned as the
                            // field's bytes, not converted as a number.
                            field: (!whole || *float)
                                .then_some((u64::from(*start), ScalarType::Unsigned(size))),
                            value: ParamValue::Int(i128::from(*v)),
                        });
                    }
                }
                pinned.choices = Some(ChoicePlan {
                    answers: Vec::new(),
                    max_trips,
                    search_budget: config.search_budget.saturating_sub(search),
                    prefer_large: false,
                    pins: Vec::new(),
                });
                let concrete = emulate(&pinned);
                if let Ok(concrete) = &concrete {
                    instructions = instructions.saturating_add(concrete.stats.instructions);
                }
                match concrete {
                    // The witness fails an assertion (the path stopped before it, at what it
                    // could not decide): the path is held like one that reached it.
                    Ok(concrete)
                        if next == 1
                            && !checking_held
                            && !concrete.abandoned
                            && concrete.fails_only_assertions() =>
                    {
                        add_assumptions(&mut assumed, &concrete.failed_assertions);
                        fails_assertions = true;
                    }
                    // Another input of the path that fails an assertion confirms nothing and
                    // holds nothing: what the path found stays unconfirmed unless another
                    // input reproduces it.
                    Ok(concrete)
                        if next > 1 && !concrete.abandoned && concrete.fails_only_assertions() => {}
                    Ok(concrete)
                        if concrete.choices.is_empty() && !concrete.abandoned && {
                            rechecked = true;
                            !check(&concrete)
                        } =>
                    {
                        unconfirmed = false;
                        rechecked = false;
                        // The concrete run's findings, with the path's choices and the
                        // witness that reproduced them.
                        let symbolic = std::mem::replace(&mut emulation, concrete);
                        emulation.witness = witness;
                        emulation.path_values = symbolic.path_values;
                        emulation.choices = symbolic.choices;
                    }
                    _ => {}
                }
                if next == 1 && unconfirmed && !fails_assertions && !checking_held {
                    // Replay the path asking for other inputs that follow it.
                    let mut replay = cfg.clone();
                    replay.alternative_witnesses = MAX_ALTERNATIVE_WITNESSES;
                    if let Ok(again) = emulate(&replay) {
                        instructions = instructions.saturating_add(again.stats.instructions);
                        if again.choices == emulation.choices {
                            witnesses.extend(again.alternative_witnesses);
                        }
                    }
                }
            }
        }
        if !ok && !fails_assertions {
            return Ok(Exploration {
                emulation,
                paths,
                failed: true,
                unconfirmed,
                rechecked,
                incomplete: false,
                search_exhausted: false,
                instructions,
                longest,
                search,
                coverage,
            });
        }
        if fails_assertions {
            add_assumptions(&mut assumed, &emulation.failed_assertions);
            if held.is_none() {
                held = Some((emulation.clone(), paths));
            }
        }
        if !emulation.abandoned && !fails_assertions {
            clean = true;
            if !emulation.choices.is_empty() {
                programs.keep(&emulation.path_values, &emulation.program);
            }
            for (v, s) in &emulation.path_values {
                add(&mut coverage.explored, v, s);
            }
            if !emulation.choices.is_empty() || !emulation.path_values.is_empty() {
                match (&emulation.path_inputs, &mut coverage.inputs) {
                    (None, _) => coverage.inputs_unknown = true,
                    (Some((e, s)), None) => coverage.inputs = Some((e.clone(), s.clone())),
                    (Some((e, s)), Some((have_e, have))) if e == have_e => {
                        *have = union(have, s);
                    }
                    (Some(_), Some(_)) => coverage.inputs_unknown = true,
                }
            }
        }
        for c in emulation.choices.iter().filter(|c| c.bounded) {
            add(&mut coverage.not_explored, &c.variable, &c.alternative);
        }
        let exhausted = emulation.search_exhausted;
        extend_stack(&mut stack, &emulation.choices);
        if stack.is_empty() || paths >= DEFAULT_MAX_PATHS || instructions >= budget || exhausted {
            if !clean && let Some(h) = held.take() {
                // No path avoids the assertions: the first held path is the failing one.
                recheck = Some(h);
                continue;
            }
            add_assumptions(&mut emulation.assumptions, &assumed);
        }
        let Some(last) = stack.last_mut() else {
            coverage.periodicity = programs.periodicity();
            return Ok(Exploration {
                emulation,
                paths,
                failed: false,
                unconfirmed: false,
                rechecked: false,
                incomplete: exhausted,
                search_exhausted: exhausted,
                instructions,
                longest,
                search,
                coverage,
            });
        };
        *last = (!last.0, false);
        if paths >= DEFAULT_MAX_PATHS || instructions >= budget || exhausted {
            coverage.periodicity = programs.periodicity();
            return Ok(Exploration {
                emulation,
                paths,
                failed: false,
                unconfirmed: false,
                rechecked: false,
                incomplete: true,
                search_exhausted: exhausted,
                instructions,
                longest,
                search,
                coverage,
            });
        }
    }
}

/// The configuration of the exploration's path whose first choices `stack` answers: the
/// earlier paths left `left` of the CTA-wide instruction budget and used `search` of the
/// search budget.
fn path_config(
    config: &Config,
    stack: &[(bool, bool)],
    max_trips: u32,
    search: u64,
    left: u64,
) -> Config {
    let mut cfg = config.clone();
    cfg.choices = Some(ChoicePlan {
        answers: stack.iter().map(|&(a, _)| a).collect(),
        max_trips,
        search_budget: config.search_budget.saturating_sub(search),
        prefer_large: false,
        pins: Vec::new(),
    });
    cfg.cta_limit = Some(left);
    cfg
}

/// The choice stack (each decided choice: its answer, and whether its other side is still
/// to explore) after a path that made `choices`: its new choices pushed, then the closed
/// ones on top popped, so that the top is the deepest choice to flip (depth first).
fn extend_stack(stack: &mut Vec<(bool, bool)>, choices: &[crate::Choice]) {
    for c in choices.iter().skip(stack.len()) {
        stack.push((c.answer, !c.bounded));
    }
    while let Some(&(_, open)) = stack.last() {
        if open {
            break;
        }
        stack.pop();
    }
}

/// The choice stack of the path the exploration takes after one that made `choices` and
/// passed ([`extend_stack`], then the deepest open choice flipped); `None` when none is left.
fn next_stack(stack: &[(bool, bool)], choices: &[crate::Choice]) -> Option<Vec<(bool, bool)>> {
    let mut next = stack.to_vec();
    extend_stack(&mut next, choices);
    let last = next.last_mut()?;
    *last = (!last.0, false);
    Some(next)
}

/// Whether the next path may be emulated while this one is checked: the pool has another
/// worker, and a path of this size charges at most a quarter of the memory budget (what the
/// emulation charges per command, for it and the later stages), so that two of them fit.
fn pipelines(config: &Config, emulation: &Emulation) -> bool {
    rayon::current_num_threads() > 1
        && emulation
            .stats
            .commands
            .saturating_mul(crate::exec::COMMAND_BYTES)
            .saturating_mul(4)
            < config.max_memory
}

/// A path emulated ahead ([`explore`]): used when the loop reaches a path with the same
/// plan and budgets, else dropped (the path before it failed).
struct Prefetch {
    config: Config,
    emulation: Result<Emulation, Error>,
}

impl Prefetch {
    /// Whether it was emulated with `cfg`'s plan and budgets (everything else is the
    /// exploration's configuration, the same for every path).
    fn matches(&self, cfg: &Config) -> bool {
        self.config.choices == cfg.choices
            && self.config.cta_limit == cfg.cta_limit
            && self.config.search_budget == cfg.search_budget
    }
}

/// A path to emulate: its configuration and the choice stack it answers (each decided
/// choice: its answer, and whether its other side is still to explore).
#[derive(Clone, Copy)]
struct Path<'p> {
    cfg: &'p Config,
    stack: &'p [(bool, bool)],
}

/// Emulates `path` ([`crate::emulate_lowered`]) with the exploration's checkpoints, if
/// any, first keeping only those a path may still resume from ([`useful`]).
fn resume_path<'a>(
    lowered: Option<&'a crate::Lowered>,
    module: &Module<'_>,
    kernel: &str,
    path: Path<'_>,
    checkpoints: Option<&mut crate::exec::Checkpoints<'a>>,
) -> Result<Emulation, Error> {
    let mut checkpoints = checkpoints;
    if let Some(c) = checkpoints.as_mut() {
        let held: Vec<_> = c.held().iter().map(|c| (c.answers(), c.paths())).collect();
        let keep = useful(&held, path.stack);
        c.retain(&keep);
    }
    crate::emulate_lowered(lowered, module, kernel, path.cfg, checkpoints)
}

/// Which of `held` (each checkpoint's answers and start) a path may still resume from, when
/// the path of choice stack `stack` is emulated next. The exploration goes depth first:
/// every later path answers the choices below one of the stack's open ones as the stack
/// does and flips that one, or is a descendant of this path. A path that flips choice `j`
/// resumes from the deepest checkpoint that agrees with its plan and was taken with at most
/// `j` choices made (one with choice `j` made answers it the other way); this path's
/// descendants, from this path's own checkpoints or the one it resumes from. So a
/// checkpoint is useful when it agrees with the stack and is the deepest of its start
/// (`Paths`) below an open choice or the top one.
pub(crate) fn useful(held: &[(&[bool], crate::exec::Paths)], stack: &[(bool, bool)]) -> Vec<bool> {
    let agrees = |answers: &[bool]| {
        answers.len() < stack.len() && answers.iter().zip(stack).all(|(&a, &(b, _))| a == b)
    };
    held.iter()
        .map(|&(answers, paths)| {
            if !agrees(answers) {
                return false;
            }
            let m = answers.len();
            // The next deeper agreeing checkpoint of the same start serves every choice
            // from its depth on.
            let deeper = held
                .iter()
                .filter(|&&(d, p)| p == paths && agrees(d) && d.len() > m)
                .map(|(d, _)| d.len())
                .min()
                .unwrap_or(stack.len());
            (m..deeper).any(|j| stack[j].1 || j + 1 == stack.len())
        })
        .collect()
}

/// Adds to `to` each of `from` whose trap it does not list yet.
fn add_assumptions(to: &mut Vec<crate::Assumption>, from: &[crate::Assumption]) {
    for a in from {
        if !to.iter().any(|b| b.inst == a.inst) {
            to.push(a.clone());
        }
    }
}
