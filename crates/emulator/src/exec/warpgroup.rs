//! The warpgroup side of `wgmma`: what its instructions order and who must execute them.
//!
//! - **Ordering.** A `wgmma.mma_async` is one operation of the warpgroup (four consecutive
//!   warps, the first a multiple of 4): it runs only after all four warps issued it, and a
//!   warp's `wgmma.wait_group N` that retires the group holding it returns only after it
//!   ran. So every lane's issue happens (in time) before every lane's retiring
//!   `wait_group`, although a warp goes on past its own issue without waiting. weft records
//!   one execution event per warpgroup operation: each lane's `k`-th `mma_async` is an
//!   arrival (`exec.arrive`), and each lane's `wait_group` that retires it a wait
//!   (`exec.wait`). A lane's issues with only shared accesses between them (in one commit
//!   group) share the first one's event. The results are per-thread registers, so the event orders no memory
//!   (the operand reads are the asynchronous agents of the tensor-core stage).
//! - **Alignment.** `wgmma.fence`, `wgmma.commit_group`, `wgmma.wait_group` and
//!   `wgmma.mma_async` are `.sync.aligned`: "all threads in the warpgroup must execute the
//!   same" instruction, else the behaviour is undefined. Every thread records the `wgmma`
//!   instructions it executes; when every thread has exited, threads of one warpgroup whose
//!   sequences differ are a [`FindingKind::WarpgroupDivergence`] (a warp that skipped a
//!   `wgmma`, or lanes that diverged around one). The other `.aligned` instructions (not
//!   barriers: `ldmatrix`, `stmatrix`, `mma.sync`, `tcgen05.ld`, `setmaxnreg`, ...) are checked
//!   the same way over the lanes of each warp, outside input-dependent branches.

use rustc_hash::{FxHashMap, FxHashSet};
use weft_program::{Command, ExecOp, InstId, WARP_SIZE};

use super::{Machine, State};
use crate::FindingKind;
use crate::ir::Opnd;
use crate::unverifiable::SyncOp;

/// Threads of a warpgroup.
const WARPGROUP: usize = 4 * WARP_SIZE as usize;

/// A group not committed yet.
const OPEN: u32 = u32::MAX;

/// The other `.aligned` instructions recorded per thread; beyond, only their number.
const WARP_CAP: usize = 1 << 16;

/// The `.sync.aligned` `wgmma` instructions.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum WgKind {
    Fence,
    Commit,
    Wait,
    Mma,
    /// Another `.aligned` instruction (not a barrier): the lanes of the warp must all execute
    /// it (`ldmatrix`, `stmatrix`, `mma.sync`, `tcgen05.ld`, `setmaxnreg`, ...).
    Warp,
}

/// The kind of a `wgmma` opcode (`wgmma.mma_async.sync.aligned.m64n128k16.f32.f16.f16`),
/// or of another `.aligned` instruction other than a barrier (the barrier state machine
/// checks those).
pub(super) fn wg_kind(opcode: &str) -> Option<WgKind> {
    let mut parts = opcode.split('.');
    let head = parts.next()?;
    if head != "wgmma" {
        let aligned = opcode.split('.').any(|m| m == "aligned");
        return (aligned && !matches!(head, "bar" | "barrier")).then_some(WgKind::Warp);
    }
    Some(match parts.next()? {
        "fence" => WgKind::Fence,
        "commit_group" => WgKind::Commit,
        "wait_group" => WgKind::Wait,
        "mma_async" => WgKind::Mma,
        _ => return None,
    })
}

/// Per-thread `wgmma` state.
#[derive(Clone, Debug, Default)]
pub(super) struct Warpgroups {
    /// Per instruction, its kind; empty when the kernel has no `wgmma`.
    pub(super) kinds: Vec<Option<WgKind>>,
    /// Per thread: the `wgmma` instructions it executed, in order.
    seq: Vec<Vec<u32>>,
    /// Per thread: the other `.aligned` instructions it executed, in order (the first
    /// [`WARP_CAP`]), and how many.
    warp_seq: Vec<Vec<u32>>,
    warp_count: Vec<u64>,
    /// Per thread: its `mma_async` executions so far.
    issued: Vec<u32>,
    /// The execution event of each (warpgroup, `k`-th issue).
    events: FxHashMap<(u32, u32), u32>,
    /// Per thread: the events of its operations not retired yet, with their group
    /// ([`OPEN`] until a `commit_group`).
    pending: Vec<Vec<(u32, u32)>>,
    /// Per thread: the groups it committed.
    committed: Vec<u32>,
    /// Per thread: its non-access commands (`collectives::Recorded::synced`) right after its
    /// last arrival.
    tail: Vec<u32>,
}

impl Warpgroups {
    /// The state for the instructions of `opcodes` and `n` threads.
    pub(super) fn new<'s>(opcodes: impl Iterator<Item = &'s str>, n: usize) -> Self {
        let kinds: Vec<Option<WgKind>> = opcodes.map(wg_kind).collect();
        if kinds.iter().all(Option::is_none) {
            return Warpgroups::default();
        }
        Warpgroups {
            kinds,
            seq: vec![Vec::new(); n],
            warp_seq: vec![Vec::new(); n],
            warp_count: vec![0; n],
            issued: vec![0; n],
            events: FxHashMap::default(),
            pending: vec![Vec::new(); n],
            committed: vec![0; n],
            tail: vec![u32::MAX; n],
        }
    }
}

impl Machine<'_> {
    /// The warpgroup part of a `wgmma` instruction of kind `kind` executed by thread `t`
    /// (its own semantics run as before).
    pub(super) fn warpgroup(&mut self, t: usize, pc: u32, kind: WgKind, ops: &[Opnd]) {
        if self.th[t].may > 0 && kind == WgKind::Warp {
            // Recorded only where the lanes' paths are known.
            return;
        }
        // Both sides of an input-dependent branch run here: which lanes execute the
        // instruction depends on the input.
        if self.under_branch(t, pc, SyncOp::Warpgroup) {
            return;
        }
        let wg = &mut self.wg;
        if kind == WgKind::Warp {
            wg.warp_count[t] += 1;
            if wg.warp_seq[t].len() < WARP_CAP {
                wg.warp_seq[t].push(pc);
            }
            return;
        }
        if let Some(seq) = wg.seq.get_mut(t) {
            seq.push(pc);
        }
        match kind {
            WgKind::Fence | WgKind::Warp => {}
            WgKind::Mma => {
                let k = wg.issued[t];
                wg.issued[t] = k.saturating_add(1);
                // A run of issues with only shared accesses between them (and no commit):
                // the first one's arrival orders every synchronization command the later
                // ones would, and a wait that retires the later ones waits for it. Claiming
                // that all lanes issued the first of the run (not the last) only orders less.
                if wg.pending[t].last().is_some_and(|e| e.1 == OPEN)
                    && wg.tail[t] == self.coll.synced[t]
                {
                    return;
                }
                let next = self.exec_events.wrapping_add(1);
                let event = *wg.events.entry(((t / WARPGROUP) as u32, k)).or_insert(next);
                let new = event == next;
                if new {
                    self.exec_events = next;
                }
                wg.pending[t].push((event, OPEN));
                if new {
                    self.charge_node();
                }
                self.push(t, Command::exec(ExecOp::Arrive, event, InstId(pc)));
                self.wg.tail[t] = self.coll.synced[t];
            }
            WgKind::Commit => {
                // The uncommitted issues are a suffix (issues are appended open, a commit
                // closes all of them): a loop of commits without a wait scanned its whole
                // growing list each time (10⁷ steps took 80 s).
                let g = wg.committed[t];
                for e in wg.pending[t].iter_mut().rev().take_while(|e| e.1 == OPEN) {
                    e.1 = g;
                }
                wg.committed[t] = g.saturating_add(1);
            }
            WgKind::Wait => {
                // `wait_group N` (an immediate in practice): every committed group but the
                // N most recent is complete. An unknown N retires nothing (orders less).
                let o = ops.first().copied().unwrap_or(Opnd::Sink);
                let (keep, u) = self.rd(t, o, pc);
                if u != 0 {
                    return;
                }
                let wg = &mut self.wg;
                let limit = u64::from(wg.committed[t]).saturating_sub(keep);
                // The retired issues are a prefix (groups are committed in order, the open
                // issues last).
                let pending = &mut wg.pending[t];
                let done = pending
                    .partition_point(|&(_, group)| group != OPEN && u64::from(group) < limit);
                let mut retired: Vec<u32> = Vec::new();
                let mut seen: FxHashSet<u32> = FxHashSet::default();
                for (event, _) in pending.drain(..done) {
                    if seen.insert(event) {
                        retired.push(event);
                    }
                }
                for event in retired {
                    self.push(t, Command::exec(ExecOp::Wait, event, InstId(pc)));
                }
            }
        }
    }

    /// After a run in which every thread exited: the threads of each warpgroup must have
    /// executed the same `wgmma` instructions in the same order, and the lanes of each warp
    /// the same other `.aligned` instructions.
    pub(super) fn check_warpgroup_alignment(&mut self) {
        if self.wg.kinds.is_empty() || (0..self.n).any(|t| self.th[t].state != State::Exited) {
            return;
        }
        let seq = std::mem::take(&mut self.wg.seq);
        self.check_aligned(
            &seq,
            WARPGROUP,
            "wgmma instructions are .sync.aligned over the warpgroup",
            "wgmma",
        );
        let warp = std::mem::take(&mut self.wg.warp_seq);
        let complete = (0..self.n).all(|t| self.wg.warp_count[t] == warp[t].len() as u64);
        self.check_aligned(
            &warp,
            WARP_SIZE as usize,
            ".aligned instructions must be executed by every lane of the warp",
            ".aligned",
        );
        // Beyond the recorded prefix only counts are kept: lanes that executed different
        // numbers of them diverged somewhere after it.
        if !complete {
            for first in (0..self.n).step_by(WARP_SIZE as usize) {
                let lanes = first..(first + WARP_SIZE as usize).min(self.n);
                let c0 = self.wg.warp_count[first];
                let odd: Vec<usize> = lanes.filter(|&t| self.wg.warp_count[t] != c0).collect();
                if let (false, Some(&at)) = (odd.is_empty(), warp[first].last()) {
                    let message = format!(
                        ".aligned instructions must be executed by every lane of the warp, but lanes of warp {} executed different numbers of them ({} and more) after the first {}",
                        first / WARP_SIZE as usize,
                        c0,
                        WARP_CAP
                    );
                    for t in odd {
                        self.finding(t, at, FindingKind::WarpgroupDivergence, message.clone());
                    }
                }
            }
        }
    }

    /// Threads of each group of `size` (from thread 0) whose `seqs` differ: a finding at the
    /// first instruction where they do, by the threads that did not execute it.
    fn check_aligned(&mut self, seqs: &[Vec<u32>], size: usize, rule: &str, what: &str) {
        for first in (0..self.n).step_by(size) {
            let threads = first..(first + size).min(self.n);
            let Some(k) = (0..)
                .take_while(|&k| threads.clone().any(|t| seqs[t].get(k).is_some()))
                .find(|&k| {
                    let at = seqs[first].get(k);
                    threads.clone().any(|t| seqs[t].get(k) != at) || threads.len() < size
                })
            else {
                continue;
            };
            // Threads by what they executed as their k-th such instruction.
            let mut groups: Vec<(Option<u32>, Vec<usize>)> = Vec::new();
            for t in threads.clone() {
                let at = seqs[t].get(k).copied();
                match groups.iter_mut().find(|(p, _)| *p == at) {
                    Some((_, ts)) => ts.push(t),
                    None => groups.push((at, vec![t])),
                }
            }
            groups.sort_by_key(|(_, ts)| std::cmp::Reverse(ts.len()));
            let name = |p: Option<u32>| match p {
                Some(p) => format!("`{}` (PTX line {})", self.opcode(p), self.line(p)),
                None => format!("no further {what} instruction before exiting"),
            };
            let parts: Vec<String> = groups
                .iter()
                .map(|(p, ts)| {
                    format!(
                        "threads {} execute {}",
                        super::collectives::lane_ranges(ts),
                        name(*p)
                    )
                })
                .collect();
            let mut message = format!(
                "{rule} (threads {}-{}): all of them must execute the same one, but as their {what} instruction number {}, {}",
                first,
                first + size - 1,
                k + 1,
                parts.join("; ")
            );
            if threads.len() < size {
                message.push_str(&format!(
                    "; the CTA has only {} of the group's {size} threads",
                    threads.len()
                ));
            }
            // Reported at the majority's instruction, by the threads that did not execute it.
            let (at, _) = groups[0];
            let Some(at) = at.or_else(|| groups.iter().find_map(|(p, _)| *p)) else {
                continue;
            };
            let odd: Vec<usize> = match groups
                .iter()
                .skip(1)
                .flat_map(|(_, ts)| ts)
                .copied()
                .collect::<Vec<_>>()
            {
                v if v.is_empty() => groups[0].1.clone(),
                v => v,
            };
            for t in odd {
                self.finding(t, at, FindingKind::WarpgroupDivergence, message.clone());
            }
        }
    }
}
