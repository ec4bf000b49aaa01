//! Words for the emulator's data: why a kernel could not be verified, the inputs an unknown
//! value came from, and the `--param` that fixes one. The emulator knows no command-line
//! flags and writes no sentences; this module does both.

use emulator::{GuardedOp, MatrixIssue, Region, SyncOp, Value, ValueSource, Why};
use weft_program::{InstId, SourceTable};

/// What made the kernel unverifiable, as a report's reason states it. The thread, register
/// and inputs are not repeated here: the report names each once. The instruction's opcode
/// (`opcode`) is named only where it is the reason (an instruction weft does not model), so
/// that the kernel's one-line summary says which.
pub fn why(why: &Why, sources: &SourceTable, opcode: Option<&str>) -> String {
    match why {
        Why::Unknown(v) => format!("{} depends on an unknown value", value(*v)),
        Why::UnderBranch(op) => {
            format!("{} executes under an input-dependent branch", sync_op(*op))
        }
        Why::Guarded(GuardedOp::IndexedBranch) => {
            "whether this indexed branch executes depends on an unknown guard predicate".into()
        }
        Why::Guarded(GuardedOp::CallOrReturn) => {
            "whether this call or return executes depends on an unknown value".into()
        }
        Why::Guarded(GuardedOp::Synchronization) => {
            "whether this synchronization operation executes depends on an unknown guard \
             predicate"
                .into()
        }
        Why::BranchDecidesSync(region) => format!(
            "a branch on an unknown predicate decides synchronization: {}",
            match region {
                Region::LoopWithoutExit => "the branch is in a loop with no exit".to_owned(),
                Region::UnknownTripCount => {
                    "the branch controls a loop whose trip count is unknown".to_owned()
                }
                Region::Synchronizes(inst) => {
                    let site = sources.sites.get(inst.index());
                    format!(
                        "the code it decides contains `{}` at PTX line {}",
                        site.map_or("?", |s| &s.opcode),
                        site.map_or(0, |s| s.ptx_line)
                    )
                }
            }
        ),
        Why::PathsEndDifferently => "the two sides of a branch on an unknown predicate end \
                                     differently (exit versus return)"
            .into(),
        Why::IndexedBranchUnknown { entries } => format!(
            "the index of this `brx.idx` over a {entries}-entry jump table depends on an \
             unknown value, so it may decide synchronization"
        ),
        Why::IndexedBranchOutOfRange { index, entries } => format!(
            "the index of this `brx.idx` is {index}, outside its {entries}-entry jump table \
             (undefined behaviour)"
        ),
        Why::IndirectCall => "indirect calls are not supported".into(),
        Why::RecursiveCall => "recursive calls are not supported".into(),
        Why::ExternCall { name } => format!(
            "the kernel calls `{name}`, which this module declares without a body, so weft \
             cannot know whether it synchronizes or accesses shared memory (link its \
             definition into this PTX: compile without -rdc)"
        ),
        Why::StepBudget { limit } => format!(
            "the thread exceeded the step budget of {limit} instructions (a loop may be \
             unbounded or bounded by an unknown value; bind parameters with --param or raise \
             the budget with --max-steps)"
        ),
        Why::CtaStepBudget { limit } => format!(
            "the CTA's threads exceeded their budget of {limit} instructions in all \
             ({} x the step budget; threads that wait for each other in a loop each stay under \
             their own; bind parameters with --param or raise the budget with --max-steps)",
            emulator::CTA_STEP_FACTOR
        ),
        Why::MemoryBudget {
            limit,
            commands,
            agents,
            pages,
        } => format!(
            "the emulation reached the memory budget of {} ({commands} commands{} recorded, {} \
             of memory pages; raise it with --max-memory)",
            emulator::bytes_text(*limit),
            if *agents > 0 {
                format!(" and {agents} asynchronous-copy or tensor-core operand accesses")
            } else {
                String::new()
            },
            emulator::bytes_text(*pages)
        ),
        Why::MbarrierNotShared => "the mbarrier operand is not a shared-memory address".into(),
        Why::TmaTooFewBytes { copies, bytes } => format!(
            "{copies} TMA cop{} signal an mbarrier phase that expects only {bytes} \
             transaction bytes, so their byte counts, which live in the tensor map, cannot be \
             derived",
            if *copies == 1 { "y" } else { "ies" }
        ),
        Why::TmaPhaseCompletedWithoutCopy => "a TMA copy signals an mbarrier phase that \
                                              completed without its bytes (the phase expected \
                                              no more transaction bytes), so its byte count, \
                                              which lives in the tensor map, cannot be derived"
            .into(),
        Why::TmaPhaseNeverCompletes => "a TMA copy signals an mbarrier phase that never \
                                        completes (its arrivals are missing), so its byte \
                                        count, which lives in the tensor map, cannot be \
                                        derived"
            .into(),
        Why::TmaDestinationNotShared => {
            "a TMA load's destination is not a shared-memory address".into()
        }
        Why::MatrixOperand(issue) => format!(
            "the shared-memory operands of this tensor-core instruction cannot be laid out, so \
             its reads cannot be checked for races: {}",
            matrix_issue(*issue)
        ),
        Why::TrapAloneInCluster => "a trap (or failed assertion) is reached with the CTA \
            alone in its cluster: the kernel reads its cluster shape (%cluster_nctaid), which \
            weft takes as 1x1x1 (it models no larger cluster), so the trap may only say that \
            the kernel needs a larger one"
            .into(),
        Why::Unsupported => match opcode {
            // One reason for every instruction of the map (the kernel's summary gives it
            // once; each warning's snippet shows its instruction).
            Some(op) if op.starts_with("tensormap") => "a tensor map in shared memory \
                (`tensormap.*` on `.shared`) is not modelled: the TMA copies that use it \
                cannot be checked"
                .into(),
            Some(op) => {
                format!("the emulator has no semantics for `{op}`; its results are unknown")
            }
            None => {
                "the emulator has no semantics for this instruction; its results are unknown".into()
            }
        },
        Why::RelaxedMbarrier => format!(
            "`{}` has `.relaxed` semantics: it orders memory accesses only together with a \
             fence.acquire or fence.release beside it, which weft does not model (taking it as \
             an acquire or release could hide a race)",
            opcode.unwrap_or("mbarrier")
        ),
        Why::UnsupportedControl => match opcode {
            Some(op) => format!(
                "the emulator cannot model `{op}`, which may decide control flow or \
                 synchronization"
            ),
            None => "the emulator cannot model this instruction, which may decide control flow \
                     or synchronization"
                .into(),
        },
    }
}

fn value(v: Value) -> &'static str {
    match v {
        Value::SharedAddress => "a shared-memory address",
        Value::LocalAddress => "a local-memory address",
        Value::BarrierId => "the barrier id",
        Value::BarrierCount => "the barrier thread count",
        Value::WarpSyncMask => "the bar.warp.sync member mask",
        Value::CollectiveMask => "the member mask of a warp-collective",
        Value::MbarrierAddress => "the mbarrier address",
        Value::MbarrierInitCount => "the mbarrier.init count",
        Value::MbarrierArrivalCount => "the mbarrier arrival count",
        Value::MbarrierTxCount => "the mbarrier transaction count",
        Value::MbarrierWaitParity => "the mbarrier wait parity",
        Value::MbarrierWaitState => "the mbarrier wait state",
        Value::CpAsyncSize => "the size of a cp.async copy",
        Value::BulkCopySize => "the byte count of a bulk copy",
        Value::CpAsyncWaitGroupCount => "the cp.async.wait_group count",
        Value::BulkWaitGroupCount => "the cp.async.bulk.wait_group count",
        Value::MatrixDescriptor => "a tensor-core shared-memory matrix descriptor",
        Value::InstructionDescriptor => "the tcgen05.mma instruction descriptor",
        Value::WgmmaWaitGroupCount => "the wgmma.wait_group count",
        Value::TensorMemoryColumns => "the tensor-memory column count",
        Value::TensorMemoryAddress => "a tensor-memory address",
    }
}

fn matrix_issue(issue: MatrixIssue) -> &'static str {
    match issue {
        MatrixIssue::ReservedSwizzle => "the descriptor names a reserved swizzling mode",
        MatrixIssue::AbsoluteLeadingDimension => {
            "the descriptor uses the absolute leading-dimension address mode, which weft does \
             not model"
        }
        MatrixIssue::Shape => {
            "the shape, element types or layout arguments lie outside the canonical layouts \
             weft models"
        }
        MatrixIssue::Sparse => "sparse operand layouts are not modelled",
        MatrixIssue::CtaPair => {
            "a cta_group::2 operation shares its operands with the peer CTA (clusters are not \
             modelled)"
        }
        MatrixIssue::Kind => "weft does not decode the instruction descriptor of this kind",
        MatrixIssue::TensorMemoryRange => {
            "its tensor-memory footprint lies outside the 128 lanes and 512 columns"
        }
    }
}

fn sync_op(op: SyncOp) -> &'static str {
    match op {
        SyncOp::Barrier => "a barrier",
        SyncOp::WarpSync => "bar.warp.sync",
        SyncOp::Mbarrier => "an mbarrier operation",
        SyncOp::AsyncCopyToMbarrier => "an asynchronous copy signalling an mbarrier",
        SyncOp::TmaCopyToMbarrier => "a TMA copy signalling an mbarrier",
        SyncOp::Warpgroup => "a warpgroup-aligned wgmma instruction",
        SyncOp::ClusterLaunchControl => "a cluster launch control request signalling an mbarrier",
    }
}

/// An input an unknown value came from, as a report states it: instructions by PTX line, and
/// parameter names shortened when they are mangled beyond reading (the index names the
/// parameter exactly).
pub fn source(s: &ValueSource, sources: &SourceTable) -> String {
    let line = |i: &InstId| match sources.sites.get(i.index()) {
        Some(site) => format!("PTX line {}", site.ptx_line),
        None => format!("instruction {}", i.0),
    };
    let short = |name: &str| -> String {
        const MAX: usize = 48;
        if name.len() <= MAX {
            name.to_owned()
        } else {
            let cut = (0..=24)
                .rev()
                .find(|&k| name.is_char_boundary(k))
                .unwrap_or(0);
            format!("{}…", &name[..cut])
        }
    };
    match s {
        ValueSource::Param {
            index,
            name,
            offset: None,
        } => format!("kernel parameter {index} `{}`", short(name)),
        ValueSource::Param {
            index,
            name,
            offset: Some(o),
        } => format!(
            "bytes at offset {o} of kernel parameter {index} `{}`",
            short(name)
        ),
        ValueSource::ParamBytes {
            index,
            name,
            start,
            end,
        } if name == emulator::CLC_VARIABLE => CLC_SHOWN.to_owned(),
        ValueSource::ParamBytes {
            index,
            name,
            start,
            end,
        } => format!("param {index} (`{}`) bytes {start}..{end}", short(name)),
        ValueSource::GlobalLoad(i) => format!("a global-memory load ({})", line(i)),
        ValueSource::ConstLoad(i) => format!("a constant-memory load ({})", line(i)),
        ValueSource::LocalUnknown(i) => format!("unknown local memory ({})", line(i)),
        ValueSource::TextureLoad(i) => format!("a texture load ({})", line(i)),
        ValueSource::Clock(i) => format!("a clock read ({})", line(i)),
        ValueSource::Atomic(i) => format!("an atomic result ({})", line(i)),
        ValueSource::SharedUnknown(i) => format!("uninitialized shared memory ({})", line(i)),
        ValueSource::Float(i) => format!("floating-point arithmetic ({})", line(i)),
        ValueSource::SpecialRegister(r) => format!("special register {r}"),
        ValueSource::Other(s) => (*s).to_owned(),
    }
}

/// The `--param` argument that fixes this input, when it is a kernel parameter.
pub fn param_fix(s: &ValueSource) -> Option<String> {
    match s {
        ValueSource::Param {
            index,
            name,
            offset: None,
        } => Some(format!("--param {index}=VALUE (or --param {name}=VALUE)")),
        ValueSource::Param {
            name,
            offset: Some(o),
            ..
        } => Some(format!("--param {name}+{o}:TYPE=VALUE")),
        ValueSource::ParamBytes {
            index, start, end, ..
        } => {
            let ty = match end.saturating_sub(*start) {
                1 => "u8",
                2 => "u16",
                4 => "u32",
                8 => "u64",
                _ => "TYPE",
            };
            Some(format!("--param {index}+{start}:{ty}=VALUE"))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameter_inputs_name_their_fix() {
        let bytes = ValueSource::ParamBytes {
            index: 0,
            name: "P".into(),
            start: 12,
            end: 16,
        };
        assert_eq!(
            source(&bytes, &SourceTable::default()),
            "param 0 (`P`) bytes 12..16"
        );
        assert_eq!(param_fix(&bytes).as_deref(), Some("--param 0+12:u32=VALUE"));
        let whole = ValueSource::Param {
            index: 1,
            name: "n".into(),
            offset: None,
        };
        assert_eq!(
            param_fix(&whole).as_deref(),
            Some("--param 1=VALUE (or --param n=VALUE)")
        );
        assert_eq!(param_fix(&ValueSource::Other("x")), None);
    }

    #[test]
    fn reasons_name_what_not_where() {
        let text = why(&Why::StepBudget { limit: 3 }, &SourceTable::default(), None);
        assert!(
            text.starts_with("the thread exceeded the step budget of 3 instructions"),
            "{text}"
        );
        assert_eq!(
            why(
                &Why::Unknown(Value::BarrierId),
                &SourceTable::default(),
                None
            ),
            "the barrier id depends on an unknown value"
        );
    }
}

/// How reports name [`emulator::CLC_VARIABLE`], the variable weft adds after a kernel's
/// parameters for cluster launch control's answers (`--param` fixes it by this name).
const CLC_SHOWN: &str = "`clusterlaunchcontrol.canceled` (the cluster launch control requests \
answered \"canceled\")";

/// The float a value of `e` is, when `e` is a whole `.f32` or `.f64` parameter (its values
/// are bit patterns).
pub fn float_value(e: &emulator::Expr, value: u64) -> Option<String> {
    match e {
        emulator::Expr::Param {
            float: true,
            start,
            end,
            ..
        } => match end - start {
            4 => Some(float_constant(32, value)),
            8 => Some(float_constant(64, value)),
            _ => None,
        },
        _ => None,
    }
}

/// A float constant of `width` bits with bit pattern `bits`: its shortest decimal that reads
/// back to the same value (`0.5`, `1e-30`, `inf`, `NaN`).
fn float_constant(width: u8, bits: u64) -> String {
    match width {
        32 => format!("{:?}", f32::from_bits(bits as u32)),
        _ => format!("{:?}", f64::from_bits(bits)),
    }
}

/// A symbolic term over kernel-parameter bytes, as text: `param 0 bytes 12..16`,
/// `param 5 (K)`, `(param 5 (K) + 63) shr 6`, ….
pub fn expr(e: &emulator::Expr) -> String {
    use emulator::Expr;
    match e {
        Expr::Param {
            index,
            name,
            start,
            end,
            whole,
            ..
        } => {
            if name == emulator::CLC_VARIABLE {
                CLC_SHOWN.to_owned()
            } else if *whole {
                format!("param {index} ({})", crate::report::shown_name(name))
            } else {
                format!("param {index} bytes {start}..{end}")
            }
        }
        Expr::Const(c) => {
            if *c >= 1 << 63 {
                format!("{}", *c as i64)
            } else {
                c.to_string()
            }
        }
        Expr::Float { width, bits } => float_constant(*width, *bits),
        Expr::Plus { base, k, bits } => {
            let neg = *bits > 0 && *bits <= 64 && (k >> (bits - 1)) & 1 == 1;
            let top = if *bits >= 64 {
                u64::MAX
            } else {
                (1u64 << bits) - 1
            };
            if *k == 0 {
                expr(base)
            } else if neg {
                format!("({} - {})", expr(base), (top - k).wrapping_add(1))
            } else {
                format!("({} + {k})", expr(base))
            }
        }
        Expr::Op { op, args } => {
            let args: Vec<String> = args.iter().map(expr).collect();
            match (op.as_str(), args.as_slice()) {
                // Unsigned division, remainder and shift are infix; their signed forms keep
                // their names (`shr.s(x, 8)`), as comparisons and `min`/`max` do.
                (
                    "add" | "sub" | "mul" | "div.u" | "rem.u" | "shl" | "shr.u" | "and" | "or"
                    | "xor",
                    [a, b],
                ) => {
                    let sym = match op.as_str() {
                        "add" => "+",
                        "sub" => "-",
                        "mul" => "*",
                        "div.u" => "/",
                        "rem.u" => "%",
                        "shl" => "<<",
                        "shr.u" => ">>",
                        "and" => "&",
                        "or" => "|",
                        _ => "^",
                    };
                    format!("({a} {sym} {b})")
                }
                _ => format!("{op}({})", args.join(", ")),
            }
        }
        Expr::Input {
            address,
            size,
            start,
            end,
            ..
        } => {
            let at = expr(address);
            if *start == 0 && end == size {
                format!("global input [{at}]")
            } else {
                format!("global input [{at}] bytes {start}..{end}")
            }
        }
    }
}

/// Inclusive unsigned intervals of a `bits`-wide variable as text: `0..=4`, `7`, and
/// intervals in the upper half also as signed values (`-2147483648..=-1 (signed)`).
pub fn ranges(set: &[[u64; 2]], bits: u8) -> String {
    let half = if bits == 0 || bits > 64 {
        u64::MAX
    } else {
        1u64 << (bits - 1)
    };
    let signed = |v: u64| -> i128 {
        if bits > 0 && bits <= 64 && v >= half {
            i128::from(v) - (1i128 << bits)
        } else {
            i128::from(v)
        }
    };
    let parts: Vec<String> = set
        .iter()
        .map(|&[lo, hi]| {
            if bits > 1 && lo >= half {
                if lo == hi {
                    format!("{} (signed)", signed(lo))
                } else {
                    format!("{}..={} (signed)", signed(lo), signed(hi))
                }
            } else if lo == hi {
                lo.to_string()
            } else {
                format!("{lo}..={hi}")
            }
        })
        .collect();
    if parts.is_empty() {
        "no value".to_owned()
    } else {
        parts.join(", ")
    }
}

#[cfg(test)]
mod expr_tests {
    use super::*;
    use emulator::Expr;

    #[test]
    fn terms_and_ranges_read_as_text() {
        let p = Expr::Param {
            index: 0,
            name: "params".into(),
            start: 12,
            end: 16,
            whole: false,
            signed: false,
            float: false,
        };
        let minus = Expr::Plus {
            base: Box::new(p.clone()),
            k: 0xffff_ffff,
            bits: 32,
        };
        assert_eq!(expr(&minus), "(param 0 bytes 12..16 - 1)");
        let shr = Expr::Op {
            op: "shr.u".into(),
            args: vec![p.clone(), Expr::Const(6)],
        };
        assert_eq!(expr(&shr), "(param 0 bytes 12..16 >> 6)");
        let sar = Expr::Op {
            op: "shr.s".into(),
            args: vec![p.clone(), Expr::Const(6)],
        };
        assert_eq!(expr(&sar), "shr.s(param 0 bytes 12..16, 6)");
        assert_eq!(
            ranges(&[[0, 4], [0x8000_0000, 0xffff_ffff]], 32),
            "0..=4, -2147483648..=-1 (signed)"
        );
        assert_eq!(ranges(&[[3, 3]], 32), "3");
        // Float operations keep their typed names; their constants read as floats.
        let half = Expr::Op {
            op: "mul.f64".into(),
            args: vec![
                Expr::Param {
                    index: 1,
                    name: "x".into(),
                    start: 0,
                    end: 8,
                    whole: true,
                    signed: false,
                    float: true,
                },
                Expr::Float {
                    width: 64,
                    bits: 0.5f64.to_bits(),
                },
            ],
        };
        assert_eq!(expr(&half), "mul.f64(param 1 (x), 0.5)");
        let x = Expr::Param {
            index: 1,
            name: "x".into(),
            start: 0,
            end: 4,
            whole: true,
            signed: false,
            float: true,
        };
        assert_eq!(
            float_value(&x, u64::from((-2.5f32).to_bits())).as_deref(),
            Some("-2.5")
        );
        assert_eq!(float_value(&p, 7), None);
    }
}
