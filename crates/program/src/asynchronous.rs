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

    /// The completion positions of other threads than its issuer of copy `copy`.
    pub fn joint_of(&self, copy: &AsyncCopy) -> &[(ThreadId, u32)] {
        copy.joint
            .and_then(|j| self.joint_done.get(j as usize))
            .map_or(&[], Vec::as_slice)
    }
}
