//! Asynchronous copies: agents of their own between their issue and their completion.
//!
//! `cp.async`, `cp.async.bulk` and TMA (`cp.async.bulk.tensor`) copies access shared memory
//! at an unknown time after the issuing thread issued them and before the operation that
//! completes them. weft models each one as an extra *agent* of the program (an
//! [`AsyncCopy`]): its start is ordered after the issue point, its shared access sits inside
//! it, and its end is ordered before every completion event:
//!
//! - a later position of the issuing thread ([`AsyncCopy::done`]): `cp.async.wait_group N` /
//!   `cp.async.wait_all` completing its `cp.async` group, or `cp.async.bulk.wait_group[.read]
//!   N` completing its bulk group (for a bulk store, the read of its source);
//! - the mbarrier phase in which one of the issuer's mbarrier commands is counted
//!   ([`AsyncCopy::phases`]): the `complete_tx` of a bulk or TMA load (recorded in the
//!   issuer's program at the issue point: it is an operation of the phase whose predecessors
//!   are exactly the issue's), or the arrive-on of `cp.async.mbarrier.arrive[.noinc]`.
//!
//! Positions are indices into the issuing thread's command list: "position `p`" lies after
//! its commands `< p` and before its commands `>= p`. The agents do not synchronize, so the
//! barrier graph needs nothing of them; happens-before and the race check see them as
//! threads of one access each, numbered after the CTA's threads.
//!
//! A copy may also complete before positions of *other* threads ([`AsyncCopy::joint`]): a
//! warpgroup's `wgmma.mma_async` is one operation whose shared-memory operand reads end
//! before the retiring `wgmma.wait_group` of every lane of the warpgroup, so its agent's
//! completion positions are shared by the lanes ([`AsyncOps::joint_done`]).
//!
//! Both sides of a branch on an unknown predicate are emulated one after the other in the
//! thread's program, although every execution takes only one ([`ExclusiveSides`]): a copy
//! the first side issues is in flight in the program during the second side, but never with
//! it in an execution. [`AsyncOps::exclusive`] records such pairs of sides whose first issued
//! copies; [`AsyncOps::excluded`] says which pairs of accesses they rule out.
//!
//! [`AsyncOps::proxy_fences`] lists, per thread, the positions of its `fence.proxy.async`
//! instructions: a generic-proxy write read by an async-proxy copy (a bulk or TMA store)
//! must be ordered before the copy through such a fence.

use crate::command::{Command, ThreadId};

/// The memory proxy through which an asynchronous copy accesses shared memory (PTX ISA,
/// *Memory Consistency Model: Proxies*).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Proxy {
    /// The generic proxy: `cp.async` (non-bulk).
    Generic,
    /// The async proxy: `cp.async.bulk`, `cp.async.bulk.tensor`, `cp.reduce.async.bulk`.
    Async,
    /// Tensor memory, which only `tcgen05` instructions access ([`crate::TMEM_BASE`]): no
    /// proxy rule relates it to shared memory.
    Tensor,
}

/// One asynchronous copy: an agent with one shared-memory access.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AsyncCopy {
    /// The thread that issued it.
    pub issuer: ThreadId,
    /// Its issue position in the issuer's program: the issuer's commands `< issue` happen
    /// before it starts.
    pub issue: u32,
    /// Its shared-memory access (a [`crate::CommandView::Access`]; the instruction is the
    /// issuing one).
    pub access: Command,
    /// The proxy of the access.
    pub proxy: Proxy,
    /// An index into [`AsyncOps::joint_done`]: positions of other threads than the issuer
    /// before which the copy is complete (a tensor-core operation retired by every lane of
    /// its warpgroup). Several copies may share one set.
    pub joint: Option<u32>,
    /// The first position of the issuer at which the copy is complete (its earliest
    /// completing wait), if any: the issuer's commands `>= done` happen after it.
    pub done: Option<u32>,
    /// With `done`: how many copies of the program had been issued when that wait ran.
    /// Copies with a smaller index were issued before it, so a copy of the same issuer with
    /// an index `>= done_seq` starts after this one completed (the wait and the issue may
    /// fall between the same two commands, where positions cannot tell their order).
    pub done_seq: u32,
    /// Indices of mbarrier commands of the issuer: the copy completes before the phase in
    /// which each of them is counted completes.
    pub phases: Vec<u32>,
    /// An access of a `tcgen05.mma` or `tcgen05.cp`: an operation of its issuer's tensor
    /// pipe, which runs them in issue order. The PTX ISA (*tcgen05 Memory Consistency Model*,
    /// *Pipelined tcgen05 Instructions*) promises that order only for `tcgen05.mma` after
    /// `tcgen05.mma` with the same accumulator and shape, and `tcgen05.mma` after
    /// `tcgen05.cp`; weft orders every pair: CUTLASS's block-scaled GEMMs copy the next
    /// k-block's scale factors over the ones an earlier MMA reads, and attention kernels
    /// (Flash Attention 4, the CuTe DSL's FMHA) let an MMA overwrite what an earlier MMA of
    /// another accumulator reads, relying on the pipe's order (an approximation
    /// `docs/semantics.md` lists).
    pub tensor_pipe: bool,
}

impl AsyncCopy {
    /// A copy issued at position `issue` of `issuer`, not yet completed by anything.
    pub fn new(issuer: ThreadId, issue: u32, access: Command, proxy: Proxy) -> Self {
        AsyncCopy {
            issuer,
            issue,
            access,
            proxy,
            joint: None,
            done: None,
            done_seq: u32::MAX,
            phases: Vec::new(),
            tensor_pipe: false,
        }
    }

    /// Records a completing wait at position `at` of the issuer, run when `seq` copies of
    /// the program had been issued (the earliest wait counts).
    pub fn complete_at(&mut self, at: u32, seq: u32) {
        if self
            .done
            .is_none_or(|d| at < d || (at == d && seq < self.done_seq))
        {
            self.done = Some(at);
            self.done_seq = seq;
        }
    }
}

/// Two sides of one dynamic branch of `thread` on an unknown predicate, emulated one after
/// the other in its program although every execution runs only one of them, where the first
/// side issued asynchronous copies: those copies never run alongside the second side's
/// commands or copies. The copies of one side are consecutive in [`AsyncOps::copies`] (a
/// thread runs a branch's sides alone), the second side's right after the first's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ExclusiveSides {
    /// The thread that took the branch.
    pub thread: ThreadId,
    /// The copies the first side issued: `copies[first.0..first.1]` (not empty).
    pub first: (u32, u32),
    /// The second side's commands: positions `second.0..second.1` of `thread`'s program.
    pub second: (u32, u32),
    /// The copies the second side issued: `copies[first.1..second_copies]`.
    pub second_copies: u32,
}

impl ExclusiveSides {
    /// Whether copy `g` was issued by the first side.
    pub fn first_has(&self, g: u32) -> bool {
        (self.first.0..self.first.1).contains(&g)
    }

    /// Whether copy `g` was issued by the second side.
    pub fn second_has(&self, g: u32) -> bool {
        (self.first.1..self.second_copies).contains(&g)
    }

    /// Whether `thread`'s command at `position` belongs to the second side.
    pub fn second_at(&self, position: u32) -> bool {
        (self.second.0..self.second.1).contains(&position)
    }
}

/// The asynchronous part of a [`crate::Program`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AsyncOps {
    /// Every asynchronous copy, in issue order. Copy `g` is agent `threads + g` for the
    /// race check.
    pub copies: Vec<AsyncCopy>,
    /// Per thread (empty if none has any), the positions of its `fence.proxy.async`
    /// instructions, ascending.
    pub proxy_fences: Vec<Vec<u32>>,
    /// Completion sets named by [`AsyncCopy::joint`]: `(thread, position)` pairs, each
    /// meaning the copy is complete before the thread's commands `>= position`.
    pub joint_done: Vec<Vec<(ThreadId, u32)>>,
    /// Pairs of sides of one branch that no execution runs together, where the first issued
    /// copies (empty unless a thread took both sides of such a branch).
    pub exclusive: Vec<ExclusiveSides>,
}

impl AsyncOps {
    /// Whether the program has no asynchronous copy.
    pub fn is_empty(&self) -> bool {
        self.copies.is_empty()
    }

    /// The positions of `fence.proxy.async` in `thread`'s program.
    pub fn fences(&self, thread: ThreadId) -> &[u32] {
        self.proxy_fences
            .get(thread.index())
            .map_or(&[], Vec::as_slice)
    }

    /// Whether no execution runs the accesses `a` and `b` together: one is a copy issued by
    /// the first side of an [`ExclusiveSides`], the other a command of its second side or a
    /// copy that side issued. `threads` is the CTA's thread count: agent `threads + g` is copy
    /// `g`, its access command 0.
    pub fn excluded(&self, threads: usize, a: (ThreadId, u32), b: (ThreadId, u32)) -> bool {
        let copy = |t: ThreadId| {
            t.index()
                .checked_sub(threads)
                .and_then(|g| u32::try_from(g).ok())
        };
        let one_way = |x: ThreadId, y: (ThreadId, u32)| {
            let Some(g) = copy(x) else {
                return false;
            };
            self.exclusive.iter().any(|s| {
                s.first_has(g)
                    && match copy(y.0) {
                        Some(h) => s.second_has(h),
                        None => y.0 == s.thread && s.second_at(y.1),
                    }
            })
        };
        one_way(a.0, b) || one_way(b.0, a)
    }

    /// The completion positions of other threads than its issuer of copy `copy`.
    pub fn joint_of(&self, copy: &AsyncCopy) -> &[(ThreadId, u32)] {
        copy.joint
            .and_then(|j| self.joint_done.get(j as usize))
            .map_or(&[], Vec::as_slice)
    }
}
