//! The named-barrier state machine.
//!
//! Semantics (WEFT paper §3.3, PTX ISA `barrier`):
//! - A barrier is unconfigured until its first operation of a generation, which configures the
//!   expected count. A later operation of the same generation with another count is a
//!   [`SyncError::CountMismatch`].
//! - Arrival is per warp (PTX ISA `barrier`: "causes executing thread to wait for all
//!   non-exited threads from its warp and marks warps' arrival at barrier"). A lane's
//!   operation first joins its warp's *gather*: the lanes of the warp that executed this
//!   operation, keyed by [`GatherKey`] (barrier id, count, operation kind, and the instruction
//!   when `.aligned`). A lane arriving with another key while its warp has an open gather is
//!   a [`SyncError::WarpDivergence`]. When every non-exited lane of the warp has joined (an
//!   exit of a missing lane can complete the gather), the warp registers as one unit
//!   ([`Event::WarpRegistered`]): all its lanes become participants at once, and its exited
//!   lanes count as registered too. Non-blocking lanes (`arrive`) are released then; blocking
//!   ones (`sync`, `red`) when the generation completes. With a warp size of 1 every thread
//!   is its own warp.
//! - When the registered count reaches the expected count, the generation completes
//!   ([`Event::Completed`]): its blocked threads wake and the barrier is recycled
//!   (unconfigured again), so the next operation opens generation `g + 1`.
//! - A barrier for all threads of the CTA (no count operand) also counts every exited thread:
//!   it is released when the only threads missing have exited. A counted barrier is not
//!   released by warps that exited without registering — that is a deadlock.
//! - Mixing `bar.red` with `bar.sync`/`bar.arrive` in one generation is undefined in PTX and
//!   an error here.
//!
//! Warp barriers (`bar.warp.sync mask`) use the same machinery on a virtual barrier per warp,
//! expecting the lanes of `mask`; each lane registers individually (no gather).

pub(crate) mod snapshot;
use std::fmt;

use thiserror::Error;

use crate::{BarrierCount, BarrierOp, InstId, ThreadId};

/// What configures a generation: the count of a named barrier's operation, or the member
/// mask of a `bar.warp.sync`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BarrierConfig {
    /// A named barrier's count (all threads when the operation gave none).
    Count(BarrierCount),
    /// A warp barrier's member mask.
    Mask(u32),
}

/// Named barriers per CTA.
pub const NUM_NAMED_BARRIERS: u32 = 16;

/// Which barrier an operation addresses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BarrierKey {
    /// Named barrier 0–15.
    Named(u32),
    /// The warp barrier of the given warp (`bar.warp.sync`).
    Warp(u32),
}

impl fmt::Display for BarrierKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BarrierKey::Named(id) => write!(f, "barrier {id}"),
            BarrierKey::Warp(w) => write!(f, "warp barrier of warp {w}"),
        }
    }
}

/// One registration at a barrier: which thread, and which of its commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Participant {
    /// The registering thread.
    pub thread: ThreadId,
    /// Index of the command in the thread's program.
    pub command: u32,
    /// The operation (warp barriers register as [`BarrierOp::Sync`]).
    pub op: BarrierOp,
}

/// A completed generation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion {
    /// The barrier.
    pub key: BarrierKey,
    /// 1-based generation number.
    pub generation: u32,
    /// The expected count it was configured with.
    pub expected: u32,
    /// Every registration of the generation, in registration order. The blocking ones
    /// (`op.blocks()`) are the threads that wake now.
    pub participants: Vec<Participant>,
    /// Exited threads that counted as registered (the rules in the module doc), in thread
    /// order. Later stages take this list rather than re-deriving the rule.
    pub counted_exits: Vec<ThreadId>,
    /// Whether some registration had no count (a barrier for all threads of the CTA).
    pub all_threads: bool,
}

/// What a registration (or an exit) caused. An empty list means the lane waits for the
/// rest of its warp.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A warp registered as one unit: every lane in `lanes` joined generation `generation`
    /// of `key`. Its non-blocking lanes (`arrive`) continue now; blocking ones wait for
    /// [`Event::Completed`]. For `bar.warp.sync` each lane registers alone.
    WarpRegistered {
        /// The barrier.
        key: BarrierKey,
        /// The generation joined (1-based).
        generation: u32,
        /// The lanes that registered, in the order they joined the gather.
        lanes: Vec<Participant>,
    },
    /// A generation completed.
    Completed(Completion),
}

/// What identifies one barrier operation of a warp: lanes gather only with lanes of the
/// same key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct GatherKey {
    /// The named barrier.
    pub id: u32,
    /// The count operand.
    pub count: BarrierCount,
    /// The operation.
    pub op: BarrierOp,
    /// The instruction, for `.aligned` operations (all lanes must execute the same one);
    /// `None` for non-aligned ones, which gather across instructions.
    pub inst: Option<InstId>,
}

/// A warp whose lanes are gathering at a barrier operation (for deadlock reports).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenGather<'a> {
    /// The warp.
    pub warp: u32,
    /// The operation the lanes execute.
    pub key: GatherKey,
    /// The generation the warp would join if it registered now.
    pub generation: u32,
    /// The lanes that joined, in order (they are blocked).
    pub lanes: &'a [Participant],
    /// Non-exited lanes of the warp that have not joined.
    pub missing: Vec<ThreadId>,
}

/// A generation that has registrations but has not completed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OpenGeneration<'a> {
    /// The barrier.
    pub key: BarrierKey,
    /// 1-based generation number.
    pub generation: u32,
    /// The configured count.
    pub expected: u32,
    /// Threads registered so far, counting exited lanes as the PTX rules above say.
    pub registered: u32,
    /// The registrations so far.
    pub participants: &'a [Participant],
}

/// A barrier operation that puts the CTA into an error state.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum SyncError {
    /// Lanes of one warp at different barrier operations (ids, counts, kinds, or different
    /// instructions of an `.aligned` one): barrier divergence.
    #[error(
        "warp {warp}: lanes at different barrier operations (thread {} at barrier {}, thread {} at barrier {})",
        first.thread.0, first_key.id, participant.thread.0, key.id
    )]
    WarpDivergence {
        /// The warp.
        warp: u32,
        /// The operation of the warp's open gather.
        first_key: GatherKey,
        /// A lane of the open gather (the first that joined).
        first: Participant,
        /// The diverging operation.
        key: GatherKey,
        /// The diverging lane.
        participant: Participant,
    },
    /// A named-barrier id outside 0–15.
    #[error("barrier id {id} is out of range 0-15")]
    InvalidId {
        /// The raw id.
        id: u32,
        /// The offending registration.
        participant: Participant,
    },
    /// A count of zero, not a multiple of the warp size, or larger than the CTA.
    #[error("{key}: invalid thread count {count} (CTA has {cta_threads} threads)")]
    InvalidCount {
        /// The barrier.
        key: BarrierKey,
        /// The raw count.
        count: u32,
        /// Threads in the CTA.
        cta_threads: u32,
        /// The offending registration.
        participant: Participant,
    },
    /// A warp barrier whose mask does not contain the executing lane.
    #[error("{key}: mask {mask:#x} does not contain the executing lane")]
    LaneNotInMask {
        /// The barrier.
        key: BarrierKey,
        /// The mask.
        mask: u32,
        /// The offending registration.
        participant: Participant,
    },
    /// Two operations of one generation with different counts (or warp masks).
    #[error(
        "{key} generation {generation}: configured for {} but registered with {}",
        describe_config(*configured),
        describe_config(*got)
    )]
    CountMismatch {
        /// The barrier.
        key: BarrierKey,
        /// The generation.
        generation: u32,
        /// The count (or mask) the generation was configured with.
        configured: BarrierConfig,
        /// The registration that configured it.
        first: Participant,
        /// The conflicting count (or mask).
        got: BarrierConfig,
        /// The conflicting registration.
        participant: Participant,
    },
    /// More threads registered than the generation expected.
    #[error("{key} generation {generation}: {registered} threads registered, {expected} expected")]
    Overflow {
        /// The barrier.
        key: BarrierKey,
        /// The generation.
        generation: u32,
        /// The configured count.
        expected: u32,
        /// Threads registered including this registration.
        registered: u32,
        /// The registration that overflowed.
        participant: Participant,
    },
    /// `bar.red` mixed with `bar.sync`/`bar.arrive` in one generation.
    #[error("{key} generation {generation}: bar.red mixed with bar.sync/bar.arrive")]
    MixedRed {
        /// The barrier.
        key: BarrierKey,
        /// The generation.
        generation: u32,
        /// The registration that opened the generation.
        first: Participant,
        /// The conflicting registration.
        participant: Participant,
    },
}

/// How a configuration reads in a message: a count of threads, "all threads", or a mask.
fn describe_config(config: BarrierConfig) -> String {
    match config {
        BarrierConfig::Mask(mask) => format!("mask {mask:#x}"),
        BarrierConfig::Count(BarrierCount::All) => "all threads (no count)".into(),
        BarrierConfig::Count(BarrierCount::Threads(n)) => format!("{n} threads"),
    }
}

/// A generation in progress.
#[derive(Debug, Clone)]
struct Open {
    /// Configured count (named) or mask (warp).
    config: BarrierConfig,
    /// The generation is for all threads (no count): every exited thread counts as
    /// registered.
    all: bool,
    expected: u32,
    red: bool,
    /// Registrations (duplicates allowed: a warp may arrive twice).
    participants: Vec<Participant>,
    /// Threads that registered, as a bitset (to avoid counting an exited thread twice).
    arrived: Vec<u64>,
    /// Warps with at least one registration (counted barriers absorb their exited lanes).
    touched: Vec<u64>,
    /// Exited threads counted as registered.
    exited_counted: u32,
}

impl Open {
    /// Whether an exited thread (warp `warp`, lane `lane`) that did not register counts as
    /// registered at this generation of `key` (the PTX rules in the module doc).
    fn counts_exit(&self, key: BarrierKey, warp: u32, lane: u32) -> bool {
        match key {
            BarrierKey::Named(_) => self.all || bit(&self.touched, warp),
            BarrierKey::Warp(w) => {
                w == warp
                    && lane < 32
                    && matches!(self.config, BarrierConfig::Mask(m) if m & (1 << lane) != 0)
            }
        }
    }

    fn registered(&self) -> u32 {
        self.participants.len() as u32 + self.exited_counted
    }
}

#[derive(Debug, Clone, Default)]
struct Slot {
    completed: u32,
    open: Option<Open>,
}

fn bit(set: &[u64], i: u32) -> bool {
    set[(i / 64) as usize] & (1 << (i % 64)) != 0
}

fn set_bit(set: &mut [u64], i: u32) {
    set[(i / 64) as usize] |= 1 << (i % 64);
}

/// [`set_bit`] of each of `bits`, one store per run of bits in the same word (the lanes of
/// a warp that register together are a run of threads).
fn set_bits(set: &mut [u64], bits: impl Iterator<Item = u32>) {
    let mut word = u32::MAX;
    let mut mask = 0u64;
    for i in bits {
        if i / 64 != word {
            if mask != 0 {
                set[word as usize] |= mask;
            }
            word = i / 64;
            mask = 0;
        }
        mask |= 1 << (i % 64);
    }
    if mask != 0 {
        set[word as usize] |= mask;
    }
}

/// Bit `thread - first` of each of `lanes`, lanes of the warp whose first thread is
/// `first`: without a branch per lane. Meaningful when the warp has at most 64 lanes.
fn lane_bits(first: u32, lanes: &[Participant]) -> u64 {
    lanes.iter().fold(0, |mask, p| {
        mask | 1u64.wrapping_shl(p.thread.0.wrapping_sub(first))
    })
}

/// Sets bit `first + l` of `set` for each bit `l` of `mask` (lanes within 64 of the first
/// thread `first` of their warp): one word operation, two for lanes that straddle two
/// words (a warp size that does not divide 64).
fn set_lane_bits(set: &mut [u64], first: u32, mask: u64) {
    let word = (first / 64) as usize;
    let bits = u128::from(mask) << (first % 64);
    set[word] |= bits as u64;
    let high = (bits >> 64) as u64;
    if high != 0 {
        set[word + 1] |= high;
    }
}

/// Lanes of one warp gathering at a barrier operation.
#[derive(Debug, Clone)]
struct Gather {
    key: GatherKey,
    lanes: Vec<Participant>,
    /// [`lane_bits`] of `lanes` (kept as they join, so that the warp's arrival bits are
    /// set at once when it registers); meaningful when the warp has at most 64 lanes.
    mask: u64,
}

/// The barrier stored in slot `index` (the inverse of `BarrierFile::slot_index`).
fn slot_key(index: usize) -> BarrierKey {
    // Slots are created from a `u32` count (16 + warps), so the index fits.
    let index = index as u32;
    if index < NUM_NAMED_BARRIERS {
        BarrierKey::Named(index)
    } else {
        BarrierKey::Warp(index - NUM_NAMED_BARRIERS)
    }
}

/// The state of every named barrier and warp barrier of one CTA.
#[derive(Debug, Clone)]
pub struct BarrierFile {
    cta_threads: u32,
    warp_size: u32,
    exited: Vec<u64>,
    exited_per_warp: Vec<u32>,
    total_exited: u32,
    /// Named barriers at 0..16, warp barriers after.
    slots: Vec<Slot>,
    /// Per warp, its open gather.
    gathers: Vec<Option<Gather>>,
    /// The thread and warp bitsets of completed generations, cleared, for the next ones
    /// (a loop completes a generation per trip: each allocated both).
    spare: Vec<(Vec<u64>, Vec<u64>)>,
    /// Emptied lane lists of registered warps ([`BarrierFile::recycle_lanes`]), for the
    /// next gathers: a loop's warps gather once per trip, each a list.
    spare_lanes: Vec<Vec<Participant>>,
    /// Emptied participant lists of completed generations
    /// ([`BarrierFile::recycle_participants`]), for the next generations.
    spare_participants: Vec<Vec<Participant>>,
}

/// Emptied lists kept for reuse at most (more than a CTA's warps ever hold at once would
/// only keep memory).
const SPARE_LISTS: usize = 64;

impl BarrierFile {
    /// A fresh CTA: all barriers unconfigured, no thread exited.
    ///
    /// # Panics
    /// If `warp_size` is zero.
    pub fn new(cta_threads: u32, warp_size: u32) -> Self {
        assert!(warp_size > 0, "warp size must be positive");
        let warps = cta_threads.div_ceil(warp_size);
        BarrierFile {
            cta_threads,
            warp_size,
            exited: vec![0; cta_threads.div_ceil(64) as usize],
            exited_per_warp: vec![0; warps as usize],
            total_exited: 0,
            slots: vec![Slot::default(); (NUM_NAMED_BARRIERS + warps) as usize],
            gathers: vec![None; warps as usize],
            spare: Vec::new(),
            spare_lanes: Vec::new(),
            spare_participants: Vec::new(),
        }
    }

    fn slot_index(&self, key: BarrierKey) -> usize {
        match key {
            BarrierKey::Named(id) => id as usize,
            BarrierKey::Warp(w) => (NUM_NAMED_BARRIERS + w) as usize,
        }
    }

    fn warp_of(&self, thread: ThreadId) -> u32 {
        thread.0 / self.warp_size
    }

    /// Number of lanes of `warp` that exist in the CTA (the last warp may be partial).
    fn lanes_in_warp(&self, warp: u32) -> u32 {
        let start = warp * self.warp_size;
        (self.cta_threads - start).min(self.warp_size)
    }

    /// A named-barrier operation of `participant.thread` on barrier `id`, at instruction
    /// `inst` (`aligned`: the `.aligned` form, whose lanes must all execute `inst`).
    ///
    /// The lane joins its warp's gather; the returned events say what happened (empty: the
    /// lane waits for the rest of its warp). The id and count are validated on each lane;
    /// count mismatch, `bar.red` mixing and overflow when the warp registers.
    pub fn register(
        &mut self,
        participant: Participant,
        id: u32,
        count: BarrierCount,
        inst: InstId,
        aligned: bool,
    ) -> Result<Vec<Event>, SyncError> {
        let warp = self.join(participant, id, count, inst, aligned)?;
        let mut events = Vec::new();
        self.try_register_gather(warp, &mut events)?;
        Ok(events)
    }

    /// [`BarrierFile::register`] of each of `lanes` in turn (the same operation, e.g. the
    /// lanes of a warp that execute it together), appending what each caused to `events`.
    /// At an error the events of the lanes before it are in `events`, and the lanes after
    /// it are not registered.
    pub fn register_lanes(
        &mut self,
        lanes: &[Participant],
        id: u32,
        count: BarrierCount,
        inst: InstId,
        aligned: bool,
        events: &mut Vec<Event>,
    ) -> Result<(), SyncError> {
        let mut k = 0;
        while k < lanes.len() {
            let (n, result) = self.register_run_into(&lanes[k..], id, count, inst, aligned, events);
            k += n;
            result?;
        }
        Ok(())
    }

    /// [`BarrierFile::register`] of the first lanes of `lanes` (non-empty; the same
    /// operation) in turn, up to the first whose call has events or fails: the lanes of one
    /// warp that execute the operation one after the other, until the one that completes
    /// the warp's gather. Returns how many lanes were registered, the last one included,
    /// and what the last one's call returned (the calls before it return no events).
    pub fn register_run(
        &mut self,
        lanes: &[Participant],
        id: u32,
        count: BarrierCount,
        inst: InstId,
        aligned: bool,
    ) -> (usize, Result<Vec<Event>, SyncError>) {
        let mut events = Vec::new();
        let (n, result) = self.register_run_into(lanes, id, count, inst, aligned, &mut events);
        (n, result.map(|()| events))
    }

    /// [`BarrierFile::register_run`], appending the events to `events` (nothing at an
    /// error): a caller that registers run after run reuses one list instead of a new one
    /// per run.
    pub fn register_run_into(
        &mut self,
        lanes: &[Participant],
        id: u32,
        count: BarrierCount,
        inst: InstId,
        aligned: bool,
        events: &mut Vec<Event>,
    ) -> (usize, Result<(), SyncError>) {
        let Some(&p) = lanes.first() else {
            return (0, Ok(()));
        };
        let warp = match self.join(p, id, count, inst, aligned) {
            Ok(warp) => warp,
            Err(e) => return (1, Err(e)),
        };
        let mut k = 1;
        // The lanes of the same warp and operation that follow pass the same checks and
        // join the same gather, until it is complete (registering an incomplete gather does
        // nothing: only the lane that completes it has events).
        if let Some(g) = self.gathers[warp as usize].as_mut() {
            let present = g.lanes.len() as u32 + self.exited_per_warp[warp as usize];
            let lanes_in_warp = (self.cta_threads - warp * self.warp_size).min(self.warp_size);
            let room = lanes_in_warp.saturating_sub(present) as usize;
            // In the warp: its first thread at most `warp_size - 1` below (no division
            // per lane).
            let (first, ws) = (warp * self.warp_size, self.warp_size);
            let fits = |q: &Participant| (q.thread.0.wrapping_sub(first) < ws) & (q.op == p.op);
            let rest = &lanes[k..];
            let rest = &rest[..rest.len().min(room)];
            // The whole run at once, without a branch per lane (the lanes of a warp that
            // execute the operation together all fit), its lanes' bits in the same pass;
            // lane by lane up to the first that does not fit otherwise.
            let (all, mask) = rest.iter().fold((true, 0u64), |(all, mask), q| {
                let lane = q.thread.0.wrapping_sub(first);
                (all & fits(q), mask | 1u64.wrapping_shl(lane))
            });
            let (same, mask) = if all {
                (rest.len(), mask)
            } else {
                let same = rest.iter().position(|q| !fits(q)).unwrap_or(rest.len());
                (same, lane_bits(first, &rest[..same]))
            };
            g.lanes.extend_from_slice(&rest[..same]);
            g.mask |= mask;
            k += same;
        }
        (k, self.try_register_gather(warp, events))
    }

    /// The lane joins its warp's gather (the checks of [`BarrierFile::register`] that come
    /// before the warp registers); returns the warp.
    fn join(
        &mut self,
        participant: Participant,
        id: u32,
        count: BarrierCount,
        inst: InstId,
        aligned: bool,
    ) -> Result<u32, SyncError> {
        if id >= NUM_NAMED_BARRIERS {
            return Err(SyncError::InvalidId { id, participant });
        }
        if let BarrierCount::Threads(n) = count {
            if n == 0 || n % self.warp_size != 0 || n > self.cta_threads {
                return Err(SyncError::InvalidCount {
                    key: BarrierKey::Named(id),
                    count: n,
                    cta_threads: self.cta_threads,
                    participant,
                });
            }
        }
        let key = GatherKey {
            id,
            count,
            op: participant.op,
            inst: aligned.then_some(inst),
        };
        let warp = self.warp_of(participant.thread);
        let bit = lane_bits(warp * self.warp_size, &[participant]);
        match &mut self.gathers[warp as usize] {
            Some(g) if g.key != key => {
                return Err(SyncError::WarpDivergence {
                    warp,
                    first_key: g.key,
                    first: g.lanes[0],
                    key,
                    participant,
                });
            }
            Some(g) => {
                g.lanes.push(participant);
                g.mask |= bit;
            }
            slot @ None => {
                // Room for the whole warp (a list given back, or a new one): lanes join
                // one at a time.
                let mut lanes = self
                    .spare_lanes
                    .pop()
                    .unwrap_or_else(|| Vec::with_capacity(self.warp_size.min(64) as usize));
                lanes.push(participant);
                *slot = Some(Gather {
                    key,
                    lanes,
                    mask: bit,
                })
            }
        }
        Ok(warp)
    }

    /// How many lanes of `warp` have still to join a barrier operation before its gather
    /// completes: its non-exited lanes that have not joined the open gather (all of them
    /// when none is open). A lane that joins then completes the gather when this is 1.
    pub fn gather_missing(&self, warp: u32) -> u32 {
        let joined = self.gathers[warp as usize]
            .as_ref()
            .map_or(0, |g| g.lanes.len() as u32);
        self.lanes_in_warp(warp)
            .saturating_sub(joined + self.exited_per_warp[warp as usize])
    }

    /// Whether every non-exited lane of `warp` has joined its gather.
    fn gather_complete(&self, warp: u32) -> bool {
        self.gathers[warp as usize].as_ref().is_some_and(|g| {
            g.lanes.len() as u32 + self.exited_per_warp[warp as usize] >= self.lanes_in_warp(warp)
        })
    }

    /// Registers `warp` if every non-exited lane has joined its gather, appending the
    /// events to `events` (nothing at an error).
    fn try_register_gather(&mut self, warp: u32, events: &mut Vec<Event>) -> Result<(), SyncError> {
        if !self.gather_complete(warp) {
            return Ok(());
        }
        let Some(g) = self.gathers[warp as usize].take() else {
            unreachable!("checked above")
        };
        let expected = g.key.count.resolve(self.cta_threads);
        let config = BarrierConfig::Count(g.key.count);
        // An operation without a count and one with a count never configure the same
        // generation, even when the count equals the CTA size: PTX releases only the former
        // when the missing threads have exited, so mixing them would make the outcome depend
        // on when threads exit. The mismatch is reported.
        let mask = (self.warp_size <= 64).then_some(g.mask);
        self.register_unit(
            g.lanes,
            mask,
            BarrierKey::Named(g.key.id),
            config,
            expected,
            g.key.count == BarrierCount::All,
            events,
        )
    }

    /// Registers `bar.warp.sync mask` of `participant.thread` on its warp's barrier
    /// ([`Event::WarpRegistered`] with one lane).
    pub fn register_warp(
        &mut self,
        participant: Participant,
        mask: u32,
    ) -> Result<Vec<Event>, SyncError> {
        self.register_warp_run(&[participant], mask).1
    }

    /// [`BarrierFile::register_warp`] of each of `lanes` in turn (the same `bar.warp.sync
    /// mask`), appending what each caused to `events`, as [`BarrierFile::register_lanes`]
    /// does for a named barrier: at an error the events of the lanes before it are in
    /// `events`, and the lanes after it are not registered.
    pub fn register_warp_lanes(
        &mut self,
        lanes: &[Participant],
        mask: u32,
        events: &mut Vec<Event>,
    ) -> Result<(), SyncError> {
        let mut k = 0;
        while k < lanes.len() {
            let (n, result) = self.register_warp_run_into(&lanes[k..], mask, events);
            k += n;
            result?;
        }
        Ok(())
    }

    /// [`BarrierFile::register_warp`] of the first lanes of `lanes` in turn (the same
    /// `bar.warp.sync mask`, e.g. the lanes of a warp that execute it together), as one
    /// registration: the lanes from the first on that are of its warp, members of `mask`,
    /// distinct and not yet registered at the open generation, up to the one that completes
    /// it. Returns how many lanes were registered (at least one; the first alone when it
    /// fails) and the result: one [`Event::WarpRegistered`] naming them in order, then the
    /// completion if the last completed the generation — what their single registrations
    /// would have returned together (each but the last completes nothing).
    pub fn register_warp_run(
        &mut self,
        lanes: &[Participant],
        mask: u32,
    ) -> (usize, Result<Vec<Event>, SyncError>) {
        let mut events = Vec::new();
        let (n, result) = self.register_warp_run_into(lanes, mask, &mut events);
        (n, result.map(|()| events))
    }

    /// [`BarrierFile::register_warp_run`], appending the events to `events` (nothing at an
    /// error), as [`BarrierFile::register_run_into`].
    pub fn register_warp_run_into(
        &mut self,
        lanes: &[Participant],
        mask: u32,
        events: &mut Vec<Event>,
    ) -> (usize, Result<(), SyncError>) {
        let Some(&participant) = lanes.first() else {
            return (0, Ok(()));
        };
        let warp = self.warp_of(participant.thread);
        let key = BarrierKey::Warp(warp);
        let lane = participant.thread.0 % self.warp_size;
        if lane >= 32 || mask & (1 << lane) == 0 {
            let e = SyncError::LaneNotInMask {
                key,
                mask,
                participant,
            };
            return (1, Err(e));
        }
        let existing = self.lanes_in_warp(warp);
        let valid_lanes = if existing >= 32 {
            u32::MAX
        } else {
            (1u32 << existing) - 1
        };
        let expected = (mask & valid_lanes).count_ones();
        // Lanes that follow register without an error and without completing the
        // generation before the last of them: same warp, in the mask, not registered at the
        // open generation (of the same mask) nor before in `lanes`, and room left.
        let open = self.slots[self.slot_index(key)].open.as_ref();
        let mut room = match open {
            Some(o) if o.config != BarrierConfig::Mask(mask) => 0,
            Some(o) => o.expected.saturating_sub(o.registered()),
            None => expected.saturating_sub(self.exited_lanes_in_mask(warp, mask)),
        };
        let mut seen = 0u32;
        let first = warp * self.warp_size;
        let mut n = 0;
        for p in lanes {
            let Some(l) = p.thread.0.checked_sub(first).filter(|&l| l < 32) else {
                break;
            };
            let registered = open.is_some_and(|o| bit(&o.arrived, p.thread.0));
            if room == 0
                || p.thread.0 / self.warp_size != warp
                || mask & (1 << l) == 0
                || seen & (1 << l) != 0
                || registered
                || bit(&self.exited, p.thread.0)
            {
                break;
            }
            seen |= 1 << l;
            room -= 1;
            n += 1;
        }
        // The lanes' bits: those the loop took, or the first lane alone (a lane of the
        // warp below 32, checked above).
        let bits = if n == 0 { 1 << lane } else { u64::from(seen) };
        let n = n.max(1);
        let unit = match self.spare_lanes.pop() {
            Some(mut unit) => {
                unit.extend_from_slice(&lanes[..n]);
                unit
            }
            None => lanes[..n].to_vec(),
        };
        let result = self.register_unit(
            unit,
            Some(bits),
            key,
            BarrierConfig::Mask(mask),
            expected,
            false,
            events,
        );
        (n, result)
    }

    /// Registers `lanes` (non-empty, all of one warp) at once, appending the events to
    /// `events` (nothing at an error). `mask`: their [`lane_bits`], when the lanes are
    /// within 64 of the warp's first (else each lane's bit is set).
    #[allow(clippy::too_many_arguments)]
    fn register_unit(
        &mut self,
        lanes: Vec<Participant>,
        mask: Option<u64>,
        key: BarrierKey,
        config: BarrierConfig,
        expected: u32,
        all: bool,
        events: &mut Vec<Event>,
    ) -> Result<(), SyncError> {
        let first_lane = lanes[0];
        let last_lane = lanes[lanes.len() - 1];
        let warp = self.warp_of(first_lane.thread);
        let index = self.slot_index(key);
        let generation = self.slots[index].completed + 1;
        if self.slots[index].open.is_none() {
            let exited_counted = match key {
                _ if all => self.total_exited,
                BarrierKey::Named(_) => 0,
                BarrierKey::Warp(w) => match config {
                    BarrierConfig::Mask(mask) => self.exited_lanes_in_mask(w, mask),
                    BarrierConfig::Count(_) => 0,
                },
            };
            let (arrived, touched) = self.spare.pop().unwrap_or_else(|| {
                (
                    vec![0; self.cta_threads.div_ceil(64) as usize],
                    vec![0; self.exited_per_warp.len().div_ceil(64)],
                )
            });
            let participants = self
                .spare_participants
                .pop()
                .unwrap_or_else(|| Vec::with_capacity(expected.min(self.cta_threads) as usize));
            self.slots[index].open = Some(Open {
                config,
                all,
                expected,
                red: first_lane.op == BarrierOp::Red,
                participants,
                arrived,
                touched,
                exited_counted,
            });
        }
        let exited_in_warp = self.exited_per_warp[warp as usize];
        let warp_first = warp * self.warp_size;
        let Some(open) = self.slots[index].open.as_mut() else {
            unreachable!("opened above")
        };
        if open.config != config {
            return Err(SyncError::CountMismatch {
                key,
                generation,
                configured: open.config,
                first: open.participants.first().copied().unwrap_or(first_lane),
                got: config,
                participant: first_lane,
            });
        }
        let is_red = first_lane.op == BarrierOp::Red;
        if open.red != is_red {
            return Err(SyncError::MixedRed {
                key,
                generation,
                first: open.participants.first().copied().unwrap_or(first_lane),
                participant: first_lane,
            });
        }
        // A counted named barrier absorbs the exited lanes of each warp that registers.
        if matches!(key, BarrierKey::Named(_)) && !open.all && !bit(&open.touched, warp) {
            set_bit(&mut open.touched, warp);
            open.exited_counted += exited_in_warp;
        }
        match mask {
            Some(mask) => set_lane_bits(&mut open.arrived, warp_first, mask),
            None => set_bits(&mut open.arrived, lanes.iter().map(|p| p.thread.0)),
        }
        open.participants.extend_from_slice(&lanes);
        let registered = open.registered();
        if registered > open.expected {
            return Err(SyncError::Overflow {
                key,
                generation,
                expected: open.expected,
                registered,
                participant: last_lane,
            });
        }
        let complete = registered == open.expected;
        let unit = Event::WarpRegistered {
            key,
            generation,
            lanes,
        };
        let done = complete.then(|| Event::Completed(self.complete(index, key)));
        if events.capacity() == 0 {
            // A new list (the callers that return one): allocated once, at its size.
            *events = match done {
                Some(done) => vec![unit, done],
                None => vec![unit],
            };
        } else {
            events.push(unit);
            events.extend(done);
        }
        Ok(())
    }

    /// Gives back the lane list of an [`Event::WarpRegistered`] that the caller is done
    /// with, for a later gather to fill instead of allocating its own (a loop gathers
    /// each warp once per trip). Optional: a list that is dropped instead is only
    /// allocated again.
    pub fn recycle_lanes(&mut self, mut lanes: Vec<Participant>) {
        if self.spare_lanes.len() < SPARE_LISTS && lanes.capacity() > 0 {
            lanes.clear();
            self.spare_lanes.push(lanes);
        }
    }

    /// Gives back the participant list of a [`Completion`] that the caller is done with,
    /// for a later generation (as [`BarrierFile::recycle_lanes`] does for gathers).
    pub fn recycle_participants(&mut self, mut participants: Vec<Participant>) {
        if self.spare_participants.len() < SPARE_LISTS && participants.capacity() > 0 {
            participants.clear();
            self.spare_participants.push(participants);
        }
    }

    fn exited_lanes_in_mask(&self, warp: u32, mask: u32) -> u32 {
        let first = warp * self.warp_size;
        (0..self.lanes_in_warp(warp).min(32))
            .filter(|lane| mask & (1 << lane) != 0 && bit(&self.exited, first + lane))
            .count() as u32
    }

    fn complete(&mut self, index: usize, key: BarrierKey) -> Completion {
        let slot = &mut self.slots[index];
        let open = slot.open.take().expect("completing an open generation");
        slot.completed += 1;
        let generation = slot.completed;
        let counted_exits = self.counted_exits(key, &open);
        let (mut arrived, mut touched) = (open.arrived, open.touched);
        arrived.fill(0);
        touched.fill(0);
        self.spare.push((arrived, touched));
        Completion {
            key,
            generation,
            expected: open.expected,
            participants: open.participants,
            counted_exits,
            all_threads: open.all,
        }
    }

    /// The exited threads that `open` counts as registered: the same rule as the incremental
    /// `exited_counted`, evaluated once at completion.
    fn counted_exits(&self, key: BarrierKey, open: &Open) -> Vec<ThreadId> {
        let mut out = Vec::new();
        for (word, (exited, arrived)) in self.exited.iter().zip(&open.arrived).enumerate() {
            let mut bits = exited & !arrived;
            while bits != 0 {
                let t = word as u32 * 64 + bits.trailing_zeros();
                bits &= bits - 1;
                let warp = t / self.warp_size;
                let lane = t % self.warp_size;
                if open.counts_exit(key, warp, lane) {
                    out.push(ThreadId(t));
                }
            }
        }
        out
    }

    /// Records that `thread` exited. Returns what this causes: generations it completes (a
    /// barrier for all threads whose only missing threads have exited, a counted barrier
    /// whose missing threads are exited lanes of registered warps), and the registration of
    /// its warp when the exit completes the warp's gather.
    ///
    /// # Panics
    /// If `thread` is not a thread of this CTA.
    pub fn exit(&mut self, thread: ThreadId) -> Result<Vec<Event>, SyncError> {
        if bit(&self.exited, thread.0) {
            return Ok(Vec::new());
        }
        set_bit(&mut self.exited, thread.0);
        let warp = self.warp_of(thread);
        self.exited_per_warp[warp as usize] += 1;
        self.total_exited += 1;
        let lane = thread.0 % self.warp_size;
        let mut events = Vec::new();
        for index in 0..self.slots.len() {
            let key = slot_key(index);
            let Some(open) = self.slots[index].open.as_mut() else {
                continue;
            };
            if bit(&open.arrived, thread.0) {
                continue;
            }
            if !open.counts_exit(key, warp, lane) {
                continue;
            }
            open.exited_counted += 1;
            if open.registered() >= open.expected {
                events.push(Event::Completed(self.complete(index, key)));
            }
        }
        // The gather of the warp (after the loop above, so that the registering warp absorbs
        // this exited lane exactly once). A lane that exits while in the gather (a caller
        // that stops it) leaves it.
        if let Some(g) = &mut self.gathers[warp as usize] {
            g.lanes.retain(|p| p.thread != thread);
            g.mask = lane_bits(warp * self.warp_size, &g.lanes);
            if g.lanes.is_empty() {
                self.gathers[warp as usize] = None;
            }
        }
        self.try_register_gather(warp, &mut events)?;
        Ok(events)
    }

    /// Whether `thread` has exited.
    pub fn has_exited(&self, thread: ThreadId) -> bool {
        bit(&self.exited, thread.0)
    }

    /// Completed generations of a barrier so far.
    pub fn completed_generations(&self, key: BarrierKey) -> u32 {
        self.slots[self.slot_index(key)].completed
    }

    /// Generations with registrations that have not completed (for deadlock reports). Warps
    /// still gathering are in [`BarrierFile::open_gathers`].
    pub fn open_generations(&self) -> Vec<OpenGeneration<'_>> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(index, slot)| {
                let open = slot.open.as_ref()?;
                let key = slot_key(index);
                Some(OpenGeneration {
                    key,
                    generation: slot.completed + 1,
                    expected: open.expected,
                    registered: open.registered(),
                    participants: &open.participants,
                })
            })
            .collect()
    }

    /// Warps whose lanes wait for the rest of the warp at a barrier operation: which lanes
    /// joined, which non-exited lanes never came (for deadlock and divergence reports).
    pub fn open_gathers(&self) -> Vec<OpenGather<'_>> {
        self.gathers
            .iter()
            .enumerate()
            .filter_map(|(w, g)| {
                let g = g.as_ref()?;
                let warp = w as u32;
                let first = warp * self.warp_size;
                let missing = (first..first + self.lanes_in_warp(warp))
                    .map(ThreadId)
                    .filter(|&t| !self.has_exited(t) && !g.lanes.iter().any(|p| p.thread == t))
                    .collect();
                Some(OpenGather {
                    warp,
                    key: g.key,
                    generation: self.completed_generations(BarrierKey::Named(g.key.id)) + 1,
                    lanes: &g.lanes,
                    missing,
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(thread: u32, op: BarrierOp) -> Participant {
        Participant {
            thread: ThreadId(thread),
            command: 0,
            op,
        }
    }

    /// A non-aligned registration at instruction 0.
    fn reg(
        file: &mut BarrierFile,
        thread: u32,
        op: BarrierOp,
        id: u32,
        count: BarrierCount,
    ) -> Result<Vec<Event>, SyncError> {
        file.register(p(thread, op), id, count, InstId(0), false)
    }

    fn completed(events: &[Event]) -> Option<&Completion> {
        events.iter().find_map(|e| match e {
            Event::Completed(c) => Some(c),
            Event::WarpRegistered { .. } => None,
        })
    }

    fn registered_lanes(events: &[Event]) -> Vec<u32> {
        events
            .iter()
            .flat_map(|e| match e {
                Event::WarpRegistered { lanes, .. } => lanes.iter().map(|p| p.thread.0).collect(),
                Event::Completed(_) => Vec::new(),
            })
            .collect()
    }

    /// `register_lanes` gives the events and the state that registering the lanes one by one
    /// gives: lanes of warps that complete, warps with exited lanes, a gather that an
    /// earlier lane of the list completes, and a divergent lane (an error part way).
    #[test]
    fn register_lanes_is_registering_one_by_one() {
        let c = BarrierCount::Threads(8);
        let lanes = |ts: &[u32], op| ts.iter().map(|&t| p(t, op)).collect::<Vec<_>>();
        let cases: Vec<(Vec<u32>, Vec<Participant>, u32)> = vec![
            (vec![], lanes(&[0, 1, 2, 3], BarrierOp::Sync), 1),
            (vec![], lanes(&[0, 1], BarrierOp::Arrive), 1),
            (vec![2], lanes(&[0, 1, 3], BarrierOp::Sync), 1),
            // Lanes 0 and 1 complete warp 0's gather; 4 and 5 join warp 1's.
            (vec![2, 3], lanes(&[0, 1, 4, 5], BarrierOp::Sync), 1),
            // Barrier 16 is out of range: an error at the first lane.
            (vec![], lanes(&[0, 1], BarrierOp::Sync), 16),
            // Lanes of two warps, interleaved.
            (vec![], lanes(&[0, 4, 1, 5, 2, 3], BarrierOp::Sync), 1),
            // An arrive after syncs of the same warp: divergence part way.
            (
                vec![],
                vec![
                    p(0, BarrierOp::Sync),
                    p(1, BarrierOp::Sync),
                    p(2, BarrierOp::Arrive),
                    p(3, BarrierOp::Arrive),
                ],
                1,
            ),
        ];
        for (exits, ps, id) in cases {
            let mut one = BarrierFile::new(8, 4);
            let mut all = BarrierFile::new(8, 4);
            for &t in &exits {
                one.exit(ThreadId(t)).unwrap();
                all.exit(ThreadId(t)).unwrap();
            }
            // Warp 1 waits at the barrier already (lanes 6, 7), so the generation can
            // complete.
            for t in [6, 7] {
                one.register(p(t, BarrierOp::Sync), 1, c, InstId(0), false)
                    .unwrap();
                all.register(p(t, BarrierOp::Sync), 1, c, InstId(0), false)
                    .unwrap();
            }
            let mut expected = Vec::new();
            let mut error = None;
            for &q in &ps {
                match one.register(q, id, c, InstId(0), false) {
                    Ok(e) => expected.extend(e),
                    Err(e) => {
                        error = Some(e);
                        break;
                    }
                }
            }
            let mut events = Vec::new();
            let got = all.register_lanes(&ps, id, c, InstId(0), false, &mut events);
            assert_eq!(got.err(), error, "{ps:?}");
            assert_eq!(events, expected, "{ps:?}");
            assert_eq!(all.open_generations(), one.open_generations());
            assert_eq!(all.open_gathers(), one.open_gathers());
            assert_eq!(
                all.completed_generations(BarrierKey::Named(1)),
                one.completed_generations(BarrierKey::Named(1))
            );
        }
        // A divergent lane part way: the lanes before it joined, the error names it.
        let mut one = BarrierFile::new(8, 4);
        let mut all = BarrierFile::new(8, 4);
        one.register(p(0, BarrierOp::Sync), 2, c, InstId(0), false)
            .unwrap();
        all.register(p(0, BarrierOp::Sync), 2, c, InstId(0), false)
            .unwrap();
        let ps = lanes(&[1, 2], BarrierOp::Sync);
        let error = one.register(ps[0], 1, c, InstId(0), false).unwrap_err();
        let mut events = Vec::new();
        let got = all.register_lanes(&ps, 1, c, InstId(0), false, &mut events);
        assert_eq!(got, Err(error));
        assert!(events.is_empty());
        assert_eq!(all.open_gathers(), one.open_gathers());
    }

    /// `set_lane_bits` of `lane_bits` sets what `set_bit` of each lane's thread sets: full
    /// and partial warps, warps that straddle two words (a warp size that does not divide
    /// 64), lanes out of order and repeated.
    #[test]
    fn lane_bits_set_what_set_bit_of_each_sets() {
        for ws in [1u32, 3, 32, 48, 64] {
            for warp in 0..4u32 {
                let first = warp * ws;
                let in_warp: Vec<u32> = (first..first + ws).collect();
                let cases: Vec<Vec<u32>> = vec![
                    in_warp.clone(),
                    in_warp.iter().copied().step_by(2).collect(),
                    in_warp.iter().rev().copied().collect(),
                    vec![first, first, first + ws - 1],
                ];
                for threads in cases {
                    let ps: Vec<Participant> =
                        threads.iter().map(|&t| p(t, BarrierOp::Sync)).collect();
                    let mut one = vec![0u64; 6];
                    for &t in &threads {
                        set_bit(&mut one, t);
                    }
                    let mut all = vec![0u64; 6];
                    set_lane_bits(&mut all, first, lane_bits(first, &ps));
                    assert_eq!(all, one, "ws {ws} warp {warp} {threads:?}");
                }
            }
        }
    }

    /// A small deterministic generator (xorshift) for the random sequences below.
    struct Rng(u64);

    impl Rng {
        fn below(&mut self, n: u32) -> u32 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            (self.0 % u64::from(n.max(1))) as u32
        }
    }

    /// Everything observable of a file: its open generations and gathers, each barrier's
    /// completed generations, and its state (the arrival bits, the gathers' lane bits).
    fn observe(file: &BarrierFile, warps: u32) -> String {
        let keys = (0..NUM_NAMED_BARRIERS)
            .map(BarrierKey::Named)
            .chain((0..warps).map(BarrierKey::Warp));
        let completed: Vec<u32> = keys.map(|k| file.completed_generations(k)).collect();
        format!(
            "{:?} {:?} {completed:?} {:?} {:?}",
            file.open_generations(),
            file.open_gathers(),
            file.slots,
            file.gathers
        )
    }

    /// Checks what the file keeps beside its registrations against them: each open
    /// generation's arrival bits are its participants' threads, each gather's lane bits
    /// its lanes'.
    fn check_bits(file: &BarrierFile, what: &str) {
        for slot in &file.slots {
            if let Some(open) = &slot.open {
                let mut bits = vec![0u64; open.arrived.len()];
                for p in &open.participants {
                    set_bit(&mut bits, p.thread.0);
                }
                assert_eq!(open.arrived, bits, "{what}: arrival bits");
            }
        }
        if file.warp_size <= 64 {
            for (w, g) in file.gathers.iter().enumerate() {
                if let Some(g) = g {
                    let first = w as u32 * file.warp_size;
                    let mut mask = 0u64;
                    for p in &g.lanes {
                        mask |= 1 << (p.thread.0 - first);
                    }
                    assert_eq!(g.mask, mask, "{what}: lane bits of warp {w}");
                }
            }
        }
    }

    /// Gives the lists of `events` back to `file`, as the emulator does once it has
    /// applied them.
    fn give_back(file: &mut BarrierFile, events: Vec<Event>) {
        for e in events {
            match e {
                Event::WarpRegistered { lanes, .. } => file.recycle_lanes(lanes),
                Event::Completed(c) => file.recycle_participants(c.participants),
            }
        }
    }

    /// `events` with each run of registrations of the same generation merged into one.
    fn merged(events: Vec<Event>) -> Vec<Event> {
        let mut out: Vec<Event> = Vec::new();
        for e in events {
            if let (
                Some(Event::WarpRegistered {
                    key,
                    generation,
                    lanes,
                    ..
                }),
                Event::WarpRegistered {
                    key: k,
                    generation: g,
                    lanes: more,
                },
            ) = (out.last_mut(), &e)
                && (*key, *generation) == (*k, *g)
            {
                lanes.extend_from_slice(more);
                continue;
            }
            out.push(e);
        }
        out
    }

    /// Registering runs of lanes at once (`register_lanes`, `register_run` as the replay
    /// calls it, `register_warp_lanes`; the lists of the events given back and reused)
    /// gives the events, the errors and the state that registering each lane alone gives,
    /// on random sequences of named-barrier operations (arrive, sync, red; of valid and
    /// invalid ids and counts; aligned or not), warp barriers and exits, on full and
    /// partial warps of several sizes, with runs of whole warps, of some of their lanes,
    /// of lanes out of order, repeated, of two warps or of two operations.
    #[test]
    fn runs_register_as_lanes_one_by_one() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        for case in 0..4000 {
            let ws = [1, 3, 4, 32, 32, 48][rng.below(6) as usize];
            let warps = 1 + rng.below(3);
            let n = (ws * warps - rng.below(ws.min(3))).max(1);
            let warps = n.div_ceil(ws);
            let mut one = BarrierFile::new(n, ws);
            let mut all = BarrierFile::new(n, ws);
            for step in 0..rng.below(60) {
                let what = format!("case {case} step {step} (n {n}, ws {ws})");
                let t = rng.below(n);
                if rng.below(8) == 0 {
                    let expected = one.exit(ThreadId(t));
                    let got = all.exit(ThreadId(t));
                    assert_eq!(got, expected, "{what}: exit {t}");
                    give_back(&mut all, got.unwrap_or_default());
                    assert_eq!(observe(&all, warps), observe(&one, warps), "{what}");
                    check_bits(&all, &what);
                    continue;
                }
                // The lanes: most often the non-exited lanes of a warp in order, some of
                // them, or lanes of another warp, repeated or out of order.
                let w = t / ws;
                let lanes_of = |w: u32| (w * ws..((w + 1) * ws).min(n)).map(ThreadId);
                let mut threads: Vec<ThreadId> = match rng.below(8) {
                    0 => lanes_of(w).filter(|_| rng.below(2) == 0).collect(),
                    1 => lanes_of(w).chain(lanes_of((w + 1) % warps)).collect(),
                    2 => lanes_of(w).rev().collect(),
                    3 => vec![ThreadId(t), ThreadId(t), ThreadId(rng.below(n))],
                    _ => lanes_of(w).filter(|&q| !one.has_exited(q)).collect(),
                };
                if threads.is_empty() {
                    threads.push(ThreadId(t));
                }
                let ops = [BarrierOp::Arrive, BarrierOp::Sync, BarrierOp::Red];
                let op = ops[rng.below(3) as usize];
                let other = ops[rng.below(3) as usize];
                let mixed = rng.below(6) == 0;
                let mut ps: Vec<Participant> = threads
                    .iter()
                    .enumerate()
                    .map(|(k, &thread)| Participant {
                        thread,
                        command: k as u32,
                        op: if mixed && k % 5 == 4 { other } else { op },
                    })
                    .collect();
                // One lane at a time, up to the first error.
                let mut expected = Vec::new();
                let mut error = None;
                let mut got = Vec::new();
                let result;
                let mut warp_barrier = false;
                if rng.below(5) == 0 {
                    // Warp barriers register as syncs.
                    for q in &mut ps {
                        q.op = BarrierOp::Sync;
                    }
                    let mask = if rng.below(3) == 0 {
                        rng.below(u32::MAX)
                    } else {
                        u32::MAX
                    };
                    for &q in &ps {
                        match one.register_warp(q, mask) {
                            Ok(e) => expected.extend(e),
                            Err(e) => {
                                error = Some(e);
                                break;
                            }
                        }
                    }
                    result = all.register_warp_lanes(&ps, mask, &mut got);
                    // A run of a warp barrier is one registration of its lanes (what the
                    // single ones return together).
                    warp_barrier = true;
                } else {
                    let id = if rng.below(20) == 0 { 16 } else { rng.below(3) };
                    let count = match rng.below(4) {
                        0 => BarrierCount::All,
                        1 if rng.below(4) == 0 => BarrierCount::Threads(rng.below(n + 2)),
                        _ => BarrierCount::Threads(ws * (1 + rng.below(warps))),
                    };
                    let inst = InstId(rng.below(2));
                    let aligned = rng.below(2) == 0;
                    for &q in &ps {
                        match one.register(q, id, count, inst, aligned) {
                            Ok(e) => expected.extend(e),
                            Err(e) => {
                                error = Some(e);
                                break;
                            }
                        }
                    }
                    result = if rng.below(2) == 0 {
                        all.register_lanes(&ps, id, count, inst, aligned, &mut got)
                    } else {
                        // As the replay registers: run by run.
                        let mut k = 0;
                        let mut result = Ok(());
                        while k < ps.len() {
                            let (taken, r) = all.register_run(&ps[k..], id, count, inst, aligned);
                            k += taken;
                            match r {
                                Ok(e) => got.extend(e),
                                Err(e) => {
                                    result = Err(e);
                                    break;
                                }
                            }
                        }
                        result
                    };
                }
                assert_eq!(result.err(), error, "{what}: {ps:?}");
                if warp_barrier {
                    assert_eq!(merged(got.clone()), merged(expected), "{what}: {ps:?}");
                } else {
                    assert_eq!(got, expected, "{what}: {ps:?}");
                }
                give_back(&mut all, got);
                assert_eq!(observe(&all, warps), observe(&one, warps), "{what}");
                check_bits(&all, &what);
            }
        }
    }

    /// `set_bits` sets what `set_bit` of each bit sets: runs within a word, runs across
    /// words, bits out of order and repeated.
    #[test]
    fn set_bits_is_set_bit_of_each() {
        let cases: Vec<Vec<u32>> = vec![
            vec![],
            (0..32).collect(),
            (40..100).collect(),
            vec![3, 70, 4, 130, 3, 0, 191],
            (96..128).rev().collect(),
        ];
        for bits in cases {
            let mut one = vec![0u64; 3];
            for &i in &bits {
                set_bit(&mut one, i);
            }
            let mut all = vec![0u64; 3];
            set_bits(&mut all, bits.iter().copied());
            assert_eq!(all, one, "{bits:?}");
        }
    }

    #[test]
    fn counted_barrier_completes_at_count_and_recycles() {
        let mut file = BarrierFile::new(4, 1);
        let c = BarrierCount::Threads(2);
        let e = reg(&mut file, 0, BarrierOp::Sync, 1, c).unwrap();
        assert_eq!(
            e,
            vec![Event::WarpRegistered {
                key: BarrierKey::Named(1),
                generation: 1,
                lanes: vec![p(0, BarrierOp::Sync)]
            }]
        );
        let e = reg(&mut file, 1, BarrierOp::Arrive, 1, c).unwrap();
        let done = completed(&e).expect("second registration completes");
        assert_eq!(done.generation, 1);
        assert_eq!(done.participants.len(), 2);
        let e = reg(&mut file, 2, BarrierOp::Sync, 1, BarrierCount::Threads(4)).unwrap();
        assert!(matches!(
            e[..],
            [Event::WarpRegistered { generation: 2, .. }]
        ));
    }

    #[test]
    fn count_mismatch_names_both_registrations() {
        let mut file = BarrierFile::new(4, 1);
        reg(&mut file, 0, BarrierOp::Sync, 3, BarrierCount::Threads(2)).unwrap();
        let err = reg(&mut file, 1, BarrierOp::Sync, 3, BarrierCount::Threads(3)).unwrap_err();
        assert!(matches!(
            err,
            SyncError::CountMismatch {
                generation: 1,
                configured: BarrierConfig::Count(BarrierCount::Threads(2)),
                got: BarrierConfig::Count(BarrierCount::Threads(3)),
                ..
            }
        ));
    }

    #[test]
    fn invalid_ids_and_counts() {
        let mut file = BarrierFile::new(64, 32);
        assert!(matches!(
            reg(&mut file, 0, BarrierOp::Sync, 16, BarrierCount::All),
            Err(SyncError::InvalidId { id: 16, .. })
        ));
        for n in [0, 48, 96] {
            assert!(matches!(
                reg(&mut file, 0, BarrierOp::Sync, 1, BarrierCount::Threads(n)),
                Err(SyncError::InvalidCount { .. })
            ));
        }
    }

    #[test]
    fn all_threads_barrier_is_released_by_exits() {
        let mut file = BarrierFile::new(3, 1);
        reg(&mut file, 0, BarrierOp::Sync, 0, BarrierCount::All).unwrap();
        assert!(file.exit(ThreadId(1)).unwrap().is_empty());
        let done = file.exit(ThreadId(2)).unwrap();
        assert_eq!(done.len(), 1);
        let done = completed(&done).unwrap();
        assert_eq!(done.participants, vec![p(0, BarrierOp::Sync)]);
        assert_eq!(done.counted_exits, vec![ThreadId(1), ThreadId(2)]);
        assert!(done.all_threads);
    }

    #[test]
    fn all_threads_barrier_counts_exited_lanes_of_warps() {
        // Warp 0: lanes 0-1 sync, lanes 2-3 exited; warp 1: lane 4 exits, lanes 5-7 sync.
        let mut file = BarrierFile::new(8, 4);
        for t in [2, 3, 4] {
            assert!(file.exit(ThreadId(t)).unwrap().is_empty());
        }
        assert!(
            reg(&mut file, 0, BarrierOp::Sync, 0, BarrierCount::All)
                .unwrap()
                .is_empty()
        );
        assert_eq!(
            registered_lanes(&reg(&mut file, 1, BarrierOp::Sync, 0, BarrierCount::All).unwrap()),
            vec![0, 1]
        );
        reg(&mut file, 5, BarrierOp::Sync, 0, BarrierCount::All).unwrap();
        reg(&mut file, 6, BarrierOp::Sync, 0, BarrierCount::All).unwrap();
        let e = reg(&mut file, 7, BarrierOp::Sync, 0, BarrierCount::All).unwrap();
        assert_eq!(registered_lanes(&e), vec![5, 6, 7]);
        let done = completed(&e).expect("all non-exited threads arrived");
        assert_eq!(done.participants.len(), 5);
        assert_eq!(
            done.counted_exits,
            vec![ThreadId(2), ThreadId(3), ThreadId(4)]
        );
    }

    #[test]
    fn exited_before_open_counts_for_all_threads_barrier() {
        let mut file = BarrierFile::new(2, 1);
        file.exit(ThreadId(1)).unwrap();
        assert!(
            completed(&reg(&mut file, 0, BarrierOp::Sync, 0, BarrierCount::All).unwrap()).is_some()
        );
    }

    #[test]
    fn counted_barrier_is_not_released_by_exited_warps() {
        let mut file = BarrierFile::new(64, 32);
        for t in 0..32 {
            reg(&mut file, t, BarrierOp::Sync, 1, BarrierCount::Threads(64)).unwrap();
        }
        for t in 32..64 {
            assert!(file.exit(ThreadId(t)).unwrap().is_empty());
        }
        let open = file.open_generations();
        assert_eq!(open.len(), 1);
        assert_eq!(open[0].registered, 32);
        assert!(file.open_gathers().is_empty());
    }

    #[test]
    fn counted_barrier_absorbs_exited_lanes_of_a_registered_warp() {
        let mut file = BarrierFile::new(64, 32);
        for t in 0..32 {
            reg(&mut file, t, BarrierOp::Sync, 1, BarrierCount::Threads(64)).unwrap();
        }
        // Lanes 16..32 of warp 1 exit; lanes 0..16 register.
        for t in 48..64 {
            file.exit(ThreadId(t)).unwrap();
        }
        let mut last = Vec::new();
        for t in 32..48 {
            last = reg(&mut file, t, BarrierOp::Sync, 1, BarrierCount::Threads(64)).unwrap();
        }
        let done = completed(&last).expect("warp 1 completes the generation");
        assert_eq!(done.participants.len(), 48);
        assert_eq!(
            done.counted_exits,
            (48..64).map(ThreadId).collect::<Vec<_>>()
        );
    }

    #[test]
    fn warp_registers_as_a_unit() {
        let mut file = BarrierFile::new(8, 4);
        let c = BarrierCount::Threads(8);
        for t in 0..3 {
            assert!(reg(&mut file, t, BarrierOp::Sync, 1, c).unwrap().is_empty());
        }
        // Nothing registered while warp 0 gathers.
        assert!(file.open_generations().is_empty());
        let gathers = file.open_gathers();
        assert_eq!(gathers.len(), 1);
        assert_eq!((gathers[0].warp, gathers[0].lanes.len()), (0, 3));
        assert_eq!(gathers[0].missing, vec![ThreadId(3)]);
        let e = reg(&mut file, 3, BarrierOp::Sync, 1, c).unwrap();
        assert_eq!(
            e,
            vec![Event::WarpRegistered {
                key: BarrierKey::Named(1),
                generation: 1,
                lanes: (0..4).map(|t| p(t, BarrierOp::Sync)).collect()
            }]
        );
        assert_eq!(file.open_generations()[0].registered, 4);
        assert!(file.open_gathers().is_empty());
    }

    #[test]
    fn two_warps_never_mix_lanes_in_a_generation() {
        // Count 4 = one warp of 4. Interleave the lanes of warps 0 and 1: each generation
        // holds exactly one whole warp.
        let mut file = BarrierFile::new(8, 4);
        let c = BarrierCount::Threads(4);
        let mut gens = Vec::new();
        for t in [0, 4, 1, 5, 2, 6, 7, 3] {
            let e = reg(&mut file, t, BarrierOp::Sync, 1, c).unwrap();
            if let Some(done) = completed(&e) {
                let mut lanes: Vec<u32> = done.participants.iter().map(|p| p.thread.0).collect();
                lanes.sort_unstable();
                gens.push((done.generation, lanes));
            }
        }
        assert_eq!(gens, vec![(1, vec![4, 5, 6, 7]), (2, vec![0, 1, 2, 3])]);
    }

    #[test]
    fn arrive_releases_lanes_when_the_warp_has_gathered() {
        let mut file = BarrierFile::new(8, 4);
        let c = BarrierCount::Threads(8);
        for t in 0..3 {
            assert!(
                reg(&mut file, t, BarrierOp::Arrive, 2, c)
                    .unwrap()
                    .is_empty()
            );
        }
        let e = reg(&mut file, 3, BarrierOp::Arrive, 2, c).unwrap();
        assert_eq!(registered_lanes(&e), vec![0, 1, 2, 3]);
        assert!(completed(&e).is_none());
        for t in 4..7 {
            assert!(reg(&mut file, t, BarrierOp::Sync, 2, c).unwrap().is_empty());
        }
        let e = reg(&mut file, 7, BarrierOp::Sync, 2, c).unwrap();
        assert_eq!(registered_lanes(&e), vec![4, 5, 6, 7]);
        assert_eq!(completed(&e).unwrap().participants.len(), 8);
    }

    #[test]
    fn aligned_lanes_at_different_instructions_diverge() {
        let mut file = BarrierFile::new(4, 2);
        let c = BarrierCount::Threads(4);
        file.register(p(0, BarrierOp::Sync), 1, c, InstId(10), true)
            .unwrap();
        let err = file
            .register(p(1, BarrierOp::Sync), 1, c, InstId(20), true)
            .unwrap_err();
        assert!(matches!(
            err,
            SyncError::WarpDivergence {
                warp: 0,
                first_key: GatherKey {
                    inst: Some(InstId(10)),
                    ..
                },
                key: GatherKey {
                    inst: Some(InstId(20)),
                    ..
                },
                ..
            }
        ));
        // Non-aligned: different instructions of the same operation gather together.
        let mut file = BarrierFile::new(4, 2);
        file.register(p(0, BarrierOp::Sync), 1, c, InstId(10), false)
            .unwrap();
        let e = file
            .register(p(1, BarrierOp::Sync), 1, c, InstId(20), false)
            .unwrap();
        assert_eq!(registered_lanes(&e), vec![0, 1]);
        // Different barrier ids diverge even when not aligned.
        let mut file = BarrierFile::new(4, 2);
        file.register(p(0, BarrierOp::Sync), 1, c, InstId(10), false)
            .unwrap();
        assert!(matches!(
            file.register(p(1, BarrierOp::Sync), 2, c, InstId(10), false),
            Err(SyncError::WarpDivergence { .. })
        ));
    }

    #[test]
    fn exit_completes_a_gather() {
        let mut file = BarrierFile::new(4, 2);
        let c = BarrierCount::Threads(4);
        assert!(
            reg(&mut file, 0, BarrierOp::Arrive, 1, c)
                .unwrap()
                .is_empty()
        );
        reg(&mut file, 2, BarrierOp::Sync, 1, c).unwrap();
        let e = reg(&mut file, 3, BarrierOp::Sync, 1, c).unwrap();
        assert_eq!(registered_lanes(&e), vec![2, 3]);
        // Lane 1 exits: warp 0 registers with its exited lane counted, completing the
        // generation.
        let e = file.exit(ThreadId(1)).unwrap();
        assert_eq!(registered_lanes(&e), vec![0]);
        let done = completed(&e).expect("exit completes the gather and the generation");
        assert_eq!(done.counted_exits, vec![ThreadId(1)]);
        assert_eq!(done.participants.len(), 3);
    }

    #[test]
    fn arrive_then_exit_is_not_counted_twice() {
        let mut file = BarrierFile::new(3, 1);
        reg(&mut file, 0, BarrierOp::Arrive, 0, BarrierCount::All).unwrap();
        assert!(file.exit(ThreadId(0)).unwrap().is_empty());
        assert_eq!(file.open_generations()[0].registered, 1);
    }

    #[test]
    fn all_threads_and_full_count_do_not_mix() {
        let mut file = BarrierFile::new(2, 1);
        reg(&mut file, 0, BarrierOp::Sync, 0, BarrierCount::All).unwrap();
        assert!(matches!(
            reg(&mut file, 1, BarrierOp::Sync, 0, BarrierCount::Threads(2)),
            Err(SyncError::CountMismatch { .. })
        ));
    }

    #[test]
    fn red_cannot_mix_with_sync() {
        let mut file = BarrierFile::new(4, 1);
        reg(&mut file, 0, BarrierOp::Red, 0, BarrierCount::All).unwrap();
        assert!(matches!(
            reg(&mut file, 1, BarrierOp::Sync, 0, BarrierCount::All),
            Err(SyncError::MixedRed { .. })
        ));
    }

    #[test]
    fn warp_barrier_expects_mask_lanes() {
        let mut file = BarrierFile::new(64, 32);
        for t in 32..47 {
            assert!(matches!(
                file.register_warp(p(t, BarrierOp::Sync), 0xffff).unwrap()[..],
                [Event::WarpRegistered { .. }]
            ));
        }
        assert!(matches!(
            file.register_warp(p(47, BarrierOp::Sync), 0xffff).unwrap()[..],
            [
                Event::WarpRegistered { .. },
                Event::Completed(Completion {
                    key: BarrierKey::Warp(1),
                    ..
                })
            ]
        ));
        assert!(matches!(
            file.register_warp(p(48, BarrierOp::Sync), 0xffff),
            Err(SyncError::LaneNotInMask { .. })
        ));
    }
}
