//! The record of one replay of a program's synchronization ([`Trace`]): what the named
//! barrier replay (`replay`) and the mbarrier replay (`mbarrier`) both write and the checks
//! read. It holds data only, so both replays depend on it and not on each other's types.

use rustc_hash::FxHashMap;
use weft_program::{BarrierKey, InstId, MbarrierFile, MbarrierOp, ThreadId};

use crate::report::{SyncViolation, ViolationKind};
use crate::{DynamicBarrier, DynamicBarrierId, Registrations};

/// What a replay produced: the completed generations and mbarrier phases, each thread's
/// registrations, and the violations found on the way.
pub(crate) struct Trace {
    /// Completed generations, in completion order (a topological order of the graph).
    pub nodes: Vec<DynamicBarrier>,
    /// Per thread, its registrations in program order.
    pub registrations: Registrations,
    /// Per thread, the index of its exit (the program length when it ended as exited
    /// without an exit command), if it exited.
    pub exit_index: Vec<Option<u32>>,
    /// `(node, thread)`: a lane of a warp that registered at a counted node, neither
    /// registered nor counted as exited there. If it exits later, its exit must be ordered
    /// after the node (else another trace counts it).
    pub uncounted: Vec<(DynamicBarrierId, ThreadId)>,
    /// Errors, deadlock, divergence found while replaying.
    pub violations: Vec<SyncViolation>,
    /// Whether the trace stopped at an error or deadlocked.
    pub stuck: bool,
    /// mbarrier objects, phases and waiters.
    pub mbarriers: MbarrierReplay,
    /// Execution events ([`crate::exec`]).
    pub exec: crate::exec::ExecReplay,
}

/// Generation -> node of every named and warp barrier (the completed generations of a
/// trace's nodes), dense.
pub(crate) struct Generations {
    /// `dense[slot(key)][generation]`: the node, or `u32::MAX`.
    dense: Vec<Vec<u32>>,
}

impl Generations {
    /// Dense slots beyond this fall back to "absent" (no completed generation can have such
    /// a key: named ids are checked by the state machine, warps are bounded by threads).
    const MAX_SLOT: usize = 1 << 22;

    fn slot(key: BarrierKey) -> usize {
        match key {
            BarrierKey::Named(id) => 2 * id as usize,
            BarrierKey::Warp(w) => 2 * w as usize + 1,
        }
    }

    /// The generations of the named and warp barrier nodes among `nodes` (a warp's gather
    /// nodes are not generations).
    pub(crate) fn of(nodes: &[DynamicBarrier]) -> Self {
        let mut dense: Vec<Vec<u32>> = Vec::new();
        for (i, n) in nodes.iter().enumerate() {
            let Some(key) = n.key.barrier().filter(|_| !n.gather) else {
                continue;
            };
            let s = Self::slot(key);
            if s >= Self::MAX_SLOT {
                continue;
            }
            if dense.len() <= s {
                dense.resize_with(s + 1, Vec::new);
            }
            let gens = &mut dense[s];
            let g = n.generation as usize;
            if gens.len() <= g {
                gens.resize(g + 1, u32::MAX);
            }
            gens[g] = i as u32;
        }
        Generations { dense }
    }

    /// The node of generation `generation` of `key`, if it completed.
    pub(crate) fn get(&self, key: BarrierKey, generation: u32) -> Option<DynamicBarrierId> {
        let n = *self.dense.get(Self::slot(key))?.get(generation as usize)?;
        (n != u32::MAX).then_some(DynamicBarrierId(n))
    }
}

/// A command of a thread: `(thread, index)`.
pub(crate) type Cmd = (ThreadId, u32);

/// One phase of one mbarrier object.
#[derive(Debug, Default)]
pub(crate) struct Phase {
    /// Operations it counted, with the index of their registration in the thread's list.
    pub(crate) counted: Vec<(Cmd, MbarrierOp, usize)>,
    /// Waits that observed it.
    pub(crate) observers: Vec<Cmd>,
    /// Its node, once completed.
    pub(crate) node: Option<DynamicBarrierId>,
}

/// One mbarrier object, from its `init` to its `inval` (or the end).
#[derive(Debug)]
pub(crate) struct Object {
    pub(crate) addr: u32,
    pub(crate) init: Cmd,
    /// Other lanes of the `init`'s dynamic instruction (one initialization with it, see
    /// [`weft_program::InitSite`]): an operation ordered after any of them is ordered
    /// after the initialization.
    pub(crate) joined: Vec<Cmd>,
    /// Waits that returned at once before phase 0 completed (observed phase `-1`).
    pub(crate) early: Vec<Cmd>,
    /// `phases[k]`; the last one is the current, open phase.
    pub(crate) phases: Vec<Phase>,
    /// The `mbarrier.inval` that ended it, if one did.
    pub(crate) inval: Option<Cmd>,
}

impl Object {
    /// The `init` and the other lanes of its dynamic instruction: an operation ordered
    /// after any of them is ordered after the initialization.
    pub(crate) fn inits(&self) -> impl Iterator<Item = Cmd> + '_ {
        std::iter::once(self.init).chain(self.joined.iter().copied())
    }
}

/// A thread blocked at a wait.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Waiter {
    pub(crate) cmd: Cmd,
    pub(crate) object: usize,
    pub(crate) parity: u32,
}

/// The mbarrier part of the replay.
#[derive(Debug, Default)]
pub(crate) struct MbarrierReplay {
    pub(crate) file: MbarrierFile,
    pub(crate) objects: Vec<Object>,
    /// The live object at each address.
    pub(crate) live: FxHashMap<u32, usize>,
    pub(crate) waiting: Vec<Waiter>,
    /// Edges `phase -> wait node` (the other in-edges come from registrations).
    pub(crate) edges: Vec<(DynamicBarrierId, DynamicBarrierId)>,
    /// Whether a protocol error was reported (the phase checks are then skipped).
    pub(crate) errors: bool,
    /// `mbarrier.init` commands replayed so far per (thread, instruction).
    pub(crate) init_occ: FxHashMap<(ThreadId, InstId), u32>,
    /// The protocol error reported first per (kind, thread, instruction): its index in
    /// [`Trace::violations`] (later ones fold into it, `mbarrier::protocol_error`).
    pub(crate) reported: FxHashMap<(ViolationKind, ThreadId, InstId), usize>,
}

impl MbarrierReplay {
    /// Whether some thread is blocked at an mbarrier wait.
    pub(crate) fn has_waiters(&self) -> bool {
        !self.waiting.is_empty()
    }
}
