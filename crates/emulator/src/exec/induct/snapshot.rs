//! The machine's state at a moment of the induction (`docs/induction.md` §2): everything
//! that decides the rest of the run, relative to the moment. Two snapshots that are equal
//! (up to the registers that advance by a constant per period, the *progressions*) belong
//! to machines that run alike from their moments on.
//!
//! [`Machine::snapshot`] lists the machine's fields by destructuring, so that a new field
//! is a compile error here until someone decides whether it is state, history or a cache.

use super::super::terms::TermId;
use super::super::values::TERMED;
use super::super::{Machine, State};
use crate::ir::{Liveness, RedKind, RegId};
use weft_program::BarrierSnapshot;

/// A variable of the choices: a base term read at a width.
type Variable = (TermId, u8);

/// A register's content as the comparison sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(crate) enum Val {
    Known(u64),
    /// Unknown with the symbolic term `(base + k) mod 2^bits` (a term that is no such sum
    /// is its own base, with `k = 0` at its natural width).
    Term {
        base: TermId,
        k: u64,
        bits: u8,
    },
    /// Unknown without a term: any value (the run never decides anything on it, or it
    /// stops unverifiable).
    Unknown,
}

/// What a thread is doing at the moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ThreadSnap {
    pc: u32,
    state: State,
    wait_dest: Option<RegId>,
    wait_parity: u32,
    wait_token: bool,
    red_kind: RedKind,
    red_in: (u64, u32),
}

/// The machine at a moment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Snapshot {
    /// Per thread: the commands it had recorded.
    pub(crate) position: Vec<u32>,
    pub(crate) threads: Vec<ThreadSnap>,
    /// Per thread: its live registers (register, content), by register.
    pub(crate) regs: Vec<Vec<(RegId, Val)>>,
    /// The shared, local, parameter and kernel-parameter windows, byte by byte.
    pub(crate) memory: Vec<Vec<u64>>,
    pub(crate) bars: BarrierSnapshot,
    /// The mbarriers.
    pub(crate) mbars: Vec<weft_program::MbarrierSnapshot>,
    /// Their phase numbers (history).
    pub(crate) mbar_phases: Vec<(u32, u32)>,
    /// The warp collectives' recording state, relative to the threads' positions.
    pub(crate) collectives: (Vec<Option<u32>>, Vec<u32>),
    /// `mbarrier.init` executions so far per (thread, instruction).
    pub(crate) inits: Vec<((u32, u32), u32)>,
    /// The values each variable of the choices allows (sorted).
    pub(crate) store: Vec<(Variable, Vec<(u64, u64)>)>,
    /// Assumptions made so far.
    pub(crate) assumptions: usize,
}

/// What a snapshot cannot be taken of: the machine holds state the induction does not
/// compare yet (`docs/induction.md` §6), or is not at a moment of a clean run.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Unsupported {
    /// A thread is inside a called function, or between the two sides of a branch on an
    /// unknown predicate.
    Nested,
    /// Asynchronous copies, mbarriers, tensor-core operations or warp collectives are in
    /// use.
    Asynchronous,
    /// Shared bytes keep a term (a value handed through shared memory, or the value terms
    /// of a run that compares written values).
    SharedTerms,
    /// The run has stopped, trapped or found something.
    Stopped,
}

impl Machine<'_> {
    /// The normal form of a source id in a snapshot: 0 when known, else whether it has a
    /// term and which (plain unknowns are all alike).
    pub(super) fn norm(&self, u: u32) -> u64 {
        if u == 0 {
            0
        } else if u & TERMED != 0 {
            match self.src.term(u) {
                Some(t) => (1 << 41) | u64::from(t.0),
                None => 1 << 40,
            }
        } else {
            1 << 40
        }
    }

    fn val(&self, i: usize) -> Val {
        use super::super::terms::Node;
        match self.unk[i] {
            0 => Val::Known(self.vals[i]),
            u => match self.src.term(u) {
                Some(t) => match self.src.terms.node(t) {
                    Node::Affine { base, k, bits } => Val::Term { base, k, bits },
                    _ => Val::Term {
                        base: t,
                        k: 0,
                        bits: self.src.terms.natural(t).0,
                    },
                },
                None => Val::Unknown,
            },
        }
    }

    /// The machine's state now, with the registers `live` says may still be read.
    pub(super) fn snapshot(&self, live: &Liveness) -> Result<Snapshot, Unsupported> {
        // Every field, sorted into state (compared), history (commands, counters, the
        // interning tables: only positions relative to the moment matter), caches, and
        // features whose state this first version does not compare (they must be idle).
        let Machine {
            ir: _,
            fast: _,
            cfg: _,
            shape: _,
            n,
            nregs,
            vals: _,
            unk: _,
            th,
            cmds,
            steps: _,
            warp_step: _,
            smem,
            smem_terms,
            smem_size: _,
            local,
            pmem,
            kp,
            kp_unset: _,
            commands: _,
            charged: _,
            tma_open,
            copies,
            cp_pending,
            cp_committed: _,
            bulk_pending,
            bulk_committed: _,
            proxy_fences: _,
            divert,
            defer_entries,
            exec_events: _,
            wg: _,
            coll,
            wg_ops,
            wg_index: _,
            footprints: _,
            wg_shapes: _,
            wg_occ: _,
            wg_pending,
            wg_committed: _,
            joint_done,
            exclusive,
            peek_at: _,
            peeks: _,
            data_forks: _,
            peeks_failed: _,
            peek_lag: _,
            cluster_read: _,
            clc_requests: _,
            clc_observed: _,
            fork_guards: _,
            copy_guards,
            tc_issued,
            tm,
            side_floor: _,
            tc_attached: _,
            tmem: _,
            tma_loads,
            tma_load_maps: _,
            tma_stores,
            tensormaps: _,
            mbar_objects: _,
            bars,
            mbars,
            values: _,
            value_ids: _,
            value_cache: _,
            term_value_ids: _,
            init_occ,
            src: _,
            unverifiable,
            reported: _,
            findings,
            found: _,
            kparam_reads: _,
            // The induction's runs read no input (`inputs`).
            inputs: _,
            notes: _,
            stop,
            instructions: _,
            shared_base: _,
            local_base: _,
            win: _,
            region_cache: _,
            fall_first: _,
            fork_bufs: _,
            fork_regs: _,
            // False between instructions.
            terms_off: _,
            values_off: _,
            uninit_shared: _,
            trapped,
            assumptions,
            assumed_from: _,
            failed_assertions: _,
            data_trusted: _,
            data_read: _,
            data_written,
            warps,
            pass_lockstep,
            cursor: _,
            track: _,
            solo: _,
            has_activemask: _,
            lockstep_used,
            reordered,
            pass_peak: _,
            bar_lanes: _,
            bar_events: _,
            // A memo of lane permutations, the same for every trip.
            shfl_tables: _,
            choices,
            induct: _,
            // Bookkeeping of an exploration's checkpoints (`exec::Checkpoint`), never taken in
            // an induction's runs.
            cta_within: _,
            cta_over: _,
            checkpoints: _,
            resumed: _,
        } = self;
        if *stop
            || *trapped
            || *reordered
            || !unverifiable.is_empty()
            || !findings.is_empty()
            || data_written.iter().any(|&w| w)
            || choices.abandoned
        {
            return Err(Unsupported::Stopped);
        }
        // The asynchronous machinery (its state refers to copies and operations by
        // index); the kernel check refuses kernels that use it, this is the backstop.
        if !tma_open.is_empty()
            || !copies.is_empty()
            || cp_pending.iter().any(|p| !p.is_empty())
            || bulk_pending.iter().any(|p| !p.is_empty())
            || !wg_ops.is_empty()
            || wg_pending.iter().any(|p| !p.is_empty())
            || !joint_done.is_empty()
            || !exclusive.is_empty()
            || !copy_guards.is_empty()
            || tc_issued.iter().any(|p| !p.is_empty())
            || tm.in_flight()
            || !tma_loads.is_empty()
            || !tma_stores.is_empty()
            || divert.is_some()
            || *defer_entries
            || *warps
            || *pass_lockstep
            || *lockstep_used
        {
            return Err(Unsupported::Asynchronous);
        }
        // Terms kept for shared bytes: the induction compares memory by bytes only.
        if !smem_terms.is_empty() {
            return Err(Unsupported::SharedTerms);
        }
        let position: Vec<u32> = cmds.iter().map(|c| c.len() as u32).collect();
        let mut threads = Vec::with_capacity(*n);
        let mut regs = Vec::with_capacity(*n);
        for (t, thread) in th.iter().enumerate() {
            if !thread.stack.is_empty() || thread.may != 0 || thread.path_exit {
                return Err(Unsupported::Nested);
            }
            threads.push(ThreadSnap {
                pc: thread.pc,
                state: thread.state,
                wait_dest: thread.wait_dest,
                wait_parity: thread.wait_parity,
                wait_token: thread.wait_token,
                red_kind: thread.red_kind,
                red_in: thread.red_in,
            });
            let mut live_regs = Vec::new();
            if thread.state != State::Exited {
                for r in 0..*nregs {
                    if live.live(thread.pc, r) {
                        let i = self.slot(t) + r * super::super::values::LANES;
                        live_regs.push((RegId(r as u32), self.val(i)));
                    }
                }
            }
            regs.push(live_regs);
        }
        let norm = |u: u32| self.norm(u);
        let memory = vec![
            smem.canonical(norm),
            local.canonical(norm),
            pmem.canonical(norm),
            kp.canonical(norm),
        ];
        let bars = bars.snapshot(&position).ok_or(Unsupported::Stopped)?;
        let mut store: Vec<_> = choices.store.iter().map(|(k, v)| (*k, v.clone())).collect();
        store.sort();
        let mut inits: Vec<_> = init_occ.iter().map(|(&k, &v)| (k, v)).collect();
        inits.sort_unstable();
        Ok(Snapshot {
            position,
            threads,
            regs,
            memory,
            bars,
            mbars: mbars.snapshot(),
            mbar_phases: mbars.phases(),
            collectives: coll.relative(),
            inits,
            store,
            assumptions: assumptions.len(),
        })
    }
}

/// A register that advances by the same constant every period: `step` (modulo `2^bits`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Progression {
    pub(crate) thread: u32,
    pub(crate) reg: RegId,
    pub(crate) step: u64,
    pub(crate) bits: u8,
}

/// Where two snapshots differ (the first difference found).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Differ {
    /// A thread's pc, state or pending wait.
    Thread(u32),
    /// A live register, other than by a constant step.
    Register { thread: u32, reg: RegId },
    /// A byte of a memory window (0 shared, 1 local, 2 call parameters, 3 kernel
    /// parameters).
    Memory(u8),
    /// The named and warp barriers' pending arrivals.
    Barriers,
    /// The values the choices allow.
    Store,
    /// The assumptions made.
    Assumptions,
}

/// The progressions that take snapshot `a` to `b` (every other part equal; `widths`: the
/// declared width of each register), or where the two differ otherwise. The choice store
/// is compared only when `store` is set (between two moments of one concrete run it
/// narrows as the loop goes on).
pub(crate) fn progressions(
    a: &Snapshot,
    b: &Snapshot,
    widths: &[u8],
    store: bool,
) -> Result<Vec<Progression>, Differ> {
    for (t, (x, y)) in a.threads.iter().zip(&b.threads).enumerate() {
        if x != y {
            return Err(Differ::Thread(t as u32));
        }
    }
    let mut out = Vec::new();
    for (t, (ra, rb)) in a.regs.iter().zip(&b.regs).enumerate() {
        let thread = t as u32;
        if ra.len() != rb.len() {
            return Err(Differ::Thread(thread));
        }
        for (&(reg, va), &(rb_reg, vb)) in ra.iter().zip(rb) {
            if reg != rb_reg {
                return Err(Differ::Thread(thread));
            }
            if va == vb {
                continue;
            }
            let differ = Differ::Register { thread, reg };
            let (step, bits) = match (va, vb) {
                (Val::Known(x), Val::Known(y)) => {
                    let bits = widths.get(reg.index()).copied().unwrap_or(64);
                    (y.wrapping_sub(x), bits)
                }
                (
                    Val::Term {
                        base: b1,
                        k: k1,
                        bits: w1,
                    },
                    Val::Term {
                        base: b2,
                        k: k2,
                        bits: w2,
                    },
                ) if b1 == b2 && w1 == w2 => (k2.wrapping_sub(k1), w1),
                _ => return Err(differ),
            };
            if bits <= 1 {
                return Err(differ);
            }
            let step = step & super::super::terms::top(bits);
            if step == 0 {
                return Err(differ);
            }
            out.push(Progression {
                thread,
                reg,
                step,
                bits,
            });
        }
    }
    for (k, (x, y)) in a.memory.iter().zip(&b.memory).enumerate() {
        if x != y {
            return Err(Differ::Memory(k as u8));
        }
    }
    if !a.bars.same_state(&b.bars)
        || a.mbars != b.mbars
        || a.collectives != b.collectives
        || a.inits != b.inits
    {
        return Err(Differ::Barriers);
    }
    if store && a.store != b.store {
        return Err(Differ::Store);
    }
    if a.assumptions != b.assumptions {
        return Err(Differ::Assumptions);
    }
    Ok(out)
}
