//! The interpreter: runs every thread of one CTA over the lowered IR.

use rustc_hash::FxHashMap;
use weft_program::{
    AccessKind, BarrierCount, BarrierFile, BarrierOp, Command, Completion, CtaShape, Event, InstId,
    MbarrierFile, MbarrierOp, Participant, PhaseStep, Program, ThreadEnd, ThreadId, ThreadProgram,
    WARP_SIZE,
};

use crate::ir::{
    BoolOp, Cmp, Inst, Ir, Kind, MemBase, MulMode, NONE, Op, Opnd, RedKind, ReduxOp, ShflMode,
    Space, Sreg, Ty, VoteMode,
};
use crate::{
    Assumption, Config, Emulation, Error, Finding, FindingKind, Stats, Unverifiable, ValueSource,
};

mod calls;
mod collectives;
mod fast;

/// Source sets larger than this are truncated (the report names the first few inputs).
const MAX_SOURCES: usize = 8;
/// Tracked bytes of an extern dynamic shared array of unknown size.
const DYNAMIC_CAP: u32 = 256 * 1024;
/// Start of a path that exits immediately (an unknown-guarded `exit`).
const EXIT_PATH: u32 = NONE - 1;

/// Interned sets of [`ValueSource`]s; id 0 is the empty set (a known value).
struct Sources {
    sets: Vec<Vec<ValueSource>>,
    index: FxHashMap<Vec<ValueSource>, u32>,
    unions: FxHashMap<(u32, u32), u32>,
}

impl Sources {
    fn new() -> Self {
        Sources {
            sets: vec![Vec::new()],
            index: FxHashMap::default(),
            unions: FxHashMap::default(),
        }
    }

    fn intern(&mut self, set: Vec<ValueSource>) -> u32 {
        if let Some(&id) = self.index.get(&set) {
            return id;
        }
        let id = self.sets.len() as u32;
        self.sets.push(set.clone());
        self.index.insert(set, id);
        id
    }

    fn single(&mut self, s: ValueSource) -> u32 {
        self.intern(vec![s])
    }

    #[inline]
    fn union(&mut self, a: u32, b: u32) -> u32 {
        if a == b || b == 0 {
            return a;
        }
        if a == 0 {
            return b;
        }
        let key = (a.min(b), a.max(b));
        if let Some(&u) = self.unions.get(&key) {
            return u;
        }
        let mut set = self.sets[a as usize].clone();
        for s in &self.sets[b as usize] {
            if set.len() >= MAX_SOURCES {
                break;
            }
            if !set.contains(s) {
                set.push(s.clone());
            }
        }
        let u = self.intern(set);
        self.unions.insert(key, u);
        u
    }

    fn get(&self, id: u32) -> &[ValueSource] {
        self.sets.get(id as usize).map_or(&[], Vec::as_slice)
    }
}

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
    func: u32,
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
    wait_dest: u32,
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
    Unknown(u32, u32),
}

/// TMA loads a thread issued in a row towards one mbarrier, awaiting their `complete_tx`.
#[derive(Debug, Clone, Copy)]
struct TmaBatch {
    thread: usize,
    mbar: u32,
    /// The last copy's instruction.
    pc: u32,
    copies: u32,
    /// The index of the first copy's write in the thread's commands: flagged as an
    /// over-approximated extent once a second copy joins the batch.
    first_write: Option<u32>,
    /// The first copy's destination and bytes when they overran the shared window (its
    /// recorded write was clipped): an out-of-bounds finding if it stays the only copy.
    overrun: Option<(u32, u32)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PathEnd {
    Joined,
    Exited,
    Returned(u32),
    Stopped,
}

struct Machine<'a> {
    ir: &'a Ir,
    /// The fast-path table, one entry per instruction (`fast` module).
    fast: Vec<fast::FastInst>,
    cfg: &'a Config,
    shape: CtaShape,
    n: usize,
    nregs: usize,
    vals: Vec<u64>,
    unk: Vec<u32>,
    th: Vec<Thread>,
    cmds: Vec<Vec<Command>>,
    steps: Vec<Vec<u32>>,
    warp_step: Vec<u32>,
    smem: Vec<u8>,
    smem_unk: Vec<u32>,
    /// Bytes of the shared window that may be accessed; `None` when an extern array of
    /// unknown size makes everything from `extern_start` up to the cap accessible.
    smem_size: Option<u32>,
    local: Vec<u8>,
    local_unk: Vec<u32>,
    pmem: Vec<u8>,
    pmem_unk: Vec<u32>,
    /// The kernel-parameter window: bytes fixed by `--param` are known; the others carry
    /// `kp_unset` until something overwrites them.
    kp: Vec<u8>,
    kp_unk: Vec<u32>,
    kp_unset: u32,
    /// TMA loads issued by a thread towards one mbarrier whose `complete_tx` is deferred
    /// until the thread's next command: (thread, mbarrier, last copy's instruction).
    tma_pending: Vec<TmaBatch>,
    /// Set while a TMA instruction records its own commands (no flush).
    in_tma: bool,
    bars: BarrierFile,
    mbars: MbarrierFile,
    src: Sources,
    unverifiable: Vec<Unverifiable>,
    reported: rustc_hash::FxHashSet<u32>,
    findings: Vec<Finding>,
    notes: Vec<String>,
    stop: bool,
    instructions: u64,
    shared_base: u64,
    local_base: u64,
    win: crate::ir::Windows,
    region_cache: FxHashMap<u32, Result<u32, String>>,
    uninit_shared: u32,
    /// A thread trapped: threads still blocked at the end are stopped, not deadlocked (the
    /// trap aborts the launch).
    trapped: bool,
    /// Traps assumed not to be reached (the `calls` module).
    assumptions: Vec<Assumption>,
    /// Per initialized module variable ([`crate::ir::DataLayout`]): whether loads return its
    /// initializer in this run, whether one did, and whether the kernel wrote it.
    data_trusted: Vec<bool>,
    data_read: Vec<bool>,
    data_written: Vec<bool>,
}

#[inline]
fn mask(v: u64, bits: u8) -> u64 {
    if bits >= 64 {
        v
    } else {
        v & ((1u64 << bits) - 1)
    }
}

#[inline]
fn sx(v: u64, bits: u8) -> i64 {
    if bits >= 64 || bits == 0 {
        v as i64
    } else {
        let s = 64 - u32::from(bits);
        ((v << s) as i64) >> s
    }
}

/// Runs the CTA.
/// Runs the CTA. A run in which the kernel writes an initialized module variable whose
/// initializer a load returned is repeated with that variable unknown (another thread or
/// CTA may write it before the load), until no such variable is left.
pub(crate) fn run(ir: &Ir, shape: CtaShape, cfg: &Config) -> Result<Emulation, Error> {
    let mut trusted = vec![cfg.initializers; ir.data.vars.len()];
    loop {
        let m = run_once(ir, shape, cfg, trusted.clone())?;
        let mut again = false;
        for (k, trust) in trusted.iter_mut().enumerate() {
            if *trust && m.data_read[k] && m.data_written[k] {
                *trust = false;
                again = true;
            }
        }
        if !again {
            return Ok(m.finish());
        }
    }
}

fn run_once<'a>(
    ir: &'a Ir,
    shape: CtaShape,
    cfg: &'a Config,
    data_trusted: Vec<bool>,
) -> Result<Machine<'a>, Error> {
    let n = shape.threads() as usize;
    let nregs = ir.reg_names.len();
    let smem_size = match (ir.extern_start, cfg.dynamic_shared) {
        (None, _) => Some(ir.shared_static),
        (Some(start), Some(d)) => Some(start.saturating_add(d)),
        (Some(_), None) => None,
    };
    let tracked =
        smem_size.unwrap_or_else(|| ir.extern_start.unwrap_or(0).saturating_add(DYNAMIC_CAP));
    let win = ir.windows;
    let (shared_base, local_base) = (win.shared, win.local);
    let mut m = Machine {
        ir,
        fast: fast::table(ir),
        cfg,
        shape,
        n,
        nregs,
        vals: vec![0; n * nregs],
        unk: vec![0; n * nregs],
        th: (0..n)
            .map(|t| Thread {
                pc: 0,
                state: State::Run,
                stack: Vec::new(),
                executed: 0,
                may: 0,
                may_src: 0,
                tid: shape.tid(ThreadId(t as u32)),
                wait_dest: NONE,
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
        smem: vec![0; tracked as usize],
        smem_unk: Vec::new(),
        smem_size,
        local: vec![0; n * ir.local_size as usize],
        local_unk: Vec::new(),
        pmem: vec![0; n * ir.param_size as usize],
        pmem_unk: Vec::new(),
        kp: vec![0; ir.kparam_size as usize],
        kp_unk: Vec::new(),
        kp_unset: 0,
        tma_pending: Vec::new(),
        in_tma: false,
        bars: BarrierFile::new(n as u32, WARP_SIZE),
        mbars: MbarrierFile::new(),
        src: Sources::new(),
        unverifiable: Vec::new(),
        reported: Default::default(),
        findings: Vec::new(),
        notes: ir.notes.clone(),
        stop: false,
        instructions: 0,
        shared_base,
        local_base,
        win,
        region_cache: FxHashMap::default(),
        uninit_shared: 0,
        trapped: false,
        assumptions: Vec::new(),
        data_read: vec![false; data_trusted.len()],
        data_written: vec![false; data_trusted.len()],
        data_trusted,
    };
    // Registers start undefined: unknown.
    let undef = m
        .src
        .single(ValueSource::Other("an uninitialized register"));
    m.unk.iter_mut().for_each(|u| *u = undef);
    let uninit_local = m
        .src
        .single(ValueSource::Other("uninitialized local memory"));
    m.local_unk = vec![uninit_local; m.local.len()];
    let uninit_param = m.src.single(ValueSource::Other("an unset parameter"));
    m.pmem_unk = vec![uninit_param; m.pmem.len()];
    m.kp_unset = m
        .src
        .single(ValueSource::Other("unset kernel-parameter bytes"));
    m.kp_unk = vec![m.kp_unset; m.kp.len()];
    for p in &ir.kernel_params {
        for (k, b) in p.known.iter().enumerate() {
            let i = p.offset as usize + k;
            if let (Some(b), Some(slot), Some(u)) = (b, m.kp.get_mut(i), m.kp_unk.get_mut(i)) {
                *slot = *b;
                *u = 0;
            }
        }
    }
    m.uninit_shared = m
        .src
        .single(ValueSource::Other("uninitialized shared memory"));
    m.smem_unk = vec![m.uninit_shared; m.smem.len()];
    if smem_size.is_none() {
        m.notes.push(format!(
            "the extern dynamic shared array starts at shared offset {:#x} and its size is unknown (%dynamic_smem_size not configured): accesses into it are not checked for out-of-bounds",
            ir.extern_start.unwrap_or(0)
        ));
    }
    if cfg.warp_sync {
        m.run_lockstep();
    } else {
        m.run_threads();
    }
    Ok(m)
}

impl Machine<'_> {
    fn run_threads(&mut self) {
        loop {
            let mut progress = false;
            for t in 0..self.n {
                let ran = self.th[t].state == State::Run;
                while self.th[t].state == State::Run && !self.stop {
                    self.run_fast(t);
                    progress = true;
                }
                if self.stop {
                    return;
                }
                if ran {
                    self.retry_activemask(t / WARP_SIZE as usize);
                }
            }
            if !progress {
                return;
            }
        }
    }

    fn run_lockstep(&mut self) {
        let warps = self.n.div_ceil(WARP_SIZE as usize);
        loop {
            let mut progress = false;
            for w in 0..warps {
                let lanes = (w * WARP_SIZE as usize)..((w + 1) * WARP_SIZE as usize).min(self.n);
                loop {
                    let min_pc = lanes
                        .clone()
                        .filter(|&t| self.th[t].state == State::Run)
                        .map(|t| self.th[t].pc)
                        .min();
                    let Some(pc) = min_pc else { break };
                    self.warp_step[w] = self.warp_step[w].wrapping_add(1);
                    for t in lanes.clone() {
                        if self.th[t].state == State::Run && self.th[t].pc == pc {
                            self.step(t);
                            progress = true;
                        }
                        if self.stop {
                            return;
                        }
                    }
                    self.retry_activemask(w);
                }
            }
            if !progress {
                return;
            }
        }
    }

    fn finish(mut self) -> Emulation {
        self.flush_tma_all();
        let mut stuck_collective = Vec::new();
        for t in 0..self.n {
            if let State::Coll(pc) = self.th[t].state
                && !self.stop
                && !self.trapped
            {
                stuck_collective.push((t, pc));
            }
        }
        for &(t, pc) in &stuck_collective {
            self.stuck_collective(t, pc);
        }
        let stopped = self.stop || self.trapped;
        self.data_notes();
        let threads: Vec<ThreadProgram> = (0..self.n)
            .map(|t| {
                let end = match self.th[t].state {
                    State::Exited => ThreadEnd::Exited,
                    State::Trapped(pc) => ThreadEnd::Trapped(InstId(pc)),
                    State::Error => ThreadEnd::BarrierError,
                    State::BarWait | State::MbarWait { .. } if !stopped => ThreadEnd::Blocked,
                    _ => ThreadEnd::Stopped,
                };
                let mut commands = std::mem::take(&mut self.cmds[t]);
                commands.shrink_to_fit();
                ThreadProgram {
                    commands,
                    end,
                    steps: std::mem::take(&mut self.steps[t]),
                }
            })
            .collect();
        let commands = threads.iter().map(|t| t.commands.len() as u64).sum();
        Emulation {
            program: Program {
                shape: self.shape,
                warp_size: WARP_SIZE,
                threads,
            },
            sources: self.ir.sources.clone(),
            shared: self.ir.shared.clone(),
            unverifiable: self.unverifiable,
            findings: self.findings,
            assumptions: self.assumptions,
            notes: self.notes,
            stats: Stats {
                instructions: self.instructions,
                commands,
                seconds: 0.0,
            },
        }
    }

    // ---------------------------------------------------------------- reporting

    fn line(&self, pc: u32) -> u32 {
        self.ir
            .sources
            .sites
            .get(pc as usize)
            .map_or(0, |s| s.ptx_line)
    }

    fn opcode(&self, pc: u32) -> &str {
        self.ir
            .sources
            .sites
            .get(pc as usize)
            .map_or("?", |s| &s.opcode)
    }

    fn describe(&self, u: u32) -> String {
        let set = self.src.get(u);
        if set.is_empty() {
            return String::new();
        }
        let names: Vec<String> = set.iter().map(|s| s.describe(&self.ir.sources)).collect();
        // A whole scalar parameter is named in the reason; the CLI adds its hint.
        let fixes: Vec<String> = set
            .iter()
            .filter(|s| matches!(s, ValueSource::ParamBytes { .. }))
            .filter_map(ValueSource::param_fix)
            .collect();
        if fixes.is_empty() {
            format!(" It depends on {}.", names.join(", "))
        } else {
            format!(
                " It depends on {}. Fix the input with {}.",
                names.join(", "),
                fixes.join(", ")
            )
        }
    }

    /// Records that the kernel cannot be verified. `control` stops the emulation.
    #[cold]
    fn unverifiable(
        &mut self,
        t: usize,
        pc: u32,
        what: &str,
        reg: Option<Opnd>,
        u: u32,
        control: bool,
    ) {
        if control {
            self.stop = true;
        } else if !self.reported.insert(pc) {
            return;
        }
        let register = match reg {
            Some(Opnd::Reg(r) | Opnd::NotReg(r)) => self.ir.reg_names.get(r as usize).cloned(),
            Some(Opnd::Mem(MemBase::Reg(r), _)) => self.ir.reg_names.get(r as usize).cloned(),
            _ => None,
        };
        let reg_text = register
            .as_ref()
            .map(|r| format!(" (register `{r}`)"))
            .unwrap_or_default();
        let reason = format!(
            "{what}{reg_text} at `{}` on PTX line {}, thread {t}.{}",
            self.opcode(pc),
            self.line(pc),
            self.describe(u)
        );
        self.unverifiable.push(Unverifiable {
            reason,
            inst: Some(InstId(pc)),
            thread: Some(ThreadId(t as u32)),
            register,
            sources: self.src.get(u).to_vec(),
        });
    }

    #[cold]
    fn finding(&mut self, t: usize, pc: u32, kind: FindingKind, message: String) {
        let assertion = (kind == FindingKind::TrapReachable)
            .then(|| self.ir.asserts.get(&pc).cloned())
            .flatten();
        self.findings.push(Finding {
            kind,
            thread: ThreadId(t as u32),
            inst: InstId(pc),
            message,
            assertion,
        });
    }

    // ---------------------------------------------------------------- values

    #[inline]
    fn base(&self, t: usize) -> usize {
        t * self.nregs
    }

    #[inline(always)]
    fn rd(&mut self, t: usize, o: Opnd, pc: u32) -> (u64, u32) {
        match o {
            Opnd::Reg(r) => {
                let i = self.base(t) + r as usize;
                (self.vals[i], self.unk[i])
            }
            Opnd::Imm(v) => (v, 0),
            _ => self.rd_other(t, o, pc),
        }
    }

    fn rd_other(&mut self, t: usize, o: Opnd, pc: u32) -> (u64, u32) {
        match o {
            Opnd::Reg(r) => {
                let i = self.base(t) + r as usize;
                (self.vals[i], self.unk[i])
            }
            Opnd::NotReg(r) => {
                let i = self.base(t) + r as usize;
                (!self.vals[i] & 1, self.unk[i])
            }
            Opnd::Imm(v) => (v, 0),
            Opnd::Sreg(s) => self.sreg(t, s, pc),
            Opnd::UnknownAddr(what) => (0, self.src.single(ValueSource::Other(what))),
            _ => (
                0,
                self.src
                    .single(ValueSource::Other("an operand the emulator cannot read")),
            ),
        }
    }

    #[inline]
    fn wr(&mut self, t: usize, o: Opnd, v: u64, u: u32) {
        match o {
            Opnd::Reg(r) => {
                let i = self.base(t) + r as usize;
                self.vals[i] = v;
                self.unk[i] = u;
            }
            Opnd::List(s, len) if len >= 1 => {
                if let Some(&first) = self.ir.list(s, len).first() {
                    self.wr(t, first, v, u);
                }
            }
            _ => {}
        }
    }

    /// Makes every destination register of `inst` unknown with sources `u`.
    fn clobber(&mut self, t: usize, inst: &Inst, u: u32) {
        let Some(&dst) = self.ir.operands(inst).first() else {
            return;
        };
        match dst {
            Opnd::Reg(_) => self.wr(t, dst, 0, u),
            Opnd::List(s, len) => {
                for &o in self.ir.list(s, len) {
                    if let Opnd::Reg(_) = o {
                        self.wr(t, o, 0, u);
                    }
                }
            }
            _ => {}
        }
    }

    fn sreg(&mut self, t: usize, s: Sreg, pc: u32) -> (u64, u32) {
        let lane = (t as u32) % WARP_SIZE;
        let dims = [self.shape.x, self.shape.y, self.shape.z];
        let k = |v: u32| (u64::from(v), 0u32);
        match s {
            Sreg::Tid(d) => k(self.th[t].tid[d as usize]),
            Sreg::Ntid(d) => k(dims[d as usize]),
            Sreg::Ctaid(d) => k(self.cfg.cta[d as usize]),
            Sreg::Nctaid(d) => k(self.cfg.grid[d as usize].max(self.cfg.cta[d as usize] + 1)),
            Sreg::Laneid => k(lane),
            Sreg::LanemaskEq => k(1 << lane),
            Sreg::LanemaskLt => k((1u32 << lane) - 1),
            Sreg::LanemaskLe => k(((1u64 << (lane + 1)) - 1) as u32),
            Sreg::LanemaskGt => k(!(((1u64 << (lane + 1)) - 1) as u32)),
            Sreg::LanemaskGe => k(!((1u32 << lane) - 1)),
            Sreg::DynSmem => match self.cfg.dynamic_shared {
                Some(d) => k(d),
                None => (
                    0,
                    self.src
                        .single(ValueSource::Other("%dynamic_smem_size (not configured)")),
                ),
            },
            Sreg::TotalSmem => match self.smem_size {
                Some(d) => k(d),
                None => (
                    0,
                    self.src.single(ValueSource::Other(
                        "%total_smem_size (dynamic size not configured)",
                    )),
                ),
            },
            Sreg::ClusterCtarank | Sreg::ClusterCtaid(_) => k(0),
            Sreg::ClusterNctarank | Sreg::ClusterNctaid(_) => k(1),
            Sreg::IsExplicitCluster => k(u32::from(self.ir.explicit_cluster)),
            Sreg::Clock => (0, self.src.single(ValueSource::Clock(InstId(pc)))),
            Sreg::Unknown(name) => (0, self.src.single(ValueSource::SpecialRegister(name))),
        }
    }

    // ---------------------------------------------------------------- stepping

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
            let what = format!(
                "thread {t} exceeded the step budget of {} instructions (a loop may be unbounded or bounded by an unknown value; bind parameters with --param or raise the budget)",
                self.cfg.step_limit
            );
            self.unverifiable(t, pc, &what, None, 0, true);
            return;
        }
        if inst.guard != NONE {
            let i = self.base(t) + inst.guard as usize;
            let (v, u) = (self.vals[i], self.unk[i]);
            if u != 0 {
                self.unknown_guard(t, pc, &inst, u);
                return;
            }
            if (v & 1 != 0) == inst.guard_neg {
                self.th[t].pc = pc + 1;
                return;
            }
        }
        self.exec(t, pc, &inst);
    }

    fn exec(&mut self, t: usize, pc: u32, inst: &Inst) {
        let ops = self.ir.operands(inst);
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        let bits = inst.ty.bits;
        let signed = inst.ty.signed();
        self.th[t].pc = pc + 1;
        match inst.op {
            Op::Mov => self.mov(t, pc, inst, o(0), o(1)),
            Op::Add => self.bin(t, pc, o, bits, |a, b| a.wrapping_add(b)),
            Op::Sub => self.bin(t, pc, o, bits, |a, b| a.wrapping_sub(b)),
            Op::Mul(mode) => {
                let (a, ua) = self.rd(t, o(1), pc);
                let (b, ub) = self.rd(t, o(2), pc);
                let u = self.src.union(ua, ub);
                let v = if u == 0 {
                    mul(a, b, bits, signed, mode)
                } else {
                    0
                };
                let dbits = if mode == MulMode::Wide {
                    bits.saturating_mul(2)
                } else {
                    bits
                };
                self.wr(t, o(0), mask(v, dbits), u);
            }
            Op::Mad(mode) => {
                let (a, ua) = self.rd(t, o(1), pc);
                let (b, ub) = self.rd(t, o(2), pc);
                let (c, uc) = self.rd(t, o(3), pc);
                let u = self.src.union(ua, ub);
                let u = self.src.union(u, uc);
                let dbits = if mode == MulMode::Wide {
                    bits.saturating_mul(2)
                } else {
                    bits
                };
                let v = if u == 0 {
                    mul(a, b, bits, signed, mode).wrapping_add(c)
                } else {
                    0
                };
                self.wr(t, o(0), mask(v, dbits), u);
            }
            Op::Div | Op::Rem => {
                let (a, ua) = self.rd(t, o(1), pc);
                let (b, ub) = self.rd(t, o(2), pc);
                let mut u = self.src.union(ua, ub);
                let mut v = 0;
                if u == 0 {
                    if mask(b, bits) == 0 {
                        u = self.src.single(ValueSource::Other("division by zero"));
                    } else if signed {
                        let (x, y) = (sx(a, bits), sx(b, bits));
                        v = if inst.op == Op::Div {
                            x.wrapping_div(y)
                        } else {
                            x.wrapping_rem(y)
                        } as u64;
                    } else {
                        let (x, y) = (mask(a, bits), mask(b, bits));
                        v = if inst.op == Op::Div { x / y } else { x % y };
                    }
                }
                self.wr(t, o(0), mask(v, bits), u);
            }
            Op::Abs => self.un(t, pc, o, bits, |a| sx(a, bits).wrapping_abs() as u64),
            Op::Neg => self.un(t, pc, o, bits, |a| (sx(a, bits).wrapping_neg()) as u64),
            Op::Min | Op::Max => {
                let max = inst.op == Op::Max;
                self.bin(t, pc, o, bits, |a, b| {
                    let lt = if signed {
                        sx(a, bits) < sx(b, bits)
                    } else {
                        mask(a, bits) < mask(b, bits)
                    };
                    if lt != max { a } else { b }
                })
            }
            Op::And => self.bin(t, pc, o, bits, |a, b| a & b),
            Op::Or => self.bin(t, pc, o, bits, |a, b| a | b),
            Op::Xor => self.bin(t, pc, o, bits, |a, b| a ^ b),
            Op::Not => self.un(t, pc, o, bits, |a| !a),
            Op::Cnot => self.un(t, pc, o, bits, |a| u64::from(mask(a, bits) == 0)),
            Op::Shl => self.bin(t, pc, o, bits, |a, b| {
                let b = b & 0xffff_ffff;
                if b >= u64::from(bits) { 0 } else { a << b }
            }),
            Op::Shr => self.bin(t, pc, o, bits, |a, b| {
                let b = b & 0xffff_ffff;
                if signed {
                    let s = sx(a, bits);
                    (if b >= u64::from(bits) {
                        s >> 63
                    } else {
                        s >> b
                    }) as u64
                } else if b >= u64::from(bits) {
                    0
                } else {
                    mask(a, bits) >> b
                }
            }),
            Op::Bfe => {
                let (a, ua) = self.rd(t, o(1), pc);
                let (b, ub) = self.rd(t, o(2), pc);
                let (c, uc) = self.rd(t, o(3), pc);
                let u = self.src.union(ua, ub);
                let u = self.src.union(u, uc);
                let msb = u64::from(bits).saturating_sub(1);
                let (pos, len) = (b & 0xff, c & 0xff);
                let sbit = if !signed || len == 0 {
                    0
                } else {
                    (a >> (pos + len - 1).min(msb)) & 1
                };
                let mut d = 0u64;
                for i in 0..=msb {
                    let bit = if i < len && pos + i <= msb {
                        (a >> (pos + i)) & 1
                    } else {
                        sbit
                    };
                    d |= bit << i;
                }
                self.wr(t, o(0), mask(d, bits), u);
            }
            Op::Bfi => {
                let (a, ua) = self.rd(t, o(1), pc);
                let (b, ub) = self.rd(t, o(2), pc);
                let (c, uc) = self.rd(t, o(3), pc);
                let (d, ud) = self.rd(t, o(4), pc);
                let u = self.src.union(ua, ub);
                let u = self.src.union(u, uc);
                let u = self.src.union(u, ud);
                let msb = u64::from(bits).saturating_sub(1);
                let (pos, len) = (c & 0xff, d & 0xff);
                let mut f = b;
                for i in 0..len {
                    if pos + i > msb {
                        break;
                    }
                    f = (f & !(1 << (pos + i))) | (((a >> i) & 1) << (pos + i));
                }
                self.wr(t, o(0), mask(f, bits), u);
            }
            Op::Brev => self.un(t, pc, o, bits, |a| {
                if bits >= 64 {
                    a.reverse_bits()
                } else {
                    a.reverse_bits() >> (64 - u32::from(bits))
                }
            }),
            Op::Popc => self.un(t, pc, o, 32, |a| u64::from(mask(a, bits).count_ones())),
            Op::Clz => self.un(t, pc, o, 32, |a| {
                u64::from(mask(a, bits).leading_zeros()) - (64 - u64::from(bits.max(1)))
            }),
            Op::Prmt => {
                let (a, ua) = self.rd(t, o(1), pc);
                let (b, ub) = self.rd(t, o(2), pc);
                let (c, uc) = self.rd(t, o(3), pc);
                let u = self.src.union(ua, ub);
                let u = self.src.union(u, uc);
                let tmp = (mask(b, 32) << 32) | mask(a, 32);
                let mut d = 0u64;
                for i in 0..4 {
                    let sel = (c >> (4 * i)) & 0xf;
                    let mut byte = (tmp >> ((sel & 7) * 8)) & 0xff;
                    if sel & 8 != 0 {
                        byte = if byte & 0x80 != 0 { 0xff } else { 0 };
                    }
                    d |= byte << (8 * i);
                }
                self.wr(t, o(0), d, u);
            }
            Op::Lop3 => {
                let (a, ua) = self.rd(t, o(1), pc);
                let (b, ub) = self.rd(t, o(2), pc);
                let (c, uc) = self.rd(t, o(3), pc);
                let (lut, ul) = self.rd(t, o(4), pc);
                let u = self.src.union(ua, ub);
                let u = self.src.union(u, uc);
                let u = self.src.union(u, ul);
                let mut d = 0u64;
                for k in 0..8u64 {
                    if (lut >> k) & 1 != 0 {
                        let x = if k & 4 != 0 { a } else { !a };
                        let y = if k & 2 != 0 { b } else { !b };
                        let z = if k & 1 != 0 { c } else { !c };
                        d |= x & y & z;
                    }
                }
                self.wr(t, o(0), mask(d, bits), u);
            }
            Op::Setp(cmp, bop) => self.setp(t, pc, inst, ops, cmp, bop),
            Op::Selp => {
                let (a, ua) = self.rd(t, o(1), pc);
                let (b, ub) = self.rd(t, o(2), pc);
                let (c, uc) = self.rd(t, o(3), pc);
                let (v, u) = if uc == 0 {
                    if c & 1 != 0 { (a, ua) } else { (b, ub) }
                } else if ua == 0 && ub == 0 && a == b {
                    (a, 0)
                } else {
                    let u = self.src.union(ua, ub);
                    (0, self.src.union(u, uc))
                };
                self.wr(t, o(0), v, u);
            }
            Op::Slct => {
                let (a, ua) = self.rd(t, o(1), pc);
                let (b, ub) = self.rd(t, o(2), pc);
                let (c, uc) = self.rd(t, o(3), pc);
                let neg = if inst.ty2.kind == Kind::F {
                    f32::from_bits(c as u32) < 0.0
                } else {
                    sx(c, 32) < 0
                };
                let (v, u) = if uc == 0 {
                    if neg { (b, ub) } else { (a, ua) }
                } else {
                    let u = self.src.union(ua, ub);
                    (0, self.src.union(u, uc))
                };
                self.wr(t, o(0), v, u);
            }
            Op::Cvt => {
                let (a, ua) = self.rd(t, o(1), pc);
                let (v, u) = if ua != 0 {
                    (0, ua)
                } else {
                    match cvt(a, inst.ty, inst.ty2, inst.round, inst.sat) {
                        Some(v) => (v, 0),
                        None => (0, self.src.single(ValueSource::Float(InstId(pc)))),
                    }
                };
                self.wr(t, o(0), v, u);
            }
            Op::Cvta { to, space } => {
                let (a, ua) = self.rd(t, o(1), pc);
                let (v, u) = if ua != 0 {
                    (0, ua)
                } else {
                    match (space, to) {
                        (Space::Shared, false) => (self.shared_base.wrapping_add(mask(a, 32)), 0),
                        (Space::Local, false) => (self.local_base.wrapping_add(mask(a, 32)), 0),
                        (Space::Shared, true) => self.generic_to_space(a, self.shared_base),
                        (Space::Local, true) => self.generic_to_space(a, self.local_base),
                        (Space::Param, false) => match self.win.offset(a, self.win.param_space) {
                            Some(off) => (self.win.param_generic.wrapping_add(off), 0),
                            None => (
                                0,
                                self.src.single(ValueSource::Other(
                                    "cvta.param of an address that is not a kernel parameter",
                                )),
                            ),
                        },
                        (Space::Param, true) => match self.win.offset(a, self.win.param_generic) {
                            Some(off) => (self.win.param_space.wrapping_add(off), 0),
                            None => (
                                0,
                                self.src.single(ValueSource::Other(
                                    "cvta.to.param of an address outside the parameter window",
                                )),
                            ),
                        },
                        _ => (a, 0),
                    }
                };
                self.wr(t, o(0), mask(v, bits), u);
            }
            Op::Isspacep(space) => {
                let (a, ua) = self.rd(t, o(1), pc);
                let in_shared = self.win.offset(a, self.shared_base).is_some();
                let in_local = self.win.offset(a, self.local_base).is_some();
                let in_param = self.win.offset(a, self.win.param_generic).is_some();
                let v = match space {
                    Space::Shared => in_shared,
                    Space::Local => in_local,
                    Space::Param => in_param,
                    Space::Global => !in_shared && !in_local && !in_param,
                    _ => false,
                };
                self.wr(t, o(0), u64::from(v), ua);
            }
            Op::Mapa => {
                let (a, ua) = self.rd(t, o(1), pc);
                let (r, ur) = self.rd(t, o(2), pc);
                let (v, u) = if ur == 0 && r == 0 {
                    (a, ua)
                } else {
                    (
                        0,
                        self.src.union(ua, ur).max(
                            self.src
                                .single(ValueSource::Other("mapa to another CTA of the cluster")),
                        ),
                    )
                };
                self.wr(t, o(0), v, u);
            }
            Op::Ld => self.load(t, pc, inst, o(0), o(1)),
            Op::St => self.store(t, pc, inst, o(0), o(1)),
            Op::Atom(_) | Op::RedMem(_) => self.atomic(t, pc, inst, ops),
            Op::Ldmatrix(num) | Op::Stmatrix(num) => {
                let read = matches!(inst.op, Op::Ldmatrix(_));
                let (addr_op, _) = if read { (o(1), o(0)) } else { (o(0), o(1)) };
                let lane = (t as u32) % WARP_SIZE;
                if lane < 8 * u32::from(num) {
                    let kind = if read {
                        AccessKind::Read
                    } else {
                        AccessKind::Write
                    };
                    if let Some(a) = self.shared_addr(t, pc, inst, addr_op) {
                        self.shared_access(t, pc, kind, a, 16, 0);
                    }
                }
                if read {
                    let u = self.src.single(ValueSource::SharedUnknown(InstId(pc)));
                    self.clobber(t, inst, u);
                }
            }
            Op::Bra => {
                if let Opnd::Label(target) = o(0) {
                    self.th[t].pc = target;
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
            | Op::CpAsyncMbarArrive { .. } => self.mbarrier(t, pc, inst, ops),
            Op::CpAsync => {
                let (size, us) = self.rd(t, o(2), pc);
                if us != 0 {
                    self.unverifiable(
                        t,
                        pc,
                        "the size of a cp.async copy depends on an unknown value",
                        Some(o(2)),
                        us,
                        false,
                    );
                } else if let Some(a) = self.shared_addr(t, pc, inst, o(0)) {
                    let u = self.src.single(ValueSource::GlobalLoad(InstId(pc)));
                    self.shared_access(t, pc, AccessKind::Write, a, size as u32, u);
                }
            }
            Op::TmaLoad => self.tma_load(t, pc, inst, ops),
            Op::TmaStore => self.tma_store(t, pc, inst, ops),
            Op::CpAsyncBulk { to_shared, mbar } => {
                self.bulk_copy(t, pc, inst, ops, to_shared, mbar)
            }
            Op::Float => {
                let mut u = 0;
                for &x in ops.iter().skip(1) {
                    let (_, ux) = self.rd(t, x, pc);
                    u = self.src.union(u, ux);
                }
                let f = self.src.single(ValueSource::Float(InstId(pc)));
                let u = self.src.union(f, u);
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
                self.unverifiable(
                    t,
                    pc,
                    "the emulator has no semantics for this instruction; its results are unknown",
                    None,
                    0,
                    false,
                );
            }
            Op::UnsupportedControl => {
                self.unverifiable(t, pc, "the emulator cannot model this instruction, which may decide control flow or synchronization", None, 0, true);
            }
        }
    }

    fn generic_to_space(&mut self, a: u64, base: u64) -> (u64, u32) {
        if let Some(off) = self.win.offset(a, base) {
            (off, 0)
        } else {
            (
                0,
                self.src.single(ValueSource::Other(
                    "cvta.to of an address outside that state space",
                )),
            )
        }
    }

    #[inline]
    fn bin(
        &mut self,
        t: usize,
        pc: u32,
        o: impl Fn(usize) -> Opnd,
        bits: u8,
        f: impl Fn(u64, u64) -> u64,
    ) {
        let (a, ua) = self.rd(t, o(1), pc);
        let (b, ub) = self.rd(t, o(2), pc);
        if ua | ub == 0 {
            self.wr(t, o(0), mask(f(a, b), bits), 0);
        } else {
            let u = self.src.union(ua, ub);
            self.wr(t, o(0), 0, u);
        }
    }

    #[inline]
    fn un(
        &mut self,
        t: usize,
        pc: u32,
        o: impl Fn(usize) -> Opnd,
        bits: u8,
        f: impl Fn(u64) -> u64,
    ) {
        let (a, ua) = self.rd(t, o(1), pc);
        if ua == 0 {
            self.wr(t, o(0), mask(f(a), bits), 0);
        } else {
            self.wr(t, o(0), 0, ua);
        }
    }

    fn mov(&mut self, t: usize, pc: u32, inst: &Inst, d: Opnd, s: Opnd) {
        let bits = inst.ty.bits;
        match (d, s) {
            (_, Opnd::List(start, len)) if len > 0 => {
                let w = bits / len as u8;
                let mut v = 0u64;
                let mut u = 0;
                let items: Vec<Opnd> = self.ir.list(start, len).to_vec();
                for (i, x) in items.into_iter().enumerate() {
                    let (xv, xu) = self.rd(t, x, pc);
                    v |= mask(xv, w) << (u32::from(w) * i as u32);
                    u = self.src.union(u, xu);
                }
                self.wr(t, d, if u == 0 { v } else { 0 }, u);
            }
            (Opnd::List(start, len), _) if len > 0 => {
                let w = bits / len as u8;
                let (v, u) = self.rd(t, s, pc);
                let items: Vec<Opnd> = self.ir.list(start, len).to_vec();
                for (i, x) in items.into_iter().enumerate() {
                    self.wr(t, x, mask(v >> (u32::from(w) * i as u32), w), u);
                }
            }
            _ => {
                let (v, u) = self.rd(t, s, pc);
                let v = if inst.ty.kind == Kind::Pred {
                    v & 1
                } else {
                    mask(v, bits.max(1))
                };
                self.wr(t, d, v, u);
            }
        }
    }

    fn setp(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd], cmp: Cmp, bop: BoolOp) {
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        let (a, ua) = self.rd(t, o(1), pc);
        let (b, ub) = self.rd(t, o(2), pc);
        let mut u = self.src.union(ua, ub);
        let bits = inst.ty.bits;
        let r = match inst.ty.kind {
            Kind::F => {
                let (x, y) = if bits == 64 {
                    (f64::from_bits(a), f64::from_bits(b))
                } else {
                    (
                        f64::from(f32::from_bits(a as u32)),
                        f64::from(f32::from_bits(b as u32)),
                    )
                };
                let nan = x.is_nan() || y.is_nan();
                match cmp {
                    Cmp::Eq => !nan && x == y,
                    Cmp::Ne => !nan && x != y,
                    Cmp::Lt => !nan && x < y,
                    Cmp::Le => !nan && x <= y,
                    Cmp::Gt => !nan && x > y,
                    Cmp::Ge => !nan && x >= y,
                    Cmp::Equ => nan || x == y,
                    Cmp::Neu => nan || x != y,
                    Cmp::Ltu => nan || x < y,
                    Cmp::Leu => nan || x <= y,
                    Cmp::Gtu => nan || x > y,
                    Cmp::Geu => nan || x >= y,
                    Cmp::Num => !nan,
                    Cmp::Nan => nan,
                    Cmp::Lo | Cmp::Ls | Cmp::Hi | Cmp::Hs => false,
                }
            }
            _ => fast::compare(cmp, bits, inst.ty.signed(), a, b),
        };
        let (p, q) = match o(0) {
            Opnd::List(s, 2) => {
                let l = self.ir.list(s, 2);
                (l[0], l[1])
            }
            d => (d, Opnd::Sink),
        };
        let (rp, rq) = if bop == BoolOp::None {
            (r, !r)
        } else {
            let (c, uc) = self.rd(t, o(3), pc);
            u = self.src.union(u, uc);
            let c = c & 1 != 0;
            let f = |x: bool| match bop {
                BoolOp::And => x && c,
                BoolOp::Or => x || c,
                BoolOp::Xor => x ^ c,
                BoolOp::None => x,
            };
            (f(r), f(!r))
        };
        if u != 0 {
            self.wr(t, p, 0, u);
            self.wr(t, q, 0, u);
        } else {
            self.wr(t, p, u64::from(rp), 0);
            self.wr(t, q, u64::from(rq), 0);
        }
    }

    // ---------------------------------------------------------------- memory

    fn addr(&mut self, t: usize, pc: u32, space: Space, o: Opnd) -> Addr {
        let Opnd::Mem(base, off) = o else {
            let u = self
                .src
                .single(ValueSource::Other("a malformed address operand"));
            return Addr::Unknown(u, NONE);
        };
        let (v, u, reg) = match base {
            MemBase::Reg(r) => {
                let (v, u) = self.rd(t, Opnd::Reg(r), pc);
                (v.wrapping_add(off as u64), u, r)
            }
            MemBase::Shared => {
                return if matches!(space, Space::Shared | Space::Generic) {
                    Addr::Shared(off as u32)
                } else {
                    Addr::Global
                };
            }
            MemBase::Local => return Addr::Local(off as u32),
            MemBase::Param => return Addr::Param(off as u32),
            MemBase::KernelParam(i) => {
                let base = self
                    .ir
                    .kernel_params
                    .get(i as usize)
                    .map_or(0, |p| i64::from(p.offset));
                return match u32::try_from(base + off) {
                    Ok(x) => Addr::KParam(x),
                    Err(_) => Addr::Unknown(
                        self.src.single(ValueSource::Other(
                            "a parameter offset outside the kernel parameters",
                        )),
                        NONE,
                    ),
                };
            }
            MemBase::Global => return Addr::Global,
            MemBase::Abs => (off as u64, 0, NONE),
        };
        if u != 0 {
            return if matches!(
                space,
                Space::Generic | Space::Shared | Space::Local | Space::Param
            ) {
                Addr::Unknown(u, reg)
            } else {
                Addr::Global
            };
        }
        match space {
            Space::Shared => Addr::Shared(v as u32),
            Space::Local => Addr::Local(v as u32),
            Space::Global | Space::Const => match self.win.offset(v, self.win.data) {
                Some(off) => Addr::Data(off),
                None => Addr::Global,
            },
            Space::Param => match self.win.offset(v, self.win.param_space) {
                Some(off) => Addr::KParam(off as u32),
                None => Addr::Unknown(
                    self.src.single(ValueSource::Other(
                        "a parameter read through a register that holds no kernel-parameter address",
                    )),
                    NONE,
                ),
            },
            Space::Generic => {
                if let Some(off) = self.win.offset(v, self.shared_base) {
                    Addr::Shared(off as u32)
                } else if let Some(off) = self.win.offset(v, self.local_base) {
                    Addr::Local(off as u32)
                } else if let Some(off) = self.win.offset(v, self.win.param_generic) {
                    Addr::KParam(off as u32)
                } else if let Some(off) = self.win.offset(v, self.win.data) {
                    Addr::Data(off)
                } else {
                    Addr::Global
                }
            }
            _ => Addr::Global,
        }
    }

    /// The shared address of an operand, or `None` after recording why it is unknown.
    fn shared_addr(&mut self, t: usize, pc: u32, inst: &Inst, o: Opnd) -> Option<u32> {
        let space = if inst.space == Space::Generic {
            Space::Generic
        } else {
            Space::Shared
        };
        match self.addr(t, pc, space, o) {
            Addr::Shared(a) => Some(a),
            Addr::Unknown(u, _) => {
                self.unverifiable(
                    t,
                    pc,
                    "a shared-memory address depends on an unknown value",
                    Some(o),
                    u,
                    false,
                );
                None
            }
            _ => None,
        }
    }

    fn push(&mut self, t: usize, c: Command) -> u32 {
        if !self.tma_pending.is_empty() && !self.in_tma {
            self.flush_tma(t);
        }
        let idx = self.cmds[t].len() as u32;
        self.cmds[t].push(c);
        if self.cfg.warp_sync {
            let w = t / WARP_SIZE as usize;
            self.steps[t].push(self.warp_step[w]);
        }
        idx
    }

    /// Records a shared access and checks its bounds; returns whether it is in bounds.
    /// Writes with `write_u != 0` (or in a may-region) make the bytes unknown.
    fn shared_access(
        &mut self,
        t: usize,
        pc: u32,
        kind: AccessKind,
        addr: u32,
        len: u32,
        write_u: u32,
    ) -> bool {
        let end = u64::from(addr) + u64::from(len);
        let ok = match self.smem_size {
            Some(size) => end <= u64::from(size),
            None => end <= self.smem.len() as u64,
        };
        if !ok {
            let limit = self.smem_size.map_or_else(
                || format!("the {} bytes any GPU provides", self.smem.len()),
                |s| format!("the {s}-byte shared window"),
            );
            let msg = format!(
                "thread {t}: shared {} of {len} bytes at {addr:#x} by `{}` at PTX line {} lies outside {limit}",
                if kind == AccessKind::Read {
                    "read"
                } else {
                    "write"
                },
                self.opcode(pc),
                self.line(pc)
            );
            self.finding(t, pc, FindingKind::SharedOutOfBounds, msg);
            return false;
        }
        let may = self.th[t].may > 0;
        self.push(t, Command::access(kind, addr, len, may, InstId(pc)));
        if kind.writes() {
            let u = self
                .src
                .union(write_u, if may { self.th[t].may_src } else { 0 });
            if u != 0 {
                let r = addr as usize..end as usize;
                self.smem_unk[r].iter_mut().for_each(|x| *x = u);
            }
        }
        true
    }

    fn read_bytes(&mut self, which: Mem, base: usize, off: usize, len: usize) -> (u64, u32) {
        let (bytes, unk) = match which {
            Mem::Shared => (&self.smem, &self.smem_unk),
            Mem::Local => (&self.local, &self.local_unk),
            Mem::Param => (&self.pmem, &self.pmem_unk),
        };
        let s = base + off;
        let (Some(b), Some(u)) = (bytes.get(s..s + len), unk.get(s..s + len)) else {
            return (
                0,
                self.src
                    .single(ValueSource::Other("memory outside its window")),
            );
        };
        let mut v = 0u64;
        for (i, &x) in b.iter().enumerate().take(8) {
            v |= u64::from(x) << (8 * i);
        }
        let first = u.first().copied().unwrap_or(0);
        if u.iter().all(|&x| x == first) {
            return (v, first);
        }
        let u: Vec<u32> = u.to_vec();
        let mut acc = 0;
        for x in u {
            acc = self.src.union(acc, x);
        }
        (v, acc)
    }

    fn write_bytes(&mut self, which: Mem, base: usize, off: usize, len: usize, v: u64, u: u32) {
        let (bytes, unk) = match which {
            Mem::Shared => (&mut self.smem, &mut self.smem_unk),
            Mem::Local => (&mut self.local, &mut self.local_unk),
            Mem::Param => (&mut self.pmem, &mut self.pmem_unk),
        };
        let s = base + off;
        if let (Some(b), Some(uu)) = (bytes.get_mut(s..s + len), unk.get_mut(s..s + len)) {
            for (i, x) in b.iter_mut().enumerate() {
                *x = if i < 8 { (v >> (8 * i)) as u8 } else { 0 };
            }
            uu.iter_mut().for_each(|x| *x = u);
        }
    }

    /// The registers of a scalar or `{…}` vector operand, without allocating.
    fn elems(&self, d: Opnd) -> ([Opnd; 8], usize) {
        let mut out = [Opnd::Sink; 8];
        match d {
            Opnd::List(s, len) => {
                let l = self.ir.list(s, len);
                let n = l.len().min(8);
                out[..n].copy_from_slice(&l[..n]);
                (out, n)
            }
            other => {
                out[0] = other;
                (out, 1)
            }
        }
    }

    fn load(&mut self, t: usize, pc: u32, inst: &Inst, d: Opnd, a: Opnd) {
        let esize = inst.ty.bytes().max(1);
        let (dests, ndests) = self.elems(d);
        let dests = &dests[..ndests];
        let total = esize * ndests as u32;
        let signed = inst.ty.signed();
        let bits = inst.ty.bits;
        let addr = self.addr(t, pc, inst.space, a);
        let (which, base, off, lim) = match addr {
            Addr::Shared(x) => {
                if !self.shared_access(t, pc, AccessKind::Read, x, total, 0) {
                    let u = self
                        .src
                        .single(ValueSource::Other("an out-of-bounds shared load"));
                    self.clobber(t, inst, u);
                    return;
                }
                (Mem::Shared, 0, x, self.smem.len())
            }
            Addr::Local(x) => (
                Mem::Local,
                t * self.ir.local_size as usize,
                x,
                self.ir.local_size as usize,
            ),
            Addr::Param(x) => (
                Mem::Param,
                t * self.ir.param_size as usize,
                x,
                self.ir.param_size as usize,
            ),
            Addr::KParam(off) => {
                for (k, &dst) in dests.iter().enumerate() {
                    let o = off.saturating_add(k as u32 * esize);
                    let (v, u) = self.kparam(o, esize);
                    let v = if signed {
                        mask(sx(v, bits) as u64, 64)
                    } else {
                        v
                    };
                    self.wr(t, dst, v, u);
                }
                return;
            }
            Addr::Data(off) => {
                for (k, &dst) in dests.iter().enumerate() {
                    let o = off.saturating_add(u64::from(k as u32 * esize));
                    let (v, u) = self.data_load(pc, inst.space, o, esize);
                    let v = if signed {
                        mask(sx(v, bits) as u64, 64)
                    } else {
                        v
                    };
                    self.wr(t, dst, v, u);
                }
                return;
            }
            Addr::Global => {
                let src = if inst.space == Space::Const {
                    ValueSource::ConstLoad(InstId(pc))
                } else {
                    ValueSource::GlobalLoad(InstId(pc))
                };
                let u = self.src.single(src);
                self.clobber(t, inst, u);
                return;
            }
            Addr::Unknown(u, _) => {
                if inst.space == Space::Shared {
                    self.unverifiable(
                        t,
                        pc,
                        "a shared-memory address depends on an unknown value",
                        Some(a),
                        u,
                        false,
                    );
                } else if inst.space == Space::Local {
                    self.unverifiable(
                        t,
                        pc,
                        "a local-memory address depends on an unknown value",
                        Some(a),
                        u,
                        false,
                    );
                }
                let g = if inst.space == Space::Param {
                    ValueSource::Other("a parameter read through an unknown address")
                } else {
                    ValueSource::GlobalLoad(InstId(pc))
                };
                let g = self.src.single(g);
                let u = self.src.union(g, u);
                self.clobber(t, inst, u);
                return;
            }
        };
        if off as usize + total as usize > lim {
            let u = self.src.single(ValueSource::LocalUnknown(InstId(pc)));
            self.clobber(t, inst, u);
            return;
        }
        for (k, &dst) in dests.iter().enumerate() {
            let (v, u) = self.read_bytes(
                which,
                base,
                (off + k as u32 * esize) as usize,
                esize as usize,
            );
            let u = if u == self.uninit_shared && which == Mem::Shared {
                self.src.single(ValueSource::SharedUnknown(InstId(pc)))
            } else {
                u
            };
            let v = if signed { sx(v, bits) as u64 } else { v };
            self.wr(t, dst, v, u);
        }
    }

    /// Reads `size` bytes at `off` of the kernel-parameter window. Bytes no `--param` fixed
    /// are unknown with a source naming the parameter and the byte range.
    fn kparam(&mut self, off: u32, size: u32) -> (u64, u32) {
        let (s, e) = (off as usize, off as usize + size as usize);
        let (Some(bytes), Some(unk)) = (self.kp.get(s..e), self.kp_unk.get(s..e)) else {
            return (
                0,
                self.src
                    .single(ValueSource::Other("bytes outside the kernel parameters")),
            );
        };
        let mut v = 0u64;
        for (i, &b) in bytes.iter().enumerate().take(8) {
            v |= u64::from(b) << (8 * i);
        }
        if unk.iter().all(|&u| u == 0) {
            return (v, 0);
        }
        let unk: Vec<u32> = unk.to_vec();
        let mut acc = 0;
        let mut k = 0;
        while k < unk.len() {
            let u = unk[k];
            if u != self.kp_unset {
                acc = self.src.union(acc, u);
                k += 1;
                continue;
            }
            // A run of unset bytes inside one parameter.
            let at = s + k;
            let Some((index, p)) = self.ir.kernel_params.iter().enumerate().find(|(_, p)| {
                (p.offset as usize..p.offset as usize + p.size as usize).contains(&at)
            }) else {
                let o = self
                    .src
                    .single(ValueSource::Other("padding between kernel parameters"));
                acc = self.src.union(acc, o);
                k += 1;
                continue;
            };
            let pend = p.offset as usize + p.size as usize;
            let mut j = k;
            while j < unk.len() && unk[j] == self.kp_unset && s + j < pend {
                j += 1;
            }
            let start = (at - p.offset as usize) as u32;
            let end = (s + j - p.offset as usize) as u32;
            let source = if !p.aggregate && start == 0 && end == p.size {
                ValueSource::Param {
                    index: index as u32,
                    name: p.name.clone(),
                    offset: None,
                }
            } else {
                ValueSource::ParamBytes {
                    index: index as u32,
                    name: p.name.clone(),
                    start,
                    end,
                }
            };
            let one = self.src.single(source);
            acc = self.src.union(acc, one);
            k = j;
        }
        (0, acc)
    }

    fn store(&mut self, t: usize, pc: u32, inst: &Inst, a: Opnd, s: Opnd) {
        let esize = inst.ty.bytes().max(1);
        let (srcs, nsrcs) = self.elems(s);
        let srcs = &srcs[..nsrcs];
        let total = esize * nsrcs as u32;
        let addr = self.addr(t, pc, inst.space, a);
        let may_u = if self.th[t].may > 0 {
            self.th[t].may_src
        } else {
            0
        };
        let (which, base, off, lim) = match addr {
            Addr::Shared(x) => {
                if !self.shared_access(t, pc, AccessKind::Write, x, total, 0) {
                    return;
                }
                (Mem::Shared, 0, x, self.smem.len())
            }
            Addr::Local(x) => (
                Mem::Local,
                t * self.ir.local_size as usize,
                x,
                self.ir.local_size as usize,
            ),
            Addr::Param(x) => (
                Mem::Param,
                t * self.ir.param_size as usize,
                x,
                self.ir.param_size as usize,
            ),
            Addr::KParam(x) => {
                // Kernel parameters are read-only; a store there is undefined, so the bytes
                // it may have changed become unknown.
                let o = self.src.single(ValueSource::Other(
                    "a store into the kernel-parameter space",
                ));
                let r = x as usize..(x as usize).saturating_add(total as usize);
                if let Some(slots) = self.kp_unk.get_mut(r) {
                    slots.iter_mut().for_each(|b| *b = o);
                }
                return;
            }
            Addr::Data(off) => {
                self.data_write(off, total);
                return;
            }
            Addr::Global => return,
            Addr::Unknown(u, _) => {
                match inst.space {
                    Space::Shared => self.unverifiable(
                        t,
                        pc,
                        "a shared-memory address depends on an unknown value",
                        Some(a),
                        u,
                        false,
                    ),
                    Space::Local => {
                        // Any local byte may have changed.
                        let r =
                            t * self.ir.local_size as usize..(t + 1) * self.ir.local_size as usize;
                        if let Some(x) = self.local_unk.get_mut(r) {
                            x.iter_mut().for_each(|b| *b = u);
                        }
                    }
                    _ => {}
                }
                return;
            }
        };
        if off as usize + total as usize > lim {
            return;
        }
        for (k, &x) in srcs.iter().enumerate() {
            let (v, u) = self.rd(t, x, pc);
            let u = self.src.union(u, may_u);
            self.write_bytes(
                which,
                base,
                (off + k as u32 * esize) as usize,
                esize as usize,
                v,
                u,
            );
        }
    }

    fn atomic(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd]) {
        let is_red = matches!(inst.op, Op::RedMem(_));
        let a = if is_red { ops.first() } else { ops.get(1) }
            .copied()
            .unwrap_or(Opnd::Sink);
        let size = inst.ty.bytes().max(1) * u32::from(inst.vec.max(1));
        let u = self.src.single(ValueSource::Atomic(InstId(pc)));
        match self.addr(t, pc, inst.space, a) {
            Addr::Shared(x) => {
                self.shared_access(t, pc, AccessKind::Atomic, x, size, u);
            }
            Addr::Unknown(uu, _) if inst.space == Space::Shared => {
                self.unverifiable(
                    t,
                    pc,
                    "a shared-memory address depends on an unknown value",
                    Some(a),
                    uu,
                    false,
                );
            }
            Addr::Data(off) => self.data_write(off, size),
            _ => {}
        }
        if !is_red {
            self.clobber(t, inst, u);
        }
    }

    // ---------------------------------------------------------------- control

    fn call(&mut self, t: usize, pc: u32, ops: &[Opnd]) {
        let Some(fpos) = ops.iter().position(|o| matches!(o, Opnd::Func(_))) else {
            self.unverifiable(t, pc, "indirect calls are not supported", None, 0, true);
            return;
        };
        let Opnd::Func(callee) = ops[fpos] else {
            return;
        };
        let rets = match fpos.checked_sub(1).and_then(|k| ops.get(k)) {
            Some(Opnd::List(s, l)) => (*s, *l),
            _ => (0, 0),
        };
        let args = match ops.get(fpos + 1) {
            Some(Opnd::List(s, l)) => self.ir.list(*s, *l).to_vec(),
            _ => Vec::new(),
        };
        let caller = self.ir.insts.get(pc as usize).map_or(0, |i| i.func);
        if caller == callee || self.th[t].stack.iter().any(|f| f.func == callee) {
            self.unverifiable(t, pc, "recursive calls are not supported", None, 0, true);
            return;
        }
        let Some(f) = self.ir.funcs.get(callee as usize) else {
            return;
        };
        let pbase = t * self.ir.param_size as usize;
        for (k, arg) in args.into_iter().enumerate() {
            let Some(&(off, size)) = f.params.get(k) else {
                break;
            };
            match arg {
                Opnd::Mem(MemBase::Param, src) => {
                    for b in 0..size as usize {
                        let (v, u) = self.read_bytes(Mem::Param, pbase, src as usize + b, 1);
                        self.write_bytes(Mem::Param, pbase, off as usize + b, 1, v, u);
                    }
                }
                other => {
                    let (v, u) = self.rd(t, other, pc);
                    self.write_bytes(Mem::Param, pbase, off as usize, size.min(8) as usize, v, u);
                }
            }
        }
        let start = f.start;
        self.th[t].stack.push(Frame {
            ret_pc: pc + 1,
            rets,
            func: callee,
        });
        self.th[t].pc = start;
    }

    fn do_ret(&mut self, t: usize, pc: u32) {
        let Some(frame) = self.th[t].stack.pop() else {
            self.do_exit(t, pc);
            return;
        };
        let pbase = t * self.ir.param_size as usize;
        let rets = self.ir.list(frame.rets.0, frame.rets.1).to_vec();
        if let Some(f) = self.ir.funcs.get(frame.func as usize) {
            let slots = f.rets.clone();
            for (k, r) in rets.into_iter().enumerate() {
                let Some(&(off, size)) = slots.get(k) else {
                    break;
                };
                if let Opnd::Mem(MemBase::Param, dst) = r {
                    for b in 0..size as usize {
                        let (v, u) = self.read_bytes(Mem::Param, pbase, off as usize + b, 1);
                        self.write_bytes(Mem::Param, pbase, dst as usize + b, 1, v, u);
                    }
                }
            }
        }
        self.th[t].pc = frame.ret_pc;
    }

    fn do_exit(&mut self, t: usize, pc: u32) {
        if self.th[t].may > 0 {
            self.th[t].path_exit = true;
            return;
        }
        self.push(t, Command::exit(InstId(pc)));
        self.th[t].state = State::Exited;
        match self.bars.exit(ThreadId(t as u32)) {
            Ok(events) => self.barrier_events(events),
            Err(_) => self.barrier_error(t),
        }
        self.retry_collectives(t / WARP_SIZE as usize);
    }

    fn unknown_guard(&mut self, t: usize, pc: u32, inst: &Inst, gu: u32) {
        let guard = Opnd::Reg(inst.guard);
        match inst.op {
            Op::Bra => {
                let target = match self.ir.operands(inst).first() {
                    Some(Opnd::Label(x)) => *x,
                    _ => NONE,
                };
                if !self.assume_not_doomed(t, pc, target, pc + 1) {
                    self.fork(t, pc, target, pc + 1, gu, guard);
                }
            }
            op if op.traps() => self.assume_not_taken(t, pc, pc),
            Op::CallExtern(crate::ir::Extern::Unknown) => {
                self.call_extern_unknown(t, pc, Some(guard), gu)
            }
            Op::Exit => self.fork(t, pc, EXIT_PATH, pc + 1, gu, guard),
            Op::Ret if self.th[t].stack.is_empty() => {
                self.fork(t, pc, EXIT_PATH, pc + 1, gu, guard)
            }
            Op::BraIdx => {
                self.unverifiable(
                    t,
                    pc,
                    "whether this indexed branch executes depends on an unknown guard predicate",
                    Some(guard),
                    gu,
                    true,
                );
            }
            Op::Ret | Op::Call => {
                self.unverifiable(
                    t,
                    pc,
                    "whether this call or return executes depends on an unknown value",
                    Some(guard),
                    gu,
                    true,
                );
            }
            op if op.is_sync() => {
                self.unverifiable(t, pc, "whether this synchronization operation executes depends on an unknown guard predicate", Some(guard), gu, true);
            }
            _ => {
                let th = &mut self.th[t];
                th.may += 1;
                let saved = th.may_src;
                let merged = self.src.union(saved, gu);
                self.th[t].may_src = merged;
                self.exec(t, pc, inst);
                let th = &mut self.th[t];
                th.may -= 1;
                th.may_src = saved;
                if th.state == State::Coll(pc) {
                    th.state = State::Run;
                    th.pc = pc + 1;
                }
                if !matches!(inst.op, Op::Bra) {
                    let u = self.src.union(gu, merged);
                    // Destinations keep either their old or their new value: unknown.
                    self.clobber(t, inst, u);
                }
                self.th[t].pc = pc + 1;
            }
        }
    }

    /// `brx.idx index, table`: jumps to the `index`-th label of the table. An unknown index
    /// or one past the end of the table (undefined behaviour in PTX) is unverifiable.
    fn branch_indexed(&mut self, t: usize, pc: u32, index: Opnd, table: Opnd) {
        let (v, u) = self.rd(t, index, pc);
        let Opnd::List(start, len) = table else {
            return;
        };
        if u != 0 {
            let what = format!(
                "the index of this `brx.idx` over a {len}-entry jump table depends on an unknown value, so it may decide synchronization"
            );
            self.unverifiable(t, pc, &what, Some(index), u, true);
            return;
        }
        let target = usize::try_from(v)
            .ok()
            .and_then(|k| self.ir.list(start, len).get(k).copied());
        match target {
            Some(Opnd::Label(target)) => self.th[t].pc = target,
            _ => {
                let what = format!(
                    "the index of this `brx.idx` is {v}, outside its {len}-entry jump table (undefined behaviour)"
                );
                self.unverifiable(t, pc, &what, Some(index), 0, true);
            }
        }
    }

    /// Checks that the region between an unknown branch and its join point contains no
    /// synchronization and no loop; returns the join (or [`NONE`] for the function exit).
    fn region(&mut self, pc: u32) -> Result<u32, String> {
        if let Some(r) = self.region_cache.get(&pc) {
            return r.clone();
        }
        let ir = self.ir;
        let result = (|| {
            if !ir.reaches_exit.get(pc as usize).copied().unwrap_or(false) {
                return Err("the branch is in a loop with no exit".to_string());
            }
            let join = ir.ipdom.get(pc as usize).copied().unwrap_or(NONE);
            let mut seen = rustc_hash::FxHashSet::default();
            let mut work: Vec<u32> = ir
                .successors(pc)
                .into_iter()
                .filter(|&s| s != NONE)
                .collect();
            if let Some(i) = ir.insts.get(pc as usize)
                && matches!(i.op, Op::Exit | Op::Ret)
            {
                work = vec![pc + 1];
            }
            while let Some(x) = work.pop() {
                if x == NONE || x == join || !seen.insert(x) {
                    continue;
                }
                if x == pc {
                    return Err(
                        "the branch controls a loop whose trip count is unknown".to_string()
                    );
                }
                if ir.syncs(x) {
                    let site = ir.sources.sites.get(x as usize);
                    return Err(format!(
                        "the code it decides contains `{}` at PTX line {}",
                        site.map_or("?", |s| &s.opcode),
                        site.map_or(0, |s| s.ptx_line)
                    ));
                }
                work.extend(ir.successors(x).into_iter().filter(|&s| s != NONE));
            }
            Ok(join)
        })();
        self.region_cache.insert(pc, result.clone());
        result
    }

    fn fork(&mut self, t: usize, pc: u32, target: u32, fall: u32, gu: u32, guard: Opnd) {
        let join = match self.region(pc) {
            Ok(j) => j,
            Err(why) => {
                let what =
                    format!("a branch on an unknown predicate decides synchronization: {why}");
                self.unverifiable(t, pc, &what, Some(guard), gu, true);
                return;
            }
        };
        let b = self.base(t);
        let r = b..b + self.nregs;
        let snap_v = self.vals[r.clone()].to_vec();
        let snap_u = self.unk[r.clone()].to_vec();
        let snap_stack = self.th[t].stack.clone();
        let depth = snap_stack.len();
        let saved = self.th[t].may_src;
        let merged = self.src.union(saved, gu);
        self.th[t].may += 1;
        self.th[t].may_src = merged;
        let end_a = self.run_path(t, target, join, depth);
        let a_v = self.vals[r.clone()].to_vec();
        let a_u = self.unk[r.clone()].to_vec();
        let a_pc = self.th[t].pc;
        self.vals[r.clone()].copy_from_slice(&snap_v);
        self.unk[r.clone()].copy_from_slice(&snap_u);
        self.th[t].stack = snap_stack;
        let end_b = if self.stop {
            PathEnd::Stopped
        } else {
            self.run_path(t, fall, join, depth)
        };
        self.th[t].may -= 1;
        self.th[t].may_src = saved;
        if self.stop || end_a == PathEnd::Stopped || end_b == PathEnd::Stopped {
            self.stop = true;
            return;
        }
        for k in 0..self.nregs {
            let i = b + k;
            if a_v[k] != self.vals[i] || a_u[k] != self.unk[i] {
                let u = self.src.union(a_u[k], self.unk[i]);
                self.unk[i] = self.src.union(u, merged);
                self.vals[i] = 0;
            }
        }
        match (end_a, end_b) {
            (PathEnd::Joined, PathEnd::Joined) => self.th[t].pc = join,
            (PathEnd::Exited, PathEnd::Exited) => self.do_exit(t, pc),
            (PathEnd::Returned(x), PathEnd::Returned(y)) if x == y && a_pc == x => self.th[t].pc = x,
            _ => self.unverifiable(t, pc, "the two sides of a branch on an unknown predicate end differently (exit versus return)", Some(guard), gu, true),
        }
    }

    fn run_path(&mut self, t: usize, start: u32, join: u32, depth: usize) -> PathEnd {
        self.th[t].path_exit = false;
        if start == EXIT_PATH {
            return PathEnd::Exited;
        }
        self.th[t].pc = start;
        loop {
            if self.stop {
                return PathEnd::Stopped;
            }
            let th = &self.th[t];
            if th.path_exit {
                self.th[t].path_exit = false;
                return PathEnd::Exited;
            }
            if th.stack.len() < depth {
                return PathEnd::Returned(th.pc);
            }
            if th.pc == join && th.stack.len() == depth {
                return PathEnd::Joined;
            }
            if th.state != State::Run {
                return PathEnd::Stopped;
            }
            self.step(t);
        }
    }

    // ---------------------------------------------------------------- barriers

    fn barrier_error(&mut self, t: usize) {
        self.th[t].state = State::Error;
        self.stop = true;
    }

    fn barrier(&mut self, t: usize, pc: u32, inst: &Inst, op: BarrierOp, red: Option<RedKind>) {
        let ops = self.ir.operands(inst);
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        if self.th[t].may > 0 {
            self.unverifiable(
                t,
                pc,
                "a barrier executes under an input-dependent branch",
                None,
                self.th[t].may_src,
                true,
            );
            return;
        }
        let (first, n_args) = if red.is_some() {
            (1, ops.len().saturating_sub(2))
        } else {
            (0, ops.len())
        };
        let id_op = o(first);
        let (id, uid) = self.rd(t, id_op, pc);
        if uid != 0 {
            self.unverifiable(
                t,
                pc,
                "the barrier id depends on an unknown value",
                Some(id_op),
                uid,
                true,
            );
            return;
        }
        let count = if n_args >= 2 {
            let c_op = o(first + 1);
            let (c, uc) = self.rd(t, c_op, pc);
            if uc != 0 {
                self.unverifiable(
                    t,
                    pc,
                    "the barrier thread count depends on an unknown value",
                    Some(c_op),
                    uc,
                    true,
                );
                return;
            }
            BarrierCount::Threads(mask(c, 32) as u32)
        } else {
            BarrierCount::All
        };
        if let Some(kind) = red {
            let p = ops.last().copied().unwrap_or(Opnd::Sink);
            let (v, u) = self.rd(t, p, pc);
            let th = &mut self.th[t];
            th.red_kind = kind;
            th.red_in = (v & 1, u);
            th.wait_dest = match o(0) {
                Opnd::Reg(r) => r,
                _ => NONE,
            };
        }
        let id = mask(id, 32) as u32;
        let cmd = Command::barrier(op, id, count, inst.aligned, InstId(pc));
        let command = self.push(t, cmd);
        let participant = Participant {
            thread: ThreadId(t as u32),
            command,
            op,
        };
        // The lane waits for the rest of its warp (PTX counts arrival per warp), and a
        // sync/red also for the generation to complete.
        self.th[t].state = State::BarWait;
        match self
            .bars
            .register(participant, id, count, InstId(pc), inst.aligned)
        {
            Ok(events) => self.barrier_events(events),
            Err(_) => self.barrier_error(t),
        }
    }

    fn warp_sync(&mut self, t: usize, pc: u32, m: Opnd) {
        if self.th[t].may > 0 {
            self.unverifiable(
                t,
                pc,
                "bar.warp.sync executes under an input-dependent branch",
                None,
                self.th[t].may_src,
                true,
            );
            return;
        }
        let (mv, mu) = self.rd(t, m, pc);
        if mu != 0 {
            self.unverifiable(
                t,
                pc,
                "the bar.warp.sync member mask depends on an unknown value",
                Some(m),
                mu,
                true,
            );
            return;
        }
        let command = self.push(t, Command::warp_sync(mv as u32, InstId(pc)));
        let participant = Participant {
            thread: ThreadId(t as u32),
            command,
            op: BarrierOp::Sync,
        };
        self.th[t].state = State::BarWait;
        match self.bars.register_warp(participant, mv as u32) {
            Ok(events) => self.barrier_events(events),
            Err(_) => self.barrier_error(t),
        }
    }

    /// Wakes the threads a barrier operation or exit released: the non-blocking lanes of a
    /// warp that registered, the blocking participants of a completed generation.
    fn barrier_events(&mut self, events: Vec<Event>) {
        for e in events {
            match e {
                Event::WarpRegistered { lanes, .. } => {
                    for p in lanes {
                        let th = &mut self.th[p.thread.index()];
                        if !p.op.blocks() && th.state == State::BarWait {
                            th.state = State::Run;
                        }
                    }
                }
                Event::Completed(c) => self.complete(c),
            }
        }
    }

    fn complete(&mut self, c: Completion) {
        let reds: Vec<usize> = c
            .participants
            .iter()
            .filter(|p| p.op == BarrierOp::Red)
            .map(|p| p.thread.index())
            .collect();
        if let Some(&first) = reds.first() {
            let kind = self.th[first].red_kind;
            let mut u = 0;
            let mut count = 0u64;
            for &t in &reds {
                let (v, vu) = self.th[t].red_in;
                u = self.src.union(u, vu);
                count += v;
            }
            let n = reds.len() as u64;
            let v = match kind {
                RedKind::Popc => count,
                RedKind::And => u64::from(count == n),
                RedKind::Or => u64::from(count > 0),
            };
            for &t in &reds {
                let d = self.th[t].wait_dest;
                if d != NONE {
                    self.wr(t, Opnd::Reg(d), if u == 0 { v } else { 0 }, u);
                }
            }
        }
        for p in &c.participants {
            let th = &mut self.th[p.thread.index()];
            if p.op.blocks() && th.state == State::BarWait {
                th.state = State::Run;
            }
        }
    }

    // ---------------------------------------------------------------- mbarriers

    fn mbar_addr(&mut self, t: usize, pc: u32, inst: &Inst, o: Opnd) -> Option<u32> {
        let space = if inst.space == Space::Generic {
            Space::Generic
        } else {
            Space::Shared
        };
        match self.addr(t, pc, space, o) {
            Addr::Shared(a) => Some(a),
            Addr::Unknown(u, _) => {
                self.unverifiable(
                    t,
                    pc,
                    "the mbarrier address depends on an unknown value",
                    Some(o),
                    u,
                    true,
                );
                None
            }
            _ => {
                self.unverifiable(
                    t,
                    pc,
                    "the mbarrier operand is not a shared-memory address",
                    Some(o),
                    0,
                    true,
                );
                None
            }
        }
    }

    fn known_operand(&mut self, t: usize, pc: u32, o: Opnd, what: &str) -> Option<u64> {
        let (v, u) = self.rd(t, o, pc);
        if u != 0 {
            let what = format!("the {what} depends on an unknown value");
            self.unverifiable(t, pc, &what, Some(o), u, true);
            return None;
        }
        Some(v)
    }

    fn mbar_result(
        &mut self,
        t: usize,
        pc: u32,
        addr: u32,
        r: Result<PhaseStep, weft_program::MbarrierError>,
    ) -> Option<u32> {
        match r {
            Ok(PhaseStep::Pending(p)) => Some(p),
            Ok(PhaseStep::Completed { completed }) => {
                self.wake_mbar(addr);
                Some(completed)
            }
            Err(e) => {
                let msg = format!(
                    "thread {t}: {e} (`{}` at PTX line {})",
                    self.opcode(pc),
                    self.line(pc)
                );
                self.finding(t, pc, FindingKind::MbarrierProtocol, msg);
                None
            }
        }
    }

    fn mbarrier(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd]) {
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        // Pending TMA completions happen before any later operation on their mbarrier.
        self.flush_tma_all();
        if self.th[t].may > 0 {
            self.unverifiable(
                t,
                pc,
                "an mbarrier operation executes under an input-dependent branch",
                None,
                self.th[t].may_src,
                true,
            );
            return;
        }
        let id = InstId(pc);
        match inst.op {
            Op::MbarInit => {
                let Some(a) = self.mbar_addr(t, pc, inst, o(0)) else {
                    return;
                };
                let Some(c) = self.known_operand(t, pc, o(1), "mbarrier.init count") else {
                    return;
                };
                self.push(t, Command::mbarrier(MbarrierOp::Init, a, c as u32, id));
                if let Err(e) = self.mbars.init(a, c as u32) {
                    let msg = format!("thread {t}: {e} (PTX line {})", self.line(pc));
                    self.finding(t, pc, FindingKind::MbarrierProtocol, msg);
                }
            }
            Op::MbarArrive { expect_tx, drop } => {
                let Some(a) = self.mbar_addr(t, pc, inst, o(1)) else {
                    return;
                };
                let extra = if ops.len() >= 3 {
                    let what = if expect_tx {
                        "mbarrier transaction count"
                    } else {
                        "mbarrier arrival count"
                    };
                    let Some(v) = self.known_operand(t, pc, o(2), what) else {
                        return;
                    };
                    Some(v as u32)
                } else {
                    None
                };
                let (count, tx) = if expect_tx {
                    (1, extra.unwrap_or(0))
                } else {
                    (extra.unwrap_or(1), 0)
                };
                let cmd = if expect_tx {
                    Command::mbarrier(MbarrierOp::ArriveExpectTx, a, tx, id)
                } else {
                    Command::mbarrier(MbarrierOp::Arrive, a, count, id)
                };
                self.push(t, cmd);
                let r = self.mbars.arrive(a, count, tx, drop);
                let token = self.mbar_result(t, pc, a, r);
                let (v, u) = match token {
                    Some(p) => (u64::from(p), 0),
                    None => (
                        0,
                        self.src.single(ValueSource::Other(
                            "an mbarrier state after a protocol error",
                        )),
                    ),
                };
                self.wr(t, o(0), v, u);
            }
            Op::MbarExpectTx | Op::MbarCompleteTx => {
                let Some(a) = self.mbar_addr(t, pc, inst, o(0)) else {
                    return;
                };
                let Some(tx) = self.known_operand(t, pc, o(1), "mbarrier transaction count") else {
                    return;
                };
                let complete = inst.op == Op::MbarCompleteTx;
                let op = if complete {
                    MbarrierOp::CompleteTx
                } else {
                    MbarrierOp::ExpectTx
                };
                self.push(t, Command::mbarrier(op, a, tx as u32, id));
                let r = if complete {
                    self.mbars.complete_tx(a, tx as u32)
                } else {
                    self.mbars.expect_tx(a, tx as u32)
                };
                self.mbar_result(t, pc, a, r);
            }
            Op::MbarWait { parity } => {
                let Some(a) = self.mbar_addr(t, pc, inst, o(1)) else {
                    return;
                };
                let what = if parity {
                    "mbarrier wait parity"
                } else {
                    "mbarrier wait state"
                };
                let Some(p) = self.known_operand(t, pc, o(2), what) else {
                    return;
                };
                let p = p as u32;
                self.push(t, Command::mbarrier(MbarrierOp::WaitParity, a, p & 1, id));
                let ready = if parity {
                    self.mbars.is_ready(a, p)
                } else {
                    self.mbars.is_token_ready(a, p)
                };
                match ready {
                    Ok(true) => self.wr(t, o(0), 1, 0),
                    Ok(false) => {
                        let th = &mut self.th[t];
                        th.state = State::MbarWait { addr: a };
                        th.wait_parity = p;
                        th.wait_token = !parity;
                        th.wait_dest = match o(0) {
                            Opnd::Reg(r) => r,
                            _ => NONE,
                        };
                    }
                    Err(e) => {
                        let msg = format!("thread {t}: {e} (PTX line {})", self.line(pc));
                        self.finding(t, pc, FindingKind::MbarrierProtocol, msg);
                        let u = self.src.single(ValueSource::Other(
                            "an mbarrier wait after a protocol error",
                        ));
                        self.wr(t, o(0), 0, u);
                    }
                }
            }
            Op::MbarInval => {
                let Some(a) = self.mbar_addr(t, pc, inst, o(0)) else {
                    return;
                };
                self.push(t, Command::mbarrier(MbarrierOp::Inval, a, 0, id));
                if let Err(e) = self.mbars.inval(a) {
                    let msg = format!("thread {t}: {e} (PTX line {})", self.line(pc));
                    self.finding(t, pc, FindingKind::MbarrierProtocol, msg);
                }
            }
            // Without `.noinc` the pending count is incremented before the asynchronous
            // arrive: no net effect on the phase.
            Op::CpAsyncMbarArrive { noinc: true } => {
                let Some(a) = self.mbar_addr(t, pc, inst, o(0)) else {
                    return;
                };
                self.push(t, Command::mbarrier(MbarrierOp::Arrive, a, 1, id));
                let r = self.mbars.arrive(a, 1, 0, false);
                self.mbar_result(t, pc, a, r);
            }
            _ => {}
        }
    }

    fn wake_mbar(&mut self, addr: u32) {
        for t in 0..self.n {
            if self.th[t].state != (State::MbarWait { addr }) {
                continue;
            }
            let p = self.th[t].wait_parity;
            let ready = if self.th[t].wait_token {
                self.mbars.is_token_ready(addr, p)
            } else {
                self.mbars.is_ready(addr, p)
            };
            if ready == Ok(true) {
                self.th[t].state = State::Run;
                let d = self.th[t].wait_dest;
                if d != NONE {
                    self.wr(t, Opnd::Reg(d), 1, 0);
                }
            }
        }
    }

    fn bulk_copy(
        &mut self,
        t: usize,
        pc: u32,
        inst: &Inst,
        ops: &[Opnd],
        to_shared: bool,
        mbar: bool,
    ) {
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        if mbar && self.th[t].may > 0 {
            self.unverifiable(t, pc, "an asynchronous copy signalling an mbarrier executes under an input-dependent branch", None, self.th[t].may_src, true);
            return;
        }
        let (size, us) = self.rd(t, o(2), pc);
        if us != 0 {
            self.unverifiable(
                t,
                pc,
                "the byte count of a bulk copy depends on an unknown value",
                Some(o(2)),
                us,
                mbar,
            );
            return;
        }
        let (shared_op, kind) = if to_shared {
            (o(0), AccessKind::Write)
        } else {
            (o(1), AccessKind::Read)
        };
        let space = Space::Shared;
        match self.addr(t, pc, space, shared_op) {
            Addr::Shared(a) => {
                let u = self.src.single(ValueSource::GlobalLoad(InstId(pc)));
                self.shared_access(t, pc, kind, a, size as u32, if to_shared { u } else { 0 });
            }
            Addr::Unknown(u, _) => {
                self.unverifiable(
                    t,
                    pc,
                    "a shared-memory address depends on an unknown value",
                    Some(shared_op),
                    u,
                    false,
                );
            }
            _ => {}
        }
        let _ = inst;
        if mbar {
            let Some(a) = self.mbar_addr(
                t,
                pc,
                &Inst {
                    space: Space::Shared,
                    ..*inst
                },
                o(3),
            ) else {
                return;
            };
            self.push(
                t,
                Command::mbarrier(MbarrierOp::CompleteTx, a, size as u32, InstId(pc)),
            );
            let r = self.mbars.complete_tx(a, size as u32);
            self.mbar_result(t, pc, a, r);
        }
    }

    /// A TMA load (`cp.async.bulk.tensor` global → shared, `mbarrier::complete_tx`). Its
    /// byte count lives in the tensor map, which the emulator cannot read. Assumption (a
    /// kernel note): the copies a thread issues in a row towards one mbarrier transfer exactly
    /// the transaction bytes that mbarrier's current phase still expects, and complete
    /// together after the last of them. Each copy is recorded as writing that many bytes from
    /// its destination: exact for one copy per `expect_tx`, an over-approximation otherwise.
    fn tma_load(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd]) {
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        if self.th[t].may > 0 {
            self.unverifiable(
                t,
                pc,
                "a TMA copy signalling an mbarrier executes under an input-dependent branch",
                None,
                self.th[t].may_src,
                true,
            );
            return;
        }
        if !self.notes.iter().any(|n| n.starts_with("TMA loads")) {
            self.notes.push(format!(
                "TMA loads (`cp.async.bulk.tensor`, first at PTX line {}) take their byte count from the tensor map, which weft cannot read: it assumes the copies a thread issues in a row towards one mbarrier transfer exactly the transaction bytes that mbarrier's phase still expects (announced by expect_tx) and complete together after the last copy; each copy is recorded as writing that many bytes from its destination (exact with one copy per expect_tx, an over-approximation with several)",
                self.line(pc)
            ));
        }
        let Some(a) = self.mbar_addr(
            t,
            pc,
            &Inst {
                space: Space::Shared,
                ..*inst
            },
            o(2),
        ) else {
            return;
        };
        if self
            .tma_pending
            .iter()
            .any(|p| p.thread == t && p.mbar != a)
        {
            self.flush_tma(t);
        }
        let tx = self.mbars.state(a).map_or(0, |s| s.tx);
        let Ok(bytes) = u32::try_from(tx) else {
            self.unverifiable(t, pc, "a TMA copy signals an mbarrier whose current phase expects no transaction bytes (or more than 4 GiB), so its byte count, which lives in the tensor map, cannot be derived", Some(o(2)), 0, true);
            return;
        };
        if bytes == 0 {
            self.unverifiable(t, pc, "a TMA copy signals an mbarrier whose current phase expects no transaction bytes, so its byte count, which lives in the tensor map, cannot be derived", Some(o(2)), 0, true);
            return;
        }
        let mut overrun = None;
        let mut written = None;
        // A copy joining a pending batch of this thread shares its expect_tx with the copies
        // before it: its extent (the whole transaction) is only an upper bound.
        let joins = self.tma_pending.iter().any(|p| p.thread == t);
        match self.addr(t, pc, Space::Shared, o(0)) {
            Addr::Shared(d) => {
                let u = self.src.single(ValueSource::GlobalLoad(InstId(pc)));
                // With several copies per expect_tx the extent is an upper bound: clip it to
                // the shared window (an overrun is reported if the copy stays alone).
                let limit = self
                    .smem_size
                    .unwrap_or(self.smem.len() as u32)
                    .min(self.smem.len() as u32);
                let mut len = bytes;
                if d < limit && u64::from(d) + u64::from(bytes) > u64::from(limit) {
                    len = limit - d;
                    overrun = Some((d, bytes));
                }
                self.in_tma = true;
                if self.shared_access(t, pc, AccessKind::Write, d, len, u) {
                    let k = self.cmds[t].len() as u32 - 1;
                    if joins {
                        self.flag_approx(t, k);
                    }
                    written = Some(k);
                }
                self.in_tma = false;
            }
            Addr::Unknown(u, _) => {
                self.unverifiable(
                    t,
                    pc,
                    "a shared-memory address depends on an unknown value",
                    Some(o(0)),
                    u,
                    true,
                );
                return;
            }
            _ => {}
        }
        match self.tma_pending.iter_mut().find(|p| p.thread == t) {
            Some(p) => {
                p.pc = pc;
                p.copies += 1;
                if let Some(k) = p.first_write.take() {
                    self.flag_approx(t, k);
                }
            }
            None => self.tma_pending.push(TmaBatch {
                thread: t,
                mbar: a,
                pc,
                copies: 1,
                first_write: written,
                overrun,
            }),
        }
    }

    /// Marks thread `t`'s command `k` (an access) as having an over-approximated extent.
    fn flag_approx(&mut self, t: usize, k: u32) {
        if let Some(c) = self.cmds[t].get_mut(k as usize) {
            *c = c.with_approx(true);
        }
    }

    /// Applies the deferred `complete_tx` of thread `t`'s pending TMA loads: the bytes the
    /// mbarrier's phase still expects, as one command at the last copy.
    fn flush_tma(&mut self, t: usize) {
        let Some(k) = self.tma_pending.iter().position(|p| p.thread == t) else {
            return;
        };
        let batch = self.tma_pending.swap_remove(k);
        let (a, pc) = (batch.mbar, batch.pc);
        if batch.copies == 1
            && let Some((d, n)) = batch.overrun
        {
            let msg = format!(
                "thread {t}: TMA load of {n} bytes (the transaction bytes its mbarrier expects) at shared {d:#x} by `{}` at PTX line {} lies outside the {}-byte shared window",
                self.opcode(pc),
                self.line(pc),
                self.smem_size.unwrap_or(self.smem.len() as u32)
            );
            self.finding(t, pc, FindingKind::SharedOutOfBounds, msg);
        }
        let tx = self.mbars.state(a).map_or(0, |s| s.tx);
        let Ok(bytes) = u32::try_from(tx) else {
            return;
        };
        if bytes == 0 {
            self.unverifiable(t, pc, "the transaction bytes a TMA copy was to complete were completed by another operation first, so the copy's byte count cannot be derived", None, 0, true);
            return;
        }
        self.in_tma = true;
        self.push(
            t,
            Command::mbarrier(MbarrierOp::CompleteTx, a, bytes, InstId(pc)),
        );
        self.in_tma = false;
        let r = self.mbars.complete_tx(a, bytes);
        self.mbar_result(t, pc, a, r);
    }

    fn flush_tma_all(&mut self) {
        while let Some(t) = self.tma_pending.first().map(|p| p.thread) {
            self.flush_tma(t);
        }
    }

    /// A TMA store or reduction (`cp[.reduce].async.bulk.tensor` shared → global): a read of
    /// shared memory whose extent lives in the tensor map. Recorded as a read from the source
    /// to the end of the shared allocation (an over-approximation, in a kernel note).
    fn tma_store(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd]) {
        let _ = inst;
        let src = ops.get(1).copied().unwrap_or(Opnd::Sink);
        if !self.notes.iter().any(|n| n.starts_with("TMA stores")) {
            self.notes.push(format!(
                "TMA stores (`cp.async.bulk.tensor` from shared memory, first at PTX line {}) take their extent from the tensor map, which weft cannot read: each is recorded as reading from its source address to the end of the shared allocation, at issue",
                self.line(pc)
            ));
        }
        match self.addr(t, pc, Space::Shared, src) {
            Addr::Shared(s) => {
                let end = self
                    .smem_size
                    .unwrap_or(self.smem.len() as u32)
                    .min(self.smem.len() as u32);
                let len = end.saturating_sub(s).max(1);
                if self.shared_access(t, pc, AccessKind::Read, s, len, 0) {
                    // The extent is an upper bound of what the tensor map selects.
                    let k = self.cmds[t].len() as u32 - 1;
                    self.flag_approx(t, k);
                }
            }
            Addr::Unknown(u, _) => {
                self.unverifiable(
                    t,
                    pc,
                    "a shared-memory address depends on an unknown value",
                    Some(src),
                    u,
                    false,
                );
            }
            _ => {}
        }
    }

    // ---------------------------------------------------------------- warp collectives

    fn member_mask(&mut self, t: usize, pc: u32, inst: &Inst) -> u32 {
        let ops = self.ir.operands(inst);
        let has_mask = match inst.op {
            Op::Activemask => false,
            Op::Vote(_) => ops.len() >= 3,
            Op::Shfl(_) => ops.len() >= 5,
            _ => true,
        };
        if !has_mask {
            return u32::MAX;
        }
        let m = ops.last().copied().unwrap_or(Opnd::Sink);
        let (v, u) = self.rd(t, m, pc);
        if u != 0 {
            self.unverifiable(
                t,
                pc,
                "the member mask of a warp-collective depends on an unknown value",
                Some(m),
                u,
                false,
            );
            return u32::MAX;
        }
        v as u32
    }

    fn collective(&mut self, t: usize, pc: u32, inst: &Inst) {
        if self.th[t].may > 0 {
            let o = self.src.single(ValueSource::Other(
                "a warp collective under an input-dependent branch",
            ));
            let u = self.src.union(o, self.th[t].may_src);
            self.clobber(t, inst, u);
            return;
        }
        self.th[t].state = State::Coll(pc);
        self.th[t].pc = pc;
        self.try_collective(t / WARP_SIZE as usize, pc, t);
    }

    fn retry_collectives(&mut self, w: usize) {
        let lanes = self.warp_lanes(w);
        let mut pcs: Vec<(u32, usize)> = Vec::new();
        for t in lanes {
            if let State::Coll(pc) = self.th[t].state
                && !pcs.iter().any(|&(p, _)| p == pc)
            {
                pcs.push((pc, t));
            }
        }
        for (pc, t) in pcs {
            self.try_collective(w, pc, t);
        }
    }

    /// Completes the `activemask`s of warp `w` whose lanes no running lane can still join.
    fn retry_activemask(&mut self, w: usize) {
        let waiting = self.warp_lanes(w).any(|t| {
            matches!(self.th[t].state, State::Coll(pc)
                if self.ir.insts.get(pc as usize).is_some_and(|i| i.op == Op::Activemask))
        });
        if waiting {
            self.retry_collectives(w);
        }
    }

    fn warp_lanes(&self, w: usize) -> std::ops::Range<usize> {
        let s = w * WARP_SIZE as usize;
        s..(s + WARP_SIZE as usize).min(self.n)
    }

    fn try_collective(&mut self, w: usize, pc: u32, t: usize) {
        let Some(&inst) = self.ir.insts.get(pc as usize) else {
            return;
        };
        let mmask = self.member_mask(t, pc, &inst);
        let base = w * WARP_SIZE as usize;
        // `activemask` waits for no one: its result is the lanes that execute it together,
        // so it completes once every other lane of the warp has exited or stopped elsewhere.
        let waits_for_members = inst.op != Op::Activemask;
        let mut present = 0u32;
        for lt in self.warp_lanes(w) {
            let lane = (lt - base) as u32;
            if mmask & (1 << lane) == 0 {
                continue;
            }
            match self.th[lt].state {
                State::Coll(p) if p == pc => present |= 1 << lane,
                State::Exited | State::Trapped(_) | State::Error => {}
                State::Run => return,
                _ if waits_for_members => return,
                _ => {}
            }
        }
        if present == 0 {
            return;
        }
        self.exec_collective(w, pc, &inst, present);
        for lt in self.warp_lanes(w) {
            if present & (1 << (lt - base)) != 0 {
                self.th[lt].state = State::Run;
                self.th[lt].pc = pc + 1;
            }
        }
    }

    fn exec_collective(&mut self, w: usize, pc: u32, inst: &Inst, present: u32) {
        let base = w * WARP_SIZE as usize;
        let ops: Vec<Opnd> = self.ir.operands(inst).to_vec();
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        let lanes: Vec<u32> = (0..32).filter(|l| present & (1 << l) != 0).collect();
        let (d, p) = match o(0) {
            Opnd::List(s, 2) => {
                let l = self.ir.list(s, 2);
                (l[0], l[1])
            }
            x => (x, Opnd::Sink),
        };
        // Inputs of every lane first (all reads happen before any write).
        let mut a = [(0u64, 0u32); 32];
        for &l in &lanes {
            a[l as usize] = self.rd(base + l as usize, o(1), pc);
        }
        let mut out: Vec<(u32, u64, u32, u64, u32)> = Vec::with_capacity(lanes.len());
        let all_known = lanes.iter().all(|&l| a[l as usize].1 == 0);
        let all_u = lanes
            .iter()
            .fold(0, |acc, &l| self.src.union(acc, a[l as usize].1));
        match inst.op {
            Op::Shfl(mode) => {
                for &l in &lanes {
                    let t = base + l as usize;
                    let (b, ub) = self.rd(t, o(2), pc);
                    let (c, uc) = self.rd(t, o(3), pc);
                    if ub | uc != 0 {
                        let u = self.src.union(ub, uc);
                        out.push((l, 0, u, 0, u));
                        continue;
                    }
                    let bval = (b & 0x1f) as i64;
                    let cval = (c & 0x1f) as i64;
                    let seg = ((c >> 8) & 0x1f) as i64;
                    let lane = i64::from(l);
                    let max_lane = (lane & seg) | (cval & !seg);
                    let min_lane = lane & seg;
                    let (j, pval) = match mode {
                        ShflMode::Up => (lane - bval, lane - bval >= max_lane),
                        ShflMode::Down => (lane + bval, lane + bval <= max_lane),
                        ShflMode::Bfly => (lane ^ bval, (lane ^ bval) <= max_lane),
                        ShflMode::Idx => {
                            let j = min_lane | (bval & !seg);
                            (j, j <= max_lane)
                        }
                    };
                    let j = if pval { j } else { lane };
                    let (v, u) = if (0..32).contains(&j) && present & (1 << j) != 0 {
                        a[j as usize]
                    } else {
                        (
                            0,
                            self.src
                                .single(ValueSource::Other("a shuffle from an inactive lane")),
                        )
                    };
                    out.push((l, v, u, u64::from(pval), 0));
                }
            }
            Op::Vote(mode) => {
                let ballot = lanes
                    .iter()
                    .filter(|&&l| a[l as usize].0 & 1 != 0)
                    .fold(0u64, |m, &l| m | (1 << l));
                let v = match mode {
                    VoteMode::Ballot => ballot,
                    VoteMode::All => u64::from(ballot == u64::from(present)),
                    VoteMode::Any => u64::from(ballot != 0),
                    VoteMode::Uni => u64::from(ballot == 0 || ballot == u64::from(present)),
                };
                for &l in &lanes {
                    out.push((l, if all_known { v } else { 0 }, all_u, 0, 0));
                }
            }
            Op::MatchAny | Op::MatchAll => {
                let all_same = lanes
                    .iter()
                    .all(|&l| a[l as usize].0 == a[lanes[0] as usize].0);
                for &l in &lanes {
                    let v = if inst.op == Op::MatchAny {
                        lanes
                            .iter()
                            .filter(|&&k| a[k as usize].0 == a[l as usize].0)
                            .fold(0u64, |m, &k| m | (1 << k))
                    } else if all_same {
                        u64::from(present)
                    } else {
                        0
                    };
                    out.push((
                        l,
                        if all_known { v } else { 0 },
                        all_u,
                        u64::from(all_same),
                        all_u,
                    ));
                }
            }
            Op::Activemask => {
                for &l in &lanes {
                    out.push((l, u64::from(present), 0, 0, 0));
                }
            }
            Op::Elect => {
                let leader = lanes[0];
                for &l in &lanes {
                    out.push((l, u64::from(leader), 0, u64::from(l == leader), 0));
                }
            }
            Op::Redux(op) => {
                let signed = inst.ty.signed();
                let vals: Vec<u64> = lanes.iter().map(|&l| mask(a[l as usize].0, 32)).collect();
                let v = match op {
                    ReduxOp::Add => vals.iter().fold(0u64, |x, y| x.wrapping_add(*y)),
                    ReduxOp::And => vals.iter().fold(u64::from(u32::MAX), |x, y| x & y),
                    ReduxOp::Or => vals.iter().fold(0, |x, y| x | y),
                    ReduxOp::Xor => vals.iter().fold(0, |x, y| x ^ y),
                    ReduxOp::Min | ReduxOp::Max => {
                        let key = |x: &u64| {
                            if signed {
                                i64::from(*x as u32 as i32)
                            } else {
                                *x as i64
                            }
                        };
                        let it = vals.iter();
                        let r = if op == ReduxOp::Min {
                            it.min_by_key(|x| key(x))
                        } else {
                            it.max_by_key(|x| key(x))
                        };
                        r.copied().unwrap_or(0)
                    }
                };
                for &l in &lanes {
                    out.push((l, if all_known { mask(v, 32) } else { 0 }, all_u, 0, 0));
                }
            }
            _ => {}
        }
        for (l, v, u, pv, pu) in out {
            let t = base + l as usize;
            self.wr(t, d, v, u);
            self.wr(t, p, pv, pu);
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mem {
    Shared,
    Local,
    Param,
}

fn mul(a: u64, b: u64, bits: u8, signed: bool, mode: MulMode) -> u64 {
    if signed {
        let p = i128::from(sx(a, bits)) * i128::from(sx(b, bits));
        match mode {
            MulMode::Lo | MulMode::Wide => p as u64,
            MulMode::Hi => (p >> bits) as u64,
        }
    } else {
        let p = u128::from(mask(a, bits)) * u128::from(mask(b, bits));
        match mode {
            MulMode::Lo | MulMode::Wide => p as u64,
            MulMode::Hi => (p >> bits) as u64,
        }
    }
}

/// `cvt.dst.src`: `None` when the result is not computed (float rounding the emulator does
/// not model).
fn cvt(a: u64, dst: Ty, src: Ty, round: u8, sat: bool) -> Option<u64> {
    let int = |k: Kind| matches!(k, Kind::U | Kind::S | Kind::B);
    match (int(dst.kind), int(src.kind)) {
        (true, true) => {
            let v = if src.signed() {
                sx(a, src.bits)
            } else {
                mask(a, src.bits) as i64
            };
            let v = if sat {
                let (lo, hi): (i128, i128) = if dst.signed() {
                    (-(1i128 << (dst.bits - 1)), (1i128 << (dst.bits - 1)) - 1)
                } else {
                    (0, (1i128 << dst.bits) - 1)
                };
                let wide = if src.signed() {
                    i128::from(v)
                } else {
                    i128::from(mask(a, src.bits))
                };
                wide.clamp(lo, hi) as i64
            } else {
                v
            };
            Some(mask(v as u64, dst.bits))
        }
        (false, true) => {
            let v = if src.signed() {
                sx(a, src.bits) as f64
            } else {
                mask(a, src.bits) as f64
            };
            match dst.bits {
                32 => Some(u64::from((v as f32).to_bits())),
                64 => Some(v.to_bits()),
                _ => None,
            }
        }
        (true, false) => {
            let f = match src.bits {
                32 => f64::from(f32::from_bits(a as u32)),
                64 => f64::from_bits(a),
                _ => return None,
            };
            let r = match round {
                1 => f.trunc(),
                2 => f.floor(),
                3 => f.ceil(),
                4 => f.round_ties_even(),
                _ => return None,
            };
            let v = if dst.signed() {
                let lo = -(2f64.powi(i32::from(dst.bits) - 1));
                (r.clamp(lo, -lo - 1.0) as i64) as u64
            } else {
                r.clamp(0.0, 2f64.powi(i32::from(dst.bits)) - 1.0) as u64
            };
            Some(mask(v, dst.bits))
        }
        (false, false) => match (dst.bits, src.bits) {
            (32, 32) | (64, 64) if round == 0 => Some(a),
            (64, 32) => Some(f64::from(f32::from_bits(a as u32)).to_bits()),
            _ => None,
        },
    }
}
