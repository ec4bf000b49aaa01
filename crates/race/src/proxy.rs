//! Generic-proxy writes read by async-proxy copies without `fence.proxy.async`.
//!
//! Bulk and TMA copies (`cp.async.bulk`, `cp.async.bulk.tensor`, `cp.reduce.async.bulk`)
//! access memory through the *async proxy*; ordinary loads and stores (and `cp.async`) through
//! the *generic proxy*. The PTX ISA (*Memory Consistency Model: Proxies*, and the
//! `cp.async.bulk` and `fence.proxy` sections) requires a cross-proxy fence between accesses of
//! one location through different proxies: a generic-proxy write that an async-proxy copy
//! reads (the source tile of a bulk or TMA store, a tensor-core operand read by `wgmma` or
//! `tcgen05.mma`) must be ordered before the copy through a
//! `fence.proxy.async` on the causality path: the write happens before the fence and the
//! fence before the copy's issue (the fence may be the writer's, the issuer's, or any thread's
//! on the path). The completion of a bulk copy implies the fence in the other direction, so
//! bulk and TMA loads need none.
//!
//! A write the copy races with is a race (see [`crate::find_races`]); this check looks only
//! at writes that happen before the copy, and reports each one no fence orders, unless an
//! async-proxy write (a bulk or TMA load) that surely covers the common bytes happens after
//! the generic write and before the read: the read then sees the load's bytes, not the
//! generic write's. (Whether the generic write and that load need a fence between them, a
//! write-after-write across proxies, is not checked.) A TMA load whose extent is an upper
//! bound surely writes its first 16 bytes (every TMA box's inner dimension is a multiple of
//! 16 bytes).

use rustc_hash::{FxHashMap, FxHashSet};
use weft_program::{AccessKind, CommandView, InstId, Program, Proxy, ThreadId};

use crate::{AccessSite, HappensBeforeQuery};

/// A generic-proxy write read by an async-proxy copy with no `fence.proxy.async` between
/// them. One per pair of static instructions, with the representative of the lowest threads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MissingProxyFence {
    /// The generic-proxy write (a thread's store, or a `cp.async` agent's write).
    pub write: AccessSite,
    /// The async-proxy read (the agent of a bulk or TMA store; `thread` is its agent id).
    pub copy: AccessSite,
    /// The first byte both access.
    pub addr: u32,
    /// How many dynamic (write, copy) pairs lack the fence.
    pub pairs: u64,
}

fn site(program: &Program, t: usize, index: u32) -> Option<AccessSite> {
    let c = program.actor_commands(t).get(index as usize)?;
    match c.view() {
        CommandView::Access {
            kind,
            addr,
            len,
            may,
            approx,
        } => Some(AccessSite {
            thread: ThreadId(t as u32),
            index,
            kind,
            inst: c.inst(),
            addr,
            len,
            may,
            approx,
        }),
        _ => None,
    }
}

/// A generic-proxy write: (first byte, length, thread or agent, command index).
type Write = (u32, u32, usize, u32);

/// A generic-proxy write of a thread of the CTA, with the thread's first
/// `fence.proxy.async` after it (`u32::MAX`: none).
#[derive(Debug, Clone, Copy)]
struct OwnWrite {
    index: u32,
    addr: u32,
    len: u32,
    fence: u32,
}

/// Every generic-proxy write that happens before an async-proxy read of a common byte with
/// no `fence.proxy.async` ordered between them. `hb` must be the relation of a
/// well-synchronized program (as for [`crate::find_races`]).
pub fn missing_proxy_fences<H: HappensBeforeQuery + ?Sized>(
    program: &Program,
    hb: &H,
) -> Vec<MissingProxyFence> {
    let n = program.threads.len();
    let reads: Vec<usize> = program
        .asyncs
        .copies
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            c.proxy == Proxy::Async
                && matches!(
                    c.access.view(),
                    CommandView::Access {
                        kind: AccessKind::Read,
                        ..
                    }
                )
        })
        .map(|(g, _)| n + g)
        .collect();
    if reads.is_empty() {
        return Vec::new();
    }
    let ws = program.warp_size();
    // Generic-proxy writes: per thread of the CTA in program order, each with the writer's
    // first `fence.proxy.async` after it (`u32::MAX`: none), and those of `cp.async` agents.
    let mut own: Vec<Vec<OwnWrite>> = vec![Vec::new(); n];
    let mut agent_writes: Vec<Write> = Vec::new();
    for t in 0..n + program.asyncs.copies.len() {
        if program
            .agent(ThreadId(t as u32))
            .is_some_and(|c| c.proxy != Proxy::Generic)
        {
            continue;
        }
        let fences = program.asyncs.fences(ThreadId(t as u32));
        let mut next_fence = 0usize;
        for (i, c) in program.actor_commands(t).iter().enumerate() {
            if let CommandView::Access {
                kind, addr, len, ..
            } = c.view()
                && kind.writes()
            {
                let i = i as u32;
                match own.get_mut(t) {
                    Some(list) => {
                        while fences.get(next_fence).is_some_and(|&p| p <= i) {
                            next_fence += 1;
                        }
                        let fence = fences.get(next_fence).copied().unwrap_or(u32::MAX);
                        list.push(OwnWrite {
                            index: i,
                            addr,
                            len,
                            fence,
                        });
                    }
                    None => agent_writes.push((addr, len, t, i)),
                }
            }
        }
    }
    // Per thread, the bytes its writes span: (first, end).
    let spans: Vec<(u64, u64)> = own
        .iter()
        .map(|list| {
            list.iter().fold((u64::MAX, 0), |(a, b), w| {
                (
                    a.min(u64::from(w.addr)),
                    b.max(u64::from(w.addr) + u64::from(w.len)),
                )
            })
        })
        .collect();
    // The reads grouped by issue position (issuer, issue), in order of first appearance.
    let mut positions: Vec<((ThreadId, u32), Vec<usize>)> = Vec::new();
    let mut position_of: FxHashMap<(ThreadId, u32), usize> = FxHashMap::default();
    for &r in &reads {
        let Some(copy) = program.agent(ThreadId(r as u32)) else {
            continue;
        };
        let key = (copy.issuer, copy.issue);
        let k = *position_of.entry(key).or_insert_with(|| {
            positions.push((key, Vec::new()));
            positions.len() - 1
        });
        if let Some((_, list)) = positions.get_mut(k) {
            list.push(r);
        }
    }
    // Async-proxy writes and the bytes each surely writes: (first byte, end, agent).
    let covers: Vec<(u64, u64, usize)> = program
        .asyncs
        .copies
        .iter()
        .enumerate()
        .filter(|(_, c)| c.proxy == Proxy::Async)
        .filter_map(|(g, c)| match c.access.view() {
            CommandView::Access {
                kind: AccessKind::Write,
                addr,
                len,
                approx,
                ..
            } => {
                let sure = if approx { len.min(16) } else { len };
                Some((u64::from(addr), u64::from(addr) + u64::from(sure), n + g))
            }
            _ => None,
        })
        .collect();
    let fenced_threads: Vec<ThreadId> = (0..n)
        .map(|t| ThreadId(t as u32))
        .filter(|&t| !program.asyncs.fences(t).is_empty())
        .collect();
    let len_of = |t: ThreadId| {
        program
            .threads
            .get(t.index())
            .map_or(0, |p| p.commands.len() as u32)
    };
    // Whether command `a` happens before position `p` of thread `v`.
    let before_pos = |a: (ThreadId, u32), v: ThreadId, p: u32| {
        if a.0 == v {
            a.1 < p
        } else {
            p > 0 && hb.ordered(a, (v, p - 1))
        }
    };
    // Per (write instruction, copy instruction, copy extent over-approximated).
    let mut groups: FxHashMap<(InstId, InstId, bool), MissingProxyFence> = FxHashMap::default();
    // Per thread of the CTA, a bound below which its commands surely happen before the
    // copies issued at one position: a copy is ordered after everything ordered before its
    // issue, so the bound of one copy serves every copy issued at the same (issuer, issue)
    // (the agents of one tensor-core operand or TMA store: thousands per instruction). A
    // command at or above it, and an agent's write (ordered by completion and sequence
    // numbers, which differ between copies), is tested exactly. `stamp` says which issue
    // position `bounds` was filled for.
    let mut bounds: Vec<Option<u32>> = vec![None; n];
    // Per thread of the CTA, where the last search of its writes ended (below its bound, and
    // the first of those whose own next fence is not).
    let mut hints: Vec<(usize, usize)> = vec![(0, 0); n];
    let mut stamp = vec![0u32; n];
    let mut epoch = 0u32;
    // Scratch: the writes that a position's copies test pair by pair, sorted by first byte.
    let mut writes: Vec<Write> = Vec::new();
    // A thread without warp steps: `before_bound` is exact for it against any thread.
    let unstepped = |t: ThreadId| {
        program
            .threads
            .get(t.index())
            .is_none_or(|p| p.steps.is_empty())
    };
    for ((issuer, issue), agents) in &positions {
        let (issuer, issue) = (*issuer, *issue);
        let Some(&first) = agents.first() else {
            continue;
        };
        epoch = epoch.wrapping_add(1);
        if epoch == 0 {
            stamp.fill(0);
            epoch = 1;
        }
        // Thread `t`'s bound for this position (computed once, from its first copy; `None`
        // where the relation gives none).
        let mut bound_of = |t: usize| -> Option<u32> {
            let (b, s) = (bounds.get_mut(t)?, stamp.get_mut(t)?);
            if *s != epoch {
                *s = epoch;
                *b = hb.before_bound((ThreadId(first as u32), 0), ThreadId(t as u32));
            }
            *b
        };
        // The writes worth a test. For a thread of another warp than the issuer, or where
        // either has no warp steps, the bound is exact (`HappensBeforeQuery::before_bound`):
        // a write at or above it does not
        // happen before the copies (a race, reported as one), and one whose own next fence
        // is below it happens before that fence and the fence before the copies, which the
        // tests below would find for each copy and each overlapping write (2.1 million pairs
        // per explored path of the CUTLASS pingpong GEMM's epilogue, a quarter of its time).
        writes.clear();
        writes.extend_from_slice(&agent_writes);
        // The bytes the position's copies read: a thread whose writes all lie outside
        // needs no bound.
        let (lo, hi) = agents
            .iter()
            .filter_map(
                |&r| match program.agent(ThreadId(r as u32))?.access.view() {
                    CommandView::Access { addr, len, .. } => {
                        Some((u64::from(addr), u64::from(addr) + u64::from(len)))
                    }
                    _ => None,
                },
            )
            .fold((u64::MAX, 0), |(a, b), (s, e)| (a.min(s), b.max(e)));
        for (t, list) in own.iter().enumerate() {
            let Some(&(first_byte, end_byte)) = spans.get(t) else {
                continue;
            };
            if list.is_empty() || end_byte <= lo || first_byte >= hi {
                continue;
            }
            let exact = ThreadId(t as u32).warp(ws) != issuer.warp(ws)
                || unstepped(ThreadId(t as u32))
                || unstepped(issuer);
            let range = match bound_of(t) {
                Some(b) if exact => {
                    // Searched from where this thread's last position found them: a thread's
                    // bound mostly moves little from one issue position to the next.
                    let hint = hints.get_mut(t).map_or((0, 0), |h| *h);
                    let below = partition_from(list, hint.0, |w| w.index < b);
                    let from = partition_from(&list[..below], hint.1, |w| w.fence < b);
                    if let Some(h) = hints.get_mut(t) {
                        *h = (below, from);
                    }
                    from..below
                }
                _ => 0..list.len(),
            };
            writes.extend(list[range].iter().map(|w| (w.addr, w.len, t, w.index)));
        }
        if writes.is_empty() {
            continue;
        }
        writes.sort_unstable();
        let max_len = writes.iter().map(|w| w.1).max().unwrap_or(0);
        for &r in agents {
            let Some(copy) = program.agent(ThreadId(r as u32)) else {
                continue;
            };
            let CommandView::Access { addr, len, .. } = copy.access.view() else {
                continue;
            };
            let (start, end) = (u64::from(addr), u64::from(addr) + u64::from(len));
            let from = writes.partition_point(|w| u64::from(w.0) + u64::from(max_len) <= start);
            let copy_cmd = (ThreadId(r as u32), 0);
            // Whether command (or position) `c` happens before the copy: under the bound, or
            // tested; a position past the end of its thread's program happens before nothing.
            let mut before_copy = |c: (ThreadId, u32)| {
                if c.0.index() >= n {
                    return hb.ordered(c, copy_cmd);
                }
                if c.1 >= len_of(c.0) {
                    return false;
                }
                c.1 < bound_of(c.0.index()).unwrap_or(0) || hb.ordered(c, copy_cmd)
            };
            for &(waddr, wlen, t, i) in &writes[from..] {
                if u64::from(waddr) >= end {
                    break;
                }
                if u64::from(waddr) + u64::from(wlen) <= start {
                    continue;
                }
                let w = (ThreadId(t as u32), i);
                if !before_copy(w) {
                    continue; // a race, reported as one
                }
                // The writer's first fence after the write, the issuer's last fence before
                // the issue, then any thread's earliest fence after the write.
                let own = program
                    .asyncs
                    .fences(w.0)
                    .iter()
                    .find(|&&p| p > i)
                    .is_some_and(|&p| before_copy((w.0, p)));
                let fenced = own
                    || program
                        .asyncs
                        .fences(issuer)
                        .iter()
                        .rev()
                        .find(|&&p| p <= issue)
                        .is_some_and(|&p| before_pos(w, issuer, p))
                    || fenced_threads.iter().any(|&v| {
                        let fs = program.asyncs.fences(v);
                        let k = fs.partition_point(|&p| !before_pos(w, v, p));
                        fs.get(k).is_some_and(|&p| before_copy((v, p)))
                    });
                if fenced {
                    continue;
                }
                // Overwritten through the async proxy before the read.
                let (lo, hi) = (
                    u64::from(waddr).max(start),
                    (u64::from(waddr) + u64::from(wlen)).min(end),
                );
                let overwritten = covers.iter().any(|&(s, e, a)| {
                    s <= lo
                        && hi <= e
                        && hb.ordered(w, (ThreadId(a as u32), 0))
                        && hb.ordered((ThreadId(a as u32), 0), copy_cmd)
                });
                if overwritten {
                    continue;
                }
                let (Some(ws), Some(cs)) = (site(program, t, i), site(program, r, 0)) else {
                    continue;
                };
                let common = waddr.max(addr);
                let entry =
                    groups
                        .entry((ws.inst, cs.inst, cs.approx))
                        .or_insert(MissingProxyFence {
                            write: ws,
                            copy: cs,
                            addr: common,
                            pairs: 0,
                        });
                entry.pairs += 1;
                if (ws.thread, cs.thread, common)
                    < (entry.write.thread, entry.copy.thread, entry.addr)
                {
                    entry.write = ws;
                    entry.copy = cs;
                    entry.addr = common;
                }
            }
        }
    }
    // A pair of instructions found with an exact extent (a TMA store's first 16 bytes, read
    // for sure) is not reported again as possible through its over-approximated extent.
    let found_exactly: FxHashSet<(InstId, InstId)> = groups
        .keys()
        .filter(|k| !k.2)
        .map(|&(w, c, _)| (w, c))
        .collect();
    let mut out: Vec<MissingProxyFence> = groups
        .into_iter()
        .filter(|((w, c, approx), _)| !approx || !found_exactly.contains(&(*w, *c)))
        .map(|(_, f)| f)
        .collect();
    out.sort_by_key(|f| (f.copy.thread, f.write.thread, f.write.index, f.copy.approx));
    out
}

/// `list.partition_point(pred)` (`pred` holds on a prefix of `list`), searched outward from
/// `hint` with doubling steps, then by bisection: `O(log d)` for the point `d` entries from the
/// hint.
fn partition_from<T>(list: &[T], hint: usize, pred: impl Fn(&T) -> bool) -> usize {
    let hint = hint.min(list.len());
    let mut step = 1usize;
    if list.get(hint).is_some_and(&pred) {
        // Every entry below `lo` satisfies `pred`.
        let mut lo = hint + 1;
        loop {
            let Some(j) = lo.checked_add(step).filter(|&j| j <= list.len()) else {
                return lo + list[lo..].partition_point(&pred);
            };
            if !pred(&list[j - 1]) {
                return lo + list[lo..j - 1].partition_point(&pred);
            }
            lo = j;
            step = step.saturating_mul(2);
        }
    }
    // No entry from `hi` on satisfies `pred`.
    let mut hi = hint;
    loop {
        let Some(j) = hi.checked_sub(step) else {
            return list[..hi].partition_point(&pred);
        };
        if pred(&list[j]) {
            return j + 1 + list[j + 1..hi].partition_point(&pred);
        }
        hi = j;
        step = step.saturating_mul(2);
    }
}

#[cfg(test)]
mod partition_tests {
    use super::partition_from;

    #[test]
    fn partition_from_is_partition_point() {
        for len in 0..40usize {
            let list: Vec<usize> = (0..len).map(|i| i / 3 * 2).collect();
            for bound in 0..2 * len + 2 {
                let want = list.partition_point(|&x| x < bound);
                for hint in 0..len + 3 {
                    assert_eq!(partition_from(&list, hint, |&x| x < bound), want);
                }
            }
        }
    }
}
