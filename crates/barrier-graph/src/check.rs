//! Step 4: safe recycling (WEFT paper Figure 4, lines 18–23), with the interval tables.
//!
//! For every barrier `b` and generation `k >= 1`, every registration `c2 = (t, j)` of
//! generation `k + 1` must happen after generation `k` completes, i.e. the program point
//! just before `c2` (command `j - 1`) must be reached from the completion:
//!
//! * if generation `k` has a blocking participant (sync, red, warp sync) `c1`, the check is
//!   `c1 R (t, j - 1)`, exactly line 19 of Figure 4, evaluated as
//!   `c1.index < bound[prev_block(t, j - 1)][c1.thread]`;
//! * if it has none (`no-waiter`: only arrivals, completed by the last of them), the
//!   completion's time is the latest arrival, so *every* arrival (and every counted exit)
//!   must be ordered before `(t, j - 1)`. Figure 4 would pass such a generation vacuously,
//!   which is unsound: an arrival of `k + 1` may join `k`.
//!
//! Separately, [`lost_signals`] reports every generation completed by arrivals only that the
//! recycling check did not already report: no thread waits on it, so its arrivals
//! synchronize nothing. Such a generation does not break well-synchronization (every
//! execution still forms the same generations), so it does not withhold the happens-before
//! relation from the race stage.
//!
//! Exited lanes extend the paper's semantics (PTX counts a registered warp's exited lanes):
//! a lane of a warp that registered at a counted generation, which neither registered nor
//! had exited when the generation completed, must exit after the completion in every
//! trace, or another trace counts its exit there.
//!
//! Theorem 1 of the paper: a trace that reaches `done` plus these checks imply
//! well-synchronization; conversely a failing check has a witness trace (Lemma 1), so the
//! verdict is exact.

use rustc_hash::{FxHashMap, FxHashSet};
use weft_program::{BarrierKey, InstId, Participant, Program, ThreadId};

use crate::hb::HappensBefore;
use crate::report::{CommandRef, SyncViolation, ViolationKind, group_threads, inst_at, join};
use crate::trace::Trace;
use crate::{DynamicBarrier, DynamicBarrierId, NodeKey, Registration};

/// `no-waiter` for each completed named-barrier generation whose participants all arrived
/// without blocking, unless `reported` already names it (as a recycling failure).
#[cold]
pub(crate) fn lost_signals(
    program: &Program,
    nodes: &[DynamicBarrier],
    reported: &[SyncViolation],
) -> Vec<SyncViolation> {
    let ws = program.warp_size();
    let mut out = Vec::new();
    // The generations already reported, looked up per node (a scan per node was quadratic:
    // 80,000 generations of arrivals only took 29 s).
    let done: FxHashSet<(BarrierKey, u32)> = reported
        .iter()
        .filter(|v| v.kind == ViolationKind::NoWaiter)
        .filter_map(|v| Some((v.barrier?, *v.generations.first()?)))
        .collect();
    for node in nodes {
        let NodeKey::Barrier(key @ BarrierKey::Named(_)) = node.key else {
            continue;
        };
        if node.gather || node.participants.iter().any(|p| p.op.blocks()) {
            continue;
        }
        let k = node.generation;
        if done.contains(&(key, k)) {
            continue;
        }
        let mut commands: Vec<CommandRef> = Vec::new();
        for p in &node.participants {
            let inst = inst_at(program, p.thread, p.command);
            if !commands.iter().any(|c| c.inst == inst) {
                commands.push(CommandRef {
                    thread: p.thread,
                    index: p.command,
                    inst,
                });
            }
        }
        let mut threads: Vec<ThreadId> = node.participants.iter().map(|p| p.thread).collect();
        threads.sort_unstable();
        threads.dedup();
        let ranges = group_threads(threads.into_iter().map(|t| (t, ())), ws);
        let who = join(ranges.iter().map(|(r, _)| r));
        let at = join(commands.iter().map(|c| format!("#{}", c.inst.0)));
        let mut v = SyncViolation::new(
            ViolationKind::NoWaiter,
            format!(
                "{key} generation {k} is completed by arrivals only: no thread waits on it, so the arrivals of {who} (instruction {at}) synchronize nothing"
            ),
        );
        v.barrier = Some(key);
        v.generations = vec![k];
        v.commands = commands;
        v.threads = ranges.into_iter().map(|(r, _)| r).collect();
        out.push(v);
    }
    out
}

struct Failure {
    key: BarrierKey,
    generation: u32,
    /// The offending command (registration of `generation + 1`, or an exit).
    command: CommandRef,
    exit: bool,
}

/// Whether generation `n` completes before the program point just before `(t, j)` in every
/// trace (`j` itself excluded). `last` is `t`'s last blocking node before `j`; `waiter` is
/// the node's first blocking participant ([`first_waiter`]).
#[inline]
fn completes_before(
    hb: &HappensBefore,
    node: &DynamicBarrier,
    waiter: Option<Participant>,
    t: ThreadId,
    j: u32,
    last: Option<DynamicBarrierId>,
) -> bool {
    match waiter {
        Some(p) => reaches(hb, t, j, last, p.thread, p.command),
        None => all_reach(hb, node, t, j, last),
    }
}

/// Whether command `i` of `t1` happens before the program point just before `(t, j)`.
#[inline]
fn reaches(
    hb: &HappensBefore,
    t: ThreadId,
    j: u32,
    last: Option<DynamicBarrierId>,
    t1: ThreadId,
    i: u32,
) -> bool {
    if t1 == t {
        i < j
    } else {
        last.is_some_and(|m| i < hb.latest_before(m, t1))
    }
}

/// [`completes_before`] for a generation without a waiter: every registration and counted
/// exit must be ordered before.
#[inline(never)]
fn all_reach(
    hb: &HappensBefore,
    node: &DynamicBarrier,
    t: ThreadId,
    j: u32,
    last: Option<DynamicBarrierId>,
) -> bool {
    node.participants
        .iter()
        .all(|p| reaches(hb, t, j, last, p.thread, p.command))
        && node
            .exited
            .iter()
            .all(|&(t1, e)| reaches(hb, t, j, last, t1, e))
}

/// The first blocking participant (sync, red, warp sync) of a node, if any.
fn first_waiter(node: &DynamicBarrier) -> Option<Participant> {
    node.participants.iter().find(|p| p.op.blocks()).copied()
}

/// Generation -> node of every barrier, dense for named and warp barriers.
struct Generations {
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

    fn new(by_gen: &FxHashMap<(BarrierKey, u32), DynamicBarrierId>) -> Self {
        let mut dense: Vec<Vec<u32>> = Vec::new();
        for (&(key, generation), &n) in by_gen {
            let s = Self::slot(key);
            if s >= Self::MAX_SLOT {
                continue;
            }
            if dense.len() <= s {
                dense.resize_with(s + 1, Vec::new);
            }
            let gens = &mut dense[s];
            let g = generation as usize;
            if gens.len() <= g {
                gens.resize(g + 1, u32::MAX);
            }
            gens[g] = n.0;
        }
        Generations { dense }
    }

    fn get(&self, key: BarrierKey, generation: u32) -> Option<DynamicBarrierId> {
        let n = *self.dense.get(Self::slot(key))?.get(generation as usize)?;
        (n != u32::MAX).then_some(DynamicBarrierId(n))
    }
}

pub(crate) fn check_recycling(
    program: &Program,
    replay: &Trace,
    hb: &HappensBefore,
) -> Vec<SyncViolation> {
    let nodes = &replay.nodes;
    let by_gen: FxHashMap<(BarrierKey, u32), DynamicBarrierId> = nodes
        .iter()
        .enumerate()
        .filter(|(_, n)| !n.gather)
        .filter_map(|(i, n)| Some(((n.key.barrier()?, n.generation), DynamicBarrierId(i as u32))))
        .collect();
    let inst = |t: ThreadId, i: u32| inst_at(program, t, i);
    let gens = Generations::new(&by_gen);
    let waiters: Vec<Option<Participant>> = nodes.iter().map(first_waiter).collect();
    // Each thread's registrations are checked on their own: split the threads in chunks.
    let check = |first: usize, chunk: &[Vec<Registration>]| -> Vec<Failure> {
        let mut failures: Vec<Failure> = Vec::new();
        for (k, regs) in chunk.iter().enumerate() {
            let t = ThreadId((first + k) as u32);
            let mut last: Option<DynamicBarrierId> = None;
            for r in regs {
                // A lane that waited at its warp's gather registers when the gather
                // completes: everything before that completion happens before the
                // registration.
                if r.gather().is_some() {
                    last = r.gather();
                }
                let skip = r.node().is_none() && replay.stuck;
                if r.generation > 1 && !skip {
                    let key = r.key.barrier();
                    let found = key.and_then(|k| Some((k, gens.get(k, r.generation - 1)?)));
                    if let Some((key, n)) = found {
                        // With a waiter this is one table lookup.
                        let ok = completes_before(
                            hb,
                            &nodes[n.index()],
                            waiters[n.index()],
                            t,
                            r.command,
                            last,
                        );
                        if !ok {
                            failures.push(Failure {
                                key,
                                generation: r.generation - 1,
                                command: CommandRef {
                                    thread: t,
                                    index: r.command,
                                    inst: inst(t, r.command),
                                },
                                exit: false,
                            });
                        }
                    }
                }
                if r.op.blocks() {
                    if let Some(m) = r.node() {
                        last = Some(m);
                    }
                }
            }
        }
        failures
    };
    let regs = &replay.registrations;
    let mut failures = if crate::parallel(replay) {
        let mid = regs.len() / 2;
        std::thread::scope(|s| {
            let h = s.spawn(|| check(mid, &regs[mid..]));
            let mut failures = check(0, &regs[..mid]);
            failures.extend(h.join().unwrap_or_else(|e| std::panic::resume_unwind(e)));
            failures
        })
    } else {
        check(0, regs)
    };
    for &(n, t) in &replay.uncounted {
        let Some(e) = replay.exit_index.get(t.index()).copied().flatten() else {
            continue;
        };
        let last = hb.prev_blocking(t, e.saturating_sub(1)).filter(|_| e > 0);
        let node = &nodes[n.index()];
        if !completes_before(hb, node, waiters[n.index()], t, e, last) {
            failures.push(Failure {
                key: match node.key.barrier() {
                    Some(k) => k,
                    None => continue,
                },
                generation: node.generation,
                command: CommandRef {
                    thread: t,
                    index: e,
                    inst: inst(t, e),
                },
                exit: true,
            });
        }
    }
    report(program, nodes, &by_gen, failures)
}

#[cold]
fn report(
    program: &Program,
    nodes: &[DynamicBarrier],
    by_gen: &FxHashMap<(BarrierKey, u32), DynamicBarrierId>,
    mut failures: Vec<Failure>,
) -> Vec<SyncViolation> {
    let ws = program.warp_size();
    failures.sort_by_key(|f| {
        (
            f.key,
            f.generation,
            f.exit,
            f.command.thread,
            f.command.index,
        )
    });
    let mut out = Vec::new();
    let mut start = 0;
    while start < failures.len() {
        let f0 = &failures[start];
        let len = failures[start..]
            .iter()
            .take_while(|f| (f.key, f.generation, f.exit) == (f0.key, f0.generation, f0.exit))
            .count();
        let group = &failures[start..start + len];
        start += len;
        let Some(&n) = by_gen.get(&(f0.key, f0.generation)) else {
            continue;
        };
        let node = &nodes[n.index()];
        let waiter = node.participants.iter().find(|p| p.op.blocks());
        let first = waiter.or(node.participants.first());
        let first_ref = first.map(|p| CommandRef {
            thread: p.thread,
            index: p.command,
            inst: inst_at(program, p.thread, p.command),
        });
        let mut threads: Vec<ThreadId> = group.iter().map(|f| f.command.thread).collect();
        threads.dedup();
        let ranges = group_threads(threads.into_iter().map(|t| (t, ())), ws);
        let mut insts: Vec<InstId> = group.iter().map(|f| f.command.inst).collect();
        insts.sort_unstable();
        insts.dedup();
        let (k, key) = (f0.generation, f0.key);
        let who = join(ranges.iter().map(|(r, _)| r));
        let at = join(insts.iter().map(|i| format!("#{}", i.0)));
        let (kind, message) = if f0.exit {
            (
                ViolationKind::UnsafeRecycling,
                format!(
                    "{key} generation {k}: the exit of {who} (instruction {at}) is not ordered after the generation completes, although its warp registered there; an execution where it exits earlier counts it and completes generation {k} with other registrations"
                ),
            )
        } else if waiter.is_none() {
            (
                ViolationKind::NoWaiter,
                format!(
                    "{key} generation {k} is completed by arrivals only (no thread waits on it), and {who} register at generation {} (instruction {at}) without being ordered after all of those arrivals; in another execution they join generation {k}",
                    k + 1
                ),
            )
        } else {
            (
                ViolationKind::UnsafeRecycling,
                format!(
                    "{key} is recycled unsafely: {who} register at generation {} (instruction {at}) without being ordered after generation {k} completes (no sync of generation {k} happens before them); in another execution they join generation {k}",
                    k + 1
                ),
            )
        };
        let mut v = SyncViolation::new(kind, message);
        v.barrier = Some(key);
        v.generations = if f0.exit { vec![k] } else { vec![k, k + 1] };
        let mut cmds: Vec<CommandRef> = Vec::new();
        for f in group {
            if !cmds.iter().any(|c| c.inst == f.command.inst) {
                cmds.push(f.command);
            }
        }
        cmds.extend(first_ref);
        v.commands = cmds;
        v.threads = ranges.into_iter().map(|(r, _)| r).collect();
        out.push(v);
    }
    out
}
