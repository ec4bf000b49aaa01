//! Control flow: calls, returns, exits, branches and paths under unknown guards.

use super::memory::Mem;
use super::terms::{OpKind, TermId};
use super::{Frame, Machine, PathEnd, PathStart, State};
use crate::ir::{Inst, MemBase, Op, Opnd, Pc};
use crate::unverifiable::{GuardedOp, Region, Why};
use weft_program::{Command, InstId, ThreadId, WARP_SIZE};

impl Machine<'_> {
    pub(super) fn call(&mut self, t: usize, pc: u32, ops: &[Opnd]) {
        let Some(fpos) = ops.iter().position(|o| matches!(o, Opnd::Func(_))) else {
            self.unverifiable(t, pc, Why::IndirectCall, None, 0, true);
            return;
        };
        let Opnd::Func(callee) = ops[fpos] else {
            return;
        };
        let rets = match fpos.checked_sub(1).and_then(|k| ops.get(k)) {
            Some(Opnd::List(s, l)) => (*s, *l),
            _ => (0, 0),
        };
        let args = match ops.get(fpos + 1) {
            Some(Opnd::List(s, l)) => self.ir.list(*s, *l).to_vec(),
            _ => Vec::new(),
        };
        let caller = self.ir.insts.get(pc as usize).map(|i| i.func);
        if caller == Some(callee) || self.th[t].stack.iter().any(|f| f.func == callee) {
            self.unverifiable(t, pc, Why::RecursiveCall, None, 0, true);
            return;
        }
        let Some(f) = self.ir.funcs.get(callee.index()) else {
            return;
        };
        let pbase = t * self.ir.param_size as usize;
        for (k, arg) in args.into_iter().enumerate() {
            let Some(&(off, size)) = f.params.get(k) else {
                break;
            };
            match arg {
                Opnd::Mem(MemBase::Param, src) => {
                    for b in 0..size as usize {
                        let (v, u) = self.read_bytes(Mem::Param, pbase, src as usize + b, 1);
                        self.write_bytes(Mem::Param, pbase, off as usize + b, 1, v, u);
                    }
                }
                other => {
                    let (v, u) = self.rd(t, other, pc);
                    self.write_bytes(Mem::Param, pbase, off as usize, size.min(8) as usize, v, u);
                }
            }
        }
        let start = f.start;
        self.th[t].stack.push(Frame {
            ret_pc: pc + 1,
            rets,
            func: callee,
        });
        self.th[t].pc = start.0;
    }

    pub(super) fn do_ret(&mut self, t: usize, pc: u32) {
        let Some(frame) = self.th[t].stack.pop() else {
            self.do_exit(t, pc);
            return;
        };
        let pbase = t * self.ir.param_size as usize;
        let rets = self.ir.list(frame.rets.0, frame.rets.1).to_vec();
        if let Some(f) = self.ir.funcs.get(frame.func.index()) {
            let slots = f.rets.clone();
            for (k, r) in rets.into_iter().enumerate() {
                let Some(&(off, size)) = slots.get(k) else {
                    break;
                };
                if let Opnd::Mem(MemBase::Param, dst) = r {
                    for b in 0..size as usize {
                        let (v, u) = self.read_bytes(Mem::Param, pbase, off as usize + b, 1);
                        self.write_bytes(Mem::Param, pbase, dst as usize + b, 1, v, u);
                    }
                }
            }
        }
        self.th[t].pc = frame.ret_pc;
    }

    pub(super) fn do_exit(&mut self, t: usize, pc: u32) {
        if self.th[t].may > 0 {
            self.th[t].path_exit = true;
            return;
        }
        // The exit is the thread's last command: room for exactly one more (a full vector
        // would otherwise double, to be shrunk again when the program is finished).
        self.cmds[t].reserve_exact(1);
        self.push(t, Command::exit(InstId(pc)));
        self.th[t].state = State::Exited;
        match self.bars.exit(ThreadId(t as u32)) {
            Ok(events) => self.barrier_events(events),
            Err(_) => self.barrier_error(t),
        }
        self.retry_collectives(t / WARP_SIZE as usize);
    }

    /// Executes `inst`, whose guard register `guard` is unknown with sources `gu`.
    pub(super) fn unknown_guard(&mut self, t: usize, pc: u32, inst: &Inst, guard: Opnd, gu: u32) {
        // A way into doomed code (it only traps) is an assertion the verdict assumes holds,
        // also where the choices so far decide the predicate: a path whose inputs fail it
        // (a loop's trip count chosen 0, then `assert(n >= 1)`) has no execution the
        // verdict covers, and `assume` abandons it. Without this, such a path reached the
        // trap as if no input could avoid it ("fails whatever the input").
        match inst.op {
            Op::Bra => {
                // Validated: a `bra`'s first operand is a label.
                if let Some(&Opnd::Label(target)) = self.ir.operands(inst).first()
                    && self.assume_not_doomed(t, pc, target.0, pc + 1)
                {
                    // The assumed side's predicate value constrains the choices.
                    let taken = self.th[t].pc == target.0;
                    self.assume(gu, taken != inst.guard_neg);
                    return;
                }
            }
            op if op.traps() => {
                self.assume_not_taken(t, pc, pc);
                self.assume(gu, inst.guard_neg);
                return;
            }
            _ => {}
        }
        // The choices so far decide the predicate: the guard is as good as known.
        if let Some(pred) = self.forced(gu) {
            if pred != inst.guard_neg {
                self.exec(t, pc, inst);
            } else {
                self.th[t].pc = pc + 1;
            }
            return;
        }
        match inst.op {
            Op::Bra => {
                // Validated: a `bra`'s first operand is a label.
                let Some(&Opnd::Label(target)) = self.ir.operands(inst).first() else {
                    return;
                };
                self.fork(t, pc, PathStart::At(target.0), pc + 1, gu, guard);
            }
            Op::CallExtern(crate::ir::Extern::Unknown) => {
                self.call_extern_unknown(t, pc, Some(guard), gu)
            }
            Op::Exit => self.fork(t, pc, PathStart::Exit, pc + 1, gu, guard),
            Op::Ret if self.th[t].stack.is_empty() => {
                self.fork(t, pc, PathStart::Exit, pc + 1, gu, guard)
            }
            Op::BraIdx if self.decided(t, pc, inst, gu).is_some() => {}
            Op::BraIdx => {
                self.unverifiable(
                    t,
                    pc,
                    Why::Guarded(GuardedOp::IndexedBranch),
                    Some(guard),
                    gu,
                    true,
                );
            }
            Op::Ret | Op::Call if self.decided(t, pc, inst, gu).is_some() => {}
            op if op.is_sync() && self.decided(t, pc, inst, gu).is_some() => {}
            Op::Ret | Op::Call => {
                self.unverifiable(
                    t,
                    pc,
                    Why::Guarded(GuardedOp::CallOrReturn),
                    Some(guard),
                    gu,
                    true,
                );
            }
            op if op.is_sync() => {
                self.unverifiable(
                    t,
                    pc,
                    Why::Guarded(GuardedOp::Synchronization),
                    Some(guard),
                    gu,
                    true,
                );
            }
            // Under `split_data_branches`: a choice like any guard with a term.
            _ if self.cfg.split_data_branches && self.decided(t, pc, inst, gu).is_some() => {}
            _ => {
                if self.src.term(gu).is_some() {
                    self.data_forks = true;
                }
                let th = &mut self.th[t];
                th.may += 1;
                let saved = th.may_src;
                let merged = self.src.union(saved, gu);
                self.th[t].may_src = merged;
                let floor = std::mem::replace(&mut self.side_floor[t], self.copies.len() as u32);
                self.exec(t, pc, inst);
                self.side_floor[t] = floor;
                let th = &mut self.th[t];
                th.may -= 1;
                th.may_src = saved;
                if th.state == State::Coll(pc) {
                    th.state = State::Run;
                    th.pc = pc + 1;
                }
                if !matches!(inst.op, Op::Bra) {
                    let u = self.src.union(gu, merged);
                    // Destinations keep either their old or their new value: unknown.
                    self.clobber(t, inst, u);
                }
                self.th[t].pc = pc + 1;
            }
        }
    }

    /// Executes `inst` (guarded by a predicate whose id is `gu`) as a choice when its guard
    /// can be decided ([`Machine::choose`]): `Some(())` when it was, `None` otherwise.
    fn decided(&mut self, t: usize, pc: u32, inst: &Inst, gu: u32) -> Option<()> {
        let pred = self.choose(t, pc, gu)?;
        if pred != inst.guard_neg {
            self.exec(t, pc, inst);
        } else {
            self.th[t].pc = pc + 1;
        }
        Some(())
    }

    /// `brx.idx index, table`: jumps to the `index`-th label of the table. An unknown index
    /// or one past the end of the table (undefined behaviour in PTX) is unverifiable.
    pub(super) fn branch_indexed(&mut self, t: usize, pc: u32, index: Opnd, table: Opnd) {
        let (v, u) = self.rd(t, index, pc);
        let Opnd::List(start, len) = table else {
            return;
        };
        if u != 0 {
            let why = Why::IndexedBranchUnknown { entries: len };
            self.unverifiable(t, pc, why, Some(index), u, true);
            return;
        }
        let target = usize::try_from(v)
            .ok()
            .and_then(|k| self.ir.list(start, len).get(k).copied());
        match target {
            Some(Opnd::Label(target)) => self.th[t].pc = target.0,
            _ => {
                let why = Why::IndexedBranchOutOfRange {
                    index: v,
                    entries: len,
                };
                self.unverifiable(t, pc, why, Some(index), 0, true);
            }
        }
    }

    /// The registers the instructions between the unknown branch at `pc` and its join name
    /// (operands, memory bases, guards): a superset of those either side can write. Every
    /// register when the region calls a function (whose registers it does not name).
    fn fork_regs(&mut self, pc: u32) -> std::sync::Arc<[u32]> {
        if let Some(r) = self.fork_regs.get(&pc) {
            return r.clone();
        }
        let ir = self.ir;
        let mut regs = Vec::new();
        let mut named = vec![false; self.nregs];
        let walked = walk_region(ir, pc, |x| {
            let inst = ir.insts.get(x as usize).ok_or(())?;
            if matches!(inst.op, Op::Call | Op::CallExtern(_)) {
                return Err(());
            }
            regs.clear();
            for &o in ir.operands(inst) {
                crate::ir::registers(ir, o, &mut regs);
            }
            regs.extend(inst.guard.map(|g| g.index()));
            for &r in &regs {
                *named.get_mut(r).ok_or(())? = true;
            }
            Ok(())
        });
        let list: Vec<u32> = (0..self.nregs as u32)
            .filter(|&r| walked.is_err() || named[r as usize])
            .collect();
        let result: std::sync::Arc<[u32]> = std::sync::Arc::from(list);
        self.fork_regs.insert(pc, result.clone());
        result
    }

    /// Whether the fork at `pc` runs its not-taken side (from `fall`) first: when only the
    /// taken side (from `target`) issues asynchronous copies before the join (calls are not
    /// followed: a side that issues copies only in a callee keeps the usual order).
    fn fall_first(&mut self, pc: u32, target: PathStart, fall: u32, join: Option<u32>) -> bool {
        if let Some(&f) = self.fall_first.get(&pc) {
            return f;
        }
        let ir = self.ir;
        let issues = |start: PathStart| {
            let PathStart::At(s) = start else {
                return false;
            };
            walk_until(ir, vec![s], join, |x| match ir.insts.get(x as usize) {
                Some(i) if i.op.issues_async() => Err(()),
                _ => Ok(()),
            })
            .is_err()
        };
        let f = issues(target) && !issues(PathStart::At(fall));
        self.fall_first.insert(pc, f);
        f
    }

    /// Checks that the region between an unknown branch and its join point contains no
    /// synchronization and no loop; returns the join (`None`: the function's exit).
    pub(super) fn region(&mut self, pc: u32) -> Result<Option<u32>, Region> {
        if let Some(&r) = self.region_cache.get(&pc) {
            return r;
        }
        let ir = self.ir;
        let result = if ir.reaches_exit.get(pc as usize).copied().unwrap_or(false) {
            walk_region(ir, pc, |x| {
                if x == pc {
                    Err(Region::UnknownTripCount)
                } else if ir.syncs(Pc(x)) {
                    Err(Region::Synchronizes(InstId(x)))
                } else {
                    Ok(())
                }
            })
        } else {
            Err(Region::LoopWithoutExit)
        };
        self.region_cache.insert(pc, result);
        result
    }

    /// The branch at `pc` on the predicate with sources `gu` as a choice ([`Machine::choose`]):
    /// thread `t` goes to the chosen side (`target` when the predicate, less the guard's
    /// negation, holds; else `fall`). False, having done nothing, when it is no choice (the
    /// run does not explore, or the predicate has no term).
    fn take_chosen_side(
        &mut self,
        t: usize,
        pc: u32,
        target: PathStart,
        fall: u32,
        gu: u32,
    ) -> bool {
        let Some(pred) = self.choose(t, pc, gu) else {
            return false;
        };
        let neg = self.ir.insts.get(pc as usize).is_some_and(|i| i.guard_neg);
        if pred != neg {
            match target {
                PathStart::At(x) => self.th[t].pc = x,
                PathStart::Exit => self.do_exit(t, pc),
            }
        } else {
            self.th[t].pc = fall;
        }
        true
    }

    /// Runs both sides of a branch on an unknown predicate (taken: from `target`; not taken:
    /// from `fall`) to their join, then merges the register files.
    pub(super) fn fork(
        &mut self,
        t: usize,
        pc: u32,
        target: PathStart,
        fall: u32,
        gu: u32,
        guard: Opnd,
    ) {
        // Under `split_data_branches`, every branch with a term is a choice (each side its
        // own path), whether or not it decides synchronization.
        if self.cfg.split_data_branches && self.take_chosen_side(t, pc, target, fall, gu) {
            return;
        }
        let join = match self.region(pc) {
            Ok(j) => j,
            Err(why) => {
                // A choice on the predicate's term, when the run explores.
                if self.take_chosen_side(t, pc, target, fall, gu) {
                    return;
                }
                self.unverifiable(t, pc, Why::BranchDecidesSync(why), Some(guard), gu, true);
                return;
            }
        };
        if self.src.term(gu).is_some() {
            self.data_forks = true;
        }
        // Thread `t`'s registers the region names (`values::Machine::slot`: register `r` at
        // `base + r·LANES`): the others are the same after either side.
        let base = self.slot(t);
        let regs = self.fork_regs(pc);
        let n = regs.len();
        let at = |k: usize| base + regs[k] as usize * super::values::LANES;
        let (mut snap_v, mut snap_u) = self.fork_bufs.pop().unwrap_or_default();
        let (mut a_v, mut a_u) = self.fork_bufs.pop().unwrap_or_default();
        snap_v.clear();
        snap_u.clear();
        snap_v.extend((0..n).map(|k| self.vals[at(k)]));
        snap_u.extend((0..n).map(|k| self.unk[at(k)]));
        let snap_stack = self.th[t].stack.clone();
        let depth = snap_stack.len();
        let saved = self.th[t].may_src;
        let merged = self.src.union(saved, gu);
        self.th[t].may += 1;
        self.th[t].may_src = merged;
        // The two sides exclude each other, but their commands follow one another in the
        // thread's program: an asynchronous copy the first side issues is still in flight
        // during the second, whose accesses of the same bytes would read as a race with it
        // (FlashAttention-2: a row is copied by `cp.async` when in range, else zero-filled by
        // a store). No synchronization lies between the two, so their order is free: a side
        // that issues copies runs second when the other issues none.
        let fall_first = self.fall_first(pc, target, fall, join);
        let (first, second) = if fall_first {
            (PathStart::At(fall), target)
        } else {
            (target, PathStart::At(fall))
        };
        // The predicate's value under which each side runs: copies issued there are dropped
        // at the end when the path's choices rule that side out (a row copied by `cp.async`
        // when `row < m` is no copy on the path with m = 0; quack's RMSNorm backward).
        let side_guard = self.src.term(gu).map(|p| {
            let neg = self.ir.insts.get(pc as usize).is_some_and(|i| i.guard_neg);
            // The taken side runs when the guard register is `!neg`.
            (p, if fall_first { neg } else { !neg })
        });
        let copies_a = self.copies.len() as u32;
        self.fork_guards.extend(side_guard);
        let floor = std::mem::replace(&mut self.side_floor[t], copies_a);
        let end_a = self.run_path(t, first, join, depth);
        if side_guard.is_some() {
            self.fork_guards.pop();
        }
        let (copies_b, start_b) = (self.copies.len() as u32, self.cmds[t].len() as u32);
        a_v.clear();
        a_u.clear();
        for k in 0..n {
            let i = at(k);
            a_v.push(self.vals[i]);
            a_u.push(self.unk[i]);
            self.vals[i] = snap_v[k];
            self.unk[i] = snap_u[k];
        }
        let a_pc = self.th[t].pc;
        self.th[t].stack = snap_stack;
        self.fork_guards
            .extend(side_guard.map(|(p, want)| (p, !want)));
        self.side_floor[t] = copies_b;
        let end_b = if self.stop {
            PathEnd::Stopped
        } else {
            self.run_path(t, second, join, depth)
        };
        self.side_floor[t] = floor;
        if side_guard.is_some() {
            self.fork_guards.pop();
        }
        // The first side's copies never run alongside the second side (both issuing copies
        // is the case the order above cannot help: CUTLASS's zero-filling `cp.async` on one
        // side, a copy on the other).
        let end = (self.copies.len() as u32, self.cmds[t].len() as u32);
        if copies_b > copies_a && (end.0 > copies_b || end.1 > start_b) {
            self.exclusive.push(weft_program::ExclusiveSides {
                thread: ThreadId(t as u32),
                first: (copies_a, copies_b),
                second: (start_b, end.1),
                second_copies: end.0,
            });
        }
        self.th[t].may -= 1;
        self.th[t].may_src = saved;
        self.fork_bufs.push((snap_v, snap_u));
        if self.stop || end_a == PathEnd::Stopped || end_b == PathEnd::Stopped {
            self.stop = true;
            self.fork_bufs.push((a_v, a_u));
            return;
        }
        // The predicate the first side ran under, when it has a term: a register the two
        // sides leave different is `selp(first, second, predicate)`.
        let taken_pred = self.src.term(gu).and_then(|p| {
            let neg = self.ir.insts.get(pc as usize).is_some_and(|i| i.guard_neg);
            if neg != fall_first {
                self.src.terms.not(p)
            } else {
                Some(p)
            }
        });
        for k in 0..n {
            let i = at(k);
            if a_v[k] != self.vals[i] || a_u[k] != self.unk[i] {
                let u = self.src.union(a_u[k], self.unk[i]);
                let u = self.src.union(u, merged);
                let (v, u) = match taken_pred {
                    Some(p) => {
                        self.merged_value(p, (a_v[k], a_u[k]), (self.vals[i], self.unk[i]), u)
                    }
                    None => (0, u),
                };
                self.unk[i] = u;
                self.vals[i] = v;
            }
        }
        self.fork_bufs.push((a_v, a_u));
        match (end_a, end_b) {
            // Both sides stopped at the join, where the thread's pc now is.
            (PathEnd::Joined, PathEnd::Joined) => {}
            (PathEnd::Exited, PathEnd::Exited) => self.do_exit(t, pc),
            (PathEnd::Returned(x), PathEnd::Returned(y)) if x == y && a_pc == x => {
                self.th[t].pc = x
            }
            _ => self.unverifiable(t, pc, Why::PathsEndDifferently, Some(guard), gu, true),
        }
    }

    /// The value of a register that is `a` after the side of a branch taken when `p` holds
    /// and `b` after the other: `selp(a, b, p)` as a term (sources `u`), or the side's value
    /// when the choices so far decide `p`.
    fn merged_value(&mut self, p: TermId, a: (u64, u32), b: (u64, u32), u: u32) -> (u64, u32) {
        let ta = if a.1 == 0 {
            self.src.terms.constant(a.0)
        } else {
            self.src.term(a.1)
        };
        let tb = if b.1 == 0 {
            self.src.terms.constant(b.0)
        } else {
            self.src.term(b.1)
        };
        let (Some(ta), Some(tb)) = (ta, tb) else {
            return (0, u);
        };
        let term = self
            .src
            .terms
            .op(OpKind::Selp, 64, false, [Some(ta), Some(tb), Some(p)]);
        let u = self.src.termed(u, term);
        self.settle(0, u)
    }

    pub(super) fn run_path(
        &mut self,
        t: usize,
        start: PathStart,
        join: Option<u32>,
        depth: usize,
    ) -> PathEnd {
        self.th[t].path_exit = false;
        let PathStart::At(start) = start else {
            return PathEnd::Exited;
        };
        self.th[t].pc = start;
        loop {
            if self.stop {
                return PathEnd::Stopped;
            }
            let th = &self.th[t];
            if th.path_exit {
                self.th[t].path_exit = false;
                return PathEnd::Exited;
            }
            if th.stack.len() < depth {
                return PathEnd::Returned(th.pc);
            }
            if Some(th.pc) == join && th.stack.len() == depth {
                return PathEnd::Joined;
            }
            if th.state != State::Run {
                return PathEnd::Stopped;
            }
            self.step(t);
        }
    }
}

/// Visits every instruction between the branch at `pc` and its join (its immediate
/// post-dominator; the function's exit when it has none) once, stopping at the first error
/// `visit` returns; the join.
fn walk_region<E>(
    ir: &crate::ir::Ir,
    pc: u32,
    visit: impl FnMut(u32) -> Result<(), E>,
) -> Result<Option<u32>, E> {
    let join = ir.ipdom.get(pc as usize).copied().flatten().map(|j| j.0);
    let mut work: Vec<u32> = ir
        .successors(Pc(pc))
        .into_iter()
        .flatten()
        .map(|s| s.0)
        .collect();
    if let Some(i) = ir.insts.get(pc as usize)
        && matches!(i.op, Op::Exit | Op::Ret)
    {
        work = vec![pc + 1];
    }
    walk_until(ir, work, join, visit).map(|()| join)
}

/// Visits every instruction reachable from `work` before `join` once (calls are not
/// followed), stopping at the first error `visit` returns.
fn walk_until<E>(
    ir: &crate::ir::Ir,
    mut work: Vec<u32>,
    join: Option<u32>,
    mut visit: impl FnMut(u32) -> Result<(), E>,
) -> Result<(), E> {
    let mut seen = rustc_hash::FxHashSet::default();
    while let Some(x) = work.pop() {
        if Some(x) == join || !seen.insert(x) {
            continue;
        }
        visit(x)?;
        work.extend(ir.successors(Pc(x)).into_iter().flatten().map(|s| s.0));
    }
    Ok(())
}
