//! Command-line options and the small value parsers behind them.
//!
//! Everything here is syntax: what a flag's text means. Whether a kernel or parameter it names
//! exists is decided later, once the PTX is parsed.

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use clap::{Parser, ValueEnum};

const AFTER_HELP: &str = "\
Examples:
  weft kernel.ptx                      verify every kernel with its .reqntid/.maxntid shape
  weft -n 256 kernel.ptx               verify with a 256-thread CTA
  weft -n 32x8 -s kernel.ptx           a 32x8 CTA whose warps run in lock-step
  weft -k my_kernel -p 2=1024 a.ptx    one kernel, parameter 2 fixed to 1024
  weft -p params+12:u32=4096 gemm.ptx  a u32 at byte 12 of the by-value struct `params`
  weft -p params+12:u32=1.. gemm.ptx    explore that field from 1 up (a precondition)
  weft --format sarif *.ptx > weft.sarif
  weft --parse-only *.ptx              only check that the files parse

Exit status:
  0  every kernel was verified
  1  some kernel has a violation (deadlock, race, barrier misuse, ...)
  2  usage or input error (bad flag, unreadable or malformed PTX), and no violation
  3  some kernel could not be verified (input-dependent synchronization, no CTA shape),
     and no violation or input error";

/// Verifies deadlock freedom, safe barrier recycling and shared-memory race freedom of PTX
/// kernels that synchronize with named barriers and mbarriers.
#[derive(Debug, Parser)]
#[command(name = "weft", version, about, after_help = AFTER_HELP)]
pub struct Cli {
    /// PTX files to verify (`-` reads standard input).
    #[arg(required = true, value_name = "PTX")]
    pub files: Vec<PathBuf>,

    /// CTA shape: `X`, `XxY` or `XxYxZ` threads (default: the kernel's .reqntid, else .maxntid).
    #[arg(short = 'n', long = "threads", value_name = "XxYxZ")]
    pub threads: Option<Dim3>,

    /// Index of the emulated CTA in the grid (%ctaid); missing dimensions are 0.
    #[arg(
        short = 'b',
        long = "cta",
        value_name = "X,Y,Z",
        default_value = "0,0,0"
    )]
    pub cta: CtaIndex,

    /// Grid shape in CTAs (%nctaid); the CTA given by --cta must lie inside it (default: the
    /// smallest grid that holds that CTA, 1x1x1 for CTA 0,0,0).
    #[arg(short = 'g', long = "grid", value_name = "XxYxZ")]
    pub grid: Option<Dim3>,

    /// Threads of a warp run in lock-step (code written for pre-Volta warp-synchronous execution).
    #[arg(short = 's', long = "warp-sync")]
    pub warp_sync: bool,

    /// Count benign races (unordered writes of the same value to the same bytes) as
    /// violations: without it they are warnings and do not change the verdict.
    #[arg(long = "strict")]
    pub strict: bool,

    /// Treat initialized `.global`/`.const` module variables (`__device__` tables) as unknown
    /// inputs instead of reading their initializers.
    #[arg(long = "no-initializers")]
    pub no_initializers: bool,

    /// Fix a kernel parameter: `INDEX_OR_NAME=VALUE`, or `INDEX_OR_NAME+OFFSET:TYPE=VALUE` for a
    /// scalar inside a by-value struct parameter. An integer range, `=LO..=HI` or `=LO..`,
    /// does not fix the value: the exploration of sizes keeps to it (a precondition such
    /// as K >= 1). Repeatable.
    #[arg(short = 'p', long = "param", value_name = "SPEC")]
    pub params: Vec<ParamSpec>,

    /// Verify only this kernel (mangled name, or its unmangled identifier). Repeatable.
    /// Default: every .entry of every file.
    #[arg(short = 'k', long = "kernel", value_name = "NAME")]
    pub kernels: Vec<String>,

    /// Number of worker threads (default and maximum: the number of cores).
    #[arg(short = 'j', long = "jobs", value_name = "N")]
    pub jobs: Option<usize>,

    /// Instructions one thread may execute before the kernel is reported unverifiable.
    #[arg(long = "max-steps", value_name = "N", default_value_t = DEFAULT_MAX_STEPS)]
    pub max_steps: u64,

    /// Trip counts to explore for loops bounded by kernel inputs: a branch on an input-derived
    /// size that decides synchronization is explored for each answer, up to N choices per
    /// branch and path; the report says which values were not explored.
    #[arg(long = "max-trips", value_name = "N", default_value_t = emulator::DEFAULT_MAX_TRIPS)]
    pub max_trips: u32,

    /// Memory the verification of one kernel may use (`4G`, `512M`, bytes); a kernel that
    /// needs more is reported unverifiable.
    #[arg(long = "max-memory", value_name = "SIZE", default_value = "3G")]
    pub max_memory: ByteSize,

    /// Happens-before tests the race check may make in one shared word, each race it records
    /// counting as 4; a kernel with a word that needs more is reported unverifiable (races
    /// there may be missing).
    #[arg(long = "max-race-tests", value_name = "N", default_value_t = race::DEFAULT_MAX_WORD_TESTS)]
    pub max_race_tests: u64,

    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Text)]
    pub format: Format,

    /// Write the barrier dependence graph of every verified kernel to FILE (Graphviz).
    #[arg(long, value_name = "FILE")]
    pub dot: Option<PathBuf>,

    /// Print statistics per kernel (text format; JSON always includes them).
    #[arg(long)]
    pub stats: bool,

    /// Report every racing access pair and every thread range, not only the first.
    #[arg(short = 'd', long)]
    pub detail: bool,

    /// Print nothing on stdout in text format; the exit status tells the verdict.
    #[arg(short = 'q', long)]
    pub quiet: bool,

    /// When to color the text output.
    #[arg(long, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    pub color: ColorWhen,

    /// Only parse the files and report parse errors.
    #[arg(long)]
    pub parse_only: bool,
}

/// The default `--max-steps`.
pub const DEFAULT_MAX_STEPS: u64 = 10_000_000;

/// CUDA's limits on a CTA shape: threads per dimension and in all.
pub const MAX_CTA_DIMS: [u32; 3] = [1024, 1024, 64];
/// CUDA's limit on the threads of one CTA.
pub const MAX_CTA_THREADS: u64 = 1024;
/// CUDA's limits on a grid shape, in CTAs per dimension.
pub const MAX_GRID_DIMS: [u32; 3] = [i32::MAX as u32, 65535, 65535];

impl Cli {
    /// The shape checks clap cannot express: a CTA shape within CUDA's limits, a grid with no
    /// empty dimension and within CUDA's limits, and a `--cta` inside the grid. Returns the
    /// grid to emulate.
    pub fn check_shapes(&self) -> Result<[u32; 3], String> {
        const AXES: [char; 3] = ['x', 'y', 'z'];
        if let Some(threads) = self.threads {
            let [x, y, z] = threads.0;
            let total = u64::from(x) * u64::from(y) * u64::from(z);
            if total == 0 {
                return Err(format!(
                    "`--threads {threads}`: every dimension must be at least 1"
                ));
            }
            for ((&n, max), axis) in threads.0.iter().zip(MAX_CTA_DIMS).zip(AXES) {
                if n > max {
                    return Err(format!(
                        "`--threads {threads}`: a CTA has at most {max} threads in {axis} \
                         (CUDA limits a CTA to 1024x1024x64 and 1024 threads in all)"
                    ));
                }
            }
            if total > MAX_CTA_THREADS {
                return Err(format!(
                    "`--threads {threads}`: {total} threads; a CTA has at most \
                     {MAX_CTA_THREADS}"
                ));
            }
        }
        let grid = match self.grid {
            Some(grid) => {
                if grid.0.contains(&0) {
                    return Err(format!(
                        "`--grid {grid}`: every dimension must be at least 1"
                    ));
                }
                grid
            }
            None => Dim3([
                self.cta.0[0].saturating_add(1),
                self.cta.0[1].saturating_add(1),
                self.cta.0[2].saturating_add(1),
            ]),
        };
        for ((&n, max), axis) in grid.0.iter().zip(MAX_GRID_DIMS).zip(AXES) {
            if n > max {
                let what = if self.grid.is_some() {
                    format!("`--grid {grid}`")
                } else {
                    format!("`--cta {}`", self.cta)
                };
                return Err(format!(
                    "{what}: a grid has at most {max} CTAs in {axis} \
                     (CUDA limits a grid to 2147483647x65535x65535)"
                ));
            }
        }
        for ((&cta, &n), axis) in self.cta.0.iter().zip(&grid.0).zip(AXES) {
            if cta >= n {
                return Err(format!(
                    "`--cta {}` lies outside `--grid {grid}`: CTA indices in {axis} run from 0 to {}",
                    self.cta,
                    n - 1
                ));
            }
        }
        Ok(grid.0)
    }
}

/// `--format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// rustc-like diagnostics with source snippets.
    Text,
    /// One JSON document (schema in README.md).
    Json,
    /// SARIF 2.1.0, for code-scanning services.
    Sarif,
}

/// `--color`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorWhen {
    /// Color when stdout is a terminal.
    Auto,
    /// Always color.
    Always,
    /// Never color.
    Never,
}

/// Three dimensions, written `256`, `32x8`, `32x8x2` or `1,2,3` (missing ones are 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Dim3(pub [u32; 3]);

/// Up to three integers separated by `x` or `,`; missing ones are `fill`.
fn three(s: &str, fill: u32) -> Result<[u32; 3], String> {
    let parts: Vec<&str> = s.split(['x', 'X', ',']).map(str::trim).collect();
    if parts.is_empty() || parts.len() > 3 {
        return Err(format!("expected X, XxY or XxYxZ, found `{s}`"));
    }
    let mut dims = [fill; 3];
    for (dim, part) in dims.iter_mut().zip(&parts) {
        *dim = part
            .parse()
            .map_err(|_| format!("`{part}` is not a non-negative integer (in `{s}`)"))?;
    }
    Ok(dims)
}

impl FromStr for Dim3 {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        three(s, 1).map(Dim3)
    }
}

/// A CTA index, written `3`, `3,1` or `3,1,0` (missing dimensions are 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CtaIndex(pub [u32; 3]);

impl FromStr for CtaIndex {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        three(s, 0).map(CtaIndex)
    }
}

impl fmt::Display for CtaIndex {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.0;
        write!(f, "{x},{y},{z}")
    }
}

impl fmt::Display for Dim3 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let [x, y, z] = self.0;
        write!(f, "{x}x{y}x{z}")
    }
}

/// A size in bytes, written `4096`, `64K`, `512M`, `4G` (or `KiB`, `MiB`, `GiB`; powers of 1024).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteSize(pub u64);

impl FromStr for ByteSize {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim();
        let split = t.find(|c: char| !c.is_ascii_digit()).unwrap_or(t.len());
        let (digits, unit) = t.split_at(split);
        let shift = match unit.trim().to_ascii_lowercase().as_str() {
            "" | "b" => 0,
            "k" | "kb" | "kib" => 10,
            "m" | "mb" | "mib" => 20,
            "g" | "gb" | "gib" => 30,
            "t" | "tb" | "tib" => 40,
            _ => return Err(format!("`{s}`: expected a size such as 4096, 512M or 4G")),
        };
        let n: u64 = digits
            .parse()
            .map_err(|_| format!("`{s}`: expected a size such as 4096, 512M or 4G"))?;
        n.checked_mul(1u64 << shift)
            .filter(|&b| b > 0)
            .map(ByteSize)
            .ok_or_else(|| format!("`{s}`: the size must be between 1 byte and 16 EiB"))
    }
}

pub use emulator::{ParamRef as ParamTarget, ParamValue, ScalarType};

/// A scalar type by its PTX name (`u8`…`u64`, `s8`…`s64`, `b8`…`b64`, `f32`, `f64`).
fn scalar_type(s: &str) -> Option<ScalarType> {
    Some(match s {
        "u8" | "b8" => ScalarType::Unsigned(1),
        "u16" | "b16" => ScalarType::Unsigned(2),
        "u32" | "b32" => ScalarType::Unsigned(4),
        "u64" | "b64" => ScalarType::Unsigned(8),
        "s8" => ScalarType::Signed(1),
        "s16" => ScalarType::Signed(2),
        "s32" => ScalarType::Signed(4),
        "s64" => ScalarType::Signed(8),
        "f32" => ScalarType::F32,
        "f64" => ScalarType::F64,
        _ => return None,
    })
}

/// One `--param INDEX_OR_NAME[+OFFSET:TYPE]=VALUE`.
#[derive(Debug, Clone, PartialEq)]
pub struct ParamSpec {
    /// The parameter.
    pub target: ParamTarget,
    /// For a field of a by-value struct: its byte offset and type.
    pub field: Option<(u64, ScalarType)>,
    /// The value.
    pub value: ParamValue,
    /// The spec as the user wrote it (reports repeat it).
    pub text: String,
}

impl ParamSpec {
    /// The binding the emulator resolves.
    pub fn binding(&self) -> emulator::ParamBinding {
        emulator::ParamBinding {
            target: self.target.clone(),
            field: self.field,
            value: self.value,
        }
    }
}

fn parse_int(s: &str) -> Option<i128> {
    let (negative, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let magnitude = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        i128::from_str_radix(hex, 16).ok()?
    } else if let Some(bin) = digits
        .strip_prefix("0b")
        .or_else(|| digits.strip_prefix("0B"))
    {
        i128::from_str_radix(bin, 2).ok()?
    } else {
        digits.parse::<i128>().ok()?
    };
    Some(if negative { -magnitude } else { magnitude })
}

impl FromStr for ParamSpec {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        let syntax = "expected INDEX_OR_NAME=VALUE or INDEX_OR_NAME+OFFSET:TYPE=VALUE";
        let (lhs, value) = s
            .split_once('=')
            .ok_or_else(|| format!("{syntax}, found `{s}`"))?;
        let (name, field) = match lhs.split_once('+') {
            None => (lhs, None),
            Some((name, field)) => {
                let (offset, ty) = field
                    .split_once(':')
                    .ok_or_else(|| format!("{syntax}: `+{field}` lacks `:TYPE`"))?;
                let offset = parse_int(offset)
                    .and_then(|o| u64::try_from(o).ok())
                    .ok_or_else(|| format!("`{offset}` is not a byte offset"))?;
                let ty = scalar_type(ty).ok_or_else(|| {
                    format!("`{ty}` is not a scalar type (u8..u64, s8..s64, b8..b64, f32, f64)")
                })?;
                (name, Some((offset, ty)))
            }
        };
        let name = name.trim();
        if name.is_empty() {
            return Err(format!("{syntax}: the parameter is missing in `{s}`"));
        }
        let target = match name.parse::<u32>() {
            Ok(index) => ParamTarget::Index(index),
            Err(_) => ParamTarget::Name(name.to_owned()),
        };
        let value = value.trim();
        if let Some((lo, hi)) = value.split_once("..") {
            // `LO..=HI`, or `LO..` (up to the field's largest value): a range the
            // exploration keeps to, not a pin. `LO..HI` is refused: inclusive or not?
            let bound = |x: &str| {
                parse_int(x.trim()).ok_or_else(|| format!("`{}` is not an integer", x.trim()))
            };
            let lo = bound(lo)?;
            let hi = match hi.strip_prefix('=') {
                Some(hi) => bound(hi)?,
                None if hi.trim().is_empty() => i128::MAX,
                None => {
                    return Err(format!(
                        "`{value}`: write an inclusive range as LO..=HI, or LO.. for every \
                         value from LO"
                    ));
                }
            };
            return Ok(ParamSpec {
                target,
                field,
                value: ParamValue::Range { lo, hi },
                text: s.to_owned(),
            });
        }
        let value = match parse_int(value) {
            Some(v) => ParamValue::Int(v),
            None => match value.parse::<f64>() {
                Ok(v) => ParamValue::Float(v),
                Err(_) => return Err(format!("`{value}` is not a number")),
            },
        };
        Ok(ParamSpec {
            target,
            field,
            value,
            text: s.to_owned(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims() {
        assert_eq!("256".parse::<Dim3>(), Ok(Dim3([256, 1, 1])));
        assert_eq!("32x8".parse::<Dim3>(), Ok(Dim3([32, 8, 1])));
        assert_eq!("2,3,4".parse::<Dim3>(), Ok(Dim3([2, 3, 4])));
        assert!("32x".parse::<Dim3>().is_err());
        assert!("1x2x3x4".parse::<Dim3>().is_err());
        assert!("-1".parse::<Dim3>().is_err());
        assert_eq!("5".parse::<CtaIndex>(), Ok(CtaIndex([5, 0, 0])));
        assert_eq!("5,2".parse::<CtaIndex>(), Ok(CtaIndex([5, 2, 0])));
    }

    /// The option's default (a string for clap) is the library's.
    #[test]
    fn the_default_memory_budget_is_the_emulators() {
        use clap::Parser;
        let cli = Cli::try_parse_from(["weft", "k.ptx"]).expect("parses");
        assert_eq!(cli.max_memory, ByteSize(emulator::DEFAULT_MAX_MEMORY));
        assert_eq!(cli.max_race_tests, race::DEFAULT_MAX_WORD_TESTS);
    }

    #[test]
    fn sizes() {
        assert_eq!("4G".parse::<ByteSize>(), Ok(ByteSize(4 << 30)));
        assert_eq!("512MiB".parse::<ByteSize>(), Ok(ByteSize(512 << 20)));
        assert_eq!("4096".parse::<ByteSize>(), Ok(ByteSize(4096)));
        assert!("0".parse::<ByteSize>().is_err());
        assert!("4Q".parse::<ByteSize>().is_err());
        assert!("99999999999T".parse::<ByteSize>().is_err());
        assert!("".parse::<ByteSize>().is_err());
    }

    #[test]
    fn param_ranges() {
        let p: ParamSpec = "params+12:u32=1..".parse().unwrap();
        assert_eq!(p.field, Some((12, ScalarType::Unsigned(4))));
        assert_eq!(
            p.value,
            ParamValue::Range {
                lo: 1,
                hi: i128::MAX
            }
        );
        let p: ParamSpec = "2=0x10..=64".parse().unwrap();
        assert_eq!(p.value, ParamValue::Range { lo: 16, hi: 64 });
        // Inclusive or not? Refused.
        let e = "2=1..8".parse::<ParamSpec>().unwrap_err();
        assert!(e.contains("LO..=HI"), "{e}");
        assert!("2=a..=3".parse::<ParamSpec>().is_err());
        assert!("2=1..=x".parse::<ParamSpec>().is_err());
    }

    #[test]
    fn params() {
        let p: ParamSpec = "2=1024".parse().unwrap();
        assert_eq!(p.target, ParamTarget::Index(2));
        assert_eq!(p.field, None);
        assert_eq!(p.value, ParamValue::Int(1024));

        let p: ParamSpec = "params+12:u32=0x10".parse().unwrap();
        assert_eq!(p.target, ParamTarget::Name("params".into()));
        assert_eq!(p.field, Some((12, ScalarType::Unsigned(4))));
        assert_eq!(p.value, ParamValue::Int(16));

        let p: ParamSpec = "0=-1".parse().unwrap();
        assert_eq!(p.value, ParamValue::Int(-1));
        let p: ParamSpec = "x=1.5".parse().unwrap();
        assert_eq!(p.value, ParamValue::Float(1.5));
        let p: ParamSpec = "0=0b101".parse().unwrap();
        assert_eq!(p.value, ParamValue::Int(5));

        assert!("2".parse::<ParamSpec>().is_err());
        assert!("p+4=1".parse::<ParamSpec>().is_err());
        assert!("p+4:q32=1".parse::<ParamSpec>().is_err());
        assert!("=1".parse::<ParamSpec>().is_err());
        assert!("1=abc".parse::<ParamSpec>().is_err());
    }
}
