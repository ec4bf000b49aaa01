//! The command language every weft stage shares.
//!
//! What weft promises (verdicts, the PTX ISA facts it relies on with their sections, the rules
//! for exited threads, mbarrier parity and same-instruction writes, every approximation) is
//! written down in the repository's `docs/semantics.md`.
//!
//! The emulator produces a [`Program`]: for each thread of one CTA, the straight-line
//! sequence of [`Command`]s it executed (shared-memory accesses, named-barrier operations,
//! mbarrier operations, exit), each naming the static instruction ([`InstId`]) it came from.
//! The barrier-graph and race stages consume it. This is the WEFT paper's core language
//! (`read g | write g | arrive b n | sync b n`, §3.1) extended with byte ranges, atomics,
//! `bar.red`, warp barriers, mbarriers and exit, plus asynchronous copies as agents of their
//! own ([`AsyncOps`]).
//!
//! [`BarrierFile`] is the single implementation of the named-barrier state machine (§3.3 of
//! the paper plus PTX's per-warp and `exit` rules). The emulator uses it to decide when a
//! thread blocks; the barrier-graph stage replays programs through it to assign generations.
//! Both therefore agree on what blocks.
//!
//! Architecture invariant: this crate knows no PTX syntax and does no IO.

#![deny(missing_docs)]

mod asynchronous;
mod barrier;
mod command;
mod mbarrier;
mod source;

pub use asynchronous::{AsyncCopy, AsyncOps, ExclusiveSides, Proxy};
pub use barrier::snapshot::{BarrierSnapshot, RelativeParticipant};
pub use barrier::{
    BarrierConfig, BarrierFile, BarrierKey, Completion, Event, GatherKey, NUM_NAMED_BARRIERS,
    OpenGather, OpenGeneration, Participant, SyncError,
};
pub use command::{
    AccessKind, BarrierCount, BarrierOp, Command, CommandView, ExecOp, InstId, MbarrierOp, ThreadId,
};
pub use mbarrier::{
    InitSite, MBARRIER_MAX_COUNT, MbarrierError, MbarrierFile, MbarrierSnapshot, MbarrierState,
    PhaseStep,
};
pub use source::{CudaLoc, InstSite, SourceTable};

/// The number of threads in a warp.
pub const WARP_SIZE: u32 = 32;

/// Lanes of a CTA's tensor memory (PTX ISA, *Tensor Memory*).
pub const TMEM_LANES: u32 = 128;

/// Columns of a CTA's tensor memory; a cell (lane, column) holds 32 bits.
pub const TMEM_COLUMNS: u32 = 512;

/// Where tensor memory lies in the address space of accesses ([`CommandView::Access`]):
/// cell (lane, column) is the 4 bytes at `TMEM_BASE + 4 · (lane · TMEM_COLUMNS + column)`,
/// a lane's columns consecutive. Shared windows end far below it (at most 228 KiB), so an
/// access is to tensor memory exactly when its address is at least `TMEM_BASE`. Only
/// asynchronous agents ([`Proxy::Tensor`]) access it.
pub const TMEM_BASE: u32 = 0x4000_0000;

/// The address of tensor-memory cell (`lane`, `column`) ([`TMEM_BASE`]); `None` outside
/// the 128 lanes and 512 columns.
pub fn tmem_address(lane: u32, column: u32) -> Option<u32> {
    (lane < TMEM_LANES && column < TMEM_COLUMNS)
        .then(|| TMEM_BASE + 4 * (lane * TMEM_COLUMNS + column))
}

/// The tensor-memory cell (lane, column) an access address names, or `None` for a shared
/// address.
pub fn tmem_cell(addr: u32) -> Option<(u32, u32)> {
    let cell = addr.checked_sub(TMEM_BASE)? / 4;
    (cell < TMEM_LANES * TMEM_COLUMNS).then_some((cell / TMEM_COLUMNS, cell % TMEM_COLUMNS))
}

/// Bytes the memory budget charges per entry of the race stage: one per aligned 4-byte word
/// an access touches ([`race_entries`]); at least the race crate's entry (checked there).
pub const RACE_ENTRY_BYTES: u64 = 24;

/// The race stage's entries of an access of `len` bytes at `addr`: the aligned 4-byte words
/// it touches.
pub fn race_entries(addr: u32, len: u32) -> u64 {
    if len == 0 {
        return 0;
    }
    let first = u64::from(addr) / 4;
    let last = (u64::from(addr) + u64::from(len) - 1) / 4;
    last - first + 1
}

/// The bytes [`RACE_ENTRY_BYTES`] charges for an access of `len` bytes at `addr`.
pub fn race_entry_bytes(addr: u32, len: u32) -> u64 {
    race_entries(addr, len).saturating_mul(RACE_ENTRY_BYTES)
}

/// The shape of a CTA (thread block): `x * y * z` threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CtaShape {
    /// Threads along x.
    pub x: u32,
    /// Threads along y.
    pub y: u32,
    /// Threads along z.
    pub z: u32,
}

impl CtaShape {
    /// A 1-D shape.
    pub fn linear(x: u32) -> Self {
        CtaShape { x, y: 1, z: 1 }
    }

    /// Total number of threads.
    pub fn threads(&self) -> u32 {
        self.x * self.y * self.z
    }

    /// The `(x, y, z)` thread index of a linear thread id.
    pub fn tid(&self, thread: ThreadId) -> [u32; 3] {
        let t = thread.0;
        [t % self.x, (t / self.x) % self.y, t / (self.x * self.y)]
    }
}

/// How a thread's emulation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ThreadEnd {
    /// The thread exited; its last command is [`CommandView::Exit`].
    Exited,
    /// The thread was blocked when no thread could make progress: its last command is the
    /// blocking barrier or mbarrier wait. The barrier-graph stage reports the deadlock.
    Blocked,
    /// The thread's last command put a barrier into an error state (the barrier-graph stage
    /// replays it and reports the violation), and the emulation stopped.
    BarrierError,
    /// The thread executed a reachable `trap` (or `brkpt`) at this instruction.
    Trapped(InstId),
    /// The thread did not reach its end because emulation stopped elsewhere (another
    /// thread's error, or an unverifiable construct). Its program is a prefix.
    Stopped,
}

/// The straight-line program of one thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ThreadProgram {
    /// The commands, in program order.
    pub commands: Vec<Command>,
    /// How the thread's emulation ended.
    pub end: ThreadEnd,
    /// Empty unless the CTA was emulated warp-synchronously (`--warp-sync`). Then
    /// `steps[i]` is the warp's instruction counter when command `i` executed: lanes of one
    /// warp run in lock-step, so two commands of lanes of the same warp are ordered by their
    /// steps, and equal steps mean the same dynamic instruction.
    pub steps: Vec<u32>,
}

/// The per-thread programs of one CTA. [`Program::new`] is its only constructor: the warp
/// size is at least 1 and there is one program per thread of the shape.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program {
    /// The CTA's shape; `threads.len() == shape.threads()`.
    pub shape: CtaShape,
    /// Lanes per warp (private: [`Program::new`] checks it).
    warp_size: std::num::NonZeroU32,
    /// One program per thread, indexed by [`ThreadId`].
    pub threads: Vec<ThreadProgram>,
    /// Asynchronous copies in flight between their issue and their completion, as agents of
    /// their own, and the threads' `fence.proxy.async` positions.
    pub asyncs: AsyncOps,
    /// The values plain writes store, when every byte was known: `values[id - 1]` holds the
    /// bytes (little-endian, at most 16) of the writes tagged `id` ([`Command::value_id`]).
    /// Two unordered plain writes storing the same bytes are a benign race.
    pub values: Vec<u128>,
    /// Value ids (sorted) whose writes store one value that is a function of the kernel's
    /// inputs only (a symbolic term): every write tagged with such an id stores the same
    /// bytes, which are not known ([`Program::written_value`] is `None` for them; their
    /// `values` entry is 0).
    pub symbolic_values: Vec<u16>,
}

/// Why [`Program::new`] refused its parts.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProgramError {
    /// A warp of no lanes.
    #[error("the warp size must be at least 1")]
    ZeroWarpSize,
    /// The thread programs do not match the shape.
    #[error("a CTA of {expected} threads has {got} thread programs")]
    ThreadCount {
        /// `shape.threads()`.
        expected: u32,
        /// The number of programs given.
        got: usize,
    },
}

impl Program {
    /// The programs `threads` of a CTA of `shape` whose warps have `warp_size` lanes (32 for
    /// real kernels; tests of the formal semantics use 1, which makes every thread its own
    /// warp and the semantics exactly the paper's).
    pub fn new(
        shape: CtaShape,
        warp_size: u32,
        threads: Vec<ThreadProgram>,
    ) -> Result<Program, ProgramError> {
        let warp_size = std::num::NonZeroU32::new(warp_size).ok_or(ProgramError::ZeroWarpSize)?;
        let expected = shape.threads();
        if threads.len() != expected as usize {
            return Err(ProgramError::ThreadCount {
                expected,
                got: threads.len(),
            });
        }
        Ok(Program {
            shape,
            warp_size,
            threads,
            asyncs: AsyncOps::default(),
            values: Vec::new(),
            symbolic_values: Vec::new(),
        })
    }

    /// The bytes a plain write tagged with value id `id` stores (little-endian).
    pub fn written_value(&self, id: u16) -> Option<u128> {
        if self.is_symbolic_value(id) {
            return None;
        }
        self.values.get(usize::from(id).checked_sub(1)?).copied()
    }

    /// Whether value id `id` stands for a symbolic value ([`Program::symbolic_values`]).
    pub fn is_symbolic_value(&self, id: u16) -> bool {
        id != 0 && self.symbolic_values.binary_search(&id).is_ok()
    }

    /// Lanes per warp (at least 1).
    pub fn warp_size(&self) -> u32 {
        self.warp_size.get()
    }

    /// Number of threads.
    pub fn num_threads(&self) -> u32 {
        self.shape.threads()
    }

    /// Number of warps (the last one may be partial).
    pub fn num_warps(&self) -> u32 {
        self.num_threads().div_ceil(self.warp_size())
    }

    /// The asynchronous copy an agent id names (an id `>= threads.len()` numbers the
    /// asynchronous copy `agent - threads.len()`), or `None` for a thread of the CTA.
    pub fn agent(&self, agent: ThreadId) -> Option<&AsyncCopy> {
        agent
            .index()
            .checked_sub(self.threads.len())
            .and_then(|g| self.asyncs.copies.get(g))
    }

    /// The commands of thread or agent `t`: a thread's program, or an asynchronous copy's
    /// one access (agent `threads.len() + g` is copy `g`); empty past the last agent.
    pub fn actor_commands(&self, t: usize) -> &[Command] {
        match self.threads.get(t) {
            Some(thread) => &thread.commands,
            None => self
                .asyncs
                .copies
                .get(t - self.threads.len())
                .map_or(&[], |c| std::slice::from_ref(&c.access)),
        }
    }

    /// The CTA's threads and its asynchronous copies' agents ([`Self::actor_commands`]).
    pub fn num_actors(&self) -> usize {
        self.threads.len() + self.asyncs.copies.len()
    }

    /// Total number of commands over all threads.
    pub fn num_commands(&self) -> usize {
        self.threads.iter().map(|t| t.commands.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn program_new_checks_warp_size_and_thread_count() {
        let thread = || ThreadProgram {
            commands: Vec::new(),
            end: ThreadEnd::Exited,
            steps: Vec::new(),
        };
        let shape = CtaShape::linear(2);
        assert_eq!(
            Program::new(shape, 0, vec![thread(), thread()]),
            Err(ProgramError::ZeroWarpSize)
        );
        assert_eq!(
            Program::new(shape, 32, vec![thread()]),
            Err(ProgramError::ThreadCount {
                expected: 2,
                got: 1
            })
        );
        let p = Program::new(shape, 32, vec![thread(), thread()]).expect("valid");
        assert_eq!((p.warp_size(), p.num_warps()), (32, 1));
    }
}
