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
//! of a load or store in the `.global` state space (a store's value is an observer), but
//! the address of an *input load*, which reads a global input whose variable its address
//! names (`exec::inputs`). A pure computation's operands and guard are observed when one of
//! its destination registers is. Input loads are the weak global loads whose value can
//! *decide* something (a narrower closure, [`Rule::Decisive`]).

use crate::ir::{Inst, Ir, Op, Opnd, Space, global_address_operand, registers};

/// Per instruction: whether it is a pure computation all of whose destination registers
/// cannot be observed (`Ir::unobserved`), and whether it is an *input load*
/// (`Ir::input_loads`): a weak load from global or constant memory ([`is_input_load`]) one
/// of whose destination registers can decide something ([`decisive_registers`]).
pub(crate) fn observed_insts(ir: &Ir) -> (Vec<bool>, Vec<bool>) {
    let decisive = decisive_registers(ir);
    let mut defs = Vec::new();
    let inputs: Vec<bool> = ir
        .insts
        .iter()
        .map(|inst| is_input_load(inst) && dests_in(ir, inst, &decisive, &mut defs).1)
        .collect();
    let observed = closure(ir, Rule::Observed { inputs: &inputs });
    let unobserved = ir
        .insts
        .iter()
        .map(|inst| {
            let (any, seen) = dests_in(ir, inst, &observed, &mut defs);
            inst.op.computes() && any && !seen
        })
        .collect();
    (unobserved, inputs)
}

/// Whether `inst` names a destination register, and whether one of them is in `set`
/// (`defs`: scratch).
fn dests_in(ir: &Ir, inst: &Inst, set: &[bool], defs: &mut Vec<usize>) -> (bool, bool) {
    defs.clear();
    if let Some(&d) = ir.operands(inst).first() {
        registers(ir, d, defs);
    }
    (
        !defs.is_empty(),
        defs.iter().any(|&r| set.get(r).copied().unwrap_or(true)),
    )
}

/// Whether `inst` is a weak load from global or constant memory (or a generic one, which
/// may be either): what it reads is an input of the kernel, which `exec::inputs` gives one
/// symbolic value per address (`docs/semantics.md` §6.5 *Global inputs*).
pub(crate) fn is_input_load(inst: &Inst) -> bool {
    inst.op == Op::Ld
        && !inst.strong
        && matches!(inst.space, Space::Global | Space::Const | Space::Generic)
}

/// Per register: whether its value can *decide* something the emulator records or checks
/// (a branch, a guard, a barrier or mbarrier operand, a shared address, a collective's
/// lane operands…) through pure computations and the addresses of input loads: the
/// observers of [`Rule::Observed`] without the data that only flows to memory, tensor-core
/// math or opaque float operations. Only input loads with such a destination read a
/// symbolic input: the data loads of a GEMM or an attention kernel (millions of addresses)
/// do not. A value that reaches a decision only through shared memory (a scheduler warp
/// that stores what it loaded for the others to read) is not followed: its load reads a
/// plain unknown (`docs/semantics.md` §6.5 *Global inputs*).
fn decisive_registers(ir: &Ir) -> Vec<bool> {
    closure(ir, Rule::Decisive)
}

/// Which operands the closure of [`closure`] starts from.
#[derive(Clone, Copy)]
enum Rule<'a> {
    /// Every operand and guard of an instruction that is not a pure computation, except
    /// the destination of a load, an opaque float operation, a texture fetch or
    /// `activemask` (written, not read) and the address operand of a load or store in the
    /// `.global` state space, but the address of an input load (`inputs`, per instruction).
    Observed { inputs: &'a [bool] },
    /// [`Rule::Observed`]'s observers without the value operand of a store, of a vote, a
    /// match or a reduction (their results over unknown operands have no term), and the
    /// operands of tensor-core math and opaque float operations; an input load's value is
    /// a function of its address, a shuffle's result of its value operand (both fed from
    /// the destination).
    Decisive,
}

/// The backward closure of `rule`'s observers through pure computations.
fn closure(ir: &Ir, rule: Rule<'_>) -> Vec<bool> {
    let mut closure = Closure::new(ir.reg_names.len());
    let mut defs = Vec::new();
    let mut uses = Vec::new();
    let mut fed = Vec::new();
    for (pc, inst) in ir.insts.iter().enumerate() {
        let ops = ir.operands(inst);
        if inst.op.computes() {
            defs.clear();
            uses.clear();
            for (k, &o) in ops.iter().enumerate() {
                registers(ir, o, if k == 0 { &mut defs } else { &mut uses });
            }
            uses.extend(inst.guard.map(|g| g.index()));
            closure.feed(&defs, &uses);
            continue;
        }
        uses.clear();
        fed.clear();
        uses.extend(inst.guard.map(|g| g.index()));
        if let Rule::Decisive = rule
            && matches!(inst.op, Op::TensorCore | Op::Float { .. })
        {
            // Math: its result decides nothing the emulator records (its guard may).
            for &u in &uses {
                closure.mark(u);
            }
            continue;
        }
        // The destination of a load, an opaque float operation, a texture fetch or
        // `activemask` is written, not read.
        let writes = matches!(
            inst.op,
            Op::Ld | Op::Float { .. } | Op::Texture | Op::Activemask
        ) || matches!(rule, Rule::Decisive)
            && matches!(
                inst.op,
                Op::Shfl(_) | Op::Vote(_) | Op::MatchAny | Op::MatchAll | Op::Redux(_)
            );
        let input = is_input_load(inst);
        for (k, &o) in ops.iter().enumerate() {
            if k == 0 && writes {
                continue;
            }
            if is_global_address(inst, k, o) {
                match rule {
                    Rule::Observed { inputs } if inputs.get(pc).copied().unwrap_or(false) => {
                        registers(ir, o, &mut uses)
                    }
                    Rule::Decisive if input => registers(ir, o, &mut fed),
                    _ => {}
                }
                continue;
            }
            if let Rule::Decisive = rule
                && k == 1
            {
                match inst.op {
                    // A stored value decides nothing by itself.
                    Op::St => continue,
                    // A shuffle's result is its value operand's, from another lane.
                    Op::Shfl(_) => {
                        registers(ir, o, &mut fed);
                        continue;
                    }
                    // A vote, match or reduction over unknown operands has no term: what
                    // it decides, no input's value can.
                    Op::Vote(_) | Op::MatchAny | Op::MatchAll | Op::Redux(_) => continue,
                    _ => {}
                }
            }
            registers(ir, o, &mut uses);
        }
        for &u in &uses {
            closure.mark(u);
        }
        if !fed.is_empty() {
            defs.clear();
            if let Some(&d) = ops.first() {
                registers(ir, d, &mut defs);
            }
            if matches!(inst.op, Op::Shfl(_)) {
                // Its second destination, the lane's validity, is not the value's.
                defs.truncate(1);
            }
            closure.feed(&defs, &fed);
        }
    }
    closure.close()
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
        .map(|inst| dests_in(ir, inst, &observed, &mut defs).1)
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
        let (_, inputs) = super::observed_insts(&ir);
        let obs = super::closure(&ir, super::Rule::Observed { inputs: &inputs });
        ir.reg_names.iter().cloned().zip(obs).collect()
    }

    fn of(got: &[(String, bool)], name: &str) -> bool {
        got.iter()
            .find(|(n, _)| n == name)
            .unwrap_or_else(|| panic!("register {name}"))
            .1
    }

    /// A weak global load whose value reaches a branch reads a global input: it is an input
    /// load and its address (the pointer arithmetic) is observed; one whose value reaches
    /// only a shuffle and a store is not, nor is a volatile one.
    #[test]
    fn loads_that_decide_read_inputs() {
        let body = "
    .reg .b64 %rd<8>;
    .reg .b32 %r<12>;
    .reg .pred %p<3>;
    ld.param.u64 %rd1, [p];
    add.s64 %rd2, %rd1, 8;
    ld.global.u32 %r1, [%rd2];
    setp.eq.u32 %p1, %r1, 0;
    add.s64 %rd3, %rd1, 16;
    ld.global.u32 %r2, [%rd3];
    shfl.sync.bfly.b32 %r3|%p2, %r2, 1, 31, -1;
    st.global.u32 [%rd1], %r3;
    add.s64 %rd4, %rd1, 24;
    ld.volatile.global.u32 %r4, [%rd4];
    setp.eq.u32 %p2, %r4, 0;
    @%p2 bra DONE;
    @%p1 bra DONE;
    bar.sync 0;
DONE:
    ret;";
        let ir = crate::tests::lower_kernel(".param .u64 p, .param .u32 n", body);
        let (_, inputs) = super::observed_insts(&ir);
        let loads: Vec<bool> = ir
            .insts
            .iter()
            .zip(&inputs)
            .filter(|(i, _)| i.op == crate::ir::Op::Ld && i.space == crate::ir::Space::Global)
            .map(|(_, &x)| x)
            .collect();
        assert_eq!(loads, [true, false, false]);
        let got = observed(body);
        assert!(of(&got, "%rd2"), "the input load's address is not observed");
        assert!(!of(&got, "%rd3"), "a data load's address is observed");
        assert!(!of(&got, "%rd4"), "a volatile load's address is observed");
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
        let of = |name: &str| of(&got, name);
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
