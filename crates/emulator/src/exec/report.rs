//! Recording what the emulation found: unverifiable reasons and findings.

use super::Machine;
use crate::ir::{MemBase, Opnd};
use crate::unverifiable::{SyncOp, Value};
use crate::{Finding, FindingKind, Unverifiable, Why};
use weft_program::{InstId, ThreadId};

impl Machine<'_> {
    pub(super) fn line(&self, pc: u32) -> u32 {
        self.ir
            .sources
            .sites
            .get(pc as usize)
            .map_or(0, |s| s.ptx_line)
    }

    pub(super) fn opcode(&self, pc: u32) -> &str {
        self.ir
            .sources
            .sites
            .get(pc as usize)
            .map_or("?", |s| &s.opcode)
    }

    /// Records that the kernel cannot be verified. `control` stops the emulation.
    #[cold]
    pub(super) fn unverifiable(
        &mut self,
        t: usize,
        pc: u32,
        why: Why,
        reg: Option<Opnd>,
        u: u32,
        control: bool,
    ) {
        // A shared address that carries a term is split like a required value: the access
        // is made again once the choices decide it (its first attempt changed nothing the
        // second does not redo: a store returns, a load's destination is written again).
        let splits = control || matches!(why, Why::Unknown(Value::SharedAddress));
        if self.pass_lockstep && (splits || t != self.cursor) {
            // Lanes after the cursor ran ahead (`warp` module): the order is visible.
            self.reorder();
            return;
        }
        // A required value that carries a term: a choice of its inputs' values, then the
        // instruction runs again.
        if splits
            && matches!(why, Why::Unknown(_))
            && let Some(o) = reg
            && self.split(t, pc, o)
        {
            self.th[t].pc = pc;
            return;
        }
        if control {
            self.stop = true;
        } else if !self.reported.insert(pc) {
            return;
        }
        let register = match reg {
            Some(Opnd::Reg(r) | Opnd::NotReg(r) | Opnd::Mem(MemBase::Reg(r), _)) => {
                self.ir.reg_names.get(r.index()).cloned()
            }
            _ => None,
        };
        self.unverifiable.push(Unverifiable {
            why,
            inst: Some(InstId(pc)),
            thread: Some(ThreadId(t as u32)),
            register,
            sources: self.src.get(u).to_vec(),
        });
    }

    #[cold]
    /// Whether thread `t` runs inside a side of an input-dependent branch (both sides run
    /// here), where the synchronization operation `op` at `pc` may or may not execute: if so
    /// it is recorded as unverifiable (stopping the run), and the caller skips `op`.
    pub(super) fn under_branch(&mut self, t: usize, pc: u32, op: SyncOp) -> bool {
        if self.th[t].may == 0 {
            return false;
        }
        let src = self.th[t].may_src;
        self.unverifiable(t, pc, Why::UnderBranch(op), None, src, true);
        true
    }

    pub(super) fn finding(&mut self, t: usize, pc: u32, kind: FindingKind, message: String) {
        if self.pass_lockstep && t != self.cursor {
            self.reorder();
            return;
        }
        if !self.found.insert((kind, pc, t as u32)) {
            return;
        }
        let assertion = (kind == FindingKind::TrapReachable)
            .then(|| self.ir.asserts.get(&pc).cloned())
            .flatten();
        self.findings.push(Finding {
            kind,
            thread: ThreadId(t as u32),
            inst: InstId(pc),
            message,
            assertion,
        });
    }
}
