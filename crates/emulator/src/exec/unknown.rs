//! Unknown values through the ALU: the source sets and symbolic terms of results whose
//! operands are not all known (`docs/semantics.md` §6.5), cached per operation and operand
//! ids, and the operations a known operand decides.

use super::Machine;
use super::alu::{Alu, mask};
use super::terms::{Node, OpKind, Rel, TermId};
use super::values::TERMED;
use crate::ir::{BoolOp, Cmp, Kind};

/// The integer comparison `cmp` as a term relation (`None` for `num`/`nan`), and whether it
/// is signed on a type whose signedness is `signed`.
fn rel(cmp: Cmp, signed: bool) -> Option<(Rel, bool)> {
    Some(match cmp {
        Cmp::Eq | Cmp::Equ => (Rel::Eq, signed),
        Cmp::Ne | Cmp::Neu => (Rel::Ne, signed),
        Cmp::Lt | Cmp::Ltu => (Rel::Lt, signed),
        Cmp::Le | Cmp::Leu => (Rel::Le, signed),
        Cmp::Gt | Cmp::Gtu => (Rel::Gt, signed),
        Cmp::Ge | Cmp::Geu => (Rel::Ge, signed),
        Cmp::Lo => (Rel::Lt, false),
        Cmp::Ls => (Rel::Le, false),
        Cmp::Hi => (Rel::Gt, false),
        Cmp::Hs => (Rel::Ge, false),
        Cmp::Num | Cmp::Nan => return None,
    })
}

/// The comparison `b cmp' a` that holds exactly when `a cmp b` does.
fn mirrored(cmp: Cmp) -> Cmp {
    match cmp {
        Cmp::Lt => Cmp::Gt,
        Cmp::Gt => Cmp::Lt,
        Cmp::Le => Cmp::Ge,
        Cmp::Ge => Cmp::Le,
        Cmp::Ltu => Cmp::Gtu,
        Cmp::Gtu => Cmp::Ltu,
        Cmp::Leu => Cmp::Geu,
        Cmp::Geu => Cmp::Leu,
        Cmp::Lo => Cmp::Hi,
        Cmp::Hi => Cmp::Lo,
        Cmp::Ls => Cmp::Hs,
        Cmp::Hs => Cmp::Ls,
        other => other,
    }
}

impl Machine<'_> {
    /// The term of operand `(v, u)`: a constant when known, its term when termed.
    pub(super) fn operand_term(&mut self, (v, u): (u64, u32)) -> Option<TermId> {
        if u == 0 {
            self.src.terms.constant(v)
        } else {
            // Value terms too ([`crate::Config::value_terms`]): a term built on one is one,
            // which `Sources::term` keeps from every decision.
            let t = self.src.value_term(u)?;
            // (A value term's `selp`s are left as they are: resolving walks the term, which
            // is not bounded in size, and only equality of value terms matters.)
            if self.src.terms.has_selp(t) && !self.src.terms.has_atom(t) {
                self.resolve_selps(t)
            } else {
                Some(t)
            }
        }
    }

    /// The term of `op` on `args` (`None` when an operand has no term or the term would be
    /// too large).
    fn op_term(
        &mut self,
        op: OpKind,
        bits: u8,
        signed: bool,
        args: &[(u64, u32)],
    ) -> Option<TermId> {
        let mut ts = [None; 3];
        for (k, &a) in args.iter().enumerate().take(3) {
            ts[k] = Some(self.operand_term(a)?);
        }
        match (op, args) {
            (OpKind::Add, [(_, ua), (b, 0)]) if *ua != 0 => {
                self.src.terms.add_const(ts[0]?, *b, bits)
            }
            (OpKind::Add, [(a, 0), (_, ub)]) if *ub != 0 => {
                self.src.terms.add_const(ts[1]?, *a, bits)
            }
            (OpKind::Sub, [(_, ua), (b, 0)]) if *ua != 0 => {
                self.src.terms.add_const(ts[0]?, b.wrapping_neg(), bits)
            }
            _ => self.src.terms.op(op, bits, signed, ts),
        }
    }

    /// With [`crate::Config::value_terms`]: `u` (the sources of the result of the pure opaque
    /// instruction `pc`, a floating-point operation) with the term "instruction `pc` applied
    /// to its operands' terms" ([`OpKind::Inst`]): equal operands give equal results, bit
    /// for bit. Only for one register destination and at most three operands, each a
    /// register or an immediate (`args`, in order) with a term or a known value. The first
    /// two operands of an instruction that `commutes` are taken in term order (a butterfly
    /// reduction's lanes add the same two values in opposite orders).
    pub(super) fn float_term(
        &mut self,
        pc: u32,
        ops: &[crate::ir::Opnd],
        args: &[Option<(u64, u32)>; 3],
        commutes: bool,
        u: u32,
    ) -> u32 {
        use crate::ir::Opnd;
        let (Some(&Opnd::Reg(d)), 1..=4) = (ops.first(), ops.len()) else {
            return u;
        };
        let bits = self.ir.reg_bits.get(d.index()).copied().unwrap_or(0);
        if bits == 0 || bits > 64 {
            return u;
        }
        let mut ts = [None; 3];
        for (k, slot) in ts.iter_mut().enumerate().take(ops.len() - 1) {
            let Some(a) = args[k] else {
                return u;
            };
            let Some(term) = self.operand_term(a) else {
                return u;
            };
            *slot = Some(term);
        }
        if commutes && ts[1] < ts[0] {
            ts.swap(0, 1);
        }
        let term = self.src.terms.op(OpKind::Inst(pc), bits, false, ts);
        self.src.termed(u, term)
    }

    /// `u` (the sources of a register assembled from `parts`, each `w` bits wide, the
    /// first the low bits: `mov.b64 d, {lo, hi}`) with the term [`OpKind::Pack`] of the
    /// parts' terms (a known part by its value), when there are at most three parts and
    /// each has one. A pack of terms of the inputs is a term of the inputs: taken apart
    /// again ([`Machine::unpack_part`]), each part is its own term (Triton packs a trip count
    /// with a tile index into one `.b64` register and unpacks it before the loop). A pack
    /// with a value term among its parts is built only with [`crate::Config::value_terms`].
    pub(super) fn pack_unknown(&mut self, parts: &[(u64, u32)], w: u8, u: u32) -> u32 {
        if self.terms_off || u == 0 || parts.len() > 3 || w == 0 {
            return u;
        }
        let values = self.cfg.value_terms && !self.values_off;
        let mut ts = [None; 3];
        for (slot, &(v, pu)) in ts.iter_mut().zip(parts) {
            let Some(term) = self.operand_term((super::alu::mask(v, w), pu)) else {
                return u;
            };
            if !values && self.src.terms.has_atom(term) {
                return u;
            }
            *slot = Some(term);
        }
        let bits = w.saturating_mul(parts.len() as u8);
        let term = match self.unpacked_whole(&ts[..parts.len()], w) {
            Some(x) => Some(x),
            None => self.src.terms.op(OpKind::Pack, bits, false, ts),
        };
        self.src.termed(u, term)
    }

    /// The term `x` when `parts` are `x`'s own `w`-bit parts in order, as [`Self::
    /// part_unknown`] builds them (`cvt.u{w}(x)`, `cvt.u{w}(x >> w)`, ...) and `x` is no
    /// wider than they are together: a value split into halves (to shuffle them) and put
    /// together again is that value.
    fn unpacked_whole(&self, parts: &[Option<TermId>], w: u8) -> Option<TermId> {
        let terms = &self.src.terms;
        let from_64 = |t: TermId| matches!(terms.node(t), Node::Const(c) if c == 64 << 1);
        let mut whole = None;
        for (i, &p) in parts.iter().enumerate() {
            let Node::Op {
                op: OpKind::Cvt,
                bits,
                args: [Some(s), Some(c), None],
                ..
            } = terms.node(p?)
            else {
                return None;
            };
            if bits != w || !from_64(c) {
                return None;
            }
            let x = if i == 0 {
                s
            } else {
                let Node::Op {
                    op: OpKind::Shr,
                    bits: 64,
                    args: [Some(x), Some(k), None],
                    ..
                } = terms.node(s)
                else {
                    return None;
                };
                if terms.node(k) != Node::Const(i as u64 * u64::from(w)) {
                    return None;
                }
                x
            };
            if *whole.get_or_insert(x) != x {
                return None;
            }
        }
        let x = whole?;
        (usize::from(terms.natural(x).0) <= usize::from(w) * parts.len()).then_some(x)
    }

    /// With [`crate::Config::value_terms`]: `u` (the sources of an integer `redux.sync`'s
    /// result) with the term of `op` folded over the lanes' inputs in lane order (the
    /// operations are associative and commutative, so that is the result), when every input
    /// has a term (or is known) and one of them is a value term: a fold over terms of the
    /// inputs alone would be a term the first run never had, which could decide a branch.
    pub(super) fn redux_term(
        &mut self,
        pc: u32,
        op: crate::ir::ReduxOp,
        signed: bool,
        inputs: &[(u64, u32)],
        u: u32,
    ) -> u32 {
        use crate::ir::ReduxOp;
        let kind = match op {
            ReduxOp::Add => OpKind::Add,
            ReduxOp::Min => OpKind::Min,
            ReduxOp::Max => OpKind::Max,
            ReduxOp::And => OpKind::And,
            ReduxOp::Or => OpKind::Or,
            ReduxOp::Xor => OpKind::Xor,
            // A float min/max folded by the instruction's own name (a value term whatever
            // its inputs: the instruction is not one the terms evaluate).
            ReduxOp::FMin { .. } | ReduxOp::FMax { .. } => OpKind::Inst(pc),
        };
        let mut acc: Option<TermId> = None;
        let mut data = false;
        for &(v, iu) in inputs {
            let Some(t) = self.operand_term((super::alu::mask(v, 32), iu)) else {
                return u;
            };
            data |= self.src.terms.has_atom(t) || matches!(kind, OpKind::Inst(_));
            acc = match acc {
                None => Some(t),
                Some(a) => match self
                    .src
                    .terms
                    .op(kind, 32, signed, [Some(a), Some(t), None])
                {
                    Some(x) => Some(x),
                    None => return u,
                },
            };
        }
        if !data {
            return u;
        }
        self.src.termed(u, acc)
    }

    /// The id of the unknown result of `op` on `args`: the union of their sources, with
    /// the result's term when some operand carries one. Called only when an operand is
    /// unknown (never on the known-value path).
    #[cold]
    pub(super) fn unknown_result(
        &mut self,
        op: OpKind,
        bits: u8,
        signed: bool,
        args: &[(u64, u32)],
    ) -> u32 {
        // A generic address in the shared window with an unknown operand (an offset, a
        // selection) may still point into shared memory: the result carries the mark, added
        // first so that no truncation drops it and before a term is attached (a term keeps
        // the sources it was first seen with).
        let marker = self.shared_pointer_mark(args);
        if self.terms_off
            || args.iter().all(|&(_, x)| x & TERMED == 0)
            || self.values_off
                && args.iter().any(|&(_, x)| {
                    self.src
                        .value_term(x)
                        .is_some_and(|t| self.src.terms.has_atom(t))
                })
        {
            // No term to build: the union of the sources (one or two operands unknown by
            // the same sources, the common case, is no lookup at all). (A value term that
            // reaches no shared store is not built either.)
            return args.iter().fold(marker, |u, &(_, x)| self.src.union(u, x));
        }
        let key = super::values::ResultKey::new(op, 0, bits, signed, args)
            .filter(|_| !self.resolvable(args));
        self.cached_result(key, |m| {
            let mut u = marker;
            let mut termed = false;
            for &(_, x) in args {
                termed |= x & TERMED != 0;
                u = m.src.union(u, x);
            }
            let r = if termed {
                let term = m.op_term(op, bits, signed, args);
                m.src.termed(u, term)
            } else {
                u
            };
            (r, r)
        })
        .0
    }

    /// The id of [`super::values::SHARED_POINTER`] when a known operand of `args` is a
    /// generic address in the shared window (the result of an operation on it and an
    /// unknown operand may point into shared memory), else 0.
    pub(super) fn shared_pointer_mark(&mut self, args: &[(u64, u32)]) -> u32 {
        if args
            .iter()
            .any(|&(v, x)| x == 0 && self.win.offset(v, self.shared_base).is_some())
        {
            self.src.single(super::values::SHARED_POINTER)
        } else {
            0
        }
    }

    /// The plain sources of `u` with [`super::values::SHARED_POINTER`] among them.
    #[cold]
    pub(super) fn mark_shared_pointer(&mut self, u: u32) -> u32 {
        let marker = self.src.single(super::values::SHARED_POINTER);
        self.src.union(marker, u)
    }

    /// Whether the unknown value `u` may be a generic address in the shared window (see
    /// [`super::values::SHARED_POINTER`]).
    pub(super) fn points_into_shared(&self, u: u32) -> bool {
        self.src.get(u).contains(&super::values::SHARED_POINTER)
    }

    /// The result cached for `key` ([`super::values::Sources::results`]), else `compute`'s,
    /// cached (`None`: a key the cache cannot hold, computed every time).
    fn cached_result(
        &mut self,
        key: Option<super::values::ResultKey>,
        compute: impl FnOnce(&mut Self) -> (u32, u32),
    ) -> (u32, u32) {
        if let Some(r) = key.as_ref().and_then(|k| self.src.cached(k)) {
            return r;
        }
        let r = compute(self);
        if let Some(k) = key {
            self.src.cache(k, r);
        }
        r
    }

    /// `(v, u)`, or the value the choices so far determine for the termed id `u`.
    #[inline]
    pub(super) fn settle(&mut self, v: u64, u: u32) -> (u64, u32) {
        if u & TERMED != 0
            && let Some(x) = self.determined_value(u)
        {
            return (x, 0);
        }
        if u & TERMED != 0 && self.induct_active() {
            return self.induct_settle(v, u);
        }
        (v, u)
    }

    /// The result of `k` on operands one of which is unknown, when the known one decides
    /// it: an absorbing operand (`x & 0`, `x * 0`, `x | ~0`) gives a known result, and on
    /// predicates (`bits == 1`) an identity (`p & 1`, `p | 0`, `p ^ 0`) gives the other
    /// operand unchanged, its term included. `None` otherwise.
    pub(super) fn decided_alu(
        k: Alu,
        bits: u8,
        a: (u64, u32),
        b: (u64, u32),
    ) -> Option<(u64, u32)> {
        let ones = mask(u64::MAX, bits);
        let known = |x: (u64, u32)| (x.1 == 0).then_some(mask(x.0, bits));
        let (ka, kb) = (known(a), known(b));
        let either = |v: u64| ka == Some(v) || kb == Some(v);
        let other = |v: u64| if ka == Some(v) { b } else { a };
        match k {
            Alu::And | Alu::MulLo if either(0) => Some((0, 0)),
            Alu::Or if either(ones) => Some((ones, 0)),
            Alu::And if bits == 1 && either(1) => Some(other(1)),
            Alu::Or | Alu::Xor if bits == 1 && either(0) => Some(other(0)),
            _ => None,
        }
    }

    /// [`Machine::unknown_result`] of a two-operand ALU operation.
    #[cold]
    pub(super) fn unknown_alu(
        &mut self,
        k: Alu,
        bits: u8,
        signed: bool,
        a: (u64, u32),
        b: (u64, u32),
    ) -> u32 {
        self.unknown_result(k.term_op(), bits, signed, &[a, b])
    }

    /// The ids of the unknown results `p`, `q` of `setp` (`a cmp b`, combined with `c` by
    /// `bop`): the union of the sources, with predicate terms when the operands have terms.
    #[cold]
    #[allow(clippy::too_many_arguments)]
    pub(super) fn unknown_setp(
        &mut self,
        cmp: Cmp,
        ty: crate::ir::Ty,
        bop: BoolOp,
        a: (u64, u32),
        b: (u64, u32),
        c: (u64, u32),
    ) -> (u32, u32) {
        // Cached like `unknown_result`, the comparison, type and combiner in the tag.
        let tag = cmp as u16 | (ty.kind as u16) << 5 | (bop as u16) << 8;
        let key =
            super::values::ResultKey::new(OpKind::Other("setp"), tag, ty.bits, false, &[a, b, c])
                .filter(|_| !self.resolvable(&[a, b, c]));
        self.cached_result(key, |m| m.setp_ids(cmp, ty, bop, a, b, c))
    }

    /// The unknown id of part `i` (`w` bits) of the unknown value `u` unpacked into a
    /// register list (`mov.b64 {lo, hi}, x`): a field of the kernel parameter when `u` is one
    /// (nvcc reads two `int` fields of a by-value struct with one `ld.param.b64`; CUTLASS's
    /// `k == 0` test on the high half was unknown, not explored), else
    /// `cvt.u{w}((x >> i·w))` of `u`'s term; plain when `u` has none.
    pub(super) fn part_unknown(&mut self, u: u32, w: u8, i: usize) -> u32 {
        let plain = self.src.plain(u);
        if u & TERMED == 0 || self.terms_off || w == 0 {
            return plain;
        }
        // (A value term's parts are value terms: `unknown_result` builds them.)
        let Some(t) = self.src.value_term(u) else {
            return plain;
        };
        if let Some(p) = self.packed_part(t, w, i)
            && !matches!(self.src.terms.node(p), Node::Const(_))
        {
            return self.src.termed(plain, Some(p));
        }
        let shift = (i as u64).saturating_mul(u64::from(w));
        if let Node::Param { off, size, .. } = self.src.terms.node(t)
            && w % 8 == 0
            && shift + u64::from(w) <= u64::from(size) * 8
        {
            let term = self.src.terms.param(off + (shift / 8) as u32, w / 8, false);
            return self.src.termed(plain, term);
        }
        // What `shr.b64` and `cvt.u{w}.u64` would give (`cvt`'s source type operand is
        // `(bits << 1) | signed`).
        let shifted = if shift == 0 {
            u
        } else {
            self.unknown_result(OpKind::Shr, 64, false, &[(0, u), (shift, 0)])
        };
        self.unknown_result(OpKind::Cvt, w, false, &[(0, shifted), (64 << 1, 0)])
    }

    /// Part `i` (`w` bits) of the term `t` when `t` is an [`OpKind::Pack`] of `w`-bit parts
    /// ([`Machine::pack_unknown`]): that part's own term.
    fn packed_part(&self, t: TermId, w: u8, i: usize) -> Option<TermId> {
        let Node::Op {
            op: OpKind::Pack,
            bits,
            args,
            ..
        } = self.src.terms.node(t)
        else {
            return None;
        };
        let parts = args.iter().flatten().count();
        if parts == 0 || usize::from(bits) != usize::from(w) * parts {
            return None;
        }
        args.get(i).copied().flatten()
    }

    /// Part `i` (`w` bits) of the register `(v, u)`, as `mov.b64 {lo, hi}, s` writes it: the
    /// part's value, or its sources and term ([`Machine::part_unknown`]); a part of an
    /// unknown register is known when the register was packed with that part known.
    pub(super) fn unpack_part(&mut self, (v, u): (u64, u32), w: u8, i: usize) -> (u64, u32) {
        if u == 0 {
            return (super::alu::part(v, w, i), 0);
        }
        if !self.terms_off
            && let Some(t) = self.src.value_term(u)
            && let Some(p) = self.packed_part(t, w, i)
            && let Node::Const(c) = self.src.terms.node(p)
        {
            return (super::alu::mask(c, w), 0);
        }
        (super::alu::part(v, w, i), self.part_unknown(u, w, i))
    }

    /// Whether an operand's term holds a `selp` that later choices may decide
    /// ([`Machine::resolve_selps`]): a result built on it is not cached, since the same
    /// operands give a simpler term once the path has decided more (the cached one, built
    /// before, kept Triton's flattened loop counter nested until it lost its term).
    fn resolvable(&self, args: &[(u64, u32)]) -> bool {
        self.cfg.choices.is_some()
            && args.iter().any(|&(_, u)| {
                u & TERMED != 0 && self.src.term(u).is_some_and(|t| self.src.terms.has_selp(t))
            })
    }

    /// [`Machine::unknown_setp`]'s answer, computed.
    #[allow(clippy::too_many_arguments)]
    fn setp_ids(
        &mut self,
        cmp: Cmp,
        ty: crate::ir::Ty,
        bop: BoolOp,
        a: (u64, u32),
        b: (u64, u32),
        c: (u64, u32),
    ) -> (u32, u32) {
        let u = self.src.union(a.1, b.1);
        let u = self.src.union(u, c.1);
        if (a.1 | b.1 | c.1) & TERMED == 0
            || ty.kind == Kind::F && !(matches!(ty.bits, 32 | 64) && cmp.is_float())
        {
            return (u, u);
        }
        let term = (|| {
            let ta = self.operand_term(a)?;
            let tb = self.operand_term(b)?;
            let p = if ty.kind == Kind::F {
                // A floating-point comparison: the operand with a term first, so that a
                // comparison with a constant constrains it (`Terms::constraint`).
                let (x, y, cmp) = if a.1 == 0 && b.1 != 0 {
                    (tb, ta, mirrored(cmp))
                } else {
                    (ta, tb, cmp)
                };
                self.src.terms.op(
                    OpKind::FCmp(cmp, ty.bits),
                    1,
                    false,
                    [Some(x), Some(y), None],
                )?
            } else {
                let (r, signed) = rel(cmp, ty.signed())?;
                self.src.terms.cmp(r, signed, ty.bits, ta, tb)?
            };
            let np = self.src.terms.not(p)?;
            let k = match bop {
                BoolOp::None => return Some((p, np)),
                BoolOp::And => OpKind::BoolAnd,
                BoolOp::Or => OpKind::BoolOr,
                BoolOp::Xor => OpKind::BoolXor,
            };
            let tc = self.operand_term(c)?;
            let p2 = self.src.terms.op(k, 1, false, [Some(p), Some(tc), None])?;
            let q2 = self.src.terms.op(k, 1, false, [Some(np), Some(tc), None])?;
            Some((p2, q2))
        })();
        match term {
            Some((p, q)) => (self.src.termed(u, Some(p)), self.src.termed(u, Some(q))),
            None => (u, u),
        }
    }

    /// [`Machine::unknown_setp`] for the fast path's integer `setp` without a combiner.
    #[cold]
    pub(super) fn unknown_fast_setp(
        &mut self,
        cmp: Cmp,
        bits: u8,
        signed: bool,
        a: (u64, u32),
        b: (u64, u32),
    ) -> (u32, u32) {
        let kind = if signed { Kind::S } else { Kind::U };
        let ty = crate::ir::Ty { bits, kind };
        self.unknown_setp(cmp, ty, BoolOp::None, a, b, (0, 0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `b mirrored(cmp) a` holds exactly when `a cmp b` does (the term of a float comparison
    /// with its constant first is built mirrored), for every comparison and pairs of
    /// boundary patterns at both widths (`alu::float_boundary_patterns`); integer
    /// comparisons too.
    #[test]
    fn a_mirrored_comparison_swaps_its_operands() {
        use super::super::alu::{compare, compare_float, float_boundary_patterns};
        for (w, pats) in float_boundary_patterns() {
            for cmp in Cmp::ALL {
                for &a in &pats {
                    for &b in &pats {
                        if cmp.is_float() {
                            assert_eq!(
                                compare_float(cmp, w, a, b),
                                compare_float(mirrored(cmp), w, b, a),
                                "{cmp:?} {a:#x} {b:#x}"
                            );
                        }
                        for signed in [false, true] {
                            assert_eq!(
                                compare(cmp, w, signed, a, b),
                                compare(mirrored(cmp), w, signed, b, a),
                                "{cmp:?} {a:#x} {b:#x}"
                            );
                        }
                    }
                }
            }
        }
    }
}
