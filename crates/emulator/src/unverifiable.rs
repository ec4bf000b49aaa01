//! Why a kernel cannot be verified, as data: what happened ([`Why`]), where, in which thread,
//! through which register, and the inputs the unknown value came from. The cli words it.

use weft_program::{InstId, ThreadId};

use crate::ValueSource;

/// Why the kernel cannot be verified: a synchronization-relevant value depends on an unknown
/// input, or the emulator met a construct it cannot model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unverifiable {
    /// What happened.
    pub why: Why,
    /// The instruction concerned.
    pub inst: Option<InstId>,
    /// The thread that executed it.
    pub thread: Option<ThreadId>,
    /// The register holding the unknown value, as the PTX names it.
    pub register: Option<String>,
    /// The inputs the unknown value came from.
    pub sources: Vec<ValueSource>,
}

/// What made a kernel unverifiable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Why {
    /// A value that decides synchronization, a shared or local address or a copy's size
    /// depends on an unknown value.
    Unknown(Value),
    /// A synchronization operation executes on one side of a branch on an unknown value.
    UnderBranch(SyncOp),
    /// Whether a control or synchronization instruction executes depends on an unknown
    /// guard predicate.
    Guarded(GuardedOp),
    /// A branch on an unknown predicate decides synchronization.
    BranchDecidesSync(Region),
    /// The two sides of a branch on an unknown predicate end differently (exit versus
    /// return).
    PathsEndDifferently,
    /// The index of a `brx.idx` over a table of `entries` labels is unknown.
    IndexedBranchUnknown {
        /// Labels in the table.
        entries: u32,
    },
    /// The index of a `brx.idx` lies outside its table (undefined behaviour).
    IndexedBranchOutOfRange {
        /// The index.
        index: u64,
        /// Labels in the table.
        entries: u32,
    },
    /// A call through a register.
    IndirectCall,
    /// A call of a function already on the thread's call stack.
    RecursiveCall,
    /// A call of a function the module declares without a body.
    ExternCall {
        /// The function's name.
        name: String,
    },
    /// A thread ran more instructions than [`crate::Config::step_limit`].
    StepBudget {
        /// The budget.
        limit: u64,
    },
    /// The CTA's threads ran more instructions in all than [`crate::CTA_STEP_FACTOR`] ×
    /// [`crate::Config::step_limit`] (threads that wait for each other at every step, as in
    /// a shuffle or barrier loop, each stay under their own budget while the run grows with
    /// the CTA).
    CtaStepBudget {
        /// The budget, in instructions of all threads.
        limit: u64,
    },
    /// The emulation's memory reached [`crate::Config::max_memory`].
    MemoryBudget {
        /// The budget in bytes.
        limit: u64,
        /// Commands recorded so far.
        commands: u64,
        /// Agents recorded so far: asynchronous copies' and tensor-core operands' accesses.
        agents: u64,
        /// Bytes of memory pages allocated.
        pages: u64,
    },
    /// An mbarrier operand that is not a shared-memory address.
    MbarrierNotShared,
    /// TMA copies signal an mbarrier phase that expects fewer transaction bytes than there
    /// are copies (at least one byte each), so their byte counts (in the tensor map) cannot be
    /// derived.
    TmaTooFewBytes {
        /// The copies towards the phase.
        copies: u32,
        /// The bytes the phase expected (0 when none or fewer).
        bytes: u32,
    },
    /// The mbarrier phase a TMA copy signals completed without its bytes.
    TmaPhaseCompletedWithoutCopy,
    /// The mbarrier phase a TMA copy signals never completes (its arrivals are missing) and
    /// nobody waits for it, so the copy's byte count cannot be derived.
    TmaPhaseNeverCompletes,
    /// A TMA load's destination operand is not a shared-memory address.
    TmaDestinationNotShared,
    /// The shared-memory operands a tensor-core instruction reads cannot be laid out.
    MatrixOperand(MatrixIssue),
    /// A trap (a failed assertion) reached in a kernel that reads its cluster shape
    /// (`%cluster_nctaid`, `%cluster_nctarank`) without declaring one: weft emulates a CTA
    /// alone in its cluster, which the kernel may never be launched with.
    TrapAloneInCluster,
    /// An instruction without emulator semantics whose results may matter.
    Unsupported,
    /// An instruction the emulator cannot model that may decide control flow or
    /// synchronization.
    UnsupportedControl,
    /// An mbarrier arrival or wait with `.relaxed` semantics (PTX ISA 8.6): it orders
    /// memory only together with a `fence` beside it, which weft does not model.
    RelaxedMbarrier,
}

impl Why {
    /// A resource budget (steps, the CTA's instructions, memory): a run with the same
    /// inputs would stop at the same limit.
    pub fn is_budget(&self) -> bool {
        matches!(
            self,
            Why::StepBudget { .. } | Why::CtaStepBudget { .. } | Why::MemoryBudget { .. }
        )
    }
}

/// A value that must be known.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Value {
    /// A shared-memory address.
    SharedAddress,
    /// A local-memory address.
    LocalAddress,
    /// A named barrier's id.
    BarrierId,
    /// A named barrier's thread count.
    BarrierCount,
    /// The member mask of `bar.warp.sync`.
    WarpSyncMask,
    /// The member mask of a warp collective.
    CollectiveMask,
    /// An mbarrier's address.
    MbarrierAddress,
    /// The count of `mbarrier.init`.
    MbarrierInitCount,
    /// The count of an `mbarrier.arrive`.
    MbarrierArrivalCount,
    /// A transaction byte count of an mbarrier operation.
    MbarrierTxCount,
    /// The parity an mbarrier wait tests.
    MbarrierWaitParity,
    /// The state (token) an mbarrier wait tests.
    MbarrierWaitState,
    /// The size of a `cp.async` copy.
    CpAsyncSize,
    /// The byte count of a `cp.async.bulk` copy.
    BulkCopySize,
    /// The group count of `cp.async.wait_group`.
    CpAsyncWaitGroupCount,
    /// The group count of `cp.async.bulk.wait_group`.
    BulkWaitGroupCount,
    /// A shared-memory matrix descriptor of a tensor-core instruction.
    MatrixDescriptor,
    /// The instruction descriptor of `tcgen05.mma` (its shape and major-ness).
    InstructionDescriptor,
    /// The group count of `wgmma.wait_group`.
    WgmmaWaitGroupCount,
    /// The column count of `tcgen05.alloc` or `tcgen05.dealloc`.
    TensorMemoryColumns,
    /// A tensor-memory address (`tcgen05.ld`/`st`/`mma`/`cp`).
    TensorMemoryAddress,
}

/// Why the shared-memory operands of a tensor-core instruction cannot be laid out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum MatrixIssue {
    /// The descriptor names a reserved swizzling mode.
    ReservedSwizzle,
    /// The descriptor uses the absolute leading-dimension address mode (not modelled).
    AbsoluteLeadingDimension,
    /// The shape, element types or layout arguments are outside the canonical layouts
    /// weft models.
    Shape,
    /// A sparse operation (its operand layouts are not modelled).
    Sparse,
    /// `tcgen05.mma.cta_group::2`: the pair of CTAs shares the operands (clusters are not
    /// modelled).
    CtaPair,
    /// A `tcgen05.mma` kind whose instruction descriptor weft does not decode.
    Kind,
    /// A tensor-memory footprint outside the 128 lanes and 512 columns.
    TensorMemoryRange,
}

/// A synchronization operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SyncOp {
    /// A named barrier operation.
    Barrier,
    /// `bar.warp.sync`.
    WarpSync,
    /// An mbarrier operation.
    Mbarrier,
    /// An asynchronous copy that signals an mbarrier.
    AsyncCopyToMbarrier,
    /// A TMA copy that signals an mbarrier.
    TmaCopyToMbarrier,
    /// A `.sync.aligned` `wgmma` instruction (which threads of the warpgroup execute it).
    Warpgroup,
    /// A cluster launch control request (`clusterlaunchcontrol.try_cancel`), which
    /// signals an mbarrier.
    ClusterLaunchControl,
}

/// An instruction whose execution must not depend on an unknown guard.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GuardedOp {
    /// `brx.idx`.
    IndexedBranch,
    /// A call or a return from a function.
    CallOrReturn,
    /// A synchronization operation.
    Synchronization,
}

/// Why the code between a branch on an unknown predicate and its join point cannot be
/// emulated on both sides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Region {
    /// The branch is in a loop with no exit.
    LoopWithoutExit,
    /// The branch controls a loop whose trip count is unknown.
    UnknownTripCount,
    /// The code it decides contains this synchronization instruction.
    Synchronizes(InstId),
}
