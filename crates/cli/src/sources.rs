//! Finding and caching the CUDA files that `.file` names.
//!
//! nvcc writes `.file` paths as it saw them: relative to the directory it ran in, or absolute
//! on the machine that compiled. weft looks for the file relative to the current directory,
//! then relative to the PTX file's directory, then by its basename next to the PTX. A file
//! that is not found is not an error: the report shows the PTX line instead.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock, Mutex};

use weft_program::{InstId, SourceTable};

use crate::report::{Location, PtxFile};

/// Where a `.file` path was found, and its text.
#[derive(Debug, Clone)]
pub struct Found {
    /// The path that was read.
    pub path: PathBuf,
    /// Its text.
    pub text: Arc<str>,
}

/// A process-wide cache of CUDA files, keyed by (PTX directory, `.file` path).
#[derive(Debug, Default)]
pub struct SourceCache {
    entries: Mutex<HashMap<(PathBuf, String), Option<Found>>>,
}

impl SourceCache {
    /// The CUDA file `cuda` named by a `.file` of the PTX file `ptx`, if it can be found.
    pub fn resolve(&self, ptx: &Path, cuda: &str) -> Option<Found> {
        let ptx_dir = ptx.parent().unwrap_or(Path::new("")).to_path_buf();
        let key = (ptx_dir.clone(), cuda.to_owned());
        if let Some(found) = self.entries.lock().ok().and_then(|e| e.get(&key).cloned()) {
            return found;
        }
        let found = candidates(&ptx_dir, cuda).into_iter().find_map(|path| {
            let text = read_source(&path)?;
            Some(Found {
                path,
                text: Arc::from(text),
            })
        });
        if let Ok(mut entries) = self.entries.lock() {
            entries.insert(key, found.clone());
        }
        found
    }
}

/// The largest CUDA source file weft reads to show source lines.
const MAX_SOURCE_BYTES: u64 = 16 << 20;

/// The text of `path` when it is a regular file of at most [`MAX_SOURCE_BYTES`] bytes: a
/// `.file` may name a device (`/dev/zero`), a FIFO or a huge file, none of which may hang
/// or exhaust the report. Invalid UTF-8 is replaced, not rejected.
fn read_source(path: &Path) -> Option<String> {
    use std::io::Read;
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_SOURCE_BYTES {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path)
        .ok()?
        .take(MAX_SOURCE_BYTES)
        .read_to_end(&mut bytes)
        .ok()?;
    Some(String::from_utf8_lossy(&bytes).into_owned())
}

fn candidates(ptx_dir: &Path, cuda: &str) -> Vec<PathBuf> {
    let cuda_path = Path::new(cuda);
    let mut out = vec![cuda_path.to_path_buf()];
    if cuda_path.is_relative() {
        out.push(ptx_dir.join(cuda_path));
    }
    if let Some(name) = cuda_path.file_name() {
        out.push(ptx_dir.join(name));
    }
    out
}

/// The byte range to underline for a 1-based `line` and `column` (0 = the whole line) of
/// `text`: from the column to the end of the token or statement, or the trimmed line.
///
/// The column counts characters, not bytes, so a line with non-ASCII text before the column
/// (or a source edited since it was compiled) never splits a character; a column past the
/// end of the line underlines the whole line.
pub fn span_of(text: &str, line: u32, column: u32) -> Option<std::ops::Range<usize>> {
    let start_of_line = line_start(text, line)?;
    let rest = &text[start_of_line..];
    let line_len = rest.find('\n').unwrap_or(rest.len());
    let line_text = rest[..line_len].trim_end_matches('\r');
    let trimmed_start = line_text.len() - line_text.trim_start().len();
    let line_end = start_of_line + line_text.trim_end().len();
    let whole_line = || {
        let start = start_of_line + trimmed_start;
        Some(start..line_end.max(start))
    };
    let column_byte = match (column as usize).checked_sub(1) {
        None => return whole_line(),
        Some(skip) => match line_text.char_indices().nth(skip) {
            Some((byte, _)) => byte,
            None => return whole_line(),
        },
    };
    let start = start_of_line + column_byte;
    let from = &text[start..line_end.max(start)];
    // PTX: underline the whole instruction up to its `;`. CUDA: the expression up to the next
    // `;` or the end of the line, which is what a `.loc` column points into.
    let len = from.find(';').map(|i| i + 1).unwrap_or(from.len());
    let end = start + from[..len].trim_end().len();
    // At least one character, even when the column points at the end of the code.
    let one_char = text[start..].chars().next().map_or(0, char::len_utf8);
    Some(start..end.max(start + one_char))
}

fn line_start(text: &str, line: u32) -> Option<usize> {
    if line == 0 {
        return None;
    }
    if line == 1 {
        return Some(0);
    }
    memchr_lines(text).nth(line as usize - 2).map(|i| i + 1)
}

/// The byte offsets of `text`'s newlines (a report's every label looks its line up from the
/// start: byte by byte, 700 races of one kernel spent 2 s here).
fn memchr_lines(text: &str) -> impl Iterator<Item = usize> + '_ {
    memchr::memchr_iter(b'\n', text.as_bytes())
}

/// CUDA files found so far, shared by every kernel of the run.
pub static SOURCES: LazyLock<SourceCache> = LazyLock::new(SourceCache::default);

/// The location of a static instruction, with the CUDA file's text when it can be found.
///
/// For inlined code the CUDA position shown is the outermost call site in the kernel's own
/// source (what the user wrote in the kernel); the inlined position is named in the label.
pub fn location(
    file: &PtxFile,
    sources: &SourceTable,
    inst: InstId,
    label: impl Into<String>,
) -> Location {
    let mut label = label.into();
    let Some(site) = sources.sites.get(inst.index()) else {
        return Location {
            cuda_file: None,
            cuda_text: None,
            cuda_line: 0,
            cuda_column: 0,
            ptx_file: file.path.display().to_string(),
            ptx_line: 0,
            ptx_column: 0,
            opcode: String::new(),
            label,
        };
    };
    let shown = site.inlined_at.or(site.cuda);
    let inlined_from = site
        .cuda
        .filter(|inner| site.inlined_at.is_some_and(|outer| outer != *inner));
    if let Some(inner) = inlined_from {
        let name = sources.file(inner).unwrap_or("?");
        let name = Path::new(name)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| name.to_owned());
        let inlined = format!("inlined from {name}:{}", inner.line);
        label = if label.is_empty() {
            inlined
        } else {
            format!("{label}, {inlined}")
        };
    }
    // Name the CUDA file where it was found (what a user can open), else as `.file` wrote it.
    let written = shown.and_then(|loc| sources.file(loc));
    let found = written.and_then(|name| SOURCES.resolve(&file.path, name));
    let cuda_file = match &found {
        Some(found) => Some(found.path.display().to_string()),
        None => written.map(str::to_owned),
    };
    let cuda_text = found.map(|found| found.text);
    Location {
        cuda_file,
        cuda_text,
        cuda_line: shown.map_or(0, |l| l.line),
        cuda_column: shown.map_or(0, |l| l.column),
        ptx_file: file.path.display().to_string(),
        ptx_line: site.ptx_line,
        ptx_column: site.ptx_column,
        opcode: site.opcode.to_string(),
        label,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans() {
        let text = "a\n\tbar.sync 1, 64;  // x\n  s[t] = v;\n";
        assert_eq!(&text[span_of(text, 2, 2).unwrap()], "bar.sync 1, 64;");
        assert_eq!(&text[span_of(text, 3, 0).unwrap()], "s[t] = v;");
        assert_eq!(&text[span_of(text, 3, 10).unwrap()], "v;");
        assert_eq!(&text[span_of(text, 1, 0).unwrap()], "a");
        assert!(span_of(text, 9, 0).is_none());
    }

    #[test]
    fn columns_count_characters() {
        // `é` is two bytes: column 5 is the `x`, a byte index of 5 would split it.
        let text = "// é\n  é x = y;\n";
        assert_eq!(&text[span_of(text, 2, 5).unwrap()], "x = y;");
        assert_eq!(&text[span_of(text, 2, 3).unwrap()], "é x = y;");
        // Past the end of the line (a source edited after compiling): the whole line.
        assert_eq!(&text[span_of(text, 2, 40).unwrap()], "é x = y;");
        // A column on a multi-byte character with nothing after it.
        let text = "ab é";
        assert_eq!(&text[span_of(text, 1, 4).unwrap()], "é");
    }

    #[test]
    fn only_regular_files_are_read() {
        assert!(read_source(Path::new("/dev/zero")).is_none());
        assert!(read_source(Path::new("/")).is_none());
        let dir = std::env::temp_dir().join(format!("weft-sources-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("k.cu");
        std::fs::write(&file, b"int x;\xff\n").unwrap();
        assert_eq!(read_source(&file).as_deref(), Some("int x;\u{fffd}\n"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
