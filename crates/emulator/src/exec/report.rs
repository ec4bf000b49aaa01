//! Recording what the emulation found: unverifiable reasons and findings.

use super::Machine;
use crate::ir::{MemBase, Opnd};
use crate::{Finding, FindingKind, Unverifiable, ValueSource};
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

    pub(super) fn describe(&self, u: u32) -> String {
        let set = self.src.get(u);
        if set.is_empty() {
            return String::new();
        }
        let names: Vec<String> = set.iter().map(|s| s.describe(&self.ir.sources)).collect();
        // A whole scalar parameter is named in the reason; the CLI adds its hint.
        let fixes: Vec<String> = set
            .iter()
            .filter(|s| matches!(s, ValueSource::ParamBytes { .. }))
            .filter_map(ValueSource::param_fix)
            .collect();
        if fixes.is_empty() {
            format!(" It depends on {}.", names.join(", "))
        } else {
            format!(
                " It depends on {}. Fix the input with {}.",
                names.join(", "),
                fixes.join(", ")
            )
        }
    }

    /// Records that the kernel cannot be verified. `control` stops the emulation.
    #[cold]
    pub(super) fn unverifiable(
        &mut self,
        t: usize,
        pc: u32,
        what: &str,
        reg: Option<Opnd>,
        u: u32,
        control: bool,
    ) {
        if control {
            self.stop = true;
        } else if !self.reported.insert(pc) {
            return;
        }
        let register = match reg {
            Some(Opnd::Reg(r) | Opnd::NotReg(r)) => self.ir.reg_names.get(r.index()).cloned(),
            Some(Opnd::Mem(MemBase::Reg(r), _)) => self.ir.reg_names.get(r.index()).cloned(),
            _ => None,
        };
        let reg_text = register
            .as_ref()
            .map(|r| format!(" (register `{r}`)"))
            .unwrap_or_default();
        let reason = format!(
            "{what}{reg_text} at `{}` on PTX line {}, thread {t}.{}",
            self.opcode(pc),
            self.line(pc),
            self.describe(u)
        );
        self.unverifiable.push(Unverifiable {
            reason,
            inst: Some(InstId(pc)),
            thread: Some(ThreadId(t as u32)),
            register,
            sources: self.src.get(u).to_vec(),
        });
    }

    #[cold]
    pub(super) fn finding(&mut self, t: usize, pc: u32, kind: FindingKind, message: String) {
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
