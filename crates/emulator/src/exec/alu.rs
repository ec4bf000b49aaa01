//! The ALU: integer and bit arithmetic, comparisons, selects and conversions.
//!
//! The pure functions here are the only statement of these semantics: the general
//! interpreter (`Machine::exec_alu` and friends, below) and the fast path (`fast.rs`) both
//! call them, and `tests::fast_path` runs every sample through both paths and compares.

use super::Machine;
use super::terms::OpKind;
use super::values::TERMED;
use weft_program::InstId;

use crate::ValueSource;
use crate::ir::{BoolOp, Cmp, Inst, Kind, MulMode, Op, Opnd, Ty};

/// `v` truncated to its low `bits` bits.
#[inline]
pub(super) fn mask(v: u64, bits: u8) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

/// `v` sign-extended from its low `bits` bits.
#[inline]
pub(super) fn sx(v: u64, bits: u8) -> i64 {
    if bits >= 64 || bits == 0 {
        v as i64
    } else {
        let s = 64 - u32::from(bits);
        ((v << s) as i64) >> s
    }
}

/// `mul.{lo,hi,wide}` of `bits`-wide operands (unmasked: the caller masks to the
/// destination width).
pub(super) fn mul(a: u64, b: u64, bits: u8, signed: bool, mode: MulMode) -> u64 {
    if signed {
        let p = i128::from(sx(a, bits)) * i128::from(sx(b, bits));
        match mode {
            MulMode::Lo | MulMode::Wide => p as u64,
            MulMode::Hi => (p >> bits) as u64,
        }
    } else {
        let p = u128::from(mask(a, bits)) * u128::from(mask(b, bits));
        match mode {
            MulMode::Lo | MulMode::Wide => p as u64,
            MulMode::Hi => (p >> bits) as u64,
        }
    }
}

/// `cvt.dst.src`: `None` when the result is not computed (a float conversion
/// [`super::float::cvt_float`] does not vouch for).
pub(super) fn cvt(a: u64, dst: Ty, src: Ty, round: u8, sat: bool, ftz: bool) -> Option<u64> {
    if !(dst.is_int() && src.is_int()) {
        return super::float::cvt_float(a, dst, src, round, sat, ftz);
    }
    let v = if src.signed() {
        sx(a, src.bits)
    } else {
        mask(a, src.bits) as i64
    };
    let v = if sat {
        let (lo, hi): (i128, i128) = if dst.signed() {
            (-(1i128 << (dst.bits - 1)), (1i128 << (dst.bits - 1)) - 1)
        } else {
            (0, (1i128 << dst.bits) - 1)
        };
        let wide = if src.signed() {
            i128::from(v)
        } else {
            i128::from(mask(a, src.bits))
        };
        wide.clamp(lo, hi) as i64
    } else {
        v
    };
    Some(mask(v as u64, dst.bits))
}

/// `mad.{lo,hi,wide}`: `a * b + c` (unmasked).
#[inline(always)]
pub(super) fn mad(a: u64, b: u64, c: u64, bits: u8, signed: bool, mode: MulMode) -> u64 {
    mul(a, b, bits, signed, mode).wrapping_add(c)
}

/// The destination width of a `mul`/`mad` in `mode` on `bits`-wide operands.
pub(super) fn mul_bits(bits: u8, mode: MulMode) -> u8 {
    if mode == MulMode::Wide {
        bits.saturating_mul(2)
    } else {
        bits
    }
}

/// The width `mov` masks a scalar value of type `ty` to (1 for predicates).
/// `v` with part `i` (`w` bits) set from `x`: a register list packed into one register.
/// `None` when the part lies beyond the 64 bits a register holds (of a `.b128` value) and
/// is not zero: the value is then unknown ([`part`]).
pub(super) fn with_part(v: u64, x: u64, w: u8, i: usize) -> Option<u64> {
    let at = u32::from(w) * i as u32;
    if at >= 64 {
        return (mask(x, w) == 0).then_some(v);
    }
    Some(v | mask(x, w) << at)
}

/// Part `i` (`w` bits) of `v`: one register of a list `v` is unpacked into. A known
/// register wider than 64 bits has zero bits beyond them ([`with_part`]).
pub(super) fn part(v: u64, w: u8, i: usize) -> u64 {
    let at = u32::from(w) * i as u32;
    if at >= 64 {
        return 0;
    }
    mask(v >> at, w)
}

pub(super) fn mov_bits(ty: Ty) -> u8 {
    if ty.kind == Kind::Pred {
        1
    } else {
        ty.bits.max(1)
    }
}

/// Two-operand integer operations whose result is a function of the operand values alone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Alu {
    Add,
    Sub,
    And,
    Or,
    Xor,
    Shl,
    Shr,
    Min,
    Max,
    MulLo,
}

impl Alu {
    /// The term operation of this ALU operation.
    pub(super) fn term_op(self) -> OpKind {
        match self {
            Alu::Add => OpKind::Add,
            Alu::Sub => OpKind::Sub,
            Alu::And => OpKind::And,
            Alu::Or => OpKind::Or,
            Alu::Xor => OpKind::Xor,
            Alu::Shl => OpKind::Shl,
            Alu::Shr => OpKind::Shr,
            Alu::Min => OpKind::Min,
            Alu::Max => OpKind::Max,
            Alu::MulLo => OpKind::Mul,
        }
    }

    /// The two-operand operation `op` performs, if it is one.
    pub(super) fn of(op: Op) -> Option<Alu> {
        Some(match op {
            Op::Add => Alu::Add,
            Op::Sub => Alu::Sub,
            Op::And => Alu::And,
            Op::Or => Alu::Or,
            Op::Xor => Alu::Xor,
            Op::Shl => Alu::Shl,
            Op::Shr => Alu::Shr,
            Op::Min => Alu::Min,
            Op::Max => Alu::Max,
            Op::Mul(MulMode::Lo) => Alu::MulLo,
            _ => return None,
        })
    }
}

/// `alu` on `bits`-wide operands, signed when `signed` (unmasked: the caller masks).
#[inline(always)]
pub(super) fn alu(alu: Alu, bits: u8, signed: bool, a: u64, b: u64) -> u64 {
    match alu {
        Alu::Add => a.wrapping_add(b),
        Alu::Sub => a.wrapping_sub(b),
        Alu::And => a & b,
        Alu::Or => a | b,
        Alu::Xor => a ^ b,
        Alu::Shl => {
            let b = b & 0xffff_ffff;
            if b >= u64::from(bits) { 0 } else { a << b }
        }
        Alu::Shr => {
            let b = b & 0xffff_ffff;
            if signed {
                let s = sx(a, bits);
                (if b >= u64::from(bits) {
                    s >> 63
                } else {
                    s >> b
                }) as u64
            } else if b >= u64::from(bits) {
                0
            } else {
                mask(a, bits) >> b
            }
        }
        Alu::Min | Alu::Max => {
            let max = alu == Alu::Max;
            let lt = if signed {
                sx(a, bits) < sx(b, bits)
            } else {
                mask(a, bits) < mask(b, bits)
            };
            if lt != max { a } else { b }
        }
        Alu::MulLo => mul(a, b, bits, signed, MulMode::Lo),
    }
}

/// Integer comparison of `bits`-wide operands, signed when `s`.
#[inline(always)]
pub(super) fn compare(cmp: Cmp, bits: u8, s: bool, a: u64, b: u64) -> bool {
    let (sa, sb) = (sx(a, bits), sx(b, bits));
    let (ma, mb) = (mask(a, bits), mask(b, bits));
    match cmp {
        Cmp::Eq | Cmp::Equ => ma == mb,
        Cmp::Ne | Cmp::Neu => ma != mb,
        Cmp::Lt | Cmp::Ltu => {
            if s {
                sa < sb
            } else {
                ma < mb
            }
        }
        Cmp::Le | Cmp::Leu => {
            if s {
                sa <= sb
            } else {
                ma <= mb
            }
        }
        Cmp::Gt | Cmp::Gtu => {
            if s {
                sa > sb
            } else {
                ma > mb
            }
        }
        Cmp::Ge | Cmp::Geu => {
            if s {
                sa >= sb
            } else {
                ma >= mb
            }
        }
        Cmp::Lo => ma < mb,
        Cmp::Ls => ma <= mb,
        Cmp::Hi => ma > mb,
        Cmp::Hs => ma >= mb,
        Cmp::Num => true,
        Cmp::Nan => false,
    }
}

/// Floating-point comparison of `bits`-wide (32 or 64) operands.
pub(super) fn compare_float(cmp: Cmp, bits: u8, a: u64, b: u64) -> bool {
    let (x, y) = if bits == 64 {
        (f64::from_bits(a), f64::from_bits(b))
    } else {
        (
            f64::from(f32::from_bits(a as u32)),
            f64::from(f32::from_bits(b as u32)),
        )
    };
    let nan = x.is_nan() || y.is_nan();
    match cmp {
        Cmp::Eq => !nan && x == y,
        Cmp::Ne => !nan && x != y,
        Cmp::Lt => !nan && x < y,
        Cmp::Le => !nan && x <= y,
        Cmp::Gt => !nan && x > y,
        Cmp::Ge => !nan && x >= y,
        Cmp::Equ => nan || x == y,
        Cmp::Neu => nan || x != y,
        Cmp::Ltu => nan || x < y,
        Cmp::Leu => nan || x <= y,
        Cmp::Gtu => nan || x > y,
        Cmp::Geu => nan || x >= y,
        Cmp::Num => !nan,
        Cmp::Nan => nan,
        Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs => false,
    }
}

/// Per float width (32, 64), bit patterns around each boundary of the IEEE 754 order, both
/// signs: zeros, the smallest subnormals, 1 and its neighbours, the largest finite value,
/// infinity, the smallest and largest NaN patterns; for tests of float comparisons.
#[cfg(test)]
pub(super) fn float_boundary_patterns() -> [(u8, Vec<u64>); 2] {
    [
        (32u8, 1u64 << 31, 0x7f80_0000u64, 0x3f80_0000u64),
        (64, 1 << 63, 0x7ff0_0000_0000_0000, 0x3ff0_0000_0000_0000),
    ]
    .map(|(w, sign, inf, one)| {
        let mut pats = Vec::new();
        for m in [
            0,
            1,
            2,
            one - 1,
            one,
            one + 1,
            inf - 1,
            inf,
            inf + 1,
            sign - 1,
        ] {
            pats.push(m);
            pats.push(m | sign);
        }
        (w, pats)
    })
}

/// `bfe`: `len = c` bits of `a` from `pos = b`, sign-extended when `signed` (unmasked).
pub(super) fn bfe(a: u64, b: u64, c: u64, bits: u8, signed: bool) -> u64 {
    let msb = u64::from(bits).saturating_sub(1);
    let (pos, len) = (b & 0xff, c & 0xff);
    let sbit = if !signed || len == 0 {
        0
    } else {
        (a >> (pos + len - 1).min(msb)) & 1
    };
    let mut d = 0u64;
    for i in 0..=msb {
        let bit = if i < len && pos + i <= msb {
            (a >> (pos + i)) & 1
        } else {
            sbit
        };
        d |= bit << i;
    }
    d
}

/// `bfi`: inserts `len = d` low bits of `a` into `b` at `pos = c` (unmasked).
pub(super) fn bfi(a: u64, b: u64, c: u64, d: u64, bits: u8) -> u64 {
    let msb = u64::from(bits).saturating_sub(1);
    let (pos, len) = (c & 0xff, d & 0xff);
    let mut f = b;
    for i in 0..len {
        if pos + i > msb {
            break;
        }
        f = (f & !(1 << (pos + i))) | (((a >> i) & 1) << (pos + i));
    }
    f
}

/// `prmt` (default mode): bytes of `{b, a}` selected by the nibbles of `c`.
pub(super) fn prmt(a: u64, b: u64, c: u64) -> u64 {
    let tmp = (mask(b, 32) << 32) | mask(a, 32);
    let mut d = 0u64;
    for i in 0..4 {
        let sel = (c >> (4 * i)) & 0xf;
        let mut byte = (tmp >> ((sel & 7) * 8)) & 0xff;
        if sel & 8 != 0 {
            byte = if byte & 0x80 != 0 { 0xff } else { 0 };
        }
        d |= byte << (8 * i);
    }
    d
}

/// `lop3`: the three-input function of `a`, `b`, `c` whose truth table is `lut` (unmasked).
pub(super) fn lop3(a: u64, b: u64, c: u64, lut: u64) -> u64 {
    let mut d = 0u64;
    for k in 0..8u64 {
        if (lut >> k) & 1 != 0 {
            let x = if k & 4 != 0 { a } else { !a };
            let y = if k & 2 != 0 { b } else { !b };
            let z = if k & 1 != 0 { c } else { !c };
            d |= x & y & z;
        }
    }
    d
}

/// `brev` of a `bits`-wide value.
pub(super) fn brev(a: u64, bits: u8) -> u64 {
    if bits >= 64 {
        a.reverse_bits()
    } else {
        a.reverse_bits() >> (64 - u32::from(bits))
    }
}

/// `clz` of a `bits`-wide value.
pub(super) fn clz(a: u64, bits: u8) -> u64 {
    u64::from(mask(a, bits).leading_zeros()) - (64 - u64::from(bits.max(1)))
}

/// `bfind` of a `bits`-wide value (PTX ISA, *bfind*): the bit position of the most
/// significant 1 (of a signed value, of the most significant bit that differs from the
/// sign), `0xffffffff` when there is none; with `shiftamt`, `bits - 1` minus that position.
pub(super) fn bfind(a: u64, bits: u8, signed: bool, shiftamt: bool) -> u64 {
    let bits = bits.clamp(1, 64);
    let x = mask(a, bits);
    let x = if signed && (x >> (bits - 1)) & 1 == 1 {
        mask(!x, bits)
    } else {
        x
    };
    if x == 0 {
        return 0xffff_ffff;
    }
    let pos = 63 - u64::from(x.leading_zeros());
    if shiftamt {
        u64::from(bits) - 1 - pos
    } else {
        pos
    }
}

/// `div` or `rem` of `bits`-wide operands; `None` when the divisor is zero.
pub(super) fn div_rem(a: u64, b: u64, bits: u8, signed: bool, rem: bool) -> Option<u64> {
    if mask(b, bits) == 0 {
        return None;
    }
    Some(if signed {
        let (x, y) = (sx(a, bits), sx(b, bits));
        (if rem {
            x.wrapping_rem(y)
        } else {
            x.wrapping_div(y)
        }) as u64
    } else {
        let (x, y) = (mask(a, bits), mask(b, bits));
        if rem { x % y } else { x / y }
    })
}

impl Machine<'_> {
    /// Executes an ALU instruction (every `Op` [`Machine::exec`] sends here).
    pub(super) fn exec_alu(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd]) {
        // Validated (`ir::valid`): `ops` has the operands each operation reads.
        let o = |k: usize| ops[k];
        let bits = inst.ty.bits;
        let signed = inst.ty.signed();
        if let Some(k) = Alu::of(inst.op) {
            return self.bin(t, pc, o, k, bits, signed);
        }
        match inst.op {
            Op::Mul(mode) => {
                let (a, ua) = self.rd(t, o(1), pc);
                let (b, ub) = self.rd(t, o(2), pc);
                let (v, u) = if ua | ub == 0 {
                    (mul(a, b, bits, signed, mode), 0)
                } else {
                    let k = match mode {
                        MulMode::Lo => OpKind::Mul,
                        MulMode::Hi => OpKind::MulHi,
                        MulMode::Wide => OpKind::MulWide,
                    };
                    (0, self.unknown_result(k, bits, signed, &[(a, ua), (b, ub)]))
                };
                let (v, u) = self.settle(v, u);
                self.wr(t, o(0), mask(v, mul_bits(bits, mode)), u);
            }
            Op::Mad(mode) => {
                let (a, ua) = self.rd(t, o(1), pc);
                let (b, ub) = self.rd(t, o(2), pc);
                let (c, uc) = self.rd(t, o(3), pc);
                let (v, u) = if ua | ub | uc == 0 {
                    (mad(a, b, c, bits, signed, mode), 0)
                } else {
                    (
                        0,
                        self.unknown_mad(bits, signed, mode, (a, ua), (b, ub), (c, uc)),
                    )
                };
                let (v, u) = self.settle(v, u);
                self.wr(t, o(0), mask(v, mul_bits(bits, mode)), u);
            }
            Op::Div | Op::Rem => {
                let (a, ua) = self.rd(t, o(1), pc);
                let (b, ub) = self.rd(t, o(2), pc);
                let mut u = if ua | ub == 0 {
                    0
                } else {
                    let k = if inst.op == Op::Rem {
                        OpKind::Rem
                    } else {
                        OpKind::Div
                    };
                    self.unknown_result(k, bits, signed, &[(a, ua), (b, ub)])
                };
                let mut v = 0;
                if u == 0 {
                    match div_rem(a, b, bits, signed, inst.op == Op::Rem) {
                        Some(q) => v = q,
                        None => u = self.src.single(ValueSource::Other("division by zero")),
                    }
                }
                let (v, u) = self.settle(v, u);
                self.wr(t, o(0), mask(v, bits), u);
            }
            Op::Abs => self.un(t, pc, o, bits, OpKind::Abs, |a| {
                sx(a, bits).wrapping_abs() as u64
            }),
            Op::Neg => self.un(t, pc, o, bits, OpKind::Neg, |a| {
                (sx(a, bits).wrapping_neg()) as u64
            }),
            Op::Not => self.un(t, pc, o, bits, OpKind::Not, |a| !a),
            Op::Cnot => self.un(t, pc, o, bits, OpKind::Cnot, |a| {
                u64::from(mask(a, bits) == 0)
            }),
            Op::Brev => self.un(t, pc, o, bits, OpKind::Other("brev"), |a| brev(a, bits)),
            Op::Popc => self.un(t, pc, o, 32, OpKind::Other("popc"), |a| {
                u64::from(mask(a, bits).count_ones())
            }),
            Op::Clz => self.un(t, pc, o, 32, OpKind::Other("clz"), |a| clz(a, bits)),
            Op::Bfind { shiftamt } => {
                let name = if shiftamt { "bfind.shiftamt" } else { "bfind" };
                self.un(t, pc, o, 32, OpKind::Other(name), |a| {
                    bfind(a, bits, signed, shiftamt)
                })
            }
            Op::Bfe | Op::Bfi | Op::Prmt | Op::Lop3 => self.exec_bits(t, pc, inst, o),
            Op::Setp(cmp, bop) => self.setp(t, pc, inst, ops, cmp, bop),
            Op::Selp => {
                let a = self.rd(t, o(1), pc);
                let b = self.rd(t, o(2), pc);
                let c = self.rd(t, o(3), pc);
                let (v, u) = self.selp(a, b, c);
                self.wr(t, o(0), v, u);
            }
            Op::Slct => self.slct(t, pc, inst, o),
            Op::Cvt => {
                let (a, ua) = self.rd(t, o(1), pc);
                let (v, u) = if ua != 0 {
                    let ints = inst.ty.is_int() && inst.ty2.is_int();
                    let u = if ints && !inst.sat {
                        let from = (u64::from(inst.ty2.bits) << 1) | u64::from(inst.ty2.signed());
                        self.unknown_result(
                            OpKind::Cvt,
                            inst.ty.bits,
                            inst.ty.signed(),
                            &[(a, ua), (from, 0)],
                        )
                    } else if ua & TERMED != 0 && !ints {
                        // A conversion to or from a float: a term the choices evaluate
                        // with `cvt`.
                        let k = OpKind::FCvt {
                            dst: inst.ty,
                            src: inst.ty2,
                            round: inst.round,
                            sat: inst.sat,
                            ftz: inst.ftz,
                        };
                        self.unknown_result(k, inst.ty.bits, false, &[(a, ua)])
                    } else {
                        self.src.plain(ua)
                    };
                    (0, u)
                } else {
                    match cvt(a, inst.ty, inst.ty2, inst.round, inst.sat, inst.ftz) {
                        Some(v) => (v, 0),
                        None => (0, self.src.single(ValueSource::Float(InstId(pc)))),
                    }
                };
                let (v, u) = self.settle(v, u);
                self.wr(t, o(0), v, u);
            }
            _ => {}
        }
    }

    /// `bfe`, `bfi`, `prmt` and `lop3`: their results carry the union of all operands'
    /// sources.
    fn exec_bits(&mut self, t: usize, pc: u32, inst: &Inst, o: impl Fn(usize) -> Opnd) {
        let bits = inst.ty.bits;
        let (a, ua) = self.rd(t, o(1), pc);
        let (b, ub) = self.rd(t, o(2), pc);
        let (c, uc) = self.rd(t, o(3), pc);
        let u = self.src.union(ua, ub);
        let u = self.src.union(u, uc);
        let (v, u) = match inst.op {
            Op::Bfe => {
                let u = if u == 0 {
                    0
                } else {
                    let s = inst.ty.signed();
                    self.unknown_result(OpKind::Other("bfe"), bits, s, &[(a, ua), (b, ub), (c, uc)])
                };
                (mask(bfe(a, b, c, bits, inst.ty.signed()), bits), u)
            }
            Op::Bfi => {
                let (d, ud) = self.rd(t, o(4), pc);
                (mask(bfi(a, b, c, d, bits), bits), self.src.union(u, ud))
            }
            Op::Prmt => {
                let u = if u == 0 {
                    0
                } else {
                    self.unknown_result(
                        OpKind::Other("prmt"),
                        32,
                        false,
                        &[(a, ua), (b, ub), (c, uc)],
                    )
                };
                (prmt(a, b, c), u)
            }
            _ => {
                let (lut, ul) = self.rd(t, o(4), pc);
                (mask(lop3(a, b, c, lut), bits), self.src.union(u, ul))
            }
        };
        self.wr(t, o(0), v, u);
    }

    /// `selp`: `c` picks `a` or `b`; with `c` unknown the result is known only when `a` and
    /// `b` are known and equal.
    #[inline(always)]
    pub(super) fn selp(&mut self, a: (u64, u32), b: (u64, u32), c: (u64, u32)) -> (u64, u32) {
        let ((a, ua), (b, ub), (c, uc)) = (a, b, c);
        if uc == 0 {
            if c & 1 != 0 { (a, ua) } else { (b, ub) }
        } else if ua == 0 && ub == 0 && a == b {
            (a, 0)
        } else if let Some(pick) = self.src.term(uc).and_then(|p| self.decided_by_choices(p)) {
            if pick { (a, ua) } else { (b, ub) }
        } else {
            let u = self.unknown_result(OpKind::Selp, 64, false, &[(a, ua), (b, ub), (c, uc)]);
            self.settle(0, u)
        }
    }

    /// The unknown result of `mad`: `a * b + c`, normalised as an addition when `c` is
    /// known.
    #[cold]
    pub(super) fn unknown_mad(
        &mut self,
        bits: u8,
        signed: bool,
        mode: MulMode,
        a: (u64, u32),
        b: (u64, u32),
        c: (u64, u32),
    ) -> u32 {
        // A generic address into shared memory plus an unknown product stays marked
        // (`mad.wide.u32 %rd, %r_index, 4, %rd_shared_base`), the mark first.
        let marker = self.shared_pointer_mark(&[a, b, c]);
        let u = self.src.union(marker, a.1);
        let u = self.src.union(u, b.1);
        let u = self.src.union(u, c.1);
        if (a.1 | b.1 | c.1) & TERMED == 0 {
            return u;
        }
        let term = (|| {
            let (k, w) = match mode {
                MulMode::Lo => (OpKind::Mul, bits),
                MulMode::Hi => (OpKind::MulHi, bits),
                MulMode::Wide => (OpKind::MulWide, mul_bits(bits, mode)),
            };
            let ta = self.operand_term(a)?;
            let tb = self.operand_term(b)?;
            let p = if a.1 | b.1 == 0 {
                self.src.terms.constant(mul(a.0, b.0, bits, signed, mode))?
            } else {
                self.src
                    .terms
                    .op(k, bits, signed, [Some(ta), Some(tb), None])?
            };
            if c.1 == 0 {
                self.src.terms.add_const(p, c.0, w)
            } else {
                let tc = self.operand_term(c)?;
                self.src
                    .terms
                    .op(OpKind::Add, w, signed, [Some(p), Some(tc), None])
            }
        })();
        self.src.termed(u, term)
    }

    /// `slct`: `a` when `c` is not negative, else `b`.
    fn slct(&mut self, t: usize, pc: u32, inst: &Inst, o: impl Fn(usize) -> Opnd) {
        let (a, ua) = self.rd(t, o(1), pc);
        let (b, ub) = self.rd(t, o(2), pc);
        let (c, uc) = self.rd(t, o(3), pc);
        let neg = if inst.ty2.kind == Kind::F {
            f32::from_bits(c as u32) < 0.0
        } else {
            sx(c, 32) < 0
        };
        let (v, u) = if uc == 0 {
            if neg { (b, ub) } else { (a, ua) }
        } else {
            let marker = self.shared_pointer_mark(&[(a, ua), (b, ub)]);
            let u = self.src.union(marker, ua);
            let u = self.src.union(u, ub);
            (0, self.src.union(u, uc))
        };
        self.wr(t, o(0), v, u);
    }

    #[inline]
    pub(super) fn bin(
        &mut self,
        t: usize,
        pc: u32,
        o: impl Fn(usize) -> Opnd,
        k: Alu,
        bits: u8,
        signed: bool,
    ) {
        let (a, ua) = self.rd(t, o(1), pc);
        let (b, ub) = self.rd(t, o(2), pc);
        if ua | ub == 0 {
            self.wr(t, o(0), mask(alu(k, bits, signed, a, b), bits), 0);
        } else if let Some((v, u)) = Self::decided_alu(k, bits, (a, ua), (b, ub)) {
            self.wr(t, o(0), v, u);
        } else {
            let u = self.unknown_alu(k, bits, signed, (a, ua), (b, ub));
            let (v, u) = self.settle(0, u);
            self.wr(t, o(0), v, u);
        }
    }

    #[inline]
    pub(super) fn un(
        &mut self,
        t: usize,
        pc: u32,
        o: impl Fn(usize) -> Opnd,
        bits: u8,
        k: OpKind,
        f: impl Fn(u64) -> u64,
    ) {
        let (a, ua) = self.rd(t, o(1), pc);
        if ua == 0 {
            self.wr(t, o(0), mask(f(a), bits), 0);
        } else {
            let u = self.unknown_result(k, bits, false, &[(a, ua)]);
            let (v, u) = self.settle(0, u);
            self.wr(t, o(0), v, u);
        }
    }

    /// Packs part `i` (`w` bits, the value `x`) of a register list into `v`; returns the
    /// part's sources, with [`Machine::wide_unknown`]'s when it is a nonzero part beyond
    /// the 64 bits a register holds ([`with_part`]).
    pub(super) fn pack_part(&mut self, v: &mut u64, x: (u64, u32), w: u8, i: usize) -> u32 {
        match with_part(*v, x.0, w, i) {
            Some(nv) => {
                *v = nv;
                x.1
            }
            None => {
                let wide = self.wide_unknown();
                self.src.union(x.1, wide)
            }
        }
    }

    pub(super) fn mov(&mut self, t: usize, pc: u32, inst: &Inst, d: Opnd, s: Opnd) {
        let bits = inst.ty.bits;
        match (d, s) {
            (_, Opnd::List(start, len)) if len > 0 => {
                let w = bits / len as u8;
                let mut v = 0u64;
                let mut u = 0;
                // The IR outlives the machine: its list is read in place.
                let ir = self.ir;
                let mut parts = [(0, 0); 3];
                for (i, &x) in ir.list(start, len).iter().enumerate() {
                    let (xv, xu) = self.rd(t, x, pc);
                    let xu = self.pack_part(&mut v, (xv, xu), w, i);
                    u = self.src.union(u, xu);
                    if let Some(p) = parts.get_mut(i) {
                        *p = (xv, xu);
                    }
                }
                if u != 0 && len <= 3 {
                    u = self.pack_unknown(&parts[..len as usize], w, u);
                }
                self.wr(t, d, if u == 0 { v } else { 0 }, u);
            }
            (Opnd::List(start, len), _) if len > 0 => {
                let w = bits / len as u8;
                let (v, u) = self.rd(t, s, pc);
                // The parts are other values than the whole: each its own term.
                let ir = self.ir;
                for (i, &x) in ir.list(start, len).iter().enumerate() {
                    let (pv, pu) = self.unpack_part((v, u), w, i);
                    self.wr(t, x, pv, pu);
                }
            }
            _ => {
                let (v, u) = self.rd(t, s, pc);
                let v = mask(v, mov_bits(inst.ty));
                self.wr(t, d, v, u);
            }
        }
    }

    pub(super) fn setp(
        &mut self,
        t: usize,
        pc: u32,
        inst: &Inst,
        ops: &[Opnd],
        cmp: Cmp,
        bop: BoolOp,
    ) {
        // Validated (`ir::valid`): `ops` has the operands each operation reads.
        let o = |k: usize| ops[k];
        let (a, ua) = self.rd(t, o(1), pc);
        let (b, ub) = self.rd(t, o(2), pc);
        let mut u = ua | ub;
        let mut c_opnd = (0, 0);
        let bits = inst.ty.bits;
        // `.ftz` compares single-precision subnormals as zeros of their sign.
        let flush = |x: u64| super::float::flush_bits32(x, inst.ftz && bits == 32);
        let r = match inst.ty.kind {
            Kind::F => compare_float(cmp, bits, flush(a), flush(b)),
            _ => compare(cmp, bits, inst.ty.signed(), a, b),
        };
        let (p, q) = match o(0) {
            Opnd::List(s, 2) => {
                let l = self.ir.list(s, 2);
                (l[0], l[1])
            }
            d => (d, Opnd::Sink),
        };
        let mut bop = bop;
        let mut swap = false;
        let (rp, rq) = if bop == BoolOp::None {
            (r, !r)
        } else {
            let (c, uc) = self.rd(t, o(3), pc);
            u |= uc;
            c_opnd = (c, uc);
            let c = c & 1 != 0;
            if uc == 0 && ua | ub != 0 {
                // A known combiner input decides the results (`x & false`, `x | true`) or
                // leaves the comparison itself (`x & true`, `x | false`, `x ^ false`; `x ^
                // true` is its negation): both results are known, or carry the
                // comparison's terms.
                match (bop, c) {
                    (BoolOp::And, false) | (BoolOp::Or, true) => {
                        self.wr(t, p, u64::from(c), 0);
                        self.wr(t, q, u64::from(c), 0);
                        return;
                    }
                    (BoolOp::Xor, true) => swap = true,
                    _ => {}
                }
                bop = BoolOp::None;
                c_opnd = (0, 0);
            }
            let f = |x: bool| match bop {
                BoolOp::And => x && c,
                BoolOp::Or => x || c,
                BoolOp::Xor => x ^ c,
                BoolOp::None => x,
            };
            (f(r), f(!r))
        };
        if u != 0 && inst.ftz && inst.ty.kind == Kind::F && bits == 32 {
            // A comparison term does not model the flush: the results carry no term.
            let s = self.src.union(ua, ub);
            let s = self.src.union(s, c_opnd.1);
            let (v, s) = self.settle(0, self.src.plain(s));
            self.wr(t, p, v, s);
            self.wr(t, q, v, s);
        } else if u != 0 {
            let (up, uq) = self.unknown_setp(cmp, inst.ty, bop, (a, ua), (b, ub), c_opnd);
            let (up, uq) = if swap { (uq, up) } else { (up, uq) };
            let (vp, up) = self.settle(0, up);
            let (vq, uq) = self.settle(0, uq);
            self.wr(t, p, vp, up);
            self.wr(t, q, vq, uq);
        } else {
            self.wr(t, p, u64::from(rp), 0);
            self.wr(t, q, u64::from(rq), 0);
        }
    }
}
