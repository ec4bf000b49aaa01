//! Step 3 and 5: the barrier dependence graph's edges and the happens-before intervals.
//!
//! # Contract
//!
//! For a well-synchronized program (no [`crate::SyncViolation`]), [`HappensBefore::ordered`]
//! decides the static happens-before relation `R` of the WEFT paper (Figure 4, lines 3–17;
//! Definition 4: `c1` happens before `c2` iff `t(c1) <= t(c2)` in *every* trace, so the syncs
//! of one generation are ordered both ways), which Lemma 1 proves sound and precise for
//! well-synchronized programs. It never materializes `R`:
//!
//! * Every edge of `R` between threads goes from a registration (arrive, sync, red, or an
//!   exit the barrier counted) at generation `n` to a *blocking* registration (sync, red,
//!   warp sync) at `n`. A path from `(t1, i)` to `(t2, j)`, `t1 != t2`, therefore leaves `t1`
//!   at a registration `(t1, r)`, `r >= i`, at some node `a`, moves between nodes along
//!   "blocked at `x`, later registers at `y`" steps (the graph's edges `x -> y`), and enters
//!   `t2` at a blocking registration `(t2, s)`, `s <= j`, at a node that reaches the last
//!   node `m = prev_block(t2, j)` at which `t2` blocked at or before `j` (`t2`'s blocking
//!   nodes form a chain of edges).
//! * So `(t1, i) R (t2, j)` iff `i < bound[m][t1]`, where `bound[m][t1]` is one more than the
//!   largest index of a registration of `t1` at a node that reaches `m` (0 = none). The
//!   table is computed in one pass over the nodes in completion order, which is a
//!   topological order (an edge `x -> y` needs a thread woken by `x` to register at `y`).
//!   Memory `O(D·N)` u32, time `O(E·N)` over deduplicated node edges. A node of one
//!   warp's lanes (a warp gather, a `bar.warp.sync` generation, a returned mbarrier wait)
//!   stores only its warp's lanes over a row outside that warp: its predecessors' shared
//!   row, or their rows merged once for every node with the same predecessor rows.
//! * The threads' blocking chains (`prev_block`) need only the registrations and are built
//!   beside the edges, on a second thread for large traces.
//! * Within one thread, `R` is program order.
//!
//! Under `--warp-sync` (`Program::steps` non-empty) two commands of lanes of one warp are
//! also ordered by their warp steps (strictly: equal steps are one dynamic instruction).
//! FIXME(warp-sync): paths that go through lock-step order *and* barriers (lane 0 writes,
//! lane 1 arrives) are not in the table; this only makes `ordered` smaller (sound for
//! races, possibly imprecise).

use weft_program::{BarrierKey, Program, ThreadId};

use crate::{DynamicBarrier, DynamicBarrierId, NodeKey, Registration, Registrations};

/// Sentinel of [`HappensBefore::prev_blocking`]'s dense table: no blocking node yet.
const NO_NODE: u32 = 0;

/// The node a [`HappensBefore::chain_key`] names.
#[inline]
fn key_node(key: u32) -> Option<DynamicBarrierId> {
    (key != NO_NODE).then(|| DynamicBarrierId(key - 1))
}

/// Where the interval bounds of a node are stored.
#[derive(Debug, Clone, Copy)]
enum Row {
    /// Its own row of [`HappensBefore::bound`] (the row index).
    Dense(u32),
    /// A node whose threads are lanes of `warp` (a warp gather, a `bar.warp.sync`
    /// generation, a returned mbarrier wait): the dense row `base`, except for the lanes of
    /// `warp`, whose bounds are the `warp_size` entries of [`HappensBefore::lanes`] from
    /// `lanes`. `base` is the predecessors' shared row outside the warp, or one merged from
    /// their rows and shared by every node with the same predecessor rows. Most nodes of
    /// warp-specialized kernels are gathers or waits (one per lane and wait of an mbarrier
    /// pipeline), and warp-synchronous loops make a generation per warp and trip; this keeps
    /// the table at about one row per generation of a barrier of several warps and per
    /// warp's wait.
    Gather { base: u32, warp: u32, lanes: u32 },
}

/// A node's bounds ([`HappensBefore::latest_before`]) resolved once: the dense row, and for a
/// one-warp node ([`Row::Gather`]) its lanes' own bounds from thread `first` on. Threads
/// outside both (and every thread of an unknown node) read 0.
#[derive(Default)]
struct LatestRow<'a> {
    dense: &'a [u32],
    first: usize,
    lanes: &'a [u32],
}

impl LatestRow<'_> {
    /// [`HappensBefore::latest_before`] of the node for `thread`.
    #[inline]
    fn get(&self, thread: ThreadId) -> u32 {
        let t = thread.index();
        match t.checked_sub(self.first).and_then(|l| self.lanes.get(l)) {
            Some(&b) => b,
            None => self.dense.get(t).copied().unwrap_or(0),
        }
    }
}

/// Happens-before between any two commands, in constant time, from `O(D·N)` intervals.
#[derive(Debug, Clone)]
pub struct HappensBefore {
    threads: usize,
    warp_size: u32,
    /// Per node, where its bounds are.
    rows: Vec<Row>,
    /// `bound[row * threads + t]`: the commands of `t` with index `< bound` happen before
    /// the completion of a node with that row (so before every command after a sync at it).
    bound: Vec<u32>,
    /// Bounds of the lanes of warp gathers ([`Row::Gather`]), `warp_size` per gather.
    lanes: Vec<u32>,
    /// Per command of each thread: `1 +` the last node at which the thread blocked at or
    /// before the command, or [`NO_NODE`] ([`Chains`]).
    chains: Chains,
    /// Warp steps, per thread (empty when not warp-synchronous).
    steps: Vec<Vec<u32>>,
    /// Asynchronous copies, as agents numbered from `threads` on.
    agents: Agents,
}

/// Sentinel of [`Agent::done`]: no completing wait.
const NEVER: u32 = u32::MAX;

/// One asynchronous copy (agent `threads + g`): one access, ordered after its issue
/// position and before its completion events. Plain numbers only (40 bytes): the race stage
/// asks about pairs of copies in no particular order, and each lookup is a cache miss.
#[derive(Debug, Clone)]
struct Agent {
    issuer: ThreadId,
    issue: u32,
    /// The [`HappensBefore::chain_key`] of the issuer's command before the issue ([`NO_NODE`]
    /// when the copy is issued first): a command of another thread happens before the copy
    /// exactly when it happens before that command, which this node's bounds decide.
    issue_key: u32,
    /// The issuer's first position after the copy completed, or [`NEVER`].
    done: u32,
    /// Copies of the issuer with an index `>= done_seq` start after this one completed.
    done_seq: u32,
    /// This copy's index.
    index: u32,
    /// `rows..rows_end` of [`Agents::rows`]: the rows of [`Agents::after`] of the
    /// completion phases the copy happens before.
    rows: u32,
    rows_end: u32,
    /// Index into [`Agents::joint`]: positions of other threads the copy completes before
    /// ([`NEVER`]: none).
    joint: u32,
    /// An access of the issuer's tensor pipe, ordered before its later ones
    /// ([`weft_program::AsyncCopy::tensor_pipe`]).
    tensor_pipe: bool,
}

/// The agents' part of the relation: `O(copies + phases × threads)`.
#[derive(Debug, Clone, Default)]
struct Agents {
    list: Vec<Agent>,
    /// The agents' rows of `after` ([`Agent::rows`]), agent after agent.
    rows: Vec<u32>,
    /// Per completion phase, `threads` entries: the first command of each thread that the
    /// phase's completion happens before ([`NEVER`]: none).
    after: Vec<u32>,
    /// Completion positions of other threads than the issuer
    /// ([`weft_program::AsyncOps::joint_done`]): a copy naming set `j` happens before the
    /// commands `>= position` of each thread listed in `joint[j]`.
    joint: Vec<Vec<(ThreadId, u32)>>,
}

/// Whether some `row[t] > limits[t]` ([`NEVER`] is never exceeded): branch-free within
/// chunks of 64 (vectorized), a chunk at a time.
fn exceeds(row: &[u32], limits: &[u32]) -> bool {
    row.chunks(64).zip(limits.chunks(64)).any(|(r, l)| {
        r.iter()
            .zip(l)
            .fold(false, |found, (b, limit)| found | (b > limit))
    })
}

/// Per dense row (or per node), a boolean decided once per round
/// ([`HappensBefore::first_after_any`]): each
/// slot holds the round it was decided in, doubled, plus the value, so a new round forgets
/// every earlier value without touching the slots.
#[derive(Debug, Default)]
struct Decided {
    slots: Vec<u32>,
    /// The current round, from 1 (slot 0: never decided).
    round: u32,
}

impl Decided {
    /// Starts a round over `len` rows.
    fn reset(&mut self, len: usize) {
        if self.round >= u32::MAX / 2 - 1 {
            self.slots.clear();
            self.round = 0;
        }
        self.round += 1;
        self.slots.resize(len, 0);
    }

    /// Row `x`'s value in this round, computed by `f` the first time.
    #[inline]
    fn get_or(&mut self, x: usize, f: impl FnOnce() -> bool) -> bool {
        let Some(slot) = self.slots.get_mut(x) else {
            return f();
        };
        if *slot >> 1 == self.round {
            return *slot & 1 == 1;
        }
        let v = f();
        *slot = self.round << 1 | u32::from(v);
        v
    }
}

/// `dst[k] = max(dst[k], src[k])` over their common length (vectorized).
#[inline]
fn max_into(dst: &mut [u32], src: &[u32]) {
    for (x, &y) in dst.iter_mut().zip(src) {
        *x = (*x).max(y);
    }
}

/// Appends to `bound` (rows of `n`) the maximum of the rows `parts` describe, each
/// `(base, warp, lanes)`: the dense row `base`, with the `ws` bounds from `lanes[lanes..]`
/// over warp `warp`'s lanes unless `warp` is `u32::MAX` (see [`Row::Gather`]). Returns the
/// new row's index.
fn merge_rows(
    bound: &mut Vec<u32>,
    lanes: &[u32],
    n: usize,
    ws: u32,
    parts: &[(u32, u32, u32)],
) -> u32 {
    let start = bound.len();
    bound.resize(start + n, 0);
    let (done, row) = bound.split_at_mut(start);
    for &(base, warp, off) in parts {
        let prow = &done[base as usize * n..(base as usize + 1) * n];
        for (x, &y) in row.iter_mut().zip(prow) {
            *x = (*x).max(y);
        }
        if warp != u32::MAX {
            let first = warp as usize * ws as usize;
            let seg = lanes
                .get(off as usize..off as usize + ws as usize)
                .unwrap_or_default();
            for (x, &y) in row.get_mut(first..).unwrap_or_default().iter_mut().zip(seg) {
                *x = (*x).max(y);
            }
        }
    }
    (start / n.max(1)) as u32
}

/// The graph's deduplicated edges `pred -> node`, grouped by target in one list: the
/// predecessors of `node` are [`Self::of`]`(node)`, sorted. One list instead of a vector
/// per node: the nodes of mbarrier-heavy kernels are mostly one lane's wait with one or two
/// predecessors, and a vector each cost an allocation, its growth and its free per node
/// (the Triton warp-specialized matmul's 146,000 wait nodes per path).
#[derive(Debug, Default)]
pub(crate) struct Preds {
    /// `start[node]..start[node + 1]` is the node's range of [`Self::from`].
    start: Vec<u32>,
    from: Vec<DynamicBarrierId>,
}

impl Preds {
    /// The predecessors of `node`, sorted and deduplicated (none for an unknown node).
    #[inline]
    pub(crate) fn of(&self, node: usize) -> &[DynamicBarrierId] {
        match (self.start.get(node), self.start.get(node + 1)) {
            (Some(&a), Some(&b)) => self.from.get(a as usize..b as usize).unwrap_or(&[]),
            _ => &[],
        }
    }

    /// The number of nodes.
    pub(crate) fn len(&self) -> usize {
        self.start.len().saturating_sub(1)
    }

    /// Groups the edges `pairs` (`(to, from)`, targets below `nodes`) by target: a counting
    /// sort, then each target's sources sorted and deduplicated in place.
    fn group(nodes: usize, pairs: &[(u32, DynamicBarrierId)]) -> Self {
        let mut start = vec![0u32; nodes + 1];
        for &(to, _) in pairs {
            start[to as usize + 1] += 1;
        }
        for k in 0..nodes {
            start[k + 1] += start[k];
        }
        let mut next = start.clone();
        let mut from = vec![DynamicBarrierId(0); pairs.len()];
        for &(to, f) in pairs {
            let slot = &mut next[to as usize];
            from[*slot as usize] = f;
            *slot += 1;
        }
        // Sort and deduplicate each target's sources, moving them down over the
        // duplicates removed before (the write position never passes the read one).
        let mut write = 0usize;
        for k in 0..nodes {
            let (a, b) = (start[k] as usize, start[k + 1] as usize);
            start[k] = write as u32;
            from[a..b].sort_unstable();
            let mut last = None;
            for r in a..b {
                let f = from[r];
                if last != Some(f) {
                    from[write] = f;
                    write += 1;
                    last = Some(f);
                }
            }
        }
        start[nodes] = write as u32;
        from.truncate(write);
        Preds { start, from }
    }
}

/// Per thread, whether its registrations are the thread before's, field for field (the
/// lanes of a warp that run the same synchronization commands together register at the
/// same nodes at the same commands). Whatever a thread's registrations alone decide (its
/// graph edges, its chain of blocking nodes, most of its recycling checks) is then the
/// thread before's: one comparison per registration here instead of the work in each of
/// those passes.
pub(crate) fn repeats(registrations: &Registrations) -> Vec<bool> {
    let mut out = Vec::with_capacity(registrations.len());
    let mut before: Option<&[Registration]> = None;
    for regs in registrations.iter() {
        out.push(before.is_some_and(|b| same_registrations(b, regs)));
        before = Some(regs);
    }
    out
}

/// `a == b`, the cheapest fields first and without a branch per field.
fn same_registrations(a: &[Registration], b: &[Registration]) -> bool {
    // One list that two threads share ([`Registrations`]) is not compared with itself.
    if std::ptr::eq(a, b) {
        return true;
    }
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            (x.command == y.command)
                & (x.node == y.node)
                & (x.gather == y.gather)
                & (x.generation == y.generation)
                & (x.op == y.op)
                & (x.key == y.key)
        })
}

/// Deduplicated graph edges `pred -> node`, grouped by target ([`Preds`]): those of the
/// registrations and counted exits, and `extra` (`from -> to`: mbarrier phases or execution
/// events before the wait nodes they release). `memory`: leave out the registrations at
/// execution events ([`crate::exec`]). `same`: [`repeats`] of the registrations (a thread
/// whose registrations are the thread before's adds the same edges again: it is skipped).
pub(crate) fn edges(
    nodes: &[DynamicBarrier],
    registrations: &Registrations,
    same: &[bool],
    memory: bool,
    extra: &[&[(DynamicBarrierId, DynamicBarrierId)]],
) -> Preds {
    // `(to, from)`, one per edge found (with repeats).
    let mut pairs: Vec<(u32, DynamicBarrierId)> = Vec::new();
    // Per node, the source of its last edge pushed: most participants of a node come from
    // the same predecessor, a repeat of the last edge is skipped (the lists are
    // deduplicated anyway).
    let mut last_from: Vec<u32> = vec![u32::MAX; nodes.len()];
    let mut push = |to: DynamicBarrierId, from: DynamicBarrierId| {
        let last = &mut last_from[to.index()];
        if *last != from.0 {
            *last = from.0;
            pairs.push((to.0, from));
        }
    };
    let mut last_block: Vec<Option<DynamicBarrierId>> = vec![None; registrations.len()];
    for (t, regs) in registrations.iter().enumerate() {
        if t > 0 && same.get(t) == Some(&true) {
            last_block[t] = last_block[t - 1];
            continue;
        }
        let mut last = None;
        for r in regs {
            if memory && r.key.is_exec() {
                continue;
            }
            // A lane blocked at its warp's gather before registering (`bar.arrive`).
            if let Some(g) = r.gather() {
                if let Some(b) = last {
                    if b != g {
                        push(g, b);
                    }
                }
                last = Some(g);
            }
            let Some(m) = r.node() else { continue };
            if let Some(b) = last {
                if b != m {
                    push(m, b);
                }
            }
            if r.op.blocks() {
                last = Some(m);
            }
        }
        last_block[t] = last;
    }
    // An exit counted at a node is an in-edge from the thread's last blocking node.
    for (m, node) in nodes.iter().enumerate() {
        for &(t, _) in &node.exited {
            if let Some(b) = last_block.get(t.index()).copied().flatten() {
                if b.index() != m {
                    push(DynamicBarrierId(m as u32), b);
                }
            }
        }
    }
    for list in extra {
        for &(from, to) in *list {
            if to.index() < nodes.len() {
                push(to, from);
            }
        }
    }
    Preds::group(nodes.len(), &pairs)
}

/// Per thread, its chain of blocking nodes: the part of [`HappensBefore`] that needs only
/// the registrations (built while the graph's edges are collected).
#[derive(Debug, Clone)]
pub(crate) struct Chains {
    /// The keys, thread after thread, except that a thread whose keys are the same as the
    /// thread before's shares that thread's ([`Self::spans`]).
    prev: Vec<u32>,
    /// Per thread, its keys' range of [`Self::prev`].
    spans: Vec<(usize, usize)>,
}

impl Chains {
    /// `memory`: leave out the registrations at execution events ([`crate::exec`]).
    /// `same`: [`repeats`] of the registrations.
    pub(crate) fn build(
        program: &Program,
        registrations: &Registrations,
        same: &[bool],
        memory: bool,
    ) -> Self {
        let n = program.threads.len();
        let mut spans = Vec::with_capacity(n);
        let mut prev = Vec::with_capacity(program.num_commands());
        // The blocking registrations of the thread before and this one's, with their lengths.
        let mut before: Vec<(u32, u32)> = Vec::new();
        let mut blocking: Vec<(u32, u32)> = Vec::new();
        let mut before_len = usize::MAX;
        for (t, regs) in registrations.iter().enumerate() {
            let len = program.threads.get(t).map_or(0, |p| p.commands.len());
            // The thread's blocking registrations `(command, node)` in program order, each
            // written as it comes: runs between blocking commands get the last node. An
            // entry takes effect at the first command at or after it and after every
            // earlier entry (its run starts there and ends where the next one starts).
            // The registrations of the thread before: its blocking list, which is `before`
            // (the last list written, or one equal to it).
            let repeat = t > 0 && same.get(t) == Some(&true);
            if repeat
                && len == before_len
                && let Some(&last) = spans.last()
            {
                spans.push(last);
                continue;
            }
            blocking.clear();
            if repeat {
                blocking.extend_from_slice(&before);
            } else {
                blocking.extend(
                    regs.iter()
                        .filter(|r| !(memory && r.key.is_exec()))
                        .filter_map(|r| match r.gather() {
                            Some(g) => Some((r.command, g.0)),
                            None if r.op.blocks() => r.node().map(|m| (r.command, m.0)),
                            None => None,
                        }),
                );
            }
            // The lanes of a warp that ran together block at the same nodes at the same
            // commands: their keys are the same, written once (a thread's keys are a
            // function of its length and this list).
            if let Some(&last) = spans.last()
                && len == before_len
                && blocking == before
            {
                spans.push(last);
                continue;
            }
            let start = prev.len();
            let (mut from, mut value) = (0usize, NO_NODE);
            for &(c, m) in &blocking {
                from = from.max(c as usize).min(len);
                prev.resize(start + from, value);
                value = m + 1;
            }
            prev.resize(start + len, value);
            spans.push((start, prev.len()));
            std::mem::swap(&mut before, &mut blocking);
            before_len = len;
        }
        Chains { prev, spans }
    }

    /// The keys of thread `t`.
    #[inline]
    fn of(&self, t: usize) -> Option<&[u32]> {
        let &(start, end) = self.spans.get(t)?;
        self.prev.get(start..end)
    }
}

impl HappensBefore {
    /// Builds the intervals. `preds` must point backwards (`pred < node`), which the replay
    /// guarantees; a forward edge is ignored here and reported by the caller. `chains` is
    /// [`Chains::build`] of the same registrations. `memory`: the relation without the
    /// execution events ([`crate::exec`]), whose nodes then order nothing (they share one
    /// row of zeros; no edge or chain of this relation reaches them).
    pub(crate) fn build(
        program: &Program,
        nodes: &[DynamicBarrier],
        preds: &Preds,
        chains: Chains,
        memory: bool,
    ) -> Self {
        let n = program.threads.len();
        let ws = program.warp_size();
        // A named-barrier generation that no participant waits at is no thread's last
        // blocking node and no node's predecessor (`edges` leaves only from blocking
        // registrations and gathers): its row is never read, and it shares a zero row (a
        // loop of 550,400 arrive-only generations of 1,024 threads asked for 2.25 GB of
        // rows at once).
        let unread = |node: &DynamicBarrier| {
            !node.gather
                && matches!(node.key, NodeKey::Barrier(BarrierKey::Named(_)))
                && !node.participants.any_blocks()
        };
        // The warp of a node whose threads (participants and counted exits) are all lanes
        // of one warp: a warp gather, a `bar.warp.sync` generation, a one-warp named
        // barrier. Such a node's row differs from its predecessors' only at its warp.
        let one_warp = |node: &DynamicBarrier| -> Option<u32> {
            let mut threads = node
                .participants
                .iter()
                .map(|p| p.thread)
                .chain(node.exited.iter().map(|&(t, _)| t));
            let w = threads.next()?.0 / ws;
            // In the warp: its first thread at most `ws - 1` below (no division per thread).
            let first = w * ws;
            threads
                .all(|t| t.index() < n && t.0.wrapping_sub(first) < ws)
                .then_some(w)
        };
        let warps: Vec<Option<u32>> = nodes.iter().map(one_warp).collect();
        let dense_rows = nodes
            .iter()
            .zip(&warps)
            .filter(|(x, w)| w.is_none() && !(unread(x) || (memory && x.key.is_exec())))
            .count();
        let mut bound: Vec<u32> = Vec::with_capacity(dense_rows.saturating_mul(n));
        let mut rows: Vec<Row> = Vec::with_capacity(nodes.len());
        let mut lanes: Vec<u32> = Vec::new();
        let mut zeros: Option<u32> = None;
        let mut zero_row = |bound: &mut Vec<u32>| {
            *zeros.get_or_insert_with(|| {
                let r = (bound.len() / n.max(1)) as u32;
                bound.resize(bound.len() + n, 0);
                r
            })
        };
        // Scratch: the dense rows merged into the node's row so far.
        let mut merged: Vec<u32> = Vec::new();
        // Scratch: a one-warp node's predecessor rows outside its warp, `(base, warp, lanes)`
        // ([`Row::Gather`]; `warp` `u32::MAX` for a dense row or one of the node's warp).
        let mut key: Vec<(u32, u32, u32)> = Vec::new();
        // The dense rows merged for such nodes, by their sorted predecessor rows.
        let mut bases: rustc_hash::FxHashMap<Vec<(u32, u32, u32)>, u32> = Default::default();
        // The key of `bases` found last (never empty once set) and its row.
        let mut last_base: (Vec<(u32, u32, u32)>, u32) = (Vec::new(), 0);
        for (m, node) in nodes.iter().enumerate() {
            if (memory && node.key.is_exec()) || unread(node) {
                rows.push(Row::Dense(zero_row(&mut bound)));
                continue;
            }
            let ps = preds.of(m);
            // A one-warp node: store only the warp's lanes over a dense row that holds its
            // bounds outside that warp (participants and counted exits add nothing there).
            // That row is the maximum of the predecessors' rows outside the warp: their one
            // shared dense row when they have one (dense rows, or rows of the same warp over
            // the same base), else a row merged from them once and shared by every node with
            // the same predecessor rows (the lanes of a warp waiting at one mbarrier phase,
            // each after its own previous wait, make a node per lane and wait, and their
            // previous waits share a base in turn).
            let compact = warps[m].map(|w| {
                key.clear();
                for p in ps.iter().filter(|p| p.index() < m) {
                    key.push(match rows[p.index()] {
                        Row::Dense(r) => (r, u32::MAX, 0),
                        Row::Gather { base, warp, .. } if warp == w => (base, u32::MAX, 0),
                        Row::Gather { base, warp, lanes } => (base, warp, lanes),
                    });
                }
                key.sort_unstable();
                key.dedup();
                let base = match key.as_slice() {
                    [] => None,
                    &[(r, u32::MAX, _)] => Some(r),
                    // The lanes of a warp waiting at one phase come one after the other
                    // with the same key: the last one found is compared before hashing.
                    parts if last_base.0 == parts => Some(last_base.1),
                    parts => {
                        let r = match bases.get(parts) {
                            Some(&r) => r,
                            None => {
                                let r = merge_rows(&mut bound, &lanes, n, ws, parts);
                                bases.insert(parts.to_vec(), r);
                                r
                            }
                        };
                        last_base.0.clear();
                        last_base.0.extend_from_slice(parts);
                        last_base.1 = r;
                        Some(r)
                    }
                };
                (w, base)
            });
            if let Some((w, base)) = compact {
                let base = base.unwrap_or_else(|| zero_row(&mut bound));
                let off = lanes.len();
                let first = w as usize * ws as usize;
                // The base row's bounds of the warp's lanes (0 past the last thread), as
                // slices: one lane node per lane and wait makes this the hot loop.
                let brow = &bound[base as usize * n..(base as usize + 1) * n];
                let from_base = brow.get(first..).unwrap_or_default();
                lanes.extend_from_slice(&from_base[..from_base.len().min(ws as usize)]);
                lanes.resize(off + ws as usize, 0);
                for p in ps.iter().filter(|p| p.index() < m) {
                    // A row of another warp's lanes is its base here, in the merged base.
                    if let Row::Gather { warp, lanes: l, .. } = rows[p.index()]
                        && warp == w
                    {
                        // An earlier node's lanes lie before this one's.
                        let (done, seg) = lanes.split_at_mut(off);
                        let l = l as usize;
                        max_into(seg, done.get(l..l + ws as usize).unwrap_or_default());
                    }
                }
                let seg = &mut lanes[off..];
                for p in node.participants.iter() {
                    let x = &mut seg[p.thread.index() - first];
                    *x = (*x).max(p.command.saturating_add(1));
                }
                for &(t, e) in &node.exited {
                    let x = &mut seg[t.index() - first];
                    *x = (*x).max(e.saturating_add(1));
                }
                rows.push(Row::Gather {
                    base,
                    warp: w,
                    lanes: off as u32,
                });
                continue;
            }
            // The node's row, computed in place at the end of the table: the first
            // predecessor's row copied, the others' maxima taken (a row of zeros without any).
            // A dense row shared by several predecessors (the base of the gathers of the
            // warps that arrived after the same generation) is taken once: the maximum is
            // idempotent.
            let start = bound.len();
            bound.resize(start + n, 0);
            let (done, row) = bound.split_at_mut(start);
            merged.clear();
            for &p in ps {
                if p.index() >= m {
                    continue;
                }
                let (r, gather) = match rows[p.index()] {
                    Row::Dense(r) => (r, None),
                    Row::Gather { base, warp, lanes } => (base, Some((warp, lanes))),
                };
                if !merged.contains(&r) {
                    let prow = &done[r as usize * n..(r as usize + 1) * n];
                    if merged.is_empty() {
                        row.copy_from_slice(prow);
                    } else {
                        for (x, &y) in row.iter_mut().zip(prow) {
                            *x = (*x).max(y);
                        }
                    }
                    merged.push(r);
                }
                if let Some((w, off)) = gather {
                    let first = w as usize * ws as usize;
                    let seg = &lanes[off as usize..off as usize + ws as usize];
                    for (x, &y) in row.get_mut(first..).unwrap_or_default().iter_mut().zip(seg) {
                        *x = (*x).max(y);
                    }
                }
            }
            for p in node.participants.iter() {
                if let Some(x) = row.get_mut(p.thread.index()) {
                    *x = (*x).max(p.command.saturating_add(1));
                }
            }
            for &(t, e) in &node.exited {
                if let Some(x) = row.get_mut(t.index()) {
                    *x = (*x).max(e.saturating_add(1));
                }
            }
            rows.push(Row::Dense((start / n.max(1)) as u32));
        }
        let steps = if program.threads.iter().any(|t| !t.steps.is_empty()) {
            program.threads.iter().map(|t| t.steps.clone()).collect()
        } else {
            Vec::new()
        };
        HappensBefore {
            threads: n,
            warp_size: ws,
            rows,
            bound,
            lanes,
            chains,
            steps,
            agents: Agents::default(),
        }
    }

    /// Adds the asynchronous copies of `program` as agents. `phase_of(thread, command)` is
    /// the completed phase node an mbarrier command was counted in; `observers(node)` the
    /// waits that observed that phase (the only way out of a phase node).
    pub(crate) fn add_agents(
        &mut self,
        program: &Program,
        phase_of: impl Fn(ThreadId, u32) -> Option<DynamicBarrierId>,
        observers: impl Fn(DynamicBarrierId) -> Vec<(ThreadId, u32)>,
    ) {
        let mut rows: rustc_hash::FxHashMap<DynamicBarrierId, u32> = Default::default();
        let mut list = Vec::with_capacity(program.asyncs.copies.len());
        let (mut decided, mut lanes_decided) = (Decided::default(), Decided::default());
        for copy in &program.asyncs.copies {
            let mut agent = Agent {
                issuer: copy.issuer,
                issue: copy.issue,
                issue_key: match copy.issue.checked_sub(1) {
                    Some(i) => self.chain_key(copy.issuer, i),
                    None => NO_NODE,
                },
                done: copy.done.unwrap_or(NEVER),
                done_seq: copy.done_seq,
                index: list.len() as u32,
                rows: self.agents.rows.len() as u32,
                rows_end: self.agents.rows.len() as u32,
                joint: copy
                    .joint
                    .filter(|&j| (j as usize) < program.asyncs.joint_done.len())
                    .unwrap_or(NEVER),
                tensor_pipe: copy.tensor_pipe,
            };
            for &c in &copy.phases {
                let Some(node) = phase_of(copy.issuer, c) else {
                    continue;
                };
                let row = match rows.get(&node) {
                    Some(&r) => r,
                    None => {
                        let r = rows.len() as u32;
                        rows.insert(node, r);
                        let obs = observers(node);
                        let first = self.first_after_any_in(&obs, &mut decided, &mut lanes_decided);
                        self.agents.after.extend_from_slice(&first);
                        r
                    }
                };
                let own = &self.agents.rows[agent.rows as usize..];
                if !own.contains(&row) {
                    self.agents.rows.push(row);
                    agent.rows_end = self.agents.rows.len() as u32;
                }
            }
            list.push(agent);
        }
        self.agents.list = list;
        self.agents.joint = program.asyncs.joint_done.clone();
    }

    /// Per thread `u` of the CTA, the first command of `u` that happens after one of the
    /// commands `obs` (`min` over `w` in `obs` of [`Self::after_start`]`(w, u)`), [`NEVER`]
    /// when none does.
    ///
    /// One binary search per thread instead of one per thread and command of `obs`: along
    /// `u`'s chain of blocking nodes, "the node is ordered after `w`" is monotone for each
    /// `w` (see [`Self::after_start`]), so the least of the per-`w` partition points is the
    /// partition point of "the node is ordered after some `w`", decided once per node and
    /// shared by every thread whose chain passes through it. A command `(u, i)` of `obs` on
    /// `u` itself bounds `u` at `i`, and a node of `u`'s chain ordered after it starts at an
    /// index above `i` (everything of `u` before the node completes is before `u`'s blocking
    /// registration there), so counting it in the search changes no minimum.
    #[cfg(test)]
    pub(crate) fn first_after_any(&self, obs: &[(ThreadId, u32)]) -> Vec<u32> {
        self.first_after_any_in(obs, &mut Decided::default(), &mut Decided::default())
    }

    /// [`Self::first_after_any`] (documented there) with the scratch of earlier calls
    /// (reset here in constant time). A node is ordered after some command of `obs` when
    /// its row exceeds, at some thread, that thread's earliest command there: decided once
    /// per dense row, not per node. The row of a one-warp node ([`Row::Gather`]) exceeds
    /// iff its base does or its own lanes do (the base is at most the lanes inside the
    /// warp), and the lanes are read only for a warp with a thread in `obs`: the chains of
    /// the lanes of a warp pass through a node per lane and wait, over one base.
    ///
    /// Whether a one-warp node's own lanes exceed is decided once per node
    /// (`lanes_decided`): a lane's binary search lands on the same nodes of its chain again
    /// as it narrows, and would compare the warp's lanes anew at each.
    fn first_after_any_in(
        &self,
        obs: &[(ThreadId, u32)],
        decided: &mut Decided,
        lanes_decided: &mut Decided,
    ) -> Vec<u32> {
        let n = self.threads;
        let mut first = vec![NEVER; n];
        for &(t, i) in obs {
            if let Some(f) = first.get_mut(t.index()) {
                *f = (*f).min(i);
            }
        }
        // Per thread, its earliest command of `obs` (the easiest for a node to follow).
        let own = first.clone();
        let ws = (self.warp_size as usize).max(1);
        // Per warp, whether a thread of it is in `obs`.
        let mut listed = vec![false; n.div_ceil(ws)];
        for (t, &f) in own.iter().enumerate() {
            if f != NEVER {
                listed[t / ws] = true;
            }
        }
        let dense = |r: u32| {
            let start = r as usize * n;
            exceeds(self.bound.get(start..start + n).unwrap_or(&[]), &own)
        };
        decided.reset(self.bound.len() / n.max(1));
        lanes_decided.reset(self.rows.len());
        for (u, f) in first.iter_mut().enumerate() {
            let Some(row) = self.chains.of(u) else {
                continue;
            };
            let k = row.partition_point(|&m| {
                let Some(x) = key_node(m) else {
                    return true;
                };
                let is_after = match self.rows.get(x.index()) {
                    None => false,
                    Some(&Row::Dense(r)) => decided.get_or(r as usize, || dense(r)),
                    Some(&Row::Gather { base, warp, lanes }) => {
                        decided.get_or(base as usize, || dense(base))
                            || (listed.get(warp as usize).copied().unwrap_or(false)
                                && lanes_decided.get_or(x.index(), || {
                                    let first = (warp as usize * ws).min(n);
                                    let last = (first + ws).min(n);
                                    let seg = self
                                        .lanes
                                        .get(lanes as usize..lanes as usize + (last - first))
                                        .unwrap_or(&[]);
                                    exceeds(seg, &own[first..last])
                                }))
                    }
                };
                !is_after
            });
            if k < row.len() {
                *f = (*f).min(k as u32);
            }
        }
        first
    }

    /// The completion positions of copy `g` in other threads than its issuer.
    fn joint(&self, g: &Agent) -> &[(ThreadId, u32)] {
        self.agents
            .joint
            .get(g.joint as usize)
            .map_or(&[], Vec::as_slice)
    }

    /// The rows of [`Agents::after`] of the phases the copy `g` completes before.
    #[inline]
    fn agent_rows(&self, g: &Agent) -> &[u32] {
        self.agents
            .rows
            .get(g.rows as usize..g.rows_end as usize)
            .unwrap_or(&[])
    }

    /// The agent an id beyond the CTA's threads names.
    #[inline]
    fn agent(&self, t: ThreadId) -> Option<&Agent> {
        t.index()
            .checked_sub(self.threads)
            .and_then(|g| self.agents.list.get(g))
    }

    /// Commands recorded for thread `t` (0 for an agent or an unknown id).
    fn len_of(&self, t: ThreadId) -> u32 {
        match self.chains.of(t.index()) {
            Some(keys) if t.index() < self.threads => keys.len() as u32,
            _ => 0,
        }
    }

    /// Whether command `a` of another thread than `h`'s issuer happens before the copy `h`
    /// starts: before the issuer's command before the issue, whose chain key the agent keeps.
    #[inline]
    fn before_issue(&self, a: (ThreadId, u32), h: &Agent) -> bool {
        h.issue > 0 && self.ordered_threads_after(a, (h.issuer, h.issue - 1), key_node(h.issue_key))
    }

    /// Whether the copy `g` completes before command `b` of a thread.
    fn agent_before(&self, g: &Agent, b: (ThreadId, u32)) -> bool {
        self.agent_before_after(g, b, self.prev_blocking(b.0, b.1))
    }

    /// [`Self::agent_before`] given `b`'s last blocking node ([`Self::prev_blocking`]).
    #[inline]
    fn agent_before_after(
        &self,
        g: &Agent,
        b: (ThreadId, u32),
        b_node: Option<DynamicBarrierId>,
    ) -> bool {
        // Whether position `pos` of thread `t` happens before `b`.
        let position_before = |t: ThreadId, pos: u32| {
            if b.0 == t {
                pos <= b.1
            } else {
                pos < self.len_of(t) && self.ordered_threads_after((t, pos), b, b_node)
            }
        };
        (g.done != NEVER && position_before(g.issuer, g.done))
            || (g.joint != NEVER && self.joint_before(self.joint(g), b, b_node))
            || self.agent_rows(g).iter().any(|&r| {
                self.agents
                    .after
                    .get(r as usize * self.threads + b.0.index())
                    .is_some_and(|&first| first <= b.1)
            })
    }

    /// Whether one of the completion positions `joint` ([`Self::joint`]) happens before
    /// command `b` of a thread, given `b`'s last blocking node: `position_before` of
    /// [`Self::agent_before_after`] for each, with what they share found once (a
    /// warpgroup's set has a position per lane, 127 of them, and the race check asks it of
    /// every access of every thread to the copy's words). Per position of another thread
    /// than `b`'s: within its commands, and ordered by warp steps or before `b_node`'s
    /// completion ([`Self::ordered_threads_after`]).
    #[inline(never)]
    fn joint_before(
        &self,
        joint: &[(ThreadId, u32)],
        b: (ThreadId, u32),
        b_node: Option<DynamicBarrierId>,
    ) -> bool {
        let latest = b_node.map(|m| self.latest_row(m));
        let b_step = self.step(b.0, b.1);
        let b_warp = b.0.0 / self.warp_size;
        joint.iter().any(|&(u, p)| {
            if u == b.0 {
                return p <= b.1;
            }
            let stepped = b_step.is_some_and(|s2| {
                u.0 / self.warp_size == b_warp && self.step(u, p).is_some_and(|s1| s1 < s2)
            });
            (stepped || latest.as_ref().is_some_and(|r| p < r.get(u))) && p < self.len_of(u)
        })
    }

    /// The bounds of `node` ([`Self::latest_before`]) resolved once, for many threads.
    fn latest_row(&self, node: DynamicBarrierId) -> LatestRow<'_> {
        let n = self.threads;
        let dense = |r: u32| {
            let start = r as usize * n;
            self.bound.get(start..start + n).unwrap_or(&[])
        };
        match self.rows.get(node.index()) {
            None => LatestRow::default(),
            Some(&Row::Dense(r)) => LatestRow {
                dense: dense(r),
                ..LatestRow::default()
            },
            Some(&Row::Gather { base, warp, lanes }) => {
                let ws = self.warp_size as usize;
                let first = warp as usize * ws;
                LatestRow {
                    dense: dense(base),
                    first,
                    lanes: self
                        .lanes
                        .get(lanes as usize..lanes as usize + ws)
                        .unwrap_or(&[]),
                }
            }
        }
    }

    /// Whether the copy `g` completes before the copy `h` starts.
    fn agent_before_agent(&self, g: &Agent, h: &Agent) -> bool {
        // Two operations of one thread's tensor pipe, which runs them in issue order.
        if g.issuer == h.issuer && g.index < h.index && g.tensor_pipe && h.tensor_pipe {
            return true;
        }
        if g.done != NEVER {
            let ordered = if g.issuer == h.issuer {
                g.done < h.issue || (g.done == h.issue && g.done_seq <= h.index)
            } else {
                g.done < self.len_of(g.issuer) && self.before_issue((g.issuer, g.done), h)
            };
            if ordered {
                return true;
            }
        }
        // A completion in another thread at the issuer's issue position may fall on either
        // side of the issue (no sequence number relates them): only an earlier one orders,
        // one before the issuer's command before the issue ([`Self::before_issue`]).
        let joint = g.joint != NEVER
            && h.issue > 0
            && self.joint_before(
                self.joint(g),
                (h.issuer, h.issue - 1),
                key_node(h.issue_key),
            );
        joint
            || self.agent_rows(g).iter().any(|&r| {
                self.agents
                    .after
                    .get(r as usize * self.threads + h.issuer.index())
                    .is_some_and(|&first| first < h.issue)
            })
    }

    /// For an asynchronous-copy agent `t` completed by a wait of its issuer: the issuer and
    /// the number of copies of the program issued when that wait ran. Every copy of the
    /// same issuer with an index at least that starts after `t` completed, so is ordered
    /// after it ([`Self::ordered`] answers so: its same-issuer test). `None` for a thread,
    /// or a copy no wait of its issuer completes.
    pub fn issuer_copies_after(&self, t: ThreadId) -> Option<(ThreadId, u32)> {
        let g = self.agent(t)?;
        (g.done != NEVER).then_some((g.issuer, g.done_seq))
    }

    /// Whether agent `t` is an operation of its issuer's tensor pipe: every later such agent
    /// of the same issuer happens after it ([`weft_program::AsyncCopy::tensor_pipe`]).
    pub fn pipe_agent(&self, t: ThreadId) -> bool {
        self.agent(t).is_some_and(|g| g.tensor_pipe)
    }

    /// Number of asynchronous-copy agents (numbered from [`Self::num_threads`] on).
    pub fn num_agents(&self) -> usize {
        self.agents.list.len()
    }

    /// Number of threads.
    pub fn num_threads(&self) -> usize {
        self.threads
    }

    /// Whether command `a` (thread, command index) happens before command `b` in every
    /// execution (Definition 4: `t(a) <= t(b)`; two syncs of one generation are ordered
    /// both ways). Constant time. Out-of-range commands are ordered with nothing.
    ///
    /// Ids from [`Self::num_threads`] on are asynchronous copies (agents with one access,
    /// command 0): a copy happens after everything before its issue and before everything
    /// after its completion events.
    pub fn ordered(&self, a: (ThreadId, u32), b: (ThreadId, u32)) -> bool {
        let ((t1, i), (t2, j)) = (a, b);
        if t1 == t2 {
            return i <= j;
        }
        if t1.index() >= self.threads || t2.index() >= self.threads {
            return self.ordered_agents(a, b);
        }
        self.ordered_threads(a, b)
    }

    #[cold]
    fn ordered_agents(&self, a: (ThreadId, u32), b: (ThreadId, u32)) -> bool {
        match (self.agent(a.0), self.agent(b.0)) {
            (None, Some(h)) => {
                a.0.index() < self.threads
                    && if a.0 == h.issuer {
                        a.1 < h.issue
                    } else {
                        self.before_issue(a, h)
                    }
            }
            (Some(g), None) => b.0.index() < self.threads && self.agent_before(g, b),
            (Some(g), Some(h)) => self.agent_before_agent(g, h),
            (None, None) => false,
        }
    }

    /// [`Self::ordered`] for two commands of different threads of the CTA.
    #[inline]
    fn ordered_threads(&self, a: (ThreadId, u32), b: (ThreadId, u32)) -> bool {
        self.ordered_threads_after(a, b, self.prev_blocking(b.0, b.1))
    }

    /// [`Self::ordered_threads`] given `b`'s last blocking node (`prev_blocking`).
    #[inline]
    fn ordered_threads_after(
        &self,
        a: (ThreadId, u32),
        b: (ThreadId, u32),
        b_node: Option<DynamicBarrierId>,
    ) -> bool {
        let ((t1, i), (t2, j)) = (a, b);
        if t1 == t2 {
            return i <= j;
        }
        if let (Some(s1), Some(s2)) = (self.step(t1, i), self.step(t2, j)) {
            if t1.0 / self.warp_size == t2.0 / self.warp_size && s1 < s2 {
                return true;
            }
        }
        match b_node {
            Some(m) => i < self.latest_before(m, t1),
            None => false,
        }
    }

    /// The *chain key* of command `index` of `thread`: its last blocking node
    /// ([`Self::prev_blocking`]) encoded as one more than its id, 0 when there is none (or
    /// `thread` is not a thread of the CTA). A caller that walks a thread's commands in
    /// order reads the keys as one stream and hands them to [`Self::ordered_at`] and
    /// [`Self::before_bound_at`], which then need no lookup of their own.
    #[inline]
    pub fn chain_key(&self, thread: ThreadId, index: u32) -> u32 {
        self.prev_blocking(thread, index)
            .map_or(NO_NODE, |m| m.0 + 1)
    }

    /// The [`Self::chain_key`]s of every command of `thread`, in program order (`None` for
    /// an id that is not a thread of the CTA): one lookup per thread for a caller that walks
    /// its commands, instead of one per command.
    #[inline]
    pub fn chain_keys(&self, thread: ThreadId) -> Option<&[u32]> {
        if thread.index() >= self.threads {
            return None;
        }
        self.chains.of(thread.index())
    }

    /// Whether every lane of `warp` has the same [`Self::latest_before`] bound at the node a
    /// [`Self::chain_key`] names (key 0, no node: all have none). Where it holds for every
    /// key and warp of two sets of accesses that differ only by lanes of the same warps,
    /// every test between them is answered alike (the race check's lane shifts).
    /// `O(warp size)`; `false` where the row cannot be read.
    pub fn lanes_agree(&self, key: u32, warp: u32) -> bool {
        let Some(node) = key_node(key) else {
            return true;
        };
        let (n, ws) = (self.threads, self.warp_size as usize);
        let first = (warp as usize).saturating_mul(ws).min(n);
        let last = first.saturating_add(ws).min(n);
        let row = |r: u32| {
            let start = r as usize * n;
            self.bound.get(start + first..start + last)
        };
        let lanes = match self.rows.get(node.index()) {
            // No row: every bound is 0.
            None => return true,
            Some(&Row::Dense(r)) => row(r),
            Some(&Row::Gather { lanes, warp: w, .. }) if w == warp => self
                .lanes
                .get(lanes as usize..lanes as usize + (last - first)),
            Some(&Row::Gather { base, .. }) => row(base),
        };
        lanes.is_some_and(|l| l.windows(2).all(|p| p[0] == p[1]))
    }

    /// [`Self::ordered`], given `b`'s [`Self::chain_key`].
    #[inline(always)]
    pub fn ordered_at(&self, a: (ThreadId, u32), b: (ThreadId, u32), b_key: u32) -> bool {
        if a.0 == b.0 || b.0.index() >= self.threads {
            return self.ordered(a, b);
        }
        if a.0.index() >= self.threads {
            // A copy before a command of a thread, whose key stands for its last blocking
            // node.
            return self
                .agent(a.0)
                .is_some_and(|g| self.agent_before_after(g, b, key_node(b_key)));
        }
        self.ordered_threads_after(a, b, key_node(b_key))
    }

    /// [`Self::before_bound`], given `b`'s [`Self::chain_key`].
    #[inline(always)]
    pub fn before_bound_at(&self, b: (ThreadId, u32), b_key: u32, other: ThreadId) -> u32 {
        if b.0 == other {
            return b.1.saturating_add(1);
        }
        if other.index() >= self.threads {
            return u32::from(self.ordered_at((other, 0), b, b_key));
        }
        if b.0.index() >= self.threads {
            // A copy: the commands of `other` (not its issuer) before the issuer's command
            // before the issue, whose key the agent keeps.
            return match self.agent(b.0) {
                Some(h) if other == h.issuer => h.issue,
                Some(h) => key_node(h.issue_key).map_or(0, |m| self.latest_before(m, other)),
                None => 0,
            };
        }
        key_node(b_key).map_or(0, |m| self.latest_before(m, other))
    }

    fn step(&self, t: ThreadId, i: u32) -> Option<u32> {
        self.steps.get(t.index())?.get(i as usize).copied()
    }

    /// [`Self::ordered`], or (under `--warp-sync`) [`Self::ordered_through_warp`]: how the
    /// mbarrier checks order two commands.
    pub(crate) fn ordered_in_lockstep(&self, a: (ThreadId, u32), b: (ThreadId, u32)) -> bool {
        self.ordered(a, b) || self.ordered_through_warp(a, b)
    }

    /// Under `--warp-sync`: whether `a` runs before a command of its warp at a later warp
    /// step that is [`Self::ordered`] before `b` (lock-step, then happens-before; the
    /// relation itself combines the two only for a direct pair). Per lane the first command
    /// after `a`'s step suffices: happens-before is monotone in program order. The mbarrier
    /// phase checks use it (docs/semantics.md §7).
    pub(crate) fn ordered_through_warp(&self, a: (ThreadId, u32), b: (ThreadId, u32)) -> bool {
        let Some(s) = self.step(a.0, a.1) else {
            return false;
        };
        let ws = self.warp_size as usize;
        let w0 = a.0.index() / ws * ws;
        (w0..(w0 + ws).min(self.steps.len())).any(|l| {
            let steps = &self.steps[l];
            let x = steps.partition_point(|&y| y <= s);
            x < steps.len() && self.ordered((ThreadId(l as u32), x as u32), b)
        })
    }

    /// The interval bound of a dynamic barrier: the commands of `thread` with index
    /// `< latest_before(node, thread)` happen before `node` completes (0: none does).
    #[inline]
    pub fn latest_before(&self, node: DynamicBarrierId, thread: ThreadId) -> u32 {
        if thread.index() >= self.threads {
            return 0;
        }
        let base = match self.rows.get(node.index()) {
            None => return 0,
            Some(&Row::Dense(r)) => r,
            Some(&Row::Gather { base, warp, lanes }) => {
                if thread.0 / self.warp_size == warp {
                    let lane = (thread.0 % self.warp_size) as usize;
                    return self.lanes.get(lanes as usize + lane).copied().unwrap_or(0);
                }
                base
            }
        };
        self.bound
            .get(base as usize * self.threads + thread.index())
            .copied()
            .unwrap_or(0)
    }

    /// The last dynamic barrier at which `thread` blocked (sync, red, warp sync) at or
    /// before command `index` (a blocking command at `index` counts). Constant time.
    pub fn prev_blocking(&self, thread: ThreadId, index: u32) -> Option<DynamicBarrierId> {
        key_node(*self.chains.of(thread.index())?.get(index as usize)?)
    }

    /// The commands of `other` with index `< before_bound(b, other)` happen before `b`
    /// (for `other` = `b`'s thread: all commands up to and including `b`). Constant time.
    ///
    /// For an asynchronous copy (`other` or `b` an agent id), the bound follows from its
    /// issue position and completion events.
    pub fn before_bound(&self, b: (ThreadId, u32), other: ThreadId) -> u32 {
        if b.0 == other {
            return b.1.saturating_add(1);
        }
        if other.index() >= self.threads {
            return u32::from(self.ordered((other, 0), b));
        }
        if let Some(h) = self.agent(b.0) {
            return if other == h.issuer {
                h.issue
            } else if h.issue > 0 {
                self.before_bound((h.issuer, h.issue - 1), other)
            } else {
                0
            };
        }
        self.prev_blocking(b.0, b.1)
            .map_or(0, |m| self.latest_before(m, other))
    }

    /// The commands of `other` with index `>= after_start(a, other)` happen after `a`;
    /// `None` when none does. `O(log C)` for `C` commands of `other`. Ignores warp steps.
    pub fn after_start(&self, a: (ThreadId, u32), other: ThreadId) -> Option<u32> {
        if a.0 == other {
            return Some(a.1);
        }
        // `other`'s row of `prev` runs through its chain of blocking nodes in program order
        // (the first command of each run is the blocking registration), and along the chain
        // `latest_before` is monotone (each node reaches the next): the first command whose
        // last blocking node is ordered after `a` is the first blocking registration that is.
        let row = self.chains.of(other.index())?;
        let k = row.partition_point(|&m| {
            m == NO_NODE || self.latest_before(DynamicBarrierId(m - 1), a.0) <= a.1
        });
        (k < row.len()).then_some(k as u32)
    }
}

#[cfg(test)]
mod preds_tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// [`Preds::group`] (a counting sort, then each target's sources sorted and
        /// deduplicated in place) gives every node the sorted, deduplicated list a vector per
        /// node gives.
        #[test]
        fn grouped_edges_are_the_sorted_deduplicated_lists(
            nodes in 0usize..12,
            raw in proptest::collection::vec((0u32..12, 0u32..12), 0..60),
        ) {
            let pairs: Vec<(u32, DynamicBarrierId)> = raw
                .iter()
                .filter(|&&(to, _)| (to as usize) < nodes)
                .map(|&(to, from)| (to, DynamicBarrierId(from)))
                .collect();
            let mut naive: Vec<Vec<DynamicBarrierId>> = vec![Vec::new(); nodes];
            for &(to, from) in &pairs {
                naive[to as usize].push(from);
            }
            for list in &mut naive {
                list.sort_unstable();
                list.dedup();
            }
            let preds = Preds::group(nodes, &pairs);
            prop_assert_eq!(preds.len(), nodes);
            for (m, list) in naive.iter().enumerate() {
                prop_assert_eq!(preds.of(m), list.as_slice());
            }
            prop_assert!(preds.of(nodes).is_empty());
        }
    }
}
