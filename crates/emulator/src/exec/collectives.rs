//! Warp collectives that can never complete.

use super::{Machine, State};
use crate::FindingKind;
use weft_program::WARP_SIZE;

impl Machine<'_> {
    /// Lane `t` waits at the `.sync` collective at `pc` when nothing can run any more: lanes
    /// its member mask names have not exited and never execute it. On Volta and later the
    /// collective waits for them forever: a deadlock.
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
            let where_ = match self.th[lt].state {
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

/// `0-19, 24` for sorted lane numbers.
fn lane_ranges(lanes: &[usize]) -> String {
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
