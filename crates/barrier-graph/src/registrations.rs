//! Every thread's registrations ([`Registrations`]), stored once for the lanes of a warp
//! that register alike.
//!
//! The lanes of a warp that run the same synchronization commands together register at the
//! same commands, generations and nodes: on a CudaDMA-shaped kernel, 31 of every 32 lists
//! are copies of another lane's. The replay keeps one *common* list per warp. A lane's
//! registrations are a prefix of its warp's common list for as long as each registration it
//! pushes is the common list's at that index (or extends it), and the lane takes a list of
//! its own, a copy of that prefix, at the first that is not, or before anything changes one
//! of its registrations alone. What a thread's registrations are does not depend on how
//! they are stored: [`Registrations::of`] reads the same slice either way.

use weft_program::Participant;

use crate::Registration;

/// [`Registrations::shared`] of a thread that holds its own list.
const OWN: u32 = u32::MAX;

/// Per thread, its registrations in program order.
#[derive(Debug, Clone, Default)]
pub struct Registrations {
    /// Per thread, its own list (empty while it shares its warp's common list).
    own: Vec<Vec<Registration>>,
    /// Per thread, `k`: its registrations are the first `k` of its warp's common list; `OWN`
    /// when `own` holds them.
    shared: Vec<u32>,
    /// Per warp, the registrations its sharing lanes' lists are prefixes of.
    common: Vec<Vec<Registration>>,
    /// Lanes per warp (at least 1).
    warp_size: u32,
}

impl Registrations {
    /// `capacity(t)` registrations reserved for each thread, every thread with a list of
    /// its own (the reference replay).
    pub(crate) fn own(n: usize, capacity: impl Fn(usize) -> usize) -> Self {
        Registrations {
            own: (0..n).map(|t| Vec::with_capacity(capacity(t))).collect(),
            shared: vec![OWN; n],
            common: Vec::new(),
            warp_size: 1,
        }
    }

    /// Every lane of each warp of `warp_size` lanes sharing its warp's common list until it
    /// registers otherwise; `capacity(t)` reserved for each warp's common list (`t` its
    /// first lane), and as much for a lane when it takes a list of its own.
    pub(crate) fn sharing(n: usize, warp_size: u32, capacity: impl Fn(usize) -> usize) -> Self {
        let ws = warp_size.max(1) as usize;
        Registrations {
            own: vec![Vec::new(); n],
            shared: vec![0; n],
            common: (0..n)
                .step_by(ws)
                .map(|t| Vec::with_capacity(capacity(t)))
                .collect(),
            warp_size: ws as u32,
        }
    }

    /// Threads.
    pub fn len(&self) -> usize {
        self.own.len()
    }

    /// Whether there are no threads.
    pub fn is_empty(&self) -> bool {
        self.own.is_empty()
    }

    /// Thread `t`'s registrations (none past the last thread).
    pub fn of(&self, t: usize) -> &[Registration] {
        match self.shared.get(t) {
            Some(&k) if k != OWN => &self.common[t / self.warp_size as usize][..k as usize],
            _ => self.own.get(t).map_or(&[], Vec::as_slice),
        }
    }

    /// Thread `t`'s registrations, if there is such a thread.
    pub fn get(&self, t: usize) -> Option<&[Registration]> {
        (t < self.len()).then(|| self.of(t))
    }

    /// Every thread's registrations, in thread order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = &[Registration]> + Clone + '_ {
        (0..self.len()).map(|t| self.of(t))
    }

    /// How many registrations there are in all (a shared list counted once per thread).
    pub fn total(&self) -> usize {
        self.iter().map(<[Registration]>::len).sum()
    }

    /// Appends `r` to thread `t`'s registrations; returns its index in them.
    pub(crate) fn push(&mut self, t: usize, r: Registration) -> usize {
        self.push_in(t / self.warp_size as usize, t, r);
        self.of(t).len() - 1
    }

    /// Appends to the registrations of each of `lanes`, lanes of warp `w`, `proto` with
    /// the lane's command and operation.
    pub(crate) fn push_lanes(&mut self, w: usize, proto: Registration, lanes: &[Participant]) {
        // The last sharing lane's place in the common list and its command and operation
        // after its push: a lane at the same place with the same command and operation
        // pushes the same registration where it now is, so it shares it too.
        let mut last = None;
        for p in lanes {
            let t = p.thread.index();
            let k = self.shared[t];
            if k != OWN && last == Some((k, p.command, p.op)) {
                self.shared[t] = k + 1;
                continue;
            }
            let r = Registration {
                command: p.command,
                op: p.op,
                ..proto
            };
            self.push_in(w, t, r);
            last = (k != OWN && self.shared[t] == k + 1).then_some((k, p.command, p.op));
        }
    }

    /// [`Self::push`] for thread `t` of warp `w`.
    #[inline(always)]
    fn push_in(&mut self, w: usize, t: usize, r: Registration) {
        let k = self.shared[t];
        if k != OWN {
            let common = &mut self.common[w];
            match common.get(k as usize) {
                None => common.push(r),
                Some(c) if *c == r => {}
                Some(_) => {
                    self.detach(t);
                    self.own[t].push(r);
                    return;
                }
            }
            self.shared[t] = k + 1;
            return;
        }
        self.own[t].push(r);
    }

    /// Thread `t`'s list, to change: from now on `t` holds a list of its own (a change to
    /// it is `t`'s alone).
    pub(crate) fn list_mut(&mut self, t: usize) -> &mut Vec<Registration> {
        if self.shared[t] != OWN {
            self.detach(t);
        }
        &mut self.own[t]
    }

    /// Thread `t`'s registrations, for a completion (a named or warp barrier's generation,
    /// an execution event) to give the registrations counted in it their node. A
    /// registration that `t` shares with other lanes is changed for them too, and that is
    /// the change each of them gets: lanes that share a registration at a generation or an
    /// event registered or arrived there at the same command, so all are counted in its
    /// one completion (a generation of a barrier and an event id are never reused), and it
    /// gives each of them the same node. (A lane that pushes an equal registration after
    /// the completion does not share it: the common one has its node by then.) Not for an
    /// mbarrier's phases, whose numbers restart when an object is initialized again at the
    /// same address. `w` is `t`'s warp.
    pub(crate) fn completing(&mut self, w: usize, t: usize) -> &mut [Registration] {
        match self.shared[t] {
            OWN => &mut self.own[t],
            k => &mut self.common[w][..k as usize],
        }
    }

    /// [`Self::completing`] for thread `t` of whichever warp.
    pub(crate) fn completing_thread(&mut self, t: usize) -> &mut [Registration] {
        self.completing(t / self.warp_size as usize, t)
    }

    /// Thread `t`, sharing its warp's common list, takes a copy of the part it shares.
    fn detach(&mut self, t: usize) {
        let k = std::mem::replace(&mut self.shared[t], OWN) as usize;
        let from = &self.common[t / self.warp_size as usize];
        let mut list = Vec::with_capacity(from.capacity().max(k));
        list.extend_from_slice(&from[..k]);
        self.own[t] = list;
    }

    /// At the end of a replay: a lane that shares only part of its warp's common list takes
    /// a list of its own, so that lanes sharing one share all of it ([`Self::of`] is then
    /// the whole common list for each, the same slice), and a common list no lane shares
    /// is dropped.
    pub(crate) fn settle(&mut self) {
        let ws = self.warp_size as usize;
        for t in 0..self.len() {
            let k = self.shared[t];
            if k != OWN && k as usize != self.common[t / ws].len() {
                self.detach(t);
            }
        }
        for (w, common) in self.common.iter_mut().enumerate() {
            let lanes = w * ws..((w + 1) * ws).min(self.shared.len());
            if self.shared[lanes].iter().all(|&k| k == OWN) {
                *common = Vec::new();
            }
        }
    }

    /// Every list, each once (a thread's own, a warp's common), to change each registration
    /// in place the same way for whichever threads share it: a change that is a function of
    /// the registration alone.
    pub(crate) fn lists_mut(&mut self) -> impl Iterator<Item = &mut Vec<Registration>> {
        self.own.iter_mut().chain(self.common.iter_mut())
    }
}

impl PartialEq for Registrations {
    /// The same registrations for every thread, however they are stored.
    fn eq(&self, other: &Self) -> bool {
        self.len() == other.len() && self.iter().zip(other.iter()).all(|(a, b)| a == b)
    }
}

impl Eq for Registrations {}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::NodeKey;
    use weft_program::{BarrierKey, BarrierOp};

    fn reg(command: u32, generation: u32) -> Registration {
        Registration::new(
            command,
            NodeKey::Barrier(BarrierKey::Named(0)),
            generation,
            BarrierOp::Sync,
        )
    }

    #[test]
    fn a_lane_shares_its_warps_list_until_it_registers_otherwise() {
        let mut r = Registrations::sharing(4, 2, |_| 4);
        // The lane that runs ahead extends the common list; the other follows it.
        r.push(1, reg(1, 1));
        r.push(0, reg(1, 1));
        r.push(1, reg(2, 2));
        assert_eq!((r.shared[0], r.shared[1]), (1, 2));
        assert!(r.own[0].is_empty() && r.own[1].is_empty());
        assert_eq!(r.of(0), &[reg(1, 1)]);
        // Thread 0 registers otherwise: it takes a list of its own.
        r.push(0, reg(3, 2));
        assert_eq!(r.shared[0], OWN);
        assert_eq!(r.of(0), &[reg(1, 1), reg(3, 2)]);
        assert_eq!(r.of(1), &[reg(1, 1), reg(2, 2)]);
        // The other warp's lanes have their own common list.
        r.push(3, reg(5, 1));
        r.push(2, reg(5, 1));
        assert_eq!(r.of(3), r.of(2));
        assert_eq!(r.of(2), &[reg(5, 1)]);
    }

    #[test]
    fn a_change_to_one_lanes_list_is_its_own() {
        let mut r = Registrations::sharing(2, 2, |_| 0);
        r.push(0, reg(1, 1));
        r.push(1, reg(1, 1));
        r.list_mut(0)[0].set_node(crate::DynamicBarrierId(7));
        assert_eq!(r.of(0)[0].node(), Some(crate::DynamicBarrierId(7)));
        assert_eq!(r.of(1), &[reg(1, 1)]);
        // A completion's change is every sharing lane's.
        let mut r = Registrations::sharing(2, 2, |_| 0);
        r.push(0, reg(1, 1));
        r.push(1, reg(1, 1));
        r.completing(0, 1)[0].set_node(crate::DynamicBarrierId(3));
        assert_eq!(r.of(0)[0].node(), Some(crate::DynamicBarrierId(3)));
        assert_eq!(r.of(1), r.of(0));
        // A lane that pushes a registration the common list has with a node does not
        // share it (it registered there before the completion, so this is another).
        r.push(0, reg(2, 2));
        let mut done = reg(2, 2);
        done.set_node(crate::DynamicBarrierId(4));
        r.completing(0, 0)[1] = done;
        r.push(1, reg(2, 2));
        assert_eq!(r.shared[1], OWN);
        assert_eq!(r.of(1)[1], reg(2, 2));
        assert_eq!(r.of(0)[1], done);
    }

    #[test]
    fn settling_gives_a_lane_that_shares_part_of_a_list_its_own() {
        let mut r = Registrations::sharing(5, 4, |_| 0);
        for t in 0..3 {
            r.push(t, reg(1, 1));
        }
        r.push(0, reg(2, 2));
        r.push(2, reg(2, 2));
        // Thread 4's warp: its only lane takes a list of its own, the common one goes.
        r.push(4, reg(1, 1));
        r.list_mut(4);
        r.settle();
        assert_eq!(r.shared[1], OWN);
        assert_eq!(r.of(1), &[reg(1, 1)]);
        assert_eq!(r.shared[2], 2);
        assert_eq!(r.of(2), r.of(0));
        assert!(std::ptr::eq(r.of(2), r.of(0)));
        assert_eq!(r.shared[3], OWN);
        assert_eq!(r.of(3), &[]);
        assert_eq!(r.common[1].capacity(), 0);
        assert_eq!(r.of(4), &[reg(1, 1)]);
        assert_eq!(r.total(), 6);
        let mut own = Registrations::own(5, |_| 0);
        for t in 0..5 {
            for &x in r.of(t) {
                own.push(t, x);
            }
        }
        assert_eq!(own, r);
        own.push(1, reg(9, 9));
        assert_ne!(own, r);
    }
}
