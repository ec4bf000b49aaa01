//! Cluster launch control (PTX ISA: *clusterlaunchcontrol.try_cancel*,
//! *clusterlaunchcontrol.query_cancel*): a persistent kernel asks the hardware to cancel a
//! cluster not launched yet and, when that succeeds, does its work.
//!
//! Whether a request succeeds depends on the rest of the grid, not on the CTA: weft answers
//! the CTA's `k`-th request "canceled" exactly when `k <` [`CLC_VARIABLE`], a `.u32`
//! variable laid out after the kernel's parameters (`crate::params::kernel_params`). A
//! request fails only when no cluster of the grid is left to cancel, and none is launched
//! after that, so once one fails every later one does: the variable covers every sequence
//! of answers. Left free, its values are explored like a loop's trip count; `--param`
//! fixes it. The CTA id a successful answer carries is unknown.
//!
//! The answer is 16 bytes written to shared memory asynchronously, in the async proxy, and
//! completes 16 transaction bytes on the request's mbarrier (the multicast form writes
//! every CTA of the cluster: this CTA alone). Its bytes hold the request's number and a
//! mark, so `query_cancel` knows which request an answer loaded back into a register is.

use super::memory::Mem;
use super::{Machine, Proxy};
use crate::ir::{BoolOp, Cmp, Inst, Kind, Opnd, Space, Ty};
use crate::params::CLC_VARIABLE;
use crate::unverifiable::{SyncOp, Value, Why};
use crate::{FindingKind, ValueSource};
use weft_program::{AccessKind, Command, InstId, MbarrierOp};

/// The high word of an answer's first 8 bytes (its low word is the request's number).
const MARK: u64 = 0xc1c0_a115;

impl Machine<'_> {
    /// `clusterlaunchcontrol.try_cancel... [addr], [mbar]` by thread `t`.
    pub(super) fn clc_try_cancel(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd]) {
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        if self.under_branch(t, pc, SyncOp::ClusterLaunchControl) {
            return;
        }
        if !self
            .notes
            .iter()
            .any(|n| n.starts_with("cluster launch control"))
        {
            self.notes.push(format!(
                "cluster launch control (`clusterlaunchcontrol.try_cancel`, first at PTX line {}): the CTA's k-th request is answered \"canceled\" exactly when k < `{CLC_VARIABLE}`, a variable explored like a size (a request fails only when no cluster is left to cancel, so every later one fails too); the CTA ids of canceled clusters are unknown",
                self.line(pc)
            ));
        }
        let space = if inst.space == Space::Generic {
            Space::Generic
        } else {
            Space::Shared
        };
        let dest = match self.addr(t, pc, space, o(0)) {
            super::Addr::Shared(d) => d,
            other => {
                let u = match other {
                    super::Addr::Unknown(u) => u,
                    _ => self.src.single(ValueSource::Other(
                        "an address outside shared memory for the answer of cluster launch control",
                    )),
                };
                self.unverifiable(
                    t,
                    pc,
                    Why::Unknown(Value::SharedAddress),
                    Some(o(0)),
                    u,
                    true,
                );
                return;
            }
        };
        let failed = self.clc_observed[t].filter(|&(_, answer)| self.clc_may_fail(answer));
        if let Some((seen, _)) = failed {
            let msg = format!(
                "`{}` (PTX line {}) requests again after this thread read the answer to request {seen}, which is \"not canceled\" in some execution of this path: undefined behavior (PTX ISA, clusterlaunchcontrol.try_cancel: \"if the executing CTA has already observed the completion of a clusterlaunchcontrol.try_cancel instruction as failed, then the behavior of issuing a subsequent clusterlaunchcontrol.try_cancel instruction is undefined\")",
                self.opcode(pc),
                self.line(pc)
            );
            self.finding(t, pc, FindingKind::ClusterLaunchControl, msg);
        }
        let k = u64::from(self.clc_requests);
        self.clc_requests = self.clc_requests.saturating_add(1);
        let agent = self.async_access(
            t,
            pc,
            AccessKind::Write,
            dest,
            16,
            0,
            Proxy::Async,
            super::async_copy::BULK_ALIGN,
        );
        if agent.is_some() {
            self.write_bytes(Mem::Shared, dest as usize, 0, 8, MARK << 32 | k, 0);
            self.write_bytes(Mem::Shared, dest as usize, 8, 8, 0, 0);
        }
        let Some(a) = self.mbar_addr(t, pc, inst, o(1)) else {
            return;
        };
        let c = self.push(
            t,
            Command::mbarrier(MbarrierOp::CompleteTx, a, 16, InstId(pc)),
        );
        if let Some(g) = agent
            && let Some(copy) = self.copies.get_mut(g as usize)
        {
            copy.phases.push(c);
        }
        let r = self.mbars.complete_tx(a, 16);
        self.mbar_result(a, r);
    }

    /// Whether the answer in register `o` says "canceled": `k <` [`CLC_VARIABLE`] for the
    /// answer to request `k` (known, or unknown with that comparison's term), and `k`;
    /// unknown without a term for a value that is not a whole answer.
    fn clc_answer(&mut self, t: usize, pc: u32, o: Opnd) -> ((u64, u32), Option<u64>) {
        let (v, u) = self.rd(t, o, pc);
        let variable = self
            .ir
            .kernel_params
            .iter()
            .find(|p| p.name == CLC_VARIABLE)
            .map(|p| p.offset);
        let (Some(off), 0, MARK) = (variable, u, v >> 32) else {
            let why = self.src.single(ValueSource::Other(
                "a value that is not a whole answer of cluster launch control",
            ));
            let u = self.src.union(self.src.plain(u), why);
            return ((0, u), None);
        };
        let k = v & 0xffff_ffff;
        let (n, un) = self.kparam_field(off, 4, false, 32);
        if un == 0 {
            return ((u64::from(k < n), 0), Some(k));
        }
        let ty = Ty {
            bits: 32,
            kind: Kind::U,
        };
        let (up, _) = self.unknown_setp(Cmp::Lt, ty, BoolOp::None, (k, 0), (n, un), (0, 0));
        (self.settle(0, up), Some(k))
    }

    /// Whether `answer` (a [`Self::clc_answer`]) may be "not canceled" on this path: it is
    /// known to be, or the path's choices do not decide it (some value of
    /// [`CLC_VARIABLE`] the path allows fails it).
    fn clc_may_fail(&mut self, answer: (u64, u32)) -> bool {
        let (v, u) = answer;
        if u == 0 {
            v == 0
        } else {
            self.forced(u) != Some(true)
        }
    }

    /// `clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, answer`.
    pub(super) fn clc_is_canceled(&mut self, t: usize, pc: u32, ops: &[Opnd]) {
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        let (answer, k) = self.clc_answer(t, pc, o(1));
        // Only the latest request read counts: `k < N` may fail for a smaller `k` only if it
        // may fail for every larger one.
        if let Some(k) = k
            && self.clc_observed[t].is_none_or(|(seen, _)| u64::from(seen) < k)
        {
            self.clc_observed[t] = Some((k as u32, answer));
        }
        self.wr(t, o(0), answer.0, answer.1);
    }

    /// `clusterlaunchcontrol.query_cancel.get_first_ctaid...b128 d, answer`: unknown. The
    /// PTX ISA defines the id for a successful request only; the CUDA Programming Guide
    /// calls reading it for a failed one undefined, but the CuTe DSL's dynamic persistent
    /// scheduler reads it before it checks the answer, and an unknown value is what weft
    /// gives it either way: not reported.
    pub(super) fn clc_first_ctaid(&mut self, t: usize, pc: u32, ops: &[Opnd]) {
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        let (_, u) = self.rd(t, o(1), pc);
        let id = self.src.single(ValueSource::Other(
            "the first CTA id of a cluster that cluster launch control canceled",
        ));
        let u = self.src.union(self.src.plain(u), id);
        let (dests, n) = self.elems(o(0));
        for &d in &dests[..n] {
            self.wr(t, d, 0, u);
        }
    }
}
