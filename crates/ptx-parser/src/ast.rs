//! The typed syntax tree of a PTX module.
//!
//! The tree borrows every name from the source text (`'src`), so parsing allocates only the
//! vectors that hold statements and operands. Every node that a report may point at carries
//! its PTX line (1-based) and column (1-based, in bytes); instructions also carry the CUDA
//! location of the last `.loc` before them.
//!
//! Opcodes and modifiers are kept as text: the parser knows PTX's *grammar*, not its
//! instruction set, so an opcode it has never seen still parses. Meaning is the emulator's
//! business.

/// A whole `.ptx` file.
#[derive(Debug, Clone, PartialEq)]
pub struct Module<'src> {
    /// `.version MAJOR.MINOR`, if present.
    pub version: Option<(u32, u32)>,
    /// `.target` entries, e.g. `["sm_90a"]` or `["sm_80", "debug"]`.
    pub target: Vec<&'src str>,
    /// `.address_size 32|64`, if present.
    pub address_size: Option<u32>,
    /// `.file` entries in order of appearance.
    pub files: Vec<FileEntry<'src>>,
    /// Module-scope variables (`.global`, `.const`, `.shared`, `.tex`, …).
    pub globals: Vec<VarDecl<'src>>,
    /// `.entry` and `.func` definitions and declarations, in source order.
    pub functions: Vec<Function<'src>>,
}

impl<'src> Module<'src> {
    /// The kernels (`.entry` functions with a body), in source order.
    pub fn entries(&self) -> impl Iterator<Item = &Function<'src>> {
        self.functions
            .iter()
            .filter(|f| f.kind == FunctionKind::Entry && f.body.is_some())
    }

    /// The function with this name that has a body, if any.
    pub fn function(&self, name: &str) -> Option<&Function<'src>> {
        self.functions
            .iter()
            .find(|f| f.name == name && f.body.is_some())
    }

    /// The path that `.file INDEX` names.
    pub fn file_path(&self, index: u32) -> Option<&'src str> {
        self.files.iter().find(|f| f.index == index).map(|f| f.path)
    }
}

/// `.file INDEX "path" [, timestamp, size]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileEntry<'src> {
    pub index: u32,
    /// The path exactly as written (without quotes). For the two-string form
    /// `.file N "dir" "name"`, the second string (see [`FileEntry::directory`]).
    pub path: &'src str,
    /// The directory of the two-string form `.file N "dir" "name"`; `None` otherwise.
    pub directory: Option<&'src str>,
    pub timestamp: Option<u64>,
    pub size: Option<u64>,
    pub line: u32,
}

/// A CUDA source position from a `.loc` directive.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SourceLoc {
    /// Index into [`Module::files`] by `.file` number (not a vector index).
    pub file: u32,
    pub line: u32,
    pub column: u32,
    /// For inlined code, the call site (`inlined_at FILE LINE COL`).
    pub inlined_at: Option<InlinedAt>,
}

/// The call site of inlined code, from `.loc … inlined_at FILE LINE COL`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct InlinedAt {
    pub file: u32,
    pub line: u32,
    pub column: u32,
}

/// Whether a function is a kernel.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum FunctionKind {
    /// `.entry`: a kernel.
    Entry,
    /// `.func`: a device function.
    Func,
}

/// Linkage directives in front of a function or variable.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Linkage {
    #[default]
    None,
    Visible,
    Extern,
    Weak,
    Common,
}

/// Performance-tuning directives of a function.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct PerfDirectives {
    /// `.maxntid X[, Y[, Z]]` (missing dimensions are 1).
    pub maxntid: Option<[u32; 3]>,
    /// `.reqntid X[, Y[, Z]]` (missing dimensions are 1).
    pub reqntid: Option<[u32; 3]>,
    pub minnctapersm: Option<u32>,
    pub maxnctapersm: Option<u32>,
    pub maxnreg: Option<u32>,
    pub reqnctapercluster: Option<[u32; 3]>,
    pub explicitcluster: bool,
    pub maxclusterrank: Option<u32>,
    pub noreturn: bool,
}

/// An `.entry` or `.func`.
#[derive(Debug, Clone, PartialEq)]
pub struct Function<'src> {
    pub kind: FunctionKind,
    pub linkage: Linkage,
    pub name: &'src str,
    /// Return parameters of a `.func` (`.func (.param .b32 r) f(...)`).
    pub returns: Vec<VarDecl<'src>>,
    pub params: Vec<VarDecl<'src>>,
    pub perf: PerfDirectives,
    /// `None` for a declaration (prototype) without a body.
    pub body: Option<Block<'src>>,
    /// Line of the `.entry`/`.func` keyword.
    pub line: u32,
}

/// A `{ … }` scope: a function body or a nested block.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Block<'src> {
    pub statements: Vec<Statement<'src>>,
    /// Line of the opening brace.
    pub line: u32,
}

/// One statement of a block.
#[derive(Debug, Clone, PartialEq)]
pub enum Statement<'src> {
    /// A variable or register declaration local to the scope (`.reg`, `.local`, `.shared`,
    /// `.param` inside a body for call arguments).
    Var(VarDecl<'src>),
    /// `NAME:`. Labels are scoped to their block; sibling blocks may reuse a name.
    Label {
        name: &'src str,
        line: u32,
    },
    Instruction(Instruction<'src>),
    /// A nested `{ … }` scope.
    Block(Block<'src>),
    /// `.pragma "…";` inside a body.
    Pragma {
        text: &'src str,
        line: u32,
    },
    /// `NAME: .branchtargets L1, L2, …;`: the jump table of `brx.idx` (labels in order).
    BranchTargets {
        name: &'src str,
        targets: Vec<&'src str>,
        line: u32,
    },
    /// `NAME: .calltargets F1, F2, …;`: the possible callees of an indirect `call`.
    CallTargets {
        name: &'src str,
        targets: Vec<&'src str>,
        line: u32,
    },
    /// `NAME: .callprototype …;` (indirect call signature), kept as raw text.
    CallPrototype {
        name: &'src str,
        text: &'src str,
        line: u32,
    },
}

/// A PTX state space.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StateSpace {
    Reg,
    Sreg,
    Const,
    Global,
    Local,
    Param,
    Shared,
    Tex,
}

/// A declaration: `[linkage] .space [.align N] [.vN] .type name[<N>][dims] [= init];`.
///
/// `.reg .b32 %r<10>, %x;` declares two things and parses into two `VarDecl`s.
#[derive(Debug, Clone, PartialEq)]
pub struct VarDecl<'src> {
    pub linkage: Linkage,
    pub space: StateSpace,
    /// `.shared::cta`/`.shared::cluster` and similar qualifier after `::`, if any.
    pub space_qualifier: Option<&'src str>,
    pub align: Option<u32>,
    /// `.v2`/`.v4`/`.v8` vector width, if any.
    pub vector: Option<u32>,
    /// The element type without the dot: `b8`, `u32`, `f32`, `pred`, `texref`, ….
    pub ty: &'src str,
    /// For `.param .u64 .ptr .global .align 16 p`: the pointee space and alignment.
    pub ptr: Option<PtrAttr>,
    pub name: &'src str,
    /// `%r<100>` declares `%r0` … `%r99`: `Some(100)`.
    pub range: Option<u32>,
    /// Array dimensions; `None` for an unsized `[]` (extern dynamic shared arrays).
    pub dims: Vec<Option<u64>>,
    pub init: Option<Initializer<'src>>,
    pub line: u32,
}

impl VarDecl<'_> {
    /// Size in bytes of one element (`b8` → 1, `v4.f32` → 16), if the type is sized.
    pub fn element_size(&self) -> Option<u64> {
        let scalar = scalar_type_size(self.ty)?;
        Some(scalar * u64::from(self.vector.unwrap_or(1)))
    }

    /// Total size in bytes, if every dimension is known.
    pub fn size_bytes(&self) -> Option<u64> {
        let mut size = self.element_size()?;
        for dim in &self.dims {
            size = size.checked_mul((*dim)?)?;
        }
        Some(size)
    }
}

/// Size in bytes of a scalar PTX type named without its dot (`u32` → 4, `pred` → 1).
pub fn scalar_type_size(ty: &str) -> Option<u64> {
    Some(match ty {
        "b8" | "u8" | "s8" | "pred" | "e4m3" | "e5m2" => 1,
        "b16" | "u16" | "s16" | "f16" | "bf16" => 2,
        "b32" | "u32" | "s32" | "f32" | "f16x2" | "bf16x2" | "tf32" => 4,
        "b64" | "u64" | "s64" | "f64" => 8,
        "b128" => 16,
        _ => return None,
    })
}

/// `.param .u64 .ptr .global .align 16 name`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtrAttr {
    pub space: Option<StateSpace>,
    pub align: Option<u32>,
}

/// An initializer after `=`.
#[derive(Debug, Clone, PartialEq)]
pub enum Initializer<'src> {
    /// `{a, b, …}` (nested for multi-dimensional arrays).
    List(Vec<Initializer<'src>>),
    Expr(Expr<'src>),
    /// `name = value` inside a list (`.samplerref` initializers such as
    /// `{ addr_mode_0 = clamp_to_edge, filter_mode = nearest }`).
    Field {
        name: &'src str,
        value: Box<Initializer<'src>>,
    },
}

/// A constant expression in an initializer or an address offset.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr<'src> {
    Int(i128),
    /// Raw bits of a `0f…` immediate or of a decimal float literal read as f32.
    F32(u32),
    /// Raw bits of a `0d…` immediate or of a decimal float literal read as f64.
    F64(u64),
    Symbol(&'src str),
    /// `generic(sym)` and similar wrappers: the operator name and its argument.
    Call(&'src str, Box<Expr<'src>>),
    Unary(UnaryOp, Box<Expr<'src>>),
    Binary(BinaryOp, Box<Expr<'src>>, Box<Expr<'src>>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnaryOp {
    Neg,
    Not,
    LogicalNot,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
    Shl,
    Shr,
    And,
    Or,
    Xor,
}

/// A guard `@%p` or `@!%p`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Guard<'src> {
    pub negated: bool,
    pub predicate: &'src str,
}

/// One instruction: `[@guard] opcode[.modifier]* operand, …;`.
#[derive(Debug, Clone, PartialEq)]
pub struct Instruction<'src> {
    pub guard: Option<Guard<'src>>,
    /// The opcode without modifiers: `ld`, `bar`, `cp`, `mbarrier`, ….
    pub opcode: &'src str,
    /// Everything after the first dot, e.g. `volatile.shared.v4.f32` for
    /// `ld.volatile.shared.v4.f32`; empty when there are no modifiers. Modifiers contain no
    /// whitespace; `::` stays inside a modifier (`shared::cluster`).
    pub modifiers: &'src str,
    pub operands: Vec<Operand<'src>>,
    pub line: u32,
    pub column: u32,
    /// The CUDA location of the most recent `.loc` before this instruction in its function.
    pub loc: Option<SourceLoc>,
}

impl<'src> Instruction<'src> {
    /// The modifiers in order, without dots.
    pub fn modifiers(&self) -> impl Iterator<Item = &'src str> + 'src {
        let mods = self.modifiers;
        mods.split('.').filter(|m| !m.is_empty())
    }

    /// Whether `modifier` (without its dot) is one of this instruction's modifiers.
    pub fn has_modifier(&self, modifier: &str) -> bool {
        self.modifiers().any(|m| m == modifier)
    }
}

/// An instruction operand.
#[derive(Debug, Clone, PartialEq)]
pub enum Operand<'src> {
    /// A register, special register or predicate, possibly with a component:
    /// `%r1`, `%tid.x`, `%ctaid.y`, `%laneid`, `%p3`, `%rd<>`-declared names, or a
    /// parameter/variable name used as a register-like operand is a [`Operand::Symbol`].
    Reg(&'src str),
    /// `!%p` as a source operand (setp's optional `c` operand and similar).
    NotReg(&'src str),
    /// `%p|%q`: setp's two destination predicates.
    PredPair(&'src str, &'src str),
    /// An integer immediate (decimal, hex `0x…`, octal `0…`, binary `0b…`, with optional
    /// `U` suffix and sign).
    Int(i128),
    /// `0f…` bits or a decimal float literal (stored as f32 bits).
    F32(u32),
    /// `0d…` bits.
    F64(u64),
    /// A label, variable, parameter or function name, possibly with a constant offset
    /// (`sym+8`).
    Symbol { name: &'src str, offset: i64 },
    /// `[base+offset]`, `[sym]`, `[sym+8]`, `[%rd1+-4]`, `[0x100]`.
    Address(Address<'src>),
    /// `{%r1, %r2, _}`: a vector of operands.
    Vector(Vec<Operand<'src>>),
    /// `[a, b, …]` with more than one element (texture/surface/tensor coordinates), or a
    /// bracketed operand that is not a plain address.
    Bracket(Vec<Operand<'src>>),
    /// `(a, b, …)`: call return and argument lists.
    Paren(Vec<Operand<'src>>),
    /// `_`: a sink.
    Sink,
}

/// The base of an address expression.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AddressBase<'src> {
    Reg(&'src str),
    Symbol(&'src str),
    /// An absolute address `[0x100]`.
    Absolute,
}

/// `[base + offset]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Address<'src> {
    pub base: AddressBase<'src>,
    pub offset: i64,
}
