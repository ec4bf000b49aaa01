//! Sparse byte memory for the shared, local and parameter windows: a value byte and an
//! unknown-source id per byte, kept in pages allocated on first write.
//!
//! A window of `len` bytes costs one 16-byte slot per [`PAGE`] bytes until it is written; a
//! written page costs [`PAGE_BYTES`]. Bytes never written read as value 0 with the window's
//! *fill* source (uninitialized shared memory, an unset parameter, …), exactly as the dense
//! arrays this replaces did, so a 1 GiB `.shared` array or a 1 MiB `.local` array per thread
//! costs what the kernel touches, not what it declares.

use super::values::LANES;

/// Bytes per page.
pub(super) const PAGE: usize = 4096;

/// Memory of one allocated page: the value bytes and one `u32` source id per byte.
pub(super) const PAGE_BYTES: u64 = (PAGE * (1 + 4)) as u64;

/// Memory of one page slot (allocated or not).
pub(super) const SLOT_BYTES: u64 = std::mem::size_of::<Slot>() as u64;

#[derive(Clone)]
struct Page {
    bytes: [u8; PAGE],
    unk: [u32; PAGE],
}

impl Page {
    /// [`Paged::read`] of `N <= 8` bytes at `at` (inside the page).
    #[inline(always)]
    fn read_small<const N: usize>(&self, at: usize) -> (u64, Unks) {
        let mut le = [0u8; 8];
        le[..N].copy_from_slice(&self.bytes[at..at + N]);
        // `N` entries: the compiler unrolls the comparison.
        let u = &self.unk[at..at + N];
        let v = u64::from_le_bytes(le);
        if u.iter().all(|&x| x == u[0]) {
            (v, Unks::Same(u[0]))
        } else {
            (v, Unks::Mixed(u.to_vec()))
        }
    }

    /// [`Paged::read`] of `N <= 8` bytes at `at` (inside the page) whose sources are all
    /// the same: their value and that source (`None` when they differ).
    #[inline(always)]
    fn read_uniform<const N: usize>(&self, at: usize) -> Option<(u64, u32)> {
        let mut le = [0u8; 8];
        le[..N].copy_from_slice(&self.bytes[at..at + N]);
        let u = &self.unk[at..at + N];
        u.iter()
            .all(|&x| x == u[0])
            .then(|| (u64::from_le_bytes(le), u[0]))
    }

    /// [`Paged::write`] of `N <= 8` bytes at `at` (inside the page).
    #[inline(always)]
    fn write_small<const N: usize>(&mut self, at: usize, v: u64, u: u32) -> bool {
        self.bytes[at..at + N].copy_from_slice(&v.to_le_bytes()[..N]);
        self.unk[at..at + N].copy_from_slice(&[u; N]);
        true
    }
}

/// One page of the window: its bytes once written, else the source id every byte has.
#[derive(Clone)]
struct Slot {
    page: Option<Box<Page>>,
    fill: u32,
}

/// The unknown sources of the bytes read.
pub(super) enum Unks {
    /// Every byte has this source (0: known).
    Same(u32),
    /// The bytes' sources differ: one per byte.
    Mixed(Vec<u32>),
}

/// A sparse window of `len` bytes.
#[derive(Clone)]
pub(super) struct Paged {
    len: usize,
    slots: Vec<Slot>,
    /// Pages allocated so far.
    pages: usize,
}

impl Paged {
    /// A window of `len` bytes, every byte value 0 with source `fill`.
    pub(super) fn new(len: usize, fill: u32) -> Self {
        let slots = (0..len.div_ceil(PAGE))
            .map(|_| Slot { page: None, fill })
            .collect();
        Paged {
            len,
            slots,
            pages: 0,
        }
    }

    /// The window's size in bytes.
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// The memory this window holds: its slots and its allocated pages.
    pub(super) fn footprint(&self) -> u64 {
        self.slots.len() as u64 * SLOT_BYTES + self.pages as u64 * PAGE_BYTES
    }

    /// The memory a window of `len` bytes holds before anything is written.
    pub(super) fn empty_footprint(len: usize) -> u64 {
        len.div_ceil(PAGE) as u64 * SLOT_BYTES
    }

    fn in_bounds(&self, s: usize, len: usize) -> bool {
        s.checked_add(len).is_some_and(|e| e <= self.len)
    }

    /// The page holding byte `s`, allocated (filled with its slot's source) if it was not.
    fn page_mut(&mut self, s: usize) -> &mut Page {
        let slot = &mut self.slots[s / PAGE];
        if slot.page.is_none() {
            self.pages += 1;
        }
        let fill = slot.fill;
        slot.page.get_or_insert_with(|| {
            Box::new(Page {
                bytes: [0; PAGE],
                unk: [fill; PAGE],
            })
        })
    }

    /// Byte `s`: its value and source.
    fn byte(&self, s: usize) -> (u8, u32) {
        let slot = &self.slots[s / PAGE];
        match &slot.page {
            Some(p) => (p.bytes[s % PAGE], p.unk[s % PAGE]),
            None => (0, slot.fill),
        }
    }

    /// Reads `len` bytes at `s`: the little-endian value of the first 8 and the sources, or
    /// `None` outside the window.
    pub(super) fn read(&self, s: usize, len: usize) -> Option<(u64, Unks)> {
        if !self.in_bounds(s, len) {
            return None;
        }
        let (page, at) = (s / PAGE, s % PAGE);
        if at + len <= PAGE {
            let slot = &self.slots[page];
            let Some(p) = &slot.page else {
                return Some((0, Unks::Same(slot.fill)));
            };
            // The scalar widths, with fixed-size copies and comparisons.
            match len {
                1 => return Some(p.read_small::<1>(at)),
                2 => return Some(p.read_small::<2>(at)),
                4 => return Some(p.read_small::<4>(at)),
                8 => return Some(p.read_small::<8>(at)),
                _ => {}
            }
            let (b, u) = (&p.bytes[at..at + len], &p.unk[at..at + len]);
            let mut v = 0u64;
            for (i, &x) in b.iter().enumerate().take(8) {
                v |= u64::from(x) << (8 * i);
            }
            let first = u.first().copied().unwrap_or(0);
            if u.iter().all(|&x| x == first) {
                return Some((v, Unks::Same(first)));
            }
            return Some((v, Unks::Mixed(u.to_vec())));
        }
        let mut v = 0u64;
        let mut unks = Vec::with_capacity(len);
        for i in 0..len {
            let (b, u) = self.byte(s + i);
            if i < 8 {
                v |= u64::from(b) << (8 * i);
            }
            unks.push(u);
        }
        let first = unks.first().copied().unwrap_or(0);
        if unks.iter().all(|&x| x == first) {
            return Some((v, Unks::Same(first)));
        }
        Some((v, Unks::Mixed(unks)))
    }

    /// [`Paged::read`] of 1, 2, 4 or 8 bytes at `s` that lie in one page of the window and
    /// share one source: their little-endian value and that source. `None` for any other
    /// read (the caller then reads with [`Paged::read`]): the common case of a scalar load,
    /// without the general read's cases.
    #[inline(always)]
    pub(super) fn read_uniform(&self, s: usize, len: usize) -> Option<(u64, u32)> {
        let at = s % PAGE;
        if at + len > PAGE || !self.in_bounds(s, len) {
            return None;
        }
        let slot = self.slots.get(s / PAGE)?;
        let Some(p) = &slot.page else {
            return Some((0, slot.fill));
        };
        match len {
            1 => p.read_uniform::<1>(at),
            2 => p.read_uniform::<2>(at),
            4 => p.read_uniform::<4>(at),
            8 => p.read_uniform::<8>(at),
            _ => None,
        }
    }

    /// [`Paged::write`] of 1, 2, 4 or 8 bytes at `s` inside the window, inlined for an
    /// allocated page that holds them all (other writes go through [`Paged::write`], out of
    /// line: a page is built on the stack before it is boxed, 20 KiB that would otherwise
    /// deepen the frame of every caller).
    #[inline(always)]
    pub(super) fn write_small(&mut self, s: usize, len: usize, v: u64, u: u32) {
        let at = s % PAGE;
        if at + len > PAGE || !matches!(len, 1 | 2 | 4 | 8) || !self.in_bounds(s, len) {
            self.write_out_of_line(s, len, v, u);
            return;
        }
        let Some(page) = self.slots.get_mut(s / PAGE).and_then(|x| x.page.as_mut()) else {
            self.write_out_of_line(s, len, v, u);
            return;
        };
        match len {
            1 => page.write_small::<1>(at, v, u),
            2 => page.write_small::<2>(at, v, u),
            4 => page.write_small::<4>(at, v, u),
            _ => page.write_small::<8>(at, v, u),
        };
    }

    /// The page index and the offset in it of the bytes of a warp's run of accesses: lane
    /// `l` of `lanes` (not empty) accesses `len` (1, 2, 4 or 8) bytes at
    /// `first + (l - f) * len`, `f` the lowest lane of `lanes`. `None` unless every lane's
    /// bytes lie inside the window and in one page.
    #[inline(always)]
    fn run_page(&self, first: usize, len: usize, lanes: u32) -> Option<(usize, usize)> {
        if lanes == 0 || !matches!(len, 1 | 2 | 4 | 8) {
            return None;
        }
        let span = (31 - lanes.leading_zeros() - lanes.trailing_zeros()) as usize + 1;
        let end = first.checked_add(span * len)?;
        if end > self.len || first / PAGE != (end - 1) / PAGE {
            return None;
        }
        Some((first / PAGE, first % PAGE))
    }

    /// [`Paged::read_uniform`] of every lane of a warp's run of accesses (as for
    /// [`Paged::run_page`]), into `out[l]` for each lane `l` of `lanes`, when all of them
    /// lie in one page of the window and each lane's bytes share one source. Returns false
    /// otherwise (`out` is then partly written; the caller reads lane by lane).
    #[inline(always)]
    pub(super) fn read_lanes(
        &self,
        first: usize,
        len: usize,
        lanes: u32,
        out: &mut [(u64, u32); LANES],
    ) -> bool {
        let Some((page, at0)) = self.run_page(first, len, lanes) else {
            return false;
        };
        let Some(slot) = self.slots.get(page) else {
            return false;
        };
        let Some(p) = &slot.page else {
            each_lane!(lanes, |l| {
                out[l] = (0, slot.fill);
            });
            return true;
        };
        let f = lanes.trailing_zeros() as usize;
        macro_rules! each {
            ($n:literal) => {{
                let mut ok = true;
                each_lane!(lanes, |l| {
                    match p.read_uniform::<$n>(at0 + (l - f) * $n) {
                        Some(r) => out[l] = r,
                        None => ok = false,
                    }
                });
                ok
            }};
        }
        match len {
            1 => each!(1),
            2 => each!(2),
            4 => each!(4),
            _ => each!(8),
        }
    }

    /// [`Paged::write_small`] of known values (source 0) for every lane of a warp's run of
    /// accesses (as for [`Paged::run_page`]): `vals[l]` for each lane `l` of `lanes`, in lane
    /// order, when all of them lie in one page of the window that is already allocated.
    /// Returns false, having written nothing, otherwise.
    #[inline(always)]
    pub(super) fn write_lanes(
        &mut self,
        first: usize,
        len: usize,
        lanes: u32,
        vals: &[u64; LANES],
    ) -> bool {
        let Some((page, at0)) = self.run_page(first, len, lanes) else {
            return false;
        };
        let Some(p) = self.slots.get_mut(page).and_then(|x| x.page.as_mut()) else {
            return false;
        };
        let f = lanes.trailing_zeros() as usize;
        macro_rules! each {
            ($n:literal) => {
                each_lane!(lanes, |l| {
                    p.write_small::<$n>(at0 + (l - f) * $n, vals[l], 0);
                })
            };
        }
        match len {
            1 => each!(1),
            2 => each!(2),
            4 => each!(4),
            _ => each!(8),
        }
        true
    }

    /// [`Paged::write`], never inlined (see [`Paged::write_small`]).
    #[inline(never)]
    fn write_out_of_line(&mut self, s: usize, len: usize, v: u64, u: u32) {
        self.write(s, len, v, u);
    }

    /// Every byte of the window as one number: `norm` of its source id, or'ed with its
    /// value when the source is 0 (known). Untouched pages count as one entry each (their
    /// fill), so equal windows give equal lists.
    pub(super) fn canonical(&self, norm: impl Fn(u32) -> u64) -> Vec<u64> {
        let mut out = Vec::new();
        for slot in &self.slots {
            match &slot.page {
                None => {
                    out.push(u64::MAX);
                    out.push(norm(slot.fill));
                }
                Some(p) => {
                    for (&b, &u) in p.bytes.iter().zip(p.unk.iter()) {
                        out.push(if u == 0 { u64::from(b) } else { norm(u) });
                    }
                }
            }
        }
        out
    }

    /// Writes `len` bytes at `s`: the value's little-endian bytes (0 beyond the eighth), each
    /// with source `u`. Returns whether the write was inside the window.
    pub(super) fn write(&mut self, s: usize, len: usize, v: u64, u: u32) -> bool {
        if !self.in_bounds(s, len) {
            return false;
        }
        let at = s % PAGE;
        if at + len <= PAGE {
            // Within one page: find it once.
            let page = self.page_mut(s);
            match len {
                1 => return page.write_small::<1>(at, v, u),
                2 => return page.write_small::<2>(at, v, u),
                4 => return page.write_small::<4>(at, v, u),
                8 => return page.write_small::<8>(at, v, u),
                _ => {}
            }
            let le = v.to_le_bytes();
            for (i, b) in page.bytes[at..at + len].iter_mut().enumerate() {
                *b = le.get(i).copied().unwrap_or(0);
            }
            page.unk[at..at + len].fill(u);
            return true;
        }
        for i in 0..len {
            let at = s + i;
            let page = self.page_mut(at);
            page.bytes[at % PAGE] = if i < 8 { (v >> (8 * i)) as u8 } else { 0 };
            page.unk[at % PAGE] = u;
        }
        true
    }

    /// Sets the source of bytes `s..s + len` (clipped to the window) to `u`, keeping their
    /// values. Whole pages not yet written stay unallocated when `u` is unknown (their values
    /// no longer matter).
    pub(super) fn set_unk(&mut self, s: usize, len: usize, u: u32) {
        let end = s.saturating_add(len).min(self.len);
        let mut at = s;
        while at < end {
            let page = at / PAGE;
            let page_end = ((page + 1) * PAGE).min(end);
            let whole = at % PAGE == 0 && page_end - at == PAGE.min(self.len - at);
            let slot = &mut self.slots[page];
            if whole && u != 0 && slot.page.is_none() {
                slot.fill = u;
            } else {
                let p = self.page_mut(at);
                p.unk[at % PAGE..at % PAGE + (page_end - at)].fill(u);
            }
            at = page_end;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn untouched_bytes_read_the_fill_and_cost_no_page() {
        let m = Paged::new(1 << 30, 7);
        assert_eq!(m.len(), 1 << 30);
        assert!(matches!(m.read(12345, 4), Some((0, Unks::Same(7)))));
        assert!(m.read((1 << 30) - 2, 4).is_none());
        assert!(m.read(usize::MAX, 2).is_none());
        assert_eq!(m.footprint(), Paged::empty_footprint(1 << 30));
    }

    #[test]
    fn writes_allocate_pages_and_read_back_across_page_boundaries() {
        let mut m = Paged::new(3 * PAGE, 9);
        assert!(m.write(PAGE - 2, 4, 0x4433_2211, 0));
        assert_eq!(
            m.footprint(),
            Paged::empty_footprint(3 * PAGE) + 2 * PAGE_BYTES
        );
        let Some((v, Unks::Same(0))) = m.read(PAGE - 2, 4) else {
            panic!("known bytes")
        };
        assert_eq!(v, 0x4433_2211);
        let Some((v, Unks::Mixed(u))) = m.read(PAGE - 3, 4) else {
            panic!("one unknown byte")
        };
        assert_eq!(v, 0x3322_1100);
        assert_eq!(u, vec![9, 0, 0, 0]);
        assert!(!m.write(3 * PAGE - 1, 2, 0, 0));
    }

    #[test]
    fn set_unk_keeps_untouched_pages_unallocated() {
        let mut m = Paged::new(4 * PAGE + 10, 1);
        m.write(5, 1, 0xaa, 0);
        m.set_unk(0, usize::MAX, 3);
        // Page 0 was allocated: its bytes keep their values; the others only change fill.
        assert_eq!(
            m.footprint(),
            Paged::empty_footprint(4 * PAGE + 10) + PAGE_BYTES
        );
        assert!(matches!(m.read(5, 1), Some((0xaa, Unks::Same(3)))));
        assert!(matches!(m.read(4 * PAGE + 9, 1), Some((0, Unks::Same(3)))));
        m.set_unk(2 * PAGE + 1, 2, 0);
        let Some((_, Unks::Mixed(u))) = m.read(2 * PAGE, 4) else {
            panic!("mixed")
        };
        assert_eq!(u, vec![3, 0, 0, 3]);
    }
}
