//! Asynchronous copies into shared memory: `cp.async`, `cp.async.bulk` and TMA.

use super::{Addr, Machine, TmaBatch};
use crate::ir::{Inst, Opnd, Space};
use crate::{FindingKind, ValueSource};
use weft_program::{AccessKind, Command, InstId, MbarrierOp};

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
                "the size of a cp.async copy depends on an unknown value",
                Some(o(2)),
                us,
                false,
            );
        } else if let Some(a) = self.shared_addr(t, pc, inst, o(0)) {
            let u = self.src.single(ValueSource::GlobalLoad(InstId(pc)));
            self.shared_access(t, pc, AccessKind::Write, a, size as u32, u);
        }
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
            self.unverifiable(t, pc, "an asynchronous copy signalling an mbarrier executes under an input-dependent branch", None, self.th[t].may_src, true);
            return;
        }
        let (size, us) = self.rd(t, o(2), pc);
        if us != 0 {
            self.unverifiable(
                t,
                pc,
                "the byte count of a bulk copy depends on an unknown value",
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
        match self.addr(t, pc, space, shared_op) {
            Addr::Shared(a) => {
                let u = self.src.single(ValueSource::GlobalLoad(InstId(pc)));
                self.shared_access(t, pc, kind, a, size as u32, if to_shared { u } else { 0 });
            }
            Addr::Unknown(u) => {
                self.unverifiable(
                    t,
                    pc,
                    "a shared-memory address depends on an unknown value",
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
            self.push(
                t,
                Command::mbarrier(MbarrierOp::CompleteTx, a, size as u32, InstId(pc)),
            );
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
                "a TMA copy signalling an mbarrier executes under an input-dependent branch",
                None,
                self.th[t].may_src,
                true,
            );
            return;
        }
        if !self.notes.iter().any(|n| n.starts_with("TMA loads")) {
            self.notes.push(format!(
                "TMA loads (`cp.async.bulk.tensor`, first at PTX line {}) take their byte count from the tensor map, which weft cannot read: it assumes the copies a thread issues in a row towards one mbarrier transfer exactly the transaction bytes that mbarrier's phase still expects (announced by expect_tx) and complete together after the last copy; each copy is recorded as writing that many bytes from its destination (exact with one copy per expect_tx, an over-approximation with several)",
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
            self.unverifiable(t, pc, "a TMA copy signals an mbarrier whose current phase expects no transaction bytes (or more than 4 GiB), so its byte count, which lives in the tensor map, cannot be derived", Some(o(2)), 0, true);
            return;
        };
        if bytes == 0 {
            self.unverifiable(t, pc, "a TMA copy signals an mbarrier whose current phase expects no transaction bytes, so its byte count, which lives in the tensor map, cannot be derived", Some(o(2)), 0, true);
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
                if self.shared_access(t, pc, AccessKind::Write, d, len, u) {
                    let k = self.cmds[t].len() as u32 - 1;
                    if joins {
                        self.flag_approx(t, k);
                    }
                    written = Some(k);
                }
                self.in_tma = false;
            }
            Addr::Unknown(u) => {
                self.unverifiable(
                    t,
                    pc,
                    "a shared-memory address depends on an unknown value",
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
                if let Some(k) = p.first_write.take() {
                    self.flag_approx(t, k);
                }
            }
            None => self.tma_pending.push(TmaBatch {
                thread: t,
                mbar: a,
                pc,
                copies: 1,
                first_write: written,
                overrun,
            }),
        }
    }

    /// Marks thread `t`'s command `k` (an access) as having an over-approximated extent.
    pub(super) fn flag_approx(&mut self, t: usize, k: u32) {
        if let Some(c) = self.cmds[t].get_mut(k as usize) {
            *c = c.with_approx(true);
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
            self.unverifiable(t, pc, "the transaction bytes a TMA copy was to complete were completed by another operation first, so the copy's byte count cannot be derived", None, 0, true);
            return;
        }
        self.in_tma = true;
        self.push(
            t,
            Command::mbarrier(MbarrierOp::CompleteTx, a, bytes, InstId(pc)),
        );
        self.in_tma = false;
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
                "TMA stores (`cp.async.bulk.tensor` from shared memory, first at PTX line {}) take their extent from the tensor map, which weft cannot read: each is recorded as reading from its source address to the end of the shared allocation, at issue",
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
                if self.shared_access(t, pc, AccessKind::Read, s, len, 0) {
                    // The extent is an upper bound of what the tensor map selects.
                    let k = self.cmds[t].len() as u32 - 1;
                    self.flag_approx(t, k);
                }
            }
            Addr::Unknown(u) => {
                self.unverifiable(
                    t,
                    pc,
                    "a shared-memory address depends on an unknown value",
                    Some(src),
                    u,
                    false,
                );
            }
            _ => {}
        }
    }
}
