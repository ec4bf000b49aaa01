//! The race stage's input: every access split into its 4-byte chunks ([`Entry`]), ordered by
//! (chunk, thread, reads before writes, program index), with the range of each chunk.

use std::ops::Range;

use rayon::prelude::*;
use rustc_hash::FxHashMap;
use weft_program::{AccessKind, Command, CommandView, InstId, Program, ThreadId};

use crate::{CHUNK, HappensBeforeQuery};

/// One access's share of one chunk: 20 bytes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Entry {
    pub(crate) chunk: u32,
    pub(crate) thread: u32,
    pub(crate) index: u32,
    /// The access's [`HappensBeforeQuery::chain_key`].
    pub(crate) key: u32,
    /// Bit 0: writes (0 read, 1 write or atomic; the sort puts a thread's reads first).
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
    fn new(chunk: u32, thread: u32, index: u32, writes: bool, mask: u8, occ: u32) -> Self {
        Entry {
            chunk,
            thread,
            index,
            key: 0,
            meta: u32::from(writes) | (u32::from(mask) << 1) | (occ.min(OCC_NONE) << 5),
        }
    }

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

/// Calls `f` with every entry of one thread in a chunk `keep` accepts, in program order,
/// its chain key from `hb`.
fn for_each_entry<H: HappensBeforeQuery + ?Sized>(
    hb: &H,
    t: usize,
    commands: &[Command],
    keep: impl Fn(u64) -> bool,
    mut f: impl FnMut(Entry),
) {
    // Occurrences of plain writes per instruction (dense for the usual small ids).
    let mut dense: Vec<u32> = Vec::new();
    let mut sparse: FxHashMap<InstId, u32> = FxHashMap::default();
    for (i, command) in commands.iter().enumerate() {
        let CommandView::Access {
            kind, addr, len, ..
        } = command.view()
        else {
            continue;
        };
        let occ = if kind == AccessKind::Write && commands.len() == 1 {
            // An agent's one access (no counters to allocate per agent).
            0
        } else if kind == AccessKind::Write {
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
        } else {
            OCC_NONE
        };
        let (start, end) = (u64::from(addr), u64::from(addr) + u64::from(len));
        let (first, count) = span(addr, len);
        let key = if count > 0 {
            hb.chain_key((ThreadId(t as u32), i as u32))
        } else {
            0
        };
        for chunk in (first..first + count).filter(|&c| keep(c)) {
            let lo = start.max(chunk * CHUNK) - chunk * CHUNK;
            let hi = end.min((chunk + 1) * CHUNK) - chunk * CHUNK;
            let mut e = Entry::new(
                chunk as u32,
                t as u32,
                i as u32,
                kind.writes(),
                ((1u16 << hi) - (1u16 << lo)) as u8,
                occ,
            );
            e.key = key;
            f(e);
        }
    }
}

/// What [`collect_entries`] gathered.
pub(crate) struct Collected {
    /// The entries of the chunks checked, ordered by (chunk, thread, reads before writes,
    /// program index).
    pub(crate) entries: Vec<Entry>,
    /// Per chunk checked, in chunk order: the range of its entries, and how many chunks it
    /// stands for (itself and the repeats after it).
    pub(crate) chunks: Vec<(Range<usize>, u64)>,
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
/// Each thread yields its entries in program order, so a stable counting sort on the chunk
/// over the threads in order gives (chunk, thread, program index) in linear time and with one
/// array of entries; then a thread's reads are put before its writes within each chunk
/// (mostly a check: a thread usually only reads or only writes a word). The run starts are
/// marked in the pass that counts the accesses, and the chunks' counts taken in a second;
/// an address range sparse beyond twice the commands falls back to sorting the run starts
/// and the entries.
///
/// With `repeats` false every chunk is checked (the property tests' reference).
pub(crate) fn collect_entries<H: HappensBeforeQuery + ?Sized>(
    program: &Program,
    hb: &H,
    repeats: bool,
) -> Collected {
    // The chunks of an access that start runs: all of them when repeats are checked too.
    let marked = |addr: u32, len: u32, f: &mut dyn FnMut(u64)| {
        if repeats {
            run_starts(addr, len).into_iter().for_each(&mut *f);
        } else {
            // Each chunk, and the one after the last (which ends a run).
            let (first, count) = span(addr, len);
            (first..=first + count).for_each(f);
        }
    };
    let all: Vec<(usize, &[Command])> = actors(program).collect();
    let accesses_of = |f: &mut dyn FnMut(u32, u32, bool)| {
        for &(_, thread) in &all {
            for command in thread {
                if let CommandView::Access {
                    addr, len, approx, ..
                } = command.view()
                {
                    f(addr, len, approx);
                }
            }
        }
    };
    // One pass over the accesses counts them, marks the run starts per chunk and counts
    // the accesses covering each chunk, while the chunks stay below `limit` (past it the
    // address range is sparse). Tensor memory lies far above shared memory
    // (`weft_program::TMEM_BASE`): its chunks are counted apart and indexed right after the
    // shared ones (`dense_index`), so a Blackwell kernel's two regions stay one dense range.
    let commands: usize = all.iter().map(|(_, thread)| thread.len()).sum();
    let tmem_chunk = u64::from(weft_program::TMEM_BASE) / CHUNK;
    // (Tensor memory adds at most its 65,536 cells.)
    let cells = u64::from(weft_program::TMEM_LANES * weft_program::TMEM_COLUMNS);
    let (mut accesses, mut approx_accesses) = (0u64, 0u64);
    // Per region (shared, tensor memory): the run-start marks and the accesses per chunk,
    // indexed from the region's first chunk; `None` once the region is sparse.
    let mut regions: [Option<(Vec<bool>, Vec<usize>)>; 2] = [
        Some((Vec::new(), Vec::new())),
        Some((Vec::new(), Vec::new())),
    ];
    let mut tmem = false;
    // A region whose chunks pass this is sparse (the joined `limit` below is checked too).
    let region_limit = 2 * commands as u64 + (1 << 15) + cells;
    accesses_of(&mut |addr, len, approx| {
        accesses += 1;
        approx_accesses += u64::from(approx);
        if len == 0 {
            return;
        }
        let (first, count) = span(addr, len);
        // Shared accesses end below tensor memory (the emulator keeps them there), so an
        // access lies in one region.
        let (region, base) = if first >= tmem_chunk {
            tmem = true;
            (1, tmem_chunk)
        } else {
            (0, 0)
        };
        let Some((marks, counts)) = regions[region].as_mut() else {
            return;
        };
        // One past the chunk after the access's last (a run start).
        let past = first + count + 1 - base;
        if past > region_limit {
            regions[region] = None;
            return;
        }
        if marks.len() < past as usize {
            marks.resize(past as usize, false);
            counts.resize(past as usize, 0);
        }
        marked(addr, len, &mut |c| marks[(c - base) as usize] = true);
        for c in first - base..first + count - base {
            counts[c as usize] += 1;
        }
    });
    let limit = 2 * commands as u64 + (1 << 15) + if tmem { cells } else { 0 };
    let dense = match regions {
        [Some((smarks, scounts)), Some((tmarks, tcounts))]
            if (smarks.len() + tmarks.len()) as u64 <= limit =>
        {
            Some((smarks, scounts, tmarks, tcounts))
        }
        _ => None,
    };
    // The end of the shared chunks in the dense index.
    let shared_end = dense.as_ref().map_or(0, |(smarks, ..)| smarks.len() as u64);
    let dense_index = |c: u64| {
        if c >= tmem_chunk {
            shared_end + (c - tmem_chunk)
        } else {
            c
        }
    };
    let collected = |entries, chunks, words| Collected {
        entries,
        chunks,
        accesses,
        approx_accesses,
        words,
    };
    let Some((mut marks, scounts, tmarks, tcounts)) = dense else {
        // Sparse: every access's run starts again, sorted.
        let mut starts: Vec<u64> = Vec::new();
        accesses_of(&mut |addr, len, _| {
            if len > 0 {
                marked(addr, len, &mut |c| starts.push(c));
            }
        });
        starts.par_sort_unstable();
        starts.dedup();
        let keep = |c: u64| starts.binary_search(&c).is_ok();
        let mut entries = Vec::new();
        for &(t, thread) in &all {
            for_each_entry(hb, t, thread, keep, |e| entries.push(e));
        }
        entries.par_sort_unstable_by_key(|e| (e.chunk, e.thread, e.writes(), e.index));
        let chunks: Vec<(Range<usize>, u64)> = chunk_ranges(&entries)
            .into_iter()
            .map(|r| {
                let c = u64::from(entries[r.start].chunk);
                let next = starts[starts.partition_point(|&s| s <= c)..]
                    .first()
                    .copied()
                    .unwrap_or(c + 1);
                (r, next - c)
            })
            .collect();
        let words = chunks.iter().map(|(_, n)| n).sum();
        return collected(entries, chunks, words);
    };
    // Entries per run start (shifted by one: the prefix sums below make them the chunks'
    // starts): the accesses covering each marked chunk.
    marks.extend_from_slice(&tmarks);
    drop(tmarks);
    let mut starts = vec![0usize; marks.len() + 1];
    for (d, &n) in scounts.iter().chain(&tcounts).enumerate() {
        if marks[d] {
            starts[d + 1] = n;
        }
    }
    drop((scounts, tcounts));
    // Each run start with entries, and the run's length: up to the next start (the chunk
    // after every access's last is one, so a run never passes the accessed chunks).
    let mut chunks: Vec<(Range<usize>, u64)> = Vec::new();
    let mut next = marks.len() as u64;
    let mut lengths = vec![0u64; marks.len()];
    for c in (0..marks.len()).rev() {
        if marks[c] {
            lengths[c] = next - c as u64;
            next = c as u64;
        }
    }
    let total: usize = starts.iter().sum();
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let mut words = 0;
    for c in 0..marks.len() {
        if starts[c] < starts[c + 1] {
            chunks.push((starts[c]..starts[c + 1], lengths[c]));
            words += lengths[c];
        }
    }
    drop(lengths);
    let mut entries = vec![Entry::new(0, 0, 0, false, 0, 0); total];
    let keep = |c: u64| marks[dense_index(c) as usize];
    for &(t, thread) in &all {
        for_each_entry(hb, t, thread, keep, |e| {
            let slot = &mut starts[dense_index(u64::from(e.chunk)) as usize];
            entries[*slot] = e;
            *slot += 1;
        });
    }
    reads_first(&mut entries);
    collected(entries, chunks, words)
}

/// Within each run of entries of one thread in one chunk (in program order), puts the reads
/// before the writes, keeping each in program order.
fn reads_first(entries: &mut [Entry]) {
    let mut scratch: Vec<Entry> = Vec::new();
    let mut start = 0;
    while start < entries.len() {
        let (chunk, thread) = (entries[start].chunk, entries[start].thread);
        let mut end = start + 1;
        // Whether a read follows a write in the run.
        let mut mixed = false;
        while end < entries.len() && entries[end].chunk == chunk && entries[end].thread == thread {
            mixed |= entries[end].writes() < entries[end - 1].writes();
            end += 1;
        }
        if mixed {
            let run = &mut entries[start..end];
            scratch.clear();
            scratch.extend(run.iter().filter(|e| e.writes() == 0));
            scratch.extend(run.iter().filter(|e| e.writes() != 0));
            run.copy_from_slice(&scratch);
        }
        start = end;
    }
}

fn chunk_ranges(entries: &[Entry]) -> Vec<Range<usize>> {
    let mut ranges = Vec::new();
    let mut start = 0;
    for i in 1..=entries.len() {
        if i == entries.len() || entries[i].chunk != entries[start].chunk {
            ranges.push(start..i);
            start = i;
        }
    }
    ranges
}
