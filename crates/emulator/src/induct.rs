//! The emulator-level half of the induction over a loop's trip count
//! (`docs/induction.md` §2): from the runs of one kernel, the shape every launch's programs
//! have, `pre · B^m · tail_R`, for every trip count of a family.
//!
//! [`induct`] runs the kernel lane by lane (the reference schedule) along its *long path*
//! (every choice on the trip count answered "the loop goes on", up to a bound) four ways:
//!
//! 1. a probe, to find the loop's exit branch and the thread that decides it;
//! 2. an observation, with a [`exec::induct::Snapshot`] of the machine every time that
//!    thread reaches the exit (a *moment*), to find a start `j` and a period `p` after which
//!    the state repeats, up to *progressions* (registers that advance by a constant);
//! 3. the abstract period: from moment `j`, every progression holds `c + step·Y` (`Y ≥ 0`
//!    periods), and the run must come back after `p` moments to the same state with
//!    `Y + 1`, deciding every branch on `Y` by the distance to the loop's end `D` as it is
//!    for every `D` from a threshold `F` on;
//! 4. the tails: from moment `j` again, with each distance `R` in `F − δ .. F` (`δ` the
//!    distance one period covers), to the end of the kernel.
//!
//! By determinism, the launch whose distance at moment `j` is `D₀ ≥ F` runs `m` periods
//! while `D ≥ F`, then the tail of the distance left: its programs are
//! `pre · B^m · tail_R`. [`Induction`] says which trip counts that covers (the *family*),
//! under the stated no-overflow bounds. Lifting the later stages' verdicts from the
//! explored programs to the whole family (the window argument of `docs/induction.md` §3)
//! is the caller's (the cli runs barrier-graph and race).

pub use crate::exec::induct::Undecided;
use crate::exec::induct::linear::Bound;
use crate::exec::induct::{self as machine, Distance, Failure, Induct, Progression, Task};
use crate::ir::{Ir, Op};
use crate::{ChoicePlan, Config, Emulation, Error, Variable};
use ptx_parser::Module;
use weft_program::{BarrierKey, Command, InstId, Program, ThreadId};

/// The most moments the observation takes (periods up to a third of it are found).
pub const MAX_MOMENTS: u32 = 64;

/// Each run of the induction may run this many times the thread-instructions the
/// exploration's longest path predicts for it (linearly in the trips).
pub const RUN_FACTOR: u64 = 16;

/// The most distinct distances the family's launches may end their loop with (one tail run
/// and its program each).
pub const MAX_TAILS: usize = 256;

/// What the emulator-level half of the induction established.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Induction {
    /// The trip-count variable the family is stated in.
    pub variable: Variable,
    /// The loop's exit branch and the thread whose arrivals there are the moments.
    pub exit: InstId,
    /// The exit branch's PTX line.
    pub exit_line: u32,
    /// The thread.
    pub thread: ThreadId,
    /// The moment the periodic part starts at.
    pub start: u32,
    /// Moments per period.
    pub period: u32,
    /// Registers that advance by a constant per period.
    pub progressions: u32,
    /// The distance `D₀(X) = c + x·X` at moment `start`, as `(c, x)`.
    pub distance: (i128, i128),
    /// The distance one period covers (`δ`).
    pub step: i128,
    /// The smallest distance at which every decision of a period is the one far from the
    /// end (`F`).
    pub far: i128,
    /// The values of the variable whose programs are `pre · B^m · tail_R`: from the first
    /// value with `D₀ ≥ F` to the last for which no value on the way wraps around.
    pub family: (u64, u64),
    /// The residue class the family is restricted to, `X & mask == value`, when the runs
    /// were for one value of a loop's remainder ([`induct`]'s `pins`).
    pub class: Option<(u64, u64)>,
    /// Per thread: commands before moment `start`, and commands per period.
    pub pre: Vec<u32>,
    /// Per thread, commands per period.
    pub block: Vec<u32>,
    /// Generations each barrier completes per period.
    pub generations: Vec<(BarrierKey, u32)>,
    /// Per thread, its commands up to the end of the first period (`pre`, then one block),
    /// and the written values they name (`Program::values`).
    pub first: (Vec<Vec<Command>>, Vec<u128>),
    /// Per tail distance: each thread's commands after moment `start`, and the written
    /// values they name.
    pub tails: Vec<(i128, Vec<Vec<Command>>, Vec<u128>)>,
}

impl Induction {
    /// The periods the launch with variable value `x` (in the family) runs after moment
    /// `start`, and the distance left for its tail.
    pub fn periods(&self, x: u64) -> (u32, i128) {
        let d0 = self.distance.0 + self.distance.1 * i128::from(x);
        let m = (d0 - self.far).div_euclid(self.step) + 1;
        (
            u32::try_from(m.max(0)).unwrap_or(u32::MAX),
            d0 - m * self.step,
        )
    }

    /// Whether `program`, the programs of the launch with variable value `x` (in the
    /// family), are `pre · B^m · tail_R` as the induction's runs recorded them, command by
    /// command (written values compared by their bytes, execution events by their
    /// operation). `Err((thread, index))`: the first command that differs.
    pub fn matches(&self, x: u64, program: &Program) -> Result<(), (ThreadId, u32)> {
        let (m, r) = self.periods(x);
        let Some((_, tails, tail_values)) = self.tails.iter().find(|(d, _, _)| *d == r) else {
            return Err((ThreadId(0), 0));
        };
        let (first, values) = &self.first;
        for (t, thread) in program.threads.iter().enumerate() {
            let got = &thread.commands;
            let (pre, block) = (self.pre[t] as usize, self.block[t] as usize);
            let tail = &tails[t];
            let differ = |i: usize| Err((ThreadId(t as u32), i as u32));
            if got.len() != pre + m as usize * block + tail.len() {
                return differ(got.len().min(pre));
            }
            for (i, c) in got.iter().enumerate() {
                let (want, table) = if i < pre {
                    (&first[t][i], values)
                } else if i < pre + m as usize * block {
                    (&first[t][pre + (i - pre) % block], values)
                } else {
                    (&tail[i - pre - m as usize * block], tail_values)
                };
                if !crate::period::same(c, &program.values, want, table) {
                    return differ(i);
                }
            }
        }
        Ok(())
    }

    /// Whether `x` is in the family's residue class (every value without one).
    pub fn in_class(&self, x: u64) -> bool {
        self.class.is_none_or(|(mask, value)| x & mask == value)
    }

    /// The values of the family whose launches run exactly `m` periods (one per tail).
    pub fn values_with(&self, m: u32) -> Vec<u64> {
        let (lo, hi) = self.family;
        let (c, x) = self.distance;
        let mut out = Vec::new();
        // D₀ in F + (m − 1)·δ .. F + m·δ.
        let first = self.far + (i128::from(m) - 1) * self.step;
        for d in first..first + self.step {
            if (d - c) % x != 0 {
                continue;
            }
            let v = (d - c) / x;
            if let Ok(v) = u64::try_from(v)
                && v >= lo
                && v <= hi
                && self.in_class(v)
            {
                out.push(v);
            }
        }
        out
    }
}

/// Where an abstract period's end state differs from its start with `Y + 1`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Difference {
    /// A thread's pc, state or pending wait.
    Thread(ThreadId),
    /// A live register, other than by a constant step.
    Register {
        /// The thread.
        thread: ThreadId,
        /// The register's name.
        register: String,
    },
    /// Shared, local, call-parameter or kernel-parameter memory.
    Memory(&'static str),
    /// The named and warp barriers' pending arrivals.
    Barriers,
    /// The values the choices allow.
    Choices,
    /// The assertions assumed.
    Assumptions,
}

/// Why the emulator-level half did not conclude (the verdict stays bounded).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotConcluded {
    /// `--warp-sync` runs are not compared yet.
    WarpSync,
    /// The kernel uses things whose state the comparison does not cover yet.
    Feature(Vec<&'static str>),
    /// No branch of one thread made the choices on the variable.
    NoExit,
    /// A moment's state could not be taken: a thread inside a call or an unknown branch,
    /// the asynchronous machinery in use, or a stopped run.
    Unsupported(&'static str),
    /// No state repeated among the moments observed.
    NoPeriod {
        /// Moments observed.
        moments: u32,
        /// The first difference between the last two candidate moments one period apart.
        first: Option<(u32, u32, Difference)>,
    },
    /// A decision of an abstract run the argument cannot make.
    Undecided {
        /// The branch.
        inst: InstId,
        /// Its PTX line.
        line: u32,
        /// The thread.
        thread: ThreadId,
        /// Why.
        why: Undecided,
    },
    /// The state after one abstract period is not the start with one more period.
    Differs(Difference),
    /// An abstract run stopped (a budget, an unverifiable instruction, a finding).
    Stopped {
        /// Which run: `"period"` or the tail's distance.
        tail: Option<i128>,
    },
    /// The induction's runs do not fit in the instruction or search budget they share
    /// ([`induct`]'s `left`: what the exploration left of one emulation's).
    Budget,
    /// The family's launches end their loop with more distinct distances (the count) than
    /// [`MAX_TAILS`].
    Tails(u64),
    /// No trip count is left once the no-overflow bounds and the path's earlier choices
    /// are applied.
    Empty,
    /// The choices before the periodic part read more than the trip-count variable.
    OtherVariables,
}

fn feature(ir: &Ir) -> Option<Vec<&'static str>> {
    let mut found = Vec::new();
    for inst in &ir.insts {
        let what = match inst.op {
            Op::TcgenCommitArrive => "tcgen05.commit arrivals",
            Op::ClcTryCancel => "cluster launch control requests",
            Op::CpAsync
            | Op::CpAsyncBulk { .. }
            | Op::CpAsyncMbarArrive { .. }
            | Op::CpAsyncCommit
            | Op::CpAsyncWait { .. }
            | Op::BulkCommit
            | Op::BulkWait
            | Op::TmaLoad
            | Op::TmaStore => "asynchronous copies",
            Op::WgmmaMma
            | Op::WgmmaCommit
            | Op::WgmmaWait
            | Op::TcgenMma
            | Op::TcgenCp
            | Op::TcgenLd
            | Op::TcgenSt
            | Op::TcgenWait { .. }
            | Op::TcgenAlloc
            | Op::TcgenDealloc
            | Op::TcgenRelinquish => "asynchronous tensor-core operations",
            Op::Call => "calls to functions",
            _ => continue,
        };
        if !found.contains(&what) {
            found.push(what);
        }
    }
    (!found.is_empty()).then_some(found)
}

fn unsupported(u: machine::Unsupported) -> &'static str {
    match u {
        machine::Unsupported::Nested => "a thread is inside a call or an unknown branch",
        machine::Unsupported::Asynchronous => "asynchronous state in use",
        machine::Unsupported::SharedTerms => {
            "shared memory holds terms (values handed through it, or the values compared for \
             benign races)"
        }
        machine::Unsupported::Stopped => "the run stopped",
    }
}

fn difference(ir: &Ir, d: machine::Differ) -> Difference {
    match d {
        machine::Differ::Thread(t) => Difference::Thread(ThreadId(t)),
        machine::Differ::Register { thread, reg } => Difference::Register {
            thread: ThreadId(thread),
            register: ir.reg_names.get(reg.index()).cloned().unwrap_or_default(),
        },
        machine::Differ::Memory(k) => Difference::Memory(match k {
            0 => "shared",
            1 => "local",
            2 => "call-parameter",
            _ => "kernel-parameter",
        }),
        machine::Differ::Barriers => Difference::Barriers,
        machine::Differ::Store => Difference::Choices,
        machine::Differ::Assumptions => Difference::Assumptions,
    }
}

fn line(ir: &Ir, inst: InstId) -> u32 {
    ir.sources
        .sites
        .get(inst.0 as usize)
        .map_or(0, |s| s.ptx_line)
}

fn failure(ir: &Ir, f: Failure) -> NotConcluded {
    match f {
        Failure::Unsupported(u) => NotConcluded::Unsupported(unsupported(u)),
        Failure::Undecided { inst, thread, why } => NotConcluded::Undecided {
            inst: InstId(inst),
            line: line(ir, InstId(inst)),
            thread: ThreadId(thread),
            why,
        },
        Failure::Differs(d) => NotConcluded::Differs(difference(ir, d)),
    }
}

/// The first `(j, p, progressions)` after which the snapshots repeat with period `p` three
/// times with the same progressions, or the first difference of the best candidate.
type Found = Result<(u32, u32, Vec<Progression>), Option<(u32, u32, Difference)>>;

fn find_period(ir: &Ir, snaps: &[machine::Snapshot]) -> Found {
    let n = snaps.len();
    let mut first = None;
    for p in 1..=n / 3 {
        for j in 0..n.saturating_sub(2 * p) {
            let a = machine::progressions(&snaps[j], &snaps[j + p], &ir.reg_bits, false);
            let b = machine::progressions(&snaps[j + p], &snaps[j + 2 * p], &ir.reg_bits, false);
            match (a, b) {
                (Ok(a), Ok(b)) if a == b => {
                    return Ok((j as u32, p as u32, a));
                }
                (Err(d), _) | (_, Err(d)) => {
                    first = Some((j as u32, (j + p) as u32, difference(ir, d)));
                }
                _ => {}
            }
        }
    }
    Err(first)
}

/// The largest `hi` in `lo..=top` such that every bound holds for every variable value in
/// `lo..=hi` and every period count its launch reaches (`None`: not even `lo`).
fn widest(bounds: &[Bound], form: Distance, far: i128, lo: i128, top: i128) -> Option<i128> {
    let step = -form.lin.y;
    // Y ranges over 0 ..= (D₀(X) − (F − δ)) / δ: check at the corners, scaled by δ.
    let ok = |hi: i128| {
        let corners = [lo, hi].into_iter().flat_map(|x| {
            let d0 = form.lin.c + form.lin.x * x;
            let ymax_num = (d0 - (far - step)).max(0);
            [(x, 0), (x, ymax_num)]
        });
        corners.collect::<Vec<_>>().iter().all(|&(x, ynum)| {
            bounds.iter().all(|b| {
                let v = step * (b.lin.c + b.lin.x * x) + b.lin.y * ynum;
                step * b.lo <= v && v <= step * b.hi
            })
        })
    };
    if !ok(lo) {
        return None;
    }
    let (mut a, mut b) = (lo, top);
    while a < b {
        let m = a + (b - a + 1) / 2;
        if ok(m) { a = m } else { b = m - 1 }
    }
    Some(a)
}

/// What the induction's runs may still spend, shared by all of them: what the exploration
/// left of one emulation's budgets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Left {
    /// CTA-wide thread-instructions (of one emulation's `CTA_STEP_FACTOR × step_limit`).
    pub instructions: u64,
    /// Term nodes the runs' searches for inputs may evaluate (of
    /// [`Config::search_budget`]).
    pub search: u64,
}

impl Left {
    /// No limit (tests).
    pub fn unlimited() -> Left {
        Left {
            instructions: u64::MAX,
            search: u64::MAX,
        }
    }
}

/// `config` with a CTA-wide instruction budget of at most `left` thread-instructions (each
/// thread's budget is the CTA's divided by [`crate::CTA_STEP_FACTOR`], and at most
/// `config`'s): a step limit of 0 when `left` cannot pay for one.
pub fn within(config: &Config, left: u64) -> Config {
    let mut cfg = config.clone();
    cfg.step_limit = config.step_limit.min(left / crate::CTA_STEP_FACTOR);
    cfg
}

/// What in `kernel` the induction does not cover yet (`None`: nothing), as
/// [`NotConcluded::Feature`] names it.
pub fn uncovered(
    module: &Module<'_>,
    kernel: &str,
    config: &Config,
) -> Result<Option<NotConcluded>, Error> {
    if config.warp_sync {
        return Ok(Some(NotConcluded::WarpSync));
    }
    let (ir, _) = crate::prepare(module, kernel, config)?;
    Ok(feature(&ir).map(NotConcluded::Feature))
}

/// The emulator-level half of the induction over the trip count `variable` of `kernel`
/// (see the module documentation). `Ok(Err(_))` says why it did not conclude.
///
/// Its runs share `left` in all (each run's CTA-wide instruction budget and search budget
/// are what is left of it, each thread's at most `config.step_limit`), and `left` is
/// decreased by what they ran: hostile input must not multiply the budgets by the number of
/// runs.
/// `longest`: the thread-instructions of the exploration's longest path, explored with
/// `max_trips` choices per branch at most (0 and 1 when unknown: no estimate).
pub fn induct(
    module: &Module<'_>,
    kernel: &str,
    config: &Config,
    variable: &Variable,
    pins: &[(Variable, u64)],
    left: &mut Left,
    (longest, max_trips): (u64, u32),
) -> Result<Result<Induction, NotConcluded>, Error> {
    if config.warp_sync {
        return Ok(Err(NotConcluded::WarpSync));
    }
    let (ir, shape) = crate::prepare(module, kernel, config)?;
    if let Some(f) = feature(&ir) {
        return Ok(Err(NotConcluded::Feature(f)));
    }
    // The probe and the observation each run the long path: up to `MAX_MOMENTS + 8` trips
    // where a path of the exploration ran at most `max_trips` (`longest` thread-instructions
    // at most). When two such runs, so estimated, do not fit in the budget, the argument
    // would stop at it: it is not started (a mutant of no_period.ptx, 2,048 trips of an inner
    // loop per trip, ran its probe and observation to the budget for nothing).
    let long_path =
        longest.saturating_mul(u64::from(MAX_MOMENTS + 8)) / u64::from(max_trips.max(1));
    if long_path.saturating_mul(2) > left.instructions {
        return Ok(Err(NotConcluded::Budget));
    }
    // Each run may run RUN_FACTOR times that estimate (at least 2²⁰ instructions): a run
    // much longer is not the path the exploration predicts (a mutant whose counter no
    // longer steps ran its probe to the whole budget, 10 s, to conclude nothing).
    let run_cap = if longest == 0 {
        u64::MAX
    } else {
        long_path.saturating_mul(RUN_FACTOR).max(1 << 20)
    };
    // One run within what is left: `None` when nothing is left or the run stopped at a
    // budget (the argument needs every run complete).
    let mut run = |induct: Induct| -> Result<Option<(Emulation, Induct)>, Error> {
        let mut cfg = within(config, left.instructions.min(run_cap));
        if cfg.step_limit == 0 || left.search == 0 {
            return Ok(None);
        }
        cfg.choices = Some(ChoicePlan {
            answers: Vec::new(),
            max_trips: MAX_MOMENTS + 8,
            search_budget: left.search,
            prefer_large: true,
            pins: pins.to_vec(),
        });
        let (emulation, induct) = crate::exec::run_induct(&ir, shape, &cfg, induct)?;
        left.instructions = left
            .instructions
            .saturating_sub(emulation.stats.instructions);
        left.search = left.search.saturating_sub(emulation.search_work);
        if emulation.search_exhausted || emulation.unverifiable.iter().any(|u| u.why.is_budget()) {
            return Ok(None);
        }
        Ok(Some((emulation, induct)))
    };
    // The live registers every run's snapshots compare, computed once.
    let live = crate::ir::liveness(&ir);
    // 1. The probe: the exit branch is the one with the most choices on the variable.
    let unwatched = Induct::new(
        u32::MAX,
        usize::MAX,
        Task::Observe { limit: 0 },
        live.clone(),
    );
    let Some((probe, _)) = run(unwatched)? else {
        return Ok(Err(NotConcluded::Budget));
    };
    let mut counts: Vec<(InstId, ThreadId, u32)> = Vec::new();
    // With a remainder pinned, the main loop's choices read the count less the remainder
    // (`n - (n & 3)`), a variable of its own: every choice counts.
    for c in probe
        .choices
        .iter()
        .filter(|c| &c.variable == variable || !pins.is_empty())
    {
        match counts
            .iter_mut()
            .find(|(i, t, _)| *i == c.inst && *t == c.thread)
        {
            Some(e) => e.2 += 1,
            None => counts.push((c.inst, c.thread, 1)),
        }
    }
    let Some(&(exit, thread, _)) = counts.iter().max_by_key(|e| e.2) else {
        return Ok(Err(NotConcluded::NoExit));
    };
    let new = |task| Induct::new(exit.0, thread.0 as usize, task, live.clone());
    // 2. The observation.
    let Some((observation, observed)) = run(new(Task::Observe { limit: MAX_MOMENTS }))? else {
        return Ok(Err(NotConcluded::Budget));
    };
    if let Some(f) = observed.failure {
        return Ok(Err(failure(&ir, f)));
    }
    let snaps = &observed.snaps;
    let (start, period, progressions) = match find_period(&ir, snaps) {
        Ok(found) => found,
        Err(first) => {
            return Ok(Err(NotConcluded::NoPeriod {
                moments: snaps.len() as u32,
                first,
            }));
        }
    };
    let (s0, s1) = (&snaps[start as usize], &snaps[(start + period) as usize]);
    // 3. The abstract period.
    let Some((emulation, period_run)) = run(new(Task::Period {
        start,
        period,
        progressions: progressions.clone(),
    }))?
    else {
        return Ok(Err(NotConcluded::Budget));
    };
    if let Some(f) = period_run.failure {
        return Ok(Err(failure(&ir, f)));
    }
    if !period_run.closed || !emulation.findings.is_empty() {
        return Ok(Err(NotConcluded::Stopped { tail: None }));
    }
    let Some(form) = period_run.form else {
        return Ok(Err(NotConcluded::Undecided {
            inst: exit,
            line: line(&ir, exit),
            thread,
            why: Undecided::NotTheExit,
        }));
    };
    let far = period_run.far;
    let step = -form.lin.y;
    let mut bounds = period_run.bounds;
    let mut tails = Vec::new();
    // The family's start: D₀(X) = c + x·X ≥ F, and its residue class when the runs were for
    // one remainder of an unrolled loop.
    let (c, x) = (form.lin.c, form.lin.x);
    if x <= 0 {
        return Ok(Err(NotConcluded::Undecided {
            inst: exit,
            line: line(&ir, exit),
            thread,
            why: Undecided::NotTheDistance,
        }));
    }
    let lo = (far - c).div_euclid(x) + i128::from((far - c).rem_euclid(x) != 0);
    let lo = lo.max(0);
    let mut class = None;
    for (f, _) in &period_run.store {
        if let machine::StoreForm::Class { mask, value } = f {
            if class.is_some_and(|c| c != (*mask, *value)) {
                return Ok(Err(NotConcluded::OtherVariables));
            }
            class = Some((*mask, *value));
        }
    }
    // 4. The tails: the distances the family's launches end their loop with (every value of
    // F − δ .. F, or those of the class), each from one member.
    let in_class = |v: i128| class.is_none_or(|(mask, value)| (v as u64) & mask == value);
    let modulus = class.map_or(1, |(mask, _)| i128::from(mask) + 1);
    let mut distances: Vec<i128> = (lo..lo + step * modulus)
        .filter(|&v| in_class(v))
        .map(|v| {
            let d0 = c + x * v;
            d0 - ((d0 - far).div_euclid(step) + 1) * step
        })
        .collect();
    distances.sort_unstable();
    distances.dedup();
    // One run and one kept program per distance: a counter that advances by 65,536 per trip
    // (a mutant of late_bug.ptx) asked for 65,536 tails, 3 GB of kept commands.
    if distances.len() > MAX_TAILS {
        return Ok(Err(NotConcluded::Tails(distances.len() as u64)));
    }
    for distance in distances {
        let Some((emulation, tail)) = run(new(Task::Tail {
            start,
            progressions: progressions.clone(),
            form,
            distance,
        }))?
        else {
            return Ok(Err(NotConcluded::Budget));
        };
        if let Some(f) = tail.failure {
            return Ok(Err(failure(&ir, f)));
        }
        let clean = emulation.unverifiable.is_empty()
            && emulation.findings.is_empty()
            && !emulation.abandoned
            && emulation
                .program
                .threads
                .iter()
                .all(|t| t.end == weft_program::ThreadEnd::Exited);
        if !clean || tail.form != Some(form) {
            return Ok(Err(NotConcluded::Stopped {
                tail: Some(distance),
            }));
        }
        bounds.extend(tail.bounds);
        let commands = emulation
            .program
            .threads
            .iter()
            .zip(&tail.start_position)
            .map(|(t, &s)| t.commands.get(s as usize..).unwrap_or(&[]).to_vec())
            .collect();
        tails.push((distance, commands, emulation.program.values));
    }
    // The family's end: within the no-overflow bounds, and within what the path's choices
    // before the moment allow.
    let atom_bits = form.bits.min(64);
    let top = (1i128 << (atom_bits - 1)) - 1;
    let Some(mut hi) = widest(&bounds, form, far, lo, top) else {
        return Ok(Err(NotConcluded::Empty));
    };
    let mut lo = lo;
    // The family's values must follow the path up to the moment: each of its variables,
    // read as a function of the trip count, stays within the values it allows.
    for (f, set) in &period_run.store {
        let (m, k) = match f {
            machine::StoreForm::Atom => (1, 0),
            machine::StoreForm::Linear(l) if l.x > 0 => (l.x, l.c),
            machine::StoreForm::Class { .. } => continue,
            _ => return Ok(Err(NotConcluded::OtherVariables)),
        };
        // The interval of `set` that holds m·hi + k, mapped back to the trip count.
        let at = m * hi + k;
        let Some(&(a, b)) = set
            .iter()
            .find(|&&(a, b)| i128::from(a) <= at && at <= i128::from(b))
        else {
            return Ok(Err(NotConcluded::Empty));
        };
        lo = lo.max((i128::from(a) - k + m - 1).div_euclid(m));
        hi = hi.min((i128::from(b) - k).div_euclid(m));
    }
    if lo > hi {
        return Ok(Err(NotConcluded::Empty));
    }
    let family = (
        u64::try_from(lo).unwrap_or(0),
        u64::try_from(hi).unwrap_or(0),
    );
    if period_run.variable.as_ref() != Some(variable) {
        return Ok(Err(NotConcluded::OtherVariables));
    }
    let variable = variable.clone();
    let generations = s1
        .bars
        .generations()
        .iter()
        .zip(s0.bars.generations())
        .filter(|((_, b), (_, a))| b > a)
        .map(|((k, b), (_, a))| (*k, b - a))
        .collect();
    Ok(Ok(Induction {
        variable,
        exit,
        exit_line: line(&ir, exit),
        thread,
        start,
        period,
        progressions: progressions.len() as u32,
        distance: (c, x),
        step,
        far,
        family,
        class,
        pre: s0.position.clone(),
        block: s0
            .position
            .iter()
            .zip(&s1.position)
            .map(|(a, b)| b - a)
            .collect(),
        generations,
        first: (
            observation
                .program
                .threads
                .iter()
                .zip(&s1.position)
                .map(|(t, &e)| t.commands.get(..e as usize).unwrap_or(&[]).to_vec())
                .collect(),
            observation.program.values,
        ),
        tails,
    }))
}
