//! The mbarrier state machine.
//!
//! Semantics (PTX ISA, "Parallel Synchronization and Communication Instructions: mbarrier"):
//! - An mbarrier is an 8-byte object in shared memory. `mbarrier.init [a], count` sets the
//!   current phase to 0, the expected arrival count and the pending arrival count to `count`,
//!   and the transaction count (tx-count) to 0.
//! - `arrive` decrements the pending count; `expect_tx` increments the tx-count; `complete_tx`
//!   decrements it (asynchronous copies do this when their bytes land). The current phase
//!   completes when the pending count is 0 **and** the tx-count is 0: the phase number
//!   increments (its parity flips), the pending count is reset to the expected count.
//! - `arrive_drop` also decrements the expected count of every later phase.
//! - `test_wait.parity`/`try_wait.parity P` return true when the phase with parity `P` has
//!   completed. Because they only distinguish the current phase from the immediately
//!   preceding one, "the phase of parity `P` is complete" means the *current* (incomplete)
//!   phase has the other parity: ready iff `current_phase & 1 != P`. The token variants
//!   (`test_wait`/`try_wait` with the `state` returned by `arrive`) are ready iff the phase
//!   the token names is no longer the current one.
//! - Operating on an uninitialized or invalidated mbarrier, initializing a live one again
//!   without `mbarrier.inval`, arriving more often than the pending count allows, or moving
//!   the tx-count outside `-(2^20-1)..=2^20-1`, is undefined in PTX and a [`MbarrierError`]
//!   here. A failed operation leaves the state unchanged, except `init`, which initializes.
//!
//! Architecture invariant: like [`crate::BarrierFile`], this knows nothing about threads'
//! scheduling; the emulator decides who blocks and wakes using [`MbarrierFile::is_ready`].

use std::collections::HashMap;

use thiserror::Error;

use crate::InstId;

/// The dynamic instruction that executed an `mbarrier.init`: one instruction of one warp.
/// Several lanes of a warp executing one `mbarrier.init` together (the same static
/// instruction at the same occurrence, or the same warp step under `--warp-sync`) with the
/// same address and count initialize the object once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InitSite {
    /// The warp.
    pub warp: u32,
    /// The static instruction.
    pub inst: InstId,
    /// Which execution of it by each lane (the k-th), or the warp step under `--warp-sync`.
    pub occurrence: u32,
}

/// The state of one mbarrier object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MbarrierState {
    /// Completed phases since `init` (the current phase's number); parity is `phase & 1`.
    pub phase: u32,
    /// Arrivals each phase expects.
    pub expected: u32,
    /// Arrivals still missing in the current phase.
    pub pending: u32,
    /// Outstanding transaction bytes (may go negative transiently when a copy completes
    /// before its `expect_tx`, which PTX allows within one phase).
    pub tx: i64,
    /// The dynamic instruction that initialized it and its count, when known: another lane
    /// of that instruction with the same count joins this initialization.
    pub site: Option<(InitSite, u32)>,
}

/// One mbarrier relative to a moment ([`MbarrierFile::snapshot`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MbarrierSnapshot {
    /// Shared byte address.
    pub addr: u32,
    /// Arrivals each phase expects.
    pub expected: u32,
    /// Arrivals still missing in the current phase.
    pub pending: u32,
    /// Outstanding transaction bytes.
    pub tx: i64,
    /// The current phase's parity.
    pub parity: bool,
    /// The initializing warp, instruction and count, when known.
    pub init: Option<(u32, InstId, u32)>,
}

/// A protocol violation on an mbarrier.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum MbarrierError {
    /// An operation other than `init` on an address that holds no initialized mbarrier.
    #[error(
        "mbarrier at shared address {addr:#x} is used while not initialized (before its mbarrier.init or after its mbarrier.inval)"
    )]
    Uninitialized {
        /// Shared address of the object.
        addr: u32,
    },
    /// `mbarrier.init` with a count outside 1..=2^20-1.
    #[error("mbarrier.init at shared address {addr:#x} with invalid count {count}")]
    InvalidCount {
        /// Shared address of the object.
        addr: u32,
        /// The count.
        count: u32,
    },
    /// `mbarrier.init` on an address that still holds an initialized mbarrier (PTX requires
    /// `mbarrier.inval` before the object's memory is reused, also for a new mbarrier). The
    /// object is initialized anew all the same.
    #[error(
        "mbarrier at shared address {addr:#x} is initialized again (phase {phase}) without mbarrier.inval"
    )]
    Reinit {
        /// Shared address of the object.
        addr: u32,
        /// The current phase of the old object.
        phase: u32,
    },
    /// The tx-count left the range PTX allows, `-(2^20-1)..=2^20-1`.
    #[error("mbarrier at shared address {addr:#x}: tx-count {tx} out of range in phase {phase}")]
    TxCountOutOfRange {
        /// Shared address of the object.
        addr: u32,
        /// The tx-count the operation would produce.
        tx: i64,
        /// The current phase.
        phase: u32,
    },
    /// More arrivals than the current phase has pending.
    #[error(
        "mbarrier at shared address {addr:#x}: arrive of {count} with only {pending} arrivals pending in phase {phase}"
    )]
    TooManyArrivals {
        /// Shared address of the object.
        addr: u32,
        /// Arrival count of the operation.
        count: u32,
        /// Pending arrivals before it.
        pending: u32,
        /// The current phase.
        phase: u32,
    },
}

/// The result of an operation that may complete the current phase.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PhaseStep {
    /// The phase is still incomplete; its number.
    Pending(u32),
    /// This operation completed phase `completed` (the current phase is now `completed + 1`).
    Completed {
        /// The phase that completed.
        completed: u32,
    },
}

/// All mbarrier objects of one CTA, keyed by shared byte address.
#[derive(Debug, Clone, Default)]
pub struct MbarrierFile {
    objects: HashMap<u32, MbarrierState>,
}

/// The largest arrival count `mbarrier.init` accepts (2^20 - 1).
pub const MBARRIER_MAX_COUNT: u32 = (1 << 20) - 1;

impl MbarrierFile {
    /// An empty file (no initialized mbarrier).
    pub fn new() -> Self {
        Self::default()
    }

    /// The state of the mbarrier at `addr`, if initialized.
    pub fn state(&self, addr: u32) -> Option<MbarrierState> {
        self.objects.get(&addr).copied()
    }

    /// `mbarrier.init [addr], count`.
    pub fn init(&mut self, addr: u32, count: u32) -> Result<(), MbarrierError> {
        self.init_at(addr, count, None).map(|_| ())
    }

    /// `mbarrier.init [addr], count` executed by a lane of the dynamic instruction `site`.
    /// Returns `Ok(true)` when another lane of the same dynamic instruction already
    /// initialized the object with the same count: the lanes' initialization is one, and
    /// the state is left as it is (whatever the other lanes did since, they did after it).
    pub fn init_at(
        &mut self,
        addr: u32,
        count: u32,
        site: Option<InitSite>,
    ) -> Result<bool, MbarrierError> {
        if count == 0 || count > MBARRIER_MAX_COUNT {
            return Err(MbarrierError::InvalidCount { addr, count });
        }
        if let Some(site) = site {
            if self
                .objects
                .get(&addr)
                .is_some_and(|o| o.site == Some((site, count)))
            {
                return Ok(true);
            }
        }
        let old = self.objects.insert(
            addr,
            MbarrierState {
                phase: 0,
                expected: count,
                pending: count,
                tx: 0,
                site: site.map(|s| (s, count)),
            },
        );
        match old {
            Some(o) => Err(MbarrierError::Reinit {
                addr,
                phase: o.phase,
            }),
            None => Ok(false),
        }
    }

    /// `mbarrier.inval [addr]`: the object is no longer an mbarrier.
    pub fn inval(&mut self, addr: u32) -> Result<(), MbarrierError> {
        self.objects
            .remove(&addr)
            .map(|_| ())
            .ok_or(MbarrierError::Uninitialized { addr })
    }

    fn get(&mut self, addr: u32) -> Result<&mut MbarrierState, MbarrierError> {
        self.objects
            .get_mut(&addr)
            .ok_or(MbarrierError::Uninitialized { addr })
    }

    /// `mbarrier.arrive[.expect_tx]`: `tx` transaction bytes are expected first (0 for a
    /// plain arrive), then `count` arrivals register. With `drop`, later phases also expect
    /// `count` fewer arrivals (`arrive_drop`).
    pub fn arrive(
        &mut self,
        addr: u32,
        count: u32,
        tx: u32,
        drop: bool,
    ) -> Result<PhaseStep, MbarrierError> {
        let state = self.get(addr)?;
        if count > state.pending {
            return Err(MbarrierError::TooManyArrivals {
                addr,
                count,
                pending: state.pending,
                phase: state.phase,
            });
        }
        state.tx = Self::checked_tx(addr, state, i64::from(tx))?;
        state.pending -= count;
        if drop {
            state.expected = state.expected.saturating_sub(count);
        }
        Ok(Self::try_complete(state))
    }

    /// `mbarrier.expect_tx [addr], tx`.
    pub fn expect_tx(&mut self, addr: u32, tx: u32) -> Result<PhaseStep, MbarrierError> {
        let state = self.get(addr)?;
        state.tx = Self::checked_tx(addr, state, i64::from(tx))?;
        Ok(PhaseStep::Pending(state.phase))
    }

    /// `tx` bytes of an asynchronous copy signalling this mbarrier have landed.
    pub fn complete_tx(&mut self, addr: u32, tx: u32) -> Result<PhaseStep, MbarrierError> {
        let state = self.get(addr)?;
        state.tx = Self::checked_tx(addr, state, -i64::from(tx))?;
        Ok(Self::try_complete(state))
    }

    /// The tx-count after adding `delta`, if it stays in PTX's range.
    fn checked_tx(addr: u32, state: &MbarrierState, delta: i64) -> Result<i64, MbarrierError> {
        let tx = state.tx + delta;
        if tx.abs() > i64::from(MBARRIER_MAX_COUNT) {
            return Err(MbarrierError::TxCountOutOfRange {
                addr,
                tx,
                phase: state.phase,
            });
        }
        Ok(tx)
    }

    fn try_complete(state: &mut MbarrierState) -> PhaseStep {
        if state.pending == 0 && state.tx == 0 {
            let completed = state.phase;
            state.phase = state.phase.wrapping_add(1);
            state.pending = state.expected;
            PhaseStep::Completed { completed }
        } else {
            PhaseStep::Pending(state.phase)
        }
    }

    /// Whether `test_wait.parity`/`try_wait.parity parity` returns true now: the current
    /// phase's parity differs from `parity` (the phase of that parity is the preceding,
    /// completed one).
    pub fn is_ready(&self, addr: u32, parity: u32) -> Result<bool, MbarrierError> {
        let state = self
            .objects
            .get(&addr)
            .ok_or(MbarrierError::Uninitialized { addr })?;
        Ok(state.phase & 1 != parity & 1)
    }

    /// Whether the token form of `test_wait`/`try_wait` returns true: the phase `token`
    /// (as returned by `arrive`) is no longer current.
    pub fn is_token_ready(&self, addr: u32, token: u32) -> Result<bool, MbarrierError> {
        let state = self
            .objects
            .get(&addr)
            .ok_or(MbarrierError::Uninitialized { addr })?;
        Ok(state.phase != token)
    }

    /// The objects' state relative to a moment of the run, for the induction over trip
    /// counts (`docs/induction.md` §2), sorted by address. The phase numbers are history
    /// (only their parity decides a wait): [`MbarrierFile::phases`].
    pub fn snapshot(&self) -> Vec<MbarrierSnapshot> {
        let mut out: Vec<_> = self
            .objects
            .iter()
            .map(|(&addr, o)| MbarrierSnapshot {
                addr,
                expected: o.expected,
                pending: o.pending,
                tx: o.tx,
                parity: o.phase & 1 == 1,
                init: o.site.map(|(s, c)| (s.warp, s.inst, c)),
            })
            .collect();
        out.sort_unstable_by_key(|o| o.addr);
        out
    }

    /// Each object's phase number, sorted by address.
    pub fn phases(&self) -> Vec<(u32, u32)> {
        let mut out: Vec<_> = self.objects.iter().map(|(&a, o)| (a, o.phase)).collect();
        out.sort_unstable();
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phase_completes_on_arrivals_and_tx() {
        let mut file = MbarrierFile::new();
        file.init(0x10, 2).unwrap();
        assert_eq!(file.is_ready(0x10, 0), Ok(false));
        assert_eq!(file.is_ready(0x10, 1), Ok(true));
        assert_eq!(file.arrive(0x10, 1, 64, false), Ok(PhaseStep::Pending(0)));
        assert_eq!(file.arrive(0x10, 1, 0, false), Ok(PhaseStep::Pending(0)));
        assert_eq!(
            file.complete_tx(0x10, 64),
            Ok(PhaseStep::Completed { completed: 0 })
        );
        assert_eq!(file.is_ready(0x10, 0), Ok(true));
        assert_eq!(file.is_ready(0x10, 1), Ok(false));
        assert_eq!(file.state(0x10).unwrap().pending, 2);
        assert_eq!(file.is_token_ready(0x10, 0), Ok(true));
        assert_eq!(file.is_token_ready(0x10, 1), Ok(false));
    }

    #[test]
    fn errors() {
        let mut file = MbarrierFile::new();
        assert_eq!(
            file.arrive(8, 1, 0, false),
            Err(MbarrierError::Uninitialized { addr: 8 })
        );
        assert!(file.init(8, 0).is_err());
        file.init(8, 1).unwrap();
        assert!(matches!(
            file.arrive(8, 2, 0, false),
            Err(MbarrierError::TooManyArrivals { .. })
        ));
        assert_eq!(
            file.init(8, 3),
            Err(MbarrierError::Reinit { addr: 8, phase: 0 })
        );
        assert_eq!(file.state(8).unwrap().expected, 3);
        assert!(matches!(
            file.complete_tx(8, MBARRIER_MAX_COUNT + 1),
            Err(MbarrierError::TxCountOutOfRange { .. })
        ));
        assert_eq!(file.state(8).unwrap().tx, 0);
        file.inval(8).unwrap();
        assert!(file.is_ready(8, 0).is_err());
        file.init(8, 1).unwrap();
    }

    #[test]
    fn lanes_of_one_dynamic_init_are_one_initialization() {
        let mut file = MbarrierFile::new();
        let site = |warp, occurrence| InitSite {
            warp,
            inst: InstId(7),
            occurrence,
        };
        assert_eq!(file.init_at(0, 2, Some(site(0, 0))), Ok(false));
        file.arrive(0, 1, 0, false).unwrap();
        // Another lane of the same warp instruction: no reset of the arrival.
        assert_eq!(file.init_at(0, 2, Some(site(0, 0))), Ok(true));
        assert_eq!(file.state(0).unwrap().pending, 1);
        // Another count, another warp, or another occurrence: a second initialization.
        assert!(matches!(
            file.init_at(0, 3, Some(site(0, 0))),
            Err(MbarrierError::Reinit { .. })
        ));
        assert!(matches!(
            file.init_at(0, 3, Some(site(1, 0))),
            Err(MbarrierError::Reinit { .. })
        ));
        assert!(matches!(
            file.init_at(0, 3, Some(site(1, 1))),
            Err(MbarrierError::Reinit { .. })
        ));
        assert!(matches!(
            file.init_at(0, 3, None),
            Err(MbarrierError::Reinit { .. })
        ));
    }

    #[test]
    fn arrive_drop_lowers_later_phases() {
        let mut file = MbarrierFile::new();
        file.init(0, 2).unwrap();
        file.arrive(0, 1, 0, true).unwrap();
        assert_eq!(
            file.arrive(0, 1, 0, false),
            Ok(PhaseStep::Completed { completed: 0 })
        );
        assert_eq!(
            file.arrive(0, 1, 0, false),
            Ok(PhaseStep::Completed { completed: 1 })
        );
    }
}
