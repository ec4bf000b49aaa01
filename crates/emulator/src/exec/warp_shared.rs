//! Warp-level scalar shared loads and stores (`warp` module): the lanes of a warp that
//! execute one fast `ld.shared` or `st.shared` together take their steps in one call, lane
//! by lane in lane order as [`Machine::exec_fast`] would, without the general code's cases.
//!
//! Each lane still records its command, reads or writes its bytes and tags its value in
//! that order, so every effect (the reorder check's log, the memory budget checked every
//! 1024 commands, value ids, pages allocated on first write) comes in the order of
//! lane-by-lane execution. What is left out is only what cannot apply: no asynchronous copy
//! records (`Machine::divert`), no shared bytes hold a termed value (`Machine::smem_terms`:
//! the general reads and writes then look them up and drop them), scalar widths only. A
//! store takes this path only when every lane stores a known value outside input-dependent
//! branches; a load reads bytes of differing sources with the general read. Otherwise the
//! caller runs the lanes through [`Machine::exec_fast`].

use super::Machine;
use super::alu::{mask, sx};
use super::fast::Src;
use super::memory::Mem;
use super::values::LANES;
use crate::ir::RegId;
use weft_program::{AccessKind, Command, InstId};

/// The operands of a fast `ld.shared` ([`super::fast::FastOp::LdShared`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Load {
    pub d: RegId,
    pub r: RegId,
    pub off: i64,
    pub esize: u32,
    pub bits: u8,
    pub signed: bool,
}

/// The operands of a fast `st.shared` ([`super::fast::FastOp::StShared`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct Store {
    pub r: RegId,
    pub off: i64,
    pub esize: u32,
    pub s: Src,
}

impl Machine<'_> {
    /// Whether a scalar shared access of `esize` bytes can take the warp-level path: a
    /// width a register holds whole, no asynchronous copy recording, no termed values in
    /// shared memory.
    #[inline(always)]
    fn warp_access_ok(&self, esize: u32) -> bool {
        matches!(esize, 1 | 2 | 4 | 8) && self.divert.is_none() && self.smem_terms.is_empty()
    }

    /// [`Machine::push`] of thread `t`'s shared access, when no asynchronous copy records
    /// ([`Machine::warp_access_ok`]); `tracked`: the reorder check already has it
    /// ([`Machine::track_warp`]).
    #[inline(always)]
    fn push_lane_access(
        &mut self,
        t: usize,
        kind: AccessKind,
        (x, esize): (u32, u32),
        pc: u32,
        tracked: bool,
    ) {
        let may = self.th[t].may > 0;
        if self.pass_lockstep && !tracked {
            self.track(t, kind != AccessKind::Read, x, esize);
        }
        self.record(t, Command::access(kind, x, esize, may, InstId(pc)));
    }

    /// In a lock-step pass, the reorder check of the accesses of the lanes of `active` at
    /// one instruction, `esize` bytes at `[r+off]` each, as one log entry
    /// ([`Machine::track_lanes`]) when lane `l`'s address is `base + l * esize` for every
    /// lane (a warp reading or writing consecutive elements, the common case). Returns
    /// whether it did (otherwise each lane's access is tracked with its command).
    #[inline(always)]
    fn track_warp(&mut self, wb: usize, active: u32, op: (RegId, i64, u32), write: bool) -> bool {
        let (r, off, esize) = op;
        if !self.pass_lockstep || active == 0 {
            return false;
        }
        let ws = self.slot(wb);
        let row = ws + r.index() * LANES;
        let first = active.trailing_zeros() as usize;
        let x0 = self.vals[row + first].wrapping_add(off as u64) as u32;
        let base = x0.wrapping_sub((first as u32).wrapping_mul(esize));
        let mut affine = true;
        for (l, &v) in self.vals[row..row + LANES].iter().enumerate() {
            let x = v.wrapping_add(off as u64) as u32;
            let on = (active >> l) & 1 != 0;
            affine &= !on || x == base.wrapping_add((l as u32).wrapping_mul(esize));
        }
        if affine {
            self.track_lanes(wb, active, write, base, esize);
        }
        affine
    }

    /// The fast `ld.shared` `op` at `pc` for the lanes of `active` (bit `l`: thread
    /// `wb + l`, each with a known, in-bounds and aligned address: `Machine::warp_guards`),
    /// in lane order. Returns false, having done nothing, when the warp-level path does not
    /// apply ([`Machine::warp_access_ok`]).
    #[inline(never)]
    pub(super) fn warp_load(&mut self, wb: usize, active: u32, pc: u32, op: Load) -> bool {
        if !self.warp_access_ok(op.esize) {
            return false;
        }
        let ws = self.slot(wb);
        let addr = ws + op.r.index() * LANES;
        let tracked = self.track_warp(wb, active, (op.r, op.off, op.esize), false);
        if tracked && self.load_run(wb, active, pc, op) {
            return true;
        }
        each_lane!(active, |l| {
            let t = wb + l;
            // Read before the lane's own result is written (the registers may be the same).
            let x = self.vals[addr + l].wrapping_add(op.off as u64) as u32;
            self.push_lane_access(t, AccessKind::Read, (x, op.esize), pc, tracked);
            let (v, u) = match self.smem.read_uniform(x as usize, op.esize as usize) {
                Some(r) => r,
                None => self.read_bytes(Mem::Shared, 0, x as usize, op.esize as usize),
            };
            self.put_loaded(ws + l, pc, op, (v, u));
        });
        true
    }

    /// Writes what `op` at `pc` read, `(v, u)` (bytes and their source as the shared
    /// memory holds them), to its destination register at slot `lane_slot`: sign-extended
    /// for a signed load, the source of never-written bytes made this load's own.
    #[inline(always)]
    fn put_loaded(&mut self, lane_slot: usize, pc: u32, op: Load, (v, u): (u64, u32)) {
        let u = if u == self.uninit_shared {
            self.src
                .single(crate::ValueSource::SharedUnknown(InstId(pc)))
        } else {
            self.loaded_term(u, op.signed)
        };
        let v = if op.signed { sx(v, op.bits) as u64 } else { v };
        self.put(lane_slot, op.d, v, u);
    }

    /// The fast `st.shared` `op` at `pc` for the lanes of `active` (as for
    /// [`Machine::warp_load`]), in lane order, when every lane stores a known value and runs
    /// under no input-dependent branch (its bytes are then known, and tagged with their
    /// value's id). Returns false, having done nothing, otherwise.
    #[inline(never)]
    pub(super) fn warp_store(&mut self, wb: usize, active: u32, pc: u32, op: Store) -> bool {
        if !self.warp_access_ok(op.esize) {
            return false;
        }
        let ws = self.slot(wb);
        if self.known_of(ws, op.s, active) != active {
            return false;
        }
        let mut plain = true;
        each_lane!(active, |l| {
            plain &= self.th[wb + l].may == 0;
        });
        if !plain {
            return false;
        }
        let addr = ws + op.r.index() * LANES;
        let bits = 8 * op.esize as u8;
        let tracked = self.track_warp(wb, active, (op.r, op.off, op.esize), true);
        if tracked && self.store_run(wb, active, pc, op) {
            return true;
        }
        each_lane!(active, |l| {
            let t = wb + l;
            let x = self.vals[addr + l].wrapping_add(op.off as u64) as u32;
            let (v, _) = self.get(ws + l, op.s);
            self.push_lane_access(t, AccessKind::Write, (x, op.esize), pc, tracked);
            // A known value under no input-dependent guard: no unknown bytes, no atom, no
            // term to keep (`exec_fast`'s store with those cases known).
            self.smem.write_small(x as usize, op.esize as usize, v, 0);
            self.tag_value(t, u128::from(mask(v, bits)));
        });
        true
    }

    /// The address of the lowest lane of `active` in a warp's access at `[r+off]`, when
    /// its lanes' commands can be recorded at once ([`Machine::lanes_recorded`]) exactly as
    /// lane by lane: no warp steps to record (`--warp-sync`), and the count of commands does
    /// not reach a multiple of 1024 within the lanes (where [`Machine::record`] checks the
    /// memory budget, at that lane, and `lanes_recorded` at the last).
    #[inline(always)]
    fn run_start(&self, wb: usize, active: u32, r: RegId, off: i64) -> Option<u32> {
        let n = u64::from(active.count_ones());
        if self.cfg.warp_sync || active == 0 || self.commands / 1024 != (self.commands + n) / 1024 {
            return None;
        }
        let first = active.trailing_zeros() as usize;
        let i = self.slot(wb) + r.index() * LANES + first;
        Some(self.vals[i].wrapping_add(off as u64) as u32)
    }

    /// [`Machine::warp_load`] of a warp whose lane `l` reads at `base + l * esize` (the
    /// reorder check already has the accesses: [`Machine::track_warp`]) with every lane's
    /// bytes in one page, each lane's of one source ([`super::paged::Paged::read_lanes`]):
    /// the reads first (no lane's effect changes another's bytes or address register), then
    /// each lane's command, then each lane's result, in lane order. What the lane-by-lane
    /// loop does, with one page lookup; the memory budget is not checked
    /// ([`Machine::run_start`]). Returns false, having done nothing, otherwise.
    #[inline(always)]
    fn load_run(&mut self, wb: usize, active: u32, pc: u32, op: Load) -> bool {
        let Some(x0) = self.run_start(wb, active, op.r, op.off) else {
            return false;
        };
        let mut got = [(0u64, 0u32); LANES];
        if !self
            .smem
            .read_lanes(x0 as usize, op.esize as usize, active, &mut got)
        {
            return false;
        }
        let first = active.trailing_zeros() as usize;
        let mut c = Command::access(AccessKind::Read, x0, op.esize, false, InstId(pc));
        each_lane!(active, |l| {
            let t = wb + l;
            let x = x0.wrapping_add((l - first) as u32 * op.esize);
            let may = self.th[t].may > 0;
            c = Command::access(AccessKind::Read, x, op.esize, may, InstId(pc));
            self.cmds[t].push(c);
        });
        self.lanes_recorded(wb, active, c);
        let ws = self.slot(wb);
        each_lane!(active, |l| {
            self.put_loaded(ws + l, pc, op, got[l]);
        });
        true
    }

    /// [`Machine::warp_store`] of known values by a warp whose lane `l` writes at
    /// `base + l * esize` (tracked, as for [`Machine::load_run`]) into one page already
    /// allocated ([`super::paged::Paged::write_lanes`]): the bytes first, then each lane's
    /// command tagged with its value's id, in lane order (value ids are numbered in the
    /// order values come). Returns false, having done nothing, otherwise.
    #[inline(always)]
    fn store_run(&mut self, wb: usize, active: u32, pc: u32, op: Store) -> bool {
        let Some(x0) = self.run_start(wb, active, op.r, op.off) else {
            return false;
        };
        let ws = self.slot(wb);
        let (vals, _) = self.lanes_of(ws, op.s);
        if !self
            .smem
            .write_lanes(x0 as usize, op.esize as usize, active, &vals)
        {
            return false;
        }
        let first = active.trailing_zeros() as usize;
        let bits = 8 * op.esize as u8;
        let mut c = Command::access(AccessKind::Write, x0, op.esize, false, InstId(pc));
        each_lane!(active, |l| {
            let t = wb + l;
            let x = x0.wrapping_add((l - first) as u32 * op.esize);
            // The callers checked: every lane runs under no input-dependent branch.
            c = Command::access(AccessKind::Write, x, op.esize, false, InstId(pc));
            self.cmds[t].push(c);
            self.tag_value(t, u128::from(mask(vals[l], bits)));
        });
        self.lanes_recorded(wb, active, c);
        true
    }
}
