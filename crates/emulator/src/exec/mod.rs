//! The interpreter: runs every thread of one CTA over the lowered IR.

use std::collections::VecDeque;

use crate::ir::{FuncId, Inst, Ir, Op, Opnd, RedKind, RegId};
use crate::unverifiable::{Region, Why};
use crate::{Assumption, Config, Emulation, Error, Finding, Unverifiable, ValueSource};
use descriptor::{Footprint, LayoutError, OperandShape, SmemDesc};
use paged::Paged;
use rustc_hash::FxHashMap;
use values::Sources;
use weft_program::{
    AccessKind, AsyncCopy, BarrierFile, BarrierOp, Command, CtaShape, InstId, MbarrierFile, Proxy,
    ThreadId, WARP_SIZE,
};

/// Iterates the set bits of a lane mask, lowest first (defined before the
/// modules, so that every one of them can use it).
macro_rules! each_lane {
    ($mask:expr, |$l:ident| $body:block) => {{
        let mut m: u32 = $mask;
        while m != 0 {
            let $l = m.trailing_zeros() as usize;
            m &= m - 1;
            $body
        }
    }};
}

mod alu;
mod async_copy;
mod barriers;
mod calls;
mod choices;
mod clc;
mod collectives;
mod control;
mod descriptor;
mod fast;
mod finish;
mod float;
pub(crate) mod induct;
mod inputs;
mod mbarrier;
mod memory;
pub(crate) use memory::COMMAND_BYTES;
#[cfg(test)]
pub(crate) use memory::{AGENT_BYTES, AGENT_RECORD};
mod paged;
mod reorder;
mod report;
mod tensor;
pub(crate) mod terms;
mod tmem;
mod unknown;
mod values;
mod warp;
mod warp_pure;
mod warp_shared;
mod warpgroup;
mod written;

/// Bytes of a machine ([`Machine::memory_used`]) whose copy costs about what emulating one
/// instruction does, with room for checkpoints never used (BENCHMARKS.md): a checkpoint
/// of `b` bytes is taken only once the run has executed `b / CHECKPOINT_BYTES`
/// instructions since its last one ([`Machine::checkpoint_at`]).
const CHECKPOINT_BYTES: u64 = 64;

/// Tracked bytes of an extern dynamic shared array of unknown size.
const DYNAMIC_CAP: u32 = 256 * 1024;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Run,
    BarWait,
    MbarWait { addr: u32 },
    Coll(u32),
    Exited,
    Trapped(u32),
    Error,
}

#[derive(Debug, Clone, Copy)]
struct Frame {
    ret_pc: u32,
    rets: (u32, u32),
    func: FuncId,
}

#[derive(Debug, Clone)]
struct Thread {
    pc: u32,
    state: State,
    stack: Vec<Frame>,
    executed: u64,
    may: u32,
    may_src: u32,
    tid: [u32; 3],
    /// Destination register of a pending `bar.red` or mbarrier wait.
    wait_dest: Option<RegId>,
    /// mbarrier wait condition: parity (or token phase) and whether it is a token.
    wait_parity: u32,
    wait_token: bool,
    red_kind: RedKind,
    red_in: (u64, u32),
    path_exit: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Addr {
    Shared(u32),
    Local(u32),
    Param(u32),
    /// Offset in the kernel-parameter window.
    KParam(u32),
    /// Offset in the data window (initialized module variables).
    Data(u64),
    Global,
    /// An address that depends on unknown values (their sources).
    Unknown(u32),
}

/// The group of an asynchronous copy issued but not yet committed.
const UNCOMMITTED: u32 = u32::MAX;

/// A TMA load whose mbarrier phase has not completed yet: its byte count (in the tensor
/// map) is derived when the phase completes.
#[derive(Debug, Clone, Copy)]
struct OpenTma {
    /// The mbarrier and the phase that was current at the issue.
    mbar: u32,
    phase: u32,
    thread: usize,
    pc: u32,
    /// The copy's agent (`None` when its destination was outside the shared window).
    agent: Option<u32>,
    /// The index of its `complete_tx` command in the issuing thread (value patched when the
    /// phase completes).
    cmd: u32,
    /// The tensor map it reads, when known and a tile-mode copy of this CTA alone
    /// ([`Machine::tensor_map`]): copies of one tensor map transfer one box each, the same
    /// number of bytes.
    map: Option<TensorMap>,
}

/// A tensor map's identity: the value of the register that holds its address, or the
/// kernel parameter (index, offset) the operand names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum TensorMap {
    Address(u64),
    Param(u32, i64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PathEnd {
    Joined,
    Exited,
    Returned(u32),
    Stopped,
}

/// Where one side of a branch on an unknown predicate starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PathStart {
    At(u32),
    /// The side exits at once (an unknown-guarded `exit`).
    Exit,
}

#[derive(Clone)]
struct Machine<'a> {
    ir: &'a Ir,
    /// The fast-path table, one entry per instruction (`fast` module; shared by the
    /// machine's copies, [`Checkpoint`]).
    fast: std::sync::Arc<[fast::FastInst]>,
    cfg: std::sync::Arc<Config>,
    shape: CtaShape,
    n: usize,
    nregs: usize,
    vals: Vec<u64>,
    unk: Vec<u32>,
    th: Vec<Thread>,
    cmds: Vec<Vec<Command>>,
    steps: Vec<Vec<u32>>,
    warp_step: Vec<u32>,
    /// The CTA's shared window (`paged` module: pages allocated on first write).
    smem: Paged,
    /// Shared bytes one store of a termed value wrote whole: address → (bytes, the value's
    /// termed id). A load of exactly those bytes reads the value with its term; any other
    /// write over them drops the entry ([`Machine::read_bytes`]).
    smem_terms: FxHashMap<u32, (u8, u32)>,
    /// Bytes of the shared window that may be accessed; `None` when an extern array of
    /// unknown size makes everything from `extern_start` up to the cap accessible.
    smem_size: Option<u32>,
    /// Every thread's local window, thread `t` at `t * local_size`.
    local: Paged,
    /// Every thread's `.param` window (call arguments), thread `t` at `t * param_size`.
    pmem: Paged,
    /// The kernel-parameter window: bytes fixed by `--param` are known; the others carry
    /// `kp_unset` until something overwrites them.
    kp: Paged,
    kp_unset: u32,
    /// Commands recorded so far, all threads.
    commands: u64,
    /// Bytes charged to `--max-memory` besides the windows and the commands: the register
    /// files, and the race stage's entries for accesses longer than 16 bytes.
    charged: u64,
    /// TMA loads whose phase has not completed yet.
    tma_open: Vec<OpenTma>,
    /// Asynchronous copies recorded so far (agents of the program).
    copies: Vec<AsyncCopy>,
    /// Per thread, its `cp.async` copies not yet completed by a wait: (copy, group), the
    /// group [`UNCOMMITTED`] until a `commit_group`. Waits remove a prefix, so each pending
    /// list is a deque (a wait keeping 4,095 groups in flight moved them all at every wait).
    cp_pending: Vec<VecDeque<(u32, u32)>>,
    /// Per thread, the `cp.async` groups it committed.
    cp_committed: Vec<u32>,
    /// Per thread, its bulk copies completing through bulk groups (stores) not yet
    /// completed: (copy, group).
    bulk_pending: Vec<VecDeque<(u32, u32)>>,
    /// Per thread, the bulk groups it committed.
    bulk_committed: Vec<u32>,
    /// Per thread, the positions of its `fence.proxy.async` instructions.
    proxy_fences: Vec<Vec<u32>>,
    /// Set while an asynchronous copy records its access: `push` makes it an agent.
    divert: Option<Proxy>,
    /// Set while a TMA store records its upper-bound extent: the race stage's entries for
    /// it are charged once `finish` has clipped it (`charge_tma_stores`).
    defer_entries: bool,
    /// Execution events recorded so far (`Command::exec`): the last event's id.
    exec_events: u32,
    /// `wgmma` ordering and alignment over warpgroups (`warpgroup` module).
    wg: warpgroup::Warpgroups,
    /// What the last `.sync` collective of each warp recorded (`collectives` module).
    coll: collectives::Recorded,
    /// Warpgroup-level `wgmma.mma_async` operations (`tensor` module), and the one named
    /// by each (warpgroup, per-lane occurrence).
    wg_ops: Vec<tensor::WgmmaOp>,
    wg_index: FxHashMap<(u32, u32), u32>,
    /// Operand footprints computed so far, per descriptor and shape (every thread of a
    /// warpgroup lays out the same operands; cleared when it grows past
    /// `FOOTPRINT_CACHE` entries).
    footprints: FxHashMap<(SmemDesc, OperandShape), Result<Footprint, LayoutError>>,
    /// The shape of each `wgmma.mma_async` instruction executed so far, by pc.
    wg_shapes: FxHashMap<u32, Option<tensor::WgmmaShape>>,
    /// Per thread: its `wgmma.mma_async` executions so far, its operations not yet retired
    /// by a `wgmma.wait_group` (operation, group; [`UNCOMMITTED`] until a commit), and the
    /// groups it committed.
    wg_occ: Vec<u32>,
    wg_pending: Vec<VecDeque<(u32, u32)>>,
    wg_committed: Vec<u32>,
    /// Completion sets shared by copies ([`weft_program::AsyncOps::joint_done`]).
    joint_done: Vec<Vec<(ThreadId, u32)>>,
    /// Sides of branches on unknown predicates whose first issued copies
    /// ([`weft_program::AsyncOps::exclusive`]).
    exclusive: Vec<weft_program::ExclusiveSides>,
    /// Per `mbarrier.try_wait`/`test_wait` with a result: whether it is a peek (its "not
    /// ready" answer does not lead back to it; [`crate::Config::peeks_fail`]).
    peek_at: FxHashMap<u32, bool>,
    /// Peeks executed.
    peeks: u64,
    /// Both sides of a branch on a termed predicate that decides no synchronization ran
    /// ([`crate::Emulation::data_forks`]).
    data_forks: bool,
    /// The kernel read its cluster shape (`%cluster_nctaid`, `%cluster_nctarank`), which
    /// weft takes as 1x1x1 unless the kernel declares one.
    cluster_read: bool,
    /// `clusterlaunchcontrol.try_cancel` requests the CTA made (`exec/clc.rs`).
    clc_requests: u32,
    /// Per thread, the latest answer it queried with `query_cancel.is_canceled`: the
    /// request's number and the answer (to tell a request after an observed failure).
    clc_observed: Vec<Option<(u32, (u64, u32))>>,
    /// The predicates (a term, and the value under which the side runs) of the sides of
    /// branches on unknown predicates being run now ([`Machine::fork`]; one thread at a time).
    fork_guards: Vec<(terms::TermId, bool)>,
    /// Copies issued inside such sides, with the guards they were issued under: a copy whose
    /// guard the path's choices decide false at the end never happened on the path
    /// ([`Machine::drop_infeasible_copies`]).
    copy_guards: Vec<(u32, Vec<(terms::TermId, bool)>)>,
    /// With [`crate::Config::peeks_fail`]: the (thread, peek, mbarrier, phase) that answered
    /// "not ready".
    peeks_failed: rustc_hash::FxHashSet<(u32, u32, u32, u32)>,
    /// With [`crate::Config::peeks_fail`]: per (thread, mbarrier) the phase the thread's
    /// peeks take as current after a "not ready" that stood for it being incomplete, until
    /// the thread's next blocking wait on the object.
    peek_lag: rustc_hash::FxHashMap<(u32, u32), u32>,
    /// Per thread, the agents of its `tcgen05.mma` operations, and per (thread, mbarrier)
    /// how many of them a `tcgen05.commit` on that mbarrier already tracks.
    tc_issued: Vec<Vec<u32>>,
    /// The threads' tensor-memory accesses in flight (`tmem` module).
    tm: tmem::Accesses,
    /// Per thread, while it runs a side of a branch on an unknown value (or an instruction
    /// under an unknown guard): the first agent issued there. A `tcgen05.wait` there
    /// completes only agents from it on, the ones that exist in every execution running it.
    side_floor: Vec<u32>,
    tc_attached: FxHashMap<(u32, u32), usize>,
    /// Tensor-memory accounting (`tensor` module).
    tmem: tensor::TensorMemory,
    /// The TMA loads and stores among `copies`.
    tma_loads: Vec<u32>,
    /// The TMA loads of a known tensor map ([`OpenTma::map`]): every copy of one map moves
    /// one box, the same bytes ([`Machine::clip_tma_extents`]).
    tma_load_maps: Vec<(u32, TensorMap)>,
    tma_stores: Vec<u32>,
    /// Shared addresses of tensor maps (`tensormap.replace`, `tensormap.cp_fenceproxy`):
    /// like TMA destinations, bounds of the TMA extents weft over-approximates.
    tensormaps: Vec<u32>,
    /// Shared addresses of mbarrier objects (`mbarrier.init`): bounds of the TMA extents
    /// too, since their 8 bytes are accesses of the race stage (`Machine::mbar_write`).
    mbar_objects: Vec<u32>,
    bars: BarrierFile,
    mbars: MbarrierFile,
    /// The values of plain shared writes whose bytes were all known (`Program::values`), and
    /// the id of each.
    values: Vec<u128>,
    value_ids: rustc_hash::FxHashMap<u128, u16>,
    /// A direct-mapped cache of `value_ids` ([`written::ValueCache`]): a warp's stores
    /// look their values up once per lane, and the map's probe was most of that.
    value_cache: written::ValueCache,
    /// Ids of symbolic written values: a register's term and the bytes stored
    /// ([`weft_program::Program::symbolic_values`]).
    term_value_ids: rustc_hash::FxHashMap<(written::TermTag, u32), u16>,
    /// Executions of `mbarrier.init` so far per (thread, instruction): the occurrence that
    /// makes lanes of one warp one initialization.
    init_occ: rustc_hash::FxHashMap<(u32, u32), u32>,
    src: Sources,
    unverifiable: Vec<Unverifiable>,
    reported: rustc_hash::FxHashSet<u32>,
    findings: Vec<Finding>,
    /// The (kind, instruction, thread) of every finding so far: the report names each
    /// thread once per kind and instruction, so a loop that repeats one finding records it
    /// once (a mutant's 10⁹-iteration out-of-bounds store recorded 8 GiB of them).
    found: rustc_hash::FxHashSet<(crate::FindingKind, u32, u32)>,
    /// Kernel-parameter loads so far, (offset, size, signed) → (value, id): the window is
    /// read-only (a store into it clears this), so a loop re-reading a parameter gets the
    /// same value and term without reading the bytes again.
    kparam_reads: FxHashMap<(u32, u32, bool), (u64, u32)>,
    /// The global inputs read so far (`inputs`).
    inputs: inputs::Inputs,
    notes: Vec<String>,
    stop: bool,
    instructions: u64,
    shared_base: u64,
    local_base: u64,
    win: crate::ir::Windows,
    region_cache: FxHashMap<u32, Result<Option<u32>, Region>>,
    /// Per branch on an unknown predicate whose sides are run one after the other: whether
    /// the not-taken side runs first ([`Machine::fork`]).
    fall_first: FxHashMap<u32, bool>,
    /// Register-file copies of the forks in progress, kept for the next fork (a cache: a
    /// branch on an unknown predicate in a loop allocated five vectors per trip).
    fork_bufs: Vec<(Vec<u64>, Vec<u32>)>,
    /// Per branch on an unknown predicate: the registers its region names (every register
    /// when the region calls a function), which are all a fork can change.
    fork_regs: FxHashMap<u32, std::sync::Arc<[u32]>>,
    /// Set while an instruction that needs no terms computes ([`Machine::terms_for`]);
    /// false otherwise.
    terms_off: bool,
    /// Set while an instruction computes whose results never reach a shared store's value
    /// (`Ir::value_observed`) in a run with value terms: it builds none.
    values_off: bool,
    uninit_shared: u32,
    /// A thread trapped: threads still blocked at the end are stopped, not deadlocked (the
    /// trap aborts the launch).
    trapped: bool,
    /// Traps assumed not to be reached (the `calls` module).
    assumptions: Vec<Assumption>,
    /// The branches (and guarded traps) whose traps are in `assumptions` already.
    assumed_from: rustc_hash::FxHashSet<u32>,
    /// Assertions the path's inputs fail ([`crate::Emulation::failed_assertions`]).
    failed_assertions: Vec<Assumption>,
    /// Per initialized module variable ([`crate::ir::DataLayout`]): whether loads return its
    /// initializer in this run, whether one did, and whether the kernel wrote it.
    data_trusted: Vec<bool>,
    data_read: Vec<bool>,
    data_written: Vec<bool>,
    /// Whether converged lanes execute together (`warp` module; off for [`Paths::Lanes`]
    /// and [`Paths::GeneralOnly`]).
    warps: bool,
    /// Without `--warp-sync`: whether the current warp pass ran a lock-step group, the
    /// lane the reference schedule runs now, and the reorder check of the pass.
    pass_lockstep: bool,
    cursor: usize,
    track: reorder::Tracker,
    /// The lanes a lane running alone could form a lock-step group with
    /// ([`warp::Solo`]).
    solo: warp::Solo,
    /// Whether the kernel has an `activemask` (else no lane can wait at one).
    has_activemask: bool,
    /// Whether a lock-step group ever ran in this run.
    lockstep_used: bool,
    /// The lock-step order became visible: the run is repeated lane by lane.
    reordered: bool,
    /// The most instructions, commands and steps of one lane that one warp pass of
    /// `run_threads` has taken so far: a pass that could reach a budget runs lane by lane
    /// ([`Machine::near_budget`]).
    pass_peak: warp::PassPeak,
    /// Scratch: the lanes of a lock-step barrier operation (`Machine::warp_barrier`).
    bar_lanes: Vec<weft_program::Participant>,
    /// Scratch: the events of a lock-step barrier operation's registration.
    bar_events: Vec<weft_program::Event>,
    /// The lane permutations of the shuffles with immediate lane and clamp operands seen
    /// so far ([`warp::ShflTable`], a few per kernel).
    shfl_tables: Vec<warp::ShflTable>,
    /// Choices on symbolic predicates (`choices` module).
    choices: choices::Choices,
    /// The induction over a loop's trip count, when this run is one of its runs (`induct`
    /// module).
    induct: Option<induct::Induct>,
    /// The largest count the run found within the CTA-wide instruction budget, and the
    /// smallest it found over it ([`Machine::over_cta`]): the run is the same under every
    /// budget from the first up to the second, exclusive ([`Checkpoint::fits`]).
    cta_within: std::cell::Cell<u64>,
    cta_over: std::cell::Cell<u64>,
    /// Where the run keeps copies of itself for later paths of an exploration
    /// ([`Checkpoints`]); `None` in a run that takes none.
    checkpoints: Store<'a>,
    /// The instructions executed before the checkpoint this run resumed from (0 when it
    /// started from the beginning): [`crate::Stats::resumed`].
    resumed: u64,
}

/// The checkpoints a run holds ([`Machine::checkpoints`]); a copy of the machine (a
/// checkpoint itself) holds none.
struct Store<'a>(Option<Box<Checkpoints<'a>>>);

impl Clone for Store<'_> {
    fn clone(&self) -> Self {
        Store(None)
    }
}

impl<'a> std::ops::Deref for Store<'a> {
    type Target = Option<Box<Checkpoints<'a>>>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl std::ops::DerefMut for Store<'_> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        &mut self.0
    }
}

/// Where a scheduler's round stands between two warps' turns: the warp whose turn is next,
/// and whether a warp of the round ran so far.
#[derive(Debug, Clone, Copy, Default)]
struct Turn {
    warp: usize,
    progress: bool,
}

/// A copy of a run's machine between two warps' turns, after its first choices on symbolic
/// predicates (`docs/semantics.md` §6.5). A run is a function of the kernel, its
/// configuration and the answers of its choices, so another path of an exploration whose
/// plan answers those choices the same way, under budgets the copy's run never came near
/// ([`Checkpoint::fits`]), reaches exactly this machine at this turn: it resumes from the copy
/// ([`Checkpoints::resume`]) instead of emulating the prefix again.
pub(crate) struct Checkpoint<'a> {
    machine: Machine<'a>,
    turn: Turn,
    /// The interpreter paths of the run's start ([`run_reordering`]).
    paths: Paths,
    /// The answers of the choices made by then.
    answers: Vec<bool>,
    /// [`Machine::memory_used`] when it was taken (what the copy holds, about).
    bytes: u64,
}

/// An exploration's checkpoints, held by the run of each path in turn: the run resumes from
/// the one that fits it with the most choices made ([`Checkpoints::resume`]), takes one at
/// a turn after each new choice from the `next`-th on ([`Machine::checkpoint_at`]) while
/// all of them fit in `room` bytes, and drops them all once its own memory and theirs
/// would exceed the memory budget ([`Machine::check_memory_for`]): checkpoints never take
/// memory a run needs.
///
/// Copies cost time whether or not a later path resumes from them (a path flips the choice
/// the deepest one came after, or an earlier one: CUTLASS example 88's paths each flip a
/// choice of the prologue, before any turn ends). The exploration's copies, taken and
/// resumed from, cost at most the instructions resumed past plus those of its longest
/// finished run (at [`CHECKPOINT_BYTES`] bytes an instruction).
pub(crate) struct Checkpoints<'a> {
    from: usize,
    next: usize,
    room: u64,
    /// The bytes of `held`.
    used: u64,
    /// The instructions the run had executed at its last checkpoint, or at its start.
    since: u64,
    /// The interpreter paths the run started on ([`Checkpoint::paths`]).
    paths: Paths,
    held: Vec<Checkpoint<'a>>,
    /// Instructions the exploration's runs resumed past; the copies' cost, in instructions;
    /// the most instructions one finished run executed.
    saved: u64,
    spent: u64,
    longest: u64,
}

impl<'a> Checkpoints<'a> {
    /// An exploration's store: no checkpoints yet, at most `room` bytes of them.
    pub(crate) fn new(room: u64) -> Self {
        Checkpoints {
            from: usize::MAX,
            next: usize::MAX,
            room,
            used: 0,
            since: 0,
            paths: Paths::Fast,
            held: Vec::new(),
            saved: 0,
            spent: 0,
            longest: 0,
        }
    }

    /// Prepares the store for the run of a path whose plan answers `from` choices: it takes
    /// checkpoints after them (an earlier path's checkpoint holds each earlier prefix, and
    /// one before any choice saves nothing).
    pub(crate) fn for_path(&mut self, from: usize) {
        self.from = from.max(1);
    }

    /// The checkpoints held.
    pub(crate) fn held(&self) -> &[Checkpoint<'a>] {
        &self.held
    }

    /// Keeps the checkpoints `keep` says (one flag per checkpoint held).
    pub(crate) fn retain(&mut self, keep: &[bool]) {
        let mut k = 0;
        self.held.retain(|_| {
            k += 1;
            keep.get(k - 1).copied().unwrap_or(false)
        });
        self.used = self.held.iter().map(|c| c.bytes).sum();
    }

    /// The checkpoint a run with `cfg`, started on `paths`, resumes from: the one with the
    /// most choices made among those that [`Checkpoint::fits`] it.
    fn resume(&self, cfg: &Config, paths: Paths) -> Option<usize> {
        let mut best: Option<usize> = None;
        for (k, c) in self.held.iter().enumerate() {
            if c.fits(cfg, paths)
                && best.is_none_or(|b| self.held[b].answers.len() < c.answers.len())
            {
                best = Some(k);
            }
        }
        best
    }

    /// Drops every checkpoint and takes no more (the run needs the memory).
    fn release(&mut self) {
        self.held = Vec::new();
        self.used = 0;
        self.next = usize::MAX;
    }
}

impl<'a> Checkpoint<'a> {
    /// The choices made when it was taken, and their answers.
    pub(crate) fn answers(&self) -> &[bool] {
        &self.answers
    }

    /// The interpreter paths its run started on.
    pub(crate) fn paths(&self) -> Paths {
        self.paths
    }

    /// Whether a run with `cfg`, started on `paths`, reaches this machine at this turn: the
    /// same configuration but for the choice plan and the CTA-wide budget; a plan that
    /// answers the choices made so far as they were answered, with the same bound, pins
    /// and preference; a search budget the run's searches stayed below (a search that
    /// reached it would have stopped earlier); and a CTA-wide budget on the same side of
    /// every count the run compared with it.
    pub(crate) fn fits(&self, cfg: &Config, paths: Paths) -> bool {
        let was = &*self.machine.cfg;
        let (Some(old), Some(new)) = (&was.choices, &cfg.choices) else {
            return false;
        };
        let m = self.answers.len();
        let limit = cfg.cta_limit();
        let choices = &self.machine.choices;
        self.paths == paths
            && old.max_trips == new.max_trips
            && old.prefer_large == new.prefer_large
            && old.pins == new.pins
            && new.answers.get(..m) == Some(&self.answers[..])
            && !choices.search_exhausted
            && choices.search < new.search_budget
            && self.machine.cta_within.get() <= limit
            && limit < self.machine.cta_over.get()
            && {
                let mut same = cfg.clone();
                same.choices = was.choices.clone();
                same.cta_limit = was.cta_limit;
                same == *was
            }
    }

    /// A copy of the machine, to resume under `cfg` (which [`Checkpoint::fits`]).
    fn machine(&self, cfg: &Config) -> Machine<'a> {
        let mut m = self.machine.clone();
        m.cfg = std::sync::Arc::new(cfg.clone());
        m.resumed = m.instructions;
        m
    }
}

/// Which interpreter paths a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Paths {
    /// The fast path for the instructions it covers, the general interpreter for the rest.
    Fast,
    /// The fast path lane by lane: no warp-level execution (the reference schedule; a run
    /// whose lock-step order became visible is repeated this way).
    Lanes,
    /// The general interpreter for every instruction (differential tests).
    #[cfg_attr(not(test), allow(dead_code))]
    GeneralOnly,
}

/// Runs the CTA. A run in which the kernel writes an initialized module variable whose
/// initializer a load returned is repeated with that variable unknown (another thread or
/// CTA may write it before the load), until no such variable is left.
///
/// `paths` chooses the interpreter: [`Paths::Fast`] (the fast path where it applies) in
/// every real run; [`Paths::GeneralOnly`] only to test that both compute the same.
pub(crate) fn run(
    ir: &Ir,
    shape: CtaShape,
    cfg: &Config,
    paths: Paths,
) -> Result<Emulation, Error> {
    run_reordering(ir, shape, cfg, paths, None).map(|ran| ran.emulation)
}

/// What [`run_reordering`] returns.
pub(crate) struct Ran<'a> {
    pub(crate) emulation: Emulation,
    /// When a run with lock-step became reordered, the answers of the choices it had made.
    pub(crate) reordered_at: Option<Vec<bool>>,
    /// The checkpoints it was given, with those its runs took.
    pub(crate) checkpoints: Option<Checkpoints<'a>>,
}

/// [`run`], also returning, when a run with lock-step became reordered and was repeated
/// lane by lane, the answers of the choices it had made by then. The run is a function of
/// the kernel, the configuration and the answers of its choices, so another path of an
/// exploration whose plan answers its first choices so (with budgets that do not stop it
/// sooner) becomes reordered at the same moment; the exploration starts such a path lane by
/// lane ([`Paths::Lanes`]) instead of running its lock-step prefix in vain
/// (`crate::Lowered`). Either start gives the same emulation: a run with lock-step that
/// completes is the reference schedule's run.
///
/// With `checkpoints`, the first run resumes from the one that fits it, if any (the same
/// run from there); each run that starts as a later path's would (on its interpreter
/// paths, every initializer trusted as configured) takes checkpoints of its own. They are
/// returned.
pub(crate) fn run_reordering<'a>(
    ir: &'a Ir,
    shape: CtaShape,
    cfg: &Config,
    paths: Paths,
    checkpoints: Option<Checkpoints<'a>>,
) -> Result<Ran<'a>, Error> {
    let initial = vec![cfg.initializers; ir.data.vars.len()];
    let mut trusted = initial.clone();
    let mut paths = paths;
    let mut reordered_at = None;
    let mut store = checkpoints;
    let mut first = true;
    loop {
        let taking = trusted == initial;
        let run = store.take().map(|mut s| {
            s.next = if taking { s.from } else { usize::MAX };
            s.since = 0;
            s.paths = paths;
            Box::new(s)
        });
        let resumed = match &run {
            Some(s) if first => s.resume(cfg, paths).map(|k| {
                let c = &s.held[k];
                (c.machine(cfg), c.turn, c.bytes)
            }),
            _ => None,
        };
        first = false;
        let mut m = match resumed {
            Some((mut m, turn, bytes)) => {
                m.checkpoints = Store(run.map(|mut s| {
                    s.since = m.instructions;
                    s.saved = s.saved.saturating_add(m.instructions);
                    s.spent = s.spent.saturating_add(bytes / CHECKPOINT_BYTES);
                    s
                }));
                m.run_from(turn);
                m
            }
            None => run_once(ir, shape, cfg, trusted.clone(), paths, None, run)?,
        };
        store = m.checkpoints.take().map(|mut s| {
            s.longest = s.longest.max(m.instructions);
            *s
        });
        if m.reordered {
            // The lock-step order was visible (`warp` module): the reference schedule.
            if reordered_at.is_none() {
                reordered_at = Some(m.choices.trail.iter().map(|(c, _)| c.answer).collect());
            }
            paths = Paths::Lanes;
            continue;
        }
        let mut again = false;
        for (k, trust) in trusted.iter_mut().enumerate() {
            if *trust && m.data_read[k] && m.data_written[k] {
                *trust = false;
                again = true;
            }
        }
        if !again {
            return Ok(Ran {
                emulation: m.finish()?,
                reordered_at,
                checkpoints: store,
            });
        }
    }
}

/// One run of the induction over a loop's trip count (`induct` module), with `induct`
/// watching its moments. The lanes of a warp run in lock-step (the `--warp-sync` schedule,
/// one valid interleaving of any kernel; without `--warp-sync` nothing else of it applies):
/// in the reference schedule a lane that completes a barrier gather runs on alone, which
/// shifts the lanes against each other a little more every trip and hides the period.
/// Returns the emulation and the induction's state at its end.
pub(crate) fn run_induct(
    ir: &Ir,
    shape: CtaShape,
    cfg: &Config,
    induct: induct::Induct,
) -> Result<(Emulation, induct::Induct), Error> {
    let trusted = vec![cfg.initializers; ir.data.vars.len()];
    let mut m = run_once(ir, shape, cfg, trusted, Paths::Lanes, Some(induct), None)?;
    let induct = m
        .induct
        .take()
        .ok_or_else(|| Error::InvalidConfig("the induction state was lost".to_owned()))?;
    Ok((m.finish()?, induct))
}

fn run_once<'a>(
    ir: &'a Ir,
    shape: CtaShape,
    cfg: &Config,
    data_trusted: Vec<bool>,
    paths: Paths,
    induct: Option<induct::Induct>,
    checkpoints: Option<Box<Checkpoints<'a>>>,
) -> Result<Machine<'a>, Error> {
    let n = shape.threads() as usize;
    let nregs = ir.reg_names.len();
    // The shared window ends below tensor memory's addresses (`weft_program::TMEM_BASE`, 1
    // GiB, far beyond any GPU's shared memory): an access past it is out of bounds.
    let smem_size = match (ir.extern_start, cfg.dynamic_shared) {
        (None, _) => Some(ir.shared_static),
        (Some(start), Some(d)) => Some(start.saturating_add(d)),
        (Some(_), None) => None,
    }
    .map(|s| s.min(weft_program::TMEM_BASE));
    let tracked = smem_size
        .unwrap_or_else(|| ir.extern_start.unwrap_or(0).saturating_add(DYNAMIC_CAP))
        .min(weft_program::TMEM_BASE);
    let win = ir.windows;
    let (shared_base, local_base) = (win.shared, win.local);
    // What the run needs before its first instruction: refuse it here rather than abort.
    let local_len = n.saturating_mul(ir.local_size as usize);
    let param_len = n.saturating_mul(ir.param_size as usize);
    // Register files are allocated whole warps at a time (`values::Machine::slot`).
    let slots = n.div_ceil(WARP_SIZE as usize) * WARP_SIZE as usize;
    let registers = (slots as u64)
        .saturating_mul(nregs as u64)
        .saturating_mul(12);
    let fixed = [
        registers,
        Paged::empty_footprint(tracked as usize),
        Paged::empty_footprint(local_len),
        Paged::empty_footprint(param_len),
        Paged::empty_footprint(ir.kparam_size as usize),
    ];
    let needed = fixed.iter().fold(0u64, |a, &b| a.saturating_add(b));
    if needed > cfg.max_memory {
        return Err(Error::MemoryBudget {
            needed,
            limit: cfg.max_memory,
            what: format!(
                "{n} threads x {nregs} registers and the page tables of {tracked} bytes of shared, \
                 {} bytes of local and {} bytes of .param memory per thread",
                ir.local_size, ir.param_size
            ),
        });
    }
    // Source ids of never-written bytes, in the order the dense arrays used to take them.
    let mut src = Sources::new();
    let undef = src.single(ValueSource::Other("an uninitialized register"));
    let uninit_local = src.single(ValueSource::Other("uninitialized local memory"));
    let uninit_param = src.single(ValueSource::Other("an unset parameter"));
    let kp_unset = src.single(ValueSource::Other("unset kernel-parameter bytes"));
    let uninit_shared = src.single(ValueSource::Other("uninitialized shared memory"));
    let mut m = Machine {
        ir,
        fast: match paths {
            Paths::Fast | Paths::Lanes => fast::table(ir),
            Paths::GeneralOnly => fast::general_only(ir),
        }
        .into(),
        cfg: std::sync::Arc::new(cfg.clone()),
        shape,
        n,
        nregs,
        vals: vec![0; slots * nregs],
        unk: vec![undef; slots * nregs],
        th: (0..n)
            .map(|t| Thread {
                pc: 0,
                state: State::Run,
                stack: Vec::new(),
                executed: 0,
                may: 0,
                may_src: 0,
                tid: shape.tid(ThreadId(t as u32)),
                wait_dest: None,
                wait_parity: 0,
                wait_token: false,
                red_kind: RedKind::Popc,
                red_in: (0, 0),
                path_exit: false,
            })
            .collect(),
        cmds: vec![Vec::new(); n],
        steps: vec![Vec::new(); n],
        warp_step: vec![0; n.div_ceil(WARP_SIZE as usize)],
        smem: Paged::new(tracked as usize, uninit_shared),
        smem_terms: FxHashMap::default(),
        smem_size,
        local: Paged::new(local_len, uninit_local),
        pmem: Paged::new(param_len, uninit_param),
        kp: Paged::new(ir.kparam_size as usize, kp_unset),
        kp_unset,
        commands: 0,
        charged: registers,
        tma_open: Vec::new(),
        copies: Vec::new(),
        cp_pending: vec![VecDeque::new(); n],
        cp_committed: vec![0; n],
        bulk_pending: vec![VecDeque::new(); n],
        bulk_committed: vec![0; n],
        proxy_fences: vec![Vec::new(); n],
        divert: None,
        defer_entries: false,
        exec_events: 0,
        coll: collectives::Recorded::new(n),
        wg: warpgroup::Warpgroups::new(ir.sources.sites.iter().map(|s| &*s.opcode), n),
        wg_ops: Vec::new(),
        wg_index: FxHashMap::default(),
        footprints: FxHashMap::default(),
        wg_shapes: FxHashMap::default(),
        wg_occ: vec![0; n],
        wg_pending: vec![VecDeque::new(); n],
        wg_committed: vec![0; n],
        joint_done: Vec::new(),
        exclusive: Vec::new(),
        peek_at: FxHashMap::default(),
        peeks: 0,
        data_forks: false,
        peeks_failed: Default::default(),
        peek_lag: Default::default(),
        cluster_read: false,
        clc_requests: 0,
        clc_observed: vec![None; n],
        fork_guards: Vec::new(),
        copy_guards: Vec::new(),
        tc_issued: vec![Vec::new(); n],
        tm: tmem::Accesses::new(n),
        side_floor: vec![0; n],
        tc_attached: FxHashMap::default(),
        tmem: tensor::TensorMemory::default(),
        tma_loads: Vec::new(),
        tma_load_maps: Vec::new(),
        tma_stores: Vec::new(),
        tensormaps: Vec::new(),
        mbar_objects: Vec::new(),
        bars: BarrierFile::new(n as u32, WARP_SIZE),
        mbars: MbarrierFile::new(),
        init_occ: rustc_hash::FxHashMap::default(),
        values: Vec::new(),
        value_ids: rustc_hash::FxHashMap::default(),
        value_cache: written::ValueCache::new(),
        term_value_ids: rustc_hash::FxHashMap::default(),
        src,
        unverifiable: Vec::new(),
        reported: Default::default(),
        findings: Vec::new(),
        found: rustc_hash::FxHashSet::default(),
        kparam_reads: FxHashMap::default(),
        inputs: inputs::Inputs::default(),
        notes: ir.notes.clone(),
        stop: false,
        instructions: 0,
        shared_base,
        local_base,
        win,
        region_cache: FxHashMap::default(),
        fall_first: FxHashMap::default(),
        fork_bufs: Vec::new(),
        fork_regs: FxHashMap::default(),
        terms_off: false,
        values_off: false,
        uninit_shared,
        trapped: false,
        assumptions: Vec::new(),
        assumed_from: Default::default(),
        failed_assertions: Vec::new(),
        data_read: vec![false; data_trusted.len()],
        data_written: vec![false; data_trusted.len()],
        data_trusted,
        warps: paths == Paths::Fast,
        pass_lockstep: false,
        cursor: 0,
        track: reorder::Tracker::new(),
        solo: warp::Solo::default(),
        has_activemask: ir.insts.iter().any(|i| i.op == Op::Activemask),
        lockstep_used: false,
        reordered: false,
        pass_peak: warp::PassPeak::default(),
        bar_lanes: Vec::new(),
        bar_events: Vec::new(),
        shfl_tables: Vec::new(),
        choices: choices::Choices::default(),
        induct,
        cta_within: std::cell::Cell::new(0),
        cta_over: std::cell::Cell::new(u64::MAX),
        checkpoints: Store(checkpoints),
        resumed: 0,
    };
    // Registers start undefined: unknown (`undef`); `--param` bytes are known.
    for p in &ir.kernel_params {
        for (k, b) in p.known.iter().enumerate() {
            if let Some(b) = b {
                m.kp.write(p.offset as usize + k, 1, u64::from(*b), 0);
            }
        }
    }
    if smem_size.is_none() {
        m.notes.push(format!(
            "the extern dynamic shared array starts at shared offset {:#x} and its size is unknown (%dynamic_smem_size not configured): accesses into it are not checked for out-of-bounds",
            ir.extern_start.unwrap_or(0)
        ));
    }
    m.seed_ranges();
    m.seed_pins();
    m.run_from(Turn::default());
    Ok(m)
}

impl Machine<'_> {
    /// Runs the scheduler from `turn` to the end of the run.
    fn run_from(&mut self, turn: Turn) {
        if self.cfg.warp_sync || self.induct.is_some() {
            self.run_lockstep(turn);
        } else {
            self.run_threads(turn);
        }
    }

    /// Whether `count` instructions are over the CTA-wide budget (every comparison with
    /// the budget goes through here: [`Machine::cta_within`]).
    #[inline]
    fn over_cta(&self, count: u64) -> bool {
        let over = count > self.cfg.cta_limit();
        if over {
            self.cta_over.set(self.cta_over.get().min(count));
        } else {
            self.cta_within.set(self.cta_within.get().max(count));
        }
        over
    }

    /// Takes a checkpoint at `turn` when the run has made the choices the next one waits for
    /// ([`Checkpoints`]) and executed enough instructions since its last one to be worth
    /// the copy; once one does not fit in the room left, it takes no more.
    fn checkpoint_at(&mut self, turn: Turn) {
        let Some(mut store) = self.checkpoints.take() else {
            return;
        };
        let made = self.choices.trail.len();
        let bytes = self.memory_used();
        // Copying the machine costs about what emulating `bytes / CHECKPOINT_BYTES`
        // instructions does: until the run has executed that many since its last
        // checkpoint (or its start), the earlier one serves about as well, and the turns
        // after this one are closer to the next choice.
        let cost = bytes / CHECKPOINT_BYTES;
        let worth = self.instructions.saturating_sub(store.since) >= cost
            && store.spent.saturating_add(cost) <= store.saved.saturating_add(store.longest);
        if made >= store.next && !self.stop && !self.reordered && worth {
            store.next = made + 1;
            if store.used.saturating_add(bytes) <= store.room {
                store.used += bytes;
                store.spent = store.spent.saturating_add(cost);
                store.since = self.instructions;
                store.held.push(Checkpoint {
                    machine: self.clone(),
                    turn,
                    paths: store.paths,
                    answers: self.choices.trail.iter().map(|(c, _)| c.answer).collect(),
                    bytes,
                });
            } else {
                store.next = usize::MAX;
            }
        }
        self.checkpoints = Store(Some(store));
    }

    /// Whether a checkpoint is due at this turn ([`Machine::checkpoint_at`]).
    #[inline]
    fn checkpoint_due(&self) -> bool {
        self.checkpoints
            .as_ref()
            .is_some_and(|s| self.choices.trail.len() >= s.next)
    }

    fn run_threads(&mut self, from: Turn) {
        let warps = self.n.div_ceil(WARP_SIZE as usize);
        let mut from = from;
        loop {
            let mut progress = from.progress;
            for w in from.warp..warps {
                if self.checkpoint_due() {
                    self.checkpoint_at(Turn { warp: w, progress });
                }
                let lanes = self.warp_lanes(w);
                // A stop inside a pass with lock-step repeats the whole run lane by lane
                // (below): a pass that might reach a budget runs lane by lane at once.
                let group = self.warps && !self.near_budget(lanes.clone());
                self.solo.forget();
                if group {
                    self.begin_pass();
                }
                let pass_start = (self.instructions, self.commands);
                let mut lane_start = [0u64; WARP_SIZE as usize];
                for (t, s) in lanes.clone().zip(&mut lane_start) {
                    *s = self.th[t].executed;
                }
                let mut t = lanes.start;
                while t < lanes.end {
                    self.cursor = t;
                    let ran = self.th[t].state == State::Run;
                    while self.th[t].state == State::Run && !self.stop {
                        progress = true;
                        if group {
                            match self.lockstep(t) {
                                warp::Group::Nothing => {}
                                warp::Group::Advanced => continue,
                                warp::Group::Collective { last } => {
                                    // The lanes before `last` joined the collective and
                                    // wait for the next pass; `last` completed it.
                                    t = last;
                                    self.cursor = t;
                                    continue;
                                }
                            }
                        }
                        self.run_fast(t);
                    }
                    if self.stop {
                        if self.pass_lockstep {
                            // Lanes after `t` ran ahead of the stop.
                            self.reordered = true;
                        }
                        return;
                    }
                    if ran {
                        self.retry_activemask(w);
                    }
                    t += 1;
                }
                self.end_pass();
                if self.stop {
                    // The pass's lock-step order was visible.
                    return;
                }
                let peak = &mut self.pass_peak;
                peak.instructions = peak.instructions.max(self.instructions - pass_start.0);
                peak.commands = peak.commands.max(self.commands - pass_start.1);
                for (t, start) in lanes.zip(lane_start) {
                    peak.lane_steps = peak.lane_steps.max(self.th[t].executed - start);
                }
            }
            from = Turn::default();
            // No thread can run: the TMA loads still in flight complete their phases
            // (their bytes arrive as late as possible), which may wake waiters; then a
            // peek whose phase never came answers "not ready".
            if !progress && !self.complete_tma_phases() && !self.release_stuck_peek() {
                return;
            }
        }
    }

    fn run_lockstep(&mut self, from: Turn) {
        let warps = self.n.div_ceil(WARP_SIZE as usize);
        let mut from = from;
        loop {
            let mut progress = from.progress;
            for w in from.warp..warps {
                if self.checkpoint_due() {
                    self.checkpoint_at(Turn { warp: w, progress });
                }
                let lanes = (w * WARP_SIZE as usize)..((w + 1) * WARP_SIZE as usize).min(self.n);
                loop {
                    let min_pc = lanes
                        .clone()
                        .filter(|&t| self.th[t].state == State::Run)
                        .map(|t| self.th[t].pc)
                        .min();
                    let Some(pc) = min_pc else { break };
                    self.warp_step[w] = self.warp_step[w].wrapping_add(1);
                    let wb = lanes.start;
                    let (mut mask, mut running) = (0u32, 0u32);
                    for t in lanes.clone() {
                        if self.th[t].state == State::Run {
                            running |= 1 << (t - wb);
                            if self.th[t].pc == pc {
                                mask |= 1 << (t - wb);
                            }
                        }
                    }
                    progress = true;
                    if self.warps
                        && (self.warp_step_fast(wb, mask, pc, mask == running)
                            || self.collective_in_step(wb, mask, pc))
                    {
                        // The lanes of the step executed it together (`warp` module).
                    } else {
                        for t in lanes.clone() {
                            // A lane's step can release another lane to this PC.
                            if self.th[t].state == State::Run && self.th[t].pc == pc {
                                self.step(t);
                            }
                            if self.stop {
                                return;
                            }
                        }
                        // The watched exit branch of an induction run: a moment once the
                        // whole step has run.
                        if let Some(i) = &self.induct
                            && i.pc == pc
                            && i.thread >= wb
                            && i.thread - wb < 32
                            && mask & (1 << (i.thread - wb)) != 0
                        {
                            self.induct_moment(i.thread, pc);
                            if self.stop {
                                return;
                            }
                        }
                    }
                    self.retry_activemask(w);
                }
            }
            from = Turn::default();
            // No thread can run: the TMA loads still in flight complete their phases
            // (their bytes arrive as late as possible), which may wake waiters; then a
            // peek whose phase never came answers "not ready".
            if !progress && !self.complete_tma_phases() && !self.release_stuck_peek() {
                return;
            }
        }
    }

    /// One step of thread `t` through the general interpreter.
    #[inline(never)]
    fn step_slow(&mut self, t: usize) {
        let pc = self.th[t].pc;
        let Some(&inst) = self.ir.insts.get(pc as usize) else {
            // Fell off the end of a function without `ret`: treat as return.
            self.do_ret(t, pc);
            return;
        };
        self.instructions += 1;
        let th = &mut self.th[t];
        th.executed += 1;
        if th.executed > self.cfg.step_limit {
            let why = Why::StepBudget {
                limit: self.cfg.step_limit,
            };
            self.unverifiable(t, pc, why, None, 0, true);
            return;
        }
        if self.over_cta(self.instructions) {
            let cta_limit = self.cfg.cta_limit();
            self.unverifiable(
                t,
                pc,
                Why::CtaStepBudget { limit: cta_limit },
                None,
                0,
                true,
            );
            return;
        }
        if let Some(g) = inst.guard {
            let i = self.reg_at(t, g);
            let (v, u) = (self.vals[i], self.unk[i]);
            if u != 0 {
                self.unknown_guard(t, pc, &inst, Opnd::Reg(g), u);
                return;
            }
            if (v & 1 != 0) == inst.guard_neg {
                self.th[t].pc = pc + 1;
                return;
            }
        }
        self.exec(t, pc, &inst);
    }

    /// Executes `inst` at `pc` for thread `t` (its guard holds), dispatching by concern.
    fn exec(&mut self, t: usize, pc: u32, inst: &Inst) {
        self.terms_for(pc, |m| m.exec_inst(t, pc, inst));
    }

    /// Runs `f`, the computation of instruction `pc`, with [`Machine::unknown_result`]
    /// building no term when the instruction's results cannot be observed
    /// (`Ir::unobserved`). Not in the induction's runs, which compare the machine's states
    /// trip against trip, terms included (`induct` module).
    #[inline]
    fn terms_for<R>(&mut self, pc: u32, f: impl FnOnce(&mut Self) -> R) -> R {
        self.terms_off = self.induct.is_none()
            && self
                .ir
                .unobserved
                .get(pc as usize)
                .copied()
                .unwrap_or(false);
        self.values_off = self.cfg.value_terms && !self.values_wanted(pc);
        let r = f(self);
        self.terms_off = false;
        self.values_off = false;
        r
    }

    /// Whether a run with value terms builds them for instruction `pc`'s results: one of
    /// its destinations may reach a shared store's value (`Ir::value_observed`).
    #[inline]
    pub(super) fn values_wanted(&self, pc: u32) -> bool {
        self.cfg.value_terms
            && self
                .ir
                .value_observed
                .get(pc as usize)
                .copied()
                .unwrap_or(true)
    }

    fn exec_inst(&mut self, t: usize, pc: u32, inst: &Inst) {
        let ops = self.ir.operands(inst);
        // Validated (`ir::valid`): `ops` has the operands each operation reads.
        let o = |k: usize| ops[k];
        self.th[t].pc = pc + 1;
        if !self.tm.threads[t].pending[0].is_empty()
            && self
                .ir
                .tmem_users
                .get(pc as usize)
                .copied()
                .unwrap_or(false)
        {
            self.tmem_register_use(t, pc, inst);
        }
        if let Some(&Some(kind)) = self.wg.kinds.get(pc as usize) {
            self.warpgroup(t, pc, kind, ops);
        }
        match inst.op {
            Op::Mov => self.mov(t, pc, inst, o(0), o(1)),
            Op::Add
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
            | Op::Cvt => self.exec_alu(t, pc, inst, ops),
            Op::FArith { op, .. } => self.exec_farith(t, pc, inst, ops, op),
            Op::Cvta { .. } | Op::Isspacep(_) | Op::Mapa => self.exec_address(t, pc, inst, ops),
            Op::Ld => self.load(t, pc, inst, o(0), o(1)),
            Op::St => self.store(t, pc, inst, o(0), o(1)),
            Op::Atom(_) | Op::RedMem(_) => self.atomic(t, pc, inst, ops),
            Op::Ldmatrix(num) | Op::Stmatrix(num) => self.matrix(t, pc, inst, ops, num),
            Op::Wmma(w) => self.wmma(t, pc, inst, ops, w),
            Op::Bra => {
                if let Opnd::Label(target) = o(0) {
                    self.th[t].pc = target.0;
                }
            }
            Op::BraIdx => self.branch_indexed(t, pc, o(0), o(1)),
            Op::Call => self.call(t, pc, ops),
            Op::CallExtern(e) => self.call_extern(t, pc, ops, e),
            Op::Ret => self.do_ret(t, pc),
            Op::Exit => self.do_exit(t, pc),
            Op::Trap => self.trap(t, pc),
            Op::Bar(op) => self.barrier(t, pc, inst, op, None),
            Op::BarRed(kind) => self.barrier(t, pc, inst, BarrierOp::Red, Some(kind)),
            Op::WarpSync => self.warp_sync(t, pc, o(0)),
            Op::Shfl(_)
            | Op::Vote(_)
            | Op::MatchAny
            | Op::MatchAll
            | Op::Activemask
            | Op::Elect
            | Op::Redux(_) => self.collective(t, pc, inst),
            Op::MbarInit
            | Op::MbarArrive { .. }
            | Op::MbarExpectTx
            | Op::MbarCompleteTx
            | Op::MbarWait { .. }
            | Op::MbarInval
            | Op::CpAsyncMbarArrive { .. }
            | Op::TcgenCommitArrive => self.mbarrier(t, pc, inst, ops),
            Op::CpAsync => self.cp_async(t, pc, inst, ops),
            Op::CpAsyncCommit => self.cp_async_commit(t),
            Op::CpAsyncWait { all } => self.cp_async_wait(t, pc, ops, all),
            Op::BulkCommit => self.bulk_commit(t),
            Op::BulkWait => self.bulk_wait(t, pc, ops),
            Op::ProxyFence => {
                let at = self.cmds[t].len() as u32;
                self.proxy_fences[t].push(at);
            }
            Op::WgmmaMma => self.wgmma_mma(t, pc, inst, ops),
            Op::WgmmaCommit => self.wgmma_commit(t),
            Op::WgmmaWait => self.wgmma_wait(t, pc, ops),
            Op::TcgenMma => self.tcgen_mma(t, pc, ops),
            Op::TcgenCp => self.tcgen_cp(t, pc, ops),
            Op::TcgenLd => self.tcgen_ld_st(t, pc, inst, ops, false),
            Op::TcgenSt => self.tcgen_ld_st(t, pc, inst, ops, true),
            Op::TcgenWait { st } => self.tcgen_wait(t, st),
            Op::ClcTryCancel => self.clc_try_cancel(t, pc, inst, ops),
            Op::ClcIsCanceled => self.clc_is_canceled(t, pc, ops),
            Op::ClcFirstCtaid => self.clc_first_ctaid(t, pc, ops),
            Op::TensormapReplace => self.tensormap_access(t, pc, ops, AccessKind::Write),
            Op::TensormapCopy => self.tensormap_access(t, pc, ops, AccessKind::Read),
            Op::TcgenAlloc => self.tcgen_alloc(t, pc, inst, ops),
            Op::TcgenDealloc => self.tcgen_dealloc(t, pc, ops),
            Op::TcgenRelinquish => self.tcgen_relinquish(t),
            Op::TmaLoad => self.tma_load(t, pc, inst, ops),
            Op::TmaStore => self.tma_store(t, pc, inst, ops),
            Op::CpAsyncBulk {
                to_shared,
                mbar,
                reduce,
            } => {
                let form = async_copy::BulkForm {
                    to_shared,
                    mbar,
                    reduce,
                };
                self.bulk_copy(t, pc, inst, ops, form)
            }
            Op::Float { .. } | Op::Texture | Op::TensorCore | Op::Skip | Op::Unsupported => {
                self.exec_opaque(t, pc, inst, ops)
            }
            Op::UnsupportedControl => {
                self.unverifiable(t, pc, Why::UnsupportedControl, None, 0, true);
            }
            Op::MbarRelaxed => self.unverifiable(t, pc, Why::RelaxedMbarrier, None, 0, true),
        }
    }

    /// Instructions whose results the emulator does not compute: their destinations become
    /// unknown with a source naming why.
    fn exec_opaque(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd]) {
        match inst.op {
            Op::Float { pure, commutes } => {
                let mut u = 0;
                // The first three operands read, for a value term.
                let mut args = [None; 3];
                for (k, &x) in ops.iter().skip(1).enumerate() {
                    let (v, ux) = self.rd(t, x, pc);
                    u = self.src.union(u, ux);
                    if let Some(a) = args.get_mut(k)
                        && matches!(x, Opnd::Reg(_) | Opnd::Imm(_))
                    {
                        *a = Some((v, ux));
                    }
                }
                let f = self.src.single(ValueSource::Float(InstId(pc)));
                let u = self.src.union(f, u);
                // (Known operands too: the result is the same in every thread.)
                let u = if pure && self.values_wanted(pc) {
                    self.float_term(pc, ops, &args, commutes, u)
                } else {
                    u
                };
                self.clobber(t, inst, u);
            }
            Op::Texture => {
                let u = self.src.single(ValueSource::TextureLoad(InstId(pc)));
                self.clobber(t, inst, u);
            }
            Op::TensorCore => {
                let u = self.src.single(ValueSource::Other("a tensor-core result"));
                self.clobber(t, inst, u);
            }
            Op::Skip => {}
            Op::Unsupported => {
                let u = self.src.single(ValueSource::Other(
                    "an instruction without emulator semantics",
                ));
                self.clobber(t, inst, u);
                self.unverifiable(t, pc, Why::Unsupported, None, 0, false);
            }
            _ => {}
        }
    }
}
