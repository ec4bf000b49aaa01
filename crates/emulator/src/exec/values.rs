//! Register values: reads, writes, special registers and the interned sets of
//! [`ValueSource`]s an unknown value carries.

use super::Machine;
use super::terms::{TermId, Terms};

/// Source sets larger than this are truncated (the report names the first few inputs),
/// [`SHARED_POINTER`] kept.
const MAX_SOURCES: usize = 8;

/// The source that marks an unknown value computed from a generic address in the shared
/// window (a known one with an unknown offset added, or `cvta` of an unknown shared
/// address): a generic access through it may touch shared memory, so its address must be
/// known ([`Machine::points_into_shared`]).
pub(super) const SHARED_POINTER: ValueSource =
    ValueSource::Other("a generic pointer into shared memory");

use crate::ValueSource;
use crate::ir::{Inst, Opnd, RegId, Sreg};

/// Lanes per warp, as an index stride of the register files.
pub(super) const LANES: usize = WARP_SIZE as usize;
use rustc_hash::FxHashMap;
use std::collections::hash_map::Entry;
use std::sync::Arc;
use weft_program::{InstId, WARP_SIZE};

/// Ids with this bit set are *termed*: a source set plus a symbolic term
/// ([`super::terms`]). Every operation that derives a new value ([`Sources::union`]) drops
/// the term; only the code that computes a result's term attaches one ([`Sources::termed`]).
pub(super) const TERMED: u32 = 1 << 31;

/// A source set as [`Sources::index`] keys it: by its hash, computed once when the set is
/// interned. The map hashes the key's 8 bytes, so neither a lookup nor the map's growth
/// hashes the sources again (a parameter source hashes its name's text; hashing each set
/// once to look it up, again to insert it and again at every growth was most of interning).
/// Keys with equal hashes compare their sets.
#[derive(Clone)]
struct SetKey {
    hash: u64,
    set: Arc<[ValueSource]>,
}

impl std::hash::Hash for SetKey {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_u64(self.hash);
    }
}

impl PartialEq for SetKey {
    fn eq(&self, other: &Self) -> bool {
        self.hash == other.hash && self.set == other.set
    }
}

impl Eq for SetKey {}

/// Interned sets of [`ValueSource`]s; id 0 is the empty set (a known value).
#[derive(Clone)]
pub(super) struct Sources {
    /// The sets by id, shared with their keys in `index`.
    sets: Vec<Arc<[ValueSource]>>,
    index: FxHashMap<SetKey, u32>,
    unions: FxHashMap<(u32, u32), u32>,
    /// A direct-mapped cache of [`Self::unions`] (`(a, b, union)`, `a < b`; empty: `a ==
    /// 0`): arithmetic on values loaded from global memory (attention kernels' softmax)
    /// unions the same few pairs of sets over and over.
    union_cache: Vec<(u32, u32, u32)>,
    /// Termed ids (`TERMED | k`): the plain set id and the term of entry `k`.
    termed: Vec<(u32, TermId)>,
    /// The entry `k` of a term of the arena's nodes, `k + 1` at the term's index (0: none):
    /// one per computed unknown result, where a hash lookup (and the map's growth) was a
    /// visible cost. Other terms (atoms, whose ids are not node indices) are in
    /// `termed_index`.
    termed_dense: Vec<u32>,
    termed_index: FxHashMap<TermId, u32>,
    /// The term arena.
    pub(super) terms: Terms,
    /// A direct-mapped cache of [`Machine::unknown_result`]: a loop recomputes the same
    /// unknown results from the same operand ids trip after trip, and one probe here
    /// replaces the source-set unions and the term interning (several hash lookups).
    pub(super) results: Vec<(ResultKey, (u32, u32))>,
    /// Singleton source sets by their source ([`Sources::single`] without a vector).
    singles: FxHashMap<ValueSource, u32>,
    /// The singleton sets of the sources named by an instruction, at
    /// [`by_instruction`]'s index (0: not yet).
    by_inst: Vec<u32>,
    /// A direct-mapped cache of the singleton sets of sources described by a static text
    /// ([`by_text`]): `(address, length, id)`, id 0 empty. Every lane of every tensor-core
    /// instruction asks for "a tensor-core result" (20 M times in FlashAttention-2's
    /// backward kernel), which hashing the text made one of the emulator's larger costs.
    by_text: Vec<(usize, usize, u32)>,
}

/// [`Sources::by_text`]'s entries (a power of two).
const TEXT_CACHE: usize = 64;

/// The static text that describes `s` (`Other`, `SpecialRegister`), as its address and
/// length: they determine the text, so equal keys name the same source (equal texts at two
/// addresses only take two entries).
fn by_text(s: &ValueSource) -> Option<(usize, usize)> {
    match *s {
        ValueSource::Other(text) | ValueSource::SpecialRegister(text) => {
            // Tagged by kind: the two kinds may describe themselves with one text.
            let kind = usize::from(matches!(s, ValueSource::Other(_)));
            Some((text.as_ptr() as usize, (text.len() << 1) | kind))
        }
        _ => None,
    }
}

/// Where [`Sources::by_inst`] keeps the singleton set of `s`, when an instruction names it.
fn by_instruction(s: &ValueSource) -> Option<usize> {
    const KINDS: usize = 8;
    let (kind, InstId(pc)) = match *s {
        ValueSource::GlobalLoad(i) => (0, i),
        ValueSource::ConstLoad(i) => (1, i),
        ValueSource::LocalUnknown(i) => (2, i),
        ValueSource::TextureLoad(i) => (3, i),
        ValueSource::Clock(i) => (4, i),
        ValueSource::Atomic(i) => (5, i),
        ValueSource::SharedUnknown(i) => (6, i),
        ValueSource::Float(i) => (7, i),
        _ => return None,
    };
    (pc as usize).checked_mul(KINDS).map(|k| k + kind)
}

/// [`Sources::union_cache`]'s entries.
const UNION_CACHE: usize = 1 << 14;

/// Terms with ids below this are found in [`Sources::termed_dense`] (node indices; an
/// atom's id has its high bits set).
const DENSE_TERMS: usize = 1 << 24;

/// [`Sources::results`]'s entries (a power of two).
const RESULT_CACHE: usize = 1 << 12;

/// What [`Machine::unknown_result`]'s answer depends on: the operation, its width and
/// signedness, and per operand its id, and its value where it is known (the value of an
/// unknown operand is never read).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) struct ResultKey {
    op: super::terms::OpKind,
    /// What else selects the operation (`setp`'s comparison, type and combiner).
    tag: u16,
    bits: u8,
    signed: bool,
    args: [(u64, u32); 3],
    n: u8,
}

impl ResultKey {
    /// The key of `op` on `args` (`None`: more operands than the cache keeps).
    #[inline]
    pub(super) fn new(
        op: super::terms::OpKind,
        tag: u16,
        bits: u8,
        signed: bool,
        args: &[(u64, u32)],
    ) -> Option<Self> {
        if args.len() > 3 {
            return None;
        }
        let mut a = [(0u64, u32::MAX); 3];
        for (k, &(v, u)) in args.iter().enumerate() {
            a[k] = (if u == 0 { v } else { 0 }, u);
        }
        Some(ResultKey {
            op,
            tag,
            bits,
            signed,
            args: a,
            n: args.len() as u8,
        })
    }

    /// A cheap mix of the operand ids and known values (the operation is compared, not
    /// hashed: one instruction's operands rarely meet another operation's).
    #[inline]
    fn slot(&self) -> usize {
        let mut h = u64::from(self.bits) ^ (u64::from(self.n) << 8) ^ (u64::from(self.tag) << 16);
        for (v, u) in self.args {
            h = (h ^ v ^ (u64::from(u) << 20)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
        (h >> 40) as usize & (RESULT_CACHE - 1)
    }
}

impl Sources {
    /// The cached result for `key`.
    #[inline]
    pub(super) fn cached(&self, key: &ResultKey) -> Option<(u32, u32)> {
        match self.results.get(key.slot()) {
            Some((k, r)) if k == key => Some(*r),
            _ => None,
        }
    }

    /// Caches `r` as the result for `key`.
    #[inline]
    pub(super) fn cache(&mut self, key: ResultKey, r: (u32, u32)) {
        if self.results.is_empty() {
            self.results = vec![(key, r); RESULT_CACHE];
        }
        let slot = key.slot();
        self.results[slot] = (key, r);
    }
}

impl Sources {
    pub(super) fn new() -> Self {
        Sources {
            sets: vec![Arc::from(Vec::new())],
            index: FxHashMap::default(),
            unions: FxHashMap::default(),
            union_cache: Vec::new(),
            termed: Vec::new(),
            termed_dense: Vec::new(),
            termed_index: FxHashMap::default(),
            terms: Terms::default(),
            results: Vec::new(),
            singles: FxHashMap::default(),
            by_inst: Vec::new(),
            by_text: vec![(0, 0, 0); TEXT_CACHE],
        }
    }

    /// The plain source-set id of `id` (its term dropped).
    #[inline(always)]
    pub(super) fn plain(&self, id: u32) -> u32 {
        if id & TERMED == 0 {
            id
        } else {
            self.termed
                .get((id & !TERMED) as usize)
                .map_or(id & !TERMED, |e| e.0)
        }
    }

    /// The term of the kernel's inputs `id` carries, if any: not a value term (one with an
    /// atom, [`Terms::has_atom`]), which only the race stage's value tags read, so that a
    /// run with value terms decides every branch as a run without them.
    #[inline]
    pub(super) fn term(&self, id: u32) -> Option<TermId> {
        self.value_term(id).filter(|&t| !self.terms.has_atom(t))
    }

    /// The term `id` carries, if any, value terms included ([`crate::Config::value_terms`]).
    #[inline]
    pub(super) fn value_term(&self, id: u32) -> Option<TermId> {
        if id & TERMED == 0 {
            None
        } else {
            self.termed.get((id & !TERMED) as usize).map(|e| e.1)
        }
    }

    /// The id of an unknown value with the sources of `id` and the term `term` (`None`:
    /// the plain id). A term always carries the sources it was first seen with.
    pub(super) fn termed(&mut self, id: u32, term: Option<TermId>) -> u32 {
        let id = self.plain(id);
        let Some(term) = term else {
            return id;
        };
        if id == 0 {
            return 0;
        }
        let dense = (term.0 as usize) < DENSE_TERMS;
        let found = if dense {
            self.termed_dense
                .get(term.0 as usize)
                .and_then(|&k| k.checked_sub(1))
        } else {
            self.termed_index.get(&term).copied()
        };
        if let Some(k) = found {
            return TERMED | k;
        }
        let k = self.termed.len() as u32;
        if k >= TERMED {
            return id;
        }
        self.termed.push((id, term));
        if dense {
            let i = term.0 as usize;
            if self.termed_dense.len() <= i {
                self.termed_dense.resize(i + 1, 0);
            }
            self.termed_dense[i] = k + 1;
        } else {
            self.termed_index.insert(term, k);
        }
        TERMED | k
    }

    /// The id of `set`, a new one when it is not interned yet. The set is hashed once
    /// ([`SetKey`]).
    pub(super) fn intern(&mut self, set: Vec<ValueSource>) -> u32 {
        let hash = {
            let mut h = rustc_hash::FxHasher::default();
            std::hash::Hash::hash(&set, &mut h);
            std::hash::Hasher::finish(&h)
        };
        let key = SetKey {
            hash,
            set: set.into(),
        };
        match self.index.entry(key) {
            Entry::Occupied(e) => *e.get(),
            Entry::Vacant(e) => {
                let id = self.sets.len() as u32;
                self.sets.push(e.key().set.clone());
                e.insert(id);
                id
            }
        }
    }

    pub(super) fn single(&mut self, s: ValueSource) -> u32 {
        // A source named by its instruction (a global load, a float operation, an unknown
        // shared load...) is found by its instruction, without hashing the source: every
        // `cp.async`, global load and float operation asks for one.
        let slot = by_instruction(&s);
        if let Some(&id) = slot.and_then(|k| self.by_inst.get(k))
            && id != 0
        {
            return id;
        }
        let text = by_text(&s);
        let entry = text.map(|(at, len)| ((at >> 3) ^ len) & (TEXT_CACHE - 1));
        if let (Some(key), Some(e)) = (text, entry)
            && let Some(&(at, len, id)) = self.by_text.get(e)
            && id != 0
            && (at, len) == key
        {
            return id;
        }
        let id = match self.singles.get(&s) {
            Some(&id) => id,
            None => {
                let id = self.intern(vec![s.clone()]);
                self.singles.insert(s, id);
                id
            }
        };
        if let Some(k) = slot {
            if self.by_inst.len() <= k {
                self.by_inst.resize(k + 1, 0);
            }
            self.by_inst[k] = id;
        }
        if let (Some((at, len)), Some(e)) = (text, entry)
            && let Some(x) = self.by_text.get_mut(e)
        {
            *x = (at, len, id);
        }
        id
    }

    #[inline]
    pub(super) fn union(&mut self, a: u32, b: u32) -> u32 {
        let (a, b) = (self.plain(a), self.plain(b));
        if a == b || b == 0 {
            return a;
        }
        if a == 0 {
            return b;
        }
        let key = (a.min(b), a.max(b));
        let slot = (key.0.wrapping_mul(0x9E37_79B9) ^ key.1) as usize % UNION_CACHE;
        if let Some(&(x, y, u)) = self.union_cache.get(slot)
            && (x, y) == key
        {
            return u;
        }
        if let Some(&u) = self.unions.get(&key) {
            self.cache_union(slot, key, u);
            return u;
        }
        let mut set = self.sets[a as usize].to_vec();
        for s in self.sets[b as usize].iter() {
            if set.len() >= MAX_SOURCES {
                // A full set still says that the value may point into shared memory.
                if *s == SHARED_POINTER
                    && !set.contains(s)
                    && let Some(last) = set.last_mut()
                {
                    *last = SHARED_POINTER;
                }
                continue;
            }
            if !set.contains(s) {
                set.push(s.clone());
            }
        }
        let u = self.intern(set);
        self.unions.insert(key, u);
        self.cache_union(slot, key, u);
        u
    }

    fn cache_union(&mut self, slot: usize, (a, b): (u32, u32), u: u32) {
        if self.union_cache.is_empty() {
            self.union_cache = vec![(0, 0, 0); UNION_CACHE];
        }
        if let Some(e) = self.union_cache.get_mut(slot) {
            *e = (a, b, u);
        }
    }

    pub(super) fn get(&self, id: u32) -> &[ValueSource] {
        let id = self.plain(id);
        self.sets.get(id as usize).map_or(&[], |s| &s[..])
    }
}

impl Machine<'_> {
    /// Thread `t`'s slot in the register files: register `r` of `t` is at
    /// `slot(t) + r.index() * LANES`. The files are laid out warp by warp, register by
    /// register, lane by lane (a structure of arrays), so that one register of a warp's
    /// lanes is contiguous for warp-level execution (`warp` module).
    #[inline(always)]
    pub(super) fn slot(&self, t: usize) -> usize {
        (t / LANES) * self.nregs * LANES + t % LANES
    }

    /// The index of register `r` of thread `t` in the register files.
    #[inline(always)]
    pub(super) fn reg_at(&self, t: usize, r: RegId) -> usize {
        self.slot(t) + r.index() * LANES
    }

    #[inline(always)]
    pub(super) fn rd(&mut self, t: usize, o: Opnd, pc: u32) -> (u64, u32) {
        match o {
            Opnd::Reg(r) => {
                let i = self.reg_at(t, r);
                (self.vals[i], self.unk[i])
            }
            Opnd::Imm(v) => (v, 0),
            _ => self.rd_other(t, o, pc),
        }
    }

    pub(super) fn rd_other(&mut self, t: usize, o: Opnd, pc: u32) -> (u64, u32) {
        match o {
            Opnd::Reg(r) => {
                let i = self.reg_at(t, r);
                (self.vals[i], self.unk[i])
            }
            Opnd::NotReg(r) => {
                let i = self.reg_at(t, r);
                let u = self.unk[i];
                let term = self.src.term(u).and_then(|p| self.src.terms.not(p));
                (!self.vals[i] & 1, self.src.termed(u, term))
            }
            Opnd::Imm(v) => (v, 0),
            Opnd::Sreg(s) => self.sreg(t, s, pc),
            Opnd::UnknownAddr(what) => (0, self.src.single(ValueSource::Other(what))),
            _ => (
                0,
                self.src
                    .single(ValueSource::Other("an operand the emulator cannot read")),
            ),
        }
    }

    #[inline]
    pub(super) fn wr(&mut self, t: usize, o: Opnd, v: u64, u: u32) {
        match o {
            Opnd::Reg(r) => {
                let i = self.reg_at(t, r);
                self.vals[i] = v;
                self.unk[i] = u;
            }
            Opnd::List(s, len) if len >= 1 => {
                if let Some(&first) = self.ir.list(s, len).first() {
                    self.wr(t, first, v, u);
                }
            }
            _ => {}
        }
    }

    /// Makes every destination register of `inst` unknown with sources `u`.
    pub(super) fn clobber(&mut self, t: usize, inst: &Inst, u: u32) {
        let Some(&dst) = self.ir.operands(inst).first() else {
            return;
        };
        match dst {
            Opnd::Reg(_) => self.wr(t, dst, 0, u),
            Opnd::List(s, len) => {
                // A `wgmma`'s 64 or more accumulators per lane: the slot once, then each
                // register's two stores.
                let slot = self.slot(t);
                for &o in self.ir.list(s, len) {
                    if let Opnd::Reg(r) = o {
                        let i = slot + r.index() * LANES;
                        self.vals[i] = 0;
                        self.unk[i] = u;
                    }
                }
            }
            _ => {}
        }
    }

    pub(super) fn sreg(&mut self, t: usize, s: Sreg, pc: u32) -> (u64, u32) {
        let lane = (t as u32) % WARP_SIZE;
        let dims = [self.shape.x, self.shape.y, self.shape.z];
        let k = |v: u32| (u64::from(v), 0u32);
        match s {
            Sreg::Tid(d) => k(self.th[t].tid[d as usize]),
            Sreg::Ntid(d) => k(dims[d as usize]),
            Sreg::Ctaid(d) => k(self.cfg.cta[d as usize]),
            Sreg::Nctaid(d) => {
                k(self.cfg.grid[d as usize].max(self.cfg.cta[d as usize].saturating_add(1)))
            }
            Sreg::Laneid => k(lane),
            Sreg::LanemaskEq => k(1 << lane),
            Sreg::LanemaskLt => k((1u32 << lane) - 1),
            Sreg::LanemaskLe => k(((1u64 << (lane + 1)) - 1) as u32),
            Sreg::LanemaskGt => k(!(((1u64 << (lane + 1)) - 1) as u32)),
            Sreg::LanemaskGe => k(!((1u32 << lane) - 1)),
            Sreg::DynSmem => match self.cfg.dynamic_shared {
                Some(d) => k(d),
                None => (
                    0,
                    self.src
                        .single(ValueSource::Other("%dynamic_smem_size (not configured)")),
                ),
            },
            Sreg::TotalSmem => match self.smem_size {
                Some(d) => k(d),
                None => (
                    0,
                    self.src.single(ValueSource::Other(
                        "%total_smem_size (dynamic size not configured)",
                    )),
                ),
            },
            Sreg::ClusterCtarank | Sreg::ClusterCtaid(_) => k(0),
            Sreg::ClusterNctarank | Sreg::ClusterNctaid(_) => {
                self.cluster_read = true;
                k(1)
            }
            Sreg::IsExplicitCluster => k(u32::from(self.ir.explicit_cluster)),
            Sreg::Clock => (0, self.src.single(ValueSource::Clock(InstId(pc)))),
            Sreg::Unknown(name) => (0, self.src.single(ValueSource::SpecialRegister(name))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The union cache returns what the union map holds, under collisions and evictions:
    /// every pair of 200 singleton sets (more pairs than cache slots), twice, against the
    /// sets themselves.
    #[test]
    fn cached_unions_are_the_unions() {
        let mut s = Sources::new();
        let ids: Vec<u32> = (0..200)
            .map(|k| s.single(ValueSource::GlobalLoad(InstId(k))))
            .collect();
        for round in 0..2 {
            for (i, &a) in ids.iter().enumerate() {
                for (j, &b) in ids.iter().enumerate() {
                    let u = s.union(a, b);
                    let mut want = vec![ValueSource::GlobalLoad(InstId(i as u32))];
                    if i != j {
                        want.push(ValueSource::GlobalLoad(InstId(j as u32)));
                    }
                    let mut got = s.get(u).to_vec();
                    got.sort_by_key(|x| format!("{x:?}"));
                    want.sort_by_key(|x| format!("{x:?}"));
                    assert_eq!(got, want, "round {round}: union of {i} and {j}");
                }
            }
        }
    }
}
