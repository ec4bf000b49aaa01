//! The interpreter's fast path: the common scalar instructions (integer ALU on registers
//! and immediates, `mov`, integer `setp`, `selp`, `bra`) pre-decoded once per emulation
//! into a flat table of fixed-size entries, executed without the generic operand and
//! closure machinery of `Machine::exec`. The semantics are the ALU functions of `alu.rs`,
//! shared with the general interpreter. Every other instruction, an unknown guard and
//! the step-budget overrun take the general path (`Machine::step_slow`), which performs
//! the whole step itself, so the fast path never changes what an emulation computes.

use weft_program::{AccessKind, Command, InstId};

use super::Machine;
use super::alu::{Alu, alu, compare, div_rem, mad, mask, mov_bits, sx};
use super::memory::Mem;
use super::values::LANES;
use crate::ir::{BoolOp, Cmp, Inst, Ir, Kind, MemBase, MulMode, Op, Opnd, RegId, Space};

/// A register or immediate source.
#[derive(Debug, Clone, Copy)]
pub(super) enum Src {
    Reg(RegId),
    Imm(u64),
}

/// A pre-decoded instruction.
#[derive(Debug, Clone, Copy)]
pub(super) enum FastOp {
    /// Executed by `Machine::exec`.
    Slow,
    /// Nothing but advancing the PC (`Op::Skip`).
    Nop,
    Bin {
        alu: Alu,
        bits: u8,
        signed: bool,
        d: RegId,
        a: Src,
        b: Src,
    },
    Mad {
        bits: u8,
        signed: bool,
        d: RegId,
        a: Src,
        b: Src,
        c: Src,
    },
    /// Integer `div` or `rem` (`rem`); on unknown operands the general interpreter's
    /// `exec_alu` computes the result.
    DivRem {
        rem: bool,
        bits: u8,
        signed: bool,
        d: RegId,
        a: Src,
        b: Src,
    },
    /// `mov` of a scalar: the value is masked to `bits` (1 for predicates).
    Mov {
        bits: u8,
        d: RegId,
        s: Src,
    },
    /// `mov` of a register list (`start`, `len` in the IR's operand lists, each a register
    /// or an immediate) packed into register `d`, `w` bits each (semantics of
    /// `Machine::mov`).
    MovPack {
        w: u8,
        d: RegId,
        start: u32,
        len: u8,
    },
    /// `mov` of `s` unpacked into a register list (each a register or `_`), `w` bits each.
    MovUnpack {
        w: u8,
        s: Src,
        start: u32,
        len: u8,
    },
    /// Integer `setp` without a boolean combiner; `q` is `None` when absent.
    Setp {
        cmp: Cmp,
        bits: u8,
        signed: bool,
        p: RegId,
        q: Option<RegId>,
        a: Src,
        b: Src,
    },
    Selp {
        d: RegId,
        a: Src,
        b: Src,
        c: Src,
    },
    /// `bra`; `target` is `pc + 1` when the operand is not a label.
    Bra {
        target: u32,
    },
    /// Scalar `ld.shared` into register `d` from `[r+off]` (semantics of `Machine::load`).
    LdShared {
        d: RegId,
        r: RegId,
        off: i64,
        esize: u32,
        bits: u8,
        signed: bool,
    },
    /// Scalar `st.shared` of `s` to `[r+off]` (semantics of `Machine::store`).
    StShared {
        r: RegId,
        off: i64,
        esize: u32,
        s: Src,
    },
}

/// A fast-table entry: the guard (as in [`Inst`]) and the operation.
#[derive(Debug, Clone, Copy)]
pub(super) struct FastInst {
    pub guard: Option<RegId>,
    pub guard_neg: bool,
    pub op: FastOp,
}

fn src(o: Option<&Opnd>) -> Option<Src> {
    match o {
        Some(Opnd::Reg(r)) => Some(Src::Reg(*r)),
        Some(Opnd::Imm(v)) => Some(Src::Imm(*v)),
        _ => None,
    }
}

fn dst(o: Option<&Opnd>) -> Option<RegId> {
    match o {
        Some(Opnd::Reg(r)) => Some(*r),
        _ => None,
    }
}

/// Decodes `inst` (at `pc`) into the fast table, or [`FastOp::Slow`].
fn decode(ir: &Ir, pc: u32, inst: &Inst) -> FastOp {
    let ops = ir.operands(inst);
    let bits = inst.ty.bits;
    let signed = inst.ty.signed();
    let bin = |alu: Alu| -> Option<FastOp> {
        Some(FastOp::Bin {
            alu,
            bits,
            signed,
            d: dst(ops.first())?,
            a: src(ops.get(1))?,
            b: src(ops.get(2))?,
        })
    };
    let op = match inst.op {
        op if let Some(k) = Alu::of(op) => bin(k),
        Op::Div | Op::Rem if inst.ty.kind != Kind::F => (|| {
            Some(FastOp::DivRem {
                rem: inst.op == Op::Rem,
                bits,
                signed,
                d: dst(ops.first())?,
                a: src(ops.get(1))?,
                b: src(ops.get(2))?,
            })
        })(),
        Op::Mad(MulMode::Lo) => (|| {
            Some(FastOp::Mad {
                bits,
                signed,
                d: dst(ops.first())?,
                a: src(ops.get(1))?,
                b: src(ops.get(2))?,
                c: src(ops.get(3))?,
            })
        })(),
        Op::Mov => (|| {
            // A register list (vector pack or unpack) whose items the fast path reads and
            // writes as the general interpreter does: registers, immediates, `_`.
            let list = |o: Option<&Opnd>, sinks: bool| -> Option<(u32, u8)> {
                let &Opnd::List(start, len) = o? else {
                    return None;
                };
                let fits = len > 0
                    && ir.list(start, len).iter().all(|x| match x {
                        Opnd::Reg(_) => true,
                        Opnd::Imm(_) => !sinks,
                        Opnd::Sink => sinks,
                        _ => false,
                    });
                Some((start, u8::try_from(len).ok()?)).filter(|_| fits)
            };
            let w = |len: u8| bits / len;
            if let Some((start, len)) = list(ops.get(1), false) {
                return Some(FastOp::MovPack {
                    w: w(len),
                    d: dst(ops.first())?,
                    start,
                    len,
                });
            }
            if let Some((start, len)) = list(ops.first(), true) {
                return Some(FastOp::MovUnpack {
                    w: w(len),
                    s: src(ops.get(1))?,
                    start,
                    len,
                });
            }
            Some(FastOp::Mov {
                bits: mov_bits(inst.ty),
                d: dst(ops.first())?,
                s: src(ops.get(1))?,
            })
        })(),
        Op::Setp(cmp, BoolOp::None) if inst.ty.kind != Kind::F => (|| {
            let (p, q) = match ops.first()? {
                Opnd::List(s, 2) => {
                    let l = ir.list(*s, 2);
                    let q = match l.get(1)? {
                        Opnd::Reg(q) => Some(*q),
                        Opnd::Sink => None,
                        _ => return None,
                    };
                    (dst(l.first())?, q)
                }
                Opnd::Reg(p) => (*p, None),
                _ => return None,
            };
            Some(FastOp::Setp {
                cmp,
                bits,
                signed,
                p,
                q,
                a: src(ops.get(1))?,
                b: src(ops.get(2))?,
            })
        })(),
        Op::Selp => (|| {
            Some(FastOp::Selp {
                d: dst(ops.first())?,
                a: src(ops.get(1))?,
                b: src(ops.get(2))?,
                c: src(ops.get(3))?,
            })
        })(),
        Op::Bra => Some(FastOp::Bra {
            target: match ops.first() {
                Some(Opnd::Label(target)) => target.0,
                _ => pc + 1,
            },
        }),
        Op::Skip => Some(FastOp::Nop),
        Op::Ld if inst.space == Space::Shared => (|| {
            let Some(Opnd::Mem(MemBase::Reg(r), off)) = ops.get(1) else {
                return None;
            };
            Some(FastOp::LdShared {
                d: dst(ops.first())?,
                r: *r,
                off: *off,
                esize: inst.ty.bytes().max(1),
                bits,
                signed,
            })
        })(),
        Op::St if inst.space == Space::Shared => (|| {
            let Some(Opnd::Mem(MemBase::Reg(r), off)) = ops.first() else {
                return None;
            };
            Some(FastOp::StShared {
                r: *r,
                off: *off,
                esize: inst.ty.bytes().max(1),
                s: src(ops.get(1))?,
            })
        })(),
        _ => None,
    };
    op.unwrap_or(FastOp::Slow)
}

/// The fast table of `ir`, one entry per instruction.
pub(super) fn table(ir: &Ir) -> Vec<FastInst> {
    ir.insts
        .iter()
        .enumerate()
        .map(|(pc, inst)| FastInst {
            guard: inst.guard,
            guard_neg: inst.guard_neg,
            op: if ir.tmem_users.get(pc).copied().unwrap_or(false) {
                FastOp::Slow
            } else {
                decode(ir, pc as u32, inst)
            },
        })
        .collect()
}

/// A table that sends every instruction to the general interpreter.
#[cfg_attr(not(test), allow(dead_code))]
pub(super) fn general_only(ir: &Ir) -> Vec<FastInst> {
    ir.insts
        .iter()
        .map(|inst| FastInst {
            guard: inst.guard,
            guard_neg: inst.guard_neg,
            op: FastOp::Slow,
        })
        .collect()
}

impl Machine<'_> {
    #[inline(always)]
    pub(super) fn get(&self, base: usize, s: Src) -> (u64, u32) {
        match s {
            Src::Reg(r) => {
                let i = base + r.index() * LANES;
                (self.vals[i], self.unk[i])
            }
            Src::Imm(v) => (v, 0),
        }
    }

    #[inline(always)]
    pub(super) fn put(&mut self, base: usize, r: RegId, v: u64, u: u32) {
        let i = base + r.index() * LANES;
        self.vals[i] = v;
        self.unk[i] = u;
    }

    /// Whether the fast path can execute `f` with `executed` instructions already run:
    /// it has a fast form, the budget allows one more step and its guard is known. Returns
    /// the guard's value (true when unguarded).
    #[inline(always)]
    pub(super) fn fast_ready(&self, base: usize, f: &FastInst, executed: u64) -> Option<bool> {
        if matches!(f.op, FastOp::Slow) || executed >= self.cfg.step_limit {
            return None;
        }
        let Some(guard) = f.guard else {
            return self.shared_target(base, f.op).map(|_| true);
        };
        let i = base + guard.index() * LANES;
        let (v, u) = (self.vals[i], self.unk[i]);
        if u != 0 {
            return None;
        }
        let taken = (v & 1 != 0) != f.guard_neg;
        if taken && self.shared_target(base, f.op).is_none() {
            return None;
        }
        Some(taken)
    }

    /// For a fast shared access: its address, when it is known, the access lies inside
    /// the shared window and its address is not found misaligned (otherwise the general
    /// interpreter reports it). `Some(0)` for other operations.
    #[inline(always)]
    fn shared_target(&self, base: usize, op: FastOp) -> Option<u32> {
        let (r, off, esize) = match op {
            FastOp::LdShared { r, off, esize, .. } | FastOp::StShared { r, off, esize, .. } => {
                (r, off, esize)
            }
            _ => return Some(0),
        };
        let i = base + r.index() * LANES;
        if self.unk[i] != 0 {
            return None;
        }
        let x = self.vals[i].wrapping_add(off as u64) as u32;
        let end = u64::from(x) + u64::from(esize);
        let ok = match self.smem_size {
            Some(size) => end <= u64::from(size),
            None => end <= self.smem.len() as u64,
        };
        (ok && end <= self.smem.len() as u64 && !self.misaligned(x, esize)).then_some(x)
    }

    /// One step of thread `t`: the fast path when the instruction has a fast form, its
    /// guard is known and the step budget allows it; otherwise [`Machine::step_slow`].
    #[inline(always)]
    pub(super) fn step(&mut self, t: usize) {
        let pc = self.th[t].pc;
        let base = self.slot(t);
        let Some(&f) = self.fast.get(pc as usize) else {
            return self.step_slow(t);
        };
        let Some(taken) = self.fast_ready(base, &f, self.th[t].executed) else {
            return self.step_slow(t);
        };
        self.instructions += 1;
        self.th[t].executed += 1;
        let next = if taken {
            self.exec_fast(t, base, pc, f.op)
        } else {
            pc + 1
        };
        self.th[t].pc = next;
    }

    /// Runs thread `t` (state `Run`) through consecutive fast-path instructions, then one
    /// step of the general interpreter. Fast instructions never change the thread's state
    /// or stop the emulation, so the caller's checks are needed only after the slow step.
    pub(super) fn run_fast(&mut self, t: usize) {
        let base = self.slot(t);
        let mut pc = self.th[t].pc;
        let mut executed = self.th[t].executed;
        let start = executed;
        // Borrowed out of the machine for the loop (the table is never modified).
        let table = std::mem::take(&mut self.fast);
        while let Some(f) = table.get(pc as usize) {
            let Some(taken) = self.fast_ready(base, f, executed) else {
                break;
            };
            executed += 1;
            pc = if taken {
                self.exec_fast(t, base, pc, f.op)
            } else {
                pc + 1
            };
        }
        self.fast = table;
        self.instructions += executed - start;
        let th = &mut self.th[t];
        th.pc = pc;
        th.executed = executed;
        // Only the lane itself moves in a lane-local step or a branch: what `lockstep`
        // noted about the other lanes still holds ([`super::warp::Solo`]).
        if !self.moves_only_itself(pc) {
            self.solo.forget();
        }
        self.step_slow(t);
    }

    /// Executes the fast operation `op` at `pc` for the thread whose registers start at
    /// `base`; returns the next PC.
    #[inline(always)]
    pub(super) fn exec_fast(&mut self, t: usize, base: usize, pc: u32, op: FastOp) -> u32 {
        match op {
            FastOp::Slow | FastOp::Nop => {}
            FastOp::Bin {
                alu: k,
                bits,
                signed,
                d,
                a,
                b,
            } => {
                let (a, ua) = self.get(base, a);
                let (b, ub) = self.get(base, b);
                if ua | ub == 0 {
                    self.put(base, d, mask(alu(k, bits, signed, a, b), bits), 0);
                } else if let Some((v, u)) = Self::decided_alu(k, bits, (a, ua), (b, ub)) {
                    self.put(base, d, v, u);
                } else {
                    let u =
                        self.terms_for(pc, |m| m.unknown_alu(k, bits, signed, (a, ua), (b, ub)));
                    let (v, u) = self.settle(0, u);
                    self.put(base, d, v, u);
                }
            }
            FastOp::Mad {
                bits,
                signed,
                d,
                a,
                b,
                c,
            } => {
                let (a, ua) = self.get(base, a);
                let (b, ub) = self.get(base, b);
                let (c, uc) = self.get(base, c);
                let (v, u) = if ua | ub | uc == 0 {
                    (mad(a, b, c, bits, signed, MulMode::Lo), 0)
                } else {
                    let u = self.terms_for(pc, |m| {
                        m.unknown_mad(bits, signed, MulMode::Lo, (a, ua), (b, ub), (c, uc))
                    });
                    self.settle(0, u)
                };
                self.put(base, d, mask(v, bits), u);
            }
            FastOp::DivRem {
                rem,
                bits,
                signed,
                d,
                a,
                b,
            } => {
                let (a, ua) = self.get(base, a);
                let (b, ub) = self.get(base, b);
                if ua | ub == 0 {
                    match div_rem(a, b, bits, signed, rem) {
                        Some(q) => self.put(base, d, mask(q, bits), 0),
                        None => {
                            let u = self
                                .src
                                .single(crate::ValueSource::Other("division by zero"));
                            self.put(base, d, 0, u);
                        }
                    }
                } else if let Some(&inst) = self.ir.insts.get(pc as usize) {
                    // Unknown operands: the general interpreter's semantics.
                    let ops = self.ir.operands(&inst);
                    self.exec_alu(t, pc, &inst, ops);
                }
            }
            FastOp::Mov { bits, d, s } => {
                let (v, u) = self.get(base, s);
                self.put(base, d, mask(v, bits), u);
            }
            FastOp::MovPack { w, d, start, len } => {
                // The IR outlives the machine: its list is read in place.
                let ir = self.ir;
                let (mut v, mut u) = (0u64, 0u32);
                let mut parts = [(0, 0); 3];
                for (i, x) in ir.list(start, u32::from(len)).iter().enumerate() {
                    let (xv, xu) = match *x {
                        Opnd::Reg(r) => self.get(base, Src::Reg(r)),
                        Opnd::Imm(k) => (k, 0),
                        _ => (0, 0),
                    };
                    let xu = self.pack_part(&mut v, (xv, xu), w, i);
                    u = self.src.union(u, xu);
                    if let Some(p) = parts.get_mut(i) {
                        *p = (xv, xu);
                    }
                }
                if u != 0 && len <= 3 {
                    u = self.pack_unknown(&parts[..usize::from(len)], w, u);
                }
                self.put(base, d, if u == 0 { v } else { 0 }, u);
            }
            FastOp::MovUnpack { w, s, start, len } => {
                let (v, u) = self.get(base, s);
                // The parts are other values than the whole: each its own term.
                let ir = self.ir;
                for (i, x) in ir.list(start, u32::from(len)).iter().enumerate() {
                    if let Opnd::Reg(r) = *x {
                        let (pv, pu) = self.unpack_part((v, u), w, i);
                        self.put(base, r, pv, pu);
                    }
                }
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
                let (a, ua) = self.get(base, a);
                let (b, ub) = self.get(base, b);
                let r = compare(cmp, bits, signed, a, b);
                let (rp, rq, up, uq) = if ua | ub != 0 {
                    let (up, uq) = self.unknown_fast_setp(cmp, bits, signed, (a, ua), (b, ub));
                    let (vp, up) = self.settle(0, up);
                    let (vq, uq) = self.settle(0, uq);
                    (vp, vq, up, uq)
                } else {
                    (u64::from(r), u64::from(!r), 0, 0)
                };
                self.put(base, p, rp, up);
                if let Some(q) = q {
                    self.put(base, q, rq, uq);
                }
            }
            FastOp::Selp { d, a, b, c } => {
                let (a, b, c) = (self.get(base, a), self.get(base, b), self.get(base, c));
                let (v, u) = self.selp(a, b, c);
                self.put(base, d, v, u);
            }
            FastOp::Bra { target } => return target,
            FastOp::LdShared {
                d,
                esize,
                bits,
                signed,
                ..
            } => {
                let x = self.shared_target(base, op).unwrap_or(0);
                let may = self.th[t].may > 0;
                self.push(
                    t,
                    Command::access(AccessKind::Read, x, esize, may, InstId(pc)),
                );
                let (v, u) = self.read_bytes(Mem::Shared, 0, x as usize, esize as usize);
                let u = if u == self.uninit_shared {
                    self.src
                        .single(crate::ValueSource::SharedUnknown(InstId(pc)))
                } else {
                    self.loaded_term(u, signed)
                };
                let v = if signed { sx(v, bits) as u64 } else { v };
                self.put(base, d, v, u);
            }
            FastOp::StShared { esize, s, .. } => {
                let x = self.shared_target(base, op).unwrap_or(0);
                let th = &self.th[t];
                let may = th.may > 0;
                let may_u = if may { th.may_src } else { 0 };
                self.push(
                    t,
                    Command::access(AccessKind::Write, x, esize, may, InstId(pc)),
                );
                let u = self.src.union(0, may_u);
                if u != 0 {
                    self.smem_set_unk(x as usize, esize as usize, u);
                }
                let (v, u0) = self.get(base, s);
                // (`union` drops a term: a store under no input-dependent guard keeps it.)
                let u = if may_u == 0 {
                    self.stored_atom(u0, esize)
                } else {
                    self.src.union(u0, may_u)
                };
                self.write_bytes(Mem::Shared, 0, x as usize, esize as usize, v, u);
                if u == 0 && esize <= 8 {
                    // The bytes just written: known, the low `esize` bytes of `v`.
                    self.tag_value(t, u128::from(mask(v, 8 * esize as u8)));
                } else if may_u == 0 && u0 & super::values::TERMED != 0 && esize <= 8 {
                    self.tag_symbolic_value(t, u0, esize);
                } else {
                    self.tag_written_value(t, x, esize);
                }
            }
        }
        pc + 1
    }
}
