//! Named barriers (`bar`, `barrier`, `bar.red`) and `bar.warp.sync`.

use super::alu::mask;
use super::{Machine, State};
use crate::ir::{Inst, Op, Opnd, RedKind};
use crate::unverifiable::{SyncOp, Value, Why};
use weft_program::{
    BarrierCount, BarrierOp, Command, Completion, Event, InstId, Participant, ThreadId,
};

impl Machine<'_> {
    pub(super) fn barrier_error(&mut self, t: usize) {
        self.th[t].state = State::Error;
        self.stop = true;
    }

    pub(super) fn barrier(
        &mut self,
        t: usize,
        pc: u32,
        inst: &Inst,
        op: BarrierOp,
        red: Option<RedKind>,
    ) {
        let ops = self.ir.operands(inst);
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        if self.th[t].may > 0 {
            self.unverifiable(
                t,
                pc,
                Why::UnderBranch(SyncOp::Barrier),
                None,
                self.th[t].may_src,
                true,
            );
            return;
        }
        let (first, n_args) = if red.is_some() {
            (1, ops.len().saturating_sub(2))
        } else {
            (0, ops.len())
        };
        let id_op = o(first);
        let (id, uid) = self.rd(t, id_op, pc);
        if uid != 0 {
            self.unverifiable(
                t,
                pc,
                Why::Unknown(Value::BarrierId),
                Some(id_op),
                uid,
                true,
            );
            return;
        }
        let count = if n_args >= 2 {
            let c_op = o(first + 1);
            let (c, uc) = self.rd(t, c_op, pc);
            if uc != 0 {
                self.unverifiable(
                    t,
                    pc,
                    Why::Unknown(Value::BarrierCount),
                    Some(c_op),
                    uc,
                    true,
                );
                return;
            }
            BarrierCount::Threads(mask(c, 32) as u32)
        } else {
            BarrierCount::All
        };
        if let Some(kind) = red {
            let p = ops.last().copied().unwrap_or(Opnd::Sink);
            let (v, u) = self.rd(t, p, pc);
            let th = &mut self.th[t];
            th.red_kind = kind;
            th.red_in = (v & 1, u);
            th.wait_dest = match o(0) {
                Opnd::Reg(r) => Some(r),
                _ => None,
            };
        }
        let id = mask(id, 32) as u32;
        let cmd = Command::barrier(op, id, count, inst.aligned, InstId(pc));
        let command = self.push(t, cmd);
        let participant = Participant {
            thread: ThreadId(t as u32),
            command,
            op,
        };
        // The lane waits for the rest of its warp (PTX counts arrival per warp), and a
        // sync/red also for the generation to complete.
        self.th[t].state = State::BarWait;
        match self
            .bars
            .register(participant, id, count, InstId(pc), inst.aligned)
        {
            Ok(events) => self.barrier_events(events),
            Err(_) => self.barrier_error(t),
        }
    }

    /// Lock-step (`warp` module): the lanes of `group` (bit `l`: thread `wb + l`; all at
    /// `pc`, running, and no other lane between the first and the last running) execute the
    /// named-barrier `arrive` or `sync` at `pc`, each as its step through the general
    /// interpreter would, in lane order: one command each, then the lanes register at once
    /// ([`weft_program::BarrierFile::register_lanes`]). In the reference schedule each lane's
    /// step ends its turn (it waits for its warp), so the order is the same. Returns false,
    /// having done nothing, when a lane needs the general interpreter: a guard or an operand
    /// that is not a known register or immediate, an operation under an unknown branch,
    /// lanes with different ids or counts, a step that reaches a budget.
    pub(super) fn warp_barrier(&mut self, wb: usize, group: u32, pc: u32, inst: &Inst) -> bool {
        let Op::Bar(op) = inst.op else {
            return false;
        };
        if op == BarrierOp::Red {
            return false;
        }
        let lanes = u64::from(group.count_ones());
        let cta_limit = self.cfg.step_limit.saturating_mul(crate::CTA_STEP_FACTOR);
        if self.instructions + lanes > cta_limit {
            return false;
        }
        let ops = self.ir.operands(inst);
        let operand = |m: &Self, t: usize, k: usize| -> Option<u64> {
            let (v, u) = match *ops.get(k)? {
                Opnd::Reg(r) => {
                    let i = m.reg_at(t, r);
                    (m.vals[i], m.unk[i])
                }
                Opnd::Imm(v) => (v, 0),
                _ => return None,
            };
            (u == 0).then_some(v)
        };
        let mut key = None;
        let mut m = group;
        while m != 0 {
            let t = wb + m.trailing_zeros() as usize;
            m &= m - 1;
            let th = &self.th[t];
            if th.may > 0 || th.executed >= self.cfg.step_limit {
                return false;
            }
            if let Some(g) = inst.guard {
                let i = self.reg_at(t, g);
                if self.unk[i] != 0 || (self.vals[i] & 1 != 0) == inst.guard_neg {
                    return false;
                }
            }
            let Some(id) = operand(self, t, 0) else {
                return false;
            };
            let count = if ops.len() >= 2 {
                let Some(c) = operand(self, t, 1) else {
                    return false;
                };
                BarrierCount::Threads(mask(c, 32) as u32)
            } else {
                BarrierCount::All
            };
            let k = (mask(id, 32) as u32, count);
            if *key.get_or_insert(k) != k {
                return false;
            }
        }
        let Some((id, count)) = key else {
            return false;
        };
        let cmd = Command::barrier(op, id, count, inst.aligned, InstId(pc));
        let mut participants = std::mem::take(&mut self.bar_lanes);
        participants.clear();
        let mut m = group;
        while m != 0 {
            let t = wb + m.trailing_zeros() as usize;
            m &= m - 1;
            let th = &mut self.th[t];
            th.executed += 1;
            th.pc = pc + 1;
            th.state = State::BarWait;
        }
        self.instructions += lanes;
        self.push_lanes(wb, group, cmd, |t, command| {
            participants.push(Participant {
                thread: ThreadId(t as u32),
                command,
                op,
            })
        });
        let mut events = Vec::new();
        let result = self.bars.register_lanes(
            &participants,
            id,
            count,
            InstId(pc),
            inst.aligned,
            &mut events,
        );
        self.bar_lanes = participants;
        self.barrier_events(events);
        if result.is_err() {
            // The lanes after the failing one took their step too: repeat the run lane by
            // lane, which stops at the failing lane.
            self.reorder();
        }
        true
    }

    pub(super) fn warp_sync(&mut self, t: usize, pc: u32, m: Opnd) {
        if self.th[t].may > 0 {
            self.unverifiable(
                t,
                pc,
                Why::UnderBranch(SyncOp::WarpSync),
                None,
                self.th[t].may_src,
                true,
            );
            return;
        }
        let (mv, mu) = self.rd(t, m, pc);
        if mu != 0 {
            self.unverifiable(t, pc, Why::Unknown(Value::WarpSyncMask), Some(m), mu, true);
            return;
        }
        let command = self.push(t, Command::warp_sync(mv as u32, InstId(pc)));
        let participant = Participant {
            thread: ThreadId(t as u32),
            command,
            op: BarrierOp::Sync,
        };
        self.th[t].state = State::BarWait;
        match self.bars.register_warp(participant, mv as u32) {
            Ok(events) => self.barrier_events(events),
            Err(_) => self.barrier_error(t),
        }
    }

    /// Wakes the threads a barrier operation or exit released: the non-blocking lanes of a
    /// warp that registered, the blocking participants of a completed generation.
    pub(super) fn barrier_events(&mut self, events: Vec<Event>) {
        for e in events {
            match e {
                Event::WarpRegistered { lanes, .. } => {
                    for p in lanes {
                        let th = &mut self.th[p.thread.index()];
                        if !p.op.blocks() && th.state == State::BarWait {
                            th.state = State::Run;
                        }
                    }
                }
                Event::Completed(c) => self.complete(c),
            }
        }
    }

    pub(super) fn complete(&mut self, c: Completion) {
        let reds: Vec<usize> = c
            .participants
            .iter()
            .filter(|p| p.op == BarrierOp::Red)
            .map(|p| p.thread.index())
            .collect();
        if let Some(&first) = reds.first() {
            let kind = self.th[first].red_kind;
            let mut u = 0;
            let mut count = 0u64;
            for &t in &reds {
                let (v, vu) = self.th[t].red_in;
                u = self.src.union(u, vu);
                count += v;
            }
            let n = reds.len() as u64;
            let v = match kind {
                RedKind::Popc => count,
                RedKind::And => u64::from(count == n),
                RedKind::Or => u64::from(count > 0),
            };
            for &t in &reds {
                if let Some(d) = self.th[t].wait_dest {
                    self.wr(t, Opnd::Reg(d), if u == 0 { v } else { 0 }, u);
                }
            }
        }
        for p in &c.participants {
            let th = &mut self.th[p.thread.index()];
            if p.op.blocks() && th.state == State::BarWait {
                th.state = State::Run;
            }
        }
    }
}
