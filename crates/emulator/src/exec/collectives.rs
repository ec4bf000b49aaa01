//! Warp collectives (`shfl`, `vote`, `match`, `redux`, `activemask`, `elect`): a warp's
//! lanes meet at one, and the collectives that can never complete.

use super::alu::mask;
use super::{Machine, State};
use crate::ir::{Inst, Op, Opnd, ReduxOp, ShflMode, VoteMode};
use crate::unverifiable::Value;
use crate::{FindingKind, ValueSource};
use weft_program::{Command, ExecOp, InstId, WARP_SIZE};

/// What the `.sync` collectives recorded, to leave out events that would order nothing new.
#[derive(Clone, Debug)]
pub(super) struct Recorded {
    /// Per thread: its non-access commands so far.
    pub(super) synced: Vec<u32>,
    /// Per thread: `synced` right after its last collective's event (`u32::MAX`: none).
    tail: Vec<u32>,
    /// Per warp: the lanes of its last collective's event.
    last: Vec<u32>,
}

impl Recorded {
    /// The state relative to the threads' positions (the induction's snapshot): per
    /// thread, the non-access commands since its last collective's event, and per warp the
    /// lanes of that event.
    pub(super) fn relative(&self) -> (Vec<Option<u32>>, Vec<u32>) {
        let since = self
            .synced
            .iter()
            .zip(&self.tail)
            .map(|(&s, &t)| (t != u32::MAX).then(|| s.wrapping_sub(t)))
            .collect();
        (since, self.last.clone())
    }

    pub(super) fn new(n: usize) -> Self {
        Recorded {
            synced: vec![0; n],
            tail: vec![u32::MAX; n],
            last: vec![0; n.div_ceil(WARP_SIZE as usize)],
        }
    }
}

impl Machine<'_> {
    /// The operand that holds the collective `inst`'s member mask (`None`: it has none, every
    /// lane is a member).
    pub(super) fn member_mask_operand(&self, inst: &Inst) -> Option<Opnd> {
        let ops = self.ir.operands(inst);
        let has_mask = match inst.op {
            Op::Activemask => false,
            Op::Vote(_) => ops.len() >= 3,
            Op::Shfl(_) => ops.len() >= 5,
            _ => true,
        };
        has_mask.then(|| ops.last().copied().unwrap_or(Opnd::Sink))
    }

    pub(super) fn member_mask(&mut self, t: usize, pc: u32, inst: &Inst) -> u32 {
        let Some(m) = self.member_mask_operand(inst) else {
            return u32::MAX;
        };
        self.known_value(t, pc, m, Value::CollectiveMask, false)
            .map_or(u32::MAX, |v| v as u32)
    }

    /// Lane `t`'s member mask of the collective `inst` at `pc` when it is known, without
    /// recording anything (`None`: unknown).
    pub(super) fn known_member_mask(&mut self, t: usize, pc: u32, inst: &Inst) -> Option<u32> {
        let Some(m) = self.member_mask_operand(inst) else {
            return Some(u32::MAX);
        };
        let (v, u) = self.rd(t, m, pc);
        (u == 0).then_some(v as u32)
    }

    pub(super) fn collective(&mut self, t: usize, pc: u32, inst: &Inst) {
        if self.th[t].may > 0 {
            let o = self.src.single(ValueSource::Other(
                "a warp collective under an input-dependent branch",
            ));
            let u = self.src.union(o, self.th[t].may_src);
            self.clobber(t, inst, u);
            return;
        }
        self.th[t].state = State::Coll(pc);
        self.th[t].pc = pc;
        self.try_collective(t / WARP_SIZE as usize, pc, t);
    }

    pub(super) fn retry_collectives(&mut self, w: usize) {
        let lanes = self.warp_lanes(w);
        let mut pcs: Vec<(u32, usize)> = Vec::new();
        for t in lanes {
            if let State::Coll(pc) = self.th[t].state
                && !pcs.iter().any(|&(p, _)| p == pc)
            {
                pcs.push((pc, t));
            }
        }
        for (pc, t) in pcs {
            self.try_collective(w, pc, t);
        }
    }

    /// Completes the `activemask`s of warp `w` whose lanes no running lane can still join.
    pub(super) fn retry_activemask(&mut self, w: usize) {
        if !self.has_activemask {
            return;
        }
        let waiting = self.warp_lanes(w).any(|t| {
            matches!(self.th[t].state, State::Coll(pc)
                if self.ir.insts.get(pc as usize).is_some_and(|i| i.op == Op::Activemask))
        });
        if waiting {
            self.retry_collectives(w);
        }
    }

    pub(super) fn warp_lanes(&self, w: usize) -> std::ops::Range<usize> {
        let s = w * WARP_SIZE as usize;
        s..(s + WARP_SIZE as usize).min(self.n)
    }

    /// Whether a lane waiting at the collective at `p` can meet the lanes at the one at
    /// `pc`: the same instruction, or, for targets from sm_70 on, an instruction of the same
    /// kind and qualifiers (`Ir::cross_collectives`; the member masks are compared by the
    /// caller: `mask_is`). `elect` too: two `elect.sync` of one mask elect one leader for both
    /// on an H200 (`samples/collectives/two_sided.cu`). `activemask`, which waits for no one,
    /// keeps to one instruction.
    pub(super) fn meets(&self, p: u32, pc: u32) -> bool {
        if p == pc {
            return true;
        }
        if !self.ir.cross_collectives {
            return false;
        }
        let (Some(a), Some(b)) = (
            self.ir.insts.get(p as usize),
            self.ir.insts.get(pc as usize),
        ) else {
            return false;
        };
        a.op == b.op && a.ty == b.ty && a.ty2 == b.ty2 && a.op != Op::Activemask
    }

    /// Whether lane `lt`'s member mask at the collective at `p` is known and is `mask`: a
    /// lane at another instruction that `meets` the one at `pc` joins its lanes only then.
    fn mask_is(&mut self, lt: usize, p: u32, mask: u32) -> bool {
        let inst = self.ir.insts.get(p as usize).copied();
        inst.and_then(|i| self.known_member_mask(lt, p, &i)) == Some(mask)
    }

    pub(super) fn try_collective(&mut self, w: usize, pc: u32, t: usize) {
        let Some(&inst) = self.ir.insts.get(pc as usize) else {
            return;
        };
        let mmask = self.member_mask(t, pc, &inst);
        let base = w * WARP_SIZE as usize;
        // `activemask` waits for no one: its result is the lanes that execute it together,
        // so it completes once every other lane of the warp has exited or stopped elsewhere.
        let waits_for_members = inst.op != Op::Activemask;
        let mut present = 0u32;
        // Each lane's instruction: lanes at another instruction of the same kind with the
        // same member mask meet these (`meets`).
        let mut pcs = [pc; WARP_SIZE as usize];
        // Whether every present lane is at `pc`.
        let mut uniform = true;
        for lt in self.warp_lanes(w) {
            let lane = (lt - base) as u32;
            if mmask & (1 << lane) == 0 {
                continue;
            }
            match self.th[lt].state {
                State::Coll(p) if p == pc => present |= 1 << lane,
                State::Coll(p) if self.meets(p, pc) => {
                    if !self.mask_is(lt, p, mmask) {
                        return;
                    }
                    present |= 1 << lane;
                    pcs[lane as usize] = p;
                    uniform = false;
                }
                State::Exited | State::Trapped(_) | State::Error => {}
                State::Run => return,
                _ if waits_for_members => return,
                _ => {}
            }
        }
        if present == 0 {
            return;
        }
        if !(uniform && self.warps && self.shfl_rows(w, &inst, present)) {
            self.exec_collective(w, &pcs, present);
        }
        self.collective_done(w, &pcs, present, waits_for_members);
    }

    /// What follows the execution of a collective the lanes of `present` of warp `w` met
    /// at (lane `l` at instruction `pcs[l]`): its execution event, if any, and the lanes
    /// released past it.
    pub(super) fn collective_done(
        &mut self,
        w: usize,
        pcs: &[u32; WARP_SIZE as usize],
        present: u32,
        waits_for_members: bool,
    ) {
        let base = w * WARP_SIZE as usize;
        // A `.sync` collective made its lanes wait for each other: an execution event of
        // theirs (PTX orders no memory through it, so it is not a barrier). When the same
        // lanes met last at the warp's previous collective and none recorded anything but
        // shared accesses since, the new event orders nothing the well-synchronization
        // checks ask about (they compare synchronization commands only): not recorded.
        // (`present` names lanes of the warp only.)
        let lanes = || {
            let mut m = present;
            std::iter::from_fn(move || {
                (m != 0).then(|| {
                    let l = m.trailing_zeros() as usize;
                    m &= m - 1;
                    l
                })
            })
        };
        let repeat = self.coll.last.get(w) == Some(&present)
            && lanes().all(|l| self.coll.tail[base + l] == self.coll.synced[base + l]);
        let event = (waits_for_members && present.count_ones() > 1 && !repeat).then(|| {
            self.exec_events = self.exec_events.wrapping_add(1);
            self.exec_events
        });
        if event.is_some() {
            self.charge_node();
            self.coll.last[w] = present;
        }
        for lane in lanes() {
            let lt = base + lane;
            let at = pcs[lane];
            if let Some(e) = event {
                self.push(lt, Command::exec(ExecOp::Sync, e, InstId(at)));
                self.coll.tail[lt] = self.coll.synced[lt];
            }
            self.th[lt].state = State::Run;
            self.th[lt].pc = at + 1;
        }
    }

    /// Executes the collective the lanes of `present` meet at, lane `l` at instruction
    /// `pcs[l]` (all one instruction, or instructions of one kind: `meets`): each lane reads
    /// its operands from, and writes its results to, the operands of its own instruction.
    pub(super) fn exec_collective(&mut self, w: usize, pcs: &[u32; 32], present: u32) {
        let base = w * WARP_SIZE as usize;
        let ir = self.ir;
        let first = pcs[present.trailing_zeros() as usize];
        let Some(&inst) = ir.insts.get(first as usize) else {
            return;
        };
        let lanes = || (0..32u32).filter(move |l| present & (1 << l) != 0);
        let uniform = lanes().all(|l| pcs[l as usize] == first);
        let o = |l: u32, k: usize| {
            ir.insts
                .get(pcs[l as usize] as usize)
                .and_then(|i| ir.operands(i).get(k).copied())
                .unwrap_or(Opnd::Sink)
        };
        let dest = |l: u32| value_and_predicate(ir, o(l, 0));
        // Inputs of every lane first (all reads happen before any write).
        let mut a = [(0u64, 0u32); 32];
        let mut m = present;
        while m != 0 {
            let l = m.trailing_zeros();
            m &= m - 1;
            a[l as usize] = self.rd(base + l as usize, o(l, 1), pcs[l as usize]);
        }
        let all_known = lanes().all(|l| a[l as usize].1 == 0);
        // (The union of known inputs is known: no set to intern.)
        let all_u = if all_known {
            0
        } else {
            lanes().fold(0, |acc, l| self.src.union(acc, a[l as usize].1))
        };
        let lead = present.trailing_zeros();
        let (d, p) = dest(lead);
        if let (true, true, Op::Shfl(mode), Opnd::Imm(b), Opnd::Imm(c), Opnd::Reg(dr)) =
            (self.warps, uniform, inst.op, o(lead, 2), o(lead, 3), d)
        {
            // Lane-independent lane selection: a permutation of the inputs (`warp`
            // module; lane-by-lane runs take the general code below, and the tests compare).
            let (av, au) = (a.map(|(v, _)| v), a.map(|(_, u)| u));
            self.shfl_permute(w, present, (&av, &au), (mode, b, c), dr, p);
            return;
        }
        let lanes: Vec<u32> = lanes().collect();
        let mut out: Vec<(u32, u64, u32, u64, u32)> = Vec::with_capacity(lanes.len());
        match inst.op {
            Op::Shfl(mode) => {
                for &l in &lanes {
                    let t = base + l as usize;
                    let at = pcs[l as usize];
                    let (b, ub) = self.rd(t, o(l, 2), at);
                    let (c, uc) = self.rd(t, o(l, 3), at);
                    if ub | uc != 0 {
                        let u = self.src.union(ub, uc);
                        out.push((l, 0, u, 0, u));
                        continue;
                    }
                    let (j, pval) = shfl_source(mode, l, b, c);
                    let (v, u) = if (0..32).contains(&j) && present & (1 << j) != 0 {
                        a[j as usize]
                    } else {
                        (
                            0,
                            self.src
                                .single(ValueSource::Other("a shuffle from an inactive lane")),
                        )
                    };
                    out.push((l, v, u, u64::from(pval), 0));
                }
            }
            Op::Vote(mode) => {
                let ballot = lanes
                    .iter()
                    .filter(|&&l| a[l as usize].0 & 1 != 0)
                    .fold(0u64, |m, &l| m | (1 << l));
                let v = match mode {
                    VoteMode::Ballot => ballot,
                    VoteMode::All => u64::from(ballot == u64::from(present)),
                    VoteMode::Any => u64::from(ballot != 0),
                    VoteMode::Uni => u64::from(ballot == 0 || ballot == u64::from(present)),
                };
                for &l in &lanes {
                    out.push((l, if all_known { v } else { 0 }, all_u, 0, 0));
                }
            }
            Op::MatchAny | Op::MatchAll => {
                let all_same = lanes
                    .iter()
                    .all(|&l| a[l as usize].0 == a[lanes[0] as usize].0);
                for &l in &lanes {
                    let v = if inst.op == Op::MatchAny {
                        lanes
                            .iter()
                            .filter(|&&k| a[k as usize].0 == a[l as usize].0)
                            .fold(0u64, |m, &k| m | (1 << k))
                    } else if all_same {
                        u64::from(present)
                    } else {
                        0
                    };
                    out.push((
                        l,
                        if all_known { v } else { 0 },
                        all_u,
                        u64::from(all_same),
                        all_u,
                    ));
                }
            }
            Op::Activemask => {
                for &l in &lanes {
                    out.push((l, u64::from(present), 0, 0, 0));
                }
            }
            Op::Elect => {
                let leader = lanes[0];
                for &l in &lanes {
                    out.push((l, u64::from(leader), 0, u64::from(l == leader), 0));
                }
            }
            Op::Redux(op) => {
                let signed = inst.ty.signed();
                let vals: Vec<u64> = lanes.iter().map(|&l| mask(a[l as usize].0, 32)).collect();
                let v = match op {
                    ReduxOp::Add => vals.iter().fold(0u64, |x, y| x.wrapping_add(*y)),
                    ReduxOp::And => vals.iter().fold(u64::from(u32::MAX), |x, y| x & y),
                    ReduxOp::Or => vals.iter().fold(0, |x, y| x | y),
                    ReduxOp::Xor => vals.iter().fold(0, |x, y| x ^ y),
                    ReduxOp::Min | ReduxOp::Max => {
                        let key = |x: &u64| {
                            if signed {
                                i64::from(*x as u32 as i32)
                            } else {
                                *x as i64
                            }
                        };
                        let it = vals.iter();
                        let r = if op == ReduxOp::Min {
                            it.min_by_key(|x| key(x))
                        } else {
                            it.max_by_key(|x| key(x))
                        };
                        r.copied().unwrap_or(0)
                    }
                    ReduxOp::FMin { abs, nan } => fminmax(&vals, false, abs, nan),
                    ReduxOp::FMax { abs, nan } => fminmax(&vals, true, abs, nan),
                };
                let u = if all_known || !self.values_wanted(first) {
                    all_u
                } else {
                    let inputs: Vec<(u64, u32)> = lanes.iter().map(|&l| a[l as usize]).collect();
                    self.redux_term(first, op, signed, &inputs, all_u)
                };
                for &l in &lanes {
                    out.push((l, if all_known { mask(v, 32) } else { 0 }, u, 0, 0));
                }
            }
            _ => {}
        }
        for (l, v, u, pv, pu) in out {
            let t = base + l as usize;
            let (d, p) = if uniform { (d, p) } else { dest(l) };
            self.wr(t, d, v, u);
            self.wr(t, p, pv, pu);
        }
    }

    /// Lane `t` waits at the `.sync` collective at `pc` when nothing can run any more: lanes
    /// its member mask names have not exited and never execute it or a collective it meets
    /// (`meets`, with the same mask). On Volta and later the collective waits for them
    /// forever: a deadlock.
    pub(super) fn stuck_collective(&mut self, t: usize, pc: u32) {
        let w = t / WARP_SIZE as usize;
        let base = w * WARP_SIZE as usize;
        let Some(&inst) = self.ir.insts.get(pc as usize) else {
            return;
        };
        let mask = self.member_mask(t, pc, &inst);
        // Missing lanes grouped by where they are instead.
        let mut missing: Vec<(String, Vec<usize>)> = Vec::new();
        for lt in self.warp_lanes(w) {
            let lane = lt - base;
            if mask & (1 << lane) == 0 {
                continue;
            }
            let state = self.th[lt].state;
            if let State::Coll(p) = state
                && p != pc
                && self.meets(p, pc)
                && self.mask_is(lt, p, mask)
            {
                continue;
            }
            let where_ = match state {
                State::Coll(p) if p == pc => continue,
                State::Exited | State::Trapped(_) | State::Error => continue,
                State::Coll(p) => {
                    format!("wait at `{}` on PTX line {}", self.opcode(p), self.line(p))
                }
                State::BarWait => "are blocked at a named barrier".to_owned(),
                State::MbarWait { .. } => "are blocked on an mbarrier".to_owned(),
                State::Run => "still run".to_owned(),
            };
            match missing.iter_mut().find(|(w, _)| *w == where_) {
                Some((_, lanes)) => lanes.push(lane),
                None => missing.push((where_, vec![lane])),
            }
        }
        let missing: Vec<String> = missing
            .into_iter()
            .map(|(where_, lanes)| format!("lanes {} {where_}", lane_ranges(&lanes)))
            .collect();
        let message = format!(
            "`{}` at PTX line {} waits forever for lanes its member mask {mask:#010x} names ({})",
            self.opcode(pc),
            self.line(pc),
            missing.join("; ")
        );
        self.finding(t, pc, FindingKind::CollectiveDeadlock, message);
    }
}

/// The lane lane `l` of a `shfl` in `mode` with operands `b` and `c` reads, and whether that
/// lane is in its segment (`p`); a lane outside reads its own value.
/// A collective's destination operand split into its value and predicate results (`d|p`;
/// the predicate a sink when absent).
pub(super) fn value_and_predicate(ir: &crate::ir::Ir, dest: Opnd) -> (Opnd, Opnd) {
    match dest {
        Opnd::List(s, 2) => {
            let d = ir.list(s, 2);
            (d[0], d[1])
        }
        x => (x, Opnd::Sink),
    }
}

/// `redux.sync.{min,max}{.abs}{.NaN}.f32` of the lanes' 32-bit values (PTX ISA, *redux.sync*):
/// −0 is below +0; a NaN input is left out, or with `.NaN` makes the result the canonical
/// NaN, as does a reduction of NaNs only.
fn fminmax(vals: &[u64], max: bool, abs: bool, nan: bool) -> u64 {
    const CANONICAL_NAN: u64 = 0x7fff_ffff;
    let mut best: Option<f32> = None;
    for &v in vals {
        let x = f32::from_bits(v as u32);
        let x = if abs { x.abs() } else { x };
        if x.is_nan() {
            if nan {
                return CANONICAL_NAN;
            }
            continue;
        }
        best = Some(match best {
            None => x,
            Some(b) => {
                // In the order with −0 < +0 (equal zeros differ in the sign bit only).
                let below = |p: f32, q: f32| {
                    p < q || p == q && p.is_sign_negative() && !q.is_sign_negative()
                };
                let take = if max { below(b, x) } else { below(x, b) };
                if take { x } else { b }
            }
        });
    }
    best.map_or(CANONICAL_NAN, |b| u64::from(b.to_bits()))
}

pub(super) fn shfl_source(mode: ShflMode, l: u32, b: u64, c: u64) -> (i64, bool) {
    let bval = (b & 0x1f) as i64;
    let cval = (c & 0x1f) as i64;
    let seg = ((c >> 8) & 0x1f) as i64;
    let lane = i64::from(l);
    let max_lane = (lane & seg) | (cval & !seg);
    let min_lane = lane & seg;
    let (j, pval) = match mode {
        ShflMode::Up => (lane - bval, lane - bval >= max_lane),
        ShflMode::Down => (lane + bval, lane + bval <= max_lane),
        ShflMode::Bfly => (lane ^ bval, (lane ^ bval) <= max_lane),
        ShflMode::Idx => {
            let j = min_lane | (bval & !seg);
            (j, j <= max_lane)
        }
    };
    (if pval { j } else { lane }, pval)
}

/// `0-19, 24` for sorted lane (or thread) numbers.
pub(super) fn lane_ranges(lanes: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < lanes.len() {
        let mut j = i;
        while j + 1 < lanes.len() && lanes[j + 1] == lanes[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            lanes[i].to_string()
        } else {
            format!("{}-{}", lanes[i], lanes[j])
        });
        i = j + 1;
    }
    out.join(", ")
}

#[cfg(test)]
mod tests {
    use super::fminmax;

    fn f(x: f32) -> u64 {
        u64::from(x.to_bits())
    }

    /// `redux.sync.{min,max}.f32`: −0 below +0, NaNs left out (or, with `.NaN`, the
    /// canonical NaN), `.abs` on the inputs, the canonical NaN for NaNs only.
    #[test]
    fn float_warp_reductions() {
        let nan = u64::from(f32::NAN.to_bits() | 1);
        let vals = [f(1.5), f(-3.0), nan, f(2.0)];
        assert_eq!(fminmax(&vals, true, false, false), f(2.0));
        assert_eq!(fminmax(&vals, false, false, false), f(-3.0));
        assert_eq!(fminmax(&vals, true, true, false), f(3.0));
        assert_eq!(fminmax(&vals, true, false, true), 0x7fff_ffff);
        assert_eq!(fminmax(&[nan, nan], false, false, false), 0x7fff_ffff);
        assert_eq!(fminmax(&[f(-0.0), f(0.0)], true, false, false), f(0.0));
        assert_eq!(fminmax(&[f(0.0), f(-0.0)], false, false, false), f(-0.0));
    }
}
