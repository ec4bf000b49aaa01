//! The reorder check of lock-step passes without `--warp-sync` (`warp` module): a pass that
//! runs lanes of a warp ahead of the reference schedule is repeated lane by lane when a shared
//! access shows the order (an access after a conflicting one of a higher lane of the warp in
//! the same pass).

use super::Machine;
use weft_program::{AccessKind, Command, CommandView, WARP_SIZE};

/// Shared bytes per page of the reorder tracker.
const TRACK_PAGE: usize = 1024;

/// Bytes of one tracker page (entries and bookkeeping).
const PAGE_BYTES: usize = TRACK_PAGE * 4 + 32;

/// Per shared byte touched by a lock-step pass, for the reorder check of one warp pass: the
/// pass's epoch (high 16 bits), one more than the highest lane that wrote it (bits 8..16)
/// and that read it (bits 0..8) in that pass. Kept in pages allocated on first touch, like
/// the shared memory itself (`paged.rs`): a 1 GiB `.shared` array costs what the kernel
/// touches, not 4 bytes per declared byte.
///
/// The accesses of a pass are logged first and checked in order when the pass ends (or the
/// log is full): a pass without a write cannot have a conflict, and its reads are only
/// dropped (a read-only pass is common: consumers of a buffer).
#[derive(Clone)]
pub(super) struct Tracker {
    /// Page number → index in `pages`.
    index: rustc_hash::FxHashMap<usize, usize>,
    pages: Vec<Box<[u32; TRACK_PAGE]>>,
    /// The page number and index of the last page looked up (consecutive accesses of a
    /// warp mostly fall in one page: no hash lookup for them).
    last: (usize, usize),
    epoch: u32,
    /// This pass's accesses not checked yet, in order (at most [`LOG_MAX`]: a fixed
    /// 256 KiB at most, not charged to the memory budget).
    log: Vec<Logged>,
    /// Whether this pass has a write, logged or checked.
    wrote: bool,
    /// The highest lane (plus one) other than the cursor that logged an access in this
    /// pass (0: none).
    high: u32,
    /// Whether a full log was checked in this pass (the pages then hold part of it).
    flushed: bool,
}

/// A logged access: its bytes, one more than its lane, whether it writes; or the accesses
/// of several lanes of a warp at one instruction whose addresses step by their width
/// (`lanes` not 0: [`Machine::track_lanes`]).
#[derive(Debug, Clone, Copy)]
struct Logged {
    /// The first byte; with `lanes`, that of its lowest lane `f`, and lane `l` of the mask
    /// accesses `addr + (l - f) * len`.
    addr: u32,
    len: u32,
    /// One more than the lane (0 with `lanes`).
    lane: u32,
    write: bool,
    /// 0 for one lane's access; otherwise the lanes (bit `l`: lane `l` of the warp) whose
    /// accesses this entry stands for, checked in lane order.
    lanes: u32,
}

/// Accesses logged before they are checked.
const LOG_MAX: usize = 1 << 14;

/// The most log entries [`Tracker::check_elements`] compares pairwise.
const ELEMENT_CHECK_MAX: usize = 64;

impl Tracker {
    pub(super) fn new() -> Self {
        Tracker {
            index: Default::default(),
            pages: Vec::new(),
            last: (usize::MAX, 0),
            epoch: 0,
            log: Vec::new(),
            wrote: false,
            high: 0,
            flushed: false,
        }
    }

    /// Checks a logged access against this pass's earlier ones and records it: whether an
    /// access of a higher lane conflicts with it.
    fn check(&mut self, a: Logged) -> bool {
        let start = a.addr as usize;
        let end = start.saturating_add(a.len as usize);
        let epoch = self.epoch << 16;
        let mut conflict = false;
        let mut at = start;
        while at < end {
            let (page, offset) = (at / TRACK_PAGE, at % TRACK_PAGE);
            let upto = (end - at).min(TRACK_PAGE - offset);
            at += upto;
            let bytes = &mut self.page(page)[offset..offset + upto];
            match bytes {
                // A word whose bytes were last accessed together (the common case):
                // one update for the four.
                [b0, b1, b2, b3] if *b0 == *b1 && *b1 == *b2 && *b2 == *b3 => {
                    let (hit, e) = track_byte(*b0, epoch, a.lane, a.write);
                    conflict |= hit;
                    *b0 = e;
                    *b1 = e;
                    *b2 = e;
                    *b3 = e;
                }
                _ => {
                    for b in bytes {
                        let (hit, e) = track_byte(*b, epoch, a.lane, a.write);
                        conflict |= hit;
                        *b = e;
                    }
                }
            }
        }
        conflict
    }

    /// Checks the logged accesses in order; returns whether one conflicts.
    fn check_log(&mut self) -> bool {
        let log = std::mem::take(&mut self.log);
        let mut conflict = false;
        for &a in &log {
            if a.lanes == 0 {
                conflict |= self.check_one(a);
                continue;
            }
            // A warp's accesses at one instruction: each lane's, in lane order.
            let f = a.lanes.trailing_zeros();
            let mut m = a.lanes;
            while m != 0 {
                let l = m.trailing_zeros();
                m &= m - 1;
                conflict |= self.check_one(Logged {
                    addr: a.addr + (l - f) * a.len,
                    len: a.len,
                    lane: l + 1,
                    write: a.write,
                    lanes: 0,
                });
            }
        }
        self.log = log;
        self.log.clear();
        conflict
    }

    /// [`Tracker::check`] of one lane's access `a`.
    #[inline(always)]
    fn check_one(&mut self, a: Logged) -> bool {
        let epoch = self.epoch << 16;
        let start = a.addr as usize;
        let offset = start % TRACK_PAGE;
        // An aligned word whose bytes were last accessed together (the common case; a
        // page holds whole words): `check`'s update of the four, without its loop.
        if a.len == 4
            && offset % 4 == 0
            && let Some(word) = self.page(start / TRACK_PAGE).get_mut(offset..offset + 4)
            && let [b0, b1, b2, b3] = word
            && *b0 == *b1
            && *b1 == *b2
            && *b2 == *b3
        {
            let (hit, e) = track_byte(*b0, epoch, a.lane, a.write);
            (*b0, *b1, *b2, *b3) = (e, e, e, e);
            return hit;
        }
        self.check(a)
    }

    /// The reorder check of a whole pass's log: [`Tracker::check_log`], or, when the log
    /// holds the pass's every access and they are few, [`Tracker::check_elements`].
    fn check_pass(&mut self) -> bool {
        if !self.flushed
            && let Some(conflict) = self.check_elements()
        {
            self.log.clear();
            return conflict;
        }
        self.check_log()
    }

    /// [`Tracker::check_log`]'s answer without the byte entries, when every logged access
    /// has one width `e` and starts at an address of one remainder modulo `e` (so that two
    /// accesses share a byte exactly when they start at the same address) and the log has
    /// at most [`ELEMENT_CHECK_MAX`] entries (it compares them pairwise); `None` otherwise.
    ///
    /// Entry `i` is the lanes `m_i` at addresses `b_i + l * e` (one lane's access: a mask
    /// of one lane). A lane `k` of a later entry `j` conflicts when a higher lane `h` of `i`
    /// accessed its element, one of the two writing: `b_i + h * e = b_j + k * e`, so
    /// `h - k = (b_j - b_i) / e = q` with `1 <= q <= 31`, some `k` of `m_j` with `k + q` in
    /// `m_i`. Within one entry the lanes' elements differ.
    fn check_elements(&self) -> Option<bool> {
        if self.log.len() > ELEMENT_CHECK_MAX {
            return None;
        }
        let first = self.log.first()?;
        let e = i64::from(first.len);
        if e == 0 {
            return None;
        }
        // Each entry as (lanes, base, write): lane `l` accesses `base + l * e`.
        let entry = |a: &Logged| {
            let (m, f) = if a.lanes != 0 {
                (a.lanes, a.lanes.trailing_zeros())
            } else {
                (1 << (a.lane - 1), a.lane - 1)
            };
            (m, i64::from(a.addr) - i64::from(f) * e, a.write)
        };
        let phase = entry(first).1.rem_euclid(e);
        if self
            .log
            .iter()
            .any(|a| i64::from(a.len) != e || entry(a).1.rem_euclid(e) != phase)
        {
            return None;
        }
        for (i, a) in self.log.iter().enumerate() {
            let (mi, bi, wi) = entry(a);
            for b in &self.log[i + 1..] {
                let (mj, bj, wj) = entry(b);
                if !(wi || wj) {
                    continue;
                }
                // A multiple of `e` (one remainder): the lanes `q` apart share an element.
                let d = bj - bi;
                if d <= 0 {
                    continue;
                }
                let q = d / e;
                if q < 32 && (mi >> q) & mj != 0 {
                    return Some(true);
                }
            }
        }
        Some(false)
    }

    /// Bytes of its pages (what `--max-memory` counts).
    pub(super) fn footprint(&self) -> u64 {
        (self.pages.len() * PAGE_BYTES) as u64
    }

    /// At most the bytes of the pages an access of `len` bytes at `addr` adds.
    pub(super) fn cost(addr: u32, len: u32) -> u64 {
        let first = addr as usize / TRACK_PAGE;
        let last = (addr as usize + len as usize).div_ceil(TRACK_PAGE);
        (last.saturating_sub(first) * PAGE_BYTES) as u64
    }

    /// The entries of page `page`, allocated on first touch.
    #[inline(always)]
    fn page(&mut self, page: usize) -> &mut [u32; TRACK_PAGE] {
        if self.last.0 != page {
            let next = self.pages.len();
            let k = *self.index.entry(page).or_insert(next);
            if k == next {
                self.pages.push(Box::new([0; TRACK_PAGE]));
            }
            self.last = (page, k);
        }
        &mut self.pages[self.last.1]
    }
}

impl Machine<'_> {
    /// Starts the reorder check of a new warp pass (no lock-step in it yet).
    pub(super) fn begin_pass(&mut self) {
        self.pass_lockstep = false;
        let tr = &mut self.track;
        tr.log.clear();
        tr.wrote = false;
        tr.high = 0;
        tr.flushed = false;
        tr.epoch += 1;
        if tr.epoch > u32::from(u16::MAX) {
            tr.pages.iter_mut().for_each(|p| p.fill(0));
            tr.epoch = 1;
        }
    }

    /// Ends a warp pass: the reorder check of its logged accesses, when it has a write.
    pub(super) fn end_pass(&mut self) {
        if self.pass_lockstep && self.track.wrote && self.track.check_pass() {
            self.reorder();
        }
        self.pass_lockstep = false;
        self.track.log.clear();
        self.track.wrote = false;
    }

    /// The reorder check of a shared access `c` by thread `t` in a pass with lock-step: an
    /// access after a conflicting one (either writes) of a higher lane of the same warp in
    /// this pass is in the opposite order from the reference schedule. Logged, and checked
    /// when the pass ends ([`Tracker`]).
    pub(super) fn track_access(&mut self, t: usize, c: Command) {
        let CommandView::Access {
            kind, addr, len, ..
        } = c.view()
        else {
            return;
        };
        self.track(t, kind != AccessKind::Read, addr, len);
    }

    /// [`Machine::track_access`] of an access of `len` bytes at `addr` by thread `t` that
    /// writes (`write`) or only reads.
    #[inline(always)]
    pub(super) fn track(&mut self, t: usize, write: bool, addr: u32, len: u32) {
        let tr = &mut self.track;
        let lane = (t % WARP_SIZE as usize) as u32 + 1;
        if t == self.cursor {
            // The cursor's accesses conflict only with higher lanes' earlier ones, and no
            // later access can conflict with them: the cursor only moves up within a pass,
            // so no lane below it accesses again. With no higher lane's access in this pass,
            // nothing to log (a lone lane left running in a pass, e.g. issuing TMA stores
            // whose extents reach the end of the shared window, had every byte of every
            // store checked).
            if tr.high <= lane {
                return;
            }
        } else {
            tr.high = tr.high.max(lane);
        }
        self.log(Logged {
            addr,
            len,
            lane,
            write,
            lanes: 0,
        });
    }

    /// Appends `entry` to the pass's log; a full log is checked at once.
    #[inline(always)]
    fn log(&mut self, entry: Logged) {
        let tr = &mut self.track;
        tr.wrote |= entry.write;
        tr.log.push(entry);
        if tr.log.len() >= LOG_MAX {
            tr.flushed = true;
            if tr.check_log() {
                self.reorder();
            }
        }
    }

    /// [`Machine::track`] of the accesses of the lanes of `mask` (bit `l`: thread `wb + l`)
    /// at one instruction, lane `l`'s `len` bytes at `base + l * len`, as one log entry:
    /// what the lanes' calls in lane order would log and note (the cursor's access left out
    /// when no higher lane has logged one before it), in one step.
    #[inline(always)]
    pub(super) fn track_lanes(&mut self, wb: usize, mask: u32, write: bool, base: u32, len: u32) {
        let tr = &mut self.track;
        let mut logged = mask;
        // The cursor's lane, when it is one of `mask`.
        let cursor = self
            .cursor
            .checked_sub(wb)
            .filter(|&c| c < WARP_SIZE as usize && mask & (1 << c) != 0);
        // One more than the highest lane of `m` (0: none).
        let top = |m: u32| 32 - m.leading_zeros();
        if let Some(c) = cursor {
            let below = mask & ((1u32 << c) - 1);
            tr.high = tr.high.max(top(below));
            if tr.high <= c as u32 + 1 {
                logged &= !(1 << c);
            }
            tr.high = tr.high.max(top(mask & !(1 << c)));
        } else {
            tr.high = tr.high.max(top(mask));
        }
        if logged == 0 {
            return;
        }
        self.log(Logged {
            addr: base.wrapping_add(logged.trailing_zeros() * len),
            len,
            lane: 0,
            write,
            lanes: logged,
        });
    }

    /// The lock-step order became visible: this run is abandoned and repeated lane by lane.
    #[cold]
    pub(super) fn reorder(&mut self) {
        self.reordered = true;
        self.stop = true;
    }
}

/// The reorder check of one byte's tracker entry `b` (see [`Tracker`]) for an access by
/// `lane` (one more than the lane) in the pass of `epoch` (shifted): whether a higher lane's
/// access in this pass conflicts with it, and the updated entry.
#[inline(always)]
fn track_byte(b: u32, epoch: u32, lane: u32, write: bool) -> (bool, u32) {
    // This pass's entry, or none (an older epoch).
    let e = if b & 0xffff_0000 == epoch { b } else { epoch };
    let (w, r) = ((e >> 8) & 0xff, e & 0xff);
    let conflict = w > lane || (write && r > lane);
    let e = if write {
        epoch | (w.max(lane) << 8) | r
    } else {
        epoch | (w << 8) | r.max(lane)
    };
    (conflict, e)
}
