//! Whether the explored programs of consecutive trip counts repeat (`docs/induction.md` §3).
//!
//! The hypothesis of the locality half of the induction argument, checked on the programs
//! bounded exploration produced: per thread, the program for trip count `t + p` is the one
//! for `t` with one block of commands inserted at one position, and the inserted block is
//! the same for every explored `t` from some `t0` on. This is *evidence only*: a kernel can
//! repeat in every explored program and behave differently at a larger trip count (a branch
//! on the known loop counter, `samples/sizes/late_bug.cu`), so nothing here upgrades a
//! verdict. The emulator-level half of the argument (the loop-carried state) is not
//! implemented.

use crate::Variable;
use std::collections::BTreeMap;
use weft_program::{Command, CommandView, Program};

/// The largest period looked for.
pub const MAX_PERIOD: u32 = 16;

/// Periods the explored values must span beyond the first value of the repetition.
pub const MIN_PERIODS: u64 = 3;

/// The most commands [`Programs`] keeps (all explored programs together).
pub const MAX_KEPT_COMMANDS: usize = 1 << 20;

/// What the periodicity check found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Periodicity {
    /// For every explored value `t` in `from..=to - period`, each thread's program for
    /// `t + period` is its program for `t` with one block inserted, the same block for
    /// every such `t` of one residue class; `to - from` spans at least [`MIN_PERIODS`]
    /// periods.
    Repeats {
        /// The smallest period that repeats.
        period: u32,
        /// The first explored value of the repetition.
        from: u64,
        /// The largest explored value.
        to: u64,
    },
    /// No period up to `longest` repeats over [`MIN_PERIODS`] periods. The evidence
    /// for period 1: the largest explored `t` at which thread `thread` breaks it.
    None {
        /// The longest period tried: [`MAX_PERIOD`], or less when the explored values span
        /// fewer than [`MIN_PERIODS`] times it.
        longest: u32,
        /// The thread.
        thread: u32,
        /// The smaller trip count of the comparison.
        t: u64,
        /// How it breaks.
        mismatch: Mismatch,
    },
    /// Fewer consecutive explored values than [`MIN_PERIODS`] + 1 periods of 1.
    TooFew {
        /// The consecutive explored values (the run that ends at the largest).
        explored: u64,
    },
    /// The explored programs were larger than [`MAX_KEPT_COMMANDS`] commands together.
    TooLarge,
}

/// How two programs of consecutive trip counts fail to be one block apart.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mismatch {
    /// The program for `t + 1` is not the one for `t` with one block inserted.
    NotInsertion,
    /// It is, but the block differs from the one inserted between `t + 1` and `t + 2`.
    BlockChanges,
}

/// The programs of verified paths, by the value of a variable the path fixes to one value
/// (a trip count).
#[derive(Debug, Default)]
pub(crate) struct Programs {
    programs: Vec<(Vec<Vec<Command>>, Vec<u128>)>,
    /// Per variable: the kept program of each value a path fixed it to.
    by_variable: Vec<(Variable, BTreeMap<u64, usize>)>,
    kept: usize,
    too_large: bool,
}

impl Programs {
    /// Keeps the program of a verified path whose variables have the values `values`, under
    /// each variable the path fixes to one value.
    pub(crate) fn keep(&mut self, values: &[(Variable, Vec<(u64, u64)>)], program: &Program) {
        if self.too_large {
            return;
        }
        let fixed: Vec<(&Variable, u64)> = values
            .iter()
            .filter_map(|(v, s)| match s[..] {
                [(lo, hi)] if lo == hi => Some((v, lo)),
                _ => None,
            })
            .collect();
        if fixed.is_empty() {
            return;
        }
        let n: usize = program.threads.iter().map(|p| p.commands.len()).sum();
        if self.kept + n > MAX_KEPT_COMMANDS {
            self.too_large = true;
            self.programs.clear();
            self.by_variable.clear();
            return;
        }
        self.kept += n;
        let index = self.programs.len();
        self.programs.push((
            program.threads.iter().map(|p| p.commands.clone()).collect(),
            program.values.clone(),
        ));
        for (v, x) in fixed {
            match self.by_variable.iter_mut().find(|(w, _)| w == v) {
                Some((_, map)) => {
                    map.insert(x, index);
                }
                None => self
                    .by_variable
                    .push((v.clone(), BTreeMap::from([(x, index)]))),
            }
        }
    }

    /// The variable with the most kept programs (the first of those), and the periodicity
    /// of its programs; `None` when nothing was kept.
    pub(crate) fn periodicity(&self) -> Option<(Option<Variable>, Periodicity)> {
        if self.too_large {
            return Some((None, Periodicity::TooLarge));
        }
        let mut best: Option<&(Variable, BTreeMap<u64, usize>)> = None;
        for entry in &self.by_variable {
            if best.is_none_or(|b| entry.1.len() > b.1.len()) {
                best = Some(entry);
            }
        }
        let (v, map) = best?;
        Some((Some(v.clone()), self.of(map)))
    }

    /// The periodicity of the programs `map` names.
    fn of(&self, map: &BTreeMap<u64, usize>) -> Periodicity {
        // The run of consecutive values that ends at the largest.
        let Some((&b, _)) = map.last_key_value() else {
            return Periodicity::TooFew { explored: 0 };
        };
        let mut a = b;
        while a > 0 && map.contains_key(&(a - 1)) {
            a -= 1;
        }
        if b - a < MIN_PERIODS {
            return Periodicity::TooFew {
                explored: b - a + 1,
            };
        }
        let mut evidence = None;
        // Only periods the explored values span MIN_PERIODS times (so t = b - p >= a).
        let longest = u64::from(MAX_PERIOD).min((b - a) / MIN_PERIODS);
        for p in 1..=longest {
            // The smallest t0 such that every t in t0..=b - p relates to t + p.
            let mut from = b - p + 1;
            let mut t = b - p;
            loop {
                match self.relates(map, t, p, b) {
                    Ok(()) => from = t,
                    Err(e) => {
                        if p == 1 {
                            evidence = Some((e.0, t, e.1));
                        }
                        break;
                    }
                }
                if t == a {
                    break;
                }
                t -= 1;
            }
            if b - from.min(b) >= MIN_PERIODS * p {
                return Periodicity::Repeats {
                    period: p as u32,
                    from,
                    to: b,
                };
            }
        }
        match evidence {
            Some((thread, t, mismatch)) => Periodicity::None {
                longest: longest as u32,
                thread,
                t,
                mismatch,
            },
            // Period 1 relates every explored pair but the span is too short (cannot happen
            // with b - a >= MIN_PERIODS); say too few.
            None => Periodicity::TooFew {
                explored: b - a + 1,
            },
        }
    }

    /// Whether, per thread, the program for `t + p` is the one for `t` with one block
    /// inserted, the same block as between `t + p` and `t + 2p` when `t + 2p <= b`. Err:
    /// the first thread that breaks it, and how.
    fn relates(
        &self,
        map: &BTreeMap<u64, usize>,
        t: u64,
        p: u64,
        b: u64,
    ) -> Result<(), (u32, Mismatch)> {
        let get = |t: u64| map.get(&t).and_then(|&i| self.programs.get(i));
        let (Some(x), Some(y)) = (get(t), get(t + p)) else {
            return Err((0, Mismatch::NotInsertion));
        };
        let z = if t + 2 * p <= b { get(t + 2 * p) } else { None };
        if x.0.len() != y.0.len() {
            return Err((0, Mismatch::NotInsertion));
        }
        for (k, (px, py)) in x.0.iter().zip(&y.0).enumerate() {
            let Some(block) = inserted((px, &x.1), (py, &y.1)) else {
                return Err((k as u32, Mismatch::NotInsertion));
            };
            if let Some(z) = z {
                let Some(pz) = z.0.get(k) else {
                    return Err((k as u32, Mismatch::NotInsertion));
                };
                let Some(next) = inserted((py, &y.1), (pz, &z.1)) else {
                    return Err((k as u32, Mismatch::NotInsertion));
                };
                let (bx, vy) = (block, &y.1);
                let (bz, vz) = (next, &z.1);
                if bx.len() != bz.len() || !bx.iter().zip(bz).all(|(c, d)| same(c, vy, d, vz)) {
                    return Err((k as u32, Mismatch::BlockChanges));
                }
            }
        }
        Ok(())
    }
}

/// The block `b` inserts into `a` at one position (at the end of their longest common
/// prefix), or `None` when `b` is not `a` with one block inserted.
fn inserted<'a>(
    (a, va): (&[Command], &[u128]),
    (b, vb): (&'a [Command], &[u128]),
) -> Option<&'a [Command]> {
    if b.len() < a.len() {
        return None;
    }
    let d = b.len() - a.len();
    let l = a
        .iter()
        .zip(b)
        .take_while(|(x, y)| same(x, va, y, vb))
        .count();
    let rest_same = a[l..]
        .iter()
        .zip(&b[l + d..])
        .all(|(x, y)| same(x, va, y, vb));
    rest_same.then(|| &b[l..l + d])
}

/// Two commands of two programs are the same: equal, except that an execution event is
/// compared by its operation (event ids count up through the run) and a plain write by the
/// bytes it stores (value ids are numbered per program).
pub(crate) fn same(x: &Command, vx: &[u128], y: &Command, vy: &[u128]) -> bool {
    if x.inst() != y.inst() {
        return false;
    }
    match (x.view(), y.view()) {
        (CommandView::Exec { op: a, .. }, CommandView::Exec { op: b, .. }) => a == b,
        (a @ CommandView::Access { .. }, b @ CommandView::Access { .. }) => {
            let value = |c: &Command, v: &[u128]| {
                c.value_id()
                    .map(|id| v.get(usize::from(id).wrapping_sub(1)).copied())
            };
            a == b && value(x, vx) == value(y, vy)
        }
        (a, b) => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_program::{AccessKind, BarrierCount, BarrierOp, CtaShape, InstId, ThreadProgram};

    fn sync(id: u32) -> Command {
        Command::barrier(BarrierOp::Sync, id, BarrierCount::All, true, InstId(id))
    }
    fn write(addr: u32) -> Command {
        Command::access(AccessKind::Write, addr, 4, false, InstId(100 + addr))
    }

    fn program(threads: Vec<Vec<Command>>) -> Program {
        let n = threads.len() as u32;
        Program::new(
            CtaShape::linear(n),
            32,
            threads
                .into_iter()
                .map(|commands| ThreadProgram {
                    commands,
                    end: weft_program::ThreadEnd::Exited,
                    steps: Vec::new(),
                })
                .collect(),
        )
        .expect("program")
    }

    /// pre · B^t · tail per thread, B alternating between two stages (period 2 in t when
    /// `stages` is 2).
    fn pumped(t: u64, stages: u32) -> Program {
        let mut cmds = vec![write(0)];
        for i in 0..t {
            let s = (i % u64::from(stages)) as u32;
            cmds.push(write(4 + 4 * s));
            cmds.push(sync(1 + s));
        }
        cmds.push(sync(0));
        program(vec![cmds.clone(), cmds])
    }

    fn trips() -> Variable {
        Variable {
            expr: crate::Expr::Const(0),
            bits: 32,
        }
    }

    /// The periodicity of the programs `f` gives for `values` of one variable.
    fn kept(values: impl Iterator<Item = u64>, f: impl Fn(u64) -> Program) -> Periodicity {
        let mut p = Programs::default();
        for t in values {
            p.keep(&[(trips(), vec![(t, t)])], &f(t));
        }
        let (v, found) = p.periodicity().expect("programs were kept");
        assert_eq!(v, Some(trips()));
        found
    }

    #[test]
    fn a_pumped_program_repeats_with_its_period() {
        let p = kept(0..=12, |t| pumped(t, 1));
        assert_eq!(
            p,
            Periodicity::Repeats {
                period: 1,
                from: 0,
                to: 12
            }
        );
        let p = kept(0..=12, |t| pumped(t, 2));
        assert_eq!(
            p,
            Periodicity::Repeats {
                period: 2,
                from: 0,
                to: 12
            }
        );
    }

    #[test]
    fn growing_iterations_have_no_period() {
        // Iteration i runs i + 1 barriers (samples/sizes/no_period.cu).
        let p = kept(0..=10, |t| {
            let mut cmds = Vec::new();
            for i in 0..t {
                for _ in 0..=i {
                    cmds.push(sync(0));
                }
                cmds.push(sync(1));
            }
            program(vec![cmds])
        });
        assert!(matches!(
            p,
            Periodicity::None {
                thread: 0,
                mismatch: Mismatch::BlockChanges,
                ..
            }
        ));
    }

    #[test]
    fn an_irregular_start_is_skipped_and_too_few_values_say_so() {
        // t <= 2 differs (a prologue the compiler peeled); from 3 on, period 1.
        let p = kept(0..=12, |t| {
            if t <= 2 {
                program(vec![vec![sync(9); t as usize], vec![]])
            } else {
                pumped(t, 1)
            }
        });
        assert_eq!(
            p,
            Periodicity::Repeats {
                period: 1,
                from: 3,
                to: 12
            }
        );
        let p = kept(0..=2, |t| pumped(t, 1));
        assert_eq!(p, Periodicity::TooFew { explored: 3 });
    }

    #[test]
    fn periods_longer_than_the_explored_values_allow_are_not_tried() {
        // Four values, no period: only period 1 fits three times (a longer period once
        // underflowed `b - p`).
        let p = kept(5..=8, |t| program(vec![vec![sync(0); (t * t) as usize]]));
        assert!(matches!(p, Periodicity::None { t: 6, .. }), "{p:?}");
    }

    #[test]
    fn a_change_in_the_last_explored_value_breaks_the_period() {
        let p = kept(0..=12, |t| {
            let mut x = pumped(t, 1);
            if t == 12 {
                x.threads[1].commands.insert(1, sync(7));
            }
            x
        });
        // 11 -> 12 is an insertion of a different block in thread 1.
        assert_eq!(
            p,
            Periodicity::None {
                longest: 4,
                thread: 1,
                t: 10,
                mismatch: Mismatch::BlockChanges
            }
        );
    }

    use proptest::prelude::*;

    /// A small alphabet of commands, so that blocks often look alike.
    fn command(k: u8) -> Command {
        if k < 3 {
            sync(u32::from(k))
        } else {
            write(4 * u32::from(k))
        }
    }

    proptest! {
        /// Programs that are, per thread and residue r, `pre_r · B_r^m · tail_r` for the
        /// trip count `t0 + m·p + r`, with the values spanning three periods past `t0`, are
        /// found to repeat with a period of at most `p`, from `t0` or earlier when the
        /// period is `p`.
        #[test]
        fn pumped_programs_repeat(
            p in 1u64..=4,
            t0 in 0u64..=3,
            extra in 0u64..=3,
            parts in proptest::collection::vec(
                proptest::collection::vec(
                    (
                        proptest::collection::vec(0u8..5, 0..4),
                        proptest::collection::vec(0u8..5, 1..4),
                        proptest::collection::vec(0u8..5, 0..4),
                    ),
                    4,
                ),
                1..=3,
            ),
        ) {
            let b = t0 + MIN_PERIODS * p + extra;
            let f = |t: u64| {
                let threads = parts
                    .iter()
                    .map(|residues| {
                        if t < t0 {
                            // Before t0: anything (here: t syncs on barrier 9).
                            return vec![sync(9); t as usize];
                        }
                        let (m, r) = ((t - t0) / p, ((t - t0) % p) as usize);
                        let (pre, block, tail) = &residues[r];
                        let mut cmds: Vec<Command> = pre.iter().map(|&k| command(k)).collect();
                        for _ in 0..m {
                            cmds.extend(block.iter().map(|&k| command(k)));
                        }
                        cmds.extend(tail.iter().map(|&k| command(k)));
                        cmds
                    })
                    .collect();
                program(threads)
            };
            match kept(0..=b, f) {
                Periodicity::Repeats { period, from, to } => {
                    prop_assert!(u64::from(period) <= p);
                    prop_assert_eq!(to, b);
                    if u64::from(period) == p {
                        prop_assert!(from <= t0, "from {} > t0 {}", from, t0);
                    }
                }
                other => prop_assert!(false, "not found: {:?}", other),
            }
        }
    }
}
