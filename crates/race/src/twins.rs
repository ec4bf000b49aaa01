//! Lanes of one warp that make the same accesses in a chunk: their thread pairs are decided
//! once per pair of classes.
//!
//! A warp matrix store (`wmma.store`) is modelled as every lane writing the warp's whole
//! fragment (its layout is opaque), and a warp's lanes load a tile they all read the same
//! way: in such a word every lane of the warp has the same entries — the same program
//! indices, chain keys, bytes, occurrences, and commands (instruction, kind, address, width,
//! flags, written value). A CUTLASS wmma epilogue's word is stored by the 32 lanes of a warp
//! in each of its iterations, so the merges tested its 496 lane pairs one by one (and the
//! same-instruction count joined each), every one finding the same: 5·10⁷ happens-before
//! tests for one kernel, 80% of its race stage.
//!
//! [`Twins::of`] puts the lists of a chunk into *twin classes*: lanes of one warp whose
//! entries and commands are equal but for the thread. Where, besides, the relation answers
//! alike for every lane of the warp at every chain key of the chunk's threads
//! ([`HappensBeforeQuery::lanes_agree`]), every test a merge of two CTA threads makes is
//! program order within a thread, or a bound of the node of a chain key of one of the two
//! at the other thread, which every lane of that one's warp shares (the argument of the
//! lane shifts, `shift` module; a program with warp steps, whose lock-step order depends
//! on the lanes' steps, has no twins). So two thread pairs `(lo, hi)` and `(lo', hi')`
//! with `lo`, `lo'` in one class and `hi`, `hi'` in one class make exactly the same tests,
//! get the same answers and see the same windows, whose keys are the same too: where the
//! first pair's merges noted no race (a quiet merge), the second's note none either, and
//! add only the same counts, which the chunk's check adds without merging. Where they
//! noted races, the second's note and record the same races in the same order, at the
//! same program indices, on its own two threads: the first pair's reports are logged
//! ([`Reported`]) and the second's are that log with its threads put in ([`replay`]),
//! through the accumulator's own `note` and `record` (a Triton warp-specialized kernel's
//! flag word, stored alike by every lane of four warps: 6,144 racing thread pairs per
//! word, each merged before). The same holds for
//! the join of the same-instruction rule, whose count and tests per class pair are added
//! the same way (up to its cap, where the exact join takes over).

use rustc_hash::FxHashMap;
use weft_program::Command;

use crate::{AccessSite, Accumulator, Context, HappensBeforeQuery, ThreadLists};
use weft_program::{InstId, ThreadId};

/// No twin class: an agent (each is a warp of its own, and merges with it are not
/// replayed).
pub(crate) const NO_TWIN: u32 = u32::MAX;

/// Classes of a warp's lanes a new list is compared with at most (the latest first): a warp
/// whose lanes all differ costs at most that many comparisons per list.
const MAX_COMPARED: usize = 4;

/// The twin classes of one chunk's lists.
#[derive(Debug, Default)]
pub(crate) struct Twins {
    /// Per list of the chunk, its class, or [`NO_TWIN`]; empty where no list has a class
    /// of several lanes.
    of: Vec<u32>,
    /// Per class, whether it has several lanes (a pair of two classes of one lane each is
    /// one thread pair: nothing to keep).
    shared: Vec<bool>,
    /// Per list, the end of the run of lists after it of its class.
    run_end: Vec<u32>,
    /// Space [`Context::twins`] works in, kept with the classes so that the next chunk's
    /// classes reuse it: per class its first list and its lanes, per warp its lists and
    /// first class, the chain keys of the classes' first lists.
    scratch: Scratch,
}

/// [`Twins::scratch`]: per class its first list and its lanes, per warp its lists and first
/// class, the chain keys of the classes' first lists.
type Scratch = (Vec<usize>, Vec<u32>, Vec<(usize, usize, u32)>, Vec<u32>);

impl Twins {
    /// The class pair of lists `x` and `y` (lower thread's class first) when a thread pair
    /// of these classes may come again: both have a class, one of them of several lanes.
    pub(crate) fn pair(&self, x: usize, y: usize) -> Option<(u32, u32)> {
        let (lo, hi) = if x < y { (x, y) } else { (y, x) };
        let (a, b) = (*self.of.get(lo)?, *self.of.get(hi)?);
        let shared = |c: u32| self.shared.get(c as usize).copied().unwrap_or(false);
        (a != NO_TWIN && b != NO_TWIN && (shared(a) || shared(b))).then_some((a, b))
    }
}

impl Twins {
    /// Whether some class has several lanes.
    #[cfg(test)]
    pub(crate) fn any_shared(&self) -> bool {
        self.shared.contains(&true)
    }

    /// Whether list `x` is of a class of several lanes.
    pub(crate) fn shared_at(&self, x: usize) -> bool {
        self.of
            .get(x)
            .and_then(|&c| self.shared.get(c as usize))
            .copied()
            .unwrap_or(false)
    }

    /// The thread pairs of row `x` with the lists `readers` and then those of `ranges` (the
    /// order in which the row visits them, before the chunk has found anything, so none of
    /// them skips the writes' merge), when each is of a class pair found quiet before
    /// (`quiet`) and none reaches the word's budget of tests (`end`, counted from
    /// `spent`): how many, and the counts their merges add. `None`: the row is visited pair
    /// by pair. A run of lists of one class costs one lookup.
    pub(crate) fn replay_row(
        &self,
        x: usize,
        readers: &[usize],
        ranges: [std::ops::Range<usize>; 2],
        quiet: &FxHashMap<(u32, u32, bool), Quiet>,
        spent: u64,
        end: Option<u64>,
    ) -> Option<(u64, Quiet)> {
        let a = *self.of.get(x)?;
        let mut visits = 0u64;
        let mut sum = Quiet {
            tests: 0,
            windows: 0,
        };
        // The tests of the last pair: the budget is checked before each pair, and the sums
        // only grow, so the check before the last decides.
        let mut last = 0u64;
        let mut add = |y: usize, n: u64| -> Option<()> {
            let b = *self.of.get(y)?;
            if b == NO_TWIN {
                return None;
            }
            let key = if x < y { (a, b, false) } else { (b, a, false) };
            let q = quiet.get(&key)?;
            visits += n;
            sum.tests = sum.tests.saturating_add(q.tests.saturating_mul(n));
            sum.windows = sum.windows.saturating_add(q.windows.saturating_mul(n));
            last = q.tests;
            Some(())
        };
        for &y in readers {
            add(y, 1)?;
        }
        for range in ranges {
            let mut y = range.start;
            while y < range.end {
                let to = (*self.run_end.get(y)? as usize).min(range.end);
                add(y, (to - y) as u64)?;
                y = to;
            }
        }
        let before_last = sum.tests - last;
        if visits > 0 && end.is_some_and(|end| spent.saturating_add(before_last) >= end) {
            return None;
        }
        Some((visits, sum))
    }
}

/// Reports of one thread pair's merges kept at most: a longer log is not kept (its pairs
/// are merged as before).
const MAX_LOG: usize = 4096;

/// Reports kept at most over all class pairs of one chunk.
const MAX_LOGGED: usize = 1 << 16;

/// What one [`Context::report`](crate::Context) call of a merge left in the accumulator:
/// a note of a race reported in an earlier chunk, or a record.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Reported {
    Note {
        a: InstId,
        b: InstId,
        approx: bool,
        benign: bool,
    },
    Record {
        first: AccessSite,
        second: AccessSite,
        addr: u32,
        benign: bool,
    },
}

/// Adds `r` to a merge's log, up to one past [`MAX_LOG`] (which marks it too long).
#[inline]
pub(crate) fn log(log: &mut Vec<Reported>, r: Reported) {
    if log.len() <= MAX_LOG {
        log.push(r);
    }
}

/// Per twin class pair (and whether the writes' merge was skipped) of one chunk, the
/// counts and the reports of a thread pair of them whose merges noted something. Two
/// thread pairs of one class pair make the same tests with the same answers and see the
/// same windows (see the module's documentation): their merges report the same races in
/// the same order, at the same program indices, each on its own two threads. So a later
/// pair's merges are replaced by the log, its threads put in ([`replay`]): the same
/// notes and records, whatever the accumulator holds by then (saturated pairs, capped
/// benign pairs and representatives are decided by [`Accumulator::note`] and
/// [`Accumulator::record`] as they would be at the merges).
#[derive(Default)]
pub(crate) struct NoisyMerges {
    pub(crate) merges: FxHashMap<(u32, u32, bool), (Quiet, Vec<Reported>)>,
    /// Reports kept in `merges`.
    logged: usize,
    /// A log's space, for the next pair whose merges are logged.
    pub(crate) spare: Vec<Reported>,
}

impl NoisyMerges {
    /// Keeps the counts and log of a class pair's merges, if the log is complete and the
    /// chunk's logs have room.
    pub(crate) fn keep(&mut self, key: (u32, u32, bool), q: Quiet, log: Vec<Reported>) {
        if log.len() <= MAX_LOG && self.logged + log.len() <= MAX_LOGGED {
            self.logged += log.len();
            self.merges.insert(key, (q, log));
        } else {
            self.spare = log;
        }
    }
}

/// What the merges of the thread pair `(lo, hi)` would report, from the `log` of another
/// pair of the same twin classes (`lo` the lower thread of both).
pub(crate) fn replay(
    acc: &mut Accumulator,
    log: &[Reported],
    (lo, hi): (ThreadId, ThreadId),
    detail: bool,
) {
    for r in log {
        match *r {
            Reported::Note {
                a,
                b,
                approx,
                benign,
            } => {
                acc.note(a, b, approx, benign);
            }
            Reported::Record {
                mut first,
                mut second,
                addr,
                benign,
            } => {
                first.thread = lo;
                second.thread = hi;
                acc.record(first, second, addr, benign, detail);
            }
        }
    }
}

/// What a class pair's quiet merges added to the counts: the happens-before tests and the
/// accesses tested against a window that was not empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Quiet {
    pub(crate) tests: u64,
    pub(crate) windows: u64,
}

impl<H: HappensBeforeQuery + ?Sized> Context<'_, H> {
    /// Whether twin classes apply at all ([`Self::lanes_interchange`]).
    pub(crate) fn twins_apply(&self) -> bool {
        self.tuning.twins && self.lanes_interchange()
    }

    /// The twin classes of the chunk whose lists are `lists`, kept in `slot`: made the
    /// first time a check of the chunk asks, in the space of the last chunk's
    /// (`acc.spare_twins`). `None` where twin classes do not apply.
    pub(crate) fn chunk_twins<'s>(
        &self,
        slot: &'s mut Option<Twins>,
        lists: &[ThreadLists<'_>],
        acc: &mut Accumulator,
    ) -> Option<&'s Twins> {
        if !self.twins_apply() {
            return None;
        }
        Some(slot.get_or_insert_with(|| {
            self.twins(
                lists,
                &mut acc.lanes_agree,
                std::mem::take(&mut acc.spare_twins.0),
            )
        }))
    }

    /// The twin classes of a chunk's `lists` (sorted by thread), in the vectors of `out`
    /// (an earlier chunk's classes, whose space they reuse); `agree` keeps the answers of
    /// [`HappensBeforeQuery::lanes_agree`] per (chain key, warp) between chunks.
    pub(crate) fn twins(
        &self,
        lists: &[ThreadLists<'_>],
        agree: &mut FxHashMap<(u32, u32), bool>,
        out: Twins,
    ) -> Twins {
        self.classes(lists, agree, out, true)
    }

    /// [`Self::twins`], without [`Self::may_have_twins`] where `pretest` is false.
    pub(crate) fn classes(
        &self,
        lists: &[ThreadLists<'_>],
        agree: &mut FxHashMap<(u32, u32), bool>,
        out: Twins,
        pretest: bool,
    ) -> Twins {
        let threads = self.program.threads.len();
        // Only the CTA's threads: agents come last, each a warp of its own.
        let cta = lists.partition_point(|l| (l.thread as usize) < threads);
        let Twins {
            mut of,
            mut shared,
            mut run_end,
            scratch: (mut firsts, mut members, mut warps, mut keys),
        } = out;
        of.clear();
        shared.clear();
        run_end.clear();
        firsts.clear();
        members.clear();
        warps.clear();
        keys.clear();
        if !self.twins_apply() || (pretest && !self.may_have_twins(&lists[..cta])) {
            // No classes, or every list would be a class of its own: no pair of classes to
            // keep, which no classes say as well (`pair` and `shared_at` answer `None` and
            // `false`).
            return Twins {
                of,
                shared,
                run_end,
                scratch: (firsts, members, warps, keys),
            };
        }
        of.resize(lists.len(), NO_TWIN);
        // Per class, its first list and its lanes (`firsts`, `members`); per warp of the
        // chunk, its lists and its first class (`warps`).
        let mut start = 0;
        while start < cta {
            let warp = self.warp(lists[start].thread);
            let end = start
                + lists[start..cta]
                    .iter()
                    .position(|l| self.warp(l.thread) != warp)
                    .unwrap_or(cta - start);
            let first_class = firsts.len();
            warps.push((start, end, first_class as u32));
            for x in start..end {
                let class = (first_class..firsts.len())
                    .rev()
                    .take(MAX_COMPARED)
                    .find(|&c| self.same_accesses(&lists[firsts[c]], &lists[x]));
                of[x] = match class {
                    Some(c) => {
                        members[c] += 1;
                        c as u32
                    }
                    None => {
                        firsts.push(x);
                        members.push(1);
                        firsts.len() as u32 - 1
                    }
                };
            }
            start = end;
        }
        // A warp with a class of several lanes needs its lanes to agree at every chain key
        // of the chunk's threads, which are those of the classes' first lists; else each of
        // its lanes is a class of its own.
        let mut keys_made = false;
        for (i, &(from, to, c0)) in warps.iter().enumerate() {
            let c1 = warps.get(i + 1).map_or(firsts.len(), |w| w.2 as usize);
            if members[c0 as usize..c1].iter().all(|&m| m < 2) {
                continue;
            }
            if !keys_made {
                keys_made = true;
                keys.extend(
                    (firsts.iter())
                        .flat_map(|&f| lists[f].reads.iter().chain(lists[f].writes))
                        .map(|e| e.key),
                );
                keys.sort_unstable();
                keys.dedup();
            }
            let warp = self.warp(lists[from].thread);
            let agrees = keys.iter().all(|&key| {
                *agree
                    .entry((key, warp))
                    .or_insert_with(|| self.hb.lanes_agree(key, warp))
            });
            if !agrees {
                for class in &mut of[from..to] {
                    let c = *class as usize;
                    if members[c] > 1 {
                        members[c] -= 1;
                        *class = members.len() as u32;
                        members.push(1);
                    }
                }
            }
        }
        shared.extend(members.iter().map(|&m| m > 1));
        run_end.resize(of.len(), 0);
        for x in (0..of.len()).rev() {
            run_end[x] = match of.get(x + 1) {
                Some(&c) if c == of[x] => run_end[x + 1],
                _ => x as u32 + 1,
            };
        }
        Twins {
            of,
            shared,
            run_end,
            scratch: (firsts, members, warps, keys),
        }
    }

    /// Whether the classes of the CTA threads' `lists` (sorted by thread) may have a class of
    /// several lanes: whether some list is like one of the [`MAX_COMPARED`] lists before it
    /// in its warp by [`Self::first_alike`], a necessary condition of
    /// [`Self::same_accesses`]. Where none is, the first list of each warp is a class, and
    /// each later list, compared with the classes of the lists before it (one each, so far),
    /// is not of theirs: every class has one lane. A chunk whose lanes of a warp access its
    /// word by different instructions, program indices or bytes (FlashAttention-2's backward
    /// kernel: 65,792 chunks of about five lists) is told so without its classes.
    pub(crate) fn may_have_twins(&self, lists: &[ThreadLists<'_>]) -> bool {
        let Some(first) = lists.first() else {
            return false;
        };
        // The first list of the current warp, and the warp.
        let (mut start, mut warp) = (0, self.warp(first.thread));
        for (x, list) in lists.iter().enumerate().skip(1) {
            let w = self.warp(list.thread);
            if w != warp {
                (start, warp) = (x, w);
                continue;
            }
            let from = x.saturating_sub(MAX_COMPARED).max(start);
            if lists[from..x].iter().any(|other| first_alike(other, list)) {
                return true;
            }
        }
        false
    }

    /// Whether two lists of lanes make the same accesses: equal entries but for the thread,
    /// from equal commands.
    fn same_accesses(&self, a: &ThreadLists<'_>, b: &ThreadLists<'_>) -> bool {
        if a.reads.len() != b.reads.len() || a.writes.len() != b.writes.len() {
            return false;
        }
        let commands = |t: u32| self.program.actor_commands(t as usize);
        let (ca, cb): (&[Command], &[Command]) = (commands(a.thread), commands(b.thread));
        let pairs = a
            .reads
            .iter()
            .zip(b.reads)
            .chain(a.writes.iter().zip(b.writes));
        for (x, y) in pairs {
            if !x.same_but_thread(y) {
                return false;
            }
            match (ca.get(x.index as usize), cb.get(y.index as usize)) {
                (Some(p), Some(q)) if p == q => {}
                _ => return false,
            }
        }
        true
    }
}

/// Whether two lists have as many reads and as many writes, and their first entries are the
/// same but for the thread: what [`Context::same_accesses`] compares first.
fn first_alike(a: &ThreadLists<'_>, b: &ThreadLists<'_>) -> bool {
    let first = |l: &ThreadLists<'_>| l.reads.first().or(l.writes.first()).copied();
    a.reads.len() == b.reads.len()
        && a.writes.len() == b.writes.len()
        && match (first(a), first(b)) {
            (Some(x), Some(y)) => x.same_but_thread(&y),
            _ => true,
        }
}
