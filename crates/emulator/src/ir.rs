//! The emulator's IR and the lowering from the PTX AST.
//!
//! Lowering happens once per kernel: every string lookup (register names, labels, opcodes,
//! modifiers, variables) is resolved here so the interpreter dispatches on dense enums and
//! indexes flat arrays.

use ptx_parser::ast::{
    Address, AddressBase, Block, Function, Instruction, Module, Operand, StateSpace, Statement,
    VarDecl,
};
use rustc_hash::{FxHashMap, FxHashSet};
use weft_program::{BarrierOp, CudaLoc, InstSite, SourceTable};

use crate::{Config, Error, ParamRef, SharedSymbol};

mod data;
mod doomed;

pub(crate) use data::DataLayout;
pub(crate) use doomed::traps_from;

/// Sentinel for "no register" / "no instruction" / the virtual exit node.
pub(crate) const NONE: u32 = u32::MAX;

/// Kinds of PTX scalar types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    B,
    U,
    S,
    F,
    Pred,
}

/// A scalar type: width in bits and kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Ty {
    pub bits: u8,
    pub kind: Kind,
}

impl Ty {
    pub const NONE: Ty = Ty {
        bits: 0,
        kind: Kind::B,
    };
    pub fn bytes(self) -> u32 {
        u32::from(self.bits).div_ceil(8)
    }
    pub fn signed(self) -> bool {
        self.kind == Kind::S
    }
}

fn parse_ty(m: &str) -> Option<Ty> {
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

/// State spaces as instructions name them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Space {
    Generic,
    Shared,
    Global,
    Local,
    Param,
    Const,
    Tex,
}

fn parse_space(m: &str) -> Option<Space> {
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

/// Special registers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Sreg {
    Tid(u8),
    Ntid(u8),
    Ctaid(u8),
    Nctaid(u8),
    Laneid,
    LanemaskEq,
    LanemaskLt,
    LanemaskLe,
    LanemaskGt,
    LanemaskGe,
    DynSmem,
    TotalSmem,
    ClusterCtarank,
    ClusterNctarank,
    ClusterCtaid(u8),
    ClusterNctaid(u8),
    IsExplicitCluster,
    Clock,
    Unknown(&'static str),
}

fn dim(s: &str) -> Option<u8> {
    match s {
        "x" => Some(0),
        "y" => Some(1),
        "z" => Some(2),
        _ => None,
    }
}

fn parse_sreg(name: &str) -> Option<Sreg> {
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

/// The base of a memory operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MemBase {
    /// A register holding an address in the instruction's space.
    Reg(u32),
    /// A variable: the offset is already in the operand's offset (shared window).
    Shared,
    /// Local window.
    Local,
    /// Per-thread parameter window (device-function params and call buffers).
    Param,
    /// Kernel parameter by index.
    KernelParam(u32),
    /// A global or const variable (address unknown).
    Global,
    /// `[0x100]`.
    Abs,
}

/// A pre-decoded operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Opnd {
    Reg(u32),
    NotReg(u32),
    Imm(u64),
    Sreg(Sreg),
    /// The address of a variable whose address the emulator does not know.
    UnknownAddr(&'static str),
    Mem(MemBase, i64),
    /// A `{…}` vector, `(…)` list or `%p|%q` pair: a range of `Ir::opnds`.
    List(u32, u32),
    Sink,
    Label(u32),
    Func(u32),
}

/// Multiplication modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MulMode {
    Lo,
    Hi,
    Wide,
}

/// Comparison operators of `setp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Lo,
    Ls,
    Hi,
    Hs,
    Equ,
    Neu,
    Ltu,
    Leu,
    Gtu,
    Geu,
    Num,
    Nan,
}

/// Boolean combiners of `setp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum BoolOp {
    None,
    And,
    Or,
    Xor,
}

/// Atomic operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum AtomOp {
    Other,
}

/// Reduction kinds of `bar.red`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RedKind {
    Popc,
    And,
    Or,
}

/// Shuffle modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ShflMode {
    Up,
    Down,
    Bfly,
    Idx,
}

/// Vote modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum VoteMode {
    All,
    Any,
    Uni,
    Ballot,
}

/// `redux.sync` operators.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ReduxOp {
    Add,
    Min,
    Max,
    And,
    Or,
    Xor,
}

/// A function the module declares without a body (`.extern .func`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Extern {
    /// `__assertfail` (CUDA `assert`): prints the message and traps; never returns.
    AssertFail,
    /// `vprintf` (CUDA `printf`): no shared-memory or synchronization effect.
    Printf,
    /// Anything else: weft cannot know what it does.
    Unknown,
}

impl Extern {
    fn of(name: &str) -> Extern {
        match name {
            "__assertfail" => Extern::AssertFail,
            "vprintf" => Extern::Printf,
            _ => Extern::Unknown,
        }
    }
}

/// Opcodes with their semantic modifiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Mov,
    Add,
    Sub,
    Mul(MulMode),
    Mad(MulMode),
    Div,
    Rem,
    Abs,
    Neg,
    Min,
    Max,
    And,
    Or,
    Xor,
    Not,
    Cnot,
    Shl,
    Shr,
    Bfe,
    Bfi,
    Brev,
    Popc,
    Clz,
    Prmt,
    Lop3,
    Setp(Cmp, BoolOp),
    Selp,
    Slct,
    Cvt,
    /// `cvta[.to].space`: `to` converts generic → space.
    Cvta {
        to: bool,
        space: Space,
    },
    Isspacep(Space),
    Mapa,
    Ld,
    St,
    Atom(AtomOp),
    RedMem(AtomOp),
    Ldmatrix(u8),
    Stmatrix(u8),
    Bra,
    /// `brx.idx{.uni} index, table;`: operands are the index and an [`Opnd::List`] of the
    /// table's [`Opnd::Label`]s.
    BraIdx,
    Call,
    /// A call to a function declared without a body.
    CallExtern(Extern),
    Ret,
    Exit,
    Trap,
    Bar(BarrierOp),
    BarRed(RedKind),
    WarpSync,
    Shfl(ShflMode),
    Vote(VoteMode),
    MatchAny,
    MatchAll,
    Activemask,
    Elect,
    Redux(ReduxOp),
    MbarInit,
    MbarArrive {
        expect_tx: bool,
        drop: bool,
    },
    MbarExpectTx,
    MbarCompleteTx,
    MbarWait {
        parity: bool,
    },
    MbarInval,
    CpAsync,
    CpAsyncBulk {
        /// Destination is shared memory (else the source is).
        to_shared: bool,
        /// Signals `complete_tx` on an mbarrier operand.
        mbar: bool,
    },
    CpAsyncMbarArrive {
        noinc: bool,
    },
    /// `cp.async.bulk.tensor` global → shared completing on an mbarrier (TMA load): the byte
    /// count lives in the tensor map.
    TmaLoad,
    /// `cp.async.bulk.tensor` / `cp.reduce.async.bulk.tensor` shared → global (TMA store):
    /// reads shared memory; the byte count lives in the tensor map.
    TmaStore,
    /// Floating-point arithmetic: destinations unknown.
    Float,
    /// Texture/surface loads: destinations unknown.
    Texture,
    /// Tensor-core instructions: skipped, destinations unknown.
    TensorCore,
    /// No effect the emulator models (fences, prefetch, `setmaxnreg`, commit groups).
    Skip,
    /// An instruction with no semantics that may matter for data: destinations unknown and
    /// an unverifiable entry.
    Unsupported,
    /// An instruction with no semantics that decides control or synchronization: the
    /// emulation stops as unverifiable.
    UnsupportedControl,
}

impl Op {
    /// Whether the instruction synchronizes (named barrier, warp barrier, mbarrier, async
    /// copy completing on an mbarrier) or stops the emulation.
    pub fn is_sync(self) -> bool {
        matches!(
            self,
            Op::Bar(_)
                | Op::BarRed(_)
                | Op::WarpSync
                | Op::MbarInit
                | Op::MbarArrive { .. }
                | Op::MbarExpectTx
                | Op::MbarCompleteTx
                | Op::MbarWait { .. }
                | Op::MbarInval
                | Op::CpAsyncBulk { mbar: true, .. }
                | Op::TmaLoad
                | Op::CpAsyncMbarArrive { .. }
                | Op::UnsupportedControl
                // What a function without a body does is unknown: it may synchronize.
                | Op::CallExtern(Extern::Unknown)
        )
    }

    /// Whether the instruction ends the thread by trapping (`trap`, `__assertfail`).
    pub fn traps(self) -> bool {
        matches!(self, Op::Trap | Op::CallExtern(Extern::AssertFail))
    }
}

/// One decoded instruction.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Inst {
    pub op: Op,
    pub ty: Ty,
    pub ty2: Ty,
    pub vec: u8,
    pub space: Space,
    pub guard: u32,
    pub guard_neg: bool,
    pub aligned: bool,
    pub sat: bool,
    /// Rounding modifier for `cvt`: 0 none/rn, 1 rzi/rz, 2 rmi/rm, 3 rpi/rp, 4 rni.
    pub round: u8,
    /// First operand in `Ir::opnds`.
    pub ops: u32,
    pub nops: u8,
    pub func: u32,
}

/// A lowered function.
#[derive(Debug, Clone)]
pub(crate) struct Func {
    /// The function's name (for diagnostics).
    #[allow(dead_code)]
    pub name: String,
    pub start: u32,
    pub end: u32,
    /// Parameter slots (offset, size) in the per-thread parameter window.
    pub params: Vec<(u32, u32)>,
    /// Return-value slots.
    pub rets: Vec<(u32, u32)>,
    /// Whether the function (transitively) synchronizes.
    pub has_sync: bool,
    /// Whether the module defines the function (`false` for `.extern .func` declarations,
    /// whose calls lower to [`Op::CallExtern`]).
    pub body: bool,
}

/// A kernel parameter.
#[derive(Debug, Clone)]
pub(crate) struct KernelParam {
    pub name: String,
    /// Byte offset of the parameter in the kernel-parameter window.
    pub offset: u32,
    pub size: u32,
    pub aggregate: bool,
    /// Bytes fixed by `--param`.
    pub known: Vec<Option<u8>>,
}

/// Where the emulator places the state-space windows in the generic address space, and
/// where kernel parameters live in the `.param` state space.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Windows {
    /// Generic address of shared offset 0.
    pub shared: u64,
    /// Generic address of local offset 0.
    pub local: u64,
    /// Generic (and `.global`/`.const`) address of data-window offset 0: initialized
    /// module-scope variables ([`DataLayout`]).
    pub data: u64,
    /// Generic address of kernel-parameter window offset 0 (`cvta.param`).
    pub param_generic: u64,
    /// `.param`-space address of kernel-parameter window offset 0 (`mov %r, param`).
    pub param_space: u64,
    /// Size of each window: an address `a` is in window `w` when `a - w < size`.
    pub size: u64,
}

impl Windows {
    pub fn new(address_bits: u32) -> Windows {
        if address_bits == 32 {
            Windows {
                data: 0x3000_0000,
                shared: 0x4000_0000,
                param_generic: 0x5000_0000,
                local: 0x6000_0000,
                param_space: 0x7000_0000,
                size: 1 << 28,
            }
        } else {
            Windows {
                data: 0x0000_7b00_0000_0000,
                param_space: 0x0000_7c00_0000_0000,
                param_generic: 0x0000_7d00_0000_0000,
                shared: 0x0000_7e00_0000_0000,
                local: 0x0000_7f00_0000_0000,
                size: 1 << 32,
            }
        }
    }

    /// The offset of `a` in the window starting at `base`.
    #[inline]
    pub fn offset(self, a: u64, base: u64) -> Option<u64> {
        let off = a.wrapping_sub(base);
        (off < self.size).then_some(off)
    }
}

/// The lowered kernel.
#[derive(Debug, Clone)]
pub(crate) struct Ir {
    pub insts: Vec<Inst>,
    pub opnds: Vec<Opnd>,
    pub funcs: Vec<Func>,
    pub reg_names: Vec<String>,
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
    /// Immediate post-dominator of each instruction ([`NONE`] = the function's exit or no
    /// path to it — see `reaches_exit`).
    pub ipdom: Vec<u32>,
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

    /// Successors in the function's CFG (every edge; [`NONE`] is the function's exit).
    pub fn successors(&self, pc: u32) -> Vec<u32> {
        let Some(inst) = self.insts.get(pc as usize) else {
            return Vec::new();
        };
        let end = self.funcs.get(inst.func as usize).map_or(0, |f| f.end);
        let next = if pc + 1 >= end { NONE } else { pc + 1 };
        let mut out = match inst.op {
            Op::Bra => match self.operands(inst).first() {
                Some(Opnd::Label(t)) => vec![*t],
                _ => vec![NONE],
            },
            Op::BraIdx => match self.operands(inst).get(1) {
                Some(Opnd::List(s, n)) => self
                    .list(*s, *n)
                    .iter()
                    .filter_map(|o| match o {
                        Opnd::Label(t) => Some(*t),
                        _ => None,
                    })
                    .collect(),
                _ => Vec::new(),
            },
            Op::Ret
            | Op::Exit
            | Op::Trap
            | Op::CallExtern(Extern::AssertFail)
            | Op::UnsupportedControl => vec![NONE],
            _ => return vec![next],
        };
        if inst.guard != NONE {
            out.push(next);
        }
        out
    }

    /// Whether instruction `pc` synchronizes, directly or through a call.
    pub fn syncs(&self, pc: u32) -> bool {
        let Some(inst) = self.insts.get(pc as usize) else {
            return false;
        };
        match inst.op {
            Op::Call => self.operands(inst).iter().any(|o| match o {
                Opnd::Func(f) => self.funcs.get(*f as usize).is_none_or(|f| f.has_sync),
                _ => false,
            }),
            op => op.is_sync(),
        }
    }
}

#[derive(Debug, Clone, Copy)]
enum VarLoc {
    Shared(u32),
    Local(u32),
    Param(u32),
    KernelParam(u32),
    /// An initialized module variable at this data-window offset.
    Data(u32),
    Global,
    Const,
}

#[derive(Default)]
struct Scope<'a> {
    parent: Option<usize>,
    regs: FxHashMap<&'a str, u32>,
    ranges: FxHashMap<&'a str, (u32, u32)>,
    vars: FxHashMap<&'a str, VarLoc>,
    labels: FxHashMap<&'a str, u32>,
    /// `.branchtargets` tables: name → target labels (resolved in this scope).
    tables: FxHashMap<&'a str, Vec<&'a str>>,
}

struct Fixup<'a> {
    slot: usize,
    scope: usize,
    name: &'a str,
    line: u32,
}

struct Lowerer<'m, 'a> {
    module: &'m Module<'a>,
    ir: Ir,
    scopes: Vec<Scope<'a>>,
    func_index: FxHashMap<&'a str, u32>,
    worklist: Vec<&'m Function<'a>>,
    shared_offsets: FxHashMap<usize, u32>,
    file_index: FxHashMap<u32, u32>,
    fixups: Vec<Fixup<'a>>,
    calls: Vec<(u32, u32)>,
}

fn align_up(x: u64, a: u64) -> u64 {
    let a = a.max(1);
    x.div_ceil(a) * a
}

fn var_align(v: &VarDecl<'_>) -> u64 {
    u64::from(v.align.unwrap_or(0)).max(v.element_size().unwrap_or(1))
}

fn err(line: u32, message: impl Into<String>) -> Error {
    Error::Lowering {
        line,
        message: message.into(),
    }
}

/// Lowers `kernel` and the functions it calls.
pub(crate) fn lower(
    module: &Module<'_>,
    kernel: &Function<'_>,
    config: &Config,
) -> Result<Ir, Error> {
    let mut l = Lowerer {
        module,
        ir: Ir {
            insts: Vec::new(),
            opnds: Vec::new(),
            funcs: Vec::new(),
            reg_names: Vec::new(),
            sources: SourceTable::default(),
            shared: Vec::new(),
            shared_static: 0,
            extern_start: None,
            local_size: 0,
            param_size: 0,
            kernel_params: Vec::new(),
            kparam_size: 0,
            windows: Windows::new(module.address_size.unwrap_or(64)),
            ipdom: Vec::new(),
            reaches_exit: Vec::new(),
            explicit_cluster: kernel.perf.explicitcluster
                || kernel.perf.reqnctapercluster.is_some(),
            notes: Vec::new(),
            data: DataLayout::default(),
            asserts: FxHashMap::default(),
            doomed: Vec::new(),
        },
        scopes: Vec::new(),
        func_index: FxHashMap::default(),
        worklist: Vec::new(),
        shared_offsets: FxHashMap::default(),
        file_index: FxHashMap::default(),
        fixups: Vec::new(),
        calls: Vec::new(),
    };
    for (i, f) in module.files.iter().enumerate() {
        l.file_index.insert(f.index, i as u32);
        l.ir.sources.files.push(f.path.to_string());
    }
    l.layout_shared(kernel)?;
    l.module_scope(kernel, config)?;
    l.func_index.insert(kernel.name, 0);
    l.ir.funcs.push(Func {
        name: kernel.name.to_string(),
        start: 0,
        end: 0,
        params: Vec::new(),
        rets: Vec::new(),
        has_sync: false,
        body: true,
    });
    l.worklist.push(kernel);
    let mut next = 0;
    while next < l.worklist.len() {
        let f = l.worklist[next];
        l.lower_function(next as u32, f)?;
        next += 1;
    }
    l.finish_sync_flags();
    l.ir.doomed = doomed::doomed(&l.ir);
    l.ir.asserts = doomed::assert_sites(&l.ir);
    l.compute_ipdoms();
    Ok(l.ir)
}

impl<'m, 'a> Lowerer<'m, 'a> {
    /// Places module-scope and function-scope `.shared` variables of every reachable
    /// function, then the extern dynamic arrays after them.
    fn layout_shared(&mut self, kernel: &'m Function<'a>) -> Result<(), Error> {
        let mut reachable: Vec<&'m Function<'a>> = vec![kernel];
        let mut seen: FxHashSet<&str> = FxHashSet::default();
        seen.insert(kernel.name);
        let mut i = 0;
        while i < reachable.len() {
            if let Some(body) = &reachable[i].body {
                let mut callees = Vec::new();
                collect_callees(body, &mut callees);
                for c in callees {
                    if seen.insert(c)
                        && let Some(f) = self.module.function(c)
                    {
                        reachable.push(f);
                    }
                }
            }
            i += 1;
        }
        let mut decls: Vec<&'m VarDecl<'a>> = self
            .module
            .globals
            .iter()
            .filter(|v| v.space == StateSpace::Shared)
            .collect();
        for f in &reachable {
            if let Some(body) = &f.body {
                collect_shared(body, &mut decls);
            }
        }
        let mut offset: u64 = 0;
        let mut externs = Vec::new();
        for v in decls {
            match v.size_bytes() {
                Some(size) if !v.dims.iter().any(Option::is_none) => {
                    offset = align_up(offset, var_align(v));
                    let off = u32::try_from(offset)
                        .map_err(|_| err(v.line, "shared memory larger than 4 GiB"))?;
                    self.shared_offsets
                        .insert(v as *const VarDecl<'_> as usize, off);
                    self.ir.shared.push(SharedSymbol {
                        name: v.name.to_string(),
                        offset: off,
                        size: u32::try_from(size).ok(),
                    });
                    offset += size;
                }
                _ => externs.push(v),
            }
        }
        if offset > u64::from(u32::MAX / 2) {
            return Err(err(kernel.line, "shared memory larger than 2 GiB"));
        }
        self.ir.shared_static = offset as u32;
        if !externs.is_empty() {
            let align = externs
                .iter()
                .map(|v| var_align(v))
                .max()
                .unwrap_or(16)
                .max(16);
            let start = align_up(offset, align) as u32;
            self.ir.extern_start = Some(start);
            for v in externs {
                self.shared_offsets
                    .insert(v as *const VarDecl<'_> as usize, start);
                self.ir.shared.push(SharedSymbol {
                    name: v.name.to_string(),
                    offset: start,
                    size: None,
                });
            }
        }
        Ok(())
    }

    fn module_scope(&mut self, kernel: &'m Function<'a>, config: &Config) -> Result<(), Error> {
        let mut scope = Scope::default();
        let (data, placed) = DataLayout::new(self.module, self.ir.windows.data);
        self.ir.data = data;
        for v in &self.module.globals {
            let placed = placed
                .get(v.name)
                .and_then(|&i| self.ir.data.vars.get(i as usize));
            let loc = match v.space {
                StateSpace::Shared => VarLoc::Shared(self.shared_offset(v).unwrap_or(0)),
                StateSpace::Local => VarLoc::Local(self.alloc_local(v)),
                StateSpace::Global | StateSpace::Const if placed.is_some() => {
                    VarLoc::Data(placed.map_or(0, |d| d.offset))
                }
                StateSpace::Const => VarLoc::Const,
                _ => VarLoc::Global,
            };
            scope.vars.insert(v.name, loc);
        }
        let mut window: u64 = 0;
        for (i, p) in kernel.params.iter().enumerate() {
            scope.vars.insert(p.name, VarLoc::KernelParam(i as u32));
            let size = p.size_bytes().unwrap_or(8).min(1 << 20) as u32;
            window = align_up(window, var_align(p).min(4096));
            let offset = u32::try_from(window)
                .map_err(|_| err(p.line, "kernel parameters larger than 4 GiB"))?;
            window += u64::from(size);
            self.ir.kernel_params.push(KernelParam {
                name: p.name.to_string(),
                offset,
                size,
                aggregate: !p.dims.is_empty(),
                known: vec![None; size as usize],
            });
        }
        for b in &config.params {
            let index = match &b.param {
                ParamRef::Index(i) => *i as usize,
                ParamRef::Name(n) => self
                    .ir
                    .kernel_params
                    .iter()
                    .position(|p| &p.name == n)
                    .ok_or_else(|| {
                        Error::InvalidConfig(format!(
                            "--param: kernel `{}` has no parameter `{n}`",
                            kernel.name
                        ))
                    })?,
            };
            let nparams = self.ir.kernel_params.len();
            let p = self.ir.kernel_params.get_mut(index).ok_or_else(|| {
                Error::InvalidConfig(format!(
                    "--param: parameter index {index} out of range (kernel has {nparams})"
                ))
            })?;
            let (off, size) = match b.offset {
                Some((off, ty)) => (off, ty.size()),
                None => (0, p.size.min(8)),
            };
            let bytes = b.value.to_le_bytes();
            for k in 0..size {
                let slot = p.known.get_mut((off + k) as usize).ok_or_else(|| {
                    Error::InvalidConfig(format!(
                        "--param: bytes {off}..{} lie outside parameter `{}` ({} bytes)",
                        off + size,
                        p.name,
                        p.size
                    ))
                })?;
                *slot = bytes.get(k as usize).copied();
            }
        }
        self.ir.kparam_size = u32::try_from(window)
            .map_err(|_| err(kernel.line, "kernel parameters larger than 4 GiB"))?;
        self.scopes.push(scope);
        Ok(())
    }

    fn shared_offset(&self, v: &VarDecl<'_>) -> Option<u32> {
        self.shared_offsets
            .get(&(v as *const VarDecl<'_> as usize))
            .copied()
    }

    fn alloc_local(&mut self, v: &VarDecl<'_>) -> u32 {
        let off = align_up(u64::from(self.ir.local_size), var_align(v)) as u32;
        let size = v.size_bytes().unwrap_or(0).min(1 << 20) as u32;
        self.ir.local_size = off.saturating_add(size);
        off
    }

    fn alloc_param(&mut self, v: &VarDecl<'_>) -> (u32, u32) {
        let off = align_up(u64::from(self.ir.param_size), var_align(v)) as u32;
        let size = v.size_bytes().unwrap_or(8).min(1 << 16) as u32;
        self.ir.param_size = off.saturating_add(size);
        (off, size)
    }

    fn func_id(&mut self, name: &'a str, line: u32) -> Result<u32, Error> {
        if let Some(&id) = self.func_index.get(name) {
            return Ok(id);
        }
        let f = self.module.function(name);
        if f.is_none() && !self.module.functions.iter().any(|f| f.name == name) {
            return Err(err(
                line,
                format!("call to `{name}`, which is not declared"),
            ));
        }
        let id = self.ir.funcs.len() as u32;
        self.func_index.insert(name, id);
        self.ir.funcs.push(Func {
            name: name.to_string(),
            start: 0,
            end: 0,
            params: Vec::new(),
            rets: Vec::new(),
            has_sync: false,
            body: f.is_some(),
        });
        if let Some(f) = f {
            self.worklist.push(f);
        }
        Ok(id)
    }

    fn lower_function(&mut self, id: u32, f: &'m Function<'a>) -> Result<(), Error> {
        let mut scope = Scope {
            parent: Some(0),
            ..Scope::default()
        };
        if f.kind == ptx_parser::ast::FunctionKind::Func {
            let mut params = Vec::new();
            let mut rets = Vec::new();
            for p in &f.params {
                let (off, size) = self.alloc_param(p);
                params.push((off, size));
                scope.vars.insert(p.name, VarLoc::Param(off));
            }
            for p in &f.returns {
                let (off, size) = self.alloc_param(p);
                rets.push((off, size));
                scope.vars.insert(p.name, VarLoc::Param(off));
            }
            if let Some(func) = self.ir.funcs.get_mut(id as usize) {
                func.params = params;
                func.rets = rets;
            }
        }
        let start = self.ir.insts.len() as u32;
        self.scopes.push(scope);
        let fscope = self.scopes.len() - 1;
        if let Some(body) = &f.body {
            self.lower_block(id, body, fscope)?;
        }
        // A label just before the closing brace names the function's end: falling through
        // (or branching) there returns, so give it an instruction to name.
        let at_end = self.ir.insts.len() as u32;
        if self.scopes[fscope..]
            .iter()
            .any(|sc| sc.labels.values().any(|&l| l == at_end))
        {
            self.push_implicit_ret(id, f);
        }
        let end = self.ir.insts.len() as u32;
        if let Some(func) = self.ir.funcs.get_mut(id as usize) {
            func.start = start;
            func.end = end;
        }
        for fix in std::mem::take(&mut self.fixups) {
            let mut s = Some(fix.scope);
            let mut target = None;
            while let Some(i) = s {
                if let Some(&t) = self.scopes[i].labels.get(fix.name) {
                    target = Some(t);
                    break;
                }
                s = self.scopes[i].parent;
            }
            let t = target.ok_or_else(|| {
                err(
                    fix.line,
                    format!("branch to undefined label `{}`", fix.name),
                )
            })?;
            if t >= end {
                return Err(err(
                    fix.line,
                    format!(
                        "label `{}` is at the end of the function with no instruction after it",
                        fix.name
                    ),
                ));
            }
            self.ir.opnds[fix.slot] = Opnd::Label(t);
        }
        Ok(())
    }

    /// Appends a `ret` that no PTX line spells (the end of function `id`).
    fn push_implicit_ret(&mut self, id: u32, f: &Function<'_>) {
        let last = self.ir.sources.sites.last().cloned();
        let ops = self.ir.opnds.len() as u32;
        self.ir.insts.push(Inst {
            op: Op::Ret,
            ty: Ty::NONE,
            ty2: Ty::NONE,
            vec: 0,
            space: Space::Generic,
            guard: NONE,
            guard_neg: false,
            aligned: false,
            sat: false,
            round: 0,
            ops,
            nops: 0,
            func: id,
        });
        self.ir.sources.sites.push(InstSite {
            ptx_line: last.as_ref().map_or(f.line, |s| s.ptx_line),
            ptx_column: 0,
            cuda: None,
            inlined_at: None,
            opcode: "ret".into(),
        });
    }

    fn lower_block(&mut self, func: u32, block: &'m Block<'a>, parent: usize) -> Result<(), Error> {
        self.scopes.push(Scope {
            parent: Some(parent),
            ..Scope::default()
        });
        let scope = self.scopes.len() - 1;
        // Declarations and jump tables are visible in the whole block.
        for st in &block.statements {
            match st {
                Statement::Var(v) => self.declare(scope, v)?,
                Statement::BranchTargets { name, targets, .. } => {
                    self.scopes[scope].tables.insert(name, targets.clone());
                }
                _ => {}
            }
        }
        for st in &block.statements {
            match st {
                Statement::Label { name, .. } => {
                    let pc = self.ir.insts.len() as u32;
                    self.scopes[scope].labels.insert(name, pc);
                }
                Statement::Instruction(inst) => self.lower_inst(func, scope, inst)?,
                Statement::Block(b) => self.lower_block(func, b, scope)?,
                Statement::Var(_)
                | Statement::Pragma { .. }
                | Statement::CallPrototype { .. }
                | Statement::BranchTargets { .. }
                | Statement::CallTargets { .. } => {}
            }
        }
        Ok(())
    }

    fn declare(&mut self, scope: usize, v: &'m VarDecl<'a>) -> Result<(), Error> {
        match v.space {
            StateSpace::Reg => {
                let base = self.ir.reg_names.len() as u32;
                match v.range {
                    Some(n) => {
                        if n > 1 << 20 {
                            return Err(err(v.line, "register range too large"));
                        }
                        for k in 0..n {
                            self.ir.reg_names.push(format!("{}{k}", v.name));
                        }
                        self.scopes[scope].ranges.insert(v.name, (base, n));
                    }
                    None => {
                        self.ir.reg_names.push(v.name.to_string());
                        self.scopes[scope].regs.insert(v.name, base);
                    }
                }
            }
            StateSpace::Shared => {
                let off = self.shared_offset(v).unwrap_or(0);
                self.scopes[scope].vars.insert(v.name, VarLoc::Shared(off));
            }
            StateSpace::Local => {
                let off = self.alloc_local(v);
                self.scopes[scope].vars.insert(v.name, VarLoc::Local(off));
            }
            StateSpace::Param => {
                let (off, _) = self.alloc_param(v);
                self.scopes[scope].vars.insert(v.name, VarLoc::Param(off));
            }
            StateSpace::Const => {
                self.scopes[scope].vars.insert(v.name, VarLoc::Const);
            }
            _ => {
                self.scopes[scope].vars.insert(v.name, VarLoc::Global);
            }
        }
        Ok(())
    }

    fn lookup_reg(&self, scope: usize, name: &str) -> Option<u32> {
        let digits = name.len() - name.bytes().rev().take_while(u8::is_ascii_digit).count();
        let (prefix, num) = name.split_at(digits);
        let num: Option<u32> = num.parse().ok();
        let mut s = Some(scope);
        while let Some(i) = s {
            let sc = &self.scopes[i];
            if let Some(&r) = sc.regs.get(name) {
                return Some(r);
            }
            if let Some(n) = num
                && let Some(&(base, count)) = sc.ranges.get(prefix)
                && n < count
            {
                return Some(base + n);
            }
            s = sc.parent;
        }
        None
    }

    fn lookup_var(&self, scope: usize, name: &str) -> Option<VarLoc> {
        let mut s = Some(scope);
        while let Some(i) = s {
            if let Some(&v) = self.scopes[i].vars.get(name) {
                return Some(v);
            }
            s = self.scopes[i].parent;
        }
        None
    }

    fn reg(&self, scope: usize, name: &str, line: u32) -> Result<Opnd, Error> {
        if let Some(r) = self.lookup_reg(scope, name) {
            return Ok(Opnd::Reg(r));
        }
        if let Some(s) = parse_sreg(name) {
            return Ok(Opnd::Sreg(s));
        }
        Err(err(line, format!("undeclared register `{name}`")))
    }

    fn operand(
        &mut self,
        scope: usize,
        op: &Operand<'a>,
        line: u32,
        label_ok: bool,
    ) -> Result<Opnd, Error> {
        Ok(match op {
            Operand::Reg(name) => self.reg(scope, name, line)?,
            Operand::NotReg(name) => match self.reg(scope, name, line)? {
                Opnd::Reg(r) => Opnd::NotReg(r),
                _ => return Err(err(line, format!("cannot negate `{name}`"))),
            },
            Operand::PredPair(a, b) => {
                let a = self.reg(scope, a, line)?;
                let b = if *b == "_" {
                    Opnd::Sink
                } else {
                    self.reg(scope, b, line)?
                };
                let start = self.ir.opnds.len() as u32;
                self.ir.opnds.push(a);
                self.ir.opnds.push(b);
                // The list is appended after the instruction's own operands by the caller;
                // here it lives where we pushed it.
                Opnd::List(start, 2)
            }
            Operand::Int(v) => Opnd::Imm(*v as u64),
            Operand::F32(bits) => Opnd::Imm(u64::from(*bits)),
            Operand::F64(bits) => Opnd::Imm(*bits),
            Operand::Symbol { name, offset } => {
                if label_ok {
                    // Resolved by the caller (branch target or callee).
                    Opnd::Sink
                } else if let Some(r) = self.lookup_reg(scope, name) {
                    Opnd::Reg(r)
                } else {
                    match self.lookup_var(scope, name) {
                        Some(VarLoc::Shared(o)) => Opnd::Imm((i64::from(o) + offset) as u64),
                        Some(VarLoc::Local(o)) => Opnd::Imm((i64::from(o) + offset) as u64),
                        // Call arguments and return buffers: the parameter window.
                        Some(VarLoc::Param(o)) => Opnd::Mem(MemBase::Param, i64::from(o) + offset),
                        // The `.param`-space address of a kernel parameter.
                        Some(VarLoc::KernelParam(i)) => {
                            let base = self
                                .ir
                                .kernel_params
                                .get(i as usize)
                                .map_or(0, |p| u64::from(p.offset));
                            Opnd::Imm(
                                self.ir
                                    .windows
                                    .param_space
                                    .wrapping_add(base)
                                    .wrapping_add(*offset as u64),
                            )
                        }
                        Some(VarLoc::Data(o)) => Opnd::Imm(
                            self.ir
                                .windows
                                .data
                                .wrapping_add(u64::from(o))
                                .wrapping_add(*offset as u64),
                        ),
                        Some(VarLoc::Global) => {
                            Opnd::UnknownAddr("the address of a global variable")
                        }
                        Some(VarLoc::Const) => {
                            Opnd::UnknownAddr("the address of a constant variable")
                        }
                        None => {
                            if self.module.functions.iter().any(|f| f.name == *name) {
                                Opnd::UnknownAddr("the address of a function")
                            } else {
                                return Err(err(line, format!("undeclared symbol `{name}`")));
                            }
                        }
                    }
                }
            }
            Operand::Address(Address { base, offset }) => match base {
                AddressBase::Reg(name) => match self.reg(scope, name, line)? {
                    Opnd::Reg(r) => Opnd::Mem(MemBase::Reg(r), *offset),
                    _ => Opnd::Mem(MemBase::Global, *offset),
                },
                AddressBase::Absolute => Opnd::Mem(MemBase::Abs, *offset),
                AddressBase::Symbol(name) => {
                    if let Some(r) = self.lookup_reg(scope, name) {
                        Opnd::Mem(MemBase::Reg(r), *offset)
                    } else {
                        match self.lookup_var(scope, name) {
                            Some(VarLoc::Shared(o)) => {
                                Opnd::Mem(MemBase::Shared, i64::from(o) + offset)
                            }
                            Some(VarLoc::Local(o)) => {
                                Opnd::Mem(MemBase::Local, i64::from(o) + offset)
                            }
                            Some(VarLoc::Param(o)) => {
                                Opnd::Mem(MemBase::Param, i64::from(o) + offset)
                            }
                            Some(VarLoc::KernelParam(i)) => {
                                Opnd::Mem(MemBase::KernelParam(i), *offset)
                            }
                            Some(VarLoc::Data(o)) => Opnd::Mem(
                                MemBase::Abs,
                                (self.ir.windows.data.wrapping_add(u64::from(o)) as i64)
                                    .wrapping_add(*offset),
                            ),
                            Some(VarLoc::Global) | Some(VarLoc::Const) => {
                                Opnd::Mem(MemBase::Global, *offset)
                            }
                            None => return Err(err(line, format!("undeclared symbol `{name}`"))),
                        }
                    }
                }
            },
            Operand::Vector(items) | Operand::Bracket(items) | Operand::Paren(items) => {
                let mut lowered = Vec::with_capacity(items.len());
                for it in items {
                    lowered.push(self.operand(scope, it, line, false)?);
                }
                let start = self.ir.opnds.len() as u32;
                self.ir.opnds.extend(lowered);
                Opnd::List(start, items.len() as u32)
            }
            Operand::Sink => Opnd::Sink,
        })
    }

    fn lower_inst(
        &mut self,
        func: u32,
        scope: usize,
        inst: &'m Instruction<'a>,
    ) -> Result<(), Error> {
        let line = inst.line;
        let mut d = decode(inst);
        let mut ops = Vec::with_capacity(inst.operands.len());
        let mut label_slots = Vec::new();
        let first_symbol = inst
            .operands
            .iter()
            .position(|o| matches!(o, Operand::Symbol { .. }));
        for (k, o) in inst.operands.iter().enumerate() {
            let is_target =
                matches!(d.op, Op::Bra | Op::BraIdx | Op::Call) && Some(k) == first_symbol;
            if is_target {
                label_slots.push(k);
            }
            ops.push(self.operand(scope, o, line, is_target)?);
        }
        let start = self.ir.opnds.len() as u32;
        let base = start as usize;
        self.ir.opnds.extend(ops);
        for k in label_slots {
            let Some(Operand::Symbol { name, .. }) = inst.operands.get(k) else {
                continue;
            };
            if d.op == Op::Bra {
                self.fixups.push(Fixup {
                    slot: base + k,
                    scope,
                    name,
                    line,
                });
            } else if d.op == Op::BraIdx {
                self.ir.opnds[base + k] = self.branch_table(scope, name, line)?;
            } else {
                let id = self.func_id(name, line)?;
                self.ir.opnds[base + k] = Opnd::Func(id);
                if self.ir.funcs.get(id as usize).is_some_and(|f| f.body) {
                    self.calls.push((func, id));
                } else {
                    d.op = Op::CallExtern(Extern::of(name));
                }
            }
        }
        let guard = match inst.guard {
            Some(g) => match self.reg(scope, g.predicate, line)? {
                Opnd::Reg(r) => (r, g.negated),
                _ => return Err(err(line, "guard is not a predicate register")),
            },
            None => (NONE, false),
        };
        let nops = u8::try_from(inst.operands.len()).map_err(|_| err(line, "too many operands"))?;
        self.ir.insts.push(Inst {
            op: d.op,
            ty: d.ty,
            ty2: d.ty2,
            vec: d.vec,
            space: d.space,
            guard: guard.0,
            guard_neg: guard.1,
            aligned: d.aligned,
            sat: d.sat,
            round: d.round,
            ops: start,
            nops,
            func,
        });
        let cuda = inst.loc.and_then(|l| {
            Some(CudaLoc {
                file: *self.file_index.get(&l.file)?,
                line: l.line,
                column: l.column,
            })
        });
        let inlined_at = inst.loc.and_then(|l| l.inlined_at).and_then(|a| {
            Some(CudaLoc {
                file: *self.file_index.get(&a.file)?,
                line: a.line,
                column: a.column,
            })
        });
        let opcode = if inst.modifiers.is_empty() {
            inst.opcode.to_string()
        } else {
            format!("{}.{}", inst.opcode, inst.modifiers)
        };
        self.ir.sources.sites.push(InstSite {
            ptx_line: line,
            ptx_column: inst.column,
            cuda,
            inlined_at,
            opcode: opcode.into_boxed_str(),
        });
        if d.op == Op::TensorCore && !self.ir.notes.iter().any(|n| n.starts_with("tensor-core")) {
            self.ir.notes.push(format!(
                "tensor-core instructions (first: `{}.{}` at PTX line {line}) are skipped: their results are unknown and shared-memory operands read through descriptors are not checked for races",
                inst.opcode, inst.modifiers
            ));
        }
        Ok(())
    }

    /// The jump table `name` of a `brx.idx` (innermost scope first) as an [`Opnd::List`] of
    /// label slots, each resolved like a branch target in the table's own scope.
    fn branch_table(&mut self, scope: usize, name: &'a str, line: u32) -> Result<Opnd, Error> {
        let mut s = Some(scope);
        while let Some(i) = s {
            if let Some(targets) = self.scopes[i].tables.get(name) {
                let targets = targets.clone();
                let n = u32::try_from(targets.len())
                    .map_err(|_| err(line, format!("jump table `{name}` is too large")))?;
                let start = self.ir.opnds.len();
                for (k, target) in targets.into_iter().enumerate() {
                    self.ir.opnds.push(Opnd::Label(NONE));
                    self.fixups.push(Fixup {
                        slot: start + k,
                        scope: i,
                        name: target,
                        line,
                    });
                }
                return Ok(Opnd::List(start as u32, n));
            }
            s = self.scopes[i].parent;
        }
        Err(err(
            line,
            format!("`brx.idx` names `{name}`, which is not a `.branchtargets` table in scope"),
        ))
    }

    fn finish_sync_flags(&mut self) {
        for f in 0..self.ir.funcs.len() {
            let (s, e) = (self.ir.funcs[f].start, self.ir.funcs[f].end);
            let direct = (s..e).any(|pc| self.ir.insts[pc as usize].op.is_sync());
            self.ir.funcs[f].has_sync = direct;
        }
        // Propagate through calls to a fixpoint.
        loop {
            let mut changed = false;
            for &(caller, callee) in &self.calls {
                let callee_sync = self
                    .ir
                    .funcs
                    .get(callee as usize)
                    .is_some_and(|f| f.has_sync);
                if let Some(c) = self.ir.funcs.get_mut(caller as usize)
                    && callee_sync
                    && !c.has_sync
                {
                    c.has_sync = true;
                    changed = true;
                }
            }
            if !changed {
                break;
            }
        }
    }

    /// Immediate post-dominators per function (Cooper–Harvey–Kennedy on the reverse CFG).
    fn compute_ipdoms(&mut self) {
        let n = self.ir.insts.len();
        self.ir.ipdom = vec![NONE; n];
        self.ir.reaches_exit = vec![false; n];
        for f in 0..self.ir.funcs.len() {
            let (s, e) = (self.ir.funcs[f].start, self.ir.funcs[f].end);
            if s >= e {
                continue;
            }
            let len = (e - s) as usize;
            let exit = len; // local index of the virtual exit
            let local = |pc: u32| if pc == NONE { exit } else { (pc - s) as usize };
            let mut preds: Vec<Vec<usize>> = vec![Vec::new(); len + 1];
            let mut succs: Vec<Vec<usize>> = vec![Vec::new(); len + 1];
            let doomed = |pc: u32| self.ir.doomed.get(pc as usize).copied().unwrap_or(false);
            for pc in s..e {
                for t in self.ir.successors(pc) {
                    if t != NONE && (t < s || t >= e) {
                        continue;
                    }
                    // The failing side of an assertion only traps: post-dominance is taken
                    // over the executions in which assertions hold.
                    if t != NONE && doomed(t) && !doomed(pc) {
                        continue;
                    }
                    let (u, v) = (local(pc), local(t));
                    succs[u].push(v);
                    preds[v].push(u);
                }
            }
            // Postorder of the reverse graph from exit.
            let mut order = Vec::with_capacity(len + 1);
            let mut visited = vec![false; len + 1];
            let mut stack: Vec<(usize, usize)> = vec![(exit, 0)];
            visited[exit] = true;
            while let Some(&mut (node, ref mut k)) = stack.last_mut() {
                if let Some(&p) = preds[node].get(*k) {
                    *k += 1;
                    if !visited[p] {
                        visited[p] = true;
                        stack.push((p, 0));
                    }
                } else {
                    order.push(node);
                    stack.pop();
                }
            }
            let mut po = vec![usize::MAX; len + 1];
            for (i, &node) in order.iter().enumerate() {
                po[node] = i;
            }
            let mut idom = vec![usize::MAX; len + 1];
            idom[exit] = exit;
            let mut changed = true;
            while changed {
                changed = false;
                for &node in order.iter().rev() {
                    if node == exit {
                        continue;
                    }
                    let mut new = usize::MAX;
                    for &sx in &succs[node] {
                        if idom[sx] == usize::MAX {
                            continue;
                        }
                        new = if new == usize::MAX {
                            sx
                        } else {
                            let (mut a, mut b) = (sx, new);
                            while a != b {
                                while po[a] < po[b] {
                                    a = idom[a];
                                }
                                while po[b] < po[a] {
                                    b = idom[b];
                                }
                            }
                            a
                        };
                    }
                    if new != usize::MAX && idom[node] != new {
                        idom[node] = new;
                        changed = true;
                    }
                }
            }
            for i in 0..len {
                let pc = s as usize + i;
                self.ir.reaches_exit[pc] = visited[i];
                if visited[i] && idom[i] != usize::MAX && idom[i] != exit {
                    self.ir.ipdom[pc] = s + idom[i] as u32;
                }
            }
        }
    }
}

fn collect_callees<'a>(block: &Block<'a>, out: &mut Vec<&'a str>) {
    for st in &block.statements {
        match st {
            Statement::Instruction(i) if i.opcode == "call" => {
                for o in &i.operands {
                    if let Operand::Symbol { name, .. } = o {
                        out.push(name);
                    }
                }
            }
            Statement::Block(b) => collect_callees(b, out),
            _ => {}
        }
    }
}

fn collect_shared<'m, 'a>(block: &'m Block<'a>, out: &mut Vec<&'m VarDecl<'a>>) {
    for st in &block.statements {
        match st {
            Statement::Var(v) if v.space == StateSpace::Shared => out.push(v),
            Statement::Block(b) => collect_shared(b, out),
            _ => {}
        }
    }
}

struct Decoded {
    op: Op,
    ty: Ty,
    ty2: Ty,
    vec: u8,
    space: Space,
    aligned: bool,
    sat: bool,
    round: u8,
}

fn decode(inst: &Instruction<'_>) -> Decoded {
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
    let float = ty.kind == Kind::F;
    let h = |m: &str| has.contains(m);
    let mul_mode = if h("wide") {
        MulMode::Wide
    } else if h("hi") {
        MulMode::Hi
    } else {
        MulMode::Lo
    };
    let carry = h("cc");
    let op = match inst.opcode {
        "mov" => Op::Mov,
        "add" | "sub" | "mul" | "mad" | "div" | "rem" | "abs" | "neg" | "min" | "max" if float => {
            Op::Float
        }
        "add" | "sub" | "mad" if carry => Op::Unsupported,
        "add" => Op::Add,
        "sub" => Op::Sub,
        "mul" => Op::Mul(mul_mode),
        "mad" => Op::Mad(mul_mode),
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
            let cmp = match first_mod {
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
            let b = if h("and") {
                BoolOp::And
            } else if h("or") {
                BoolOp::Or
            } else if h("xor") {
                BoolOp::Xor
            } else {
                BoolOp::None
            };
            match cmp {
                Some(c) if ty.bits <= 64 && !(float && ty.bits < 32) => Op::Setp(c, b),
                // Half-precision comparisons: the predicate is unknown.
                Some(_) if float => Op::Float,
                _ => Op::Unsupported,
            }
        }
        "selp" => Op::Selp,
        "slct" => Op::Slct,
        "cvt" => {
            if h("pack")
                || ty.bits == 128
                || types.iter().any(|t| t.kind == Kind::F && t.bits == 16)
                || h("f16x2")
                || h("bf16x2")
                || h("bf16")
                || h("tf32")
                || h("e4m3x2")
                || h("e5m2x2")
            {
                Op::Float
            } else {
                Op::Cvt
            }
        }
        "cvta" => Op::Cvta { to: h("to"), space },
        "isspacep" => Op::Isspacep(space),
        "mapa" => Op::Mapa,
        "ld" | "ldu" => match space {
            Space::Tex => Op::Texture,
            _ => Op::Ld,
        },
        "st" => {
            if h("async") {
                Op::UnsupportedControl
            } else {
                Op::St
            }
        }
        "atom" => Op::Atom(AtomOp::Other),
        "red" => {
            if h("async") {
                Op::UnsupportedControl
            } else {
                Op::RedMem(AtomOp::Other)
            }
        }
        "ldmatrix" | "stmatrix" => {
            let num = if h("x4") {
                4
            } else if h("x2") {
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
        "bar" | "barrier" => {
            if h("cluster") {
                Op::UnsupportedControl
            } else if h("warp") {
                Op::WarpSync
            } else if h("red") {
                if h("popc") {
                    Op::BarRed(RedKind::Popc)
                } else if h("and") {
                    Op::BarRed(RedKind::And)
                } else if h("or") {
                    Op::BarRed(RedKind::Or)
                } else {
                    Op::UnsupportedControl
                }
            } else if h("arrive") {
                Op::Bar(BarrierOp::Arrive)
            } else if h("sync") || inst.modifiers.is_empty() || first_mod == "cta" {
                Op::Bar(BarrierOp::Sync)
            } else {
                Op::UnsupportedControl
            }
        }
        "shfl" => match () {
            _ if h("up") => Op::Shfl(ShflMode::Up),
            _ if h("down") => Op::Shfl(ShflMode::Down),
            _ if h("bfly") => Op::Shfl(ShflMode::Bfly),
            _ if h("idx") => Op::Shfl(ShflMode::Idx),
            _ => Op::Unsupported,
        },
        "vote" => match () {
            _ if h("ballot") => Op::Vote(VoteMode::Ballot),
            _ if h("all") => Op::Vote(VoteMode::All),
            _ if h("any") => Op::Vote(VoteMode::Any),
            _ if h("uni") => Op::Vote(VoteMode::Uni),
            _ => Op::Unsupported,
        },
        "match" => {
            if h("any") {
                Op::MatchAny
            } else {
                Op::MatchAll
            }
        }
        "activemask" => Op::Activemask,
        "elect" => Op::Elect,
        "redux" => match () {
            _ if ty.kind == Kind::F => Op::Float,
            _ if h("add") => Op::Redux(ReduxOp::Add),
            _ if h("min") => Op::Redux(ReduxOp::Min),
            _ if h("max") => Op::Redux(ReduxOp::Max),
            _ if h("and") => Op::Redux(ReduxOp::And),
            _ if h("or") => Op::Redux(ReduxOp::Or),
            _ if h("xor") => Op::Redux(ReduxOp::Xor),
            _ => Op::Unsupported,
        },
        "mbarrier" => match first_mod {
            "init" => Op::MbarInit,
            "arrive" => Op::MbarArrive {
                expect_tx: h("expect_tx"),
                drop: false,
            },
            "arrive_drop" => Op::MbarArrive {
                expect_tx: h("expect_tx"),
                drop: true,
            },
            "expect_tx" => Op::MbarExpectTx,
            "complete_tx" => Op::MbarCompleteTx,
            "test_wait" | "try_wait" => Op::MbarWait {
                parity: h("parity"),
            },
            "inval" => Op::MbarInval,
            "pending_count" => Op::Float,
            _ => Op::UnsupportedControl,
        },
        "cp" => {
            if !h("async") {
                Op::Unsupported
            } else if h("commit_group") || h("wait_group") || h("wait_all") || h("prefetch") {
                Op::Skip
            } else if h("bulk") {
                let dst = inst
                    .modifiers()
                    .skip_while(|m| *m != "bulk" && *m != "tensor")
                    .find_map(parse_space);
                let mbar = inst
                    .modifiers()
                    .any(|m| m.starts_with("mbarrier::complete_tx"));
                if h("tensor") {
                    match dst {
                        Some(Space::Shared) if mbar && !h("reduce") => Op::TmaLoad,
                        Some(Space::Global) => Op::TmaStore,
                        _ => Op::UnsupportedControl,
                    }
                } else if h("reduce") {
                    Op::UnsupportedControl
                } else {
                    Op::CpAsyncBulk {
                        to_shared: dst == Some(Space::Shared),
                        mbar,
                    }
                }
            } else if h("mbarrier") {
                Op::CpAsyncMbarArrive { noinc: h("noinc") }
            } else {
                Op::CpAsync
            }
        }
        "fma" | "rcp" | "sqrt" | "rsqrt" | "sin" | "cos" | "lg2" | "ex2" | "tanh" | "testp"
        | "copysign" | "dp4a" | "dp2a" | "fns" | "bmsk" | "szext" | "createpolicy"
        | "getctarank" | "cvt.pack" | "set" | "mul24" | "mad24" | "sad" | "addc" | "subc"
        | "madc" | "vadd" | "vsub" | "vmad" | "vabsdiff" | "vmin" | "vmax" | "vshl" | "vshr"
        | "vset" | "istypep" => Op::Float,
        "tex" | "tld4" | "txq" | "suld" | "suq" | "sured" | "sust" => Op::Texture,
        "mma" | "wgmma" | "wmma" | "tcgen05" | "movmatrix" => Op::TensorCore,
        "membar" | "fence" | "prefetch" | "prefetchu" | "setmaxnreg" | "griddepcontrol"
        | "nanosleep" | "pmevent" | "discard" | "applypriority" | "tensormap" => Op::Skip,
        _ => Op::UnsupportedControl,
    };
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
    }
}
