//! mbarriers in the replay and the barrier graph: phases as dynamic barriers, waits as
//! blocking points, protocol errors, deadlocks and phase races.
//!
//! # Trace
//!
//! The replay runs every mbarrier command through [`MbarrierFile`], the state machine the
//! emulator uses, with the emulator's wake-up rule: `WaitParity P` returns at once when the
//! current phase's parity differs from `P` (the phase of parity `P` before it completed),
//! else the thread blocks until a completion makes that true, and it is woken at that
//! completion. A wait therefore *observes* one phase: the one just before the current one
//! when it returns at once (phase `-1`, "before the first phase", on a fresh object), the
//! completing one when it was woken. A failed operation (a [`MbarrierError`]) is reported
//! and skipped, as the emulator skips it, so both keep the same state.
//!
//! # Graph
//!
//! Each completed phase `k` of the object at address `a` is a node
//! ([`NodeKey::MbarrierPhase`]`(a)`, generation `k`). Its participants are the operations
//! the phase counted (`init` for phase 0, arrive, arrive.expect_tx, expect_tx, complete_tx,
//! registered as non-blocking), so `hb`'s rule "a thread blocked at `x` later registers at
//! `n`" gives the in-edges. A wait that observed phase `k` is a blocking registration: the
//! thread's later commands are ordered after `k` completes, but its earlier ones are *not*
//! ordered before it (a wait is a sync that does not count). To keep each thread's blocking
//! points a chain (what [`crate::HappensBefore`] relies on), a wait of a thread that blocked
//! before gets its own node ([`NodeKey::MbarrierWait`]) with in-edges from the phase and from
//! the thread's previous blocking point; a thread's first blocking point may be the phase
//! node itself. The latest-happens-before tables and `ordered` then need no change.
//!
//! # Phase races (the analogue of safe recycling)
//!
//! The trace is one execution; the graph is the happens-before relation of all executions
//! only if every execution puts every operation in the same phase and lets every wait
//! observe the same phase (as WEFT's Theorem 1 needs the same generations). By induction on
//! phases, these checks ensure it ([`ViolationKind::MbarrierPhaseRace`] otherwise):
//!
//! 1. Every operation counted in phase `k + 1` happens after phase `k` completes: after some
//!    wait that observed `k`, or after every operation `k` counted (the completion is the
//!    last of them). Otherwise another execution runs it before the completion, and it
//!    joins phase `k` (an arrival that completes `k` early, with other waits released). A
//!    copy's `complete_tx` and an asynchronous arrival are recorded at their issue but land
//!    later: nothing follows the former but a wait, and the latter only a later
//!    asynchronous arrival of its thread (one thread's commits arrive in issue order).
//!    Operations of phase 0 must happen after the `init` (else
//!    [`ViolationKind::MbarrierUninitialized`]: another execution runs them first).
//! 2. Every `expect_tx` counted in phase `k` happens before some arrival of phase `k`. The
//!    phase completes when its arrivals are in and the tx-count is 0; an `expect_tx` that
//!    may run after the last arrival can find the phase already completed (tx-count 0
//!    without it) and land in phase `k + 1`. `complete_tx` only lowers the tx-count, so
//!    without a late `expect_tx` no proper subset of the late operations balances it.
//! 3. A wait for parity `P` observes phase `k` (parity `P`) in every execution iff it starts
//!    after phase `k - 1` completes (earlier, the current phase has parity `!P` or, two back,
//!    `P` again, and it returns observing `k - 1` or `k - 2`) and before phase `k + 1`
//!    completes (from then on the current phase `k + 2` has parity `P` and it waits for
//!    phase `k + 2`: parity aliasing). So a wait observing `k` must happen after the
//!    completion of `k - 1` (rule 1's test; after `init` for `k <= 0`) and before some
//!    operation counted in phase `k + 1`, when phase `k + 1` completed in this trace.
//!
//! Arrival counts per phase then agree in every execution (phases are counted in order),
//! so the set of completed phases, the waits each releases and the graph are the same.
//!
//! Approximations: the emulator records token waits (`try_wait` with the state `arrive`
//! returned) as parity waits of the token's parity, which agrees while the token names the
//! current or the previous phase. The `complete_tx` of an asynchronous copy is recorded in
//! its issuing thread at the issue point: as an operation of its phase its predecessors are
//! the issue's; the copy's shared access is an agent of its own that ends before the phase
//! completes ([`crate::HappensBefore`] orders it through the waits that observed the phase).
//! 4. Every operation on the object (its `init`, arrivals, waits) happens before the
//!    `mbarrier.inval` that ends it (else [`ViolationKind::MbarrierUninitialized`]: another
//!    execution runs it on the invalidated object, which the ISA leaves undefined).
//!
//! # The object's memory ([`reused`])
//!
//! The PTX ISA (*mbarrier.inval*) requires an object to be invalidated before its memory is
//! used for any other purpose. `init` and `inval` are writes of the object's 8 bytes in the
//! race check, so an access to them not ordered with either is a race. What that leaves is an
//! access ordered after the `init` and not after an `inval` of the object: a load, store or
//! asynchronous copy of a live object's bytes ([`ViolationKind::MbarrierReused`]). It keeps
//! the relation, like rule 4.

use weft_program::{
    BarrierOp, CommandView, InitSite, InstId, MbarrierError, MbarrierOp, Participant, PhaseStep,
    Program, ThreadId,
};

use rustc_hash::FxHashMap;

use crate::hb::HappensBefore;
use crate::report::{
    CommandRef, SyncViolation, ThreadRange, ViolationKind, group_threads, inst_at, join,
};
use crate::trace::{Cmd, MbarrierReplay, Object, Phase, Trace, Waiter};
use crate::{DynamicBarrier, DynamicBarrierId, NodeKey, Participants, Registration};

fn inst(program: &Program, (t, i): Cmd) -> InstId {
    inst_at(program, t, i)
}

fn cref(program: &Program, c: Cmd) -> CommandRef {
    CommandRef {
        thread: c.0,
        index: c.1,
        inst: inst(program, c),
    }
}

fn range(program: &Program, t: ThreadId) -> ThreadRange {
    ThreadRange {
        first: t,
        last: t,
        warp_size: program.warp_size(),
    }
}

/// Runs one mbarrier command of `thread` (command `index`). Returns whether the thread
/// blocks; pushes the threads a completion woke onto `woken`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn step(
    out: &mut Trace,
    program: &Program,
    thread: ThreadId,
    index: u32,
    op: MbarrierOp,
    addr: u32,
    value: u32,
    woken: &mut Vec<ThreadId>,
) -> bool {
    let cmd = (thread, index);
    let m = &mut out.mbarriers;
    let result = match op {
        MbarrierOp::Init => {
            let site = init_site(m, program, cmd);
            let r = m.file.init_at(addr, value, Some(site));
            if r == Ok(true) {
                if let Some(&o) = m.live.get(&addr) {
                    m.objects[o].joined.push(cmd);
                }
                return false;
            }
            if !matches!(r, Err(MbarrierError::InvalidCount { .. })) {
                m.live.insert(addr, m.objects.len());
                m.objects.push(Object {
                    addr,
                    init: cmd,
                    joined: Vec::new(),
                    early: Vec::new(),
                    phases: vec![Phase::default()],
                    inval: None,
                });
                count(out, program, cmd, op, addr);
            }
            r.map(|_| PhaseStep::Pending(0))
        }
        MbarrierOp::Arrive | MbarrierOp::AsyncArrive => m.file.arrive(addr, value, 0, false),
        MbarrierOp::ArriveExpectTx => m.file.arrive(addr, 1, value, false),
        MbarrierOp::ExpectTx => m.file.expect_tx(addr, value),
        MbarrierOp::CompleteTx => m.file.complete_tx(addr, value),
        MbarrierOp::Inval => {
            let r = m.file.inval(addr);
            if let Some(o) = m.live.remove(&addr)
                && r.is_ok()
            {
                m.objects[o].inval = Some(cmd);
            }
            r.map(|()| PhaseStep::Pending(0))
        }
        MbarrierOp::WaitParity => match m.file.is_ready(addr, value) {
            Ok(true) => {
                let object = m.live.get(&addr).copied().unwrap_or(usize::MAX);
                let observed = m.file.state(addr).map_or(0, |s| s.phase) as i64 - 1;
                observe(out, program, cmd, object, observed);
                return false;
            }
            Ok(false) => {
                let object = m.live.get(&addr).copied().unwrap_or(usize::MAX);
                m.waiting.push(Waiter {
                    cmd,
                    object,
                    parity: value,
                });
                return true;
            }
            Err(e) => Err(e),
        },
    };
    match result {
        Ok(step) => {
            if !matches!(op, MbarrierOp::Init | MbarrierOp::Inval) {
                count(out, program, cmd, op, addr);
            }
            if let PhaseStep::Completed { completed } = step {
                complete(out, program, addr, completed, woken);
            }
        }
        Err(e) => protocol_error(out, program, cmd, e),
    }
    false
}

/// The dynamic instruction of the `mbarrier.init` command `cmd` (as the emulator computes
/// it): its warp step under `--warp-sync`, else how many inits of the same instruction the
/// thread replayed before.
fn init_site(m: &mut MbarrierReplay, program: &Program, cmd: Cmd) -> InitSite {
    let (t, i) = cmd;
    let inst = inst_at(program, t, i);
    let thread = &program.threads[t.index()];
    let occurrence = match thread.steps.get(i as usize) {
        Some(&step) => step,
        None => {
            let k = m.init_occ.entry((t, inst)).or_insert(0);
            *k += 1;
            *k - 1
        }
    };
    InitSite {
        warp: t.warp(program.warp_size()),
        inst,
        occurrence,
    }
}

/// Records an operation counted in the current phase of the live object at `addr`.
fn count(out: &mut Trace, _program: &Program, cmd: Cmd, op: MbarrierOp, addr: u32) {
    let Some(&o) = out.mbarriers.live.get(&addr) else {
        return;
    };
    let object = &mut out.mbarriers.objects[o];
    let k = object.phases.len() - 1;
    // The lane's list becomes its own (`list_mut`): the same command's arrival in phase
    // `k` of another lane may be counted by another object at this address (phases are
    // numbered anew when an object is initialized again), so the lanes' registrations
    // could take different nodes; lanes do not share an arrival's registration.
    let regs = out.registrations.list_mut(cmd.0.index());
    regs.push(Registration::new(
        cmd.1,
        NodeKey::MbarrierPhase(addr),
        k as u32,
        BarrierOp::Arrive,
    ));
    let r = regs.len() - 1;
    object.phases[k].counted.push((cmd, op, r));
}

/// Phase `completed` of the live object at `addr` completed: make it a node, wake the
/// waits it releases.
fn complete(
    out: &mut Trace,
    program: &Program,
    addr: u32,
    completed: u32,
    woken: &mut Vec<ThreadId>,
) {
    let Some(&o) = out.mbarriers.live.get(&addr) else {
        return;
    };
    let id = DynamicBarrierId(out.nodes.len() as u32);
    let object = &mut out.mbarriers.objects[o];
    let phase = object
        .phases
        .last_mut()
        .expect("an object has a current phase");
    phase.node = Some(id);
    let mut participants = Vec::with_capacity(phase.counted.len());
    for &((t, i), _, r) in &phase.counted {
        out.registrations.list_mut(t.index())[r].set_node(id);
        participants.push(Participant {
            thread: t,
            command: i,
            op: BarrierOp::Arrive,
        });
    }
    object.phases.push(Phase::default());
    let expected = out.mbarriers.file.state(addr).map_or(0, |s| s.expected);
    out.nodes.push(DynamicBarrier {
        key: NodeKey::MbarrierPhase(addr),
        generation: completed,
        expected,
        participants: Participants::of(&participants),
        exited: Vec::new(),
        gather: false,
    });
    let file = &out.mbarriers.file;
    let (ready, still): (Vec<Waiter>, Vec<Waiter>) = out
        .mbarriers
        .waiting
        .iter()
        .partition(|w| w.object == o && file.is_ready(addr, w.parity) == Ok(true));
    out.mbarriers.waiting = still;
    for w in ready {
        observe(out, program, w.cmd, o, i64::from(completed));
        woken.push(w.cmd.0);
    }
}

/// A wait returned observing phase `observed` (`-1`: before the first) of `object`.
fn observe(out: &mut Trace, program: &Program, cmd: Cmd, object: usize, observed: i64) {
    let _ = program;
    let Some(obj) = out.mbarriers.objects.get_mut(object) else {
        return;
    };
    let addr = obj.addr;
    let Ok(k) = usize::try_from(observed) else {
        obj.early.push(cmd);
        return;
    };
    let Some(phase) = obj.phases.get_mut(k) else {
        return;
    };
    phase.observers.push(cmd);
    let Some(m) = phase.node else { return };
    let (t, i) = cmd;
    let regs = out.registrations.of(t.index());
    let last = regs
        .iter()
        .rev()
        .find_map(|r| r.node().filter(|_| r.op.blocks()).or(r.gather()));
    let node = match last {
        None => m,
        Some(b) if b == m => m,
        Some(_) => {
            let w = DynamicBarrierId(out.nodes.len() as u32);
            out.nodes.push(DynamicBarrier {
                key: NodeKey::MbarrierWait(addr),
                generation: k as u32,
                expected: 0,
                participants: Participants::of(&[Participant {
                    thread: t,
                    command: i,
                    op: BarrierOp::Sync,
                }]),
                exited: Vec::new(),
                gather: false,
            });
            out.mbarriers.edges.push((m, w));
            w
        }
    };
    out.registrations.push(
        t.index(),
        Registration::new(i, NodeKey::MbarrierPhase(addr), k as u32, BarrierOp::Sync)
            .with_node(node),
    );
}

/// Reports the protocol error `e` of command `cmd`. One violation per (kind, thread,
/// instruction): a later error of the same kind by the same thread at the same instruction
/// (a loop's next trip) folds into the first, whose [`SyncViolation::also`] lists its phase
/// when it has one on the same mbarrier, so the errors of a loop cost memory per command,
/// not a violation each (a loop of 55,000 arrivals on an uninitialized mbarrier by 128
/// threads made 7 million violations and 12 GB).
#[cold]
fn protocol_error(out: &mut Trace, program: &Program, cmd: Cmd, e: MbarrierError) {
    out.mbarriers.errors = true;
    let (kind, addr, phase) = match e {
        MbarrierError::Uninitialized { addr } => (ViolationKind::MbarrierUninitialized, addr, None),
        MbarrierError::InvalidCount { addr, .. } => {
            (ViolationKind::MbarrierInvalidCount, addr, None)
        }
        MbarrierError::Reinit { addr, phase } => (ViolationKind::MbarrierReinit, addr, Some(phase)),
        MbarrierError::TxCountOutOfRange { addr, phase, .. }
        | MbarrierError::TooManyArrivals { addr, phase, .. } => {
            (ViolationKind::MbarrierOverflow, addr, Some(phase))
        }
    };
    let c = cref(program, cmd);
    let key = (kind, cmd.0, c.inst);
    if let Some(&first) = out.mbarriers.reported.get(&key) {
        if let Some(v) = out.violations.get_mut(first)
            && let Some(phase) = phase
            && v.mbarrier == Some(addr)
            && v.generations.first() != Some(&phase)
            && v.also.last() != Some(&phase)
        {
            v.also.push(phase);
        }
        return;
    }
    out.mbarriers.reported.insert(key, out.violations.len());
    let mut v = SyncViolation::new(
        kind,
        format!(
            "{e}: `{}` by {} (command {}, instruction #{})",
            program.threads[cmd.0.index()].commands[cmd.1 as usize],
            range(program, cmd.0),
            cmd.1,
            c.inst.0
        ),
    );
    v.mbarrier = Some(addr);
    v.generations = phase.into_iter().collect();
    if let MbarrierError::TooManyArrivals { count, pending, .. } = e {
        v.counts = Some((count, pending));
    }
    v.commands = vec![c];
    v.threads = vec![range(program, cmd.0)];
    out.violations.push(v);
}

/// The waits that observed each completed phase, by the phase's node (the only way out of
/// a phase node in the graph).
pub(crate) fn observers(m: &MbarrierReplay) -> rustc_hash::FxHashMap<DynamicBarrierId, Vec<Cmd>> {
    let mut out: rustc_hash::FxHashMap<DynamicBarrierId, Vec<Cmd>> = Default::default();
    for object in &m.objects {
        for phase in &object.phases {
            if let Some(node) = phase.node {
                out.insert(node, phase.observers.clone());
            }
        }
    }
    out
}

/// The replay ended with threads blocked at mbarrier waits: one deadlock per mbarrier.
#[cold]
pub(crate) fn deadlocks(out: &mut Trace, program: &Program) {
    let ws = program.warp_size();
    let mut waiting = std::mem::take(&mut out.mbarriers.waiting);
    waiting.sort_by_key(|w| (w.object, w.cmd));
    let mut start = 0;
    while start < waiting.len() {
        let o = waiting[start].object;
        let len = waiting[start..]
            .iter()
            .take_while(|w| w.object == o)
            .count();
        let group = &waiting[start..start + len];
        start += len;
        let Some(obj) = out.mbarriers.objects.get(o) else {
            continue;
        };
        let addr = obj.addr;
        let live = out.mbarriers.live.get(&addr) == Some(&o);
        let state = out.mbarriers.file.state(addr).filter(|_| live);
        let blocked = group_threads(group.iter().map(|w| (w.cmd.0, inst(program, w.cmd))), ws);
        let who = join(
            blocked
                .iter()
                .map(|(r, i)| format!("{r} at instruction #{}", i.0)),
        );
        let parities: Vec<u32> = {
            let mut p: Vec<u32> = group.iter().map(|w| w.parity).collect();
            p.sort_unstable();
            p.dedup();
            p
        };
        let mut v = match state {
            Some(s) => {
                let mut v = SyncViolation::new(
                    ViolationKind::Deadlock,
                    format!(
                        "{} thread(s) blocked forever waiting on mbarrier {addr:#x} for parity {}: it is in phase {} (parity {}), which expects {} arrivals, {} still pending, tx-count {}; blocked: {who}",
                        group.len(),
                        join(parities.iter()),
                        s.phase,
                        s.phase & 1,
                        s.expected,
                        s.pending,
                        s.tx
                    ),
                );
                v.generations = vec![s.phase];
                v.counts = Some((s.expected.saturating_sub(s.pending), s.expected));
                v
            }
            None => SyncViolation::new(
                ViolationKind::Deadlock,
                format!(
                    "{} thread(s) blocked forever waiting on mbarrier {addr:#x}, which was invalidated; blocked: {who}",
                    group.len()
                ),
            ),
        };
        v.mbarrier = Some(addr);
        v.commands = group.iter().map(|w| cref(program, w.cmd)).collect();
        v.commands.dedup_by_key(|c| c.inst);
        v.threads = blocked.iter().map(|(r, _)| *r).collect();
        out.violations.push(v);
    }
}

/// A phase-check failure before grouping.
struct Failure {
    kind: ViolationKind,
    addr: u32,
    phase: i64,
    what: &'static str,
    cmd: Cmd,
    /// The `mbarrier.inval` a use is not ordered before (rule 4).
    inval: Option<Cmd>,
}

/// The checks of the module doc, on a replay that did not get stuck (none after a protocol
/// error): the phase checks (rules 1-3), which decide well-synchronization, and rule 4's
/// ([`invals`]), which keep the relation. Both test happens-before, or under `--warp-sync`
/// lock-step followed by happens-before ([`HappensBefore::ordered_through_warp`]: CUTLASS
/// example 77's load warp, where only the warp's reconvergence orders lanes' waits before
/// the consumers' release).
pub(crate) fn check(
    program: &Program,
    m: &MbarrierReplay,
    hb: &HappensBefore,
) -> (Vec<SyncViolation>, Vec<SyncViolation>) {
    if m.errors {
        return (Vec::new(), Vec::new());
    }
    let ordered = |a: Cmd, b: Cmd| hb.ordered_in_lockstep(a, b);
    (phases(program, m, &ordered), invals(program, m, &ordered))
}

/// Rules 1-3 of the module doc.
fn phases(
    program: &Program,
    m: &MbarrierReplay,
    ordered: &dyn Fn(Cmd, Cmd) -> bool,
) -> Vec<SyncViolation> {
    let mut failures = Vec::new();
    // Whether `x` happens before `c` starts (`c_op`: its operation, `None` for a wait). A
    // wait polls from the point before it in its thread on: what orders its return (the
    // phase it observed) does not order its first poll, which may find the object
    // uninitialized or an earlier phase.
    let before = |x: Cmd, c: Cmd, c_op: Option<MbarrierOp>| -> bool {
        match c_op {
            Some(_) => ordered(x, c),
            None => c.1.checked_sub(1).is_some_and(|i| {
                let prev = (c.0, i);
                x == prev || ordered(x, prev)
            }),
        }
    };
    for obj in &m.objects {
        // Whether `c` starts after the initialization (any lane of its instruction).
        let initialized =
            |c: Cmd, c_op: Option<MbarrierOp>| -> bool { obj.inits().any(|j| before(j, c, c_op)) };
        // Whether `c` starts after phase `k` completes (`k = -1`: after the init): after
        // a wait that observed it, or after all its operations. An asynchronous one lands
        // after its issue, so only a later asynchronous arrival of the same thread follows
        // it (issue order, §7); a copy's complete_tx, nothing.
        let after = |k: i64, c: Cmd, c_op: Option<MbarrierOp>| -> bool {
            let Some(p) = usize::try_from(k).ok().and_then(|k| obj.phases.get(k)) else {
                return initialized(c, c_op);
            };
            let done_before = |a: Cmd, op: MbarrierOp| match op {
                MbarrierOp::CompleteTx => false,
                MbarrierOp::AsyncArrive => {
                    c_op == Some(MbarrierOp::AsyncArrive) && a.0 == c.0 && a.1 < c.1
                }
                _ => before(a, c, c_op),
            };
            p.observers.iter().any(|&o| o != c && before(o, c, c_op))
                || (p.node.is_some() && p.counted.iter().all(|&(a, op, _)| done_before(a, op)))
        };
        let mut fail = |kind, phase: i64, what, cmd| {
            failures.push(Failure {
                kind,
                addr: obj.addr,
                phase,
                what,
                cmd,
                inval: None,
            })
        };
        let first = obj.phases.first().filter(|p| p.node.is_some());
        for &w in &obj.early {
            if !initialized(w, None) {
                fail(ViolationKind::MbarrierUninitialized, -1, "wait", w);
            } else if let Some(p) = first {
                if !p.counted.iter().any(|&(a, _, _)| ordered(w, a)) {
                    fail(ViolationKind::MbarrierPhaseRace, -1, "late wait", w);
                }
            }
        }
        for (k, phase) in obj.phases.iter().enumerate() {
            let k = k as i64;
            let next = obj.phases.get(k as usize + 1).filter(|p| p.node.is_some());
            for &(c, op, _) in &phase.counted {
                if c == obj.init {
                    continue;
                }
                if !after(k - 1, c, Some(op)) {
                    let kind = if k == 0 {
                        ViolationKind::MbarrierUninitialized
                    } else {
                        ViolationKind::MbarrierPhaseRace
                    };
                    fail(kind, k, "operation", c);
                } else if op == MbarrierOp::ExpectTx
                    && phase.node.is_some()
                    // Ordered before any operation counted in the phase (an arrival, or the
                    // complete_tx of a copy issued after it: CUTLASS's arrive.expect_tx, then
                    // a second expect_tx, then the copies), it comes before the phase
                    // completes in every execution.
                    && !phase
                        .counted
                        .iter()
                        .any(|&(a, _, _)| a != c && ordered(c, a))
                {
                    fail(ViolationKind::MbarrierPhaseRace, k, "late expect_tx", c);
                }
            }
            for &w in &phase.observers {
                if k == 0 && !after(-1, w, None) {
                    fail(ViolationKind::MbarrierUninitialized, -1, "wait", w);
                } else if !after(k - 1, w, None) {
                    fail(ViolationKind::MbarrierPhaseRace, k, "early wait", w);
                } else if let Some(n) = next {
                    if !n.counted.iter().any(|&(a, _, _)| ordered(w, a)) {
                        fail(ViolationKind::MbarrierPhaseRace, k, "late wait", w);
                    }
                }
            }
        }
    }
    report(program, failures)
}

/// Rule 4 of the module doc: every use of an object happens before the `mbarrier.inval`
/// that ends it. A failure is reported but keeps the relation (the graph does not depend
/// on when the inval runs), so the race stage still runs.
fn invals(
    program: &Program,
    m: &MbarrierReplay,
    ordered: &dyn Fn(Cmd, Cmd) -> bool,
) -> Vec<SyncViolation> {
    // Each thread's asynchronous arrivals in issue order, with the phase they count in.
    let mut arrivals: FxHashMap<ThreadId, Vec<(u32, &Phase)>> = FxHashMap::default();
    for obj in &m.objects {
        for p in &obj.phases {
            for &((t, i), op, _) in &p.counted {
                if op == MbarrierOp::AsyncArrive {
                    arrivals.entry(t).or_default().push((i, p));
                }
            }
        }
    }
    for list in arrivals.values_mut() {
        list.sort_unstable_by_key(|&(i, _)| i);
    }
    let mut failures = Vec::new();
    for obj in &m.objects {
        let Some(iv) = obj.inval else {
            continue;
        };
        // Whether the asynchronous arrival `(t, i)` lands before `iv` through a later one of
        // its thread whose phase a wait ordered before `iv` observed: one thread's
        // `tcgen05` operations, commits included, complete in issue order (§7).
        let mut last_observed: FxHashMap<ThreadId, Option<u32>> = FxHashMap::default();
        let mut later_observed = |(t, i): Cmd| -> bool {
            let last = *last_observed.entry(t).or_insert_with(|| {
                let list = arrivals.get(&t)?;
                list.iter()
                    .rev()
                    .find(|(_, p)| p.observers.iter().any(|&o| ordered(o, iv)))
                    .map(|&(j, _)| j)
            });
            last.is_some_and(|j| j > i)
        };
        let mut fail = |phase, what, cmd| {
            failures.push(Failure {
                kind: ViolationKind::MbarrierUninitialized,
                addr: obj.addr,
                phase,
                what,
                cmd,
                inval: Some(iv),
            })
        };
        let uses = obj
            .inits()
            .chain(obj.early.iter().copied())
            .chain(obj.phases.iter().flat_map(|p| {
                let counted = p.counted.iter().map(|&(c, _, _)| c);
                counted.chain(p.observers.iter().copied())
            }));
        let mut late: Vec<Cmd> = uses.filter(|&c| c != iv && !ordered(c, iv)).collect();
        late.sort_unstable();
        late.dedup();
        for c in late {
            fail(-1, "after inval", c);
        }
        // An asynchronous copy's bytes and an asynchronous arrival land before their phase
        // completes, and only a wait that observed the phase orders that before the inval.
        for (p, k) in obj.phases.iter().zip(0i64..) {
            if p.observers.iter().any(|&o| ordered(o, iv)) {
                continue;
            }
            for &(c, op, _) in &p.counted {
                let late = match op {
                    MbarrierOp::CompleteTx => true,
                    MbarrierOp::AsyncArrive => !later_observed(c),
                    _ => false,
                };
                if late {
                    fail(k, "async after inval", c);
                }
            }
        }
    }
    report(program, failures)
}

/// What [`reused`] found: accesses of live objects' bytes, and those whose extent is only an
/// upper bound (the access may stop short of the object).
#[derive(Debug, Default)]
pub(crate) struct Reused {
    pub(crate) definite: Vec<SyncViolation>,
    pub(crate) possible: Vec<SyncViolation>,
}

/// The accesses (of the CTA's threads and of asynchronous copies) to a live object's bytes
/// (module doc, *The object's memory*). `hb` is the memory relation, with the copies as
/// agents; under `--warp-sync` lock-step orders lanes of a warp as in [`check`]. An access
/// not ordered with the object's `init` or `inval` is the race stage's (those are writes of
/// the bytes).
pub(crate) fn reused(program: &Program, m: &MbarrierReplay, hb: &HappensBefore) -> Reused {
    if m.errors || m.objects.is_empty() {
        return Reused::default();
    }
    let ordered = |a: Cmd, b: Cmd| hb.ordered_in_lockstep(a, b);
    let mut by_addr: Vec<(u32, usize)> = m
        .objects
        .iter()
        .enumerate()
        .map(|(k, o)| (o.addr, k))
        .collect();
    by_addr.sort_unstable();
    let n = program.threads.len();
    // Whether command `i + 1` of thread `t` is an init or inval of the object at `a`: the
    // access at `i` is then that operation's own write.
    let own = |t: usize, i: usize, a: u32| {
        program.threads[t].commands.get(i + 1).is_some_and(|c| {
            matches!(
                c.view(),
                CommandView::Mbarrier {
                    op: MbarrierOp::Init | MbarrierOp::Inval,
                    addr,
                    ..
                } if addr == a
            )
        })
    };
    // The bytes of every object lie in `lo..hi`: an access outside it (most of them) needs
    // no search.
    let (lo, hi) = match (by_addr.first(), by_addr.last()) {
        (Some(&(lo, _)), Some(&(hi, _))) => (u64::from(lo), u64::from(hi) + 8),
        _ => return Reused::default(),
    };
    let mut found: Vec<(usize, Cmd, InstId, bool)> = Vec::new();
    for t in 0..program.num_actors() {
        for (i, c) in program.actor_commands(t).iter().enumerate() {
            if !c.is_access() {
                continue;
            }
            let CommandView::Access {
                addr, len, approx, ..
            } = c.view()
            else {
                continue;
            };
            let end = u64::from(addr) + u64::from(len);
            if end <= lo || u64::from(addr) >= hi {
                continue;
            }
            let from = by_addr.partition_point(|&(a, _)| u64::from(a) + 8 <= u64::from(addr));
            for &(a, k) in by_addr[from..]
                .iter()
                .take_while(|&&(a, _)| u64::from(a) < end)
            {
                if t < n && own(t, i, a) {
                    continue;
                }
                let obj = &m.objects[k];
                let x = (ThreadId(t as u32), i as u32);
                let live = obj.inits().any(|j| ordered(j, x))
                    && obj.inval.is_none_or(|v| !ordered(v, x) && ordered(x, v));
                if live {
                    found.push((k, x, c.inst(), approx));
                }
            }
        }
    }
    if found.is_empty() {
        return Reused::default();
    }
    report_reused(program, m, found)
}

#[cold]
fn report_reused(
    program: &Program,
    m: &MbarrierReplay,
    mut found: Vec<(usize, Cmd, InstId, bool)>,
) -> Reused {
    let ws = program.warp_size();
    found.sort_unstable_by_key(|&(k, x, _, approx)| (approx, k, x));
    let mut out = Reused::default();
    for group in found.chunk_by(|a, b| (a.0, a.3) == (b.0, b.3)) {
        let (k, _, _, approx) = group[0];
        let obj = &m.objects[k];
        // An asynchronous copy is named by its issuing thread.
        let issuer = |t: ThreadId| program.agent(t).map_or(t, |c| c.issuer);
        let (ranges, who, at) = name_group(
            ws,
            group.iter().map(|&(_, x, _, _)| issuer(x.0)),
            group.iter().map(|&(_, _, i, _)| i),
        );
        let a = obj.addr;
        let init = inst(program, obj.init).0;
        let until = match obj.inval {
            Some(v) => format!(
                "and before its mbarrier.inval (instruction #{})",
                inst(program, v).0
            ),
            None => "with no mbarrier.inval before them".to_owned(),
        };
        let extent = if approx {
            " (with an over-approximated extent: the access may stop short of the object)"
        } else {
            ""
        };
        let message = format!(
            "mbarrier {a:#x}: {who} access its 8 bytes (instruction {at}){extent} after its \
             mbarrier.init (instruction #{init}) {until}; the PTX ISA requires mbarrier.inval \
             before an mbarrier object's memory is used for any other purpose"
        );
        let mut v = SyncViolation::new(ViolationKind::MbarrierReused, message);
        v.mbarrier = Some(a);
        let mut cmds = one_per_instruction(group.iter().map(|&(_, x, i, _)| CommandRef {
            thread: x.0,
            index: x.1,
            inst: i,
        }));
        cmds.push(cref(program, obj.init));
        cmds.extend(obj.inval.map(|c| cref(program, c)));
        v.commands = cmds;
        v.threads = ranges.into_iter().map(|(r, _)| r).collect();
        if approx {
            out.possible.push(v);
        } else {
            out.definite.push(v);
        }
    }
    out
}

#[cold]
fn report(program: &Program, mut failures: Vec<Failure>) -> Vec<SyncViolation> {
    let ws = program.warp_size();
    failures.sort_by_key(|f| (f.addr, f.phase, f.what, f.cmd));
    let mut out = Vec::new();
    let mut start = 0;
    while start < failures.len() {
        let f0 = &failures[start];
        let len = failures[start..]
            .iter()
            .take_while(|f| (f.addr, f.phase, f.what) == (f0.addr, f0.phase, f0.what))
            .count();
        let group = &failures[start..start + len];
        start += len;
        let (ranges, who, at) = name_group(
            ws,
            group.iter().map(|f| f.cmd.0),
            group.iter().map(|f| inst(program, f.cmd)),
        );
        let (a, k) = (f0.addr, f0.phase);
        // The inval a use is not ordered before, for the message.
        let iv = f0.inval.map_or_else(String::new, |c| {
            format!(" (instruction #{})", inst(program, c).0)
        });
        let message = match f0.what {
            "wait" => format!(
                "mbarrier {a:#x}: the wait of {who} (instruction {at}) is not ordered after the mbarrier.init; in another execution it runs on an uninitialized object"
            ),
            "after inval" => format!(
                "mbarrier {a:#x}: {who} use it (instruction {at}) without being ordered before its mbarrier.inval{iv}; in another execution they run on the invalidated object"
            ),
            "async after inval" => format!(
                "mbarrier {a:#x}: the asynchronous operations of {who} (instruction {at}: a copy's complete_tx or a tcgen05.commit's or cp.async's arrival) reach it in phase {k}, which no wait ordered before its mbarrier.inval{iv} observed; in another execution they land on the invalidated object"
            ),
            "operation" if k == 0 => format!(
                "mbarrier {a:#x}: {who} operate on it (instruction {at}) without being ordered after the mbarrier.init; in another execution they run first"
            ),
            "operation" => format!(
                "mbarrier {a:#x}: {who} register in phase {k} (instruction {at}) without being ordered after phase {} completes (after a wait that observed it, or after all its operations); in another execution they are counted in phase {}",
                k - 1,
                k - 1
            ),
            "late expect_tx" => format!(
                "mbarrier {a:#x}: the expect_tx of {who} (instruction {at}) in phase {k} is not ordered before any other operation of the phase (an arrival, or a copy's complete_tx); in another execution the phase completes without it and it is counted in phase {}",
                k + 1
            ),
            "early wait" => format!(
                "mbarrier {a:#x}: the wait of {who} (instruction {at}) observed phase {k} but is not ordered after phase {} completes; in another execution it returns observing an earlier phase of the same or the other parity",
                k - 1
            ),
            _ => format!(
                "mbarrier {a:#x}: the wait of {who} (instruction {at}) observed phase {k} but is not ordered before phase {} completes; in another execution it starts in phase {} of the same parity and waits for that instead",
                k + 1,
                k + 2
            ),
        };
        let mut v = SyncViolation::new(f0.kind, message);
        v.mbarrier = Some(a);
        v.generations = u32::try_from(k).ok().into_iter().collect();
        let mut cmds = one_per_instruction(group.iter().map(|f| cref(program, f.cmd)));
        cmds.extend(f0.inval.map(|c| cref(program, c)));
        v.commands = cmds;
        v.threads = ranges.into_iter().map(|(r, _)| r).collect();
        out.push(v);
    }
    out
}

/// The threads and instructions of a group of findings, named for its message: the threads
/// as ranges, those ranges as text (`who`), and the distinct instructions (`at`, `#12, #15`).
fn name_group(
    warp_size: u32,
    threads: impl Iterator<Item = ThreadId>,
    insts: impl Iterator<Item = InstId>,
) -> (Vec<(ThreadRange, ())>, String, String) {
    let mut threads: Vec<ThreadId> = threads.collect();
    threads.sort_unstable();
    threads.dedup();
    let ranges = group_threads(threads.into_iter().map(|t| (t, ())), warp_size);
    let who = join(ranges.iter().map(|(r, _)| r));
    let mut insts: Vec<InstId> = insts.collect();
    insts.sort_unstable();
    insts.dedup();
    let at = join(insts.iter().map(|i| format!("#{}", i.0)));
    (ranges, who, at)
}

/// `commands` with the first of each instruction only, in order.
fn one_per_instruction(commands: impl Iterator<Item = CommandRef>) -> Vec<CommandRef> {
    let mut out: Vec<CommandRef> = Vec::new();
    for c in commands {
        if !out.iter().any(|x| x.inst == c.inst) {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use weft_program::{
        AccessKind, BarrierCount, Command, CtaShape, Program, ThreadEnd, ThreadProgram,
    };

    use super::*;
    use crate::analyze;

    #[derive(Clone, Copy)]
    enum C {
        Init(u32),
        Arrive,
        ExpectTx(u32),
        ArriveTx(u32),
        CompleteTx(u32),
        Wait(u32),
        Sync,
        R(u32),
        W(u32),
        /// A lane of the `.sync` warp collective (execution event) with this id.
        Exec(u32),
        Inval,
        AsyncArrive,
    }

    /// Threads of warp size 1; every mbarrier command uses address `0x100 + 8 * bar`.
    fn program(threads: &[&[(u32, C)]]) -> Program {
        let n = threads.len() as u32;
        let threads = threads
            .iter()
            .enumerate()
            .map(|(t, cs)| {
                let mut commands: Vec<Command> = cs
                    .iter()
                    .enumerate()
                    .map(|(k, &(bar, c))| {
                        let i = InstId((t * 100 + k) as u32);
                        let a = 0x100 + 8 * bar;
                        let mb = |op, v| Command::mbarrier(op, a, v, i);
                        match c {
                            C::Init(n) => mb(MbarrierOp::Init, n),
                            C::Arrive => mb(MbarrierOp::Arrive, 1),
                            C::ExpectTx(x) => mb(MbarrierOp::ExpectTx, x),
                            C::ArriveTx(x) => mb(MbarrierOp::ArriveExpectTx, x),
                            C::CompleteTx(x) => mb(MbarrierOp::CompleteTx, x),
                            C::Wait(p) => mb(MbarrierOp::WaitParity, p),
                            C::Sync => {
                                Command::barrier(BarrierOp::Sync, 0, BarrierCount::All, true, i)
                            }
                            C::R(x) => Command::access(AccessKind::Read, x, 4, false, i),
                            C::W(x) => Command::access(AccessKind::Write, x, 4, false, i),
                            C::Exec(e) => Command::exec(weft_program::ExecOp::Sync, e, i),
                            C::Inval => mb(MbarrierOp::Inval, 0),
                            C::AsyncArrive => mb(MbarrierOp::AsyncArrive, 1),
                        }
                    })
                    .collect();
                commands.push(Command::exit(InstId(9999)));
                ThreadProgram {
                    commands,
                    end: ThreadEnd::Exited,
                    steps: Vec::new(),
                }
            })
            .collect();
        Program::new(CtaShape::linear(n), 1, threads).expect("a valid program")
    }

    fn kinds(p: &Program) -> Vec<&'static str> {
        analyze(p)
            .violations
            .iter()
            .map(|v| v.kind.as_str())
            .collect()
    }

    /// Whether the write of thread 0 (command `w`) is ordered before the read of thread 1
    /// (command `r`).
    fn write_before_read(p: &Program, w: u32, r: u32) -> bool {
        let a = analyze(p);
        assert!(a.violations.is_empty(), "{:?}", a.violations);
        let hb = a.happens_before.expect("well-synchronized");
        hb.ordered((ThreadId(0), w), (ThreadId(1), r))
    }

    #[test]
    fn producer_consumer_is_ordered_and_skipping_the_wait_is_not() {
        let producer: &[(u32, C)] = &[(0, C::Init(1)), (0, C::Sync), (0, C::W(0)), (0, C::Arrive)];
        let consumer: &[(u32, C)] = &[(0, C::Sync), (0, C::Wait(0)), (0, C::R(0))];
        let p = program(&[producer, consumer]);
        assert!(write_before_read(&p, 2, 2));
        let a = analyze(&p);
        assert_eq!(a.stats.mbarriers, 1);
        assert!(a.graph.to_dot().contains("mbarrier 0x100 phase 0"));
        let skip: &[(u32, C)] = &[(0, C::Sync), (0, C::R(0))];
        let p = program(&[producer, skip]);
        assert!(!write_before_read(&p, 2, 1));
    }

    /// Rule 4: thread 0 invalidates the mbarrier once its own wait returns; thread 1's
    /// wait on the same phase is not ordered before that without the named barrier
    /// between them (Triton's epilogue has one).
    #[test]
    fn every_use_happens_before_the_inval() {
        let t0: &[(u32, C)] = &[
            (0, C::Init(1)),
            (0, C::Sync),
            (0, C::Arrive),
            (0, C::Wait(0)),
            (0, C::Sync),
            (0, C::Inval),
        ];
        let t1: &[(u32, C)] = &[(0, C::Sync), (0, C::Wait(0)), (0, C::Sync)];
        assert_eq!(kinds(&program(&[t0, t1])), Vec::<&str>::new());
        let early = &t0[..4].iter().chain(&t0[5..]).copied().collect::<Vec<_>>();
        let late = &t1[..2];
        let a = analyze(&program(&[early, late]));
        let v: Vec<_> = a
            .violations
            .iter()
            .map(|v| (v.kind.as_str(), &v.message))
            .collect();
        assert_eq!(v.len(), 1, "{v:?}");
        assert_eq!(v[0].0, "mbarrier-uninitialized");
        assert!(
            v[0].1
                .contains("without being ordered before its mbarrier.inval"),
            "{v:?}"
        );
        assert_eq!(a.violations[0].threads.len(), 1);
        // The inval is among the commands the finding names (for its source line).
        let named = &a.violations[0].commands;
        assert_eq!(named.len(), 2, "{named:?}");
    }

    /// An asynchronous arrival lands after its issue: a later arrival of its thread is
    /// ordered after it only when that one is asynchronous too (one thread's commits
    /// arrive in issue order); a plain arrival may overtake it and count in its phase.
    #[test]
    fn an_asynchronous_arrival_is_done_only_before_later_ones() {
        // Count 1: each arrival completes a phase; the second counts in phase 1.
        let commits: &[(u32, C)] = &[(0, C::Init(1)), (0, C::AsyncArrive), (0, C::AsyncArrive)];
        assert_eq!(kinds(&program(&[commits])), Vec::<&str>::new());
        let overtaken: &[(u32, C)] = &[(0, C::Init(1)), (0, C::AsyncArrive), (0, C::Arrive)];
        assert_eq!(kinds(&program(&[overtaken])), ["mbarrier-phase-race"]);
        // The same with a synchronous first arrival is ordered by program order.
        let plain: &[(u32, C)] = &[(0, C::Init(1)), (0, C::Arrive), (0, C::Arrive)];
        assert_eq!(kinds(&program(&[plain])), Vec::<&str>::new());
        // A wait for phase 1 right after both commits may run before either lands (a
        // parity-1 wait returns at once in phase 0): an early wait.
        let early: &[(u32, C)] = &[
            (0, C::Init(1)),
            (0, C::AsyncArrive),
            (0, C::AsyncArrive),
            (0, C::Wait(1)),
        ];
        assert_eq!(kinds(&program(&[early])), ["mbarrier-phase-race"]);
    }

    #[test]
    fn lanes_of_one_warp_init_once() {
        // Both lanes of a 2-lane warp run the same `mbarrier.init` (instruction 1), then
        // arrive and wait: one initialization. As two warps, it is a reinitialization.
        let lane = |t: u32| ThreadProgram {
            commands: vec![
                Command::mbarrier(MbarrierOp::Init, 0x100, 2, InstId(1)),
                Command::mbarrier(MbarrierOp::Arrive, 0x100, 1, InstId(2)),
                Command::mbarrier(MbarrierOp::WaitParity, 0x100, 0, InstId(3)),
                Command::access(AccessKind::Write, 4 * t, 4, false, InstId(4)),
                Command::exit(InstId(9999)),
            ],
            end: ThreadEnd::Exited,
            steps: Vec::new(),
        };
        let mut p = Program::new(CtaShape::linear(2), 2, vec![lane(0), lane(1)]).unwrap();
        let a = analyze(&p);
        assert!(a.violations.is_empty(), "{:?}", a.violations);
        assert_eq!(a.stats.mbarriers, 1);
        // A second execution of the instruction by the same lanes is a reinitialization.
        for t in &mut p.threads {
            let again = t.commands[..3].to_vec();
            t.commands.splice(3..3, again);
        }
        assert_eq!(kinds(&p), ["mbarrier-reinit"]);
        for t in &mut p.threads {
            t.commands.drain(3..6);
        }
        // Two warps: the second init resets the first lane's arrival (and both then wait
        // forever).
        let p = Program::new(p.shape, 1, p.threads).unwrap();
        assert_eq!(kinds(&p), ["mbarrier-reinit", "deadlock", "deadlock"]);
    }

    #[test]
    fn a_wait_joins_the_previous_blocking_point() {
        // Thread 2 writes before the named barrier; thread 1 then waits on the mbarrier
        // (phase completed by thread 0) and reads: ordered through the barrier.
        let t0: &[(u32, C)] = &[(0, C::Init(1)), (0, C::Sync), (0, C::Arrive)];
        let t1: &[(u32, C)] = &[(0, C::Sync), (0, C::Wait(0)), (0, C::R(0))];
        let t2: &[(u32, C)] = &[(0, C::W(0)), (0, C::Sync)];
        let p = program(&[t0, t1, t2]);
        let a = analyze(&p);
        assert!(a.violations.is_empty(), "{:?}", a.violations);
        let hb = a.happens_before.unwrap();
        assert!(hb.ordered((ThreadId(2), 0), (ThreadId(1), 2)));
        assert!(hb.ordered((ThreadId(0), 2), (ThreadId(1), 2)));
        assert!(
            a.graph
                .nodes
                .iter()
                .any(|n| n.key == NodeKey::MbarrierWait(0x100))
        );
    }

    #[test]
    fn double_buffering_with_full_and_empty_is_ordered() {
        // bar 0/1: full[0]/full[1], bar 2/3: empty[0]/empty[1]; 4 iterations.
        let mut prod = vec![
            (0, C::Init(1)),
            (1, C::Init(1)),
            (2, C::Init(1)),
            (3, C::Init(1)),
            (0, C::Sync),
        ];
        let mut cons = vec![(0, C::Sync)];
        for i in 0..4u32 {
            let s = i % 2;
            if i >= 2 {
                prod.push((2 + s, C::Wait((i / 2 - 1) & 1)));
            }
            prod.push((0, C::W(16 * s)));
            prod.push((s, C::ArriveTx(64)));
            prod.push((s, C::CompleteTx(64)));
            cons.push((s, C::Wait((i / 2) & 1)));
            cons.push((0, C::R(16 * s)));
            if i + 2 < 4 {
                cons.push((2 + s, C::Arrive));
            }
        }
        let p = program(&[&prod, &cons]);
        let a = analyze(&p);
        assert!(a.violations.is_empty(), "{:?}", a.violations);
        let hb = a.happens_before.unwrap();
        // Iteration 2's write (stage 0) happens after iteration 0's read of stage 0.
        let w2 = prod
            .iter()
            .rposition(|&(_, c)| matches!(c, C::W(0)))
            .unwrap() as u32;
        let r0 = cons
            .iter()
            .position(|&(_, c)| matches!(c, C::R(0)))
            .unwrap() as u32;
        assert!(hb.ordered((ThreadId(1), r0), (ThreadId(0), w2)));
    }

    #[test]
    fn protocol_errors_have_one_kind_each() {
        assert_eq!(
            kinds(&program(&[&[(0, C::Arrive)]])),
            ["mbarrier-uninitialized"]
        );
        assert_eq!(
            kinds(&program(&[&[(0, C::Init(0))]])),
            ["mbarrier-invalid-count"]
        );
        assert_eq!(
            kinds(&program(&[&[(0, C::Init(1)), (0, C::Init(1))]])),
            ["mbarrier-reinit"]
        );
        assert_eq!(
            kinds(&program(&[&[
                (0, C::Init(2)),
                (0, C::Arrive),
                (0, C::Arrive),
                (0, C::Arrive)
            ]])),
            Vec::<&str>::new()
        );
        let p = program(&[&[(0, C::Init(1)), (0, C::ExpectTx(1 << 20))]]);
        assert_eq!(kinds(&p), ["mbarrier-overflow"]);
    }

    /// A loop's protocol errors are one violation per (kind, thread, instruction): later
    /// trips fold into the first, listing their phases where the error has one.
    #[test]
    fn a_loop_of_protocol_errors_is_one_violation_per_thread_and_instruction() {
        let mb = |op, inst| Command::mbarrier(op, 0x100, 1, InstId(inst));
        let thread = |mut commands: Vec<Command>| {
            commands.push(Command::exit(InstId(9999)));
            ThreadProgram {
                commands,
                end: ThreadEnd::Exited,
                steps: Vec::new(),
            }
        };
        // Two threads arrive 1,000 times each at instruction 7, then once at 8, on an
        // mbarrier nobody initialized.
        let arrivals = || {
            let mut c: Vec<Command> = (0..1000).map(|_| mb(MbarrierOp::Arrive, 7)).collect();
            c.push(mb(MbarrierOp::Arrive, 8));
            thread(c)
        };
        let p = Program::new(CtaShape::linear(2), 1, vec![arrivals(), arrivals()])
            .expect("a valid program");
        let a = analyze(&p);
        let mut seen: Vec<(u32, u32)> = a
            .violations
            .iter()
            .inspect(|v| assert_eq!(v.kind, ViolationKind::MbarrierUninitialized))
            .map(|v| (v.commands[0].thread.0, v.commands[0].inst.0))
            .collect();
        seen.sort_unstable();
        assert_eq!(seen, [(0, 7), (0, 8), (1, 7), (1, 8)]);
        // One thread's mbarrier expects two arrivals per phase; every trip arrives once,
        // then twice at once at instruction 3 (one too many), then once: one violation, at
        // phase 0, then phases 1 to 4.
        let mut c = vec![Command::mbarrier(MbarrierOp::Init, 0x100, 2, InstId(1))];
        for _ in 0..5 {
            c.push(mb(MbarrierOp::Arrive, 2));
            c.push(Command::mbarrier(MbarrierOp::Arrive, 0x100, 2, InstId(3)));
            c.push(mb(MbarrierOp::Arrive, 4));
        }
        let p = Program::new(CtaShape::linear(1), 1, vec![thread(c)]).expect("a valid program");
        let a = analyze(&p);
        assert_eq!(a.violations.len(), 1, "{:?}", a.violations);
        let v = &a.violations[0];
        assert_eq!(v.kind, ViolationKind::MbarrierOverflow);
        assert_eq!(v.commands[0].inst, InstId(3));
        assert_eq!(
            (v.generations.as_slice(), v.also.as_slice()),
            (&[0][..], &[1, 2, 3, 4][..])
        );
    }

    #[test]
    fn a_wait_that_never_returns_is_a_deadlock() {
        let p = program(&[&[(0, C::Init(2)), (0, C::Arrive), (0, C::Wait(0))]]);
        let a = analyze(&p);
        assert_eq!(kinds(&p), ["deadlock"]);
        let v = &a.violations[0];
        assert_eq!(v.mbarrier, Some(0x100));
        assert_eq!(v.counts, Some((1, 2)));
        assert!(v.message.contains("phase 0"), "{}", v.message);
    }

    /// The producer warp of a CuTe DSL mainloop, as threads 0 and 1 (its lanes) and a
    /// consumer thread 2: both lanes wait on the empty barrier (bar 1, observing phase -1),
    /// then only lane 0 writes the stage and arrives on the full barrier (bar 0). With
    /// `collective`, the lanes meet at an `elect.sync` between the wait and the arrival.
    fn elected_producer(collective: bool, lane1_writes: bool) -> Program {
        let mut lane0 = vec![
            (0, C::Init(1)),
            (1, C::Init(1)),
            (0, C::Sync),
            (1, C::Wait(1)),
        ];
        let mut lane1 = vec![(0, C::Sync)];
        if lane1_writes {
            lane1.push((0, C::W(4)));
        }
        lane1.push((1, C::Wait(1)));
        if collective {
            lane0.push((0, C::Exec(7)));
            lane1.push((0, C::Exec(7)));
        }
        lane0.extend([(0, C::W(0)), (0, C::Arrive)]);
        let consumer: &[(u32, C)] = &[
            (0, C::Sync),
            (0, C::Wait(0)),
            (0, C::R(0)),
            (0, C::R(4)),
            (1, C::Arrive),
        ];
        program(&[&lane0, &lane1, consumer])
    }

    #[test]
    fn an_elect_sync_orders_the_lanes_waits_before_the_elected_arrival() {
        // Without the rendezvous, lane 1's wait may start after the consumer released the
        // stage (phase 0 of the empty barrier) and then wait for phase 1 instead.
        assert_eq!(
            kinds(&elected_producer(false, false)),
            ["mbarrier-phase-race"]
        );
        let p = elected_producer(true, false);
        assert_eq!(kinds(&p), Vec::<&str>::new());
        let a = analyze(&p);
        assert!(a.graph.nodes.iter().any(|n| n.key == NodeKey::Exec(7)));
        let hb = a.happens_before.expect("well-synchronized");
        // The elected lane's write reaches the consumer through the full barrier.
        assert!(hb.ordered((ThreadId(0), 5), (ThreadId(2), 2)));
    }

    #[test]
    fn an_elect_sync_orders_no_memory() {
        // Lane 1 writes before the rendezvous; the consumer reads after a wait that observed
        // the elected lane's arrival. In time the write comes first, but PTX gives the
        // collective no memory ordering: the write is not released to the consumer.
        let p = elected_producer(true, true);
        let a = analyze(&p);
        assert!(a.violations.is_empty(), "{:?}", a.violations);
        let hb = a.happens_before.expect("well-synchronized");
        assert!(!hb.ordered((ThreadId(1), 1), (ThreadId(2), 3)));
        assert!(!hb.ordered((ThreadId(1), 1), (ThreadId(0), 6)));
        assert!(hb.ordered((ThreadId(0), 5), (ThreadId(2), 2)));
    }

    #[test]
    fn unordered_operations_are_phase_races() {
        // Two arrivals of a count-1 mbarrier by unordered threads: which completes phase 0
        // depends on the interleaving.
        let t0: &[(u32, C)] = &[(0, C::Init(1)), (0, C::Sync), (0, C::Arrive)];
        let t1: &[(u32, C)] = &[(0, C::Sync), (0, C::Arrive)];
        assert_eq!(kinds(&program(&[t0, t1])), ["mbarrier-phase-race"]);
        // An operation not ordered after the init.
        let t0: &[(u32, C)] = &[(0, C::Init(2)), (0, C::Arrive)];
        let t1: &[(u32, C)] = &[(0, C::Arrive)];
        assert_eq!(kinds(&program(&[t0, t1])), ["mbarrier-uninitialized"]);
        // Parity aliasing: thread 1's wait for parity 0 observed phase 0, but phase 1 may
        // complete before it starts (thread 0 arrives twice without waiting).
        let t0: &[(u32, C)] = &[
            (0, C::Init(1)),
            (0, C::Sync),
            (0, C::Arrive),
            (0, C::Arrive),
        ];
        let t1: &[(u32, C)] = &[(0, C::Sync), (0, C::Wait(0))];
        assert!(kinds(&program(&[t0, t1])).contains(&"mbarrier-phase-race"));
        // A late expect_tx: the arrival may complete the phase before it.
        let t0: &[(u32, C)] = &[(0, C::Init(1)), (0, C::Sync), (0, C::Arrive)];
        let t1: &[(u32, C)] = &[(0, C::Sync), (0, C::ExpectTx(8)), (0, C::CompleteTx(8))];
        let p = program(&[t1, t0]);
        assert!(
            kinds(&p).contains(&"mbarrier-phase-race"),
            "{:?}",
            kinds(&p)
        );
    }

    /// The object's memory: an access of a live object's bytes (ordered after its init, not
    /// after an inval) is `mbarrier-reused`, and keeps the relation; after the inval, past
    /// the object's 8 bytes, or unordered with the init (the race stage's), it is not.
    #[test]
    fn a_live_objects_bytes_are_not_accessed() {
        let live: &[(u32, C)] = &[(0, C::Init(1)), (0, C::Arrive), (0, C::Wait(0))];
        let with =
            |extra: &[(u32, C)]| -> Vec<(u32, C)> { live.iter().chain(extra).copied().collect() };
        let a = analyze(&program(&[&with(&[(0, C::W(0x104))])]));
        assert_eq!(
            a.violations
                .iter()
                .map(|v| v.kind.as_str())
                .collect::<Vec<_>>(),
            ["mbarrier-reused"]
        );
        assert!(a.happens_before.is_some());
        assert_eq!(a.violations[0].mbarrier, Some(0x100));
        assert!(kinds(&program(&[&with(&[(0, C::Inval), (0, C::W(0x100))])])).is_empty());
        assert!(kinds(&program(&[&with(&[(0, C::W(0x108))])])).is_empty());
        // Another thread's read, ordered after the init by a barrier, before the inval.
        let t0 = with(&[(0, C::Sync), (0, C::Sync), (0, C::Inval)]);
        let t1: &[(u32, C)] = &[(0, C::Sync), (0, C::R(0x100)), (0, C::Sync)];
        let a = analyze(&program(&[&t0, t1]));
        assert_eq!(a.violations.len(), 1, "{:?}", a.violations);
        assert!(
            a.violations[0]
                .message
                .contains("and before its mbarrier.inval"),
            "{}",
            a.violations[0].message
        );
        assert_eq!(a.violations[0].threads[0].first, ThreadId(1));
        // Not ordered after the init: a race with the init's write, not this check's.
        let t1: &[(u32, C)] = &[(0, C::W(0x100))];
        assert!(kinds(&program(&[live, t1])).is_empty());
        // An over-approximated extent that reaches the object: undecided, not a violation.
        let mut p = program(&[&with(&[(0, C::R(0xf0))])]);
        let c = &mut p.threads[0].commands[3];
        *c = Command::approx_access(AccessKind::Read, 0xf0, 32, false, c.inst());
        let a = analyze(&p);
        assert!(a.violations.is_empty(), "{:?}", a.violations);
        assert_eq!(a.undecided.len(), 1);
        assert!(a.undecided[0].message.contains("over-approximated extent"));
    }
}
