//! Named barriers (`bar`, `barrier`, `bar.red`) and `bar.warp.sync`.

use super::alu::mask;
use super::{Machine, State};
use crate::ir::{Inst, Opnd, RedKind};
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
