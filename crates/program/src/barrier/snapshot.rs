//! The state of a [`BarrierFile`] relative to a moment of the run, for the induction over
//! trip counts (`docs/induction.md` §2): what decides the file's future, with every
//! registration's command index counted back from its thread's position at the moment and
//! the generation numbers kept apart (they are history: only their differences matter).

use super::{BarrierConfig, BarrierFile, BarrierKey, GatherKey, Open};
use crate::{BarrierOp, ThreadId};

/// A registration, its command counted back from its thread's position.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RelativeParticipant {
    /// The registering thread.
    pub thread: ThreadId,
    /// Commands the thread recorded since this registration's command (0: the last one).
    pub back: u32,
    /// The operation.
    pub op: BarrierOp,
}

/// A generation in progress, relative to a moment.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct OpenSnapshot {
    config: BarrierConfig,
    all: bool,
    expected: u32,
    red: bool,
    participants: Vec<RelativeParticipant>,
    arrived: Vec<u64>,
    touched: Vec<u64>,
    exited_counted: u32,
}

/// A [`BarrierFile`] relative to a moment ([`BarrierFile::snapshot`]). Two snapshots are
/// equal when the two files behave alike from their moments on, up to the generation
/// numbers ([`BarrierSnapshot::generations`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct BarrierSnapshot {
    exited: Vec<u64>,
    open: Vec<(BarrierKey, Option<OpenSnapshot>)>,
    gathers: Vec<Option<(GatherKey, Vec<RelativeParticipant>)>>,
    generations: Vec<(BarrierKey, u32)>,
}

impl BarrierSnapshot {
    /// The generations each barrier has completed so far (history, not state).
    pub fn generations(&self) -> &[(BarrierKey, u32)] {
        &self.generations
    }

    /// Whether the two files are in the same state (generation numbers aside).
    pub fn same_state(&self, other: &BarrierSnapshot) -> bool {
        self.exited == other.exited && self.open == other.open && self.gathers == other.gathers
    }
}

impl BarrierFile {
    /// The file's state relative to a moment at which thread `t` had recorded `position[t]`
    /// commands. `None` when a registration lies ahead of its thread's position (not a
    /// moment of this run).
    pub fn snapshot(&self, position: &[u32]) -> Option<BarrierSnapshot> {
        let rel = |p: &super::Participant| -> Option<RelativeParticipant> {
            let at = *position.get(p.thread.index())?;
            Some(RelativeParticipant {
                thread: p.thread,
                back: at.checked_sub(p.command)?,
                op: p.op,
            })
        };
        let open_snapshot = |o: &Open| -> Option<OpenSnapshot> {
            Some(OpenSnapshot {
                config: o.config,
                all: o.all,
                expected: o.expected,
                red: o.red,
                participants: o.participants.iter().map(rel).collect::<Option<_>>()?,
                arrived: o.arrived.clone(),
                touched: o.touched.clone(),
                exited_counted: o.exited_counted,
            })
        };
        let mut open = Vec::new();
        let mut generations = Vec::new();
        for (k, slot) in self.slots.iter().enumerate() {
            let key = super::slot_key(k);
            generations.push((key, slot.completed));
            let o = match &slot.open {
                Some(o) => Some(open_snapshot(o)?),
                None => None,
            };
            open.push((key, o));
        }
        let gathers = self
            .gathers
            .iter()
            .map(|g| match g {
                Some(g) => Some(
                    g.lanes
                        .iter()
                        .map(rel)
                        .collect::<Option<Vec<_>>>()
                        .map(|l| (g.key, l)),
                ),
                None => Some(None),
            })
            .collect::<Option<Vec<_>>>()?;
        Some(BarrierSnapshot {
            exited: self.exited.clone(),
            open,
            gathers,
            generations,
        })
    }
}
