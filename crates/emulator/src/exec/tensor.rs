//! Tensor-core operand reads: `wgmma.mma_async` and `tcgen05.mma` read their shared-memory
//! operands through matrix descriptors ([`super::descriptor`]), asynchronously. Each
//! contiguous run of bytes an operation reads is an agent of its own
//! ([`weft_program::AsyncCopy`], async proxy), from the issue until what completes it:
//!
//! - `wgmma.mma_async` is one operation of the warpgroup (four consecutive warps, the first
//!   a multiple of 4), which starts once all four warps issued it. Each warp's
//!   `wgmma.commit_group` batches its uncommitted issues into a group, and a
//!   `wgmma.wait_group N` that leaves at most `N` of the warp's groups pending returns after
//!   the operations of the older ones completed. weft matches the lanes' `k`-th issues
//!   (their `k`-th `wgmma.mma_async` executions) as one operation: its reads start after the
//!   first issuing lane's earlier commands, and end before the retiring `wait_group` of every
//!   lane of the warpgroup (the issuer's as [`AsyncCopy::done`], the others as a shared
//!   completion set, [`AsyncCopy::joint`]). A lane whose issue names other bytes or another
//!   instruction gets agents of its own, completed by its own waits.
//! - `tcgen05.mma` is issued by one thread; `tcgen05.commit ... mbarrier::arrive::one`
//!   makes the mbarrier track the completion of all that thread's prior tcgen05 operations.
//!   An operation's reads end before the phase in which the arrive-on of the first commit
//!   after it on each mbarrier is counted completes.
//!
//! [`AsyncCopy::done`]: weft_program::AsyncCopy::done
//! [`AsyncCopy::joint`]: weft_program::AsyncCopy::joint

use super::descriptor::{self, Footprint, LayoutError, OperandShape, SmemDesc};
use super::{Machine, UNCOMMITTED};
use crate::ir::{Inst, Opnd};
use crate::unverifiable::{MatrixIssue, Value, Why};
use crate::{FindingKind, ValueSource};
use rustc_hash::FxHashMap;
use weft_program::{AccessKind, Proxy, ThreadId, WARP_SIZE};

/// Tensor-memory columns one allocation may request (PTX ISA: *Tensor Memory Allocation and
/// Management Instructions*: `nCols` is a power of 2 in `[32, 512]`).
const TMEM_MIN_COLS: u64 = 32;
const TMEM_MAX_COLS: u64 = 512;

/// The tensor-memory allocation protocol of the CTA, counted per warp instruction
/// (`tcgen05.alloc`, `dealloc` and `relinquish_alloc_permit` are `.sync.aligned`: the
/// warp allocates once).
#[derive(Clone, Debug, Default)]
pub(super) struct TensorMemory {
    /// Columns allocated and deallocated so far (their difference at the end does not
    /// depend on the interleaving).
    allocated: u64,
    deallocated: u64,
    /// The first allocating and deallocating (thread, instruction), for the report.
    first_alloc: Option<(usize, u32)>,
    first_dealloc: Option<(usize, u32)>,
    /// (warp, instruction, per-lane occurrence) already counted.
    counted: rustc_hash::FxHashSet<(u32, u32, u32)>,
    /// Per (thread, instruction): executions so far.
    occurrences: FxHashMap<(u32, u32), u32>,
    /// Threads that executed `tcgen05.relinquish_alloc_permit`.
    relinquished: rustc_hash::FxHashSet<u32>,
    /// An operation ran under an input-dependent branch: the balance is not checked.
    uncertain: bool,
    /// The column the next allocation is placed from.
    next_column: u32,
    /// Per (warp, instruction, occurrence) of `tcgen05.alloc`: the address it returned.
    placed: FxHashMap<(u32, u32, u32), Option<u32>>,
}

/// Threads of a warpgroup.
const WARPGROUP: usize = 4 * WARP_SIZE as usize;

/// Entries of the operand-footprint cache before it is cleared.
const FOOTPRINT_CACHE: usize = 256;

/// One warpgroup-level `wgmma.mma_async`: the agents of its reads and their completion set.
#[derive(Debug, Clone)]
pub(super) struct WgmmaOp {
    pc: u32,
    /// What its footprints were computed from: a lane with the same joins it at once.
    inputs: WgmmaInputs,
    /// The bytes read (both operands), to tell whether a lane's issue is the same one.
    runs: Vec<(u32, u32)>,
    /// The thread whose issue created the agents.
    issuer: usize,
    /// The agents (indices of `Machine::copies`).
    agents: Vec<u32>,
    /// The completion set of the other lanes (index into `Machine::joint_done`).
    joint: u32,
}

/// The inputs of a `wgmma.mma_async`'s operand footprints ([`Machine::wgmma_inputs`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct WgmmaInputs {
    shape: WgmmaShape,
    /// The A descriptor, when A is one (else A is in registers).
    a: Option<u64>,
    /// The B descriptor and its unknown sources (reported when the footprints are made).
    b: (u64, u32),
    trans_a: u64,
    trans_b: u64,
}

/// The shape of a `wgmma.mma_async`, from its opcode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct WgmmaShape {
    n: u32,
    k: u32,
    a_bits: u32,
    b_bits: u32,
    sparse: bool,
    /// `.f16`/`.bf16` operands: the only ones with transpose immediates.
    transposable: bool,
}

fn elem_bits(ty: &str) -> Option<u32> {
    Some(match ty {
        "f16" | "bf16" => 16,
        "tf32" => 32,
        "e4m3" | "e5m2" | "u8" | "s8" => 8,
        "b1" => 1,
        _ => return None,
    })
}

/// Parses `wgmma.mma_async{.sp}.sync.aligned.m64nNkK.dtype.atype.btype...`.
pub(super) fn wgmma_shape(opcode: &str) -> Option<WgmmaShape> {
    let mods: Vec<&str> = opcode.split('.').collect();
    let at = mods.iter().position(|m| {
        m.starts_with("m64n")
            && m.contains('k')
            && m[1..].chars().all(|c| c.is_ascii_alphanumeric())
    })?;
    let shape = mods[at].strip_prefix("m64n")?;
    let (n, k) = shape.split_once('k')?;
    let (n, k) = (n.parse().ok()?, k.parse().ok()?);
    // dtype, atype, btype follow the shape.
    let a = *mods.get(at + 2)?;
    let b = *mods.get(at + 3)?;
    let (a_bits, b_bits) = (elem_bits(a)?, elem_bits(b)?);
    Some(WgmmaShape {
        n,
        k,
        a_bits,
        b_bits,
        sparse: mods.contains(&"sp"),
        transposable: a_bits == 16 && b_bits == 16,
    })
}

/// How a `tcgen05.mma` kind lays out its instruction descriptor and its shared operands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TcgenKind {
    /// `.kind::tf32`, `.kind::f16`, `.kind::f8f6f4`, `.kind::i8` (PTX ISA: *Instruction
    /// descriptor*, the table for these kinds): M is bits 24–28 (`M >> 4`); K is 32 bytes
    /// per row; elements of `bits` bits in shared memory (f8f6f4's 6- and 4-bit types sit in
    /// 8-bit containers).
    Common { bits: u32 },
    /// `.kind::mxf8f6f4` with block scaling: M is bits 27–28 (`M >> 7`), elements in 8-bit
    /// containers, 32 bytes of K per row. The scale factors live in tensor memory.
    BlockScaled8,
    /// `.kind::mxf4` and `.kind::mxf4nvf4`: packed 4-bit elements, K-major only; M is bits
    /// 27–28 (`M >> 7`); bit 31 selects K = 96 (48 bytes per row) over K = 64 (32 bytes).
    BlockScaled4,
}

impl TcgenKind {
    fn of(opcode: &str) -> Option<Self> {
        let kind = opcode.split('.').find_map(|m| m.strip_prefix("kind::"))?;
        Some(match kind {
            "f16" => TcgenKind::Common { bits: 16 },
            "tf32" => TcgenKind::Common { bits: 32 },
            "f8f6f4" | "i8" => TcgenKind::Common { bits: 8 },
            "mxf8f6f4" => TcgenKind::BlockScaled8,
            "mxf4" | "mxf4nvf4" => TcgenKind::BlockScaled4,
            _ => return None,
        })
    }

    /// Bits per element in shared memory.
    fn elem_bits(self) -> u32 {
        match self {
            TcgenKind::Common { bits } => bits,
            TcgenKind::BlockScaled8 => 8,
            TcgenKind::BlockScaled4 => 4,
        }
    }

    /// M (rows of A and D) from the instruction descriptor.
    fn m(self, idesc: u64) -> u32 {
        match self {
            TcgenKind::Common { .. } => ((idesc >> 24) & 0x1f) as u32 * 16,
            TcgenKind::BlockScaled8 | TcgenKind::BlockScaled4 => ((idesc >> 27) & 0x3) as u32 * 128,
        }
    }

    /// Bytes of K per operand row.
    fn k_bytes(self, idesc: u64) -> u32 {
        match self {
            TcgenKind::BlockScaled4 if idesc & (1 << 31) != 0 => 48,
            _ => 32,
        }
    }
}

/// The rows and bytes per row of a `tcgen05.cp` shape modifier (`128x256b`, ...).
fn tcgen_cp_shape(m: &str) -> Option<(u32, u32)> {
    match m {
        "128x256b" => Some((128, 32)),
        "4x256b" => Some((4, 32)),
        "128x128b" => Some((128, 16)),
        "64x128b" => Some((64, 16)),
        "32x128b" => Some((32, 16)),
        _ => None,
    }
}

fn layout_issue(e: LayoutError) -> MatrixIssue {
    match e {
        LayoutError::InvalidSwizzle(_) => MatrixIssue::ReservedSwizzle,
        LayoutError::AbsoluteLeadingDimension => MatrixIssue::AbsoluteLeadingDimension,
        LayoutError::Shape => MatrixIssue::Shape,
    }
}

impl Machine<'_> {
    /// Records that the shared operands of the tensor-core instruction at `pc` cannot be
    /// laid out (`issue`): the kernel is unverifiable.
    pub(super) fn matrix_issue(&mut self, t: usize, pc: u32, issue: MatrixIssue) {
        self.unverifiable(t, pc, Why::MatrixOperand(issue), None, 0, false);
    }

    /// A descriptor operand's value, or `None` (recorded as unverifiable) when unknown.
    fn descriptor(&mut self, t: usize, pc: u32, o: Opnd) -> Option<u64> {
        self.known_value(t, pc, o, Value::MatrixDescriptor, false)
    }

    /// An immediate operand (`wgmma`'s transpose flags).
    fn immediate(&mut self, t: usize, pc: u32, o: Opnd) -> Option<u64> {
        match o {
            Opnd::Imm(v) => Some(v),
            _ => {
                self.matrix_issue(t, pc, MatrixIssue::Shape);
                None
            }
        }
    }

    /// The footprint of one operand (cached per descriptor and shape), or `None` (recorded
    /// as unverifiable).
    fn operand_footprint(
        &mut self,
        t: usize,
        pc: u32,
        desc: Result<SmemDesc, LayoutError>,
        shape: OperandShape,
    ) -> Option<Footprint> {
        let laid = desc.and_then(|d| {
            if let Some(f) = self.footprints.get(&(d, shape)) {
                return f.clone();
            }
            let f = descriptor::footprint(&d, &shape);
            if self.footprints.len() >= FOOTPRINT_CACHE {
                self.footprints.clear();
            }
            self.footprints.insert((d, shape), f.clone());
            f
        });
        match laid {
            Ok(f) => Some(f),
            Err(e) => {
                self.matrix_issue(t, pc, layout_issue(e));
                None
            }
        }
    }

    /// Records the reads of `footprints` by thread `t` as agents (async proxy); returns
    /// their indices.
    fn operand_agents(&mut self, t: usize, pc: u32, footprints: &[Footprint]) -> Vec<u32> {
        let mut agents = Vec::new();
        for f in footprints {
            for &(start, len) in &f.runs {
                self.divert = Some(Proxy::Async);
                let ok = self.shared_access(t, pc, AccessKind::Read, start, len, 0);
                self.divert = None;
                if ok {
                    let g = self.copies.len() as u32 - 1;
                    if !f.exact {
                        self.flag_approx(g);
                    }
                    agents.push(g);
                }
            }
        }
        agents
    }

    /// `wgmma.mma_async`: the accumulators become unknown; the shared operands are read by
    /// the warpgroup's operation (module docs).
    pub(super) fn wgmma_mma(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd]) {
        let u = self.src.single(ValueSource::Other("a tensor-core result"));
        self.clobber(t, inst, u);
        let occurrence = self.wg_occ[t];
        self.wg_occ[t] = occurrence.saturating_add(1);
        let Some(inputs) = self.wgmma_inputs(t, pc, ops) else {
            return;
        };
        let key = ((t / WARPGROUP) as u32, occurrence);
        // Every thread of the warpgroup joins the operation its first thread issued: at
        // once when it gives the same inputs (the footprints are a function of them), else
        // when its footprints read the same runs (compared in place: the 127 others
        // allocate nothing).
        let first = self.wg_index.get(&key).copied();
        let same_inputs = first.filter(|&k| {
            self.wg_ops
                .get(k as usize)
                .is_some_and(|op| op.pc == pc && op.inputs == inputs)
        });
        if let Some(k) = same_inputs {
            self.wg_pending[t].push_back((k, UNCOMMITTED));
            return;
        }
        let Some(footprints) = self.wgmma_footprints(t, pc, ops, &inputs) else {
            return;
        };
        let runs = || footprints.iter().flat_map(|f| f.runs.iter().copied());
        let joined = first.filter(|&k| {
            self.wg_ops
                .get(k as usize)
                .is_some_and(|op| op.pc == pc && op.runs.iter().copied().eq(runs()))
        });
        let op = match joined {
            Some(k) => k,
            None => {
                let runs: Vec<(u32, u32)> = runs().collect();
                let agents = self.operand_agents(t, pc, &footprints);
                let joint = self.joint_done.len() as u32;
                self.joint_done.push(Vec::new());
                for &g in &agents {
                    if let Some(c) = self.copies.get_mut(g as usize) {
                        c.joint = Some(joint);
                    }
                }
                let k = self.wg_ops.len() as u32;
                // The operation's record (its runs and agents), charged like its agents.
                let bytes = std::mem::size_of::<WgmmaOp>() + 24 + runs.len() * 8 + agents.len() * 4;
                self.charged = self.charged.saturating_add(bytes as u64);
                self.wg_ops.push(WgmmaOp {
                    pc,
                    inputs,
                    runs,
                    issuer: t,
                    agents,
                    joint,
                });
                // The first issue of this occurrence names the warpgroup's operation; a lane
                // that differs keeps agents of its own.
                self.wg_index.entry(key).or_insert(k);
                k
            }
        };
        self.wg_pending[t].push_back((op, UNCOMMITTED));
    }

    /// What the footprints of a `wgmma.mma_async`'s shared operands are a function of:
    /// its shape, the A descriptor (when A is one) and the B descriptor with their
    /// transpose flags; `None` after recording why they cannot be known.
    fn wgmma_inputs(&mut self, t: usize, pc: u32, ops: &[Opnd]) -> Option<WgmmaInputs> {
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        // The shape is the opcode's: parsed once per instruction.
        let shape = match self.wg_shapes.get(&pc) {
            Some(&shape) => shape,
            None => {
                let shape = wgmma_shape(self.opcode(pc));
                self.wg_shapes.insert(pc, shape);
                shape
            }
        };
        let Some(shape) = shape else {
            self.matrix_issue(t, pc, MatrixIssue::Shape);
            return None;
        };
        if shape.sparse {
            self.matrix_issue(t, pc, MatrixIssue::Sparse);
            return None;
        }
        // d, a-desc | {a}, b-desc, scale-d, [imm-scale-a, imm-scale-b], [imm-trans-a,]
        // [imm-trans-b].
        let a_desc = matches!(o(1), Opnd::Reg(_));
        let (trans_a, trans_b) = if shape.transposable {
            if a_desc {
                (self.immediate(t, pc, o(6))?, self.immediate(t, pc, o(7))?)
            } else {
                (0, self.immediate(t, pc, o(6))?)
            }
        } else {
            (0, 0)
        };
        let a = if a_desc {
            Some(self.descriptor(t, pc, o(1))?)
        } else {
            None
        };
        // B's descriptor is reported unknown after A's footprint (the order of the checks).
        let b = self.rd(t, o(2), pc);
        Some(WgmmaInputs {
            shape,
            a,
            b,
            trans_a,
            trans_b,
        })
    }

    /// The footprints of a `wgmma.mma_async`'s shared operands (A when it is a descriptor,
    /// then B), or `None` after recording why they cannot be known.
    fn wgmma_footprints(
        &mut self,
        t: usize,
        pc: u32,
        ops: &[Opnd],
        inputs: &WgmmaInputs,
    ) -> Option<Vec<Footprint>> {
        let shape = inputs.shape;
        let mut out = Vec::new();
        if let Some(d) = inputs.a {
            let a = OperandShape {
                mn: 64,
                k_bytes: shape.k * shape.a_bits / 8,
                elem_bits: shape.a_bits,
                mn_major: inputs.trans_a != 0,
            };
            out.push(self.operand_footprint(t, pc, Ok(descriptor::decode_wgmma(d)), a)?);
        }
        let b_desc = match inputs.b {
            (v, 0) => v,
            _ => self.descriptor(t, pc, ops.get(2).copied().unwrap_or(Opnd::Sink))?,
        };
        let b = OperandShape {
            mn: shape.n,
            k_bytes: shape.k * shape.b_bits / 8,
            elem_bits: shape.b_bits,
            mn_major: inputs.trans_b != 0,
        };
        out.push(self.operand_footprint(t, pc, Ok(descriptor::decode_wgmma(b_desc)), b)?);
        Some(out)
    }

    /// `wgmma.commit_group`: the thread's uncommitted operations form its next group.
    pub(super) fn wgmma_commit(&mut self, t: usize) {
        self.wg_committed[t] =
            super::async_copy::commit(&mut self.wg_pending[t], self.wg_committed[t]);
    }

    /// `wgmma.wait_group N`: the operations of every committed group but the `N` most
    /// recent have completed when the thread continues.
    pub(super) fn wgmma_wait(&mut self, t: usize, pc: u32, ops: &[Opnd]) {
        let o = ops.first().copied().unwrap_or(Opnd::Sink);
        let Some(keep) = self.known_operand(t, pc, o, Value::WgmmaWaitGroupCount) else {
            return;
        };
        let limit = u64::from(self.wg_committed[t]).saturating_sub(keep);
        let at = self.cmds[t].len() as u32;
        let seq = self.copies.len() as u32;
        let mut pending = std::mem::take(&mut self.wg_pending[t]);
        let done = super::async_copy::done_prefix(&pending, limit);
        for &(k, _) in pending.range(..done) {
            if let Some(op) = self.wg_ops.get(k as usize) {
                if op.issuer == t {
                    for &g in &op.agents {
                        if let Some(c) = self.copies.get_mut(g as usize) {
                            c.complete_at(at, seq);
                        }
                    }
                } else if let Some(set) = self.joint_done.get_mut(op.joint as usize) {
                    set.push((ThreadId(t as u32), at));
                    self.charged = self.charged.saturating_add(8);
                }
            }
        }
        pending.drain(..done);
        self.wg_pending[t] = pending;
    }

    /// `tcgen05.mma`: the shared operands (A when it is a descriptor, and B) are read until
    /// the thread's next `tcgen05.commit` arrives (module docs).
    pub(super) fn tcgen_mma(&mut self, t: usize, pc: u32, ops: &[Opnd]) {
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        let (pair, sparse, kind) = {
            let opcode = self.opcode(pc);
            (
                opcode.split('.').any(|m| m == "cta_group::2"),
                opcode.split('.').any(|m| m == "sp"),
                TcgenKind::of(opcode),
            )
        };
        if pair {
            self.matrix_issue(t, pc, MatrixIssue::CtaPair);
            return;
        }
        if sparse {
            self.matrix_issue(t, pc, MatrixIssue::Sparse);
            return;
        }
        let Some(kind) = kind else {
            self.matrix_issue(t, pc, MatrixIssue::Kind);
            return;
        };
        // [d-tmem], a-desc | [a-tmem], b-desc, idesc, ...
        let Some(idesc) = self.known_value(t, pc, o(3), Value::InstructionDescriptor, false) else {
            return;
        };
        if idesc & (1 << 2) != 0 {
            self.matrix_issue(t, pc, MatrixIssue::Sparse);
            return;
        }
        let n = ((idesc >> 17) & 0x3f) as u32 * 8;
        let m = kind.m(idesc);
        let k_bytes = kind.k_bytes(idesc);
        let bits = kind.elem_bits();
        // An empty M or N is no valid shape; packed 4-bit operands are K-major only: a
        // transpose flag is outside the layouts.
        if m == 0 || n == 0 || (bits == 4 && idesc & (3 << 15) != 0) {
            self.matrix_issue(t, pc, MatrixIssue::Shape);
            return;
        }
        let mut footprints = Vec::new();
        if matches!(o(1), Opnd::Reg(_)) {
            let Some(d) = self.descriptor(t, pc, o(1)) else {
                return;
            };
            let a = OperandShape {
                mn: m,
                k_bytes,
                elem_bits: bits,
                mn_major: idesc & (1 << 15) != 0,
            };
            let Some(f) = self.operand_footprint(t, pc, descriptor::decode_tcgen05(d), a) else {
                return;
            };
            footprints.push(f);
        }
        let Some(d) = self.descriptor(t, pc, o(2)) else {
            return;
        };
        let b = OperandShape {
            mn: n,
            k_bytes,
            elem_bits: bits,
            mn_major: idesc & (1 << 16) != 0,
        };
        let Some(f) = self.operand_footprint(t, pc, descriptor::decode_tcgen05(d), b) else {
            return;
        };
        footprints.push(f);
        let scaled = matches!(kind, TcgenKind::BlockScaled8 | TcgenKind::BlockScaled4);
        let f16_accumulator = !scaled && (idesc >> 4) & 0x3 == 0;
        let a_columns = k_bytes / 4;
        let flags = (scaled, f16_accumulator);
        let Some(tm) = self.tcgen_mma_tmem(t, pc, ops, (m, n), a_columns, flags) else {
            return;
        };
        let agents = self.operand_agents(t, pc, &footprints);
        self.tc_issued[t].extend(agents);
        self.tc_issued[t].extend(tm);
    }

    /// `tcgen05.cp.cta_group::1.SHAPE [taddr], s-desc`: the source matrix of `SHAPE`
    /// (`128x256b`, `4x256b`, `128x128b`, `64x128b`, `32x128b`: rows and bits per row; the
    /// `warpx2`/`warpx4` multicasts and the decompressing formats read the same 128-bit
    /// units) is read through the shared-memory descriptor in the K-major canonical layout,
    /// in the async proxy, until the thread's next `tcgen05.commit` (like `tcgen05.mma`'s
    /// operands); its tensor-memory destination is written ([`Self::tcgen_cp_tmem`]).
    pub(super) fn tcgen_cp(&mut self, t: usize, pc: u32, ops: &[Opnd]) {
        let o = |k: usize| ops.get(k).copied().unwrap_or(Opnd::Sink);
        let (pair, shape) = {
            let opcode = self.opcode(pc);
            (
                opcode.split('.').any(|m| m == "cta_group::2"),
                opcode.split('.').find_map(tcgen_cp_shape),
            )
        };
        if pair {
            self.matrix_issue(t, pc, MatrixIssue::CtaPair);
            return;
        }
        let Some((rows, row_bytes)) = shape else {
            self.matrix_issue(t, pc, MatrixIssue::Shape);
            return;
        };
        let Some(d) = self.descriptor(t, pc, o(1)) else {
            return;
        };
        let source = OperandShape {
            mn: rows,
            k_bytes: row_bytes,
            elem_bits: 8,
            mn_major: false,
        };
        let Some(f) = self.operand_footprint(t, pc, descriptor::decode_tcgen05(d), source) else {
            return;
        };
        let Some(tm) = self.tcgen_cp_tmem(t, pc, ops, (rows, row_bytes)) else {
            return;
        };
        let agents = self.operand_agents(t, pc, &[f]);
        self.tc_issued[t].extend(agents);
        self.tc_issued[t].extend(tm);
    }

    /// `tcgen05.alloc`: each lane of the warp records the 4-byte write of the allocated
    /// address to shared memory, as one instruction of the warp. The address is the one
    /// [`Self::tmem_alloc`] placed (unknown when it could not).
    pub(super) fn tcgen_alloc(&mut self, t: usize, pc: u32, inst: &Inst, ops: &[Opnd]) {
        let placed = self.tmem_alloc(t, pc, ops);
        let o = ops.first().copied().unwrap_or(Opnd::Sink);
        if let Some(a) = self.shared_addr(t, pc, inst, o) {
            match placed {
                Some(v) => {
                    if self.shared_access(t, pc, AccessKind::Write, a, 4, 0) {
                        self.write_bytes(
                            super::memory::Mem::Shared,
                            0,
                            a as usize,
                            4,
                            u64::from(v),
                            0,
                        );
                    }
                }
                None => {
                    let u = self.src.single(ValueSource::Other(
                        "a tensor-memory address (tcgen05.alloc)",
                    ));
                    self.shared_access(t, pc, AccessKind::Write, a, 4, u);
                }
            }
        }
    }

    /// Thread `t`'s execution of the warp instruction at `pc`: (warp, instruction,
    /// occurrence), and whether it is the first of its warp (the one that counts).
    fn warp_execution(&mut self, t: usize, pc: u32) -> ((u32, u32, u32), bool) {
        let k = self.tmem.occurrences.entry((t as u32, pc)).or_insert(0);
        let occurrence = *k;
        *k += 1;
        let w = (t / WARP_SIZE as usize) as u32;
        let key = (w, pc, occurrence);
        (key, self.tmem.counted.insert(key))
    }

    /// Whether thread `t`'s execution of the warp instruction at `pc` is the first of its
    /// warp (the one that counts).
    fn first_of_warp(&mut self, t: usize, pc: u32) -> bool {
        self.warp_execution(t, pc).1
    }

    /// The column count of `tcgen05.alloc`/`dealloc` (operand 1): a power of 2 in
    /// `[32, 512]`, else a finding. `None` when unknown (recorded as unverifiable) or invalid.
    fn tmem_columns(&mut self, t: usize, pc: u32, o: Opnd) -> Option<u64> {
        let n = self.known_operand(t, pc, o, Value::TensorMemoryColumns)?;
        if !(TMEM_MIN_COLS..=TMEM_MAX_COLS).contains(&n) || !n.is_power_of_two() {
            let msg = format!(
                "thread {t}: `{}` at PTX line {} names {n} tensor-memory columns: the count must be a power of 2 from 32 to 512",
                self.opcode(pc),
                self.line(pc)
            );
            self.finding(t, pc, FindingKind::TensorMemory, msg);
            return None;
        }
        Some(n)
    }

    /// The allocation accounting of `tcgen05.alloc` (its shared write is recorded by
    /// [`Self::tcgen_alloc`]), and the address it returns: the warp's first lane places the
    /// allocation at the first column after the previous allocations that is a multiple of
    /// its size (module `tmem`); `None` when that leaves the 512 columns, the count is not
    /// known, or the allocation runs under an input-dependent branch.
    fn tmem_alloc(&mut self, t: usize, pc: u32, ops: &[Opnd]) -> Option<u32> {
        if self.th[t].may > 0 {
            self.tmem.uncertain = true;
            return None;
        }
        if self.tmem.relinquished.contains(&(t as u32)) {
            let msg = format!(
                "thread {t}: `{}` at PTX line {} allocates tensor memory after the thread executed tcgen05.relinquish_alloc_permit (illegal in PTX)",
                self.opcode(pc),
                self.line(pc)
            );
            self.finding(t, pc, FindingKind::TensorMemory, msg);
        }
        let o = ops.get(1).copied().unwrap_or(Opnd::Sink);
        let n = self.tmem_columns(t, pc, o)?;
        let (key, first) = self.warp_execution(t, pc);
        if !first {
            return self.tmem.placed.get(&key).copied().flatten();
        }
        self.tmem.allocated += n;
        self.tmem.first_alloc.get_or_insert((t, pc));
        let n = n as u32;
        let column = self.tmem.next_column.next_multiple_of(n);
        let placed = (column + n <= TMEM_MAX_COLS as u32).then(|| {
            self.tmem.next_column = column + n;
            column
        });
        self.tmem.placed.insert(key, placed);
        placed
    }

    /// `tcgen05.dealloc taddr, ncols`.
    ///
    /// The warp's first lane also records the freeing as a write of the columns in every lane
    /// at that point ([`Self::tmem_free`]): an access that may still run then races with it.
    pub(super) fn tcgen_dealloc(&mut self, t: usize, pc: u32, ops: &[Opnd]) {
        if self.th[t].may > 0 {
            self.tmem.uncertain = true;
            return;
        }
        let o = ops.get(1).copied().unwrap_or(Opnd::Sink);
        let Some(n) = self.tmem_columns(t, pc, o) else {
            return;
        };
        if self.first_of_warp(t, pc) {
            self.tmem.deallocated += n;
            self.tmem.first_dealloc.get_or_insert((t, pc));
            let a = ops.first().copied().unwrap_or(Opnd::Sink);
            self.tmem_free(t, pc, a, n as u32);
        }
    }

    /// `tcgen05.relinquish_alloc_permit`.
    pub(super) fn tcgen_relinquish(&mut self, t: usize) {
        self.tmem.relinquished.insert(t as u32);
    }

    /// When every thread exited: "all of the Tensor Memory that was allocated using
    /// tcgen05.alloc instruction in a kernel, must be explicitly deallocated using
    /// tcgen05.dealloc before the kernel exits" (PTX ISA, *tcgen05.alloc*).
    pub(super) fn tensor_memory_at_exit(&mut self) {
        let all_exited = self.th.iter().all(|th| th.state == super::State::Exited);
        let tm = &self.tmem;
        if self.stop || self.trapped || !all_exited || tm.uncertain {
            return;
        }
        let (allocated, deallocated) = (tm.allocated, tm.deallocated);
        if allocated == deallocated {
            return;
        }
        let at = if allocated > deallocated {
            tm.first_alloc
        } else {
            tm.first_dealloc
        };
        let Some((t, pc)) = at else {
            return;
        };
        let msg = format!(
            "the CTA's warps allocate {allocated} tensor-memory columns (first: `{}` at PTX line {}) and deallocate {deallocated} before the kernel exits: all tensor memory allocated with tcgen05.alloc must be deallocated with tcgen05.dealloc, no more",
            self.opcode(pc),
            self.line(pc)
        );
        self.finding(t, pc, FindingKind::TensorMemory, msg);
    }

    /// `tcgen05.commit`'s arrive-on on `mbar`, recorded as thread `t`'s command `cmd`: it
    /// tracks every prior tcgen05 operation of the thread, so their reads complete before
    /// the phase the arrival is counted in. Each operation is attached to the first commit
    /// after it on each mbarrier (a later phase of the same mbarrier is observed after it in
    /// the pipelines weft knows; leaving it out only loses orderings).
    pub(super) fn tcgen_commit(&mut self, t: usize, mbar: u32, cmd: u32) {
        self.tm.threads[t].open_acc = None;
        let from = self
            .tc_attached
            .insert((t as u32, mbar), self.tc_issued[t].len());
        for &g in self.tc_issued[t].get(from.unwrap_or(0)..).unwrap_or(&[]) {
            if let Some(c) = self.copies.get_mut(g as usize) {
                c.phases.push(cmd);
                self.charged = self.charged.saturating_add(4);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wgmma_shapes_parse() {
        let s = wgmma_shape("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16").unwrap();
        assert_eq!(
            s,
            WgmmaShape {
                n: 128,
                k: 16,
                a_bits: 16,
                b_bits: 16,
                sparse: false,
                transposable: true
            }
        );
        let s = wgmma_shape("wgmma.mma_async.sync.aligned.m64n256k32.f32.e4m3.e5m2").unwrap();
        assert_eq!((s.n, s.k, s.a_bits, s.transposable), (256, 32, 8, false));
        let s = wgmma_shape("wgmma.mma_async.sp.sync.aligned.m64n64k32.f32.f16.f16").unwrap();
        assert!(s.sparse);
        assert!(wgmma_shape("wgmma.mma_async.sync.aligned.m64n64k16.f32.q7.f16").is_none());
    }

    #[test]
    fn tcgen_kinds() {
        let kind = |o: &str| TcgenKind::of(o).map(TcgenKind::elem_bits);
        assert_eq!(kind("tcgen05.mma.cta_group::1.kind::f16"), Some(16));
        assert_eq!(kind("tcgen05.mma.cta_group::1.kind::tf32"), Some(32));
        assert_eq!(kind("tcgen05.mma.cta_group::1.kind::i8"), Some(8));
        assert_eq!(
            kind("tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale"),
            Some(8)
        );
        assert_eq!(
            kind("tcgen05.mma.cta_group::1.kind::mxf4.block_scale"),
            Some(4)
        );
        assert_eq!(kind("tcgen05.mma.cta_group::1.kind::f4.block_scale"), None);
        // The common descriptor: M >> 4 in bits 24-28; block scaling: M >> 7 in bits 27-28,
        // and for 4-bit kinds bit 31 selects K = 96.
        let common = TcgenKind::Common { bits: 16 };
        assert_eq!(common.m(8 << 24), 128);
        assert_eq!(TcgenKind::BlockScaled4.m(1 << 27), 128);
        assert_eq!(TcgenKind::BlockScaled8.m(2 << 27), 256);
        assert_eq!(TcgenKind::BlockScaled4.k_bytes(0), 32);
        assert_eq!(TcgenKind::BlockScaled4.k_bytes(1 << 31), 48);
        assert_eq!(TcgenKind::BlockScaled8.k_bytes(1 << 31), 32);
        assert_eq!(common.k_bytes(1 << 31), 32);
    }
}
