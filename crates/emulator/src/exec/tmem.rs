//! Tensor-memory accesses: what `tcgen05.ld`, `tcgen05.st`, `tcgen05.mma`, `tcgen05.cp` and
//! `tcgen05.dealloc` read and write in the CTA's tensor memory (128 lanes of 512 32-bit
//! columns; PTX ISA: *Tensor Memory*, *Matrix fragments for tcgen05.ld/st*, *Data path layout
//! organization*; docs/semantics.md §4.7).
//!
//! Every access is an agent of its own ([`weft_program::Proxy::Tensor`]), one per lane and
//! run of consecutive columns (a lane's columns are consecutive in
//! [`weft_program::TMEM_BASE`]'s mapping), from its issue until what completes it:
//!
//! - `tcgen05.ld`/`tcgen05.st` are warp instructions; each lane reads (writes) the cells of
//!   its registers until its warp's k-th `tcgen05.wait::ld` (`::st`), a completion set the
//!   lanes share; a load also completes at the thread's first instruction that names a
//!   register it wrote ([`Machine::tmem_register_use`], an approximation the notes list). A
//!   lane outside its warp's 32 lanes is a `tensor-memory` finding;
//! - `tcgen05.mma` writes its accumulator (and reads it, which a write covers), reads A when
//!   A is in tensor memory and the scale factors of a block-scaled kind; `tcgen05.cp` writes
//!   its destination. They end like their shared-memory reads, before the phases of the
//!   `tcgen05.commit`s tracking them, and one thread's are ordered in issue order
//!   ([`weft_program::AsyncCopy::tensor_pipe`]). An MMA writing the accumulator the thread's previous MMA
//!   wrote with no commit between records no agents: those of the earlier one stand for it;
//! - `tcgen05.dealloc` writes the freed columns of every lane, complete where it runs.
//!
//! `tcgen05.alloc` places the CTA's allocations one after the other, each at the first
//! column after the previous one that is a multiple of its size: only differences between
//! tensor-memory addresses matter to these checks, and allocations never overlap.

use super::Machine;
use crate::ir::{Inst, MemBase, Opnd};
use crate::unverifiable::{MatrixIssue, Value, Why};
use crate::{FindingKind, ValueSource};
use rustc_hash::FxHashMap;
use weft_program::{
    AccessKind, AsyncCopy, Command, InstId, Proxy, TMEM_COLUMNS, TMEM_LANES, ThreadId,
};

/// The layout of a `tcgen05.ld`/`st` shape: which (row, column) of the shape's atom lane `l`'s
/// register `r` holds, and how many registers one repetition (`.num`) gives a lane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LdStShape {
    /// `.32x32b`: 32 rows, one column per repetition; lane `l` holds row `l`.
    W32x32,
    /// `.16x64b`: 16 rows, 2 columns per repetition.
    W16x64,
    /// `.16x128b`: 16 rows, 4 columns per repetition.
    W16x128,
    /// `.16x256b`: 16 rows, 8 columns per repetition.
    W16x256,
    /// `.16x32bx2`: two halves of 16 rows and one column per repetition, the second
    /// `split` columns (the instruction's `immHalfSplitoff`) after the first.
    W16x32x2 { split: u32 },
}

impl LdStShape {
    fn of(m: &str) -> Option<Self> {
        Some(match m {
            "32x32b" => LdStShape::W32x32,
            "16x64b" => LdStShape::W16x64,
            "16x128b" => LdStShape::W16x128,
            "16x256b" => LdStShape::W16x256,
            "16x32bx2" => LdStShape::W16x32x2 { split: 0 },
            _ => return None,
        })
    }

    /// Registers per lane for one repetition.
    fn regs(self) -> u32 {
        match self {
            LdStShape::W32x32 | LdStShape::W16x64 | LdStShape::W16x32x2 { .. } => 1,
            LdStShape::W16x128 => 2,
            LdStShape::W16x256 => 4,
        }
    }

    /// The (row, column) of lane `l`'s register `r` (PTX ISA, *Matrix fragments for
    /// tcgen05.ld and tcgen05.st*; repetitions continue along the columns).
    fn cell(self, l: u32, r: u32) -> (u32, u32) {
        match self {
            LdStShape::W32x32 => (l, r),
            LdStShape::W16x64 => (l / 4 + 8 * (l % 2), (l / 2) % 2 + 2 * r),
            LdStShape::W16x128 => (l / 4 + 8 * (r % 2), l % 4 + 4 * (r / 2)),
            LdStShape::W16x256 => (l / 4 + 8 * ((r / 2) % 2), r % 2 + 2 * (l % 4) + 8 * (r / 4)),
            // weft's reading: `.16x64b`'s rows and halves, its two adjacent columns moved
            // `split` apart (the union of the warp's cells is the shape's either way).
            LdStShape::W16x32x2 { split } => (l / 4 + 8 * (l % 2), r + split * ((l / 2) % 2)),
        }
    }
}

/// The repetition count of a `.xN` modifier.
fn repetitions(m: &str) -> Option<u32> {
    let n: u32 = m.strip_prefix('x')?.parse().ok()?;
    (n.is_power_of_two() && n <= 128).then_some(n)
}

/// The lanes a `tcgen05.cp` of a source matrix of `rows` rows writes, relative to its
/// address's lane: `4x256b` lanes 0, 32, 64 and 96; `128x256b` and `128x128b` 128
/// consecutive lanes, and the multicast `64x128b.warpx2` and `32x128b.warpx4` forms every lane
/// too (their rows replicated over the warps' lane quarters). Each writes a row's bytes
/// into consecutive columns.
fn cp_lanes(rows: u32) -> impl Iterator<Item = u32> {
    let quarters = rows == 4;
    (0..TMEM_LANES).filter(move |&l| !quarters || l % 32 == 0)
}

/// A tensor-memory address operand's lane (bits 16–31) and column (bits 0–15).
fn split(taddr: u32) -> (u32, u32) {
    (taddr >> 16, taddr & 0xffff)
}

/// The tensor-memory accesses in flight, per thread, and the warps' wait completion sets.
#[derive(Clone, Debug, Default)]
pub(super) struct Accesses {
    pub(super) threads: Vec<Thread>,
    /// Per (warp, k, st): the completion set of the k-th `tcgen05.wait` of its lanes.
    joint: FxHashMap<(u32, u32, bool), u32>,
}

/// One thread's tensor-memory accesses in flight and what its next operations need.
#[derive(Debug, Clone, Default)]
pub(super) struct Thread {
    /// Its `tcgen05.ld` and `tcgen05.st` agents not yet completed by a `tcgen05.wait::ld` /
    /// `::st`.
    pub(super) pending: [Vec<u32>; 2],
    /// Its `tcgen05.ld` agents completed by a use of their registers since its last
    /// `tcgen05.wait::ld` (which completes them for the warp's other lanes too).
    used: Vec<u32>,
    /// How many `tcgen05.wait::ld` and `::st` it ran (outside input-dependent branches).
    waits: [u32; 2],
    /// Per `tcgen05.ld` instruction: the first agent of its latest execution.
    last_ld: FxHashMap<u32, u32>,
    /// Its latest tensor-pipe operation: a `tcgen05.mma`'s accumulator address and shape
    /// (`M << 16 | N`), or `None` for a `tcgen05.cp`.
    last_pipe: Option<Option<(u32, u32)>>,
    /// The accumulator (address, shape, bounded) its latest `tcgen05.mma` wrote since its
    /// last `tcgen05.commit`, outside input-dependent branches.
    pub(super) open_acc: Option<(u32, u32, bool)>,
}

impl Accesses {
    pub(super) fn new(threads: usize) -> Self {
        Accesses {
            threads: vec![Thread::default(); threads],
            joint: FxHashMap::default(),
        }
    }

    /// Whether some thread has a tensor-memory access its waits may still complete.
    pub(super) fn in_flight(&self) -> bool {
        self.threads
            .iter()
            .any(|th| th.pending.iter().any(|p| !p.is_empty()) || !th.used.is_empty())
    }
}

impl Machine<'_> {
    /// The value of a tensor-memory address operand (`[taddr]`, `[taddr+imm]`, or a
    /// register), or `None` after recording why it is unknown.
    pub(super) fn tmem_operand(&mut self, t: usize, pc: u32, o: Opnd) -> Option<u32> {
        let what = Value::TensorMemoryAddress;
        let v = match o {
            Opnd::Mem(MemBase::Reg(r), off) => self
                .known_value(t, pc, Opnd::Reg(r), what, false)?
                .wrapping_add(off as u64),
            Opnd::Mem(MemBase::Abs, off) => off as u64,
            _ => self.known_value(t, pc, o, what, false)?,
        };
        Some(v as u32)
    }

    /// Records thread `t`'s access of `columns` columns from `column` in each lane of
    /// `lanes` as agents (one per lane), `tensor_pipe` when a `tcgen05.mma` or `tcgen05.cp`
    /// makes them; their indices are appended to
    /// `out`. A footprint outside the 128 lanes and 512 columns makes the kernel
    /// unverifiable (`false`).
    #[allow(clippy::too_many_arguments)]
    fn tmem_agents(
        &mut self,
        t: usize,
        pc: u32,
        kind: AccessKind,
        lanes: impl IntoIterator<Item = u32>,
        (column, columns): (u32, u32),
        approx: bool,
        tensor_pipe: bool,
        out: &mut Vec<u32>,
    ) -> bool {
        let len = 4 * columns;
        for lane in lanes {
            let first = weft_program::tmem_address(lane, column);
            let fits = column
                .checked_add(columns)
                .is_some_and(|end| end <= TMEM_COLUMNS);
            let Some(addr) = first.filter(|_| fits && columns > 0) else {
                self.unverifiable(
                    t,
                    pc,
                    Why::MatrixOperand(MatrixIssue::TensorMemoryRange),
                    None,
                    0,
                    false,
                );
                return false;
            };
            if !self.agent_fits(t, pc) {
                return false;
            }
            let entries = weft_program::race_entry_bytes(addr, len);
            if self.check_memory_for(t, pc, entries) {
                return false;
            }
            let may = self.th[t].may > 0;
            let issue = self.cmds[t].len() as u32;
            let g = self.copies.len() as u32;
            self.guard_copy(g);
            let access = Command::access(kind, addr, len, may, InstId(pc)).with_approx(approx);
            let mut copy = AsyncCopy::new(ThreadId(t as u32), issue, access, Proxy::Tensor);
            copy.tensor_pipe = tensor_pipe;
            self.copies.push(copy);
            self.charge_agent(t, pc, entries);
            out.push(g);
        }
        true
    }

    /// `tcgen05.ld` (`st: false`) or `tcgen05.st`: lane `t`'s cells of the warp's shape, in
    /// flight until the thread's next `tcgen05.wait::ld` (`::st`). A load's registers become
    /// unknown.
    pub(super) fn tcgen_ld_st(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd], st: bool) {
        if !st {
            let u = self
                .src
                .single(ValueSource::Other("a tensor-memory load (tcgen05.ld)"));
            self.clobber(t, inst, u);
        }
        let (shape, num, pack) = {
            let opcode = self.opcode(pc);
            (
                opcode.split('.').find_map(LdStShape::of),
                opcode.split('.').find_map(repetitions),
                opcode
                    .split('.')
                    .any(|m| m == "pack::16b" || m == "unpack::16b"),
            )
        };
        let (Some(mut shape), Some(num)) = (shape, num) else {
            self.matrix_issue(t, pc, MatrixIssue::Shape);
            return;
        };
        // `.16x32bx2`'s half offset: an immediate after the address (`ld r, [a], imm`; `st
        // [a], imm, r`).
        if let LdStShape::W16x32x2 { split } = &mut shape {
            match ops.get(if st { 1 } else { 2 }) {
                Some(&Opnd::Imm(v)) if v < u64::from(TMEM_COLUMNS) => *split = v as u32,
                _ => {
                    self.matrix_issue(t, pc, MatrixIssue::Shape);
                    return;
                }
            }
        }
        let o = ops.get(usize::from(!st)).copied().unwrap_or(Opnd::Sink);
        let Some(taddr) = self.tmem_operand(t, pc, o) else {
            return;
        };
        let (lane0, col0) = split(taddr);
        let l = (t % weft_program::WARP_SIZE as usize) as u32;
        // This lane's cells, as runs of consecutive columns per row.
        let mut cells: Vec<(u32, u32)> = Vec::new();
        for r in 0..shape.regs() * num {
            let (row, col) = shape.cell(l, r);
            if pack {
                cells.push((row, 2 * col));
                cells.push((row, 2 * col + 1));
            } else {
                cells.push((row, col));
            }
        }
        cells.sort_unstable();
        cells.dedup();
        let kind = if st {
            AccessKind::Write
        } else {
            AccessKind::Read
        };
        // (lane, first column, columns) per run of consecutive columns.
        let mut runs: Vec<(u32, u32, u32)> = Vec::new();
        for (row, col) in cells {
            let lane = lane0.saturating_add(row);
            let column = col0.saturating_add(col);
            match runs.last_mut() {
                Some((l, c, n)) if *l == lane && c.saturating_add(*n) == column => *n += 1,
                _ => runs.push((lane, column, 1)),
            }
        }
        // "The warp's ID within its warpgroup decides which 32 lanes it may access" (PTX
        // ISA, *Tensor Memory*, access restrictions): warp w the lanes 32·(w % 4) on.
        let quarter = 32 * ((t / weft_program::WARP_SIZE as usize) % 4) as u32;
        if let Some(&(lane, column, _)) = runs
            .iter()
            .find(|&&(lane, ..)| lane < TMEM_LANES && !(quarter..quarter + 32).contains(&lane))
            && !self
                .found
                .contains(&(FindingKind::TensorMemory, pc, t as u32))
        {
            let msg = format!(
                "thread {t}: `{}` at PTX line {} accesses tensor memory lane {lane} (column {column}), but a warp may access only the 32 lanes its place in its warpgroup selects: lanes {quarter}..={} for warp {}",
                self.opcode(pc),
                self.line(pc),
                quarter + 31,
                t / weft_program::WARP_SIZE as usize
            );
            self.finding(t, pc, FindingKind::TensorMemory, msg);
        }
        if !st {
            let first = self.copies.len() as u32;
            self.tm.threads[t].last_ld.insert(pc, first);
        }
        let mut agents = Vec::new();
        for (lane, column, columns) in runs {
            let run = (column, columns);
            if !self.tmem_agents(t, pc, kind, [lane], run, false, false, &mut agents) {
                return;
            }
        }
        self.tm.threads[t].pending[usize::from(st)].extend(agents);
    }

    /// `tcgen05.wait::ld` (`st: false`) or `tcgen05.wait::st`: the thread's prior loads
    /// (stores) of tensor memory are complete.
    ///
    /// Under an input-dependent branch or guard only the agents issued there complete: the
    /// others are still in flight in the executions that skip the wait. (The wait is no
    /// synchronization that such a branch must not decide: it only ends agents.)
    ///
    /// `tcgen05.ld`/`st` are warp operations and the wait is `.sync.aligned` ("the executing
    /// thread waits until all threads in the warp execute the same tcgen05.wait"): the k-th
    /// wait of each lane of a warp is one wait of the warp operations before it, so a lane's
    /// agents complete before the k-th wait of every lane (a completion set shared by the
    /// warp, [`weft_program::AsyncCopy::joint`]). A wait under an input-dependent branch or
    /// guard is the thread's own.
    pub(super) fn tcgen_wait(&mut self, t: usize, st: bool) {
        let at = self.cmds[t].len() as u32;
        let seq = self.copies.len() as u32;
        let floor = self.agent_floor(t);
        let joint = if self.th[t].may > 0 {
            None
        } else {
            let k = &mut self.tm.threads[t].waits[usize::from(st)];
            let key = ((t / weft_program::WARP_SIZE as usize) as u32, *k, st);
            *k += 1;
            let next = self.joint_done.len() as u32;
            let j = *self.tm.joint.entry(key).or_insert(next);
            if j == next {
                self.joint_done.push(Vec::new());
            }
            if let Some(set) = self.joint_done.get_mut(j as usize) {
                set.push((ThreadId(t as u32), at));
                self.charged = self.charged.saturating_add(8);
            }
            Some(j)
        };
        let thread = &mut self.tm.threads[t];
        let pending = std::mem::take(&mut thread.pending[usize::from(st)]);
        // Loads already complete through their registers join the warp's completion set;
        // those issued before an input-dependent branch the wait is under are let go.
        let used = if st {
            Vec::new()
        } else {
            std::mem::take(&mut thread.used)
        };
        let kept: Vec<u32> = pending.iter().copied().filter(|&g| g < floor).collect();
        for g in pending.into_iter().chain(used).filter(|&g| g >= floor) {
            if let Some(c) = self.copies.get_mut(g as usize) {
                c.complete_at(at, seq);
                if c.joint.is_none() {
                    c.joint = joint;
                }
            }
        }
        self.tm.threads[t].pending[usize::from(st)] = kept;
    }

    /// Instruction `inst` at `pc` of thread `t` names a destination register of a
    /// `tcgen05.ld` (`Ir::tmem_users`): the register scoreboard holds it until the data of
    /// the thread's latest execution of that load arrived, so that load's reads are
    /// complete before it. (The PTX ISA promises this ordering of the reads only through
    /// `tcgen05.wait::ld`: the approximation is in the kernel's notes.)
    pub(super) fn tmem_register_use(&mut self, t: usize, pc: u32, inst: &Inst) {
        let mut used = Vec::new();
        for &o in self.ir.operands(inst) {
            crate::ir::registers(self.ir, o, &mut used);
        }
        let at = self.cmds[t].len() as u32;
        let seq = self.copies.len() as u32;
        let floor = self.agent_floor(t);
        let pending = std::mem::take(&mut self.tm.threads[t].pending[0]);
        let mut kept = Vec::with_capacity(pending.len());
        let mut ordered = false;
        let mut loads: Vec<(u32, bool)> = Vec::new();
        for g in pending {
            let Some(load) = self.copies.get(g as usize).map(|c| c.access.inst().0) else {
                continue;
            };
            let reads = match loads.iter().find(|(x, _)| *x == load) {
                Some(&(_, r)) => r,
                None => {
                    let r = self.ir.insts.get(load as usize).is_some_and(|l| {
                        let mut regs = Vec::new();
                        if let Some(&d) = self.ir.operands(l).first() {
                            crate::ir::registers(self.ir, d, &mut regs);
                        }
                        regs.iter().any(|r| used.contains(r))
                    });
                    loads.push((load, r));
                    r
                }
            };
            let latest = self.tm.threads[t]
                .last_ld
                .get(&load)
                .is_some_and(|&first| g >= first);
            match self.copies.get_mut(g as usize) {
                Some(c) if reads && latest && g >= floor => {
                    c.complete_at(at, seq);
                    ordered = true;
                    // A later wait of the warp still completes it for the other lanes.
                    self.tm.threads[t].used.push(g);
                }
                _ => kept.push(g),
            }
        }
        self.tm.threads[t].pending[0] = kept;
        if ordered && !self.notes.iter().any(|n| n.starts_with("tcgen05.ld reads")) {
            self.notes.push(format!(
                "tcgen05.ld reads of tensor memory are complete once the thread uses a register the load wrote (first: `{}` at PTX line {}), as the register scoreboard makes it wait for the data; the PTX ISA promises this order for the reads only through tcgen05.wait::ld (\"a register dependency does not imply that a dependee instruction's memory accesses will be performed before a dependent instruction's memory accesses\"), so a kernel that releases tensor memory after using the loaded registers but without tcgen05.wait::ld is verified under this assumption",
                self.opcode(pc),
                self.line(pc)
            ));
        }
    }

    /// The first agent a wait of thread `t` may complete now: 0, or under an
    /// input-dependent branch or guard the first one issued there.
    fn agent_floor(&self, t: usize) -> u32 {
        if self.th[t].may > 0 {
            self.side_floor[t]
        } else {
            0
        }
    }

    /// The tensor-memory accesses of a `tcgen05.mma` of shape `m`×`n` (`ops`: `[d], a, b,
    /// idesc, ...`): the accumulator, A when it is in tensor memory (`a_columns` columns),
    /// and the scale factors of a block-scaled kind (`[sfa], [sfb]` after the instruction
    /// descriptor). Returns the agents, or `None` when the kernel became unverifiable.
    pub(super) fn tcgen_mma_tmem(
        &mut self,
        t: usize,
        pc: u32,
        ops: &[Opnd],
        (m, n): (u32, u32),
        a_columns: u32,
        (scaled, f16_accumulator): (bool, bool),
    ) -> Option<Vec<u32>> {
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        let d = self.tmem_operand(t, pc, o(0))?;
        let key = Some((d, m << 16 | n));
        let previous = self.tm.threads[t].last_pipe.replace(key);
        if previous.is_some_and(|p| p != key) {
            self.pipe_order_note(pc);
        }
        let (lane0, col0) = split(d);
        // The data path layouts of one CTA (PTX ISA, *Data path layout organization*): M =
        // 128 takes the 128 lanes from the address's, M = 64 the first 16 lanes of each warp's
        // quarter from it (layout F). The `.ws` layouts and other M are bounded by every
        // lane, and an f16 accumulator, which may pack two elements per column, by N columns.
        let ws = self.opcode(pc).split('.').any(|x| x == "ws");
        let rows = |base: u32| -> (Vec<u32>, bool) {
            match m {
                128 if !ws => ((base..base.saturating_add(128)).collect(), false),
                64 if !ws => (
                    (0..4)
                        .flat_map(|q| (0..16).map(move |x| base.saturating_add(32 * q + x)))
                        .collect(),
                    false,
                ),
                _ => ((0..TMEM_LANES).collect(), true),
            }
        };
        let (lanes, wide) = rows(lane0);
        let bounded = wide || f16_accumulator;
        let mut agents = Vec::new();
        // The accumulator's write is the one the thread's previous MMA already recorded when
        // both write the same cells and no commit came between: that MMA's agents start
        // earlier and end with the same commits, so they stand for both (a GEMM's MMAs of
        // one k-block). Not under an input-dependent branch, whose agents may be dropped.
        let open = (d, m << 16 | n, bounded);
        let certain = self.th[t].may == 0;
        if !(certain && self.tm.threads[t].open_acc == Some(open)) {
            let ok = self.tmem_agents(
                t,
                pc,
                AccessKind::Write,
                lanes,
                (col0, n),
                bounded,
                true,
                &mut agents,
            );
            if !ok {
                return None;
            }
            self.tm.threads[t].open_acc = certain.then_some(open);
        }
        if matches!(o(1), Opnd::Mem(..)) {
            let a = self.tmem_operand(t, pc, o(1))?;
            let (la, ca) = split(a);
            let (a_lanes, a_wide) = rows(la);
            let run = (ca, a_columns);
            let ok = self.tmem_agents(
                t,
                pc,
                AccessKind::Read,
                a_lanes,
                run,
                a_wide,
                true,
                &mut agents,
            );
            if !ok {
                return None;
            }
        }
        if scaled {
            // The scale factors' layout is bounded: 4 columns of every lane per 128 rows.
            let sf: Vec<Opnd> = ops
                .iter()
                .skip(4)
                .copied()
                .filter(|x| matches!(x, Opnd::Mem(..)))
                .take(2)
                .collect();
            if sf.len() != 2 {
                self.matrix_issue(t, pc, MatrixIssue::Shape);
                return None;
            }
            for (x, rows) in sf.into_iter().zip([m, n]) {
                let s = self.tmem_operand(t, pc, x)?;
                let (ls, cs) = split(s);
                let run = (cs, 4 * rows.div_ceil(128));
                let all = (0..TMEM_LANES).map(|y| ls + y);
                if !self.tmem_agents(t, pc, AccessKind::Read, all, run, true, true, &mut agents) {
                    return None;
                }
            }
        }
        Some(agents)
    }

    /// `tcgen05.dealloc taddr, columns` by thread `t`: a write of the freed columns of every
    /// lane, complete where it is issued. The PTX ISA leaves accesses to deallocated tensor
    /// memory undefined; a load, store or MMA not ordered before the deallocation races
    /// with it.
    pub(super) fn tmem_free(&mut self, t: usize, pc: u32, o: Opnd, columns: u32) {
        let Some(taddr) = self.tmem_operand(t, pc, o) else {
            return;
        };
        let (lane0, col0) = split(taddr);
        let mut agents = Vec::new();
        let lanes = lane0..lane0.saturating_add(TMEM_LANES);
        let run = (col0, columns);
        if !self.tmem_agents(
            t,
            pc,
            AccessKind::Write,
            lanes,
            run,
            false,
            false,
            &mut agents,
        ) {
            return;
        }
        let at = self.cmds[t].len() as u32;
        let seq = self.copies.len() as u32;
        for g in agents {
            if let Some(c) = self.copies.get_mut(g as usize) {
                c.complete_at(at, seq);
            }
        }
    }

    /// The note for a thread whose tensor pipe runs a pair of operations the PTX ISA does
    /// not pipeline ([`weft_program::AsyncCopy::tensor_pipe`]): an MMA after an MMA of another
    /// accumulator or shape, or a copy after an MMA or copy.
    fn pipe_order_note(&mut self, pc: u32) {
        if self
            .notes
            .iter()
            .any(|n| n.starts_with("tcgen05.mma and tcgen05.cp"))
        {
            return;
        }
        self.notes.push(format!(
            "tcgen05.mma and tcgen05.cp operations of one thread are ordered in issue order (first where it matters: `{}` at PTX line {}): the PTX ISA pipelines only an MMA after a copy or after an MMA with the same accumulator and shape, but CUTLASS's block-scaled GEMMs rewrite the scale factors an earlier MMA reads, and attention kernels overwrite with an MMA what an earlier MMA of another accumulator reads, relying on the tensor pipe's order",
            self.opcode(pc),
            self.line(pc)
        ));
    }

    /// The tensor-memory destination of `tcgen05.cp.SHAPE [taddr], s-desc` copying a source
    /// of `rows` rows of `row_bytes` bytes ([`cp_lanes`]); returns its agents, or `None` when
    /// the kernel became unverifiable.
    pub(super) fn tcgen_cp_tmem(
        &mut self,
        t: usize,
        pc: u32,
        ops: &[Opnd],
        (rows, row_bytes): (u32, u32),
    ) -> Option<Vec<u32>> {
        let o = ops.first().copied().unwrap_or(Opnd::Sink);
        let taddr = self.tmem_operand(t, pc, o)?;
        let (lane0, col0) = split(taddr);
        let all = cp_lanes(rows).map(|x| lane0 + x);
        let columns = row_bytes / 4;
        let mut agents = Vec::new();
        if self.tm.threads[t].last_pipe.replace(None).is_some() {
            self.pipe_order_note(pc);
        }
        let run = (col0, columns);
        self.tmem_agents(t, pc, AccessKind::Write, all, run, false, true, &mut agents)
            .then_some(agents)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ld_st_shapes_cover_their_atoms_once() {
        for (shape, rows, cols) in [
            (LdStShape::W32x32, 32, 1),
            (LdStShape::W16x64, 16, 2),
            (LdStShape::W16x128, 16, 4),
            (LdStShape::W16x256, 16, 8),
            (LdStShape::W16x32x2 { split: 1 }, 16, 2),
        ] {
            let mut seen = std::collections::BTreeSet::new();
            for l in 0..32 {
                for r in 0..shape.regs() {
                    assert!(seen.insert(shape.cell(l, r)), "{shape:?} lane {l} reg {r}");
                }
            }
            let want: std::collections::BTreeSet<_> = (0..rows)
                .flat_map(|row| (0..cols).map(move |c| (row, c)))
                .collect();
            assert_eq!(seen, want, "{shape:?}");
        }
    }

    #[test]
    fn modifiers_parse() {
        assert_eq!(repetitions("x16"), Some(16));
        assert_eq!(repetitions("x3"), None);
        assert_eq!(repetitions("x256"), None);
        assert_eq!(cp_lanes(4).collect::<Vec<_>>(), [0, 32, 64, 96]);
        assert_eq!(cp_lanes(64).count(), 128);
        assert_eq!(split(0x0020_0010), (32, 16));
    }
}
