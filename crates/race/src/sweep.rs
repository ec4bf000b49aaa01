//! A linear proof that a chunk is race-free, tried before the thread-pair merges.
//!
//! The merges cost every pair of threads that touch a chunk: a race-free kernel whose 128
//! threads each visit every word in turn, separated by barriers (a rotation, `no_period`
//! with a long loop), paid 128 × 127 / 2 merges per word: 6.7·10⁸ happens-before tests and
//! 90 s for 4.7·10⁶ commands.
//!
//! The sweep visits the chunk's accesses once, in an order that respects each thread's
//! program order, keeping the last write and, per thread, its latest read since that write
//! (FastTrack's epochs, Flanagan and Freund, PLDI 2009): a read is tested against the last
//! write, a write against the last write and the reads kept. When every test finds the
//! pair ordered, no two accesses of the chunk are concurrent where one writes:
//!
//! - writes are totally ordered (each was ordered after the previous one: transitivity);
//! - a read `r` and a later-visited write `w`: the latest read `r'` of `r`'s thread before
//!   the first write `w₁` visited after `r` was tested against `w₁`, so `r` (program order)
//!   ≤ `r'` → `w₁` → … → `w`;
//! - a write `w` and a later-visited read `r`: the last write when `r` was visited was `w`
//!   or a write after it, and it was tested against `r`.
//!
//! That needs no property of the order beyond program order per thread, so a poor order
//! can only make a test fail, never hide a race: on the first failing test the chunk goes
//! to the exact merges, which report what they always did. Reads and writes are not told
//! apart by byte (the chunk is one location), an atomic counts as a write, and a chunk with
//! an asynchronous copy or an over-approximated extent is not swept: each makes the sweep
//! conservative or inapplicable, never wrong. The argument needs a transitive relation: a
//! program with warp steps (`--warp-sync`) is not swept, because the relation's lock-step
//! order within a warp does not compose with its barrier intervals in the constant-time
//! test (the merges never chain tests, so they do not need it). The order used is
//! [`HappensBeforeQuery::epoch`], then thread, then program index: for the barrier-graph's
//! relation, the last dynamic barrier a thread blocked at, whose numbering follows the
//! graph's edges, so the accesses of one barrier phase come before the next phase's.

use weft_program::{CommandView, ThreadId};

use crate::{Context, HappensBeforeQuery, ThreadLists, commands_of};

/// Threads of a chunk below which the merges are as cheap as the sweep.
const MIN_THREADS: usize = 3;

/// Tests per access the sweep makes at most before it gives the chunk to the merges (a
/// write after reads of many threads tests each of them; the merges bound the rest).
const TESTS_PER_ACCESS: u64 = 8;

/// No read of this thread kept since the last write.
const NONE: u32 = u32::MAX;

impl<H: HappensBeforeQuery + ?Sized> Context<'_, H> {
    /// When the sweep proves the chunk of `lists` (one per thread, sorted by thread)
    /// race-free: the happens-before tests it made. `None`: not proved (a test failed, or
    /// the chunk is not one the sweep handles); the merges decide.
    pub(crate) fn sweep_race_free(&self, lists: &[ThreadLists<'_>]) -> Option<u64> {
        if !self.sweepable || lists.len() < MIN_THREADS || lists.iter().all(|l| l.writes.is_empty())
        {
            return None;
        }
        let threads = self.program.threads.len();
        // (epoch, list, program index, writes, chain key), sorted into the visiting order.
        let mut order: Vec<(u32, u32, u32, bool, u32)> = Vec::new();
        for (x, list) in lists.iter().enumerate() {
            if list.thread as usize >= threads {
                return None;
            }
            let commands = commands_of(self.program, list.thread as usize);
            for e in list.reads.iter().chain(list.writes) {
                match commands.get(e.index as usize).map(|c| c.view()) {
                    Some(CommandView::Access { approx: false, .. }) => {}
                    _ => return None,
                }
                let epoch = self.hb.epoch((ThreadId(list.thread), e.index), e.key)?;
                order.push((epoch, x as u32, e.index, e.writes() != 0, e.key));
            }
        }
        order.sort_unstable();
        let limit = TESTS_PER_ACCESS.saturating_mul(order.len() as u64);
        let mut tests = 0u64;
        let mut last: Option<(u32, u32)> = None;
        // The reads kept (list, index), and per list its slot there.
        let mut reads: Vec<(u32, u32)> = Vec::new();
        let mut slot = vec![NONE; lists.len()];
        let at = |x: u32, i: u32| (ThreadId(lists[x as usize].thread), i);
        for (_, x, i, writes, key) in order {
            if let Some((lx, li)) = last
                && lx != x
            {
                tests += 1;
                if !self.hb.ordered_at(at(lx, li), at(x, i), key) {
                    return None;
                }
            }
            if writes {
                for &(rx, ri) in &reads {
                    if rx != x {
                        tests += 1;
                        if !self.hb.ordered_at(at(rx, ri), at(x, i), key) {
                            return None;
                        }
                    }
                    slot[rx as usize] = NONE;
                }
                reads.clear();
                last = Some((x, i));
            } else {
                match slot[x as usize] {
                    NONE => {
                        slot[x as usize] = reads.len() as u32;
                        reads.push((x, i));
                    }
                    s => reads[s as usize].1 = i,
                }
            }
            if tests > limit {
                return None;
            }
        }
        Some(tests)
    }
}
