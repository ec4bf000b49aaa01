//! Where each static instruction came from.

use crate::InstId;

/// A CUDA (or other high-level) source position from `.loc`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct CudaLoc {
    /// Index into [`SourceTable::files`].
    pub file: u32,
    /// 1-based line.
    pub line: u32,
    /// 1-based column (0 when `.loc` gave none).
    pub column: u32,
}

/// The location of one static instruction.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstSite {
    /// 1-based line in the PTX file.
    pub ptx_line: u32,
    /// 1-based column in the PTX file.
    pub ptx_column: u32,
    /// The CUDA location of the last `.loc` before the instruction, if any.
    pub cuda: Option<CudaLoc>,
    /// For inlined code: the outermost call site in the kernel's own source.
    pub inlined_at: Option<CudaLoc>,
    /// The instruction's opcode with modifiers, e.g. `bar.sync` or `st.shared.v4.f32`.
    pub opcode: Box<str>,
}

/// The static instructions of one kernel (including the device functions it calls), indexed
/// by [`InstId`], and the source files that `.loc` refers to.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SourceTable {
    /// The instructions, indexed by [`InstId`].
    pub sites: Vec<InstSite>,
    /// File paths as `.file` wrote them, indexed by [`CudaLoc::file`].
    pub files: Vec<String>,
}

impl SourceTable {
    /// The site of an instruction.
    ///
    /// # Panics
    /// If `inst` was not produced for this table.
    pub fn site(&self, inst: InstId) -> &InstSite {
        &self.sites[inst.index()]
    }

    /// The path of a CUDA file, if the table has it.
    pub fn file(&self, loc: CudaLoc) -> Option<&str> {
        self.files.get(loc.file as usize).map(String::as_str)
    }
}
