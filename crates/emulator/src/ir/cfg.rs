//! Control-flow facts about the lowered IR: successors, which functions synchronize,
//! immediate post-dominators.

use crate::ir::{Extern, FuncId, Ir, Op, Opnd, Pc};

impl Ir {
    /// Successors in the function's CFG (every edge; `None` is the function's exit).
    pub(crate) fn successors(&self, pc: Pc) -> Vec<Option<Pc>> {
        let Some(inst) = self.insts.get(pc.index()) else {
            return Vec::new();
        };
        let end = self.funcs.get(inst.func.index()).map_or(Pc(0), |f| f.end);
        let next = (pc.0 + 1 < end.0).then_some(Pc(pc.0 + 1));
        let mut out = match inst.op {
            Op::Bra => match self.operands(inst).first() {
                Some(Opnd::Label(t)) => vec![Some(*t)],
                _ => vec![None],
            },
            Op::BraIdx => match self.operands(inst).get(1) {
                Some(Opnd::List(s, n)) => self
                    .list(*s, *n)
                    .iter()
                    .filter_map(|o| match o {
                        Opnd::Label(t) => Some(Some(*t)),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            },
            Op::Ret
            | Op::Exit
            | Op::Trap
            | Op::CallExtern(Extern::AssertFail)
            | Op::UnsupportedControl
            | Op::MbarRelaxed => vec![None],
            _ => return vec![next],
        };
        if inst.guard.is_some() {
            out.push(next);
        }
        out
    }

    /// Whether instruction `pc` synchronizes, directly or through a call.
    pub(crate) fn syncs(&self, pc: Pc) -> bool {
        let Some(inst) = self.insts.get(pc.index()) else {
            return false;
        };
        match inst.op {
            Op::Call => self.operands(inst).iter().any(|o| match o {
                Opnd::Func(f) => self.funcs.get(f.index()).is_none_or(|f| f.has_sync),
                _ => false,
            }),
            op => op.is_sync(),
        }
    }

    pub(super) fn finish_sync_flags(&mut self, calls: &[(FuncId, FuncId)]) {
        for f in 0..self.funcs.len() {
            let (s, e) = (self.funcs[f].start.index(), self.funcs[f].end.index());
            let direct = self.insts[s..e].iter().any(|i| i.op.is_sync());
            self.funcs[f].has_sync = direct;
        }
        // Propagate through calls to a fixpoint.
        loop {
            let mut changed = false;
            for &(caller, callee) in calls {
                let callee_sync = self.funcs.get(callee.index()).is_some_and(|f| f.has_sync);
                if let Some(c) = self.funcs.get_mut(caller.index())
                    && callee_sync
                    && !c.has_sync
                {
                    c.has_sync = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// Immediate post-dominators per function (Cooper–Harvey–Kennedy on the reverse CFG).
    pub(super) fn compute_ipdoms(&mut self) {
        let n = self.insts.len();
        self.ipdom = vec![None; n];
        self.reaches_exit = vec![false; n];
        for f in 0..self.funcs.len() {
            let (s, e) = (self.funcs[f].start.0, self.funcs[f].end.0);
            if s >= e {
                continue;
            }
            let len = (e - s) as usize;
            let exit = len; // local index of the virtual exit
            let local = |pc: Option<Pc>| pc.map_or(exit, |pc| (pc.0 - s) as usize);
            let mut preds: Vec<Vec<usize>> = vec![Vec::new(); len + 1];
            let mut succs: Vec<Vec<usize>> = vec![Vec::new(); len + 1];
            let doomed = |pc: Pc| self.doomed.get(pc.index()).copied().unwrap_or(false);
            for pc in (s..e).map(Pc) {
                for t in self.successors(pc) {
                    if t.is_some_and(|t| t.0 < s || t.0 >= e) {
                        continue;
                    }
                    // The failing side of an assertion only traps: post-dominance is taken
                    // over the executions in which assertions hold.
                    if t.is_some_and(doomed) && !doomed(pc) {
                        continue;
                    }
                    let (u, v) = (local(Some(pc)), local(t));
                    succs[u].push(v);
                    preds[v].push(u);
                }
            }
            // Postorder of the reverse graph from exit.
            let mut order = Vec::with_capacity(len + 1);
            let mut visited = vec![false; len + 1];
            let mut stack: Vec<(usize, usize)> = vec![(exit, 0)];
            visited[exit] = true;
            while let Some(&mut (node, ref mut k)) = stack.last_mut() {
                if let Some(&p) = preds[node].get(*k) {
                    *k += 1;
                    if !visited[p] {
                        visited[p] = true;
                        stack.push((p, 0));
                    }
                } else {
                    order.push(node);
                    stack.pop();
                }
            }
            let mut po = vec![usize::MAX; len + 1];
            for (i, &node) in order.iter().enumerate() {
                po[node] = i;
            }
            let mut idom = vec![usize::MAX; len + 1];
            idom[exit] = exit;
            let mut changed = true;
            while changed {
                changed = false;
                for &node in order.iter().rev() {
                    if node == exit {
                        continue;
                    }
                    let mut new = usize::MAX;
                    for &sx in &succs[node] {
                        if idom[sx] == usize::MAX {
                            continue;
                        }
                        new = if new == usize::MAX {
                            sx
                        } else {
                            let (mut a, mut b) = (sx, new);
                            while a != b {
                                while po[a] < po[b] {
                                    a = idom[a];
                                }
                                while po[b] < po[a] {
                                    b = idom[b];
                                }
                            }
                            a
                        };
                    }
                    if new != usize::MAX && idom[node] != new {
                        idom[node] = new;
                        changed = true;
                    }
                }
            }
            for i in 0..len {
                let pc = s as usize + i;
                self.reaches_exit[pc] = visited[i];
                if visited[i] && idom[i] != usize::MAX && idom[i] != exit {
                    self.ipdom[pc] = Some(Pc(s + idom[i] as u32));
                }
            }
        }
    }
}
