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

use crate::{Context, HappensBeforeQuery, ThreadLists};

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
        for list in lists {
            if list.thread as usize >= threads {
                return None;
            }
        }
        // Each list's reads and writes, each in program order, merged by index (reads first
        // on a tie, as the tuple order puts them): the entries of the visiting order.
        let visit = |f: &mut dyn FnMut((u32, u32, u32, bool, u32))| -> Option<()> {
            for (x, list) in lists.iter().enumerate() {
                let commands = self.program.actor_commands(list.thread as usize);
                let (mut r, mut w) = (list.reads.iter().peekable(), list.writes.iter().peekable());
                loop {
                    let e = match (r.peek(), w.peek()) {
                        (Some(a), Some(b)) if b.index < a.index => w.next(),
                        (Some(_), _) => r.next(),
                        (None, _) => w.next(),
                    };
                    let Some(e) = e else { break };
                    match commands.get(e.index as usize).map(|c| c.view()) {
                        Some(CommandView::Access { approx: false, .. }) => {}
                        _ => return None,
                    }
                    let epoch = self.hb.epoch((ThreadId(list.thread), e.index), e.key)?;
                    f((epoch, x as u32, e.index, e.writes() != 0, e.key));
                }
            }
            Some(())
        };
        // The epochs are barrier numbers, few beside the accesses: a stable counting sort on
        // them keeps each list's program order and the lists' order, which is the tuple
        // order (a racy word's 10⁷ accesses spent a second in a comparison sort). The passes:
        // the epochs' range, the counts, the placing.
        let (mut low, mut high, mut total) = (u32::MAX, 0u32, 0usize);
        visit(&mut |o| {
            low = low.min(o.0);
            high = high.max(o.0);
            total += 1;
        })?;
        let mut order: Vec<(u32, u32, u32, bool, u32)>;
        let span = high.saturating_sub(low) as usize + 1;
        if span <= 2 * total + 1024 {
            let mut starts = vec![0usize; span + 1];
            visit(&mut |o| starts[(o.0 - low) as usize + 1] += 1)?;
            for i in 1..starts.len() {
                starts[i] += starts[i - 1];
            }
            order = vec![(0, 0, 0, false, 0); total];
            visit(&mut |o| {
                let slot = &mut starts[(o.0 - low) as usize];
                order[*slot] = o;
                *slot += 1;
            })?;
        } else {
            order = Vec::with_capacity(total);
            visit(&mut |o| order.push(o))?;
            order.sort_unstable();
        }
        debug_assert!(order.is_sorted());
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
