//! Well-synchronization of named barriers: generations, sync violations, the barrier
//! dependence graph and happens-before intervals.
//!
//! What weft promises (verdicts, the PTX ISA facts it relies on with their sections, the rules
//! for exited threads, mbarrier parity and same-instruction writes, every approximation) is
//! written down in the repository's `docs/semantics.md`.
//!
//! Input: a [`Program`] (per-thread straight-line commands from the emulator, or built by
//! hand). Output: an [`Analysis`]. Entry point: [`analyze`].
//!
//! # What is checked
//!
//! A program is *well-synchronized* (WEFT paper, Definitions 6–7) when every execution
//! assigns every synchronization command the same non-zero generation: no execution
//! deadlocks or errs, and the same commands synchronize together in all of them. [`analyze`]
//! decides it exactly, following §4.2 and §5.2 of the paper:
//!
//! 1. **Replay** ([`replay`](crate::replay)): one execution of the sync commands (named
//!    barriers, `bar.warp.sync`, exit) through [`weft_program::BarrierFile`], the single
//!    state machine the emulator also uses. It reports errors
//!    ([`ViolationKind::InvalidBarrierId`], [`ViolationKind::InvalidThreadCount`],
//!    [`ViolationKind::BarrierCountMismatch`] (also `bar.red` mixed with `bar.sync`),
//!    [`ViolationKind::BarrierOverflow`], [`ViolationKind::BarrierDivergence`] for a lane
//!    outside its `bar.warp.sync` mask), [`ViolationKind::Deadlock`] (with every blocked
//!    warp, the counts, the warps that never came and the wait-for cycle), and
//!    [`ViolationKind::BarrierDivergence`] (the state machine's warp divergence: lanes of one
//!    warp at different barrier operations, or different instructions of an `.aligned` one;
//!    at a deadlock, an aligned instruction some non-exited lanes of the warp never reach).
//!    Each completed generation becomes a node of the [`BarrierGraph`], a *dynamic barrier*;
//!    the lanes of a warp waiting for each other at a `bar.arrive` become a *warp gather*
//!    node ([`DynamicBarrier::gather`]).
//! 2. **Graph** ([`hb`](crate::hb)): an edge `m -> n` when a thread blocked at `m` (a
//!    generation or a warp gather) later registers (or exits, counted) at `n`; arrive→sync
//!    edges are inside a node. Completion
//!    order is topological, so the graph is acyclic by construction (checked).
//! 3. **Happens-before intervals** ([`HappensBefore`]): per node and thread, the latest
//!    command that happens before the node completes; a command inherits the interval of
//!    the last node its thread blocked at. No transitive closure over commands.
//! 4. **Safe recycling** ([`check`](crate::check)): each generation `k + 1` registration
//!    happens after generation `k` completes (Figure 4, line 19), else
//!    [`ViolationKind::UnsafeRecycling`], or [`ViolationKind::NoWaiter`] when generation
//!    `k` had no waiting thread (arrivals only) and is not ordered before `k + 1`. Any other
//!    arrive-only generation is a lost signal, also reported as
//!    [`ViolationKind::NoWaiter`], but the program stays well-synchronized.
//!
//! Theorem 1 of the paper makes 1 + 4 sound (a trace reaching `done` and passing 4 implies
//! well-synchronization); Lemma 1 makes them complete and makes [`HappensBefore`] the
//! precise static happens-before relation, which the race stage uses. So
//! [`Analysis::happens_before`] is `Some` exactly when the program is well-synchronized:
//! when there is no violation other than lost signals (`no-waiter` generations that every
//! execution forms alike), uses of an mbarrier not ordered before its `mbarrier.inval`, and
//! accesses of a live mbarrier object's bytes ([`ViolationKind::MbarrierReused`]).
//!
//! Extensions beyond the paper's core language follow PTX: per-warp arrival (a registered
//! warp's exited lanes count), barriers for all threads released by exits, `bar.red`,
//! warp barriers. An exit the state machine counted at a generation is an in-edge of that
//! node; an exit it did not count, of a lane whose warp registered, must be ordered after the
//! generation (else another execution counts it).
//!
//! The emulator stops at the first barrier error, so a program may be a prefix: threads
//! whose `end` is [`weft_program::ThreadEnd::Stopped`] (or `Trapped`) are not deadlocked.
//!
//! mbarriers ([`mbarrier`](crate::mbarrier)) join the same graph: the replay runs their
//! commands through [`weft_program::MbarrierFile`] (as the emulator does), each completed
//! *phase* becomes a node ([`NodeKey::MbarrierPhase`]) whose in-edges come from the
//! operations counted in it, and each wait that returned is ordered after the phase it
//! observed. Protocol errors get `mbarrier-…` kinds, a wait that never returns is a
//! [`ViolationKind::Deadlock`], and the analogue of safe recycling (the same phase for every
//! operation and wait in every execution) is [`ViolationKind::MbarrierPhaseRace`].
//!
//! Execution events ([`exec`](crate::exec): the lanes of a `.sync` warp collective such as
//! `elect.sync`) order when threads run, not memory. They join the graph as nodes
//! ([`NodeKey::Exec`]) for the checks above, which ask what any execution can do; the
//! relation handed to the race stage ([`Analysis::happens_before`]) is built a second time
//! without them.

#![deny(missing_docs)]

mod check;
mod exec;
mod hb;
mod mbarrier;
mod participants;
mod registrations;
mod replay;
mod report;
mod trace;

use std::fmt::Write as _;
use std::time::Instant;

use weft_program::{BarrierKey, BarrierOp, Program, ThreadId};

pub use hb::HappensBefore;
pub use participants::Participants;
pub use registrations::Registrations;
pub use report::{
    BlockedGeneration, CommandRef, SyncViolation, ThreadRange, ThreadState, ViolationKind,
    describe_threads,
};

/// A dynamic barrier: one completed generation of a barrier, a node of the [`BarrierGraph`].
/// Dense index in completion order, which is a topological order of the graph.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DynamicBarrierId(pub u32);

impl DynamicBarrierId {
    /// The id as a vector index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl std::fmt::Display for DynamicBarrierId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "n{}", self.0)
    }
}

/// What a dynamic barrier (a node of the [`BarrierGraph`]) or a registration belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NodeKey {
    /// A named or warp barrier; nodes are its generations (1-based).
    Barrier(BarrierKey),
    /// The mbarrier at this shared byte address; nodes are its completed phases, and their
    /// `generation` is the phase number (0-based, as PTX counts phases). A registration with
    /// this key is an operation counted in that phase (`op` arrive), or a wait (`op` sync)
    /// that observed it.
    MbarrierPhase(u32),
    /// A wait on the mbarrier at this address that returned (`generation` = the phase it
    /// observed): it joins the waiting thread's previous blocking point with the phase, so a
    /// thread's blocking points stay a chain. Only created when the thread blocked earlier.
    MbarrierWait(u32),
    /// An execution event (the lanes of one `.sync` warp collective, one warpgroup MMA
    /// group; see [`weft_program::CommandView::Exec`]): it orders execution, not memory, so
    /// only the well-synchronization checks see it, never the race stage's relation.
    Exec(u32),
    /// A wait for the execution event with this id that returned, joining the waiting
    /// thread's previous blocking point with the event (as [`NodeKey::MbarrierWait`]).
    ExecWait(u32),
}

impl NodeKey {
    /// The named or warp barrier, if this is one.
    pub fn barrier(self) -> Option<BarrierKey> {
        match self {
            NodeKey::Barrier(k) => Some(k),
            _ => None,
        }
    }

    /// The mbarrier's shared address, if this is one.
    pub fn mbarrier(self) -> Option<u32> {
        match self {
            NodeKey::Barrier(_) | NodeKey::Exec(_) | NodeKey::ExecWait(_) => None,
            NodeKey::MbarrierPhase(a) | NodeKey::MbarrierWait(a) => Some(a),
        }
    }

    /// Whether this is an execution event or a wait for one: ordering of execution only.
    pub fn is_exec(self) -> bool {
        matches!(self, NodeKey::Exec(_) | NodeKey::ExecWait(_))
    }
}

impl From<BarrierKey> for NodeKey {
    fn from(k: BarrierKey) -> Self {
        NodeKey::Barrier(k)
    }
}

/// `barrier 1`, `mbarrier 0x10`, `wait on mbarrier 0x10`.
impl std::fmt::Display for NodeKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NodeKey::Barrier(k) => k.fmt(f),
            NodeKey::MbarrierPhase(a) => write!(f, "mbarrier {a:#x}"),
            NodeKey::MbarrierWait(a) => write!(f, "wait on mbarrier {a:#x}"),
            NodeKey::Exec(e) => write!(f, "execution event {e}"),
            NodeKey::ExecWait(e) => write!(f, "wait on execution event {e}"),
        }
    }
}

/// One completed generation of a barrier (or phase of an mbarrier, or returned mbarrier
/// wait: see [`NodeKey`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DynamicBarrier {
    /// The barrier.
    pub key: NodeKey,
    /// The generation (1-based; for mbarrier nodes the 0-based phase).
    pub generation: u32,
    /// Threads it expected.
    pub expected: u32,
    /// Its registrations, in registration order.
    pub participants: Participants,
    /// Exited threads it counted as registered, with the index of their exit command (the
    /// program length for a program that ended as exited without one), by thread.
    pub exited: Vec<(ThreadId, u32)>,
    /// A *warp gather*, not a generation: the lanes of one warp waiting for each other at a
    /// non-blocking operation (`bar.arrive`) before the warp registers at generation
    /// `generation` of `key` (PTX counts arrival per warp). `participants` are the lanes,
    /// `exited` the warp's exited lanes (their exits happen before the gather completes),
    /// `expected` their number. Only for warps of more than one lane; the recycling check
    /// skips these nodes.
    pub gather: bool,
}

/// One registration of a thread at a barrier generation, as the replay assigned it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Registration {
    /// Index of the command in the thread's program.
    pub command: u32,
    /// The barrier.
    pub key: NodeKey,
    /// The generation (1-based) the command joined.
    pub generation: u32,
    /// The operation (warp barriers register as sync).
    pub op: BarrierOp,
    /// [`Self::node`], or [`NO_NODE`]: 4 bytes where an `Option` takes 8 (one registration
    /// per sync command, so this is per command in barrier-heavy kernels).
    node: u32,
    /// [`Self::gather`], or [`NO_NODE`].
    gather: u32,
}

/// The absent node of [`Registration`]'s compact fields. No node has this id: a graph of
/// `u32::MAX` nodes would need hundreds of GB (each node is tens of bytes), far beyond
/// the memory budget, and [`Registration::set_node`] checks it.
pub(crate) const NO_NODE: u32 = u32::MAX;

fn compact(node: DynamicBarrierId) -> u32 {
    assert!(node.0 != NO_NODE, "dynamic barrier id out of range");
    node.0
}

fn expand(node: u32) -> Option<DynamicBarrierId> {
    (node != NO_NODE).then_some(DynamicBarrierId(node))
}

impl Registration {
    /// A registration of `command` at generation `generation` of `key`, not yet completed.
    pub fn new(command: u32, key: NodeKey, generation: u32, op: BarrierOp) -> Self {
        Registration {
            command,
            key,
            generation,
            op,
            node: NO_NODE,
            gather: NO_NODE,
        }
    }

    /// The dynamic barrier, if the generation completed.
    pub fn node(&self) -> Option<DynamicBarrierId> {
        expand(self.node)
    }

    /// The warp gather node the thread blocked at before its warp registered (a
    /// non-blocking operation of a warp of several lanes; see [`DynamicBarrier::gather`]).
    pub fn gather(&self) -> Option<DynamicBarrierId> {
        expand(self.gather)
    }

    /// The registration with its completed generation's node.
    pub(crate) fn with_node(mut self, node: DynamicBarrierId) -> Self {
        self.set_node(node);
        self
    }

    /// Records the completed generation's node.
    pub(crate) fn set_node(&mut self, node: DynamicBarrierId) {
        self.node = compact(node);
    }

    /// Records the warp gather the thread blocked at before registering.
    pub(crate) fn set_gather(&mut self, gather: DynamicBarrierId) {
        self.gather = compact(gather);
    }
}

/// The barrier dependence graph (§5.2): dynamic barriers and the edges between them.
#[derive(Debug, Clone, Default)]
pub struct BarrierGraph {
    /// Nodes, indexed by [`DynamicBarrierId`], in completion (topological) order.
    pub nodes: Vec<DynamicBarrier>,
    /// Edges `from -> to` (`from < to`), deduplicated, sorted by `to`.
    pub edges: Vec<(DynamicBarrierId, DynamicBarrierId)>,
    /// Per thread, its registrations in program order (the generation of each sync command).
    pub registrations: Registrations,
}

impl BarrierGraph {
    /// The barrier and generation the replay gave a sync command, if it registered.
    pub fn generation_of(&self, thread: ThreadId, command: u32) -> Option<(BarrierKey, u32)> {
        let regs = self.registrations.get(thread.index())?;
        let i = regs.binary_search_by_key(&command, |r| r.command).ok()?;
        Some((regs[i].key.barrier()?, regs[i].generation))
    }

    /// The graph in Graphviz DOT: one node per dynamic barrier labelled with its barrier,
    /// generation and participant count.
    pub fn to_dot(&self) -> String {
        let mut s = String::from("digraph barriers {\n  node [shape=box];\n");
        for (i, n) in self.nodes.iter().enumerate() {
            let _ = writeln!(
                s,
                "  n{i} [label=\"{} {} {}{}\\n{} registrations\"];",
                n.key,
                if n.key.barrier().is_some() {
                    "gen"
                } else {
                    "phase"
                },
                n.generation,
                if n.gather { " (warp gather)" } else { "" },
                n.participants.len()
            );
        }
        for (a, b) in &self.edges {
            let _ = writeln!(s, "  {a} -> {b};");
        }
        s.push_str("}\n");
        s
    }
}

/// Size and time of the analysis.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GraphStats {
    /// Completed generations (graph nodes).
    pub dynamic_barriers: usize,
    /// Distinct named barrier ids used.
    pub physical_barriers: usize,
    /// Distinct mbarrier addresses with a completed phase.
    pub mbarriers: usize,
    /// Graph edges.
    pub edges: usize,
    /// Wall-clock seconds of [`analyze`].
    pub seconds: f64,
}

/// The result of [`analyze`].
#[derive(Debug, Clone)]
pub struct Analysis {
    /// Every synchronization violation (empty iff the program is well-synchronized).
    pub violations: Vec<SyncViolation>,
    /// Dynamic barriers and edges, for `--dot` and stats.
    pub graph: BarrierGraph,
    /// `Some` iff there is no violation, so races can be checked.
    pub happens_before: Option<HappensBefore>,
    /// Findings that cannot be decided: an access with an over-approximated extent that may
    /// reach a live mbarrier object's bytes ([`ViolationKind::MbarrierReused`]). Not
    /// violations; the kernel is not verified.
    pub undecided: Vec<SyncViolation>,
    /// Sizes and time.
    pub stats: GraphStats,
}

/// Replays the program's synchronization, checks well-synchronization and, when it holds,
/// computes the happens-before intervals. See the crate documentation for what is checked.
pub fn analyze(program: &Program) -> Analysis {
    let start = Instant::now();
    let mut replay = replay::replay(program);
    // Which threads register as the thread before (the lanes of a warp that ran together):
    // the passes over each thread's registrations below skip them.
    let same = hb::repeats(&replay.registrations);
    // The threads' blocking chains need only the registrations: build them beside the
    // edges when the trace is large. `memory`: leave execution events out (the race
    // stage's relation, see `exec`).
    let relation = |memory: bool| {
        let edges = || {
            let exec: &[_] = if memory { &[] } else { &replay.exec.edges };
            hb::edges(
                &replay.nodes,
                &replay.registrations,
                &same,
                memory,
                &[&replay.mbarriers.edges, exec],
            )
        };
        let chains = || hb::Chains::build(program, &replay.registrations, &same, memory);
        if parallel(&replay) {
            rayon::join(edges, chains)
        } else {
            (edges(), chains())
        }
    };
    let (preds, chains) = relation(false);
    let mut edges = Vec::new();
    let mut forward = None;
    for to in 0..preds.len() {
        for &from in preds.of(to) {
            if from.index() >= to {
                forward.get_or_insert((from, DynamicBarrierId(to as u32)));
            }
            edges.push((from, DynamicBarrierId(to as u32)));
        }
    }
    debug_assert!(forward.is_none(), "completion order is topological");
    let mut execution = HappensBefore::build(program, &replay.nodes, &preds, chains, false);
    drop(preds);
    // Without execution events the two relations are the same.
    let mut memory = replay.exec.any.then(|| {
        let (preds, chains) = relation(true);
        HappensBefore::build(program, &replay.nodes, &preds, chains, true)
    });
    if !program.asyncs.is_empty() {
        let observers = mbarrier::observers(&replay.mbarriers);
        let regs = &replay.registrations;
        // Only the race stage asks about copies: they go into the memory relation (the
        // execution relation's thread part is what the checks use).
        let hb = match memory.as_mut() {
            Some(hb) => hb,
            None => &mut execution,
        };
        hb.add_agents(
            program,
            |t, c| {
                let list = regs.get(t.index())?;
                let k = list.partition_point(|r| r.command < c);
                list[k..]
                    .iter()
                    .take_while(|r| r.command == c)
                    .find(|r| matches!(r.key, NodeKey::MbarrierPhase(_)))
                    .and_then(|r| r.node())
            },
            |node| observers.get(&node).cloned().unwrap_or_default(),
        );
    }
    let mut violations = std::mem::take(&mut replay.violations);
    if let Some((a, b)) = forward {
        violations.push(SyncViolation::new(
            ViolationKind::Deadlock,
            format!("internal: barrier dependence graph has a cycle through {a} -> {b}"),
        ));
    }
    violations.extend(check::check_recycling(program, &replay, &same, &execution));
    let (phases, invals) = if replay.stuck {
        Default::default()
    } else {
        mbarrier::check(program, &replay.mbarriers, &execution)
    };
    violations.extend(phases);
    // Everything above decides well-synchronization; a lost signal (an arrive-only
    // generation that every execution forms alike) and a use after an mbarrier's inval are
    // reported but keep the relation.
    let well_synchronized = violations.is_empty();
    violations.extend(check::lost_signals(program, &replay.nodes, &violations));
    violations.extend(invals);
    // The object's memory, under the memory relation (with the copies as agents).
    let reused = if well_synchronized {
        mbarrier::reused(
            program,
            &replay.mbarriers,
            memory.as_ref().unwrap_or(&execution),
        )
    } else {
        mbarrier::Reused::default()
    };
    violations.extend(reused.definite);
    let violations = report::fold_repeats(violations);
    let mut physical: Vec<u32> = replay
        .nodes
        .iter()
        .filter(|n| !n.gather)
        .filter_map(|n| match n.key {
            NodeKey::Barrier(BarrierKey::Named(id)) => Some(id),
            _ => None,
        })
        .collect();
    physical.sort_unstable();
    physical.dedup();
    let mut mbarriers: Vec<u32> = replay
        .nodes
        .iter()
        .filter_map(|n| match n.key {
            NodeKey::MbarrierPhase(a) => Some(a),
            _ => None,
        })
        .collect();
    mbarriers.sort_unstable();
    mbarriers.dedup();
    let graph = BarrierGraph {
        nodes: replay.nodes,
        edges,
        registrations: replay.registrations,
    };
    let stats = GraphStats {
        dynamic_barriers: graph
            .nodes
            .iter()
            .filter(|n| !n.gather && !n.key.is_exec() && !matches!(n.key, NodeKey::MbarrierWait(_)))
            .count(),
        physical_barriers: physical.len(),
        mbarriers: mbarriers.len(),
        edges: graph.edges.len(),
        seconds: start.elapsed().as_secs_f64(),
    };
    Analysis {
        happens_before: well_synchronized.then(|| memory.unwrap_or(execution)),
        violations,
        undecided: reused.possible,
        graph,
        stats,
    }
}

/// Whether the trace is large enough for the independent parts of the analysis to run on
/// two threads (handing work to another thread costs microseconds) and the caller allows
/// two ([`two_threads`]).
pub(crate) fn parallel(replay: &trace::Trace) -> bool {
    const MIN_REGISTRATIONS: usize = 1 << 16;
    let total = replay.registrations.total();
    total >= MIN_REGISTRATIONS && two_threads()
}

/// Whether the rayon pool this stage runs in has more than one thread. The analysis splits
/// its independent parts with `rayon::join` (whose halves merge in a fixed order, so the
/// result does not depend on the split), and only when this holds: `weft -j 1` runs the
/// whole stage on one thread.
pub(crate) fn two_threads() -> bool {
    rayon::current_num_threads() > 1
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod equivalence_tests;
