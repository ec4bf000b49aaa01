//! mbarrier operations.

use super::{Addr, Machine, State};
use crate::ValueSource;
use crate::ir::{Inst, Op, Opnd, Space};
use crate::unverifiable::{SyncOp, Value, Why};
use weft_program::{
    AccessKind, Command, CommandView, InitSite, InstId, MbarrierOp, PhaseStep, WARP_SIZE,
};

impl Machine<'_> {
    pub(super) fn mbar_addr(&mut self, t: usize, pc: u32, inst: &Inst, o: Opnd) -> Option<u32> {
        let space = if inst.space == Space::Generic {
            Space::Generic
        } else {
            Space::Shared
        };
        match self.addr(t, pc, space, o) {
            Addr::Shared(a) => {
                // The PTX ISA: an mbarrier object is a `.b64` aligned to 8 bytes.
                self.check_shared_alignment(t, pc, a, 8, "the mbarrier object");
                Some(a)
            }
            Addr::Unknown(u) => {
                self.unverifiable(
                    t,
                    pc,
                    Why::Unknown(Value::MbarrierAddress),
                    Some(o),
                    u,
                    true,
                );
                None
            }
            _ => {
                self.unverifiable(t, pc, Why::MbarrierNotShared, Some(o), 0, true);
                None
            }
        }
    }

    pub(super) fn known_operand(&mut self, t: usize, pc: u32, o: Opnd, what: Value) -> Option<u64> {
        self.known_value(t, pc, o, what, true)
    }

    /// Operand `o`'s value, or `None` after recording that `what` is unknown (`stop`: the
    /// emulation stops there, as for synchronization; else it goes on without the value).
    pub(super) fn known_value(
        &mut self,
        t: usize,
        pc: u32,
        o: Opnd,
        what: Value,
        stop: bool,
    ) -> Option<u64> {
        let (v, u) = self.rd(t, o, pc);
        if u != 0 {
            self.unverifiable(t, pc, Why::Unknown(what), Some(o), u, stop);
            return None;
        }
        Some(v)
    }

    /// The phase an mbarrier operation on `addr` leaves (waking waiters when it completed
    /// one), or `None` after a protocol error.
    pub(super) fn mbar_result(
        &mut self,
        addr: u32,
        r: Result<PhaseStep, weft_program::MbarrierError>,
    ) -> Option<u32> {
        match r {
            Ok(PhaseStep::Pending(p)) => Some(p),
            Ok(PhaseStep::Completed { completed }) => {
                self.charge_node();
                self.tma_phase_completed(addr, completed);
                self.wake_mbar(addr);
                Some(completed)
            }
            // A protocol error: barrier-graph replays the same operations through the same
            // `MbarrierFile` and reports it; the state after it is unknown.
            Err(_) => None,
        }
    }

    pub(super) fn mbarrier(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd]) {
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        if self.under_branch(t, pc, SyncOp::Mbarrier) {
            return;
        }
        let id = InstId(pc);
        match inst.op {
            Op::MbarInit => {
                let Some(a) = self.mbar_addr(t, pc, inst, o(0)) else {
                    return;
                };
                let Some(c) = self.known_operand(t, pc, o(1), Value::MbarrierInitCount) else {
                    return;
                };
                self.mbar_write(t, a, id);
                self.push(t, Command::mbarrier(MbarrierOp::Init, a, c as u32, id));
                if self.mbar_objects.last() != Some(&a) {
                    self.mbar_objects.push(a);
                }
                // A protocol error is barrier-graph's to report (it replays this command).
                let site = self.init_site(t, pc);
                let _ = self.mbars.init_at(a, c as u32, Some(site));
            }
            Op::MbarArrive { expect_tx, drop } => {
                let Some(a) = self.mbar_addr(t, pc, inst, o(1)) else {
                    return;
                };
                let extra = if ops.len() >= 3 {
                    let what = if expect_tx {
                        Value::MbarrierTxCount
                    } else {
                        Value::MbarrierArrivalCount
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
                let token = self.mbar_result(a, r);
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
                let Some(tx) = self.known_operand(t, pc, o(1), Value::MbarrierTxCount) else {
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
                self.mbar_result(a, r);
            }
            Op::MbarWait { parity } => self.mbar_wait(t, pc, inst, ops, parity),
            Op::MbarInval => {
                let Some(a) = self.mbar_addr(t, pc, inst, o(0)) else {
                    return;
                };
                if self.tma_open.iter().any(|o| o.mbar == a) {
                    self.complete_tma_phases_of(Some(a));
                }
                self.mbar_write(t, a, id);
                self.push(t, Command::mbarrier(MbarrierOp::Inval, a, 0, id));
                // A protocol error is barrier-graph's to report (it replays this command).
                let _ = self.mbars.inval(a);
            }
            // The arrive-on happens when every prior cp.async of the thread has completed:
            // those copies complete before the phase it is counted in. With `.noinc` it is
            // one of the phase's expected arrivals. Without, the pending count is first
            // incremented, so the net effect on the counts is nil, but the increment holds
            // the current phase open until the copies complete: recorded as an operation of
            // that phase that changes no count (`expect_tx` of 0 bytes, which like an
            // increment must happen before the phase's last arrival).
            // The arrival happens when the thread's prior tcgen05 operations complete; as an
            // operation of its phase its predecessors are the issue's. The shared-memory
            // reads of the `tcgen05.mma`s it tracks end before that phase completes.
            Op::TcgenCommitArrive => {
                let Some(a) = self.mbar_addr(t, pc, inst, o(0)) else {
                    return;
                };
                let c = self.push(t, Command::mbarrier(MbarrierOp::AsyncArrive, a, 1, id));
                self.tcgen_commit(t, a, c);
                let r = self.mbars.arrive(a, 1, 0, false);
                self.mbar_result(a, r);
            }
            Op::CpAsyncMbarArrive { noinc } => {
                let Some(a) = self.mbar_addr(t, pc, inst, o(0)) else {
                    return;
                };
                let c = if noinc {
                    let c = self.push(t, Command::mbarrier(MbarrierOp::AsyncArrive, a, 1, id));
                    let r = self.mbars.arrive(a, 1, 0, false);
                    self.mbar_result(a, r);
                    c
                } else {
                    let c = self.push(t, Command::mbarrier(MbarrierOp::ExpectTx, a, 0, id));
                    let r = self.mbars.expect_tx(a, 0);
                    self.mbar_result(a, r);
                    c
                };
                for &(g, _) in &self.cp_pending[t] {
                    if let Some(copy) = self.copies.get_mut(g as usize) {
                        copy.phases.push(c);
                    }
                }
            }
            _ => {}
        }
    }

    /// Records the write of an object's 8 bytes at `a` by thread `t`'s `mbarrier.init` or
    /// `mbarrier.inval`, just before the operation's command: the race stage checks the
    /// other accesses to those bytes against it (an `mbarrier.init` on memory a
    /// `tcgen05.mma` in flight still reads). The object's other operations are not
    /// accesses: the phase checks order them after the init and before the inval.
    fn mbar_write(&mut self, t: usize, a: u32, id: InstId) {
        self.push(t, Command::access(AccessKind::Write, a, 8, false, id));
    }

    /// The dynamic instruction of thread `t`'s `mbarrier.init` at `pc` just recorded: the
    /// warp step under `--warp-sync`, else how many times the thread executed it before.
    fn init_site(&mut self, t: usize, pc: u32) -> InitSite {
        let w = t / WARP_SIZE as usize;
        let occurrence = if self.cfg.warp_sync {
            self.warp_step[w]
        } else {
            let k = self.init_occ.entry((t as u32, pc)).or_insert(0);
            *k += 1;
            *k - 1
        };
        InitSite {
            warp: w as u32,
            inst: InstId(pc),
            occurrence,
        }
    }

    /// `mbarrier.test_wait`/`try_wait` (`parity`: the `.parity` form): the thread blocks
    /// until the phase completes.
    fn mbar_wait(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd], parity: bool) {
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        let id = InstId(pc);
        let Some(a) = self.mbar_addr(t, pc, inst, o(1)) else {
            return;
        };
        let what = if parity {
            Value::MbarrierWaitParity
        } else {
            Value::MbarrierWaitState
        };
        let Some(p) = self.known_operand(t, pc, o(2), what) else {
            return;
        };
        let p = p as u32;
        if self.is_peek(pc) {
            self.peeks += 1;
            if self.cfg.peeks_fail {
                let phase = self.mbars.state(a).map_or(0, |m| m.phase);
                let key = (t as u32, a);
                let first = !self.peeks_failed.contains(&(t as u32, pc, a, phase));
                // After a "not ready" that stood for the previous phase not being complete
                // yet, the thread's later peeks at the object see it so too: a peek for the
                // other parity then asks for the phase before, complete, and returns at once
                // (hardware does: a second peek with the wrong parity lets the thread run on
                // before its phase; weft answered it "not ready" too and missed the race).
                // A poll that comes back to itself waits for real (below).
                if parity
                    && first
                    && let Some(&believed) = self.peek_lag.get(&key)
                {
                    if believed & 1 == p & 1 {
                        self.peeks_failed.insert((t as u32, pc, a, phase));
                        self.wr(t, o(0), 0, 0);
                    } else {
                        self.push(t, Command::mbarrier(MbarrierOp::WaitParity, a, p & 1, id));
                        self.wr(t, o(0), 1, 0);
                    }
                    return;
                }
                self.peek_lag.remove(&key);
                // "Not ready", at once, the first time this thread peeks at this mbarrier's
                // current phase here (a wait that observed nothing orders nothing: no
                // command); a poll that comes back to the same phase waits (else a polling
                // loop would never see its phase). Not for a parity wait that would observe
                // the phase before the first (complete at the init in every execution).
                let at_init = parity && phase == 0 && p & 1 == 1;
                if !at_init && self.peeks_failed.insert((t as u32, pc, a, phase)) {
                    // A parity peek that was ready observes the previous phase: "not ready"
                    // means that phase is still the current one.
                    if parity && phase & 1 != p & 1 {
                        self.peek_lag.insert(key, phase.wrapping_sub(1));
                    }
                    self.wr(t, o(0), 0, 0);
                    return;
                }
            }
        } else {
            self.peek_lag.remove(&(t as u32, a));
        }
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
                    Opnd::Reg(r) => Some(r),
                    _ => None,
                };
            }
            // A protocol error (a wait on an uninitialized or invalidated object) is
            // barrier-graph's to report: it replays this command. The wait's answer is
            // undefined, and a branch on it would only make the kernel unverifiable: the
            // emulation stops here, like at a named barrier's error.
            Err(_) => self.barrier_error(t),
        }
    }

    /// Whether the wait at `pc` is a *peek*: it has a result, and its "not ready" answer
    /// does not lead back to it within a few instructions (a spinning wait is
    /// `L: try_wait p; @!p bra L;` or `L: try_wait p; @p bra DONE; bra L;`).
    fn is_peek(&mut self, pc: u32) -> bool {
        if let Some(&k) = self.peek_at.get(&pc) {
            return k;
        }
        let ir = self.ir;
        let dest = ir
            .insts
            .get(pc as usize)
            .and_then(|i| ir.operands(i).first().copied());
        let k = match dest {
            Some(Opnd::Reg(r)) => {
                // Follow the "not ready" answer (`r` false) forward.
                let mut x = pc + 1;
                let mut spins = false;
                for _ in 0..16 {
                    let Some(inst) = ir.insts.get(x as usize) else {
                        break;
                    };
                    let target = match ir.operands(inst).first() {
                        Some(&Opnd::Label(l)) => Some(l.0),
                        _ => None,
                    };
                    x = match (inst.op, inst.guard) {
                        (Op::Bra, None) => match target {
                            Some(l) => l,
                            None => break,
                        },
                        (Op::Bra, Some(g)) if g == r => match (inst.guard_neg, target) {
                            (true, Some(l)) => l,
                            (false, _) => x + 1,
                            (true, None) => break,
                        },
                        (op, _) if op.is_sync() || op == Op::Bra => break,
                        _ => x + 1,
                    };
                    if x == pc {
                        spins = true;
                        break;
                    }
                }
                !spins
            }
            _ => false,
        };
        self.peek_at.insert(pc, k);
        k
    }

    /// No thread can run and no TMA phase is left to complete: the first thread blocked at a
    /// *peek* (peeks waiting for their phase, [`crate::Config::peeks_fail`] off) whose phase
    /// never came answers "not ready" instead, as every execution's peek of a late phase does
    /// (a peek never blocks on hardware): its wait command goes (it observed nothing) and the
    /// thread runs on. One thread at a time, lowest first, so that a released thread's
    /// arrivals can still complete the others' phases. Whether one was released.
    pub(super) fn release_stuck_peek(&mut self) -> bool {
        if self.cfg.peeks_fail || self.stop {
            return false;
        }
        for t in 0..self.n {
            if !matches!(self.th[t].state, State::MbarWait { .. }) {
                continue;
            }
            // A blocked thread's PC is past its wait.
            let pc = self.th[t].pc.wrapping_sub(1);
            if self.peek_at.get(&pc) != Some(&true) {
                continue;
            }
            let pushed = self.cmds[t].last().is_some_and(|c| {
                c.inst() == InstId(pc)
                    && matches!(
                        c.view(),
                        CommandView::Mbarrier {
                            op: MbarrierOp::WaitParity,
                            ..
                        }
                    )
            });
            if !pushed {
                continue;
            }
            self.cmds[t].pop();
            if self.cfg.warp_sync {
                self.steps[t].pop();
            }
            self.commands -= 1;
            self.coll.synced[t] = self.coll.synced[t].wrapping_sub(1);
            self.th[t].state = State::Run;
            if let Some(d) = self.th[t].wait_dest {
                self.wr(t, Opnd::Reg(d), 0, 0);
            }
            return true;
        }
        false
    }

    pub(super) fn wake_mbar(&mut self, addr: u32) {
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
                if let Some(d) = self.th[t].wait_dest {
                    self.wr(t, Opnd::Reg(d), 1, 0);
                }
            }
        }
    }
}
