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
        let Some(&p) = list.first() else {
            return Participants::default();
        };
        // The runs are allocated at their count (a list grown run by run left freed blocks
        // behind, and the mbarrier-heavy kernels' many small nodes fragmented the heap: 7
        // MiB more peak memory on Triton's warp-specialized GEMM): up to `FEW` of them are
        // found in one pass on the stack, more are counted first.
        const FEW: usize = 64;
        let mut few = [Run::from(p); FEW];
        let mut n = 0;
        let fit = each_run(list, |run| {
            let room = n < FEW;
            if room {
                few[n] = run;
                n += 1;
            }
            room
        });
        let runs = if fit {
            few[..n].to_vec()
        } else {
            let pairs = list.iter().zip(&list[1..]);
            let breaks: usize = pairs.map(|(a, b)| usize::from(!continues(a, b))).sum();
            let mut runs = Vec::with_capacity(1 + breaks);
            each_run(list, |run| {
                runs.push(run);
                true
            });
            runs
        };
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

/// Gives `f` each run of `list`, in order, while it answers true; whether it always did.
#[inline(always)]
fn each_run(list: &[Participant], mut f: impl FnMut(Run) -> bool) -> bool {
    let Some(&p) = list.first() else {
        return true;
    };
    let mut run = Run::from(p);
    for (a, b) in list.iter().zip(&list[1..]) {
        if continues(a, b) {
            run.count += 1;
        } else {
            if !f(run) {
                return false;
            }
            run = Run::from(*b);
        }
    }
    f(run)
}

/// Whether `q` continues the run of `p`: the next thread (never past the last thread id),
/// at `p`'s command with `p`'s operation.
#[inline(always)]
fn continues(p: &Participant, q: &Participant) -> bool {
    (u64::from(q.thread.0) == u64::from(p.thread.0) + 1)
        & (q.command == p.command)
        & (q.op as u8 == p.op as u8)
}

impl From<Participant> for Run {
    /// The run of `p` alone.
    fn from(p: Participant) -> Self {
        Run {
            first: p.thread.0,
            count: 1,
            command: p.command,
            op: p.op,
        }
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
        // More runs than fit on the stack: counted first, the same runs.
        let many: Vec<Participant> = (0..200)
            .map(|t| p(t, t / 3, if t % 2 == 0 { Sync } else { Arrive }))
            .collect();
        let ps_many = Participants::of(&many);
        assert_eq!(ps_many.runs.len(), 200);
        assert_eq!(ps_many.to_vec(), many);
        let long: Vec<Participant> = (0..200).map(|t| p(t, 7, Sync)).collect();
        assert_eq!(Participants::of(&long).runs.len(), 1);
        let paired: Vec<Participant> = (0..200).map(|t| p(t, t / 2, Sync)).collect();
        let ps_paired = Participants::of(&paired);
        assert_eq!(ps_paired.runs.len(), 100);
        assert_eq!(ps_paired.to_vec(), paired);
        // Equal lists are stored alike; different ones are not equal.
        assert_eq!(Participants::of(&list), ps);
        assert_ne!(Participants::of(&list[1..]), ps);
    }
}
