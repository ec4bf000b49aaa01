//! The emulator's IR and the lowering from the PTX AST.
//!
//! Lowering happens once per kernel: every string lookup (register names, labels, opcodes,
//! modifiers, variables) is resolved here so the interpreter dispatches on dense enums and
//! indexes flat arrays.

use crate::SharedSymbol;
use rustc_hash::FxHashMap;
use weft_program::SourceTable;

mod cfg;
mod contract;
mod data;
mod decode;
mod doomed;
mod live;
mod lower;
mod observed;
mod types;
mod valid;

pub(crate) use data::DataLayout;
pub(crate) use doomed::{assertion_branch, traps_from};
#[cfg(test)]
pub(crate) use live::global_address_registers;
pub(crate) use live::{Liveness, global_address_operand, liveness, registers};
pub(crate) use lower::lower;
pub(crate) use types::*;

/// The lowered kernel.
#[derive(Debug, Clone)]
pub(crate) struct Ir {
    pub insts: Vec<Inst>,
    pub opnds: Vec<Opnd>,
    pub funcs: Vec<Func>,
    pub reg_names: Vec<String>,
    /// Each register's declared width in bits (1 for `.pred`), parallel to `reg_names`.
    pub reg_bits: Vec<u8>,
    pub sources: SourceTable,
    pub shared: Vec<SharedSymbol>,
    /// Static shared bytes (the extern dynamic arrays start at `extern_start`).
    pub shared_static: u32,
    pub extern_start: Option<u32>,
    pub local_size: u32,
    pub param_size: u32,
    pub kernel_params: Vec<KernelParam>,
    /// Size of the kernel-parameter window (all kernel parameters, laid out in order).
    pub kparam_size: u32,
    pub windows: Windows,
    /// Immediate post-dominator of each instruction (`None`: the function's exit, or no
    /// path to it — see `reaches_exit`).
    pub ipdom: Vec<Option<Pc>>,
    /// Whether each instruction can reach its function's exit.
    pub reaches_exit: Vec<bool>,
    pub explicit_cluster: bool,
    /// Whether lanes at different `.sync` collective instructions of the same kind meet
    /// (`.target` sm_70 or later: [`meets_across_instructions`]).
    pub cross_collectives: bool,
    pub notes: Vec<String>,
    /// Initialized `.global`/`.const` module variables.
    pub data: DataLayout,
    /// What each `__assertfail` call site says, decoded from its arguments.
    pub asserts: FxHashMap<u32, crate::Assertion>,
    /// Instructions from which every path traps (`trap`, `__assertfail`) without
    /// synchronizing or exiting: the failing side of an assertion.
    pub doomed: Vec<bool>,
    /// Per instruction: it reads or writes a destination register of a `tcgen05.ld`
    /// (`tmem_register_users`): the general interpreter runs it, and it completes the
    /// thread's pending loads of those registers (`exec::tmem`).
    pub tmem_users: Vec<bool>,
    /// Per instruction: a pure computation whose destination registers nothing can observe
    /// (`observed.rs`): its unknown results need no term.
    pub unobserved: Vec<bool>,
    /// Per instruction: a weak load from global or constant memory whose value can be
    /// observed (`observed.rs`): it reads an *input*, one symbolic value per address
    /// (`exec::memory`, `docs/semantics.md` §6.5 *Global inputs*).
    pub input_loads: Vec<bool>,
    /// Per instruction: a destination register may flow into a shared store's value
    /// (`observed.rs`): only then are value terms built for its results
    /// (`crate::Config::value_terms`).
    pub value_observed: Vec<bool>,
}

/// Whether the module's `.target` lets the lanes named by a member mask meet at different
/// `.sync` collective instructions: "shfl.sync will cause executing thread to wait until all
/// non-exited threads corresponding to membermask have executed shfl.sync with the same
/// qualifiers and same membermask value" (PTX ISA, *shfl.sync*; `vote`, `match` and `redux`
/// say the same), while "for .target sm_6x or below, all threads in membermask must execute
/// the same shfl.sync instruction in convergence". A target before sm_70 keeps the
/// same-instruction rule; no target, or one weft does not recognize, takes the newer rule.
pub(crate) fn meets_across_instructions(targets: &[&str]) -> bool {
    !targets.iter().any(|t| {
        t.strip_prefix("sm_")
            .map(|v| v.trim_end_matches(|c: char| c.is_ascii_alphabetic()))
            .and_then(|v| v.parse::<u32>().ok())
            .is_some_and(|v| v < 70)
    })
}

impl Ir {
    pub fn operands(&self, inst: &Inst) -> &[Opnd] {
        let s = inst.ops as usize;
        self.opnds.get(s..s + inst.nops as usize).unwrap_or(&[])
    }

    pub fn list(&self, start: u32, len: u32) -> &[Opnd] {
        let s = start as usize;
        self.opnds.get(s..s + len as usize).unwrap_or(&[])
    }
}
