//! The race stage's input: every access split into its 4-byte chunks ([`Entry`]), one list
//! per chunk ([`Chunk`]), ordered by (thread, reads before writes, program index).

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use weft_program::{AccessKind, Command, CommandView, InstId, Program, ThreadId};

use crate::shift::Lanes;
use crate::{CHUNK, HappensBeforeQuery};

/// One access's share of one chunk: 16 bytes (the chunk is its list's, [`Chunk::chunk`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) thread: u32,
    pub(crate) index: u32,
    /// The access's [`HappensBeforeQuery::chain_key`].
    pub(crate) key: u32,
    /// Bit 0: writes (0 read, 1 write or atomic; a thread's reads come first in a chunk).
    /// Bits 1–4: the bytes of the chunk accessed. Bits 5–31: for a plain write, its
    /// occurrence (how many earlier commands of this thread came from the same instruction),
    /// else [`OCC_NONE`].
    meta: u32,
}

/// The occurrence of an entry that is not a plain write, or whose occurrence does not fit in
/// 27 bits: it never matches another entry's, so the same-instruction rule never applies to
/// it (the conservative direction).
pub(crate) const OCC_NONE: u32 = (1 << 27) - 1;

/// Instruction ids below this count occurrences in a vector, larger ones in a hash map.
const DENSE_INSTS: usize = 1 << 16;

impl Entry {
    #[inline]
    pub(crate) fn writes(&self) -> u8 {
        (self.meta & 1) as u8
    }

    #[inline]
    pub(crate) fn mask(&self) -> u8 {
        ((self.meta >> 1) & 0xf) as u8
    }

    /// The occurrence of a plain write, [`OCC_NONE`] otherwise.
    #[inline]
    pub(crate) fn occ(&self) -> u32 {
        self.meta >> 5
    }

    /// Whether `other` is this entry but for the thread: the same program index, chain key,
    /// kind, bytes and occurrence.
    #[inline]
    pub(crate) fn same_but_thread(&self, other: &Entry) -> bool {
        (self.index, self.key, self.meta) == (other.index, other.key, other.meta)
    }
}

/// The threads and agents of the race check: the CTA's threads, then one agent per
/// asynchronous copy.
fn actors(program: &Program) -> impl Iterator<Item = (usize, &[Command])> + '_ {
    (0..program.num_actors()).map(|t| (t, program.actor_commands(t)))
}

/// The chunks an access of `len` bytes at `addr` touches: the first and how many (the
/// count the memory budget charges for, [`weft_program::race_entries`]).
#[inline]
fn span(addr: u32, len: u32) -> (u64, u64) {
    (
        u64::from(addr) / CHUNK,
        weft_program::race_entries(addr, len),
    )
}

// `race_entries` counts aligned 4-byte words: the chunks.
const _: () = assert!(CHUNK == 4);

/// An access of one thread, with what its entries share.
#[derive(Clone, Copy)]
struct Access {
    /// Its first chunk.
    first: u64,
    /// How many chunks it touches (0 for an access of no bytes).
    count: u64,
    /// Where its bytes begin and end, counted from the start of its first chunk.
    lo: u64,
    end: u64,
    /// Its entries' thread, index, chain key and flags (no bytes).
    base: Entry,
}

impl Access {
    /// Its entry in chunk `first + k` (`k < count`).
    #[inline]
    fn entry(&self, k: u64) -> Entry {
        let from = k * CHUNK;
        let lo = self.lo.saturating_sub(from);
        let hi = (self.end - from).min(CHUNK);
        let mut e = self.base;
        e.meta |= (((1u32 << hi) - (1u32 << lo)) & 0xf) << 1;
        e
    }
}

/// Calls `f` with every access of one thread, in program order, with its over-approximation
/// flag, its chain key from `hb` (for an access of some bytes) and the occurrence of a plain
/// write.
#[inline]
fn for_each_access<H: HappensBeforeQuery + ?Sized>(
    hb: &H,
    t: usize,
    commands: &[Command],
    mut f: impl FnMut(bool, &Access),
) {
    // Occurrences of plain writes per instruction (dense for the usual small ids).
    let mut dense: Vec<u32> = Vec::new();
    let mut sparse: FxHashMap<InstId, u32> = FxHashMap::default();
    let thread = t as u32;
    // The thread's chain keys in one slice where the relation has them (an agent's one
    // access asks for its own).
    let keys = hb
        .chain_keys(ThreadId(thread))
        .filter(|keys| keys.len() == commands.len());
    for (i, command) in commands.iter().enumerate() {
        let CommandView::Access {
            kind,
            addr,
            len,
            approx,
            ..
        } = command.view()
        else {
            continue;
        };
        let occ = if kind != AccessKind::Write {
            OCC_NONE
        } else if commands.len() == 1 {
            // An agent's one access (no counters to allocate per agent).
            0
        } else {
            let inst = command.inst().index();
            let counter = if inst < DENSE_INSTS {
                if dense.len() <= inst {
                    dense.resize(inst + 1, 0);
                }
                &mut dense[inst]
            } else {
                sparse.entry(command.inst()).or_insert(0)
            };
            let occ = *counter;
            *counter = counter.saturating_add(1);
            occ
        };
        let index = i as u32;
        let lo = u64::from(addr) % CHUNK;
        let end = lo + u64::from(len);
        let count = if len == 0 { 0 } else { end.div_ceil(CHUNK) };
        debug_assert_eq!(count, weft_program::race_entries(addr, len));
        let key = match keys {
            _ if count == 0 => 0,
            Some(keys) => keys[i],
            None => hb.chain_key((ThreadId(thread), index)),
        };
        let access = Access {
            first: u64::from(addr) / CHUNK,
            count,
            lo,
            end,
            base: Entry {
                thread,
                index,
                key,
                meta: u32::from(kind.writes()) | (occ.min(OCC_NONE) << 5),
            },
        };
        f(approx, &access);
    }
}

/// One chunk checked: its entries, ordered by (thread, reads before writes, program index).
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Chunk {
    pub(crate) chunk: u32,
    pub(crate) entries: Vec<Entry>,
    /// How many chunks it stands for (itself and the repeats after it).
    pub(crate) run: u64,
    /// Its entries are not collected (`entries` is empty): they are the previous chunk's on
    /// the next lanes ([`crate::shift`]), each thread one more.
    pub(crate) shifted: bool,
}

/// What [`collect_entries`] gathered.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Collected {
    /// The chunks checked, in chunk order.
    pub(crate) chunks: Vec<Chunk>,
    /// Shared-memory access commands, and those with an over-approximated extent.
    pub(crate) accesses: u64,
    pub(crate) approx_accesses: u64,
    /// Chunks accessed, repeats included.
    pub(crate) words: u64,
}

/// The chunks where an access starts or ends a run of repeats: the one it enters and the
/// one after its last. A chunk none of the program's accesses marks holds the accesses of
/// the chunk before it, each covering the first chunk's last byte and the second's first
/// (accesses are contiguous): a *repeat*, not checked. Every pair of accesses there shares
/// a byte of the chunk before, where its first common byte lies and it is reported;
/// checked, the repeat would report nothing, count no same-instruction write, and saturate
/// and skip exactly as the chunk before (its naive pairs are the same and are counted;
/// only its tests and visits, work statistics, are saved). A bulk copy's tile or a wide
/// copy is checked once per run, not per word.
#[inline]
fn run_starts(addr: u32, len: u32) -> [u64; 2] {
    let (first, count) = span(addr, len);
    [first, first + count]
}

/// All entries of the program's threads and agents in the chunks that start runs (see
/// [`Collected`] and [`run_starts`]).
///
/// A first pass over the accesses' addresses marks the run starts; a second over the threads
/// in order buckets each access's entries in the chunks of its span that start runs: each
/// bucket is then ordered by (thread, program index), with no sort. A thread's reads are put
/// before its writes within each chunk: adding a read right after a write of its own thread
/// to a bucket notes that run, and only the runs noted are reordered (a thread usually only
/// reads or only writes a word). An address range sparse beyond twice the commands falls back
/// to sorting the run starts and bucketing the entries by their chunk's rank among them.
///
/// With `repeats` false every chunk is checked (the property tests' reference); with
/// `followers` false every thread's commands are read (the same). (Called
/// once; kept out of line so that profiles tell it from the merges.)
#[inline(never)]
pub(crate) fn collect_entries<H: HappensBeforeQuery + ?Sized>(
    program: &Program,
    hb: &H,
    repeats: bool,
    followers: bool,
    lanes: &Lanes,
) -> Collected {
    let all: Vec<(usize, &[Command])> = actors(program).collect();
    collect_dense(&all, hb, repeats, followers, lanes)
        .unwrap_or_else(|| collect_sparse(&all, hb, repeats))
}

/// The first pass's tallies of [`collect_dense`], per region (shared, tensor memory),
/// indexed from the region's first chunk.
struct Tally {
    /// Whether repeats are passed over ([`run_starts`]).
    repeats: bool,
    /// Whether some thread is a lane shift.
    shifts: bool,
    /// The first chunk of tensor memory.
    tmem_chunk: u64,
    /// A region whose chunks pass this is sparse.
    region_limit: u64,
    /// The run-start marks.
    regions: [Vec<bool>; 2],
    /// The accesses that cover each chunk, as differences (+1 at an access's first chunk,
    /// -1 past its last, wrapping): summed, the exact size of each marked chunk's bucket,
    /// which the second pass then fills without growing it (the doublings cost a
    /// reallocation and copy each, and left up to half of each bucket unused).
    cover: [Vec<u32>; 2],
    /// The one-chunk accesses of one chunk by lane shifts ([`Lanes::step`]), and their step
    /// in chunks (`u32::MAX`: steps differ): a chunk all of whose accesses are such, of one
    /// step `d`, with as many accesses as the chunk `d` before it, is that chunk on the next
    /// lanes and is not collected ([`Chunk::shifted`]). Those of a warp's followers of one
    /// word each at the next words are added to a range of chunks at once, as differences
    /// like `cover` (`shifted_runs`).
    shifted: [Vec<u32>; 2],
    shifted_runs: [Vec<u32>; 2],
    steps: [Vec<u32>; 2],
    /// Per chunk, the followers of one word each that [`Self::note_followers`] last marked
    /// from it: `m << 1 | 1` for `m` followers whose steps it met, `m << 1` for `m` without
    /// (0: none). The marks and steps are met, not counted: a loop's later trips, which note
    /// the same followers of the same chunk again, change neither.
    applied: [Vec<u32>; 2],
    /// Whether some access lies in tensor memory.
    tmem: bool,
}

/// Meets a chunk's step so far (0: none yet) with a lane shift's step `d`: `u32::MAX` once
/// two differ.
#[inline]
fn meet(step: &mut u32, d: u32) {
    *step = if *step == 0 || *step == d {
        d
    } else {
        u32::MAX
    };
}

/// Whether the accesses at `addr + k·d` for `k` from 0 to `m` climb without wrapping and
/// lie in one region (shared or tensor memory): their chunks are then `s = d / 4` apart in
/// the region's (and the dense) index.
#[inline]
fn climbs(addr: u32, m: usize, d: u32, tmem_chunk: u64) -> bool {
    let top = u64::from(addr) + m as u64 * u64::from(d);
    top <= u64::from(u32::MAX)
        && (top / CHUNK >= tmem_chunk) == (u64::from(addr) / CHUNK >= tmem_chunk)
}

/// Calls `f` on `m` elements of `slice` from `from`, `s > 0` apart (in one loop over a
/// slice when they are adjacent, which the compiler vectorizes).
#[inline]
fn strided<T>(slice: &mut [T], from: usize, s: usize, m: usize, f: impl FnMut(&mut T)) {
    if s == 1 {
        slice[from..from + m].iter_mut().for_each(f);
    } else {
        slice[from..].iter_mut().step_by(s).take(m).for_each(f);
    }
}

impl Tally {
    /// The region of chunk `first` (0: shared, 1: tensor memory) and the region's first
    /// chunk. Shared accesses end below tensor memory (the emulator keeps them there), so an
    /// access lies in one region.
    #[inline(always)]
    fn region(&mut self, first: u64) -> (usize, u64) {
        if first >= self.tmem_chunk {
            self.tmem = true;
            (1, self.tmem_chunk)
        } else {
            (0, 0)
        }
    }

    /// Grows `region`'s tallies to `past` chunks; `None` when that passes the limit (the
    /// region is sparse).
    #[inline(always)]
    fn reach(&mut self, region: usize, past: u64) -> Option<()> {
        if past > self.region_limit {
            return None;
        }
        let past = past as usize;
        if self.regions[region].len() < past {
            self.regions[region].resize(past, false);
            self.cover[region].resize(past, 0);
            if self.shifts {
                self.shifted[region].resize(past, 0);
                self.steps[region].resize(past, 0);
            }
        }
        Some(())
    }

    /// Notes an access of `count > 0` chunks from `first`, by a lane shift of `step` chunks
    /// if `step` is some; `None` when its region turns sparse. (The notes of a program's
    /// accesses may come in any order: each adds to counts, sets marks or meets steps.)
    // (Always inlined: a call per access costs as much as the note.)
    #[inline(always)]
    fn note(&mut self, first: u64, count: u64, step: Option<u32>) -> Option<()> {
        let (region, base) = self.region(first);
        // One past the chunk after the access's last (a run start).
        self.reach(region, first + count + 1 - base)?;
        let marks = &mut self.regions[region];
        let (lo, hi) = ((first - base) as usize, (first + count - base) as usize);
        let diffs = &mut self.cover[region];
        diffs[lo] = diffs[lo].wrapping_add(1);
        diffs[hi] = diffs[hi].wrapping_sub(1);
        if let Some(d) = step
            && count == 1
        {
            self.shifted[region][lo] += 1;
            meet(&mut self.steps[region][lo], d);
        }
        // The chunks that start runs: all of them, and the one after the last, when
        // repeats are checked too.
        if self.repeats {
            marks[lo] = true;
            marks[hi] = true;
        } else {
            marks[lo..=hi].fill(true);
        }
        Some(())
    }

    /// Notes the accesses of `m` followers of a thread ([`Lanes::followers`]) at distance
    /// `d` from its access of `count > 0` chunks at byte `addr`: the `k`-th's at
    /// `addr + k·d`, each by a lane shift of `step` chunks if `step` is some. As `m` calls
    /// of [`Self::note`], in one strided loop per tally where the accesses climb within one
    /// region without wrapping. Where they tile a range (`d` is their length), their
    /// differences cancel but at its ends; where each is one word at the next (a copy
    /// loop's lanes), the marks and steps they would set again are passed over
    /// ([`Self::applied`]). (Out of line: the loop over the accesses of threads without
    /// followers stays as small as it was.)
    #[inline(never)]
    fn note_followers(
        &mut self,
        addr: u32,
        count: u64,
        m: usize,
        d: u32,
        step: Option<u32>,
    ) -> Option<()> {
        let first = u64::from(addr) / CHUNK;
        let s = u64::from(d) / CHUNK;
        let last = first + m as u64 * s;
        if m == 0 || s == 0 || !climbs(addr, m, d, self.tmem_chunk) {
            let mut moved = addr;
            for _ in 0..m {
                moved = moved.wrapping_add(d);
                self.note(u64::from(moved) / CHUNK, count, step)?;
            }
            return Some(());
        }
        // The accesses climb within the region of the first.
        let (region, base) = self.region(first);
        // The last follower's is the highest access: its past is the farthest.
        self.reach(region, last + count + 1 - base)?;
        // (The tallies only followers keep grow here, not with every access's.)
        let past = self.regions[region].len();
        if self.applied[region].len() < past {
            self.applied[region].resize(past, 0);
            self.shifted_runs[region].resize(past, 0);
        }
        // The followers' first chunks, and the chunks past their last.
        let (s, lo, hi) = (
            s as usize,
            (first + s - base) as usize,
            (first + s + count - base) as usize,
        );
        // Accesses that tile `lo..lo + m·s`: each one's past is the next one's first.
        let tiled = s as u64 == count;
        let diffs = &mut self.cover[region];
        if tiled {
            diffs[lo] = diffs[lo].wrapping_add(1);
            diffs[lo + m * s] = diffs[lo + m * s].wrapping_sub(1);
        } else {
            strided(diffs, lo, s, m, |c| *c = c.wrapping_add(1));
            strided(diffs, hi, s, m, |c| *c = c.wrapping_sub(1));
        }
        if step.is_some() && count == 1 {
            if s == 1 {
                let runs = &mut self.shifted_runs[region];
                runs[lo] = runs[lo].wrapping_add(1);
                runs[lo + m] = runs[lo + m].wrapping_sub(1);
            } else {
                strided(&mut self.shifted[region], lo, s, m, |n| *n += 1);
            }
        }
        // The marks and steps: set again as they are where the same followers were noted
        // from this chunk before (one word each, at the next words: `d` is 4 and a step 1).
        if s == 1
            && count == 1
            && let Some(key) = u32::try_from(m)
                .ok()
                .filter(|&m| m < 1 << 31)
                .map(|m| m << 1 | u32::from(step.is_some()))
        {
            let applied = &mut self.applied[region][lo];
            if *applied == key {
                return Some(());
            }
            *applied = key;
        }
        if let Some(d) = step
            && count == 1
        {
            strided(&mut self.steps[region], lo, s, m, |x| meet(x, d));
        }
        let marks = &mut self.regions[region];
        if tiled {
            // Each access's first chunk is the one past the access before.
            if self.repeats {
                strided(marks, lo, s, m + 1, |x| *x = true);
            } else {
                marks[lo..=lo + m * s].fill(true);
            }
        } else if self.repeats {
            strided(marks, lo, s, m, |x| *x = true);
            strided(marks, hi, s, m, |x| *x = true);
        } else {
            for k in 0..m {
                let at = lo + k * s;
                marks[at..=at + count as usize].fill(true);
            }
        }
        Some(())
    }
}

/// [`collect_entries`] by bucketing; `None` when the address range is sparse (the chunks
/// pass `limit`).
fn collect_dense<H: HappensBeforeQuery + ?Sized>(
    all: &[(usize, &[Command])],
    hb: &H,
    repeats: bool,
    followers: bool,
    lanes: &Lanes,
) -> Option<Collected> {
    // A thread's followers ([`Lanes::followers`]), where their accesses are read from its.
    let followers = |t: usize| {
        if followers {
            lanes.followers(t)
        } else {
            (0, 0)
        }
    };
    // Tensor memory lies far above shared memory (`weft_program::TMEM_BASE`): its chunks are
    // bucketed apart and indexed right after the shared ones (`dense_index`), so a Blackwell
    // kernel's two regions stay one dense range.
    let commands: usize = all.iter().map(|(_, thread)| thread.len()).sum();
    let tmem_chunk = u64::from(weft_program::TMEM_BASE) / CHUNK;
    // (Tensor memory adds at most its 65,536 cells.)
    let cells = u64::from(weft_program::TMEM_LANES * weft_program::TMEM_COLUMNS);
    let (mut accesses, mut approx_accesses) = (0u64, 0u64);
    let shifts = lanes.any();
    let mut tally = Tally {
        repeats,
        shifts,
        tmem_chunk,
        // A region whose chunks pass this is sparse (the joined `limit` below is checked
        // too).
        region_limit: 2 * commands as u64 + (1 << 15) + cells,
        regions: Default::default(),
        cover: Default::default(),
        shifted: Default::default(),
        shifted_runs: Default::default(),
        steps: Default::default(),
        applied: Default::default(),
        tmem: false,
    };
    // First pass: the run starts (addresses and lengths only). A thread's followers
    // ([`Lanes::followers`]) are its accesses moved: their commands are not read.
    let mut t = 0;
    while let Some(&(_, thread)) = all.get(t) {
        let (m, d) = followers(t);
        let (step, next) = (lanes.step(t), lanes.step(t + 1));
        // The thread's accesses, and those over-approximated (its followers have as many).
        let (mut own, mut own_approx) = (0u64, 0u64);
        for command in thread {
            let CommandView::Access {
                addr, len, approx, ..
            } = command.view()
            else {
                continue;
            };
            own += 1;
            own_approx += u64::from(approx);
            if len == 0 {
                continue;
            }
            let (first, count) = span(addr, len);
            tally.note(first, count, step)?;
            // (A distance is a multiple of 4: each follower's access covers as many
            // chunks.)
            if m > 0 {
                tally.note_followers(addr, count, m, d, next)?;
            }
        }
        accesses += own * (1 + m as u64);
        approx_accesses += own_approx * (1 + m as u64);
        t += 1 + m;
    }
    let Tally {
        regions,
        cover,
        shifted,
        shifted_runs,
        steps,
        tmem,
        ..
    } = tally;
    let limit = 2 * commands as u64 + (1 << 15) + if tmem { cells } else { 0 };
    let [shared, tensor] = regions;
    if (shared.len() + tensor.len()) as u64 > limit {
        return None;
    }
    // The end of the shared chunks in the dense index.
    let shared_end = shared.len();
    let mut marks = shared;
    marks.extend_from_slice(&tensor);
    // Each chunk's accesses, from the differences.
    let mut covering: Vec<u32> = Vec::with_capacity(marks.len());
    for diffs in &cover {
        let mut n = 0u32;
        covering.extend(diffs.iter().map(|&d| {
            n = n.wrapping_add(d);
            n
        }));
    }
    debug_assert_eq!(covering.len(), marks.len());
    // The chunks not collected: marked, every access a lane shift's of one step `d`, as
    // many as in the chunk `d` before, which is the last chunk with accesses before it
    // (so the check meets the two one after the other).
    let mut virtual_chunks: Vec<bool> = vec![false; if shifts { marks.len() } else { 0 }];
    if shifts {
        for (region, ((counts, runs), ds)) in
            shifted.iter().zip(&shifted_runs).zip(&steps).enumerate()
        {
            let offset = if region == 0 { 0 } else { shared_end };
            let mut last: Option<usize> = None;
            // The followers' accesses of each chunk, from their differences.
            let mut in_runs = 0u32;
            for (i, (&own, &d)) in counts.iter().zip(ds).enumerate() {
                in_runs = in_runs.wrapping_add(runs.get(i).copied().unwrap_or(0));
                let n = own.wrapping_add(in_runs);
                let x = offset + i;
                if !marks[x] || covering[x] == 0 {
                    continue;
                }
                let before = x.checked_sub(d as usize);
                virtual_chunks[x] = n == covering[x]
                    && d != 0
                    && d != u32::MAX
                    && before.is_some_and(|b| Some(b) == last && covering[b] == n);
                last = Some(x);
            }
        }
    }
    let is_virtual = |d: usize| virtual_chunks.get(d).copied().unwrap_or(false);
    // Each collected chunk's bucket with room for exactly the accesses that cover it (each
    // pushes one entry there).
    let mut buckets: Vec<Vec<Entry>> = (0..marks.len())
        .map(|d| {
            if marks[d] && !is_virtual(d) {
                Vec::with_capacity(covering[d] as usize)
            } else {
                Vec::new()
            }
        })
        .collect();
    // The (bucket, thread) runs in which a read follows a write of the thread.
    let mut mixed: Vec<(usize, u32)> = Vec::new();
    // The dense index of a chunk.
    let dense_index = |first: u64| {
        if first >= tmem_chunk {
            shared_end + (first - tmem_chunk) as usize
        } else {
            first as usize
        }
    };
    // Whether an access of `count` chunks from `first` by a lane shift lies in one chunk
    // not collected. A lane shift whose every access of some bytes does adds no entry, and
    // its accesses are not walked again (31 lanes of each warp of a copy loop).
    let hidden = |first: u64, count: u64| count == 1 && is_virtual(dense_index(first));
    // Per dense index, how many chunks not collected begin there (in a row): a thread's
    // followers one word apart whose accesses of one word lie in such a row are found
    // uncollected at once, per access.
    // (Only where some chunk is not collected.)
    let hides = virtual_chunks.contains(&true);
    let mut hidden_run: Vec<u32> = vec![0; if hides { marks.len() + 1 } else { 0 }];
    for d in (0..if hides { virtual_chunks.len() } else { 0 }).rev() {
        if virtual_chunks[d] {
            hidden_run[d] = hidden_run[d + 1].saturating_add(1);
        }
    }
    // Per actor, whether it adds no entry: a lane shift whose every access of some bytes
    // lies in one chunk not collected (31 lanes of each warp of a copy loop). A thread's
    // followers ([`Lanes::followers`]) are found so from its accesses moved, without
    // reading their commands.
    let mut skip: Vec<bool> = vec![false; if shifts { all.len() } else { 0 }];
    let mut t = 0;
    while shifts && let Some(&(_, thread)) = all.get(t) {
        skip[t] = lanes.step(t).is_some()
            && thread.iter().all(|command| match command.view() {
                CommandView::Access { addr, len, .. } => {
                    let (first, count) = span(addr, len);
                    count == 0 || hidden(first, count)
                }
                _ => true,
            });
        let (m, d) = followers(t);
        // Per follower, whether it may add no entry (all do, or none: they share their
        // step); `left` of them.
        let skips = &mut skip[t + 1..=t + m];
        skips.fill(lanes.step(t + 1).is_some());
        let mut left = if m > 0 && skips[0] { m } else { 0 };
        for command in thread {
            if left == 0 {
                break;
            }
            let CommandView::Access { addr, len, .. } = command.view() else {
                continue;
            };
            let (first, count) = span(addr, len);
            if count == 0 {
                continue;
            }
            // The followers in a row of uncollected chunks right after this access's, when
            // they are one word apart: none of them adds entries for this access.
            let row = if count == 1 && d == CHUNK as u32 && climbs(addr, m, d, tmem_chunk) {
                let next = dense_index(first) + 1;
                (hidden_run.get(next).copied().unwrap_or(0) as usize).min(m)
            } else {
                0
            };
            for (k, s) in skips.iter_mut().enumerate().skip(row) {
                let moved = addr.wrapping_add((k as u32 + 1).wrapping_mul(d));
                if *s && !hidden(u64::from(moved) / CHUNK, count) {
                    *s = false;
                    left -= 1;
                }
            }
        }
        t += 1 + m;
    }
    // Second pass: each access's entries in the chunks of its span that start runs, in
    // (thread, program index) order.
    for &(t, thread) in all {
        if skip.get(t).copied().unwrap_or(false) {
            continue;
        }
        for_each_access(hb, t, thread, |_, a| {
            if a.count == 0 {
                return;
            }
            let d0 = dense_index(a.first);
            for k in 0..a.count {
                let d = d0 + k as usize;
                // (The first chunk always starts a run.)
                if !marks[d] || is_virtual(d) {
                    continue;
                }
                let e = a.entry(k);
                let bucket = &mut buckets[d];
                if e.writes() == 0
                    && let Some(p) = bucket.last()
                    && p.writes() != 0
                    && p.thread == e.thread
                    && mixed.last() != Some(&(d, e.thread))
                {
                    mixed.push((d, e.thread));
                }
                bucket.push(e);
            }
        });
    }
    mixed.sort_unstable();
    mixed.dedup();
    let mut scratch: Vec<Entry> = Vec::new();
    for (d, thread) in mixed {
        let bucket = &mut buckets[d];
        let run = bucket.partition_point(|e| e.thread < thread)
            ..bucket.partition_point(|e| e.thread <= thread);
        reads_first(&mut bucket[run], &mut scratch);
    }
    // Each run start with entries, and the run's length: up to the next start (the chunk
    // after every access's last is one, so a run never passes the accessed chunks).
    let mut chunks: Vec<Chunk> = Vec::new();
    let mut next = marks.len();
    let mut words = 0;
    for (d, bucket) in buckets.iter_mut().enumerate().rev() {
        if marks[d] {
            let run = (next - d) as u64;
            next = d;
            let shifted = is_virtual(d);
            if !bucket.is_empty() || shifted {
                // The dense index back to the chunk.
                let chunk = match d.checked_sub(shared_end) {
                    Some(k) => tmem_chunk + k as u64,
                    None => d as u64,
                };
                chunks.push(Chunk {
                    chunk: chunk as u32,
                    entries: std::mem::take(bucket),
                    run,
                    shifted,
                });
                words += run;
            }
        }
    }
    chunks.reverse();
    Some(Collected {
        chunks,
        accesses,
        approx_accesses,
        words,
    })
}

/// [`collect_entries`] over a sparse address range: the run starts sorted, and the entries
/// bucketed by the rank of their chunk among them (in thread and program order, as the dense
/// path's buckets).
fn collect_sparse<H: HappensBeforeQuery + ?Sized>(
    all: &[(usize, &[Command])],
    hb: &H,
    repeats: bool,
) -> Collected {
    let (mut accesses, mut approx_accesses) = (0u64, 0u64);
    let mut starts: Vec<u64> = Vec::new();
    for &(_, thread) in all {
        for command in thread {
            if let CommandView::Access {
                addr, len, approx, ..
            } = command.view()
            {
                accesses += 1;
                approx_accesses += u64::from(approx);
                if len > 0 {
                    let (first, count) = span(addr, len);
                    if repeats {
                        starts.extend(run_starts(addr, len));
                    } else {
                        // Each chunk, and the one after the last (which ends a run).
                        starts.extend(first..=first + count);
                    }
                }
            }
        }
    }
    starts.par_sort_unstable();
    starts.dedup();
    // Each entry with the rank of its chunk among the run starts, and the entries per rank.
    // The threads come in order and each thread's accesses in program order, so bucketing
    // by rank in this order leaves each chunk's entries ordered by (thread, program index),
    // as the dense path's buckets are: no sort of the entries.
    let mut keyed: Vec<(u32, Entry)> = Vec::new();
    let mut counts = vec![0u32; starts.len()];
    for &(t, thread) in all {
        for_each_access(hb, t, thread, |_, a| {
            if a.count == 0 {
                return;
            }
            // An access's first chunk always starts a run; its other entries are the run
            // starts inside it, found by two binary searches instead of one per chunk (a TMA
            // tile touches thousands of chunks, few of them starts).
            let end = a.first + a.count;
            let lo = starts.partition_point(|&s| s < a.first);
            let hi = lo + starts[lo..].partition_point(|&s| s < end);
            debug_assert_eq!(starts.get(lo), Some(&a.first));
            for (r, &c) in starts[lo..hi].iter().enumerate() {
                keyed.push(((lo + r) as u32, a.entry(c - a.first)));
                counts[lo + r] += 1;
            }
        });
    }
    // Each run start with entries, its run (up to the next start), and its bucket made to
    // size; `counts` then maps a rank to its chunk.
    let mut chunks: Vec<Chunk> = Vec::new();
    for (r, n) in counts.iter_mut().enumerate() {
        if *n == 0 {
            continue;
        }
        let c = starts[r];
        let next = starts.get(r + 1).copied().unwrap_or(c + 1);
        chunks.push(Chunk {
            chunk: c as u32,
            entries: Vec::with_capacity(*n as usize),
            run: next - c,
            shifted: false,
        });
        *n = (chunks.len() - 1) as u32;
    }
    for (r, e) in keyed {
        chunks[counts[r as usize] as usize].entries.push(e);
    }
    // A thread's reads before its writes within each chunk, each in program order.
    let mut scratch: Vec<Entry> = Vec::new();
    for chunk in &mut chunks {
        for run in chunk.entries.chunk_by_mut(|x, y| x.thread == y.thread) {
            if run
                .windows(2)
                .any(|w| w[0].writes() != 0 && w[1].writes() == 0)
            {
                reads_first(run, &mut scratch);
            }
        }
    }
    let words = chunks.iter().map(|c| c.run).sum();
    Collected {
        chunks,
        accesses,
        approx_accesses,
        words,
    }
}

/// Puts the reads of one thread's entries in one chunk (in program order) before its
/// writes, keeping each in program order.
fn reads_first(run: &mut [Entry], scratch: &mut Vec<Entry>) {
    scratch.clear();
    scratch.extend(run.iter().filter(|e| e.writes() == 0));
    scratch.extend(run.iter().filter(|e| e.writes() != 0));
    run.copy_from_slice(scratch);
}
