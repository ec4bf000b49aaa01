//! Execution events ([`CommandView::Exec`]) in the replay and the graph: synchronization
//! that orders when threads run, never what they see in memory.
//!
//! # Trace
//!
//! Before the replay, one pass over the programs counts the arrivals (`Arrive` and `Sync`
//! commands) naming each event: the event completes when the replay has run all of them.
//! The emulator gives every dynamic event its own id and records a command only for a part
//! that really took place (the lanes of a `.sync` collective once it completed, each warp's
//! issue of a warpgroup MMA), so the count is exact. `Sync` and `Wait` block until the
//! event completes.
//!
//! # Graph
//!
//! A completed event is a node ([`NodeKey::Exec`]) whose participants are its arrivals, so
//! `hb`'s rule gives the in-edges: everything before an arrival happens (in time) before
//! the event completes, and a `Sync` lane's later commands after it. A `Wait` is not an
//! arrival: it is ordered after the event but its earlier commands are not ordered before
//! it, so, as for an mbarrier wait ([`crate::mbarrier`]), a wait of a thread that blocked
//! before gets a node of its own ([`NodeKey::ExecWait`]) with in-edges from the event and
//! from the thread's previous blocking point.
//!
//! # Two relations
//!
//! The nodes and registrations of execution events are part of the *execution* order,
//! which the well-synchronization checks use (safe recycling, the mbarrier phase checks:
//! which generation or phase an operation can join in any execution is a question of
//! time). The *memory* order the race stage needs leaves them out: `hb` builds it from the
//! same trace with every execution-event registration, edge and node skipped
//! ([`crate::analyze`] builds both when the trace has an execution event). An event then
//! orders no shared access, directly or through a path: a write before a lane's
//! `elect.sync` is not ordered before another lane's read after it, nor before what that
//! lane later releases through an mbarrier.

use rustc_hash::FxHashMap;
use weft_program::{BarrierOp, CommandView, ExecOp, InstId, Participant, Program, ThreadId};

use crate::report::{SyncViolation, ViolationKind, group_threads, inst_at, join};
use crate::trace::{Cmd, Trace};
use crate::{DynamicBarrier, DynamicBarrierId, NodeKey, Participants, Registration};

/// A thread blocked at an event: `(command, event)`.
type Blocked = (Cmd, u32);

/// The execution-event part of the replay.
#[derive(Debug, Default)]
pub(crate) struct ExecReplay {
    /// Arrivals each open event still waits for.
    remaining: FxHashMap<u32, u32>,
    /// Arrivals so far of each open event, with the index of their registration.
    arrived: FxHashMap<u32, Vec<(Participant, usize)>>,
    /// Completed events.
    done: FxHashMap<u32, DynamicBarrierId>,
    /// Threads blocked at an event that has not completed.
    pub(crate) waiting: Vec<Blocked>,
    /// Edges `event -> wait node` (the other in-edges come from registrations).
    pub(crate) edges: Vec<(DynamicBarrierId, DynamicBarrierId)>,
    /// Whether the program has an execution event at all.
    pub(crate) any: bool,
}

impl ExecReplay {
    /// The replay's state before the first command, with the arrivals of every event.
    pub(crate) fn new(arrivals: Arrivals) -> Self {
        ExecReplay {
            remaining: arrivals.remaining,
            any: arrivals.any,
            ..ExecReplay::default()
        }
    }
}

/// The arrivals (`Arrive` and `Sync` commands) naming each execution event, counted by the
/// pass over every command before the replay.
#[derive(Debug, Default)]
pub(crate) struct Arrivals {
    /// Per event, its arrivals.
    remaining: FxHashMap<u32, u32>,
    /// Whether the program has an execution event at all.
    any: bool,
}

impl Arrivals {
    /// Counts command `c` if it is an arrival.
    pub(crate) fn count(&mut self, c: &weft_program::Command) {
        if let CommandView::Exec { op, event } = c.view() {
            self.any = true;
            if op != ExecOp::Wait {
                *self.remaining.entry(event).or_insert(0) += 1;
            }
        }
    }

    /// Adds the arrivals `other` counted.
    pub(crate) fn merge(&mut self, other: Arrivals) {
        self.any |= other.any;
        for (event, n) in other.remaining {
            *self.remaining.entry(event).or_insert(0) += n;
        }
    }
}

/// Runs one execution-event command of `thread` (command `index`). Returns whether the
/// thread blocks; pushes the threads a completion woke onto `woken`.
pub(crate) fn step(
    out: &mut Trace,
    thread: ThreadId,
    index: u32,
    op: ExecOp,
    event: u32,
    woken: &mut Vec<ThreadId>,
) -> bool {
    let cmd = (thread, index);
    if op == ExecOp::Wait {
        return match out.exec.done.get(&event) {
            Some(&node) => {
                observe(out, cmd, event, node);
                false
            }
            // An event without arrivals is complete from the start and orders nothing.
            None if !out.exec.remaining.contains_key(&event) => false,
            None => {
                out.exec.waiting.push((cmd, event));
                true
            }
        };
    }
    let bop = if op == ExecOp::Sync {
        BarrierOp::Sync
    } else {
        BarrierOp::Arrive
    };
    let r = out.registrations.push(
        thread.index(),
        Registration::new(index, NodeKey::Exec(event), 0, bop),
    );
    let p = Participant {
        thread,
        command: index,
        op: bop,
    };
    out.exec.arrived.entry(event).or_default().push((p, r));
    let left = out.exec.remaining.entry(event).or_insert(1);
    *left = left.saturating_sub(1);
    if *left > 0 {
        if op == ExecOp::Sync {
            out.exec.waiting.push((cmd, event));
            return true;
        }
        return false;
    }
    complete(out, event, woken);
    false
}

/// Event `event` has all its arrivals: make it a node, release its waiters.
fn complete(out: &mut Trace, event: u32, woken: &mut Vec<ThreadId>) {
    let id = DynamicBarrierId(out.nodes.len() as u32);
    out.exec.remaining.remove(&event);
    let arrived = out.exec.arrived.remove(&event).unwrap_or_default();
    let mut participants = Vec::with_capacity(arrived.len());
    for (p, r) in arrived {
        // Every lane sharing this registration arrived at this event: it is counted here
        // too ([`crate::Registrations::completing`]).
        if let Some(reg) = out
            .registrations
            .completing_thread(p.thread.index())
            .get_mut(r)
        {
            reg.set_node(id);
        }
        participants.push(p);
    }
    out.nodes.push(DynamicBarrier {
        key: NodeKey::Exec(event),
        generation: 0,
        expected: participants.len() as u32,
        participants: Participants::of(&participants),
        exited: Vec::new(),
        gather: false,
    });
    out.exec.done.insert(event, id);
    let (ready, still): (Vec<Blocked>, Vec<Blocked>) = std::mem::take(&mut out.exec.waiting)
        .into_iter()
        .partition(|&(_, e)| e == event);
    out.exec.waiting = still;
    for (cmd, _) in ready {
        // A `Sync` lane is a participant: its registration is the node's already.
        let is_sync = out
            .registrations
            .of(cmd.0.index())
            .last()
            .is_some_and(|r| r.command == cmd.1 && r.key == NodeKey::Exec(event));
        if !is_sync {
            observe(out, cmd, event, id);
        }
        woken.push(cmd.0);
    }
}

/// A `Wait` returned after event `event` (node `node`) completed.
fn observe(out: &mut Trace, cmd: Cmd, event: u32, node: DynamicBarrierId) {
    let (t, i) = cmd;
    let regs = out.registrations.of(t.index());
    let last = regs
        .iter()
        .rev()
        .find_map(|r| r.node().filter(|_| r.op.blocks()).or(r.gather()));
    let at = match last {
        None => node,
        Some(b) if b == node => node,
        Some(_) => {
            let w = DynamicBarrierId(out.nodes.len() as u32);
            out.nodes.push(DynamicBarrier {
                key: NodeKey::ExecWait(event),
                generation: 0,
                expected: 0,
                participants: Participants::of(&[Participant {
                    thread: t,
                    command: i,
                    op: BarrierOp::Sync,
                }]),
                exited: Vec::new(),
                gather: false,
            });
            out.exec.edges.push((node, w));
            w
        }
    };
    out.registrations.push(
        t.index(),
        Registration::new(i, NodeKey::Exec(event), 0, BarrierOp::Sync).with_node(at),
    );
}

/// The replay ended with threads blocked at execution events that never completed. The
/// emulator records only parts that took place, so this means the replay's schedule met a
/// cycle the emulated one did not: a deadlock in some execution.
#[cold]
pub(crate) fn deadlocks(out: &mut Trace, program: &Program) {
    let ws = program.warp_size();
    let mut waiting = std::mem::take(&mut out.exec.waiting);
    waiting.sort_by_key(|&(c, e)| (e, c));
    let blocked = group_threads(
        waiting
            .iter()
            .map(|&((t, i), _)| (t, inst_at(program, t, i))),
        ws,
    );
    let insts: Vec<InstId> = {
        let mut v: Vec<InstId> = waiting
            .iter()
            .map(|&((t, i), _)| inst_at(program, t, i))
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let mut v = SyncViolation::new(
        ViolationKind::Deadlock,
        format!(
            "{} thread(s) blocked forever at a warp collective or wgmma.wait_group (instruction {}) whose other participants never arrive in this execution: {}",
            waiting.len(),
            join(insts.iter().map(|i| format!("#{}", i.0))),
            join(
                blocked
                    .iter()
                    .map(|(r, i)| format!("{r} at instruction #{}", i.0))
            )
        ),
    );
    v.commands = waiting
        .iter()
        .map(|&((t, i), _)| crate::report::CommandRef {
            thread: t,
            index: i,
            inst: inst_at(program, t, i),
        })
        .collect();
    v.commands.dedup_by_key(|c| c.inst);
    v.threads = blocked.iter().map(|(r, _)| *r).collect();
    out.violations.push(v);
}
