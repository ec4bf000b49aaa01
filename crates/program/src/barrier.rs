//! The named-barrier state machine.
//!
//! Semantics (WEFT paper §3.3, PTX ISA `barrier`):
//! - A barrier is unconfigured until its first operation of a generation, which configures the
//!   expected count. A later operation of the same generation with another count is a
//!   [`SyncError::CountMismatch`].
//! - Each operation registers one thread. When the registered count reaches the expected
//!   count, the generation completes: its blocked threads wake and the barrier is recycled
//!   (unconfigured again), so the next operation opens generation `g + 1`.
//! - PTX counts arrivals per warp: a warp's arrival stands for all of its lanes, including
//!   lanes that have exited. We model threads individually, so once any lane of a warp has
//!   registered in a generation, that warp's exited lanes count as registered too.
//! - A barrier for all threads of the CTA (no count operand) also counts every exited thread:
//!   it is released when the only threads missing have exited. A counted barrier is not
//!   released by warps that exited without registering — that is a deadlock.
//! - Mixing `bar.red` with `bar.sync`/`bar.arrive` in one generation is undefined in PTX and
//!   an error here.
//!
//! Warp barriers (`bar.warp.sync mask`) use the same machinery on a virtual barrier per warp,
//! expecting the lanes of `mask`.

use std::fmt;

use thiserror::Error;

use crate::{BarrierCount, BarrierOp, ThreadId};

/// The configuration of a generation opened without a count.
const ALL_THREADS_CONFIG: u32 = u32::MAX;

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

/// The result of a successful registration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Registered {
    /// The generation is still open. A blocking operation blocks the thread.
    Pending {
        /// The generation joined (1-based).
        generation: u32,
    },
    /// This registration completed the generation.
    Completed(Completion),
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
        describe_config(*key, *configured),
        describe_config(*key, *got)
    )]
    CountMismatch {
        /// The barrier.
        key: BarrierKey,
        /// The generation.
        generation: u32,
        /// The count (or mask) the generation was configured with.
        configured: u32,
        /// The registration that configured it.
        first: Participant,
        /// The conflicting count (or mask).
        got: u32,
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
fn describe_config(key: BarrierKey, config: u32) -> String {
    match key {
        BarrierKey::Warp(_) => format!("mask {config:#x}"),
        BarrierKey::Named(_) if config == ALL_THREADS_CONFIG => "all threads (no count)".into(),
        BarrierKey::Named(_) => format!("{config} threads"),
    }
}

/// A generation in progress.
#[derive(Debug, Clone)]
struct Open {
    /// Configured count (named) or mask (warp).
    config: u32,
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
}

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

    /// Registers a named-barrier operation of `participant.thread` on barrier `id`.
    pub fn register(
        &mut self,
        participant: Participant,
        id: u32,
        count: BarrierCount,
    ) -> Result<Registered, SyncError> {
        if id >= NUM_NAMED_BARRIERS {
            return Err(SyncError::InvalidId { id, participant });
        }
        let key = BarrierKey::Named(id);
        let expected = match count {
            BarrierCount::All => self.cta_threads,
            BarrierCount::Threads(n) => {
                if n == 0 || n % self.warp_size != 0 || n > self.cta_threads {
                    return Err(SyncError::InvalidCount {
                        key,
                        count: n,
                        cta_threads: self.cta_threads,
                        participant,
                    });
                }
                n
            }
        };
        // An operation without a count and one with a count never configure the same
        // generation, even when the count equals the CTA size: PTX releases only the former
        // when the missing threads have exited, so mixing them would make the outcome depend
        // on when threads exit. The mismatch is reported.
        let config = match count {
            BarrierCount::All => ALL_THREADS_CONFIG,
            BarrierCount::Threads(n) => n,
        };
        self.register_key(
            participant,
            key,
            config,
            expected,
            count == BarrierCount::All,
        )
    }

    /// Registers `bar.warp.sync mask` of `participant.thread` on its warp's barrier.
    pub fn register_warp(
        &mut self,
        participant: Participant,
        mask: u32,
    ) -> Result<Registered, SyncError> {
        let warp = self.warp_of(participant.thread);
        let key = BarrierKey::Warp(warp);
        let lane = participant.thread.0 % self.warp_size;
        if lane >= 32 || mask & (1 << lane) == 0 {
            return Err(SyncError::LaneNotInMask {
                key,
                mask,
                participant,
            });
        }
        let existing = self.lanes_in_warp(warp);
        let valid_lanes = if existing >= 32 {
            u32::MAX
        } else {
            (1u32 << existing) - 1
        };
        let expected = (mask & valid_lanes).count_ones();
        self.register_key(participant, key, mask, expected, false)
    }

    fn register_key(
        &mut self,
        participant: Participant,
        key: BarrierKey,
        config: u32,
        expected: u32,
        all: bool,
    ) -> Result<Registered, SyncError> {
        let thread = participant.thread;
        let warp = self.warp_of(thread);
        let index = self.slot_index(key);
        let generation = self.slots[index].completed + 1;
        if self.slots[index].open.is_none() {
            let exited_counted = match key {
                _ if all => self.total_exited,
                BarrierKey::Named(_) => 0,
                BarrierKey::Warp(w) => self.exited_lanes_in_mask(w, config),
            };
            self.slots[index].open = Some(Open {
                config,
                all,
                expected,
                red: participant.op == BarrierOp::Red,
                participants: Vec::new(),
                arrived: vec![0; self.cta_threads.div_ceil(64) as usize],
                touched: vec![0; self.exited_per_warp.len().div_ceil(64)],
                exited_counted,
            });
        }
        let exited_in_warp = self.exited_per_warp[warp as usize];
        let Some(open) = self.slots[index].open.as_mut() else {
            unreachable!("opened above")
        };
        if open.config != config {
            return Err(SyncError::CountMismatch {
                key,
                generation,
                configured: open.config,
                first: open.participants.first().copied().unwrap_or(participant),
                got: config,
                participant,
            });
        }
        let is_red = participant.op == BarrierOp::Red;
        if open.red != is_red {
            return Err(SyncError::MixedRed {
                key,
                generation,
                first: open.participants.first().copied().unwrap_or(participant),
                participant,
            });
        }
        // A counted named barrier absorbs the exited lanes of each warp that registers.
        if matches!(key, BarrierKey::Named(_)) && !open.all && !bit(&open.touched, warp) {
            set_bit(&mut open.touched, warp);
            open.exited_counted += exited_in_warp;
        }
        set_bit(&mut open.arrived, thread.0);
        open.participants.push(participant);
        let registered = open.registered();
        if registered > open.expected {
            return Err(SyncError::Overflow {
                key,
                generation,
                expected: open.expected,
                registered,
                participant,
            });
        }
        if registered == open.expected {
            return Ok(Registered::Completed(self.complete(index, key)));
        }
        Ok(Registered::Pending { generation })
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
                let counts = match key {
                    BarrierKey::Named(_) => open.all || bit(&open.touched, warp),
                    BarrierKey::Warp(w) => w == warp && lane < 32 && open.config & (1 << lane) != 0,
                };
                if counts {
                    out.push(ThreadId(t));
                }
            }
        }
        out
    }

    /// Records that `thread` exited. Returns the generations this completes (a barrier for
    /// all threads whose only missing threads have exited, a counted barrier whose missing
    /// threads are exited lanes of registered warps).
    ///
    /// # Panics
    /// If `thread` is not a thread of this CTA.
    pub fn exit(&mut self, thread: ThreadId) -> Result<Vec<Completion>, SyncError> {
        if bit(&self.exited, thread.0) {
            return Ok(Vec::new());
        }
        set_bit(&mut self.exited, thread.0);
        let warp = self.warp_of(thread);
        self.exited_per_warp[warp as usize] += 1;
        self.total_exited += 1;
        let lane = thread.0 % self.warp_size;
        let mut done = Vec::new();
        for index in 0..self.slots.len() {
            let key = if index < NUM_NAMED_BARRIERS as usize {
                BarrierKey::Named(index as u32)
            } else {
                BarrierKey::Warp(index as u32 - NUM_NAMED_BARRIERS)
            };
            let Some(open) = self.slots[index].open.as_mut() else {
                continue;
            };
            if bit(&open.arrived, thread.0) {
                continue;
            }
            let counts = match key {
                BarrierKey::Named(_) if open.all => true,
                BarrierKey::Named(_) => bit(&open.touched, warp),
                BarrierKey::Warp(w) => w == warp && lane < 32 && open.config & (1 << lane) != 0,
            };
            if !counts {
                continue;
            }
            open.exited_counted += 1;
            if open.registered() >= open.expected {
                done.push(self.complete(index, key));
            }
        }
        Ok(done)
    }

    /// Whether `thread` has exited.
    pub fn has_exited(&self, thread: ThreadId) -> bool {
        bit(&self.exited, thread.0)
    }

    /// Completed generations of a barrier so far.
    pub fn completed_generations(&self, key: BarrierKey) -> u32 {
        self.slots[self.slot_index(key)].completed
    }

    /// Generations with registrations that have not completed (for deadlock reports).
    pub fn open_generations(&self) -> Vec<OpenGeneration<'_>> {
        self.slots
            .iter()
            .enumerate()
            .filter_map(|(index, slot)| {
                let open = slot.open.as_ref()?;
                let key = if index < NUM_NAMED_BARRIERS as usize {
                    BarrierKey::Named(index as u32)
                } else {
                    BarrierKey::Warp(index as u32 - NUM_NAMED_BARRIERS)
                };
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

    #[test]
    fn counted_barrier_completes_at_count_and_recycles() {
        let mut file = BarrierFile::new(4, 1);
        let c = BarrierCount::Threads(2);
        assert_eq!(
            file.register(p(0, BarrierOp::Sync), 1, c),
            Ok(Registered::Pending { generation: 1 })
        );
        let Ok(Registered::Completed(done)) = file.register(p(1, BarrierOp::Arrive), 1, c) else {
            panic!("second registration completes")
        };
        assert_eq!(done.generation, 1);
        assert_eq!(done.participants.len(), 2);
        assert_eq!(
            file.register(p(2, BarrierOp::Sync), 1, BarrierCount::Threads(4)),
            Ok(Registered::Pending { generation: 2 })
        );
    }

    #[test]
    fn count_mismatch_names_both_registrations() {
        let mut file = BarrierFile::new(4, 1);
        file.register(p(0, BarrierOp::Sync), 3, BarrierCount::Threads(2))
            .unwrap();
        let err = file
            .register(p(1, BarrierOp::Sync), 3, BarrierCount::Threads(3))
            .unwrap_err();
        assert!(matches!(
            err,
            SyncError::CountMismatch {
                generation: 1,
                configured: 2,
                got: 3,
                ..
            }
        ));
    }

    #[test]
    fn invalid_ids_and_counts() {
        let mut file = BarrierFile::new(64, 32);
        assert!(matches!(
            file.register(p(0, BarrierOp::Sync), 16, BarrierCount::All),
            Err(SyncError::InvalidId { id: 16, .. })
        ));
        for n in [0, 48, 96] {
            assert!(matches!(
                file.register(p(0, BarrierOp::Sync), 1, BarrierCount::Threads(n)),
                Err(SyncError::InvalidCount { .. })
            ));
        }
    }

    #[test]
    fn all_threads_barrier_is_released_by_exits() {
        let mut file = BarrierFile::new(3, 1);
        file.register(p(0, BarrierOp::Sync), 0, BarrierCount::All)
            .unwrap();
        assert!(file.exit(ThreadId(1)).unwrap().is_empty());
        let done = file.exit(ThreadId(2)).unwrap();
        assert_eq!(done.len(), 1);
        assert_eq!(done[0].participants, vec![p(0, BarrierOp::Sync)]);
        assert_eq!(done[0].counted_exits, vec![ThreadId(1), ThreadId(2)]);
        assert!(done[0].all_threads);
    }

    #[test]
    fn exited_before_open_counts_for_all_threads_barrier() {
        let mut file = BarrierFile::new(2, 1);
        file.exit(ThreadId(1)).unwrap();
        assert!(matches!(
            file.register(p(0, BarrierOp::Sync), 0, BarrierCount::All),
            Ok(Registered::Completed(_))
        ));
    }

    #[test]
    fn counted_barrier_is_not_released_by_exited_warps() {
        let mut file = BarrierFile::new(64, 32);
        for t in 0..32 {
            file.register(p(t, BarrierOp::Sync), 1, BarrierCount::Threads(64))
                .unwrap();
        }
        for t in 32..64 {
            assert!(file.exit(ThreadId(t)).unwrap().is_empty());
        }
        let open = file.open_generations();
        assert_eq!(open.len(), 1);
        assert_eq!(open[0].registered, 32);
    }

    #[test]
    fn counted_barrier_absorbs_exited_lanes_of_a_registered_warp() {
        let mut file = BarrierFile::new(64, 32);
        for t in 0..32 {
            file.register(p(t, BarrierOp::Sync), 1, BarrierCount::Threads(64))
                .unwrap();
        }
        // Lanes 16..32 of warp 1 exit; lanes 0..16 register.
        for t in 48..64 {
            file.exit(ThreadId(t)).unwrap();
        }
        let mut last = None;
        for t in 32..48 {
            last = Some(
                file.register(p(t, BarrierOp::Sync), 1, BarrierCount::Threads(64))
                    .unwrap(),
            );
        }
        assert!(matches!(last, Some(Registered::Completed(_))));
    }

    #[test]
    fn arrive_then_exit_is_not_counted_twice() {
        let mut file = BarrierFile::new(3, 1);
        file.register(p(0, BarrierOp::Arrive), 0, BarrierCount::All)
            .unwrap();
        assert!(file.exit(ThreadId(0)).unwrap().is_empty());
        assert_eq!(file.open_generations()[0].registered, 1);
    }

    #[test]
    fn all_threads_and_full_count_do_not_mix() {
        let mut file = BarrierFile::new(2, 1);
        file.register(p(0, BarrierOp::Sync), 0, BarrierCount::All)
            .unwrap();
        assert!(matches!(
            file.register(p(1, BarrierOp::Sync), 0, BarrierCount::Threads(2)),
            Err(SyncError::CountMismatch { .. })
        ));
    }

    #[test]
    fn red_cannot_mix_with_sync() {
        let mut file = BarrierFile::new(4, 1);
        file.register(p(0, BarrierOp::Red), 0, BarrierCount::All)
            .unwrap();
        assert!(matches!(
            file.register(p(1, BarrierOp::Sync), 0, BarrierCount::All),
            Err(SyncError::MixedRed { .. })
        ));
    }

    #[test]
    fn warp_barrier_expects_mask_lanes() {
        let mut file = BarrierFile::new(64, 32);
        for t in 32..47 {
            assert!(matches!(
                file.register_warp(p(t, BarrierOp::Sync), 0xffff),
                Ok(Registered::Pending { .. })
            ));
        }
        assert!(matches!(
            file.register_warp(p(47, BarrierOp::Sync), 0xffff),
            Ok(Registered::Completed(Completion {
                key: BarrierKey::Warp(1),
                ..
            }))
        ));
        assert!(matches!(
            file.register_warp(p(48, BarrierOp::Sync), 0xffff),
            Err(SyncError::LaneNotInMask { .. })
        ));
    }
}
