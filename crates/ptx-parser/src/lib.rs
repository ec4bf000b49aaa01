//! PTX front end: a memchr-driven lexer and a hand-written recursive-descent parser that
//! turns PTX text into the zero-copy syntax tree of [`ast`].
//!
//! What weft promises (verdicts, the PTX ISA facts it relies on with their sections, the rules
//! for exited threads, mbarrier parity and same-instruction writes, every approximation) is
//! written down in the repository's `docs/semantics.md`.
//!
//! ```
//! let m = ptx_parser::parse(".version 8.0\n.target sm_90\n.address_size 64\n\
//!     .visible .entry k() { bar.sync 0; ret; }").unwrap();
//! assert_eq!(m.entries().count(), 1);
//! ```
//!
//! Errors carry the 1-based line and byte column of the offending token; the parser never
//! panics, and nesting of `{}` scopes, initializer lists and expressions is capped at
//! [`MAX_DEPTH`].
//!
//! Rules for what is not modelled:
//! - `.section NAME { … }` bodies are skipped raw (balanced braces, strings and comments
//!   honoured); `@@DWARF …` lines are skipped like comments.
//! - Module-level `.alias …;` is skipped up to its `;`. Module-level `.pragma "…";` and
//!   `.loc` are parsed and dropped. Any other unknown directive is an error (`unknown
//!   directive .X`, or `unknown state space .X` when more directives follow it), never a
//!   silent misparse.
//! - In a body, `L: .branchtargets A, B;` / `L: .calltargets f, g;` become
//!   [`Statement::BranchTargets`] / [`Statement::CallTargets`] (no [`Statement::Label`]);
//!   `L: .callprototype …;` becomes [`Statement::CallPrototype`].
//! - Function headers accept and ignore `.abi_preserve N`, `.abi_preserve_control N` and
//!   `.pragma "…";`; other unknown header directives are errors.

pub mod ast;
mod lexer;
mod number;
mod parser;

pub use ast::*;

/// Maximum nesting depth of `{ }` scopes, initializer lists, operand lists and constant
/// expressions. Deeper input is rejected with a [`ParseError`].
pub const MAX_DEPTH: usize = 256;

/// A syntax error with its 1-based line and byte column.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{line}:{column}: {message}")]
pub struct ParseError {
    /// 1-based line.
    pub line: u32,
    /// 1-based column, in bytes.
    pub column: u32,
    /// What went wrong.
    pub message: String,
}

/// Parses a whole PTX module.
pub fn parse(source: &str) -> Result<Module<'_>, ParseError> {
    if u32::try_from(source.len()).is_err() {
        return Err(ParseError {
            line: 1,
            column: 1,
            message: "input larger than 4 GiB".into(),
        });
    }
    parser::Parser::new(source).module()
}
