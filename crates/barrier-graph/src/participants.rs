//! A node's participants ([`Participants`]), stored as runs of lanes.
//!
//! The lanes of a warp that register together at one barrier command follow each other in
//! a generation's registration order, consecutive threads at one command index with one
//! operation: a gather node is one such run, a CudaDMA generation of 320 threads ten. Each
//! run is stored once, so a generation costs tens of bytes instead of twelve per thread.

use weft_program::{BarrierOp, Participant, ThreadId};

/// Consecutive participants: threads `first..first + count`, in that order, each at
/// command index `command` with operation `op`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    first: u32,
    count: u32,
    command: u32,
    op: BarrierOp,
}

/// A node's registrations, in registration order. Two lists of the same participants in
/// the same order are stored alike (each run is as long as it can be), so equality is the
/// lists'.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Participants {
    runs: Vec<Run>,
    len: u32,
}

impl Participants {
    /// The participants of `list`, in its order.
    pub fn of(list: &[Participant]) -> Self {
        let mut runs = Vec::new();
        let mut i = 0;
        while let Some(&p) = list.get(i) {
            // The longest run from `p`: the threads after it in turn (never past the last
            // thread id), at its command with its operation.
            let mut next = i + 1;
            let mut thread = p.thread.0;
            while let Some(q) = list.get(next) {
                thread = thread.wrapping_add(1);
                if (q.thread.0 != thread)
                    | (thread == 0)
                    | (q.command != p.command)
                    | (q.op != p.op)
                {
                    break;
                }
                next += 1;
            }
            runs.push(Run {
                first: p.thread.0,
                count: (next - i) as u32,
                command: p.command,
                op: p.op,
            });
            i = next;
        }
        Participants {
            runs,
            len: list.len() as u32,
        }
    }

    /// How many participants.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The participants, in registration order.
    pub fn iter(&self) -> impl Iterator<Item = Participant> + Clone + '_ {
        self.runs.iter().flat_map(|r| {
            (0..r.count).map(move |k| Participant {
                thread: ThreadId(r.first + k),
                command: r.command,
                op: r.op,
            })
        })
    }

    /// The first participant.
    pub fn first(&self) -> Option<Participant> {
        self.iter().next()
    }

    /// Whether any participant's operation blocks (a sync, red or warp sync), one test
    /// per run.
    pub fn any_blocks(&self) -> bool {
        self.runs.iter().any(|r| r.op.blocks())
    }

    /// The participants as a list.
    pub fn to_vec(&self) -> Vec<Participant> {
        self.iter().collect()
    }
}

impl From<&[Participant]> for Participants {
    fn from(list: &[Participant]) -> Self {
        Participants::of(list)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(thread: u32, command: u32, op: BarrierOp) -> Participant {
        Participant {
            thread: ThreadId(thread),
            command,
            op,
        }
    }

    #[test]
    fn runs_keep_the_order_and_every_participant() {
        use BarrierOp::{Arrive, Sync};
        let list = vec![
            p(32, 4, Sync),
            p(33, 4, Sync),
            p(34, 4, Sync),
            // Another command, another operation, a gap, a step back: each a new run.
            p(35, 5, Sync),
            p(36, 5, Arrive),
            p(38, 5, Arrive),
            p(0, 1, Sync),
            p(1, 1, Sync),
        ];
        let ps = Participants::of(&list);
        assert_eq!(ps.runs.len(), 5);
        assert_eq!(ps.len(), list.len());
        assert_eq!(ps.to_vec(), list);
        assert_eq!(ps.first(), Some(list[0]));
        assert!(ps.any_blocks());
        assert!(!Participants::of(&list[4..6]).any_blocks());
        let empty = Participants::of(&[]);
        assert!(empty.is_empty() && empty.first().is_none());
        // Equal lists are stored alike; different ones are not equal.
        assert_eq!(Participants::of(&list), ps);
        assert_ne!(Participants::of(&list[1..]), ps);
    }
}
