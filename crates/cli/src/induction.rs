//! The induction over a loop's trip count, lifted to a verdict (`docs/induction.md` §3).
//!
//! [`emulator::induct::induct`] establishes that every launch of a family of trip counts
//! records `pre · B^m · tail_R`, with the emulator's state repeating period after period.
//! This module decides whether the later stages' verdicts on a few such programs hold for
//! every `m`:
//!
//! - **Window.** On the program with `M` periods, every command of a thread's period `k`
//!   (or of `pre`, `k = −1`) happens before the position of every other thread that shares
//!   a barrier or a shared-memory byte with it (one of them writing) at the start of period
//!   `k + W`. Happens-before is monotone in program order, so every pair of such commands
//!   `W` or more periods apart is ordered, in every longer program too.
//! - **Base.** Every value of the variable up to the largest one with `M ≥ W + 2` periods is
//!   verified by the ordinary stages (the exploration's paths, or concrete runs with the
//!   value fixed), and its programs are, command by command, the induction's
//!   `pre · B^m · tail_R`. A pair of commands fewer than `W` periods apart is ordered or not
//!   by what the emulator did in the periods between them, which repeat: the same pair
//!   shifted lies in a verified program.

use emulator::induct::{Induction, NotConcluded, Undecided};
use emulator::{Emulation, Expr, ParamBinding, ParamRef, ParamValue, ScalarType, Variable};
use ptx_parser::Module;
use rustc_hash::FxHashMap;
use weft_program::{CommandView, Program, ThreadId};

use crate::reasons;
use crate::report::{Coverage, InductionRecord, KernelReport, Kind};

/// The most values of the variable the base may need (each a concrete run).
const MAX_BASE: u64 = 512;

/// The most periods the window's program may have.
const MAX_PERIODS: u32 = 40;

/// What the lifting found.
pub(crate) enum Lifted {
    /// The verdict covers these values of the variable too (those of the induction's
    /// residue class, when the runs were for one remainder of an unrolled loop).
    Covered {
        record: InductionRecord,
        values: Vec<(u64, u64)>,
    },
    /// A concrete run of the base failed: its report (a real violation, its input fixed)
    /// and the variable's value.
    Failed(Box<KernelReport>, u64),
    /// Not concluded: why.
    Not(InductionRecord),
}

fn not(reason: String) -> Lifted {
    Lifted::Not(InductionRecord {
        concluded: false,
        reason,
        ..InductionRecord::default()
    })
}

/// `config` with the variable (a parameter field) fixed to `x`.
fn pinned(config: &emulator::Config, variable: &Variable, x: u64) -> Option<emulator::Config> {
    let Expr::Param {
        index,
        start,
        end,
        whole,
        signed,
        float,
        ..
    } = &variable.expr
    else {
        return None;
    };
    let size = u8::try_from(end.checked_sub(*start)?).ok()?.clamp(1, 8);
    let mut cfg = config.clone();
    cfg.params
        .retain(|b| !matches!(b.value, ParamValue::Range { .. }));
    let ty = if *signed {
        ScalarType::Signed(size)
    } else {
        ScalarType::Unsigned(size)
    };
    cfg.params.push(ParamBinding {
        target: ParamRef::Index(*index),
        // A float parameter's values are bit patterns: pinned as the field's bytes, not
        // converted as a number.
        field: (!whole || *float).then_some((u64::from(*start), ty)),
        value: ParamValue::Int(i128::from(x)),
    });
    cfg.choices = None;
    Some(cfg)
}

/// Why the induction stopped at a budget.
const BUDGET: &str = "its runs do not fit in the instruction or search budget the exploration \
left of one emulation's (8 x --max-steps instructions, and the search for inputs' term \
evaluations), or one ran past 16 times the length the explored paths predict for it";

/// The emulator-level half's reason, in words.
pub(crate) fn why(n: &NotConcluded) -> String {
    match n {
        NotConcluded::Budget => BUDGET.to_owned(),
        NotConcluded::WarpSync => "runs with --warp-sync are not compared yet".to_owned(),
        NotConcluded::Feature(f) => format!(
            "the kernel uses {}, whose state the comparison of the machine at the loop's trips \
             does not cover yet",
            f.join(", ")
        ),
        NotConcluded::NoExit => "no one branch of one thread decides the trip count".to_owned(),
        NotConcluded::Unsupported(u) => format!("a moment's state could not be compared ({u})"),
        NotConcluded::NoPeriod { moments, first } => match first {
            Some((a, b, d)) => format!(
                "the machine's state repeats at none of the first {moments} trips of the loop \
                 (trips {a} and {b} differ in {})",
                difference(d)
            ),
            None => format!(
                "the machine's state repeats at none of the first {moments} trips of the loop"
            ),
        },
        NotConcluded::Undecided {
            line, thread, why, ..
        } => {
            let at = format!("the branch at PTX line {line} (thread {})", thread.0);
            match why {
                Undecided::NotLinear => format!(
                    "{at} decides synchronization on the loop counter through an operation the \
                     induction cannot follow"
                ),
                Undecided::NotTheExit => {
                    "no branch of the loop compares its counter with the trip count".to_owned()
                }
                Undecided::NotTheDistance => format!(
                    "{at} decides synchronization on the loop counter, but not by its distance \
                     to the trip count (`i == 40`, or a counter of another loop): its answer \
                     changes from trip to trip"
                ),
                Undecided::NewChoice => {
                    format!("{at} depends on an input that the trip count does not decide")
                }
                Undecided::Assumption => {
                    format!("an assertion in the loop ({at}) depends on the inputs")
                }
                Undecided::Term => {
                    format!("{at} needs a symbolic term larger than the emulator builds")
                }
            }
        }
        NotConcluded::Differs(d) => format!(
            "after one period the machine's state differs from the state it started from in {}",
            difference(d)
        ),
        NotConcluded::Stopped { tail: None } => "the abstract run of one period stopped".to_owned(),
        NotConcluded::Stopped { tail: Some(r) } => {
            format!(
                "the abstract run of the loop's last trips (distance {r} to its end) did not end cleanly"
            )
        }
        NotConcluded::Tails(n) => format!(
            "the loop's last trips end in {n} different ways (its counter's step against the \
             trip count), more than the {} tails the argument runs",
            emulator::induct::MAX_TAILS
        ),
        NotConcluded::Empty => "no trip count is left once the no-overflow bounds apply".to_owned(),
        NotConcluded::OtherVariables => {
            "the choices before the loop read more than the trip count".to_owned()
        }
    }
}

fn difference(d: &emulator::induct::Difference) -> String {
    use emulator::induct::Difference;
    match d {
        Difference::Thread(t) => format!("what thread {} is doing", t.0),
        Difference::Register { thread, register } => {
            format!("register {register} of thread {}", thread.0)
        }
        Difference::Memory(m) => format!("{m} memory"),
        Difference::Barriers => {
            "the state of the barriers, mbarriers or warp collectives".to_owned()
        }
        Difference::Choices => "the values the choices allow".to_owned(),
        Difference::Assumptions => "the assertions assumed".to_owned(),
    }
}

/// Which threads share a resource with which: a named barrier id, an mbarrier, a warp
/// (warp barriers and collectives), or a shared word one of them writes. `shares[a][b]`.
fn sharing(program: &Program) -> Vec<Vec<bool>> {
    let n = program.threads.len();
    let mut shares = vec![vec![false; n]; n];
    let mut barriers: FxHashMap<u64, Vec<usize>> = FxHashMap::default();
    // Per 4-byte word: its writers and its readers.
    let mut words: FxHashMap<u64, (Vec<usize>, Vec<usize>)> = FxHashMap::default();
    for (t, thread) in program.threads.iter().enumerate() {
        for c in &thread.commands {
            // Named barriers by id, mbarriers by address (above the ids), warps by index
            // (above both).
            let key = match c.view() {
                CommandView::Barrier { id, .. } => Some(u64::from(id)),
                CommandView::Mbarrier { addr, .. } => Some((1 << 32) | u64::from(addr)),
                CommandView::WarpSync { .. } | CommandView::Exec { .. } => {
                    Some((2 << 32) | (t as u64 / u64::from(program.warp_size().max(1))))
                }
                _ => None,
            };
            if let Some(key) = key {
                let e = barriers.entry(key).or_default();
                if e.last() != Some(&t) {
                    e.push(t);
                }
            }
            if let CommandView::Access {
                kind, addr, len, ..
            } = c.view()
            {
                let first = u64::from(addr) / 4;
                let last = (u64::from(addr) + u64::from(len).max(1) - 1) / 4;
                for w in first..=last {
                    let e = words.entry(w).or_default();
                    let list = if kind.writes() { &mut e.0 } else { &mut e.1 };
                    if list.last() != Some(&t) {
                        list.push(t);
                    }
                }
            }
        }
    }
    for users in barriers.values() {
        for &a in users {
            for &b in users {
                shares[a][b] = true;
            }
        }
    }
    for (writers, readers) in words.values() {
        for &a in writers {
            for &b in writers.iter().chain(readers) {
                shares[a][b] = true;
                shares[b][a] = true;
            }
        }
    }
    shares
}

/// The smallest `W` such that, in `program` (the launch with `m` periods), every command of
/// a thread's period `k` (`k = −1`: its `pre`) happens before the position of every thread
/// sharing a resource with it at the start of period `k + W`, for every `k` with
/// `k + W ≤ m`. `None` when no `W ≤ m` does.
fn window(
    program: &Program,
    hb: &barrier_graph::HappensBefore,
    ind: &Induction,
    m: u32,
) -> Option<u32> {
    let shares = sharing(program);
    let start = |t: usize, k: u32| ind.pre[t] + k * ind.block[t];
    let len = |t: usize| program.threads[t].commands.len() as u32;
    // The last command of period k (k = 0 is pre) of thread a.
    let last = |a: usize, k: u32| -> Option<u32> {
        let end = start(a, k);
        let begin = if k == 0 { 0 } else { start(a, k - 1) };
        (end > begin).then(|| end - 1)
    };
    'w: for w in 1..=m {
        for (a, row) in shares.iter().enumerate() {
            // k counts pre as 0 here: period k − 1 of the module docs.
            for k in 0..=(m + 1).saturating_sub(w) {
                let Some(x) = last(a, k) else { continue };
                let target = k + w - 1;
                if target > m {
                    continue;
                }
                for (b, &shared) in row.iter().enumerate() {
                    if a == b || !shared {
                        continue;
                    }
                    let y = start(b, target);
                    if y >= len(b) {
                        continue;
                    }
                    if !hb.ordered((ThreadId(a as u32), x), (ThreadId(b as u32), y)) {
                        continue 'w;
                    }
                }
            }
        }
        return Some(w);
    }
    None
}

/// Lifts a bounded verdict on `variable` with the induction (see the module docs).
/// `explored`: the values the exploration verified; `check`: the later stages on one
/// emulation, returning its report (verified when it has no violation and nothing
/// unverifiable). `pins`: remainders fixed for every run (one residue class). `left`:
/// what the exploration left of one emulation's budgets, which the induction's runs and
/// the runs with the value fixed spend; `longest`: the exploration's longest path's
/// thread-instructions, explored with at most `max_trips` choices per branch.
#[allow(clippy::too_many_arguments)]
pub(crate) fn lift(
    module: &Module<'_>,
    kernel: &str,
    config: &emulator::Config,
    variable: &Variable,
    explored: &[(u64, u64)],
    pins: &[(Variable, u64)],
    strict: bool,
    left: &mut emulator::induct::Left,
    (longest, max_trips): (u64, u32),
    check: &mut dyn FnMut(&Emulation) -> KernelReport,
) -> Lifted {
    let ind = match emulator::induct::induct(
        module,
        kernel,
        config,
        variable,
        pins,
        left,
        (longest, max_trips),
    ) {
        Ok(Ok(ind)) => ind,
        Ok(Err(n)) => return not(why(&n)),
        Err(e) => return not(format!("an induction run failed: {e}")),
    };
    let verified = |r: &KernelReport| r.passes(strict);
    let is_explored = |x: u64| explored.iter().any(|&(a, b)| a <= x && x <= b);
    let Some(_) = pinned(config, variable, 0) else {
        return not(format!(
            "the trip count {} is not a parameter field weft can fix for the base runs",
            reasons::expr(&variable.expr)
        ));
    };
    // One concrete run with the variable fixed: its programs when verified; `None` when
    // every violation is a trap reached through the failing side of an assertion. Such a
    // trap, met on no explored path (else the exploration had failed), is an assertion that
    // this value of the variable fails: the verdict assumes assertions hold
    // (docs/semantics.md §6.2), so no launch has it.
    let term = reasons::expr(&variable.expr);
    let mut run = |x: u64| -> Result<Option<Emulation>, Lifted> {
        let failed = |e: String| not(format!("the concrete run with {term} = {x} failed: {e}"));
        let Some(cfg) = pinned(config, variable, x) else {
            return Err(failed("the field cannot be fixed".to_owned()));
        };
        let cfg = emulator::induct::within(&cfg, left.instructions);
        if cfg.step_limit == 0 {
            return Err(not(BUDGET.to_owned()));
        }
        match emulator::emulate(module, kernel, &cfg) {
            Ok(e) if e.unverifiable.iter().any(|u| u.why.is_budget()) => {
                Err(not(BUDGET.to_owned()))
            }
            Ok(e) => {
                left.instructions = left.instructions.saturating_sub(e.stats.instructions);
                let r = check(&e);
                if verified(&r) {
                    Ok(Some(e))
                } else if r.unverifiable.is_empty()
                    && r.violations.iter().all(|v| v.kind == Kind::TrapReachable)
                    && e.fails_only_assertions()
                {
                    Ok(None)
                } else if r.violations.is_empty() {
                    Err(failed("it is not verified".to_owned()))
                } else {
                    Err(Lifted::Failed(Box::new(r), x))
                }
            }
            Err(e) => Err(failed(e.to_string())),
        }
    };
    // The window, on a program with enough periods.
    let mut m = 3u32;
    let exit_line = ind.exit_line;
    let w = loop {
        let values = ind.values_with(m);
        if values.is_empty() {
            return not(format!("no value of the trip count runs {m} periods"));
        }
        let mut w = 0;
        let mut enough = true;
        for &x in &values {
            let e = match run(x) {
                Ok(Some(e)) => e,
                Ok(None) => {
                    return not(format!(
                        "the run with {term} = {x}, one of the window's, fails an assertion"
                    ));
                }
                Err(l) => return l,
            };
            if let Err((t, i)) = ind.matches(x, &e.program) {
                return not(format!(
                    "the programs with {} = {x} are not the induction's (thread {}, command {i})",
                    reasons::expr(&variable.expr),
                    t.0
                ));
            }
            let analysis = barrier_graph::analyze(&e.program);
            let Some(hb) = &analysis.happens_before else {
                return not("no happens-before relation on the window's program".to_owned());
            };
            match window(&e.program, hb, &ind, m) {
                Some(x) => w = w.max(x),
                None => enough = false,
            }
        }
        if enough && m >= w + 2 {
            break w;
        }
        m = if enough { w + 2 } else { m * 2 };
        if m > MAX_PERIODS {
            return not(format!(
                "no window of at most {MAX_PERIODS} periods orders the loop's far-apart accesses"
            ));
        }
    };
    // The base: every value up to the largest with m periods.
    let top = ind.values_with(m).into_iter().max().unwrap_or(0);
    if top > MAX_BASE {
        return not(format!(
            "the base of the induction needs every value of {} up to {top}, more than {MAX_BASE}",
            reasons::expr(&variable.expr)
        ));
    }
    let mut excluded: Vec<(u64, u64)> = Vec::new();
    for x in (0..=top).filter(|&x| ind.in_class(x)) {
        let in_family = x >= ind.family.0 && x <= ind.family.1;
        if is_explored(x) && !in_family {
            continue;
        }
        let e = match run(x) {
            Ok(Some(e)) => e,
            Ok(None) if !in_family => {
                excluded = emulator::union(&excluded, &[(x, x)]);
                continue;
            }
            Ok(None) => {
                return not(format!(
                    "the run with {term} = {x}, a value of the induction's family, fails an \
                     assertion"
                ));
            }
            Err(l) => return l,
        };
        if in_family && let Err((t, i)) = ind.matches(x, &e.program) {
            return not(format!(
                "the programs with {} = {x} are not the induction's (thread {}, command {i})",
                reasons::expr(&variable.expr),
                t.0
            ));
        }
    }
    let except = if excluded.is_empty() {
        String::new()
    } else {
        format!(
            " except {} (a run with such a value fails an assertion the verdict assumes holds)",
            reasons::ranges(
                &excluded.iter().map(|&(a, b)| [a, b]).collect::<Vec<_>>(),
                variable.bits
            )
        )
    };
    let record = InductionRecord {
        concluded: true,
        reason: format!(
            "the emulator's state repeats every {} trips of the loop (its exit branch at PTX \
             line {exit_line}), and commands {w} or more periods apart are ordered: verified \
             for every value of {term} from 0 to {}{except} (up to {top} by runs with the value \
             fixed; larger values by induction, assuming no value on the way wraps around)",
            ind.period, ind.family.1
        ),
        period: Some(ind.period),
        start: Some(ind.start),
        window: Some(w),
        base: Some(top),
        family: Some([ind.family.0, ind.family.1]),
    };
    Lifted::Covered {
        record,
        values: emulator::difference(&emulator::union(&[(0, top)], &[ind.family]), &excluded),
    }
}

/// `coverage` with `values` of `variable` verified too.
pub(crate) fn widen(coverage: &mut Coverage, variable: &Variable, values: &[(u64, u64)]) {
    let term = reasons::expr(&variable.expr);
    let as_sets = |v: &[[u64; 2]]| v.iter().map(|&[a, b]| (a, b)).collect::<Vec<_>>();
    let as_pairs = |v: Vec<(u64, u64)>| v.into_iter().map(|(a, b)| [a, b]).collect::<Vec<_>>();
    let mut covered: Vec<(u64, u64)> = Vec::new();
    for &(a, b) in values {
        covered = emulator::union(&covered, &[(a, b)]);
    }
    for v in coverage
        .variables
        .iter_mut()
        .filter(|v| v.term == term && v.bits == variable.bits)
    {
        v.explored = as_pairs(emulator::union(&as_sets(&v.explored), &covered));
        v.not_explored = as_pairs(emulator::difference(&as_sets(&v.not_explored), &covered));
    }
    if let Some(i) = coverage.inputs.as_mut()
        && i.term == term
    {
        let within = emulator::intersect(&covered, &[(0, i.checked_up_to)]);
        i.verified = as_pairs(emulator::union(&as_sets(&i.verified), &within));
    }
    coverage.complete =
        !coverage.incomplete && coverage.variables.iter().all(|v| v.not_explored.is_empty());
}

/// A remainder of the trip count `x`: `x & mask`, with `mask + 1` a power of two up to 16
/// (a loop nvcc unrolled `mask + 1` times runs that many trips first).
fn remainder_of(v: &Variable, x: &Variable) -> Option<u64> {
    match &v.expr {
        Expr::Op { op, args } if op == "and" => match &args[..] {
            [a, Expr::Const(mask)]
                if *a == x.expr && *mask < 16 && (mask + 1).is_power_of_two() =>
            {
                Some(*mask)
            }
            _ => None,
        },
        _ => None,
    }
}

/// After an exploration whose bound cut values short, with a verified verdict: tries the
/// induction over the trip count and records what it concluded in `coverage` (widening it
/// when it did). The trip count is the one cut variable that is a parameter field (or the
/// only cut variable); a cut remainder of it (`n & 3` of a loop unrolled 4 times) makes one
/// induction per remainder value, each over one residue class. A run with the value fixed
/// that fails is a real violation: its report, the field and the value.
pub(crate) fn extend(
    module: &Module<'_>,
    kernel: &str,
    config: &emulator::Config,
    exploration: &emulator::Exploration,
    coverage: &mut Coverage,
    strict: bool,
    check: &mut dyn FnMut(&Emulation) -> KernelReport,
) -> Option<(Box<KernelReport>, String, u64)> {
    let cut: Vec<&Variable> = exploration
        .coverage
        .not_explored
        .iter()
        .filter(|(_, s)| !s.is_empty())
        .map(|(v, _)| v)
        .collect();
    if cut.is_empty() {
        return None;
    }
    let params: Vec<&Variable> = cut
        .iter()
        .copied()
        .filter(|v| matches!(v.expr, Expr::Param { .. }))
        .collect();
    let main = match (&cut[..], &params[..]) {
        ([only], _) => Some(*only),
        (_, [one]) => Some(*one),
        _ => None,
    };
    let record = |reason: String| InductionRecord {
        concluded: false,
        reason,
        ..InductionRecord::default()
    };
    let Some(x) = main else {
        let reason = match emulator::induct::uncovered(module, kernel, config) {
            Ok(Some(n)) => why(&n),
            _ => {
                let terms: Vec<String> = cut.iter().map(|v| reasons::expr(&v.expr)).collect();
                format!(
                    "the bound cut {} variables short ({}), none of them the one parameter \
                     field the others are functions of",
                    cut.len(),
                    terms.join(", ")
                )
            }
        };
        coverage.induction = Some(record(reason));
        return None;
    };
    if exploration.incomplete {
        return None;
    }
    let explored: Vec<(u64, u64)> = exploration
        .coverage
        .explored
        .iter()
        .find(|(v, _)| v == x)
        .map_or_else(Vec::new, |(_, s)| s.clone());
    // One induction per value of a cut remainder, else one.
    let remainder = cut
        .iter()
        .find_map(|v| remainder_of(v, x).map(|mask| (*v, mask)));
    let classes: Vec<Vec<(Variable, u64)>> = match remainder {
        Some((v, mask)) => (0..=mask).map(|r| vec![(v.clone(), r)]).collect(),
        None => vec![Vec::new()],
    };
    let mut records = Vec::new();
    let mut top = u64::MAX;
    // Every class's runs share what the exploration left of one emulation's budgets.
    let mut left = emulator::induct::Left {
        instructions: config
            .step_limit
            .saturating_mul(emulator::CTA_STEP_FACTOR)
            .saturating_sub(exploration.instructions),
        search: config.search_budget.saturating_sub(exploration.search),
    };
    for pins in &classes {
        let limits = (exploration.longest, exploration.coverage.max_trips);
        match lift(
            module, kernel, config, x, &explored, pins, strict, &mut left, limits, check,
        ) {
            Lifted::Covered { record, values, .. } => {
                top = top.min(values.iter().map(|&(_, b)| b).max().unwrap_or(0));
                records.push(record);
            }
            Lifted::Not(mut r) => {
                if let Some((v, value)) = pins.first() {
                    r.reason = format!(
                        "with {} = {value} (the loop is unrolled): {}",
                        reasons::expr(&v.expr),
                        r.reason
                    );
                }
                coverage.induction = Some(r);
                return None;
            }
            Lifted::Failed(r, value) => return Some((r, reasons::expr(&x.expr), value)),
        }
    }
    let mut record = records.swap_remove(0);
    if let Some((v, mask)) = remainder {
        record.reason = format!(
            "the loop is unrolled {} times: for each value of {}, {}; together: verified for \
             every value of {} from 0 to {top}",
            mask + 1,
            reasons::expr(&v.expr),
            record.reason,
            reasons::expr(&x.expr)
        );
        record.family = record.family.map(|[a, _]| [a, top]);
    }
    // Every input with the trip count up to `top` is verified: the other cut variables are
    // functions of it, so only the trip count's values above `top` are left.
    widen(coverage, x, &[(0, top)]);
    for v in coverage.variables.iter_mut() {
        if cut
            .iter()
            .any(|c| reasons::expr(&c.expr) == v.term && c != &x)
        {
            v.not_explored.clear();
        }
    }
    coverage.complete =
        !coverage.incomplete && coverage.variables.iter().all(|v| v.not_explored.is_empty());
    coverage.induction = Some(record);
    None
}
