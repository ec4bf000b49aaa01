//! Assertions: the code that only leads to a trap, and what each `__assertfail` says.
//!
//! nvcc lowers `assert(c)` to a branch on `c` whose failing side sets up the message, file,
//! line and function arguments and calls `__assertfail`, which prints and traps (the call
//! never returns, so nvcc emits no code after it). An instruction is *doomed* when every
//! path from it traps without synchronizing, exiting or calling a function weft does not
//! know: such code decides no synchronization, it only aborts the launch. The emulator takes
//! a branch on an input-dependent predicate whose one side is doomed as an assumption that
//! the assertion holds, and post-dominators are computed over the other side.

use super::{Extern, Ir, MemBase, Op, Opnd, Pc, Space};
use rustc_hash::FxHashMap;

use crate::Assertion;

/// How far back from a `__assertfail` call its argument set-up is searched.
const ARG_SEARCH: u32 = 64;

/// Which instructions are doomed (see the module docs). Least fixpoint: a loop that never
/// reaches a trap is not doomed.
pub(crate) fn doomed(ir: &Ir) -> Vec<bool> {
    let n = ir.insts.len();
    let mut doomed = vec![false; n];
    let mut changed = true;
    while changed {
        changed = false;
        for pc in (0..n).rev() {
            if doomed[pc] {
                continue;
            }
            let Some(inst) = ir.insts.get(pc) else {
                continue;
            };
            let now = if inst.op.traps() && inst.guard.is_none() {
                true
            } else if passes(ir, Pc(pc as u32)) {
                let succ = ir.successors(Pc(pc as u32));
                !succ.is_empty()
                    && succ.iter().all(|&s| {
                        s.is_some_and(|s| doomed.get(s.index()).copied().unwrap_or(false))
                    })
            } else {
                false
            };
            if now {
                doomed[pc] = true;
                changed = true;
            }
        }
    }
    doomed
}

/// Whether a path through `pc` can still be the failing side of an assertion: it does not
/// synchronize, end the thread or call code weft does not see through.
fn passes(ir: &Ir, pc: Pc) -> bool {
    let Some(inst) = ir.insts.get(pc.index()) else {
        return false;
    };
    !ir.syncs(pc)
        && !matches!(
            inst.op,
            Op::Exit
                | Op::Ret
                | Op::Call
                | Op::CallExtern(Extern::Unknown)
                | Op::UnsupportedControl
                | Op::MbarRelaxed
        )
}

/// The conditional branch into the doomed code that ends at the trap `trap` (an assertion's
/// test), if it has one: the guarded `bra` just before the run of doomed instructions that
/// holds `trap` (falling through into it) or one that jumps to its first instruction.
/// `None` for a trap that code which synchronizes or exits leads to.
pub(crate) fn assertion_branch(ir: &Ir, trap: u32) -> Option<u32> {
    let doomed = |pc: u32| ir.doomed.get(pc as usize).copied().unwrap_or(false);
    if !doomed(trap) {
        return None;
    }
    let mut start = trap;
    while start > 0 && doomed(start - 1) {
        start -= 1;
    }
    let guarded_bra = |pc: u32| {
        ir.insts
            .get(pc as usize)
            .is_some_and(|i| i.op == Op::Bra && i.guard.is_some())
    };
    let target = |pc: u32| match ir.insts.get(pc as usize).map(|i| ir.operands(i)) {
        Some([Opnd::Label(l), ..]) => Some(l.0),
        _ => None,
    };
    if start > 0 && guarded_bra(start - 1) && target(start - 1) != Some(start) {
        return Some(start - 1);
    }
    (0..ir.insts.len() as u32).find(|&pc| guarded_bra(pc) && target(pc) == Some(start))
}

/// The traps (`trap`, `__assertfail`) that the doomed code starting at `pc` can reach.
pub(crate) fn traps_from(ir: &Ir, pc: u32) -> Vec<u32> {
    let mut seen = rustc_hash::FxHashSet::default();
    let mut work = vec![Some(Pc(pc))];
    let mut out = Vec::new();
    while let Some(x) = work.pop() {
        let Some(x) = x.filter(|&x| seen.insert(x)) else {
            continue;
        };
        let Some(inst) = ir.insts.get(x.index()) else {
            continue;
        };
        if inst.op.traps() {
            out.push(x.0);
            if inst.guard.is_none() {
                continue;
            }
        }
        work.extend(ir.successors(x));
    }
    out.sort_unstable();
    out
}

/// Decodes every `__assertfail` call site's message, file, line and function.
pub(crate) fn assert_sites(ir: &Ir) -> FxHashMap<u32, Assertion> {
    let mut out = FxHashMap::default();
    for (pc, inst) in ir.insts.iter().enumerate() {
        if inst.op != Op::CallExtern(Extern::AssertFail) {
            continue;
        }
        let pc = pc as u32;
        let ops = ir.operands(inst);
        let args: Vec<Opnd> = ops
            .iter()
            .position(|o| matches!(o, Opnd::Func(_)))
            .and_then(|k| ops.get(k + 1))
            .map_or_else(Vec::new, |o| match o {
                Opnd::List(s, l) => ir.list(*s, *l).to_vec(),
                _ => Vec::new(),
            });
        let arg = |k: usize| args.get(k).and_then(|&a| argument(ir, pc, a));
        let string = |k: usize| {
            arg(k).and_then(|a| {
                let off = a.checked_sub(ir.windows.data)?;
                (off < ir.windows.size)
                    .then(|| ir.data.string(off))
                    .flatten()
            })
        };
        out.insert(
            pc,
            Assertion {
                message: string(0),
                file: string(1),
                line: arg(2).and_then(|l| u32::try_from(l).ok()),
                function: string(3),
            },
        );
    }
    out
}

/// The value a call argument (`param0`, a `.param` buffer of the caller) holds at `call`,
/// when the straight-line code before the call stores a constant or a constant address
/// into it (nvcc: `mov.u64 %rd5, $str; cvta.global.u64 %rd6, %rd5; st.param.b64
/// [param0], %rd6`).
fn argument(ir: &Ir, call: u32, arg: Opnd) -> Option<u64> {
    let Opnd::Mem(MemBase::Param, slot) = arg else {
        return None;
    };
    let start = ir.insts.get(call as usize)?.func;
    let first = ir.funcs.get(start.index()).map_or(0, |f| f.start.0);
    let mut want: Option<Opnd> = None;
    for x in (first..call).rev().take(ARG_SEARCH as usize) {
        let inst = ir.insts.get(x as usize)?;
        if matches!(
            inst.op,
            Op::Bra | Op::BraIdx | Op::Ret | Op::Exit | Op::Call | Op::CallExtern(_) | Op::Trap
        ) {
            return None;
        }
        let ops = ir.operands(inst);
        match want {
            None => {
                if inst.op == Op::St
                    && inst.space == Space::Param
                    && ops.first() == Some(&Opnd::Mem(MemBase::Param, slot))
                {
                    match ops.get(1)? {
                        Opnd::Imm(v) => return Some(*v),
                        r @ Opnd::Reg(_) => want = Some(*r),
                        _ => return None,
                    }
                }
            }
            Some(reg) => {
                if ops.first() != Some(&reg) {
                    continue;
                }
                match (inst.op, ops.get(1)?) {
                    (Op::Mov, Opnd::Imm(v)) => return Some(*v),
                    // Global addresses are generic addresses in the emulator's layout.
                    (Op::Mov, r @ Opnd::Reg(_))
                    | (
                        Op::Cvta {
                            space: Space::Global,
                            ..
                        },
                        r @ Opnd::Reg(_),
                    ) => want = Some(*r),
                    _ => return None,
                }
            }
        }
    }
    None
}
