//! Warp-level execution: the converged lanes of a warp execute an instruction together, with
//! one decode and one dispatch per warp instruction and a loop over the lanes inside.
//!
//! Two schedules use it, and both compute exactly what lane-by-lane execution computes:
//!
//! - **`--warp-sync`** (`Machine::run_lockstep`): a warp step already executes the lanes at
//!   the minimum PC in lane order, one instruction each. Executing a fast-path instruction
//!   (`fast.rs`) for all of them at once, lane by lane inside one dispatch, is the same
//!   sequence of effects. A warp collective whose lanes all meet at one step completes in
//!   place ([`Machine::collective_in_step`]) instead of through a rendezvous per lane.
//! - **Without `--warp-sync`** (`Machine::run_threads`): the reference schedule runs each
//!   thread until it blocks, in thread order. While lane `c` is the next to run, the lanes
//!   `c..` of its warp that are runnable at its PC form a *group* that executes lane-local
//!   instructions together (fast-path instructions, integer ALU and address arithmetic,
//!   loads, stores and atomics, opaque, floating-point and tensor-core instructions,
//!   `ldmatrix`: [`lane_local`]; the pure ones once per distinct operand tuple,
//!   `warp_pure.rs`) until a lane diverges or an
//!   instruction with effects beyond the lane comes. This moves the lanes after `c` ahead of
//!   `c`'s later instructions in the same pass. Registers are private, so only shared
//!   memory can observe it: every shared access in such a pass goes through
//!   [`Machine::track_access`], which detects an access ordered after a conflicting access
//!   of a *higher* lane of the warp in the same pass (the reverse of the reference order).
//!   Anything else whose order is visible — an unverifiable reason or finding recorded by a
//!   lane other than `c`, a stop (budgets count instructions and commands), the value-id
//!   space running out — is treated the same way. Any of these abandons the run, which is
//!   repeated lane by lane ([`super::Paths::Lanes`]); a kernel without such a conflict (every
//!   race-free kernel, and racy ones whose races do not cross lanes of a warp within a pass)
//!   gets the lane-by-lane result from the faster schedule.
//!
//!   A contiguous group at a warp collective either completes it in place (every other
//!   member lane waits there: [`Machine::collective_in_step`]) or, when a member runs
//!   elsewhere, joins it at once ([`Machine::collective_join`]): each lane's step in the
//!   reference schedule would only wait there. Without the join, each lane of such a group
//!   took its step through the general interpreter, the group re-formed for every one.

use super::alu::{Alu, alu, div_rem, mask, sx};
use super::collectives::shfl_source;
use super::fast::{FastInst, FastOp, Src};
use super::values::LANES;
use super::warp_shared::{Load, Store};
use super::warpgroup::WgKind;
use super::{Machine, State};
use crate::ir::{Cmp, Inst, Op, Opnd, RegId, ShflMode};

/// The lane permutation of one shuffle shape ([`Machine::shfl_table`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct ShflTable {
    mode: ShflMode,
    b: u64,
    c: u64,
    /// Each lane's source lane (0 where it is out of range).
    source: [u8; LANES],
    /// The lanes whose source lane is a lane of the warp.
    in_range: u32,
    /// Each lane's predicate result.
    pred: u32,
}

/// Shuffle shapes a machine keeps ([`Machine::shfl_table`]); others are computed each time.
const MAX_SHFL_TABLES: usize = 16;

/// What a group of lanes did ([`Machine::lockstep`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Group {
    /// Nothing: the group has fewer than two lanes or its next instruction is not one the
    /// group executes together.
    Nothing,
    /// The group advanced; the cursor lane continues.
    Advanced,
    /// The group met at a warp collective that completed in place: the lanes before `last`
    /// took their step (and wait, in the reference schedule, for the next pass); the
    /// cursor moves on to `last`, the lane that completed it.
    Collective { last: usize },
}

/// Whether `op` reads and writes only the executing lane's registers and memory windows
/// (shared accesses are recorded commands, which [`Machine::track_access`] watches) and
/// per-thread state, and never blocks, stops the emulation or changes control flow: the
/// instructions a group executes lane by lane inside its lock-step. Tensor-core results
/// (`mma.sync`: unknown registers) and `ldmatrix`/`stmatrix` (each lane's own row) are;
/// `wgmma` instructions, which order warpgroups, are excluded by the caller
/// (`Machine::lane_local_at`). An asynchronous copy is not: its record's index is global.
pub(super) fn lane_local(op: Op) -> bool {
    op.computes()
        || matches!(
            op,
            Op::Ld
                | Op::St
                | Op::Atom(_)
                | Op::RedMem(_)
                | Op::Float { .. }
                | Op::Texture
                | Op::Skip
                | Op::TensorCore
                | Op::Ldmatrix(_)
                | Op::Stmatrix(_)
                | Op::CpAsyncCommit
        )
}

/// What [`Machine::lockstep`] found when lane `cursor` had no other lane of its warp to
/// execute with: the PC of each later lane of the warp that could run (`u32::MAX` for the
/// others). While the cursor runs alone, only its own steps move anything, and a step that
/// is lane-local or a branch moves no other lane (`Machine::moves_only_itself`): until
/// another kind of step, the cursor can join a group only at one of these PCs, and
/// `lockstep` answers [`Group::Nothing`] elsewhere without looking at the lanes. A lane
/// running alone after its warp diverged (a Triton kernel's lanes past a loop's exit, each
/// through the general interpreter) otherwise scanned its warp before every step. Skipping
/// a group changes nothing but speed in any case: a group computes what its lanes compute
/// one by one.
#[derive(Debug, Clone)]
pub(super) struct Solo {
    cursor: usize,
    pcs: [u32; LANES],
}

impl Default for Solo {
    fn default() -> Self {
        Solo {
            cursor: usize::MAX,
            pcs: [u32::MAX; LANES],
        }
    }
}

impl Solo {
    /// Forgets what was noted: another lane may have moved.
    pub(super) fn forget(&mut self) {
        self.cursor = usize::MAX;
    }

    /// Whether lane `cursor`, at `pc`, is known to have no lane to form a group with.
    #[inline(always)]
    fn alone(&self, cursor: usize, pc: u32) -> bool {
        self.cursor == cursor && !self.pcs.contains(&pc)
    }
}

/// Whether `op` is a warp collective whose lanes a group meets in one step
/// ([`Machine::collective_in_step`], [`Machine::collective_join`]): not `activemask`, which
/// waits for no one.
fn meets_in_warp(op: Op) -> bool {
    matches!(
        op,
        Op::Shfl(_) | Op::Vote(_) | Op::MatchAny | Op::MatchAll | Op::Elect | Op::Redux(_)
    )
}

impl Machine<'_> {
    /// The lanes of `mask` (bit `l`: thread `wb + l`) ready to execute the fast instruction
    /// `f` together, the step budget aside (the callers check it): each guard is known.
    /// Returns the lanes whose guard holds (`None`: some lane needs the general
    /// interpreter, which also covers a shared access whose address is unknown or out of
    /// bounds).
    #[inline(always)]
    fn warp_guards(&self, wb: usize, mask: u32, f: &FastInst) -> Option<u32> {
        match f.op {
            FastOp::Slow => return None,
            FastOp::LdShared { r, off, esize, .. } | FastOp::StShared { r, off, esize, .. }
                if f.guard.is_none() =>
            {
                return self.shared_targets(wb, mask, r, off, esize).then_some(mask);
            }
            FastOp::LdShared { .. } | FastOp::StShared { .. } => {}
            _ if f.guard.is_none() => return Some(mask),
            _ => {}
        }
        let mut active = 0;
        let ws = self.slot(wb);
        each_lane!(mask, |l| {
            if self.fast_ready(ws + l, f, 0)? {
                active |= 1 << l;
            }
        });
        Some(active)
    }

    /// Whether the shared access of `esize` bytes at `[r+off]` has a target for every lane
    /// of `mask` (`fast::Machine::shared_target` of each): its address known, inside the
    /// shared window and not found misaligned.
    #[inline(always)]
    fn shared_targets(&self, wb: usize, mask: u32, r: RegId, off: i64, esize: u32) -> bool {
        let ws = self.slot(wb);
        if self.known_of(ws, Src::Reg(r), mask) != mask {
            return false;
        }
        let window = self.smem.len() as u64;
        let limit = self
            .smem_size
            .map_or(window, |size| u64::from(size).min(window));
        let i = ws + r.index() * LANES;
        let mut ok = true;
        each_lane!(mask, |l| {
            let x = self.vals[i + l].wrapping_add(off as u64) as u32;
            ok &= u64::from(x) + u64::from(esize) <= limit && !self.misaligned(x, esize);
        });
        ok
    }

    /// The values and sources of operand `s` for all lanes of the warp whose slot is `ws`.
    #[inline(always)]
    pub(super) fn lanes_of(&self, ws: usize, s: Src) -> ([u64; LANES], [u32; LANES]) {
        match s {
            Src::Reg(r) => {
                let i = ws + r.index() * LANES;
                let mut v = [0; LANES];
                let mut u = [0; LANES];
                v.copy_from_slice(&self.vals[i..i + LANES]);
                u.copy_from_slice(&self.unk[i..i + LANES]);
                (v, u)
            }
            Src::Imm(v) => ([v; LANES], [0; LANES]),
        }
    }

    /// The values of register `r` of every lane of the warp whose slot is `ws` (its row, in
    /// place).
    #[inline(always)]
    fn row(&self, ws: usize, r: RegId) -> &[u64; LANES] {
        let i = ws + r.index() * LANES;
        // A slice of `LANES` values always converts; the empty fallback is never taken.
        <&[u64; LANES]>::try_from(&self.vals[i..i + LANES]).unwrap_or(&[0; LANES])
    }

    /// The lanes of `mask` whose operand `s` is known (all of them when no lane's source is
    /// set: one reduction over the row, the common case).
    #[inline(always)]
    pub(super) fn known_of(&self, ws: usize, s: Src, mask: u32) -> u32 {
        let Src::Reg(r) = s else {
            return mask;
        };
        let i = ws + r.index() * LANES;
        let row = &self.unk[i..i + LANES];
        if row.iter().fold(0, |a, &u| a | u) == 0 {
            return mask;
        }
        let mut known = 0u32;
        for (l, &u) in row.iter().enumerate() {
            known |= u32::from(u == 0) << l;
        }
        mask & known
    }

    /// Writes known results `out` to register `d` of the lanes of `lanes`.
    #[inline(always)]
    fn put_lanes(&mut self, ws: usize, d: RegId, lanes: u32, out: &[u64; LANES]) {
        let i = ws + d.index() * LANES;
        if lanes == 0 {
            return;
        }
        // The lanes `lo..hi`, when `lanes` is that range (a group of consecutive lanes, the
        // common case): copied as one block.
        let lo = lanes.trailing_zeros() as usize;
        let hi = LANES - lanes.leading_zeros() as usize;
        if lanes == u32::MAX {
            // The whole warp (the common case): copies of a fixed size, without a call.
            self.vals[i..i + LANES].copy_from_slice(out);
            self.unk[i..i + LANES].fill(0);
        } else if (lanes >> lo).count_ones() as usize == hi - lo {
            self.vals[i + lo..i + hi].copy_from_slice(&out[lo..hi]);
            self.unk[i + lo..i + hi].fill(0);
        } else {
            // A blend (branch-free, so it vectorizes): lanes outside `lanes` keep theirs.
            let vals = &mut self.vals[i..i + LANES];
            let unk = &mut self.unk[i..i + LANES];
            for (l, (v, u)) in vals.iter_mut().zip(unk.iter_mut()).enumerate() {
                let on = (lanes >> l) & 1 != 0;
                *v = if on { out[l] } else { *v };
                *u = if on { 0 } else { *u };
            }
        }
    }

    /// Executes the fast operation `op` at `pc` for the lanes of `active` with one dispatch;
    /// returns the lanes that take a branch (`op` is `bra`). Integer operations on known
    /// values run as loops over the warp's lanes (each register of a warp is contiguous:
    /// `values::Machine::slot`); scalar shared accesses take the warp-level path of
    /// `warp_shared.rs` when it applies; lanes with an unknown operand, and the other
    /// operations, run the lane-by-lane fast path's code lane by lane (shared accesses in
    /// lane order).
    /// The integer operations of [`Machine::warp_exec`] as loops over the lanes of `active`
    /// (the warp's slot is `ws`) whose operands are known; returns those lanes (the caller
    /// runs the others lane by lane). Out of line: the per-lane arrays of these loops would
    /// make the stack frame of `lockstep`, which is called at every turn of a lane and
    /// mostly returns at once, many pages deep.
    /// The operation is read here from the fast table at `pc` (the caller's copy of it,
    /// passed by reference to a fresh stack copy, was read back across two stores: a
    /// store-forwarding stall at every call).
    #[inline(never)]
    fn warp_alu(&mut self, ws: usize, active: u32, pc: u32) -> u32 {
        let Some(&FastInst { op, .. }) = self.fast.get(pc as usize) else {
            return 0;
        };
        // The values of operand `$s` for every lane: its register row in place, or the
        // immediate for every lane.
        macro_rules! row {
            ($s:expr, $splat:ident) => {
                match $s {
                    Src::Reg(r) => self.row(ws, r),
                    Src::Imm(v) => {
                        $splat = [v; LANES];
                        &$splat
                    }
                }
            };
        }
        match op {
            FastOp::Bin {
                alu: k,
                bits,
                signed,
                d,
                a,
                b,
            } => {
                let known = self.known_of(ws, a, self.known_of(ws, b, active));
                let m = ones(bits);
                let mut out = [0u64; LANES];
                let sa;
                let av: &[u64; LANES] = row!(a, sa);
                // An immediate second operand (the common case) is not spread over lanes:
                // `bv` is then never read (`map!` takes `imm`).
                let (imm, bv) = match b {
                    Src::Imm(y) => (Some(y), av),
                    Src::Reg(r) => (None, self.row(ws, r)),
                };
                macro_rules! map {
                    (|$x:ident, $y:ident| $e:expr) => {
                        match imm {
                            Some($y) => {
                                for (o, &$x) in out.iter_mut().zip(av) {
                                    *o = ($e) & m;
                                }
                            }
                            None => {
                                for ((o, &$x), &$y) in out.iter_mut().zip(av).zip(bv) {
                                    *o = ($e) & m;
                                }
                            }
                        }
                    };
                }
                match k {
                    Alu::Add => map!(|x, y| x.wrapping_add(y)),
                    Alu::Sub => map!(|x, y| x.wrapping_sub(y)),
                    Alu::And => map!(|x, y| x & y),
                    Alu::Or => map!(|x, y| x | y),
                    Alu::Xor => map!(|x, y| x ^ y),
                    // The low `bits` bits of a product do not depend on signedness.
                    Alu::MulLo => map!(|x, y| x.wrapping_mul(y)),
                    // A shift by an immediate (the common case): `alu`'s shift with the
                    // amount's cases decided once, a branch-free loop.
                    Alu::Shl | Alu::Shr if imm.is_some() => {
                        let y = imm.unwrap_or(0) & 0xffff_ffff;
                        shift_rows(k, bits, signed, y, av, &mut out);
                    }
                    // One loop per operation, so that it is decoded once, not per lane.
                    Alu::Shl => map!(|x, y| alu(Alu::Shl, bits, signed, x, y)),
                    Alu::Shr => map!(|x, y| alu(Alu::Shr, bits, signed, x, y)),
                    Alu::Min => map!(|x, y| alu(Alu::Min, bits, signed, x, y)),
                    Alu::Max => map!(|x, y| alu(Alu::Max, bits, signed, x, y)),
                }
                self.put_lanes(ws, d, known, &out);
                known
            }
            FastOp::Mad {
                bits, d, a, b, c, ..
            } => {
                let known =
                    self.known_of(ws, a, self.known_of(ws, b, self.known_of(ws, c, active)));
                let m = ones(bits);
                let mut out = [0u64; LANES];
                let (sa, sc);
                let av: &[u64; LANES] = row!(a, sa);
                let cv: &[u64; LANES] = row!(c, sc);
                // `mad.lo`: the low `bits` bits, whatever the signedness. An immediate
                // factor (the common case) is not spread over lanes.
                match b {
                    Src::Imm(y) => {
                        for (l, o) in out.iter_mut().enumerate() {
                            *o = av[l].wrapping_mul(y).wrapping_add(cv[l]) & m;
                        }
                    }
                    Src::Reg(r) => {
                        let bv = self.row(ws, r);
                        for (l, o) in out.iter_mut().enumerate() {
                            *o = av[l].wrapping_mul(bv[l]).wrapping_add(cv[l]) & m;
                        }
                    }
                }
                self.put_lanes(ws, d, known, &out);
                known
            }
            FastOp::Mov { bits, d, s } => {
                let known = self.known_of(ws, s, active);
                let m = ones(bits);
                let mut out = [0u64; LANES];
                let ss;
                let sv: &[u64; LANES] = row!(s, ss);
                for (x, v) in out.iter_mut().zip(sv) {
                    *x = v & m;
                }
                self.put_lanes(ws, d, known, &out);
                known
            }
            FastOp::Setp {
                cmp,
                bits,
                signed,
                p,
                q,
                a,
                b,
            } => {
                let known = self.known_of(ws, a, self.known_of(ws, b, active));
                let mut out = [0u64; LANES];
                let (sa, sb);
                let av: &[u64; LANES] = row!(a, sa);
                let bv: &[u64; LANES] = row!(b, sb);
                compare_rows(cmp, bits, signed, av, bv, &mut out);
                self.put_lanes(ws, p, known, &out);
                if let Some(q) = q {
                    for x in &mut out {
                        *x ^= 1;
                    }
                    self.put_lanes(ws, q, known, &out);
                }
                known
            }
            FastOp::DivRem {
                rem,
                bits,
                signed,
                d,
                a,
                b,
            } => {
                // Known operands and no division by zero in any lane (otherwise each lane
                // runs the lane-by-lane code, which interns the zero divisor's source).
                let known = self.known_of(ws, a, self.known_of(ws, b, active));
                let (sa, sb);
                let av: &[u64; LANES] = row!(a, sa);
                let bv: &[u64; LANES] = row!(b, sb);
                let mut out = [0u64; LANES];
                let mut nonzero = true;
                for (l, ((o, &x), &y)) in out.iter_mut().zip(av).zip(bv).enumerate() {
                    match div_rem(x, y, bits, signed, rem) {
                        Some(q) => *o = mask(q, bits),
                        None => nonzero &= (active >> l) & 1 == 0,
                    }
                }
                if known == active && nonzero {
                    self.put_lanes(ws, d, known, &out);
                    known
                } else {
                    0
                }
            }
            _ => 0,
        }
    }

    #[inline(always)]
    fn warp_exec(&mut self, wb: usize, active: u32, pc: u32, op: FastOp) -> u32 {
        let ws = self.slot(wb);
        let known = match op {
            FastOp::Bin { .. }
            | FastOp::Mad { .. }
            | FastOp::Mov { .. }
            | FastOp::Setp { .. }
            | FastOp::DivRem { .. } => self.warp_alu(ws, active, pc),
            FastOp::Bra { .. } => return active,
            FastOp::LdShared {
                d,
                r,
                off,
                esize,
                bits,
                signed,
            } => {
                let op = Load {
                    d,
                    r,
                    off,
                    esize,
                    bits,
                    signed,
                };
                if self.warp_load(wb, active, pc, op) {
                    active
                } else {
                    0
                }
            }
            FastOp::StShared { r, off, esize, s } => {
                let stored = self.warp_store(wb, active, pc, Store { r, off, esize, s });
                if stored { active } else { 0 }
            }
            _ => 0,
        };
        // The rest: lane by lane, with the lane-by-lane fast path's code.
        each_lane!(active & !known, |l| {
            self.exec_fast(wb + l, ws + l, pc, op);
        });
        0
    }

    /// Warp steps of `--warp-sync` for the lanes of `mask` (all runnable at `pc`, the
    /// warp's minimum PC): the fast instruction at `pc` for all of them, and while
    /// `converged` (no other lane of the warp can run) and they stay together, the fast
    /// instructions after it, one warp step each. Returns `false`, having done nothing,
    /// when the first instruction needs the general interpreter for some lane (the caller
    /// then steps the lanes one by one).
    pub(super) fn warp_step_fast(
        &mut self,
        wb: usize,
        mask: u32,
        pc: u32,
        converged: bool,
    ) -> bool {
        let w = wb / LANES;
        let mut most = 0;
        each_lane!(mask, |l| {
            most = most.max(self.th[wb + l].executed);
        });
        let room = self.cfg.step_limit.saturating_sub(most);
        let mut steps = 0u64;
        let mut pc = pc;
        // Where the lanes go: those of `taken` to `target`, the others to `fall`.
        let (mut taken, mut target, mut fall) = (0u32, pc, pc);
        while steps < room {
            let Some(&f) = self.fast.get(pc as usize) else {
                break;
            };
            let Some(active) = self.warp_guards(wb, mask, &f) else {
                break;
            };
            if steps > 0 {
                // The next warp step (the caller counted the first).
                self.warp_step[w] = self.warp_step[w].wrapping_add(1);
            }
            let branch = self.warp_exec(wb, active, pc, f.op);
            steps += 1;
            let to = match f.op {
                FastOp::Bra { target } => target,
                _ => pc + 1,
            };
            if !converged || (branch != 0 && branch != mask) {
                (taken, target, fall) = (branch, to, pc + 1);
                break;
            }
            pc = if branch != 0 { to } else { pc + 1 };
            (taken, target, fall) = (0, pc, pc);
        }
        if steps == 0 {
            return false;
        }
        each_lane!(mask, |l| {
            let th = &mut self.th[wb + l];
            th.executed += steps;
            th.pc = if taken & (1 << l) != 0 { target } else { fall };
        });
        self.instructions += u64::from(mask.count_ones()) * steps;
        true
    }

    /// A warp collective at `pc` reached by the lanes of `mask` (runnable, in lane order):
    /// when it completes once the last of them joins — every other lane of its member mask
    /// has already joined or has exited — completes it in place and returns `true`. Lane
    /// by lane, each lane but the last would join and find a member (the last lane) still
    /// running, which has no effect; the last lane's join completes it. Returns `false`
    /// (nothing done) when that reasoning does not apply: a guard, an unknown member mask,
    /// `activemask`, a budget that one of these steps would exceed.
    pub(super) fn collective_in_step(&mut self, wb: usize, mask: u32, pc: u32) -> bool {
        let Some(&inst) = self.ir.insts.get(pc as usize) else {
            return false;
        };
        if !meets_in_warp(inst.op) || inst.guard.is_some() || mask == 0 {
            return false;
        }
        let last = 31 - mask.leading_zeros() as usize;
        if self.over_cta(self.instructions + u64::from(mask.count_ones())) {
            return false;
        }
        // The last lane's member mask first: the join completes the collective only if
        // every other member lane already waits at it or has ended (checked first, as it
        // fails most often: lanes still running towards it).
        let Some(members) = self.known_member_mask(wb + last, pc, &inst) else {
            return false;
        };
        if members & mask != mask {
            return false;
        }
        let w = wb / LANES;
        for t in self.warp_lanes(w) {
            let l = t - wb;
            if members & (1 << l) == 0 || mask & (1 << l) != 0 {
                continue;
            }
            match self.th[t].state {
                State::Coll(p) if p == pc => {}
                State::Exited | State::Trapped(_) | State::Error => {}
                _ => return false,
            }
        }
        // Every other lane's join finds the last lane running (its member mask names it)
        // and has no effect.
        let same_mask = matches!(self.ir.operands(&inst).last(), Some(Opnd::Imm(_)));
        let mut ok = true;
        each_lane!(mask, |l| {
            let t = wb + l;
            let th = &self.th[t];
            ok &= th.executed < self.cfg.step_limit && th.may == 0;
            if ok && !same_mask {
                ok &= self
                    .known_member_mask(t, pc, &inst)
                    .is_some_and(|m| m & (1 << last) != 0);
            }
        });
        if !ok {
            return false;
        }
        self.wait_at_collective(wb, mask, pc);
        // What the last lane's join (`try_collective`) does, its outcome known: every member
        // lane waits here or has ended, so the lanes waiting here meet.
        let mut present = 0u32;
        for t in self.warp_lanes(w) {
            let l = t - wb;
            if members & (1 << l) != 0 && self.th[t].state == State::Coll(pc) {
                present |= 1 << l;
            }
        }
        let pcs = [pc; LANES];
        if !(self.warps && self.shfl_rows(w, &inst, present)) {
            self.exec_collective(w, &pcs, present);
        }
        self.collective_done(w, &pcs, present, true);
        debug_assert!(self.th[wb + last].state == State::Run);
        true
    }

    /// The lanes of the contiguous `group` (the cursor lane first) at the collective `inst`
    /// at `pc` join it together when it cannot complete before the last of them has joined:
    /// a member lane outside the group runs elsewhere or waits at something else. In the
    /// reference schedule each lane of the group in turn takes its step there (no lane runs
    /// in between: the group is contiguous), waits, and its join finds that lane and does
    /// nothing more; here they take those steps at once. Returns false, having done nothing,
    /// unless every lane's step is exactly that: no guard, a member mask given as an
    /// immediate (the same for every lane) that names every lane of the group, no lane under
    /// an input-dependent branch or at a step budget, no member lane waiting at another
    /// collective (its join would read that one's operands), no `activemask` in the kernel
    /// and no warpgroup effect at `pc`.
    fn collective_join(&mut self, wb: usize, group: u32, pc: u32, inst: &Inst) -> bool {
        if !meets_in_warp(inst.op)
            || inst.guard.is_some()
            || self.has_activemask
            || !self.wg_free(pc)
        {
            return false;
        }
        let Some(Opnd::Imm(members)) = self.member_mask_operand(inst) else {
            return false;
        };
        let members = members as u32;
        if members & group != group {
            return false;
        }
        let count = u64::from(group.count_ones());
        if self.over_cta(self.instructions + count) {
            return false;
        }
        let mut ok = true;
        each_lane!(group, |l| {
            let th = &self.th[wb + l];
            ok &= th.executed < self.cfg.step_limit && th.may == 0;
        });
        if !ok {
            return false;
        }
        // A member lane that makes every join of the group's lanes return: one that runs
        // elsewhere or waits at something that is not a collective.
        let mut missing = false;
        for t in self.warp_lanes(wb / LANES) {
            let l = t - wb;
            if members & (1 << l) == 0 || group & (1 << l) != 0 {
                continue;
            }
            match self.th[t].state {
                State::Coll(p) if p == pc => {}
                State::Coll(_) => return false,
                State::Exited | State::Trapped(_) | State::Error => {}
                State::Run | State::BarWait | State::MbarWait { .. } => missing = true,
            }
        }
        if !missing {
            return false;
        }
        self.wait_at_collective(wb, group, pc);
        true
    }

    /// The lanes of `mask` take their step at the collective at `pc` and wait there.
    fn wait_at_collective(&mut self, wb: usize, mask: u32, pc: u32) {
        each_lane!(mask, |l| {
            let th = &mut self.th[wb + l];
            th.executed += 1;
            th.state = State::Coll(pc);
            th.pc = pc;
        });
        self.instructions += u64::from(mask.count_ones());
    }

    /// [`Machine::exec_collective`] of the `shfl` `inst` for the lanes of `present` of warp
    /// `w`, all at `inst`, when its source is a register or an immediate known in every
    /// present lane, its lane and clamp operands are immediates and its destination is a
    /// register: [`Machine::shfl_permute`] of the source's register row, without the
    /// general code's per-lane operand reads. Returns false, having done nothing, for any
    /// other shape (the general code then runs).
    pub(super) fn shfl_rows(&mut self, w: usize, inst: &Inst, present: u32) -> bool {
        let Op::Shfl(mode) = inst.op else {
            return false;
        };
        let ops = self.ir.operands(inst);
        let (Some(&dest), Some(&a), Some(&Opnd::Imm(b)), Some(&Opnd::Imm(c))) =
            (ops.first(), ops.get(1), ops.get(2), ops.get(3))
        else {
            return false;
        };
        let (d, p) = super::collectives::value_and_predicate(self.ir, dest);
        let Opnd::Reg(d) = d else {
            return false;
        };
        let src = match a {
            Opnd::Reg(r) => Src::Reg(r),
            Opnd::Imm(v) => Src::Imm(v),
            _ => return false,
        };
        let (av, au) = self.lanes_of(self.slot(w * LANES), src);
        // An unknown input: the general code unions the inputs' sources first.
        let mut unknown = 0;
        each_lane!(present, |l| {
            unknown |= au[l];
        });
        if unknown != 0 {
            return false;
        }
        self.shfl_permute(w, present, (&av, &au), (mode, b, c), d, p);
        true
    }

    /// The lane permutation of `shfl` `mode` with lane operand `b` and clamp operand `c`
    /// ([`shfl_source`] of every lane), from the machine's few tables or computed and kept.
    fn shfl_table(&mut self, mode: ShflMode, b: u64, c: u64) -> ShflTable {
        if let Some(t) = self
            .shfl_tables
            .iter()
            .find(|t| t.mode == mode && t.b == b && t.c == c)
        {
            return *t;
        }
        let mut t = ShflTable {
            mode,
            b,
            c,
            source: [0; LANES],
            in_range: 0,
            pred: 0,
        };
        for l in 0..LANES {
            let (j, pval) = shfl_source(mode, l as u32, b, c);
            // `shfl_source` gives the lane itself when the source is out of range.
            if let Ok(j) = u8::try_from(j)
                && usize::from(j) < LANES
            {
                t.source[l] = j;
                t.in_range |= 1 << l;
            }
            t.pred |= u32::from(pval) << l;
        }
        if self.shfl_tables.len() < MAX_SHFL_TABLES {
            self.shfl_tables.push(t);
        }
        t
    }

    /// A `shfl` whose lane selection operands are immediates, for the lanes of `present` of
    /// warp `w`: each lane's result is another lane's input (`a`: values and sources, read
    /// before any write), on the warp's register rows ([`Machine::shfl_table`]). A lane whose
    /// source is out of range or absent gets 0 from "a shuffle from an inactive lane", that
    /// source interned once when some lane needs it (as lane-by-lane code does at its first
    /// such lane). Each lane writes `d`, then `p`: its own registers, so the rows can be
    /// written one after the other.
    pub(super) fn shfl_permute(
        &mut self,
        w: usize,
        present: u32,
        (av, au): (&[u64; LANES], &[u32; LANES]),
        (mode, b, c): (ShflMode, u64, u64),
        d: RegId,
        p: Opnd,
    ) {
        let table = self.shfl_table(mode, b, c);
        // The lanes whose source lane is present, and their values and sources.
        let mut sourced = 0u32;
        let (mut v, mut u) = ([0u64; LANES], [0u32; LANES]);
        for l in 0..LANES {
            let j = usize::from(table.source[l]);
            (v[l], u[l]) = (av[j], au[j]);
            sourced |= (((table.in_range >> l) & (present >> j)) & 1) << l;
        }
        let inactive = if present & !sourced != 0 {
            self.src
                .single(crate::ValueSource::Other("a shuffle from an inactive lane"))
        } else {
            0
        };
        let ws = self.slot(w * LANES);
        let i = ws + d.index() * LANES;
        let vals = &mut self.vals[i..i + LANES];
        let unk = &mut self.unk[i..i + LANES];
        for (l, (x, y)) in vals.iter_mut().zip(unk.iter_mut()).enumerate() {
            if (present >> l) & 1 == 0 {
                continue;
            }
            (*x, *y) = if (sourced >> l) & 1 != 0 {
                (v[l], u[l])
            } else {
                (0, inactive)
            };
        }
        match p {
            Opnd::Reg(p) => {
                let i = ws + p.index() * LANES;
                each_lane!(present, |l| {
                    self.vals[i + l] = u64::from((table.pred >> l) & 1);
                    self.unk[i + l] = 0;
                });
            }
            _ => each_lane!(present, |l| {
                self.wr(w * LANES + l, p, u64::from((table.pred >> l) & 1), 0);
            }),
        }
    }

    /// Without `--warp-sync`: the group of lane `c` (the lanes `c..` of its warp runnable at
    /// its PC) executes lane-local instructions together, as far as they stay together.
    pub(super) fn lockstep(&mut self, c: usize) -> Group {
        let w = c / LANES;
        let wb = w * LANES;
        let end = self.warp_lanes(w).end;
        let mut pc = self.th[c].pc;
        if self.solo.alone(c, pc) {
            return Group::Nothing;
        }
        // Only an instruction the group can execute together starts one.
        let startable = self
            .fast
            .get(pc as usize)
            .is_some_and(|f| !matches!(f.op, FastOp::Slow))
            || self.ir.insts.get(pc as usize).is_some_and(|i| {
                self.lane_local_at(pc, i.op)
                    || matches!(i.op, Op::Bar(_) | Op::WarpSync)
                    || meets_in_warp(i.op)
            });
        if !startable {
            return Group::Nothing;
        }
        let mut group = 0u32;
        for t in c..end {
            if self.th[t].state == State::Run && self.th[t].pc == pc {
                group |= 1 << (t - wb);
            }
        }
        if group.count_ones() < 2 {
            let mut pcs = [u32::MAX; LANES];
            for t in c + 1..end {
                if self.th[t].state == State::Run {
                    pcs[t - wb] = self.th[t].pc;
                }
            }
            self.solo = Solo { cursor: c, pcs };
            return Group::Nothing;
        }
        // The group's lanes move.
        self.solo.forget();
        let lanes = u64::from(group.count_ones());
        let last = wb + 31 - group.leading_zeros() as usize;
        // Lanes between `c` and the group's last lane that run elsewhere would run in
        // between in the reference schedule: only a contiguous group may complete a
        // collective in place.
        let contiguous =
            (c..=last).all(|t| group & (1 << (t - wb)) != 0 || self.th[t].state != State::Run);
        self.pass_lockstep = true;
        self.lockstep_used = true;
        self.cursor = c;
        let mut most = 0;
        each_lane!(group, |l| {
            most = most.max(self.th[wb + l].executed);
        });
        // Fast steps the budget allows every lane, and fast steps not yet counted.
        let mut room = self.cfg.step_limit.saturating_sub(most);
        let mut pending = 0u64;
        let mut advanced = false;
        while let Some(&f) = self.fast.get(pc as usize) {
            if !matches!(f.op, FastOp::Slow) {
                if pending >= room {
                    break;
                }
                let Some(active) = self.warp_guards(wb, group, &f) else {
                    break;
                };
                if let FastOp::Bra { target } = f.op {
                    // Lanes that branch apart leave the group: each goes on alone.
                    if active != 0 && active != group {
                        break;
                    }
                    pc = if active != 0 { target } else { pc + 1 };
                    pending += 1;
                } else {
                    self.warp_exec(wb, active, pc, f.op);
                    pc += 1;
                    pending += 1;
                    if self.stop {
                        // A shared access found the order visible.
                        break;
                    }
                }
                advanced = true;
                continue;
            }
            // The general interpreter counts its own steps: count the fast ones first.
            self.warp_advance(wb, group, pending, pc);
            room -= pending;
            pending = 0;
            let Some(&inst) = self.ir.insts.get(pc as usize) else {
                break;
            };
            if self.lane_local_at(pc, inst.op) {
                if self.over_cta(self.instructions + lanes) {
                    break;
                }
                // With a step left in every lane's budget, a pure instruction is computed
                // once per distinct operand tuple (`warp_pure`).
                if room == 0 || !self.warp_pure(wb, group, pc, &inst) {
                    each_lane!(group, |l| {
                        self.step_slow(wb + l);
                    });
                }
                advanced = true;
                if self.stop {
                    return Group::Advanced;
                }
                let mut still = true;
                each_lane!(group, |l| {
                    let th = &self.th[wb + l];
                    still &= th.state == State::Run && th.pc == pc + 1;
                });
                if !still {
                    return Group::Advanced;
                }
                room = room.saturating_sub(1);
                pc += 1;
                continue;
            }
            if contiguous
                && !(self.has_activemask && self.activemask_waits(w))
                && (self.collective_in_step(wb, group, pc)
                    || (!self.has_activemask
                        && self.wg_free(pc)
                        && self.warp_barrier(wb, group, pc, &inst)))
            {
                return Group::Collective { last };
            }
            if contiguous && self.collective_join(wb, group, pc, &inst) {
                return Group::Advanced;
            }
            break;
        }
        self.warp_advance(wb, group, pending, pc);
        if advanced {
            Group::Advanced
        } else {
            Group::Nothing
        }
    }

    /// Whether the step of a thread at `pc` can move no other thread (change no other
    /// thread's PC or state): an instruction a group executes lane by lane
    /// ([`Machine::lane_local_at`]) or a branch. ([`Solo`].)
    pub(super) fn moves_only_itself(&self, pc: u32) -> bool {
        self.ir
            .insts
            .get(pc as usize)
            .is_some_and(|i| i.op == Op::Bra || self.lane_local_at(pc, i.op))
    }

    /// Whether the instruction at `pc` is not a `wgmma` instruction (those have warpgroup
    /// effects beyond the lane: `warpgroup` module).
    fn wg_free(&self, pc: u32) -> bool {
        self.wg.kinds.get(pc as usize).is_none_or(Option::is_none)
    }

    /// Whether a group executes the instruction `op` at `pc` lane by lane inside its
    /// lock-step: `op` is [`lane_local`], and the instruction's warpgroup part is lane-local
    /// too: none, or the count of an `.aligned` instruction other than `wgmma`
    /// (`WgKind::Warp`: a list per thread, checked once every thread has exited).
    fn lane_local_at(&self, pc: u32, op: Op) -> bool {
        lane_local(op)
            && self
                .wg
                .kinds
                .get(pc as usize)
                .is_none_or(|k| matches!(k, None | Some(WgKind::Warp)))
    }

    /// Whether a lane of warp `w` waits at an `activemask`.
    fn activemask_waits(&self, w: usize) -> bool {
        self.warp_lanes(w).any(|t| {
            matches!(self.th[t].state, State::Coll(p)
                if self.ir.insts.get(p as usize).is_some_and(|i| i.op == Op::Activemask))
        })
    }

    /// Counts `steps` executed instructions for each lane of `mask` and moves each to `pc`,
    /// in one pass over the lanes.
    #[inline(always)]
    fn warp_advance(&mut self, wb: usize, mask: u32, steps: u64, pc: u32) {
        each_lane!(mask, |l| {
            let th = &mut self.th[wb + l];
            th.executed += steps;
            th.pc = pc;
        });
        self.instructions += u64::from(mask.count_ones()) * steps;
    }
}

/// [`super::alu::compare`] of each lane's operands, `out[l]` 1 when it holds: the operands are first
/// brought to one unsigned order (sign-extended and offset when the comparison is signed,
/// masked otherwise), so that each comparison is one loop without a case per lane.
#[inline(always)]
fn compare_rows(
    cmp: Cmp,
    bits: u8,
    signed: bool,
    a: &[u64; LANES],
    b: &[u64; LANES],
    out: &mut [u64; LANES],
) {
    // `lo`, `ls`, `hi`, `hs` compare unsigned whatever the type; equality is the same
    // either way (sign extension is one-to-one on the masked bits).
    let signed = signed && !matches!(cmp, Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs);
    let key = |v: u64| {
        if signed {
            (sx(v, bits) as u64) ^ (1 << 63)
        } else {
            mask(v, bits)
        }
    };
    let (mut ka, mut kb) = ([0u64; LANES], [0u64; LANES]);
    for l in 0..LANES {
        (ka[l], kb[l]) = (key(a[l]), key(b[l]));
    }
    macro_rules! each {
        (|$x:ident, $y:ident| $e:expr) => {
            for ((o, &$x), &$y) in out.iter_mut().zip(&ka).zip(&kb) {
                *o = u64::from($e);
            }
        };
    }
    match cmp {
        Cmp::Eq | Cmp::Equ => each!(|x, y| x == y),
        Cmp::Ne | Cmp::Neu => each!(|x, y| x != y),
        Cmp::Lt | Cmp::Ltu | Cmp::Lo => each!(|x, y| x < y),
        Cmp::Le | Cmp::Leu | Cmp::Ls => each!(|x, y| x <= y),
        Cmp::Gt | Cmp::Gtu | Cmp::Hi => each!(|x, y| x > y),
        Cmp::Ge | Cmp::Geu | Cmp::Hs => each!(|x, y| x >= y),
        Cmp::Num => out.fill(1),
        Cmp::Nan => out.fill(0),
    }
}

/// `alu(k, bits, signed, x, y)` of each lane's `x` (`a`), `k` a shift, `y` the amount (its
/// low 32 bits, as `alu` reads it) the same for every lane, masked to `bits` (`out[l]`).
#[inline(always)]
fn shift_rows(k: Alu, bits: u8, signed: bool, y: u64, a: &[u64; LANES], out: &mut [u64; LANES]) {
    let m = ones(bits);
    let wide = y >= u64::from(bits);
    match k {
        Alu::Shl if wide => out.fill(0),
        Alu::Shl => {
            for (o, &x) in out.iter_mut().zip(a) {
                *o = (x << y) & m;
            }
        }
        // Arithmetic: the sign fills the result when the amount is the width or more.
        _ if signed => {
            let y = if wide { 63 } else { y };
            for (o, &x) in out.iter_mut().zip(a) {
                *o = ((sx(x, bits) >> y) as u64) & m;
            }
        }
        _ if wide => out.fill(0),
        _ => {
            for (o, &x) in out.iter_mut().zip(a) {
                *o = ((x & m) >> y) & m;
            }
        }
    }
}

/// The mask of the low `bits` bits (`alu::mask` as a constant).
#[inline(always)]
fn ones(bits: u8) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// See [`Machine::near_budget`].
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct PassPeak {
    pub(super) instructions: u64,
    pub(super) commands: u64,
    pub(super) lane_steps: u64,
}

impl Machine<'_> {
    /// Whether a warp pass of `lanes` as long as the longest so far, twice over, could reach
    /// the CTA instruction budget, a lane's step budget or the memory budget. Such a pass
    /// runs lane by lane: the reference schedule, where a stop needs no repetition. (The
    /// rule only saves time: a pass with lock-step that stops is still repeated.)
    pub(super) fn near_budget(&self, lanes: std::ops::Range<usize>) -> bool {
        let peak = self.pass_peak;
        let twice = |x: u64, slack: u64| x.saturating_mul(2).saturating_add(slack);
        let most = lanes.map(|t| self.th[t].executed).max().unwrap_or(0);
        // `push` checks the memory budget every 1024 commands.
        let bytes = twice(peak.commands, 1024).saturating_mul(super::memory::COMMAND_BYTES + 4);
        self.over_cta(self.instructions.saturating_add(twice(
            peak.instructions,
            2 * u64::from(weft_program::WARP_SIZE),
        ))) || most.saturating_add(twice(peak.lane_steps, 2)) > self.cfg.step_limit
            || self.memory_used().saturating_add(bytes) > self.cfg.max_memory
    }
}
