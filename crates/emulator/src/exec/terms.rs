//! Symbolic terms over kernel-parameter bytes (`docs/semantics.md` §6.5).
//!
//! An unknown value loaded from kernel-parameter bytes that no `--param` fixed carries a
//! *term*: the parameter field it came from, and the integer arithmetic applied to it since.
//! A global input (`exec::inputs`) is a field of the same window, past the parameters.
//! Terms are hash-consed (the same computation in two threads is the same [`TermId`]), an
//! addition of a constant is kept in the normal form `base + k` (so `kt - n > 0` and
//! `n < kt` constrain the same base term), and every other operation is an opaque node over
//! its operands. A term larger than [`MAX_SIZE`] nodes is not built: the value stays a plain
//! unknown, never a wrong term.
//!
//! Terms are only read where a branch on an unknown predicate decides synchronization
//! (the `choices` module): values that only feed addresses and data are never asked for.

use rustc_hash::FxHashMap;

/// Terms with more nodes than this (counted as a tree) are not built (the value is a plain
/// unknown). The CUTLASS pingpong and cooperative consumers advance their pipeline state by
/// the k-tile count and fold it modulo the stage count with a multiply-shift: the mbarrier
/// wait parity's term grew past the earlier cap of 48 and the parity became a plain unknown.
pub(crate) const MAX_SIZE: u32 = 400;

/// Terms one emulation builds at most; once the arena holds this many, a new term is not
/// built (the value is a plain unknown, as for a term over [`MAX_SIZE`]). A loop of termed
/// pointer arithmetic builds a node per thread and trip: hostile input must not grow the
/// arena without bound (about 100 bytes per node, [`Terms::footprint`]).
pub(crate) const MAX_NODES: usize = 1 << 20;

/// The bit of a [`TermId`] that is an atom ([`Terms::atom`]), not an arena index (the arena
/// never holds 2^31 nodes: [`MAX_NODES`] + [`MAX_DATA_NODES`]).
const ATOM_ID: u32 = 1 << 31;

/// Value-term nodes (the terms over atoms; atoms are not nodes) one emulation builds at most
/// (`crate::Config::value_terms`); past it a value stays a plain unknown.
pub(crate) const MAX_DATA_NODES: usize = 1 << 20;

/// A hash-consed term.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct TermId(pub u32);

/// A comparison of two integers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Rel {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl OpKind {
    /// The operation's name in a report.
    pub(crate) fn name(self) -> &'static str {
        match self {
            OpKind::Add => "add",
            OpKind::Sub => "sub",
            OpKind::Mul => "mul",
            OpKind::MulHi => "mul.hi",
            OpKind::MulWide => "mul.wide",
            OpKind::Div => "div",
            OpKind::Rem => "rem",
            OpKind::Shl => "shl",
            OpKind::Shr => "shr",
            OpKind::Min => "min",
            OpKind::Max => "max",
            OpKind::And => "and",
            OpKind::Or => "or",
            OpKind::Xor => "xor",
            OpKind::Not => "not",
            OpKind::Neg => "neg",
            OpKind::Abs => "abs",
            OpKind::Cnot => "cnot",
            OpKind::Selp => "selp",
            OpKind::Cvt => "cvt",
            OpKind::BoolAnd => "and.pred",
            OpKind::BoolOr => "or.pred",
            OpKind::BoolXor => "xor.pred",
            OpKind::Other(name) => name,
            OpKind::Inst(_) => "instruction",
            OpKind::Pack => "pack",
            OpKind::FCmp(cmp, _) => fcmp_name(cmp),
            OpKind::FArith(op, ..) => op.name(),
            OpKind::FCvt { .. } => "cvt",
        }
    }
}

impl Rel {
    /// The relation's name in a report (`lt`, …).
    pub(crate) fn name(self) -> &'static str {
        match self {
            Rel::Eq => "eq",
            Rel::Ne => "ne",
            Rel::Lt => "lt",
            Rel::Le => "le",
            Rel::Gt => "gt",
            Rel::Ge => "ge",
        }
    }

    /// `a rel b` ⇔ `b rel.flip() a`.
    fn flip(self) -> Rel {
        match self {
            Rel::Eq => Rel::Eq,
            Rel::Ne => Rel::Ne,
            Rel::Lt => Rel::Gt,
            Rel::Le => Rel::Ge,
            Rel::Gt => Rel::Lt,
            Rel::Ge => Rel::Le,
        }
    }
}

/// Opaque operations (their result is a function of their operands the emulator does not
/// reason about beyond equality of terms).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum OpKind {
    Add,
    Sub,
    Mul,
    MulHi,
    MulWide,
    Div,
    Rem,
    Shl,
    Shr,
    Min,
    Max,
    And,
    Or,
    Xor,
    Not,
    Neg,
    Abs,
    Cnot,
    Selp,
    /// Integer conversion to `bits` (sign-extending when signed).
    Cvt,
    /// `setp` with a boolean combiner.
    BoolAnd,
    BoolOr,
    BoolXor,
    /// Anything else, by its opcode's name.
    Other(&'static str),
    /// The instruction at this index (a floating-point or other operation the emulator does
    /// not compute, whose result is a function of its operands alone): built only for value
    /// terms ([`Node::Atom`]); never evaluated.
    Inst(u32),
    /// A register assembled from its operands, the first the low bits (`mov.b64 d, {lo,
    /// hi}`, each part `bits / parts` wide): a value term when a part is one.
    Pack,
    /// A floating-point `setp` comparison of two `width`-bit (32 or 64) operands, read
    /// from their low bits as IEEE 754 values: a predicate (the node's `bits` is 1).
    FCmp(crate::ir::Cmp, u8),
    /// Floating-point arithmetic of `bits`-wide IEEE operands ([`super::float::farith`]),
    /// with `.ftz` and `.sat`.
    FArith(crate::ir::FOp, bool, bool),
    /// A `cvt` to or from a float ([`super::float::cvt_float`]).
    FCvt {
        dst: crate::ir::Ty,
        src: crate::ir::Ty,
        round: u8,
        sat: bool,
        ftz: bool,
    },
}

impl OpKind {
    /// Whether a node of this operation is a value term whatever its operands
    /// ([`Terms::has_atom`]): the operations only a run with value terms builds.
    fn data(self) -> bool {
        matches!(self, OpKind::Inst(_))
    }

    /// Whether swapping the first two operands never changes the result of a `bits`-wide
    /// operation: integer `add`, `mul`, `min`, `max` and the bitwise ones; the float
    /// operations [`crate::ir::FOp::commutes`] says.
    fn commutes(self, bits: u8) -> bool {
        if let OpKind::FArith(op, ..) = self {
            return op.commutes(bits);
        }
        matches!(
            self,
            OpKind::Add
                | OpKind::Mul
                | OpKind::MulHi
                | OpKind::MulWide
                | OpKind::Min
                | OpKind::Max
                | OpKind::And
                | OpKind::Or
                | OpKind::Xor
                | OpKind::BoolAnd
                | OpKind::BoolOr
                | OpKind::BoolXor
        )
    }
}

/// A term node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Node {
    /// `size` bytes at offset `off` of the kernel-parameter window, little-endian, zero- or
    /// sign-extended to 64 bits (from `exec::inputs::INPUT_BASE` on: a global input).
    Param { off: u32, size: u8, signed: bool },
    /// A constant.
    Const(u64),
    /// `(base + k) mod 2^bits` (`base` is never itself an `Affine`).
    Affine { base: TermId, k: u64, bits: u8 },
    /// An opaque operation at width `bits`.
    Op {
        op: OpKind,
        bits: u8,
        signed: bool,
        args: [Option<TermId>; 3],
    },
    /// `(step · Y) mod 2^bits`, where `Y ≥ 0` is the number of periods an induction over a
    /// loop's trip count has added (`docs/induction.md` §2): the one variable of the
    /// abstract runs, never a kernel input.
    Period { step: u64, bits: u8 },
    /// The predicate `a rel b` on `bits`-wide operands (1 or 0).
    Cmp {
        rel: Rel,
        signed: bool,
        bits: u8,
        a: TermId,
        b: TermId,
    },
    /// The negation of a predicate.
    Not(TermId),
    /// The `bits`-wide value one event of the run produced (the `id`-th): the bytes one
    /// shared store of an unknown value without a term wrote, for every load that reads
    /// them whole (`crate::Config::value_terms`). Not a kernel input: a term containing an
    /// atom only tells equal values apart for the race stage, never decides a branch
    /// ([`Terms::has_atom`]).
    Atom { id: u32, bits: u8 },
}

/// Inclusive intervals of unsigned values, sorted and disjoint.
pub(crate) type Set = Vec<(u64, u64)>;

/// The largest value of a `bits`-wide integer.
pub(crate) fn top(bits: u8) -> u64 {
    if bits >= 64 {
        u64::MAX
    } else {
        (1u64 << bits) - 1
    }
}

/// `a ∩ b`.
pub fn intersect(a: &[(u64, u64)], b: &[(u64, u64)]) -> Set {
    let mut out = Vec::new();
    for &(alo, ahi) in a {
        for &(blo, bhi) in b {
            let lo = alo.max(blo);
            let hi = ahi.min(bhi);
            if lo <= hi {
                out.push((lo, hi));
            }
        }
    }
    normalize(out)
}

/// `a ∪ b`.
pub fn union(a: &[(u64, u64)], b: &[(u64, u64)]) -> Set {
    let mut out: Set = a.iter().chain(b).copied().collect();
    out.sort_unstable();
    normalize(out)
}

/// Sorts and merges overlapping or adjacent intervals.
fn normalize(mut v: Set) -> Set {
    v.sort_unstable();
    let mut out: Set = Vec::with_capacity(v.len());
    for (lo, hi) in v {
        if let Some(last) = out.last_mut()
            && (lo <= last.1 || lo == last.1.wrapping_add(1) && last.1 != u64::MAX)
        {
            last.1 = last.1.max(hi);
            continue;
        }
        out.push((lo, hi));
    }
    out
}

/// `a \ b`.
pub fn difference(a: &[(u64, u64)], b: &[(u64, u64)]) -> Set {
    intersect(a, &complement(b, 64))
}

/// `{0..=top(bits)} \ s`.
pub(crate) fn complement(s: &[(u64, u64)], bits: u8) -> Set {
    let mut out = Vec::new();
    let mut next: Option<u64> = Some(0);
    for &(lo, hi) in s {
        if let Some(n) = next
            && lo > n
        {
            out.push((n, lo - 1));
        }
        next = hi.checked_add(1);
    }
    if let Some(n) = next
        && n <= top(bits)
    {
        out.push((n, top(bits)));
    }
    out
}

/// The set `{ y : (y + k) mod 2^bits ∈ s }`.
fn shift_back(s: &[(u64, u64)], k: u64, bits: u8) -> Set {
    let m = u128::from(top(bits)) + 1;
    let k = u128::from(k) % m;
    let mut out = Vec::new();
    for &(lo, hi) in s {
        // y = z - k mod m, for z in lo..=hi.
        let a = (u128::from(lo) + m - k) % m;
        let b = (u128::from(hi) + m - k) % m;
        if a <= b {
            out.push((a as u64, b as u64));
        } else {
            out.push((a as u64, (m - 1) as u64));
            out.push((0, b as u64));
        }
    }
    normalize(out)
}

/// The name of a floating-point comparison in a report.
fn fcmp_name(cmp: crate::ir::Cmp) -> &'static str {
    use crate::ir::Cmp;
    match cmp {
        Cmp::Eq => "eq.f",
        Cmp::Ne => "ne.f",
        Cmp::Lt => "lt.f",
        Cmp::Le => "le.f",
        Cmp::Gt => "gt.f",
        Cmp::Ge => "ge.f",
        Cmp::Equ => "equ.f",
        Cmp::Neu => "neu.f",
        Cmp::Ltu => "ltu.f",
        Cmp::Leu => "leu.f",
        Cmp::Gtu => "gtu.f",
        Cmp::Geu => "geu.f",
        Cmp::Num => "num.f",
        Cmp::Nan => "nan.f",
        Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs => "cmp.f",
    }
}

/// The `w`-bit patterns `z` (`w` 32 or 64) for which the floating-point comparison `z cmp c`
/// holds, `z` and `c` read as IEEE 754 values exactly as the emulator compares them
/// (`alu::compare_float`: NaN is unordered, `-0 == +0`, subnormals by their value), as
/// unsigned intervals; `None` for another width or an integer-only comparison.
fn ftruth(cmp: crate::ir::Cmp, w: u8, c: u64) -> Option<Set> {
    use crate::ir::Cmp;
    let (sign, inf) = match w {
        32 => (1u64 << 31, 0x7f80_0000u64),
        64 => (1u64 << 63, 0x7ff0_0000_0000_0000u64),
        _ => return None,
    };
    let max = top(w);
    // The NaN patterns; the others are ordered by the key `±magnitude` (the magnitude bits
    // grow with the value's magnitude; -0 and +0 both have key 0).
    let nan: Set = vec![(inf + 1, sign - 1), ((sign | inf) + 1, max)];
    let is_nan = |z: u64| z & !sign > inf;
    let key = |z: u64| {
        let m = i128::from(z & !sign);
        if z & sign != 0 { -m } else { m }
    };
    let (kmin, kmax) = (-i128::from(inf), i128::from(inf));
    // The non-NaN patterns whose key lies in `lo..=hi`.
    let keys = |lo: i128, hi: i128| -> Set {
        let (lo, hi) = (lo.max(kmin), hi.min(kmax));
        let mut out = Vec::new();
        if lo > hi {
            return out;
        }
        if hi >= 0 {
            out.push((lo.max(0) as u64, hi as u64));
        }
        if lo <= 0 {
            let (mlo, mhi) = ((-hi.min(0)) as u64, (-lo) as u64);
            out.push((sign | mlo, sign | mhi));
        }
        normalize(out)
    };
    let c = c & max;
    let ordered = keys(kmin, kmax);
    if is_nan(c) {
        return Some(match cmp {
            Cmp::Equ | Cmp::Neu | Cmp::Ltu | Cmp::Leu | Cmp::Gtu | Cmp::Geu | Cmp::Nan => {
                vec![(0, max)]
            }
            Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs => return None,
            _ => Vec::new(),
        });
    }
    let k = key(c);
    let set = match cmp {
        Cmp::Eq | Cmp::Equ => keys(k, k),
        Cmp::Ne | Cmp::Neu => union(&keys(kmin, k - 1), &keys(k + 1, kmax)),
        Cmp::Lt | Cmp::Ltu => keys(kmin, k - 1),
        Cmp::Le | Cmp::Leu => keys(kmin, k),
        Cmp::Gt | Cmp::Gtu => keys(k + 1, kmax),
        Cmp::Ge | Cmp::Geu => keys(k, kmax),
        Cmp::Num => ordered,
        Cmp::Nan => Vec::new(),
        Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs => return None,
    };
    let unordered = matches!(
        cmp,
        Cmp::Equ | Cmp::Neu | Cmp::Ltu | Cmp::Leu | Cmp::Gtu | Cmp::Geu | Cmp::Nan
    );
    Some(if unordered { union(&set, &nan) } else { set })
}

/// The `bits`-wide values `z` with `z rel c` (signed or unsigned), as unsigned intervals.
fn truth(rel: Rel, signed: bool, bits: u8, c: u64) -> Set {
    let max = top(bits);
    let c = c & max;
    if !signed {
        return match rel {
            Rel::Eq => vec![(c, c)],
            Rel::Ne => complement(&[(c, c)], bits),
            Rel::Lt => {
                if c == 0 {
                    Vec::new()
                } else {
                    vec![(0, c - 1)]
                }
            }
            Rel::Le => vec![(0, c)],
            Rel::Gt => {
                if c == max {
                    Vec::new()
                } else {
                    vec![(c + 1, max)]
                }
            }
            Rel::Ge => vec![(c, max)],
        };
    }
    // Signed: work on i128 in [min, maxs], then map negatives to their unsigned bits.
    let bits_i = u32::from(bits.clamp(1, 64));
    let smin = -(1i128 << (bits_i - 1));
    let smax = (1i128 << (bits_i - 1)) - 1;
    let sc = if c > (smax as u64) {
        i128::from(c) - (1i128 << bits_i)
    } else {
        i128::from(c)
    };
    let ranges: Vec<(i128, i128)> = match rel {
        Rel::Eq => vec![(sc, sc)],
        Rel::Ne => vec![(smin, sc - 1), (sc + 1, smax)],
        Rel::Lt => vec![(smin, sc - 1)],
        Rel::Le => vec![(smin, sc)],
        Rel::Gt => vec![(sc + 1, smax)],
        Rel::Ge => vec![(sc, smax)],
    };
    let m = 1i128 << bits_i;
    let mut out = Vec::new();
    for (lo, hi) in ranges {
        if lo > hi {
            continue;
        }
        let (lo, hi) = (lo.max(smin), hi.min(smax));
        if hi < 0 {
            out.push(((lo + m) as u64, (hi + m) as u64));
        } else if lo >= 0 {
            out.push((lo as u64, hi as u64));
        } else {
            out.push((0, hi as u64));
            out.push(((lo + m) as u64, (m - 1) as u64));
        }
    }
    normalize(out)
}

/// What a predicate says about one variable: the variable (a base term read at `bits`
/// bits: its value is `base mod 2^bits`) and the values for which the predicate is true.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Constraint {
    pub base: TermId,
    pub bits: u8,
    pub when_true: Set,
}

/// The sub-terms a node reads.
fn children(n: Node) -> [Option<TermId>; 3] {
    match n {
        Node::Param { .. } | Node::Const(_) | Node::Period { .. } | Node::Atom { .. } => [None; 3],
        Node::Affine { base, .. } => [Some(base), None, None],
        Node::Op { args, .. } => args,
        Node::Cmp { a, b, .. } => [Some(a), Some(b), None],
        Node::Not(a) => [Some(a), None, None],
    }
}

/// The hash-consed term arena.
#[derive(Clone, Default)]
pub(crate) struct Terms {
    nodes: Vec<Node>,
    sizes: Vec<u32>,
    /// Per node: whether it is or contains a `selp` ([`Terms::has_selp`]).
    selps: Vec<bool>,
    /// Per node: whether it is or contains an [`Node::Atom`] ([`Terms::has_atom`]).
    atoms: Vec<bool>,
    /// Nodes with an atom: counted against [`MAX_DATA_NODES`], not [`MAX_NODES`], so that
    /// value terms never keep a term of the inputs from being built.
    data_nodes: usize,
    /// The next atom's id.
    next_atom: u32,
    /// A value term was not built for want of room ([`MAX_DATA_NODES`], the atom ids).
    values_full: bool,
    index: FxHashMap<Node, TermId>,
}

impl Terms {
    /// Bytes of the arena (what `--max-memory` counts): each node, its size and its index
    /// entry (key, id and control byte, at the index's capacity).
    pub(crate) fn footprint(&self) -> u64 {
        let entry = std::mem::size_of::<(Node, TermId)>() + 1;
        (self.nodes.capacity() * std::mem::size_of::<Node>()
            + self.sizes.capacity() * 4
            + self.selps.capacity()
            + self.atoms.capacity()
            + self.index.capacity() * entry) as u64
    }

    pub(crate) fn node(&self, t: TermId) -> Node {
        if t.0 & ATOM_ID != 0 {
            let x = t.0 & !ATOM_ID;
            return Node::Atom {
                id: x >> 4,
                bits: ((x & 15) * 8) as u8,
            };
        }
        self.nodes[t.0 as usize]
    }

    pub(crate) fn size(&self, t: TermId) -> u32 {
        if t.0 & ATOM_ID != 0 {
            return 1;
        }
        self.sizes[t.0 as usize]
    }

    #[cfg(test)]
    fn dbg_len(&self) -> usize {
        self.nodes.len()
    }

    /// Whether a value term was not built for want of room.
    pub(crate) fn values_ran_out(&self) -> bool {
        self.values_full
    }

    /// Whether `t` is or contains a `selp` (whose predicate a path's choices may decide).
    pub(crate) fn has_selp(&self, t: TermId) -> bool {
        self.selps.get(t.0 as usize).copied().unwrap_or(false)
    }

    /// Whether `t` is or contains an atom: a value of the run, not a function of the
    /// kernel's inputs (such a term is for the race stage's value tags only).
    pub(crate) fn has_atom(&self, t: TermId) -> bool {
        t.0 & ATOM_ID != 0 || self.atoms.get(t.0 as usize).copied().unwrap_or(false)
    }

    /// A fresh atom of `bits` bits ([`Node::Atom`], at most 64, a multiple of 8). Atoms are
    /// no arena nodes: their ids carry the atom (`ATOM_ID`, the count, the bytes), so a
    /// kernel that stores unknown values trip after trip (an atom per store) does not use up
    /// [`MAX_DATA_NODES`].
    pub(crate) fn atom(&mut self, bits: u8) -> Option<TermId> {
        let bytes = u32::from(bits / 8);
        if bits % 8 != 0 || !(1..=8).contains(&bytes) {
            return None;
        }
        let id = self.next_atom;
        if id >= 1 << 27 {
            self.values_full = true;
            return None;
        }
        self.next_atom = id + 1;
        Some(TermId(ATOM_ID | (id << 4) | bytes))
    }

    fn intern(&mut self, n: Node) -> Option<TermId> {
        if let Some(&t) = self.index.get(&n) {
            return Some(t);
        }
        // Size, `selp` and atom flags from the children (each flag: the node's own, or any
        // child's).
        let kids = children(n);
        let kids = kids.iter().flatten();
        let size = kids
            .clone()
            .map(|&k| self.size(k))
            .fold(1u32, u32::saturating_add);
        let selp = matches!(
            n,
            Node::Op {
                op: OpKind::Selp,
                ..
            }
        ) || kids.clone().any(|&k| self.has_selp(k));
        let atom = match n {
            Node::Atom { .. } => true,
            Node::Op { op, .. } if op.data() => true,
            _ => kids.clone().any(|&k| self.has_atom(k)),
        };
        let full = if atom {
            self.data_nodes >= MAX_DATA_NODES
        } else {
            self.nodes.len() - self.data_nodes >= MAX_NODES
        };
        // A value term is never evaluated or walked (only compared), so its size is not
        // capped: an accumulator's term grows by a node per loop trip (Liger's RMSNorm
        // backward sums a row block's dW over 49 and more trips), and [`MAX_DATA_NODES`]
        // bounds them all.
        if size > MAX_SIZE && !atom || full {
            self.values_full |= atom && full;
            return None;
        }
        let id = TermId(u32::try_from(self.nodes.len()).ok()?);
        self.nodes.push(n);
        self.sizes.push(size);
        self.selps.push(selp);
        self.atoms.push(atom);
        self.data_nodes += usize::from(atom);
        self.index.insert(n, id);
        Some(id)
    }

    pub(crate) fn param(&mut self, off: u32, size: u8, signed: bool) -> Option<TermId> {
        self.intern(Node::Param { off, size, signed })
    }

    pub(crate) fn constant(&mut self, v: u64) -> Option<TermId> {
        self.intern(Node::Const(v))
    }

    /// `(step · Y) mod 2^bits` ([`Node::Period`]).
    pub(crate) fn period(&mut self, step: u64, bits: u8) -> Option<TermId> {
        self.intern(Node::Period {
            step: step & top(bits),
            bits,
        })
    }

    /// Whether `t` reads the period count `Y` ([`Node::Period`]).
    pub(crate) fn periodic(&self, t: TermId) -> bool {
        match self.node(t) {
            Node::Period { .. } => true,
            Node::Param { .. } | Node::Const(_) | Node::Atom { .. } => false,
            Node::Affine { base, .. } => self.periodic(base),
            Node::Op { args, .. } => args.iter().flatten().any(|&a| self.periodic(a)),
            Node::Cmp { a, b, .. } => self.periodic(a) || self.periodic(b),
            Node::Not(a) => self.periodic(a),
        }
    }

    /// `(a + k) mod 2^bits`, normalised.
    pub(crate) fn add_const(&mut self, a: TermId, k: u64, bits: u8) -> Option<TermId> {
        let k = k & top(bits);
        match self.node(a) {
            Node::Const(c) => self.constant(c.wrapping_add(k) & top(bits)),
            Node::Affine {
                base,
                k: k0,
                bits: b0,
            } if b0 == bits => {
                let k = k0.wrapping_add(k) & top(bits);
                if k == 0 {
                    // `base mod 2^bits`: keep the width (a comparison at `bits` reads the
                    // same bits of `base`).
                    self.intern(Node::Affine { base, k: 0, bits })
                } else {
                    self.intern(Node::Affine { base, k, bits })
                }
            }
            _ => self.intern(Node::Affine { base: a, k, bits }),
        }
    }

    /// An opaque operation, folded where its value does not depend on a variable operand:
    /// every operand constant, a `selp` of one value or on a constant predicate, a product,
    /// `and` or shift of the constant 0, a predicate `or` with 1 or `and` with 0. (CUTLASS's
    /// `FastDivmod` of block 0, `selp(0, mul.hi(0, m) >> s, d == 1)`, kept three fields in a
    /// tile-validity predicate that only reads two, and the search for its inputs ran out.)
    pub(crate) fn op(
        &mut self,
        op: OpKind,
        bits: u8,
        signed: bool,
        mut args: [Option<TermId>; 3],
    ) -> Option<TermId> {
        // A commutative operation on a value term takes its operands in term order (a
        // butterfly reduction's lanes combine the same two values in opposite orders). Terms
        // of the inputs alone keep their order (the exploration's terms are as before).
        if op.commutes(bits)
            && let [Some(a), Some(b), _] = args
            && b < a
            && (self.has_atom(a) || self.has_atom(b))
        {
            args.swap(0, 1);
        }
        let node = Node::Op {
            op,
            bits,
            signed,
            args,
        };
        let konst = |t: Option<TermId>| match t.map(|t| self.node(t)) {
            Some(Node::Const(c)) => Some(c),
            _ => None,
        };
        let (ca, cb, cc) = (konst(args[0]), konst(args[1]), konst(args[2]));
        let variable = args
            .iter()
            .flatten()
            .any(|&a| !matches!(self.node(a), Node::Const(_)));
        if !variable && args.iter().any(Option::is_some) {
            let mut memo = FxHashMap::default();
            // Interned only to be evaluated: every operand is a constant.
            let t = self.intern(node)?;
            if let Some(v) = self.eval(t, &FxHashMap::default(), &mut memo) {
                return self.constant(v);
            }
            return Some(t);
        }
        match op {
            OpKind::Selp if args[0].is_some() && args[0] == args[1] => return args[0],
            OpKind::Selp if cc.is_some() => {
                return if cc.is_some_and(|c| c & 1 != 0) {
                    args[0]
                } else {
                    args[1]
                };
            }
            OpKind::Mul | OpKind::MulHi | OpKind::MulWide | OpKind::And
                if ca == Some(0) || cb == Some(0) =>
            {
                return self.constant(0);
            }
            OpKind::Shl | OpKind::Shr if ca == Some(0) => return self.constant(0),
            OpKind::BoolOr if ca.is_some_and(|c| c & 1 != 0) || cb.is_some_and(|c| c & 1 != 0) => {
                return self.constant(1);
            }
            OpKind::BoolAnd if ca.is_some_and(|c| c & 1 == 0) || cb.is_some_and(|c| c & 1 == 0) => {
                return self.constant(0);
            }
            _ => {}
        }
        self.intern(node)
    }

    /// `a rel b` on `bits`-wide operands; a constant operand goes right.
    pub(crate) fn cmp(
        &mut self,
        rel: Rel,
        signed: bool,
        bits: u8,
        a: TermId,
        b: TermId,
    ) -> Option<TermId> {
        let (rel, a, b) = if matches!(self.node(a), Node::Const(_)) {
            (rel.flip(), b, a)
        } else {
            (rel, a, b)
        };
        let node = Node::Cmp {
            rel,
            signed,
            bits,
            a,
            b,
        };
        if let (Node::Const(_), Node::Const(_)) = (self.node(a), self.node(b)) {
            // Two constants (a term resolved under a path's choices): a constant predicate.
            let t = self.intern(node)?;
            let v = self.eval(t, &FxHashMap::default(), &mut FxHashMap::default())?;
            return self.constant(v);
        }
        self.intern(node)
    }

    /// `!p`.
    pub(crate) fn not(&mut self, p: TermId) -> Option<TermId> {
        match self.node(p) {
            Node::Not(q) => Some(q),
            _ => self.intern(Node::Not(p)),
        }
    }

    /// What predicate `p` constrains: one base term and the values for which `p` holds.
    /// A predicate that is not a comparison of a term with a constant constrains itself (a
    /// 1-bit variable, true for 1).
    pub(crate) fn constraint(&self, p: TermId) -> Constraint {
        // Negations: `Not` nodes, and `not.pred` (a 1-bit bitwise not) of a predicate.
        let (mut q, mut negated) = (p, false);
        loop {
            match self.node(q) {
                Node::Not(r) => q = r,
                Node::Op {
                    op: OpKind::Not,
                    bits: 1,
                    args: [Some(r), ..],
                    ..
                } if self.natural(r).0 == 1 => q = r,
                _ => break,
            }
            negated = !negated;
        }
        let mut c = self.positive(q);
        if negated {
            c.when_true = complement(&c.when_true, c.bits);
        }
        c
    }

    fn positive(&self, p: TermId) -> Constraint {
        let opaque = Constraint {
            base: p,
            bits: 1,
            when_true: vec![(1, 1)],
        };
        // A floating-point comparison with a constant: the operand's bit patterns on which
        // it holds.
        if let Node::Op {
            op: OpKind::FCmp(cmp, w),
            args: [Some(a), Some(b), _],
            ..
        } = self.node(p)
        {
            let set = match self.node(b) {
                Node::Const(c) => ftruth(cmp, w, c),
                _ => None,
            };
            return match set {
                Some(when_true) => Constraint {
                    base: a,
                    bits: w,
                    when_true,
                },
                None => opaque,
            };
        }
        let Node::Cmp {
            rel,
            signed,
            bits,
            a,
            b,
        } = self.node(p)
        else {
            return opaque;
        };
        let Node::Const(c) = self.node(b) else {
            return opaque;
        };
        // A comparison that one predicate decides (`(selp(0, 1, blocks <= t) & 255) != 0`,
        // a flag stored in a byte and tested): that predicate's constraint, so one loop's
        // trips constrain one variable.
        if let Some((q, t1, t0)) = self.decided_by_predicate(p) {
            let mut inner = self.constraint(q);
            let all = vec![(0, top(inner.bits))];
            inner.when_true = match (t1, t0) {
                (true, true) => all,
                (false, false) => Vec::new(),
                (true, false) => inner.when_true,
                (false, true) => complement(&inner.when_true, inner.bits),
            };
            return inner;
        }
        let (base, k) = match self.node(a) {
            Node::Affine { base, k, bits: ab } if ab >= bits => (base, k),
            _ => (a, 0),
        };
        let z = truth(rel, signed, bits, c);
        Constraint {
            base,
            bits,
            when_true: shift_back(&z, k, bits),
        }
    }
}

impl Terms {
    /// When the predicate `p` is a function of one 1-bit predicate `q` that a `selp` in it
    /// tests, and of constants only: `q` and `p`'s values for `q` true and false.
    fn decided_by_predicate(&self, p: TermId) -> Option<(TermId, bool, bool)> {
        let mut subs = Vec::new();
        self.subterms(p, &mut subs);
        let q = subs.iter().find_map(|&t| match self.node(t) {
            Node::Op {
                op: OpKind::Selp,
                args: [_, _, Some(q)],
                ..
            } if self.natural(q).0 == 1 => Some(q),
            _ => None,
        })?;
        let at = |v: u64| {
            let known = FxHashMap::from_iter([(q, v)]);
            let mut memo = FxHashMap::default();
            self.eval(p, &known, &mut memo)
        };
        Some((q, at(1)? & 1 != 0, at(0)? & 1 != 0))
    }

    /// `t` and its sub-terms, outermost first.
    pub(crate) fn subterms(&self, t: TermId, out: &mut Vec<TermId>) {
        if out.contains(&t) {
            return;
        }
        out.push(t);
        match self.node(t) {
            Node::Param { .. } | Node::Const(_) | Node::Period { .. } | Node::Atom { .. } => {}
            Node::Affine { base, .. } => self.subterms(base, out),
            Node::Op { args, .. } => {
                for a in args.into_iter().flatten() {
                    self.subterms(a, out);
                }
            }
            Node::Cmp { a, b, .. } => {
                self.subterms(a, out);
                self.subterms(b, out);
            }
            Node::Not(a) => self.subterms(a, out),
        }
    }

    /// The parameter fields (`Param` nodes) `t` reads, in order of first appearance.
    pub(crate) fn params(&self, t: TermId, out: &mut Vec<TermId>) {
        match self.node(t) {
            Node::Param { .. } => {
                if !out.contains(&t) {
                    out.push(t);
                }
            }
            Node::Const(_) | Node::Period { .. } | Node::Atom { .. } => {}
            Node::Affine { base, .. } => self.params(base, out),
            Node::Op { args, .. } => {
                for a in args.into_iter().flatten() {
                    self.params(a, out);
                }
            }
            Node::Cmp { a, b, .. } => {
                self.params(a, out);
                self.params(b, out);
            }
            Node::Not(a) => self.params(a, out),
        }
    }

    /// The width and extension of `t`'s value as a register holds it: `(w, signed)` means
    /// the value is a `w`-bit quantity, zero-extended (sign-extended when `signed`).
    pub(crate) fn natural(&self, t: TermId) -> (u8, bool) {
        match self.node(t) {
            Node::Param { size, signed, .. } => (size.saturating_mul(8), signed),
            Node::Const(_) => (64, false),
            Node::Affine { bits, .. } | Node::Period { bits, .. } | Node::Atom { bits, .. } => {
                (bits, false)
            }
            Node::Op { op, bits, .. } => match op {
                OpKind::MulWide => (bits.saturating_mul(2).min(64), false),
                OpKind::BoolAnd | OpKind::BoolOr | OpKind::BoolXor => (1, false),
                OpKind::Selp => (64, false),
                _ => (bits, false),
            },
            Node::Cmp { .. } | Node::Not(_) => (1, false),
        }
    }

    /// Whether `t`'s value, as a register holds it, fits in `bits` bits: a store of that
    /// many bytes keeps the value whole (a predicate turned into 0 or 1 by `selp` is 64 bits
    /// wide by [`Terms::natural`], but fits in a byte).
    /// Walks at most 64 nodes (a `selp` chain an accumulator built trip after trip can be
    /// deeper): past them it answers no, which keeps no term.
    pub(crate) fn fits(&self, t: TermId, bits: usize) -> bool {
        self.fits_within(t, bits, &mut 64)
    }

    /// [`Terms::fits`], visiting at most `budget` more nodes.
    fn fits_within(&self, t: TermId, bits: usize, budget: &mut u32) -> bool {
        let Some(left) = budget.checked_sub(1) else {
            return false;
        };
        *budget = left;
        let limit = if bits >= 64 {
            u64::MAX
        } else {
            (1u64 << bits) - 1
        };
        match self.node(t) {
            Node::Const(c) => c <= limit,
            Node::Op {
                op: OpKind::Selp,
                args: [Some(a), Some(b), _],
                ..
            } => self.fits_within(a, bits, budget) && self.fits_within(b, bits, budget),
            _ => usize::from(self.natural(t).0) <= bits,
        }
    }

    /// The value of `t` when the variables `known` gives values for determine it (`known`
    /// maps a base term to its value as a register holds it). Memoised in `memo`.
    pub(crate) fn eval(
        &self,
        t: TermId,
        known: &FxHashMap<TermId, u64>,
        memo: &mut FxHashMap<TermId, Option<u64>>,
    ) -> Option<u64> {
        if let Some(&v) = known.get(&t) {
            return Some(v);
        }
        if let Some(&v) = memo.get(&t) {
            return v;
        }
        let node = self.node(t);
        let v = apply(
            node,
            args(node).map(|x| x.and_then(|x| self.eval(x, known, memo))),
        );
        memo.insert(t, v);
        v
    }

    /// The nodes of `roots` for evaluation over and over at different values of their
    /// fields ([`Compiled::eval_roots`]).
    pub(crate) fn compile(&self, roots: &[TermId]) -> Compiled {
        let mut index: FxHashMap<TermId, u32> = FxHashMap::default();
        let mut nodes = Vec::new();
        let mut order = Vec::with_capacity(roots.len());
        // Depth first, a node after its arguments (`true`: its arguments are placed).
        let mut stack: Vec<(TermId, bool)> = Vec::new();
        for &root in roots {
            stack.push((root, false));
            while let Some((t, placed)) = stack.pop() {
                if index.contains_key(&t) {
                    continue;
                }
                let node = self.node(t);
                let of = args(node);
                if !placed {
                    stack.push((t, true));
                    stack.extend(of.into_iter().rev().flatten().map(|x| (x, false)));
                    continue;
                }
                // Terms are hash-consed bottom-up (an argument is older than its node), so
                // every argument is placed by now.
                let at = of.map(|x| x.and_then(|x| index.get(&x).copied()).unwrap_or(u32::MAX));
                index.insert(t, nodes.len() as u32);
                nodes.push((t, node, at));
            }
            order.push(index.get(&root).copied().unwrap_or(u32::MAX));
        }
        Compiled {
            nodes,
            roots: order,
        }
    }
}

/// The argument terms of `node`, in the order [`apply`] takes their values.
fn args(node: Node) -> [Option<TermId>; 3] {
    match node {
        Node::Affine { base, .. } => [Some(base), None, None],
        Node::Not(p) => [Some(p), None, None],
        Node::Cmp { a, b, .. } => [Some(a), Some(b), None],
        Node::Op { args, .. } => args,
        Node::Param { .. } | Node::Const(_) | Node::Period { .. } | Node::Atom { .. } => [None; 3],
    }
}

/// The value of `node` given its arguments' values ([`args`]; `None`: not determined),
/// `None` when they do not determine it. A field (`Param`), a period and an atom are
/// determined by no argument: what [`Terms::eval`]'s `known` gives them is looked up before.
fn apply(node: Node, [a, b, c]: [Option<u64>; 3]) -> Option<u64> {
    use super::alu::{Alu, alu, compare, cvt, div_rem, mask, mul, sx};
    use crate::ir::{Cmp, Kind, MulMode, Ty};
    match node {
        Node::Const(c) => Some(c),
        Node::Param { .. } | Node::Period { .. } | Node::Atom { .. } => None,
        Node::Affine { k, bits, .. } => a.map(|b| mask(b.wrapping_add(k), bits)),
        Node::Not(_) => a.map(|p| u64::from(p & 1 == 0)),
        Node::Cmp {
            rel, signed, bits, ..
        } => match (a, b) {
            (Some(a), Some(b)) => {
                let cmp = match rel {
                    Rel::Eq => Cmp::Eq,
                    Rel::Ne => Cmp::Ne,
                    Rel::Lt => Cmp::Lt,
                    Rel::Le => Cmp::Le,
                    Rel::Gt => Cmp::Gt,
                    Rel::Ge => Cmp::Ge,
                };
                Some(u64::from(compare(cmp, bits, signed, a, b)))
            }
            _ => None,
        },
        Node::Op {
            op,
            bits,
            signed,
            args,
        } => {
            let two = |k: Alu| Some(mask(alu(k, bits, signed, a?, b?), bits));
            match op {
                OpKind::Add => two(Alu::Add),
                OpKind::Sub => two(Alu::Sub),
                OpKind::And => two(Alu::And),
                OpKind::Or => two(Alu::Or),
                OpKind::Xor => two(Alu::Xor),
                OpKind::Shl => two(Alu::Shl),
                OpKind::Shr => two(Alu::Shr),
                OpKind::Min => two(Alu::Min),
                OpKind::Max => two(Alu::Max),
                OpKind::Mul => two(Alu::MulLo),
                OpKind::MulHi => Some(mask(mul(a?, b?, bits, signed, MulMode::Hi), bits)),
                OpKind::MulWide => {
                    let w = bits.saturating_mul(2).min(64);
                    Some(mask(mul(a?, b?, bits, signed, MulMode::Wide), w))
                }
                OpKind::Div | OpKind::Rem => {
                    div_rem(a?, b?, bits, signed, op == OpKind::Rem).map(|v| mask(v, bits))
                }
                OpKind::Abs => Some(mask(sx(a?, bits).wrapping_abs() as u64, bits)),
                OpKind::Neg => Some(mask(sx(a?, bits).wrapping_neg() as u64, bits)),
                OpKind::Not => Some(mask(!a?, bits)),
                OpKind::Cnot => Some(u64::from(mask(a?, bits) == 0)),
                OpKind::Selp => Some(if c? & 1 != 0 { a? } else { b? }),
                OpKind::BoolAnd => Some((a? & 1) & (b? & 1)),
                OpKind::BoolOr => Some((a? & 1) | (b? & 1)),
                OpKind::BoolXor => Some((a? & 1) ^ (b? & 1)),
                OpKind::Cvt => {
                    let from = b?;
                    let kind = |s: bool| if s { Kind::S } else { Kind::U };
                    let dst = Ty {
                        bits,
                        kind: kind(signed),
                    };
                    let src = Ty {
                        bits: (from >> 1) as u8,
                        kind: kind(from & 1 != 0),
                    };
                    cvt(a?, dst, src, 0, false, false)
                }
                OpKind::Pack => {
                    let parts = args.iter().flatten().count() as u8;
                    let w = bits.checked_div(parts)?;
                    [a, b, c]
                        .iter()
                        .take(usize::from(parts))
                        .enumerate()
                        .try_fold(0u64, |acc, (i, x)| {
                            let shift = u32::from(w).checked_mul(i as u32)?;
                            Some(acc | mask((*x)?, w).checked_shl(shift)?)
                        })
                        .map(|v| mask(v, bits))
                }
                OpKind::FCmp(cmp, w) => Some(u64::from(super::alu::compare_float(cmp, w, a?, b?))),
                OpKind::FArith(f, ftz, sat) => {
                    let n = f.sources();
                    let b = if n >= 2 { b? } else { 0 };
                    let c = if n >= 3 { c? } else { 0 };
                    super::float::farith(f, bits, ftz, sat, a?, b, c)
                }
                OpKind::FCvt {
                    dst,
                    src,
                    round,
                    sat,
                    ftz,
                } => super::float::cvt_float(a?, dst, src, round, sat, ftz),
                OpKind::Other(_) | OpKind::Inst(_) => None,
            }
        }
    }
}

/// Terms compiled for repeated evaluation ([`Terms::compile`]): [`Terms::eval`] of each root
/// with the same `known` for all, without its maps. The searches for inputs that follow a
/// path evaluate the same few terms at thousands of field values.
pub(crate) struct Compiled {
    /// Every node the roots reach, once, each after its arguments: the term, its node and
    /// its arguments' places in this list (`u32::MAX`: none).
    nodes: Vec<(TermId, Node, [u32; 3])>,
    /// The place of each root, in the order given.
    roots: Vec<u32>,
}

impl Compiled {
    /// Evaluates the roots in order, each once the nodes it reaches are (the nodes of the
    /// first roots come first), and hands each value to `accept` (`None`: not
    /// determined), stopping at the first it rejects; returns whether it accepted all.
    /// `known` gives the fields' values, as [`Terms::eval`]'s (whose keys are fields:
    /// `Param` nodes); `vals` is scratch space.
    pub(crate) fn eval_roots(
        &self,
        known: &[(TermId, u64)],
        vals: &mut Vec<Option<u64>>,
        mut accept: impl FnMut(usize, Option<u64>) -> bool,
    ) -> bool {
        vals.clear();
        for (k, &root) in self.roots.iter().enumerate() {
            while vals.len() <= root as usize {
                let Some(&(t, node, at)) = self.nodes.get(vals.len()) else {
                    break;
                };
                let v = match node {
                    Node::Param { .. } => known.iter().find(|(x, _)| *x == t).map(|&(_, v)| v),
                    _ => apply(node, at.map(|i| vals.get(i as usize).copied().flatten())),
                };
                vals.push(v);
            }
            if !accept(k, vals.get(root as usize).copied().flatten()) {
                return false;
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    proptest::proptest! {
        /// [`Compiled::eval_roots`] gives every root the value [`Terms::eval`] gives it, on random
        /// term graphs over three fields (one of them left without a value), a period and
        /// an atom, with every kind of argument list.
        #[test]
        fn compiled_terms_evaluate_as_eval_does(
            steps in proptest::collection::vec(
                (0u8..12, 0usize..64, 0usize..64, 0usize..64, 0u64..300, proptest::bool::ANY),
                1..40,
            ),
            roots in proptest::collection::vec(0usize..64, 1..6),
            x in 0u64..1000,
            y in proptest::num::u64::ANY,
        ) {
            let mut t = Terms::default();
            let f0 = t.param(0, 4, false).unwrap();
            let f1 = t.param(8, 8, true).unwrap();
            let unset = t.param(16, 2, false).unwrap();
            let mut pool = vec![f0, f1, unset, t.period(3, 32).unwrap(), t.atom(32).unwrap()];
            for (kind, a, b, c, k, signed) in steps {
                let pick = |i: usize| pool[i % pool.len()];
                let (a, b, c) = (pick(a), pick(b), pick(c));
                let ops = [
                    OpKind::Add, OpKind::Sub, OpKind::Mul, OpKind::Div, OpKind::Rem,
                    OpKind::Shl, OpKind::Shr, OpKind::Min, OpKind::Max, OpKind::Xor,
                ];
                let new = match kind {
                    0 => t.add_const(a, k, 32),
                    1 => t.constant(k),
                    2 => t.cmp(Rel::Lt, signed, 32, a, b),
                    3 => t.not(a),
                    4 => t.op(OpKind::Selp, 32, false, [Some(a), Some(b), Some(c)]),
                    5 => t.op(OpKind::Pack, 32, false, [Some(a), Some(b), None]),
                    k => t.op(ops[(k as usize + a.0 as usize) % ops.len()], 32, signed, [Some(a), Some(b), None]),
                };
                if let Some(new) = new {
                    pool.push(new);
                }
            }
            let roots: Vec<TermId> = roots.iter().map(|&r| pool[r % pool.len()]).collect();
            let known = [(f0, x), (f1, y)];
            let map: FxHashMap<TermId, u64> = known.iter().copied().collect();
            let compiled = t.compile(&roots);
            let mut vals = Vec::new();
            let mut got = Vec::new();
            let all = compiled.eval_roots(&known, &mut vals, |k, v| {
                got.push((k, v));
                true
            });
            proptest::prop_assert!(all);
            let want: Vec<_> = roots
                .iter()
                .map(|&r| t.eval(r, &map, &mut FxHashMap::default()))
                .enumerate()
                .collect();
            proptest::prop_assert_eq!(got, want);
            // Stopped at the first root rejected.
            let mut seen = 0;
            let stop = roots.len() / 2;
            let all = compiled.eval_roots(&known, &mut vals, |k, _| {
                seen += 1;
                k != stop
            });
            proptest::prop_assert!(!all);
            proptest::prop_assert_eq!(seen, stop + 1);
        }
    }

    /// Atoms are no arena nodes; terms over them are value terms, which are not capped in
    /// size (an accumulator's term grows a node per trip) and never disturb terms of the
    /// inputs; a `selp` chain deeper than `fits` walks does not fit (no recursion).
    #[test]
    fn value_terms_grow_past_max_size_and_leave_the_arena_to_the_inputs() {
        let mut t = Terms::default();
        let a = t.atom(32).unwrap();
        assert_eq!(t.dbg_len(), 0);
        assert!(t.has_atom(a));
        assert_eq!(t.node(a), Node::Atom { id: 0, bits: 32 });
        assert_ne!(t.atom(32), Some(a));
        let mut acc = a;
        for _ in 0..2 * MAX_SIZE {
            let x = t.atom(32).unwrap();
            acc = t
                .op(OpKind::Inst(7), 32, false, [Some(acc), Some(x), None])
                .unwrap();
        }
        assert!(t.has_atom(acc) && t.size(acc) > MAX_SIZE);
        // Counted as a tree, a term that reuses itself doubles per step: the size saturates.
        let mut twice = a;
        for _ in 0..40 {
            twice = t
                .op(OpKind::Inst(8), 32, false, [Some(twice), Some(twice), None])
                .unwrap();
        }
        assert_eq!(t.size(twice), u32::MAX);
        let p = t.param(0, 4, false).unwrap();
        assert!(!t.has_atom(p));
        // Commutative operands over a value term come in term order.
        let b = t.atom(32).unwrap();
        assert_eq!(
            t.op(OpKind::Add, 32, false, [Some(b), Some(a), None]),
            t.op(OpKind::Add, 32, false, [Some(a), Some(b), None])
        );
        // A deep `selp` chain: `fits` answers no without recursing.
        let q = t.param(4, 1, false).unwrap();
        let mut chain = a;
        for _ in 0..100_000 {
            let x = t.atom(32).unwrap();
            chain = t
                .op(OpKind::Selp, 64, false, [Some(x), Some(chain), Some(q)])
                .unwrap();
        }
        assert!(!t.fits(chain, 32));
        assert!(t.fits(a, 32) && !t.fits(a, 16));
    }

    #[test]
    fn the_arena_stops_growing_at_max_nodes_and_keeps_what_it_has() {
        let mut t = Terms::default();
        let p = t.param(0, 4, false).unwrap();
        for k in 1..MAX_NODES as u64 {
            assert!(t.add_const(p, k, 64).is_some(), "node {k}");
        }
        // Full: a new term is a plain unknown, an existing one is still found.
        assert_eq!(t.add_const(p, MAX_NODES as u64, 64), None);
        assert_eq!(t.param(0, 4, false), Some(p));
        assert!(t.add_const(p, 7, 64).is_some());
        assert!(t.footprint() >= (MAX_NODES * std::mem::size_of::<Node>()) as u64);
    }

    #[test]
    fn affine_forms_share_their_base() {
        let mut t = Terms::default();
        let kt = t.param(12, 4, false).unwrap();
        let n = t.constant(3).unwrap();
        // kt - 3 > 0 (signed) and 3 < kt (signed) constrain kt alike.
        let minus = t.add_const(kt, 3u64.wrapping_neg(), 32).unwrap();
        let zero = t.constant(0).unwrap();
        let p = t.cmp(Rel::Gt, true, 32, minus, zero).unwrap();
        let q = t.cmp(Rel::Lt, true, 32, n, kt).unwrap();
        let (cp, cq) = (t.constraint(p), t.constraint(q));
        assert_eq!(cp.base, kt);
        assert_eq!(cq.base, kt);
        // Same truth set except where kt - 3 wraps (kt in [INT_MIN, INT_MIN + 2]).
        assert_eq!(cq.when_true, vec![(4, 0x7fff_ffff)]);
        assert_eq!(cp.when_true, vec![(4, 0x8000_0002)]);
        // Hash-consing: the same computation is the same term.
        assert_eq!(t.add_const(kt, 3u64.wrapping_neg(), 32), Some(minus));
    }

    #[test]
    fn unsigned_wraparound_is_exact() {
        let mut t = Terms::default();
        let x = t.param(0, 4, false).unwrap();
        let m1 = t.add_const(x, u64::MAX, 32).unwrap();
        let zero = t.constant(0).unwrap();
        // x - 1 > 0 (unsigned) ⇔ x ≠ 1 (x - 1 wraps at 0).
        let p = t.cmp(Rel::Gt, false, 32, m1, zero).unwrap();
        assert_eq!(t.constraint(p).when_true, vec![(0, 0), (2, 0xffff_ffff)]);
        let np = t.not(p).unwrap();
        assert_eq!(t.constraint(np).when_true, vec![(1, 1)]);
    }

    #[test]
    fn a_flag_a_predicate_decides_constrains_the_predicates_variable() {
        let mut t = Terms::default();
        let blocks = t.param(1656, 8, false).unwrap();
        let three = t.constant(3).unwrap();
        let le = t.cmp(Rel::Le, false, 64, blocks, three).unwrap();
        let (zero, one) = (t.constant(0).unwrap(), t.constant(1).unwrap());
        // flag = blocks <= 3 ? 0 : 1, kept in a byte, tested against 0.
        let flag = t
            .op(OpKind::Selp, 64, false, [Some(zero), Some(one), Some(le)])
            .unwrap();
        let k255 = t.constant(255).unwrap();
        let byte = t
            .op(OpKind::And, 16, false, [Some(flag), Some(k255), None])
            .unwrap();
        let ne = t.cmp(Rel::Ne, false, 16, byte, zero).unwrap();
        let c = t.constraint(ne);
        assert_eq!(c.base, blocks);
        assert_eq!(c.bits, 64);
        assert_eq!(c.when_true, vec![(4, u64::MAX)]);
        // Its negation, and a flag whose two values compare alike (no constraint on blocks).
        let eq = t.cmp(Rel::Eq, false, 16, byte, zero).unwrap();
        assert_eq!(t.constraint(eq).when_true, vec![(0, 3)]);
        let two = t.constant(2).unwrap();
        let lt = t.cmp(Rel::Lt, false, 16, byte, two).unwrap();
        assert_eq!(t.constraint(lt).when_true, vec![(0, u64::MAX)]);
    }

    #[test]
    fn sets() {
        assert_eq!(complement(&[(0, 3), (10, 15)], 4), vec![(4, 9)]);
        assert_eq!(intersect(&[(0, 10)], &[(5, 20), (30, 40)]), vec![(5, 10)]);
        assert_eq!(union(&[(0, 3)], &[(4, 9)]), vec![(0, 9)]);
        assert_eq!(complement(&[], 64), vec![(0, u64::MAX)]);
    }

    #[test]
    fn the_size_cap_refuses_large_terms() {
        let mut t = Terms::default();
        let mut x = t.param(0, 4, false).unwrap();
        let mut built = 0;
        for _ in 0..100 {
            match t.op(OpKind::Mul, 32, false, [Some(x), Some(x), None]) {
                Some(y) => {
                    x = y;
                    built += 1;
                }
                None => break,
            }
        }
        assert!(built < 100);
    }

    /// The bit patterns a floating-point comparison with a constant holds on
    /// ([`ftruth`]) are exactly those the concrete comparison (`alu::compare_float`) says
    /// true for, at both widths, for every comparison and the patterns around each boundary
    /// (`alu::float_boundary_patterns`), each also as the constant; and a comparison term
    /// with a constant
    /// constrains the parameter, through `not.pred` negations too.
    #[test]
    fn float_comparisons_constrain_bit_patterns_as_the_emulator_compares() {
        use crate::ir::Cmp;
        for (w, pats) in super::super::alu::float_boundary_patterns() {
            for &c in &pats {
                for cmp in Cmp::ALL.into_iter().filter(|c| c.is_float()) {
                    let set = ftruth(cmp, w, c).expect("a float comparison");
                    for &z in &pats {
                        let inside = set.iter().any(|&(lo, hi)| lo <= z && z <= hi);
                        assert_eq!(
                            inside,
                            super::super::alu::compare_float(cmp, w, z, c),
                            "{cmp:?} w{w} z={z:#x} c={c:#x} {set:x?}"
                        );
                    }
                }
            }
        }
        assert_eq!(ftruth(Cmp::Lo, 32, 0), None);
        assert_eq!(ftruth(Cmp::Eq, 16, 0), None);

        let mut t = Terms::default();
        let beta = t.param(8, 4, false).unwrap();
        let zero = t.constant(0).unwrap();
        let eq = t
            .op(
                OpKind::FCmp(Cmp::Eq, 32),
                1,
                false,
                [Some(beta), Some(zero), None],
            )
            .unwrap();
        let c = t.constraint(eq);
        assert_eq!((c.base, c.bits), (beta, 32));
        assert_eq!(c.when_true, vec![(0, 0), (1 << 31, 1 << 31)]);
        let ne = t.op(OpKind::Not, 1, false, [Some(eq), None, None]).unwrap();
        let c = t.constraint(ne);
        assert_eq!((c.base, c.bits), (beta, 32));
        assert_eq!(
            c.when_true,
            vec![(1, (1 << 31) - 1), ((1 << 31) + 1, u64::from(u32::MAX))]
        );
        let known = FxHashMap::from_iter([(beta, 0x8000_0000)]);
        assert_eq!(t.eval(eq, &known, &mut FxHashMap::default()), Some(1));
    }
}
