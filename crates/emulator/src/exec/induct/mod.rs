//! The machine's side of the induction over a loop's trip count (`docs/induction.md` §2).
//!
//! A run with an [`Induct`] watches one branch of one thread, the loop's exit: every time
//! that thread reaches it with an unknown predicate is a *moment*. In [`Task::Observe`] the
//! run takes a [`Snapshot`] at every moment. In [`Task::Period`] and [`Task::Tail`] it
//! abstracts the machine at moment `start`: every progression register (one that advances by
//! a constant per period) holds the term `c + step·Y`, `Y ≥ 0` the number of periods, so the
//! state stands for the machine at every moment `start + m·period` at once. From there
//! every branch that decides synchronization on a term that reads `Y` is decided by the
//! *distance* `D` (the exit predicate's linear form, oriented to shrink as `Y` grows):
//! far from the end (`Task::Period`, every `D` at or above a threshold the run computes) or
//! exactly (`Task::Tail`). Anything else that depends on `Y` stops the argument: the
//! emulator's unknown-value machinery already refuses to decide on a value that stands for
//! many values, and a choice the run does not know how to make is a [`Failure`].

pub(crate) mod linear;
mod snapshot;

use super::Machine;
use super::terms::TermId;
use crate::ir::{Liveness, RegId};
use linear::{Bound, Lin, Linearizer, holds};
pub(crate) use snapshot::{Differ, Progression, Snapshot, Unsupported, progressions};

/// What an induction run does at its moments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Task {
    /// Take a snapshot at each of the first `limit` moments, then stop.
    Observe { limit: u32 },
    /// Abstract the progressions at moment `start`, run `period` moments on with every
    /// decision on `Y` taken far from the end, and compare the state with the start.
    Period {
        start: u32,
        period: u32,
        progressions: Vec<Progression>,
    },
    /// Abstract the progressions at moment `start` and run to the end with the distance
    /// `distance` (the exit predicate's linear form must be `form`).
    Tail {
        start: u32,
        progressions: Vec<Progression>,
        form: Distance,
        distance: i128,
    },
}

/// The trip-count distance `D = c + y·Y + x·X` (`y < 0`): the exit predicate's linear form
/// at the start moment, `X` the input atom it reads at `bits` bits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Distance {
    pub(crate) lin: Lin,
    pub(crate) atom: TermId,
    pub(crate) bits: u8,
}

/// How a variable of the path's choices reads the trip count, once the distance is known
/// (the variables the choices before the moment constrained).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum StoreForm {
    /// The trip count itself.
    Atom,
    /// `c + x·X`, no period count.
    Linear(Lin),
    /// `X & mask`, determined by the path (a pinned remainder): its value.
    Class { mask: u64, value: u64 },
    /// Anything else.
    Other,
}

/// Why a decision of an abstract run could not be made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Undecided {
    /// The predicate is not linear in the period count and the trip count.
    NotLinear,
    /// No decision of the period compared the period count with the trip count, or the
    /// first that read the period count is no comparison.
    NotTheExit,
    /// The predicate reads the period count other than through the distance to the end
    /// (`i == 40`, or a counter that runs at another speed).
    NotTheDistance,
    /// A choice on an input that the path so far does not decide, or a value-by-value
    /// split, inside the abstract run.
    NewChoice,
    /// An assumption (an assertion's guard) inside the abstract run.
    Assumption,
    /// A term could not be built (size cap or arena budget).
    Term,
}

/// Why the machine-side argument failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Failure {
    Unsupported(Unsupported),
    Undecided {
        inst: u32,
        thread: u32,
        why: Undecided,
    },
    /// The state after one abstract period is not the start state with `Y + 1`.
    Differs(Differ),
}

/// The induction state of a run.
#[derive(Clone)]
pub(crate) struct Induct {
    /// The watched branch and thread.
    pub(crate) pc: u32,
    pub(crate) thread: usize,
    pub(crate) task: Task,
    pub(crate) live: Liveness,
    /// Moments so far.
    pub(crate) moments: u32,
    /// [`Task::Observe`]: a snapshot per moment. [`Task::Period`]: the abstract start and
    /// the end.
    pub(crate) snaps: Vec<Snapshot>,
    /// The progressions are abstract: decisions on `Y` are the induction's.
    active: bool,
    pub(crate) form: Option<Distance>,
    /// The smallest distance for which every far decision holds.
    pub(crate) far: i128,
    /// The ranges the linear readings need (no wrap-around).
    pub(crate) bounds: Vec<Bound>,
    /// The progression registers' terms expected after one period.
    expected: Vec<(usize, RegId, TermId)>,
    pub(crate) failure: Option<Failure>,
    /// [`Task::Period`]: the period ran and the state matched.
    pub(crate) closed: bool,
    /// Per thread, the commands recorded at the start moment.
    pub(crate) start_position: Vec<u32>,
    /// The trip-count variable the distance reads (its atom at the exit's width).
    pub(crate) variable: Option<crate::Variable>,
    /// The path's variables at the end of the period, each with its form and values.
    pub(crate) store: Vec<(StoreForm, Vec<(u64, u64)>)>,
}

impl Induct {
    pub(crate) fn new(pc: u32, thread: usize, task: Task, live: Liveness) -> Self {
        Induct {
            pc,
            thread,
            task,
            live,
            moments: 0,
            snaps: Vec::new(),
            active: false,
            form: None,
            far: 1,
            bounds: Vec::new(),
            expected: Vec::new(),
            failure: None,
            closed: false,
            start_position: Vec::new(),
            variable: None,
            store: Vec::new(),
        }
    }
}

impl Machine<'_> {
    /// Records a failure of the argument and stops the run.
    fn induct_fail(&mut self, f: Failure) {
        if let Some(i) = self.induct.as_mut()
            && i.failure.is_none()
        {
            i.failure = Some(f);
        }
        self.stop = true;
    }

    /// Thread `t` is about to run the branch at `pc` on an unknown predicate: a moment when
    /// it is the watched one.
    pub(super) fn induct_moment(&mut self, t: usize, pc: u32) {
        let Some(ind) = self.induct.as_ref() else {
            return;
        };
        if ind.pc != pc || ind.thread != t || ind.failure.is_some() {
            return;
        }
        let k = ind.moments;
        let task = ind.task.clone();
        if let Some(i) = self.induct.as_mut() {
            i.moments += 1;
        }
        match task {
            Task::Observe { limit } => {
                let snap = self.take_snapshot();
                let Some(snap) = snap else { return };
                if let Some(i) = self.induct.as_mut() {
                    i.snaps.push(snap);
                }
                if k + 1 >= limit {
                    self.stop = true;
                }
            }
            Task::Period {
                start,
                period,
                progressions,
            } => {
                if k == start {
                    self.abstract_progressions(&progressions);
                    if let Some(snap) = self.take_snapshot()
                        && let Some(i) = self.induct.as_mut()
                    {
                        i.snaps.push(snap);
                    }
                } else if k == start + period {
                    self.close_period();
                }
            }
            Task::Tail {
                start,
                progressions,
                form,
                ..
            } => {
                if k == start {
                    self.abstract_progressions(&progressions);
                    if let Some(i) = self.induct.as_mut() {
                        i.form = Some(form);
                    }
                }
            }
        }
    }

    fn take_snapshot(&mut self) -> Option<Snapshot> {
        let ind = self.induct.take()?;
        let snap = self.snapshot(&ind.live);
        self.induct = Some(ind);
        match snap {
            Ok(s) => Some(s),
            Err(u) => {
                self.induct_fail(Failure::Unsupported(u));
                None
            }
        }
    }

    /// Makes every progression register `c + step·Y` (or `term + step·Y`).
    fn abstract_progressions(&mut self, progressions: &[Progression]) {
        let position: Vec<u32> = self.cmds.iter().map(|c| c.len() as u32).collect();
        let source = self.src.single(crate::ValueSource::Other(
            "the number of periods of the loop under induction",
        ));
        let mut expected = Vec::new();
        for p in progressions {
            let t = p.thread as usize;
            let i = self.slot(t) + p.reg.index() * super::values::LANES;
            let term = (|| {
                let y = self.src.terms.period(p.step, p.bits)?;
                let term = match self.unk[i] {
                    0 => self.src.terms.add_const(y, self.vals[i], p.bits)?,
                    u => {
                        let s = self.src.term(u)?;
                        self.src.terms.op(
                            super::terms::OpKind::Add,
                            p.bits,
                            false,
                            [Some(s), Some(y), None],
                        )?
                    }
                };
                let next = self.src.terms.add_const(term, p.step, p.bits)?;
                Some((term, next))
            })();
            let Some((term, next)) = term else {
                let f = Failure::Undecided {
                    inst: self.th[t].pc,
                    thread: p.thread,
                    why: Undecided::Term,
                };
                self.induct_fail(f);
                return;
            };
            self.vals[i] = 0;
            self.unk[i] = self.src.termed(source, Some(term));
            expected.push((t, p.reg, next));
        }
        if let Some(ind) = self.induct.as_mut() {
            ind.active = true;
            ind.expected = expected;
            ind.start_position = position;
        }
    }

    /// The end of one abstract period: the state must be the start's with `Y + 1`.
    fn close_period(&mut self) {
        let Some(end) = self.take_snapshot() else {
            return;
        };
        self.stop = true;
        let Some(ind) = self.induct.as_mut() else {
            return;
        };
        let Some(start) = ind.snaps.first() else {
            return;
        };
        // The start with every progression advanced by one period.
        let mut want = start.clone();
        for &(t, reg, next) in &ind.expected {
            if let Some(slot) = want.regs[t].iter_mut().find(|(r, _)| *r == reg) {
                slot.1 = match self.src.terms.node(next) {
                    super::terms::Node::Affine { base, k, bits } => {
                        snapshot::Val::Term { base, k, bits }
                    }
                    _ => snapshot::Val::Term {
                        base: next,
                        k: 0,
                        bits: self.src.terms.natural(next).0,
                    },
                };
            }
        }
        let result = progressions(&want, &end, &self.ir.reg_bits, true);
        let store = self.store_forms();
        let ind = self.induct.as_mut().expect("checked above");
        ind.snaps.push(end);
        ind.store = store;
        match result {
            Ok(p) if p.is_empty() => ind.closed = true,
            Ok(p) => {
                let p = p[0];
                ind.failure = Some(Failure::Differs(Differ::Register {
                    thread: p.thread,
                    reg: p.reg,
                }));
            }
            Err(d) => ind.failure = Some(Failure::Differs(d)),
        }
    }

    /// Each variable of the path's choices, as the trip count's distance reads it.
    fn store_forms(&mut self) -> Vec<(StoreForm, Vec<(u64, u64)>)> {
        use super::terms::{Node, OpKind};
        let Some(form) = self.induct.as_ref().and_then(|i| i.form) else {
            return Vec::new();
        };
        let mut keys: Vec<_> = self
            .choices
            .store
            .iter()
            .map(|(k, v)| (*k, v.clone()))
            .collect();
        keys.sort();
        let mut out = Vec::new();
        let mut bounds = Vec::new();
        for ((base, bits), set) in keys {
            let f = if base == form.atom {
                StoreForm::Atom
            } else if let Some(&value) = self.choices.known.get(&base)
                && let Node::Op {
                    op: OpKind::And,
                    args: [Some(a), Some(m), None],
                    ..
                } = self.src.terms.node(base)
                && a == form.atom
                && let Node::Const(mask) = self.src.terms.node(m)
            {
                StoreForm::Class { mask, value }
            } else {
                let mut lin =
                    Linearizer::new(&self.src.terms, &self.choices.known, Some(form.atom));
                match lin.lin(base, bits) {
                    Some(l) if l.y == 0 && l.x != 0 => {
                        bounds.extend(lin.bounds);
                        StoreForm::Linear(l)
                    }
                    _ => StoreForm::Other,
                }
            };
            out.push((f, set));
        }
        if let Some(ind) = self.induct.as_mut() {
            ind.bounds.extend(bounds);
        }
        out
    }

    /// Whether the abstract values are in play (decisions on `Y` are the induction's).
    #[inline]
    pub(super) fn induct_active(&self) -> bool {
        self.induct.as_ref().is_some_and(|i| i.active)
    }

    /// A decision on the predicate `term` at `pc` in thread `t` while the abstract values
    /// are in play: `Some(answer)`, or `None` after recording why it cannot be made (the run
    /// stops).
    pub(super) fn induct_decide(&mut self, t: usize, pc: u32, term: TermId) -> Option<bool> {
        let fail = |m: &mut Self, why| {
            m.induct_fail(Failure::Undecided {
                inst: pc,
                thread: t as u32,
                why,
            });
            None
        };
        if !self.src.terms.periodic(term) {
            // The path so far does not decide it (else it would be forced).
            return fail(self, Undecided::NewChoice);
        }
        let form = self.induct.as_ref()?.form;
        let mut lin = Linearizer::new(&self.src.terms, &self.choices.known, form.map(|f| f.atom));
        let Some((rel, diff)) = lin.predicate(term) else {
            return fail(self, Undecided::NotLinear);
        };
        let bounds = lin.bounds;
        let atom = lin.atom;
        if diff.x == 0 {
            // The period count alone (`i >= STAGES`, `i == 40`): decided only when its answer
            // is the same for every Y ≥ 0.
            let mut signs = vec![diff.c.cmp(&0), diff.y.cmp(&0)];
            if diff.y != 0 && (-diff.c) % diff.y == 0 && (-diff.c) / diff.y >= 0 {
                signs.push(std::cmp::Ordering::Equal);
            }
            if diff.y == 0 {
                signs.truncate(1);
            }
            let answer = holds(rel, signs[0]);
            if signs.iter().any(|&s| holds(rel, s) != answer) {
                return fail(self, Undecided::NotTheDistance);
            }
            if let Some(ind) = self.induct.as_mut() {
                ind.bounds.extend(bounds);
            }
            return Some(answer);
        }
        let form = match form {
            Some(f) => f,
            None => {
                // The first decision that compares the period count with the trip count
                // defines the distance.
                let Some(atom) = atom else {
                    return fail(self, Undecided::NotTheDistance);
                };
                if diff.y == 0 {
                    // The trip count alone: the path's choices decide it, or nothing does.
                    return fail(self, Undecided::NewChoice);
                }
                let bits = match self.src.terms.node(term) {
                    super::terms::Node::Not(q) => self.src.terms.node(q),
                    n => n,
                };
                let super::terms::Node::Cmp { bits, .. } = bits else {
                    return fail(self, Undecided::NotTheExit);
                };
                let s = if diff.y < 0 { 1 } else { -1 };
                let f = Distance {
                    lin: Lin {
                        c: diff.c * s,
                        y: diff.y * s,
                        x: diff.x * s,
                    },
                    atom,
                    bits,
                };
                let variable = self.variable((atom, bits));
                if let Some(ind) = self.induct.as_mut() {
                    ind.form = Some(f);
                    ind.variable = Some(variable);
                }
                f
            }
        };
        let d = form.lin;
        // diff = λ·(D − d.c) + diff.c with λ = diff.y / d.y: proportional to the distance.
        if diff.x * d.y != diff.y * d.x {
            return fail(self, Undecided::NotTheDistance);
        }
        let (num, den) = if d.y < 0 {
            (-diff.y, -d.y)
        } else {
            (diff.y, d.y)
        };
        // den·diff = num·D + off.
        let off = den * diff.c - num * d.c;
        let task = self.induct.as_ref()?.task.clone();
        let answer = match task {
            Task::Tail { distance, .. } => holds(rel, (num * distance + off).cmp(&0)),
            _ if num == 0 => holds(rel, off.cmp(&0)),
            _ => {
                // For D → ∞ the sign is num's, fixed from the first integer above the root
                // −off/num on.
                let root = if num > 0 {
                    (-off).div_euclid(num)
                } else {
                    off.div_euclid(-num)
                };
                if let Some(ind) = self.induct.as_mut() {
                    ind.far = ind.far.max(root + 1);
                }
                holds(rel, num.cmp(&0))
            }
        };
        if let Some(ind) = self.induct.as_mut() {
            ind.bounds.extend(bounds);
        }
        Some(answer)
    }

    /// A choice, a split or an assumption the abstract run would have to make on an input:
    /// the argument stops there.
    pub(super) fn induct_refuse(&mut self, t: usize, pc: u32, why: Undecided) {
        self.induct_fail(Failure::Undecided {
            inst: pc,
            thread: t as u32,
            why,
        });
    }

    /// `(v, u)` with the bits no period changes made known: a value the abstract run
    /// computes from a progression only through its fixed low bits (`i & 1` of a counter
    /// that advances by 2) is the same in every period.
    pub(super) fn induct_settle(&mut self, v: u64, u: u32) -> (u64, u32) {
        let Some(term) = self.src.term(u) else {
            return (v, u);
        };
        if !self.src.terms.periodic(term) {
            return (v, u);
        }
        let bits = self.src.terms.natural(term).0;
        let mut memo = rustc_hash::FxHashMap::default();
        let (value, mask) = linear::known_bits(&self.src.terms, term, &mut memo);
        let want = super::terms::top(bits);
        if mask & want == want {
            (value & want, 0)
        } else {
            (v, u)
        }
    }
}
