//! Floating-point contraction: which float `add`s the emulator must not compute.
//!
//! ptxas may fuse a `mul` and an `add` (or `sub`) of floats that carry no rounding modifier
//! into one `fma`, which rounds once where the pair rounds twice (PTX ISA, `mul`: "mul/add
//! sequences with no rounding modifiers may be optimized to use fused-multiply-add
//! instructions on the target device"; LLVM's NVPTX back end emits `add.rn` exactly to
//! forbid it). An unmarked `add` one of whose operands may be such a product therefore has
//! one of two values on the GPU, and the emulator must not pick one: [`uncontract`] turns
//! it back into an opaque [`Op::Float`] (its result unknown, as before the emulator computed
//! floats). A product stays a product through `mov`, `neg`, `selp` and a same-type `cvt` without
//! rounding (ptxas sees through them), and through per-thread memory (`.param` call buffers
//! and `.local`): when a product is stored there, every load from there may be one.

use crate::ir::{FOp, Inst, Ir, Kind, MemBase, Op, Opnd, Space, registers};

/// Whether `inst` moves its source operand unchanged, as ptxas may see it.
fn moves(inst: &Inst) -> bool {
    match inst.op {
        Op::Mov => true,
        Op::FArith { op: FOp::Neg, .. } => true,
        Op::Cvt => {
            inst.ty == inst.ty2
                && inst.ty.kind == Kind::F
                && inst.round == 0
                && !inst.sat
                && !inst.ftz
        }
        _ => false,
    }
}

/// Whether `inst` accesses per-thread memory a product may be forwarded through.
fn per_thread(inst: &Inst, addr: Option<&Opnd>) -> bool {
    matches!(inst.space, Space::Param | Space::Local)
        || matches!(addr, Some(Opnd::Mem(MemBase::Param | MemBase::Local, _)))
}

/// Turns every unmarked float `add` or `sub` of `ir` that reads a register which may hold an
/// unmarked product into [`Op::Float`] (see the module docs). Flow-insensitive over the
/// whole module: a register written anywhere by such a product counts everywhere.
pub(crate) fn uncontract(ir: &mut Ir) {
    let n = ir.reg_names.len();
    let mut product = vec![false; n];
    let mut memory = false;
    let reg = |o: Option<&Opnd>| match o {
        Some(&Opnd::Reg(r)) => Some(r.index()),
        _ => None,
    };
    let mut regs = Vec::new();
    loop {
        let mut changed = false;
        for inst in &ir.insts {
            let ops = ir.operands(inst);
            regs.clear();
            match inst.op {
                Op::FArith {
                    op: FOp::Mul,
                    rn: false,
                } => regs.extend(reg(ops.first())),
                _ if moves(inst) && reg(ops.get(1)).is_some_and(|s| product[s]) => {
                    regs.extend(reg(ops.first()));
                }
                // A selection of a product: ptxas may sink the `add` into both arms.
                Op::Selp if (1..3).any(|i| reg(ops.get(i)).is_some_and(|s| product[s])) => {
                    regs.extend(reg(ops.first()));
                }
                // A load of several registers (`ld.param.v2.f32 {%f1, %f2}`) writes each.
                Op::Ld if memory && per_thread(inst, ops.get(1)) => {
                    if let Some(&d) = ops.first() {
                        registers(ir, d, &mut regs);
                    }
                }
                Op::St if !memory && per_thread(inst, ops.first()) => {
                    if let Some(&s) = ops.get(1) {
                        registers(ir, s, &mut regs);
                    }
                    if regs
                        .iter()
                        .any(|&r| product.get(r).copied().unwrap_or(false))
                    {
                        memory = true;
                        changed = true;
                    }
                    regs.clear();
                }
                _ => {}
            }
            for &d in &regs {
                if let Some(p) = product.get_mut(d)
                    && !*p
                {
                    *p = true;
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    for k in 0..ir.insts.len() {
        let inst = ir.insts[k];
        let Op::FArith {
            op: op @ (FOp::Add | FOp::Sub),
            rn: false,
        } = inst.op
        else {
            continue;
        };
        let ops = ir.operands(&inst);
        if (1..3).any(|i| reg(ops.get(i)).is_some_and(|r| product[r])) {
            ir.insts[k].op = Op::Float {
                pure: true,
                commutes: op.commutes(inst.ty.bits),
            };
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::ir::{FOp, Op};

    /// The ops of the kernel's `add`s, in order.
    fn adds(body: &str) -> Vec<Op> {
        let ir = crate::tests::lower_kernel("", body);
        ir.insts
            .iter()
            .map(|i| i.op)
            .filter(|op| {
                matches!(
                    op,
                    Op::FArith {
                        op: FOp::Add | FOp::Sub,
                        ..
                    } | Op::Float { .. }
                )
            })
            .collect()
    }

    const DECLS: &str = ".reg .f32 %f<12>; .reg .f64 %fd<4>; .reg .b32 %r<4>; .reg .pred %p<2>;";

    #[test]
    fn an_unmarked_add_of_a_product_is_not_computed() {
        let computed = |rn| Op::FArith { op: FOp::Add, rn };
        let opaque = Op::Float {
            pure: true,
            commutes: true,
        };
        // Directly, through `mov` and `neg`, and in the other operand; `add.rn` stays.
        let body = format!(
            "{DECLS}
            mov.f32 %f1, 0f3F800000;
            mul.f32 %f2, %f1, %f1;
            add.f32 %f3, %f2, %f1;
            mov.f32 %f4, %f2;
            neg.f32 %f5, %f4;
            add.f32 %f6, %f1, %f5;
            add.rn.f32 %f7, %f2, %f1;
            mul.rn.f32 %f8, %f1, %f1;
            add.f32 %f9, %f8, %f1;
            add.f32 %f10, %f1, %f1;
            setp.eq.f32 %p1, %f1, %f1;
            selp.f32 %f11, %f2, %f1, %p1;
            add.f32 %f9, %f11, %f1;
            ret;"
        );
        assert_eq!(
            adds(&body),
            [
                opaque,
                opaque,
                computed(true),
                computed(false),
                computed(false),
                opaque
            ]
        );
        // Through a call's parameter buffer: once a product is stored to `.param` memory,
        // every `.param` load may hold one.
        let body = format!(
            "{DECLS}
            .param .b32 buf;
            mov.f32 %f1, 0f3F800000;
            mul.f32 %f2, %f1, %f1;
            st.param.f32 [buf], %f2;
            ld.param.f32 %f3, [buf];
            add.f32 %f4, %f3, %f1;
            ret;"
        );
        assert_eq!(adds(&body), [opaque]);
        // Without the store, a loaded value is no product.
        let body = format!(
            "{DECLS}
            .param .b32 buf;
            mov.f32 %f1, 0f3F800000;
            mul.f32 %f2, %f1, %f1;
            ld.param.f32 %f3, [buf];
            add.f32 %f4, %f3, %f1;
            ret;"
        );
        assert_eq!(adds(&body), [computed(false)]);
        // A double's `sub`, not commutative.
        let body = format!(
            "{DECLS}
            mul.f64 %fd1, %fd2, %fd2;
            sub.f64 %fd3, %fd1, %fd2;
            ret;"
        );
        assert_eq!(
            adds(&body),
            [Op::Float {
                pure: true,
                commutes: false
            }]
        );
    }
}
