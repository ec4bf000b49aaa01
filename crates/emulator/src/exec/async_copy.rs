//! Asynchronous copies into and out of shared memory: `cp.async`, `cp.async.bulk` and TMA.
//! Each copy's shared access is an agent of its own ([`weft_program::AsyncCopy`]), completed
//! by its issuer's group waits or by an mbarrier phase.

use super::{Addr, Machine, TmaBatch, UNCOMMITTED};
use crate::ir::{Inst, Opnd, Space};
use crate::unverifiable::{SyncOp, Value, Why};
use crate::{FindingKind, ValueSource};
use weft_program::{AccessKind, Command, CommandView, InstId, MbarrierOp, Proxy};

impl Machine<'_> {
    /// `cp.async` (non-bulk): a shared write of `size` bytes whose values come from global
    /// memory.
    pub(super) fn cp_async(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd]) {
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        let (size, us) = self.rd(t, o(2), pc);
        if us != 0 {
            self.unverifiable(
                t,
                pc,
                Why::Unknown(Value::CpAsyncSize),
                Some(o(2)),
                us,
                false,
            );
        } else if let Some(a) = self.shared_addr(t, pc, inst, o(0)) {
            let u = self.src.single(ValueSource::GlobalLoad(InstId(pc)));
            let copy =
                self.async_access(t, pc, AccessKind::Write, a, size as u32, u, Proxy::Generic);
            if let Some(g) = copy {
                self.cp_pending[t].push((g, UNCOMMITTED));
            }
        }
    }

    /// Records the shared access of an asynchronous copy issued by thread `t` as an agent of
    /// its own and checks its bounds; returns the copy's index if it is in bounds.
    #[allow(clippy::too_many_arguments)]
    fn async_access(
        &mut self,
        t: usize,
        pc: u32,
        kind: AccessKind,
        addr: u32,
        len: u32,
        write_u: u32,
        proxy: Proxy,
    ) -> Option<u32> {
        self.divert = Some(proxy);
        let ok = self.shared_access(t, pc, kind, addr, len, write_u);
        self.divert = None;
        ok.then(|| self.copies.len() as u32 - 1)
    }

    /// `cp.async.commit_group`: the thread's uncommitted copies form its next group (an
    /// empty group when there are none).
    pub(super) fn cp_async_commit(&mut self, t: usize) {
        self.cp_committed[t] = commit(&mut self.cp_pending[t], self.cp_committed[t]);
    }

    /// `cp.async.wait_group N` (`all`: `cp.async.wait_all`, which commits first and keeps
    /// no group pending).
    pub(super) fn cp_async_wait(&mut self, t: usize, pc: u32, ops: &[Opnd], all: bool) {
        let keep = if all {
            self.cp_async_commit(t);
            0
        } else {
            let o = ops.first().copied().unwrap_or(Opnd::Sink);
            match self.known_operand(t, pc, o, Value::CpAsyncWaitGroupCount) {
                Some(n) => n,
                None => return,
            }
        };
        let mut pending = std::mem::take(&mut self.cp_pending[t]);
        self.complete_groups(t, &mut pending, self.cp_committed[t], keep);
        self.cp_pending[t] = pending;
    }

    /// `cp.async.bulk.commit_group`.
    pub(super) fn bulk_commit(&mut self, t: usize) {
        self.bulk_committed[t] = commit(&mut self.bulk_pending[t], self.bulk_committed[t]);
    }

    /// `cp.async.bulk.wait_group[.read] N`: completes every committed bulk group but the
    /// `N` most recent (the only shared access of a bulk group's copies is their source
    /// read, which both forms complete).
    pub(super) fn bulk_wait(&mut self, t: usize, pc: u32, ops: &[Opnd]) {
        let o = ops.first().copied().unwrap_or(Opnd::Sink);
        let Some(keep) = self.known_operand(t, pc, o, Value::BulkWaitGroupCount) else {
            return;
        };
        let mut pending = std::mem::take(&mut self.bulk_pending[t]);
        self.complete_groups(t, &mut pending, self.bulk_committed[t], keep);
        self.bulk_pending[t] = pending;
    }

    /// Completes, at thread `t`'s current position, the copies of `pending` in a committed
    /// group older than the `keep` most recent of `committed` groups.
    fn complete_groups(
        &mut self,
        t: usize,
        pending: &mut Vec<(u32, u32)>,
        committed: u32,
        keep: u64,
    ) {
        let limit = u64::from(committed).saturating_sub(keep);
        let at = self.cmds[t].len() as u32;
        let seq = self.copies.len() as u32;
        pending.retain(|&(g, group)| {
            let done = group != UNCOMMITTED && u64::from(group) < limit;
            if done && let Some(c) = self.copies.get_mut(g as usize) {
                c.complete_at(at, seq);
            }
            !done
        });
    }

    pub(super) fn bulk_copy(
        &mut self,
        t: usize,
        pc: u32,
        inst: &Inst,
        ops: &[Opnd],
        to_shared: bool,
        mbar: bool,
    ) {
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        if mbar && self.th[t].may > 0 {
            self.unverifiable(
                t,
                pc,
                Why::UnderBranch(SyncOp::AsyncCopyToMbarrier),
                None,
                self.th[t].may_src,
                true,
            );
            return;
        }
        let (size, us) = self.rd(t, o(2), pc);
        if us != 0 {
            self.unverifiable(
                t,
                pc,
                Why::Unknown(Value::BulkCopySize),
                Some(o(2)),
                us,
                mbar,
            );
            return;
        }
        let (shared_op, kind) = if to_shared {
            (o(0), AccessKind::Write)
        } else {
            (o(1), AccessKind::Read)
        };
        let space = Space::Shared;
        let mut copy = None;
        match self.addr(t, pc, space, shared_op) {
            Addr::Shared(a) => {
                let u = self.src.single(ValueSource::GlobalLoad(InstId(pc)));
                let u = if to_shared { u } else { 0 };
                copy = self.async_access(t, pc, kind, a, size as u32, u, Proxy::Async);
                // Without an mbarrier the copy completes through bulk groups.
                if let (Some(g), false) = (copy, mbar) {
                    self.bulk_pending[t].push((g, UNCOMMITTED));
                }
            }
            Addr::Unknown(u) => {
                self.unverifiable(
                    t,
                    pc,
                    Why::Unknown(Value::SharedAddress),
                    Some(shared_op),
                    u,
                    false,
                );
            }
            _ => {}
        }
        let _ = inst;
        if mbar {
            let Some(a) = self.mbar_addr(
                t,
                pc,
                &Inst {
                    space: Space::Shared,
                    ..*inst
                },
                o(3),
            ) else {
                return;
            };
            let c = self.push(
                t,
                Command::mbarrier(MbarrierOp::CompleteTx, a, size as u32, InstId(pc)),
            );
            if let Some(g) = copy
                && let Some(copy) = self.copies.get_mut(g as usize)
            {
                copy.phases.push(c);
            }
            let r = self.mbars.complete_tx(a, size as u32);
            self.mbar_result(a, r);
        }
    }

    /// A TMA load (`cp.async.bulk.tensor` global → shared, `mbarrier::complete_tx`). Its
    /// byte count lives in the tensor map, which the emulator cannot read. Assumption (a
    /// kernel note): the copies a thread issues in a row towards one mbarrier transfer exactly
    /// the transaction bytes that mbarrier's current phase still expects, and complete
    /// together after the last of them. Each copy is recorded as writing that many bytes from
    /// its destination: exact for one copy per `expect_tx`, an over-approximation otherwise.
    pub(super) fn tma_load(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd]) {
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        if self.th[t].may > 0 {
            self.unverifiable(
                t,
                pc,
                Why::UnderBranch(SyncOp::TmaCopyToMbarrier),
                None,
                self.th[t].may_src,
                true,
            );
            return;
        }
        if !self.notes.iter().any(|n| n.starts_with("TMA loads")) {
            self.notes.push(format!(
                "TMA loads (`cp.async.bulk.tensor`, first at PTX line {}) take their byte count from the tensor map, which weft cannot read: it assumes the copies a thread issues in a row towards one mbarrier transfer exactly the transaction bytes that mbarrier's phase still expects (announced by expect_tx) and complete together after the last copy; each copy is recorded as writing that many bytes from its destination (exact with one copy per expect_tx; with several, an upper bound clipped at the next destination of any TMA load, assuming TMA loads into different destinations never overlap)",
                self.line(pc)
            ));
        }
        let Some(a) = self.mbar_addr(
            t,
            pc,
            &Inst {
                space: Space::Shared,
                ..*inst
            },
            o(2),
        ) else {
            return;
        };
        if self
            .tma_pending
            .iter()
            .any(|p| p.thread == t && p.mbar != a)
        {
            self.flush_tma(t);
        }
        let tx = self.mbars.state(a).map_or(0, |s| s.tx);
        let Ok(bytes) = u32::try_from(tx) else {
            self.unverifiable(
                t,
                pc,
                Why::TmaNoTransactionBytes { or_too_many: true },
                Some(o(2)),
                0,
                true,
            );
            return;
        };
        if bytes == 0 {
            self.unverifiable(
                t,
                pc,
                Why::TmaNoTransactionBytes { or_too_many: false },
                Some(o(2)),
                0,
                true,
            );
            return;
        }
        let mut overrun = None;
        let mut written = None;
        // A copy joining a pending batch of this thread shares its expect_tx with the copies
        // before it: its extent (the whole transaction) is only an upper bound.
        let joins = self.tma_pending.iter().any(|p| p.thread == t);
        match self.addr(t, pc, Space::Shared, o(0)) {
            Addr::Shared(d) => {
                let u = self.src.single(ValueSource::GlobalLoad(InstId(pc)));
                // With several copies per expect_tx the extent is an upper bound: clip it to
                // the shared window (an overrun is reported if the copy stays alone).
                let limit = self
                    .smem_size
                    .unwrap_or(self.smem.len() as u32)
                    .min(self.smem.len() as u32);
                let mut len = bytes;
                if d < limit && u64::from(d) + u64::from(bytes) > u64::from(limit) {
                    len = limit - d;
                    overrun = Some((d, bytes));
                }
                self.in_tma = true;
                if let Some(g) =
                    self.async_access(t, pc, AccessKind::Write, d, len, u, Proxy::Async)
                {
                    self.tma_loads.push(g);
                    if joins {
                        self.flag_approx(g);
                    }
                    written = Some(g);
                }
                self.in_tma = false;
            }
            Addr::Unknown(u) => {
                self.unverifiable(
                    t,
                    pc,
                    Why::Unknown(Value::SharedAddress),
                    Some(o(0)),
                    u,
                    true,
                );
                return;
            }
            _ => {}
        }
        match self.tma_pending.iter_mut().find(|p| p.thread == t) {
            Some(p) => {
                p.pc = pc;
                p.copies += 1;
                p.agents.extend(written);
                if let Some(k) = p.first_write.take() {
                    self.flag_approx(k);
                }
            }
            None => self.tma_pending.push(TmaBatch {
                thread: t,
                mbar: a,
                pc,
                copies: 1,
                first_write: written,
                agents: written.into_iter().collect(),
                overrun,
            }),
        }
    }

    /// Marks asynchronous copy `g`'s access as having an over-approximated extent.
    pub(super) fn flag_approx(&mut self, g: u32) {
        if let Some(c) = self.copies.get_mut(g as usize) {
            c.access = c.access.with_approx(true);
        }
    }

    /// Clips the upper-bound extent of every TMA load that shares its `expect_tx` with others
    /// at the next higher destination of any TMA load of the kernel: the assumption (in the
    /// TMA note) that TMA loads into different destinations never overlap. The extent stays
    /// flagged as an upper bound.
    pub(super) fn clip_tma_extents(&mut self) {
        let mut dests: Vec<u32> = self
            .tma_loads
            .iter()
            .filter_map(|&g| match self.copies.get(g as usize)?.access.view() {
                CommandView::Access { addr, .. } => Some(addr),
                _ => None,
            })
            .collect();
        dests.sort_unstable();
        dests.dedup();
        for &g in &self.tma_loads {
            let Some(copy) = self.copies.get_mut(g as usize) else {
                continue;
            };
            let CommandView::Access {
                kind,
                addr,
                len,
                may,
                approx: true,
            } = copy.access.view()
            else {
                continue;
            };
            let next = dests.partition_point(|&d| d <= addr);
            if let Some(&d) = dests.get(next)
                && d - addr < len
            {
                copy.access = Command::approx_access(kind, addr, d - addr, may, copy.access.inst());
            }
        }
    }

    /// Applies the deferred `complete_tx` of thread `t`'s pending TMA loads: the bytes the
    /// mbarrier's phase still expects, as one command at the last copy.
    pub(super) fn flush_tma(&mut self, t: usize) {
        let Some(k) = self.tma_pending.iter().position(|p| p.thread == t) else {
            return;
        };
        let batch = self.tma_pending.swap_remove(k);
        let (a, pc) = (batch.mbar, batch.pc);
        if batch.copies == 1
            && let Some((d, n)) = batch.overrun
        {
            let msg = format!(
                "thread {t}: TMA load of {n} bytes (the transaction bytes its mbarrier expects) at shared {d:#x} by `{}` at PTX line {} lies outside the {}-byte shared window",
                self.opcode(pc),
                self.line(pc),
                self.smem_size.unwrap_or(self.smem.len() as u32)
            );
            self.finding(t, pc, FindingKind::SharedOutOfBounds, msg);
        }
        let tx = self.mbars.state(a).map_or(0, |s| s.tx);
        let Ok(bytes) = u32::try_from(tx) else {
            return;
        };
        if bytes == 0 {
            self.unverifiable(t, pc, Why::TmaBytesCompletedElsewhere, None, 0, true);
            return;
        }
        self.in_tma = true;
        let c = self.push(
            t,
            Command::mbarrier(MbarrierOp::CompleteTx, a, bytes, InstId(pc)),
        );
        self.in_tma = false;
        for &g in &batch.agents {
            if let Some(copy) = self.copies.get_mut(g as usize) {
                copy.phases.push(c);
            }
        }
        let r = self.mbars.complete_tx(a, bytes);
        self.mbar_result(a, r);
    }

    pub(super) fn flush_tma_all(&mut self) {
        while let Some(t) = self.tma_pending.first().map(|p| p.thread) {
            self.flush_tma(t);
        }
    }

    /// A TMA store or reduction (`cp[.reduce].async.bulk.tensor` shared → global): a read of
    /// shared memory whose extent lives in the tensor map. Recorded as a read from the source
    /// to the end of the shared allocation (an over-approximation, in a kernel note).
    pub(super) fn tma_store(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd]) {
        let _ = inst;
        let src = ops.get(1).copied().unwrap_or(Opnd::Sink);
        if !self.notes.iter().any(|n| n.starts_with("TMA stores")) {
            self.notes.push(format!(
                "TMA stores (`cp.async.bulk.tensor` from shared memory, first at PTX line {}) take their extent from the tensor map, which weft cannot read: each is recorded as reading from its source address to the end of the shared allocation, from its issue until the cp.async.bulk.wait_group that completes it",
                self.line(pc)
            ));
        }
        match self.addr(t, pc, Space::Shared, src) {
            Addr::Shared(s) => {
                let end = self
                    .smem_size
                    .unwrap_or(self.smem.len() as u32)
                    .min(self.smem.len() as u32);
                let len = end.saturating_sub(s).max(1);
                if let Some(g) = self.async_access(t, pc, AccessKind::Read, s, len, 0, Proxy::Async)
                {
                    // The extent is an upper bound of what the tensor map selects.
                    self.flag_approx(g);
                    self.bulk_pending[t].push((g, UNCOMMITTED));
                }
            }
            Addr::Unknown(u) => {
                self.unverifiable(
                    t,
                    pc,
                    Why::Unknown(Value::SharedAddress),
                    Some(src),
                    u,
                    false,
                );
            }
            _ => {}
        }
    }
}

/// Commits the uncommitted copies of `pending` as group `committed`; returns the new number
/// of committed groups.
fn commit(pending: &mut [(u32, u32)], committed: u32) -> u32 {
    for e in pending.iter_mut() {
        if e.1 == UNCOMMITTED {
            e.1 = committed;
        }
    }
    committed.saturating_add(1)
}
