//! Shared-memory race detection over happens-before intervals.
//!
//! What weft promises (verdicts, the PTX ISA facts it relies on with their sections, the rules
//! for exited threads, mbarrier parity and same-instruction writes, every approximation) is
//! written down in the repository's `docs/semantics.md`.
//!
//! # Soundness contract
//!
//! Given a [`Program`] whose synchronization the barrier-graph stage proved
//! well-synchronized, and the happens-before relation it computed (sound and precise for
//! well-synchronized CTAs: WEFT paper, Lemma 1), [`find_races`] reports **every** pair of
//! accesses that race and **only** such pairs. Two accesses race when they come from different
//! threads, touch at least one common byte of shared memory, at least one writes, they are not
//! both atomics, they are not two plain writes of one dynamic instruction by lanes of one
//! warp (below), neither happens before the other, and no execution runs both
//! ([`weft_program::AsyncOps::excluded`]: a copy of the first side of a branch emulated on
//! both sides, against that thread's second side). May-happen accesses (under an
//! input-dependent guard) are checked as if they happen, which is sound.
//!
//! # Asynchronous copies
//!
//! Each asynchronous copy of [`Program::asyncs`] is an *agent* with one access, numbered after
//! the CTA's threads (agent `threads + g` is copy `g`; its access is command 0) and a warp of
//! its own: it never takes part in the same-instruction rule below and is not ordered by
//! `--warp-sync` lock-step. The happens-before relation orders it after its issue and before
//! its completion events (see [`weft_program::AsyncCopy`]); a race between a copy and its own
//! issuing thread is a race like any other, except with the commands and copies of the other
//! side of a branch whose first side issued it ([`weft_program::ExclusiveSides`]: the merge of
//! the thread with the copy leaves those commands out, two such copies are not merged).
//! [`missing_proxy_fences`] checks the proxy rule
//! for the async-proxy reads of bulk and TMA stores and of tensor-core operands.
//!
//! # Over-approximated extents
//!
//! Some accesses carry an extent that is only an upper bound of the bytes really accessed
//! (the `approx` flag of [`CommandView::Access`]: a TMA copy whose size lives in a tensor
//! map). A race in which either access is approximate may be an artifact of the extent —
//! the common bytes may lie only in the over-approximated part — so it cannot be decided:
//! such races go to [`RaceReport::possible`], grouped the same way, never to
//! [`RaceReport::races`]. Races between two exact accesses are unaffected.
//!
//! # One instruction, several lanes, one address
//!
//! The CUDA C Programming Guide (SIMT architecture) defines a store of several lanes of a
//! warp to one location: "If a non-atomic instruction executed by a warp writes to the same
//! location in global or shared memory for more than one of the threads of the warp, the
//! number of serialized writes that occur to that location varies depending on the compute
//! capability of the device, and which thread performs the final write is undefined." It is
//! one instruction of one warp, not an unordered pair of separate memory operations that can
//! interleave with other accesses, so two plain (non-atomic) writes by lanes of the same warp
//! from the same dynamic instruction are not a race (Triton's reductions store each warp's
//! partial result this way: all 32 lanes `st.shared` to `smem[warp]`). Different
//! instructions, different executions of one instruction (loop iterations), different warps,
//! and a write against an atomic or a read still race. An instruction is one kind of access
//! and makes at most one access per lane, so a read or an atomic never pairs with a write of
//! its own dynamic instruction; a `may` write and a vector (multi-byte) write are plain
//! writes like any other.
//!
//! "Same dynamic instruction" is: under [`Config::warp_sync`], the same warp step
//! ([`weft_program::ThreadProgram::steps`]); otherwise the same [`InstId`] and the same *occurrence* (the
//! k-th command of each lane from that instruction). Occurrences match the warp's dynamic
//! instruction when the lanes execute the instruction equally often up to that point
//! (convergent code, which is where the pattern occurs); a lane that skipped earlier
//! executions of it makes its k-th execution pair with another lane's k-th, and
//! `--warp-sync` gives the exact identity. Exempted pairs are not reported but counted in
//! [`RaceStats::same_instruction_writes`]; [`SAME_INSTRUCTION_WRITES_NOTE`] says why in a
//! sentence.
//!
//! Under [`Config::warp_sync`] the lanes of a warp run in lock-step, so two accesses of lanes
//! of one warp never race: different warp steps are ordered by the lock-step, and the same
//! step is one dynamic instruction, whose lanes' accesses are all plain writes, all reads, or
//! all atomics, none of which races by the rule above. Across warps, a command runs before
//! what a command of its warp at a later step happens before (and after what happens before
//! one at an earlier step): the merges move L(b) and E(b) by that too, where a pair could
//! race (`Context::lockstep_bound`).
//!
//! # Algorithm
//!
//! WEFT §5.2 makes each race test a constant-time interval lookup; this crate also avoids
//! testing every pair. Accesses are split into 4-byte aligned *chunks* (each entry keeps a
//! byte mask, so partial overlaps of vector and mixed-width accesses are exact) and sorted by
//! (chunk, thread, reads/writes, program index). For each chunk and each pair of threads
//! `t < u` of which at least one writes there, three merges test `t`'s writes against `u`'s
//! reads and writes and `t`'s reads against `u`'s writes. A merge walks the second list in
//! program order and keeps a window over the first list: because happens-before is monotone
//! in program order (if `a` happens before `b`, so does every earlier `a'` of `a`'s thread,
//! and `a` happens before every later `b'` of `b`'s thread), the accesses concurrent with `b`
//! form an interval `[L(b), E(b))` whose ends only move forward. So a merge costs
//! `O(|A| + |B|)` happens-before tests, and reports in `O(|B| × distinct instructions in the
//! window)`: the window is a multiset of distinct (instruction, bytes, written value) keys,
//! so even a racy loop of a million dynamic pairs costs one test per access. Keys that
//! differ only in the value (a racy loop storing a new value every trip) are grouped once the
//! window is unchanged for a second `b`: for writes of the same bytes at most one value
//! agrees with `b`'s (ids are interned), so a group records its benign pair and the lowest
//! index of the others in a few lookups, exactly what testing each key would leave; a window
//! of many keys is indexed by a hash map. Against an agent's one access, the merges' tests
//! are first made with nothing kept (the window stays empty where every pair is ordered, as
//! in most pairs of a GEMM's copies and tensor-core operands), and the merges themselves run
//! only where a window would hold an access. A pair of accesses spanning
//! several chunks is reported only in the chunk holding the first byte they share. Chunks are
//! processed in parallel with rayon. Entries are bucketed by chunk in one pass over the
//! threads in order (once a pass over the addresses has marked the chunks to check), which
//! leaves each bucket in (thread, program index) order (an access of
//! `len` bytes makes `len / 4 + 1` entries at most, so memory is linear in the bytes
//! accessed, not in the pairs), and the naive pair count the WEFT paper reports is computed
//! arithmetically per chunk.
//!
//! Races are grouped by their (unordered) pair of static instructions, with the
//! representative of the lowest thread pair tested and the number of racing thread pairs.
//!
//! # Racy programs
//!
//! The merges make the cost of a race-free program linear in its accesses per thread pair,
//! but a racy one would still pay for every pair of threads: 1024 threads each accessing one
//! word 10⁴ times are half a million thread pairs of 2·10⁴ tests each. Once a pair of static
//! instructions has been found racing in [`SATURATION`] thread pairs of a chunk
//! ([`DETAILS_CAP`] with [`Config::detail`]; fewer where many instruction pairs may race
//! there, [`SATURATION_RECORDS`]), it is *saturated* there (a thread pair merged for
//! another instruction pair records no race on it, only "at least"): a later thread pair
//! whose every candidate instruction pair in the chunk (one access of each thread, at least
//! one writing, not both atomic) is saturated is not tested at all, and the races it would
//! add are only counted as "at least" ([`Race::thread_pairs_at_least`]). Saturation loses no
//! instruction pair that races: a thread pair is skipped only when each instruction pair it could
//! report already is reported. Threads with over-approximated accesses are always tested.
//! Agents (asynchronous copies) saturate like threads. A pair of accesses spanning several
//! chunks is reported in the first, but counts as found in each chunk it spans: the later
//! ones saturate too, and the groups of instruction pairs skipped in any chunk are marked
//! "at least" when the report is built.
//! A pair of instructions that never races in a chunk (every access of the one ordered before
//! every access of the other) never saturates, so two threads that both execute it are never
//! skipped: 256 threads storing one value with 100 instructions after one ordered store of
//! another merged every thread pair, each recording 10⁴ benign races. A chunk past
//! [`HOT_RECORDS`] recorded races is *hot*: there a thread pair whose unsaturated instruction
//! pairs are each ordered in it (the last access of one instruction before the first of the
//! other, in one direction or the other) is passed over like a saturated one.
//! The saturation check of a thread pair costs the product of their distinct instructions
//! in the chunk, so it is made only while that is at most a small multiple of the accesses
//! it would save merging; and once every instruction pair that any two threads of the
//! chunk could race on is saturated, every later thread pair is skipped with no check. The
//! cost of a racy chunk is then its accesses plus at most a few lookups per thread pair,
//! not the product of the threads' accesses. A benign pair (two writes of the same value)
//! saturates like a race only where each of the two instructions writes one (address, width,
//! value) in the whole chunk (not necessarily the same one), so that no skipped thread pair
//! could have made it a real race. Likewise the exempt same-instruction write pairs of a chunk are
//! counted up to [`SAME_INSTRUCTION_CAP`], then reported as "at least" that many.
//!
//! Two limits lose instruction pairs, and say so (a third drops benign ones). A word whose search reaches
//! [`Config::max_word_tests`] happens-before tests is not searched further
//! ([`RaceStats::words_over_budget`]): benign pairs whose values differ from write to write
//! (a loop storing its trip count, each trip behind a barrier) never saturate, so every
//! thread pair is merged. Races there may be missing, so such a report proves nothing
//! race-free. And a chunk in which
//! [`MAX_RACING_PAIRS_PER_CHUNK`] distinct instruction pairs have been found racing (real
//! races, not benign or possible ones) is not searched further
//! ([`RaceStats::chunks_stopped`]). The program is racy either way; what is lost is the rest
//! of that chunk's racing instruction pairs, and the counts of those found become "at
//! least". The report's length is otherwise quadratic in the instructions: 400 copy
//! instructions racing on every word are 80,000 instruction pairs, 167 MB of JSON and 20 s.
//! Benign pairs are bounded the same way without stopping anything: a chunk records at most
//! [`MAX_BENIGN_PAIRS_PER_CHUNK`] distinct benign instruction pairs
//! ([`RaceStats::benign_words_capped`] counts the chunks that had more), and its search for
//! real races goes on; which pairs are kept is the chunk's own order of discovery, so the
//! report does not depend on how chunks are spread over threads.
//!
//! Architecture invariant: this crate does no IO and knows nothing of PTX text; it sees
//! commands, thread ids and instruction ids.

#![deny(missing_docs)]

use std::collections::BTreeSet;
use std::time::Instant;

use rayon::prelude::*;
use rustc_hash::{FxHashMap, FxHashSet};
use weft_program::{AccessKind, CommandView, InstId, Program, ThreadId};

/// Why lanes of one warp storing to one address in one instruction are not reported, in a
/// sentence a report can show next to [`RaceStats::same_instruction_writes`].
pub const SAME_INSTRUCTION_WRITES_NOTE: &str = "plain writes to one address by several lanes \
of a warp in one instruction are not a race: the CUDA C Programming Guide defines them (\"the \
number of serialized writes that occur to that location varies depending on the compute \
capability of the device, and which thread performs the final write is undefined\"), so one \
lane's value is stored";

/// The budget of happens-before tests per 4-byte word that the binary gives
/// [`Config::max_word_tests`] (`--max-race-tests`): about 2.5 s of one core on the development
/// machine, and 100 times the tests of the whole race check of the largest corpus kernel
/// (FlashAttention-4 sm100: 10⁶).
pub const DEFAULT_MAX_WORD_TESTS: u64 = 100_000_000;

/// Happens-before tests a recorded race counts as against [`Config::max_word_tests`]: what
/// recording it costs, about (a word whose thread pairs all race records every pair of
/// their accesses).
const RECORD_TESTS: u64 = 4;

/// How many `(address, thread, thread)` entries [`Race::details`] keeps at most.
pub const DETAILS_CAP: usize = 10_000;

/// Thread pairs of one chunk in which a pair of static instructions must be found racing
/// before later thread pairs that can only add to it are skipped (outside
/// [`Config::detail`]).
pub const SATURATION: u32 = 64;

/// Found records ([`SATURATION`] per instruction pair) a chunk spends before its pairs
/// saturate: where more than `SATURATION_RECORDS / SATURATION` instruction pairs may race
/// in a chunk, each saturates after `SATURATION_RECORDS` divided by their number of thread
/// pairs, at least 1 (outside [`Config::detail`]). A chunk of 55,000 copies from 100
/// instructions, 5,050 instruction pairs, made 64 merges per pair in each of 128 chunks:
/// 14 s, now one.
pub const SATURATION_RECORDS: u32 = SATURATION * 64;

/// Distinct racing instruction pairs found in one chunk after which its search stops (see
/// the crate documentation, *Racy programs*).
pub const MAX_RACING_PAIRS_PER_CHUNK: usize = 4096;

/// Distinct benign instruction pairs recorded per chunk at most; later ones there are not
/// reported ([`RaceStats::benign_words_capped`]). Benign pairs are warnings: the search for
/// real races in the chunk goes on. A word stored by 800 instructions of one value reported
/// 320,000 warnings (16 s of CPU, most of it recording and printing them; mutation run 44).
/// Above the 5,151 pairs of the stress inputs that test how benign pairs saturate.
pub const MAX_BENIGN_PAIRS_PER_CHUNK: usize = 8192;

/// Exempt same-instruction write pairs counted per chunk at most; beyond it the count is a
/// lower bound ([`RaceStats::same_instruction_writes_at_least`]). They are never races, so
/// this changes no verdict, only the number a note reports.
pub const SAME_INSTRUCTION_CAP: u64 = 1 << 16;

/// Distinct sites (instruction, kind) of a thread in a chunk up to which they are
/// collected by linear search; beyond, by sorting.
pub const MAX_SKIP_SITES: usize = 8;

/// A thread pair's saturation check (the product of the two threads' distinct sites in a
/// chunk) is made only while it costs at most this many times the merge it would save (the
/// two threads' accesses there).
const SITE_CHECK_FACTOR: usize = 4;

/// Races recorded in one chunk after which it is *hot*: a thread pair whose every instruction
/// pair that is not saturated is ordered in it, access by access of the two threads' first and
/// last accesses of each instruction (`OpenPairs`), is passed over like a saturated one.
/// A chunk gets there only where thread pairs that cannot be skipped record many races each:
/// 256 threads each storing one value to a word with 100 instructions, after one ordered
/// store of another value that keeps every thread pair from saturating, recorded 10⁴ races
/// per thread pair, 3·10⁸ in all (245 s).
pub const HOT_RECORDS: u64 = 1 << 20;

/// Instruction pairs not yet saturated (either way round) up to which a class pair of a hot
/// chunk is checked for [`OpenPairs`]. A thread pair's check costs at most two
/// happens-before queries per pair, against a merge that records a race per unordered pair
/// of its accesses. 100 stores of one value per thread with a barrier among them leave
/// 4,950 ordered pairs open (both ways round in one class): at 4,096 every thread pair of
/// 256 threads was merged (45 s, 1.4 GB; mutation run 45), at 16,384 none (1.3 s).
const MAX_OPEN_PAIRS: usize = 16384;

/// Distinct sites of a chunk up to which the chunk-wide saturation shortcut is computed
/// (its instruction pairs are a set of at most the square of this).
const MAX_UNIVERSE_SITES: usize = 512;

/// Bytes per chunk of the address grouping.
pub(crate) const CHUNK: u64 = 4;

mod entries;
use entries::{Collected, Entry, OCC_NONE, collect_entries};

mod shift;
mod sweep;
mod twins;
use twins::{Quiet, Reported, Twins};

/// Options of the race check.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Config {
    /// Lanes of one warp run in lock-step (`--warp-sync`): their accesses never race with
    /// each other.
    pub warp_sync: bool,
    /// Fill [`Race::details`] with every racing address and thread pair (up to
    /// [`DETAILS_CAP`]).
    pub detail: bool,
    /// Happens-before tests the search of one 4-byte word may make (`None`: no limit), each
    /// race recorded counting as `RECORD_TESTS` of them. A
    /// word that reaches it is not searched further ([`RaceStats::words_over_budget`]):
    /// races there may be missing, so a report with such a word proves nothing race-free.
    pub max_word_tests: Option<u64>,
}

/// A happens-before relation between commands, queried in constant time.
///
/// Implemented by the barrier-graph stage's intervals and, in tests, by brute force.
pub trait HappensBeforeQuery: Sync {
    /// Whether command `first` (thread, command index) happens before command `second` of
    /// another thread.
    fn ordered(&self, first: (ThreadId, u32), second: (ThreadId, u32)) -> bool;

    /// Optionally, a bound `n` such that the commands of `other` that happen before `second`
    /// are exactly those with index `< n`, for threads of different warps, and for lanes of
    /// one warp when either has no warp steps ([`weft_program::ThreadProgram::steps`]). Lets a merge find
    /// `L(b)` with one lookup instead of one [`ordered`](Self::ordered) test per step.
    fn before_bound(&self, _second: (ThreadId, u32), _other: ThreadId) -> Option<u32> {
        None
    }

    /// Optionally, a key of command `c` that [`Self::ordered_at`] and
    /// [`Self::before_bound_at`] take in place of a lookup of their own: the race check
    /// computes it once per access, walking each thread's commands in order.
    fn chain_key(&self, _c: (ThreadId, u32)) -> u32 {
        0
    }

    /// Optionally, the [`Self::chain_key`]s of all commands of a thread of the CTA, in
    /// program order: the race check walks each thread's commands and takes one slice per
    /// thread instead of one lookup per access. `None`: asked per command.
    fn chain_keys(&self, _thread: ThreadId) -> Option<&[u32]> {
        None
    }

    /// Optionally, whether every test that involves a command of chain key `key` (as the
    /// second command, or through its key's bounds) answers alike for every lane of `warp`
    /// in the same place: for the barrier-graph's relation, whether the lanes' bounds at
    /// the key's node agree. Lets the race check pass over a chunk whose accesses are the
    /// chunk before's moved to other lanes of the same warps ([`Tuning::lane_shifts`]).
    /// `false`: never assumed.
    fn lanes_agree(&self, _key: u32, _warp: u32) -> bool {
        false
    }

    /// [`Self::ordered`], given `second`'s [`Self::chain_key`].
    fn ordered_at(&self, first: (ThreadId, u32), second: (ThreadId, u32), _key: u32) -> bool {
        self.ordered(first, second)
    }

    /// [`Self::before_bound`], given `second`'s [`Self::chain_key`].
    fn before_bound_at(&self, second: (ThreadId, u32), _key: u32, other: ThreadId) -> Option<u32> {
        self.before_bound(second, other)
    }

    /// Optionally, for an asynchronous-copy agent (numbered after the CTA's threads): its
    /// issuer and a copy index `s` such that every copy of that issuer numbered `>= s`
    /// (agent `threads + s` on) happens after the agent's access. The merges pass over
    /// those pairs without testing them (a loop of `cp.async` and `cp.async.wait_all`
    /// makes a chain of copies per word, every pair of them ordered). `None`: test each.
    fn issuer_copies_after(&self, _agent: ThreadId) -> Option<(ThreadId, u32)> {
        None
    }

    /// Optionally, whether an agent is an operation of its issuer's tensor pipe
    /// ([`weft_program::AsyncCopy::tensor_pipe`]): every later such agent of the same issuer happens after
    /// it, and the merges pass over those pairs without testing them (a GEMM's MMAs all
    /// write one accumulator). `false`: test each.
    fn pipe_agent(&self, _agent: ThreadId) -> bool {
        false
    }

    /// Optionally, a number per command of a CTA thread, non-decreasing in program order,
    /// that mostly grows along happens-before (`key`: the command's [`Self::chain_key`]):
    /// the order in which the race-free sweep of a chunk (`sweep` module) visits its
    /// accesses. Any such numbering is sound (a poor one only sends more chunks to the
    /// merges); `None`: no sweep.
    fn epoch(&self, _command: (ThreadId, u32), _key: u32) -> Option<u32> {
        None
    }
}

impl HappensBeforeQuery for barrier_graph::HappensBefore {
    #[inline]
    fn ordered(&self, first: (ThreadId, u32), second: (ThreadId, u32)) -> bool {
        barrier_graph::HappensBefore::ordered(self, first, second)
    }

    #[inline]
    fn before_bound(&self, second: (ThreadId, u32), other: ThreadId) -> Option<u32> {
        Some(barrier_graph::HappensBefore::before_bound(
            self, second, other,
        ))
    }

    #[inline]
    fn chain_key(&self, c: (ThreadId, u32)) -> u32 {
        barrier_graph::HappensBefore::chain_key(self, c.0, c.1)
    }

    #[inline]
    fn chain_keys(&self, thread: ThreadId) -> Option<&[u32]> {
        barrier_graph::HappensBefore::chain_keys(self, thread)
    }

    #[inline]
    fn lanes_agree(&self, key: u32, warp: u32) -> bool {
        barrier_graph::HappensBefore::lanes_agree(self, key, warp)
    }

    #[inline]
    fn ordered_at(&self, first: (ThreadId, u32), second: (ThreadId, u32), key: u32) -> bool {
        barrier_graph::HappensBefore::ordered_at(self, first, second, key)
    }

    #[inline]
    fn before_bound_at(&self, second: (ThreadId, u32), key: u32, other: ThreadId) -> Option<u32> {
        Some(barrier_graph::HappensBefore::before_bound_at(
            self, second, key, other,
        ))
    }

    #[inline]
    fn issuer_copies_after(&self, agent: ThreadId) -> Option<(ThreadId, u32)> {
        barrier_graph::HappensBefore::issuer_copies_after(self, agent)
    }

    #[inline]
    fn pipe_agent(&self, agent: ThreadId) -> bool {
        barrier_graph::HappensBefore::pipe_agent(self, agent)
    }

    /// The chain key itself: one more than the last dynamic barrier the thread blocked at,
    /// at or before the command (0: none). Node ids follow the graph's edges (`pred <
    /// node`), so a command that happens before another of a different thread has an epoch
    /// no larger.
    #[inline]
    fn epoch(&self, _command: (ThreadId, u32), key: u32) -> Option<u32> {
        Some(key)
    }
}

/// The hazard a race represents, read in the order of its representative pair (lower thread
/// first).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Hazard {
    /// The first access writes, the second reads.
    ReadAfterWrite,
    /// The first access reads, the second writes.
    WriteAfterRead,
    /// Both write (or one is an atomic and the other a write or atomic).
    WriteAfterWrite,
}

impl Hazard {
    /// The kebab-case name: `read-after-write`, `write-after-read`, `write-after-write`.
    pub fn as_str(self) -> &'static str {
        match self {
            Hazard::ReadAfterWrite => "read-after-write",
            Hazard::WriteAfterRead => "write-after-read",
            Hazard::WriteAfterWrite => "write-after-write",
        }
    }

    fn of(first: AccessKind, second: AccessKind) -> Self {
        match (first.writes(), second.writes()) {
            (true, false) => Hazard::ReadAfterWrite,
            (false, true) => Hazard::WriteAfterRead,
            _ => Hazard::WriteAfterWrite,
        }
    }
}

/// One access of a race: which thread, which command, and what it accessed. For an
/// asynchronous copy, `thread` is its agent id ([`Program::agent`] gives the copy and its
/// issuing thread) and `index` is 0.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct AccessSite {
    /// The accessing thread.
    pub thread: ThreadId,
    /// Index of the access in the thread's program.
    pub index: u32,
    /// Read, write or atomic.
    pub kind: AccessKind,
    /// The static instruction.
    pub inst: InstId,
    /// First byte accessed.
    pub addr: u32,
    /// Bytes accessed.
    pub len: u32,
    /// Whether the access may not happen (input-dependent guard).
    pub may: bool,
    /// Whether `len` is only an upper bound of the bytes accessed (over-approximated
    /// extent).
    pub approx: bool,
}

/// All races between one pair of static instructions.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Race {
    /// The representative's access of the lower thread.
    pub first: AccessSite,
    /// The representative's access of the higher thread.
    pub second: AccessSite,
    /// The hazard, reading `first` then `second`.
    pub hazard: Hazard,
    /// The first byte `first` and `second` both access.
    pub addr: u32,
    /// How many distinct thread pairs race on this pair of instructions; a lower bound when
    /// [`Race::thread_pairs_at_least`] is set.
    pub thread_pairs: u64,
    /// Whether thread pairs were left untested once this pair of instructions was known to
    /// race often enough (see the crate documentation, *Racy programs*): more thread pairs
    /// may race than [`Race::thread_pairs`] says.
    pub thread_pairs_at_least: bool,
    /// With [`Config::detail`]: every racing `(first common byte, lower thread, higher
    /// thread)`, sorted, at most [`DETAILS_CAP`] of them.
    pub details: Vec<(u32, ThreadId, ThreadId)>,
    /// Whether `details` was cut at [`DETAILS_CAP`], or thread pairs were left untested
    /// ([`Race::thread_pairs_at_least`]): more pairs race than `details` lists.
    pub details_truncated: bool,
}

/// What the check did.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct RaceStats {
    /// Distinct 4-byte shared words accessed (tensor-memory cells included: they are words
    /// of the access address space above [`weft_program::TMEM_BASE`]).
    pub shared_addresses: u64,
    /// Shared-memory access commands.
    pub accesses: u64,
    /// Happens-before tests performed.
    pub race_tests: u64,
    /// Thread pairs of a chunk the merges visited: merged, or passed over as saturated
    /// after a check or a comparison (the pairs a saturated chunk or row skips unvisited
    /// are not counted).
    pub thread_pairs_visited: u64,
    /// Pairs of accesses to a common word from different threads with at least one write
    /// (not both atomics): the tests a naive checker performs, as the WEFT paper counts them.
    /// Computed arithmetically per word; an access spanning several words counts in each.
    pub naive_pairs: u64,
    /// Pairs of plain writes to a common byte by two lanes of one warp in one dynamic
    /// instruction, not ordered by happens-before: not races (see
    /// [`SAME_INSTRUCTION_WRITES_NOTE`]), so not reported, but counted here. Dynamic access
    /// pairs, each counted once.
    pub same_instruction_writes: u64,
    /// Whether a chunk stopped counting [`RaceStats::same_instruction_writes`] at
    /// [`SAME_INSTRUCTION_CAP`]: the count is a lower bound.
    pub same_instruction_writes_at_least: bool,
    /// Chunks (4-byte words) whose search stopped after [`MAX_RACING_PAIRS_PER_CHUNK`]
    /// racing instruction pairs: more instruction pairs may race there than reported.
    pub chunks_stopped: u64,
    /// Chunks in which more than [`MAX_BENIGN_PAIRS_PER_CHUNK`] distinct benign instruction
    /// pairs were found: the later ones are not in [`RaceReport::benign`] (real races there
    /// are still searched for and reported).
    pub benign_words_capped: u64,
    /// Chunks (4-byte words) whose search stopped at [`Config::max_word_tests`]: races
    /// there may be unreported, and the thread-pair counts of those found are lower bounds.
    pub words_over_budget: u64,
    /// Shared-memory access commands whose extent is over-approximated.
    pub approx_accesses: u64,
    /// Distinct racing thread pairs summed over [`RaceReport::possible`].
    pub possible_thread_pairs: u64,
    /// Wall-clock seconds of the check.
    pub seconds: f64,
}

/// The races of one CTA.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RaceReport {
    /// The races, one per pair of static instructions, sorted by representative.
    pub races: Vec<Race>,
    /// Benign races: unordered plain writes of the same known value to the same bytes
    /// (every byte both write holds the same value in both), grouped and sorted like
    /// `races`. Not a race on the value: whichever write lands last, the bytes are the
    /// same; a read racing with such writes is still in `races`. A pair of instructions can
    /// appear here and in `races` (from dynamic accesses of different values).
    pub benign: Vec<Race>,
    /// Races in which at least one access has an over-approximated extent: undecided, since
    /// the common bytes may be outside what it really accesses. Grouped and sorted like
    /// `races`; a pair of instructions can appear in both lists (from different dynamic
    /// accesses).
    pub possible: Vec<Race>,
    /// Statistics.
    pub stats: RaceStats,
}

/// Finds every race of `program` (up to [`MAX_RACING_PAIRS_PER_CHUNK`] racing instruction
/// pairs per chunk) under the happens-before relation `hb` (see the crate
/// documentation for the contract: `hb` must be sound and precise, i.e. the program must be
/// well-synchronized).
pub fn find_races<H: HappensBeforeQuery + ?Sized>(
    program: &Program,
    hb: &H,
    config: &Config,
) -> RaceReport {
    find_races_tuned(program, hb, config, Tuning::default())
}

/// Where the merges switch to their indexed structures; only tests change it (every
/// setting gives the same report).
#[derive(Debug, Clone, Copy)]
struct Tuning {
    /// Slots of a window found by linear search; beyond, by a hash index.
    window_index_slots: usize,
    /// Slots of a window up to which `b` is tested slot by slot; beyond, once the window
    /// is unchanged for a second `b`, by groups ([`Grouped`]).
    group_min_slots: usize,
    /// A row visits its threads by class while the chunk has at least this many threads
    /// per class ([`SiteClasses::row`]); else one by one.
    row_classes_factor: usize,
    /// Whether a row of a class with a row that merged nothing is passed over.
    quiet_rows: bool,
    /// Whether a chunk that repeats the one before is passed over
    /// ([`entries::collect_entries`]).
    repeats: bool,
    /// Whether a row of a copy passes over the copies of its issuer ordered after it
    /// ([`HappensBeforeQuery::issuer_copies_after`]).
    copy_chains: bool,
    /// Whether a thread pair whose writes alone are saturated skips the merge of its writes.
    writes_apart: bool,
    /// Whether class pairs found saturated are remembered for the chunk ([`ClassPairs`]):
    /// a later row passes over them without a check.
    class_pairs: bool,
    /// Races recorded in a chunk after which its thread pairs are checked for
    /// [`OpenPairs`] (`u64::MAX`: never).
    hot_records: u64,
    /// Whether a chunk that is the chunk before it on other lanes of the same warps, after
    /// a check of that chunk that found nothing, adds its counts unchecked (`shift`
    /// module).
    lane_shifts: bool,
    /// Whether the entries' collection reads the accesses of a thread's followers, lanes
    /// that make its accesses moved ([`shift::Lanes::followers`]), from the thread's commands
    /// (else from their own).
    followers: bool,
    /// Whether thread pairs of lanes that make the same accesses in a chunk (`twins`
    /// module) add the counts of the first such pair whose merges noted nothing, unmerged.
    twins: bool,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning {
            window_index_slots: 32,
            group_min_slots: 16,
            row_classes_factor: 8,
            quiet_rows: true,
            repeats: true,
            copy_chains: true,
            writes_apart: true,
            class_pairs: true,
            hot_records: HOT_RECORDS,
            lane_shifts: true,
            followers: true,
            twins: true,
        }
    }
}

fn find_races_tuned<H: HappensBeforeQuery + ?Sized>(
    program: &Program,
    hb: &H,
    config: &Config,
    tuning: Tuning,
) -> RaceReport {
    let start = Instant::now();
    let ctx = Context {
        program,
        hb,
        config,
        sweepable: program.threads.iter().all(|t| t.steps.is_empty()),
        tuning,
        sides: first_sides(program),
    };
    let lanes = shift::Lanes::of(program, hb, ctx.shifts_apply());
    let Collected {
        chunks,
        accesses,
        approx_accesses,
        words,
    } = collect_entries(program, hb, tuning.repeats, tuning.followers, &lanes);
    // The runs of chunks that are each the chunk before on other lanes (`shift` module),
    // at most `shift::MAX_RUN` long: the units of the parallel check.
    let mut starts: Vec<usize> = Vec::new();
    if ctx.shifts_apply() && chunks.len() > 1 {
        let follows: Vec<bool> = (0..chunks.len())
            .into_par_iter()
            .map(|i| {
                chunks[i].shifted || (i > 0 && ctx.shifted(&chunks[i - 1], &chunks[i], &lanes))
            })
            .collect();
        for (i, &f) in follows.iter().enumerate() {
            // A chunk not collected stays with the chunks before it, whose entries it
            // repeats (a run of them is at most a warp long).
            let long = starts.last().is_none_or(|&s| i - s >= shift::MAX_RUN);
            if !f || (long && !chunks[i].shifted) {
                starts.push(i);
            }
        }
    } else {
        starts.extend(0..chunks.len());
    }
    let acc = (0..starts.len())
        .into_par_iter()
        .fold(Accumulator::default, |mut acc, g| {
            let end = starts.get(g + 1).copied().unwrap_or(chunks.len());
            // The counts of the last chunk checked, if its check found nothing: each later
            // chunk of the run is it on other lanes, and adds them unchecked.
            let mut quiet: Option<shift::Counts> = None;
            // The last collected chunk's entries, and the chunks not collected since: the
            // entries of such a chunk are those on as many next lanes.
            let (mut base, mut lag): (&[Entry], u32) = (&[], 0);
            for chunk in &chunks[starts[g]..end] {
                if chunk.shifted {
                    lag += 1;
                } else {
                    (base, lag) = (&chunk.entries, 0);
                }
                let run = chunk.run;
                // A run's repeats hold the same accesses: their naive pairs are the first's,
                // and they stop where it stops.
                let (before, stopped, over) =
                    (acc.naive_pairs, acc.chunks_stopped, acc.words_over_budget);
                match quiet {
                    Some(counts) => counts.replay(&mut acc),
                    None => {
                        let counts = shift::Counts::of(&acc);
                        if lag == 0 {
                            ctx.check_chunk(chunk.chunk, base, &mut acc);
                        } else {
                            let moved: Vec<Entry> = base
                                .iter()
                                .map(|&e| {
                                    let mut moved = e;
                                    moved.thread += lag;
                                    moved
                                })
                                .collect();
                            ctx.check_chunk(chunk.chunk, &moved, &mut acc);
                        }
                        quiet = counts.quiet(shift::Counts::of(&acc), &acc);
                    }
                }
                if acc.benign_capped {
                    acc.benign_words_capped = acc.benign_words_capped.saturating_add(run);
                }
                let naive = acc.naive_pairs - before;
                acc.naive_pairs = acc
                    .naive_pairs
                    .saturating_add(naive.saturating_mul(run - 1));
                let stops = acc.chunks_stopped - stopped;
                acc.chunks_stopped = acc
                    .chunks_stopped
                    .saturating_add(stops.saturating_mul(run - 1));
                let over = acc.words_over_budget - over;
                acc.words_over_budget = acc
                    .words_over_budget
                    .saturating_add(over.saturating_mul(run - 1));
            }
            acc
        })
        .reduce(Accumulator::default, Accumulator::merge);
    let mut report = acc.into_report(config);
    report.stats.accesses = accesses;
    report.stats.approx_accesses = approx_accesses;
    report.stats.shared_addresses = words;
    report.stats.seconds = start.elapsed().as_secs_f64();
    report
}

/// An agent's place among its issuer's copies: copies of the issuer numbered `first` on
/// happen after it ([`HappensBeforeQuery::issuer_copies_after`]; `u32::MAX`: none), and a
/// tensor-pipe agent happens before every later one of its issuer
/// ([`HappensBeforeQuery::pipe_agent`]).
#[derive(Debug, Clone, Copy)]
struct Chain {
    issuer: ThreadId,
    index: u32,
    first: u32,
    pipe: bool,
}

impl Chain {
    /// Whether the relation orders the two agents (either way) through their issuer.
    fn ordered(a: Option<Chain>, b: Option<Chain>) -> bool {
        let (Some(a), Some(b)) = (a, b) else {
            return false;
        };
        if a.issuer != b.issuer || a.index == b.index {
            return false;
        }
        let (lo, hi) = if a.index < b.index { (a, b) } else { (b, a) };
        hi.index >= lo.first || (lo.pipe && hi.pipe)
    }
}

/// A thread's entries in one chunk.
struct ThreadLists<'e> {
    thread: u32,
    reads: &'e [Entry],
    writes: &'e [Entry],
}

/// The reporting identity of an access within a window: accesses with equal keys yield the
/// same finding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
struct SiteKey {
    kind: AccessKind,
    inst: InstId,
    addr: u32,
    len: u32,
    may: bool,
    approx: bool,
    mask: u8,
    /// A plain write's value id ([`weft_program::Command::value_id`]), 0 when unknown.
    value: u16,
}

/// A distinct key in the sliding window, with its multiplicity, the program index and
/// occurrence of the last entry added (still in the window while `count > 0`, since entries
/// leave in order) and the program index of the one added before it (still in the window
/// while `count > 1`).
struct Slot {
    key: SiteKey,
    count: u32,
    last: u32,
    last_occ: u32,
    prev: u32,
}

#[derive(Default)]
struct Window {
    slots: Vec<Slot>,
    /// The position of each key in `slots`, kept once there are more than
    /// [`Tuning::window_index_slots`] (a linear search per entry made a window of 5,000
    /// distinct values quadratic).
    index: Option<FxHashMap<SiteKey, u32>>,
}

impl Window {
    fn position(&self, key: &SiteKey) -> Option<usize> {
        match &self.index {
            Some(index) => index.get(key).map(|&p| p as usize),
            None => self.slots.iter().position(|s| s.key == *key),
        }
    }

    fn add(&mut self, key: SiteKey, index: u32, occ: u32, index_slots: usize) {
        if let Some(pos) = self.position(&key) {
            let slot = &mut self.slots[pos];
            slot.count += 1;
            slot.prev = slot.last;
            slot.last = index;
            slot.last_occ = occ;
        } else {
            self.slots.push(Slot {
                key,
                count: 1,
                last: index,
                last_occ: occ,
                prev: index,
            });
            if let Some(map) = &mut self.index {
                map.insert(key, (self.slots.len() - 1) as u32);
            } else if self.slots.len() > index_slots {
                let map = self
                    .slots
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (s.key, i as u32))
                    .collect();
                self.index = Some(map);
            }
        }
    }

    fn remove(&mut self, key: SiteKey) {
        if let Some(pos) = self.position(&key) {
            self.slots[pos].count -= 1;
            if self.slots[pos].count == 0 {
                self.slots.swap_remove(pos);
                if let Some(map) = &mut self.index {
                    map.remove(&key);
                    if let Some(moved) = self.slots.get(pos) {
                        map.insert(moved.key, pos as u32);
                    }
                }
            }
        }
    }
}

struct Context<'a, H: ?Sized> {
    program: &'a Program,
    hb: &'a H,
    config: &'a Config,
    /// No thread has warp steps: the race-free sweep applies (`sweep` module).
    sweepable: bool,
    tuning: Tuning,
    /// Per copy issued by the first side of [`weft_program::ExclusiveSides`], those records
    /// (indices into [`weft_program::AsyncOps::exclusive`]; nested branches give several).
    sides: FxHashMap<u32, Vec<u32>>,
}

/// [`Context::sides`] of `program`.
fn first_sides(program: &Program) -> FxHashMap<u32, Vec<u32>> {
    let mut sides: FxHashMap<u32, Vec<u32>> = FxHashMap::default();
    for (r, s) in program.asyncs.exclusive.iter().enumerate() {
        for g in s.first.0..s.first.1 {
            sides.entry(g).or_default().push(r as u32);
        }
    }
    sides
}

/// What [`weft_program::AsyncOps::exclusive`] rules out of a pair of lists.
enum Exclusion {
    /// Nothing.
    None,
    /// Every pair: two copies of the two sides of one branch.
    All,
    /// The thread's commands at these positions, against the other list's copy.
    Positions(Vec<(u32, u32)>),
}

impl<H: HappensBeforeQuery + ?Sized> Context<'_, H> {
    /// The warp of a thread; every asynchronous-copy agent is a warp of its own (numbered
    /// after the CTA's warps, increasing with the id).
    fn warp(&self, t: u32) -> u32 {
        let warp_size = self.program.warp_size();
        let n = self.program.threads.len() as u32;
        if t < n {
            t / warp_size
        } else {
            n / warp_size + 1 + (t - n)
        }
    }

    /// What the sides of branches rule out between the lists of `lo` and `hi` (`lo < hi`).
    /// Agents are numbered after the threads in issue order, so a thread is always `lo`
    /// against a copy, and of two copies of one branch the first side's is `lo`. (Its caller
    /// asks only where the program has such sides.)
    fn exclusion(&self, lo: u32, hi: u32) -> Exclusion {
        let n = self.program.threads.len() as u32;
        let records = self.program.asyncs.exclusive.as_slice();
        let of = |g: u32| {
            self.sides
                .get(&g)
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .filter_map(|&r| records.get(r as usize))
        };
        let Some(h) = hi.checked_sub(n) else {
            return Exclusion::None;
        };
        match lo.checked_sub(n) {
            Some(g) if of(g).any(|s| s.second_has(h)) => Exclusion::All,
            Some(_) => Exclusion::None,
            None => {
                let ranges: Vec<(u32, u32)> = of(h)
                    .filter(|s| s.thread.0 == lo)
                    .map(|s| s.second)
                    .collect();
                if ranges.is_empty() {
                    Exclusion::None
                } else {
                    Exclusion::Positions(ranges)
                }
            }
        }
    }

    fn key(&self, thread: u32, entry: &Entry) -> Option<SiteKey> {
        let command = self
            .program
            .actor_commands(thread as usize)
            .get(entry.index as usize)?;
        match command.view() {
            CommandView::Access {
                kind,
                addr,
                len,
                may,
                approx,
            } => Some(SiteKey {
                kind,
                inst: command.inst(),
                addr,
                len,
                may,
                approx,
                mask: entry.mask(),
                value: command.value_id().unwrap_or(0),
            }),
            _ => None,
        }
    }

    /// The chain facts of list id `thread` when it is an agent ([`Chain`]).
    fn chain(&self, thread: u32) -> Option<Chain> {
        let index = thread.checked_sub(u32::try_from(self.program.threads.len()).ok()?)?;
        let issuer = self.copy_issuer(thread)?;
        let agent = ThreadId(thread);
        let first = match self.hb.issuer_copies_after(agent) {
            Some((i, f)) if i == issuer => f,
            _ => u32::MAX,
        };
        Some(Chain {
            issuer,
            index,
            first,
            pipe: self.hb.pipe_agent(agent),
        })
    }

    /// The issuer of the copy a list id beyond the CTA's threads names; `None` for a thread.
    fn copy_issuer(&self, thread: u32) -> Option<ThreadId> {
        let g = (thread as usize).checked_sub(self.program.threads.len())?;
        Some(self.program.asyncs.copies.get(g)?.issuer)
    }

    /// Per list of a chunk, the end of the run of consecutive lists that are copies of
    /// its issuer (its own position for a thread); `None` when the chunk has no copy or
    /// the tuning is off.
    fn copy_runs(&self, lists: &[ThreadLists<'_>]) -> Option<Vec<u32>> {
        let threads = self.program.threads.len();
        if !self.tuning.copy_chains || lists.iter().all(|l| (l.thread as usize) < threads) {
            return None;
        }
        let issuer = |x: usize| self.copy_issuer(lists[x].thread);
        let mut ends = vec![0u32; lists.len()];
        for x in (0..lists.len()).rev() {
            ends[x] = match issuer(x) {
                Some(i) if x + 1 < lists.len() && issuer(x + 1) == Some(i) => ends[x + 1],
                Some(_) => x as u32 + 1,
                None => x as u32,
            };
        }
        Some(ends)
    }

    /// The lists after `x` that are copies of `x`'s issuer which the relation orders after
    /// copy `x` ([`HappensBeforeQuery::issuer_copies_after`]), as far as they are
    /// consecutive: a range of positions, empty when none.
    fn ordered_copies(
        &self,
        lists: &[ThreadLists<'_>],
        runs: &[u32],
        x: usize,
    ) -> std::ops::Range<usize> {
        let threads = self.program.threads.len() as u64;
        let Some((issuer, first)) = self.hb.issuer_copies_after(ThreadId(lists[x].thread)) else {
            return 0..0;
        };
        let from = threads + u64::from(first);
        let a = lists.partition_point(|l| u64::from(l.thread) < from);
        let same = lists.get(a).and_then(|l| self.copy_issuer(l.thread)) == Some(issuer);
        if a > x && same {
            a..runs[a] as usize
        } else {
            0..0
        }
    }

    fn check_chunk(&self, chunk: u32, entries: &[Entry], acc: &mut Accumulator) {
        // The benign pairs recorded here count against this chunk's cap only.
        if !acc.chunk_benign.is_empty() {
            acc.chunk_benign.clear();
        }
        acc.benign_capped = false;
        if entries.is_empty() {
            return;
        }
        acc.saturated.clear();
        // Split per thread, then per reads/writes (`collect_entries` put reads first), into a
        // vector of the right size (a word read by hundreds of copies grew it a few times).
        let per_thread = || entries.chunk_by(|a, b| a.thread == b.thread);
        let mut lists: Vec<ThreadLists<'_>> = Vec::with_capacity(per_thread().count());
        lists.extend(per_thread().map(|slice| {
            let split = slice.partition_point(|e| e.writes() == 0);
            ThreadLists {
                thread: slice[0].thread,
                reads: &slice[..split],
                writes: &slice[split..],
            }
        }));
        acc.naive_pairs += naive_pairs(self.program, &lists);
        // The chunk's twin classes, made where a check first needs them.
        let mut twins: Option<Twins> = None;
        let exempt = self.count_same_instruction_writes(chunk, &lists, &mut twins, acc);
        // A chunk the sweep proves race-free has nothing for the merges to find. One with
        // exempt pairs has two concurrent writes, which fail the sweep (whose tests then
        // count for nothing): it is not tried.
        if exempt == 0
            && let Some(tests) = self.sweep_race_free(&lists)
        {
            acc.race_tests += tests;
            if let Some(t) = twins {
                acc.spare_twins.0 = t;
            }
            return;
        }
        // Each thread's class of sites, needed once a race is found in the chunk.
        let mut classes: Option<SiteClasses> = None;
        let mut threshold = if self.config.detail {
            u32::try_from(DETAILS_CAP).unwrap_or(u32::MAX)
        } else {
            SATURATION
        };
        // Thread pairs of this chunk found racing, per (lower, higher) instruction pair.
        let mut found: FxHashMap<(InstId, InstId), u32> = FxHashMap::default();
        // The real races among them (`found` also counts benign pairs that saturate), up to
        // MAX_RACING_PAIRS_PER_CHUNK.
        let mut racing: FxHashSet<(InstId, InstId)> = FxHashSet::default();
        let mut skipped: FxHashSet<(InstId, InstId)> = FxHashSet::default();
        // The chunk-wide shortcut: once every instruction pair that any two of the chunk's
        // threads could race on is saturated, no later thread pair can add a new one.
        // Computed when the chunk's first race is found (race-free chunks never pay).
        let mut universe: Option<Option<FxHashSet<(InstId, InstId)>>> = None;
        let mut saturated_keys = 0usize;
        let mut uniform: Option<UniformWrites> = None;
        // Per class, the last row `x` (plus one) in which a thread `y` of the class was found
        // saturated with `x`: every later `y` of the class is too (found counts only grow),
        // with the same skipped pairs, and is passed over (10⁵ racing agents of six
        // instructions: 10⁵ checks per row, now about 6 × 64 merges and a check per class).
        let mut saturated_in: Vec<usize> = Vec::new();
        // A pair of two writers is handled once, from the lower index: a row visits the
        // readers before it and every thread after it (passing over the writers before it
        // one by one was quadratic in a chunk of 10⁵ agents).
        let readers: Vec<usize> = lists
            .iter()
            .enumerate()
            .filter(|(_, l)| l.writes.is_empty())
            .map(|(i, _)| i)
            .collect();
        // Per class, the passed-over range (s0, s1) of its last row that merged nothing:
        // every thread it visited was of a class found saturated with it. A later row of
        // the class that visits no thread that row did not (`covered`), with found counts
        // only grown, would merge nothing either, and is passed over whole (10⁵ rows of
        // agents of one instruction per word, each building its visiting order for one
        // check; 55,000 copies per word each waited for before the next, each row passing
        // over the rest of the chain). Not under `--warp-sync`, where a row passes over the
        // threads of its own warp, which differ from row to row.
        let mut quiet: Vec<Option<(usize, usize)>> = Vec::new();
        // Whether the row `x` passing over `s0..s1` visits nothing that the earlier row
        // passing over `q0..q1` did not: a row visits the readers outside its range, and
        // the writers after it outside its range.
        let covered = |x: usize, (s0, s1): (usize, usize), (q0, q1): (usize, usize)| {
            let readers_in = |a: usize, b: usize| {
                a < b && readers.partition_point(|&r| r < a) < readers.partition_point(|&r| r < b)
            };
            s1 >= q1 && (s0 == x + 1 || s0 <= q0) && !readers_in(q0, s0.min(q1))
        };
        // Per list, the end of the run of lists around it that are copies of one issuer
        // (none for a thread): a row of a copy passes over the part of its run that the
        // relation orders after it whole (55,000 copies per word, each waited for before
        // the next: 1.5·10⁹ ordered pairs per word merged one by one). Made at the chunk's
        // first row of a copy, with `chains` below: a thread's row passes over nothing by
        // them, and a word written by a thread and read by hundreds of copies has no other.
        let mut runs: Option<Vec<u32>> = None;
        let mut copy_rows = false;
        // Class pairs whose writes alone are saturated: every instruction pair a write of
        // each could race on is. A thread pair of them skips the merge of its writes and runs
        // the two with reads (a word whose loads are ordered after its 200 racing stores
        // never saturates as a whole: every thread pair's merge of the writes cost 4·10⁴
        // lookups, 22 s for 128 threads). Made with the chunk's classes.
        let mut writes_saturated: Option<ClassPairs> = None;
        // Class pairs whose sites (`false`), or writes alone (`true`), `saturated` found not
        // saturated, with the version of the found counts it was asked at (`saturated_keys`,
        // `threshold`, as for `OpenPairs`): the instruction pairs found in `threshold`
        // thread pairs are `saturated_keys` in number and only ever more while the
        // threshold stays, so at the same version `saturated` answers the same, and is not
        // asked again (a flag word stored by 128 threads, whose class pairs never
        // saturate: each of its 8,128 writer pairs asked twice, with two vectors made).
        let mut unsaturated: FxHashMap<(u32, u32, bool), (usize, u32)> = FxHashMap::default();
        // Class pairs found saturated (`Tuning::class_pairs`), once the chunk has classes.
        let mut class_pairs: Option<ClassPairs> = None;
        // Once the chunk is hot (`Tuning::hot_records`): per class pair, its instruction
        // pairs not saturated, and per thread list, where each instruction's accesses begin
        // and end.
        let records_start = acc.records;
        let mut open_pairs: FxHashMap<(u32, u32), OpenPairs> = FxHashMap::default();
        let mut extents: Vec<Option<Extents>> = Vec::new();
        // The word's budget of tests (`Config::max_word_tests`), counted from here.
        let budget_end = self
            .config
            .max_word_tests
            .map(|m| acc.race_tests.saturating_add(m));
        // The benign pairs found in this word that do not saturate (not in `found`): their
        // counts become lower bounds if the budget stops the word.
        let mut benign_here: FxHashSet<(InstId, InstId)> = FxHashSet::default();
        // Per list, an agent's place in its issuer's chains: a pair of agents that the
        // issuer's waits or tensor pipe order is passed over without a test, wherever the
        // two lie in the chunk (`ordered_copies` passes over consecutive ones by range).
        // Made with `runs`: a thread is in no chain.
        let mut chains: Option<Vec<Option<Chain>>> = None;
        // Per twin class pair (and whether the writes' merge was skipped), the counts of a
        // thread pair of them whose merges noted nothing: every later one adds the same.
        let mut twin_merges = std::mem::take(&mut acc.spare_twins.1);
        twin_merges.clear();
        // Per twin class pair (and whether the writes' merge was skipped), the counts and
        // the notes and records of a thread pair of them whose merges noted something:
        // every later one notes and records the same on its own threads.
        let mut noisy = twins::NoisyMerges::default();
        'pairs: for (x, t) in lists.iter().enumerate() {
            if t.writes.is_empty() {
                continue;
            }
            if !copy_rows && t.thread as usize >= self.program.threads.len() {
                copy_rows = true;
                runs = self.copy_runs(&lists);
                chains = runs
                    .as_ref()
                    .map(|_| lists.iter().map(|l| self.chain(l.thread)).collect());
            }
            // Whether the row passed over a thread for its order (then it is no quiet row:
            // a later row of its class may not be ordered with that thread).
            let mut passed_by_order = false;
            let row_class = classes.as_ref().map(|c| c.of[x]);
            let skip = runs
                .as_ref()
                .map_or(0..0, |runs| self.ordered_copies(&lists, runs, x));
            let (s0, s1) = (skip.start.max(x + 1), skip.end.max(x + 1));
            if self.tuning.quiet_rows
                && !self.config.warp_sync
                && let Some(c) = row_class
                && let Some(&Some(q)) = quiet.get(c as usize)
                && covered(x, (s0, s1), q)
            {
                continue;
            }
            let mut merged = false;
            // The row's threads in order: plainly until the chunk has classes, then by
            // class, where a class found saturated is not visited again.
            let mut plain = readers
                .iter()
                .copied()
                .take_while(|&y| y < x)
                .chain(x + 1..s0)
                .chain(s1..lists.len());
            // While the chunk has found nothing (so has no classes of sites), a row of a
            // lane of a twin class of several lanes whose every thread pair is of a class pair
            // found quiet before adds their counts, unmerged (`twins` module).
            if found.is_empty()
                && let Some(tw) = twins.as_ref()
                && tw.shared_at(x)
            {
                let spent = acc
                    .race_tests
                    .saturating_add((acc.records - records_start).saturating_mul(RECORD_TESTS));
                let before = readers.partition_point(|&r| r < x);
                let ranges = [x + 1..s0, s1..lists.len()];
                if let Some((visits, q)) = tw.replay_row(
                    x,
                    &readers[..before],
                    ranges,
                    &twin_merges,
                    spent,
                    budget_end,
                ) {
                    acc.thread_pairs_visited += visits;
                    acc.race_tests += q.tests;
                    acc.windows += q.windows;
                    continue;
                }
            }
            let mut by_class = classes.as_ref().and_then(|c| {
                c.row(
                    x,
                    None,
                    self.tuning.row_classes_factor,
                    class_pairs.as_ref(),
                )
            });
            loop {
                let next = match (by_class.as_mut(), classes.as_ref()) {
                    (Some(row), Some(c)) => row.next(c, &saturated_in, x + 1, s0..s1),
                    _ => plain.next(),
                };
                let Some(y) = next else {
                    break;
                };
                let u = &lists[y];
                if self.config.warp_sync && self.warp(t.thread) == self.warp(u.thread) {
                    continue;
                }
                if let Some(c) = chains.as_ref()
                    && Chain::ordered(c[x], c[y])
                {
                    passed_by_order = true;
                    continue;
                }
                // The races recorded count against the budget too, each as
                // `RECORD_TESTS` tests (a record costs about that many): a merge of two
                // threads whose every pair of accesses races records each (401 stores of one
                // word around a barrier, 256 threads: 1.6·10⁵ records per thread pair, more
                // than 120 s; mutation run 47).
                let spent = acc
                    .race_tests
                    .saturating_add((acc.records - records_start).saturating_mul(RECORD_TESTS));
                if budget_end.is_some_and(|end| spent >= end) {
                    // Benign pairs of many values (a loop storing its trip count, each trip
                    // behind a barrier) never saturate: every thread pair would be merged
                    // (1024 threads x 5,000 trips: 8·10⁹ tests, 200 s). What was found
                    // stands, with lower-bound counts; the rest is not searched.
                    acc.words_over_budget += 1;
                    skipped.extend(found.keys().copied());
                    skipped.extend(benign_here.iter().copied());
                    break 'pairs;
                }
                acc.thread_pairs_visited += 1;
                let mut skip_writes = false;
                if !found.is_empty() {
                    let classes = classes.get_or_insert_with(|| {
                        let classes = self.site_classes(&lists);
                        saturated_in = vec![0; classes.sites.len()];
                        if self.tuning.class_pairs {
                            class_pairs = Some(ClassPairs::new(classes.sites.len()));
                        }
                        writes_saturated = Some(ClassPairs::new(classes.sites.len()));
                        by_class = classes.row(x, Some(y), self.tuning.row_classes_factor, None);
                        classes
                    });
                    let keys = universe.get_or_insert_with(|| {
                        let keys = candidate_keys(classes);
                        // Many instruction pairs that may race share the chunk's budget
                        // of found records: the threshold drops (to 1 from
                        // `SATURATION_RECORDS` of them, or over MAX_UNIVERSE_SITES sites),
                        // and what is already found is counted against the new one.
                        let pairs = match &keys {
                            Universe::Keys(keys) => keys.len(),
                            Universe::Large => usize::MAX,
                            Universe::Unknown => 0,
                        };
                        if !self.config.detail && pairs > 0 {
                            let share = SATURATION_RECORDS as usize / pairs;
                            threshold = threshold.min(share.max(1) as u32);
                            saturated_keys = found.values().filter(|&&n| n >= threshold).count();
                            acc.saturated = found
                                .iter()
                                .filter(|&(_, &n)| n >= threshold)
                                .map(|(&k, _)| k)
                                .collect();
                        }
                        match keys {
                            Universe::Keys(keys) => Some(keys),
                            Universe::Large | Universe::Unknown => None,
                        }
                    });
                    if let Some(keys) = keys
                        && saturated_keys == keys.len()
                    {
                        // Every later pair would be skipped: none is visited (a chunk of
                        // 10⁵ racing agents is 10¹⁰ pairs).
                        skipped.extend(keys.iter().copied());
                        break 'pairs;
                    }
                    let (cx, cy) = (classes.of[x], classes.of[y]);
                    if cy != NO_CLASS && saturated_in[cy as usize] == x + 1 {
                        continue;
                    }
                    if class_pairs.as_ref().is_some_and(|p| p.contains(cx, cy)) {
                        saturated_in[cy as usize] = x + 1;
                        continue;
                    }
                    // In a hot chunk: `Some(whether two writes are among the open pairs)`
                    // when some instruction pair is not saturated (the checks below would
                    // fail, at the product of the classes' sites per thread pair).
                    let mut open_writes = None;
                    if acc.records - records_start > self.tuning.hot_records
                        && cx != NO_CLASS
                        && cy != NO_CLASS
                    {
                        let open = open_pairs.entry((cx, cy)).or_insert_with(OpenPairs::stale);
                        if open.version != (saturated_keys, threshold) {
                            *open = OpenPairs::of(classes, cx, cy, &found, threshold);
                            open.version = (saturated_keys, threshold);
                        }
                        if let Some(pairs) = open.pairs.as_ref().filter(|p| !p.is_empty()) {
                            extents.resize_with(lists.len(), || None);
                            for z in [x, y] {
                                if extents[z].is_none() {
                                    extents[z] = Some(self.extents(&lists[z]));
                                }
                            }
                            let (tt, tu) = (ThreadId(t.thread), ThreadId(u.thread));
                            // All accesses of `i` by `ti` happen before all of `j` by `tj`:
                            // the last before the first.
                            let apart = |i: &Extent, j: &Extent, (ti, tj): (ThreadId, ThreadId)| {
                                self.hb.ordered_at((ti, i.last), (tj, j.first), j.first_key)
                            };
                            // The pair that was not ordered last time is tried first:
                            // where thread pairs do race, one query settles it.
                            let hint = open.hint.min(pairs.len() - 1);
                            let unordered = match (&extents[x], &extents[y]) {
                                (Some(et), Some(eu)) => {
                                    (hint..pairs.len()).chain(0..hint).find(|&k| {
                                        let (i, j, _) = pairs[k];
                                        !matches!((et.get(&i), eu.get(&j)), (Some(a), Some(b))
                                            if apart(a, b, (tt, tu)) || apart(b, a, (tu, tt)))
                                    })
                                }
                                _ => Some(hint),
                            };
                            if let Some(k) = unordered {
                                open.hint = k;
                            }
                            let all_ordered = unordered.is_none();
                            if all_ordered {
                                // Only saturated pairs could race here: as for a saturated
                                // thread pair, their counts become lower bounds.
                                open.mark_saturated(&mut skipped);
                                // Passed over for this thread's order, not its class's: the
                                // row is not quiet (a later row of the class may race).
                                merged = true;
                                continue;
                            }
                            open_writes = Some(pairs.iter().any(|&(_, _, ww)| ww));
                        }
                    }
                    let (sx, sy) = (classes.len(cx), classes.len(cy));
                    let cost = sx * sy;
                    // What the merge may cost: its accesses, and where they race a record
                    // per access and distinct instruction of the other thread (100 racing
                    // instructions per thread recorded 10⁴ times per thread pair, and the
                    // check, 10⁴ too, was never made: 10 s for 64 threads).
                    let (lt, lu) = (
                        t.reads.len() + t.writes.len(),
                        u.reads.len() + u.writes.len(),
                    );
                    let merge = lt + lu + lt.saturating_mul(sy) + lu.saturating_mul(sx);
                    if open_writes.is_none()
                        && cost <= SITE_CHECK_FACTOR.saturating_mul(merge)
                        && let (Some(a), Some(b)) = (classes.get(cx), classes.get(cy))
                        && (unsaturated.is_empty()
                            || unsaturated.get(&(cx, cy, false))
                                != Some(&(saturated_keys, threshold)))
                        && {
                            let s = saturated(a, b, &found, threshold, &mut skipped);
                            if !s {
                                unsaturated.insert((cx, cy, false), (saturated_keys, threshold));
                            }
                            s
                        }
                    {
                        saturated_in[cy as usize] = x + 1;
                        if let Some(p) = class_pairs.as_mut() {
                            p.insert(cx, cy);
                        }
                        continue;
                    }
                    if let Some(ww) = open_writes {
                        // The open pairs say it: the writes alone are saturated when no two
                        // writes are among them.
                        skip_writes = self.tuning.writes_apart && !ww;
                        if skip_writes && let Some(open) = open_pairs.get_mut(&(cx, cy)) {
                            open.mark_saturated(&mut skipped);
                        }
                    } else if self.tuning.writes_apart
                        && cx != NO_CLASS
                        && cy != NO_CLASS
                        && let Some(ws) = writes_saturated.as_mut()
                    {
                        let known = ws.contains(cx, cy);
                        skip_writes = known
                            || ((unsaturated.is_empty()
                                || unsaturated.get(&(cx, cy, true))
                                    != Some(&(saturated_keys, threshold)))
                                && match (classes.get(cx), classes.get(cy)) {
                                    (Some(a), Some(b)) => {
                                        let writes = |s: &[(InstId, AccessKind)]| -> Vec<_> {
                                            s.iter().copied().filter(|&(_, k)| k.writes()).collect()
                                        };
                                        let (aw, bw) = (writes(a), writes(b));
                                        aw.len() * bw.len()
                                            <= SITE_CHECK_FACTOR.saturating_mul(merge)
                                            && {
                                                let s = saturated(
                                                    &aw,
                                                    &bw,
                                                    &found,
                                                    threshold,
                                                    &mut skipped,
                                                );
                                                if !s {
                                                    unsaturated.insert(
                                                        (cx, cy, true),
                                                        (saturated_keys, threshold),
                                                    );
                                                }
                                                s
                                            }
                                    }
                                    _ => false,
                                });
                        if skip_writes && !known {
                            ws.insert(cx, cy);
                        }
                    }
                }
                merged = true;
                acc.recent.clear();
                acc.recent_benign.clear();
                let (lo, hi) = if t.thread < u.thread { (t, u) } else { (u, t) };
                // The thread's commands of a branch side that excludes the copy's are not
                // merged with it (never in one execution).
                // (Without such sides, the usual case, nothing is looked up.)
                let kept: (Vec<Entry>, Vec<Entry>);
                let (lo_reads, lo_writes) = if self.sides.is_empty() {
                    (lo.reads, lo.writes)
                } else {
                    match self.exclusion(lo.thread, hi.thread) {
                        Exclusion::None => (lo.reads, lo.writes),
                        Exclusion::All => continue,
                        Exclusion::Positions(ranges) => {
                            let keep = |list: &[Entry]| -> Vec<Entry> {
                                list.iter()
                                    .filter(|e| {
                                        !ranges.iter().any(|r| (r.0..r.1).contains(&e.index))
                                    })
                                    .copied()
                                    .collect()
                            };
                            kept = (keep(lo.reads), keep(lo.writes));
                            (&kept.0[..], &kept.1[..])
                        }
                    }
                };
                // Against an agent's one access, the merges' tests first, with nothing
                // recorded (`merge_one`): where all are ordered, that is all they do, and the
                // pair is done (an agent is in no twin class, and nothing was noted). Of a
                // Hopper GEMM's words, most are a few threads' stores read by tens of copies.
                if !self.config.warp_sync && (hi.thread as usize) >= self.program.threads.len() {
                    let ordered = match (hi.reads, hi.writes) {
                        ([b], []) => self.merge_one(lo.thread, lo_writes, hi.thread, b),
                        ([], [b]) => if skip_writes {
                            Some(0)
                        } else {
                            self.merge_one(lo.thread, lo_writes, hi.thread, b)
                        }
                        .and_then(|n| {
                            self.merge_one(lo.thread, lo_reads, hi.thread, b)
                                .map(|m| n + m)
                        }),
                        _ => None,
                    };
                    if let Some(tests) = ordered {
                        acc.race_tests += tests;
                        continue;
                    }
                }
                // Two lanes of twin classes whose merges were quiet before: the same again.
                let twin = if (hi.thread as usize) < self.program.threads.len() {
                    self.chunk_twins(&mut twins, &lists, acc)
                        .and_then(|t| t.pair(x, y))
                        .map(|(a, b)| (a, b, skip_writes))
                } else {
                    None
                };
                if let Some(q) = twin.and_then(|key| twin_merges.get(&key)) {
                    acc.race_tests += q.tests;
                    acc.windows += q.windows;
                    continue;
                }
                // Two lanes of twin classes whose merges noted races before: the same
                // notes and records again, on these two threads (`twins` module).
                if let Some((q, log)) = twin
                    .filter(|_| !noisy.merges.is_empty())
                    .and_then(|key| noisy.merges.get(&key))
                {
                    acc.race_tests += q.tests;
                    acc.windows += q.windows;
                    twins::replay(
                        acc,
                        log,
                        (ThreadId(lo.thread), ThreadId(hi.thread)),
                        self.config.detail,
                    );
                } else {
                    let before = Quiet {
                        tests: acc.race_tests,
                        windows: acc.windows,
                    };
                    let notes = acc.notes;
                    if twin.is_some() {
                        noisy.spare.clear();
                        acc.log = Some(std::mem::take(&mut noisy.spare));
                    }
                    self.merge(chunk, lo.thread, lo_writes, hi.thread, hi.reads, acc);
                    if !skip_writes {
                        self.merge(chunk, lo.thread, lo_writes, hi.thread, hi.writes, acc);
                    }
                    self.merge(chunk, lo.thread, lo_reads, hi.thread, hi.writes, acc);
                    if let Some(key) = twin {
                        let log = acc.log.take();
                        let q = Quiet {
                            tests: acc.race_tests - before.tests,
                            windows: acc.windows - before.windows,
                        };
                        if acc.notes == notes {
                            twin_merges.insert(key, q);
                            if let Some(log) = log {
                                noisy.spare = log;
                            }
                        } else if let Some(log) = log {
                            noisy.keep(key, q, log);
                        }
                    }
                }
                // `recent` holds real races only until the benign pairs join it below.
                racing.extend(acc.recent.iter().copied());
                if racing.len() >= MAX_RACING_PAIRS_PER_CHUNK {
                    // The program races; the rest of this chunk's pairs are not looked for,
                    // and those found count "at least" their thread pairs.
                    acc.chunks_stopped += 1;
                    skipped.extend(racing.iter().copied());
                    break 'pairs;
                }
                if !acc.recent_benign.is_empty() {
                    if budget_end.is_some() {
                        benign_here.extend(acc.recent_benign.iter().copied());
                    }
                    // A benign pair saturates only if every later thread pair must find it
                    // benign too: both instructions write one (address, width, value) each
                    // in this whole chunk (not necessarily the same: a one-byte store of a
                    // word's repeated byte is benign with the word's store everywhere).
                    // Otherwise it is never skipped over.
                    let uniform = uniform.get_or_insert_with(|| self.uniform_writes(&lists));
                    let same = |&(a, b): &(InstId, InstId)| {
                        matches!(
                            (uniform.get(&a), uniform.get(&b)),
                            (Some(Some(_)), Some(Some(_)))
                        )
                    };
                    acc.recent
                        .extend(acc.recent_benign.iter().copied().filter(same));
                }
                if !acc.recent.is_empty() {
                    acc.recent.sort_unstable();
                    acc.recent.dedup();
                    for &key in &acc.recent {
                        let n = found.entry(key).or_default();
                        *n += 1;
                        if *n == threshold {
                            saturated_keys += 1;
                            if !self.config.detail {
                                acc.saturated.insert(key);
                            }
                        }
                    }
                }
            }
            if !merged
                && !passed_by_order
                && let (Some(c), Some(classes)) = (row_class, classes.as_ref())
                && c != NO_CLASS
            {
                quiet.resize(classes.sites.len(), None);
                if let Some(q) = quiet.get_mut(c as usize) {
                    *q = Some((s0, s1));
                }
            }
        }
        acc.saturated.clear();
        // The groups of skipped instruction pairs count "at least" their thread pairs
        // (marked when the report is built: a pair saturated by races reported in an
        // earlier chunk has its group in another fold's accumulator).
        acc.skipped.extend(skipped);
        acc.spare_twins.1 = twin_merges;
        if let Some(t) = twins {
            acc.spare_twins.0 = t;
        }
    }

    /// Per instruction writing in this chunk, its one (address, width, known value id) if
    /// every write of it here has the same, else `None`.
    fn uniform_writes(&self, lists: &[ThreadLists<'_>]) -> UniformWrites {
        let mut map = UniformWrites::default();
        for list in lists {
            for entry in list.writes {
                let Some(key) = self.key(list.thread, entry) else {
                    continue;
                };
                let this = (key.value != 0).then_some((key.addr, key.len, key.value));
                map.entry(key.inst)
                    .and_modify(|u| {
                        if *u != this {
                            *u = None;
                        }
                    })
                    .or_insert(this);
            }
        }
        map
    }

    /// Per instruction of thread list `list`, where its accesses in the chunk begin and end.
    fn extents(&self, list: &ThreadLists<'_>) -> Extents {
        let mut out = Extents::default();
        for entry in list.reads.iter().chain(list.writes) {
            let Some(key) = self.key(list.thread, entry) else {
                continue;
            };
            out.entry(key.inst)
                .and_modify(|e| {
                    if entry.index < e.first {
                        (e.first, e.first_key) = (entry.index, entry.key);
                    }
                    e.last = e.last.max(entry.index);
                })
                .or_insert(Extent {
                    first: entry.index,
                    first_key: entry.key,
                    last: entry.index,
                });
        }
        out
    }

    /// The chunk's threads grouped by their sites ([`Context::sites`]).
    fn site_classes(&self, lists: &[ThreadLists<'_>]) -> SiteClasses {
        let mut classes = SiteClasses::default();
        let mut index: FxHashMap<Vec<(InstId, AccessKind)>, u32> = FxHashMap::default();
        let mut scratch = Vec::new();
        // The previous thread's class: consecutive threads (an instruction's agents) mostly
        // share one, found without hashing their sites.
        let mut last = NO_CLASS;
        for list in lists {
            let class = if self.sites(list, &mut scratch) {
                if last != NO_CLASS && classes.sites[last as usize] == scratch {
                    last
                } else {
                    match index.get(scratch.as_slice()) {
                        Some(&class) => class,
                        None => {
                            let class = classes.sites.len() as u32;
                            index.insert(scratch.clone(), class);
                            classes.sites.push(std::mem::take(&mut scratch));
                            class
                        }
                    }
                }
            } else {
                NO_CLASS
            };
            last = class;
            classes.of.push(class);
        }
        // The threads of each class (those without one last), readers and writers apart.
        let groups = classes.sites.len() + 1;
        classes.readers = vec![Vec::new(); groups];
        classes.writers = vec![Vec::new(); groups];
        for (i, (list, &class)) in lists.iter().zip(&classes.of).enumerate() {
            let g = if class == NO_CLASS {
                groups - 1
            } else {
                class as usize
            };
            if list.writes.is_empty() {
                classes.readers[g].push(i as u32);
            } else {
                classes.writers[g].push(i as u32);
            }
        }
        classes
    }

    /// Puts in `sites` the distinct (instruction, kind) pairs of a thread's accesses in a
    /// chunk, sorted; false when the thread is never to be skipped: it has an
    /// over-approximated access there.
    fn sites(&self, list: &ThreadLists<'_>, sites: &mut Vec<(InstId, AccessKind)>) -> bool {
        // A thread's commands, or an agent's one access (agents saturate like threads: a
        // loop of racing copies made every pair of its agents a merge).
        let commands = self.program.actor_commands(list.thread as usize);
        sites.clear();
        // Up to MAX_SKIP_SITES sites a linear search is cheapest; beyond, the sites are
        // collected as they come and deduplicated by sorting (O(accesses log accesses)).
        let mut many = false;
        for entry in list.reads.iter().chain(list.writes) {
            let Some(command) = commands.get(entry.index as usize) else {
                return false;
            };
            let CommandView::Access { kind, approx, .. } = command.view() else {
                return false;
            };
            if approx {
                return false;
            }
            let site = (command.inst(), kind);
            if many {
                sites.push(site);
            } else if sites.last() != Some(&site) && !sites.contains(&site) {
                sites.push(site);
                many = sites.len() > MAX_SKIP_SITES;
            }
        }
        sites.sort_unstable();
        if many {
            sites.dedup();
        }
        true
    }

    /// Counts the pairs the same-instruction rule exempts in this chunk: plain writes of one
    /// dynamic instruction by two lanes of one warp that share a byte (the first one they
    /// share lies in this chunk) and are not ordered by happens-before. Exactly the pairs
    /// `merge` would otherwise report; a join on (instruction, occurrence or warp step) per
    /// pair of lanes, only in chunks where two lanes of a warp have plain writes. Returns
    /// how many it counted here (up to [`SAME_INSTRUCTION_CAP`]).
    fn count_same_instruction_writes(
        &self,
        chunk: u32,
        lists: &[ThreadLists<'_>],
        twins: &mut Option<Twins>,
        acc: &mut Accumulator,
    ) -> u64 {
        let all = lists;
        let warp_size = self.program.warp_size();
        if warp_size == 1 {
            return 0;
        }
        let has_plain_write = |l: &ThreadLists<'_>| l.writes.iter().any(|e| e.occ() != OCC_NONE);
        // Only the CTA's threads: every agent is a warp of its own (they come last).
        let cta = self.program.threads.len();
        let lists = &lists[..lists.partition_point(|l| (l.thread as usize) < cta)];
        let mut counted = 0u64;
        // Per twin class pair, what one lane pair of them counted and tested: each other
        // counts and tests the same (`twins` module).
        let mut memo: FxHashMap<(u32, u32), (u64, u64)> = FxHashMap::default();
        let mut start = 0;
        while start < lists.len() {
            // `lists` is sorted by thread, so the lanes of a warp are contiguous.
            let warp = self.warp(lists[start].thread);
            let end = start
                + lists[start..]
                    .iter()
                    .position(|l| self.warp(l.thread) != warp)
                    .unwrap_or(lists.len() - start);
            let group = &lists[start..end];
            let base = start;
            start = end;
            if group.iter().filter(|l| has_plain_write(l)).count() < 2 {
                continue;
            }
            let twins = self.chunk_twins(twins, all, acc);
            // Each lane's plain writes keyed by dynamic instruction, sorted by key (keys are
            // distinct within a lane: one access per lane per dynamic instruction).
            let keyed: Vec<Vec<(u64, &Entry)>> = group
                .iter()
                .map(|l| {
                    let Some(thread) = self.program.threads.get(l.thread as usize) else {
                        return Vec::new();
                    };
                    let mut v: Vec<(u64, &Entry)> = l
                        .writes
                        .iter()
                        .filter(|e| e.occ() != OCC_NONE)
                        .filter_map(|e| {
                            let inst = thread.commands.get(e.index as usize)?.inst();
                            let dynamic = if self.config.warp_sync {
                                thread.steps.get(e.index as usize).copied()?
                            } else {
                                e.occ()
                            };
                            Some(((u64::from(inst.0) << 32) | u64::from(dynamic), e))
                        })
                        .collect();
                    v.sort_unstable_by_key(|x| x.0);
                    v
                })
                .collect();
            for x in 0..group.len() {
                for y in x + 1..group.len() {
                    let pair = twins.and_then(|t| t.pair(base + x, base + y));
                    if let Some(&(n, tests)) = pair.and_then(|p| memo.get(&p))
                        && counted + n < SAME_INSTRUCTION_CAP
                    {
                        acc.same_instruction_writes += n;
                        acc.race_tests += tests;
                        counted += n;
                        continue;
                    }
                    let before = (counted, acc.race_tests);
                    let (xs, ys) = (&keyed[x], &keyed[y]);
                    let (mut i, mut j) = (0, 0);
                    while i < xs.len() && j < ys.len() {
                        if xs[i].0 < ys[j].0 {
                            i += 1;
                        } else if xs[i].0 > ys[j].0 {
                            j += 1;
                        } else {
                            let (a, b) = (xs[i].1, ys[j].1);
                            if self.exempt_pair(
                                chunk,
                                (group[x].thread, a),
                                (group[y].thread, b),
                                acc,
                            ) {
                                acc.same_instruction_writes += 1;
                                counted += 1;
                                if counted >= SAME_INSTRUCTION_CAP {
                                    acc.same_instruction_writes_at_least = true;
                                    return counted;
                                }
                            }
                            i += 1;
                            j += 1;
                        }
                    }
                    if let Some(p) = pair {
                        memo.insert(p, (counted - before.0, acc.race_tests - before.1));
                    }
                }
            }
        }
        counted
    }

    /// Whether two plain writes of one dynamic instruction by lanes `ta` and `tb` of one warp
    /// would race but for the same-instruction rule.
    fn exempt_pair(
        &self,
        chunk: u32,
        (ta, a): (u32, &Entry),
        (tb, b): (u32, &Entry),
        acc: &mut Accumulator,
    ) -> bool {
        if a.mask() & b.mask() == 0 {
            return false;
        }
        let addr = |t: u32, e: &Entry| {
            let command = self
                .program
                .actor_commands(t as usize)
                .get(e.index as usize)?;
            match command.view() {
                CommandView::Access { addr, .. } => Some(addr),
                _ => None,
            }
        };
        let (Some(addr_a), Some(addr_b)) = (addr(ta, a), addr(tb, b)) else {
            return false;
        };
        if u64::from(addr_a.max(addr_b)) / CHUNK != u64::from(chunk) {
            return false;
        }
        if self.config.warp_sync {
            // One warp step: the lanes run it together.
            return true;
        }
        let (first, second) = ((ThreadId(ta), a.index), (ThreadId(tb), b.index));
        acc.race_tests += 2;
        !self.hb.ordered(first, second) && !self.hb.ordered(second, first)
    }

    /// Whether two plain writes store known values that agree on every byte both write, or
    /// one symbolic value (a function of the kernel's inputs) at one address and width.
    fn same_value(&self, a: &SiteKey, b: &SiteKey) -> bool {
        if self.program.is_symbolic_value(a.value) || self.program.is_symbolic_value(b.value) {
            return a.value == b.value && a.addr == b.addr && a.len == b.len;
        }
        let (Some(va), Some(vb)) = (
            self.program.written_value(a.value),
            self.program.written_value(b.value),
        ) else {
            return false;
        };
        let start = a.addr.max(b.addr);
        let end = (u64::from(a.addr) + u64::from(a.len)).min(u64::from(b.addr) + u64::from(b.len));
        let byte = |v: u128, base: u32, p: u64| (v >> (8 * (p - u64::from(base)))) as u8;
        (u64::from(start)..end).all(|p| {
            p - u64::from(a.addr) < 16
                && p - u64::from(b.addr) < 16
                && byte(va, a.addr, p) == byte(vb, b.addr, p)
        })
    }

    /// Under `warp_sync`: how many of thread `ta`'s commands run at a warp step before the
    /// latest step of a command of its warp that happens before `b` (of `thread_b`, another
    /// warp or an agent), and so happen before `b` (lock-step, then happens-before; the
    /// mbarrier phase checks compose the two the same way, docs/semantics.md §4.6). The
    /// step is kept per `b`'s chain key, which alone decides the bounds of a CTA thread's
    /// command ([`Accumulator::lockstep_steps`]).
    fn lockstep_bound(&self, ta: u32, thread_b: ThreadId, b: &Entry, acc: &mut Accumulator) -> u32 {
        let threads = &self.program.threads;
        let ws = self.program.warp_size();
        let agent = thread_b.index() >= threads.len();
        let key = (ta / ws, thread_b.0, b.key);
        let step = match acc.lockstep_steps.get(&key) {
            Some(&step) if !agent => step,
            _ => {
                let first = ta / ws * ws;
                let last = (first + ws).min(threads.len() as u32);
                let mut step = 0u32;
                for l in first..last {
                    let Some(n) = self
                        .hb
                        .before_bound_at((thread_b, b.index), b.key, ThreadId(l))
                    else {
                        continue;
                    };
                    if let Some(&s) = n
                        .checked_sub(1)
                        .and_then(|i| threads[l as usize].steps.get(i as usize))
                    {
                        step = step.max(s);
                    }
                }
                if !agent {
                    acc.lockstep_steps.insert(key, step);
                }
                step
            }
        };
        threads[ta as usize].steps.partition_point(|&s| s < step) as u32
    }

    /// [`Self::lockstep_bound`] of `counted`'s commands before `x` (of `other`), kept for
    /// `x`'s chain key in `last` while `other` is a thread of the CTA: one merge asks it
    /// for the commands of one thread in program order, whose key changes only at its
    /// blocking points.
    fn lockstep_cached(
        &self,
        counted: u32,
        other: ThreadId,
        x: &Entry,
        acc: &mut Accumulator,
        last: &mut Option<(u32, u32)>,
    ) -> u32 {
        let agent = other.index() >= self.program.threads.len();
        match *last {
            Some((key, m)) if key == x.key && !agent => m,
            _ => {
                let m = self.lockstep_bound(counted, other, x, acc);
                *last = Some((x.key, m));
                m
            }
        }
    }

    /// Whether `t` is a thread of the CTA with warp steps (`--warp-sync`).
    fn has_steps(&self, t: u32) -> bool {
        self.program
            .threads
            .get(t as usize)
            .is_some_and(|t| !t.steps.is_empty())
    }

    /// [`Self::merge`] of `as_` (thread or agent `ta`) with the one access `b` of agent
    /// `tb` (`ta < tb`, so the two are of different warps; not under `--warp-sync`), where
    /// its window never holds an access: the tests it makes, the same queries in the same
    /// order. `None` when the window would hold one (`b` may race): the merge itself then
    /// runs, and records. Pure: nothing is counted here.
    fn merge_one(&self, ta: u32, as_: &[Entry], tb: u32, b: &Entry) -> Option<u64> {
        if as_.is_empty() {
            return Some(0);
        }
        let (thread_a, thread_b) = (ThreadId(ta), ThreadId(tb));
        let mut tests = 0u64;
        // L(b), as the merge finds it.
        let mut l = 0usize;
        if let Some(bound) = self
            .hb
            .before_bound_at((thread_b, b.index), b.key, thread_a)
        {
            tests += 1;
            // The list is in program order: a binary search, not a scan (a thread's row
            // against the hundreds of copies that read its word starts over for each).
            l = as_.partition_point(|a| a.index < bound);
        } else {
            while l < as_.len() && {
                tests += 1;
                self.hb
                    .ordered_at((thread_a, as_[l].index), (thread_b, b.index), b.key)
            } {
                l += 1;
            }
        }
        // E(b) starts at L(b): the window stays empty exactly when `as_[l]` (if any)
        // happens after `b` (`ta`'s bound is not taken: `tb` is an agent).
        if let Some(x) = as_.get(l) {
            tests += 1;
            if !self
                .hb
                .ordered_at((thread_b, b.index), (thread_a, x.index), x.key)
            {
                return None;
            }
        }
        Some(tests)
    }

    /// Tests every access of `bs` (thread `tb`) against the accesses of `as_` (thread `ta`,
    /// `ta < tb`), keeping the window of `as_` concurrent with the current `b`.
    fn merge(
        &self,
        chunk: u32,
        ta: u32,
        as_: &[Entry],
        tb: u32,
        bs: &[Entry],
        acc: &mut Accumulator,
    ) {
        if as_.is_empty() || bs.is_empty() {
            return;
        }
        let (thread_a, thread_b) = (ThreadId(ta), ThreadId(tb));
        let mut window = Window::default();
        // The window holds as_[lo..hi]; `l` and `e` are L(b) and E(b).
        let (mut lo, mut hi, mut l, mut e) = (0usize, 0usize, 0usize, 0usize);
        let mut tests = 0u64;
        // `before_bound` ignores warp steps, which only order lanes of one warp.
        let use_bound = self.warp(ta) != self.warp(tb);
        // Lanes of one warp: plain writes of one dynamic instruction do not race (under
        // `warp_sync` such pairs never get here).
        let same_warp = !use_bound;
        // Under `warp_sync` a command runs before every command of its warp at a later
        // step, and so before what those happen before: L(b) counts `ta`'s commands before
        // the latest step of its warp that happens before `b` too (`lockstep_bound`).
        let lockstep = self.config.warp_sync && use_bound && self.has_steps(ta);
        let mut last_lockstep: Option<(u32, u32)> = None;
        // The other way round: `b` runs before every command of its warp at a later step,
        // and so before what those happen before (`tb`'s count for an entry of `ta`).
        let lockstep_rev = self.config.warp_sync && use_bound && self.has_steps(tb);
        let mut last_rev: Option<(u32, u32)> = None;
        // Writes among `as_[..i]`, to tell a window of reads only at once.
        let writes_before: Vec<u32> = if lockstep {
            std::iter::once(0)
                .chain(as_.iter().scan(0u32, |n, a| {
                    *n += u32::from(a.writes());
                    Some(*n)
                }))
                .collect()
        } else {
            Vec::new()
        };

        // The sites of `b`s already tested against the window as it is now (`version`
        // counts its changes): another `b` of one of those sites would record the same
        // instruction pairs, with a larger index, which changes nothing (a racy word whose
        // 200 instructions race in every thread pair recorded 10⁸ times). Lanes of one warp
        // are not skipped: their same-instruction rule reads `b`'s own occurrence.
        let (mut version, mut tested_at, mut tested) =
            (0u64, u64::MAX, FxHashSet::<SiteKey>::default());
        // The version of the window the last `b` was tested against, and its slots grouped.
        let mut last_tested = u64::MAX;
        let mut grouped = Grouped {
            version: u64::MAX,
            groups: Vec::new(),
        };
        // Between threads of the CTA in different warps without lock-step, `b` happens
        // before `x` exactly when `b`'s index is below `x`'s `before_bound_at` over `tb` (its
        // contract), so the test that ends the window reads `x`'s bound; kept with the
        // position it was taken at.
        let threads = self.program.threads.len();
        let end_bounds =
            use_bound && !lockstep_rev && (ta as usize) < threads && (tb as usize) < threads;
        let mut end_bound: Option<(usize, Option<u32>)> = None;
        for b in bs {
            let bound = if use_bound {
                self.hb
                    .before_bound_at((thread_b, b.index), b.key, thread_a)
            } else {
                None
            };
            if let Some(bound) = bound {
                tests += 1;
                // `l` only moves forward: a scan costs the merge's length in all.
                while l < as_.len() && as_[l].index < bound {
                    l += 1;
                }
            }
            while bound.is_none() && l < as_.len() && {
                tests += 1;
                self.hb
                    .ordered_at((thread_a, as_[l].index), (thread_b, b.index), b.key)
            } {
                l += 1;
            }
            if e < l {
                e = l;
            }
            // Whether `x` of `ta` happens after `b`, lock-step included where they could race.
            let after = |x: &Entry, acc: &mut Accumulator, last_rev: &mut Option<(u32, u32)>| {
                self.hb
                    .ordered_at((thread_b, b.index), (thread_a, x.index), x.key)
                    || (lockstep_rev
                        && (b.writes() != 0 || x.writes() != 0)
                        && b.index < self.lockstep_cached(tb, thread_a, x, acc, last_rev))
            };
            while e < as_.len() && {
                tests += 1;
                let x = &as_[e];
                // Where `x`'s bound decides the test (`end_bounds`), it is taken once per
                // position of `e`, which later `b`s of the merge mostly share.
                let bound = match end_bound {
                    Some((at, n)) if at == e => n,
                    _ if end_bounds => {
                        let n = self
                            .hb
                            .before_bound_at((thread_a, x.index), x.key, thread_b);
                        end_bound = Some((e, n));
                        n
                    }
                    _ => None,
                };
                !match bound {
                    Some(n) => b.index < n,
                    None => after(x, acc, &mut last_rev),
                }
            } {
                e += 1;
            }
            // Only where the window could race: lock-step moves L(b) on.
            if lockstep && e > l && (b.writes() != 0 || writes_before[e] > writes_before[l]) {
                let m = self.lockstep_cached(ta, thread_b, b, acc, &mut last_lockstep);
                while l < as_.len() && as_[l].index < m {
                    l += 1;
                }
                if e < l {
                    e = l;
                    while e < as_.len() && {
                        tests += 1;
                        !after(&as_[e], acc, &mut last_rev)
                    } {
                        e += 1;
                    }
                }
            }
            // Slide the window to [l, e).
            while lo < l.min(hi) {
                if let Some(key) = self.key(ta, &as_[lo]) {
                    window.remove(key);
                    version += 1;
                }
                lo += 1;
            }
            lo = l;
            hi = hi.max(lo);
            while hi < e {
                if let Some(key) = self.key(ta, &as_[hi]) {
                    window.add(
                        key,
                        as_[hi].index,
                        as_[hi].occ(),
                        self.tuning.window_index_slots,
                    );
                    version += 1;
                }
                hi += 1;
            }
            if window.slots.is_empty() {
                continue;
            }
            acc.windows += 1;
            let Some(bkey) = self.key(tb, b) else {
                continue;
            };
            if !same_warp {
                if tested_at != version {
                    tested_at = version;
                    if tested.capacity() > 64 {
                        // Clearing a large set costs its capacity, at every version.
                        tested = FxHashSet::default();
                    } else {
                        tested.clear();
                    }
                }
                if tested.contains(&bkey) {
                    continue;
                }
                tested.insert(bkey);
            }
            // A window of many slots tested by several `b`s is grouped once per version
            // (slots differing only in their written value, as a racy loop storing a new
            // value every trip makes): each group then costs a few lookups per `b`, not one
            // test per value (5,000 values raced in every thread pair: 92 s → see
            // BENCHMARKS.md).
            if window.slots.len() > self.tuning.group_min_slots
                && (last_tested == version || grouped.version == version)
            {
                if grouped.version != version {
                    grouped.build(&window, version);
                }
                for group in &grouped.groups {
                    self.test_group(
                        chunk,
                        group,
                        &window,
                        (thread_a, thread_b),
                        b,
                        &bkey,
                        same_warp,
                        acc,
                    );
                }
            } else {
                for slot in &window.slots {
                    self.test_slot(chunk, slot, (thread_a, thread_b), b, &bkey, same_warp, acc);
                }
            }
            last_tested = version;
        }
        acc.race_tests += tests;
    }
}

impl<H: HappensBeforeQuery + ?Sized> Context<'_, H> {
    /// Tests `b` (of thread `threads.1`, reporting key `bkey`) against one slot of the
    /// window over thread `threads.0`'s accesses, recording the race it finds.
    #[allow(clippy::too_many_arguments)]
    fn test_slot(
        &self,
        chunk: u32,
        slot: &Slot,
        threads: (ThreadId, ThreadId),
        b: &Entry,
        bkey: &SiteKey,
        same_warp: bool,
        acc: &mut Accumulator,
    ) {
        let a = slot.key;
        let Some(common) = self.common_byte(chunk, &a, bkey) else {
            return;
        };
        let Some(index) = own_instruction_rule(slot, b, bkey, same_warp) else {
            return;
        };
        let benign = a.kind == AccessKind::Write
            && bkey.kind == AccessKind::Write
            && self.same_value(&a, bkey);
        self.report(acc, &a, index, threads, b, bkey, common, benign);
    }

    /// Tests `b` against one group of the window's slots (one key but for the value):
    /// records exactly what [`Self::test_slot`] on each slot would leave in the accumulator
    /// (for one class and instruction pair, only the lowest index of `a` counts), in a few
    /// lookups when `a` and `b` cover the same bytes.
    #[allow(clippy::too_many_arguments)]
    fn test_group(
        &self,
        chunk: u32,
        group: &SlotGroup,
        window: &Window,
        threads: (ThreadId, ThreadId),
        b: &Entry,
        bkey: &SiteKey,
        same_warp: bool,
        acc: &mut Accumulator,
    ) {
        let slot = |i: u32| &window.slots[i as usize];
        let a = group.key;
        let both_write = a.kind == AccessKind::Write && bkey.kind == AccessKind::Write;
        if group.by_last.len() == 1 || (both_write && (a.addr != bkey.addr || a.len != bkey.len)) {
            // One slot, or writes overlapping in part (which values agree depends on the
            // bytes): slot by slot.
            for &i in &group.by_last {
                self.test_slot(chunk, slot(i), threads, b, bkey, same_warp, acc);
            }
            return;
        }
        let Some(common) = self.common_byte(chunk, &a, bkey) else {
            return;
        };
        // Two writes of the same bytes agree exactly when their value ids are equal and
        // known (ids are interned per value, or per term and width): at most one slot.
        let benign = if both_write && bkey.value != 0 {
            group.by_value.get(&bkey.value).copied()
        } else {
            None
        };
        // The one slot whose last entry may be `b`'s own dynamic instruction.
        let own = if same_warp && a.inst == bkey.inst && b.occ() != OCC_NONE {
            group.by_occ.get(&b.occ()).copied()
        } else {
            None
        };
        // Those two are tested as they are; `by_value` and `by_occ` hold one slot per key.
        for i in [benign, own.filter(|&o| Some(o) != benign)]
            .into_iter()
            .flatten()
        {
            self.test_slot(chunk, slot(i), threads, b, bkey, same_warp, acc);
        }
        // Every other slot races with `b` (its value differs, or is unknown, or one of them
        // reads) at its last entry, in the same class: the lowest of those counts.
        if let Some(&i) = group
            .by_last
            .iter()
            .find(|&&i| Some(i) != benign && Some(i) != own)
        {
            let s = slot(i);
            self.report(acc, &s.key, s.last, threads, b, bkey, common, false);
        }
    }

    /// When `a` and `b` may race in `chunk`: the first byte both access if it lies in
    /// `chunk` (a pair is reported only in that chunk), `None` if it lies in an earlier one
    /// (reported there, but it still counts towards saturating this chunk).
    fn common_byte(&self, chunk: u32, a: &SiteKey, bkey: &SiteKey) -> Option<Option<u32>> {
        if a.mask & bkey.mask == 0 || !may_race(a.kind, bkey.kind) {
            return None;
        }
        let common = a.addr.max(bkey.addr);
        Some((u64::from(common) / CHUNK == u64::from(chunk)).then_some(common))
    }

    #[allow(clippy::too_many_arguments)]
    fn report(
        &self,
        acc: &mut Accumulator,
        a: &SiteKey,
        index: u32,
        (thread_a, thread_b): (ThreadId, ThreadId),
        b: &Entry,
        bkey: &SiteKey,
        common: Option<u32>,
        benign: bool,
    ) {
        let Some(common) = common else {
            if let Some(log) = acc.log.as_mut() {
                twins::log(
                    log,
                    Reported::Note {
                        a: a.inst,
                        b: bkey.inst,
                        approx: a.approx || bkey.approx,
                        benign,
                    },
                );
            }
            acc.note(a.inst, bkey.inst, a.approx || bkey.approx, benign);
            return;
        };
        let first = AccessSite {
            thread: thread_a,
            index,
            kind: a.kind,
            inst: a.inst,
            addr: a.addr,
            len: a.len,
            may: a.may,
            approx: a.approx,
        };
        let second = AccessSite {
            thread: thread_b,
            index: b.index,
            kind: bkey.kind,
            inst: bkey.inst,
            addr: bkey.addr,
            len: bkey.len,
            may: bkey.may,
            approx: bkey.approx,
        };
        if let Some(log) = acc.log.as_mut() {
            twins::log(
                log,
                Reported::Record {
                    first,
                    second,
                    addr: common,
                    benign,
                },
            );
        }
        acc.record(first, second, common, benign, self.config.detail);
    }
}

/// The index of `a`'s entry a slot reports against `b`: its last, or, for lanes of one warp
/// where that last entry is `b`'s own dynamic instruction (both plain writes: only those
/// have occurrences), the one before it (any other entry of the slot is another occurrence
/// of the instruction, and races); `None` when that was the slot's only entry.
fn own_instruction_rule(slot: &Slot, b: &Entry, bkey: &SiteKey, same_warp: bool) -> Option<u32> {
    if same_warp && slot.key.inst == bkey.inst && b.occ() != OCC_NONE && slot.last_occ == b.occ() {
        return (slot.count > 1).then_some(slot.prev);
    }
    Some(slot.last)
}

/// A window's slots grouped by their key without the written value, for one version of
/// the window.
struct Grouped {
    version: u64,
    groups: Vec<SlotGroup>,
}

/// Slots whose keys differ only in the written value.
struct SlotGroup {
    /// The slots' key, with value 0.
    key: SiteKey,
    /// Slot indices in increasing order of their last entry.
    by_last: Vec<u32>,
    /// The slot of each value id.
    by_value: FxHashMap<u16, u32>,
    /// The slot of each last occurrence (plain writes only).
    by_occ: FxHashMap<u32, u32>,
}

impl Grouped {
    fn build(&mut self, window: &Window, version: u64) {
        self.version = version;
        self.groups.clear();
        let mut index: FxHashMap<SiteKey, usize> = FxHashMap::default();
        for (i, slot) in window.slots.iter().enumerate() {
            let key = SiteKey {
                value: 0,
                ..slot.key
            };
            let g = *index.entry(key).or_insert_with(|| {
                self.groups.push(SlotGroup {
                    key,
                    by_last: Vec::new(),
                    by_value: FxHashMap::default(),
                    by_occ: FxHashMap::default(),
                });
                self.groups.len() - 1
            });
            let group = &mut self.groups[g];
            let i = i as u32;
            group.by_last.push(i);
            if slot.key.value != 0 {
                group.by_value.insert(slot.key.value, i);
            }
            if slot.last_occ != OCC_NONE {
                group.by_occ.insert(slot.last_occ, i);
            }
        }
        for group in &mut self.groups {
            group
                .by_last
                .sort_unstable_by_key(|&i| window.slots[i as usize].last);
        }
    }
}

/// Whether every instruction pair two threads could race on in a chunk has been found in
/// `threshold` thread pairs there; if so, those pairs are added to `skipped`.
/// Whether accesses of these kinds by two threads can race: one of them writes, and they
/// are not both atomic.
fn may_race(a: AccessKind, b: AccessKind) -> bool {
    (a.writes() || b.writes()) && !(a == AccessKind::Atomic && b == AccessKind::Atomic)
}

/// Per instruction writing in a chunk, its one (address, width, value id) there, if all
/// its writes there have the same.
type UniformWrites = FxHashMap<InstId, Option<(u32, u32, u16)>>;

/// No class: the thread has an over-approximated access in the chunk.
const NO_CLASS: u32 = u32::MAX;

/// Where one instruction's accesses of one thread in a chunk begin and end: the first's
/// program index and chain key ([`HappensBeforeQuery::chain_key`]), the last's index.
#[derive(Debug, Clone, Copy)]
struct Extent {
    first: u32,
    first_key: u32,
    last: u32,
}

/// A thread's [`Extent`] per instruction in a chunk.
type Extents = FxHashMap<InstId, Extent>;

/// The instruction pairs of a class pair of a hot chunk ([`HOT_RECORDS`]) that are not
/// saturated: (instruction of the first class, of the second, both write), at most
/// [`MAX_OPEN_PAIRS`] (`None` beyond). A thread pair of the classes in which each of them is
/// ordered — every access of the one instruction happens before every access of the other,
/// which the last before the first decides — can race only on saturated pairs: it is passed
/// over, their counts becoming lower bounds. Where no two writes are among them, the writes
/// alone are saturated ([`Tuning::writes_apart`]).
struct OpenPairs {
    /// The saturated-key count and threshold these were computed for.
    version: (usize, u32),
    pairs: Option<Vec<(InstId, InstId, bool)>>,
    /// The saturated instruction pairs of the class pair, and whether they are marked
    /// skipped already.
    saturated: Vec<(InstId, InstId)>,
    marked: bool,
    /// The index in `pairs` of the last one found not ordered in a thread pair.
    hint: usize,
}

impl OpenPairs {
    fn stale() -> Self {
        OpenPairs {
            version: (usize::MAX, 0),
            pairs: None,
            saturated: Vec::new(),
            marked: false,
            hint: 0,
        }
    }

    fn of(
        classes: &SiteClasses,
        cx: u32,
        cy: u32,
        found: &FxHashMap<(InstId, InstId), u32>,
        threshold: u32,
    ) -> Self {
        let mut open = OpenPairs::stale();
        let (Some(a), Some(b)) = (classes.get(cx), classes.get(cy)) else {
            return open;
        };
        let mut pairs = Vec::new();
        for (i, j, both_write) in may_race_pairs(a, b) {
            let key = pair_key(i, j);
            if found.get(&key).is_some_and(|&n| n >= threshold) {
                open.saturated.push(key);
            } else if pairs.len() < MAX_OPEN_PAIRS {
                pairs.push((i, j, both_write));
            } else {
                return open;
            }
        }
        open.saturated.sort_unstable();
        open.saturated.dedup();
        open.pairs = Some(pairs);
        open
    }

    /// Marks the class pair's saturated instruction pairs skipped (their counts become lower
    /// bounds), once per computation.
    fn mark_saturated(&mut self, skipped: &mut FxHashSet<(InstId, InstId)>) {
        if !self.marked {
            skipped.extend(self.saturated.iter().copied());
            self.marked = true;
        }
    }
}

/// A set of class pairs of a chunk, either way round: those found saturated ([`saturated`])
/// or whose writes are. Found counts only grow and the threshold only drops, so a pair stays
/// in for the rest of the chunk, and a row passes over it without checking its sites again
/// (a word written by 55,000 copies of 306 instructions: every row popped and checked every
/// class twice). A bit per pair while the classes are few (allocated at the first pair), a
/// set beyond.
struct ClassPairs {
    classes: usize,
    bits: Vec<u64>,
    set: FxHashSet<(u32, u32)>,
}

impl ClassPairs {
    /// Classes up to which the pairs are bits (2^22 bits: 512 KiB).
    const MAX_BIT_CLASSES: usize = 1 << 11;

    fn new(classes: usize) -> Self {
        ClassPairs {
            classes,
            bits: Vec::new(),
            set: FxHashSet::default(),
        }
    }

    fn bit(&self, a: u32, b: u32) -> Option<usize> {
        let (a, b) = (a as usize, b as usize);
        (self.classes <= Self::MAX_BIT_CLASSES && a < self.classes && b < self.classes)
            .then(|| a.min(b) * self.classes + a.max(b))
    }

    fn contains(&self, a: u32, b: u32) -> bool {
        if a == NO_CLASS || b == NO_CLASS {
            return false;
        }
        match self.bit(a, b) {
            Some(i) => self
                .bits
                .get(i / 64)
                .is_some_and(|w| w & (1 << (i % 64)) != 0),
            None => self.set.contains(&(a.min(b), a.max(b))),
        }
    }

    fn insert(&mut self, a: u32, b: u32) {
        if a == NO_CLASS || b == NO_CLASS {
            return;
        }
        match self.bit(a, b) {
            Some(i) => {
                if self.bits.is_empty() {
                    self.bits = vec![0; (self.classes * self.classes).div_ceil(64)];
                }
                self.bits[i / 64] |= 1 << (i % 64);
            }
            None => {
                self.set.insert((a.min(b), a.max(b)));
            }
        }
    }
}

/// The threads of a chunk grouped by their sites (the distinct (instruction, kind) pairs of
/// their accesses there, sorted): whether a thread pair is saturated depends only on the
/// two classes.
#[derive(Default)]
struct SiteClasses {
    /// Per thread list, its class, or [`NO_CLASS`].
    of: Vec<u32>,
    /// Per class, its sites.
    sites: Vec<Vec<(InstId, AccessKind)>>,
    /// Per class, then for the threads without one, the lists of its threads that only
    /// read and of those that write, in increasing order.
    readers: Vec<Vec<u32>>,
    writers: Vec<Vec<u32>>,
}

/// The threads a row of the merges has still to visit, by class ([`SiteClasses::row`]):
/// per list of a class's readers or writers, its next thread, lowest first.
struct RowThreads {
    /// (thread list, group, position, writers): the group is the class, or one past the
    /// classes for the threads without one.
    next: std::collections::BinaryHeap<std::cmp::Reverse<(u32, u32, u32, bool)>>,
}

impl RowThreads {
    /// The next thread to visit, in increasing order, passing over the classes whose
    /// entry in `saturated_in` is `stamp` (found saturated in this row).
    /// The threads in `skip` are passed over.
    fn next(
        &mut self,
        classes: &SiteClasses,
        saturated_in: &[usize],
        stamp: usize,
        skip: std::ops::Range<usize>,
    ) -> Option<usize> {
        while let Some(std::cmp::Reverse((y, g, pos, writes))) = self.next.pop() {
            if saturated_in.get(g as usize) == Some(&stamp) {
                // The class's later threads are passed over with it.
                continue;
            }
            let list = if writes {
                &classes.writers[g as usize]
            } else {
                &classes.readers[g as usize]
            };
            if skip.contains(&(y as usize)) {
                let after = list.partition_point(|&z| (z as usize) < skip.end);
                if let Some(&z) = list.get(after) {
                    self.next
                        .push(std::cmp::Reverse((z, g, after as u32, writes)));
                }
                continue;
            }
            if let Some(&z) = list.get(pos as usize + 1) {
                self.next.push(std::cmp::Reverse((z, g, pos + 1, writes)));
            }
            return Some(y as usize);
        }
        None
    }
}

impl SiteClasses {
    fn get(&self, class: u32) -> Option<&[(InstId, AccessKind)]> {
        self.sites.get(class as usize).map(Vec::as_slice)
    }

    fn len(&self, class: u32) -> usize {
        self.get(class).map_or(0, <[_]>::len)
    }

    /// Whether some thread has no class (its group is the last of `readers`/`writers`).
    fn classless(&self) -> bool {
        let unclassed = |g: &[Vec<u32>]| g.last().is_some_and(|l| !l.is_empty());
        unclassed(&self.readers) || unclassed(&self.writers)
    }

    /// The threads the row of the writing thread list `x` visits after `after` (all when
    /// `None`): the readers anywhere, the writers after `x`. `None` when the classes are
    /// too many for a heap of them per row to pay (each thread alone in its class: a plain
    /// scan is cheaper).
    /// Classes for which `passed` holds are left out (found saturated with `x`'s class).
    fn row(
        &self,
        x: usize,
        after: Option<usize>,
        factor: usize,
        passed: Option<&ClassPairs>,
    ) -> Option<RowThreads> {
        if self.sites.len().saturating_mul(factor) > self.of.len() {
            return None;
        }
        let cx = self.of.get(x).copied().unwrap_or(NO_CLASS);
        let from = |list: &[u32], bound: Option<usize>| match bound {
            Some(b) => list.partition_point(|&i| i as usize <= b),
            None => 0,
        };
        let writers_after = Some(after.map_or(x, |a| a.max(x)));
        let mut next = std::collections::BinaryHeap::new();
        for (g, (r, w)) in self.readers.iter().zip(&self.writers).enumerate() {
            if passed.is_some_and(|p| p.contains(cx, g as u32)) {
                continue;
            }
            for (list, bound, writes) in [(r, after, false), (w, writers_after, true)] {
                let pos = from(list, bound);
                if let Some(&y) = list.get(pos) {
                    next.push(std::cmp::Reverse((y, g as u32, pos as u32, writes)));
                }
            }
        }
        Some(RowThreads { next })
    }
}

/// The instruction pairs any two threads of a chunk could race on
/// ([`candidate_keys`]).
enum Universe {
    /// These.
    Keys(FxHashSet<(InstId, InstId)>),
    /// Not computed: over [`MAX_UNIVERSE_SITES`] distinct sites.
    Large,
    /// Not computed: a thread has an over-approximated access.
    Unknown,
}

/// The instruction pairs that two threads of a chunk could race on (an access of each, at
/// least one writing, not both atomic), unless a thread is never skipped or the chunk has
/// more than [`MAX_UNIVERSE_SITES`] distinct sites.
fn candidate_keys(classes: &SiteClasses) -> Universe {
    if classes.classless() {
        return Universe::Unknown;
    }
    let mut all: Vec<(InstId, AccessKind)> = Vec::new();
    for s in &classes.sites {
        all.extend_from_slice(s);
        if all.len() > 4 * MAX_UNIVERSE_SITES {
            all.sort_unstable();
            all.dedup();
            if all.len() > MAX_UNIVERSE_SITES {
                return Universe::Large;
            }
        }
    }
    all.sort_unstable();
    all.dedup();
    if all.len() > MAX_UNIVERSE_SITES {
        return Universe::Large;
    }
    Universe::Keys(
        may_race_pairs(&all, &all)
            .map(|(i, j, _)| pair_key(i, j))
            .collect(),
    )
}

/// The instructions of a site of `a` and a site of `b` that may race, with whether both
/// write.
fn may_race_pairs<'s>(
    a: &'s [(InstId, AccessKind)],
    b: &'s [(InstId, AccessKind)],
) -> impl Iterator<Item = (InstId, InstId, bool)> + 's {
    a.iter().flat_map(move |&(i, ki)| {
        b.iter().filter_map(move |&(j, kj)| {
            may_race(ki, kj).then_some((i, j, ki.writes() && kj.writes()))
        })
    })
}

/// The (lower, higher) key of an instruction pair.
fn pair_key(i: InstId, j: InstId) -> (InstId, InstId) {
    (i.min(j), i.max(j))
}

fn saturated(
    a: &[(InstId, AccessKind)],
    b: &[(InstId, AccessKind)],
    found: &FxHashMap<(InstId, InstId), u32>,
    threshold: u32,
    skipped: &mut FxHashSet<(InstId, InstId)>,
) -> bool {
    let candidates = || may_race_pairs(a, b).map(|(i, j, _)| pair_key(i, j));
    if !candidates().all(|key| found.get(&key).is_some_and(|&n| n >= threshold)) {
        return false;
    }
    skipped.extend(candidates());
    true
}

/// Naive pairs of one chunk: unordered pairs of accesses from different threads, minus
/// read/read and atomic/atomic pairs.
fn naive_pairs(program: &Program, lists: &[ThreadLists<'_>]) -> u64 {
    let (mut n, mut r, mut a) = (0u128, 0u128, 0u128);
    let (mut n2, mut r2, mut a2) = (0u128, 0u128, 0u128);
    for list in lists {
        let reads = list.reads.len() as u128;
        // Plain writes carry an occurrence (unless it overflowed): only the others are
        // looked up.
        let atomics = list
            .writes
            .iter()
            .filter(|e| {
                e.occ() == OCC_NONE
                    && program
                        .actor_commands(list.thread as usize)
                        .get(e.index as usize)
                        .is_some_and(|c| {
                            matches!(
                                c.view(),
                                CommandView::Access {
                                    kind: AccessKind::Atomic,
                                    ..
                                }
                            )
                        })
            })
            .count() as u128;
        let all = reads + list.writes.len() as u128;
        n += all;
        n2 += all * all;
        r += reads;
        r2 += reads * reads;
        a += atomics;
        a2 += atomics * atomics;
    }
    let pairs = (n * n - n2) / 2 - (r * r - r2) / 2 - (a * a - a2) / 2;
    u64::try_from(pairs).unwrap_or(u64::MAX)
}

/// A candidate representative: ordered by lowest threads, then address, then program index.
type RepKey = (ThreadId, ThreadId, u32, u32, u32);

struct Group {
    pairs: FxHashSet<(u32, u32)>,
    /// Some thread pair that could race on these instructions was skipped.
    at_least: bool,
    rep: (RepKey, AccessSite, AccessSite),
    details: BTreeSet<(u32, ThreadId, ThreadId)>,
    truncated: bool,
}

/// Which list of the report a racing pair of accesses goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Class {
    /// [`RaceReport::races`].
    Race,
    /// [`RaceReport::benign`]: two plain writes of the same known value.
    Benign,
    /// [`RaceReport::possible`]: an access has an over-approximated extent.
    Possible,
}

#[derive(Default)]
struct Accumulator {
    /// Keyed by (class, lower instruction, higher instruction).
    groups: FxHashMap<(Class, InstId, InstId), Group>,
    race_tests: u64,
    thread_pairs_visited: u64,
    naive_pairs: u64,
    same_instruction_writes: u64,
    same_instruction_writes_at_least: bool,
    chunks_stopped: u64,
    words_over_budget: u64,
    /// Races noted ([`Accumulator::note`]: recorded or not), so that a chunk's check that
    /// found none is told from one that did ([`shift::Counts::quiet`]).
    notes: u64,
    /// Accesses tested against a window that was not empty: with none, a chunk's check
    /// never looked at what its accesses wrote ([`shift::Counts::quiet`]).
    windows: u64,
    /// The distinct benign instruction pairs recorded in the chunk being checked (at most
    /// [`MAX_BENIGN_PAIRS_PER_CHUNK`]), and whether a later one was not recorded.
    chunk_benign: FxHashSet<(InstId, InstId)>,
    benign_capped: bool,
    benign_words_capped: u64,
    /// Races recorded ([`Accumulator::record`] calls), for [`HOT_RECORDS`].
    records: u64,
    /// The (lower, higher) instruction pairs recorded since the last [`Vec::clear`], with
    /// repeats: which pairs one thread pair's merges found.
    recent: Vec<(InstId, InstId)>,
    /// The benign instruction pairs the current thread pair's merges found (they saturate
    /// only where every write of both instructions in the chunk is the same: see
    /// `uniform_writes`).
    recent_benign: Vec<(InstId, InstId)>,
    /// Instruction pairs some thread pairs of a chunk were not tested for.
    skipped: FxHashSet<(InstId, InstId)>,
    /// The instruction pairs saturated in the chunk being checked (outside
    /// [`Config::detail`]): a race on one found by a thread pair that is merged anyway (for
    /// another pair it may race on) keeps the group's lowest representative and marks its
    /// count "at least", without recording the thread pair. A word whose loads are all
    /// ordered after its 100 racing stores never saturates as a whole, so every thread
    /// pair was merged, each recording 10⁴ races into 5,050 sets (cubic in the stores).
    saturated: FxHashSet<(InstId, InstId)>,
    /// Under `warp_sync`, per (warp, thread of the CTA, chain key): the latest warp step of
    /// the warp that happens before that thread's commands of that key
    /// ([`Context::lockstep_bound`]; every lane of the warp asks the same).
    lockstep_steps: FxHashMap<(u32, u32, u32), u32>,
    /// [`HappensBeforeQuery::lanes_agree`] per (chain key, warp), as the twin classes of
    /// the chunks checked so far asked it (`twins` module).
    lanes_agree: FxHashMap<(u32, u32), bool>,
    /// The last chunk's twin classes and quiet class pairs, whose space the next chunk's
    /// reuse (a chunk allocating its own cost FlashAttention-2's backward kernel 5%).
    spare_twins: (Twins, FxHashMap<(u32, u32, bool), Quiet>),
    /// While the merges of a thread pair of twin classes run, what their `report`s left
    /// in the accumulator, in order (`twins::replay` leaves the same for another pair of
    /// the classes).
    log: Option<Vec<Reported>>,
}

impl Group {
    fn add_detail(&mut self, detail: (u32, ThreadId, ThreadId)) {
        if self.details.insert(detail) && self.details.len() > DETAILS_CAP {
            self.details.pop_last();
            self.truncated = true;
        }
    }
}

impl Accumulator {
    /// Notes that the current thread pair races on instructions `a` and `b` (for the
    /// saturation of the chunk), whether or not the race is recorded here; its class.
    fn note(&mut self, a: InstId, b: InstId, approx: bool, benign: bool) -> Class {
        self.notes += 1;
        let class = if approx {
            Class::Possible
        } else if benign {
            Class::Benign
        } else {
            Class::Race
        };
        let key = (a.min(b), a.max(b));
        // Only real races saturate an instruction pair: a benign pair must not let a thread
        // pair that races for real go untested. A pair already saturated needs no count.
        if class == Class::Race
            && self.recent.last() != Some(&key)
            && !self.saturated.contains(&key)
        {
            self.recent.push(key);
        }
        if class == Class::Benign && self.recent_benign.last() != Some(&key) {
            self.recent_benign.push(key);
        }
        class
    }

    #[cold]
    fn record(
        &mut self,
        first: AccessSite,
        second: AccessSite,
        addr: u32,
        benign: bool,
        detail: bool,
    ) {
        self.records += 1;
        let class = self.note(
            first.inst,
            second.inst,
            first.approx || second.approx,
            benign,
        );
        let key = (
            class,
            first.inst.min(second.inst),
            first.inst.max(second.inst),
        );
        if class == Class::Benign && !self.chunk_benign.contains(&(key.1, key.2)) {
            if self.chunk_benign.len() >= MAX_BENIGN_PAIRS_PER_CHUNK {
                // Not recorded here: where another chunk records the pair, its count is a
                // lower bound.
                self.benign_capped = true;
                self.skipped.insert((key.1, key.2));
                return;
            }
            self.chunk_benign.insert((key.1, key.2));
        }
        let rep_key = (first.thread, second.thread, addr, first.index, second.index);
        if class == Class::Race
            && self.saturated.contains(&(key.1, key.2))
            && let Some(group) = self.groups.get_mut(&key)
        {
            if rep_key < group.rep.0 {
                group.rep = (rep_key, first, second);
            }
            group.at_least = true;
            return;
        }
        let group = self.groups.entry(key).or_insert_with(|| Group {
            pairs: FxHashSet::default(),
            at_least: false,
            rep: (rep_key, first, second),
            details: BTreeSet::new(),
            truncated: false,
        });
        group.pairs.insert((first.thread.0, second.thread.0));
        if rep_key < group.rep.0 {
            group.rep = (rep_key, first, second);
        }
        if detail {
            group.add_detail((addr, first.thread, second.thread));
        }
    }

    fn merge(mut self, other: Accumulator) -> Accumulator {
        self.race_tests += other.race_tests;
        self.thread_pairs_visited += other.thread_pairs_visited;
        self.naive_pairs += other.naive_pairs;
        self.same_instruction_writes += other.same_instruction_writes;
        self.same_instruction_writes_at_least |= other.same_instruction_writes_at_least;
        self.chunks_stopped += other.chunks_stopped;
        self.words_over_budget += other.words_over_budget;
        self.benign_words_capped += other.benign_words_capped;
        self.records += other.records;
        self.notes += other.notes;
        self.windows += other.windows;
        self.skipped.extend(other.skipped);
        for (key, theirs) in other.groups {
            match self.groups.get_mut(&key) {
                None => {
                    self.groups.insert(key, theirs);
                }
                Some(ours) => {
                    ours.pairs.extend(theirs.pairs);
                    ours.at_least |= theirs.at_least;
                    if theirs.rep.0 < ours.rep.0 {
                        ours.rep = theirs.rep;
                    }
                    ours.truncated |= theirs.truncated;
                    for d in theirs.details {
                        ours.add_detail(d);
                    }
                }
            }
        }
        self
    }

    #[cold]
    fn into_report(self, config: &Config) -> RaceReport {
        let mut races: Vec<Race> = Vec::new();
        let mut possible: Vec<Race> = Vec::new();
        let mut benign: Vec<Race> = Vec::new();
        for ((class, lo, hi), mut g) in self.groups {
            if matches!(class, Class::Race | Class::Benign) && self.skipped.contains(&(lo, hi)) {
                g.at_least = true;
            }
            let ((_, _, addr, _, _), first, second) = g.rep;
            let race = Race {
                first,
                second,
                hazard: Hazard::of(first.kind, second.kind),
                addr,
                thread_pairs: g.pairs.len() as u64,
                thread_pairs_at_least: g.at_least,
                details: if config.detail {
                    g.details.into_iter().collect()
                } else {
                    Vec::new()
                },
                details_truncated: g.truncated || (config.detail && g.at_least),
            };
            match class {
                Class::Race => races.push(race),
                Class::Benign => benign.push(race),
                Class::Possible => possible.push(race),
            }
        }
        let order = |r: &Race| {
            (
                r.first.thread,
                r.first.index,
                r.second.thread,
                r.second.index,
            )
        };
        races.sort_by_key(order);
        possible.sort_by_key(order);
        benign.sort_by_key(order);
        let possible_thread_pairs = possible.iter().map(|r| r.thread_pairs).sum();
        RaceReport {
            races,
            benign,
            possible,
            stats: RaceStats {
                possible_thread_pairs,
                race_tests: self.race_tests,
                thread_pairs_visited: self.thread_pairs_visited,
                naive_pairs: self.naive_pairs,
                same_instruction_writes: self.same_instruction_writes,
                same_instruction_writes_at_least: self.same_instruction_writes_at_least,
                chunks_stopped: self.chunks_stopped,
                words_over_budget: self.words_over_budget,
                benign_words_capped: self.benign_words_capped,
                ..RaceStats::default()
            },
        }
    }
}

mod proxy;
pub use proxy::{MissingProxyFence, missing_proxy_fences};

#[cfg(test)]
mod tests;
