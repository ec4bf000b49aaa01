//! What weft found, independent of how it is printed.
//!
//! The pipeline turns each stage's typed findings into these plain records once, with every
//! instruction already resolved to its PTX and CUDA locations; the text, JSON, SARIF and DOT
//! writers only format them. Kind names are the stable kebab-case names of DESIGN.md.

use std::path::PathBuf;
use std::sync::Arc;

use serde::Serialize;

/// The verdict for one kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Verdict {
    /// Deadlock free, well-synchronized and race free for every interleaving and input.
    Verified,
    /// At least one violation.
    Violation,
    /// Could not be verified (and no violation was found before that).
    Unverifiable,
    /// `--parse-only`: the kernel parsed; nothing was checked.
    Parsed,
}

impl Verdict {
    /// The stable name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Verified => "verified",
            Verdict::Violation => "violation",
            Verdict::Unverifiable => "unverifiable",
            Verdict::Parsed => "parsed",
        }
    }
}

/// A PTX file as read, shared by every kernel report of that file.
#[derive(Debug)]
pub struct PtxFile {
    /// The path as given on the command line.
    pub path: PathBuf,
    /// Its text.
    pub text: Arc<str>,
}

/// One position in the sources.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct Location {
    /// The CUDA file as `.file` named it, when the instruction has a `.loc`.
    #[serde(skip)]
    pub cuda_file: Option<String>,
    /// The text of that CUDA file, if it was found on disk.
    #[serde(skip)]
    pub cuda_text: Option<Arc<str>>,
    /// 1-based CUDA line (0 when there is no `.loc`).
    #[serde(skip)]
    pub cuda_line: u32,
    /// 1-based CUDA column (0 when unknown).
    #[serde(skip)]
    pub cuda_column: u32,
    /// The PTX file.
    #[serde(skip)]
    pub ptx_file: String,
    /// 1-based PTX line.
    #[serde(skip)]
    pub ptx_line: u32,
    /// 1-based PTX column.
    #[serde(skip)]
    pub ptx_column: u32,
    /// The instruction's opcode with modifiers, e.g. `bar.sync`.
    #[serde(skip)]
    pub opcode: String,
    /// What happens here, e.g. `write by warp 0 lanes 0-31`.
    #[serde(skip)]
    pub label: String,
}

impl Location {
    /// `cuda.cu:12:5 (PTX line 57)` or `PTX kernel.ptx:57:2`.
    pub fn describe(&self) -> String {
        match &self.cuda_file {
            Some(file) => format!(
                "{file}:{}:{} (PTX line {})",
                self.cuda_line, self.cuda_column, self.ptx_line
            ),
            None => format!("{}:{}:{}", self.ptx_file, self.ptx_line, self.ptx_column),
        }
    }
}

/// An inclusive range of linear thread ids.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ThreadRange {
    /// First thread.
    pub first: u32,
    /// Last thread (inclusive).
    pub last: u32,
}

/// What kind of violation a report is; [`Kind::as_str`] is its stable kebab-case name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Kind {
    /// Some execution blocks forever (barriers, mbarriers or a warp collective).
    Deadlock,
    /// Another violation of the barrier or mbarrier rules (barrier-graph's kinds).
    Sync(barrier_graph::ViolationKind),
    /// Two unordered accesses to one shared byte, at least one a write.
    Race,
    /// Two unordered plain writes of the same known value (a warning unless `--strict`).
    BenignRace,
    /// A generic write read by an async-proxy copy without `fence.proxy.async`.
    MissingProxyFence,
    /// A shared-memory access outside the CTA's shared window.
    SharedOutOfBounds,
    /// A shared address not aligned as the PTX ISA requires (an access's size, an mbarrier
    /// object's 8 bytes, a bulk copy's 16).
    MisalignedAddress,
    /// A reachable `trap`.
    TrapReachable,
    /// A violation of the tensor-memory rules (allocation protocol, a warp's lanes).
    TensorMemory,
    /// Undefined use of cluster launch control: a request after an observed failure.
    ClusterLaunchControl,
    /// A bulk copy whose byte count is not a multiple of 16.
    BulkCopySize,
}

impl Kind {
    /// The stable kebab-case name (JSON `kind`, SARIF rule id, text diagnostic code).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Deadlock => "deadlock",
            Kind::Sync(k) => k.as_str(),
            Kind::Race => "race",
            Kind::BenignRace => "benign-race",
            Kind::MissingProxyFence => "missing-proxy-fence",
            Kind::SharedOutOfBounds => "shared-out-of-bounds",
            Kind::MisalignedAddress => "misaligned-address",
            Kind::TrapReachable => "trap-reachable",
            Kind::TensorMemory => "tensor-memory",
            Kind::ClusterLaunchControl => "cluster-launch-control",
            Kind::BulkCopySize => "bulk-copy-size",
        }
    }
}

impl From<barrier_graph::ViolationKind> for Kind {
    fn from(k: barrier_graph::ViolationKind) -> Kind {
        match k {
            barrier_graph::ViolationKind::Deadlock => Kind::Deadlock,
            k => Kind::Sync(k),
        }
    }
}

/// One violation of deadlock freedom, safe recycling, race freedom or a barrier rule.
#[derive(Debug, Clone)]
pub struct Violation {
    /// The kind.
    pub kind: Kind,
    /// One-line headline.
    pub message: String,
    /// Every source location involved; the first is the primary one.
    pub locations: Vec<Location>,
    /// The threads involved.
    pub threads: Vec<ThreadRange>,
    /// The named barrier, if one is involved.
    pub barrier: Option<u32>,
    /// The barrier generation, if known.
    pub generation: Option<u32>,
    /// The first generation (or mbarrier phase) of each later repeat of this violation,
    /// folded into it (same kind, barrier, instructions and threads).
    pub later_generations: Vec<u32>,
    /// Further lines of explanation (counts, wait-for cycle, ...).
    pub notes: Vec<String>,
    /// A benign race (`benign-race`: unordered writes of the same value): a warning that
    /// makes the verdict a violation only under `--strict`.
    pub benign: bool,
}

/// Why a kernel could not be verified.
#[derive(Debug, Clone)]
pub struct Unverifiable {
    /// What depended on an unknown value (or what was missing).
    pub reason: String,
    /// The instruction, if one is to blame.
    pub location: Option<Location>,
    /// Other instructions involved (the other access of a possible race).
    pub related: Vec<Location>,
    /// The register whose value was unknown.
    pub register: Option<String>,
    /// The inputs it depends on (parameter names/indices, global loads, ...).
    pub inputs: Vec<String>,
    /// What the user can do about it.
    pub hint: Option<String>,
}

/// A trap behind an input-dependent branch that the verdict assumes is not reached: the
/// kernel is verified for the executions in which the assertion holds.
#[derive(Debug, Clone)]
pub struct Assumption {
    /// `assertion` (a `__assertfail` call) or `trap`.
    pub kind: &'static str,
    /// The asserted expression, when known.
    pub message: Option<String>,
    /// The `__assertfail` call or `trap`; for an assertion whose file and line are known,
    /// that CUDA position.
    pub location: Location,
    /// The branch on an input-dependent value that leads to it.
    pub branch: Location,
}

impl Assumption {
    /// `the assertion `v >= 0` (k.cu:11)` or `the trap at k.cu:20:3 (PTX line 57)`.
    pub fn describe(&self) -> String {
        match (self.kind, &self.message) {
            ("assertion", Some(m)) => {
                format!("the assertion `{m}` at {}", self.location.describe())
            }
            (kind, _) => format!("the {kind} at {}", self.location.describe()),
        }
    }
}

/// The paper's measurements for one kernel; zero when a stage did not run.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Stats {
    /// Threads of the emulated CTA.
    pub threads: u64,
    /// Commands over all threads.
    pub commands: u64,
    /// Dynamic barriers (completed barrier generations).
    pub dynamic_barriers: u64,
    /// Distinct physical barriers used.
    pub physical_barriers: u64,
    /// Distinct 4-byte words of shared memory accessed, tensor-memory cells included.
    pub shared_addresses: u64,
    /// Race tests performed.
    pub race_tests: u64,
    /// Access pairs a naive detector would test.
    pub naive_race_pairs: u64,
    /// Instructions emulated.
    pub instructions: u64,
    /// Wall-clock seconds over all stages.
    pub seconds: f64,
    /// Per-stage seconds.
    #[serde(skip)]
    pub stage_seconds: StageTimes,
}

/// Seconds spent per stage.
#[derive(Debug, Clone, Copy, Default)]
pub struct StageTimes {
    /// Parsing the file (shared by its kernels).
    pub parse: f64,
    /// Emulating the CTA.
    pub emulate: f64,
    /// Barrier graph and happens-before.
    pub graph: f64,
    /// Race detection.
    pub race: f64,
}

impl StageTimes {
    /// Adds another run's emulation, graph and race times (a kernel's second run: the file
    /// was parsed once).
    pub fn add_run(&mut self, other: &StageTimes) {
        self.emulate += other.emulate;
        self.graph += other.graph;
        self.race += other.race;
    }
}

/// A node of the barrier dependence graph, for `--dot`.
#[derive(Debug, Clone)]
pub struct DotNode {
    /// `bar ID gen G`.
    pub label: String,
    /// Whether a violation names this barrier generation.
    pub violated: bool,
}

/// A kernel's barrier dependence graph, for `--dot`.
#[derive(Debug, Clone, Default)]
pub struct DotGraph {
    /// Nodes.
    pub nodes: Vec<DotNode>,
    /// Edges as indices into `nodes`.
    pub edges: Vec<(usize, usize)>,
}

/// Which problem sizes a verdict covers, when branches on kernel inputs became choices
/// (`docs/semantics.md` §6.5).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Coverage {
    /// Paths emulated (one per combination of answers).
    pub paths: u32,
    /// `--max-trips`: the choices one branch makes on one variable per path.
    pub max_trips: u32,
    /// Every feasible path was explored: the verdict holds for every value of the
    /// variables (no bound cut a path short) that the `--param` ranges allow.
    pub complete: bool,
    /// The `--param` ranges (`FIELD=LO..=HI`) the exploration was restricted to, as
    /// written: the verdict covers no value outside them.
    pub ranges: Vec<String>,
    /// The exploration stopped at its path limit with paths left.
    pub incomplete: bool,
    /// When every explored path's choices are on one parameter field: that field's values
    /// (checked from 0 to `checked_up_to`) that follow a verified path. Every other value
    /// in that range follows a path that was not explored; larger values are not checked.
    pub inputs: Option<InputCoverage>,
    /// The variables the choices decided on.
    pub variables: Vec<CoverageVariable>,
    /// For a violation or unverifiable path: the values of each variable on that path.
    pub failing_path: Vec<PathValue>,
    /// For a violation or unverifiable path: parameter-field values under which a launch
    /// takes that path (the smallest the search found).
    pub failing_inputs: Vec<InputValue>,
    /// Whether the programs of the explored values of [`Coverage::inputs`] repeat
    /// (`docs/induction.md` §3): evidence for the induction argument, which weft does not
    /// complete yet, so it never widens the verdict. `None` when not checked.
    pub periodicity: Option<PeriodicityRecord>,
    /// The induction over the trip count (`docs/induction.md`): whether it concluded, and
    /// for which values. `None` when not tried (nothing was cut short by the bound, or the
    /// exploration failed).
    pub induction: Option<InductionRecord>,
}

/// What the induction over a loop's trip count concluded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Default)]
pub struct InductionRecord {
    /// Whether it concluded: the values in `family` (and every value up to `base`) are
    /// verified.
    pub concluded: bool,
    /// What it found, or why it did not conclude, in words.
    pub reason: String,
    /// Trips of the loop per period of the emulator's state.
    pub period: Option<u32>,
    /// The trip from which the state repeats.
    pub start: Option<u32>,
    /// Periods after which every two commands that share a resource are ordered.
    pub window: Option<u32>,
    /// The largest value verified by a run with the value fixed (or explored).
    pub base: Option<u64>,
    /// The values of the trip-count variable the induction covers (inclusive), beyond
    /// which a value on the way could wrap around.
    pub family: Option<[u64; 2]>,
}

/// What the explored programs of consecutive values show about a period.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PeriodicityRecord {
    /// The period with which the explored programs repeat, if they do.
    pub period: Option<u32>,
    /// The first explored value of the repetition.
    pub from: Option<u64>,
    /// The largest explored value.
    pub to: Option<u64>,
    /// What was found and why the verdict stays bounded, in words.
    pub reason: String,
}

/// A parameter field's value.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputValue {
    /// The field, as text (`param 0 bytes 12..16`).
    pub term: String,
    /// Its value (unsigned).
    pub value: u64,
    /// When the field is a whole `.f32` or `.f64` parameter: the float whose bit pattern
    /// `value` is (`"2.0"`, `"-0.0"`, `"NaN"`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub float: Option<String>,
}

/// A parameter field's values a bounded verdict covers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputCoverage {
    /// The field, as text (`param 0 bytes 8..12`).
    pub term: String,
    /// Its values that follow a verified path (inclusive intervals, unsigned).
    pub verified: Vec<[u64; 2]>,
    /// The largest value checked.
    pub checked_up_to: u64,
}

/// A variable of the exploration and the values the explored paths cover.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CoverageVariable {
    /// The term, as text (`param 0 bytes 12..16`, `shr.s((param 5 + 63), 6)`, `(x >> 6)` for an
    /// unsigned shift, …).
    pub term: String,
    /// Its width in bits.
    pub bits: u8,
    /// Values the verified paths cover (inclusive intervals, unsigned).
    pub explored: Vec<[u64; 2]>,
    /// Values not explored because of the bound (inclusive intervals, unsigned).
    pub not_explored: Vec<[u64; 2]>,
}

/// A variable's values on one path.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PathValue {
    /// The term, as text.
    pub term: String,
    /// Its width in bits.
    pub bits: u8,
    /// The values (inclusive intervals, unsigned).
    pub values: Vec<[u64; 2]>,
}

/// Everything weft says about one kernel.
#[derive(Debug, Clone)]
pub struct KernelReport {
    /// The PTX file.
    pub file: Arc<PtxFile>,
    /// The kernel's name as in the PTX.
    pub kernel: String,
    /// The verdict.
    pub verdict: Verdict,
    /// The emulated CTA shape, once known.
    pub cta_shape: Option<[u32; 3]>,
    /// Whether warps ran in lock-step.
    pub warp_sync: bool,
    /// `--strict`: benign races count as violations.
    pub strict: bool,
    /// The `--param` specs that applied to this kernel.
    pub params: Vec<String>,
    /// Violations, in the order the stages found them.
    pub violations: Vec<Violation>,
    /// Reasons the kernel could not be verified.
    pub unverifiable: Vec<Unverifiable>,
    /// Traps the verdict assumes are not reached (assertions assumed to hold).
    pub assumptions: Vec<Assumption>,
    /// Approximations the emulator applied to this kernel (full sentences).
    pub notes: Vec<String>,
    /// Measurements.
    pub stats: Stats,
    /// Peak resident memory of the process after this kernel, in KiB (Linux only).
    pub peak_memory_kib: Option<u64>,
    /// The barrier dependence graph, when the barrier stage ran.
    pub dot: Option<DotGraph>,
    /// Which problem sizes the verdict covers, when choices were explored.
    pub coverage: Option<Coverage>,
}

impl KernelReport {
    /// Whether what was found so far verifies the kernel: nothing unverifiable and no
    /// violation but benign races (none at all under `strict`).
    pub fn passes(&self, strict: bool) -> bool {
        self.unverifiable.is_empty() && !self.violations.iter().any(|v| strict || !v.benign)
    }

    /// Sets the verdict from what was found.
    pub fn settle(&mut self) {
        if self.verdict == Verdict::Parsed {
            return;
        }
        let strict = self.strict;
        self.verdict = if self.violations.iter().any(|v| strict || !v.benign) {
            Verdict::Violation
        } else if !self.unverifiable.is_empty() {
            Verdict::Unverifiable
        } else {
            Verdict::Verified
        };
    }
}

/// An input error: a file that could not be read or parsed.
#[derive(Debug, Clone, Serialize)]
pub struct InputError {
    /// The file as given.
    pub file: String,
    /// 1-based line (0 when the whole file is at fault).
    pub line: u32,
    /// 1-based column (0 when unknown).
    pub column: u32,
    /// What is wrong.
    pub message: String,
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.line == 0 {
            write!(f, "{}: {}", self.file, self.message)
        } else if self.column == 0 {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        } else {
            write!(
                f,
                "{}:{}:{}: {}",
                self.file, self.line, self.column, self.message
            )
        }
    }
}

/// The result of a whole run.
#[derive(Debug, Default)]
pub struct RunReport {
    /// Kernel reports in input order (file order, then kernel order in the file).
    pub kernels: Vec<KernelReport>,
    /// Input errors in input order.
    pub errors: Vec<InputError>,
    /// Inputs that parsed but gave nothing to verify (a file without kernels), in input
    /// order. They count as input errors for the exit status: nothing was verified.
    pub warnings: Vec<InputError>,
}

impl RunReport {
    /// The documented exit status: 1 violation, else 2 input error, else 3 unverifiable, else 0.
    pub fn exit_code(&self) -> u8 {
        if self.kernels.iter().any(|k| k.verdict == Verdict::Violation) {
            1
        } else if !self.errors.is_empty() || !self.warnings.is_empty() {
            2
        } else if self
            .kernels
            .iter()
            .any(|k| k.verdict == Verdict::Unverifiable)
        {
            3
        } else {
            0
        }
    }
}

/// Kernel names longer than this many characters are elided in text output.
pub const MAX_SHOWN_NAME: usize = 80;

/// A kernel name as text output shows it: unchanged up to [`MAX_SHOWN_NAME`] characters;
/// longer (mangled template instances run to thousands) its first characters, `…`, and the
/// unqualified name that `--kernel` accepts.
pub fn shown_name(name: &str) -> std::borrow::Cow<'_, str> {
    let count = name.chars().count();
    if count <= MAX_SHOWN_NAME {
        return name.into();
    }
    let head: String = name.chars().take(MAX_SHOWN_NAME / 2).collect();
    let simple = simple_name(name);
    if simple == name {
        format!("{head}… ({count} characters)").into()
    } else {
        let simple: String = simple.chars().take(MAX_SHOWN_NAME / 2).collect();
        format!("{head}… (`{simple}`, {count} characters)").into()
    }
}

/// The unqualified identifier of an Itanium-mangled name: `_Z6kernelPf` → `kernel`,
/// `_ZN7cutlass13device_kernelI…EEvT_` → `device_kernel` (the last name of a nested name
/// before its template arguments). Other names are returned unchanged.
pub fn simple_name(mangled: &str) -> &str {
    let Some(rest) = mangled.strip_prefix("_Z") else {
        return mangled;
    };
    let rest = rest.strip_prefix('L').unwrap_or(rest);
    let name = match rest.strip_prefix('N') {
        Some(nested) => nested_name(nested),
        None => source_name(rest).map(|(name, _)| name),
    };
    name.unwrap_or(mangled)
}

/// `<length><identifier>` at the start of `s`: the identifier and what follows it.
fn source_name(s: &str) -> Option<(&str, &str)> {
    let digits = s.bytes().take_while(u8::is_ascii_digit).count();
    let len: usize = s[..digits].parse().ok()?;
    let end = digits.checked_add(len)?;
    let name = s.get(digits..end)?;
    Some((name, &s[end..]))
}

/// The last `<source-name>` of a nested name (after `_ZN`), before template arguments or the
/// closing `E`. Substitutions (`S_`, `S0_`, `St`, `Sa`, …) in the prefix are skipped.
fn nested_name(s: &str) -> Option<&str> {
    let mut s = s.trim_start_matches(['r', 'V', 'K']);
    s = s.strip_prefix(['R', 'O']).unwrap_or(s);
    let mut last = None;
    loop {
        let bytes = s.as_bytes();
        match bytes {
            [b'0'..=b'9', ..] => {
                let (name, rest) = source_name(s)?;
                last = Some(name);
                s = rest;
            }
            [b'S', b'a' | b'b' | b'd' | b'i' | b'o' | b's' | b't', ..] => s = &s[2..],
            [b'S', ..] => s = &s[s.find('_')? + 1..],
            _ => return last,
        }
    }
}

/// Formats thread ids as warp/lane ranges: `warps 0-1`, `warp 2 lanes 0-15`, `warp 0
/// lane 7` (barrier-graph's [`barrier_graph::describe_threads`], the one renderer).
pub fn describe_threads(ranges: &[ThreadRange], warp_size: u32) -> String {
    barrier_graph::describe_threads(ranges.iter().map(|r| (r.first, r.last)), warp_size)
}

/// Collapses thread ids into sorted inclusive ranges.
pub fn thread_ranges(threads: impl IntoIterator<Item = u32>) -> Vec<ThreadRange> {
    let mut ids: Vec<u32> = threads.into_iter().collect();
    ids.sort_unstable();
    ids.dedup();
    let mut ranges: Vec<ThreadRange> = Vec::new();
    for id in ids {
        match ranges.last_mut() {
            Some(r) if r.last + 1 == id => r.last = id,
            _ => ranges.push(ThreadRange {
                first: id,
                last: id,
            }),
        }
    }
    ranges
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(ids: impl IntoIterator<Item = u32>) -> String {
        describe_threads(&thread_ranges(ids), 32)
    }

    #[test]
    fn thread_descriptions() {
        assert_eq!(d(0..32), "warp 0");
        assert_eq!(d(0..64), "warps 0-1");
        assert_eq!(d(64..80), "warp 2 lanes 0-15");
        assert_eq!(d([7]), "warp 0 lane 7");
        assert_eq!(d(16..80), "warp 0 lanes 16-31, warp 1, warp 2 lanes 0-15");
        assert_eq!(d(16..48), "warp 0 lanes 16-31, warp 1 lanes 0-15");
        assert_eq!(d((0..32).chain(64..96)), "warp 0, warp 2");
        assert_eq!(d([]), "no threads");
    }

    #[test]
    fn long_names_are_elided() {
        assert_eq!(shown_name("_Z6kernelPf"), "_Z6kernelPf");
        let long = format!("_ZN7cutlass13device_kernelI{}EEvT_", "x".repeat(200));
        let shown = shown_name(&long);
        assert!(shown.starts_with("_ZN7cutlass13device_kernelI"), "{shown}");
        assert!(
            shown.ends_with("… (`device_kernel`, 232 characters)"),
            "{shown}"
        );
        let plain = "é".repeat(100);
        assert_eq!(
            shown_name(&plain),
            format!("{}… (100 characters)", "é".repeat(40))
        );
    }

    #[test]
    fn exit_codes_rank_violation_over_error_over_unverifiable() {
        let mut run = RunReport::default();
        assert_eq!(run.exit_code(), 0);
        run.errors.push(InputError {
            file: "a.ptx".into(),
            line: 1,
            column: 2,
            message: "bad".into(),
        });
        assert_eq!(run.exit_code(), 2);
        assert_eq!(run.errors[0].to_string(), "a.ptx:1:2: bad");
    }
}
