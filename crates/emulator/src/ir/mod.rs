//! The emulator's IR and the lowering from the PTX AST.
//!
//! Lowering happens once per kernel: every string lookup (register names, labels, opcodes,
//! modifiers, variables) is resolved here so the interpreter dispatches on dense enums and
//! indexes flat arrays.

use crate::SharedSymbol;
use rustc_hash::FxHashMap;
use weft_program::SourceTable;

mod cfg;
mod data;
mod decode;
mod doomed;
mod live;
mod lower;
mod types;
mod valid;

pub(crate) use data::DataLayout;
pub(crate) use doomed::traps_from;
pub(crate) use live::{Liveness, liveness, registers};
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
    pub notes: Vec<String>,
    /// Initialized `.global`/`.const` module variables.
    pub data: DataLayout,
    /// What each `__assertfail` call site says, decoded from its arguments.
    pub asserts: FxHashMap<u32, crate::Assertion>,
    /// Instructions from which every path traps (`trap`, `__assertfail`) without
    /// synchronizing or exiting: the failing side of an assertion.
    pub doomed: Vec<bool>,
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
