//! Random tiny CTAs for property tests.
//!
//! Purely random barrier commands are almost never well-synchronized, so programs are built
//! from *phases*: a phase picks a barrier, a set of member threads and for each member
//! `arrive` or `sync`, with the count equal to the number of members. Accesses are sprinkled
//! between phases. Threads are then cut to [`MAX_LEN`] commands and, sometimes, one barrier
//! count is perturbed; both make deadlocks, errors and unsafe recycling reachable.
//!
//! [`spec`] also adds execution events (`.sync` collectives, warpgroup MMA groups), which
//! order execution but not memory.
//!
//! [`spec_with_copies`] also issues asynchronous copies (agents of their own, see
//! [`weft_program::AsyncCopy`]) and waits that complete every copy their thread issued before
//! them, and warpgroup-style groups: the members arrive at an execution event, one of them
//! issues a copy, and a later group wait (each member waits for the event) completes it at
//! every member's position (joint completion).

use proptest::prelude::*;
use weft_program::{
    AccessKind, AsyncCopy, AsyncOps, BarrierCount, BarrierOp, Command, CtaShape, ExclusiveSides,
    ExecOp, InstId, Program, Proxy, ThreadEnd, ThreadId, ThreadProgram,
};

/// Most commands per generated thread (before the final `exit`).
pub const MAX_LEN: usize = 6;

/// One building block of a generated CTA.
#[derive(Debug, Clone)]
pub enum Item {
    /// Every member thread registers on `barrier` with count = number of members.
    Phase {
        /// Barrier id.
        barrier: u32,
        /// Member threads (bitmask; empty phases are skipped).
        members: u8,
        /// Which members `sync` (bitmask); the others `arrive`.
        syncs: u8,
    },
    /// One access of one thread.
    Access {
        /// The thread.
        thread: u8,
        /// Read, write or atomic.
        kind: AccessKind,
        /// First byte.
        addr: u32,
        /// Bytes.
        len: u32,
    },
    /// An asynchronous copy issued by `thread` at its current position: one access of an
    /// agent of its own.
    Copy {
        /// The issuing thread.
        thread: u8,
        /// Read (a store's source) or write (a load's destination).
        kind: AccessKind,
        /// First byte.
        addr: u32,
        /// Bytes.
        len: u32,
    },
    /// Both sides of a branch of `thread` on an unknown predicate, one after the other: the
    /// first issues a copy, the second makes an access and maybe issues a copy
    /// ([`weft_program::ExclusiveSides`]).
    Fork {
        /// The thread.
        thread: u8,
        /// The first side's copy: kind and first byte (4 bytes).
        first: (AccessKind, u32),
        /// The second side's access: kind, first byte, bytes.
        second: (AccessKind, u32, u32),
        /// The second side's copy, if any.
        second_copy: Option<(AccessKind, u32)>,
    },
    /// A wait of `thread` completing every copy it issued before (`cp.async.wait_all`).
    Wait {
        /// The waiting thread.
        thread: u8,
    },
    /// A warpgroup-style operation: every member arrives at a new execution event and
    /// `issuer` (made a member) issues a copy right after its arrival; a later
    /// [`Item::GroupWait`] retires it.
    Group {
        /// Member threads (bitmask).
        members: u8,
        /// The thread whose issue records the copy.
        issuer: u8,
        /// Read or write.
        kind: AccessKind,
        /// First byte.
        addr: u32,
    },
    /// Every member of group `group` (mod the number of groups so far) waits for its event;
    /// the copy completes before each member's next command (the issuer's as its wait, the
    /// others' as joint completion positions, [`weft_program::AsyncCopy::joint`]).
    GroupWait {
        /// Which group.
        group: u8,
    },
    /// An execution event ([`weft_program::CommandView::Exec`]) of its own: each member
    /// thread takes part with `Sync` (a lane of a `.sync` warp collective), `Arrive` (a
    /// warp's MMA issue) if in `arrives`, or `Wait` (a retiring `wgmma.wait_group`) if in
    /// `waits` and not in `arrives`.
    Event {
        /// Member threads (bitmask).
        members: u8,
        /// Which members only arrive.
        arrives: u8,
        /// Which members only wait.
        waits: u8,
    },
}

/// The shape of a generated CTA, before it is built into a [`Program`].
#[derive(Debug, Clone)]
pub struct Spec {
    /// Thread count (2–4).
    pub threads: u8,
    /// The blocks, in order.
    pub items: Vec<Item>,
    /// `Some((k, count))`: replace the count of the `k`-th barrier command (mod their
    /// number) with `count`.
    pub perturb: Option<(usize, u32)>,
}

fn access() -> impl Strategy<Value = (AccessKind, u32, u32)> {
    let kind = prop_oneof![
        4 => Just(AccessKind::Read),
        4 => Just(AccessKind::Write),
        1 => Just(AccessKind::Atomic),
    ];
    // Three 4-byte variables, plus sometimes a half-word or an 8-byte access.
    let place = prop_oneof![
        8 => (0u32..3).prop_map(|g| (4 * g, 4)),
        1 => (0u32..3).prop_map(|g| (4 * g + 2, 2)),
        1 => (0u32..2).prop_map(|g| (4 * g, 8)),
    ];
    (kind, place).prop_map(|(k, (a, l))| (k, a, l))
}

/// Random [`Spec`]s with asynchronous copies and waits among the items.
pub fn spec_with_copies() -> impl Strategy<Value = Spec> {
    (2u8..=3).prop_flat_map(|threads| {
        let all = (1u16 << threads) as u8;
        let phase =
            (0u32..2, 1..all, any::<u8>()).prop_map(move |(barrier, members, syncs)| Item::Phase {
                barrier,
                members,
                syncs: syncs & members,
            });
        let copy_kind = prop_oneof![3 => Just(AccessKind::Write), 1 => Just(AccessKind::Read)];
        let item = prop_oneof![
            2 => phase,
            2 => (0..threads, access()).prop_map(|(thread, (kind, addr, len))| Item::Access {
                thread,
                kind,
                addr,
                len
            }),
            1 => (0..threads, copy_kind.clone(), 0u32..3).prop_map(|(thread, kind, g)| Item::Copy {
                thread,
                kind,
                addr: 4 * g,
                len: 4,
            }),
            2 => (0..threads).prop_map(|thread| Item::Wait { thread }),
            1 => (
                0..threads,
                (copy_kind.clone(), 0u32..3),
                access(),
                prop::option::of((copy_kind.clone(), 0u32..3)),
            )
                .prop_map(|(thread, (k, g), second, second_copy)| Item::Fork {
                    thread,
                    first: (k, 4 * g),
                    second,
                    second_copy: second_copy.map(|(k, g)| (k, 4 * g)),
                }),
            1 => (1..all, 0..threads, prop_oneof![Just(AccessKind::Write), Just(AccessKind::Read)], 0u32..3)
                .prop_map(|(members, issuer, kind, g)| Item::Group {
                    members,
                    issuer,
                    kind,
                    addr: 4 * g,
                }),
            1 => any::<u8>().prop_map(|group| Item::GroupWait { group }),
        ];
        (
            Just(threads),
            prop::collection::vec(item, 0..12),
            prop::option::weighted(0.1, (0usize..8, 1..=u32::from(threads))),
        )
            .prop_map(|(threads, items, perturb)| Spec {
                threads,
                items,
                perturb,
            })
    })
}

/// Random [`Spec`]s (barriers, accesses and execution events).
pub fn spec() -> impl Strategy<Value = Spec> {
    (2u8..=4).prop_flat_map(|threads| {
        let all = (1u16 << threads) as u8;
        let phase =
            (0u32..2, 1..all, any::<u8>()).prop_map(move |(barrier, members, syncs)| Item::Phase {
                barrier,
                members,
                syncs: syncs & members,
            });
        let event =
            (1..all, any::<u8>(), any::<u8>()).prop_map(|(members, arrives, waits)| Item::Event {
                members,
                arrives,
                waits,
            });
        let item = prop_oneof![
            2 => phase,
            3 => (0..threads, access()).prop_map(|(thread, (kind, addr, len))| Item::Access {
                thread,
                kind,
                addr,
                len
            }),
            1 => event,
        ];
        (
            Just(threads),
            prop::collection::vec(item, 0..14),
            prop::option::weighted(0.15, (0usize..8, 1..=u32::from(threads))),
        )
            .prop_map(|(threads, items, perturb)| Spec {
                threads,
                items,
                perturb,
            })
    })
}

impl Spec {
    /// Builds the warp-size-1 program. Command `i` of thread `t` is instruction `t * 64 + i`
    /// when `unique_insts`, else instruction `i` (the same code position in every thread, as
    /// SIMT code would be).
    pub fn build(&self, unique_insts: bool) -> Program {
        let n = usize::from(self.threads);
        let mut cmds: Vec<Vec<(bool, Command)>> = vec![Vec::new(); n];
        let inst = InstId(0);
        // Copies: (issuer, issue position, access, completion position).
        let mut copies: Vec<PlannedCopy> = Vec::new();
        let mut events = 0u32;
        // Groups: (event, members, copy index).
        let mut groups: Vec<(u32, u8, Option<usize>)> = Vec::new();
        // Forks: (thread, first copy, second side's first and end positions, end of copies).
        let mut forks: Vec<(usize, usize, usize, usize, usize)> = Vec::new();
        for item in &self.items {
            match *item {
                Item::Phase {
                    barrier,
                    members,
                    syncs,
                } => {
                    let count = members.count_ones();
                    for (t, seq) in cmds.iter_mut().enumerate() {
                        if members & (1 << t) != 0 {
                            let op = if syncs & (1 << t) != 0 {
                                BarrierOp::Sync
                            } else {
                                BarrierOp::Arrive
                            };
                            seq.push((
                                true,
                                Command::barrier(
                                    op,
                                    barrier,
                                    BarrierCount::Threads(count),
                                    true,
                                    inst,
                                ),
                            ));
                        }
                    }
                }
                Item::Access {
                    thread,
                    kind,
                    addr,
                    len,
                } => {
                    if let Some(seq) = cmds.get_mut(usize::from(thread)) {
                        seq.push((false, Command::access(kind, addr, len, false, inst)));
                    }
                }
                Item::Copy {
                    thread,
                    kind,
                    addr,
                    len,
                } => {
                    let t = usize::from(thread);
                    if let Some(seq) = cmds.get(t)
                        && copies.len() < crate::MAX_AGENTS
                    {
                        let access = Command::access(kind, addr, len, false, InstId(1000));
                        copies.push((t, seq.len(), access, None, Vec::new()));
                    }
                }
                Item::Group {
                    members,
                    issuer,
                    kind,
                    addr,
                } => {
                    let members = (members | (1 << issuer)) & ((1u16 << n) - 1) as u8;
                    events += 1;
                    for (t, seq) in cmds.iter_mut().enumerate() {
                        if members & (1 << t) != 0 {
                            seq.push((false, Command::exec(ExecOp::Arrive, events, inst)));
                        }
                    }
                    let t = usize::from(issuer);
                    let copy = (copies.len() < crate::MAX_AGENTS && t < n).then(|| {
                        let access = Command::access(kind, addr, 4, false, InstId(1000));
                        copies.push((t, cmds[t].len(), access, None, Vec::new()));
                        copies.len() - 1
                    });
                    groups.push((events, members, copy));
                }
                Item::GroupWait { group } => {
                    if groups.is_empty() {
                        continue;
                    }
                    let (event, members, copy) = groups[usize::from(group) % groups.len()];
                    let issued = copies.len();
                    for (t, seq) in cmds.iter_mut().enumerate() {
                        if members & (1 << t) == 0 {
                            continue;
                        }
                        seq.push((false, Command::exec(ExecOp::Wait, event, inst)));
                        let at = seq.len();
                        if let Some(c) = copy.and_then(|k| copies.get_mut(k)) {
                            if c.0 == t {
                                if c.3.is_none() {
                                    c.3 = Some((at, issued));
                                }
                            } else {
                                c.4.push((t, at));
                            }
                        }
                    }
                }
                Item::Event {
                    members,
                    arrives,
                    waits,
                } => {
                    events += 1;
                    for (t, seq) in cmds.iter_mut().enumerate() {
                        let bit = 1 << t;
                        if members & bit != 0 {
                            let op = if arrives & bit != 0 {
                                ExecOp::Arrive
                            } else if waits & bit != 0 {
                                ExecOp::Wait
                            } else {
                                ExecOp::Sync
                            };
                            seq.push((false, Command::exec(op, events, inst)));
                        }
                    }
                }
                Item::Fork {
                    thread,
                    first,
                    second,
                    second_copy,
                } => {
                    let t = usize::from(thread);
                    if let Some(seq) = cmds.get_mut(t)
                        && copies.len() < crate::MAX_AGENTS
                    {
                        let c0 = copies.len();
                        let copy = |(kind, addr): (AccessKind, u32)| {
                            Command::access(kind, addr, 4, true, InstId(1000))
                        };
                        copies.push((t, seq.len(), copy(first), None, Vec::new()));
                        let p0 = seq.len();
                        let (kind, addr, len) = second;
                        seq.push((false, Command::access(kind, addr, len, true, inst)));
                        if let Some(c) = second_copy
                            && copies.len() < crate::MAX_AGENTS
                        {
                            copies.push((t, seq.len(), copy(c), None, Vec::new()));
                        }
                        forks.push((t, c0, p0, seq.len(), copies.len()));
                    }
                }
                Item::Wait { thread } => {
                    let t = usize::from(thread);
                    if let Some(seq) = cmds.get(t) {
                        let at = seq.len();
                        let seq = copies.len();
                        for c in copies.iter_mut().filter(|c| c.0 == t && c.3.is_none()) {
                            c.3 = Some((at, seq));
                        }
                    }
                }
            }
        }
        for seq in &mut cmds {
            seq.truncate(MAX_LEN);
        }
        // Copies issued after the cut are dropped (with the waits' counts adjusted); a wait
        // after it completes nothing.
        let kept: Vec<bool> = copies.iter().map(|c| c.1 <= cmds[c.0].len()).collect();
        let renumber = |seq: usize| kept[..seq.min(kept.len())].iter().filter(|&&k| k).count();
        let mut copies: Vec<_> = copies
            .into_iter()
            .zip(&kept)
            .filter(|(_, k)| **k)
            .map(|(c, _)| c)
            .collect();
        for c in &mut copies {
            c.3 =
                c.3.filter(|d| d.0 <= cmds[c.0].len())
                    .map(|(d, s)| (d, renumber(s)));
            c.4.retain(|&(u, p)| p <= cmds[u].len());
        }
        // The forks whose first side's copy survived the cut, renumbered and clipped.
        let exclusive: Vec<ExclusiveSides> = forks
            .iter()
            .filter(|f| kept.get(f.1).copied().unwrap_or(false))
            .map(|&(t, c0, p0, p1, c1)| {
                let len = cmds[t].len();
                ExclusiveSides {
                    thread: ThreadId(t as u32),
                    first: (renumber(c0) as u32, renumber(c0 + 1) as u32),
                    second: (p0.min(len) as u32, p1.min(len) as u32),
                    second_copies: renumber(c1) as u32,
                }
            })
            .collect();
        if let Some((k, count)) = self.perturb {
            let barriers: Vec<(usize, usize)> = cmds
                .iter()
                .enumerate()
                .flat_map(|(t, seq)| {
                    seq.iter()
                        .enumerate()
                        .filter(|(_, (b, _))| *b)
                        .map(move |(i, _)| (t, i))
                })
                .collect();
            if !barriers.is_empty() {
                let (t, i) = barriers[k % barriers.len()];
                let c = cmds[t][i].1;
                if let weft_program::CommandView::Barrier { op, id, .. } = c.view() {
                    cmds[t][i].1 =
                        Command::barrier(op, id, BarrierCount::Threads(count), true, c.inst());
                }
            }
        }
        let threads = cmds
            .into_iter()
            .enumerate()
            .map(|(t, seq)| {
                let id = |i: usize| InstId(if unique_insts { t * 64 + i } else { i } as u32);
                let mut commands: Vec<Command> = seq
                    .into_iter()
                    .enumerate()
                    .map(|(i, (_, c))| with_inst(c, id(i)))
                    .collect();
                commands.push(Command::exit(id(commands.len())));
                ThreadProgram {
                    commands,
                    end: ThreadEnd::Exited,
                    steps: Vec::new(),
                }
            })
            .collect();
        let mut joint_done = Vec::new();
        let copies = copies
            .into_iter()
            .enumerate()
            .map(|(g, (t, issue, access, done, joint))| {
                let id = InstId(if unique_insts { 900 + g as u32 } else { 900 });
                let mut c = AsyncCopy::new(
                    ThreadId(t as u32),
                    issue as u32,
                    with_inst(access, id),
                    Proxy::Generic,
                );
                if let Some((at, seq)) = done {
                    c.complete_at(at as u32, seq as u32);
                }
                if !joint.is_empty() {
                    c.joint = Some(joint_done.len() as u32);
                    joint_done.push(
                        joint
                            .into_iter()
                            .map(|(u, p)| (ThreadId(u as u32), p as u32))
                            .collect(),
                    );
                }
                c
            })
            .collect();
        let mut program = Program::new(CtaShape::linear(u32::from(self.threads)), 1, threads)
            .expect("a valid program");
        program.asyncs = AsyncOps {
            copies,
            proxy_fences: Vec::new(),
            joint_done,
            exclusive,
        };
        program
    }
}

/// A copy being built: (issuer, issue position, access, completing wait: its position and
/// the number of copies issued before it, completion positions in other threads).
type PlannedCopy = (
    usize,
    usize,
    Command,
    Option<(usize, usize)>,
    Vec<(usize, usize)>,
);

fn with_inst(c: Command, inst: InstId) -> Command {
    match c.view() {
        weft_program::CommandView::Access {
            kind,
            addr,
            len,
            may,
            approx,
        } => Command::access(kind, addr, len, may, inst).with_approx(approx),
        weft_program::CommandView::Barrier {
            op,
            id,
            count,
            aligned,
        } => Command::barrier(op, id, count, aligned, inst),
        weft_program::CommandView::Exec { op, event } => Command::exec(op, event, inst),
        _ => Command::exit(inst),
    }
}
