//! Floating-point arithmetic and conversions on known operands (docs/semantics.md §6.6).
//!
//! The emulator computes an IEEE 754 operation of `.f32` or `.f64` values exactly when PTX
//! fixes its result bit for bit: rounded to nearest even (`.rn`, or `add`/`sub`/`mul`
//! without a rounding modifier, which the lowering keeps only where ptxas cannot fuse them,
//! `ir::contract`), with `.ftz` (single-precision subnormal inputs and results flushed to
//! zero of their sign) and `.sat` (the result clamped to [0, 1], a NaN to +0). Rust's `f32`
//! and `f64` operations are IEEE 754 operations rounded to nearest even, `mul_add` rounds
//! once: they compute the same bits. A result this module cannot vouch for is `None` and the
//! destination stays unknown:
//! - a NaN (PTX leaves most NaN payloads unspecified);
//! - under `.ftz`, a result of magnitude exactly the smallest normal (whether a result
//!   that rounds up to it from below is flushed depends on when the hardware detects
//!   tininess);
//! - under `.sat`, a result of -0;
//! - a directed rounding (`.rz`, `.rm`, `.rp`) of a conversion whose result is not exact.
//!
//! The pure functions here are the only statement of these semantics: the interpreter and
//! the terms' evaluation (`terms::Terms::eval`) both call them.

use super::Machine;
use super::alu::{mask, sx};
use super::terms::OpKind;
use super::values::TERMED;
use crate::ValueSource;
use crate::ir::{FOp, Inst, Opnd, Ty};
use weft_program::InstId;

/// The single-precision bit pattern `x` (its low 32 bits) with a subnormal flushed to the
/// zero of its sign when `ftz` (`setp.ftz` compares by it too).
pub(super) fn flush_bits32(x: u64, ftz: bool) -> u64 {
    if ftz && (x >> 23) & 0xff == 0 {
        x & 0x8000_0000
    } else {
        x
    }
}

/// `x` with a subnormal flushed to the zero of its sign when `ftz`.
fn flush32(x: f32, ftz: bool) -> f32 {
    f32::from_bits(flush_bits32(u64::from(x.to_bits()), ftz) as u32)
}

/// `.sat` when `sat`: the result clamped to [0, 1] and a NaN to +0; `None` for a -0, whose
/// saturation PTX does not spell out (module docs).
fn saturate<F: Ieee>(r: F, sat: bool) -> Option<F> {
    if !sat {
        Some(r)
    } else if r.nan() {
        Some(F::ZERO)
    } else if r.negative_zero() {
        None
    } else {
        Some(r.unit_clamp())
    }
}

/// The bits of a single-precision result, `None` where PTX does not fix them (module docs).
fn result32(r: f32, ftz: bool, sat: bool) -> Option<u64> {
    if ftz && r.abs() == f32::MIN_POSITIVE {
        return None;
    }
    let r = saturate(flush32(r, ftz), sat)?;
    (!r.is_nan()).then(|| u64::from(r.to_bits()))
}

/// The bits of a double-precision result (`.sat` as for single precision).
fn result64(r: f64, sat: bool) -> Option<u64> {
    let r = saturate(r, sat)?;
    (!r.is_nan()).then(|| r.to_bits())
}

/// The IEEE 754 operations of `f32` and `f64` that [`farith`] and [`cvt_float`] apply: one
/// statement of each operation for both widths.
trait Ieee:
    Copy
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Neg<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    fn nan(self) -> bool;
    fn negative_zero(self) -> bool;
    fn unit_clamp(self) -> Self;
    fn fused(self, b: Self, c: Self) -> Self;
    fn root(self) -> Self;
    fn magnitude(self) -> Self;
    fn truncated(self) -> Self;
    fn floored(self) -> Self;
    fn ceiled(self) -> Self;
    fn nearest_even(self) -> Self;
}

macro_rules! ieee {
    ($t:ty) => {
        impl Ieee for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            fn nan(self) -> bool {
                self.is_nan()
            }
            fn negative_zero(self) -> bool {
                self == 0.0 && self.is_sign_negative()
            }
            fn unit_clamp(self) -> Self {
                self.clamp(0.0, 1.0)
            }
            fn fused(self, b: Self, c: Self) -> Self {
                self.mul_add(b, c)
            }
            fn root(self) -> Self {
                self.sqrt()
            }
            fn magnitude(self) -> Self {
                self.abs()
            }
            fn truncated(self) -> Self {
                self.trunc()
            }
            fn floored(self) -> Self {
                self.floor()
            }
            fn ceiled(self) -> Self {
                self.ceil()
            }
            fn nearest_even(self) -> Self {
                self.round_ties_even()
            }
        }
    };
}
ieee!(f32);
ieee!(f64);

/// `op` on `x`, `y`, `z` (those past [`FOp::sources`] ignored), rounded to nearest even.
fn apply<F: Ieee>(op: FOp, x: F, y: F, z: F) -> F {
    match op {
        FOp::Add => x + y,
        FOp::Sub => x - y,
        FOp::Mul => x * y,
        FOp::Fma => x.fused(y, z),
        FOp::Div => x / y,
        FOp::Sqrt => x.root(),
        FOp::Rcp => F::ONE / x,
        FOp::Neg => -x,
        FOp::Abs => x.magnitude(),
    }
}

/// `x` rounded to an integral value by `round` (as `Inst::round`: 0 leaves it).
fn integral<F: Ieee>(round: u8, x: F) -> Option<F> {
    match round {
        0 => Some(x),
        1 => Some(x.truncated()),
        2 => Some(x.floored()),
        3 => Some(x.ceiled()),
        4 => Some(x.nearest_even()),
        _ => None,
    }
}

/// `op` on the `bits`-wide (32 or 64) IEEE values in the low bits of `a`, `b`, `c`
/// (operands past [`FOp::sources`] ignored): the result's bits, or `None` where the
/// emulator does not compute it (module docs).
pub(crate) fn farith(
    op: FOp,
    bits: u8,
    ftz: bool,
    sat: bool,
    a: u64,
    b: u64,
    c: u64,
) -> Option<u64> {
    match bits {
        32 => {
            let f = |v: u64| flush32(f32::from_bits(v as u32), ftz);
            result32(apply(op, f(a), f(b), f(c)), ftz, sat)
        }
        64 => {
            let f = f64::from_bits;
            result64(apply(op, f(a), f(b), f(c)), sat)
        }
        _ => None,
    }
}

/// `cvt.dst.src` where `dst` or `src` is a float (`.f32` or `.f64`): `round` as
/// `Inst::round` (0: none or `.rn`; 1–3: `.rz`/`.rzi`, `.rm`/`.rmi`, `.rp`/`.rpi`; 4:
/// `.rni`). `None` when the emulator does not compute it (module docs).
pub(crate) fn cvt_float(a: u64, dst: Ty, src: Ty, round: u8, sat: bool, ftz: bool) -> Option<u64> {
    let in32 = |v: u64| flush32(f32::from_bits(v as u32), ftz);
    match (dst.is_int(), src.is_int()) {
        // Integer to float: rounded to nearest (Rust's casts round to nearest even); a
        // directed rounding only when the conversion is exact.
        (false, true) => {
            let (v, r32, r64) = if src.signed() {
                let v = sx(a, src.bits);
                (i128::from(v), v as f32, v as f64)
            } else {
                let v = mask(a, src.bits);
                (i128::from(v), v as f32, v as f64)
            };
            let exact_or_nearest = |exact: bool| round == 0 || (exact && round <= 3);
            match dst.bits {
                32 => {
                    let r = r32;
                    exact_or_nearest(r as i128 == v)
                        .then_some(())
                        .and_then(|()| result32(r, ftz, sat))
                }
                64 => {
                    let r = r64;
                    exact_or_nearest(r as i128 == v)
                        .then_some(())
                        .and_then(|()| result64(r, sat))
                }
                _ => None,
            }
        }
        // Float to integer: the rounding names the integer; saturated to the range (NaN
        // gives 0).
        (true, false) => {
            let f = match src.bits {
                32 => f64::from(in32(a)),
                64 => f64::from_bits(a),
                _ => return None,
            };
            // Float to integer names its rounding.
            let r = integral(round, f).filter(|_| round != 0)?;
            let v = if dst.signed() {
                let lo = -(2f64.powi(i32::from(dst.bits) - 1));
                (r.clamp(lo, -lo - 1.0) as i64) as u64
            } else {
                r.clamp(0.0, 2f64.powi(i32::from(dst.bits)) - 1.0) as u64
            };
            Some(mask(v, dst.bits))
        }
        (false, false) => match (dst.bits, src.bits) {
            // A plain same-type `cvt` moves the bits.
            (32, 32) | (64, 64) if round == 0 && !sat && !ftz => Some(a),
            (32, 32) => result32(integral(round, in32(a))?, ftz, sat),
            (64, 64) => result64(integral(round, f64::from_bits(a))?, sat),
            // Widening is exact.
            (64, 32) if round == 0 => result64(f64::from(in32(a)), sat),
            // Narrowing rounds to nearest (Rust's cast); a directed rounding only when exact.
            (32, 64) => {
                let x = f64::from_bits(a);
                let r = x as f32;
                let exact = f64::from(r) == x;
                (round == 0 || (exact && round <= 3))
                    .then_some(())
                    .and_then(|()| result32(r, ftz, sat))
            }
            _ => None,
        },
        (true, true) => None,
    }
}

impl Machine<'_> {
    /// [`crate::ir::Op::FArith`]: computed when every operand is known and [`farith`] gives
    /// a result; a term when an operand carries one (the comparisons of float values decided
    /// by parameters become choices, `docs/semantics.md` §6.5); otherwise unknown, as an
    /// operation the emulator does not compute.
    pub(super) fn exec_farith(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd], op: FOp) {
        // Validated (`ir::valid`): `ops` has the destination and `op.sources()` operands.
        let mut args = [(0u64, 0u32); 3];
        for (k, arg) in args.iter_mut().enumerate().take(op.sources()) {
            *arg = self.rd(t, ops[k + 1], pc);
        }
        let bits = inst.ty.bits;
        let (ftz, sat) = (inst.ftz && bits == 32, inst.sat);
        let n = op.sources();
        let unknown = args[..n].iter().fold(0, |u, &(_, x)| u | x);
        if unknown == 0 {
            if let Some(v) = farith(op, bits, ftz, sat, args[0].0, args[1].0, args[2].0) {
                self.wr(t, ops[0], v, 0);
                return;
            }
        } else if args[..n].iter().any(|&(_, x)| x & TERMED != 0) {
            let u = self.unknown_result(OpKind::FArith(op, ftz, sat), bits, false, &args[..n]);
            let (v, u) = self.settle(0, u);
            self.wr(t, ops[0], v, u);
            return;
        }
        // A NaN, a boundary result, or operands without terms: unknown, from float
        // arithmetic.
        let f = self.src.single(ValueSource::Float(InstId(pc)));
        let u = args[..n].iter().fold(f, |u, &(_, x)| self.src.union(u, x));
        let u = if self.values_wanted(pc) {
            let wanted = [Some(args[0]), Some(args[1]), Some(args[2])];
            self.float_term(pc, ops, &wanted, op.commutes(bits), u)
        } else {
            u
        };
        self.wr(t, ops[0], 0, u);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::Kind;

    const fn ty(bits: u8, kind: Kind) -> Ty {
        Ty { bits, kind }
    }
    const F32: Ty = ty(32, Kind::F);
    const F64: Ty = ty(64, Kind::F);
    const S32: Ty = ty(32, Kind::S);
    const S64: Ty = ty(64, Kind::S);
    const U64: Ty = ty(64, Kind::U);

    fn f(x: f32) -> u64 {
        u64::from(x.to_bits())
    }

    fn d(x: f64) -> u64 {
        x.to_bits()
    }

    #[test]
    fn single_precision_rounds_to_nearest_even() {
        // 1 + 2^-24 is a tie between 1 and 1 + 2^-23: even is 1.
        let tie = f(2f32.powi(-24));
        assert_eq!(
            farith(FOp::Add, 32, false, false, f(1.0), tie, 0),
            Some(f(1.0))
        );
        assert_eq!(
            farith(FOp::Mul, 32, false, false, f(3.0), f(0.5), 0),
            Some(f(1.5))
        );
        assert_eq!(
            farith(FOp::Div, 32, false, false, f(1.0), f(3.0), 0),
            Some(f(1.0 / 3.0))
        );
        assert_eq!(
            farith(FOp::Sqrt, 32, false, false, f(2.0), 0, 0),
            Some(f(2f32.sqrt()))
        );
        assert_eq!(
            farith(FOp::Rcp, 32, false, false, f(4.0), 0, 0),
            Some(f(0.25))
        );
        assert_eq!(
            farith(FOp::Neg, 32, false, false, f(0.0), 0, 0),
            Some(f(-0.0))
        );
        assert_eq!(
            farith(FOp::Abs, 32, false, false, f(-2.5), 0, 0),
            Some(f(2.5))
        );
        assert_eq!(
            farith(FOp::Sub, 32, false, false, f(1.0), f(1.0), 0),
            Some(f(0.0))
        );
    }

    /// One rounding: `fma(1 + 2^-12, 1 + 2^-12, -1)` keeps the 2^-24 that the product
    /// rounded alone loses.
    #[test]
    fn fma_rounds_once() {
        let x = f(1.0 + 2f32.powi(-12));
        let fused = farith(FOp::Fma, 32, false, false, x, x, f(-1.0));
        assert_eq!(fused, Some(f(2f32.powi(-11) + 2f32.powi(-24))));
        let p = farith(FOp::Mul, 32, false, false, x, x, 0).unwrap();
        let twice = farith(FOp::Add, 32, false, false, p, f(-1.0), 0);
        assert_eq!(twice, Some(f(2f32.powi(-11))));
        let y = d(1.0 + 2f64.powi(-27));
        assert_eq!(
            farith(FOp::Fma, 64, false, false, y, y, d(-1.0)),
            Some(d(2f64.powi(-26) + 2f64.powi(-54)))
        );
    }

    #[test]
    fn nan_results_are_not_computed_unless_saturated() {
        assert_eq!(
            farith(
                FOp::Sub,
                32,
                false,
                false,
                f(f32::INFINITY),
                f(f32::INFINITY),
                0
            ),
            None
        );
        assert_eq!(farith(FOp::Sqrt, 64, false, false, d(-1.0), 0, 0), None);
        assert_eq!(farith(FOp::Neg, 32, false, false, f(f32::NAN), 0, 0), None);
        // `.sat` flushes a NaN to +0 and clamps.
        assert_eq!(
            farith(FOp::Add, 32, false, true, f(f32::NAN), f(1.0), 0),
            Some(f(0.0))
        );
        assert_eq!(
            farith(FOp::Add, 32, false, true, f(0.75), f(0.5), 0),
            Some(f(1.0))
        );
        assert_eq!(
            farith(FOp::Sub, 32, false, true, f(0.25), f(0.5), 0),
            Some(f(0.0))
        );
        assert_eq!(farith(FOp::Mul, 32, false, true, f(-0.0), f(1.0), 0), None);
        // Infinities are results like any other.
        assert_eq!(
            farith(FOp::Div, 32, false, false, f(1.0), f(0.0), 0),
            Some(f(f32::INFINITY))
        );
    }

    #[test]
    fn ftz_flushes_single_precision_subnormals() {
        let tiny = f(f32::from_bits(1));
        // Without `.ftz` a subnormal is a value; with it, the zero of its sign.
        assert_eq!(
            farith(FOp::Add, 32, false, false, tiny, tiny, 0),
            Some(f(f32::from_bits(2)))
        );
        assert_eq!(
            farith(FOp::Add, 32, true, false, tiny, tiny, 0),
            Some(f(0.0))
        );
        assert_eq!(
            farith(FOp::Mul, 32, true, false, f(-f32::MIN_POSITIVE), f(0.5), 0),
            Some(f(-0.0))
        );
        // A result at the smallest normal may be a rounded-up tiny one: not computed.
        assert_eq!(
            farith(FOp::Mul, 32, true, false, f(f32::MIN_POSITIVE), f(1.0), 0),
            None
        );
        assert_eq!(
            farith(FOp::Mul, 32, false, false, f(f32::MIN_POSITIVE), f(1.0), 0),
            Some(f(f32::MIN_POSITIVE))
        );
    }

    #[test]
    fn conversions_round_as_ptx_says() {
        // 2^24 + 1 is not a float: to nearest (even) is 2^24, up is 2^24 + 2.
        let v = (1u64 << 24) + 1;
        assert_eq!(
            cvt_float(v, F32, S32, 0, false, false),
            Some(f(16_777_216.0))
        );
        assert_eq!(cvt_float(v, F32, S32, 3, false, false), None);
        assert_eq!(cvt_float(12, F32, S32, 3, false, false), Some(f(12.0)));
        // A 64-bit integer rounds once, not through a double: 2^60 + 2^36 + 1 is above
        // the tie between 2^60 and 2^60 + 2^37 only by its last bit.
        let w = (1u64 << 60) + (1 << 36) + 1;
        assert_eq!(
            cvt_float(w, F32, U64, 0, false, false),
            Some(f(((1u64 << 60) + (1 << 37)) as f32))
        );
        assert_eq!(
            cvt_float((-3i64) as u64, F64, S64, 0, false, false),
            Some(d(-3.0))
        );
        // Float to integer, each rounding, and saturation.
        assert_eq!(
            cvt_float(d(-2.5), S32, F64, 1, false, false),
            Some(mask((-2i64) as u64, 32))
        );
        assert_eq!(
            cvt_float(d(-2.5), S32, F64, 2, false, false),
            Some(mask((-3i64) as u64, 32))
        );
        assert_eq!(
            cvt_float(d(-2.5), S32, F64, 3, false, false),
            Some(mask((-2i64) as u64, 32))
        );
        assert_eq!(
            cvt_float(d(-2.5), S32, F64, 4, false, false),
            Some(mask((-2i64) as u64, 32))
        );
        assert_eq!(
            cvt_float(d(1e20), S32, F64, 1, false, false),
            Some(0x7fff_ffff)
        );
        assert_eq!(cvt_float(d(1.5), S32, F64, 0, false, false), None);
        // `.ftz` turns a negative subnormal into -0, whose floor is 0, not -1.
        let neg_tiny = u64::from((-f32::from_bits(1)).to_bits());
        assert_eq!(cvt_float(neg_tiny, S32, F32, 2, false, true), Some(0));
        assert_eq!(
            cvt_float(neg_tiny, S32, F32, 2, false, false),
            Some(0xffff_ffff)
        );
        // Narrowing rounds to nearest; directed only when exact.
        let third = d(1.0 / 3.0);
        assert_eq!(
            cvt_float(third, F32, F64, 0, false, false),
            Some(f((1.0f64 / 3.0) as f32))
        );
        assert_eq!(cvt_float(third, F32, F64, 1, false, false), None);
        assert_eq!(cvt_float(d(0.5), F32, F64, 1, false, false), Some(f(0.5)));
        assert_eq!(
            cvt_float(f(0.1), F64, F32, 0, false, false),
            Some(d(f64::from(0.1f32)))
        );
        // Same type: rounding to an integer, saturation, and a plain move.
        assert_eq!(cvt_float(f(2.5), F32, F32, 4, false, false), Some(f(2.0)));
        assert_eq!(cvt_float(f(1.7), F32, F32, 0, true, false), Some(f(1.0)));
        assert_eq!(
            cvt_float(f(f32::NAN), F32, F32, 0, false, false),
            Some(f(f32::NAN))
        );
        assert_eq!(
            cvt_float(f(f32::NAN), F32, F32, 0, true, false),
            Some(f(0.0))
        );
    }
}
