//! Violation records and the helpers that name threads as warp/lane ranges.
//!
//! Reports keep structured data (the CLI renders text, JSON and SARIF from it); `message`
//! is a one-paragraph, compiler-style summary built from the same data.

use std::fmt;

use weft_program::{BarrierKey, InstId, Program, ThreadId};

/// The stable violation kinds of this stage (DESIGN.md, "Reports").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ViolationKind {
    /// Some threads block forever.
    Deadlock,
    /// Two operations of one generation with different thread counts (or warp masks), or
    /// `bar.red` mixed with `bar.sync`/`bar.arrive` in one generation.
    BarrierCountMismatch,
    /// More threads registered at a generation than it expected.
    BarrierOverflow,
    /// A generation completed by arrivals only, with no thread waiting on it, that is not
    /// ordered before the next generation of the same barrier.
    NoWaiter,
    /// A generation k+1 operation that is not ordered after generation k completes.
    UnsafeRecycling,
    /// A named-barrier id outside 0–15.
    InvalidBarrierId,
    /// A thread count of zero, not a multiple of the warp size, or larger than the CTA.
    InvalidThreadCount,
    /// Lanes of one warp at different aligned barrier instructions, or only part of a warp at
    /// an aligned barrier instruction, or a lane outside the mask of its `bar.warp.sync`.
    BarrierDivergence,
    /// An mbarrier operation on an address that holds no initialized mbarrier (never
    /// `init`ed, or invalidated), or one not ordered after the `init` (another execution
    /// runs it first).
    MbarrierUninitialized,
    /// `mbarrier.init` with a count outside `1..=2^20-1`.
    MbarrierInvalidCount,
    /// More arrivals in a phase than it has pending, or a tx-count out of range.
    MbarrierOverflow,
    /// `mbarrier.init` on a live mbarrier without `mbarrier.inval`.
    MbarrierReinit,
    /// An mbarrier operation whose phase, or a wait whose observed phase, depends on the
    /// interleaving (the mbarrier analogue of unsafe recycling).
    MbarrierPhaseRace,
    /// A load, store or copy of a live mbarrier object's bytes: ordered after its
    /// `mbarrier.init` and not after an `mbarrier.inval` of it.
    MbarrierReused,
}

impl ViolationKind {
    /// The stable kebab-case name used in JSON and SARIF rule ids.
    pub fn as_str(&self) -> &'static str {
        match self {
            ViolationKind::Deadlock => "deadlock",
            ViolationKind::BarrierCountMismatch => "barrier-count-mismatch",
            ViolationKind::BarrierOverflow => "barrier-overflow",
            ViolationKind::NoWaiter => "no-waiter",
            ViolationKind::UnsafeRecycling => "unsafe-recycling",
            ViolationKind::InvalidBarrierId => "invalid-barrier-id",
            ViolationKind::InvalidThreadCount => "invalid-thread-count",
            ViolationKind::BarrierDivergence => "barrier-divergence",
            ViolationKind::MbarrierUninitialized => "mbarrier-uninitialized",
            ViolationKind::MbarrierInvalidCount => "mbarrier-invalid-count",
            ViolationKind::MbarrierOverflow => "mbarrier-overflow",
            ViolationKind::MbarrierReinit => "mbarrier-reinit",
            ViolationKind::MbarrierPhaseRace => "mbarrier-phase-race",
            ViolationKind::MbarrierReused => "mbarrier-reused",
        }
    }
}

impl fmt::Display for ViolationKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One command of one thread, with the static instruction it came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CommandRef {
    /// The thread.
    pub thread: ThreadId,
    /// Index of the command in the thread's program.
    pub index: u32,
    /// The instruction that produced it (its PTX/CUDA location is in the `SourceTable`).
    pub inst: InstId,
}

/// A contiguous range of threads `first..=last`, rendered as warps and lanes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ThreadRange {
    /// First thread.
    pub first: ThreadId,
    /// Last thread (inclusive).
    pub last: ThreadId,
    /// Lanes per warp of the program (for rendering).
    pub warp_size: u32,
}

impl ThreadRange {
    /// Number of threads in the range.
    pub fn len(&self) -> u32 {
        self.last.0 - self.first.0 + 1
    }

    /// Always false: a range holds at least one thread.
    pub fn is_empty(&self) -> bool {
        false
    }
}

/// Rendered by [`describe_threads`].
impl fmt::Display for ThreadRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&describe_threads(
            [(self.first.0, self.last.0)],
            self.warp_size,
        ))
    }
}

/// The one rendering of thread ranges (`first..=last` each, sorted), used by every report:
/// as warps and lanes, `warp 0`, `warps 0-1`, `warp 2 lanes 0-15`, `warp 0 lane 7`,
/// `warp 0 lanes 16-31, warp 1, warp 2 lanes 0-15`; with warps of one lane (the formal
/// semantics' tests), `thread 5`, `threads 5-9`. No ranges: `no threads`.
pub fn describe_threads(ranges: impl IntoIterator<Item = (u32, u32)>, warp_size: u32) -> String {
    let mut parts = Vec::new();
    for (first, last) in ranges {
        describe_range(first, last, warp_size, &mut parts);
    }
    if parts.is_empty() {
        "no threads".to_owned()
    } else {
        parts.join(", ")
    }
}

fn describe_range(first: u32, last: u32, ws: u32, parts: &mut Vec<String>) {
    if ws <= 1 {
        parts.push(if first == last {
            format!("thread {first}")
        } else {
            format!("threads {first}-{last}")
        });
        return;
    }
    let (fw, lw) = (first / ws, last / ws);
    let lanes = |w: u32, lo: u32, hi: u32| {
        if lo == hi {
            format!("warp {w} lane {lo}")
        } else {
            format!("warp {w} lanes {lo}-{hi}")
        }
    };
    if fw == lw {
        if first % ws == 0 && (last + 1) % ws == 0 {
            parts.push(format!("warp {fw}"));
        } else {
            parts.push(lanes(fw, first % ws, last % ws));
        }
        return;
    }
    // Head (partial first warp), full warps, tail (partial last warp).
    let mut full_lo = fw;
    if first % ws != 0 {
        parts.push(lanes(fw, first % ws, ws - 1));
        full_lo = fw + 1;
    }
    let tail = (last + 1) % ws != 0;
    let full_hi = if tail { lw.checked_sub(1) } else { Some(lw) };
    if let Some(full_hi) = full_hi.filter(|&hi| full_lo <= hi) {
        if full_lo == full_hi {
            parts.push(format!("warp {full_lo}"));
        } else {
            parts.push(format!("warps {full_lo}-{full_hi}"));
        }
    }
    if tail {
        parts.push(lanes(lw, 0, last % ws));
    }
}

/// The instruction of command `index` of `thread`. Every `(thread, index)` the stages pass
/// here comes from replaying `program` itself (a participant, a waiter, an mbarrier
/// operation), so it names an existing command and indexing cannot fail.
pub(crate) fn inst_at(program: &Program, thread: ThreadId, index: u32) -> InstId {
    program.threads[thread.index()].commands[index as usize].inst()
}

/// Groups `(thread, key)` pairs, sorted by thread, into maximal ranges of consecutive
/// threads with equal keys.
pub(crate) fn group_threads<K: PartialEq + Copy>(
    items: impl IntoIterator<Item = (ThreadId, K)>,
    warp_size: u32,
) -> Vec<(ThreadRange, K)> {
    let mut out: Vec<(ThreadRange, K)> = Vec::new();
    for (t, k) in items {
        if let Some((range, key)) = out.last_mut() {
            if *key == k && range.last.0.checked_add(1) == Some(t.0) {
                range.last = t;
                continue;
            }
        }
        out.push((
            ThreadRange {
                first: t,
                last: t,
                warp_size,
            },
            k,
        ));
    }
    out
}

/// Joins displayable items with `", "`.
pub(crate) fn join<T: fmt::Display>(items: impl IntoIterator<Item = T>) -> String {
    let mut s = String::new();
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            s.push_str(", ");
        }
        s.push_str(&item.to_string());
    }
    s
}

/// What a thread that did not register at a blocked generation was doing when the replay
/// stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ThreadState {
    /// Blocked at another (or the same) barrier's open generation, at this instruction.
    Blocked {
        /// The barrier.
        key: BarrierKey,
        /// Its open generation.
        generation: u32,
        /// The blocking instruction.
        inst: InstId,
    },
    /// The thread exited.
    Exited,
    /// The thread's program ended without exit (the emulation stopped it, or it trapped).
    Stopped,
}

impl fmt::Display for ThreadState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ThreadState::Blocked {
                key, generation, ..
            } => write!(f, "blocked at {key} generation {generation}"),
            ThreadState::Exited => f.write_str("exited"),
            ThreadState::Stopped => f.write_str("stopped"),
        }
    }
}

/// One open generation that blocked threads wait on, as a deadlock report shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BlockedGeneration {
    /// The barrier.
    pub key: BarrierKey,
    /// The open generation (1-based).
    pub generation: u32,
    /// Threads it expects.
    pub expected: u32,
    /// Threads registered so far (exited lanes counted as PTX counts them).
    pub registered: u32,
    /// Threads blocked on it, grouped by range and blocking instruction.
    pub blocked: Vec<(ThreadRange, InstId)>,
    /// Threads that arrived (without blocking), grouped by range and instruction.
    pub arrived: Vec<(ThreadRange, InstId)>,
    /// Warps with no registration at this generation ("never came"), with what they were
    /// doing. For a counted barrier weft cannot know which of them were meant to come; all
    /// are listed.
    pub absent: Vec<(ThreadRange, ThreadState)>,
}

/// A synchronization violation: the program is not well-synchronized.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyncViolation {
    /// What is wrong.
    pub kind: ViolationKind,
    /// A compiler-style summary of the structured fields below.
    pub message: String,
    /// The barrier involved, when there is one.
    pub barrier: Option<BarrierKey>,
    /// The shared address of the mbarrier involved, when there is one (`generations` then
    /// holds 0-based phases).
    pub mbarrier: Option<u32>,
    /// The generation(s) involved (for `unsafe-recycling`: k and k+1).
    pub generations: Vec<u32>,
    /// The commands involved, most important first (the offending registration first).
    pub commands: Vec<CommandRef>,
    /// Threads involved, as ranges (for divergence: the lanes that did not come).
    pub threads: Vec<ThreadRange>,
    /// `(registered, expected)` threads where counts matter.
    pub counts: Option<(u32, u32)>,
    /// For `deadlock`: every open generation with blocked threads.
    pub blocked: Vec<BlockedGeneration>,
    /// For `deadlock`: a wait-for cycle of open generations, when there is one (each waits
    /// for a warp blocked at the next; the last waits for one blocked at the first).
    pub cycle: Vec<(BarrierKey, u32)>,
    /// The same violation at later generations (or phases), folded into this one: the first
    /// generation of each (see [`fold_repeats`]).
    pub also: Vec<u32>,
}

impl SyncViolation {
    #[cold]
    pub(crate) fn new(kind: ViolationKind, message: String) -> Self {
        SyncViolation {
            kind,
            message,
            barrier: None,
            mbarrier: None,
            generations: Vec::new(),
            commands: Vec::new(),
            threads: Vec::new(),
            counts: None,
            blocked: Vec::new(),
            cycle: Vec::new(),
            also: Vec::new(),
        }
    }
}

/// Folds each violation into the first one of the same kind, barrier or mbarrier,
/// instructions, threads and counts, which lists its first generation in
/// [`SyncViolation::also`]: a loop that recycles a barrier unsafely, or completes it by
/// arrivals only, trip after trip is one finding, not one per generation (80,000
/// generations were 80,000 violations and 36 MB of text). Deadlocks are never folded.
pub(crate) fn fold_repeats(violations: Vec<SyncViolation>) -> Vec<SyncViolation> {
    type Shape = (
        ViolationKind,
        Option<BarrierKey>,
        Option<u32>,
        Vec<InstId>,
        Vec<ThreadRange>,
        Option<(u32, u32)>,
    );
    let mut out: Vec<SyncViolation> = Vec::with_capacity(violations.len().min(1024));
    let mut first: rustc_hash::FxHashMap<Shape, usize> = rustc_hash::FxHashMap::default();
    for v in violations {
        let Some(&generation) = v.generations.first() else {
            out.push(v);
            continue;
        };
        if !v.blocked.is_empty() || !v.cycle.is_empty() {
            out.push(v);
            continue;
        }
        let shape = (
            v.kind,
            v.barrier,
            v.mbarrier,
            v.commands.iter().map(|c| c.inst).collect(),
            v.threads.clone(),
            v.counts,
        );
        match first.get(&shape) {
            Some(&i) => out[i].also.push(generation),
            None => {
                first.insert(shape, out.len());
                out.push(v);
            }
        }
    }
    out
}

impl fmt::Display for SyncViolation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind, self.message)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(a: u32, b: u32, ws: u32) -> String {
        ThreadRange {
            first: ThreadId(a),
            last: ThreadId(b),
            warp_size: ws,
        }
        .to_string()
    }

    #[test]
    fn ranges_render_as_warps_and_lanes() {
        assert_eq!(r(5, 5, 1), "thread 5");
        assert_eq!(r(5, 9, 1), "threads 5-9");
        assert_eq!(r(64, 95, 32), "warp 2");
        assert_eq!(r(67, 67, 32), "warp 2 lane 3");
        assert_eq!(r(64, 127, 32), "warps 2-3");
        assert_eq!(
            r(40, 100, 32),
            "warp 1 lanes 8-31, warp 2, warp 3 lanes 0-4"
        );
        let many = describe_threads([(0, 63), (80, 80)], 32);
        assert_eq!(many, "warps 0-1, warp 2 lane 16");
        assert_eq!(describe_threads([], 32), "no threads");
    }

    #[test]
    fn grouping_merges_consecutive_equal_keys() {
        let items = (0..8)
            .map(|t| (ThreadId(t), t / 3))
            .chain([(ThreadId(10), 3)]);
        let groups = group_threads(items, 1);
        let text: Vec<String> = groups.iter().map(|(r, k)| format!("{r}:{k}")).collect();
        assert_eq!(
            text,
            [
                "threads 0-2:0",
                "threads 3-5:1",
                "threads 6-7:2",
                "thread 10:3"
            ]
        );
    }
}
