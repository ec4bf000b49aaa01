//! Step 1: replay the synchronization commands of every thread through
//! [`BarrierFile`] (one trace of the formal semantics), assigning each registration its
//! generation and building one [`DynamicBarrier`] per completed generation.
//!
//! Scheduling: threads start in id order; a thread runs until it blocks, exits or ends;
//! threads woken by a completion are queued after the ones already ready. Any schedule is
//! as good as another for well-synchronized programs (they give every trace the same
//! generations), and for the others the checks of [`crate::check`] find the violation
//! from this one trace (WEFT paper, Theorem 1).

use rustc_hash::FxHashSet;
use weft_program::{
    BarrierConfig, BarrierFile, BarrierKey, BarrierOp, Command, CommandView, Event, InstId,
    Participant, Program, SyncError, ThreadEnd, ThreadId,
};

use crate::report::{
    BlockedGeneration, CommandRef, SyncViolation, ThreadRange, ThreadState, ViolationKind,
    group_threads, inst_at, join,
};
use crate::trace::Trace;
use crate::{DynamicBarrier, DynamicBarrierId, Participants, Registration, Registrations};

/// The registration a batch of lanes makes ([`Replayer::register_followers`]).
#[derive(Debug, Clone, Copy)]
enum Registering {
    /// A named-barrier operation: id, count, `.aligned`.
    Named(u32, weft_program::BarrierCount, bool),
    /// `bar.warp.sync` with this mask.
    Warp(u32),
}

/// Where a thread is in the replay.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Cursor {
    Ready,
    Blocked {
        key: BarrierKey,
        generation: u32,
        command: u32,
    },
    Exited,
    /// The program ended without exit (prefix of a stopped emulation, or a trap).
    Ended,
    /// The thread's registration put a barrier into an error state.
    Errored,
    /// Blocked at an mbarrier wait ([`crate::mbarrier`] keeps the waiters).
    MbarrierWait,
    /// Blocked at an execution event ([`crate::exec`] keeps the waiters).
    ExecWait,
}

struct Replayer<'p> {
    program: &'p Program,
    warp_size: u32,
    file: BarrierFile,
    /// The commands that are not shared accesses, per class of lanes.
    lists: Lists,
    /// Per thread, its place: its class (high half) and how many commands of the class's
    /// list it has taken (low half). Two lanes at the same place have the same next
    /// command: one comparison tells.
    place: Vec<u64>,
    cursors: Vec<Cursor>,
    queue: Queue,
    out: Trace,
    exit_order: Vec<ThreadId>,
    /// Per-thread stamp: `node + 1` when the thread is a participant of the node being
    /// completed.
    stamp: Vec<u32>,
    /// Per-warp stamp, `node + 1` when a lane of the warp participates in the node being
    /// completed (dedups warps without sorting the participants), with the number of its
    /// lanes that do.
    warp_stamp: Vec<(u32, u32)>,
    /// Scratch: the warps of the node being completed.
    warps: Vec<u32>,
    /// Per-thread stamp of the lanes of the warp gather being built ([`Self::gathers`]).
    lane_stamp: Vec<u32>,
    /// Per warp, how many of its lanes have exited.
    warp_exits: Vec<u32>,
    /// Warp gathers considered so far (the stamp of [`Self::lane_stamp`]).
    gathers: u32,
    /// Scratch: the lanes of one warp registering together ([`Self::register_followers`]).
    batch: Vec<Participant>,
    /// An emptied event list, for the next run's registration (one list, not one per run).
    spare_events: Vec<Event>,
    /// Whether a completion left the node of an arrive's registration to [`arrive_nodes`].
    deferred: bool,
    /// Whether [`Self::register_followers`] takes the followers, and the other shortcuts
    /// for a warp's lanes are taken (off: the reference, every lane on its own).
    batching: bool,
    error: bool,
}

pub(crate) fn replay(program: &Program) -> Trace {
    replay_with(program, true)
}

/// [`replay`] registering every lane in its own run (the lanes of a warp that follow each
/// other in the queue are not taken together), with the general path wherever the replay
/// has a shortcut for a warp's lanes (an arrive's gather node, the uncounted lanes of a
/// completion, a list of commands shared by the lanes of a class): the reference the tests
/// compare with.
#[cfg(test)]
pub(crate) fn replay_one_by_one(program: &Program) -> Trace {
    replay_with(program, false)
}

fn replay_with(program: &Program, batching: bool) -> Trace {
    let n = program.threads.len();
    let cta = program.num_threads().max(n as u32);
    let warp_size = program.warp_size();
    let (lists, arrivals) = sync_lists(program, batching);
    let mut r = Replayer {
        program,
        warp_size,
        file: BarrierFile::new(cta, warp_size),
        out: Trace {
            nodes: Vec::new(),
            // Capacity for every barrier and mbarrier command: the registrations of a thread
            // are pushed one by one, growing would copy them again.
            registrations: {
                let capacity = |t: usize| lists.lists[lists.class[t] as usize].len();
                if batching {
                    Registrations::sharing(n, warp_size, capacity)
                } else {
                    Registrations::own(n, capacity)
                }
            },
            exit_index: vec![None; n],
            uncounted: Vec::new(),
            violations: Vec::new(),
            stuck: false,
            mbarriers: Default::default(),
            exec: crate::exec::ExecReplay::new(arrivals),
        },
        exit_order: Vec::new(),
        stamp: vec![0; n],
        warp_stamp: vec![(0, 0); (n as u32).div_ceil(warp_size) as usize],
        warps: Vec::new(),
        lane_stamp: vec![0; n],
        warp_exits: vec![0; (n as u32).div_ceil(warp_size) as usize],
        gathers: 0,
        batch: Vec::new(),
        spare_events: Vec::new(),
        deferred: false,
        batching,
        error: false,
        place: lists.class.iter().map(|&k| u64::from(k) << 32).collect(),
        lists,
        cursors: vec![Cursor::Ready; n],
        queue: Queue {
            items: (0..n as u32).collect(),
            head: 0,
        },
    };
    while let Some(t) = r.queue.pop_front() {
        r.run(t);
        if r.error {
            break;
        }
    }
    if r.error {
        r.out.stuck = true;
    } else {
        r.finish();
    }
    r.out.registrations.settle();
    if r.deferred {
        arrive_nodes(&mut r.out);
    }
    r.out
}

/// Gives every arrive's registration at a named or warp barrier the node of its
/// generation, if that completed: what [`Replayer::complete`] gives the registrations of
/// its participants, which are the registrations at the generation. Done here for the
/// arrives, in one pass over each thread's registrations, because an arriving lane has
/// usually registered again by the time its generation completes (its registration is not
/// the last one), and nothing in the replay reads an arrive's node (the mbarrier and
/// execution-event waits ask for the last blocking registration's).
fn arrive_nodes(out: &mut Trace) {
    let gens = crate::trace::Generations::of(&out.nodes);
    // A list shared by several threads is changed once, and the same way for each: the
    // node is a function of the registration.
    for regs in out.registrations.lists_mut() {
        for r in regs.iter_mut() {
            if r.op.blocks() || r.node().is_some() {
                continue;
            }
            if let Some(n) = r.key.barrier().and_then(|k| gens.get(k, r.generation)) {
                r.set_node(n);
            }
        }
    }
}

/// The ready threads in the order they run: a vector read from `head` on, so that
/// [`Replayer::register_followers`] reads the lanes queued behind the running one as one
/// slice, and taking them is one addition.
#[derive(Debug, Default)]
struct Queue {
    items: Vec<u32>,
    head: usize,
}

impl Queue {
    /// Threads taken from the front before the vector is moved down (amortized: at least
    /// as many as are left).
    const COMPACT: usize = 1 << 10;

    fn pop_front(&mut self) -> Option<u32> {
        let t = *self.items.get(self.head)?;
        self.head += 1;
        if self.head == self.items.len() {
            self.items.clear();
            self.head = 0;
        } else if self.head >= Self::COMPACT && 2 * self.head >= self.items.len() {
            self.items.drain(..self.head);
            self.head = 0;
        }
        Some(t)
    }

    fn push_back(&mut self, t: u32) {
        self.items.push(t);
    }

    /// The queued threads, first to run first.
    fn front(&self) -> &[u32] {
        &self.items[self.head..]
    }

    /// Takes the first `k` threads (at most [`Self::front`]'s length).
    fn skip(&mut self, k: usize) {
        self.head += k;
        if self.head >= self.items.len() {
            self.items.clear();
            self.head = 0;
        }
    }
}

/// The commands of every thread that are not shared accesses (shared accesses synchronize
/// nothing: the replay steps over them), with their indices, shared by the lanes of a warp
/// whose lists are the same: a *class*. The lanes of a warp usually run the same
/// synchronization commands, so one list (read once, by the pass before the replay) serves
/// all 32, and a lane's place in it is one number; a lane queued behind a lane of its class
/// at the same place has the same next command without reading it.
#[derive(Debug, Default)]
struct Lists {
    /// Per class, the commands of its lanes that are not shared accesses and their indices.
    lists: Vec<Vec<(u32, Command)>>,
    /// Per thread, its class.
    class: Vec<u32>,
}

/// Classes of a warp a lane is compared with before it gets a class of its own (a warp
/// whose lanes run many different lists is not worth comparing every lane with each).
const CLASSES_TRIED: usize = 4;

/// The commands of `commands` that are not shared accesses, with their indices.
fn sync_list(commands: &[Command]) -> Vec<(u32, Command)> {
    commands
        .iter()
        .enumerate()
        .filter(|(_, c)| !c.is_access())
        .map(|(i, &c)| (i as u32, c))
        .collect()
}

/// Whether the commands of `commands` that are not shared accesses are `list`, index for
/// index (no list built: the common case of a lane like the first of its warp).
fn same_list(list: &[(u32, Command)], commands: &[Command]) -> bool {
    // Each of the list's commands at its index, and no other command that is not an
    // access: the same commands at the same indices. The list holds no access, and a
    // command that is not an access is equal to another exactly when `moved_mismatch` is 0
    // (two words compared, not field by field).
    list.iter().all(|&(i, c)| {
        commands
            .get(i as usize)
            .is_some_and(|o| c.moved_mismatch(o, 0) == 0)
    }) && sync_count(commands) == list.len()
}

/// How many of `commands` are not shared accesses: four at a time (this is the pass over
/// every command of every lane, mostly accesses).
fn sync_count(commands: &[Command]) -> usize {
    let mut quads = commands.chunks_exact(4);
    let mut n = 0;
    for q in &mut quads {
        n += usize::from(!q[0].is_access())
            + usize::from(!q[1].is_access())
            + usize::from(!q[2].is_access())
            + usize::from(!q[3].is_access());
    }
    n + quads.remainder().iter().filter(|c| !c.is_access()).count()
}

/// [`Lists`] of `program`, and the arrivals of every execution event
/// ([`crate::exec::ExecReplay::new`]): one pass over every command, on two threads for
/// large programs. `share`: lanes of a warp with the same list share one (off: every thread
/// has its own, the reference the tests compare with).
fn sync_lists(program: &Program, share: bool) -> (Lists, crate::exec::Arrivals) {
    const MIN_COMMANDS: usize = 1 << 16;
    let ws = program.warp_size().max(1) as usize;
    // `threads` starts at a warp's first lane.
    let of = |threads: &[weft_program::ThreadProgram]| {
        let mut arrivals = crate::exec::Arrivals::default();
        let mut out = Lists::default();
        // Per class, the commands of its list that `arrivals` counts (not named or warp
        // barriers: an exit, execution events), in order.
        let mut counted: Vec<Vec<Command>> = Vec::new();
        for warp in threads.chunks(ws) {
            let first = out.lists.len();
            for t in warp {
                let tried = first..out.lists.len().min(first + CLASSES_TRIED);
                let class = match tried
                    .filter(|_| share)
                    .find(|&k| same_list(&out.lists[k], &t.commands))
                {
                    Some(k) => k,
                    None => {
                        out.lists.push(sync_list(&t.commands));
                        // Named and warp barriers, the most common, are not decoded.
                        counted.push(
                            out.lists[out.lists.len() - 1]
                                .iter()
                                .filter(|(_, c)| !c.is_sync())
                                .map(|&(_, c)| c)
                                .collect(),
                        );
                        out.lists.len() - 1
                    }
                };
                for c in &counted[class] {
                    arrivals.count(c);
                }
                out.class.push(class as u32);
            }
        }
        (out, arrivals)
    };
    let threads = &program.threads;
    if program.num_commands() < MIN_COMMANDS || !crate::two_threads() {
        return of(threads);
    }
    // Split at a warp's first lane: a class is within a warp.
    let half = (threads.len() / 2).div_ceil(ws) * ws;
    let (a, b) = threads.split_at(half.min(threads.len()));
    let ((mut lists, mut arrivals), (more, others)) = rayon::join(|| of(a), || of(b));
    let base = lists.lists.len() as u32;
    lists.lists.extend(more.lists);
    lists.class.extend(more.class.iter().map(|&k| k + base));
    arrivals.merge(others);
    (lists, arrivals)
}

impl Replayer<'_> {
    fn inst(&self, thread: ThreadId, command: u32) -> InstId {
        inst_at(self.program, thread, command)
    }

    fn cref(&self, p: Participant) -> CommandRef {
        CommandRef {
            thread: p.thread,
            index: p.command,
            inst: self.inst(p.thread, p.command),
        }
    }

    fn range(&self, t: ThreadId) -> ThreadRange {
        ThreadRange {
            first: t,
            last: t,
            warp_size: self.warp_size,
        }
    }

    /// Thread `t`'s next command that is not a shared access and its index (the program's
    /// length and `None` when none is left).
    fn next_sync(&self, t: u32) -> (u32, Option<Command>) {
        let place = self.place[t as usize];
        let list = &self.lists.lists[(place >> 32) as usize];
        match list.get(place as u32 as usize) {
            Some(&(pc, c)) => (pc, Some(c)),
            None => (self.program.threads[t as usize].commands.len() as u32, None),
        }
    }

    /// Thread `t` takes the command [`Self::next_sync`] named.
    fn take_sync(&mut self, t: u32) {
        self.place[t as usize] += 1;
    }

    /// Runs thread `t` until it blocks, exits, ends or errs.
    fn run(&mut self, t: u32) {
        if self.cursors[t as usize] != Cursor::Ready {
            return;
        }
        let mut t = t;
        let mut thread = ThreadId(t);
        let mut program = &self.program.threads[t as usize];
        loop {
            let (pc, cmd) = self.next_sync(t);
            let Some(cmd) = cmd else {
                if program.end == ThreadEnd::Exited {
                    self.exit(thread, pc);
                } else {
                    self.cursors[t as usize] = Cursor::Ended;
                }
                return;
            };
            self.take_sync(t);
            // The thread waits for its warp (and a blocking operation for the generation)
            // until the events say otherwise.
            let block = |key: BarrierKey, file: &BarrierFile| Cursor::Blocked {
                key,
                generation: file.completed_generations(key) + 1,
                command: pc,
            };
            let result = match cmd.view() {
                CommandView::Barrier {
                    op,
                    id,
                    count,
                    aligned,
                } => {
                    let p = Participant {
                        thread,
                        command: pc,
                        op,
                    };
                    if id >= weft_program::NUM_NAMED_BARRIERS {
                        self.file.register(p, id, count, cmd.inst(), aligned)
                    } else {
                        let cursor = block(BarrierKey::Named(id), &self.file);
                        self.cursors[t as usize] = cursor;
                        // The lanes that register with this one, up to the one that
                        // completes the warp's gather: that lane runs on.
                        let (last, result) = self.register_followers(
                            p,
                            cmd,
                            Registering::Named(id, count, aligned),
                            cursor,
                        );
                        if last != thread {
                            (t, thread) = (last.0, last);
                            program = &self.program.threads[t as usize];
                        }
                        result
                    }
                }
                CommandView::WarpSync { mask } => {
                    let p = Participant {
                        thread,
                        command: pc,
                        op: BarrierOp::Sync,
                    };
                    let cursor = block(BarrierKey::Warp(t / self.warp_size), &self.file);
                    self.cursors[t as usize] = cursor;
                    let (last, result) =
                        self.register_followers(p, cmd, Registering::Warp(mask), cursor);
                    if last != thread {
                        (t, thread) = (last.0, last);
                        program = &self.program.threads[t as usize];
                    }
                    result
                }
                CommandView::Exit => {
                    self.exit(thread, pc);
                    return;
                }
                CommandView::Mbarrier { op, addr, value } => {
                    let mut woken = Vec::new();
                    let blocks = crate::mbarrier::step(
                        &mut self.out,
                        self.program,
                        thread,
                        pc,
                        op,
                        addr,
                        value,
                        &mut woken,
                    );
                    for w in woken {
                        self.cursors[w.index()] = Cursor::Ready;
                        self.queue.push_back(w.0);
                    }
                    if blocks {
                        self.cursors[t as usize] = Cursor::MbarrierWait;
                        return;
                    }
                    continue;
                }
                CommandView::Exec { op, event } => {
                    let mut woken = Vec::new();
                    let blocks =
                        crate::exec::step(&mut self.out, thread, pc, op, event, &mut woken);
                    for w in woken {
                        if w != thread {
                            self.cursors[w.index()] = Cursor::Ready;
                            self.queue.push_back(w.0);
                        }
                    }
                    if blocks {
                        self.cursors[t as usize] = Cursor::ExecWait;
                        return;
                    }
                    continue;
                }
                CommandView::Access { .. } => continue,
            };
            match result {
                Ok(events) => self.events(events, Some(thread)),
                Err(e) => {
                    self.cursors[t as usize] = Cursor::Errored;
                    self.sync_error(e);
                    return;
                }
            }
            if self.error || self.cursors[t as usize] != Cursor::Ready {
                return;
            }
        }
    }

    /// Registers `p`, a named-barrier operation or `bar.warp.sync` `cmd` of the running
    /// thread (its cursor set to `cursor`), together with the lanes of its warp queued right
    /// behind it that are ready and whose next command is `cmd` too, up to the lane that
    /// completes the warp's gather (named barrier) or the generation (warp barrier). In this
    /// schedule each of those lanes would run next, register and wait (its run ends there),
    /// so they register in queue order as their own runs would. Returns the lane whose
    /// registration is the last (the thread that runs on) and its result.
    fn register_followers(
        &mut self,
        p: Participant,
        cmd: Command,
        registering: Registering,
        cursor: Cursor,
    ) -> (ThreadId, Result<Vec<Event>, SyncError>) {
        let (t, ws) = (p.thread.0, self.warp_size);
        let warp = t / ws;
        let mut lanes = std::mem::take(&mut self.batch);
        lanes.clear();
        lanes.push(p);
        let missing = match registering {
            Registering::Named(..) => self.file.gather_missing(warp) as usize,
            // `register_warp_run` takes the lanes that fit the generation.
            Registering::Warp(_) => ws as usize,
        };
        // Lanes already taken (a thread may be queued twice; only its first run runs).
        if self.batching && lanes.len() < missing && ws <= 64 {
            let first = warp * ws;
            let mut taken = 1u64 << (t - first);
            // The running lane took `cmd`: a lane of its class that has not taken it yet is
            // at the same command.
            let place = self.place[t as usize] - 1;
            // The lanes that can follow: at most the queue's front, and one fewer than are
            // missing (the running lane is one); read through local slices.
            let front = self.queue.front();
            let front = &front[..front.len().min(missing - lanes.len())];
            lanes.reserve(front.len());
            let (cursors, places) = (&self.cursors[..], &self.place[..]);
            // Thread `q`'s lane when it is a lane of the warp not yet taken and ready to run.
            let ready = |q: u32, taken: u64| {
                let lane = q.wrapping_sub(first);
                (lane < ws
                    && taken & (1 << lane) == 0
                    && cursors.get(q as usize) == Some(&Cursor::Ready))
                .then_some(lane)
            };
            // First the lanes at the running lane's place (the common case): checked without
            // building anything, then listed in one pass, all at `p.command`.
            let mut k = 0;
            for &q in front {
                match ready(q, taken) {
                    Some(lane) if places.get(q as usize) == Some(&place) => {
                        taken |= 1 << lane;
                        k += 1;
                    }
                    _ => break,
                }
            }
            lanes.extend(front[..k].iter().map(|&q| Participant {
                thread: ThreadId(q),
                command: p.command,
                op: p.op,
            }));
            // From the first lane that is not: each lane checked and listed in turn.
            for &q in &front[k..] {
                let Some(lane) = ready(q, taken) else {
                    break;
                };
                let pc = if places.get(q as usize) == Some(&place) {
                    p.command
                } else {
                    match self.next_sync(q) {
                        (pc, Some(next)) if next == cmd => pc,
                        _ => break,
                    }
                };
                taken |= 1 << lane;
                lanes.push(Participant {
                    thread: ThreadId(q),
                    command: pc,
                    op: p.op,
                });
            }
        }
        let mut events = std::mem::take(&mut self.spare_events);
        let (n, result) = match registering {
            Registering::Named(id, count, aligned) => {
                self.file
                    .register_run_into(&lanes, id, count, cmd.inst(), aligned, &mut events)
            }
            Registering::Warp(mask) => self.file.register_warp_run_into(&lanes, mask, &mut events),
        };
        let result = result.map(|()| events);
        // The followers that registered took their step; the others stay queued.
        let followers = n.max(1) - 1;
        self.queue.skip(followers);
        let (cursors, places) = (&mut self.cursors[..], &mut self.place[..]);
        for q in &lanes[1..=followers] {
            let i = q.thread.index();
            let mut c = cursor;
            if let Cursor::Blocked { command, .. } = &mut c {
                *command = q.command;
            }
            cursors[i] = c;
            places[i] += 1;
        }
        let last = lanes[n.max(1) - 1].thread;
        self.batch = lanes;
        (last, result)
    }

    /// Applies what a registration or exit caused. `current` is the running thread (it is
    /// not queued; it continues when its cursor is ready).
    fn events(&mut self, mut events: Vec<Event>, current: Option<ThreadId>) {
        for e in events.drain(..) {
            match e {
                Event::WarpRegistered {
                    key,
                    generation,
                    lanes,
                } => self.warp_registered(key, generation, lanes, current),
                Event::Completed(c) => self.complete(c, current),
            }
        }
        if self.spare_events.capacity() == 0 {
            self.spare_events = events;
        }
    }

    /// A warp registered: record the generation of each lane, release the non-blocking
    /// lanes. Lanes of a non-blocking operation (`bar.arrive`) waited for each other: when
    /// there was more than one lane (or an exited lane completed the gather), that wait
    /// is a gather node of the graph.
    // Not inlined into `events` (with both this and `complete` inlined there, saxpy512's
    // replay ran 3 M instructions more).
    #[inline(never)]
    fn warp_registered(
        &mut self,
        key: BarrierKey,
        generation: u32,
        lanes: Vec<Participant>,
        current: Option<ThreadId>,
    ) {
        let ws = self.warp_size;
        let w = lanes[0].thread.0 / ws;
        // Lanes of an arrive that waited for each other: a gather node (below).
        let gather = ws > 1 && matches!(key, BarrierKey::Named(_)) && !lanes[0].op.blocks();
        // When no lane of the warp has exited, the node's id is known before the lanes'
        // registrations are pushed, which then carry it at once: no second pass.
        // (The reference replay takes the general path below.)
        let early = (self.batching
            && gather
            && self.warp_exits.get(w as usize) == Some(&0)
            && lanes.len() >= 2)
            .then_some(DynamicBarrierId(self.out.nodes.len() as u32));
        // The lanes' registrations differ only in their commands and operations.
        let mut proto = Registration::new(0, key.into(), generation, BarrierOp::Sync);
        if let Some(id) = early {
            proto.set_gather(id);
        }
        self.out.registrations.push_lanes(w as usize, proto, &lanes);
        // Local slices: nothing the loop writes moves them.
        let cursors = &mut self.cursors[..];
        let queue = &mut self.queue;
        for p in &lanes {
            let cursor = &mut cursors[p.thread.index()];
            if p.op.blocks() {
                *cursor = Cursor::Blocked {
                    key,
                    generation,
                    command: p.command,
                };
            } else if matches!(cursor, Cursor::Blocked { .. }) {
                *cursor = Cursor::Ready;
                if Some(p.thread) != current {
                    queue.push_back(p.thread.0);
                }
            }
        }
        if !gather {
            // The list goes back to the barrier file, for a later gather to fill.
            self.file.recycle_lanes(lanes);
            return;
        }
        if early.is_some() {
            // No exited lane to count: the node is the lanes.
            self.out.nodes.push(DynamicBarrier {
                key: key.into(),
                generation,
                expected: lanes.len() as u32,
                participants: Participants::of(&lanes),
                exited: Vec::new(),
                gather: true,
            });
            self.file.recycle_lanes(lanes);
            return;
        }
        let n = self.program.threads.len() as u32;
        self.gathers = self.gathers.wrapping_add(1);
        if self.gathers == 0 {
            self.lane_stamp.fill(0);
            self.gathers = 1;
        }
        let mark = self.gathers;
        for p in &lanes {
            if let Some(s) = self.lane_stamp.get_mut(p.thread.index()) {
                *s = mark;
            }
        }
        let exited: Vec<(ThreadId, u32)> = ((w * ws)..((w + 1) * ws).min(n))
            .map(ThreadId)
            .filter(|t| self.lane_stamp[t.index()] != mark)
            .filter_map(|t| self.out.exit_index[t.index()].map(|e| (t, e)))
            .collect();
        if lanes.len() + exited.len() < 2 {
            self.file.recycle_lanes(lanes);
            return;
        }
        let id = DynamicBarrierId(self.out.nodes.len() as u32);
        for p in &lanes {
            if let Some(r) = self.out.registrations.list_mut(p.thread.index()).last_mut() {
                r.set_gather(id);
            }
        }
        self.out.nodes.push(DynamicBarrier {
            key: key.into(),
            generation,
            expected: lanes.len() as u32 + exited.len() as u32,
            participants: Participants::of(&lanes),
            exited,
            gather: true,
        });
        self.file.recycle_lanes(lanes);
    }

    fn exit(&mut self, thread: ThreadId, index: u32) {
        if let Some(e) = self
            .warp_exits
            .get_mut((thread.0 / self.warp_size) as usize)
        {
            *e += 1;
        }
        self.cursors[thread.index()] = Cursor::Exited;
        self.out.exit_index[thread.index()] = Some(index);
        self.exit_order.push(thread);
        match self.file.exit(thread) {
            Ok(events) => self.events(events, None),
            Err(e) => self.sync_error(e),
        }
    }

    /// A generation completed: make it a node, wake its blocked participants.
    // Not inlined: see `warp_registered`.
    #[inline(never)]
    fn complete(&mut self, c: weft_program::Completion, current: Option<ThreadId>) {
        let id = DynamicBarrierId(self.out.nodes.len() as u32);
        let mark = id.0 + 1;
        let ws = self.warp_size;
        let mut warps = std::mem::take(&mut self.warps);
        warps.clear();
        // One pass: the participants' stamps and their warps (each warp with how many of
        // its lanes take part), their registrations' node, and the wake of the blocked ones
        // in participant order (`counted_exits` reads only the stamps and the warps).
        let mut range = 0..0;
        let mut warp = 0;
        // Local slices: nothing the loop writes moves them.
        let batching = self.batching;
        let stamp = &mut self.stamp[..];
        let warp_stamp = &mut self.warp_stamp[..];
        let registrations = &mut self.out.registrations;
        let cursors = &mut self.cursors[..];
        let queue = &mut self.queue;
        let mut deferred = false;
        for p in &c.participants {
            let t = p.thread.index();
            // The lanes of a warp register together: divide only where the warp changes.
            if !range.contains(&p.thread.0) {
                warp = p.thread.0 / ws;
                range = warp * ws..(warp + 1) * ws;
            }
            if stamp[t] != mark {
                stamp[t] = mark;
                if let Some(s) = warp_stamp.get_mut(warp as usize) {
                    if s.0 != mark {
                        *s = (mark, 0);
                        warps.push(warp);
                    }
                    s.1 += 1;
                }
            }
            // An arrive's registration gets its node after the replay (`arrive_nodes`): the
            // lane ran on and registered more since, and only the nodes of blocking
            // registrations are read before then. (The reference replay sets it here.)
            if batching && !p.op.blocks() {
                deferred = true;
            } else {
                let regs = registrations.completing(warp as usize, t);
                // The registration is almost always the thread's last (or nearly): look
                // there first, a binary search over a long history misses the cache every
                // step.
                match regs
                    .iter_mut()
                    .rev()
                    .take(4)
                    .find(|r| r.command == p.command)
                {
                    Some(r) => r.set_node(id),
                    None => {
                        if let Ok(i) = regs.binary_search_by_key(&p.command, |r| r.command) {
                            regs[i].set_node(id);
                        }
                    }
                }
            }
            let cursor = &mut cursors[t];
            if p.op.blocks() && matches!(cursor, Cursor::Blocked { .. }) {
                *cursor = Cursor::Ready;
                if Some(p.thread) != current {
                    queue.push_back(p.thread.0);
                }
            }
        }
        self.deferred |= deferred;
        let exited = self.counted_exits(&c, mark, id, &mut warps);
        self.warps = warps;
        self.out.nodes.push(DynamicBarrier {
            key: c.key.into(),
            generation: c.generation,
            expected: c.expected,
            participants: Participants::of(&c.participants),
            exited,
            gather: false,
        });
        self.file.recycle_participants(c.participants);
    }

    /// The exited threads the state machine counted as registered at this completion (the
    /// PTX rules of [`BarrierFile`]), with their exit indices. Also records the lanes of
    /// registered warps that were *not* counted (see [`Trace::uncounted`]). `warps` are the
    /// warps of the participants, stamped by [`Self::complete`].
    fn counted_exits(
        &mut self,
        c: &weft_program::Completion,
        mark: u32,
        id: DynamicBarrierId,
        warps: &mut [u32],
    ) -> Vec<(ThreadId, u32)> {
        let ws = self.warp_size;
        let n = self.program.threads.len() as u32;
        let mut out = Vec::new();
        let exit_of = |t: ThreadId, out: &mut Vec<(ThreadId, u32)>, ex: &[Option<u32>]| {
            if let Some(e) = ex[t.index()] {
                out.push((t, e));
                true
            } else {
                false
            }
        };
        for &t in &c.counted_exits {
            exit_of(t, &mut out, &self.out.exit_index);
        }
        // A counted named barrier stands for whole warps: lanes of a registered warp that
        // neither registered nor were counted as exited must exit after this completion.
        if matches!(c.key, BarrierKey::Named(_)) && !c.all_threads {
            warps.sort_unstable();
            for &w in warps.iter() {
                let lanes = (w * ws..((w + 1) * ws).min(n)).len();
                // Every lane of the warp took part: none is left to look for (the
                // reference replay looks).
                if self.batching && self.warp_stamp[w as usize].1 as usize >= lanes {
                    continue;
                }
                for t in (w * ws)..((w + 1) * ws).min(n) {
                    let t = ThreadId(t);
                    if self.stamp[t.index()] != mark && c.counted_exits.binary_search(&t).is_err() {
                        self.out.uncounted.push((id, t));
                    }
                }
            }
        }
        out.sort_unstable();
        out
    }

    #[cold]
    fn sync_error(&mut self, e: SyncError) {
        self.error = true;
        let msg = |p: Participant| -> String {
            format!(
                "{} (command {}, instruction #{})",
                self.range(p.thread),
                p.command,
                self.inst(p.thread, p.command).0
            )
        };
        let mut v = match &e {
            SyncError::WarpDivergence {
                warp,
                first_key,
                first,
                key,
                participant,
            } => {
                let what = |k: &weft_program::GatherKey| {
                    let count = match k.count {
                        weft_program::BarrierCount::All => String::new(),
                        weft_program::BarrierCount::Threads(n) => format!(", {n} threads"),
                    };
                    let aligned = if k.inst.is_some() { " aligned" } else { "" };
                    format!("{:?}{aligned} on barrier {}{count}", k.op, k.id).to_lowercase()
                };
                let mut v = SyncViolation::new(
                    ViolationKind::BarrierDivergence,
                    format!(
                        "warp {warp}: lanes at different barrier operations: {} executes {} while {} waits at {}; a barrier operation waits for every non-exited lane of the warp{}",
                        msg(*participant),
                        what(key),
                        msg(*first),
                        what(first_key),
                        if key.inst.is_some() || first_key.inst.is_some() {
                            ", and lanes of one warp must execute the same aligned barrier instruction"
                        } else {
                            ""
                        }
                    ),
                );
                v.barrier = Some(BarrierKey::Named(key.id));
                v.commands = vec![self.cref(*participant), self.cref(*first)];
                v
            }
            SyncError::InvalidId { id, participant } => {
                let mut v = SyncViolation::new(
                    ViolationKind::InvalidBarrierId,
                    format!(
                        "barrier id {id} is out of range 0-15, used by {}",
                        msg(*participant)
                    ),
                );
                v.commands = vec![self.cref(*participant)];
                v
            }
            SyncError::InvalidCount {
                key,
                count,
                cta_threads,
                participant,
            } => {
                let mut v = SyncViolation::new(
                    ViolationKind::InvalidThreadCount,
                    format!(
                        "{key}: invalid thread count {count} (must be a non-zero multiple of the warp size {} and at most the CTA's {cta_threads} threads), used by {}",
                        self.warp_size,
                        msg(*participant)
                    ),
                );
                v.barrier = Some(*key);
                v.commands = vec![self.cref(*participant)];
                v
            }
            SyncError::LaneNotInMask {
                key,
                mask,
                participant,
            } => {
                let mut v = SyncViolation::new(
                    ViolationKind::BarrierDivergence,
                    format!(
                        "bar.warp.sync mask {mask:#x} does not contain the executing lane: {}",
                        msg(*participant)
                    ),
                );
                v.barrier = Some(*key);
                v.commands = vec![self.cref(*participant)];
                v
            }
            SyncError::CountMismatch {
                key,
                generation,
                configured,
                first,
                got,
                participant,
            } => {
                let show = |c: &BarrierConfig| match c {
                    BarrierConfig::Mask(m) => format!("mask {m:#x}"),
                    BarrierConfig::Count(count) => count.to_string(),
                };
                let mut v = SyncViolation::new(
                    ViolationKind::BarrierCountMismatch,
                    format!(
                        "{key} generation {generation}: configured for {} by {}, but {} registered with {}",
                        show(configured),
                        msg(*first),
                        msg(*participant),
                        show(got)
                    ),
                );
                v.barrier = Some(*key);
                v.generations = vec![*generation];
                v.commands = vec![self.cref(*participant), self.cref(*first)];
                v
            }
            SyncError::Overflow {
                key,
                generation,
                expected,
                registered,
                participant,
            } => {
                let mut v = SyncViolation::new(
                    ViolationKind::BarrierOverflow,
                    format!(
                        "{key} generation {generation}: {registered} threads registered but it expects {expected}; the last was {}",
                        msg(*participant)
                    ),
                );
                v.barrier = Some(*key);
                v.generations = vec![*generation];
                v.counts = Some((*registered, *expected));
                v.commands = vec![self.cref(*participant)];
                v
            }
            SyncError::MixedRed {
                key,
                generation,
                first,
                participant,
            } => {
                let mut v = SyncViolation::new(
                    ViolationKind::BarrierCountMismatch,
                    format!(
                        "{key} generation {generation}: bar.red mixed with bar.sync/bar.arrive (undefined in PTX): {} and {}",
                        msg(*first),
                        msg(*participant)
                    ),
                );
                v.barrier = Some(*key);
                v.generations = vec![*generation];
                v.commands = vec![self.cref(*participant), self.cref(*first)];
                v
            }
        };
        if v.threads.is_empty() {
            v.threads = v
                .commands
                .iter()
                .take(1)
                .map(|c| self.range(c.thread))
                .collect();
        }
        self.out.violations.push(v);
    }

    /// The replay ran out of ready threads without an error: report a deadlock (or the
    /// emulator's unreproduced error), check divergence of open generations.
    fn finish(&mut self) {
        let n = self.program.threads.len();
        let blocked: Vec<usize> = (0..n)
            .filter(|&t| matches!(self.cursors[t], Cursor::Blocked { .. }))
            .collect();
        let incomplete = (0..n).any(|t| {
            self.cursors[t] == Cursor::Ended
                && matches!(
                    self.program.threads[t].end,
                    ThreadEnd::Stopped | ThreadEnd::Trapped(_)
                )
        });
        let emulator_deadlock = self
            .program
            .threads
            .iter()
            .any(|t| t.end == ThreadEnd::Blocked);
        let mbarrier_waits = self.out.mbarriers.has_waiters();
        let exec_waits = !self.out.exec.waiting.is_empty();
        if (!blocked.is_empty() || mbarrier_waits || exec_waits)
            && (!incomplete || emulator_deadlock)
        {
            self.out.stuck = true;
            if !blocked.is_empty() {
                self.deadlock();
            }
            if mbarrier_waits {
                crate::mbarrier::deadlocks(&mut self.out, self.program);
            }
            if exec_waits {
                crate::exec::deadlocks(&mut self.out, self.program);
            }
            self.blocked_only_in_the_emulation();
        }
        // The emulator stopped at a barrier error this schedule did not hit: its schedule
        // and this one disagree, so generations depend on the interleaving. (An mbarrier
        // protocol error this replay reported is the finding: the emulator stops at a
        // wait on an invalid object, wherever this schedule met the error.)
        if !self.out.stuck && !self.out.mbarriers.errors {
            if let Some(t) =
                (0..n).find(|&t| self.program.threads[t].end == ThreadEnd::BarrierError)
            {
                let len = self.program.threads[t].commands.len() as u32;
                let index = len.saturating_sub(1);
                let c = CommandRef {
                    thread: ThreadId(t as u32),
                    index,
                    inst: self.inst(ThreadId(t as u32), index),
                };
                let mut v = SyncViolation::new(
                    ViolationKind::UnsafeRecycling,
                    format!(
                        "the emulated execution put a barrier into an error state at {} (command {}, instruction #{}), but another execution does not: the barrier generations depend on the interleaving",
                        self.range(c.thread),
                        c.index,
                        c.inst.0
                    ),
                );
                v.commands = vec![c];
                v.threads = vec![self.range(c.thread)];
                self.out.violations.push(v);
                self.out.stuck = true;
            }
        }
    }

    /// Threads the emulated execution left blocked at their last command whose wait this
    /// replay's order passed (a parity wait sees the phase it waits for complete when it
    /// waits early, and the next phase current when it waits late): without them a deadlock
    /// report names only the threads blocked behind them. Reported as the phase race they
    /// are (a named-barrier wait, as the deadlock).
    #[cold]
    fn blocked_only_in_the_emulation(&mut self) {
        let ended: Vec<(ThreadId, InstId)> = (0..self.program.threads.len())
            .filter(|&t| {
                self.program.threads[t].end == ThreadEnd::Blocked
                    && matches!(self.cursors[t], Cursor::Ended | Cursor::Exited)
            })
            .filter_map(|t| {
                let len = self.program.threads[t].commands.len() as u32;
                let last = len.checked_sub(1)?;
                Some((ThreadId(t as u32), self.inst(ThreadId(t as u32), last)))
            })
            .collect();
        for (range, inst) in group_threads(ended.iter().copied(), self.warp_size) {
            let t = range.first;
            let Some(last) = self.program.threads[t.index()].commands.last().copied() else {
                continue;
            };
            let index = self.program.threads[t.index()].commands.len() as u32 - 1;
            let (kind, what) = match last.view() {
                CommandView::Mbarrier { addr, value, .. } => (
                    ViolationKind::MbarrierPhaseRace,
                    format!("its wait on mbarrier {addr:#x} for parity {value}"),
                ),
                _ => (ViolationKind::Deadlock, "its barrier wait".to_owned()),
            };
            let mut v = SyncViolation::new(
                kind,
                format!(
                    "{range} blocked forever at instruction #{} in the emulated execution ({what}); in another order of the same commands that wait returns: which phase it sees depends on the interleaving",
                    inst.0
                ),
            );
            v.commands = vec![CommandRef {
                thread: t,
                index,
                inst,
            }];
            v.threads = vec![range];
            self.out.violations.push(v);
        }
    }

    #[cold]
    fn deadlock(&mut self) {
        let ws = self.warp_size;
        let n = self.program.threads.len() as u32;
        let open: Vec<(BarrierKey, u32, u32, u32, Vec<Participant>)> = self
            .file
            .open_generations()
            .into_iter()
            .filter(|g| g.participants.iter().any(|p| p.op.blocks()))
            .map(|g| {
                (
                    g.key,
                    g.generation,
                    g.expected,
                    g.registered,
                    g.participants.to_vec(),
                )
            })
            .collect();
        let state_of = |t: u32| -> ThreadState {
            match self.cursors[t as usize] {
                Cursor::Blocked {
                    key,
                    generation,
                    command,
                } => ThreadState::Blocked {
                    key,
                    generation,
                    inst: self.inst(ThreadId(t), command),
                },
                Cursor::Exited => ThreadState::Exited,
                _ => ThreadState::Stopped,
            }
        };
        let mut gens = Vec::new();
        for (key, generation, expected, registered, participants) in &open {
            let mut present = vec![false; n as usize];
            let mut warp_present = vec![false; n.div_ceil(ws) as usize];
            for p in participants {
                present[p.thread.index()] = true;
                warp_present[(p.thread.0 / ws) as usize] = true;
            }
            let mut blocked: Vec<(ThreadId, InstId)> = Vec::new();
            let mut arrived: Vec<(ThreadId, InstId)> = Vec::new();
            for p in participants {
                let e = (p.thread, self.inst(p.thread, p.command));
                if p.op.blocks() {
                    blocked.push(e);
                } else {
                    arrived.push(e);
                }
            }
            blocked.sort_unstable();
            blocked.dedup_by_key(|e| e.0);
            arrived.sort_unstable();
            arrived.dedup_by_key(|e| e.0);
            let absent_threads = (0..n).filter(|&t| match key {
                BarrierKey::Warp(w) => t / ws == *w && !present[t as usize],
                BarrierKey::Named(_) => !warp_present[(t / ws) as usize],
            });
            let absent: Vec<(ThreadId, ThreadState)> =
                absent_threads.map(|t| (ThreadId(t), state_of(t))).collect();
            gens.push(BlockedGeneration {
                key: *key,
                generation: *generation,
                expected: *expected,
                registered: *registered,
                blocked: group_threads(blocked, ws),
                arrived: group_threads(arrived, ws),
                absent: group_threads(absent, ws),
            });
        }
        // Wait-for graph between open generations: X waits for Y when a warp absent from X
        // is blocked at Y.
        let index_of =
            |k: BarrierKey, g: u32| gens.iter().position(|b| b.key == k && b.generation == g);
        let succ: Vec<Vec<usize>> = gens
            .iter()
            .map(|b| {
                let mut s: Vec<usize> = b
                    .absent
                    .iter()
                    .filter_map(|(_, st)| match st {
                        ThreadState::Blocked {
                            key, generation, ..
                        } => index_of(*key, *generation),
                        _ => None,
                    })
                    .collect();
                s.sort_unstable();
                s.dedup();
                s
            })
            .collect();
        let cycle = find_cycle(&succ);
        let mut parts = Vec::new();
        for b in &gens {
            let mut s = format!(
                "{} generation {} expects {} threads, {} registered; blocked: {}",
                b.key,
                b.generation,
                b.expected,
                b.registered,
                join(
                    b.blocked
                        .iter()
                        .map(|(r, i)| format!("{r} at instruction #{}", i.0))
                )
            );
            if !b.arrived.is_empty() {
                s.push_str(&format!(
                    "; arrived: {}",
                    join(b.arrived.iter().map(|(r, _)| r))
                ));
            }
            if !b.absent.is_empty() {
                s.push_str(&format!(
                    "; never came: {}",
                    join(b.absent.iter().map(|(r, st)| format!("{r} ({st})")))
                ));
            }
            parts.push(s);
        }
        // Warps stuck half-gathered: their lanes wait for lanes of the same warp that never
        // came (blocked elsewhere, or stopped).
        let mut gather_threads = Vec::new();
        let mut gather_commands = Vec::new();
        let mut divergence = Vec::new();
        for g in self.file.open_gathers() {
            let waiting = group_threads(
                g.lanes
                    .iter()
                    .map(|p| (p.thread, self.inst(p.thread, p.command))),
                ws,
            );
            let missing: Vec<(ThreadId, ThreadState)> =
                g.missing.iter().map(|&t| (t, state_of(t.0))).collect();
            let missing = group_threads(missing, ws);
            let never = join(missing.iter().map(|(r, st)| format!("{r} ({st})")));
            parts.push(format!(
                "{} waiting for the rest of warp {} at barrier {} generation {}; never came: {never}",
                join(
                    waiting
                        .iter()
                        .map(|(r, i)| format!("{r} at instruction #{}", i.0))
                ),
                g.warp,
                g.key.id,
                g.generation,
            ));
            gather_threads.extend(waiting.iter().map(|(r, _)| *r));
            let first = self.cref(g.lanes[0]);
            gather_commands.push(first);
            if g.key.inst.is_some() {
                let mut v = SyncViolation::new(
                    ViolationKind::BarrierDivergence,
                    format!(
                        "barrier {} generation {}: aligned barrier instruction #{} executed by {}; {never} of the same warp did not execute it",
                        g.key.id,
                        g.generation,
                        first.inst.0,
                        join(waiting.iter().map(|(r, _)| r)),
                    ),
                );
                v.barrier = Some(BarrierKey::Named(g.key.id));
                v.generations = vec![g.generation];
                v.commands = vec![first];
                v.threads = missing.iter().map(|(r, _)| *r).collect();
                divergence.push(v);
            }
        }
        let mut msg = format!(
            "{} thread(s) blocked forever: {}",
            gens.iter()
                .flat_map(|b| b.blocked.iter().map(|(r, _)| r.len()))
                .chain(gather_threads.iter().map(|r| r.len()))
                .sum::<u32>(),
            parts.join("; and ")
        );
        let cycle: Vec<(BarrierKey, u32)> = cycle
            .iter()
            .map(|&i| (gens[i].key, gens[i].generation))
            .collect();
        if !cycle.is_empty() {
            let names: Vec<String> = cycle
                .iter()
                .chain(cycle.first())
                .map(|(k, g)| format!("{k} generation {g}"))
                .collect();
            msg.push_str(&format!("; wait-for cycle: {}", names.join(" -> ")));
        }
        let mut v = SyncViolation::new(ViolationKind::Deadlock, msg);
        v.barrier = gens.first().map(|b| b.key);
        v.generations = gens.first().map(|b| vec![b.generation]).unwrap_or_default();
        v.counts = gens.first().map(|b| (b.registered, b.expected));
        for (_, _, _, _, participants) in &open {
            let mut seen = FxHashSet::default();
            for p in participants.iter().filter(|p| p.op.blocks()) {
                let c = self.cref(*p);
                if seen.insert(c.inst) {
                    v.commands.push(c);
                }
            }
        }
        for c in gather_commands {
            if !v.commands.iter().any(|x| x.inst == c.inst) {
                v.commands.push(c);
            }
        }
        v.threads = gens
            .iter()
            .flat_map(|b| b.blocked.iter().map(|(r, _)| *r))
            .chain(gather_threads)
            .collect();
        v.blocked = gens;
        v.cycle = cycle;
        self.out.violations.insert(0, v);
        self.out.violations.extend(divergence);
    }
}

/// A cycle in a small directed graph, as the list of its vertices, or empty.
fn find_cycle(succ: &[Vec<usize>]) -> Vec<usize> {
    // 0 = unvisited, 1 = on stack, 2 = done.
    let mut color = vec![0u8; succ.len()];
    let mut stack: Vec<usize> = Vec::new();
    fn dfs(
        v: usize,
        succ: &[Vec<usize>],
        color: &mut [u8],
        stack: &mut Vec<usize>,
    ) -> Option<Vec<usize>> {
        color[v] = 1;
        stack.push(v);
        for &w in &succ[v] {
            if color[w] == 1 {
                let start = stack.iter().position(|&x| x == w).unwrap_or(0);
                return Some(stack[start..].to_vec());
            }
            if color[w] == 0 {
                if let Some(c) = dfs(w, succ, color, stack) {
                    return Some(c);
                }
            }
        }
        stack.pop();
        color[v] = 2;
        None
    }
    for v in 0..succ.len() {
        if color[v] == 0 {
            if let Some(c) = dfs(v, succ, &mut color, &mut stack) {
                return c;
            }
        }
    }
    Vec::new()
}
