//! Live registers: which registers an instruction may read before the thread writes them
//! again (a backward data-flow analysis over each function's CFG).
//!
//! The answer over-approximates: every register an instruction names is read, except the
//! destinations of the operations listed in [`writes`] (when the instruction has no guard),
//! and only those destinations are written. A register that is not live at a thread's pc
//! cannot influence the rest of the thread's run, which is what the induction over trip
//! counts (`docs/induction.md` §2) needs when it compares two machine states. Registers
//! whose value cannot influence the run at all (global pointers,
//! [`global_address_registers`]) are never live.

use crate::ir::{Inst, Ir, MemBase, Op, Opnd, Pc, Space};

/// The live-in registers of every instruction, as bitsets over the register files.
#[derive(Clone)]
pub(crate) struct Liveness {
    words: usize,
    bits: Vec<u64>,
}

impl Liveness {
    /// Whether register `r` may be read at or after `pc` before being written.
    pub(crate) fn live(&self, pc: u32, r: usize) -> bool {
        let at = pc as usize * self.words + r / 64;
        self.bits.get(at).is_some_and(|w| w & (1 << (r % 64)) != 0)
    }
}

/// Whether `inst` certainly writes its first operand (a register or a list of registers),
/// when it runs.
fn writes(inst: &Inst) -> bool {
    inst.op.computes()
        || matches!(
            inst.op,
            Op::Ld | Op::Float { .. } | Op::Texture | Op::Activemask
        )
}

/// The registers operand `o` names (a list's elements, a memory operand's base).
pub(crate) fn registers(ir: &Ir, o: Opnd, out: &mut Vec<usize>) {
    match o {
        Opnd::Reg(r) | Opnd::NotReg(r) | Opnd::Mem(MemBase::Reg(r), _) => out.push(r.index()),
        Opnd::List(s, n) => {
            for &x in ir.list(s, n) {
                registers(ir, x, out);
            }
        }
        _ => {}
    }
}

/// Whether operand `k` of `inst` is the address of an explicit `.global` load, store or
/// atomic (`ld`/`ldu`, `st`, `atom`, `red`) through a register.
pub(crate) fn global_address_operand(inst: &Inst, k: usize, o: Opnd) -> bool {
    let address = match inst.op {
        Op::Ld | Op::Atom(_) => k == 1,
        Op::St | Op::RedMem(_) => k == 0,
        _ => false,
    };
    address && inst.space == Space::Global && matches!(o, Opnd::Mem(MemBase::Reg(_), _))
}

/// Per register: whether the emulator's behaviour never depends on its value. Every use of
/// such a register is the address of an explicit `.global` load, store or atomic, or an
/// operand of an arithmetic instruction ([`Op::computes`], guarded or not) whose
/// destinations are all such registers (a global pointer and the offsets it advances by).
/// A `.global` access records nothing and its result is unknown whatever its address,
/// unless the address lies in the window of initialized module data the emulator reads
/// (`crate::ir::DataLayout`): a module with any such variable gets no such register. The
/// largest set closed under these rules (a greatest fixpoint: start with every register,
/// drop each that has another use, until nothing changes).
pub(crate) fn global_address_registers(ir: &Ir) -> Vec<bool> {
    let n = ir.reg_names.len();
    if !ir.data.vars.is_empty() {
        return vec![false; n];
    }
    let mut keep = vec![true; n];
    let mut regs = Vec::new();
    let mut dests = Vec::new();
    loop {
        let mut changed = false;
        let mut drop = |r: usize, keep: &mut Vec<bool>| {
            if let Some(k) = keep.get_mut(r)
                && *k
            {
                *k = false;
                changed = true;
            }
        };
        for inst in &ir.insts {
            let ops = ir.operands(inst);
            if let Some(g) = inst.guard {
                drop(g.index(), &mut keep);
            }
            let computes = inst.op.computes();
            dests.clear();
            if computes && let Some(&d) = ops.first() {
                registers(ir, d, &mut dests);
            }
            let into_kept =
                computes && dests.iter().all(|&d| keep.get(d).copied().unwrap_or(false));
            let defines = writes(inst);
            for (k, &o) in ops.iter().enumerate() {
                // A destination is written, not used.
                if defines && k == 0 {
                    continue;
                }
                if global_address_operand(inst, k, o) {
                    continue;
                }
                regs.clear();
                registers(ir, o, &mut regs);
                for &r in &regs {
                    if !into_kept {
                        drop(r, &mut keep);
                    }
                }
            }
        }
        if !changed {
            return keep;
        }
    }
}

/// Computes the live registers of every instruction of `ir` that the induction compares:
/// registers whose value nothing the emulator does depends on
/// ([`global_address_registers`]: global pointers) are never live. The liger LayerNorm
/// backward's row pointers advance by a stride that is a kernel input, a term that differs
/// at every trip, and made every period differ.
pub(crate) fn liveness(ir: &Ir) -> Liveness {
    let n = ir.insts.len();
    let words = ir.reg_names.len().div_ceil(64).max(1);
    let mut uses = vec![0u64; n * words];
    let mut defs = vec![0u64; n * words];
    let set = |v: &mut [u64], pc: usize, r: usize| v[pc * words + r / 64] |= 1 << (r % 64);
    let ignored = global_address_registers(ir);
    let mut regs = Vec::new();
    for (pc, inst) in ir.insts.iter().enumerate() {
        let ops = ir.operands(inst);
        let kills = inst.guard.is_none() && writes(inst);
        for (k, &o) in ops.iter().enumerate() {
            regs.clear();
            registers(ir, o, &mut regs);
            let is_def = k == 0 && kills && matches!(o, Opnd::Reg(_) | Opnd::List(..));
            for &r in &regs {
                if ignored.get(r).copied().unwrap_or(false) {
                    continue;
                }
                if is_def {
                    set(&mut defs, pc, r);
                } else {
                    set(&mut uses, pc, r);
                }
            }
        }
        if let Some(g) = inst.guard {
            set(&mut uses, pc, g.index());
        }
    }
    // Predecessors, for the worklist.
    let succs: Vec<Vec<usize>> = (0..n)
        .map(|pc| {
            ir.successors(Pc(pc as u32))
                .into_iter()
                .flatten()
                .map(|s| s.index())
                .filter(|&s| s < n)
                .collect()
        })
        .collect();
    let mut preds = vec![Vec::new(); n];
    for (pc, ss) in succs.iter().enumerate() {
        for &s in ss {
            preds[s].push(pc);
        }
    }
    let mut live = uses.clone();
    let mut work: Vec<usize> = (0..n).collect();
    let mut queued = vec![true; n];
    let mut out = vec![0u64; words];
    while let Some(pc) = work.pop() {
        queued[pc] = false;
        out.iter_mut().for_each(|w| *w = 0);
        for &s in &succs[pc] {
            for (w, x) in out.iter_mut().zip(&live[s * words..(s + 1) * words]) {
                *w |= x;
            }
        }
        let mut changed = false;
        for k in 0..words {
            let v = uses[pc * words + k] | (out[k] & !defs[pc * words + k]);
            if v != live[pc * words + k] {
                live[pc * words + k] = v;
                changed = true;
            }
        }
        if changed {
            for &p in &preds[pc] {
                if !queued[p] {
                    queued[p] = true;
                    work.push(p);
                }
            }
        }
    }
    Liveness { words, bits: live }
}
