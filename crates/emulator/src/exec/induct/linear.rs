//! Reading symbolic terms of the induction's abstract runs (`docs/induction.md` §2) as
//! integers: the bits of a term that no value of the period count `Y` changes, and terms
//! that are linear in `Y` and one input atom `X` (the trip count).
//!
//! Both readings are exact where they answer. [`known_bits`] needs no assumption: `step · Y`
//! has the low bits of `0` below `step`'s trailing zeros for every `Y`. [`Linearizer`] reads a
//! bit-vector term as the integer `c + y·Y + x·X` and records, for every node on the way, the
//! range its integer value must stay in for the bit vector to be that integer (no
//! wrap-around): the driver checks those ranges over the whole family of trip counts it
//! claims and narrows the family until they hold.

use super::super::alu::sx;
use super::super::terms::{Node, OpKind, Rel, TermId, Terms, top};
use rustc_hash::FxHashMap;

/// `c + y·Y + x·X` over the integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Lin {
    pub c: i128,
    pub y: i128,
    pub x: i128,
}

impl Lin {
    fn constant(c: i128) -> Lin {
        Lin { c, y: 0, x: 0 }
    }

    fn add(self, o: Lin) -> Lin {
        Lin {
            c: self.c + o.c,
            y: self.y + o.y,
            x: self.x + o.x,
        }
    }

    fn scale(self, k: i128) -> Option<Lin> {
        Some(Lin {
            c: self.c.checked_mul(k)?,
            y: self.y.checked_mul(k)?,
            x: self.x.checked_mul(k)?,
        })
    }

    fn is_const(self) -> bool {
        self.y == 0 && self.x == 0
    }
}

/// A node's integer value must lie in `lo..=hi` for the linear reading to be exact.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Bound {
    pub lin: Lin,
    pub lo: i128,
    pub hi: i128,
}

/// The integers a `bits`-wide two's complement value holds.
fn signed_range(bits: u8) -> (i128, i128) {
    let b = u32::from(bits.clamp(1, 64));
    (-(1i128 << (b - 1)), (1i128 << (b - 1)) - 1)
}

fn read(v: u64, bits: u8) -> i128 {
    i128::from(sx(v & top(bits), bits.clamp(1, 64)))
}

/// Reads terms as [`Lin`]s over one atom.
pub(crate) struct Linearizer<'a> {
    terms: &'a Terms,
    /// Base terms the path's choices determine (`n & 3` in a run for one remainder), with
    /// their values: constants here.
    known: &'a FxHashMap<TermId, u64>,
    /// The atom `X`: the one term without `Y` the linear forms may read (set by the first
    /// form that reads one).
    pub atom: Option<TermId>,
    /// The ranges the nodes read so far must keep.
    pub bounds: Vec<Bound>,
}

impl<'a> Linearizer<'a> {
    pub(crate) fn new(
        terms: &'a Terms,
        known: &'a FxHashMap<TermId, u64>,
        atom: Option<TermId>,
    ) -> Self {
        Linearizer {
            terms,
            known,
            atom,
            bounds: Vec::new(),
        }
    }

    fn bound(&mut self, lin: Lin, bits: u8) {
        let (lo, hi) = signed_range(bits);
        self.bounds.push(Bound { lin, lo, hi });
    }

    /// `t` read at `bits` bits as a linear form (`None`: not linear in `Y` and the atom).
    pub(crate) fn lin(&mut self, t: TermId, bits: u8) -> Option<Lin> {
        let terms = self.terms;
        if let Some(&v) = self.known.get(&t) {
            return Some(Lin::constant(read(v, bits)));
        }
        let lin = match terms.node(t) {
            // A constant reads as signed: `x - 1` is stored as `x + 0xffff_ffff`. An unsigned
            // comparison's operands must be non-negative (their bounds), which rules out the
            // constants the unsigned reading would take for large values.
            Node::Const(v) => return Some(Lin::constant(read(v, bits))),
            Node::Period { step, bits: pb } => {
                let lin = Lin {
                    c: 0,
                    y: read(step, pb),
                    x: 0,
                };
                self.bound(lin, pb);
                lin
            }
            Node::Affine { base, k, bits: ab } => {
                let lin = self.lin(base, ab)?.add(Lin::constant(read(k, ab)));
                self.bound(lin, ab);
                lin
            }
            Node::Op { .. } => {
                // Linear through the operation when it can be read so (its operands the
                // atom, `Y`, constants and the path's determined terms); else, without `Y`,
                // the operation itself is the atom (`(K + 63) >> 6`).
                let (atom, n) = (self.atom, self.bounds.len());
                match self.op_lin(t) {
                    Some(l) => l,
                    None if !terms.periodic(t) => {
                        self.atom = atom;
                        self.bounds.truncate(n);
                        return self.atom_lin(t, bits);
                    }
                    None => return None,
                }
            }
            Node::Cmp { .. } | Node::Not(_) => return None,
            // A term without `Y`: the atom.
            _ => return self.atom_lin(t, bits),
        };
        Some(lin)
    }

    /// An operation read as a linear form (`None`: not linear).
    fn op_lin(&mut self, t: TermId) -> Option<Lin> {
        let terms = self.terms;
        let Node::Op {
            op, bits: ob, args, ..
        } = terms.node(t)
        else {
            return None;
        };
        let arg = |s: &mut Self, k: usize, w: u8| s.lin(args[k]?, w);
        let lin = match op {
            OpKind::Add => arg(self, 0, ob)?.add(arg(self, 1, ob)?),
            OpKind::Sub => arg(self, 0, ob)?.add(arg(self, 1, ob)?.scale(-1)?),
            OpKind::Neg => arg(self, 0, ob)?.scale(-1)?,
            OpKind::Mul | OpKind::MulWide => {
                let (a, b) = (arg(self, 0, ob)?, arg(self, 1, ob)?);
                let lin = match (a.is_const(), b.is_const()) {
                    (_, true) => a.scale(b.c)?,
                    (true, false) => b.scale(a.c)?,
                    _ => return None,
                };
                if op == OpKind::MulWide {
                    self.bound(lin, ob.saturating_mul(2).min(64));
                    return Some(lin);
                }
                lin
            }
            OpKind::Shl => {
                let (a, s) = (arg(self, 0, ob)?, arg(self, 1, ob)?);
                if !s.is_const() || s.c < 0 || s.c >= i128::from(ob) {
                    return None;
                }
                a.scale(1i128 << s.c)?
            }
            OpKind::Cvt => {
                // args: the value, then (source bits << 1) | source signed.
                let Node::Const(from) = terms.node(args[1]?) else {
                    return None;
                };
                let (fb, fs) = ((from >> 1) as u8, from & 1 != 0);
                let a = arg(self, 0, fb)?;
                if !fs {
                    // Zero extension keeps the value only when it reads as
                    // non-negative.
                    let (_, hi) = signed_range(fb);
                    self.bounds.push(Bound { lin: a, lo: 0, hi });
                }
                a
            }
            _ => return None,
        };
        self.bound(lin, ob);
        Some(lin)
    }

    /// `t` (a term without `Y`) as the atom.
    fn atom_lin(&mut self, t: TermId, bits: u8) -> Option<Lin> {
        if self.terms.periodic(t) {
            return None;
        }
        let (w, _) = self.terms.natural(t);
        if bits < w {
            return None;
        }
        match self.atom {
            None => self.atom = Some(t),
            Some(a) if a == t => {}
            Some(_) => return None,
        }
        Some(Lin { c: 0, y: 0, x: 1 })
    }

    /// The predicate `p` (a comparison, possibly negated) as `diff rel 0` with
    /// `diff = a − b`: `None` when it is not linear.
    pub(crate) fn predicate(&mut self, p: TermId) -> Option<(Rel, Lin)> {
        let (q, negated) = match self.terms.node(p) {
            Node::Not(q) => (q, true),
            _ => (p, false),
        };
        let Node::Cmp {
            rel,
            signed,
            bits,
            a,
            b,
        } = self.terms.node(q)
        else {
            return None;
        };
        let (la, lb) = (self.lin(a, bits)?, self.lin(b, bits)?);
        let (lo, hi) = signed_range(bits);
        let lo = if signed { lo } else { 0 };
        self.bounds.push(Bound { lin: la, lo, hi });
        self.bounds.push(Bound { lin: lb, lo, hi });
        let diff = la.add(lb.scale(-1)?);
        let rel = if negated { negate(rel) } else { rel };
        Some((rel, diff))
    }
}

/// `!(a rel b)` ⇔ `a negate(rel) b`.
pub(crate) fn negate(rel: Rel) -> Rel {
    match rel {
        Rel::Eq => Rel::Ne,
        Rel::Ne => Rel::Eq,
        Rel::Lt => Rel::Ge,
        Rel::Le => Rel::Gt,
        Rel::Gt => Rel::Le,
        Rel::Ge => Rel::Lt,
    }
}

/// `v rel 0`.
pub(crate) fn holds(rel: Rel, sign: std::cmp::Ordering) -> bool {
    use std::cmp::Ordering::*;
    match rel {
        Rel::Eq => sign == Equal,
        Rel::Ne => sign != Equal,
        Rel::Lt => sign == Less,
        Rel::Le => sign != Greater,
        Rel::Gt => sign == Greater,
        Rel::Ge => sign != Less,
    }
}

fn memo_insert(memo: &mut FxHashMap<TermId, (u64, u64)>, t: TermId, r: (u64, u64)) -> (u64, u64) {
    memo.insert(t, r);
    r
}

/// The bits of `t`'s value that are the same for every value of `Y` and every input, and
/// their values: `(values, mask)`. Exact: a bit is in the mask only when no `Y` and no
/// input changes it.
pub(crate) fn known_bits(
    terms: &Terms,
    t: TermId,
    memo: &mut FxHashMap<TermId, (u64, u64)>,
) -> (u64, u64) {
    if let Some(&r) = memo.get(&t) {
        return r;
    }
    // The low bits below the lowest unknown one: an addition or multiplication of values
    // whose `m` lowest bits are known has its `m` lowest bits known.
    let low = |m: u64| {
        if m == u64::MAX {
            64
        } else {
            (!m).trailing_zeros()
        }
    };
    let low_mask = |n: u32| if n >= 64 { u64::MAX } else { (1u64 << n) - 1 };
    let r = match terms.node(t) {
        Node::Const(c) => (c, u64::MAX),
        Node::Period { step, bits } => {
            let z = (step & top(bits)).trailing_zeros().min(u32::from(bits));
            (0, low_mask(z) | !top(bits))
        }
        Node::Affine { base, k, bits } => {
            let (v, m) = known_bits(terms, base, memo);
            let n = low(m).min(u32::from(bits));
            let lm = low_mask(n);
            (v.wrapping_add(k) & lm & top(bits), lm | !top(bits))
        }
        Node::Op {
            op,
            bits,
            signed,
            args,
        } => {
            let mut kb = |k: usize| args[k].map(|a| known_bits(terms, a, memo));
            let width = !top(bits);
            match (op, kb(0), kb(1)) {
                (OpKind::And, Some((va, ma)), Some((vb, mb))) => {
                    let m = (ma & mb) | (ma & !va) | (mb & !vb);
                    (va & vb & m & top(bits), (m & top(bits)) | width)
                }
                (OpKind::Or, Some((va, ma)), Some((vb, mb))) => {
                    let m = (ma & mb) | (ma & va) | (mb & vb);
                    ((va | vb) & m & top(bits), (m & top(bits)) | width)
                }
                (OpKind::Xor, Some((va, ma)), Some((vb, mb))) => {
                    let m = ma & mb;
                    ((va ^ vb) & m & top(bits), (m & top(bits)) | width)
                }
                (OpKind::Add | OpKind::Sub, Some((va, ma)), Some((vb, mb))) => {
                    let n = low(ma).min(low(mb)).min(u32::from(bits));
                    let lm = low_mask(n);
                    let v = if op == OpKind::Add {
                        va.wrapping_add(vb)
                    } else {
                        va.wrapping_sub(vb)
                    };
                    (v & lm & top(bits), lm | width)
                }
                (OpKind::Mul, Some((va, ma)), Some((vb, mb))) => {
                    let n = low(ma).min(low(mb)).min(u32::from(bits));
                    let lm = low_mask(n);
                    (va.wrapping_mul(vb) & lm & top(bits), lm | width)
                }
                (OpKind::Shr, Some((va, ma)), Some((vs, ms))) if ms == u64::MAX => {
                    let w = top(bits);
                    if vs >= u64::from(bits) || vs >= 64 {
                        return memo_insert(memo, t, (0, 0));
                    }
                    let s = vs as u32;
                    let sign = 1u64 << (u32::from(bits.clamp(1, 64)) - 1);
                    // The bits shifted in: zeros, or copies of the sign bit.
                    let fill = w & !(w >> s);
                    let (fv, fm) = if !signed {
                        (0, fill)
                    } else if ma & sign != 0 {
                        (if va & sign != 0 { fill } else { 0 }, fill)
                    } else {
                        (0, 0)
                    };
                    let m = ((ma & w) >> s) | fm;
                    ((((va & w) >> s) | fv) & m & w, (m & w) | width)
                }
                (OpKind::Shl, Some((va, ma)), Some((vs, ms))) if ms == u64::MAX => {
                    if vs >= u64::from(bits) {
                        (0, u64::MAX)
                    } else {
                        let s = vs as u32;
                        let m = (ma << s) | low_mask(s);
                        ((va << s) & m & top(bits), (m & top(bits)) | width)
                    }
                }
                _ => (0, width),
            }
        }
        _ => (0, 0),
    };
    memo.insert(t, r);
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_low_bits_of_a_progression_are_known() {
        let mut t = Terms::default();
        // i = 2 + 2·Y (a stage index that advances by two per period).
        let y = t.period(2, 32).unwrap();
        let i = t.add_const(y, 3, 32).unwrap();
        let one = t.constant(1).unwrap();
        let and = t
            .op(OpKind::And, 32, false, [Some(i), Some(one), None])
            .unwrap();
        let mut memo = FxHashMap::default();
        let (v, m) = known_bits(&t, and, &mut memo);
        assert_eq!(m & 0xffff_ffff, 0xffff_ffff);
        assert_eq!(v, 1);
        // (i << 7) & 128: bit 7 is bit 0 of i.
        let seven = t.constant(7).unwrap();
        let shl = t
            .op(OpKind::Shl, 32, false, [Some(i), Some(seven), None])
            .unwrap();
        let k128 = t.constant(128).unwrap();
        let off = t
            .op(OpKind::And, 32, false, [Some(shl), Some(k128), None])
            .unwrap();
        let (v, m) = known_bits(&t, off, &mut memo);
        assert_eq!(m & 0xffff_ffff, 0xffff_ffff);
        assert_eq!(v, 128);
        // (i >> 1) & 1 with a step of 4: an mbarrier phase parity of a 2-stage ring.
        let y4 = t.period(4, 32).unwrap();
        let j = t.add_const(y4, 6, 32).unwrap();
        let one32 = t.constant(1).unwrap();
        let shr = t
            .op(OpKind::Shr, 32, false, [Some(j), Some(one32), None])
            .unwrap();
        let parity = t
            .op(OpKind::And, 32, false, [Some(shr), Some(one), None])
            .unwrap();
        let (v, m) = known_bits(&t, parity, &mut memo);
        assert_eq!(m & 0xffff_ffff, 0xffff_ffff);
        assert_eq!(v, 1);
        // Bit 1 of i varies with Y.
        let two = t.constant(2).unwrap();
        let bit1 = t
            .op(OpKind::And, 32, false, [Some(i), Some(two), None])
            .unwrap();
        let (_, m) = known_bits(&t, bit1, &mut memo);
        assert_ne!(m & 2, 2);
    }

    #[test]
    fn a_comparison_of_a_progression_with_the_trip_count_is_linear() {
        let mut t = Terms::default();
        let n = t.param(16, 4, false).unwrap();
        let y = t.period(2, 32).unwrap();
        let i = t.add_const(y, 5, 32).unwrap();
        let i2 = t.add_const(i, 2, 32).unwrap();
        let ge = t.cmp(Rel::Ge, true, 32, i2, n).unwrap();
        let none = FxHashMap::default();
        let mut l = Linearizer::new(&t, &none, None);
        let (rel, diff) = l.predicate(ge).unwrap();
        assert_eq!(rel, Rel::Ge);
        assert_eq!(diff, Lin { c: 7, y: 2, x: -1 });
        assert_eq!(l.atom, Some(n));
        assert!(!l.bounds.is_empty());
        // A comparison with a constant reads Y alone (no atom): still linear, and the
        // caller finds it is not proportional to the trip-count distance.
        let forty = t.constant(40).unwrap();
        let eq = t.cmp(Rel::Eq, true, 32, i, forty).unwrap();
        let mut l = Linearizer::new(&t, &none, Some(n));
        let (_, diff) = l.predicate(eq).unwrap();
        assert_eq!(diff, Lin { c: -35, y: 2, x: 0 });
    }
}
