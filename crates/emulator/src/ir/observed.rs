//! Registers whose unknown values can be *observed*: read by something other than a pure
//! computation of another register that cannot be observed either (a flow-insensitive,
//! backward closure over the kernel's register names).
//!
//! The emulator builds a term (a function of the kernel's parameter bytes, `exec::terms`)
//! for every unknown result computed from termed operands, because a branch, a shared
//! address or a barrier operand later reading that value may need it. Pointer arithmetic
//! for global memory never reaches any of those: the address of a `.global` load or store
//! with an unknown value only says "global memory" (`exec::memory`), and what a global load
//! returns is a fresh unknown. A result written only to registers that cannot be observed
//! needs no term: its source set alone is kept.
//!
//! *Observers* are every operand and guard of an instruction that is not a pure
//! computation ([`Op::computes`]), except the destination of a load, an opaque float
//! operation, a texture fetch or `activemask` (written, not read) and the address operand
//! of a load or store in the `.global` state space (a store's value is an observer). A
//! pure computation's operands and guard are observed when one of its destination
//! registers is.

use crate::ir::{Inst, Ir, Op, Opnd, Space, global_address_operand, registers};

/// Per instruction: whether it is a pure computation all of whose destination registers
/// cannot be observed (`Ir::unobserved`).
pub(crate) fn unobserved_insts(ir: &Ir) -> Vec<bool> {
    let observed = observed_registers(ir);
    let mut defs = Vec::new();
    ir.insts
        .iter()
        .map(|inst| {
            if !inst.op.computes() {
                return false;
            }
            defs.clear();
            if let Some(&d) = ir.operands(inst).first() {
                registers(ir, d, &mut defs);
            }
            !defs.is_empty()
                && defs
                    .iter()
                    .all(|&r| !observed.get(r).copied().unwrap_or(true))
        })
        .collect()
}

/// A backward closure over register names: registers marked observed, and per register the
/// registers its writers read, which become observed with it.
struct Closure {
    observed: Vec<bool>,
    feeds: Vec<Vec<u32>>,
    work: Vec<usize>,
}

impl Closure {
    fn new(registers: usize) -> Self {
        Closure {
            observed: vec![false; registers],
            feeds: vec![Vec::new(); registers],
            work: Vec::new(),
        }
    }

    /// Register `r` is observed.
    fn mark(&mut self, r: usize) {
        if let Some(o) = self.observed.get_mut(r)
            && !*o
        {
            *o = true;
            self.work.push(r);
        }
    }

    /// The registers `defs` are written from `uses`.
    fn feed(&mut self, defs: &[usize], uses: &[usize]) {
        for &d in defs {
            if let Some(f) = self.feeds.get_mut(d) {
                f.extend(uses.iter().map(|&u| u as u32));
            }
        }
    }

    /// Per register: whether it is observed, once everything that feeds an observed
    /// register is.
    fn close(mut self) -> Vec<bool> {
        while let Some(r) = self.work.pop() {
            for u in std::mem::take(&mut self.feeds[r]) {
                self.mark(u as usize);
            }
        }
        self.observed
    }
}

/// Per register: whether its value can be observed.
fn observed_registers(ir: &Ir) -> Vec<bool> {
    // Fed through the pure computations that write a register.
    let mut closure = Closure::new(ir.reg_names.len());
    let mut defs = Vec::new();
    let mut uses = Vec::new();
    for inst in &ir.insts {
        let ops = ir.operands(inst);
        if inst.op.computes() {
            defs.clear();
            uses.clear();
            for (k, &o) in ops.iter().enumerate() {
                registers(ir, o, if k == 0 { &mut defs } else { &mut uses });
            }
            uses.extend(inst.guard.map(|g| g.index()));
            closure.feed(&defs, &uses);
        } else {
            uses.clear();
            // The destination of a load, an opaque float operation, a texture fetch or
            // `activemask` is written, not read.
            let writes = matches!(
                inst.op,
                Op::Ld | Op::Float { .. } | Op::Texture | Op::Activemask
            );
            for (k, &o) in ops.iter().enumerate() {
                if (k == 0 && writes) || is_global_address(inst, k, o) {
                    continue;
                }
                registers(ir, o, &mut uses);
            }
            uses.extend(inst.guard.map(|g| g.index()));
            for &u in &uses {
                closure.mark(u);
            }
        }
    }
    closure.close()
}

/// Per instruction: whether one of its destination registers may flow, through any
/// instruction that writes registers (not through memory), into the value of a store to
/// shared memory (or a generic one): the only values whose value terms
/// (`crate::Config::value_terms`) the race stage can read. A flow-insensitive, backward
/// closure over the register names; the first operand of every instruction but a store
/// counts as written (an over-approximation for the few that read it).
pub(crate) fn value_observed_insts(ir: &Ir) -> Vec<bool> {
    let mut closure = Closure::new(ir.reg_names.len());
    let (mut defs, mut uses) = (Vec::new(), Vec::new());
    for inst in &ir.insts {
        let ops = ir.operands(inst);
        match inst.op {
            Op::St if matches!(inst.space, Space::Shared | Space::Generic) => {
                uses.clear();
                if let Some(&v) = ops.get(1) {
                    registers(ir, v, &mut uses);
                }
                for &u in &uses {
                    closure.mark(u);
                }
            }
            // A load's value comes from memory, not from its address.
            Op::Ld | Op::St => {}
            _ => {
                defs.clear();
                uses.clear();
                for (k, &o) in ops.iter().enumerate() {
                    registers(ir, o, if k == 0 { &mut defs } else { &mut uses });
                }
                closure.feed(&defs, &uses);
            }
        }
    }
    let observed = closure.close();
    ir.insts
        .iter()
        .map(|inst| {
            defs.clear();
            if let Some(&d) = ir.operands(inst).first() {
                registers(ir, d, &mut defs);
            }
            defs.iter()
                .any(|&r| observed.get(r).copied().unwrap_or(true))
        })
        .collect()
}

/// Whether operand `k` of `inst` is the address of a `.global` load or store
/// ([`global_address_operand`], without the atomics).
fn is_global_address(inst: &Inst, k: usize, o: Opnd) -> bool {
    matches!(inst.op, Op::Ld | Op::St) && global_address_operand(inst, k, o)
}

/// Per instruction: whether it names a destination register of a `tcgen05.ld` (other than
/// the load itself). Such an instruction waits, through the register scoreboard, for the
/// load's data (`exec::tmem`).
pub(crate) fn tmem_register_users(ir: &Ir) -> Vec<bool> {
    let mut loaded = vec![false; ir.reg_names.len()];
    let mut regs = Vec::new();
    for inst in &ir.insts {
        if inst.op == Op::TcgenLd
            && let Some(&d) = ir.operands(inst).first()
        {
            regs.clear();
            registers(ir, d, &mut regs);
            for &r in &regs {
                if let Some(x) = loaded.get_mut(r) {
                    *x = true;
                }
            }
        }
    }
    ir.insts
        .iter()
        .map(|inst| {
            inst.op != Op::TcgenLd
                && ir.operands(inst).iter().any(|&o| {
                    regs.clear();
                    registers(ir, o, &mut regs);
                    regs.iter()
                        .any(|&r| loaded.get(r).copied().unwrap_or(false))
                })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    fn observed(body: &str) -> Vec<(String, bool)> {
        let ir = crate::tests::lower_kernel(".param .u64 p, .param .u32 n", body);
        let obs = super::observed_registers(&ir);
        ir.reg_names.iter().cloned().zip(obs).collect()
    }

    /// Global pointer arithmetic is not observed; what reaches a branch, a shared address
    /// or a value stored to memory is, through pure computations (guards included).
    #[test]
    fn global_pointer_arithmetic_is_not_observed() {
        let got = observed(
            "
    .reg .b64 %rd<8>;
    .reg .b32 %r<8>;
    .reg .pred %p<3>;
    .shared .align 4 .b8 s[256];
    ld.param.u64 %rd1, [p];
    ld.param.u32 %r1, [n];
    mov.u32 %r2, %tid.x;
    mul.wide.u32 %rd2, %r2, 4;
    add.s64 %rd3, %rd1, %rd2;
    ld.global.u32 %r3, [%rd3];
    add.s64 %rd4, %rd3, 256;
    st.global.u32 [%rd4], %r3;
    setp.lt.u32 %p1, %r2, %r1;
    mul.lo.u32 %r4, %r2, 4;
    @%p1 add.u32 %r5, %r4, 0;
    st.shared.u32 [%r5], %r1;
    @%p1 bra DONE;
DONE:
    ret;",
        );
        let of = |name: &str| {
            got.iter()
                .find(|(n, _)| n == name)
                .unwrap_or_else(|| panic!("register {name}"))
                .1
        };
        // The global addresses and the pointer they come from.
        for r in ["%rd1", "%rd2", "%rd3", "%rd4"] {
            assert!(!of(r), "{r} is observed");
        }
        // A value stored to global memory; the shared address, its guard and what they
        // are computed from; the branch predicate.
        for r in ["%r3", "%r5", "%r4", "%p1", "%r2", "%r1"] {
            assert!(of(r), "{r} is not observed");
        }
    }
}
