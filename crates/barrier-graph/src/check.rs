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

use rustc_hash::FxHashSet;
use weft_program::{BarrierKey, InstId, Participant, Program, ThreadId};

use crate::hb::HappensBefore;
use crate::report::{CommandRef, SyncViolation, ViolationKind, group_threads, inst_at, join};
use crate::trace::{Generations, Trace};
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
        if node.gather || node.participants.any_blocks() {
            continue;
        }
        let k = node.generation;
        if done.contains(&(key, k)) {
            continue;
        }
        let mut commands: Vec<CommandRef> = Vec::new();
        for p in node.participants.iter() {
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

/// The recycling failures of one (barrier, generation, exit) group, gathered as they are
/// found: the failing threads and, per instruction, its first failing command. A list of
/// every failure, sorted before grouping, took 28 bytes per unordered registration plus
/// its sort's scratch: 15 M failures on 280,000 generations of arrivals asked for 234 MB
/// at once at the end of a run near the memory budget, and the sort was a tenth of it.
struct Group {
    /// The generation's node.
    node: DynamicBarrierId,
    key: BarrierKey,
    generation: u32,
    exit: bool,
    /// Failing threads, in the order found (sorted and deduplicated by [`Groups::finish`]).
    threads: Vec<ThreadId>,
    /// Per instruction, the failing command of the lowest (thread, index).
    commands: Vec<CommandRef>,
}

impl Group {
    fn add(&mut self, command: CommandRef) {
        if self.threads.last() != Some(&command.thread) {
            self.threads.push(command.thread);
        }
        self.add_command(command);
    }

    fn add_command(&mut self, command: CommandRef) {
        let at = |c: &CommandRef| (c.thread, c.index);
        match self.commands.iter_mut().find(|c| c.inst == command.inst) {
            Some(c) if at(&command) < at(c) => *c = command,
            Some(_) => {}
            None => self.commands.push(command),
        }
    }
}

/// The failure groups of one pass, found by node (and exit) in a table built on the first
/// failure.
#[derive(Default)]
struct Groups {
    /// `index[2 * node + exit]`: the group's position in `groups` plus one, or 0.
    index: Vec<u32>,
    groups: Vec<Group>,
}

impl Groups {
    fn add(
        &mut self,
        nodes: usize,
        n: DynamicBarrierId,
        key: BarrierKey,
        generation: u32,
        exit: bool,
        command: CommandRef,
    ) {
        if self.index.is_empty() {
            self.index = vec![0; 2 * nodes];
        }
        let slot = 2 * n.index() + usize::from(exit);
        let g = match self.index[slot] {
            0 => {
                self.groups.push(Group {
                    node: n,
                    key,
                    generation,
                    exit,
                    threads: Vec::new(),
                    commands: Vec::new(),
                });
                self.index[slot] = self.groups.len() as u32;
                self.groups.len() - 1
            }
            g => g as usize - 1,
        };
        self.groups[g].add(command);
    }

    /// Appends the groups of a later pass (whose threads all follow this one's).
    fn merge(&mut self, other: Groups) {
        if other.groups.is_empty() {
            return;
        }
        if self.index.is_empty() {
            *self = other;
            return;
        }
        let mut slots = vec![0u32; other.groups.len()];
        for (slot, &g) in other.index.iter().enumerate() {
            if g != 0 {
                slots[g as usize - 1] = slot as u32;
            }
        }
        for (g, slot) in other.groups.into_iter().zip(slots) {
            match self.index[slot as usize] {
                0 => {
                    self.groups.push(g);
                    self.index[slot as usize] = self.groups.len() as u32;
                }
                i => {
                    let mine = &mut self.groups[i as usize - 1];
                    mine.threads.extend(g.threads);
                    for c in g.commands {
                        mine.add_command(c);
                    }
                }
            }
        }
    }

    /// The groups in (barrier, generation, exit) order, threads sorted, commands in
    /// (thread, index) order.
    fn finish(mut self) -> Vec<Group> {
        self.groups
            .sort_unstable_by_key(|g| (g.key, g.generation, g.exit));
        for g in &mut self.groups {
            g.threads.sort_unstable();
            g.threads.dedup();
            g.commands.sort_unstable_by_key(|c| (c.thread, c.index));
        }
        self.groups
    }
}

/// Commands (registrations and exits) of a generation without a waiter, summarized for
/// the question "are all of them ordered before the point just before `(t, j)`?" when
/// each one is either known to be, or else only ordered by `t`'s own program order.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Threads {
    /// None.
    Empty,
    /// All by one thread, the latest at this command.
    One(ThreadId, u32),
    /// By several threads.
    Several,
}

impl Threads {
    fn of(commands: impl Iterator<Item = (ThreadId, u32)>) -> Self {
        let mut out = Threads::Empty;
        for (t, i) in commands {
            out = match out {
                Threads::Empty => Threads::One(t, i),
                Threads::One(s, j) if s == t => Threads::One(s, i.max(j)),
                _ => return Threads::Several,
            };
        }
        out
    }

    /// Whether all of them precede `(t, j)` in `t`'s program.
    fn precede(self, t: ThreadId, j: u32) -> bool {
        match self {
            Threads::Empty => true,
            Threads::One(s, i) => s == t && i < j,
            Threads::Several => false,
        }
    }
}

/// How a generation completes, as the recycling check needs it.
#[derive(Clone, Copy)]
enum Completion {
    /// Its first blocking participant ([`first_waiter`]).
    Waiter(Participant),
    /// Arrivals only: its registrations and counted exits.
    Arrivals(Threads),
}

impl Completion {
    fn of(node: &DynamicBarrier) -> Self {
        match first_waiter(node) {
            Some(p) => Completion::Waiter(p),
            None => Completion::Arrivals(Threads::of(commands(node))),
        }
    }
}

/// A generation's registrations and counted exits.
fn commands(node: &DynamicBarrier) -> impl Iterator<Item = (ThreadId, u32)> + '_ {
    node.participants
        .iter()
        .map(|p| (p.thread, p.command))
        .chain(node.exited.iter().copied())
}

/// For generations without a waiter: the commands of generation `n` that blocking point
/// `m` does not order before it ([`Threads`]), by `(n, m)`, direct-mapped. The lanes of a
/// warp register after the same point (their gather) at the same generation, so each
/// summary serves a warp: 240,000 generations of 64 arrivals each tested every arrival
/// again per registration, a fifth of the run.
struct Unordered {
    slots: Vec<(u32, u32, Threads)>,
}

impl Unordered {
    const SLOTS: usize = 1 << 12;

    fn new() -> Self {
        Unordered {
            slots: vec![(u32::MAX, u32::MAX, Threads::Empty); Self::SLOTS],
        }
    }

    fn get(
        &mut self,
        hb: &HappensBefore,
        node: &DynamicBarrier,
        n: DynamicBarrierId,
        m: DynamicBarrierId,
    ) -> Threads {
        let h = (n.0.wrapping_mul(0x9E37_79B1) ^ m.0.wrapping_mul(0x85EB_CA6B)) as usize;
        let slot = &mut self.slots[h % Self::SLOTS];
        if (slot.0, slot.1) != (n.0, m.0) {
            let unordered = commands(node).filter(|&(t1, i)| i >= hb.latest_before(m, t1));
            *slot = (n.0, m.0, Threads::of(unordered));
        }
        slot.2
    }
}

/// Whether generation `n` completes before the program point just before `(t, j)` in every
/// trace (`j` itself excluded). `last` is `t`'s last blocking node before `j`.
///
/// Without a waiter every registration and counted exit must be ordered before. One of
/// `t`'s own is when it precedes `j`; another thread's only through `last`. If `last`
/// orders one of `t`'s, that one precedes `last`'s registration, so precedes `j`: every
/// command `last` does not order must be `t`'s and precede `j`.
#[inline]
fn completes_before(
    hb: &HappensBefore,
    node: &DynamicBarrier,
    n: DynamicBarrierId,
    completion: Completion,
    cache: &mut Unordered,
    (t, j): (ThreadId, u32),
    last: Option<DynamicBarrierId>,
) -> bool {
    #[cfg(test)]
    if REFERENCE.with(std::cell::Cell::get) {
        if let Completion::Arrivals(_) = completion {
            return all_reach(hb, node, t, j, last);
        }
    }
    match (completion, last) {
        (Completion::Waiter(p), _) => reaches(hb, t, j, last, p.thread, p.command),
        (Completion::Arrivals(all), None) => all.precede(t, j),
        (Completion::Arrivals(Threads::Empty), Some(_)) => true,
        (Completion::Arrivals(_), Some(m)) => cache.get(hb, node, n, m).precede(t, j),
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

/// Whether the tests' reference answers are asked for ([`REFERENCE`]).
#[inline]
fn reference() -> bool {
    #[cfg(test)]
    if REFERENCE.with(std::cell::Cell::get) {
        return true;
    }
    false
}

#[cfg(test)]
thread_local! {
    /// Tests: [`completes_before`] answers for generations without a waiter by testing
    /// every registration and exit, as the definition says, instead of the summaries, and
    /// no lane reuses another's answer ([`Verdict::answers`]).
    pub(crate) static REFERENCE: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// The definition [`completes_before`] summarizes for a generation without a waiter:
/// every registration and counted exit is ordered before `(t, j)`.
#[cfg(test)]
fn all_reach(
    hb: &HappensBefore,
    node: &DynamicBarrier,
    t: ThreadId,
    j: u32,
    last: Option<DynamicBarrierId>,
) -> bool {
    commands(node).all(|(t1, i)| reaches(hb, t, j, last, t1, i))
}

/// The first blocking participant (sync, red, warp sync) of a node, if any.
fn first_waiter(node: &DynamicBarrier) -> Option<Participant> {
    node.participants.iter().find(|p| p.op.blocks())
}

/// Registrations of one lane [`check_recycling`] walks in a block (see there).
const BLOCK: usize = 256;

/// What the recycling check found for a registration, for the next lanes of the warp at
/// the same position: lanes of a warp that register together (the same barrier,
/// generation and command after the same blocking point) get the same answer, except a
/// lane that is the first waiter of the previous generation ([`reaches`] compares threads).
#[derive(Clone, Copy)]
struct Verdict {
    key: NodeKey,
    generation: u32,
    /// The registration's node ([`Registration::node`], compact): equal nodes mean equal
    /// keys and generations (see [`Self::answers`]).
    node: u32,
    command: u32,
    last: Option<DynamicBarrierId>,
    /// The lane it was found for.
    thread: ThreadId,
    /// The first waiter of the previous generation; `None`: not reusable (no such
    /// generation, or one without a waiter: [`Unordered`] summarizes those).
    waiter: Option<ThreadId>,
    found: Option<(BarrierKey, DynamicBarrierId, bool)>,
}

impl Verdict {
    /// Matches nothing.
    const NONE: Verdict = Verdict {
        key: NodeKey::Exec(u32::MAX),
        generation: 0,
        node: crate::NO_NODE,
        command: u32::MAX,
        last: None,
        thread: ThreadId(u32::MAX),
        waiter: None,
        found: None,
    };

    fn of(
        r: &Registration,
        last: Option<DynamicBarrierId>,
        thread: ThreadId,
        found: Option<(BarrierKey, DynamicBarrierId, bool)>,
        completions: &[Completion],
    ) -> Self {
        let waiter = found.and_then(|(_, n, _)| match completions[n.index()] {
            Completion::Waiter(p) => Some(p.thread),
            Completion::Arrivals(_) => None,
        });
        Verdict {
            key: r.key,
            generation: r.generation,
            node: r.node,
            command: r.command,
            last,
            thread,
            waiter,
            found,
        }
    }

    /// Whether this is the answer for lane `thread`'s `r` after `last` ([`Self::found`]).
    #[inline]
    fn answers(&self, r: &Registration, last: Option<DynamicBarrierId>, thread: ThreadId) -> bool {
        let Some(waiter) = self.waiter else {
            return false;
        };
        // The reference answers every registration on its own.
        #[cfg(test)]
        if REFERENCE.with(std::cell::Cell::get) {
            return false;
        }
        // A completed node is the generation of one barrier: only named and warp barrier
        // registrations get generation nodes (mbarrier and execution-event registrations
        // get nodes of their own kinds), each the node of its own key and generation. So
        // one comparison of nodes stands for the key's and the generation's (a
        // registration compares them when it has no node).
        let same_generation = if self.node != crate::NO_NODE {
            self.node == r.node
        } else {
            r.node == crate::NO_NODE && self.generation == r.generation && self.key == r.key
        };
        same_generation
            && self.command == r.command
            && self.last == last
            && waiter != thread
            && waiter != self.thread
    }
}

/// The lane of a block whose answers the next lanes of its warp with the same
/// registrations take ([`check_recycling`]).
struct Model {
    /// Whether its block's answers hold for another lane with the same registrations:
    /// no failure, and every checked registration's answer the one of a generation with a
    /// waiter other than the lane (a generation without one, [`Unordered`], compares
    /// threads).
    clean: bool,
    /// Bit `l`: lane `l` of the warp is the waiter of a generation the block checked
    /// against (its own registrations answer those by program order).
    waiters: u64,
    /// The lane's last blocking node after the block.
    last: Option<DynamicBarrierId>,
}

/// `same`: [`crate::hb::repeats`] of the registrations.
pub(crate) fn check_recycling(
    program: &Program,
    replay: &Trace,
    same: &[bool],
    hb: &HappensBefore,
) -> Vec<SyncViolation> {
    let nodes = &replay.nodes;
    let inst = |t: ThreadId, i: u32| inst_at(program, t, i);
    let gens = Generations::of(nodes);
    let completions: Vec<Completion> = nodes.iter().map(Completion::of).collect();
    // Each thread's registrations are checked on their own. The lanes of a warp are
    // walked side by side, a block of registrations of each lane in turn, so that the
    // lanes registering together after the same blocking point share one [`Unordered`]
    // summary and one [`Verdict`] (each lane reads its own registrations in order, which
    // the prefetcher follows); the threads are split in warp-aligned halves for two
    // workers. The failures are grouped and sorted by `Groups::finish`, so the order in
    // which they are found does not matter.
    //
    // A lane whose registrations are the lane before's (`same`) has the same last
    // blocking node at each of them, so the same answers, unless an answer compares
    // threads: a generation without a waiter, or one whose waiter is either lane. When the
    // lane before's block (or the lane whose answers it took) had none of those and no
    // failure, the lane takes the block's outcome without walking it.
    let ws = (program.warp_size() as usize).max(1);
    let models = ws <= 64 && !reference();
    let regs = &replay.registrations;
    // Threads `first..end`.
    let check = |first: usize, end: usize| -> Groups {
        let mut failures = Groups::default();
        let mut cache = Unordered::new();
        let mut verdicts: Vec<Verdict> = Vec::with_capacity(BLOCK);
        let chunk: Vec<&[Registration]> = (first..end).map(|t| regs.of(t)).collect();
        for (w, warp) in chunk.chunks(ws).enumerate() {
            let mut lasts: Vec<Option<DynamicBarrierId>> = vec![None; warp.len()];
            let longest = warp.iter().map(|r| r.len()).max().unwrap_or(0);
            let warp_first = first + w * ws;
            for start in (0..longest).step_by(BLOCK) {
                let end = (start + BLOCK).min(longest);
                verdicts.clear();
                verdicts.resize(end - start, Verdict::NONE);
                let mut model: Option<Model> = None;
                for (lane, (regs, last)) in warp.iter().zip(&mut lasts).enumerate() {
                    let repeat = same.get(warp_first + lane) == Some(&true);
                    if !repeat {
                        model = None;
                    }
                    let Some(block) = regs.get(start..end.min(regs.len())) else {
                        continue;
                    };
                    if let Some(m) = &model
                        && m.clean
                        && m.waiters & (1 << lane) == 0
                    {
                        *last = m.last;
                        continue;
                    }
                    let t = ThreadId((warp_first + lane) as u32);
                    let mut next = Model {
                        clean: models,
                        waiters: 0,
                        last: None,
                    };
                    for (r, verdict) in block.iter().zip(&mut verdicts) {
                        // A lane that waited at its warp's gather registers when the gather
                        // completes: everything before that completion happens before the
                        // registration.
                        if r.gather().is_some() {
                            *last = r.gather();
                        }
                        let skip = r.node().is_none() && replay.stuck;
                        if r.generation > 1 && !skip {
                            if !verdict.answers(r, *last, t) {
                                let key = r.key.barrier();
                                let found =
                                    key.and_then(|k| Some((k, gens.get(k, r.generation - 1)?)));
                                let found = found.map(|(key, n)| {
                                    // With a waiter this is one table lookup.
                                    let ok = completes_before(
                                        hb,
                                        &nodes[n.index()],
                                        n,
                                        completions[n.index()],
                                        &mut cache,
                                        (t, r.command),
                                        *last,
                                    );
                                    (key, n, ok)
                                });
                                *verdict = Verdict::of(r, *last, t, found, &completions);
                            }
                            if verdict.found.is_some() {
                                match verdict.waiter {
                                    Some(p) if p != t => {
                                        let l = p.index().wrapping_sub(warp_first);
                                        if l < ws {
                                            next.waiters |= 1 << l;
                                        }
                                    }
                                    _ => next.clean = false,
                                }
                            }
                            if let Some((key, n, false)) = verdict.found {
                                next.clean = false;
                                let command = CommandRef {
                                    thread: t,
                                    index: r.command,
                                    inst: inst(t, r.command),
                                };
                                failures.add(nodes.len(), n, key, r.generation - 1, false, command);
                            }
                        }
                        if r.op.blocks() {
                            if let Some(m) = r.node() {
                                *last = Some(m);
                            }
                        }
                    }
                    next.last = *last;
                    model = Some(next);
                }
            }
        }
        failures
    };
    let n = regs.len();
    let mut failures = if crate::parallel(replay) {
        let mid = n / 2 / ws * ws;
        let (mut failures, more) = rayon::join(|| check(0, mid), || check(mid, n));
        failures.merge(more);
        failures
    } else {
        check(0, n)
    };
    let mut cache = Unordered::new();
    for &(n, t) in &replay.uncounted {
        let Some(e) = replay.exit_index.get(t.index()).copied().flatten() else {
            continue;
        };
        let last = hb.prev_blocking(t, e.saturating_sub(1)).filter(|_| e > 0);
        let node = &nodes[n.index()];
        if !completes_before(
            hb,
            node,
            n,
            completions[n.index()],
            &mut cache,
            (t, e),
            last,
        ) {
            let Some(key) = node.key.barrier() else {
                continue;
            };
            // Grouped with the generation's registrations' failures (the node the
            // generation's number names).
            let Some(g) = gens.get(key, node.generation) else {
                continue;
            };
            let command = CommandRef {
                thread: t,
                index: e,
                inst: inst(t, e),
            };
            failures.add(nodes.len(), g, key, node.generation, true, command);
        }
    }
    report(program, nodes, failures.finish())
}

#[cold]
fn report(program: &Program, nodes: &[DynamicBarrier], groups: Vec<Group>) -> Vec<SyncViolation> {
    let ws = program.warp_size();
    let mut out = Vec::new();
    for group in groups {
        let Group {
            node: n,
            key,
            generation: k,
            exit,
            threads,
            commands: mut cmds,
        } = group;
        let node = &nodes[n.index()];
        let waiter = node.participants.iter().find(|p| p.op.blocks());
        let first = waiter.or(node.participants.first());
        let first_ref = first.map(|p| CommandRef {
            thread: p.thread,
            index: p.command,
            inst: inst_at(program, p.thread, p.command),
        });
        let ranges = group_threads(threads.into_iter().map(|t| (t, ())), ws);
        // One command per instruction: the instructions are distinct.
        let mut insts: Vec<InstId> = cmds.iter().map(|c| c.inst).collect();
        insts.sort_unstable();
        let who = join(ranges.iter().map(|(r, _)| r));
        let at = join(insts.iter().map(|i| format!("#{}", i.0)));
        let (kind, message) = if exit {
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
        v.generations = if exit { vec![k] } else { vec![k, k + 1] };
        cmds.extend(first_ref);
        v.commands = cmds;
        v.threads = ranges.into_iter().map(|(r, _)| r).collect();
        out.push(v);
    }
    out
}
