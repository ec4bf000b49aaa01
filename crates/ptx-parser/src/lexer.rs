//! A hand-written, memchr-driven PTX tokenizer.
//!
//! Tokens borrow from the source. Whitespace, `//` and `/* */` comments and `@@DWARF` lines
//! are trivia. Words cover identifiers, registers, directives and dotted opcodes (`::` stays
//! inside a word, a single `:` ends it).

use crate::ParseError;
use memchr::{memchr, memchr_iter, memmem};

/// The kind and text of a token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tok<'s> {
    /// Identifier, register, directive or dotted opcode.
    Word(&'s str),
    /// A numeric literal, raw.
    Num(&'s str),
    /// A string literal, without the quotes (escapes kept as written).
    Str(&'s str),
    /// Punctuation. `<<` is `b'L'` and `>>` is `b'R'`.
    Punct(u8),
    /// End of input.
    Eof,
    /// A lexical error; the parser holds the error itself.
    Error,
}

/// A token with its position.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Token<'s> {
    pub tok: Tok<'s>,
    pub line: u32,
    pub col: u32,
    /// Byte offset of the first byte (inputs are limited to `u32::MAX` bytes).
    pub start: u32,
    /// Byte offset one past the last byte.
    pub end: u32,
}

#[derive(Clone)]
pub(crate) struct Lexer<'s> {
    src: &'s str,
    pos: usize,
    line: u32,
    line_start: usize,
    /// The first lexical error; once set, every token is `Tok::Error`.
    error: Option<ParseError>,
}

/// Byte classes for the scanner.
const WORD_START: u8 = 1;
const WORD_CONT: u8 = 2;
const DIGIT: u8 = 4;
const SPACE: u8 = 8;
/// Whitespace, newline, or the first byte of a comment or `@@DWARF` line.
const TRIVIA: u8 = 16;

const CLASS: [u8; 256] = {
    let mut t = [0u8; 256];
    let mut i = 0;
    while i < 256 {
        let c = i as u8;
        let mut k = 0;
        if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            k |= WORD_START | WORD_CONT;
        }
        if c == b'%' || c == b'.' {
            k |= WORD_START;
        }
        if c == b'.' {
            k |= WORD_CONT;
        }
        if c.is_ascii_digit() {
            k |= WORD_CONT | DIGIT;
        }
        if c == b' ' || c == b'\t' || c == b'\r' || c == 0x0b || c == 0x0c {
            k |= SPACE | TRIVIA;
        }
        if c == b'\n' || c == b'/' || c == b'@' {
            k |= TRIVIA;
        }
        t[i] = k;
        i += 1;
    }
    t
};

#[inline]
fn class(c: u8) -> u8 {
    CLASS[usize::from(c)]
}

#[inline]
fn is_word_start(c: u8) -> bool {
    class(c) & WORD_START != 0
}

#[inline]
fn is_word_cont(c: u8) -> bool {
    class(c) & WORD_CONT != 0
}

impl<'s> Lexer<'s> {
    pub fn new(src: &'s str) -> Self {
        Lexer {
            src,
            pos: 0,
            line: 1,
            line_start: 0,
            error: None,
        }
    }

    pub fn source(&self) -> &'s str {
        self.src
    }

    /// The current position as (line, column), for errors raised outside a token.
    pub fn here(&self) -> (u32, u32) {
        (self.line, self.col_at(self.pos))
    }

    fn col_at(&self, pos: usize) -> u32 {
        // `line_start <= pos` and inputs are shorter than 4 GiB.
        (pos.wrapping_sub(self.line_start) as u32).wrapping_add(1)
    }

    fn err_at(&self, pos: usize, message: impl Into<String>) -> ParseError {
        ParseError {
            line: self.line,
            column: self.col_at(pos),
            message: message.into(),
        }
    }

    fn bytes_from(&self, pos: usize) -> &'s [u8] {
        self.src.as_bytes().get(pos..).unwrap_or(&[])
    }

    /// Advances over `[from, to)` counting newlines.
    fn advance_counting(&mut self, to: usize) {
        let from = self.pos;
        let chunk = self.src.as_bytes().get(from..to).unwrap_or(&[]);
        let mut last = None;
        for i in memchr_iter(b'\n', chunk) {
            self.line = self.line.saturating_add(1);
            last = Some(i);
        }
        if let Some(i) = last {
            self.line_start = from + i + 1;
        }
        self.pos = to;
    }

    fn skip_to_eol(&mut self) {
        match memchr(b'\n', self.bytes_from(self.pos)) {
            Some(i) => self.pos += i,
            None => self.pos = self.src.len(),
        }
    }

    /// Skips a comment or `@@DWARF` line at `self.pos` (which holds `/` or `@`). Returns
    /// whether anything was skipped.
    #[cold]
    fn skip_comment(&mut self) -> Result<bool, ParseError> {
        let b = self.src.as_bytes();
        match (b.get(self.pos), b.get(self.pos + 1)) {
            (Some(b'/'), Some(b'/')) | (Some(b'@'), Some(b'@')) => {
                self.skip_to_eol();
                Ok(true)
            }
            (Some(b'/'), Some(b'*')) => {
                let rest = self.bytes_from(self.pos + 2);
                match memmem::find(rest, b"*/") {
                    Some(i) => {
                        self.advance_counting(self.pos + 2 + i + 2);
                        Ok(true)
                    }
                    None => Err(self.err_at(self.pos, "unterminated block comment")),
                }
            }
            _ => Ok(false),
        }
    }

    /// Skips raw text up to and including the `}` that closes a `{` already consumed,
    /// honouring strings and comments. Used for `.section` bodies, which may hold anything.
    pub fn skip_balanced(&mut self, open_line: u32, open_col: u32) -> Result<(), ParseError> {
        let b = self.src.as_bytes();
        let mut depth: usize = 1;
        let mut i = self.pos;
        while let Some(&c) = b.get(i) {
            match c {
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        self.advance_counting(i + 1);
                        return Ok(());
                    }
                }
                b'"' => {
                    // Strings end at the closing quote or the end of the line.
                    let rest = b.get(i + 1..).unwrap_or(&[]);
                    let mut j = 0;
                    loop {
                        match rest.get(j) {
                            None | Some(b'\n') | Some(b'"') => break,
                            Some(b'\\') => j += 2,
                            Some(_) => j += 1,
                        }
                    }
                    i += 1 + j.min(rest.len());
                }
                b'/' => match b.get(i + 1) {
                    Some(b'/') => {
                        i += memchr(b'\n', b.get(i..).unwrap_or(&[])).unwrap_or(b.len() - i);
                        continue;
                    }
                    Some(b'*') => match memmem::find(b.get(i + 2..).unwrap_or(&[]), b"*/") {
                        Some(k) => i += 2 + k + 1,
                        None => {
                            self.advance_counting(i);
                            return Err(self.err_at(i, "unterminated block comment"));
                        }
                    },
                    _ => {}
                },
                _ => {}
            }
            i += 1;
        }
        self.advance_counting(b.len());
        Err(ParseError {
            line: open_line,
            column: open_col,
            message: "unterminated '{' (end of input inside a .section)".into(),
        })
    }

    /// The next token.
    ///
    /// A lexical error is returned as a `Tok::Error` token (at the error's position) and
    /// kept in [`Lexer::error`]; every later call returns the same error token.
    pub fn next_token(&mut self) -> Token<'s> {
        let mut t = Token {
            tok: Tok::Eof,
            line: 0,
            col: 0,
            start: 0,
            end: 0,
        };
        self.lex_into(&mut t);
        t
    }

    /// [`Lexer::next_token`], written into `out` field by field. (Building a `Token` value and
    /// copying it made the copy's 8-byte loads read the 4-byte field stores just made, a
    /// store-forwarding stall on every token.)
    #[inline(always)]
    pub fn lex_into(&mut self, out: &mut Token<'s>) {
        let b = self.src.as_bytes();
        // Trivia: spaces and newlines inline, comments out of line.
        let mut pos = self.pos;
        let c = loop {
            let Some(&c) = b.get(pos) else {
                self.pos = pos;
                *out = self.eof();
                return;
            };
            let k = class(c);
            if k & TRIVIA == 0 {
                break c;
            }
            if k & SPACE != 0 {
                pos += 1;
            } else if c == b'\n' {
                pos += 1;
                self.line = self.line.saturating_add(1);
                self.line_start = pos;
            } else {
                self.pos = pos;
                match self.skip_comment() {
                    Ok(true) => pos = self.pos,
                    Ok(false) => break c,
                    Err(e) => {
                        *out = self.fail(e);
                        return;
                    }
                }
            }
        };
        let start = pos;
        let line = self.line;
        let col = self.col_at(start);
        let mut end = start + 1;
        let tok = if is_word_start(c)
            && (c != b'%' || b.get(end).is_some_and(|&n| is_word_cont(n) && n != b'.'))
        {
            loop {
                let rest = b.get(end..).unwrap_or(&[]);
                end += rest
                    .iter()
                    .position(|&n| !is_word_cont(n))
                    .unwrap_or(rest.len());
                if b.get(end) == Some(&b':') && b.get(end + 1) == Some(&b':') {
                    end += 2;
                } else {
                    break;
                }
            }
            Tok::Word(self.slice(start, end))
        } else if class(c) & DIGIT != 0 {
            let radix_prefixed = c == b'0'
                && b.get(end).is_some_and(|n| {
                    matches!(n, b'x' | b'X' | b'f' | b'F' | b'd' | b'D' | b'b' | b'B')
                });
            loop {
                match b.get(end) {
                    Some(&n) if is_word_cont(n) && n != b'$' => end += 1,
                    Some(b'+' | b'-')
                        if !radix_prefixed
                            && matches!(b.get(end - 1), Some(b'e' | b'E'))
                            && b.get(end + 1).is_some_and(u8::is_ascii_digit) =>
                    {
                        end += 1
                    }
                    _ => break,
                }
            }
            Tok::Num(self.slice(start, end))
        } else if c == b'"' {
            let rest = self.bytes_from(start + 1);
            let mut j = 0;
            loop {
                match rest.get(j) {
                    Some(b'"') => break,
                    Some(b'\\') if rest.get(j + 1).is_some_and(|&n| n != b'\n') => j += 2,
                    None | Some(b'\n') | Some(b'\\') => {
                        self.pos = start;
                        let e = self.err_at(start, "unterminated string literal");
                        *out = self.fail(e);
                        return;
                    }
                    Some(_) => j += 1,
                }
            }
            end = start + 1 + j + 1;
            Tok::Str(self.slice(start + 1, start + 1 + j))
        } else {
            match c {
                b'<' if b.get(end) == Some(&b'<') => {
                    end += 1;
                    Tok::Punct(b'L')
                }
                b'>' if b.get(end) == Some(&b'>') => {
                    end += 1;
                    Tok::Punct(b'R')
                }
                b';' | b',' | b'{' | b'}' | b'[' | b']' | b'(' | b')' | b'<' | b'>' | b'='
                | b'+' | b'-' | b'*' | b'/' | b'!' | b'@' | b'|' | b':' | b'~' | b'&' | b'^'
                | b'%' => Tok::Punct(c),
                _ => {
                    let shown = self
                        .src
                        .get(start..)
                        .and_then(|s| s.chars().next())
                        .unwrap_or('?');
                    self.pos = start;
                    let e = self.err_at(start, format!("unexpected character {shown:?}"));
                    *out = self.fail(e);
                    return;
                }
            }
        };
        self.pos = end;
        out.tok = tok;
        out.line = line;
        out.col = col;
        out.start = start as u32;
        out.end = end as u32;
    }

    /// The end-of-input token, or the sticky error token after a lexical error.
    fn eof(&self) -> Token<'s> {
        if let Some(e) = &self.error {
            return Token {
                tok: Tok::Error,
                line: e.line,
                col: e.column,
                start: 0,
                end: 0,
            };
        }
        let pos = self.pos;
        Token {
            tok: Tok::Eof,
            line: self.line,
            col: self.col_at(pos),
            start: pos as u32,
            end: pos as u32,
        }
    }

    /// Records a lexical error and returns its token; the lexer then stays at the end.
    #[cold]
    fn fail(&mut self, e: ParseError) -> Token<'s> {
        self.error = Some(e);
        self.pos = self.src.len();
        self.eof()
    }

    /// The lexical error that a `Tok::Error` token stands for.
    pub fn error(&self) -> Option<&ParseError> {
        self.error.as_ref()
    }

    fn slice(&self, start: usize, end: usize) -> &'s str {
        // Token boundaries always fall on ASCII bytes, so this never fails; fall back to ""
        // rather than panic.
        self.src.get(start..end).unwrap_or("")
    }
}
