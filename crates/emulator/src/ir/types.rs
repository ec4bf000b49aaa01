//! The IR's types: scalar types, state spaces, operands, operations, instructions.

use weft_program::BarrierOp;

/// An instruction: its index in `Ir::insts`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub(crate) struct Pc(pub u32);

impl Pc {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A register: its index in `Ir::reg_names` and in each thread's register file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct RegId(pub u32);

impl RegId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A function: its index in `Ir::funcs` (0 is the kernel).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) struct FuncId(pub u32);

impl FuncId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// Kinds of PTX scalar types.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Kind {
    B,
    U,
    S,
    F,
    Pred,
}

/// A scalar type: width in bits and kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

    /// The letter of the type's kind as PTX writes it (`f` of `.f32`).
    pub fn kind_name(self) -> &'static str {
        match self.kind {
            Kind::B => "b",
            Kind::U => "u",
            Kind::S => "s",
            Kind::F => "f",
            Kind::Pred => "pred",
        }
    }

    /// Whether the type is an integer (or untyped bits): not a float or a predicate.
    pub fn is_int(self) -> bool {
        matches!(self.kind, Kind::U | Kind::S | Kind::B)
    }

    pub fn signed(self) -> bool {
        self.kind == Kind::S
    }
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

/// The memory a `wmma.load` or `wmma.store` accesses: `instances` rows (or, in column-major
/// layout, columns: the leading dimension) of `len` elements of `ebits` bits each, the
/// instances `stride` elements apart (the instruction's optional stride operand; `len` when
/// it has none). The PTX ISA leaves unspecified which lane holds which element.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct WmmaMem {
    /// `wmma.store` (else `wmma.load`).
    pub store: bool,
    /// Instances of the leading dimension.
    pub instances: u8,
    /// Elements per instance, the default stride.
    pub len: u8,
    /// Bits per element (1 for `.b1`, 4 for `.s4`/`.u4`).
    pub ebits: u8,
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

/// The base of a memory operand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MemBase {
    /// A register holding an address in the instruction's space.
    Reg(RegId),
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
    Reg(RegId),
    NotReg(RegId),
    Imm(u64),
    Sreg(Sreg),
    /// The address of a variable whose address the emulator does not know.
    UnknownAddr(&'static str),
    Mem(MemBase, i64),
    /// A `{…}` vector, `(…)` list or `%p|%q` pair: a range of `Ir::opnds`.
    List(u32, u32),
    Sink,
    Label(Pc),
    Func(FuncId),
}

/// Multiplication modes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum MulMode {
    Lo,
    Hi,
    Wide,
}

/// Floating-point operations the emulator computes on known operands and builds terms of
/// (`exec::float`, docs/semantics.md §6.6): IEEE 754 operations of `.f32` and `.f64`
/// values rounded to nearest even, whose results are exact functions of their operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum FOp {
    /// `add`: `a + b`.
    Add,
    /// `sub`: `a - b`.
    Sub,
    /// `mul`: `a * b`.
    Mul,
    /// `fma.rn` and `mad.rn`: `a * b + c`, rounded once.
    Fma,
    /// `div.rn`: `a / b`.
    Div,
    /// `sqrt.rn`.
    Sqrt,
    /// `rcp.rn`: `1 / a`.
    Rcp,
    /// `neg`: the sign flipped.
    Neg,
    /// `abs`: the sign cleared.
    Abs,
}

impl FOp {
    /// The source operands the operation reads (after its destination).
    pub fn sources(self) -> usize {
        match self {
            FOp::Sqrt | FOp::Rcp | FOp::Neg | FOp::Abs => 1,
            FOp::Add | FOp::Sub | FOp::Mul | FOp::Div => 2,
            FOp::Fma => 3,
        }
    }

    /// Whether swapping the first two operands never changes a `bits`-wide result: `add`,
    /// `mul` and `fma` of `.f32` (IEEE 754 addition and multiplication commute, and a
    /// single-precision result with a NaN operand is the one canonical NaN,
    /// `docs/semantics.md` §5); `.f64` NaN payloads may depend on the order.
    pub fn commutes(self, bits: u8) -> bool {
        bits == 32 && matches!(self, FOp::Add | FOp::Mul | FOp::Fma)
    }

    /// The opcode's name in a report.
    pub fn name(self) -> &'static str {
        match self {
            FOp::Add => "add",
            FOp::Sub => "sub",
            FOp::Mul => "mul",
            FOp::Fma => "fma",
            FOp::Div => "div",
            FOp::Sqrt => "sqrt",
            FOp::Rcp => "rcp",
            FOp::Neg => "neg",
            FOp::Abs => "abs",
        }
    }
}

/// Comparison operators of `setp`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
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

impl Cmp {
    /// Every comparison.
    #[cfg(test)]
    pub(crate) const ALL: [Cmp; 18] = [
        Cmp::Eq,
        Cmp::Ne,
        Cmp::Lt,
        Cmp::Le,
        Cmp::Gt,
        Cmp::Ge,
        Cmp::Lo,
        Cmp::Ls,
        Cmp::Hi,
        Cmp::Hs,
        Cmp::Equ,
        Cmp::Neu,
        Cmp::Ltu,
        Cmp::Leu,
        Cmp::Gtu,
        Cmp::Geu,
        Cmp::Num,
        Cmp::Nan,
    ];

    /// Whether this is a floating-point comparison (`setp.{eq,...,nan}.f32`; the unsigned
    /// `lo`, `ls`, `hi`, `hs` are integer-only).
    pub(crate) fn is_float(self) -> bool {
        !matches!(self, Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs)
    }
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
    /// `redux.sync.min.f32` / `.max.f32` (sm_100a): `abs` takes the inputs' absolute values,
    /// `nan` makes any NaN input give the canonical NaN (else NaN inputs are left out).
    FMin {
        abs: bool,
        nan: bool,
    },
    FMax {
        abs: bool,
        nan: bool,
    },
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
    pub(super) fn of(name: &str) -> Extern {
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
    /// `bfind`: the position of the most significant non-sign bit (`0xffffffff` when none);
    /// with `.shiftamt`, the left shift that brings it to the top.
    Bfind {
        shiftamt: bool,
    },
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
    /// `wmma.load` and `wmma.store`: the warp's matrix in memory ([`WmmaMem`]).
    Wmma(WmmaMem),
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
    /// `cp.async.bulk` between shared and global memory, and
    /// `cp.reduce.async.bulk.global.shared::cta.bulk_group` (a bulk store for shared memory).
    CpAsyncBulk {
        /// Destination is shared memory (else the source is).
        to_shared: bool,
        /// Signals `complete_tx` on an mbarrier operand.
        mbar: bool,
        /// `cp.reduce.async.bulk` (its byte count is not checked for a multiple of 16).
        reduce: bool,
    },
    CpAsyncMbarArrive {
        noinc: bool,
    },
    /// `tcgen05.commit...mbarrier::arrive::one [mbar]`: one arrival on the mbarrier once the
    /// thread's prior tensor-core operations complete.
    TcgenCommitArrive,
    /// `cp.async.commit_group`.
    CpAsyncCommit,
    /// `cp.async.wait_group N` (operand 0) or, with `all`, `cp.async.wait_all`.
    CpAsyncWait {
        all: bool,
    },
    /// `cp.async.bulk.commit_group`.
    BulkCommit,
    /// `cp.async.bulk.wait_group[.read] N` (operand 0).
    BulkWait,
    /// `fence.proxy.async` (orders generic-proxy accesses before async-proxy ones).
    ProxyFence,
    /// `cp.async.bulk.tensor` global → shared completing on an mbarrier (TMA load): the byte
    /// count lives in the tensor map.
    TmaLoad,
    /// `cp.async.bulk.tensor` / `cp.reduce.async.bulk.tensor` shared → global (TMA store):
    /// reads shared memory; the byte count lives in the tensor map.
    TmaStore,
    /// Floating-point arithmetic (and other operations the emulator does not compute):
    /// destinations unknown. `pure`: the result is a function of the operands alone (not of
    /// the carry flag, other lanes or an mbarrier), so equal operands give equal results
    /// (`crate::Config::value_terms`). `commutes`: its first two operands can be swapped
    /// without changing a bit of the result (`add`, `mul`, `fma` and `mad` of `.f32`: IEEE
    /// operations, whose result with a NaN operand is the one canonical NaN).
    Float {
        pure: bool,
        commutes: bool,
    },
    /// Floating-point arithmetic the emulator computes (`exec::float`): `.f32` or `.f64`
    /// (the instruction's type), rounded to nearest even. `rn`: the instruction names its
    /// rounding (`.rn`); an `add` or `sub` without it may be contracted with a `mul` into one
    /// `fma` by ptxas, so [`crate::ir`]'s lowering turns such an `add` whose operand may be
    /// an unrounded product back into [`Op::Float`].
    FArith {
        op: FOp,
        rn: bool,
    },
    /// Texture/surface loads: destinations unknown.
    Texture,
    /// `wgmma.mma_async`: reads its shared operands (B, and A unless in registers) through
    /// matrix descriptors, asynchronously until a `wgmma.wait_group` retires it; the
    /// accumulators become unknown. The shape is read from the opcode (`exec::tensor`).
    WgmmaMma,
    /// `wgmma.commit_group`.
    WgmmaCommit,
    /// `wgmma.wait_group N` (operand 0).
    WgmmaWait,
    /// `tcgen05.mma`: reads its shared operands through descriptors and writes its
    /// accumulator in tensor memory (reading A and scale factors there too), asynchronously
    /// until the issuing thread's next `tcgen05.commit` arrives on its mbarrier.
    TcgenMma,
    /// `tcgen05.cp [taddr], s-desc`: reads a matrix of shared memory through a descriptor
    /// into tensor memory, asynchronously until the issuing thread's next `tcgen05.commit`
    /// arrives on its mbarrier.
    TcgenCp,
    /// `clusterlaunchcontrol.try_cancel.async.shared::cta.mbarrier::complete_tx::bytes
    /// [addr], [mbar]`: asks to cancel a cluster not yet launched; its 16-byte answer is
    /// written to `addr` asynchronously (async proxy) and completes 16 transaction bytes on
    /// `mbar`.
    ClcTryCancel,
    /// `clusterlaunchcontrol.query_cancel.is_canceled.pred.b128 p, answer`.
    ClcIsCanceled,
    /// `clusterlaunchcontrol.query_cancel.get_first_ctaid...b128 d, answer`: the canceled
    /// cluster's first CTA id (unknown to weft).
    ClcFirstCtaid,
    /// `tensormap.replace...shared::cta.b1024 [addr], ...`: "a weak memory operation, on
    /// the entire 1024-bit opaque tensor-map object" (PTX ISA): a write of its 128 bytes.
    TensormapReplace,
    /// `tensormap.cp_fenceproxy.global.shared::cta... [dst], [src], size`: copies `size`
    /// bytes of shared memory at `src` to global memory in the generic proxy (a read).
    TensormapCopy,
    /// `tcgen05.ld.sync.aligned.SHAPE.NUM[.pack::16b].b32 regs, [taddr]`: reads tensor
    /// memory asynchronously until the thread's next `tcgen05.wait::ld`; the registers
    /// become unknown.
    TcgenLd,
    /// `tcgen05.st.sync.aligned.SHAPE.NUM[.unpack::16b].b32 [taddr], regs`: writes tensor
    /// memory asynchronously until the thread's next `tcgen05.wait::st`.
    TcgenSt,
    /// `tcgen05.wait::ld` (`st: false`) or `tcgen05.wait::st` (`st: true`): completes the
    /// thread's prior `tcgen05.ld` (or `tcgen05.st`) operations.
    TcgenWait {
        st: bool,
    },
    /// `tcgen05.alloc [dst], ncols`: writes the tensor-memory address it places to
    /// shared memory at `dst`, and allocates `ncols` columns (the tensor-memory accounting).
    TcgenAlloc,
    /// `tcgen05.dealloc taddr, ncols`: frees `ncols` columns (a write of them, `exec::tmem`).
    TcgenDealloc,
    /// `tcgen05.relinquish_alloc_permit`: no later `tcgen05.alloc` of the CTA.
    TcgenRelinquish,
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
    /// An `mbarrier.arrive`/`test_wait`/`try_wait` with `.relaxed` semantics: it orders no
    /// memory accesses by itself (a fence beside it may), which weft does not model; the
    /// emulation stops as unverifiable.
    MbarRelaxed,
}

impl Op {
    /// Whether the instruction computes its first operand (a register or a list of
    /// registers) from its other operands and does nothing else: the integer and predicate
    /// arithmetic, moves, conversions and address-space queries.
    pub fn computes(self) -> bool {
        matches!(
            self,
            Op::Mov
                | Op::Add
                | Op::Sub
                | Op::Mul(_)
                | Op::Mad(_)
                | Op::Div
                | Op::Rem
                | Op::Abs
                | Op::Neg
                | Op::Min
                | Op::Max
                | Op::And
                | Op::Or
                | Op::Xor
                | Op::Not
                | Op::Cnot
                | Op::Shl
                | Op::Shr
                | Op::Bfe
                | Op::Bfi
                | Op::Brev
                | Op::Popc
                | Op::Clz
                | Op::Bfind { .. }
                | Op::Prmt
                | Op::Lop3
                | Op::Setp(..)
                | Op::Selp
                | Op::Slct
                | Op::Cvt
                | Op::FArith { .. }
                | Op::Cvta { .. }
                | Op::Isspacep(_)
                | Op::Mapa
        )
    }

    /// Whether the instruction issues an asynchronous copy or tensor-core operation: an agent
    /// of its own that accesses shared memory after its issue.
    pub fn issues_async(self) -> bool {
        matches!(
            self,
            Op::CpAsync
                | Op::CpAsyncBulk { .. }
                | Op::TmaLoad
                | Op::TmaStore
                | Op::WgmmaMma
                | Op::TcgenMma
                | Op::TcgenCp
                | Op::TcgenLd
                | Op::TcgenSt
                | Op::ClcTryCancel
        )
    }

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
                | Op::ClcTryCancel
                | Op::TmaLoad
                | Op::CpAsyncMbarArrive { .. }
                | Op::TcgenCommitArrive
                | Op::WgmmaCommit
                | Op::WgmmaWait
                | Op::CpAsyncCommit
                | Op::CpAsyncWait { .. }
                | Op::BulkCommit
                | Op::BulkWait
                | Op::UnsupportedControl
                | Op::MbarRelaxed
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
    /// The guard predicate register (`@%p` / `@!%p`), if any.
    pub guard: Option<RegId>,
    pub guard_neg: bool,
    pub aligned: bool,
    pub sat: bool,
    /// Rounding modifier for `cvt`: 0 none/rn, 1 rzi/rz, 2 rmi/rm, 3 rpi/rp, 4 rni.
    pub round: u8,
    /// `.ftz`: single-precision subnormal inputs (and results) are flushed to sign-preserving
    /// zero (honoured by `setp`).
    pub ftz: bool,
    /// A memory operation with `.volatile`, `.relaxed`, `.acquire`, `.release` or `.mmio`
    /// semantics (a *strong* one, PTX ISA *Memory Consistency Model*): what it reads may be
    /// written by other threads while the kernel runs.
    pub strong: bool,
    /// First operand in `Ir::opnds`.
    pub ops: u32,
    pub nops: u8,
    pub func: FuncId,
}

/// A lowered function.
#[derive(Debug, Clone)]
pub(crate) struct Func {
    /// The function's name (for diagnostics).
    #[allow(dead_code)]
    pub name: String,
    /// The function's instructions: `start..end`.
    pub start: Pc,
    pub end: Pc,
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
    /// A scalar `.f32` or `.f64` parameter.
    pub float: bool,
    /// Bytes fixed by `--param`.
    pub known: Vec<Option<u8>>,
    /// Fields `--param` restricts to a range ([`crate::ParamValue::Range`]): offset in the
    /// parameter, size in bytes, smallest and largest value (unsigned bit patterns).
    pub ranges: Vec<(u32, u8, u64, u64)>,
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

    /// The kernel-parameter offset of the `.param`-space address `a`. A 32-bit register
    /// holds a `.param` address truncated (`mov.b32 %r, param`, as Triton writes it before
    /// `cvt.u64.u32` and `cvta.param.u64`): in the 64-bit layout the window's base has no
    /// low bits, so the 32 bits left are the offset.
    pub fn param_offset(self, a: u64) -> Option<u64> {
        self.offset(a, self.param_space).or_else(|| {
            (self.param_space & 0xffff_ffff == 0 && a >> 32 == 0 && a < self.size).then_some(a)
        })
    }
}
