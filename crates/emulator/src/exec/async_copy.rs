//! Asynchronous copies into and out of shared memory: `cp.async`, `cp.async.bulk` and TMA.
//! Each copy's shared access is an agent of its own ([`weft_program::AsyncCopy`]), completed
//! by its issuer's group waits or by an mbarrier phase.

use std::collections::VecDeque;

use rustc_hash::FxHashMap;

use super::{Addr, Machine, OpenTma, TensorMap, UNCOMMITTED};
use crate::ir::{Inst, MemBase, Opnd, Space};
use crate::unverifiable::{SyncOp, Value, Why};
use crate::{FindingKind, ValueSource};
use weft_program::{AccessKind, Command, CommandView, InstId, MbarrierOp, Proxy};

/// The fewest bytes a TMA box spans: its inner dimension is a multiple of 16 bytes.
const TMA_MIN_BOX: u32 = 16;

/// The alignment of a bulk copy's shared operand: 16 bytes (`cp.async.bulk`; a TMA tile's
/// shared address needs 128, of which weft checks these 16).
pub(super) const BULK_ALIGN: u32 = 16;

/// The form of a bulk copy ([`crate::ir::Op::CpAsyncBulk`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct BulkForm {
    /// Destination is shared memory (else the source is).
    pub(super) to_shared: bool,
    /// Signals `complete_tx` on an mbarrier operand.
    pub(super) mbar: bool,
    /// `cp.reduce.async.bulk`.
    pub(super) reduce: bool,
}

impl Machine<'_> {
    /// `cp.async` (non-bulk): a shared write of `size` bytes whose values come from global
    /// memory.
    pub(super) fn cp_async(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd]) {
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        let Some(size) = self.known_value(t, pc, o(2), Value::CpAsyncSize, false) else {
            return;
        };
        if let Some(a) = self.shared_addr(t, pc, inst, o(0)) {
            let u = self.src.single(ValueSource::GlobalLoad(InstId(pc)));
            let copy = self.async_access(
                t,
                pc,
                AccessKind::Write,
                a,
                size as u32,
                u,
                Proxy::Generic,
                size as u32,
            );
            if let Some(g) = copy {
                self.cp_pending[t].push_back((g, UNCOMMITTED));
            }
        }
    }

    /// Records the shared access of an asynchronous copy issued by thread `t` as an agent of
    /// its own and checks its bounds and its address's alignment to `align` bytes (what the
    /// PTX ISA requires of the instruction's shared operand); returns the copy's index if it
    /// is in bounds.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn async_access(
        &mut self,
        t: usize,
        pc: u32,
        kind: AccessKind,
        addr: u32,
        len: u32,
        write_u: u32,
        proxy: Proxy,
        align: u32,
    ) -> Option<u32> {
        self.divert = Some(proxy);
        let ok = self.shared_access(t, pc, kind, addr, len, write_u);
        self.divert = None;
        if ok {
            self.check_shared_alignment(t, pc, addr, align, "the copy's shared operand");
        }
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
        pending: &mut VecDeque<(u32, u32)>,
        committed: u32,
        keep: u64,
    ) {
        let limit = u64::from(committed).saturating_sub(keep);
        let at = self.cmds[t].len() as u32;
        let seq = self.copies.len() as u32;
        // The completed ones are a prefix (see `commit`): a wait that keeps many groups in
        // flight costs only what it completes.
        let done = done_prefix(pending, limit);
        for &(g, _) in pending.range(..done) {
            if let Some(c) = self.copies.get_mut(g as usize) {
                c.complete_at(at, seq);
            }
        }
        pending.drain(..done);
    }

    pub(super) fn bulk_copy(
        &mut self,
        t: usize,
        pc: u32,
        inst: &Inst,
        ops: &[Opnd],
        form: BulkForm,
    ) {
        let BulkForm {
            to_shared,
            mbar,
            reduce,
        } = form;
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        if mbar && self.under_branch(t, pc, SyncOp::AsyncCopyToMbarrier) {
            return;
        }
        let Some(size) = self.known_value(t, pc, o(2), Value::BulkCopySize, mbar) else {
            return;
        };
        if !reduce && size % u64::from(BULK_ALIGN) != 0 {
            self.report_bulk_size(t, pc, size);
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
                copy = self.async_access(t, pc, kind, a, size as u32, u, Proxy::Async, BULK_ALIGN);
                // Without an mbarrier the copy completes through bulk groups.
                if let (Some(g), false) = (copy, mbar) {
                    self.bulk_pending[t].push_back((g, UNCOMMITTED));
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

    /// Reports `bulk-copy-size`: a bulk copy of `size` bytes, not a multiple of 16. The copy
    /// is then emulated with that size.
    #[cold]
    fn report_bulk_size(&mut self, t: usize, pc: u32, size: u64) {
        let msg = format!(
            "thread {t}: `{}` at PTX line {} copies {size} bytes, not a multiple of {BULK_ALIGN}: a bulk copy's size must be a multiple of {BULK_ALIGN} bytes (as its shared operand must be aligned to {BULK_ALIGN})",
            self.opcode(pc),
            self.line(pc)
        );
        self.finding(t, pc, FindingKind::BulkCopySize, msg);
    }

    /// A TMA load (`cp.async.bulk.tensor` global → shared, `mbarrier::complete_tx`). Its
    /// byte count lives in the tensor map, which the emulator cannot read. Assumption (a
    /// kernel note): the copies issued towards an mbarrier phase, by any thread and before or
    /// after the `expect_tx` that announces their bytes, transfer together exactly the
    /// transaction bytes the phase expects. The copy is recorded now (an agent, and a
    /// `complete_tx` command in the issuing thread); its byte count and extent are derived when
    /// the phase completes ([`Self::complete_tma_phases`]).
    pub(super) fn tma_load(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd]) {
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        if self.under_branch(t, pc, SyncOp::TmaCopyToMbarrier) {
            return;
        }
        if !self.notes.iter().any(|n| n.starts_with("TMA loads")) {
            self.notes.push(format!(
                "TMA loads (`cp.async.bulk.tensor`, first at PTX line {}) take their byte count from the tensor map, which weft cannot read: it assumes the copies issued towards an mbarrier phase (by any thread, before or after the expect_tx that announces their bytes) together transfer exactly the transaction bytes that phase expects, and lets the phase complete only when no thread can run; a copy alone in its phase writes exactly those bytes from its destination, copies of one tensor map (tile mode, not multicast) an equal share of them (one box each), other copies each an upper bound (the bytes less 16 per other copy, clipped at the next destination of any TMA load, tensor map or mbarrier object, assuming TMA loads into different destinations never overlap each other or those; every copy of one such map bounded by the smallest bound of the map's copies, or given the exact extent one of them has; the first 16 bytes of a bounded extent, not multicast, written for sure: every box's inner dimension is a multiple of 16 bytes)",
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
        let dest = match self.addr(t, pc, Space::Shared, o(0)) {
            Addr::Shared(d) => d,
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
            _ => {
                self.unverifiable(t, pc, Why::TmaDestinationNotShared, Some(o(0)), 0, true);
                return;
            }
        };
        // The extent is known when the phase completes; until then the first byte.
        let u = self.src.single(ValueSource::GlobalLoad(InstId(pc)));
        let agent = self.async_access(
            t,
            pc,
            AccessKind::Write,
            dest,
            1,
            u,
            Proxy::Async,
            BULK_ALIGN,
        );
        let cmd = self.push(
            t,
            Command::mbarrier(MbarrierOp::CompleteTx, a, 0, InstId(pc)),
        );
        if let Some(g) = agent {
            self.tma_loads.push(g);
            if let Some(copy) = self.copies.get_mut(g as usize) {
                copy.phases.push(cmd);
            }
        }
        // On an uninitialized mbarrier barrier-graph reports the error (it replays the
        // `complete_tx`).
        let map = self.tensor_map(t, pc, o(1));
        if let (Some(g), Some(m)) = (agent, map) {
            self.tma_load_maps.push((g, m));
        }
        if let Some(s) = self.mbars.state(a) {
            self.tma_open.push(OpenTma {
                mbar: a,
                phase: s.phase,
                thread: t,
                pc,
                agent,
                cmd,
                map,
            });
        }
    }

    /// The tensor map a TMA load reads (its tensor operand `[map, {coordinates}]`), when
    /// it is a kernel parameter and the copy is a tile-mode copy into this CTA alone: every
    /// tile-mode copy of one tensor map moves one box of the map's box dimensions, and its
    /// transaction bytes are the whole box's (elements out of the tensor's bounds are filled,
    /// and counted). `im2col` modes (whose pixel counts come from the instruction) and
    /// multicast copies (whose bytes also go to other CTAs' mbarriers) are left out.
    fn tensor_map(&mut self, t: usize, pc: u32, tensor: Opnd) -> Option<TensorMap> {
        let opcode = self.opcode(pc);
        if opcode.contains("im2col") || opcode.contains("multicast") {
            return None;
        }
        let Opnd::List(start, n) = tensor else {
            return None;
        };
        let first = *self.ir.opnds.get(start as usize).filter(|_| n >= 1)?;
        // Only a map among the kernel's parameters: that memory is read-only for the whole
        // launch, while a map in global or shared memory may be rewritten between two copies
        // (`tensormap.replace` can change its box dimensions).
        let win = self.win;
        let in_params = |v: u64| {
            v.wrapping_sub(win.param_generic) < win.size
                || v.wrapping_sub(win.param_space) < win.size
        };
        match first {
            Opnd::Reg(_) => {
                let (v, u) = self.rd(t, first, pc);
                (u == 0 && in_params(v)).then_some(TensorMap::Address(v))
            }
            Opnd::Mem(MemBase::KernelParam(i), off) => Some(TensorMap::Param(i, off)),
            _ => None,
        }
    }

    /// Called when a phase of `mbar` completes: TMA loads still open towards that phase
    /// missed it (it completed without their bytes), so their byte counts cannot be derived.
    pub(super) fn tma_phase_completed(&mut self, mbar: u32, completed: u32) {
        let Some(first) = self
            .tma_open
            .iter()
            .find(|o| o.mbar == mbar && o.phase == completed)
            .copied()
        else {
            return;
        };
        self.tma_open
            .retain(|o| !(o.mbar == mbar && o.phase == completed));
        self.unverifiable(
            first.thread,
            first.pc,
            Why::TmaPhaseCompletedWithoutCopy,
            None,
            0,
            true,
        );
    }

    /// No thread can run: completes every mbarrier phase that has open TMA loads and all its
    /// arrivals, deriving the copies' byte counts from the bytes the phase still expects
    /// (one `complete_tx` of at least 1 byte per copy, summing to them, so the barrier-graph
    /// replay completes the phase exactly when its last copy is counted). Returns whether a
    /// phase completed.
    pub(super) fn complete_tma_phases(&mut self) -> bool {
        self.complete_tma_phases_of(None)
    }

    /// [`Machine::complete_tma_phases`] for the mbarrier at `only` (every one: `None`).
    /// `mbarrier.inval` completes its object's phase first: the bytes land before the object
    /// goes (Triton's epilogue invalidates its mbarriers; with a consumer's wait skipped,
    /// weft said "its arrivals are missing" instead of reporting the race).
    pub(super) fn complete_tma_phases_of(&mut self, only: Option<u32>) -> bool {
        if self.tma_open.is_empty() || self.stop {
            return false;
        }
        let mut mbars: Vec<u32> = self
            .tma_open
            .iter()
            .map(|o| o.mbar)
            .filter(|&m| only.is_none_or(|a| a == m))
            .collect();
        mbars.sort_unstable();
        mbars.dedup();
        let mut any = false;
        for a in mbars {
            let Some(state) = self.mbars.state(a) else {
                continue;
            };
            if state.pending != 0 {
                continue; // arrivals missing: the phase cannot complete
            }
            let (mut mine, rest): (Vec<OpenTma>, Vec<OpenTma>) = self
                .tma_open
                .iter()
                .partition(|o| o.mbar == a && o.phase == state.phase);
            if mine.is_empty() {
                continue;
            }
            self.tma_open = rest;
            let k = mine.len() as i64;
            if state.tx < k {
                let first = mine[0];
                let why = Why::TmaTooFewBytes {
                    copies: k as u32,
                    bytes: state.tx.max(0) as u32,
                };
                self.unverifiable(first.thread, first.pc, why, None, 0, true);
                continue;
            }
            let bytes = state.tx as u32;
            mine.sort_by_key(|o| {
                o.agent
                    .and_then(|g| self.copies.get(g as usize))
                    .map_or(u32::MAX, |c| match c.access.view() {
                        CommandView::Access { addr, .. } => addr,
                        _ => u32::MAX,
                    })
            });
            let limit = self
                .smem_size
                .unwrap_or(self.smem.len() as u32)
                .min(self.smem.len() as u32);
            let alone = mine.len() == 1;
            // Copies of one tensor map move one box each: the phase's bytes split evenly.
            let one_map = !alone
                && mine[0].map.is_some()
                && mine.iter().all(|o| o.map == mine[0].map)
                && bytes % mine.len() as u32 == 0;
            let exact = alone || one_map;
            let bound = if alone {
                bytes
            } else if one_map {
                bytes / mine.len() as u32
            } else {
                bytes
                    .saturating_sub(TMA_MIN_BOX * (mine.len() as u32 - 1))
                    .max(1)
            };
            for (i, o) in mine.iter().enumerate() {
                // Each copy completes at least 1 byte; the last one the rest.
                let share = if i + 1 == mine.len() {
                    bytes - (mine.len() as u32 - 1)
                } else {
                    1
                };
                if let Some(c) = self.cmds[o.thread].get_mut(o.cmd as usize) {
                    *c = Command::mbarrier(MbarrierOp::CompleteTx, a, share, c.inst());
                }
                let Some(g) = o.agent else {
                    continue;
                };
                let Some(access) = self.copies.get(g as usize).map(|c| c.access) else {
                    continue;
                };
                let CommandView::Access { addr, may, .. } = access.view() else {
                    continue;
                };
                let mut len = bound;
                if u64::from(addr) + u64::from(bound) > u64::from(limit) {
                    len = limit.saturating_sub(addr).max(1);
                    if exact {
                        let msg = format!(
                            "thread {}: TMA load of {bytes} bytes (the transaction bytes its mbarrier expects) at shared {addr:#x} by `{}` at PTX line {} lies outside the {}-byte shared window",
                            o.thread,
                            self.opcode(o.pc),
                            self.line(o.pc),
                            self.smem_size.unwrap_or(self.smem.len() as u32)
                        );
                        self.finding(o.thread, o.pc, FindingKind::SharedOutOfBounds, msg);
                    }
                }
                let inst = access.inst();
                if let Some(copy) = self.copies.get_mut(g as usize) {
                    copy.access = if exact {
                        Command::access(AccessKind::Write, addr, len, may, inst)
                    } else {
                        Command::approx_access(AccessKind::Write, addr, len, may, inst)
                    };
                }
                let u = self.src.single(ValueSource::GlobalLoad(InstId(o.pc)));
                self.smem_set_unk(addr as usize, len as usize, u);
            }
            let r = self.mbars.complete_tx(a, bytes);
            self.mbar_result(a, r);
            any = true;
        }
        any
    }

    /// At the end of the emulation: TMA loads whose phase never completed (arrivals
    /// missing) have no derivable byte count.
    pub(super) fn unfinished_tma(&mut self) {
        if self.stop || self.trapped {
            return;
        }
        if let Some(first) = self.tma_open.first().copied() {
            let waiting = self
                .th
                .iter()
                .any(|th| th.state == (super::State::MbarWait { addr: first.mbar }));
            if !waiting {
                self.unverifiable(
                    first.thread,
                    first.pc,
                    Why::TmaPhaseNeverCompletes,
                    None,
                    0,
                    true,
                );
            }
        }
    }

    /// Marks asynchronous copy `g`'s access as having an over-approximated extent.
    pub(super) fn flag_approx(&mut self, g: u32) {
        if let Some(c) = self.copies.get_mut(g as usize) {
            c.access = c.access.with_approx(true);
        }
    }

    /// Clips the upper-bound extent of every TMA load that shares its phase with others, and
    /// of every TMA store, at the next higher shared address of any TMA load or store or
    /// tensor map of the kernel: the assumption (in the TMA notes) that TMA tiles at
    /// different addresses never overlap each other or a tensor map in shared memory. The
    /// extent stays flagged as an upper bound.
    pub(super) fn clip_tma_extents(&mut self) {
        let mut dests: Vec<u32> = self
            .tma_loads
            .iter()
            .chain(&self.tma_stores)
            .filter_map(|&g| match self.copies.get(g as usize)?.access.view() {
                CommandView::Access { addr, .. } => Some(addr),
                _ => None,
            })
            .chain(self.tensormaps.iter().copied())
            .chain(self.mbar_objects.iter().copied())
            .collect();
        dests.sort_unstable();
        dests.dedup();
        for &g in self.tma_loads.iter().chain(&self.tma_stores) {
            let Some(copy) = self.copies.get_mut(g as usize) else {
                continue;
            };
            let Some((kind, addr, len, may)) = bounded(&copy.access) else {
                continue;
            };
            let next = dests.partition_point(|&d| d <= addr);
            if let Some(&d) = dests.get(next)
                && d - addr < len
            {
                copy.access = Command::approx_access(kind, addr, d - addr, may, copy.access.inst());
            }
        }
        self.tighten_by_map();
    }

    /// Every TMA load of one tensor map (tile mode, this CTA alone) moves one box of the
    /// same bytes: a copy whose extent is exact gives them to every copy of its map, else
    /// the smallest upper bound over the map's copies bounds them all (quack's RMSNorm
    /// backward for sm100: 32 boxes of x and 32 of dout per phase, each bounded by the next
    /// destination, but the last dout box of the last stage ran into the reduction buffer).
    fn tighten_by_map(&mut self) {
        if self.tma_load_maps.len() < 2 {
            return;
        }
        // Per map: the smallest extent of its copies, and the exact one if any (None when
        // two exact copies disagree: nothing is assumed then).
        let mut per: FxHashMap<TensorMap, (u32, Option<Option<u32>>)> = FxHashMap::default();
        for &(g, m) in &self.tma_load_maps {
            let Some(CommandView::Access { len, approx, .. }) =
                self.copies.get(g as usize).map(|c| c.access.view())
            else {
                continue;
            };
            let e = per.entry(m).or_insert((u32::MAX, None));
            e.0 = e.0.min(len);
            if !approx {
                e.1 = match e.1 {
                    None => Some(Some(len)),
                    Some(Some(l)) if l == len => Some(Some(l)),
                    _ => Some(None),
                };
            }
        }
        for &(g, m) in &self.tma_load_maps {
            let (Some(&(min, exact)), Some(copy)) = (per.get(&m), self.copies.get_mut(g as usize))
            else {
                continue;
            };
            let Some((kind, addr, len, may)) = bounded(&copy.access) else {
                continue;
            };
            let inst = copy.access.inst();
            match exact {
                Some(Some(l)) if l <= len => {
                    copy.access = Command::access(kind, addr, l, may, inst);
                }
                Some(None) => {}
                _ if min < len => {
                    copy.access = Command::approx_access(kind, addr, min, may, inst);
                }
                _ => {}
            }
        }
    }

    /// Splits the first 16 bytes off every TMA load whose extent is an upper bound, as an
    /// exact write of its own (same issue, same completion): every TMA box's inner dimension
    /// is a multiple of 16 bytes, so those bytes are written for sure (a TMA store's first 16
    /// bytes are an exact read the same way). A read of them racing with the copy, a stage
    /// wait skipped, is then a violation, not a "possible" race. Multicast loads, which may
    /// write only other CTAs, keep their bound whole.
    pub(super) fn split_tma_load_prefixes(&mut self) {
        for k in 0..self.tma_loads.len() {
            let g = self.tma_loads[k];
            let Some(copy) = self.copies.get(g as usize) else {
                continue;
            };
            let Some((kind, addr, len, may)) = bounded(&copy.access) else {
                continue;
            };
            let (t, inst) = (copy.issuer.index(), copy.access.inst());
            if len <= TMA_MIN_BOX
                || self.opcode(inst.0).contains("multicast")
                || self.push_box_prefix(t, g, kind, addr, may).is_none()
            {
                continue;
            }
            if let Some(c) = self.copies.get_mut(g as usize) {
                c.access =
                    Command::approx_access(kind, addr + TMA_MIN_BOX, len - TMA_MIN_BOX, may, inst);
            }
        }
    }

    /// Pushes a copy of agent `g` (same issuer, issue and completion) whose access is the
    /// exact first `TMA_MIN_BOX` bytes of a TMA box at `addr`, read or written for sure
    /// (every box's inner dimension is a multiple of 16 bytes), charged like any agent; its
    /// index, or `None` when it does not fit in `--max-memory`.
    fn push_box_prefix(
        &mut self,
        t: usize,
        g: u32,
        kind: AccessKind,
        addr: u32,
        may: bool,
    ) -> Option<u32> {
        let mut prefix = self.copies.get(g as usize)?.clone();
        let inst = prefix.access.inst();
        if !self.agent_fits(t, inst.0) {
            return None;
        }
        prefix.access = Command::access(kind, addr, TMA_MIN_BOX, may, inst);
        let p = self.copies.len() as u32;
        self.guard_copy(p);
        self.copies.push(prefix);
        self.charge_agent(t, inst.0, weft_program::race_entry_bytes(addr, TMA_MIN_BOX));
        Some(p)
    }

    /// Charges the race stage's entries of the TMA stores' extents, clipped, to
    /// `--max-memory` (their upper-bound extents run to the end of the shared allocation
    /// until `clip_tma_extents`: charged at issue, a persistent kernel's stores reached the
    /// budget while the emulation held a few hundred MiB).
    pub(super) fn charge_tma_stores(&mut self) {
        let mut first = None;
        for &g in &self.tma_stores {
            let Some(copy) = self.copies.get(g as usize) else {
                continue;
            };
            if let CommandView::Access { addr, len, .. } = copy.access.view()
                && len > 16
            {
                self.charged = self
                    .charged
                    .saturating_add(weft_program::race_entry_bytes(addr, len));
                first.get_or_insert((copy.issuer.0 as usize, copy.access.inst().0));
            }
        }
        if let Some((t, pc)) = first {
            self.check_memory(t, pc);
        }
    }

    /// A note on the asynchronous operations nothing completes: no wait of their thread
    /// (`cp.async.bulk.wait_group[.read]`, `cp.async.wait_*`, `wgmma.wait_group`, ...) and
    /// no mbarrier phase. Their shared- or tensor-memory accesses may still run when the
    /// CTA exits: weft checks races within the CTA's lifetime, not that lifetime (CUTLASS's
    /// epilogues wait for their TMA stores before exiting, `store_tail`; the CuTe DSL's
    /// Hopper FMHA example does not).
    pub(super) fn unfinished_at_exit(&mut self) {
        if self.stop || self.trapped {
            return;
        }
        let mut open = self
            .copies
            .iter()
            .filter(|c| c.done.is_none() && c.joint.is_none() && c.phases.is_empty())
            // (A copy on a side the path's choices rule out is no access.)
            .filter(|c| matches!(c.access.view(), CommandView::Access { len, .. } if len > 0));
        let Some(first) = open.next() else {
            return;
        };
        let pc = first.access.inst().0;
        let (opcode, line) = (self.opcode(pc).to_string(), self.line(pc));
        let n = 1 + open.count();
        self.notes.push(format!(
            "{n} asynchronous operation(s) (first: `{opcode}` at PTX line {line}) are completed by no wait of their thread and no mbarrier phase: their accesses of shared or tensor memory may still run when the CTA exits, and weft does not check the CTA's lifetime (races within it only)"
        ));
    }

    /// A TMA store or reduction (`cp[.reduce].async.bulk.tensor` shared → global): a read of
    /// shared memory whose extent lives in the tensor map. Recorded as a read from the source
    /// to the end of the shared allocation (an over-approximation, in a kernel note).
    pub(super) fn tma_store(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd]) {
        let _ = inst;
        let src = ops.get(1).copied().unwrap_or(Opnd::Sink);
        if !self.notes.iter().any(|n| n.starts_with("TMA stores")) {
            self.notes.push(format!(
                "TMA stores (`cp.async.bulk.tensor` from shared memory, first at PTX line {}) take their extent from the tensor map, which weft cannot read: each is recorded as reading from its source address up to the next shared address of another TMA load or store, tensor map or mbarrier object (assuming TMA tiles at different addresses never overlap, and never cover an mbarrier) or the end of the shared allocation, from its issue until the cp.async.bulk.wait_group that completes it",
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
                self.defer_entries = true;
                let g =
                    self.async_access(t, pc, AccessKind::Read, s, len, 0, Proxy::Async, BULK_ALIGN);
                self.defer_entries = false;
                if let Some(g) = g {
                    // The extent is an upper bound of what the tensor map selects.
                    self.flag_approx(g);
                    self.tma_stores.push(g);
                    self.bulk_pending[t].push_back((g, UNCOMMITTED));
                    // But every TMA box starts at the source and spans at least 16 bytes
                    // (its inner dimension is a multiple of 16 bytes): that prefix is read for
                    // sure, an exact access of its own (same issue, same completion).
                    let may = self.th[t].may > 0;
                    if len > TMA_MIN_BOX
                        && let Some(p) = self.push_box_prefix(t, g, AccessKind::Read, s, may)
                    {
                        self.bulk_pending[t].push_back((p, UNCOMMITTED));
                    }
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

/// How many operations at the front of `pending` belong to a committed group older than
/// `limit`: pending operations are in the order of their groups, the uncommitted last, so
/// those a wait completes are a prefix.
pub(super) fn done_prefix(pending: &VecDeque<(u32, u32)>, limit: u64) -> usize {
    pending.partition_point(|&(_, group)| group != UNCOMMITTED && u64::from(group) < limit)
}

/// Commits the uncommitted operations of `pending` as group `committed`; returns the new
/// number of committed groups. The uncommitted ones are a suffix of `pending` (they are
/// pushed at its end, a commit takes them all, a wait removes committed ones in order), so
/// a commit costs the operations it takes: a loop that commits bulk groups and never waits
/// (a mutant) scanned every pending copy at every commit, quadratic in its trips.
pub(super) fn commit(pending: &mut VecDeque<(u32, u32)>, committed: u32) -> u32 {
    for e in pending.iter_mut().rev() {
        if e.1 != UNCOMMITTED {
            break;
        }
        e.1 = committed;
    }
    committed.saturating_add(1)
}

/// The kind, address, extent and `may` of an access whose extent is an upper bound (a TMA
/// copy whose bytes live in its tensor map), `None` for any other command.
fn bounded(access: &Command) -> Option<(AccessKind, u32, u32, bool)> {
    match access.view() {
        CommandView::Access {
            kind,
            addr,
            len,
            may,
            approx: true,
        } => Some((kind, addr, len, may)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::{UNCOMMITTED, commit, done_prefix};
    use std::collections::VecDeque;

    #[test]
    fn a_commit_takes_the_uncommitted_suffix_only() {
        // Groups 0 and 1 committed (one of group 0's copies completed and removed), then two
        // new copies.
        let mut pending = VecDeque::from([(0, 0), (2, 1), (3, UNCOMMITTED), (4, UNCOMMITTED)]);
        assert_eq!(commit(&mut pending, 2), 3);
        assert_eq!(pending, [(0, 0), (2, 1), (3, 2), (4, 2)]);
        // Nothing uncommitted: an empty group.
        assert_eq!(commit(&mut pending, 3), 4);
        assert_eq!(pending, [(0, 0), (2, 1), (3, 2), (4, 2)]);
    }

    #[test]
    fn a_wait_completes_the_prefix_of_older_groups() {
        let pending = VecDeque::from([(0, 0), (1, 0), (2, 1), (3, 2), (4, UNCOMMITTED)]);
        // Three committed groups, keep 1 in flight: groups 0 and 1 complete.
        assert_eq!(done_prefix(&pending, 3 - 1), 3);
        // Keep more than were committed: none.
        assert_eq!(done_prefix(&pending, 0), 0);
        // Keep none: every committed one, never the uncommitted.
        assert_eq!(done_prefix(&pending, 3), 4);
    }
}
