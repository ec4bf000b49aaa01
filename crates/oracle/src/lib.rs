//! An exhaustive explorer of the WEFT formal semantics, the test oracle for weft.
//!
//! What weft promises (verdicts, the PTX ISA facts it relies on with their sections, the rules
//! for exited threads, mbarrier parity and same-instruction writes, every approximation) is
//! written down in the repository's `docs/semantics.md`.
//!
//! weft's real pipeline decides well-synchronization from *one* simulated trace plus a static
//! happens-before check (WEFT paper §4.2, §5.2), and races with constant-time interval tests.
//! This crate decides the same questions the slow, obviously-correct way: it enumerates every
//! reachable configuration of the small-step semantics of §3.3, depth-first over the
//! scheduling choices with memoization on states (the pattern of loom's `model.rs`), and reads
//! the verdicts directly off the definitions:
//!
//! - **deadlock**: some reachable configuration is not `done`, no rule applies, and some
//!   thread is blocked;
//! - **error**: some reachable step goes to `err` (count mismatch, overflow, invalid count);
//! - **well-synchronized** (Definitions 5–7): every trace reaches `done` and every
//!   synchronization command registers in the same generation in every trace;
//! - **happens-before** (Definition 4): `c1` happens before `c2` iff `t(c1) <= t(c2)` in every
//!   trace. In a well-synchronized CTA every trace reaches `done`, so some trace has
//!   `t(c2) < t(c1)` iff some reachable configuration has executed `c2` but not `c1`. Two
//!   `sync`s completed by the same recycling step are simultaneous and happen before each
//!   other;
//! - **races** (Definition 8, extended with byte ranges and atomics): two accesses of
//!   different threads to overlapping bytes, at least one writing and not both atomic, neither
//!   happening before the other.
//!
//! It is deliberately independent of [`weft_program::BarrierFile`] (it is the reference for
//! that state machine too) and deliberately small: at most [`MAX_THREADS`] threads, at most
//! [`MAX_COMMANDS`] commands per thread, warp size 1 (each thread is its own warp, which makes
//! the PTX semantics the paper's). It accepts shared accesses, `bar.arrive`, `bar.sync`
//! (explicit counts only) and `exit` (= the paper's `return`), and asynchronous copies
//! ([`weft_program::AsyncCopy`]) completed by their issuer's waits: each copy is an extra
//! agent whose one access is a step that may run at any time after its issuer completed the
//! commands before the issue position, and its issuer cannot execute a command at or after
//! the copy's completion position until the copy ran, nor another thread one at or after a
//! joint completion position of the copy ([`weft_program::AsyncOps::joint_done`], a
//! warpgroup operation retired by every member's wait) (at most [`MAX_AGENTS`] copies;
//! copies completed by mbarrier phases are outside the fragment). Agents are numbered after the
//! threads, with one command each (index 0), as in the race check.
//!
//! Execution events ([`CommandView::Exec`]: the lanes of a `.sync` warp collective, a
//! warpgroup MMA group) are one-shot: an event is complete once all its `Arrive` and `Sync`
//! commands ran; a `Sync` blocks until then, a `Wait` blocks until then without counting, and
//! a complete event releases its blocked threads at once (as a recycling does). They
//! constrain the traces (and so well-synchronization and the time order of Definition 4) but
//! order no memory: with execution events, races are decided on the static relation of
//! barriers and program order ([`Exploration::memory_happens_before`]), extended by one hop
//! for each copy (after what is ordered before its issue, before what is ordered after a
//! completion position; a copy carries no order between the threads around it).
//!
//! Generations: Definition 5 taken literally gives an `arrive` the number of recyclings
//! *before* it, one less than a `sync` of the same generation (whose time is the recycling
//! step), and so gives every `arrive` of a first generation the generation 0 that Definition 6
//! forbids. The paper's own figures number generations from 1 for both, so this oracle records
//! the 1-based generation a command *registers in*. Consistency across traces is the same
//! under both readings.

#![deny(missing_docs)]

use std::collections::BTreeSet;

use rustc_hash::FxHashSet;
use weft_program::{
    AccessKind, BarrierCount, BarrierOp, Command, CommandView, CtaShape, ExecOp, InstId, Program,
    ThreadEnd, ThreadProgram,
};

/// Most threads a CTA may have.
pub const MAX_THREADS: usize = 8;
/// Most commands a thread program may have.
pub const MAX_COMMANDS: usize = 32;
/// Most distinct barrier ids a CTA may use.
pub const MAX_BARRIERS: usize = 16;
/// Most asynchronous copies a CTA may have.
pub const MAX_AGENTS: usize = 4;

/// A command, by thread index and command index.
pub type CommandRef = (u32, u32);

/// Why a program is outside the oracle's fragment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unsupported {
    /// More threads, commands or barriers than the oracle handles, or a warp size other than 1.
    TooLarge(String),
    /// A command the oracle does not model (bar.red, warp barriers, mbarriers, a barrier
    /// without an explicit count).
    Command {
        /// The thread.
        thread: u32,
        /// The command index.
        index: u32,
    },
}

/// A decoded command of the oracle's fragment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Access {
        kind: AccessKind,
        addr: u32,
        len: u32,
    },
    Barrier {
        sync: bool,
        /// Dense barrier index.
        bar: usize,
        count: u32,
    },
    /// An execution event ([`CommandView::Exec`]): dense event index.
    Exec {
        op: ExecOp,
        event: usize,
    },
    Return,
}

/// Per-barrier state of §3.2: the expected count (0 = unconfigured, `⊥`), the number of
/// arrivals `|A|`, the blocked threads `I` as a bitmask, and the recyclings so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
struct Bar {
    expected: u8,
    arrived: u8,
    waiting: u8,
    completed: u8,
}

impl Bar {
    fn registered(self) -> u32 {
        u32::from(self.arrived) + self.waiting.count_ones()
    }

    fn full(self) -> bool {
        self.expected != 0 && self.registered() == u32::from(self.expected)
    }
}

/// A configuration: program counters (commands completed per thread, then per asynchronous
/// copy; a blocked `sync` is not completed until its barrier recycles), the blocked threads
/// (`E` negated), and the barriers.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct State {
    pc: Vec<u8>,
    blocked: u8,
    bars: Vec<Bar>,
    /// Arrivals so far at each execution event.
    exec: Vec<u8>,
}

/// Everything the exploration found.
#[derive(Debug, Clone)]
pub struct Exploration {
    /// Some trace deadlocks.
    pub deadlock: bool,
    /// Some trace goes to the error state.
    pub error: bool,
    /// Some trace reaches `done`.
    pub done_reachable: bool,
    /// Definition 7 holds.
    pub well_synchronized: bool,
    /// For each thread and command, the generations the command registered in over all
    /// traces (empty for accesses and for commands no trace executes).
    pub generations: Vec<Vec<BTreeSet<u32>>>,
    /// Distinct configurations visited.
    pub states: usize,
    ops: Vec<Vec<Op>>,
    /// Number of threads (the actors after them are asynchronous copies).
    threads: usize,
    /// The program's pairs of branch sides no execution runs together
    /// ([`weft_program::AsyncOps::exclusive`]; the other fields empty): accesses they
    /// exclude never race.
    sides: weft_program::AsyncOps,
    /// `reach[a][b]` holds `(pc_a, pc_b)` for every reachable configuration, as
    /// `(MAX_COMMANDS + 1)^2` flags indexed `pc_a * (MAX_COMMANDS + 1) + pc_b`.
    reach: Vec<Vec<Vec<bool>>>,
    /// With execution events, when well-synchronized: the memory order (see
    /// [`Exploration::memory_happens_before`]) as a closure over commands, indexed by
    /// `offsets[t] + i`.
    memory: Option<(Vec<usize>, Vec<Vec<bool>>)>,
}

const SIDE: usize = MAX_COMMANDS + 1;

/// An asynchronous copy: issuer, issue position, completion position (if any).
#[derive(Debug, Clone)]
struct Agent {
    issuer: usize,
    issue: u8,
    done: Option<u8>,
    /// Copies of the issuer with an index `>= done_seq` are issued after this one's wait.
    done_seq: u32,
    /// Completion positions in other threads ([`weft_program::AsyncOps::joint_done`]): each
    /// of them cannot execute its command at that position until the copy ran.
    joint: Vec<(usize, u8)>,
}

fn decode_agents(program: &Program) -> Result<(Vec<Agent>, Vec<Vec<Op>>), Unsupported> {
    let copies = &program.asyncs.copies;
    if copies.len() > MAX_AGENTS {
        return Err(Unsupported::TooLarge(format!(
            "{} asynchronous copies",
            copies.len()
        )));
    }
    let n = program.threads.len();
    let mut agents = Vec::new();
    let mut ops = Vec::new();
    for (g, c) in copies.iter().enumerate() {
        let unsupported = Unsupported::Command {
            thread: (n + g) as u32,
            index: 0,
        };
        let len = program
            .threads
            .get(c.issuer.index())
            .map_or(0, |t| t.commands.len());
        let joint = program.asyncs.joint_of(c);
        if !c.phases.is_empty()
            || joint.iter().any(|&(u, p)| {
                program
                    .threads
                    .get(u.index())
                    .is_none_or(|th| p as usize > th.commands.len())
            })
            || c.issuer.index() >= n
            || c.issue as usize > len
            || c.done.is_some_and(|d| d < c.issue || d as usize > len)
        {
            return Err(unsupported);
        }
        let CommandView::Access {
            kind, addr, len, ..
        } = c.access.view()
        else {
            return Err(unsupported);
        };
        agents.push(Agent {
            issuer: c.issuer.index(),
            issue: c.issue as u8,
            done: c.done.map(|d| d as u8),
            done_seq: c.done_seq,
            joint: joint.iter().map(|&(u, p)| (u.index(), p as u8)).collect(),
        });
        ops.push(vec![Op::Access { kind, addr, len }]);
    }
    Ok((agents, ops))
}

fn decode(program: &Program) -> Result<Vec<Vec<Op>>, Unsupported> {
    let mut events: Vec<u32> = Vec::new();
    let n = program.threads.len();
    if n > MAX_THREADS || n == 0 || program.warp_size() != 1 {
        return Err(Unsupported::TooLarge(format!(
            "{n} threads with warp size {}",
            program.warp_size()
        )));
    }
    let mut ids: Vec<u32> = Vec::new();
    let mut ops = Vec::with_capacity(n);
    for (t, thread) in program.threads.iter().enumerate() {
        if thread.commands.len() > MAX_COMMANDS {
            return Err(Unsupported::TooLarge(format!(
                "thread {t} has {} commands",
                thread.commands.len()
            )));
        }
        let mut seq = Vec::with_capacity(thread.commands.len());
        for (i, command) in thread.commands.iter().enumerate() {
            let unsupported = Unsupported::Command {
                thread: t as u32,
                index: i as u32,
            };
            let op = match command.view() {
                CommandView::Access {
                    kind, addr, len, ..
                } => Op::Access { kind, addr, len },
                CommandView::Barrier {
                    op: op @ (BarrierOp::Arrive | BarrierOp::Sync),
                    id,
                    count: BarrierCount::Threads(count),
                    ..
                } => {
                    let bar = match ids.iter().position(|&x| x == id) {
                        Some(bar) => bar,
                        None => {
                            if ids.len() == MAX_BARRIERS {
                                return Err(Unsupported::TooLarge("too many barrier ids".into()));
                            }
                            ids.push(id);
                            ids.len() - 1
                        }
                    };
                    Op::Barrier {
                        sync: op == BarrierOp::Sync,
                        bar,
                        count,
                    }
                }
                CommandView::Exec { op, event } => {
                    let event = match events.iter().position(|&x| x == event) {
                        Some(e) => e,
                        None => {
                            events.push(event);
                            events.len() - 1
                        }
                    };
                    Op::Exec { op, event }
                }
                CommandView::Exit => Op::Return,
                _ => return Err(unsupported),
            };
            seq.push(op);
        }
        ops.push(seq);
    }
    Ok(ops)
}

/// What one step of the semantics leads to.
enum Next {
    State(State),
    Error,
}

struct Explorer<'a> {
    ops: &'a [Vec<Op>],
    /// Arrivals (`Arrive` and `Sync` commands) of each execution event in the program.
    arrivals: Vec<u8>,
    threads: u32,
    agents: &'a [Agent],
    generations: Vec<Vec<BTreeSet<u32>>>,
}

impl Explorer<'_> {
    /// Whether thread (or agent) `t` has returned (ran off its program or reached `exit`).
    fn returned(&self, state: &State, t: usize) -> bool {
        let pc = usize::from(state.pc[t]);
        pc >= self.ops[t].len() || self.ops[t][pc] == Op::Return
    }

    /// Whether thread `t` waits for one of its asynchronous copies to complete.
    fn waits_for_copy(&self, state: &State, t: usize) -> bool {
        let n = self.threads as usize;
        self.agents.iter().enumerate().any(|(g, a)| {
            state.pc[n + g] == 0
                && ((a.issuer == t && a.done.is_some_and(|d| d <= state.pc[t]))
                    || a.joint.iter().any(|&(u, p)| u == t && p <= state.pc[t]))
        })
    }

    /// All successors of `state` under §3.3.
    fn successors(&mut self, state: &State) -> Vec<Next> {
        // The recycling rule: a full barrier wakes its blocked threads and becomes
        // unconfigured. The thread rule requires that no barrier is full, so while one is,
        // recycling is the only applicable rule.
        let full: Vec<usize> = (0..state.bars.len())
            .filter(|&b| state.bars[b].full())
            .collect();
        // An execution event whose arrivals are all in releases the threads blocked at it
        // (its `Sync` lanes and `Wait`s) at once, as a recycling does.
        let blocked_at = |t: usize| -> Option<usize> {
            if state.blocked & (1 << t) == 0 {
                return None;
            }
            match self.ops[t].get(usize::from(state.pc[t])) {
                Some(&Op::Exec { event, .. }) => Some(event),
                _ => None,
            }
        };
        let mut ready: Vec<usize> = (0..self.threads as usize)
            .filter_map(blocked_at)
            .filter(|&e| state.exec[e] == self.arrivals[e])
            .collect();
        ready.sort_unstable();
        ready.dedup();
        if !full.is_empty() || !ready.is_empty() {
            let mut out: Vec<Next> = ready
                .into_iter()
                .map(|e| {
                    let mut next = state.clone();
                    for t in 0..self.threads as usize {
                        if blocked_at(t) == Some(e) {
                            next.pc[t] += 1;
                            next.blocked &= !(1 << t);
                        }
                    }
                    Next::State(next)
                })
                .collect();
            out.extend(full.into_iter().map(|b| {
                let mut next = state.clone();
                let bar = next.bars[b];
                for t in 0..self.threads as usize {
                    if bar.waiting & (1 << t) != 0 {
                        next.pc[t] += 1;
                        next.blocked &= !(1 << t);
                    }
                }
                next.bars[b] = Bar {
                    completed: bar.completed + 1,
                    ..Bar::default()
                };
                Next::State(next)
            }));
            return out;
        }
        let mut out = Vec::new();
        let n = self.threads as usize;
        for (g, a) in self.agents.iter().enumerate() {
            // Issued: the issuer completed the commands before the issue, and every copy of
            // the issuer whose wait ran before this issue has completed.
            let waited = self.agents.iter().enumerate().all(|(f, b)| {
                f == g
                    || b.issuer != a.issuer
                    || b.done.is_none()
                    || b.done_seq > g as u32
                    || state.pc[n + f] == 1
            });
            if state.pc[n + g] == 0 && state.pc[a.issuer] >= a.issue && waited {
                let mut next = state.clone();
                next.pc[n + g] = 1;
                out.push(Next::State(next));
            }
        }
        for t in 0..self.threads as usize {
            if state.blocked & (1 << t) != 0
                || self.returned(state, t)
                || self.waits_for_copy(state, t)
            {
                continue;
            }
            let pc = usize::from(state.pc[t]);
            let mut next = state.clone();
            match self.ops[t][pc] {
                Op::Access { .. } => next.pc[t] += 1,
                Op::Barrier { sync, bar, count } => {
                    if count == 0 || count > self.threads {
                        out.push(Next::Error);
                        continue;
                    }
                    let b = &mut next.bars[bar];
                    if b.expected == 0 {
                        // The first registration configures the count.
                        b.expected = count as u8;
                    } else if u32::from(b.expected) != count || b.registered() >= count {
                        // Count mismatch, or too many registrations.
                        out.push(Next::Error);
                        continue;
                    }
                    self.generations[t][pc].insert(u32::from(b.completed) + 1);
                    if sync {
                        b.waiting |= 1 << t;
                        next.blocked |= 1 << t;
                    } else {
                        b.arrived += 1;
                        next.pc[t] += 1;
                    }
                }
                Op::Exec { op, event } => match op {
                    ExecOp::Arrive => {
                        next.exec[event] += 1;
                        next.pc[t] += 1;
                    }
                    ExecOp::Sync => {
                        next.exec[event] += 1;
                        next.blocked |= 1 << t;
                    }
                    ExecOp::Wait if state.exec[event] == self.arrivals[event] => next.pc[t] += 1,
                    ExecOp::Wait => next.blocked |= 1 << t,
                },
                Op::Return => unreachable!("returned threads are skipped"),
            }
            out.push(Next::State(next));
        }
        out
    }
}

/// Explores every reachable configuration of `program` from the initial state.
///
/// # Errors
/// If the program is outside the oracle's fragment (see the crate documentation).
pub fn explore(program: &Program) -> Result<Exploration, Unsupported> {
    let mut ops = decode(program)?;
    let threads = ops.len();
    let (agents, agent_ops) = decode_agents(program)?;
    ops.extend(agent_ops);
    let n = ops.len();
    let bars = ops
        .iter()
        .flatten()
        .filter_map(|op| match op {
            Op::Barrier { bar, .. } => Some(bar + 1),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let events = ops
        .iter()
        .flatten()
        .filter_map(|op| match op {
            Op::Exec { event, .. } => Some(event + 1),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    let mut arrivals = vec![0u8; events];
    for op in ops.iter().flatten() {
        if let Op::Exec { op, event } = *op {
            if op != ExecOp::Wait {
                arrivals[event] += 1;
            }
        }
    }
    let mut explorer = Explorer {
        arrivals,
        ops: &ops,
        threads: threads as u32,
        agents: &agents,
        generations: ops
            .iter()
            .map(|seq| vec![BTreeSet::new(); seq.len()])
            .collect(),
    };
    let mut reach = vec![vec![vec![false; SIDE * SIDE]; n]; n];
    let initial = State {
        pc: vec![0; n],
        blocked: 0,
        bars: vec![Bar::default(); bars],
        exec: vec![0; events],
    };
    let mut visited: FxHashSet<State> = FxHashSet::default();
    let mut stack = vec![initial.clone()];
    visited.insert(initial);
    let (mut deadlock, mut error, mut done_reachable) = (false, false, false);
    while let Some(state) = stack.pop() {
        for (row, &pa) in reach.iter_mut().zip(&state.pc) {
            for (table, &pb) in row.iter_mut().zip(&state.pc) {
                table[usize::from(pa) * SIDE + usize::from(pb)] = true;
            }
        }
        let successors = explorer.successors(&state);
        if successors.is_empty() {
            if (0..n).all(|t| explorer.returned(&state, t)) {
                done_reachable = true;
            } else {
                deadlock = true;
            }
        }
        for next in successors {
            match next {
                Next::Error => error = true,
                Next::State(next) => {
                    if visited.insert(next.clone()) {
                        stack.push(next);
                    }
                }
            }
        }
    }
    let consistent = explorer
        .generations
        .iter()
        .flatten()
        .all(|gens| gens.len() <= 1);
    let well_synchronized = !deadlock && !error && consistent;
    let memory = (events > 0 && well_synchronized)
        .then(|| memory_order(&ops, &explorer.generations, threads, &agents));
    Ok(Exploration {
        memory,
        deadlock,
        error,
        done_reachable,
        well_synchronized,
        generations: explorer.generations,
        states: visited.len(),
        ops,
        threads,
        sides: weft_program::AsyncOps {
            exclusive: program.asyncs.exclusive.clone(),
            ..weft_program::AsyncOps::default()
        },
        reach,
    })
}

/// The static happens-before relation of the WEFT paper (Figure 4) over commands, by
/// transitive closure: program order, and every registration of a barrier generation before
/// every `sync` of that generation (`generations` are the unique ones of a well-synchronized
/// program). Execution events add nothing: they order when threads run, not memory.
fn memory_order(
    ops: &[Vec<Op>],
    generations: &[Vec<BTreeSet<u32>>],
    threads: usize,
    agents: &[Agent],
) -> (Vec<usize>, Vec<Vec<bool>>) {
    let mut offsets = Vec::with_capacity(ops.len() + 1);
    let mut total = 0;
    for seq in ops {
        offsets.push(total);
        total += seq.len();
    }
    offsets.push(total);
    let mut r = vec![vec![false; total]; total];
    for (t, seq) in ops.iter().enumerate() {
        for i in 0..seq.len() {
            for j in i..seq.len() {
                r[offsets[t] + i][offsets[t] + j] = true;
            }
        }
    }
    let mut registrations: Vec<(usize, usize, u32, bool)> = Vec::new();
    for (t, seq) in ops.iter().enumerate() {
        for (i, op) in seq.iter().enumerate() {
            if let Op::Barrier { sync, bar, .. } = *op {
                if let Some(&g) = generations[t][i].first() {
                    registrations.push((offsets[t] + i, bar, g, sync));
                }
            }
        }
    }
    for &(a, bar, g, _) in &registrations {
        for &(b, bar2, g2, sync) in &registrations {
            if sync && bar == bar2 && g == g2 {
                r[a][b] = true;
            }
        }
    }
    for k in 0..total {
        let through = r[k].clone();
        for row in &mut r {
            if row[k] {
                for (x, &y) in row.iter_mut().zip(&through) {
                    *x |= y;
                }
            }
        }
    }
    // Asynchronous copies, one hop on the closed relation of the threads (a copy carries no
    // order from its issuer to the threads it completes before: nothing in PTX makes the
    // issuer's other accesses visible through it). A copy is after every command ordered
    // before its issue position, and before every command ordered after one of its
    // completion positions (the issuer's wait, the joint positions); a copy is before
    // another when one of its completion positions is ordered before the other's issue, or
    // when the other is its issuer's and issued after its wait (`done_seq`).
    let len = |t: usize| offsets[t + 1] - offsets[t];
    let before_issue = |r: &Vec<Vec<bool>>, c: usize, a: &Agent| {
        a.issue > 0 && r[c][offsets[a.issuer] + usize::from(a.issue) - 1]
    };
    let ends = |a: &Agent| -> Vec<usize> {
        let mut e: Vec<usize> = a
            .joint
            .iter()
            .filter(|&&(u, p)| usize::from(p) < len(u))
            .map(|&(u, p)| offsets[u] + usize::from(p))
            .collect();
        if let Some(d) = a.done.filter(|&d| usize::from(d) < len(a.issuer)) {
            e.push(offsets[a.issuer] + usize::from(d));
        }
        e
    };
    let mut extra: Vec<(usize, usize)> = Vec::new();
    for (g, a) in agents.iter().enumerate() {
        let me = offsets[threads + g];
        let ends_a = ends(a);
        for c in 0..offsets[threads] {
            if before_issue(&r, c, a) {
                extra.push((c, me));
            }
            if ends_a.iter().any(|&e| r[e][c]) {
                extra.push((me, c));
            }
        }
        for (h, b) in agents.iter().enumerate() {
            if h == g {
                continue;
            }
            let seq = a.issuer == b.issuer && a.done == Some(b.issue) && h as u32 >= a.done_seq;
            if seq || ends_a.iter().any(|&e| before_issue(&r, e, b)) {
                extra.push((me, offsets[threads + h]));
            }
        }
    }
    for (x, y) in extra {
        r[x][y] = true;
    }
    (offsets, r)
}

impl Exploration {
    /// Whether `c1` happens before `c2` in memory: Definition 4 when the program has no
    /// execution events (the WEFT paper's Lemma 1 makes the static relation and the trace
    /// definition agree), else the static relation of barriers and program order alone
    /// (`memory_order`), which execution events do not extend.
    pub fn memory_happens_before(&self, c1: CommandRef, c2: CommandRef) -> bool {
        let Some((offsets, r)) = &self.memory else {
            return self.happens_before(c1, c2);
        };
        let at = |c: CommandRef| -> Option<usize> {
            let t = c.0 as usize;
            let i = c.1 as usize;
            (offsets.get(t + 1)? - offsets[t] > i).then(|| offsets[t] + i)
        };
        match (at(c1), at(c2)) {
            (Some(a), Some(b)) => r[a][b],
            _ => false,
        }
    }

    /// The memory order of [`Self::memory_happens_before`] as a closure over commands, even
    /// without execution events (to test it against Definition 4), when well-synchronized.
    pub fn static_order(&self) -> Option<impl Fn(CommandRef, CommandRef) -> bool + '_> {
        let (offsets, r) = match &self.memory {
            Some(m) => m.clone(),
            None if self.well_synchronized && self.agents() == 0 => {
                memory_order(&self.ops, &self.generations, self.threads, &[])
            }
            None => return None,
        };
        Some(move |c1: CommandRef, c2: CommandRef| {
            let t1 = c1.0 as usize;
            let t2 = c2.0 as usize;
            offsets
                .get(t1 + 1)
                .is_some_and(|&e| e - offsets[t1] > c1.1 as usize)
                && offsets
                    .get(t2 + 1)
                    .is_some_and(|&e| e - offsets[t2] > c2.1 as usize)
                && r[offsets[t1] + c1.1 as usize][offsets[t2] + c2.1 as usize]
        })
    }

    /// Number of asynchronous-copy agents (numbered after the threads).
    pub fn agents(&self) -> usize {
        self.ops.len() - self.threads
    }

    /// Whether some reachable configuration has executed `first` but not `second`: some
    /// trace has `t(first) < t(second)` (when every trace reaches `done`).
    pub fn can_precede(&self, first: CommandRef, second: CommandRef) -> bool {
        let (a, i) = (first.0 as usize, first.1 as usize);
        let (b, j) = (second.0 as usize, second.1 as usize);
        if a == b {
            return i < j;
        }
        let table = &self.reach[a][b];
        // pc_a > i (first done) and pc_b <= j (second not done).
        ((i + 1)..SIDE).any(|pa| (0..=j).any(|pb| table[pa * SIDE + pb]))
    }

    /// Definition 4, for a well-synchronized CTA: `c1` happens before `c2` iff no trace
    /// executes `c2` strictly before `c1`.
    pub fn happens_before(&self, c1: CommandRef, c2: CommandRef) -> bool {
        !self.can_precede(c2, c1)
    }

    /// The unique generation of every command (0 for accesses), when well-synchronized.
    pub fn unique_generations(&self) -> Option<Vec<Vec<u32>>> {
        self.well_synchronized.then(|| {
            self.generations
                .iter()
                .map(|seq| {
                    seq.iter()
                        .map(|g| g.first().copied().unwrap_or(0))
                        .collect()
                })
                .collect()
        })
    }

    /// Every racing pair of accesses `(c1, c2)` with `c1 < c2` (neither ordered before the
    /// other by [`Self::memory_happens_before`]), or `None` when the CTA is not
    /// well-synchronized (Definition 8 is only defined then).
    pub fn races(&self) -> Option<BTreeSet<(CommandRef, CommandRef)>> {
        if !self.well_synchronized {
            return None;
        }
        let mut accesses = Vec::new();
        for (t, seq) in self.ops.iter().enumerate() {
            for (i, op) in seq.iter().enumerate() {
                if let Op::Access { kind, addr, len } = *op {
                    accesses.push(((t as u32, i as u32), kind, addr, len));
                }
            }
        }
        let mut races = BTreeSet::new();
        for (x, &(c1, k1, a1, l1)) in accesses.iter().enumerate() {
            for &(c2, k2, a2, l2) in &accesses[x + 1..] {
                let overlap = u64::from(a1).max(u64::from(a2))
                    < (u64::from(a1) + u64::from(l1)).min(u64::from(a2) + u64::from(l2));
                let conflict = (k1.writes() || k2.writes())
                    && !(k1 == AccessKind::Atomic && k2 == AccessKind::Atomic);
                let (r1, r2) = (
                    (weft_program::ThreadId(c1.0), c1.1),
                    (weft_program::ThreadId(c2.0), c2.1),
                );
                if c1.0 != c2.0
                    && overlap
                    && conflict
                    && !self.memory_happens_before(c1, c2)
                    && !self.memory_happens_before(c2, c1)
                    && !self.sides.excluded(self.threads, r1, r2)
                {
                    races.insert((c1, c2));
                }
            }
        }
        Some(races)
    }
}

/// Builds a warp-size-1 [`Program`] from the paper's text form, one string per thread,
/// commands separated by `;`: `read g`, `write g`, `atomic g` (variable `g` is the 4 bytes at
/// `4*g`), `read @ADDR+LEN` (explicit bytes), `arrive b n`, `sync b n`. Every thread ends with
/// `exit`. Command `i` of thread `t` gets the instruction id `t * 64 + i`, so every command is
/// its own instruction.
///
/// # Panics
/// On malformed text (this is a test helper).
pub fn program_from_text(threads: &[&str]) -> Program {
    let programs = threads
        .iter()
        .enumerate()
        .map(|(t, text)| {
            let mut commands: Vec<Command> = text
                .split(';')
                .map(str::trim)
                .filter(|c| !c.is_empty())
                .enumerate()
                .map(|(i, c)| parse_command(c, InstId((t * 64 + i) as u32)))
                .collect();
            commands.push(Command::exit(InstId((t * 64 + commands.len()) as u32)));
            ThreadProgram {
                commands,
                end: ThreadEnd::Exited,
                steps: Vec::new(),
            }
        })
        .collect();
    Program::new(CtaShape::linear(threads.len() as u32), 1, programs).expect("a valid program")
}

fn parse_command(text: &str, inst: InstId) -> Command {
    let words: Vec<&str> = text.split_whitespace().collect();
    let number = |w: &str| -> u32 {
        w.parse()
            .unwrap_or_else(|_| panic!("bad number in {text:?}"))
    };
    let location = |w: &str| -> (u32, u32) {
        match w.strip_prefix('@') {
            Some(rest) => {
                let (addr, len) = rest.split_once('+').unwrap_or((rest, "4"));
                (number(addr), number(len))
            }
            None => (number(w) * 4, 4),
        }
    };
    match words.as_slice() {
        [kind @ ("read" | "write" | "atomic"), g] => {
            let kind = match *kind {
                "read" => AccessKind::Read,
                "write" => AccessKind::Write,
                _ => AccessKind::Atomic,
            };
            let (addr, len) = location(g);
            Command::access(kind, addr, len, false, inst)
        }
        [op @ ("arrive" | "sync"), b, n] => {
            let op = if *op == "sync" {
                BarrierOp::Sync
            } else {
                BarrierOp::Arrive
            };
            Command::barrier(op, number(b), BarrierCount::Threads(number(n)), true, inst)
        }
        _ => panic!("unknown command {text:?}"),
    }
}

pub mod strategy;

#[cfg(test)]
mod tests;
