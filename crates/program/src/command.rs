//! Commands: the straight-line per-thread language that weft checks.
//!
//! A [`Command`] is 16 bytes and owns no heap memory: the emulator records millions of them.
//! Store them packed, match on them through [`Command::view`].

use std::fmt;

/// A thread of the CTA, by linear index `x + y*X + z*X*Y`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ThreadId(pub u32);

impl ThreadId {
    /// The warp this thread belongs to.
    pub fn warp(self, warp_size: u32) -> u32 {
        self.0 / warp_size
    }

    /// The lane of this thread within its warp.
    pub fn lane(self, warp_size: u32) -> u32 {
        self.0 % warp_size
    }

    /// The id as a vector index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for ThreadId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "thread {}", self.0)
    }
}

/// A static instruction: an index into [`crate::SourceTable`]. Every command names the
/// instruction that produced it, which gives its PTX and CUDA locations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct InstId(pub u32);

impl InstId {
    /// The id as a vector index.
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// How many threads a barrier operation expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BarrierCount {
    /// No count operand: every thread of the CTA (`bar.sync 0` / `__syncthreads`).
    All,
    /// An explicit thread count, exactly as the instruction gave it (it may be invalid: zero,
    /// not a multiple of the warp size, or larger than the CTA).
    Threads(u32),
}

impl BarrierCount {
    const ALL_SENTINEL: u32 = u32::MAX;

    fn encode(self) -> u32 {
        match self {
            BarrierCount::All => Self::ALL_SENTINEL,
            // A count of u32::MAX threads cannot be valid either way; clamp so it stays a
            // (still invalid) explicit count.
            BarrierCount::Threads(n) => n.min(Self::ALL_SENTINEL - 1),
        }
    }

    fn decode(raw: u32) -> Self {
        if raw == Self::ALL_SENTINEL {
            BarrierCount::All
        } else {
            BarrierCount::Threads(raw)
        }
    }

    /// The number of threads the barrier waits for in a CTA of `cta_threads` threads.
    pub fn resolve(self, cta_threads: u32) -> u32 {
        match self {
            BarrierCount::All => cta_threads,
            BarrierCount::Threads(n) => n,
        }
    }
}

impl fmt::Display for BarrierCount {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BarrierCount::All => f.write_str("all threads"),
            BarrierCount::Threads(n) => write!(f, "{n} threads"),
        }
    }
}

/// The three named-barrier operations.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BarrierOp {
    /// `bar.arrive`/`barrier.arrive`: registers without blocking.
    Arrive,
    /// `bar.sync`/`barrier.sync`: registers and blocks until the generation completes.
    Sync,
    /// `bar.red`/`barrier.red`: a sync that also reduces a predicate across participants.
    Red,
}

impl BarrierOp {
    /// Whether the operation blocks until its generation completes.
    pub fn blocks(self) -> bool {
        !matches!(self, BarrierOp::Arrive)
    }
}

/// mbarrier operations (recorded by the emulator; checked by later stages).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum MbarrierOp {
    /// `mbarrier.init [addr], count`: value = expected arrival count.
    Init,
    /// `mbarrier.arrive [addr]{, count}`: value = arrival count.
    Arrive,
    /// `mbarrier.arrive.expect_tx [addr], tx`: one arrival; value = transaction bytes expected.
    ArriveExpectTx,
    /// `mbarrier.expect_tx [addr], tx`: value = transaction bytes expected.
    ExpectTx,
    /// Completion of `value` transaction bytes by an asynchronous copy issued by this thread.
    CompleteTx,
    /// A blocking wait (`try_wait`/`test_wait` loop) for the phase of parity `value`.
    WaitParity,
    /// `mbarrier.inval [addr]`.
    Inval,
    /// An arrival (value = count) that happens asynchronously, after its issue: when the
    /// thread's prior `tcgen05` operations complete (`tcgen05.commit`), or its prior
    /// `cp.async` copies (`cp.async.mbarrier.arrive.noinc`). In the phase it is counted in
    /// like [`MbarrierOp::Arrive`].
    AsyncArrive,
}

/// How a command takes part in an execution event ([`CommandView::Exec`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum ExecOp {
    /// Counts towards the event and continues (a `wgmma.mma_async` issue).
    Arrive,
    /// Counts towards the event and blocks until it completes (a lane at a `.sync` warp
    /// collective).
    Sync,
    /// Does not count; blocks until the event completes (a `wgmma.wait_group` that retires
    /// the operation).
    Wait,
}

/// Kinds of shared-memory access.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum AccessKind {
    /// A load.
    Read,
    /// A store.
    Write,
    /// An atomic read-modify-write (`atom.shared`, `red.shared`). Two atomics never race with
    /// each other.
    Atomic,
}

impl AccessKind {
    /// Whether the access modifies memory.
    pub fn writes(self) -> bool {
        !matches!(self, AccessKind::Read)
    }
}

/// A decoded command, for matching.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandView {
    /// A shared-memory access of `len` bytes at byte address `addr` of the CTA's shared
    /// window. `may` marks an access under an input-dependent branch or guard: it may or may
    /// not happen, and it is checked as if it happens. `approx` marks an access whose extent
    /// is an over-approximation (an upper bound of the bytes really accessed, e.g. a TMA copy
    /// whose size lives in a tensor map): a race on it may be an artifact of the extent.
    Access {
        /// Read, write or atomic.
        kind: AccessKind,
        /// First byte, relative to the start of the CTA's shared window.
        addr: u32,
        /// Bytes accessed.
        len: u32,
        /// Whether the access may not happen (input-dependent guard or branch).
        may: bool,
        /// Whether `len` is only an upper bound of the bytes accessed.
        approx: bool,
    },
    /// A named-barrier operation with its raw id (which may be out of range) and count.
    /// `aligned` is true for `bar.*` and `barrier.*.aligned`: every lane of the warp must
    /// execute the same instruction.
    Barrier {
        /// arrive, sync or red.
        op: BarrierOp,
        /// The raw barrier id.
        id: u32,
        /// The raw count.
        count: BarrierCount,
        /// Whether the instruction is `.aligned`.
        aligned: bool,
    },
    /// `bar.warp.sync mask` / `__syncwarp(mask)`: a barrier among the lanes of `mask` in this
    /// thread's warp.
    WarpSync {
        /// Participating lanes.
        mask: u32,
    },
    /// An mbarrier operation on the 8-byte mbarrier object at shared byte address `addr`.
    Mbarrier {
        /// The operation.
        op: MbarrierOp,
        /// Shared byte address of the mbarrier object.
        addr: u32,
        /// Count, transaction bytes or parity, depending on `op`.
        value: u32,
    },
    /// An *execution event*: synchronization that orders when threads run but not what
    /// they see in memory. Event `event` completes once every [`ExecOp::Arrive`] and
    /// [`ExecOp::Sync`] command naming it, in any thread, has executed; `Sync` and `Wait`
    /// block until then. The emulator gives each dynamic event its own id: the lanes of one
    /// `.sync` warp collective (`shfl`, `vote`, `match`, `redux`, `elect`), which PTX makes
    /// wait for each other, or one warpgroup MMA group (the warps' issues, each warp's
    /// retiring `wgmma.wait_group`). These commands constrain which executions exist (the
    /// phase an mbarrier wait can observe, a generation's membership) and order no shared
    /// accesses: the PTX memory model lists no synchronization for them.
    Exec {
        /// Arrive, sync or wait.
        op: ExecOp,
        /// The dynamic event.
        event: u32,
    },
    /// The thread exited (`exit`, or `ret` from the kernel).
    Exit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
enum Tag {
    Read,
    Write,
    Atomic,
    Arrive,
    Sync,
    Red,
    WarpSync,
    Mbarrier,
    Exec,
    Exit,
}

const FLAG_MAY: u8 = 1;
const FLAG_ALIGNED: u8 = 2;
const FLAG_APPROX: u8 = 4;

/// One command of a thread program: 16 bytes, `Copy`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct Command {
    tag: Tag,
    /// Access: FLAG_MAY, FLAG_APPROX. Barrier: FLAG_ALIGNED. Mbarrier: the [`MbarrierOp`].
    /// Exec: the [`ExecOp`].
    small: u8,
    /// A plain write's value id ([`crate::Program::written_value`]); 0: not known.
    value: u16,
    inst: InstId,
    a: u32,
    b: u32,
}

impl Command {
    /// A shared-memory access.
    pub fn access(kind: AccessKind, addr: u32, len: u32, may: bool, inst: InstId) -> Self {
        let tag = match kind {
            AccessKind::Read => Tag::Read,
            AccessKind::Write => Tag::Write,
            AccessKind::Atomic => Tag::Atomic,
        };
        Command {
            value: 0,
            tag,
            small: if may { FLAG_MAY } else { 0 },
            inst,
            a: addr,
            b: len,
        }
    }

    /// A shared-memory access whose extent `len` is only an upper bound of the bytes
    /// accessed (see [`CommandView::Access`]'s `approx`).
    pub fn approx_access(kind: AccessKind, addr: u32, len: u32, may: bool, inst: InstId) -> Self {
        Self::access(kind, addr, len, may, inst).with_approx(true)
    }

    /// This command with the over-approximated-extent flag set to `approx`; commands other
    /// than accesses are returned unchanged.
    #[must_use]
    pub fn with_approx(mut self, approx: bool) -> Self {
        if self.is_access() {
            if approx {
                self.small |= FLAG_APPROX;
            } else {
                self.small &= !FLAG_APPROX;
            }
        }
        self
    }

    /// A named-barrier operation.
    pub fn barrier(
        op: BarrierOp,
        id: u32,
        count: BarrierCount,
        aligned: bool,
        inst: InstId,
    ) -> Self {
        let tag = match op {
            BarrierOp::Arrive => Tag::Arrive,
            BarrierOp::Sync => Tag::Sync,
            BarrierOp::Red => Tag::Red,
        };
        Command {
            value: 0,
            tag,
            small: if aligned { FLAG_ALIGNED } else { 0 },
            inst,
            a: id,
            b: count.encode(),
        }
    }

    /// A warp-level barrier over the lanes of `mask`.
    pub fn warp_sync(mask: u32, inst: InstId) -> Self {
        Command {
            value: 0,
            tag: Tag::WarpSync,
            small: 0,
            inst,
            a: mask,
            b: 0,
        }
    }

    /// An mbarrier operation.
    pub fn mbarrier(op: MbarrierOp, addr: u32, value: u32, inst: InstId) -> Self {
        Command {
            value: 0,
            tag: Tag::Mbarrier,
            small: op as u8,
            inst,
            a: addr,
            b: value,
        }
    }

    /// A part in the execution event `event` (see [`CommandView::Exec`]).
    pub fn exec(op: ExecOp, event: u32, inst: InstId) -> Self {
        Command {
            value: 0,
            tag: Tag::Exec,
            small: op as u8,
            inst,
            a: event,
            b: 0,
        }
    }

    /// Thread exit.
    pub fn exit(inst: InstId) -> Self {
        Command {
            value: 0,
            tag: Tag::Exit,
            small: 0,
            inst,
            a: 0,
            b: 0,
        }
    }

    /// This plain write, tagged with the id of the value it stores (see
    /// [`crate::Program::values`]); any other command is returned unchanged.
    pub fn with_value(mut self, id: u16) -> Self {
        if self.tag == Tag::Write {
            self.value = id;
        }
        self
    }

    /// The id of the value a plain write stores, when every byte of it was known.
    pub fn value_id(&self) -> Option<u16> {
        (self.value != 0).then_some(self.value)
    }

    /// The instruction that produced this command.
    pub fn inst(&self) -> InstId {
        self.inst
    }

    /// Whether this is a named-barrier or warp-barrier operation (what the barrier state
    /// machine consumes).
    pub fn is_sync(&self) -> bool {
        matches!(self.tag, Tag::Arrive | Tag::Sync | Tag::Red | Tag::WarpSync)
    }

    /// Whether this is a shared-memory access.
    pub fn is_access(&self) -> bool {
        matches!(self.tag, Tag::Read | Tag::Write | Tag::Atomic)
    }

    /// 0 exactly when `other` is this command with an access's address moved by `d` bytes
    /// (wrapping) and its written value free: a command that is not an access must equal
    /// `other`, an access must have `other`'s instruction, kind, length and flags. Without a
    /// branch, on the command as two words (the race stage compares every lane's commands
    /// with the lane before's).
    #[inline(always)]
    pub fn moved_mismatch(&self, other: &Command, d: u32) -> u64 {
        // Only a plain write has a value id (`with_value`): ignoring the value bits compares
        // every other command whole.
        const NO_VALUE: u64 = !(0xffff << 32);
        let (x0, x1) = self.words();
        let (y0, y1) = other.words();
        let moved = if self.is_access() {
            u64::from(d) << 32
        } else {
            0
        };
        (x0.wrapping_add(moved) ^ y0) | ((x1 ^ y1) & NO_VALUE)
    }

    /// The command as two words: its instruction and first operand (an access's address),
    /// then its second operand, value id, flags and tag (the order of their bytes in memory
    /// today, so that each word is one load).
    #[inline(always)]
    fn words(&self) -> (u64, u64) {
        (
            u64::from(self.inst.0) | (u64::from(self.a) << 32),
            u64::from(self.b)
                | (u64::from(self.value) << 32)
                | (u64::from(self.small) << 48)
                | (u64::from(self.tag as u8) << 56),
        )
    }

    /// How far `other`'s address lies past this access's (wrapping); 0 for a command that is
    /// not an access.
    #[inline(always)]
    pub fn address_distance(&self, other: &Command) -> u32 {
        if self.is_access() {
            other.a.wrapping_sub(self.a)
        } else {
            0
        }
    }

    /// The decoded command.
    pub fn view(&self) -> CommandView {
        match self.tag {
            Tag::Read | Tag::Write | Tag::Atomic => CommandView::Access {
                kind: match self.tag {
                    Tag::Read => AccessKind::Read,
                    Tag::Write => AccessKind::Write,
                    _ => AccessKind::Atomic,
                },
                addr: self.a,
                len: self.b,
                may: self.small & FLAG_MAY != 0,
                approx: self.small & FLAG_APPROX != 0,
            },
            Tag::Arrive | Tag::Sync | Tag::Red => CommandView::Barrier {
                op: match self.tag {
                    Tag::Arrive => BarrierOp::Arrive,
                    Tag::Sync => BarrierOp::Sync,
                    _ => BarrierOp::Red,
                },
                id: self.a,
                count: BarrierCount::decode(self.b),
                aligned: self.small & FLAG_ALIGNED != 0,
            },
            Tag::WarpSync => CommandView::WarpSync { mask: self.a },
            Tag::Mbarrier => CommandView::Mbarrier {
                op: mbarrier_op_from_u8(self.small),
                addr: self.a,
                value: self.b,
            },
            Tag::Exec => CommandView::Exec {
                op: match self.small {
                    0 => ExecOp::Arrive,
                    1 => ExecOp::Sync,
                    // `small` is only ever written from `op as u8` in `Command::exec`.
                    _ => ExecOp::Wait,
                },
                event: self.a,
            },
            Tag::Exit => CommandView::Exit,
        }
    }
}

fn mbarrier_op_from_u8(raw: u8) -> MbarrierOp {
    const OPS: [MbarrierOp; 8] = [
        MbarrierOp::Init,
        MbarrierOp::Arrive,
        MbarrierOp::ArriveExpectTx,
        MbarrierOp::ExpectTx,
        MbarrierOp::CompleteTx,
        MbarrierOp::WaitParity,
        MbarrierOp::Inval,
        MbarrierOp::AsyncArrive,
    ];
    // `small` is only ever written from `op as u8` in `Command::mbarrier`.
    OPS[usize::from(raw) % OPS.len()]
}

impl fmt::Debug for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} @{}", self, self.inst.0)
    }
}

/// The text form: `read 0x40+4`, `write 0x40+16 (may)`, `read 0x40+256 (approx)`,
/// `write 0x40+16 (may) (approx)`, `sync 1 64`, `arrive 2 all`,
/// `warpsync 0xffffffff`, `mbarrier.wait_parity 0x100 1`, `exec.sync 7`, `exit`.
impl fmt::Display for Command {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.view() {
            CommandView::Access {
                kind,
                addr,
                len,
                may,
                approx,
            } => {
                let k = match kind {
                    AccessKind::Read => "read",
                    AccessKind::Write => "write",
                    AccessKind::Atomic => "atomic",
                };
                write!(f, "{k} {addr:#x}+{len}")?;
                if may {
                    f.write_str(" (may)")?;
                }
                if approx {
                    f.write_str(" (approx)")?;
                }
                Ok(())
            }
            CommandView::Barrier { op, id, count, .. } => {
                let o = match op {
                    BarrierOp::Arrive => "arrive",
                    BarrierOp::Sync => "sync",
                    BarrierOp::Red => "red",
                };
                match count {
                    BarrierCount::All => write!(f, "{o} {id} all"),
                    BarrierCount::Threads(n) => write!(f, "{o} {id} {n}"),
                }
            }
            CommandView::WarpSync { mask } => write!(f, "warpsync {mask:#x}"),
            CommandView::Mbarrier { op, addr, value } => {
                let o = match op {
                    MbarrierOp::Init => "init",
                    MbarrierOp::Arrive => "arrive",
                    MbarrierOp::ArriveExpectTx => "arrive_expect_tx",
                    MbarrierOp::ExpectTx => "expect_tx",
                    MbarrierOp::CompleteTx => "complete_tx",
                    MbarrierOp::WaitParity => "wait_parity",
                    MbarrierOp::Inval => "inval",
                    MbarrierOp::AsyncArrive => "async_arrive",
                };
                write!(f, "mbarrier.{o} {addr:#x} {value}")
            }
            CommandView::Exec { op, event } => {
                let o = match op {
                    ExecOp::Arrive => "arrive",
                    ExecOp::Sync => "sync",
                    ExecOp::Wait => "wait",
                };
                write!(f, "exec.{o} {event}")
            }
            CommandView::Exit => f.write_str("exit"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn command_is_sixteen_bytes() {
        assert_eq!(std::mem::size_of::<Command>(), 16);
    }

    #[test]
    fn round_trips_through_view() {
        let i = InstId(7);
        let cases = [
            Command::access(AccessKind::Read, 0x40, 4, false, i),
            Command::access(AccessKind::Write, 0x80, 16, true, i),
            Command::access(AccessKind::Atomic, 0, 8, false, i),
            Command::approx_access(AccessKind::Read, 0x40, 256, false, i),
            Command::approx_access(AccessKind::Write, 0x80, 16, true, i),
            Command::barrier(BarrierOp::Sync, 1, BarrierCount::Threads(64), true, i),
            Command::barrier(BarrierOp::Arrive, 20, BarrierCount::All, false, i),
            Command::barrier(BarrierOp::Red, 0, BarrierCount::Threads(0), true, i),
            Command::warp_sync(0xffff, i),
            Command::mbarrier(MbarrierOp::WaitParity, 0x100, 1, i),
            Command::mbarrier(MbarrierOp::Inval, 0x100, 0, i),
            Command::exec(ExecOp::Arrive, 3, i),
            Command::exec(ExecOp::Sync, 4, i),
            Command::exec(ExecOp::Wait, 5, i),
            Command::exit(i),
        ];
        let texts: Vec<String> = cases.iter().map(|c| c.to_string()).collect();
        assert_eq!(
            texts,
            [
                "read 0x40+4",
                "write 0x80+16 (may)",
                "atomic 0x0+8",
                "read 0x40+256 (approx)",
                "write 0x80+16 (may) (approx)",
                "sync 1 64",
                "arrive 20 all",
                "red 0 0",
                "warpsync 0xffff",
                "mbarrier.wait_parity 0x100 1",
                "mbarrier.inval 0x100 0",
                "exec.arrive 3",
                "exec.sync 4",
                "exec.wait 5",
                "exit",
            ]
        );
        for c in cases {
            assert_eq!(c.inst(), i);
            // The flag only exists on accesses and can be cleared again.
            assert_eq!(
                c.with_approx(false).with_approx(false),
                c.with_approx(false)
            );
        }
        let a = Command::access(AccessKind::Write, 0x80, 16, true, i);
        assert_eq!(a.with_approx(true).with_approx(false), a);
        assert_eq!(
            a.with_approx(true).view(),
            CommandView::Access {
                kind: AccessKind::Write,
                addr: 0x80,
                len: 16,
                may: true,
                approx: true,
            }
        );
        let s = Command::barrier(BarrierOp::Sync, 1, BarrierCount::Threads(64), true, i);
        assert_eq!(s.with_approx(true), s);
    }
}
