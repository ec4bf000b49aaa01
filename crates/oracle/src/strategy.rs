//! Random tiny CTAs for property tests.
//!
//! Purely random barrier commands are almost never well-synchronized, so programs are built
//! from *phases*: a phase picks a barrier, a set of member threads and for each member
//! `arrive` or `sync`, with the count equal to the number of members. Accesses are sprinkled
//! between phases. Threads are then cut to [`MAX_LEN`] commands and, sometimes, one barrier
//! count is perturbed; both make deadlocks, errors and unsafe recycling reachable.

use proptest::prelude::*;
use weft_program::{
    AccessKind, BarrierCount, BarrierOp, Command, CtaShape, InstId, Program, ThreadEnd,
    ThreadProgram,
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

/// Random [`Spec`]s.
pub fn spec() -> impl Strategy<Value = Spec> {
    (2u8..=4).prop_flat_map(|threads| {
        let all = (1u16 << threads) as u8;
        let phase =
            (0u32..2, 1..all, any::<u8>()).prop_map(move |(barrier, members, syncs)| Item::Phase {
                barrier,
                members,
                syncs: syncs & members,
            });
        let item = prop_oneof![
            2 => phase,
            3 => (0..threads, access()).prop_map(|(thread, (kind, addr, len))| Item::Access {
                thread,
                kind,
                addr,
                len
            }),
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
            }
        }
        for seq in &mut cmds {
            seq.truncate(MAX_LEN);
        }
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
        Program::new(CtaShape::linear(u32::from(self.threads)), 1, threads)
            .expect("a valid program")
    }
}

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
        _ => Command::exit(inst),
    }
}
