//! Addresses and memory: shared, local, parameter and data windows, loads, stores,
//! atomics and state-space conversions.

use super::alu::{mask, sx};
use super::paged::Unks;
use super::{Addr, Machine};
use crate::ir::{Inst, MemBase, Op, Opnd, Space, WmmaMem};
use crate::unverifiable::{Value, Why};
use crate::{FindingKind, ValueSource};
use weft_program::{AccessKind, AsyncCopy, Command, CommandView, InstId, ThreadId, WARP_SIZE};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mem {
    Shared,
    Local,
    Param,
}

/// Bytes `--max-memory` charges per recorded command: the 16-byte command, up to 16 bytes of
/// vector slack while its thread's program grows, and 88 bytes for the barrier-graph and race
/// stages' per-command tables, beside the happens-before rows charged per dynamic barrier
/// (their peak is 81 bytes per command in all on the `bar.sync` stress loop, 114 on a loop of
/// `bar.arrive` by 1,024 threads, which at 64 reached 3.9 GB under a 4 GiB budget).
pub(crate) const COMMAND_BYTES: u64 = 120;

/// Bytes of an agent's record (an asynchronous copy's or tensor-core operand's access):
/// the budget counts the capacity of the vector holding them.
pub(crate) const AGENT_RECORD: u64 = std::mem::size_of::<AsyncCopy>() as u64;

/// Bytes charged per agent besides its record: its pending-group entry. The race stage's
/// entries of its access are charged with the access.
pub(crate) const AGENT_BYTES: u64 = 8;

/// The widest value whose term a shared store keeps aside ([`Machine::smem_terms`]): a
/// register's 16 bytes.
const MAX_TERM_BYTES: usize = 16;

impl Machine<'_> {
    /// `cvta`, `isspacep` and `mapa`: conversions between state-space and generic addresses.
    pub(super) fn exec_address(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd]) {
        // Validated (`ir::valid`): `ops` has the operands each operation reads.
        let o = |k: usize| ops[k];
        let bits = inst.ty.bits;
        match inst.op {
            Op::Cvta { to, space } => {
                let (a, ua) = self.rd(t, o(1), pc);
                let (v, u) = if ua != 0 {
                    // A global address is its generic address (the identity below), so an
                    // unknown one keeps its term; the other windows' bases are not terms.
                    match space {
                        Space::Global if bits == 64 => (0, ua),
                        // The generic address of an unknown shared address.
                        Space::Shared if !to => (0, self.mark_shared_pointer(ua)),
                        _ => (0, self.src.plain(ua)),
                    }
                } else {
                    match (space, to) {
                        (Space::Shared, false) => (self.shared_base.wrapping_add(mask(a, 32)), 0),
                        (Space::Local, false) => (self.local_base.wrapping_add(mask(a, 32)), 0),
                        (Space::Shared, true) => self.generic_to_space(a, self.shared_base),
                        (Space::Local, true) => self.generic_to_space(a, self.local_base),
                        (Space::Param, false) => match self.win.param_offset(a) {
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
                let u = self.src.plain(ua);
                self.wr(t, o(0), u64::from(v), u);
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
            _ => {}
        }
    }

    /// `ldmatrix` and `stmatrix`: lanes below `8 * num` access 16 bytes of shared memory each.
    pub(super) fn matrix(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd], num: u8) {
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        let read = matches!(inst.op, Op::Ldmatrix(_));
        let (addr_op, _) = if read { (o(1), o(0)) } else { (o(0), o(1)) };
        let lane = (t as u32) % WARP_SIZE;
        if lane < 8 * u32::from(num) {
            let kind = if read {
                AccessKind::Read
            } else {
                AccessKind::Write
            };
            if let Some(a) = self.shared_addr(t, pc, inst, addr_op)
                && self.shared_access(t, pc, kind, a, 16, 0)
            {
                self.check_shared_alignment(t, pc, a, 16, "the matrix row");
            }
        }
        if read {
            let u = self.src.single(ValueSource::SharedUnknown(InstId(pc)));
            self.clobber(t, inst, u);
        }
    }

    /// `wmma.load` and `wmma.store` ([`WmmaMem`]). The PTX ISA leaves unspecified which
    /// lane holds which element of the matrix, so every lane is taken to access all of it:
    /// one access per instance of the leading dimension (the padding between them is not
    /// accessed). The lanes of one `wmma.store` then write the same bytes, which the race
    /// check's rule for one instruction's writes by several lanes of a warp does not report
    /// (in truth they write disjoint parts); a read by another lane of the warp is a race
    /// unless something orders it after the store, as for any other lane's write. Each
    /// instance's start must be aligned to the fragment's size in bytes (the ISA's *Address
    /// Alignment*: its registers' bytes); weft checks up to 16 of them, what the CUDA C
    /// Programming Guide's rules for `load_matrix_sync` (a 32-byte aligned pointer, a stride
    /// that is a multiple of 16 bytes) also give, since the two texts differ beyond that.
    pub(super) fn wmma(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd], w: WmmaMem) {
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        let (addr_op, frag) = if w.store { (o(0), o(1)) } else { (o(1), o(0)) };
        let frag_bytes = match frag {
            Opnd::List(_, n) => n * if w.ebits == 64 { 8 } else { 4 },
            _ => 4,
        };
        let u_result = self.src.single(ValueSource::SharedUnknown(InstId(pc)));
        let addr = self.addr(t, pc, inst.space, addr_op);
        let base = match addr {
            Addr::Shared(a) => a,
            Addr::Global => {
                if !w.store {
                    let g = self.src.single(ValueSource::GlobalLoad(InstId(pc)));
                    self.clobber(t, inst, g);
                }
                return;
            }
            Addr::Unknown(u) => {
                let u = self.read_unknown_address(t, pc, inst.space, addr_op, u);
                if !w.store {
                    self.clobber(t, inst, u);
                }
                return;
            }
            // Local, parameter or initialized module memory, which the emulator tracks: a
            // load's fragment is unknown; a store would change tracked bytes, which is not
            // modelled.
            Addr::Local(_) | Addr::Param(_) | Addr::KParam(_) | Addr::Data(_) => {
                if w.store {
                    self.unverifiable(t, pc, Why::Unsupported, None, 0, false);
                } else {
                    self.clobber(t, inst, u_result);
                }
                return;
            }
        };
        let stride = match ops.get(2) {
            Some(&s) => {
                let (v, u) = self.rd(t, s, pc);
                if u != 0 {
                    self.unverifiable(t, pc, Why::Unknown(Value::SharedAddress), Some(s), u, false);
                    if !w.store {
                        self.clobber(t, inst, u_result);
                    }
                    return;
                }
                // The stride is a 32-bit operand.
                v & u64::from(u32::MAX)
            }
            None => u64::from(w.len),
        };
        let bits = u64::from(w.ebits);
        let row_bits = u64::from(w.len) * bits;
        // A sub-byte type's stride may not be a whole number of bytes: an instance then
        // starts inside a byte, which no alignment allows, and covers the bytes its bits
        // touch.
        let step_bits = stride * bits;
        let kind = if w.store {
            AccessKind::Write
        } else {
            AccessKind::Read
        };
        let write_u = if w.store {
            self.src
                .single(ValueSource::Other("a matrix fragment stored by wmma.store"))
        } else {
            0
        };
        for i in 0..u64::from(w.instances) {
            let start = i * step_bits;
            // Shared addresses are 32 bits wide and wrap around.
            let a = base.wrapping_add((start / 8) as u32);
            let len = ((start % 8 + row_bits).div_ceil(8)) as u32;
            if !self.shared_access(t, pc, kind, a, len, write_u) {
                break;
            }
            if start % 8 != 0 {
                self.report_misaligned(
                    t,
                    pc,
                    a,
                    frag_bytes.min(16),
                    "the matrix row or column, which starts inside the byte",
                );
            } else {
                self.check_shared_alignment(
                    t,
                    pc,
                    a,
                    frag_bytes.min(16),
                    "the matrix row or column",
                );
            }
        }
        if !w.store {
            self.clobber(t, inst, u_result);
        }
    }

    pub(super) fn generic_to_space(&mut self, a: u64, base: u64) -> (u64, u32) {
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

    pub(super) fn addr(&mut self, t: usize, pc: u32, space: Space, o: Opnd) -> Addr {
        let Opnd::Mem(base, off) = o else {
            let u = self
                .src
                .single(ValueSource::Other("a malformed address operand"));
            return Addr::Unknown(u);
        };
        let (v, u) = match base {
            MemBase::Reg(r) => {
                let (v, u) = self.rd(t, Opnd::Reg(r), pc);
                (v.wrapping_add(off as u64), u)
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
                    Err(_) => Addr::Unknown(self.src.single(ValueSource::Other(
                        "a parameter offset outside the kernel parameters",
                    ))),
                };
            }
            MemBase::Global => return Addr::Global,
            MemBase::Abs => (off as u64, 0),
        };
        if u != 0 {
            return if matches!(
                space,
                Space::Generic | Space::Shared | Space::Local | Space::Param
            ) {
                Addr::Unknown(u)
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
            Space::Param => match self.win.param_offset(v) {
                Some(off) => Addr::KParam(off as u32),
                None => Addr::Unknown(self.src.single(ValueSource::Other(
                    "a parameter read through a register that holds no kernel-parameter address",
                ))),
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

    /// Whether an unknown address `u` of a `space` access may be a shared one: a `.shared`
    /// access, or a generic one computed from the shared window
    /// ([`Machine::points_into_shared`]).
    fn unknown_address_is_shared(&self, space: Space, u: u32) -> bool {
        space == Space::Shared || space == Space::Generic && self.points_into_shared(u)
    }

    /// A read of `space` through the address operand `o`, unknown with sources `u`: the
    /// kernel is unverifiable when the address may be a shared or a local one; the sources
    /// of the value read (a global load, or a parameter read, and the address's).
    fn read_unknown_address(&mut self, t: usize, pc: u32, space: Space, o: Opnd, u: u32) -> u32 {
        if self.unknown_address_is_shared(space, u) {
            self.unverifiable(t, pc, Why::Unknown(Value::SharedAddress), Some(o), u, false);
        } else if space == Space::Local {
            self.unverifiable(t, pc, Why::Unknown(Value::LocalAddress), Some(o), u, false);
        }
        let g = if space == Space::Param {
            ValueSource::Other("a parameter read through an unknown address")
        } else {
            ValueSource::GlobalLoad(InstId(pc))
        };
        let g = self.src.single(g);
        self.src.union(g, u)
    }

    /// The shared address of an operand, or `None` after recording why it is unknown.
    pub(super) fn shared_addr(&mut self, t: usize, pc: u32, inst: &Inst, o: Opnd) -> Option<u32> {
        let space = if inst.space == Space::Generic {
            Space::Generic
        } else {
            Space::Shared
        };
        match self.addr(t, pc, space, o) {
            Addr::Shared(a) => Some(a),
            Addr::Unknown(u) => {
                self.unverifiable(t, pc, Why::Unknown(Value::SharedAddress), Some(o), u, false);
                None
            }
            _ => None,
        }
    }

    /// What [`Machine::record`] does for each lane of `group` (bit `l`: thread `wb + l`,
    /// lanes of one warp) once each has appended its command to its list (`c`, the last
    /// lane's, names the instruction):
    /// the lanes' warp step under `--warp-sync` (the lanes are of one warp, so of one warp
    /// step) and the count of commands, for the whole group at once. The memory budget is
    /// checked once, as at the group's last lane, when the count passed a multiple of 1024
    /// (where `record` checks it): the usage only grows, so every stop a lane's check
    /// would make this check makes too (in a lock-step pass, a stop repeats the run lane
    /// by lane).
    ///
    /// (Inlined: the warp's shared-access runs call it at every access, where a call cost
    /// 1.4 M of the saxpy kernel's 444 M instructions at 512 trips.)
    #[inline(always)]
    pub(super) fn lanes_recorded(&mut self, wb: usize, group: u32, c: Command) {
        debug_assert!(wb % WARP_SIZE as usize == 0, "lanes of one warp");
        if group == 0 {
            return;
        }
        if self.cfg.warp_sync {
            let step = self.warp_step[wb / WARP_SIZE as usize];
            each_lane!(group, |l| {
                self.steps[wb + l].push(step);
            });
        }
        let before = self.commands;
        self.commands += u64::from(group.count_ones());
        if self.commands / 1024 != before / 1024 {
            let last = wb + (31 - group.leading_zeros()) as usize;
            self.check_memory(last, c.inst().0);
        }
    }

    #[inline]
    pub(super) fn push(&mut self, t: usize, c: Command) -> u32 {
        if c.is_access() {
            if self.pass_lockstep {
                self.track_access(t, c);
            }
            if let Some(proxy) = self.divert {
                return self.push_agent(t, c, proxy);
            }
        } else {
            self.coll.synced[t] = self.coll.synced[t].wrapping_add(1);
        }
        self.record(t, c)
    }

    /// Appends `c` to thread `t`'s commands (with its warp step under `--warp-sync`),
    /// counts it and checks the memory budget every 1024 commands: what [`Machine::push`]
    /// does once the command's kind is dealt with. Returns its index.
    #[inline(always)]
    pub(super) fn record(&mut self, t: usize, c: Command) -> u32 {
        let cmds = &mut self.cmds[t];
        let idx = cmds.len() as u32;
        cmds.push(c);
        if self.cfg.warp_sync {
            let w = t / WARP_SIZE as usize;
            self.steps[t].push(self.warp_step[w]);
        }
        self.commands += 1;
        if self.commands % 1024 == 0 {
            self.check_memory(t, c.inst().0);
        }
        idx
    }

    /// [`Machine::push`] of an access while an asynchronous copy records it: the copy
    /// becomes an agent.
    #[cold]
    fn push_agent(&mut self, t: usize, c: Command, proxy: weft_program::Proxy) -> u32 {
        let issue = self.cmds[t].len() as u32;
        self.guard_copy(self.copies.len() as u32);
        self.copies
            .push(AsyncCopy::new(ThreadId(t as u32), issue, c, proxy));
        let short = match c.view() {
            CommandView::Access { addr, len, .. } if len <= 16 => {
                weft_program::race_entry_bytes(addr, len)
            }
            _ => 0,
        };
        self.charge_agent(t, c.inst().0, short);
        u32::MAX
    }

    /// Charges the happens-before row of one more dynamic barrier (a named-barrier
    /// generation, an mbarrier phase, an execution event) to `--max-memory`: 4 bytes per
    /// thread, the barrier-graph stage's dense row for it (`bar.arrive` loops of 1,024
    /// threads asked for 2.25 GB of rows at once for 36 million commands and aborted under
    /// a 4 GiB address space). Checked with the commands.
    pub(super) fn charge_node(&mut self) {
        self.charged = self.charged.saturating_add(4 * self.n as u64);
    }

    /// Charges one more agent to `--max-memory` ([`AGENT_BYTES`], and `entries` bytes of the
    /// race stage's entries of a short access), checking the budget every 1024 agents: a
    /// tensor-core operand is hundreds of agents (one per run of its swizzled footprint),
    /// and a loop of them filled 2.5 GB with agents the budget did not count.
    pub(super) fn charge_agent(&mut self, t: usize, pc: u32, entries: u64) {
        self.charged = self
            .charged
            .saturating_add(AGENT_BYTES)
            .saturating_add(entries);
        if self.copies.len() % 1024 == 0 {
            self.check_memory(t, pc);
        }
    }

    /// Whether one more agent fits in `--max-memory` (else the run stops, unverifiable):
    /// when the agents' vector is full, growing it allocates twice its capacity while the
    /// old one is still held (33 million 16-byte `cp.async` agents asked for 4.8 GB at
    /// once and aborted under a 4 GiB address space).
    pub(super) fn agent_fits(&mut self, t: usize, pc: u32) -> bool {
        if self.copies.len() < self.copies.capacity() {
            return true;
        }
        let grow = (self.copies.capacity().max(4) as u64).saturating_mul(2 * AGENT_RECORD);
        !self.check_memory_for(t, pc, grow)
    }

    /// The bytes `--max-memory` counts now: the register files, the shared, local and
    /// parameter windows (page tables and written pages), the warp passes' reorder
    /// tracker, the term arena, per command recorded [`COMMAND_BYTES`] plus the race
    /// stage's entries of long accesses, and the agents (their vector's capacity, and
    /// [`AGENT_BYTES`] each).
    pub(super) fn memory_used(&self) -> u64 {
        let per_command = COMMAND_BYTES + if self.cfg.warp_sync { 4 } else { 0 };
        self.charged
            .saturating_add(self.smem.footprint())
            .saturating_add(self.local.footprint())
            .saturating_add(self.pmem.footprint())
            .saturating_add(self.kp.footprint())
            .saturating_add(self.track.footprint())
            .saturating_add(self.src.terms.footprint())
            .saturating_add(self.memo_footprint())
            .saturating_add(self.commands.saturating_mul(per_command))
            .saturating_add((self.copies.capacity() as u64).saturating_mul(AGENT_RECORD))
    }

    /// Stops the emulation, unverifiable, once [`Self::memory_used`] exceeds `--max-memory`.
    pub(super) fn check_memory(&mut self, t: usize, pc: u32) {
        self.check_memory_for(t, pc, 0);
    }

    /// Stops the emulation, unverifiable, when [`Self::memory_used`] plus `more` bytes about
    /// to be allocated exceeds `--max-memory`; returns whether it stopped (then nothing
    /// may be allocated).
    pub(super) fn check_memory_for(&mut self, t: usize, pc: u32, more: u64) -> bool {
        let used = self.memory_used().saturating_add(more);
        // The exploration's checkpoints give their memory to the run that needs it.
        if let Some(c) = self.checkpoints.as_mut()
            && used.saturating_add(c.used) > self.cfg.max_memory
        {
            c.release();
        }
        if used > self.cfg.max_memory && !self.stop {
            let why = Why::MemoryBudget {
                limit: self.cfg.max_memory,
                commands: self.commands,
                agents: self.copies.len() as u64,
                pages: self.smem.footprint()
                    + self.local.footprint()
                    + self.pmem.footprint()
                    + self.kp.footprint(),
            };
            self.unverifiable(t, pc, why, None, 0, true);
        }
        used > self.cfg.max_memory
    }

    /// Whether an address inside a variable is misaligned for `need` (a power of two) in
    /// every placement the variable's declaration allows: its offset in the variable is not
    /// a multiple of `need` or of the variable's alignment, whichever is smaller. Past the
    /// declared alignment nothing is decided (the real layout may place the variable
    /// anywhere at a multiple of it); outside every variable neither.
    pub(super) fn misaligned(&self, addr: u32, need: u32) -> bool {
        // weft places every variable at a multiple of its alignment, so an address aligned
        // here is aligned modulo both (the common case: no search).
        if need <= 1 || !need.is_power_of_two() || addr % need == 0 {
            return false;
        }
        crate::shared_symbol_at(&self.ir.shared, addr).is_some_and(|s| {
            let decided = need.min(s.align.max(1));
            (addr - s.offset) % decided != 0
        })
    }

    /// Reports `misaligned-address` for `what` (the operand: "the access", "the mbarrier
    /// object") at `addr`, which [`Self::misaligned`] found misaligned for `need`.
    #[cold]
    fn report_misaligned(&mut self, t: usize, pc: u32, addr: u32, need: u32, what: &str) {
        if self
            .found
            .contains(&(FindingKind::MisalignedAddress, pc, t as u32))
        {
            return;
        }
        let place = match crate::shared_symbol_at(&self.ir.shared, addr) {
            Some(s) => format!(
                " ({} bytes into `{}`, declared alignment {})",
                addr - s.offset,
                s.source_name(),
                s.align
            ),
            None => String::new(),
        };
        let msg = format!(
            "thread {t}: `{}` at PTX line {}: {what} at shared address {addr:#x}{place} is not aligned to {need} bytes, as the PTX ISA requires; a misaligned access is undefined (it may fault with \"misaligned address\" or silently mask the low address bits)",
            self.opcode(pc),
            self.line(pc)
        );
        self.finding(t, pc, FindingKind::MisalignedAddress, msg);
    }

    /// Checks that `addr`, the address of `what`, is aligned to `need` bytes (see
    /// [`Self::misaligned`]); a misaligned one is reported and the operation goes on.
    #[inline]
    pub(super) fn check_shared_alignment(
        &mut self,
        t: usize,
        pc: u32,
        addr: u32,
        need: u32,
        what: &'static str,
    ) {
        if self.misaligned(addr, need) {
            self.report_misaligned(t, pc, addr, need, what);
        }
    }

    /// Records a shared access and checks its bounds; returns whether it is in bounds.
    /// Writes with `write_u != 0` (or in a may-region) make the bytes unknown.
    pub(super) fn shared_access(
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
            if self
                .found
                .contains(&(FindingKind::SharedOutOfBounds, pc, t as u32))
            {
                return false;
            }
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
        // A long access (a bulk copy or tensor-core operand over a huge shared window) costs
        // the race stage's entries and, in a lock-step pass, the reorder tracker's pages
        // for its bytes: charged before anything is allocated.
        if len > 16 {
            let track = if self.pass_lockstep {
                super::reorder::Tracker::cost(addr, len)
            } else {
                0
            };
            let entries = if self.defer_entries {
                0
            } else {
                weft_program::race_entry_bytes(addr, len)
            };
            if self.check_memory_for(t, pc, entries.saturating_add(track)) {
                return false;
            }
        }
        if self.divert.is_some() && !self.agent_fits(t, pc) {
            return false;
        }
        let may = self.th[t].may > 0;
        self.push(t, Command::access(kind, addr, len, may, InstId(pc)));
        if kind.writes() {
            let u = self
                .src
                .union(write_u, if may { self.th[t].may_src } else { 0 });
            if u != 0 {
                // The pages it allocates are checked here; the commands and agents are
                // checked as they are recorded.
                let before = self.smem.footprint();
                self.smem_set_unk(addr as usize, len as usize, u);
                if self.smem.footprint() != before {
                    self.check_memory(t, pc);
                }
            }
        }
        if len > 16 && !self.defer_entries {
            // The race stage splits an access into an entry per 4-byte word.
            self.charged = self
                .charged
                .saturating_add(weft_program::race_entry_bytes(addr, len));
        }
        true
    }

    /// Marks `len` unknown bytes of shared memory at `addr` (with sources `u`): no term
    /// of [`Machine::smem_terms`] covers them any more.
    pub(super) fn smem_set_unk(&mut self, addr: usize, len: usize, u: u32) {
        self.forget_smem_terms(addr, len);
        self.smem.set_unk(addr, len, u);
    }

    /// Drops the terms of [`Machine::smem_terms`] whose bytes overlap `addr..addr + len`.
    /// An entry spans at most [`MAX_TERM_BYTES`] bytes: a short write probes the starts
    /// that can overlap it instead of visiting every entry (a kernel that stages thousands
    /// of termed values in shared memory wrote each in time linear in them).
    fn forget_smem_terms(&mut self, addr: usize, len: usize) {
        if self.smem_terms.is_empty() {
            return;
        }
        let (lo, hi) = (addr as u64, addr as u64 + len as u64);
        let overlaps = |a: u32, l: u8| u64::from(a) + u64::from(l) > lo && u64::from(a) < hi;
        let starts = lo.saturating_sub(MAX_TERM_BYTES as u64 - 1)..hi;
        if starts.end - starts.start < self.smem_terms.len() as u64 {
            for a in starts {
                if let Ok(a) = u32::try_from(a)
                    && let Some(&(l, _)) = self.smem_terms.get(&a)
                    && overlaps(a, l)
                {
                    self.smem_terms.remove(&a);
                }
            }
        } else {
            self.smem_terms.retain(|&a, &mut (l, _)| !overlaps(a, l));
        }
    }

    /// With value terms: the `len` bytes at `addr` as part `i` of a value term that one store
    /// wrote whole, in more bytes, at `addr - i·len` (a 64-bit pair stored with
    /// `st.shared.v2.b64` and read back as 32-bit words: Triton's sm_100 reductions). The
    /// term is `cvt.u{8·len}(x >> 8·len·i)`, as a register split into parts gets it
    /// (`part_unknown`); a read of exactly the stored bytes is `read_bytes`'s. Only for a
    /// value term: terms of the inputs keep their reads as they were, so the run decides as
    /// the one without value terms.
    fn read_value_part(&mut self, addr: usize, len: usize) -> Option<(u64, u32)> {
        if !matches!(len, 1 | 2 | 4) {
            return None;
        }
        for i in 0..8 / len {
            let Some(a) = addr.checked_sub(i * len) else {
                break;
            };
            let Ok(key) = u32::try_from(a) else {
                break;
            };
            let Some(&(l, tu)) = self.smem_terms.get(&key) else {
                continue;
            };
            if usize::from(l) < (i + 1) * len
                || !self
                    .src
                    .value_term(tu)
                    .is_some_and(|t| self.src.terms.has_atom(t))
            {
                return None;
            }
            let Some((v, Unks::Same(x))) = self.smem.read(addr, len) else {
                return None;
            };
            if x != self.src.plain(tu) {
                return None;
            }
            return Some((v, self.part_unknown(tu, (8 * len) as u8, i)));
        }
        None
    }

    /// The source of a value wider than the 64 bits a register holds whose upper bits are
    /// not known zeros (`ld.b128`, `mov.b128` packs): weft does not keep them.
    pub(super) fn wide_unknown(&mut self) -> u32 {
        self.src.single(ValueSource::Other(
            "bits of a register beyond 64 (weft keeps 64 bits of a register)",
        ))
    }

    /// A value wider than 64 bits read as its `low` and `high` 8 bytes: the low ones while
    /// the high ones are known zeros, else unknown ([`Self::wide_unknown`]).
    fn low_half(&mut self, low: (u64, u32), high: (u64, u32)) -> (u64, u32) {
        if high == (0, 0) {
            low
        } else {
            let wide = self.wide_unknown();
            (0, self.src.union(low.1, wide))
        }
    }

    pub(super) fn read_bytes(
        &mut self,
        which: Mem,
        base: usize,
        off: usize,
        len: usize,
    ) -> (u64, u32) {
        if which == Mem::Shared
            && !self.smem_terms.is_empty()
            && let Ok(a) = u32::try_from(base.saturating_add(off))
            && let Some(&(l, tu)) = self.smem_terms.get(&a)
            && usize::from(l) == len
        {
            // The bytes one store of a termed value wrote, read whole: that value (a size
            // a warp-specialized kernel hands to its other warps through shared memory).
            if let Some((v, Unks::Same(x))) = self.smem.read(a as usize, len)
                && x == self.src.plain(tu)
            {
                return (v, tu);
            }
        }
        if which == Mem::Shared
            && self.cfg.value_terms
            && !self.values_off
            && !self.smem_terms.is_empty()
            && let Some(r) = self.read_value_part(base.saturating_add(off), len)
        {
            return r;
        }
        let memory = match which {
            Mem::Shared => &self.smem,
            Mem::Local => &self.local,
            Mem::Param => &self.pmem,
        };
        // A register holds 64 bits: a wider value (`ld.b128`) is known only while its upper
        // bytes are known zeros, so its lower 64 bits are the whole value.
        if len > 8
            && !matches!(
                memory.read(base.saturating_add(off).saturating_add(8), len - 8),
                Some((0, Unks::Same(0)))
            )
        {
            let wide = self.wide_unknown();
            return (0, wide);
        }
        match memory.read(base.saturating_add(off), len) {
            None => (
                0,
                self.src
                    .single(ValueSource::Other("memory outside its window")),
            ),
            Some((v, Unks::Same(u))) => (v, u),
            Some((v, Unks::Mixed(u))) => {
                let mut acc = 0;
                for x in u {
                    acc = self.src.union(acc, x);
                }
                (v, acc)
            }
        }
    }

    pub(super) fn write_bytes(
        &mut self,
        which: Mem,
        base: usize,
        off: usize,
        len: usize,
        v: u64,
        u: u32,
    ) {
        // Memory holds plain source sets: a byte range of a value is another value. A termed
        // value stored whole (its bytes are its natural width) keeps its term aside, for a
        // load of exactly those bytes.
        if which == Mem::Shared {
            let addr = base.saturating_add(off);
            self.forget_smem_terms(addr, len);
            if u & super::values::TERMED != 0
                && !self.terms_off
                && let Some(t) = self.src.value_term(u)
                && self.src.terms.fits(t, 8 * len)
                && let Ok(a) = u32::try_from(addr)
                && let Ok(l) = u8::try_from(len)
                && usize::from(l) <= MAX_TERM_BYTES
            {
                self.smem_terms.insert(a, (l, u));
            }
        }
        let u = self.src.plain(u);
        let memory = match which {
            Mem::Shared => &mut self.smem,
            Mem::Local => &mut self.local,
            Mem::Param => &mut self.pmem,
        };
        memory.write(base.saturating_add(off), len, v, u);
    }

    /// The registers of a scalar or `{…}` vector operand, without allocating.
    pub(super) fn elems(&self, d: Opnd) -> ([Opnd; 8], usize) {
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

    pub(super) fn load(&mut self, t: usize, pc: u32, inst: &Inst, d: Opnd, a: Opnd) {
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
                self.check_shared_alignment(t, pc, x, total, "the load");
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
                    let (v, u) = self.kparam_field(o, esize, signed, bits);
                    self.wr(t, dst, v, u);
                }
                return;
            }
            Addr::Data(off) => {
                for (k, &dst) in dests.iter().enumerate() {
                    let o = off.saturating_add(u64::from(k as u32 * esize));
                    let (v, u) = if esize > 8 {
                        let high = self.data_load(pc, inst.space, o.saturating_add(8), esize - 8);
                        let low = self.data_load(pc, inst.space, o, 8);
                        self.low_half(low, high)
                    } else {
                        self.data_load(pc, inst.space, o, esize)
                    };
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
                if self.induct.is_none()
                    && self
                        .ir
                        .input_loads
                        .get(pc as usize)
                        .copied()
                        .unwrap_or(false)
                    && let Some(at) = self.input_address(t, pc, a)
                {
                    for (k, &dst) in dests.iter().enumerate() {
                        let delta = u64::from(k as u32 * esize);
                        let (v, u) = self.input_value(pc, at, delta, esize, signed);
                        let v = if signed { sx(v, bits) as u64 } else { v };
                        self.wr(t, dst, v, u);
                    }
                    return;
                }
                let src = if inst.space == Space::Const {
                    ValueSource::ConstLoad(InstId(pc))
                } else {
                    ValueSource::GlobalLoad(InstId(pc))
                };
                let u = self.src.single(src);
                self.clobber(t, inst, u);
                return;
            }
            Addr::Unknown(u) => {
                let u = self.read_unknown_address(t, pc, inst.space, a, u);
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
                self.loaded_term(u, signed)
            };
            let v = if signed { sx(v, bits) as u64 } else { v };
            self.wr(t, dst, v, u);
        }
    }

    /// A load of the `esize`-byte field at `o` of the kernel-parameter window (sign-extended
    /// from `bits` when `signed`): its bytes, with the field's term when no `--param` fixed
    /// them (memoized per field), and known when the choices so far determine it.
    pub(super) fn kparam_field(
        &mut self,
        o: u32,
        esize: u32,
        signed: bool,
        bits: u8,
    ) -> (u64, u32) {
        let (v, u) = match self.kparam_reads.get(&(o, esize, signed)) {
            Some(&r) => r,
            None if esize > 8 => {
                // Known only with known zero upper bytes (`read_bytes`).
                let high = self.kparam(o.saturating_add(8), esize - 8);
                let low = self.kparam(o, 8);
                self.low_half(low, high)
            }
            None => {
                let (v, u) = self.kparam(o, esize);
                let u = self.kparam_term(o, esize, signed, u);
                self.kparam_reads.insert((o, esize, signed), (v, u));
                (v, u)
            }
        };
        let v = if signed {
            mask(sx(v, bits) as u64, 64)
        } else {
            v
        };
        // A field the choices so far determine is known.
        match self.determined_value(u) {
            Some(x) => (x, 0),
            None => (v, u),
        }
    }

    /// `u` (the sources of a load of `size` bytes at `off` of the kernel-parameter window)
    /// with the load's term when all its bytes are unset input bytes: the parameter field.
    fn kparam_term(&mut self, off: u32, size: u32, signed: bool, u: u32) -> u32 {
        if u == 0 || size == 0 || size > 8 {
            return u;
        }
        match self.kp.read(off as usize, size as usize) {
            Some((_, Unks::Same(x))) if x == self.kp_unset => {
                let term = self.src.terms.param(off, size as u8, signed);
                self.src.termed(u, term)
            }
            _ => u,
        }
    }

    /// Reads `size` bytes at `off` of the kernel-parameter window. Bytes no `--param` fixed
    /// are unknown with a source naming the parameter and the byte range.
    pub(super) fn kparam(&mut self, off: u32, size: u32) -> (u64, u32) {
        let s = off as usize;
        let unk = match self.kp.read(s, size as usize) {
            None => {
                return (
                    0,
                    self.src
                        .single(ValueSource::Other("bytes outside the kernel parameters")),
                );
            }
            Some((v, Unks::Same(0))) => return (v, 0),
            Some((_, Unks::Same(u))) => vec![u; size as usize],
            Some((_, Unks::Mixed(unk))) => unk,
        };
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

    /// A tensor map in shared memory: `tensormap.replace` (`Write`) writes the whole
    /// 128-byte object, whose bytes become unknown; `tensormap.cp_fenceproxy` (`Read`) reads
    /// its `size` bytes at `src` to copy them to global memory. Both in the generic proxy.
    pub(super) fn tensormap_access(&mut self, t: usize, pc: u32, ops: &[Opnd], kind: AccessKind) {
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        let (at, len) = if kind.writes() {
            (o(0), 128)
        } else {
            let Some(size) = self.known_value(t, pc, o(2), Value::BulkCopySize, false) else {
                return;
            };
            (o(1), u32::try_from(size).unwrap_or(u32::MAX))
        };
        if !self
            .notes
            .iter()
            .any(|n| n.starts_with("tensor maps in shared memory"))
        {
            self.notes.push(format!(
                "tensor maps in shared memory (first: PTX line {}): `tensormap.replace` writes the whole 128-byte object (the ISA: \"a weak memory operation, on the entire 1024-bit opaque tensor-map object\") and `tensormap.cp_fenceproxy` reads it; the TMA extents weft bounds stop at a tensor map (assuming no TMA tile overlaps one), and the copies that use a map copied to global memory get no extent from it",
                self.line(pc)
            ));
        }
        match self.addr(t, pc, Space::Shared, at) {
            Addr::Shared(a) => {
                let u = if kind.writes() {
                    self.src.single(ValueSource::Other(
                        "a tensor map's bytes (tensormap.replace)",
                    ))
                } else {
                    0
                };
                // Deduplicated where they are used (`clip_tma_extents`); each costs a
                // recorded access.
                if self.shared_access(t, pc, kind, a, len, u) {
                    self.tensormaps.push(a);
                }
            }
            Addr::Unknown(u) => self.unverifiable(
                t,
                pc,
                Why::Unknown(Value::SharedAddress),
                Some(at),
                u,
                false,
            ),
            _ => {}
        }
    }

    pub(super) fn store(&mut self, t: usize, pc: u32, inst: &Inst, a: Opnd, s: Opnd) {
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
                self.check_shared_alignment(t, pc, x, total, "the store");
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
                if self.kp.read(x as usize, total as usize).is_some() {
                    self.kp.set_unk(x as usize, total as usize, o);
                    self.kparam_reads.clear();
                }
                return;
            }
            Addr::Data(off) => {
                self.data_write(off, total);
                return;
            }
            Addr::Global => return,
            Addr::Unknown(u) => {
                match inst.space {
                    _ if self.unknown_address_is_shared(inst.space, u) => self.unverifiable(
                        t,
                        pc,
                        Why::Unknown(Value::SharedAddress),
                        Some(a),
                        u,
                        false,
                    ),
                    Space::Local => {
                        // Any local byte may have changed.
                        let size = self.ir.local_size as usize;
                        self.local.set_unk(t * size, size, u);
                        self.check_memory(t, pc);
                    }
                    _ => {}
                }
                return;
            }
        };
        if off as usize + total as usize > lim {
            return;
        }
        // The written value as terms (`tag_symbolic_values`): per element, its term or its
        // known low bytes; `None` once an element has neither.
        let mut parts = [super::terms::TermId(0); 8];
        let mut symbolic = (may_u == 0 && which == Mem::Shared && total <= 16).then_some(false);
        for (k, &x) in srcs.iter().enumerate() {
            let (v, u) = self.rd(t, x, pc);
            if let Some(termed) = symbolic {
                let part = if u == 0 {
                    self.src.terms.constant(mask(v, (8 * esize).min(64) as u8))
                } else {
                    self.src.value_term(u)
                };
                symbolic = part.map(|p| {
                    parts[k] = p;
                    termed || u != 0
                });
            }
            // (`union` drops a term: a store under no input-dependent guard keeps it.)
            let u = if may_u != 0 {
                self.src.union(u, may_u)
            } else if which == Mem::Shared {
                self.stored_atom(u, esize)
            } else {
                u
            };
            self.write_bytes(
                which,
                base,
                (off + k as u32 * esize) as usize,
                esize as usize,
                v,
                u,
            );
        }
        if which != Mem::Shared {
            // A local or `.param` store may have allocated a page.
            self.check_memory(t, pc);
        } else if symbolic == Some(true) {
            self.tag_symbolic_values(t, &parts[..srcs.len()], esize);
        } else {
            self.tag_written_value(t, off, total);
        }
    }

    pub(super) fn atomic(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd]) {
        let is_red = matches!(inst.op, Op::RedMem(_));
        let a = if is_red { ops.first() } else { ops.get(1) }
            .copied()
            .unwrap_or(Opnd::Sink);
        let size = inst.ty.bytes().max(1) * u32::from(inst.vec.max(1));
        let u = self.src.single(ValueSource::Atomic(InstId(pc)));
        match self.addr(t, pc, inst.space, a) {
            Addr::Shared(x) => {
                let in_bounds = self.shared_access(t, pc, AccessKind::Atomic, x, size, u);
                if in_bounds {
                    self.check_shared_alignment(t, pc, x, size, "the atomic");
                }
            }
            Addr::Unknown(uu) if self.unknown_address_is_shared(inst.space, uu) => {
                self.unverifiable(
                    t,
                    pc,
                    Why::Unknown(Value::SharedAddress),
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
}
