//! A lock-step group's step of an instruction whose per-lane effect is a pure function of
//! the lane's operands: floating-point arithmetic (`Op::FArith`, `Op::Float`) and
//! tensor-core results (`Op::TensorCore`). The general interpreter computes the result of
//! each lane whose operands (values and source ids) differ from those of the last lane it
//! computed; every other lane gets that lane's destination registers copied. The general
//! path's per-lane work (decode, dispatch, the source-set unions, the term interning) is
//! then done once per distinct operand tuple instead of once per lane: in attention kernels
//! the lanes of a warp mostly hold values unknown by the same sources.
//!
//! Exact: the interpreter's computation for these operations reads nothing but the
//! operands and the machine's interned sets, terms and choices, and writes nothing but the
//! destination registers and those interning tables, whose lookups are idempotent (a second
//! call on the same operands returns the same ids and adds nothing). A lane whose operands
//! equal an earlier lane's therefore gets the same destination values, and skipping its
//! call changes nothing else.

use super::Machine;
use super::values::LANES;
use super::warpgroup::WgKind;
use crate::ir::{Inst, Op, Opnd};

/// The most register operands a step keys its lanes by.
const MAX_KEY: usize = 4;

/// Which destination registers an operation writes: the first register of its destination
/// (`Machine::wr`, `Op::FArith`), or every register of a destination list
/// (`Machine::clobber`).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Dests {
    First,
    All,
}

/// The destinations of `op` when a lock-step group may step it with [`Machine::warp_pure`],
/// and whether its result reads its operands.
fn pure_kind(op: Op) -> Option<(Dests, bool)> {
    match op {
        Op::FArith { .. } => Some((Dests::First, true)),
        Op::Float { .. } => Some((Dests::All, true)),
        // `exec_opaque`: the same unknown source for every lane, whatever the operands.
        Op::TensorCore => Some((Dests::All, false)),
        _ => None,
    }
}

impl Machine<'_> {
    /// The step of the lanes of `group` (bit `l`: thread `wb + l`, each runnable at `pc`,
    /// with one more step within its budget) through the unguarded instruction `inst` at
    /// `pc`, when its operation is one [`pure_kind`] lists: the general interpreter's
    /// result of each distinct operand tuple, copied to the lanes that have it. Returns
    /// `false`, having done nothing, for other instructions (the caller steps the lanes
    /// one by one).
    pub(super) fn warp_pure(&mut self, wb: usize, group: u32, pc: u32, inst: &Inst) -> bool {
        let Some((dests, reads)) = pure_kind(inst.op) else {
            return false;
        };
        // The warpgroup part of an `.aligned` instruction (`mma.sync`) is a per-thread
        // count, taken for every lane; a `wgmma` one has effects beyond the lane.
        let aligned = match self.wg.kinds.get(pc as usize) {
            None | Some(None) => false,
            Some(Some(WgKind::Warp)) => true,
            Some(Some(_)) => return false,
        };
        if inst.guard.is_some()
            || self
                .ir
                .tmem_users
                .get(pc as usize)
                .copied()
                .unwrap_or(false)
        {
            return false;
        }
        let ops = self.ir.operands(inst);
        // The register operands a lane's result depends on (immediates are the same for
        // every lane); anything else (a special register, a negated predicate, an address)
        // takes the lane-by-lane path.
        let mut keys = [0usize; MAX_KEY];
        let mut n = 0;
        if reads {
            for &o in ops.get(1..).unwrap_or(&[]) {
                match o {
                    Opnd::Reg(r) => {
                        let Some(k) = keys.get_mut(n) else {
                            return false;
                        };
                        *k = r.index() * LANES;
                        n += 1;
                    }
                    Opnd::Imm(_) => {}
                    _ => return false,
                }
            }
        }
        // The destination registers' offsets in a warp's slot.
        let mut outs = [0usize; 8];
        let mut m = 0;
        let mut add = |o: Opnd| -> bool {
            if let Opnd::Reg(r) = o {
                let Some(x) = outs.get_mut(m) else {
                    return false;
                };
                *x = r.index() * LANES;
                m += 1;
            }
            true
        };
        match ops.first() {
            Some(&Opnd::Reg(r)) => {
                add(Opnd::Reg(r));
            }
            Some(&Opnd::List(s, len)) => {
                let list = self.ir.list(s, len);
                let items = match dests {
                    Dests::First => list.get(..1).unwrap_or(&[]),
                    Dests::All => list,
                };
                for &o in items {
                    if !add(o) {
                        return false;
                    }
                }
            }
            _ => {}
        }
        let ws = self.slot(wb);
        // The last lane the interpreter computed, and its operands before it ran.
        let mut last: Option<usize> = None;
        let mut key = [(0u64, 0u32); MAX_KEY];
        // The lanes that take a computed lane's result, `(lane, computed lane)`, in lane
        // order: their destinations are copied after the loop, row by row. (Deferring the
        // copies changes nothing: a lane's computation reads and writes only its own lane's
        // registers, and each computed lane's destinations are written once, by its own
        // call, before the loop ends.)
        let mut copies = [(0u8, 0u8); LANES];
        let mut nc = 0;
        each_lane!(group, |l| {
            let t = wb + l;
            self.instructions += 1;
            self.th[t].executed += 1;
            let mut lane_key = [(0u64, 0u32); MAX_KEY];
            for (x, &k) in lane_key.iter_mut().zip(&keys[..n]) {
                *x = (self.vals[ws + k + l], self.unk[ws + k + l]);
            }
            match last {
                Some(c) if lane_key == key => {
                    if aligned {
                        self.warpgroup(t, pc, WgKind::Warp, ops);
                    }
                    if let Some(x) = copies.get_mut(nc) {
                        *x = (l as u8, c as u8);
                        nc += 1;
                    }
                    self.th[t].pc = pc + 1;
                }
                _ => {
                    self.exec(t, pc, inst);
                    (last, key) = (Some(l), lane_key);
                }
            }
        });
        let copies = &copies[..nc];
        for &d in &outs[..m] {
            let row = ws + d..ws + d + LANES;
            // (Rows of a warp's slot: every register the instruction names has one.)
            if let Some(vals) = self
                .vals
                .get_mut(row.clone())
                .and_then(|r| <&mut [u64; LANES]>::try_from(r).ok())
            {
                for &(l, c) in copies {
                    vals[l as usize % LANES] = vals[c as usize % LANES];
                }
            }
            if let Some(unk) = self
                .unk
                .get_mut(row)
                .and_then(|r| <&mut [u32; LANES]>::try_from(r).ok())
            {
                for &(l, c) in copies {
                    unk[l as usize % LANES] = unk[c as usize % LANES];
                }
            }
        }
        true
    }
}
