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

/// The commands of thread or agent `t` (an asynchronous copy, numbered after the CTA's
/// threads, is one access).
pub(crate) fn commands_of(program: &Program, t: usize) -> &[Command] {
    match program.threads.get(t) {
        Some(thread) => &thread.commands,
        None => program
            .asyncs
            .copies
            .get(t - program.threads.len())
            .map_or(&[], |c| std::slice::from_ref(&c.access)),
    }
}

/// The threads and agents of the race check: the CTA's threads, then one agent per
/// asynchronous copy.
fn actors(program: &Program) -> impl Iterator<Item = (usize, &[Command])> + '_ {
    (0..program.threads.len() + program.asyncs.copies.len()).map(|t| (t, commands_of(program, t)))
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

/// Calls `f` with every entry of one thread, in program order, its chain key from `hb`.
fn for_each_entry<H: HappensBeforeQuery + ?Sized>(
    hb: &H,
    t: usize,
    commands: &[Command],
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
        let occ = if kind == AccessKind::Write {
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
        for chunk in first..first + count {
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
    /// All entries, ordered by (chunk, thread, reads before writes, program index).
    pub(crate) entries: Vec<Entry>,
    /// The range of each chunk's entries, in chunk order.
    pub(crate) chunks: Vec<Range<usize>>,
    /// Shared-memory access commands, and those with an over-approximated extent.
    pub(crate) accesses: u64,
    pub(crate) approx_accesses: u64,
}

/// All entries of the program's threads and agents (see [`Collected`]).
///
/// Each thread yields its entries in program order, so a stable counting sort on the chunk
/// over the threads in order gives (chunk, thread, program index) in linear time and with one
/// array of entries; then a thread's reads are put before its writes within each chunk
/// (mostly a check: a thread usually only reads or only writes a word). The chunks' counts
/// are taken in the pass that counts the accesses; an address range sparse beyond twice the
/// commands falls back to a comparison sort.
pub(crate) fn collect_entries<H: HappensBeforeQuery + ?Sized>(
    program: &Program,
    hb: &H,
) -> Collected {
    let all: Vec<(usize, &[Command])> = actors(program).collect();
    // Entries per chunk (shifted by one: the prefix sums below make them the chunks'
    // starts), while the chunks stay below `limit`; past it the address range is sparse.
    let commands: usize = all.iter().map(|(_, thread)| thread.len()).sum();
    let limit = 2 * commands as u64 + (1 << 15);
    let mut starts: Option<Vec<usize>> = Some(Vec::new());
    let (mut total, mut accesses, mut approx_accesses) = (0usize, 0u64, 0u64);
    for &(_, thread) in &all {
        for command in thread {
            let CommandView::Access {
                addr, len, approx, ..
            } = command.view()
            else {
                continue;
            };
            accesses += 1;
            approx_accesses += u64::from(approx);
            let (first, count) = span(addr, len);
            total += count as usize;
            let Some(counts) = starts.as_mut() else {
                continue;
            };
            let end = first + count;
            if end > limit {
                starts = None;
                continue;
            }
            if counts.len() <= end as usize {
                counts.resize(end as usize + 1, 0);
            }
            for c in first..end {
                counts[c as usize + 1] += 1;
            }
        }
    }
    let collected = |entries: Vec<Entry>, chunks| Collected {
        entries,
        chunks,
        accesses,
        approx_accesses,
    };
    let Some(mut starts) = starts else {
        let mut entries = Vec::with_capacity(total);
        for &(t, thread) in &all {
            for_each_entry(hb, t, thread, |e| entries.push(e));
        }
        entries.par_sort_unstable_by_key(|e| (e.chunk, e.thread, e.writes(), e.index));
        let chunks = chunk_ranges(&entries);
        return collected(entries, chunks);
    };
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let chunks: Vec<Range<usize>> = starts
        .windows(2)
        .filter(|w| w[0] < w[1])
        .map(|w| w[0]..w[1])
        .collect();
    let mut entries = vec![Entry::new(0, 0, 0, false, 0, 0); total];
    for &(t, thread) in &all {
        for_each_entry(hb, t, thread, |e| {
            let slot = &mut starts[e.chunk as usize];
            entries[*slot] = e;
            *slot += 1;
        });
    }
    reads_first(&mut entries);
    collected(entries, chunks)
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
