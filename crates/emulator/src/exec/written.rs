//! The values of plain shared writes, for the race stage's benign races: known bytes, or
//! one symbolic term (a function of the kernel's inputs), each tagged with an id
//! (`weft_program::Program::values`, `symbolic_values`).

use super::Machine;
use super::memory::Mem;

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
    pub(super) fn tag_value(&mut self, t: usize, value: u128) {
        let id = match self.value_ids.get(&value) {
            Some(&id) => id,
            None => {
                let Some(id) = self.new_value_id(value) else {
                    return;
                };
                self.value_ids.insert(value, id);
                id
            }
        };
        if let Some(c) = self.cmds[t].last_mut() {
            *c = c.with_value(id);
        }
    }

    /// Tags thread `t`'s last command, a plain shared write of the low `len` bytes of a
    /// register whose unknown value `u` carries a term, with the id of that term and
    /// width: a term is a function of the kernel's parameter bytes only, so two writes
    /// tagged alike store the same bytes for every input (a benign race between them).
    pub(super) fn tag_symbolic_value(&mut self, t: usize, u: u32, len: u32) {
        let Some(term) = self.src.term(u) else {
            return;
        };
        let id = match self.term_value_ids.get(&(term, len)) {
            Some(&id) => id,
            None => {
                let Some(id) = self.new_value_id(0) else {
                    return;
                };
                self.term_value_ids.insert((term, len), id);
                id
            }
        };
        if let Some(c) = self.cmds[t].last_mut() {
            *c = c.with_value(id);
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
