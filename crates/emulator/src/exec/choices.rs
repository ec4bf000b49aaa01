//! Consistent choices on branches whose predicate is a symbolic term (`docs/semantics.md`
//! §6.5).
//!
//! A branch on an unknown predicate that decides synchronization cannot be emulated on both
//! sides. When the predicate carries a term ([`super::terms`]) and the run explores
//! ([`crate::Config::choices`]), the branch becomes a *choice*: the predicate constrains one
//! variable (a base term read at some width), and the run keeps, per variable, the set of
//! values its choices so far allow. A predicate whose answer that set decides is not a
//! choice (so the same predicate gets the same answer in every thread and occurrence, and
//! `kt > 2` false rules out `kt > 3` true); otherwise the run takes the answer its plan
//! gives for this choice, or the side with the smaller values, and records the choice. The
//! driver (`crate::explore`) replays runs with other plans, depth first.
//!
//! The bound: once one branch has made [`crate::ChoicePlan::max_trips`] choices on a
//! variable on a path (a loop's trips), a further choice there on it takes the smaller side
//! only and records the other side as *not explored*. A branch that chooses on a new
//! variable at every trip (a counter whose term is rebuilt each trip) escapes that bound:
//! once it has made [`BRANCH_VARIABLES`] times as many choices on one path, the path is
//! abandoned and the values of its next variable are recorded as not explored.

use super::Machine;
use super::alu::sx;
use super::terms::{Compiled, Constraint, Node, OpKind, Set, TermId, complement, intersect, top};
use super::values::TERMED;
use crate::{Choice, Expr, Variable};
use rustc_hash::FxHashMap;
use weft_program::{Command, InstId, ThreadId};

/// A variable: a base term read at a width.
type VarKey = (TermId, u8);

/// A bisection of the witness search ([`Choices::bisections`]): the field, the variable's
/// base term and width, and the bound its value is to reach.
type Bisection = (TermId, TermId, u8, u64);

/// Term nodes each search for an alternative witness may evaluate
/// ([`Machine::alternative_witness_exprs`]).
const ALTERNATIVE_SEARCH: u64 = 2_000_000;

/// Searches for alternative witnesses per witness asked for, found or not.
const ALTERNATIVE_SEARCHES_PER_WITNESS: u32 = 2;

/// Choices one branch may make on one path, on all its variables together, in units of
/// [`crate::ChoicePlan::max_trips`] (a mutant of `param_loop.ptx` made 65,468 choices at one
/// branch, each on a new variable, and its witness searches ran the search budget: 14 s).
pub(crate) const BRANCH_VARIABLES: u32 = 4;

/// A predicate's constraint and the values for which it is false (both computed once).
#[derive(Clone)]
pub(super) struct Predicate {
    constraint: Constraint,
    when_false: Set,
}

impl std::ops::Deref for Predicate {
    type Target = Constraint;
    fn deref(&self) -> &Constraint {
        &self.constraint
    }
}

/// The per-run state of the choices.
#[derive(Clone, Default)]
pub(super) struct Choices {
    /// Per variable (base term, width): the values the choices so far allow.
    pub(super) store: FxHashMap<(TermId, u8), Set>,
    /// Per variable and branch: the choices made there on it (a loop's trips).
    counts: FxHashMap<((TermId, u8), u32), u32>,
    /// Per branch: the choices made there, on any variable.
    branch_counts: FxHashMap<u32, u32>,
    /// The choices, in order, with their variables.
    pub(super) trail: Vec<(Choice, (TermId, u8))>,
    /// The variables in order of first choice.
    pub(super) order: Vec<(TermId, u8)>,
    /// Base terms whose value the choices determine (their value as a register holds it).
    pub(super) known: FxHashMap<TermId, u64>,
    /// The value of each term evaluated under `known` so far ([`Terms::eval`]'s memo, kept
    /// while `known` is unchanged: every unknown ALU result with a term asks for its value,
    /// and a loop asks for the same terms trip after trip).
    determined_memo: FxHashMap<TermId, Option<u64>>,
    /// Each term resolved so far ([`Machine::resolve_selps`]), kept while `store` and
    /// `known` are unchanged (a loop resolves the same operands trip after trip; the
    /// CUTLASS Ampere GEMM's emulation took 40% longer without it).
    resolved: FxHashMap<TermId, Option<TermId>>,
    /// Parameter-field values that follow the path so far (the last witness found).
    pub(super) witness: Option<Vec<(TermId, u64)>>,
    /// The run was abandoned (`crate::Emulation::abandoned`).
    pub(super) abandoned: bool,
    /// The values it left unexplored then.
    pub(super) not_explored: Vec<(Variable, Set)>,
    /// The constraint of each predicate term met so far ([`super::terms::Terms::constraint`]
    /// is pure but allocates; a guard in a loop asks for the same one every trip).
    constraints: FxHashMap<TermId, std::sync::Arc<Predicate>>,
    /// Term nodes the witness search and the input scan evaluated on this run (each
    /// evaluation counted at its term's size).
    pub(super) search: u64,
    /// They reached the run's share of the exploration's search budget
    /// ([`crate::ChoicePlan::search_budget`]): the run was abandoned there.
    pub(super) search_exhausted: bool,
    /// The bisections of [`Machine::find_group_witness`] that ran to their end: per (field,
    /// variable's base term, width, bound) the field value found and the work charged. A
    /// bisection is a function of those alone, and the witness searches of a choice's two
    /// sides, and of later choices, repeat most of them (the variables other than the one
    /// chosen on keep their values): they were most of the searches' evaluations.
    bisections: std::cell::RefCell<FxHashMap<Bisection, (u64, u64)>>,
    /// Each variable's base term compiled alone for the witness search's bisections
    /// ([`super::terms::Terms::compile`] is a function of the term): every search compiled
    /// every variable's term again.
    compiled: std::cell::RefCell<FxHashMap<TermId, std::sync::Arc<Compiled>>>,
    /// The terms of the last group of variables the witness search compiled together, with
    /// their base terms: a choice's two sides search the same groups.
    last_group: std::cell::RefCell<Option<(Vec<TermId>, std::sync::Arc<Compiled>)>>,
}

impl Machine<'_> {
    /// The value of the predicate `gu` carries at a branch that decides synchronization:
    /// `None` when the run does not explore or the predicate has no term (the caller
    /// reports the kernel unverifiable as before).
    pub(super) fn choose(&mut self, t: usize, pc: u32, gu: u32) -> Option<bool> {
        self.cfg.choices.as_ref()?;
        let p = self.src.term(gu)?;
        if let Node::Const(c) = self.src.terms.node(p) {
            // A predicate that folded to a constant decides nothing.
            return Some(c & 1 != 0);
        }
        if self.induct_active() {
            return self.induct_decide(t, pc, p);
        }
        let c = self.constraint(p);
        self.choose_on(t, pc, (c.base, c.bits), &c.when_true, false)
    }

    /// Whether the predicate term `p` holds for every input this path's choices admit
    /// (`Some(true)`), for none (`Some(false)`), or depends on which (`None`); `None` when
    /// the run does not explore (or runs the induction, which decides on its own terms).
    /// A `selp` on a decided predicate picks its side: Triton's flattened loop counter
    /// `ki = ki == k - 1 ? 0 : ki + 1` nested one `selp` per trip, each on a comparison the
    /// path had already decided, until the term passed its size cap at 6 trips and the loop's
    /// branch became unknown.
    pub(super) fn decided_by_choices(&mut self, p: TermId) -> Option<bool> {
        self.cfg.choices.as_ref()?;
        if let Node::Const(c) = self.src.terms.node(p) {
            return Some(c & 1 != 0);
        }
        if self.induct_active() {
            return None;
        }
        let c = self.constraint(p);
        let all = vec![(0, top(c.bits))];
        let cur = self.choices.store.get(&(c.base, c.bits)).unwrap_or(&all);
        if intersect(cur, &c.when_true).is_empty() {
            Some(false)
        } else if intersect(cur, &c.when_false).is_empty() {
            Some(true)
        } else {
            None
        }
    }

    /// Records copy `g` (about to be issued) with the guards of the branch sides running
    /// now, if any.
    pub(super) fn guard_copy(&mut self, g: u32) {
        if !self.fork_guards.is_empty() {
            self.copy_guards.push((g, self.fork_guards.clone()));
        }
    }

    /// Empties the access of every copy issued on a side of a branch that the path's
    /// choices rule out (its guard decided false): on this path's inputs the side never
    /// runs, so its copy never happened (its shared access is no access).
    pub(super) fn drop_infeasible_copies(&mut self) {
        for (g, guards) in std::mem::take(&mut self.copy_guards) {
            // Decided by a variable's set of values, or by the variables the path leaves one
            // value each (`determined`).
            let infeasible = guards.iter().any(|&(p, want)| {
                let value = self
                    .decided_by_choices(p)
                    .or_else(|| self.determined_term(p).map(|v| v & 1 != 0));
                value == Some(!want)
            });
            if infeasible
                && let Some(c) = self.copies.get_mut(g as usize)
                && let weft_program::CommandView::Access {
                    kind, addr, may, ..
                } = c.access.view()
            {
                c.access = Command::access(kind, addr, 0, may, c.access.inst());
            }
        }
    }

    /// `t` with every `selp` whose predicate this path's choices decide replaced by the side
    /// it picks, and what that leaves constant folded: the term a later instruction builds
    /// on (a `selp` built before the choice that decides it stayed nested in every later
    /// trip's term). `t` itself when the run does not explore.
    pub(super) fn resolve_selps(&mut self, t: TermId) -> Option<TermId> {
        if self.cfg.choices.is_none() || self.induct_active() {
            return Some(t);
        }
        if self.choices.store.is_empty() {
            // No choice made yet: no predicate is decided (constants fold as terms are built).
            return Some(t);
        }
        let mut memo = std::mem::take(&mut self.choices.resolved);
        let r = self.resolve_in(t, &mut memo);
        self.choices.resolved = memo;
        let r = r?;
        if r != t
            && let Some(v) =
                self.src
                    .terms
                    .eval(r, &FxHashMap::default(), &mut FxHashMap::default())
        {
            return self.src.terms.constant(v);
        }
        Some(r)
    }

    fn resolve_in(
        &mut self,
        t: TermId,
        memo: &mut FxHashMap<TermId, Option<TermId>>,
    ) -> Option<TermId> {
        if !self.src.terms.has_selp(t) {
            return Some(t);
        }
        if let Some(&r) = memo.get(&t) {
            return r;
        }
        let r = (|| match self.src.terms.node(t) {
            Node::Op {
                op: OpKind::Selp,
                args: [Some(a), Some(b), Some(c)],
                ..
            } => {
                let c2 = self.resolve_in(c, memo)?;
                match self.decided_by_choices(c2) {
                    Some(true) => self.resolve_in(a, memo),
                    Some(false) => self.resolve_in(b, memo),
                    None => {
                        let (a, b) = (self.resolve_in(a, memo)?, self.resolve_in(b, memo)?);
                        self.src
                            .terms
                            .op(OpKind::Selp, 64, false, [Some(a), Some(b), Some(c2)])
                    }
                }
            }
            Node::Op {
                op,
                bits,
                signed,
                args,
            } => {
                let mut out = [None; 3];
                for (o, a) in out.iter_mut().zip(args) {
                    *o = match a {
                        Some(a) => Some(self.resolve_in(a, memo)?),
                        None => None,
                    };
                }
                self.src.terms.op(op, bits, signed, out)
            }
            Node::Affine { base, k, bits } => {
                let b = self.resolve_in(base, memo)?;
                self.src.terms.add_const(b, k, bits)
            }
            Node::Cmp {
                rel,
                signed,
                bits,
                a,
                b,
            } => {
                let (a, b) = (self.resolve_in(a, memo)?, self.resolve_in(b, memo)?);
                self.src.terms.cmp(rel, signed, bits, a, b)
            }
            Node::Not(a) => {
                let a = self.resolve_in(a, memo)?;
                self.src.terms.not(a)
            }
            Node::Param { .. } | Node::Const(_) | Node::Period { .. } | Node::Atom { .. } => {
                Some(t)
            }
        })();
        memo.insert(t, r);
        r
    }

    /// [`super::terms::Terms::constraint`] of `p` and its complement, computed once per run.
    fn constraint(&mut self, p: TermId) -> std::sync::Arc<Predicate> {
        if let Some(c) = self.choices.constraints.get(&p) {
            return c.clone();
        }
        let constraint = self.src.terms.constraint(p);
        let when_false = complement(&constraint.when_true, constraint.bits);
        let c = std::sync::Arc::new(Predicate {
            constraint,
            when_false,
        });
        self.choices.constraints.insert(p, c.clone());
        c
    }

    /// A choice at `pc` between the values `when_true` of variable `key` and the others.
    fn choose_on(
        &mut self,
        t: usize,
        pc: u32,
        key: (TermId, u8),
        when_true: &[(u64, u64)],
        yes_first: bool,
    ) -> Option<bool> {
        let cfg = self.cfg.clone();
        let plan = cfg.choices.as_ref()?;
        let all = vec![(0, top(key.1))];
        let cur = self.choices.store.get(&key).cloned().unwrap_or(all);
        let yes = intersect(&cur, when_true);
        let no = intersect(&cur, &complement(when_true, key.1));
        if no.is_empty() || yes.is_empty() {
            return Some(!yes.is_empty());
        }
        let made = self.choices.branch_counts.entry(pc).or_insert(0);
        *made += 1;
        if *made > plan.max_trips.saturating_mul(BRANCH_VARIABLES) {
            let variable = self.variable(key);
            self.choices.not_explored.push((variable, cur));
            self.choices.abandoned = true;
            self.stop = true;
            return Some(false);
        }
        // Explore only sides with a concrete witness: every explored path has an input that
        // follows it, so what it finds is real. A side without one is left unexplored.
        let wy = self.witness(key, &yes);
        let wn = self.witness(key, &no);
        // A side without a witness is not explored: the choice takes the other side only,
        // recorded like a choice the bound cut (its alternative is not explored).
        let one_sided = match (wy.is_some(), wn.is_some()) {
            (true, true) => None,
            (true, false) => Some(true),
            (false, true) => Some(false),
            (false, false) => {
                let variable = self.variable(key);
                self.choices.not_explored.push((variable, cur));
                self.choices.abandoned = true;
                self.stop = true;
                return Some(false);
            }
        };
        let k = self.choices.trail.len();
        let count = self.choices.counts.get(&(key, pc)).copied().unwrap_or(0);
        // The side with the smaller witness first (smaller values first).
        let wv = |w: &Option<Vec<(TermId, u64)>>| {
            w.as_ref()
                .map(|w| w.iter().map(|&(_, v)| v).collect::<Vec<_>>())
        };
        let bounded = count >= plan.max_trips || one_sided.is_some();
        // The long runs of the induction: the side that holds a large positive value of the
        // variable (2^(w-2), positive in both readings), else the larger witness.
        let large = 1u64 << key.1.clamp(2, 64).saturating_sub(2);
        let holds = |s: &[(u64, u64)]| s.iter().any(|&(lo, hi)| lo <= large && large <= hi);
        let default = match (wv(&wy), wv(&wn)) {
            _ if yes_first => true,
            _ if plan.prefer_large && !bounded && holds(&yes) != holds(&no) => holds(&yes),
            (Some(a), Some(b)) if plan.prefer_large && !bounded && a != b => a > b,
            (Some(a), Some(b)) if a != b => a < b,
            _ => yes[0].0 < no[0].0,
        };
        let pinned = (!plan.pins.is_empty())
            .then(|| {
                let variable = self.variable(key);
                plan.pins
                    .iter()
                    .find(|(v, _)| *v == variable)
                    .map(|&(_, x)| x)
            })
            .flatten();
        let answer = match (pinned, one_sided, plan.answers.get(k)) {
            // A pinned variable takes the side that holds its value, when that side can be
            // followed.
            (Some(x), None, _) => yes.iter().any(|&(lo, hi)| lo <= x && x <= hi),
            (_, Some(a), _) => a,
            (None, None, Some(&a)) if !bounded => a,
            _ => default,
        };
        let (values, alternative) = if answer { (yes, no) } else { (no, yes) };
        self.choices.witness = if answer { wy } else { wn };
        *self.choices.counts.entry((key, pc)).or_insert(0) += 1;
        self.constrain(key, values.clone());
        let variable = self.variable(key);
        self.choices.trail.push((
            Choice {
                inst: InstId(pc),
                thread: ThreadId(t as u32),
                variable,
                answer,
                values,
                alternative,
                bounded,
            },
            key,
        ));
        Some(answer)
    }

    /// The `--param` ranges ([`crate::ParamValue::Range`]): each field, read unsigned at its
    /// width, starts restricted to its range, so the choices on it allow those values only
    /// and every witness the search finds lies in them (a reading of the same bytes as
    /// signed takes the same bit pattern in the search). A note says so.
    pub(super) fn seed_ranges(&mut self) {
        let mut ranges = Vec::new();
        for (index, p) in self.ir.kernel_params.iter().enumerate() {
            for &(at, size, lo, hi) in &p.ranges {
                ranges.push((p.offset + at, size, lo, hi, index, at));
            }
        }
        for (off, size, lo, hi, index, at) in ranges {
            let explores = self.cfg.choices.is_some();
            self.notes.push(format!(
                "param {index} bytes {at}..{}: {} (a `--param` range): the verdict covers no other value",
                at + u32::from(size),
                if explores {
                    format!("only the values {lo}..={hi} are explored")
                } else {
                    format!("restricted to {lo}..={hi}, but this run does not explore, so the field is a plain unknown")
                }
            ));
            if !explores {
                continue;
            }
            let Some(term) = self.src.terms.param(off, size, false) else {
                continue;
            };
            let key = (term, size * 8);
            if lo == hi {
                self.constrain(key, vec![(lo, lo)]);
            } else {
                self.choices.store.insert(key, vec![(lo, hi)]);
            }
        }
    }

    /// The pinned variables of the plan ([`crate::ChoicePlan::pins`]): each starts the run
    /// determined to its value, so a term built from it before its first choice (the main
    /// loop of an unrolled loop counts `n - (n & 3)` down before the remainder loop reads
    /// `n & 3`) is read with that value.
    pub(super) fn seed_pins(&mut self) {
        let cfg = self.cfg.clone();
        let pins = cfg.choices.as_ref().map_or(&[][..], |p| &p.pins[..]);
        let mut keys = Vec::new();
        for (v, x) in pins {
            if let Some(t) = self.expr_term(&v.expr, v.bits) {
                keys.push(((t, v.bits), *x));
            }
        }
        for (key, x) in keys {
            self.constrain(key, vec![(x, x)]);
        }
    }

    /// The term an [`Expr`] of a pin names: a parameter field, a constant, or `and` of two
    /// such at `bits` bits (`None` for anything else).
    fn expr_term(&mut self, e: &Expr, bits: u8) -> Option<TermId> {
        match e {
            Expr::Param {
                index,
                start,
                end,
                signed,
                ..
            } => {
                let p = self.ir.kernel_params.get(*index as usize)?;
                let size = u8::try_from(end.checked_sub(*start)?).ok()?;
                self.src
                    .terms
                    .param(p.offset.checked_add(*start)?, size, *signed)
            }
            Expr::Const(c) => self.src.terms.constant(*c),
            Expr::Op { op, args } if op == "and" => {
                let [a, b] = &args[..] else { return None };
                let (a, b) = (self.expr_term(a, bits)?, self.expr_term(b, bits)?);
                self.src.terms.op(
                    super::terms::OpKind::And,
                    bits,
                    false,
                    [Some(a), Some(b), None],
                )
            }
            _ => None,
        }
    }

    /// A value that must be known (a synchronization operand, a shared address) is unknown
    /// in register operand `o` but carries a term: a choice between the smallest value the
    /// path allows for the first undetermined parameter field the term reads and the other
    /// values. Returns whether the register is known afterwards (the caller re-executes the
    /// instruction).
    pub(super) fn split(&mut self, t: usize, pc: u32, o: crate::ir::Opnd) -> bool {
        use crate::ir::{MemBase, Opnd};
        if self.cfg.choices.is_none() {
            return false;
        }
        if self.induct_active() {
            // A value the abstract run needs known: no value-by-value split there.
            self.induct_refuse(t, pc, super::induct::Undecided::NewChoice);
            return false;
        }
        let r = match o {
            Opnd::Reg(r) | Opnd::NotReg(r) | Opnd::Mem(MemBase::Reg(r), _) => r,
            _ => return false,
        };
        let i = self.reg_at(t, r);
        let Some(term) = self.src.term(self.unk[i]) else {
            return false;
        };
        // Split the outermost sub-term the choices already constrain (a trip count), else
        // the first parameter field the term reads.
        let mut subs = Vec::new();
        self.src.terms.subterms(term, &mut subs);
        let constrained = subs.iter().find_map(|&x| {
            if self.choices.known.contains_key(&x) {
                return None;
            }
            let (w, _) = self.src.terms.natural(x);
            self.choices
                .store
                .keys()
                .filter(|(b, bits)| *b == x && *bits >= w)
                .min_by_key(|(_, bits)| *bits)
                .copied()
        });
        let mut leaves = Vec::new();
        self.src.terms.params(term, &mut leaves);
        let leaf = leaves
            .into_iter()
            .find(|l| !self.choices.known.contains_key(l))
            .map(|l| (l, self.src.terms.natural(l).0));
        let Some(key) = constrained.or(leaf) else {
            return false;
        };
        let (leaf, w) = key;
        // One value at a time (each a choice: this value, or the others), until the field
        // is determined, the bound takes the value, or the path is abandoned.
        for _ in 0..=self.cfg.choices.as_ref().map_or(0, |p| p.max_trips) {
            let all = vec![(0, top(w))];
            let cur = self.choices.store.get(&key).cloned().unwrap_or(all);
            // Only sizes are explored value by value: values that read as negative (signed)
            // are left unexplored, and so is the rest of this path.
            let half = top(w.saturating_sub(1).max(1));
            let from_witness = self
                .witness_value(leaf, key.1)
                .filter(|&v| v <= half && cur.iter().any(|&(lo, hi)| lo <= v && v <= hi));
            let first = intersect(&cur, &[(0, half)]).first().map(|&(lo, _)| lo);
            let Some(v) = from_witness.or(first) else {
                let variable = self.variable(key);
                self.choices.not_explored.push((variable, cur));
                self.choices.abandoned = true;
                self.stop = true;
                return true;
            };
            match self.choose_on(t, pc, key, &[(v, v)], true) {
                Some(true) => break,
                Some(false) if !self.stop => continue,
                _ => break,
            }
        }
        self.unk[i] == 0
    }

    /// The branch at `pc` on the predicate `gu` is assumed to go the way whose predicate
    /// value is `value` (its other side only traps: `docs/semantics.md` §6.2): the
    /// assumption constrains the predicate's variable like a choice without an alternative.
    /// A path on which no input satisfies it is abandoned (it has no executions the verdict
    /// covers).
    pub(super) fn assume(&mut self, gu: u32, value: bool) {
        if self.cfg.choices.is_none() {
            return;
        }
        let Some(p) = self.src.term(gu) else {
            return;
        };
        let c = self.constraint(p);
        let key = (c.base, c.bits);
        let all = vec![(0, top(c.bits))];
        let cur = self.choices.store.get(&key).cloned().unwrap_or(all);
        let side = if value {
            c.when_true.clone()
        } else {
            c.when_false.clone()
        };
        let values = intersect(&cur, &side);
        if values.is_empty() {
            self.choices.abandoned = true;
            self.stop = true;
            return;
        }
        if values == cur {
            return;
        }
        if self.induct_active() {
            // An assertion the path so far does not decide, inside the abstract run.
            let pc = self.th[self.cursor].pc;
            self.induct_refuse(self.cursor, pc, super::induct::Undecided::Assumption);
            return;
        }
        match self.witness(key, &values) {
            Some(w) => self.choices.witness = Some(w),
            None => {
                // No input found that satisfies the assumption on this path: not explored.
                let variable = self.variable(key);
                self.choices.not_explored.push((variable, values));
                self.choices.abandoned = true;
                self.stop = true;
                return;
            }
        }
        self.constrain(key, values);
    }

    /// The value of the predicate `gu` carries when the choices so far decide it (every
    /// value they allow gives the same answer); `None` otherwise, or when the run does not
    /// explore.
    pub(super) fn forced(&mut self, gu: u32) -> Option<bool> {
        self.cfg.choices.as_ref()?;
        if self.choices.store.is_empty() {
            return None;
        }
        let p = self.src.term(gu)?;
        let c = self.constraint(p);
        let cur = self.choices.store.get(&(c.base, c.bits))?;
        if !overlaps(cur, &c.when_false) {
            Some(true)
        } else if !overlaps(cur, &c.when_true) {
            Some(false)
        } else {
            None
        }
    }

    /// The choices determined variable `(base, bits)` to be `v`: every register whose term
    /// the determined variables now fix becomes known (in every thread).
    fn determined(&mut self, (base, bits): (TermId, u8), v: u64) {
        let (w, signed) = self.src.terms.natural(base);
        if w > bits {
            return;
        }
        if w < 64 && v >> w != 0 {
            // No value of the base term reads as `v`: the path is infeasible, and nothing
            // is concretised on it.
            return;
        }
        let value = if signed { sx(v, w) as u64 } else { v };
        self.choices.known.insert(base, value);
        // Values under the smaller `known` may have changed.
        self.choices.determined_memo.clear();
        let mut memo = std::mem::take(&mut self.choices.determined_memo);
        // The register files are scanned a block at a time, and a block none of whose ids is
        // termed is skipped after one OR over it: few registers carry terms, and testing
        // every id one by one was most of a choice's cost (CUTLASS Hopper kernels: 686 K ids
        // per choice).
        const BLOCK: usize = 64;
        let len = self.unk.len();
        for start in (0..len).step_by(BLOCK) {
            let end = (start + BLOCK).min(len);
            let any = self.unk[start..end].iter().fold(0, |a, &u| a | u);
            if any & TERMED == 0 {
                continue;
            }
            for i in start..end {
                let u = self.unk[i];
                if u & TERMED == 0 {
                    continue;
                }
                let Some(term) = self.src.term(u) else {
                    continue;
                };
                if let Some(x) = self.src.terms.eval(term, &self.choices.known, &mut memo) {
                    self.vals[i] = x;
                    self.unk[i] = 0;
                }
            }
        }
        self.choices.determined_memo = memo;
    }

    /// The value of the termed id `u` when the determined variables fix it.
    pub(super) fn determined_value(&mut self, u: u32) -> Option<u64> {
        let term = self.src.term(u)?;
        self.determined_term(term)
    }

    /// The value of `term` when the determined variables fix it.
    fn determined_term(&mut self, term: TermId) -> Option<u64> {
        // A term that folded to a constant (`Terms::op`): known whatever the inputs.
        if let Node::Const(c) = self.src.terms.node(term) {
            return Some(c);
        }
        if self.choices.known.is_empty() {
            return None;
        }
        let memo = &mut self.choices.determined_memo;
        self.src.terms.eval(term, &self.choices.known, memo)
    }

    /// Bytes of the memo of determined values (what `--max-memory` counts with the term
    /// arena): at most one entry per term.
    pub(super) fn memo_footprint(&self) -> u64 {
        let entry = std::mem::size_of::<(TermId, Option<u64>)>() + 1;
        (self.choices.determined_memo.capacity() * entry) as u64
    }

    /// Restricts variable `key` to `values` (determining it when one value is left).
    fn constrain(&mut self, key: (TermId, u8), values: Set) {
        self.choices.resolved.clear();
        self.choices.store.insert(key, values.clone());
        if !self.choices.order.contains(&key) {
            self.choices.order.push(key);
        }
        if let [(lo, hi)] = values[..]
            && lo == hi
        {
            self.determined(key, lo);
        }
    }

    /// Values of the parameter fields under which every variable's term lies in its
    /// allowed values, with variable `key` restricted to `values`: `None` when the search
    /// finds none. The search proposes, per field, small values and the boundaries of the
    /// allowed values (for a term over one field, by binary search on the field, which
    /// finds them when the term is monotone), and checks each proposal exactly by
    /// evaluating every term; the first proposal that passes, in increasing order, wins.
    ///
    /// Every term evaluation counts against the run's search budget
    /// ([`crate::ChoicePlan::search_budget`]); when it runs out the search finds nothing and
    /// [`Choices::search_exhausted`] says why.
    fn witness(&mut self, key: (TermId, u8), values: &[(u64, u64)]) -> Option<Vec<(TermId, u64)>> {
        let budget = self
            .cfg
            .choices
            .as_ref()
            .map_or(0, |p| p.search_budget)
            .saturating_sub(self.choices.search);
        if budget == 0 {
            self.choices.search_exhausted = true;
            return None;
        }
        let (found, work) = self.find_witness(key, values, budget);
        self.choices.search = self.choices.search.saturating_add(work);
        if found.is_none() && work >= budget {
            self.choices.search_exhausted = true;
        }
        found
    }

    /// [`Machine::witness`]'s search, with at most `budget` term nodes evaluated: the witness
    /// found and the evaluations made. The variables fall into groups that share no field
    /// (fields whose bytes overlap count as one): each group is searched on its
    /// own ([`Machine::find_group_witness`]), and the witness is theirs together (a path's
    /// exit on `m <= 0 || n <= 0` and its trip count over `min(k, gk)` are two groups of two
    /// fields, not one of four, whose proposals ran out before `m` left 0).
    fn find_witness(
        &self,
        key: (TermId, u8),
        values: &[(u64, u64)],
        budget: u64,
    ) -> (Option<Vec<(TermId, u64)>>, u64) {
        let terms = &self.src.terms;
        let mut vars: Vec<(VarKey, &[(u64, u64)])> = self
            .choices
            .store
            .iter()
            .filter(|(k, _)| **k != key)
            .map(|(k, s)| (*k, s.as_slice()))
            .collect();
        vars.push((key, values));
        vars.sort_by_key(|(k, _)| *k);
        let mut leaves: Vec<TermId> = Vec::new();
        let mut var_leaves = Vec::with_capacity(vars.len());
        for ((base, _), _) in &vars {
            let mut l = Vec::new();
            terms.params(*base, &mut l);
            for x in &l {
                if !leaves.contains(x) {
                    leaves.push(*x);
                }
            }
            var_leaves.push(l);
        }
        if leaves.is_empty() {
            return (None, 0);
        }
        // Groups: a union-find over the leaves, joined by shared variables and shared bytes.
        let mut parent: Vec<usize> = (0..leaves.len()).collect();
        fn root(parent: &mut [usize], mut k: usize) -> usize {
            while parent[k] != k {
                parent[k] = parent[parent[k]];
                k = parent[k];
            }
            k
        }
        let index = |leaf: &TermId| leaves.iter().position(|x| x == leaf).unwrap_or(0);
        for l in &var_leaves {
            if let Some(first) = l.first() {
                let a = root(&mut parent, index(first));
                for x in &l[1..] {
                    let b = root(&mut parent, index(x));
                    parent[b] = a;
                }
            }
        }
        // Fields whose bytes overlap (one field read at two widths) are one group.
        let overlap = |x: TermId, y: TermId| match (self.field_bytes(x), self.field_bytes(y)) {
            (Some((a, n)), Some((b, m))) => {
                u64::from(a) < u64::from(b) + u64::from(m)
                    && u64::from(b) < u64::from(a) + u64::from(n)
            }
            _ => false,
        };
        for k in 0..leaves.len() {
            for j in 0..k {
                if overlap(leaves[j], leaves[k]) {
                    let (a, b) = (root(&mut parent, j), root(&mut parent, k));
                    parent[b] = a;
                }
            }
        }
        let mut work = 0u64;
        let mut found: Vec<(TermId, u64)> = Vec::with_capacity(leaves.len());
        let mut done = vec![false; leaves.len()];
        for k in 0..leaves.len() {
            let r = root(&mut parent, k);
            if done[r] {
                continue;
            }
            done[r] = true;
            let group_leaves: Vec<TermId> = (0..leaves.len())
                .filter(|&j| root(&mut parent, j) == r)
                .map(|j| leaves[j])
                .collect();
            let (group_vars, group_var_leaves): (Vec<_>, Vec<_>) = vars
                .iter()
                .zip(&var_leaves)
                .filter(|(_, l)| l.first().is_some_and(|x| group_leaves.contains(x)))
                .map(|(v, l)| (*v, l.clone()))
                .unzip();
            let (w, spent) = self.find_group_witness(
                &group_vars,
                &group_var_leaves,
                &group_leaves,
                budget.saturating_sub(work),
            );
            work = work.saturating_add(spent);
            match w {
                Some(w) => found.extend(w),
                None => return (None, work),
            }
        }
        // A variable of no field (a constant term) holds or not.
        let mut known = FxHashMap::default();
        for &(leaf, v) in &found {
            known.insert(leaf, self.field_value(leaf, v));
        }
        let mut memo = FxHashMap::default();
        for (((base, bits), set), l) in vars.iter().zip(&var_leaves) {
            if l.is_empty() {
                work = work.saturating_add(u64::from(terms.size(*base)));
                let holds = terms.eval(*base, &known, &mut memo).is_some_and(|x| {
                    let x = x & top(*bits);
                    set.iter().any(|&(lo, hi)| lo <= x && x <= hi)
                });
                if !holds {
                    return (None, work);
                }
            }
        }
        // In the order of the leaves (first variable first).
        found.sort_by_key(|&(leaf, _)| leaves.iter().position(|&x| x == leaf));
        (Some(found), work)
    }

    /// The bytes (offset, size) a field (`leaf`) reads; `None` for another term.
    fn field_bytes(&self, leaf: TermId) -> Option<(u32, u8)> {
        match self.src.terms.node(leaf) {
            Node::Param { off, size, .. } => Some((off, size)),
            _ => None,
        }
    }

    /// The register value of a field (`leaf`) that reads `v`.
    fn field_value(&self, leaf: TermId, v: u64) -> u64 {
        let (w, signed) = self.src.terms.natural(leaf);
        if signed { sx(v, w) as u64 } else { v }
    }

    /// The search of [`Machine::find_witness`] over one group: `vars` (with their fields
    /// `var_leaves`) read only the fields `leaves`, at most four. It proposes, per field,
    /// small values, the bounds of the sets of variables over that field alone and, where a
    /// term crosses a bound of its set, the field value there (binary search, assuming the
    /// term grows with the field; for a term over several fields, with all of them equal),
    /// and checks each proposal exactly by evaluating every term; the first proposal that
    /// passes, in increasing order, wins.
    fn find_group_witness(
        &self,
        vars: &[(VarKey, &[(u64, u64)])],
        var_leaves: &[Vec<TermId>],
        leaves: &[TermId],
        budget: u64,
    ) -> (Option<Vec<(TermId, u64)>>, u64) {
        let terms = &self.src.terms;
        // Each evaluation of a term is charged its size, which bounds the nodes a
        // (memoised) evaluation visits.
        let work = std::cell::Cell::new(0u64);
        let charge = |t: TermId| work.set(work.get() + u64::from(terms.size(t)));
        if leaves.is_empty() || leaves.len() > 4 {
            return (None, 0);
        }
        let value_of = |leaf: TermId, v: u64| self.field_value(leaf, v);
        // One list of field values and one of node values, refilled per evaluation.
        let mut known: Vec<(TermId, u64)> = Vec::with_capacity(leaves.len());
        let mut vals = Vec::new();
        // Each variable's term, compiled once for the bisections of every field it reads.
        let singles: Vec<std::sync::Arc<Compiled>> = (vars.iter())
            .map(|((base, _), _)| self.compiled_alone(*base))
            .collect();
        let mut cands: Vec<Vec<u64>> = Vec::with_capacity(leaves.len());
        for &leaf in leaves {
            let (w, _) = terms.natural(leaf);
            let max = top(w);
            let half = top(w.saturating_sub(1).max(1));
            let mut c: Vec<u64> = (0..=8).chain((4..31).map(|s| 1u64 << s)).collect();
            for ((((base, bits), set), l), compiled) in vars.iter().zip(var_leaves).zip(&singles) {
                if !l.contains(&leaf) {
                    continue;
                }
                let alone = l.as_slice() == [leaf];
                for &(lo, hi) in set.iter() {
                    if alone && *base == leaf && *bits >= w {
                        // The first and last 16 values of the interval: every residue of a
                        // remainder (`n & 15` at most) the path may also fix.
                        c.extend((0..16).map(|d| lo.saturating_add(d).min(hi)));
                        c.extend((0..16).map(|d| hi.saturating_sub(d).max(lo)));
                        continue;
                    }
                    // The smallest field value whose term reads at least `x`, assuming the
                    // term grows with the field over 0..=half (every field of the term set
                    // to that value: `min(k, gk)` crosses where both do).
                    let mut f = |v: u64| {
                        known.clear();
                        for &x in l {
                            known.push((x, value_of(x, v.min(top(terms.natural(x).0)))));
                        }
                        charge(*base);
                        let mut value = None;
                        compiled.eval_roots(&known, &mut vals, |_, x| {
                            value = x;
                            true
                        });
                        value.map(|x| x & top(*bits))
                    };
                    for x in [lo, hi.saturating_add(1)] {
                        // A bisection done before is not done again: its result and its work
                        // are charged as they were, when that work leaves budget over (the
                        // bisection then stops where it stopped before).
                        let key = (leaf, *base, *bits, x);
                        let done = self.choices.bisections.borrow().get(&key).copied();
                        let a = match done {
                            Some((a, spent)) if work.get().saturating_add(spent) < budget => {
                                work.set(work.get() + spent);
                                a
                            }
                            _ => {
                                let before = work.get();
                                let (mut a, mut b) = (0u64, half);
                                let mut cut = false;
                                while a < b {
                                    if work.get() >= budget {
                                        cut = true;
                                        break;
                                    }
                                    let m = a + (b - a) / 2;
                                    match f(m) {
                                        Some(y) if y >= x => b = m,
                                        Some(_) => a = m + 1,
                                        None => break,
                                    }
                                }
                                if !cut {
                                    let spent = work.get() - before;
                                    self.choices.bisections.borrow_mut().insert(key, (a, spent));
                                }
                                a
                            }
                        };
                        c.extend([a.saturating_sub(1), a, a.saturating_add(1)]);
                    }
                }
            }
            c.retain(|&v| v <= max);
            c.sort_unstable();
            c.dedup();
            cands.push(c);
        }
        // Leaves that read the same bytes (a field loaded both signed and unsigned) take one
        // value: the first of them proposes it, with the candidates of all.
        let rep: Vec<usize> = leaves
            .iter()
            .enumerate()
            .map(|(k, &l)| {
                let b = self.field_bytes(l);
                leaves[..k]
                    .iter()
                    .position(|&x| b.is_some() && self.field_bytes(x) == b)
                    .unwrap_or(k)
            })
            .collect();
        for k in 0..leaves.len() {
            if rep[k] != k {
                let more = std::mem::take(&mut cands[k]);
                cands[rep[k]].extend(more);
                cands[rep[k]].sort_unstable();
                cands[rep[k]].dedup();
            }
        }
        let free: Vec<usize> = (0..leaves.len()).filter(|&k| rep[k] == k).collect();
        let bases: Vec<TermId> = vars.iter().map(|((base, _), _)| *base).collect();
        let last = self.choices.last_group.borrow().clone();
        let compiled = match last {
            Some((b, c)) if b == bases => c,
            _ => {
                let c = std::sync::Arc::new(terms.compile(&bases));
                *self.choices.last_group.borrow_mut() = Some((bases, c.clone()));
                c
            }
        };
        // Proposals in increasing order of the first field, then the next, … (bounded).
        let mut idx = vec![0usize; leaves.len()];
        let mut tried = 0u32;
        loop {
            tried += 1;
            if tried > 20_000 || work.get() >= budget {
                return (None, work.get());
            }
            known.clear();
            for (k, &leaf) in leaves.iter().enumerate() {
                known.push((leaf, value_of(leaf, cands[rep[k]][idx[rep[k]]])));
            }
            // Each term charged as it is evaluated, up to the first that fails.
            let ok = compiled.eval_roots(&known, &mut vals, |k, x| {
                let ((base, bits), set) = vars[k];
                charge(base);
                x.is_some_and(|x| {
                    let x = x & top(bits);
                    set.iter().any(|&(lo, hi)| lo <= x && x <= hi)
                })
            });
            if ok {
                let found = leaves
                    .iter()
                    .enumerate()
                    .map(|(k, &l)| (l, cands[rep[k]][idx[rep[k]]]))
                    .collect();
                return (Some(found), work.get());
            }
            // Next proposal (the last field varies fastest).
            let mut j = free.len();
            loop {
                if j == 0 {
                    return (None, work.get());
                }
                j -= 1;
                let k = free[j];
                idx[k] += 1;
                if idx[k] < cands[k].len() {
                    break;
                }
                idx[k] = 0;
            }
        }
    }

    /// `base` compiled alone ([`Choices::compiled`]: once per run).
    fn compiled_alone(&self, base: TermId) -> std::sync::Arc<Compiled> {
        if let Some(c) = self.choices.compiled.borrow().get(&base) {
            return c.clone();
        }
        let c = std::sync::Arc::new(self.src.terms.compile(&[base]));
        self.choices.compiled.borrow_mut().insert(base, c.clone());
        c
    }

    /// The value of term `t` (read at `bits` bits) under the last witness.
    fn witness_value(&self, t: TermId, bits: u8) -> Option<u64> {
        let ws = self.choices.witness.as_ref()?;
        let mut known = FxHashMap::default();
        for &(leaf, v) in ws {
            let (w, signed) = self.src.terms.natural(leaf);
            known.insert(leaf, if signed { sx(v, w) as u64 } else { v });
        }
        let mut memo = FxHashMap::default();
        self.src
            .terms
            .eval(t, &known, &mut memo)
            .map(|v| v & top(bits))
    }

    /// When every variable of the run reads the same one parameter field: that field and
    /// its values in `0..=SCAN_LIMIT` under which a launch follows this run (every variable's
    /// term, evaluated at the value, lies in the values the run allows).
    pub(super) fn path_inputs(&self) -> Option<(Expr, Set)> {
        let terms = &self.src.terms;
        let mut leaf = None;
        for (base, _) in self.choices.store.keys() {
            let mut l = Vec::new();
            terms.params(*base, &mut l);
            match (l.as_slice(), leaf) {
                ([x], None) => leaf = Some(*x),
                ([x], Some(y)) if *x == y => {}
                _ => return None,
            }
        }
        let leaf = leaf?;
        // A float parameter's first values as bit patterns are +0 and subnormals: a scan of
        // them would read as a range of the parameter it is not.
        if matches!(self.expr(leaf), Expr::Param { float: true, .. }) {
            return None;
        }
        let (w, signed) = terms.natural(leaf);
        let limit = crate::explore::SCAN_LIMIT.min(top(w));
        // The scan evaluates every variable's term at every value: within what is left of
        // the search budget, or not at all (the coverage then names no input values).
        let left = self
            .cfg
            .choices
            .as_ref()
            .map_or(0, |p| p.search_budget)
            .saturating_sub(self.choices.search);
        let nodes: u64 = self
            .choices
            .store
            .keys()
            .map(|(base, _)| u64::from(terms.size(*base)))
            .sum();
        let cost = (limit + 1).saturating_mul(nodes);
        if cost > left {
            return None;
        }
        let mut out: Set = Vec::new();
        let bases: Vec<TermId> = self.choices.store.keys().map(|(base, _)| *base).collect();
        let sets: Vec<(u8, &Set)> = (self.choices.store.iter())
            .map(|((_, bits), set)| (*bits, set))
            .collect();
        let compiled = terms.compile(&bases);
        let mut vals = Vec::new();
        for v in 0..=limit {
            let known = [(leaf, if signed { sx(v, w) as u64 } else { v })];
            let ok = compiled.eval_roots(&known, &mut vals, |k, x| {
                let (bits, set) = sets[k];
                x.is_some_and(|x| {
                    let x = x & top(bits);
                    set.iter().any(|&(lo, hi)| lo <= x && x <= hi)
                })
            });
            if ok {
                match out.last_mut() {
                    Some(last) if last.1 + 1 == v => last.1 = v,
                    _ => out.push((v, v)),
                }
            }
        }
        Some((self.expr(leaf), out))
    }

    /// The parameter fields of the last witness, as data.
    pub(super) fn witness_exprs(&self) -> Vec<(Expr, u64)> {
        self.choices
            .witness
            .iter()
            .flatten()
            .map(|&(leaf, v)| (self.expr(leaf), v))
            .collect()
    }

    /// Up to `n` other inputs that follow the run's choices, each with one variable pinned to
    /// another value its choices allow than the one the witness gives it: the other end of
    /// each interval of its values and the start of the next, the variables of the latest
    /// choices first. A failing path's first witness (the smallest values) may miss what
    /// only its other values show: CUTLASS's pipelined GEMM without its mainloop
    /// `__syncthreads()` races at one k-tile, on a path of "at most one k-tile" whose witness
    /// is K = 0. At most [`ALTERNATIVE_SEARCHES_PER_WITNESS`] searches per witness asked
    /// for, each of at most [`ALTERNATIVE_SEARCH`] term nodes, not charged to the
    /// exploration's search budget (only a failing path's replay asks).
    pub(super) fn alternative_witness_exprs(&mut self, n: u32) -> Vec<Vec<(Expr, u64)>> {
        let mut out = Vec::new();
        if n == 0 {
            return out;
        }
        let Some(witness) = self.choices.witness.clone() else {
            return out;
        };
        let known: FxHashMap<TermId, u64> = witness.iter().copied().collect();
        let keys: Vec<VarKey> = self.choices.order.iter().rev().copied().collect();
        // Searches, found or not: a path of many variables and intervals must not run one
        // search per interval end.
        let mut searches = 0u32;
        for key in keys {
            let Some(set) = self.choices.store.get(&key).cloned() else {
                continue;
            };
            let mut memo = FxHashMap::default();
            let current = self
                .src
                .terms
                .eval(key.0, &known, &mut memo)
                .map(|v| v & top(key.1));
            let mut candidates: Vec<u64> = Vec::new();
            for &(lo, hi) in &set {
                for v in [lo, hi] {
                    if Some(v) != current && !candidates.contains(&v) {
                        candidates.push(v);
                    }
                }
            }
            for v in candidates {
                if out.len() as u32 >= n || searches >= ALTERNATIVE_SEARCHES_PER_WITNESS * n {
                    return out;
                }
                searches += 1;
                let (found, _) = self.find_witness(key, &[(v, v)], ALTERNATIVE_SEARCH);
                if let Some(w) = found {
                    let exprs: Vec<(Expr, u64)> =
                        w.iter().map(|&(leaf, x)| (self.expr(leaf), x)).collect();
                    if !out.contains(&exprs) {
                        out.push(exprs);
                    }
                }
            }
        }
        out
    }

    /// The values the run's choices allow, per variable in order of first choice.
    pub(super) fn path_values(&self) -> Vec<(Variable, Set)> {
        self.choices
            .order
            .iter()
            .map(|key| {
                let values = self.choices.store.get(key).cloned().unwrap_or_default();
                (self.variable(*key), values)
            })
            .collect()
    }

    pub(super) fn variable(&self, (base, bits): (TermId, u8)) -> Variable {
        Variable {
            expr: self.expr(base),
            bits,
        }
    }

    /// The term `t` as data for the report.
    pub(super) fn expr(&self, t: TermId) -> Expr {
        match self.src.terms.node(t) {
            Node::Param { off, size, signed } => {
                if let Some(e) = self.input_expr(off, size, signed) {
                    return e;
                }
                let at = off as usize;
                let found = self.ir.kernel_params.iter().enumerate().find(|(_, p)| {
                    (p.offset as usize..p.offset as usize + p.size as usize).contains(&at)
                });
                match found {
                    Some((index, p)) => {
                        let start = off - p.offset;
                        Expr::Param {
                            index: index as u32,
                            name: p.name.clone(),
                            start,
                            end: start + u32::from(size),
                            whole: !p.aggregate && start == 0 && u32::from(size) == p.size,
                            signed,
                            float: p.float && start == 0 && u32::from(size) == p.size,
                        }
                    }
                    None => Expr::Op {
                        op: "param-window".to_owned(),
                        args: vec![Expr::Const(u64::from(off))],
                    },
                }
            }
            Node::Const(c) => Expr::Const(c),
            Node::Affine { base, k, bits } => Expr::Plus {
                base: Box::new(self.expr(base)),
                k,
                bits,
            },
            Node::Op {
                op: op @ (OpKind::FArith(..) | OpKind::FCvt { .. }),
                bits,
                args,
                ..
            } => {
                // Floating-point operations name their types (`mul.f64`, `cvt.rzi.s32.f64`);
                // their constant operands are shown as floats.
                let (name, width) = match op {
                    OpKind::FCvt {
                        dst, src, round, ..
                    } => {
                        let r = ["", "rz", "rm", "rp", "rni"]
                            .get(usize::from(round))
                            .copied()
                            .unwrap_or("");
                        let r = match (r, dst.is_int() && !src.is_int()) {
                            ("", _) => String::new(),
                            (r, true) if r != "rni" => format!(".{r}i"),
                            (r, _) => format!(".{r}"),
                        };
                        let ty = |t: crate::ir::Ty| format!("{}{}", t.kind_name(), t.bits);
                        (format!("cvt{r}.{}.{}", ty(dst), ty(src)), src.bits)
                    }
                    _ => (format!("{}.f{bits}", op.name()), bits),
                };
                Expr::Op {
                    op: name,
                    args: args
                        .iter()
                        .flatten()
                        .map(|&a| match self.src.terms.node(a) {
                            Node::Const(c) if matches!(width, 32 | 64) => {
                                Expr::Float { width, bits: c }
                            }
                            _ => self.expr(a),
                        })
                        .collect(),
                }
            }
            Node::Op {
                op, signed, args, ..
            } => Expr::Op {
                // The operations whose result depends on the operands' signedness say which
                // (as comparisons do): `shr.s`, `min.u`, ...
                op: match op {
                    OpKind::Shr
                    | OpKind::Div
                    | OpKind::Rem
                    | OpKind::Min
                    | OpKind::Max
                    | OpKind::MulHi
                    | OpKind::MulWide => {
                        format!("{}.{}", op.name(), if signed { "s" } else { "u" })
                    }
                    _ => op.name().to_owned(),
                },
                args: args.iter().flatten().map(|&a| self.expr(a)).collect(),
            },
            Node::Cmp {
                rel, signed, a, b, ..
            } => Expr::Op {
                op: format!("{}.{}", rel.name(), if signed { "s" } else { "u" }),
                args: vec![self.expr(a), self.expr(b)],
            },
            Node::Not(a) => Expr::Op {
                op: "not".to_owned(),
                args: vec![self.expr(a)],
            },
            Node::Period { step, .. } => Expr::Op {
                op: "periods".to_owned(),
                args: vec![Expr::Const(step)],
            },
            Node::Atom { id, .. } => Expr::Op {
                op: "value".to_owned(),
                args: vec![Expr::Const(u64::from(id))],
            },
        }
    }
}

/// Whether two interval lists share a value (`!intersect(a, b).is_empty()`, without building
/// the intersection; the lists are short).
fn overlaps(a: &[(u64, u64)], b: &[(u64, u64)]) -> bool {
    a.iter()
        .any(|&(alo, ahi)| b.iter().any(|&(blo, bhi)| alo <= bhi && blo <= ahi))
}
