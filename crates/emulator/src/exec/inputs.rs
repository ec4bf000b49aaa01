//! *Global inputs* (`docs/semantics.md` §6.5): the values weak loads read from global or
//! constant memory, one symbolic variable per address.
//!
//! A weak load (no `.volatile`, `.relaxed`, `.acquire` or `.mmio`) from global or constant
//! memory whose value can be observed (`Ir::input_loads`) reads an *input*: weft takes the
//! memory a kernel reads this way as data the launch gives it, which nothing writes while
//! the kernel runs. Each distinct (address, size) such loads read is one variable, a field
//! of a virtual window after the kernel parameters ([`INPUT_BASE`]): every load of that
//! address, by any thread, reads the same value, and a branch on it is a choice like a
//! branch on a parameter (the exploration explores its values; a witness fixes them). The
//! address is known, or a term over the kernel's parameters and other inputs (a device
//! array of problem sizes read through a pointer parameter). A load whose address has no
//! term, a wider load than 8 bytes, and every load in the induction's runs read a plain
//! unknown, as before.

use rustc_hash::FxHashMap;
use weft_program::InstId;

use super::Machine;
use super::terms::TermId;
use crate::ir::{MemBase, Opnd};
use crate::{Expr, ValueSource};

/// The offset of the first input variable in the parameter window of terms: far past any
/// kernel's parameters (at most 32,764 bytes, PTX ISA *Kernel Function Parameters*). Input
/// `k` is the 8 bytes at `INPUT_BASE + 8·k`.
pub(crate) const INPUT_BASE: u32 = 1 << 24;

/// The note on a run whose choices read global inputs.
pub(super) const INPUTS_NOTE: &str = "values loaded from global or constant memory decided \
synchronization on this path: weft took them as inputs of the launch (\"global input [address]\"), \
assuming that nothing (no thread of this CTA or another, no host or copy engine) writes that \
memory while the kernel runs, so that every weak load of one address reads one value, and \
explored their values like a kernel parameter's";

/// Input variables one run creates at most; past them a load reads a plain unknown.
const MAX_INPUTS: usize = 1 << 16;

/// Where an input load reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum InputAt {
    /// A known address.
    Known(u64),
    /// A term plus a constant offset.
    Term(TermId, u64),
}

/// One input variable.
#[derive(Debug, Clone, Copy)]
pub(super) struct InputVar {
    /// The load that read it first.
    pub inst: u32,
    /// It is that load's `nth` input of the run (in the order of first reads).
    pub nth: u32,
    pub at: InputAt,
    pub size: u8,
}

/// The run's input variables.
#[derive(Clone, Debug, Default)]
pub(super) struct Inputs {
    by_address: FxHashMap<(InputAt, u8), u32>,
    pub vars: Vec<InputVar>,
    /// Per load instruction, its inputs so far.
    per_inst: FxHashMap<u32, u32>,
}

impl Machine<'_> {
    /// Where the input load at `pc` with address operand `a` reads, for thread `t`; `None`
    /// when the address is unknown without a term.
    pub(super) fn input_address(&mut self, t: usize, pc: u32, a: Opnd) -> Option<InputAt> {
        let Opnd::Mem(base, off) = a else {
            return None;
        };
        match base {
            MemBase::Abs => Some(InputAt::Known(off as u64)),
            MemBase::Reg(r) => {
                let (v, u) = self.rd(t, Opnd::Reg(r), pc);
                if u == 0 {
                    return Some(InputAt::Known(v.wrapping_add(off as u64)));
                }
                let term = self.src.term(u)?;
                Some(InputAt::Term(term, off as u64))
            }
            _ => None,
        }
    }

    /// The value the input load at `pc` reads at `at` plus `delta` bytes: `size` bytes,
    /// sign-extended when `signed`. Unknown with the input's term, or known when the
    /// configuration binds it or the path's choices determine it.
    pub(super) fn input_value(
        &mut self,
        pc: u32,
        at: InputAt,
        delta: u64,
        size: u32,
        signed: bool,
    ) -> (u64, u32) {
        let plain = self.src.single(ValueSource::GlobalLoad(InstId(pc)));
        let Ok(size) = u8::try_from(size) else {
            return (0, plain);
        };
        if size == 0 || size > 8 {
            return (0, plain);
        }
        let at = match at {
            InputAt::Known(x) => InputAt::Known(x.wrapping_add(delta)),
            InputAt::Term(t, k) => InputAt::Term(t, k.wrapping_add(delta)),
        };
        let k = match self.inputs.by_address.get(&(at, size)) {
            Some(&k) => k,
            None => {
                if self.inputs.vars.len() >= MAX_INPUTS {
                    return (0, plain);
                }
                let k = self.inputs.vars.len() as u32;
                let nth = self.inputs.per_inst.entry(pc).or_insert(0);
                self.inputs.vars.push(InputVar {
                    inst: pc,
                    nth: *nth,
                    at,
                    size,
                });
                *nth += 1;
                self.inputs.by_address.insert((at, size), k);
                k
            }
        };
        let var = self.inputs.vars[k as usize];
        if let Some(v) = self.bound_input(var) {
            return (v, 0);
        }
        let term = self.src.terms.param(INPUT_BASE + 8 * k, size, signed);
        let u = self.src.termed(plain, term);
        match self.determined_value(u) {
            Some(x) => (x, 0),
            None => (0, u),
        }
    }

    /// The value the configuration gives input `var` (a witness's, in a concrete run).
    fn bound_input(&self, var: InputVar) -> Option<u64> {
        self.cfg
            .inputs
            .iter()
            .find(|b| b.inst == InstId(var.inst) && b.nth == var.nth && b.size == var.size)
            .map(|b| b.value)
    }

    /// The input variable bytes `off..off + size` of the term window hold, as data: `None`
    /// for an offset below [`INPUT_BASE`].
    pub(super) fn input_expr(&self, off: u32, size: u8, signed: bool) -> Option<Expr> {
        let rel = off.checked_sub(INPUT_BASE)?;
        let var = *self.inputs.vars.get((rel / 8) as usize)?;
        let start = (rel % 8) as u8;
        let address = match var.at {
            InputAt::Known(x) => Expr::Const(x),
            InputAt::Term(t, k) => {
                let base = self.expr(t);
                if k == 0 {
                    base
                } else {
                    Expr::Plus {
                        base: Box::new(base),
                        k,
                        bits: 64,
                    }
                }
            }
        };
        Some(Expr::Input {
            inst: InstId(var.inst),
            nth: var.nth,
            address: Box::new(address),
            size: var.size,
            start,
            end: start.saturating_add(size),
            signed,
        })
    }
}
