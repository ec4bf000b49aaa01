//! Validation of the lowered IR, once, before anything runs it: every register, label,
//! function and operand list an instruction names exists, branches stay inside their
//! function, and each instruction whose operands the interpreter indexes has at least as
//! many as it reads. After [`validate`] succeeds, those lookups cannot fail.

use crate::Error;
use crate::ir::{BoolOp, Inst, Ir, MemBase, Op, Opnd, Pc};

/// The number of operands the interpreter reads from an instruction of `op` by position
/// (0 for operations whose operand lists are checked where they are read).
pub(crate) fn min_operands(op: Op) -> usize {
    match op {
        Op::Setp(_, BoolOp::None) => 3,
        Op::Setp(..) => 4,
        Op::Add
        | Op::Sub
        | Op::Mul(_)
        | Op::Div
        | Op::Rem
        | Op::Min
        | Op::Max
        | Op::And
        | Op::Or
        | Op::Xor
        | Op::Shl
        | Op::Shr
        | Op::Mapa => 3,
        Op::Mad(_) | Op::Bfe | Op::Prmt | Op::Selp | Op::Slct => 4,
        Op::Bfi | Op::Lop3 => 5,
        Op::Mov
        | Op::Abs
        | Op::Neg
        | Op::Not
        | Op::Cnot
        | Op::Brev
        | Op::Popc
        | Op::Clz
        | Op::Bfind { .. }
        | Op::Cvt
        | Op::Cvta { .. }
        | Op::Isspacep(_)
        | Op::Ld
        | Op::St
        | Op::BraIdx => 2,
        Op::Bra | Op::WarpSync => 1,
        Op::ClcTryCancel | Op::ClcIsCanceled | Op::ClcFirstCtaid | Op::TensormapReplace => 2,
        Op::TensormapCopy => 3,
        Op::FArith { op, .. } => 1 + op.sources(),
        _ => 0,
    }
}

/// Checks `ir` (see the module docs). The error names the PTX line of the first offending
/// instruction.
pub(crate) fn validate(ir: &Ir) -> Result<(), Error> {
    for (pc, inst) in ir.insts.iter().enumerate() {
        check(ir, Pc(pc as u32), inst).map_err(|message| Error::Lowering {
            line: ir.sources.sites.get(pc).map_or(0, |s| s.ptx_line),
            message,
        })?;
    }
    Ok(())
}

fn check(ir: &Ir, pc: Pc, inst: &Inst) -> Result<(), String> {
    let opcode = ir.sources.sites.get(pc.index()).map_or("?", |s| &s.opcode);
    let func = ir
        .funcs
        .get(inst.func.index())
        .ok_or_else(|| format!("`{opcode}` belongs to no function"))?;
    if !(func.start <= pc && pc < func.end) {
        return Err(format!("`{opcode}` lies outside its function"));
    }
    let end = inst.ops as usize + usize::from(inst.nops);
    let ops = ir
        .opnds
        .get(inst.ops as usize..end)
        .ok_or_else(|| format!("`{opcode}` names operands that do not exist"))?;
    let need = min_operands(inst.op);
    if ops.len() < need {
        return Err(format!(
            "`{opcode}` takes at least {need} operands, found {}",
            ops.len()
        ));
    }
    if let Some(g) = inst.guard {
        register(ir, g.index(), opcode)?;
    }
    for &o in ops {
        operand(ir, o, func.start..func.end, opcode)?;
        if let Opnd::List(s, n) = o {
            let list = ir
                .opnds
                .get(s as usize..s as usize + n as usize)
                .ok_or_else(|| format!("`{opcode}` names an operand list that does not exist"))?;
            for &x in list {
                operand(ir, x, func.start..func.end, opcode)?;
            }
        }
    }
    match inst.op {
        Op::Bra if !matches!(ops.first(), Some(Opnd::Label(_))) => {
            Err(format!("`{opcode}` has no label to branch to"))
        }
        Op::BraIdx => match ops.get(1) {
            Some(&Opnd::List(s, n))
                if ir.list(s, n).iter().all(|o| matches!(o, Opnd::Label(_))) =>
            {
                Ok(())
            }
            _ => Err(format!("`{opcode}` has no table of labels")),
        },
        _ => Ok(()),
    }
}

/// Checks one operand (not the members of a list).
fn operand(ir: &Ir, o: Opnd, body: std::ops::Range<Pc>, opcode: &str) -> Result<(), String> {
    match o {
        Opnd::Reg(r) | Opnd::NotReg(r) | Opnd::Mem(MemBase::Reg(r), _) => {
            register(ir, r.index(), opcode)
        }
        Opnd::Mem(MemBase::KernelParam(i), _) if i as usize >= ir.kernel_params.len() => Err(
            format!("`{opcode}` names kernel parameter {i}, which does not exist"),
        ),
        Opnd::Label(target) if !body.contains(&target) => Err(format!(
            "`{opcode}` branches to instruction {}, outside its function",
            target.0
        )),
        Opnd::Func(f) if f.index() >= ir.funcs.len() => Err(format!(
            "`{opcode}` calls function {}, which does not exist",
            f.0
        )),
        _ => Ok(()),
    }
}

fn register(ir: &Ir, r: usize, opcode: &str) -> Result<(), String> {
    if r < ir.reg_names.len() {
        Ok(())
    } else {
        Err(format!(
            "`{opcode}` names register {r}, which does not exist"
        ))
    }
}
