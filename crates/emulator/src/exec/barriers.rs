//! Named barriers (`bar`, `barrier`, `bar.red`) and `bar.warp.sync`.

use super::alu::mask;
use super::values::LANES;
use super::{Machine, State};
use crate::ir::{Inst, Op, Opnd, RedKind, RegId};
use crate::unverifiable::{SyncOp, Value};
use weft_program::{
    BarrierCount, BarrierOp, Command, Completion, Event, InstId, Participant, ThreadId,
};

/// The lanes of `group` as a range of lane numbers, when they are consecutive (a warp's
/// lanes that run together usually are): its loops then walk slices, without a bounds
/// check per lane.
#[inline]
fn lane_run(group: u32) -> Option<std::ops::Range<usize>> {
    let low = group.trailing_zeros();
    let run = group.checked_shr(low).unwrap_or(0);
    (run != 0 && run & run.wrapping_add(1) == 0)
        .then(|| low as usize..(32 - group.leading_zeros()) as usize)
}

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
        if self.under_branch(t, pc, SyncOp::Barrier) {
            return;
        }
        let (first, n_args) = if red.is_some() {
            (1, ops.len().saturating_sub(2))
        } else {
            (0, ops.len())
        };
        let id_op = o(first);
        let Some(id) = self.known_operand(t, pc, id_op, Value::BarrierId) else {
            return;
        };
        let count = if n_args >= 2 {
            let c_op = o(first + 1);
            let Some(c) = self.known_operand(t, pc, c_op, Value::BarrierCount) else {
                return;
            };
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
        let op = match inst.op {
            Op::Bar(op) => op,
            Op::WarpSync => return self.warp_sync_lanes(wb, group, pc, inst),
            _ => return false,
        };
        if op == BarrierOp::Red {
            return false;
        }
        let ops = self.ir.operands(inst);
        let Some(key) = self.lanes_agree(wb, group, inst, ops, |m, t| {
            let id = m.lane_operand(t, *ops.first()?)?;
            let count = match ops.get(1) {
                Some(&c) => BarrierCount::Threads(mask(m.lane_operand(t, c)?, 32) as u32),
                None => BarrierCount::All,
            };
            Some((mask(id, 32) as u32, count))
        }) else {
            return false;
        };
        let (id, count) = key;
        let cmd = Command::barrier(op, id, count, inst.aligned, InstId(pc));
        let participants = self.barrier_steps(wb, group, pc, cmd, op);
        let mut events = std::mem::take(&mut self.bar_events);
        let result = self.bars.register_lanes(
            &participants,
            id,
            count,
            InstId(pc),
            inst.aligned,
            &mut events,
        );
        self.bar_lanes = participants;
        self.wake(&mut events);
        self.bar_events = events;
        if result.is_err() {
            // The lanes after the failing one took their step too: repeat the run lane by
            // lane, which stops at the failing lane.
            self.reorder();
        }
        true
    }

    /// [`Machine::warp_barrier`] for a `bar.warp.sync`: the lanes of `group` take their
    /// steps in lane order, one command each, then register on their warp's barrier in that
    /// order, at once ([`weft_program::BarrierFile::register_warp_lanes`]). Each lane's step
    /// ends its turn in the reference schedule (it waits) unless its registration completes
    /// the barrier, which only the group's last lane can: every lane of the group is a
    /// member (the mask names the last one). Returns false, having done nothing, when a lane
    /// needs the general interpreter: a guard that does not hold or is unknown, a mask that
    /// is unknown, differs between lanes or leaves out a lane of the group, an operation
    /// under an unknown branch, a step that reaches a budget.
    fn warp_sync_lanes(&mut self, wb: usize, group: u32, pc: u32, inst: &Inst) -> bool {
        let Some(&m_op) = self.ir.operands(inst).first() else {
            return false;
        };
        let mask = self.lanes_agree(wb, group, inst, &[m_op], |m, t| {
            m.lane_operand(t, m_op).map(|v| v as u32)
        });
        let Some(mask) = mask.filter(|&mask| group & !mask == 0) else {
            return false;
        };
        let cmd = Command::warp_sync(mask, InstId(pc));
        let participants = self.barrier_steps(wb, group, pc, cmd, BarrierOp::Sync);
        let mut events = std::mem::take(&mut self.bar_events);
        let result = self
            .bars
            .register_warp_lanes(&participants, mask, &mut events);
        self.bar_lanes = participants;
        self.wake(&mut events);
        self.bar_events = events;
        if result.is_err() {
            // The lanes after the failing one took their step too: repeat the run lane by
            // lane, which stops at the failing lane.
            self.reorder();
        }
        true
    }

    /// The operands `of` reads for every lane of `group` (in lane order), when each lane can
    /// take its lock-step barrier step at `inst` (not under an unknown branch, within its
    /// step budget, its guard known and holding, the CTA budget allowing all of them) and
    /// `of` gives every lane the same answer. `of` reads only `operands` (registers and
    /// immediates): when each register holds one known value in every lane of the group
    /// (the common case), the first lane's answer is every lane's.
    #[inline]
    fn lanes_agree<K: PartialEq>(
        &self,
        wb: usize,
        group: u32,
        inst: &Inst,
        operands: &[Opnd],
        of: impl Fn(&Self, usize) -> Option<K>,
    ) -> Option<K> {
        if self.over_cta(self.instructions + u64::from(group.count_ones())) || group == 0 {
            return None;
        }
        let ws = self.slot(wb);
        let uniform = operands.iter().all(|&o| match o {
            Opnd::Reg(r) => self.uniform_row(ws, r, group),
            Opnd::Imm(_) => true,
            _ => false,
        });
        if uniform {
            // Every check of the loop below but `of`'s, which gives each lane the same.
            let guard = inst.guard.map(|g| (ws + g.index() * LANES, inst.guard_neg));
            if let Some(run) = lane_run(group) {
                // The same checks over the lanes' slices.
                let step_limit = self.cfg.step_limit;
                let ths = &self.th[wb + run.start..wb + run.end];
                let blocked = ths.iter().fold(false, |b, th| {
                    b | (th.may > 0) | (th.executed >= step_limit)
                });
                if blocked {
                    return None;
                }
                if let Some((i, neg)) = guard {
                    let lanes = i + run.start..i + run.end;
                    let (vals, unk) = (&self.vals[lanes.clone()], &self.unk[lanes]);
                    let fails = vals
                        .iter()
                        .zip(unk)
                        .fold(false, |f, (&v, &u)| f | (u != 0) | ((v & 1 != 0) == neg));
                    if fails {
                        return None;
                    }
                }
                return of(self, wb + run.start);
            }
            each_lane!(group, |l| {
                let th = &self.th[wb + l];
                if th.may > 0 || th.executed >= self.cfg.step_limit {
                    return None;
                }
                if let Some((i, neg)) = guard
                    && (self.unk[i + l] != 0 || (self.vals[i + l] & 1 != 0) == neg)
                {
                    return None;
                }
            });
            return of(self, wb + group.trailing_zeros() as usize);
        }
        let mut key = None;
        each_lane!(group, |l| {
            let t = wb + l;
            let th = &self.th[t];
            if th.may > 0 || th.executed >= self.cfg.step_limit {
                return None;
            }
            if let Some(g) = inst.guard {
                let i = self.reg_at(t, g);
                if self.unk[i] != 0 || (self.vals[i] & 1 != 0) == inst.guard_neg {
                    return None;
                }
            }
            let k = of(self, t)?;
            match &key {
                Some(first) if *first != k => return None,
                Some(_) => {}
                None => key = Some(k),
            }
        });
        key
    }

    /// Whether register `r` holds one known value in every lane of `group` (bit `l`: lane
    /// `l` of the warp whose slot is `ws`).
    #[inline]
    fn uniform_row(&self, ws: usize, r: RegId, group: u32) -> bool {
        let i = ws + r.index() * LANES;
        let first = i + group.trailing_zeros() as usize;
        let (v, u) = (self.vals[first], self.unk[first]);
        if u != 0 {
            return false;
        }
        if let Some(run) = lane_run(group) {
            // Consecutive lanes (a whole warp, usually): their row compared without a branch
            // per lane (an OR of the differences, which the compiler vectorizes).
            let lanes = i + run.start..i + run.end;
            let (vals, unk) = (&self.vals[lanes.clone()], &self.unk[lanes]);
            let differ = vals
                .iter()
                .zip(unk)
                .fold(0, |d, (&x, &xu)| d | (x ^ v) | u64::from(xu));
            return differ == 0;
        }
        let mut same = true;
        each_lane!(group, |l| {
            same &= self.vals[i + l] == v && self.unk[i + l] == 0;
        });
        same
    }

    /// The known value of lane `t`'s operand `o` (a register or an immediate).
    #[inline]
    fn lane_operand(&self, t: usize, o: Opnd) -> Option<u64> {
        let (v, u) = match o {
            Opnd::Reg(r) => {
                let i = self.reg_at(t, r);
                (self.vals[i], self.unk[i])
            }
            Opnd::Imm(v) => (v, 0),
            _ => return None,
        };
        (u == 0).then_some(v)
    }

    /// The lock-step barrier steps of the lanes of `group` at `pc`: each lane counts its
    /// step, moves past `pc`, waits and records `cmd` (as [`Machine::push`] does, then
    /// [`Machine::lanes_recorded`] for the group). Returns the lanes as participants of
    /// operation `op`, in lane order (in the `bar_lanes` scratch vector, which the caller
    /// gives back).
    fn barrier_steps(
        &mut self,
        wb: usize,
        group: u32,
        pc: u32,
        cmd: Command,
        op: BarrierOp,
    ) -> Vec<Participant> {
        debug_assert!(!cmd.is_access(), "accesses go through push");
        let mut participants = std::mem::take(&mut self.bar_lanes);
        participants.clear();
        participants.reserve(group.count_ones() as usize);
        self.instructions += u64::from(group.count_ones());
        let next = pc + 1;
        // One lane's step: its state, its command list and its count of non-access
        // commands.
        let step = |t: usize, th: &mut super::Thread, cmds: &mut Vec<Command>, synced: &mut u32| {
            th.executed += 1;
            th.pc = next;
            th.state = State::BarWait;
            let command = cmds.len() as u32;
            cmds.push(cmd);
            *synced = synced.wrapping_add(1);
            Participant {
                thread: ThreadId(t as u32),
                command,
                op,
            }
        };
        if let Some(run) = lane_run(group) {
            // Consecutive lanes (the common case): one pass over the lanes' slices, without
            // a bounds check or a reload per lane.
            let lanes = wb + run.start..wb + run.end;
            let first = lanes.start;
            let th = &mut self.th[lanes.clone()];
            let cmds = &mut self.cmds[lanes.clone()];
            let synced = &mut self.coll.synced[lanes];
            participants.extend(
                th.iter_mut()
                    .zip(cmds)
                    .zip(synced)
                    .enumerate()
                    .map(|(k, ((th, cmds), synced))| step(first + k, th, cmds, synced)),
            );
        } else {
            each_lane!(group, |l| {
                let t = wb + l;
                participants.push(step(
                    t,
                    &mut self.th[t],
                    &mut self.cmds[t],
                    &mut self.coll.synced[t],
                ));
            });
        }
        self.lanes_recorded(wb, group, cmd);
        participants
    }

    pub(super) fn warp_sync(&mut self, t: usize, pc: u32, m: Opnd) {
        if self.under_branch(t, pc, SyncOp::WarpSync) {
            return;
        }
        let Some(mv) = self.known_operand(t, pc, m, Value::WarpSyncMask) else {
            return;
        };
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
    pub(super) fn barrier_events(&mut self, mut events: Vec<Event>) {
        self.wake(&mut events);
    }

    /// [`Machine::barrier_events`] of the events in `events`, which it leaves empty (the
    /// lock-step barriers keep one list, `bar_events`, instead of a new one per warp).
    fn wake(&mut self, events: &mut Vec<Event>) {
        for e in events.drain(..) {
            match e {
                Event::WarpRegistered { lanes, .. } => {
                    // The lanes of one registration share its operation (the key of the
                    // gather holds it; the emulator registers every lane of a warp barrier
                    // as a sync): a blocking one's lanes wait for the completion, and only
                    // an arrive's are visited.
                    debug_assert!(
                        lanes
                            .iter()
                            .all(|p| Some(p.op) == lanes.first().map(|q| q.op))
                    );
                    if lanes.first().is_some_and(|p| !p.op.blocks()) {
                        // A slice: its bounds stay in registers while states are written.
                        let th: &mut [super::Thread] = &mut self.th;
                        for p in &lanes {
                            let th = &mut th[p.thread.index()];
                            if !p.op.blocks() && th.state == State::BarWait {
                                th.state = State::Run;
                            }
                        }
                    }
                    self.bars.recycle_lanes(lanes);
                }
                Event::Completed(c) => self.complete(c),
            }
        }
    }

    pub(super) fn complete(&mut self, c: Completion) {
        // A warp's `bar.warp.sync` gathers store only the warp's lanes.
        if matches!(c.key, weft_program::BarrierKey::Named(_)) {
            self.charge_node();
        }
        // Wake the blocking participants (a generation of a CTA-wide barrier is hundreds of
        // them); the reducing ones, rarely, are gathered after. They all reduce or none do
        // (the lanes of one registration share its operation, and `BarrierFile` reports a
        // registration that mixes `bar.red` with other operations as an error): the first
        // says which. Waking first is the same: a reduction's results are written to
        // registers, which the states do not touch.
        let any_red = c
            .participants
            .first()
            .is_some_and(|p| p.op == BarrierOp::Red);
        debug_assert!(
            c.participants
                .iter()
                .all(|p| (p.op == BarrierOp::Red) == any_red)
        );
        // A slice: its bounds stay in registers while states are written.
        let th: &mut [super::Thread] = &mut self.th;
        for p in &c.participants {
            let th = &mut th[p.thread.index()];
            if p.op.blocks() && th.state == State::BarWait {
                th.state = State::Run;
            }
        }
        let reds: Vec<usize> = if any_red {
            c.participants
                .iter()
                .filter(|p| p.op == BarrierOp::Red)
                .map(|p| p.thread.index())
                .collect()
        } else {
            Vec::new()
        };
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
        self.bars.recycle_participants(c.participants);
    }
}

#[cfg(test)]
mod tests {
    use super::lane_run;

    #[test]
    fn lane_run_is_the_range_of_consecutive_lanes() {
        assert_eq!(lane_run(u32::MAX), Some(0..32));
        assert_eq!(lane_run(1), Some(0..1));
        assert_eq!(lane_run(1 << 31), Some(31..32));
        assert_eq!(lane_run(0b0111_1000), Some(3..7));
        assert_eq!(lane_run(u32::MAX << 5), Some(5..32));
        assert_eq!(lane_run(0), None);
        assert_eq!(lane_run(0b101), None);
        assert_eq!(lane_run(!(1 << 7)), None);
        // Against the lanes each_lane! visits.
        for group in [
            0u32,
            1,
            6,
            0b1011,
            0xffff_0000,
            0x8000_0001,
            u32::MAX,
            0x7fff_fffe,
        ] {
            let mut lanes = Vec::new();
            each_lane!(group, |l| {
                lanes.push(l);
            });
            let consecutive = lanes.windows(2).all(|w| w[1] == w[0] + 1) && !lanes.is_empty();
            let expected = consecutive.then(|| lanes[0]..lanes[lanes.len() - 1] + 1);
            assert_eq!(lane_run(group), expected, "group {group:#x}");
        }
    }
}
