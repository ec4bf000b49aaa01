//! Emulates one CTA of a PTX kernel into per-thread straight-line programs of
//! [`weft_program::Command`]s (the WEFT paper, §5.1).
//!
//! What weft promises (verdicts, the PTX ISA facts it relies on with their sections, the rules
//! for exited threads, mbarrier parity and same-instruction writes, every approximation) is
//! written down in the repository's `docs/semantics.md`.
//!
//! # Design
//!
//! [`emulate`] first *lowers* the kernel and every `.func` it calls, once, into a dense IR
//! (`ir` module): registers become indices into a flat per-thread register file (scoped
//! `.reg` declarations and `%r<N>` ranges resolved), labels become instruction indices
//! (resolved through the innermost enclosing `{ }` scope), operands are pre-decoded and
//! opcodes with their modifiers become dense enums. Shared, local and parameter variables
//! get offsets in per-CTA / per-thread windows. Immediate post-dominators are computed per
//! function on the instruction-level CFG.
//!
//! The `exec` module then runs every thread of the CTA. A thread runs until it blocks (named
//! barrier via [`weft_program::BarrierFile`], mbarrier wait via
//! [`weft_program::MbarrierFile`], warp-collective rendezvous), exits, traps or errs;
//! runnable threads are scheduled round-robin. With [`Config::warp_sync`] the lanes of a warp
//! run in lock-step with a minimum-PC reconvergence scheme and every command records its
//! warp step.
//!
//! Converged lanes of a warp execute together (`exec/warp.rs`): one decode and one dispatch
//! per warp instruction, over register files laid out register by register per warp, and a
//! warp collective whose lanes meet completes in place instead of through a rendezvous per
//! lane. The result is exactly that of lane-by-lane execution: under `--warp-sync` by
//! construction; otherwise a shared access whose order against another lane's access the
//! grouping changed (possible only where lanes of a warp race), or another order-visible
//! event, makes the run repeat lane by lane.
//!
//! # Soundness: unknown values
//!
//! Every register holds either known bits or an *unknown* value that records where it came
//! from ([`ValueSource`]: kernel parameter, global load, clock, atomic, …). Shared memory is
//! tracked per byte (in pages allocated on first write), so values exchanged through shared
//! memory or shuffles stay known. The
//! emulation reports an [`Unverifiable`] (naming the input, the register and the PTX line)
//! when a barrier id or count, a shared address, an mbarrier operand, or a branch that
//! decides synchronization depends on an unknown value.
//!
//! A branch on an unknown predicate is emulated on both sides when the code between it and
//! its immediate post-dominator contains no barrier, mbarrier operation or loop: the
//! accesses of both sides are recorded as *may-happen* accesses, shared/local bytes written
//! there become unknown, and registers whose values differ between the two sides become
//! unknown. An instruction guarded by an unknown predicate is a may-happen access and its
//! destinations become unknown.
//!
//! # Approximations (each can affect a verdict; all are listed in the final report)
//!
//! - `mbarrier.try_wait`/`test_wait` of an incomplete phase is a *blocking* wait: the thread
//!   blocks until the phase completes and the instruction then returns true. A `test_wait`
//!   used without a retry loop is therefore modelled as if it spun.
//! - Asynchronous copies (`cp.async`, `cp.async.bulk`, `cp.async.bulk.tensor`) are recorded
//!   as agents of their own ([`weft_program::AsyncCopy`]), not at issue: ordered after the
//!   issue and before their completion (the issuer's `cp.async.wait_group`/`wait_all`/
//!   `cp.async.bulk.wait_group[.read]` by group, the phase of `cp.async.mbarrier.arrive`, the
//!   phase their `complete_tx` is counted in). Not an approximation, but the `complete_tx` of a
//!   bulk or TMA load is recorded in the issuing thread at the issue point (its predecessors
//!   are the issue's), and the bytes it writes are marked unknown at issue (a TMA load's when
//!   its phase completes).
//! - `cp.async.bulk.tensor` loads (TMA with a tensor map): the byte count lives in the tensor
//!   map, which the emulator cannot read. The copies issued towards an mbarrier phase (by any
//!   thread, before or after the `expect_tx` that announces their bytes, across barriers)
//!   are assumed to transfer together exactly the bytes that phase expects. Each copy records
//!   its `complete_tx` at its issue; the phase completes when its arrivals are in and no
//!   thread can run, and the copies' shares (at least 1 byte each, summing to the announced
//!   bytes) are filled in then. A copy alone in its phase writes exactly those bytes from its
//!   destination; several copies each write an upper bound (the bytes less 16 per other
//!   copy, clipped at the next destination of any TMA load: TMA loads into different
//!   destinations are assumed not to overlap). A phase completed without its copies, with
//!   fewer bytes than copies, or never completed makes the kernel unverifiable.
//! - `tcgen05.commit...mbarrier::arrive::one` is an mbarrier arrival at its issue.
//! - Tensor-core operand reads (`wgmma.mma_async`, `tcgen05.mma`; `exec/tensor.rs`,
//!   `exec/descriptor.rs`): the shared-memory matrix descriptors are decoded into the exact
//!   16-byte units read (an upper bound, the whole swizzle row segment of each unit, with a
//!   nonzero base offset or tcgen05's 32-byte-atom swizzle), one async-proxy agent per
//!   contiguous run. A warpgroup's `wgmma.mma_async` is one operation: the lanes' `k`-th
//!   executions are matched, the reads start after the first issuing lane's earlier commands
//!   and end before the retiring `wgmma.wait_group` of every lane (a lane naming other bytes
//!   gets agents of its own). A `tcgen05.mma`'s reads end before the phase of the first
//!   `tcgen05.commit` after it on each mbarrier (the commit tracks all prior operations of
//!   the thread). An unknown descriptor, a sparse or `cta_group::2` operation or a layout
//!   outside the canonical ones makes the kernel unverifiable. `tcgen05.mma` with
//!   `collector::a::use` is still recorded as reading A from shared memory (an
//!   over-approximation). `tcgen05.alloc` writes the address it placed to shared memory in
//!   every lane of the warp.
//! - Tensor memory: the allocation protocol is checked (column counts, allocation after
//!   `relinquish_alloc_permit`, the balance of allocated and deallocated columns when every
//!   thread exited; one count per warp instruction; under an input-dependent branch the
//!   balance is not checked). Allocations are placed at the lowest free columns, aligned to
//!   their size, and never reuse freed ones. The accesses of `tcgen05.ld/st/mma/cp` and
//!   `tcgen05.dealloc` are agents race-checked like asynchronous copies (`exec::tmem`): a
//!   load completes at its warp's `tcgen05.wait::ld` or at the first use of its registers
//!   (an approximation), a thread's MMAs and copies run in issue order (an approximation:
//!   the ISA pipelines fewer pairs), `tcgen05.fence` is not required; each is noted on the
//!   kernels it applies to. `tcgen05.shift` and `tcgen05.ld.red` make the kernel
//!   unverifiable.
//! - `cp[.reduce].async.bulk.tensor` stores read shared memory from their source address up
//!   to the next shared address of another TMA load or store, tensor map or mbarrier object
//!   (TMA tiles at different addresses are assumed not to overlap each other or those) or
//!   the end of the shared allocation (an agent
//!   completed by the bulk group's wait), an upper bound.
//! - Kernel parameters form one read-only window (`mov` of a parameter symbol gives its
//!   `.param` address, `cvta.param` a generic one); bytes `--param` did not fix are unknown
//!   and name the parameter and byte range.
//! - A generic load/store whose address is unknown is assumed not to touch shared memory,
//!   unless the address is computed from a generic address into the shared window (its
//!   sources then carry the mark "a generic pointer into shared memory", which makes it a
//!   shared address: explored or unverifiable).
//! - Initialized `.global`/`.const` module variables (`__device__` tables, assertion
//!   strings) are placed at addresses of the emulator's choosing (the data window) and loads
//!   from them return the initializer (unless [`Config::initializers`] is off); the verdict
//!   assumes the host does not overwrite them before the launch (a note names the variables
//!   read). A variable the kernel writes through an address the emulator knows is unknown
//!   (the CTA is emulated again without it); writes through pointers it cannot resolve are
//!   assumed not to alias these variables.
//! - A branch on an unknown predicate whose one side is *doomed* (every path from it traps —
//!   `trap`, `__assertfail` — without synchronizing or exiting) is taken as an assumption
//!   that the trap is not reached: the emulation follows the other side and records an
//!   [`Assumption`]. The verdict covers the executions in which the assertion holds.
//! - Kernel-parameter bytes no `--param` fixes are *symbolic*: values derived from them by
//!   integer arithmetic carry terms (`exec/terms.rs`), and a branch on such a predicate that
//!   decides synchronization is a *choice* that [`explore`] explores depth first, bounded by
//!   [`ChoicePlan::max_trips`] per branch and variable on a path; sides without a concrete
//!   witness input and values beyond the bound are not explored, and the coverage says so
//!   (`docs/semantics.md` §6.5).
//! - `vprintf` has no shared-memory or synchronization effect and an unknown result; a `%s`
//!   argument pointing into shared memory is not recorded as a read (a note says when the
//!   format has `%s` or cannot be read). Any other function without a body makes the kernel
//!   unverifiable when a call to it is reached.
//! - Atomic results and the bytes they modify are unknown.
//! - A warpgroup's `k`-th `wgmma.mma_async` executions are one operation: each lane's issue
//!   arrives at its execution event and each lane's retiring `wgmma.wait_group` waits for
//!   it (`exec::warpgroup`); threads of a warpgroup that execute different `wgmma`
//!   instructions are a [`FindingKind::WarpgroupDivergence`].
//! - `wmma.load` and `wmma.store` access, from every lane of the warp, each row (or column)
//!   of the whole matrix (the ISA does not say which lane holds which element; a note);
//!   their fragments are unknown.
//! - The other tensor-core instructions are skipped, destinations unknown: `mma.sync`,
//!   `wmma.mma` and `movmatrix` (registers only) and `tcgen05.fence`; `tcgen05.ld` results
//!   are unknown. `tcgen05.cp`
//!   reads its shared source like a `tcgen05.mma` operand.
//! - Warp collectives (`shfl.sync`, `vote`, …) under an input-dependent branch return
//!   unknown values. `activemask` waits for no lane: it returns the lanes of the warp that
//!   reach the same instruction before every other lane has exited or stopped elsewhere
//!   (lanes run one at a time outside `--warp-sync`, so this is the largest such group).
//! - In `--warp-sync` mode an input-dependent branch region runs for one lane at a time
//!   inside one warp step: all its commands carry the same step.
//! - Shared-address alignment ([`FindingKind::MisalignedAddress`]) is decided up to the
//!   declared alignment of the variable an address lies in ([`SharedSymbol::align`]): the
//!   real placement of a variable is only known to be a multiple of it. A TMA tile's shared
//!   address is checked for 16 bytes (it needs 128); tensor maps, tensor-core operands and
//!   addresses outside every variable are not checked.

#![deny(missing_docs)]

mod exec;
mod explore;
pub mod induct;
mod ir;
mod params;
mod period;
#[cfg(test)]
mod tests;
mod unverifiable;

use std::fmt;

pub use exec::terms::{difference, intersect, union};
pub use explore::{
    Coverage, DEFAULT_MAX_PATHS, DEFAULT_MAX_TRIPS, DEFAULT_SEARCH_BUDGET, Exploration, SCAN_LIMIT,
    explore,
};
pub use params::{
    CLC_VARIABLE, ParamBinding, ParamError, ParamRef, ParamValue, ResolvedParam, ScalarType,
    resolve_params,
};
pub use period::{MAX_PERIOD, MIN_PERIODS, Mismatch, Periodicity};
pub use unverifiable::{GuardedOp, MatrixIssue, Region, SyncOp, Unverifiable, Value, Why};

use ptx_parser::Module;
use weft_program::{CtaShape, InstId, Program, SourceTable, ThreadId};

/// The instructions all threads of the CTA may run together: this many times
/// [`Config::step_limit`] (8 × 10⁷ by default). A kernel that never ends costs about this
/// budget's time before it is unverifiable: 5–10 s of CPU on the 2-core development machine
/// for the slowest loops (divergent warp collectives), about 16 times the longest path of
/// the largest corpus kernel (FlashAttention-4 sm100: 5.0 · 10⁶), and above the paper's
/// largest CudaDMA kernel at full scale (7.3 · 10⁷, BENCHMARKS.md).
pub const CTA_STEP_FACTOR: u64 = 8;

/// The default [`Config::max_memory`]: 3 GiB. The budget charges what the stages measure
/// resident, not the address space around it (the allocator's per-thread arenas, stacks,
/// a vector's copy while it grows): at a budget of 4 GiB a run that charged 3.84 GB grew
/// past a 4 GiB address space and aborted (BENCHMARKS.md, mutation run 26). A quarter of
/// headroom keeps a run at the default budget inside 4 GiB of address space.
pub const DEFAULT_MAX_MEMORY: u64 = 3 << 30;

/// Bytes written for a person: `4 GiB`, `512 MiB`, `3.5 KiB`, `100 bytes`.
pub fn bytes_text(bytes: u64) -> String {
    const UNITS: [(&str, u64); 3] = [("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)];
    for (unit, size) in UNITS {
        if bytes >= size {
            let whole = bytes / size;
            let tenth = (bytes % size) * 10 / size;
            return if tenth == 0 {
                format!("{whole} {unit}")
            } else {
                format!("{whole}.{tenth} {unit}")
            };
        }
    }
    format!("{bytes} bytes")
}

/// How to emulate a kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct Config {
    /// The CTA shape (`-n`); when `None`, the kernel's `.reqntid`, else its `.maxntid`.
    pub threads: Option<CtaShape>,
    /// The index of the emulated CTA in the grid (`--cta`).
    pub cta: [u32; 3],
    /// The grid shape (`--grid`); each dimension is raised to at least `cta + 1`.
    pub grid: [u32; 3],
    /// Run the lanes of a warp in lock-step (`--warp-sync`).
    pub warp_sync: bool,
    /// Parameter values fixed on the command line (`--param`).
    pub params: Vec<ParamBinding>,
    /// Per-thread instruction budget; a thread exceeding it makes the kernel unverifiable.
    pub step_limit: u64,
    /// Memory budget in bytes (`--max-memory`): what the emulation charges (register files,
    /// the written pages of shared, local and parameter memory, and per recorded command an
    /// allowance for the later stages) may not exceed it. Reaching it makes the kernel
    /// unverifiable; a run that needs more before its first instruction is
    /// [`Error::MemoryBudget`].
    pub max_memory: u64,
    /// Bytes of dynamic shared memory (`%dynamic_smem_size`); `None` means unknown.
    pub dynamic_shared: Option<u32>,
    /// Loads from initialized `.global`/`.const` module variables return their
    /// initializers (`false`: `--no-initializers`, they are unknown inputs).
    pub initializers: bool,
    /// Branches on symbolic predicates that decide synchronization become choices
    /// ([`explore`]); `None`: they make the kernel unverifiable.
    pub choices: Option<ChoicePlan>,
    /// Term nodes an exploration ([`explore`]) may evaluate in all searching for inputs
    /// that follow its paths ([`DEFAULT_SEARCH_BUDGET`]).
    pub search_budget: u64,
    /// The CTA-wide instruction budget when less than [`CTA_STEP_FACTOR`] × `step_limit`:
    /// what an exploration's earlier paths left of it ([`explore`]).
    pub cta_limit: Option<u64>,
    /// Every *peek* (an `mbarrier.try_wait`/`test_wait` whose "not ready" answer does not
    /// lead back to it: CUTLASS's `consumer_try_wait` before its blocking fallback) answers
    /// "not ready" at once, recording no wait. `false`: a peek of an incomplete phase waits
    /// for it like a spinning wait. The CLI runs a kernel with peeks both ways
    /// (`docs/semantics.md` §4.3).
    pub peeks_fail: bool,
    /// Value terms (`docs/semantics.md` §5 *Benign races*): every shared store of an unknown
    /// value without a term records the stored bytes as a fresh *atom*, which a load of
    /// exactly those bytes reads back, and a floating-point (or other uncomputed, pure)
    /// operation on termed operands gets the term "this instruction on those operands".
    /// Two plain shared writes of one such term store the same bytes (a benign race, not a
    /// race). Value terms never decide a branch, an address or a wait: a run with them
    /// records the same programs as one without. The CLI runs a kernel with races a second
    /// time with them.
    pub value_terms: bool,
    /// At the end of a run with choices, also search up to this many other inputs that
    /// follow its choices ([`Emulation::alternative_witnesses`]): other values of its
    /// variables, for a failing path whose first witness does not reproduce (`explore`).
    pub alternative_witnesses: u32,
    /// Branches on input-dependent predicates that decide no synchronization, and
    /// instructions under such guards, are choices too when their predicate has a term
    /// ([`explore`]): each side is its own path instead of both sides running in one (with
    /// their accesses marked `may`). The CLI repeats an exploration this way when a path's
    /// finding does not reproduce on a concrete run and the path ran such a branch both ways
    /// ([`Emulation::data_forks`], `docs/semantics.md` §6.5).
    pub split_data_branches: bool,
    /// Values of global inputs (`docs/semantics.md` §6.5): a concrete run of an explored
    /// path fixes the ones its witness gives.
    pub inputs: Vec<InputBinding>,
}

impl Config {
    /// The CTA-wide instruction budget: [`CTA_STEP_FACTOR`] × `step_limit`, or less.
    pub fn cta_limit(&self) -> u64 {
        let full = self.step_limit.saturating_mul(CTA_STEP_FACTOR);
        self.cta_limit.map_or(full, |l| l.min(full))
    }
}

/// How one run of an exploration answers its choices (`docs/semantics.md` §6.5).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChoicePlan {
    /// The answers of the run's first choices, in order; later choices take the side with
    /// the smaller values.
    pub answers: Vec<bool>,
    /// Choices one branch makes on one variable per path (a loop's trips) before the
    /// variable's larger values are no longer explored there (`--max-trips`).
    pub max_trips: u32,
    /// Term nodes the run's search for inputs that follow its choices may evaluate
    /// (what is left of the exploration's [`Config::search_budget`]); a run that needs more
    /// is abandoned with [`Emulation::search_exhausted`].
    pub search_budget: u64,
    /// Later choices take the side with the larger values instead (until the
    /// [`ChoicePlan::max_trips`] bound): the long runs of the induction over trip counts
    /// ([`induct`]).
    pub prefer_large: bool,
    /// Variables whose choices take the side holding the given value (the induction's runs
    /// for one value of a loop's remainder, `n & 3` of a loop unrolled 4 times).
    pub pins: Vec<(Variable, u64)>,
}

/// A symbolic term over kernel-parameter bytes, as data (the cli renders it).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Expr {
    /// Bytes `start..end` of kernel parameter `index`, zero- or sign-extended.
    Param {
        /// 0-based parameter index.
        index: u32,
        /// The parameter's name.
        name: String,
        /// First byte (offset inside the parameter).
        start: u32,
        /// One past the last byte.
        end: u32,
        /// The bytes are the whole (scalar) parameter.
        whole: bool,
        /// Sign-extended.
        signed: bool,
        /// The bytes are the whole of a scalar `.f32` or `.f64` parameter (its values are
        /// IEEE bit patterns).
        float: bool,
    },
    /// A constant.
    Const(u64),
    /// A floating-point constant: the IEEE 754 value of `width` bits (32 or 64) whose bit
    /// pattern is `bits` (an operand of a floating-point operation).
    Float {
        /// The width of the value.
        width: u8,
        /// Its bit pattern.
        bits: u64,
    },
    /// `(base + k) mod 2^bits`.
    Plus {
        /// The base term.
        base: Box<Expr>,
        /// The constant added (modulo `2^bits`).
        k: u64,
        /// The width.
        bits: u8,
    },
    /// Another operation, by name (`mul`, `shr`, `div`, `cvt`, `ult` for an unsigned `<`,
    /// …), on its operands.
    Op {
        /// The operation.
        op: String,
        /// Its operands.
        args: Vec<Expr>,
    },
    /// Bytes `start..end` of a *global input* (`docs/semantics.md` §6.5): the `size`-byte
    /// value weak loads read at one address of global or constant memory, zero- or
    /// sign-extended.
    Input {
        /// The load instruction that read it first.
        inst: InstId,
        /// It is that instruction's `nth` input of the run (0-based, in the order of first
        /// reads): what a concrete run's [`InputBinding`] names.
        nth: u32,
        /// The address it was read at.
        address: Box<Expr>,
        /// The load's width in bytes.
        size: u8,
        /// First byte.
        start: u8,
        /// One past the last byte.
        end: u8,
        /// Sign-extended.
        signed: bool,
    },
}

impl Expr {
    /// Whether the term reads a global input ([`Expr::Input`]).
    pub fn mentions_input(&self) -> bool {
        match self {
            Expr::Input { .. } => true,
            Expr::Param { .. } | Expr::Const(_) | Expr::Float { .. } => false,
            Expr::Plus { base, .. } => base.mentions_input(),
            Expr::Op { args, .. } => args.iter().any(Expr::mentions_input),
        }
    }
}

/// The value a run gives a global input ([`Expr::Input`]): a witness's, fixed for a concrete
/// run of an explored path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InputBinding {
    /// The load instruction that reads it first.
    pub inst: InstId,
    /// Which of that instruction's inputs (in the order of first reads).
    pub nth: u32,
    /// The load's width in bytes.
    pub size: u8,
    /// The value.
    pub value: u64,
}

/// What a choice decides on: the value of a term, read as a `bits`-wide unsigned integer.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Variable {
    /// The term.
    pub expr: Expr,
    /// The width its value is read at (1 for a predicate that is not a comparison with a
    /// constant: the variable is the predicate itself).
    pub bits: u8,
}

/// A branch on a symbolic predicate that decided synchronization, and the answer the run
/// took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Choice {
    /// The branch (or guarded instruction).
    pub inst: InstId,
    /// The first thread that reached it undecided.
    pub thread: ThreadId,
    /// What the predicate constrains.
    pub variable: Variable,
    /// The predicate's value on this path.
    pub answer: bool,
    /// The values of the variable this path allows after the choice (inclusive intervals).
    pub values: Vec<(u64, u64)>,
    /// The values the other answer allowed.
    pub alternative: Vec<(u64, u64)>,
    /// The other answer is not explored: this branch had made [`ChoicePlan::max_trips`]
    /// choices on the variable on this path.
    pub bounded: bool,
}

impl Default for Config {
    fn default() -> Self {
        Config {
            threads: None,
            cta: [0; 3],
            grid: [1; 3],
            warp_sync: false,
            params: Vec::new(),
            step_limit: 10_000_000,
            max_memory: DEFAULT_MAX_MEMORY,
            dynamic_shared: None,
            initializers: true,
            choices: None,
            search_budget: DEFAULT_SEARCH_BUDGET,
            cta_limit: None,
            peeks_fail: false,
            value_terms: false,
            alternative_witnesses: 0,
            split_data_branches: false,
            inputs: Vec::new(),
        }
    }
}

/// A `.shared` variable and where the emulator placed it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SharedSymbol {
    /// The variable's name.
    pub name: String,
    /// Byte offset in the CTA's shared window.
    pub offset: u32,
    /// Size in bytes; `None` for an extern dynamic array of unknown size.
    pub size: Option<u32>,
    /// The alignment its declaration guarantees, a power of two: its `.align`, else its
    /// element size (for the extern arrays, which share one start, the largest of theirs).
    /// Wherever the real layout puts it, its address is a multiple of this, so the address
    /// of a byte inside it is known modulo this and no more (the misaligned-address check).
    pub align: u32,
}

/// The variable of `symbols` that holds byte `addr` of the shared window (the first declared
/// when extern arrays share a start).
pub fn shared_symbol_at(symbols: &[SharedSymbol], addr: u32) -> Option<&SharedSymbol> {
    symbols.iter().find(|s| s.contains(addr))
}

impl SharedSymbol {
    /// Whether byte `addr` of the shared window lies in the variable (in an extern array of
    /// unknown size: any byte from its start).
    pub fn contains(&self, addr: u32) -> bool {
        addr >= self.offset
            && self
                .size
                .is_none_or(|size| u64::from(addr) < u64::from(self.offset) + u64::from(size))
    }

    /// The variable's source name: a function-local static as nvcc mangles it
    /// (`_ZZ15missing_barrierPKfPfE1s`) is `s`; other names are unchanged.
    pub fn source_name(&self) -> &str {
        let name = self.name.as_str();
        if !name.starts_with("_ZZ") {
            return name;
        }
        let Some(e) = name.rfind('E') else {
            return name;
        };
        let rest = &name[e + 1..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        match rest[..digits].parse::<usize>() {
            Ok(len) if digits.checked_add(len) == Some(rest.len()) && len > 0 => &rest[digits..],
            _ => name,
        }
    }
}

/// Where an unknown value came from.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ValueSource {
    /// A kernel parameter (`offset` for a field inside a struct parameter).
    Param {
        /// 0-based parameter index.
        index: u32,
        /// The parameter's name.
        name: String,
        /// Byte offset of the field loaded, for aggregate parameters.
        offset: Option<u32>,
    },
    /// Bytes `start..end` of a kernel parameter that no `--param` fixed (a field of a
    /// by-value struct, or part of a scalar).
    ParamBytes {
        /// 0-based parameter index.
        index: u32,
        /// The parameter's name.
        name: String,
        /// First byte (offset inside the parameter).
        start: u32,
        /// One past the last byte.
        end: u32,
    },
    /// A load from global memory.
    GlobalLoad(InstId),
    /// A load from constant memory.
    ConstLoad(InstId),
    /// A load from local memory whose bytes were unknown.
    LocalUnknown(InstId),
    /// A texture or surface load.
    TextureLoad(InstId),
    /// `%clock`, `%globaltimer` and similar.
    Clock(InstId),
    /// The result of an atomic operation (depends on the interleaving).
    Atomic(InstId),
    /// A shared-memory load of bytes never written with known values.
    SharedUnknown(InstId),
    /// A hardware special register with no fixed value (`%smid`, `%warpid`, …).
    SpecialRegister(&'static str),
    /// Floating-point arithmetic the emulator does not evaluate.
    Float(InstId),
    /// Anything else, described.
    Other(&'static str),
}

impl fmt::Display for ValueSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValueSource::Param {
                index,
                name,
                offset: None,
            } => write!(f, "kernel parameter {index} `{name}`"),
            ValueSource::Param {
                index,
                name,
                offset: Some(o),
            } => write!(
                f,
                "bytes at offset {o} of kernel parameter {index} `{name}`"
            ),
            ValueSource::ParamBytes {
                index,
                name,
                start,
                end,
            } => write!(f, "param {index} (`{name}`) bytes {start}..{end}"),
            ValueSource::GlobalLoad(i) => write!(f, "a global-memory load (instruction {})", i.0),
            ValueSource::ConstLoad(i) => write!(f, "a constant-memory load (instruction {})", i.0),
            ValueSource::LocalUnknown(i) => {
                write!(f, "unknown local memory (instruction {})", i.0)
            }
            ValueSource::TextureLoad(i) => write!(f, "a texture load (instruction {})", i.0),
            ValueSource::Clock(i) => write!(f, "a clock read (instruction {})", i.0),
            ValueSource::Atomic(i) => write!(f, "an atomic result (instruction {})", i.0),
            ValueSource::SharedUnknown(i) => {
                write!(f, "uninitialized shared memory (instruction {})", i.0)
            }
            ValueSource::SpecialRegister(r) => write!(f, "special register {r}"),
            ValueSource::Float(i) => {
                write!(f, "floating-point arithmetic (instruction {})", i.0)
            }
            ValueSource::Other(s) => f.write_str(s),
        }
    }
}

/// Kinds of violations the emulator itself detects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FindingKind {
    /// A shared-memory access outside the CTA's shared window.
    SharedOutOfBounds,
    /// A shared-memory access, or an mbarrier or asynchronous-copy operand, whose address
    /// is not a multiple of the alignment the PTX ISA requires (a plain access: its access
    /// size; an mbarrier object: 8 bytes; a bulk copy: 16 bytes), decided by the alignment
    /// the variable's declaration guarantees: undefined (it may fault or mask the low
    /// address bits).
    MisalignedAddress,
    /// A reachable `trap`/`brkpt`.
    TrapReachable,
    /// A `.sync` warp collective whose member mask names lanes that never execute it (nor,
    /// from sm_70 on, another collective of the same kind, qualifiers and mask): it waits
    /// forever (a deadlock).
    CollectiveDeadlock,
    /// Threads of one warpgroup that did not all execute the same `.sync.aligned` `wgmma`
    /// instruction (a warp skipped it, or lanes diverged around it), or lanes of one warp
    /// that did not all execute the same other `.aligned` instruction (`ldmatrix`,
    /// `tcgen05.ld`, ...): undefined in PTX.
    WarpgroupDivergence,
    /// A violation of the tensor-memory rules: an invalid column count, an allocation after
    /// `tcgen05.relinquish_alloc_permit`, columns allocated and deallocated in different
    /// numbers when the kernel exits, or a `tcgen05.ld`/`st` outside its warp's lanes.
    TensorMemory,
    /// A cluster launch control request after the thread observed a failed one, which the
    /// PTX ISA calls undefined.
    ClusterLaunchControl,
    /// A bulk copy (`cp.async.bulk`, not a reduction) whose byte count is not a multiple of
    /// 16, which the copy requires (NVIDIA's `cuda::ptx` notes on *cp.async.bulk*).
    BulkCopySize,
}

/// A violation found while emulating.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What went wrong.
    pub kind: FindingKind,
    /// The thread.
    pub thread: ThreadId,
    /// The instruction.
    pub inst: InstId,
    /// A full sentence.
    pub message: String,
    /// For a failing `assert`: what the assertion says.
    pub assertion: Option<Assertion>,
}

/// What a CUDA `assert` says, decoded from the string data the arguments of its
/// `__assertfail` call point to; each part is `None` when its argument is not a known
/// address of initialized data.
#[derive(Debug, Clone, PartialEq, Eq, Default, Hash)]
pub struct Assertion {
    /// The asserted expression as written in the source (`t < 64`).
    pub message: Option<String>,
    /// The source file the assertion is in, as the compiler wrote it.
    pub file: Option<String>,
    /// The source line.
    pub line: Option<u32>,
    /// The function it is in (`void k(const int *, int *)`).
    pub function: Option<String>,
}

/// A trap (a failing `assert`, or `trap`) that an input-dependent branch can reach. The
/// trapping side only aborts the launch and decides no synchronization, so the emulation
/// follows the other side: the verdict covers the executions in which the assertion holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assumption {
    /// The `__assertfail` call or `trap` assumed not to be reached.
    pub inst: InstId,
    /// The branch on an unknown predicate that leads to it.
    pub branch: InstId,
    /// What the assertion says, for `__assertfail`.
    pub assertion: Option<Assertion>,
}

/// Emulation statistics.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Stats {
    /// Thread-instructions executed.
    pub instructions: u64,
    /// Commands recorded over all threads.
    pub commands: u64,
    /// Wall-clock seconds spent lowering and emulating.
    pub seconds: f64,
    /// Of [`Stats::instructions`], those this run did not execute: a path of an exploration
    /// that resumed from a checkpoint of an earlier path's run (the same run up to there).
    pub resumed: u64,
}

/// The result of emulating one CTA.
#[derive(Debug, Clone, PartialEq)]
pub struct Emulation {
    /// Per-thread programs.
    pub program: Program,
    /// Static instructions (including called functions), indexed by [`InstId`].
    pub sources: SourceTable,
    /// Shared variables and their placement.
    pub shared: Vec<SharedSymbol>,
    /// Empty when the programs are complete and independent of unknown inputs.
    pub unverifiable: Vec<Unverifiable>,
    /// Violations the emulator detected.
    pub findings: Vec<Finding>,
    /// Traps the verdict assumes are not reached (assertions assumed to hold), in the order
    /// first met.
    pub assumptions: Vec<Assumption>,
    /// The traps the run reached through the failing side of an assertion (a conditional
    /// branch into code that only traps), with a predicate its inputs decided (a path's
    /// choices, or values fixed). The exploration takes them as assumptions when another
    /// path avoids them ([`explore::explore`]), the induction's base leaves out a value
    /// whose run reaches only such traps; each is also a [`FindingKind::TrapReachable`].
    pub failed_assertions: Vec<Assumption>,
    /// Approximations that applied to this kernel (full sentences), e.g. skipped tensor-core
    /// instructions or unchecked accesses into a dynamic shared array of unknown size.
    pub notes: Vec<String>,
    /// Statistics.
    pub stats: Stats,
    /// The choices this run made ([`Config::choices`]), in order.
    pub choices: Vec<Choice>,
    /// The values of each variable the run's choices allow (inclusive intervals), in order
    /// of first choice.
    pub path_values: Vec<(Variable, Vec<(u64, u64)>)>,
    /// The run stopped without a verdict of its own: its remaining inputs are not explored
    /// (a required value would need a parameter field outside the explored range; the
    /// values are in [`Emulation::not_explored`]) or it has none (an assumed assertion
    /// fails for every input on it).
    pub abandoned: bool,
    /// Values this run left unexplored (sides of choices without a witness input, or the
    /// rest of an abandoned run).
    pub not_explored: Vec<(Variable, Vec<(u64, u64)>)>,
    /// Term nodes this run's search for inputs evaluated.
    pub search_work: u64,
    /// The search ran out of [`ChoicePlan::search_budget`]: the run was abandoned there.
    pub search_exhausted: bool,
    /// Values of the parameter fields the choices depend on under which a launch follows
    /// this run's choices (found by search and checked exactly); empty without choices.
    pub witness: Vec<(Expr, u64)>,
    /// Other inputs that follow this run's choices ([`Config::alternative_witnesses`]),
    /// each for another value of one of its variables; empty unless asked for.
    pub alternative_witnesses: Vec<Vec<(Expr, u64)>>,
    /// When every choice of the run is on terms of one parameter field: that field and
    /// its values up to [`explore::SCAN_LIMIT`] that follow this run (inclusive intervals).
    pub path_inputs: Option<(Expr, Vec<(u64, u64)>)>,
    /// Peeks executed ([`Config::peeks_fail`]): `mbarrier.try_wait`/`test_wait`s whose
    /// "not ready" answer does not lead back to them.
    pub peeks: u64,
    /// The run ran both sides of a branch (or an instruction under a guard) on an
    /// input-dependent predicate with a term that decides no synchronization: a choice
    /// under [`Config::split_data_branches`].
    pub data_forks: bool,
}

impl Emulation {
    /// Whether every trap the run reached is an assertion its inputs fail
    /// ([`Emulation::failed_assertions`]), and it reached one.
    pub fn fails_only_assertions(&self) -> bool {
        !self.failed_assertions.is_empty()
            && self
                .findings
                .iter()
                .filter(|f| f.kind == FindingKind::TrapReachable)
                .all(|f| self.failed_assertions.iter().any(|a| a.inst == f.inst))
    }
}

/// Errors that prevent emulation altogether.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Error {
    /// No `.entry` with a body has this name.
    #[error("kernel `{0}` not found")]
    KernelNotFound(String),
    /// No `-n`, `.reqntid` or `.maxntid`.
    #[error("kernel `{kernel}` declares neither .reqntid nor .maxntid; pass the CTA shape with -n")]
    NoCtaShape {
        /// The kernel.
        kernel: String,
    },
    /// The emulation would need more memory than [`Config::max_memory`] before its first
    /// instruction (register files and page tables of the memory windows).
    #[error(
        "the emulation needs {} before its first instruction ({what}), more than the memory budget of {} (--max-memory)",
        bytes_text(*needed),
        bytes_text(*limit)
    )]
    MemoryBudget {
        /// Bytes needed.
        needed: u64,
        /// The budget.
        limit: u64,
        /// What needs them.
        what: String,
    },
    /// A configuration value is invalid.
    #[error("invalid configuration: {0}")]
    InvalidConfig(String),
    /// A parameter binding does not fit the kernel.
    #[error(transparent)]
    Param(#[from] ParamError),
    /// The kernel's PTX cannot be lowered (undeclared register, unknown label, …).
    #[error("PTX line {line}: {message}")]
    Lowering {
        /// PTX line.
        line: u32,
        /// What is wrong.
        message: String,
    },
}

/// Emulates CTA `config.cta` of `kernel` in `module`.
pub fn emulate(module: &Module<'_>, kernel: &str, config: &Config) -> Result<Emulation, Error> {
    emulate_on(module, kernel, config, exec::Paths::Fast)
}

/// [`emulate`] on the chosen interpreter paths.
fn emulate_on(
    module: &Module<'_>,
    kernel: &str,
    config: &Config,
    paths: exec::Paths,
) -> Result<Emulation, Error> {
    let start = std::time::Instant::now();
    let (ir, shape) = prepare(module, kernel, config)?;
    let mut emulation = exec::run(&ir, shape, config, paths)?;
    emulation.stats.seconds = start.elapsed().as_secs_f64();
    Ok(emulation)
}

/// A kernel lowered once for the paths of an exploration ([`explore::explore`]): the paths
/// differ in their choice plans and budgets, which lowering does not read (it reads the
/// CTA shape and the `--param` bindings only), so each path that keeps the exploration's
/// shape and bindings runs on this one [`ir::Ir`] instead of lowering the kernel again. A
/// path with other bindings (a witness pinned as parameters) is lowered on its own.
pub(crate) struct Lowered {
    ir: ir::Ir,
    shape: CtaShape,
    threads: Option<CtaShape>,
    params: Vec<ParamBinding>,
    /// Seconds the lowering took, charged to the first emulation that uses it.
    seconds: f64,
    charged: std::sync::atomic::AtomicBool,
    /// The answers of the choices made by each run with lock-step of a path that became
    /// reordered (`exec::run_reordering`): a later path whose plan answers its first choices
    /// the same way becomes reordered at the same moment, so it starts lane by lane (the
    /// CUTLASS Hopper GEMMs' paths became reordered at a choice near their end, and ran
    /// their lock-step prefix twice, once in vain).
    reordered: std::sync::Mutex<Vec<Vec<bool>>>,
}

impl Lowered {
    /// `kernel` lowered for `config`'s shape and bindings; `None` when it cannot be (each
    /// path's [`emulate`] then reports why).
    pub(crate) fn new(module: &Module<'_>, kernel: &str, config: &Config) -> Option<Self> {
        let start = std::time::Instant::now();
        let (ir, shape) = prepare(module, kernel, config).ok()?;
        Some(Lowered {
            ir,
            shape,
            threads: config.threads,
            params: config.params.clone(),
            seconds: start.elapsed().as_secs_f64(),
            charged: std::sync::atomic::AtomicBool::new(false),
            reordered: std::sync::Mutex::new(Vec::new()),
        })
    }
}

/// [`emulate`], on `lowered` when it was lowered for `config`'s shape and bindings.
///
/// With `store` (an exploration's checkpoints, [`exec::Checkpoints`]): the run resumes from
/// the checkpoint that fits it with the most choices made, the same run from there on,
/// and adds checkpoints of its own after the choices its plan answers.
pub(crate) fn emulate_lowered<'a>(
    lowered: Option<&'a Lowered>,
    module: &Module<'_>,
    kernel: &str,
    config: &Config,
    mut store: Option<&mut exec::Checkpoints<'a>>,
) -> Result<Emulation, Error> {
    match lowered {
        Some(l) if l.threads == config.threads && l.params == config.params => {
            let start = std::time::Instant::now();
            // Lane by lane from the start when an earlier path's run with lock-step became
            // reordered after the choices this path's plan begins with (the same run up to
            // there). Either start gives the same emulation; this one saves the repeat.
            let answers = config.choices.as_ref().map(|p| p.answers.as_slice());
            let lanes = answers.is_some_and(|answers| {
                l.reordered.lock().is_ok_and(|seen| {
                    seen.iter()
                        .any(|prefix| answers.get(..prefix.len()) == Some(prefix.as_slice()))
                })
            });
            let paths = if lanes {
                exec::Paths::Lanes
            } else {
                exec::Paths::Fast
            };
            let checkpoints = store.as_mut().map(|s| {
                let mut c = std::mem::replace(*s, exec::Checkpoints::new(0));
                c.for_path(answers.map_or(0, <[bool]>::len));
                c
            });
            let exec::Ran {
                mut emulation,
                reordered_at,
                checkpoints,
            } = exec::run_reordering(&l.ir, l.shape, config, paths, checkpoints)?;
            if let (Some(s), Some(c)) = (store, checkpoints) {
                *s = c;
            }
            if let Some(prefix) = reordered_at
                && let Ok(mut seen) = l.reordered.lock()
                && !seen.contains(&prefix)
            {
                seen.push(prefix);
            }
            let lowering = if l.charged.swap(true, std::sync::atomic::Ordering::Relaxed) {
                0.0
            } else {
                l.seconds
            };
            emulation.stats.seconds = start.elapsed().as_secs_f64() + lowering;
            Ok(emulation)
        }
        _ => emulate(module, kernel, config),
    }
}

/// The lowered kernel and its CTA shape.
fn prepare(
    module: &Module<'_>,
    kernel: &str,
    config: &Config,
) -> Result<(ir::Ir, CtaShape), Error> {
    let function = module
        .entries()
        .find(|f| f.name == kernel)
        .ok_or_else(|| Error::KernelNotFound(kernel.to_string()))?;
    let shape = match config.threads {
        Some(shape) => shape,
        None => {
            let dims = function
                .perf
                .reqntid
                .or(function.perf.maxntid)
                .ok_or_else(|| Error::NoCtaShape {
                    kernel: kernel.to_string(),
                })?;
            CtaShape {
                x: dims[0],
                y: dims[1],
                z: dims[2],
            }
        }
    };
    let total = u128::from(shape.x) * u128::from(shape.y) * u128::from(shape.z);
    if total == 0 || total > 1024 {
        return Err(Error::InvalidConfig(format!(
            "CTA shape {}x{}x{} has {total} threads (expected 1 to 1024)",
            shape.x, shape.y, shape.z
        )));
    }
    let ir = ir::lower(module, function, config)?;
    Ok((ir, shape))
}
