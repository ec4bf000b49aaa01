//! Decoding an instruction's opcode and modifiers into an [`Op`] and its types.

use crate::ir::{
    AtomOp, BoolOp, Cmp, FOp, Kind, MulMode, Op, RedKind, ReduxOp, ShflMode, Space, Sreg, Ty,
    VoteMode, WmmaMem,
};
use ptx_parser::ast::{Instruction, Operand};
use rustc_hash::FxHashSet;
use weft_program::BarrierOp;

pub(super) fn parse_ty(m: &str) -> Option<Ty> {
    let (kind, bits) = match m {
        "pred" => {
            return Some(Ty {
                bits: 1,
                kind: Kind::Pred,
            });
        }
        "f16x2" | "bf16x2" => {
            return Some(Ty {
                bits: 32,
                kind: Kind::F,
            });
        }
        // Two packed `.f32` values in a `.b64` register (sm_100's `add`, `mul`, `fma`).
        // Unparsed, `add.rn.f32x2` read as an integer `add` of no type, whose known result
        // was 0.
        "f32x2" => {
            return Some(Ty {
                bits: 64,
                kind: Kind::F,
            });
        }
        "bf16" => {
            return Some(Ty {
                bits: 16,
                kind: Kind::F,
            });
        }
        "tf32" => {
            return Some(Ty {
                bits: 32,
                kind: Kind::F,
            });
        }
        _ => {
            let kind = match m.as_bytes().first()? {
                b'b' => Kind::B,
                b'u' => Kind::U,
                b's' => Kind::S,
                b'f' => Kind::F,
                _ => return None,
            };
            (kind, m.get(1..)?.parse::<u8>().ok()?)
        }
    };
    matches!(bits, 8 | 16 | 32 | 64 | 128).then_some(Ty { bits, kind })
}

pub(super) fn parse_space(m: &str) -> Option<Space> {
    let base = m.split("::").next().unwrap_or(m);
    Some(match base {
        "shared" => Space::Shared,
        "global" => Space::Global,
        "local" => Space::Local,
        "param" => Space::Param,
        "const" => Space::Const,
        "tex" => Space::Tex,
        _ => return None,
    })
}

fn dim(s: &str) -> Option<u8> {
    match s {
        "x" => Some(0),
        "y" => Some(1),
        "z" => Some(2),
        _ => None,
    }
}

pub(super) fn parse_sreg(name: &str) -> Option<Sreg> {
    let (base, comp) = match name.split_once('.') {
        Some((b, c)) => (b, Some(c)),
        None => (name, None),
    };
    let d = comp.and_then(dim);
    Some(match (base, d) {
        ("%tid", Some(d)) => Sreg::Tid(d),
        ("%ntid", Some(d)) => Sreg::Ntid(d),
        ("%ctaid", Some(d)) => Sreg::Ctaid(d),
        ("%nctaid", Some(d)) => Sreg::Nctaid(d),
        ("%clusterid", Some(d)) => Sreg::Ctaid(d),
        ("%nclusterid", Some(d)) => Sreg::Nctaid(d),
        ("%cluster_ctaid", Some(d)) => Sreg::ClusterCtaid(d),
        ("%cluster_nctaid", Some(d)) => Sreg::ClusterNctaid(d),
        ("%laneid", None) => Sreg::Laneid,
        ("%lanemask_eq", None) => Sreg::LanemaskEq,
        ("%lanemask_lt", None) => Sreg::LanemaskLt,
        ("%lanemask_le", None) => Sreg::LanemaskLe,
        ("%lanemask_gt", None) => Sreg::LanemaskGt,
        ("%lanemask_ge", None) => Sreg::LanemaskGe,
        ("%dynamic_smem_size", None) => Sreg::DynSmem,
        ("%total_smem_size", None) => Sreg::TotalSmem,
        ("%cluster_ctarank", None) => Sreg::ClusterCtarank,
        ("%cluster_nctarank", None) => Sreg::ClusterNctarank,
        ("%is_explicit_cluster", None) => Sreg::IsExplicitCluster,
        ("%clock" | "%clock64" | "%globaltimer" | "%globaltimer_lo" | "%globaltimer_hi", _) => {
            Sreg::Clock
        }
        ("%warpid", None) => Sreg::Unknown("%warpid"),
        ("%nwarpid", None) => Sreg::Unknown("%nwarpid"),
        ("%smid", None) => Sreg::Unknown("%smid"),
        ("%nsmid", None) => Sreg::Unknown("%nsmid"),
        ("%gridid", None) => Sreg::Unknown("%gridid"),
        _ if base.starts_with("%envreg") => Sreg::Unknown("%envreg"),
        _ if base.starts_with("%pm") => Sreg::Unknown("%pm (performance counter)"),
        _ if base.starts_with("%reserved_smem") => Sreg::Unknown("%reserved_smem"),
        _ => return None,
    })
}

pub(super) struct Decoded {
    pub op: Op,
    pub ty: Ty,
    pub ty2: Ty,
    pub vec: u8,
    pub space: Space,
    pub aligned: bool,
    pub sat: bool,
    pub round: u8,
    pub ftz: bool,
    pub strong: bool,
}

/// An instruction's modifiers, parsed once.
struct Mods<'i> {
    /// Type modifiers in order (`cvt.u32.u64`: destination then source).
    types: Vec<Ty>,
    ty: Ty,
    float: bool,
    /// The first state-space modifier (generic when none).
    space: Space,
    first_mod: &'i str,
    mul_mode: MulMode,
    carry: bool,
    has: FxHashSet<&'i str>,
}

impl Mods<'_> {
    fn h(&self, m: &str) -> bool {
        self.has.contains(m)
    }
}

/// Decodes `inst`'s opcode and modifiers.
pub(super) fn decode(inst: &Instruction<'_>) -> Decoded {
    let mut types = Vec::new();
    let mut space = Space::Generic;
    let mut vec = 1u8;
    let mut sat = false;
    let mut round = 0u8;
    let mut has = FxHashSet::default();
    let mut first_mod = "";
    for (k, m) in inst.modifiers().enumerate() {
        if k == 0 {
            first_mod = m;
        }
        if let Some(t) = parse_ty(m) {
            types.push(t);
        } else if let Some(s) = parse_space(m) {
            if space == Space::Generic {
                space = s;
            }
        } else {
            match m {
                "v2" => vec = 2,
                "v4" => vec = 4,
                "v8" => vec = 8,
                "sat" => sat = true,
                "rzi" | "rz" => round = 1,
                "rmi" | "rm" => round = 2,
                "rpi" | "rp" => round = 3,
                "rni" => round = 4,
                _ => {}
            }
        }
        has.insert(m);
    }
    let ty = types.first().copied().unwrap_or(Ty::NONE);
    let ty2 = types.get(1).copied().unwrap_or(ty);
    let mul_mode = if has.contains("wide") {
        MulMode::Wide
    } else if has.contains("hi") {
        MulMode::Hi
    } else {
        MulMode::Lo
    };
    let m = Mods {
        float: ty.kind == Kind::F,
        carry: has.contains("cc"),
        types,
        ty,
        space,
        first_mod,
        mul_mode,
        has,
    };
    let op = decode_op(inst, &m);
    let has = m.has;
    // Integer ops the emulator evaluates must not be floats; the few that take no type
    // (bra, call, …) leave `ty` empty.
    Decoded {
        op,
        ty,
        ty2,
        vec,
        space,
        aligned: inst.opcode == "bar" || has.contains("aligned"),
        sat,
        round,
        ftz: has.contains("ftz"),
        strong: ["volatile", "relaxed", "acquire", "release", "mmio"]
            .iter()
            .any(|s| has.contains(s)),
    }
}

/// The [`Op`] of `inst` (opcode and modifiers), by family.
fn decode_op(inst: &Instruction<'_>, m: &Mods<'_>) -> Op {
    match inst.opcode {
        "mov" | "add" | "sub" | "mul" | "mad" | "div" | "rem" | "abs" | "neg" | "min" | "max"
        | "and" | "or" | "xor" | "not" | "cnot" | "shl" | "shr" | "bfe" | "bfi" | "brev"
        | "popc" | "clz" | "bfind" | "prmt" | "lop3" | "setp" | "selp" | "slct" | "cvt" => {
            arith(inst, m)
        }
        "cvta" | "isspacep" | "mapa" | "ld" | "ldu" | "st" | "atom" | "red" | "ldmatrix"
        | "stmatrix" => memory(inst, m),
        "bra" | "brx" | "call" | "ret" | "exit" | "trap" | "brkpt" => control(inst),
        "bar" | "barrier" | "shfl" | "vote" | "match" | "activemask" | "elect" | "redux"
        | "mbarrier" => sync(inst, m),
        "cp" => cp(inst, m),
        "clusterlaunchcontrol" => clc(inst),
        "fma" | "rcp" | "sqrt" if let Some(op) = farith(inst, m) => op,
        "fma" | "rcp" | "sqrt" | "rsqrt" | "sin" | "cos" | "lg2" | "ex2" | "tanh" | "testp"
        | "copysign" | "dp4a" | "dp2a" | "fns" | "bmsk" | "szext" | "createpolicy"
        | "getctarank" | "cvt.pack" | "set" | "mul24" | "mad24" | "sad" | "vadd" | "vsub"
        | "vmad" | "vabsdiff" | "vmin" | "vmax" | "vshl" | "vshr" | "vset" | "istypep" => {
            Op::Float {
                pure: true,
                commutes: inst.opcode == "fma" && (m.h("f32") || m.h("f32x2")),
            }
        }
        // They read the carry flag.
        "addc" | "subc" | "madc" => Op::Float {
            pure: false,
            commutes: false,
        },
        "tex" | "tld4" | "txq" | "suld" | "suq" | "sured" | "sust" => Op::Texture,
        // `tcgen05.commit` arrives on an mbarrier once the thread's prior tcgen05 operations
        // complete: an arrival like `cp.async.mbarrier.arrive.noinc` (the multicast form
        // signals other CTAs of the cluster, which weft does not model).
        "tcgen05" if m.h("commit") => {
            if inst
                .modifiers()
                .any(|x| x.starts_with("mbarrier::arrive::one"))
                && !inst.modifiers().any(|x| x.starts_with("multicast"))
            {
                Op::TcgenCommitArrive
            } else {
                Op::UnsupportedControl
            }
        }
        // Tensor-core operations with shared-memory operands read through descriptors, and
        // the `wgmma` groups that complete them (`exec::tensor`). `wgmma.fence` orders
        // register accesses only: it stays `TensorCore` (never the fast path's no-op), so
        // the warpgroup alignment check sees it.
        "wgmma" if m.h("mma_async") => Op::WgmmaMma,
        "wgmma" if m.h("commit_group") => Op::WgmmaCommit,
        "wgmma" if m.h("wait_group") => Op::WgmmaWait,
        "tcgen05" if m.h("mma") => Op::TcgenMma,
        "tcgen05" if m.h("cp") => Op::TcgenCp,
        // `tcgen05.ld.red` also reduces into an extra destination: not modelled.
        "tcgen05" if m.h("ld") && m.h("red") => Op::Unsupported,
        "tcgen05" if m.h("ld") => Op::TcgenLd,
        "tcgen05" if m.h("st") => Op::TcgenSt,
        "tcgen05" if m.h("wait::ld") => Op::TcgenWait { st: false },
        "tcgen05" if m.h("wait::st") => Op::TcgenWait { st: true },
        // `tcgen05.shift` moves rows of tensor memory: its accesses are not modelled.
        "tcgen05" if m.h("shift") => Op::Unsupported,
        "tcgen05" if m.h("alloc") => Op::TcgenAlloc,
        "tcgen05" if m.h("dealloc") => Op::TcgenDealloc,
        "tcgen05" if m.h("relinquish_alloc_permit") => Op::TcgenRelinquish,
        "wmma" if m.h("load") || m.h("store") => wmma_mem(inst, m),
        "mma" | "wgmma" | "wmma" | "tcgen05" | "movmatrix" => Op::TensorCore,
        "fence"
            if m.h("proxy")
                && !m.h("global")
                && inst.modifiers().any(|x| x.starts_with("async")) =>
        {
            Op::ProxyFence
        }
        // A tensor map in shared memory: `tensormap.replace` writes it, `cp_fenceproxy`
        // copies it to global memory (reads it). Other forms on shared memory are not
        // modelled. In global memory they touch nothing weft checks.
        "tensormap" if inst.modifiers().any(|x| x.starts_with("shared")) => {
            if m.h("replace") {
                Op::TensormapReplace
            } else if m.h("cp_fenceproxy") {
                Op::TensormapCopy
            } else {
                Op::Unsupported
            }
        }
        "membar" | "fence" | "prefetch" | "prefetchu" | "setmaxnreg" | "griddepcontrol"
        | "nanosleep" | "pmevent" | "discard" | "applypriority" | "tensormap" => Op::Skip,
        _ => Op::UnsupportedControl,
    }
}

/// The [`Op::FArith`] of a floating-point instruction the emulator computes: an IEEE
/// operation on one `.f32` or `.f64` type (no packed or half-precision form), rounded to
/// nearest even (`.rn`, or no rounding modifier where PTX gives it that meaning: `add`,
/// `sub`, `mul`; `neg` and `abs` do not round). Directed rounding (`.rz`, `.rm`, `.rp`),
/// `.approx` and `.full` forms, `min`/`max` and the rest are not computed (`None`).
fn farith(inst: &Instruction<'_>, m: &Mods<'_>) -> Option<Op> {
    // Named `.f32` or `.f64` (`.f16x2`, `.bf16x2`, `.tf32`, `.f32x2` share those widths).
    let scalar = m.ty.bits == 32 && m.h("f32") || m.ty.bits == 64 && m.h("f64");
    if m.ty.kind != Kind::F || !scalar || m.types.len() != 1 {
        return None;
    }
    let rn = m.h("rn");
    let directed = m.h("rz") || m.h("rm") || m.h("rp");
    if directed || m.h("approx") || m.h("full") || m.h("relu") || m.h("oob") {
        return None;
    }
    let op = match inst.opcode {
        "add" => FOp::Add,
        "sub" => FOp::Sub,
        "mul" => FOp::Mul,
        // `fma` and `mad` of floats take a rounding modifier (`mad.f32` without one is the
        // sm_1x form, not computed).
        "fma" | "mad" if rn => FOp::Fma,
        "div" if rn => FOp::Div,
        "sqrt" if rn => FOp::Sqrt,
        "rcp" if rn => FOp::Rcp,
        "neg" => FOp::Neg,
        "abs" => FOp::Abs,
        _ => return None,
    };
    Some(Op::FArith { op, rn })
}

/// Integer arithmetic, bit operations, comparisons, selects and conversions.
fn arith(inst: &Instruction<'_>, m: &Mods<'_>) -> Op {
    match inst.opcode {
        "mov" => Op::Mov,
        "add" | "sub" | "mul" | "mad" | "div" | "rem" | "abs" | "neg" | "min" | "max"
            if m.float =>
        {
            if let Some(op) = farith(inst, m) {
                return op;
            }
            Op::Float {
                pure: true,
                commutes: matches!(inst.opcode, "add" | "mul" | "mad" | "min" | "max")
                    && (m.h("f32") || m.h("f32x2")),
            }
        }
        "add" | "sub" | "mad" if m.carry => Op::Unsupported,
        "add" => Op::Add,
        "sub" => Op::Sub,
        "mul" => Op::Mul(m.mul_mode),
        "mad" => Op::Mad(m.mul_mode),
        "div" => Op::Div,
        "rem" => Op::Rem,
        "abs" => Op::Abs,
        "neg" => Op::Neg,
        "min" => Op::Min,
        "max" => Op::Max,
        "and" => Op::And,
        "or" => Op::Or,
        "xor" => Op::Xor,
        "not" => Op::Not,
        "cnot" => Op::Cnot,
        "shl" => Op::Shl,
        "shr" => Op::Shr,
        "bfe" => Op::Bfe,
        "bfi" => Op::Bfi,
        "brev" => Op::Brev,
        "popc" => Op::Popc,
        "clz" => Op::Clz,
        "bfind" => Op::Bfind {
            shiftamt: m.h("shiftamt"),
        },
        "prmt" => {
            if inst
                .modifiers()
                .any(|m| matches!(m, "f4e" | "b4e" | "rc8" | "ecl" | "ecr" | "rc16"))
            {
                Op::Unsupported
            } else {
                Op::Prmt
            }
        }
        "lop3" => Op::Lop3,
        "setp" => {
            let cmp = match m.first_mod {
                "eq" => Some(Cmp::Eq),
                "ne" => Some(Cmp::Ne),
                "lt" => Some(Cmp::Lt),
                "le" => Some(Cmp::Le),
                "gt" => Some(Cmp::Gt),
                "ge" => Some(Cmp::Ge),
                "lo" => Some(Cmp::Lo),
                "ls" => Some(Cmp::Ls),
                "hi" => Some(Cmp::Hi),
                "hs" => Some(Cmp::Hs),
                "equ" => Some(Cmp::Equ),
                "neu" => Some(Cmp::Neu),
                "ltu" => Some(Cmp::Ltu),
                "leu" => Some(Cmp::Leu),
                "gtu" => Some(Cmp::Gtu),
                "geu" => Some(Cmp::Geu),
                "num" => Some(Cmp::Num),
                "nan" => Some(Cmp::Nan),
                _ => None,
            };
            let b = if m.h("and") {
                BoolOp::And
            } else if m.h("or") {
                BoolOp::Or
            } else if m.h("xor") {
                BoolOp::Xor
            } else {
                BoolOp::None
            };
            match cmp {
                Some(c) if m.ty.bits <= 64 && !(m.float && m.ty.bits < 32) => Op::Setp(c, b),
                // Half-precision comparisons: the predicate is unknown.
                Some(_) if m.float => Op::Float {
                    pure: true,
                    commutes: false,
                },
                _ => Op::Unsupported,
            }
        }
        "selp" => Op::Selp,
        "slct" => Op::Slct,
        "cvt" => {
            if m.h("pack")
                || m.ty.bits == 128
                || m.types.iter().any(|t| t.kind == Kind::F && t.bits == 16)
                || m.h("f16x2")
                || m.h("bf16x2")
                || m.h("bf16")
                || m.h("tf32")
                || m.h("e4m3x2")
                || m.h("e5m2x2")
                // Forms whose results `cvt` does not compute: ReLU clamping, saturation to
                // the finite range.
                || m.h("relu")
                || m.h("satfinite")
            {
                Op::Float {
                    pure: true,
                    commutes: false,
                }
            } else {
                Op::Cvt
            }
        }
        _ => Op::UnsupportedControl,
    }
}

/// Address conversions, loads, stores, atomics and matrix loads.
fn memory(inst: &Instruction<'_>, m: &Mods<'_>) -> Op {
    match inst.opcode {
        "cvta" => Op::Cvta {
            to: m.h("to"),
            space: m.space,
        },
        "isspacep" => Op::Isspacep(m.space),
        "mapa" => Op::Mapa,
        "ld" | "ldu" => match m.space {
            Space::Tex => Op::Texture,
            _ => Op::Ld,
        },
        "st" => {
            if m.h("async") {
                Op::UnsupportedControl
            } else {
                Op::St
            }
        }
        "atom" => Op::Atom(AtomOp::Other),
        "red" => {
            if m.h("async") {
                Op::UnsupportedControl
            } else {
                Op::RedMem(AtomOp::Other)
            }
        }
        "ldmatrix" | "stmatrix" => {
            let num = if m.h("x4") {
                4
            } else if m.h("x2") {
                2
            } else {
                1
            };
            if inst.opcode == "ldmatrix" {
                Op::Ldmatrix(num)
            } else {
                Op::Stmatrix(num)
            }
        }
        _ => Op::UnsupportedControl,
    }
}

/// `wmma.load.{a,b,c}` and `wmma.store.d` (PTX ISA, *Matrix Storage for WMMA*): matrix `a`
/// is M×K, `b` K×N, `c` and `d` M×N for the shape `.mMnNkK`; in `.row` layout the leading
/// dimension is a row, in `.col` a column. A form weft does not know is unsupported (the
/// kernel is unverifiable), never skipped.
fn wmma_mem(inst: &Instruction<'_>, m: &Mods<'_>) -> Op {
    let store = m.h("store");
    let shape = inst.modifiers().find_map(|x| {
        let rest = x.strip_prefix('m')?;
        let (mm, rest) = rest.split_once('n')?;
        let (nn, kk) = rest.split_once('k')?;
        Some((
            mm.parse::<u32>().ok()?,
            nn.parse::<u32>().ok()?,
            kk.parse::<u32>().ok()?,
        ))
    });
    let ebits = inst.modifiers().find_map(|x| match x {
        "f16" | "bf16" => Some(16),
        "f32" | "s32" | "tf32" => Some(32),
        "f64" => Some(64),
        "s8" | "u8" => Some(8),
        "s4" | "u4" => Some(4),
        "b1" => Some(1),
        _ => None,
    });
    let row = m.h("row");
    let col = m.h("col");
    let (Some((mm, nn, kk)), Some(ebits)) = (shape, ebits) else {
        return Op::Unsupported;
    };
    let dims = if store {
        m.h("d").then_some((mm, nn))
    } else if m.h("a") {
        Some((mm, kk))
    } else if m.h("b") {
        Some((kk, nn))
    } else if m.h("c") {
        Some((mm, nn))
    } else {
        None
    };
    let Some((rows, cols)) = dims else {
        return Op::Unsupported;
    };
    let (instances, len) = match (row, col) {
        (true, false) => (rows, cols),
        (false, true) => (cols, rows),
        _ => return Op::Unsupported,
    };
    match (u8::try_from(instances), u8::try_from(len)) {
        (Ok(instances), Ok(len)) if instances > 0 && len > 0 => Op::Wmma(WmmaMem {
            store,
            instances,
            len,
            ebits,
        }),
        _ => Op::Unsupported,
    }
}

/// Branches, calls, returns, exits and traps.
fn control(inst: &Instruction<'_>) -> Op {
    match inst.opcode {
        "bra" => Op::Bra,
        "brx" if inst.has_modifier("idx") => Op::BraIdx,
        "brx" => Op::UnsupportedControl,
        "call" => {
            if inst.operands.iter().any(|o| matches!(o, Operand::Reg(_)))
                && !inst
                    .operands
                    .iter()
                    .any(|o| matches!(o, Operand::Symbol { .. }))
            {
                Op::UnsupportedControl
            } else {
                Op::Call
            }
        }
        "ret" => Op::Ret,
        "exit" => Op::Exit,
        "trap" | "brkpt" => Op::Trap,
        _ => Op::UnsupportedControl,
    }
}

/// Cluster launch control (PTX ISA: *clusterlaunchcontrol.try_cancel*,
/// *clusterlaunchcontrol.query_cancel*). A request must complete on an mbarrier; the
/// multicast form writes the answer to every CTA of the cluster, which is this CTA alone.
fn clc(inst: &Instruction<'_>) -> Op {
    let mods: Vec<&str> = inst.modifiers().collect();
    let has = |m: &str| mods.contains(&m);
    if has("try_cancel") && has("async") && has("mbarrier::complete_tx::bytes") {
        Op::ClcTryCancel
    } else if has("query_cancel") && has("is_canceled") {
        Op::ClcIsCanceled
    } else if has("query_cancel") && mods.iter().any(|m| m.starts_with("get_first_ctaid")) {
        Op::ClcFirstCtaid
    } else {
        Op::UnsupportedControl
    }
}

/// Barriers, warp collectives and mbarriers.
fn sync(inst: &Instruction<'_>, m: &Mods<'_>) -> Op {
    match inst.opcode {
        "bar" | "barrier" => {
            if m.h("cluster") {
                Op::UnsupportedControl
            } else if m.h("warp") {
                Op::WarpSync
            } else if m.h("red") {
                if m.h("popc") {
                    Op::BarRed(RedKind::Popc)
                } else if m.h("and") {
                    Op::BarRed(RedKind::And)
                } else if m.h("or") {
                    Op::BarRed(RedKind::Or)
                } else {
                    Op::UnsupportedControl
                }
            } else if m.h("arrive") {
                Op::Bar(BarrierOp::Arrive)
            } else if m.h("sync") || inst.modifiers.is_empty() || m.first_mod == "cta" {
                Op::Bar(BarrierOp::Sync)
            } else {
                Op::UnsupportedControl
            }
        }
        "shfl" => match () {
            _ if m.h("up") => Op::Shfl(ShflMode::Up),
            _ if m.h("down") => Op::Shfl(ShflMode::Down),
            _ if m.h("bfly") => Op::Shfl(ShflMode::Bfly),
            _ if m.h("idx") => Op::Shfl(ShflMode::Idx),
            _ => Op::Unsupported,
        },
        "vote" => match () {
            _ if m.h("ballot") => Op::Vote(VoteMode::Ballot),
            _ if m.h("all") => Op::Vote(VoteMode::All),
            _ if m.h("any") => Op::Vote(VoteMode::Any),
            _ if m.h("uni") => Op::Vote(VoteMode::Uni),
            _ => Op::Unsupported,
        },
        "match" => {
            if m.h("any") {
                Op::MatchAny
            } else {
                Op::MatchAll
            }
        }
        "activemask" => Op::Activemask,
        "elect" => Op::Elect,
        "redux" => match () {
            _ if m.ty.kind == Kind::F && m.ty.bits == 32 && m.h("min") => {
                Op::Redux(ReduxOp::FMin {
                    abs: m.h("abs"),
                    nan: m.h("NaN"),
                })
            }
            _ if m.ty.kind == Kind::F && m.ty.bits == 32 && m.h("max") => {
                Op::Redux(ReduxOp::FMax {
                    abs: m.h("abs"),
                    nan: m.h("NaN"),
                })
            }
            // Another float reduction: the other lanes' values decide it.
            _ if m.ty.kind == Kind::F => Op::Float {
                pure: false,
                commutes: false,
            },
            _ if m.h("add") => Op::Redux(ReduxOp::Add),
            _ if m.h("min") => Op::Redux(ReduxOp::Min),
            _ if m.h("max") => Op::Redux(ReduxOp::Max),
            _ if m.h("and") => Op::Redux(ReduxOp::And),
            _ if m.h("or") => Op::Redux(ReduxOp::Or),
            _ if m.h("xor") => Op::Redux(ReduxOp::Xor),
            _ => Op::Unsupported,
        },
        "mbarrier" => match m.first_mod {
            // `.relaxed` (PTX ISA 8.6) gives the arrival no release and the wait no acquire
            // semantics; taking them as the defaults would order what hardware does not.
            "arrive" | "arrive_drop" | "test_wait" | "try_wait" if m.h("relaxed") => {
                Op::MbarRelaxed
            }
            "init" => Op::MbarInit,
            "arrive" => Op::MbarArrive {
                expect_tx: m.h("expect_tx"),
                drop: false,
            },
            "arrive_drop" => Op::MbarArrive {
                expect_tx: m.h("expect_tx"),
                drop: true,
            },
            "expect_tx" => Op::MbarExpectTx,
            "complete_tx" => Op::MbarCompleteTx,
            "test_wait" | "try_wait" => Op::MbarWait {
                parity: m.h("parity"),
            },
            "inval" => Op::MbarInval,
            "pending_count" => Op::Float {
                pure: false,
                commutes: false,
            },
            _ => Op::UnsupportedControl,
        },
        _ => Op::UnsupportedControl,
    }
}

/// `cp.async` in its forms (bulk, tensor, mbarrier arrive).
fn cp(inst: &Instruction<'_>, m: &Mods<'_>) -> Op {
    match inst.opcode {
        "cp" => {
            if !m.h("async") {
                Op::Unsupported
            } else if m.h("prefetch") {
                Op::Skip
            } else if m.h("commit_group") {
                if m.h("bulk") {
                    Op::BulkCommit
                } else {
                    Op::CpAsyncCommit
                }
            } else if m.h("wait_group") {
                if m.h("bulk") {
                    Op::BulkWait
                } else {
                    Op::CpAsyncWait { all: false }
                }
            } else if m.h("wait_all") {
                Op::CpAsyncWait { all: true }
            } else if m.h("bulk") {
                let dst = inst
                    .modifiers()
                    .skip_while(|m| *m != "bulk" && *m != "tensor")
                    .find_map(parse_space);
                let mbar = inst
                    .modifiers()
                    .any(|m| m.starts_with("mbarrier::complete_tx"));
                if m.h("tensor") {
                    match dst {
                        Some(Space::Shared) if mbar && !m.h("reduce") => Op::TmaLoad,
                        Some(Space::Global) => Op::TmaStore,
                        _ => Op::UnsupportedControl,
                    }
                } else if m.h("reduce") {
                    // Into global memory (bulk groups): for shared memory a bulk store, its
                    // source read through the async proxy until the group's `wait_group.read`
                    // (the reduction happens in global memory). Into `shared::cluster` (an
                    // mbarrier completes it) it reduces into shared memory: not modelled.
                    match dst {
                        Some(Space::Global) if !mbar => Op::CpAsyncBulk {
                            to_shared: false,
                            mbar: false,
                            reduce: true,
                        },
                        _ => Op::UnsupportedControl,
                    }
                } else {
                    Op::CpAsyncBulk {
                        to_shared: dst == Some(Space::Shared),
                        mbar,
                        reduce: false,
                    }
                }
            } else if m.h("mbarrier") {
                Op::CpAsyncMbarArrive {
                    noinc: m.h("noinc"),
                }
            } else {
                Op::CpAsync
            }
        }
        _ => Op::UnsupportedControl,
    }
}
