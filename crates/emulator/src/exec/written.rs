//! The values of plain shared writes, for the race stage's benign races: known bytes, or
//! one symbolic term (a function of the kernel's inputs), each tagged with an id
//! (`weft_program::Program::values`, `symbolic_values`).

use super::Machine;
use super::memory::Mem;
use super::terms::TermId;

/// Entries of [`ValueCache`] (a power of two).
const VALUE_CACHE: usize = 1024;

/// A direct-mapped cache in front of `Machine::value_ids`: each entry holds a value and its
/// id (id 0, never given out, marks an empty entry). Ids never change once given, so an
/// entry that holds a value holds the map's id for it.
#[derive(Clone)]
pub(super) struct ValueCache(Box<[(u128, u16)]>);

impl ValueCache {
    pub(super) fn new() -> Self {
        ValueCache(vec![(0, 0); VALUE_CACHE].into_boxed_slice())
    }

    /// The entry `value` would occupy: its bits folded, so that nearby small values (a
    /// warp's stores of `i + lane`) fall in distinct entries.
    #[inline(always)]
    fn slot(value: u128) -> usize {
        let x = (value as u64) ^ ((value >> 64) as u64).rotate_left(32);
        let x = x ^ (x >> 10) ^ (x >> 20) ^ (x >> 40);
        x as usize % VALUE_CACHE
    }

    /// The id of `value` if the cache holds it.
    #[inline(always)]
    fn get(&self, value: u128) -> Option<u16> {
        let (v, id) = self.0[Self::slot(value)];
        (id != 0 && v == value).then_some(id)
    }

    /// Holds `id` (not 0) for `value`, in place of what its entry held.
    fn put(&mut self, value: u128, id: u16) {
        self.0[Self::slot(value)] = (value, id);
    }
}

/// The terms of a symbolic write's elements (the unused ones `u32::MAX`) and their count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) struct TermTag([TermId; 8], u8);

impl Machine<'_> {
    /// Tags thread `t`'s last command, the plain shared write of `len` bytes at `addr` whose
    /// bytes were just stored, with the id of its value when every byte is known (at most
    /// 16 bytes, and while fewer than 65,535 distinct values were seen): the race stage
    /// tells writes of the same value (a benign race) from others by it.
    pub(super) fn tag_written_value(&mut self, t: usize, addr: u32, len: u32) {
        if len == 0 || len > 16 {
            return;
        }
        let mut value: u128 = 0;
        let mut off = 0;
        while off < len {
            let n = (len - off).min(8);
            let (v, u) = self.read_bytes(Mem::Shared, 0, (addr + off) as usize, n as usize);
            if u != 0 {
                return;
            }
            let v = if n == 8 {
                v
            } else {
                v & ((1u64 << (8 * n)) - 1)
            };
            value |= u128::from(v) << (8 * off);
            off += n;
        }
        self.tag_value(t, value);
    }

    /// Tags thread `t`'s last command, a plain shared write whose bytes are all known, with
    /// the id of `value` (its bytes, little-endian); see [`Self::tag_written_value`].
    #[inline(always)]
    pub(super) fn tag_value(&mut self, t: usize, value: u128) {
        let id = match self.value_cache.get(value) {
            Some(id) => id,
            None => {
                let Some(id) = self.value_id(value) else {
                    return;
                };
                id
            }
        };
        if let Some(c) = self.cmds[t].last_mut() {
            *c = c.with_value(id);
        }
    }

    /// The id of `value` from the map, or a fresh one (`None` past 65,535 ids), which the
    /// cache then holds: [`Self::tag_value`] when the cache misses.
    #[inline(never)]
    fn value_id(&mut self, value: u128) -> Option<u16> {
        let id = match self.value_ids.get(&value) {
            Some(&id) => id,
            None => {
                let id = self.new_value_id(value)?;
                self.value_ids.insert(value, id);
                id
            }
        };
        self.value_cache.put(value, id);
        Some(id)
    }

    /// Tags thread `t`'s last command, a plain shared write of the low `len` bytes of a
    /// register whose unknown value `u` carries a term, with the id of that term and
    /// width: a term is a function of the kernel's parameter bytes (and, with value terms,
    /// of the values one run produced, [`super::terms::Node::Atom`]) only, so two writes
    /// tagged alike store the same bytes for every input (a benign race between them).
    pub(super) fn tag_symbolic_value(&mut self, t: usize, u: u32, len: u32) {
        let Some(term) = self.src.value_term(u) else {
            return;
        };
        self.tag_symbolic_values(t, &[term], len);
    }

    /// [`Self::tag_symbolic_value`] for a vector store: element `k` of `terms` is the term
    /// (or the known value as a constant) whose low `esize` bytes element `k` writes; at
    /// most 8 elements.
    pub(super) fn tag_symbolic_values(&mut self, t: usize, terms: &[TermId], esize: u32) {
        let mut tag = [TermId(u32::MAX); 8];
        if terms.len() > tag.len() {
            return;
        }
        tag[..terms.len()].copy_from_slice(terms);
        let key = (TermTag(tag, terms.len() as u8), esize);
        let id = match self.term_value_ids.get(&key) {
            Some(&id) => id,
            None => {
                let Some(id) = self.new_value_id(0) else {
                    return;
                };
                self.term_value_ids.insert(key, id);
                id
            }
        };
        if let Some(c) = self.cmds[t].last_mut() {
            *c = c.with_value(id);
        }
    }

    /// With [`crate::Config::value_terms`]: `u`, the unknown value a plain shared store
    /// under no input-dependent guard writes to `len` bytes, with a fresh atom for those
    /// bytes when it has no term they hold whole (`Machine::write_bytes` keeps it for a
    /// load of exactly them).
    pub(super) fn stored_atom(&mut self, u: u32, len: u32) -> u32 {
        if !self.cfg.value_terms || u == 0 || len == 0 || len > 8 {
            return u;
        }
        if self
            .src
            .value_term(u)
            .is_some_and(|t| self.src.terms.fits(t, 8 * len as usize))
        {
            return u;
        }
        let atom = self.src.terms.atom((8 * len) as u8);
        self.src.termed(u, atom)
    }

    /// `u`, a shared load's value, without a value term when the load sign-extends (the
    /// register then holds more than the bytes the term names).
    pub(super) fn loaded_term(&self, u: u32, signed: bool) -> u32 {
        if signed
            && self
                .src
                .value_term(u)
                .is_some_and(|t| self.src.terms.has_atom(t))
        {
            self.src.plain(u)
        } else {
            u
        }
    }

    /// A fresh value id for `value` (`None` past 65,535 ids).
    fn new_value_id(&mut self, value: u128) -> Option<u16> {
        let Ok(id) = u16::try_from(self.values.len() + 1) else {
            if self.lockstep_used {
                // Which values got ids depends on the order they came in.
                self.reorder();
            }
            return None;
        };
        self.values.push(value);
        Some(id)
    }
}
