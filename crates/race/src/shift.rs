//! Chunks that repeat the chunk before them on other lanes: checked once.
//!
//! A warp whose lanes run the same commands at addresses `a + 4·lane` (a copy loop, a tile
//! load) puts lane `l`'s accesses in one word and lane `l + 1`'s in the next: the two
//! words' entry lists differ only in their threads, each the next lane of its warp. When,
//! besides, every test the check makes on the second list is answered as on the first, the
//! second word's check does exactly what the first's did: the same tests, the same visits,
//! the same counts.
//!
//! [`Lanes::of`] compares each lane's commands with the lane before's: the same commands at
//! the same indices, with the same chain keys, but for the accesses' addresses, each moved
//! by one distance, a multiple of 4 (the values written may differ: each lane stores its
//! own). For the lanes of a run of such shifts it asks once whether the relation answers
//! alike for every lane of every warp at each chain key of their accesses
//! ([`HappensBeforeQuery::lanes_agree`]). Then [`Context::shifted`] needs only the two
//! chunks' lists: each thread of the second is the next lane after the first's thread at
//! the same place, shifted by the distance between the two words, with as many entries
//! (each access of the lane that covers its word is the other lane's that covers the
//! other word). So:
//!
//! - the entries are the same, in the same order, with the same program indices, chain
//!   keys, bytes and occurrences, and the lists split at the same places; two lists are
//!   lanes of one warp in one chunk exactly when they are in the other;
//! - the commands behind them are the same instruction, kind, width and flags, each
//!   covering the same bytes of its word;
//! - every test is program order within a thread or a bound of a chain key's node at a
//!   thread of the chunk, which the lanes of every warp share: the moved threads get the
//!   bounds of the threads they stand for.
//!
//! Values written are read only where an access is tested against a window of concurrent
//! accesses that is not empty. A check that tested none and stopped at no cap
//! ([`Counts::quiet`]) leaves only counts, and the chunks after it that are shifts add the
//! same counts ([`Counts::replay`]) and are not checked. A word whose check found anything
//! is checked in full, as every word after it that is not a shift of a quiet one.
//!
//! Most such words are not even collected ([`crate::entries`], [`Chunk::shifted`]): the
//! first pass counts, per word, the one-word accesses of lane shifts (whose lanes agree at
//! their keys) and their step in words. A word all of whose accesses are such, of one step
//! `d`, as many as in the word `d` before it, which is the last word with accesses before
//! it, is that word on the next lanes: each of its accesses is the lane before's moved by
//! `d` words, and there are no others. It gets no entries (a lane whose every access lies
//! in such words is not walked again), and its check, when the word before's found
//! something, runs on that word's entries with each thread one lane on.
//!
//! The collection reads a lane's commands once per warp, not once per lane: the lanes right
//! after a thread that are each the one before moved by one distance ([`Lanes::followers`])
//! make the thread's accesses moved, so both passes take their accesses from the thread's
//! commands (the first tallies them in strided loops; the second finds the followers that
//! add no entry from the rows of uncollected words), and only the commands of followers
//! that do add entries are read.

use rayon::prelude::*;
use weft_program::{Command, Program, ThreadId};

use crate::entries::Chunk;
use crate::{Accumulator, CHUNK, Context, HappensBeforeQuery, SAME_INSTRUCTION_CAP};

/// Chunks of one run of shifts checked in one task at most: a racy run is checked word by
/// word, and the runs are the unit of parallelism.
pub(crate) const MAX_RUN: usize = 64;

/// Per thread of the CTA, whether it is a lane shift of the thread before.
#[derive(Debug, Default)]
pub(crate) struct Lanes {
    /// `Some(d)`: the thread is the next lane, in the same warp, after the thread before,
    /// and makes its accesses with every address moved by `d` bytes (a multiple of 4).
    shift: Vec<Option<u32>>,
    /// Whether the relation answers alike for every lane of every warp at the chain keys
    /// of the thread's accesses; asked for the threads of runs of shifts only.
    agree: Vec<bool>,
}

impl Lanes {
    /// The shifts of `program`'s threads under `hb` (none where `on` is false).
    pub(crate) fn of<H: HappensBeforeQuery + ?Sized>(program: &Program, hb: &H, on: bool) -> Self {
        let threads = &program.threads;
        let ws = program.warp_size() as usize;
        if !on || ws <= 1 {
            return Lanes::default();
        }
        let shift: Vec<Option<u32>> = (0..threads.len())
            .into_par_iter()
            .map(|t| {
                let prev = t.checked_sub(1).filter(|_| t % ws != 0)?;
                let keys = |u: usize| hb.chain_keys(ThreadId(u as u32));
                match (keys(prev), keys(t)) {
                    // Lanes that block at the same nodes at the same commands share one
                    // row of keys (`barrier_graph::hb`): the same slice, not compared.
                    (Some(a), Some(b)) if std::ptr::eq(a, b) || a == b => {}
                    _ => return None,
                }
                lane_shift(&threads[prev].commands, &threads[t].commands)
            })
            .collect();
        let warps = threads.len().div_ceil(ws) as u32;
        let mut agree = vec![false; threads.len()];
        // Per chain key: 0 not asked, 1 every warp's lanes agree, 2 not.
        let mut memo: Vec<u8> = Vec::new();
        let mut t = 0;
        while t < threads.len() {
            let end = t + 1 + shift[t + 1..].iter().take_while(|s| s.is_some()).count();
            if end > t + 1 {
                // The run's lanes have the same chain keys: its first lane's are asked.
                let ok = keys_agree(
                    hb,
                    ThreadId(t as u32),
                    &threads[t].commands,
                    warps,
                    &mut memo,
                );
                agree[t..end].fill(ok);
            }
            t = end;
        }
        Lanes { shift, agree }
    }

    fn shift(&self, t: u32) -> Option<u32> {
        self.shift.get(t as usize).copied().flatten()
    }

    /// Whether some thread is a lane shift.
    pub(crate) fn any(&self) -> bool {
        self.shift.iter().any(Option::is_some)
    }

    /// For actor `t`, a lane shift whose lanes agree at its chain keys: the chunks its
    /// accesses are moved by from the thread before's.
    pub(crate) fn step(&self, t: usize) -> Option<u32> {
        let d = self.shift.get(t).copied().flatten()?;
        (self.agree.get(t).copied().unwrap_or(false)).then_some(d / CHUNK as u32)
    }

    /// The threads right after actor `t` that are each the thread before with every
    /// address moved by one same distance `d` (bytes, a multiple of 4): how many (`m`), and
    /// `d`. The `k`-th of them (from 1) makes `t`'s accesses with each address moved by
    /// `k·d` (wrapping), has `t`'s commands otherwise and its chain keys, and all `m` have
    /// one [`Self::step`] (they lie in one run of shifts, whose lanes agree or not as one).
    pub(crate) fn followers(&self, t: usize) -> (usize, u32) {
        let Some(&Some(d)) = self.shift.get(t + 1) else {
            return (0, 0);
        };
        let m = self.shift[t + 1..]
            .iter()
            .take_while(|&&s| s == Some(d))
            .count();
        (m, d)
    }

    fn agree(&self, t: u32) -> bool {
        self.agree.get(t as usize).copied().unwrap_or(false)
    }
}

/// Whether lane `cur` makes the accesses of lane `prev` (the same commands at the same
/// indices, but for the accesses' addresses and written values), every address moved by one
/// distance, a multiple of 4: that distance. (The chain keys are compared apart.)
///
/// The distance is the first access's; the commands are then compared in blocks without a
/// branch per command ([`Command::moved_mismatch`]): 310 lanes of a CudaDMA kernel's 2,663
/// commands each were 25.5 M instructions compared one by one through their views.
pub(crate) fn lane_shift(prev: &[Command], cur: &[Command]) -> Option<u32> {
    /// Commands compared between two looks at the result.
    const BLOCK: usize = 64;
    if prev.len() != cur.len() {
        return None;
    }
    // A lane without accesses has no distance; one whose first access moves by other than a
    // multiple of 4 is no shift, whatever the rest.
    let first = prev.iter().position(Command::is_access)?;
    let d = prev[first].address_distance(&cur[first]);
    if d % CHUNK as u32 != 0 {
        return None;
    }
    let mismatch = |xs: &[Command], ys: &[Command]| {
        xs.iter()
            .zip(ys)
            .fold(0, |n, (x, y)| n | x.moved_mismatch(y, d))
    };
    let (xs, ys) = (prev.chunks_exact(BLOCK), cur.chunks_exact(BLOCK));
    let (x_tail, y_tail) = (xs.remainder(), ys.remainder());
    let same = xs.zip(ys).all(|(x, y)| mismatch(x, y) == 0) && mismatch(x_tail, y_tail) == 0;
    same.then_some(d)
}

/// Whether the lanes of every warp agree at every chain key of thread `t`'s accesses
/// (`memo`: the answers per key so far).
fn keys_agree<H: HappensBeforeQuery + ?Sized>(
    hb: &H,
    t: ThreadId,
    commands: &[Command],
    warps: u32,
    memo: &mut Vec<u8>,
) -> bool {
    let Some(keys) = hb.chain_keys(t) else {
        return false;
    };
    let mut last = None;
    for (command, &key) in commands.iter().zip(keys) {
        if !command.is_access() || last == Some(key) {
            continue;
        }
        last = Some(key);
        let k = key as usize;
        if memo.len() <= k {
            memo.resize(k + 1, 0);
        }
        if memo[k] == 0 {
            memo[k] = if (0..warps).all(|w| hb.lanes_agree(key, w)) {
                1
            } else {
                2
            };
        }
        if memo[k] != 1 {
            return false;
        }
    }
    true
}

/// The counters one chunk's check adds, and whether it did anything else.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    race_tests: u64,
    thread_pairs_visited: u64,
    naive_pairs: u64,
    same_instruction_writes: u64,
    notes: u64,
    windows: u64,
    chunks_stopped: u64,
    words_over_budget: u64,
}

impl Counts {
    /// The accumulator's counters now.
    pub(crate) fn of(acc: &Accumulator) -> Self {
        Counts {
            race_tests: acc.race_tests,
            thread_pairs_visited: acc.thread_pairs_visited,
            naive_pairs: acc.naive_pairs,
            same_instruction_writes: acc.same_instruction_writes,
            notes: acc.notes,
            windows: acc.windows,
            chunks_stopped: acc.chunks_stopped,
            words_over_budget: acc.words_over_budget,
        }
    }

    /// What one chunk's check added between `self` (before it) and `after`, if it only
    /// counted: no access tested against a window that was not empty (so no race noted,
    /// recorded or not, and no written value looked at), no stop, no budget reached, no
    /// benign cap, the same-instruction cap not reached. `None` otherwise.
    pub(crate) fn quiet(self, after: Counts, acc: &Accumulator) -> Option<Counts> {
        let d = Counts {
            race_tests: after.race_tests.wrapping_sub(self.race_tests),
            thread_pairs_visited: after
                .thread_pairs_visited
                .wrapping_sub(self.thread_pairs_visited),
            naive_pairs: after.naive_pairs.wrapping_sub(self.naive_pairs),
            same_instruction_writes: after
                .same_instruction_writes
                .wrapping_sub(self.same_instruction_writes),
            notes: after.notes.wrapping_sub(self.notes),
            windows: after.windows.wrapping_sub(self.windows),
            chunks_stopped: after.chunks_stopped.wrapping_sub(self.chunks_stopped),
            words_over_budget: after.words_over_budget.wrapping_sub(self.words_over_budget),
        };
        (d.notes == 0
            && d.windows == 0
            && d.chunks_stopped == 0
            && d.words_over_budget == 0
            && !acc.benign_capped
            && d.same_instruction_writes < SAME_INSTRUCTION_CAP)
            .then_some(d)
    }

    /// Adds what a quiet chunk's check added ([`Self::quiet`]), as its check would have.
    pub(crate) fn replay(self, acc: &mut Accumulator) {
        acc.race_tests += self.race_tests;
        acc.thread_pairs_visited += self.thread_pairs_visited;
        acc.naive_pairs += self.naive_pairs;
        acc.same_instruction_writes += self.same_instruction_writes;
    }
}

impl<H: HappensBeforeQuery + ?Sized> Context<'_, H> {
    /// Whether the lane shifts apply to this program at all ([`Self::lanes_interchange`]).
    pub(crate) fn shifts_apply(&self) -> bool {
        self.tuning.lane_shifts && self.lanes_interchange()
    }

    /// Whether one lane's checks can stand for another's in this program (lane shifts,
    /// twin classes): no warp steps (the lock-step order depends on each lane's steps, not
    /// on chain keys) and lanes to compare.
    pub(crate) fn lanes_interchange(&self) -> bool {
        self.sweepable && !self.config.warp_sync && self.program.warp_size() > 1
    }

    /// Whether `cur` is `prev` on the next lanes (see the module's documentation), so
    /// that its check would do exactly what `prev`'s did.
    pub(crate) fn shifted(&self, prev: &Chunk, cur: &Chunk, lanes: &Lanes) -> bool {
        let (a, b) = (&prev.entries, &cur.entries);
        if a.len() != b.len() || a.is_empty() {
            return false;
        }
        let Some(delta) = cur
            .chunk
            .checked_sub(prev.chunk)
            .and_then(|d| d.checked_mul(CHUNK as u32))
        else {
            return false;
        };
        let mut k = 0;
        while let (Some(x), Some(y)) = (a.get(k), b.get(k)) {
            let (x, y) = (x.thread, y.thread);
            if x.checked_add(1) != Some(y) || lanes.shift(y) != Some(delta) || !lanes.agree(x) {
                return false;
            }
            let n = a[k..].iter().take_while(|e| e.thread == x).count();
            if b[k..].iter().take_while(|e| e.thread == y).count() != n {
                return false;
            }
            k += n;
        }
        true
    }
}
