//! Recursive-descent parser over the token stream of [`crate::lexer`].

use crate::ast::*;
use crate::lexer::{Lexer, Tok, Token};
use crate::number::{Number, parse_number};
use crate::{MAX_DEPTH, ParseError};

/// Module-level directives that weft does not model and skips up to the next `;`.
const SKIPPED_MODULE_DIRECTIVES: &[&str] = &[".alias"];

pub(crate) struct Parser<'s> {
    lex: Lexer<'s>,
    /// The next unconsumed token (always lexed one ahead).
    cur: Token<'s>,
    /// End position (line, column) of the last consumed token.
    last_end: (u32, u32),
    /// The most recent `.loc` in the current function.
    loc: Option<SourceLoc>,
    /// Operand stack: operand lists are built here and moved out into exactly sized vectors
    /// (nested lists push above their parent's items and drain their own suffix).
    ops: Vec<Operand<'s>>,
    /// Statement stack, used the same way by nested blocks.
    stmts: Vec<Statement<'s>>,
}

fn describe(tok: Tok<'_>) -> String {
    match tok {
        Tok::Word(w) => format!("`{w}`"),
        Tok::Num(n) => format!("`{n}`"),
        Tok::Str(s) => format!("string \"{s}\""),
        Tok::Punct(b'L') => "`<<`".into(),
        Tok::Punct(b'R') => "`>>`".into(),
        Tok::Punct(c) => format!("`{}`", char::from(c)),
        Tok::Eof => "end of input".into(),
        Tok::Error => "an invalid token".into(),
    }
}

fn is_directive(tok: Tok<'_>) -> bool {
    matches!(tok, Tok::Word(w) if w.starts_with('.'))
}

fn state_space(name: &str) -> Option<StateSpace> {
    Some(match name {
        "reg" => StateSpace::Reg,
        "sreg" => StateSpace::Sreg,
        "const" => StateSpace::Const,
        "global" => StateSpace::Global,
        "local" => StateSpace::Local,
        "param" => StateSpace::Param,
        "shared" => StateSpace::Shared,
        "tex" => StateSpace::Tex,
        _ => return None,
    })
}

fn linkage(name: &str) -> Option<Linkage> {
    Some(match name {
        ".visible" => Linkage::Visible,
        ".extern" => Linkage::Extern,
        ".weak" => Linkage::Weak,
        ".common" => Linkage::Common,
        _ => return None,
    })
}

/// The attributes shared by all names of one declaration statement.
struct DeclAttrs<'s> {
    linkage: Linkage,
    space: Option<StateSpace>,
    qualifier: Option<&'s str>,
    align: Option<u32>,
    vector: Option<u32>,
    ty: Option<&'s str>,
    ptr: Option<PtrAttr>,
}

/// One element of a bracket `[ … ]`.
enum BracketElem<'s> {
    Addr(Address<'s>),
    Op(Operand<'s>),
}

impl<'s> BracketElem<'s> {
    fn into_operand(self) -> Operand<'s> {
        match self {
            BracketElem::Op(o) => o,
            BracketElem::Addr(Address {
                base: AddressBase::Reg(r),
                offset: 0,
            }) => Operand::Reg(r),
            BracketElem::Addr(Address {
                base: AddressBase::Symbol(name),
                offset,
            }) => Operand::Symbol { name, offset },
            BracketElem::Addr(Address {
                base: AddressBase::Absolute,
                offset,
            }) => Operand::Int(i128::from(offset)),
            BracketElem::Addr(a) => Operand::Address(a),
        }
    }
}

type PResult<T> = Result<T, ParseError>;

impl<'s> Parser<'s> {
    pub fn new(src: &'s str) -> Self {
        let mut p = Parser {
            lex: Lexer::new(src),
            cur: Token {
                tok: Tok::Eof,
                line: 1,
                col: 1,
                start: 0,
                end: 0,
            },
            last_end: (1, 1),
            loc: None,
            ops: Vec::with_capacity(64),
            stmts: Vec::new(),
        };
        p.cur = p.lex_one();
        p
    }

    // ---------------------------------------------------------------- token plumbing

    /// Lexes one token; a lexical error becomes a sticky `Tok::Error` token.
    #[inline]
    fn lex_one(&mut self) -> Token<'s> {
        self.lex.next_token()
    }

    /// Consumes `cur` (which must not be an error token).
    #[inline]
    fn bump(&mut self) -> Token<'s> {
        let t = self.cur;
        self.lex.lex_into(&mut self.cur);
        let width = t.end.saturating_sub(t.start);
        self.last_end = (t.line, t.col.saturating_add(width));
        t
    }

    #[inline]
    fn peek(&self) -> Token<'s> {
        self.cur
    }

    /// The token after `cur`, lexed on a copy of the lexer (rare: initializer fields).
    fn peek2(&mut self) -> Token<'s> {
        if self.cur.tok == Tok::Error {
            return self.cur;
        }
        self.lex.clone().next_token()
    }

    #[inline]
    fn next(&mut self) -> PResult<Token<'s>> {
        if self.cur.tok == Tok::Error {
            return Err(self.lex_error());
        }
        Ok(self.bump())
    }

    #[cold]
    #[inline(never)]
    fn lex_error(&self) -> ParseError {
        self.lex.error().cloned().unwrap_or_else(|| ParseError {
            line: self.cur.line,
            column: self.cur.col,
            message: "invalid token".into(),
        })
    }

    #[inline]
    fn peek_punct(&self, c: u8) -> bool {
        self.cur.tok == Tok::Punct(c)
    }

    #[inline]
    fn eat_punct(&mut self, c: u8) -> bool {
        if self.peek_punct(c) {
            self.bump();
            true
        } else {
            false
        }
    }

    fn err_at(&self, t: &Token<'_>, message: impl Into<String>) -> ParseError {
        if t.tok == Tok::Error {
            return self.lex_error();
        }
        ParseError {
            line: t.line,
            column: t.col,
            message: message.into(),
        }
    }

    /// "expected X, found Y" at token `t`.
    fn unexpected(&self, t: &Token<'_>, expected: &str) -> ParseError {
        self.err_at(t, format!("expected {expected}, found {}", describe(t.tok)))
    }

    /// Requires punctuation `c`; on failure reports right after the previous token (where
    /// the missing character belongs).
    #[inline]
    fn expect_punct(&mut self, c: u8, what: &str) -> PResult<()> {
        if self.cur.tok == Tok::Punct(c) {
            self.bump();
            Ok(())
        } else {
            Err(self.missing(&self.cur, what))
        }
    }

    /// "expected X, found Y" for a missing terminator: reported right after the previous
    /// token when `t` is on a later line (or the end of input), else at `t`.
    #[cold]
    fn missing(&self, t: &Token<'_>, what: &str) -> ParseError {
        if t.tok == Tok::Error {
            return self.lex_error();
        }
        let (line, column) = if t.line != self.last_end.0 || t.tok == Tok::Eof {
            self.last_end
        } else {
            (t.line, t.col)
        };
        ParseError {
            line,
            column,
            message: format!("expected {what}, found {}", describe(t.tok)),
        }
    }

    fn depth_check(&self, t: &Token<'_>, depth: usize) -> PResult<()> {
        if depth > MAX_DEPTH {
            Err(self.err_at(t, format!("nesting deeper than {MAX_DEPTH} levels")))
        } else {
            Ok(())
        }
    }

    fn number(&mut self, what: &str) -> PResult<(Number, Token<'s>)> {
        let t = self.next()?;
        match t.tok {
            Tok::Num(n) => match parse_number(n) {
                Ok(v) => Ok((v, t)),
                Err(m) => Err(self.err_at(&t, m)),
            },
            _ => Err(self.unexpected(&t, what)),
        }
    }

    fn int(&mut self, what: &str) -> PResult<(i128, Token<'s>)> {
        if let Tok::Num(n) = self.cur.tok
            && let Ok(Number::Int(v)) = parse_number(n)
        {
            return Ok((v, self.bump()));
        }
        match self.number(what)? {
            (Number::Int(v), t) => Ok((v, t)),
            (_, t) => Err(self.err_at(&t, format!("expected {what}, found a float literal"))),
        }
    }

    fn u32(&mut self, what: &str) -> PResult<u32> {
        // Fast path: a short plain decimal (no leading zero, so not octal; no suffix).
        if let Tok::Num(n) = self.cur.tok
            && let Some(v) = small_decimal(n)
        {
            self.bump();
            return Ok(v);
        }
        let (v, t) = self.int(what)?;
        u32::try_from(v).map_err(|_| self.err_at(&t, format!("{what} out of range")))
    }

    fn u64(&mut self, what: &str) -> PResult<u64> {
        let (v, t) = self.int(what)?;
        u64::try_from(v).map_err(|_| self.err_at(&t, format!("{what} out of range")))
    }

    fn name(&mut self, what: &str) -> PResult<(&'s str, Token<'s>)> {
        let t = self.next()?;
        match t.tok {
            Tok::Word(w) if !w.starts_with('.') => Ok((w, t)),
            _ => Err(self.unexpected(&t, what)),
        }
    }

    fn string(&mut self, what: &str) -> PResult<&'s str> {
        let t = self.next()?;
        match t.tok {
            Tok::Str(s) => Ok(s),
            _ => Err(self.unexpected(&t, what)),
        }
    }

    /// Skips tokens up to and including the next `;`.
    fn skip_statement(&mut self, start: &Token<'_>) -> PResult<Token<'s>> {
        loop {
            let t = self.next()?;
            match t.tok {
                Tok::Punct(b';') => return Ok(t),
                Tok::Eof => {
                    return Err(self.err_at(
                        start,
                        "unexpected end of input: statement has no terminating ';'",
                    ));
                }
                _ => {}
            }
        }
    }

    // ---------------------------------------------------------------- module level

    pub fn module(mut self) -> PResult<Module<'s>> {
        let mut m = Module {
            version: None,
            target: Vec::new(),
            address_size: None,
            files: Vec::new(),
            globals: Vec::new(),
            functions: Vec::new(),
        };
        loop {
            let t = self.next()?;
            let w = match t.tok {
                Tok::Eof => return Ok(m),
                Tok::Word(w) if w.starts_with('.') => w,
                _ => return Err(self.unexpected(&t, "a directive at module scope")),
            };
            match w {
                ".version" => {
                    let n = self.next()?;
                    let parsed = match n.tok {
                        Tok::Num(n) => n.split_once('.').and_then(|(a, b)| {
                            Some((a.parse::<u32>().ok()?, b.parse::<u32>().ok()?))
                        }),
                        _ => None,
                    };
                    match parsed {
                        Some(v) => m.version = Some(v),
                        None => return Err(self.unexpected(&n, "MAJOR.MINOR after .version")),
                    }
                }
                ".target" => loop {
                    let (name, _) = self.name("a target name after .target")?;
                    m.target.push(name);
                    if !self.eat_punct(b',') {
                        break;
                    }
                },
                ".address_size" => {
                    m.address_size = Some(self.u32("an address size")?);
                }
                ".file" => {
                    let f = self.file_entry(&t)?;
                    m.files.push(f);
                }
                ".loc" => {
                    self.loc_directive()?;
                }
                ".pragma" => {
                    self.string("a string after .pragma")?;
                    self.expect_punct(b';', "';' after .pragma")?;
                }
                ".section" => {
                    self.section()?;
                }
                ".entry" | ".func" => {
                    let f = self.function(&t, Linkage::None)?;
                    m.functions.push(f);
                }
                _ if SKIPPED_MODULE_DIRECTIVES.contains(&w) => {
                    self.skip_statement(&t)?;
                }
                _ => {
                    if let Some(l) = linkage(w) {
                        let n = self.peek();
                        if let Tok::Word(".entry" | ".func") = n.tok {
                            let n = self.next()?;
                            let f = self.function(&n, l)?;
                            m.functions.push(f);
                            continue;
                        }
                    }
                    self.check_declaration_start(&t, w)?;
                    self.declaration(t, true, &mut |d| m.globals.push(d))?;
                }
            }
        }
    }

    /// `.file N "path" ["file"] [, timestamp, size]` (after `.file`).
    fn file_entry(&mut self, t: &Token<'s>) -> PResult<FileEntry<'s>> {
        let index = self.u32("a file number after .file")?;
        let first = self.string("a path string in .file")?;
        let (directory, path) = if let Tok::Str(s) = self.peek().tok {
            self.next()?;
            (Some(first), s)
        } else {
            (None, first)
        };
        let mut timestamp = None;
        let mut size = None;
        if self.eat_punct(b',') {
            timestamp = Some(self.u64("a timestamp in .file")?);
            if self.eat_punct(b',') {
                size = Some(self.u64("a file size in .file")?);
            }
        }
        Ok(FileEntry {
            index,
            path,
            directory,
            timestamp,
            size,
            line: t.line,
        })
    }

    /// `.loc F L [C] [, function_name SYM[+N]] [, inlined_at F L C]` (after `.loc`).
    fn loc_directive(&mut self) -> PResult<SourceLoc> {
        let file = self.u32("a file number after .loc")?;
        let line = self.u32("a line number in .loc")?;
        let column = if let Tok::Num(_) = self.peek().tok {
            self.u32("a column number in .loc")?
        } else {
            0
        };
        let mut loc = SourceLoc {
            file,
            line,
            column,
            inlined_at: None,
        };
        // Generic DWARF `.loc` flags (not emitted by NVPTX back ends, accepted and ignored).
        while let Tok::Word(flag) = self.peek().tok {
            match flag {
                "prologue_end" | "epilogue_begin" | "basic_block" => {
                    self.bump();
                }
                "is_stmt" | "isa" | "discriminator" => {
                    self.bump();
                    self.u32("a number after the .loc flag")?;
                }
                _ => break,
            }
        }
        while self.peek_punct(b',') {
            self.next()?;
            let (attr, at) = self.name("a .loc attribute")?;
            match attr {
                "function_name" => {
                    self.name("a symbol after function_name")?;
                    self.offset()?;
                }
                "inlined_at" => {
                    let file = self.u32("a file number after inlined_at")?;
                    let line = self.u32("a line number after inlined_at")?;
                    let column = if let Tok::Num(_) = self.peek().tok {
                        self.u32("a column number after inlined_at")?
                    } else {
                        0
                    };
                    loc.inlined_at = Some(InlinedAt { file, line, column });
                }
                _ => {
                    return Err(self.err_at(&at, format!("unknown .loc attribute `{attr}`")));
                }
            }
        }
        self.loc = Some(loc);
        Ok(loc)
    }

    /// `.section NAME { … }`: skipped raw.
    fn section(&mut self) -> PResult<()> {
        let name = self.next()?;
        if !matches!(name.tok, Tok::Word(_)) {
            return Err(self.unexpected(&name, "a section name after .section"));
        }
        // `{` is the current token, so the lexer stands right after it: skip raw from there.
        let open = self.peek();
        if open.tok != Tok::Punct(b'{') {
            return Err(self.unexpected(&open, "'{' after the section name"));
        }
        self.lex.skip_balanced(open.line, open.col)?;
        let (line, col) = self.lex.here();
        self.last_end = (line, col);
        self.cur = self.lex_one();
        Ok(())
    }

    // ---------------------------------------------------------------- functions

    fn function(&mut self, kw: &Token<'s>, linkage: Linkage) -> PResult<Function<'s>> {
        let kind = if kw.tok == Tok::Word(".entry") {
            FunctionKind::Entry
        } else {
            FunctionKind::Func
        };
        self.loc = None;
        let mut returns = Vec::new();
        if kind == FunctionKind::Func && self.peek_punct(b'(') {
            returns = self.param_list()?;
        }
        let (name, _) = self.name("a function name")?;
        let mut params = Vec::new();
        if self.peek_punct(b'(') {
            params = self.param_list()?;
        }
        let mut perf = PerfDirectives::default();
        loop {
            let t = self.peek();
            let Tok::Word(d) = t.tok else { break };
            if !d.starts_with('.') {
                break;
            }
            self.next()?;
            match d {
                ".maxntid" => perf.maxntid = Some(self.dims3()?),
                ".reqntid" => perf.reqntid = Some(self.dims3()?),
                ".reqnctapercluster" => perf.reqnctapercluster = Some(self.dims3()?),
                ".minnctapersm" => perf.minnctapersm = Some(self.u32("a number")?),
                ".maxnctapersm" => perf.maxnctapersm = Some(self.u32("a number")?),
                ".maxnreg" => perf.maxnreg = Some(self.u32("a number")?),
                ".maxclusterrank" => perf.maxclusterrank = Some(self.u32("a number")?),
                ".explicitcluster" => perf.explicitcluster = true,
                ".noreturn" => perf.noreturn = true,
                ".abi_preserve" | ".abi_preserve_control" => {
                    self.u32("a number")?;
                }
                ".pragma" => {
                    self.string("a string after .pragma")?;
                    self.expect_punct(b';', "';' after .pragma")?;
                }
                _ => {
                    return Err(self.err_at(&t, format!("unknown function directive `{d}`")));
                }
            }
        }
        let t = self.next()?;
        let body = match t.tok {
            Tok::Punct(b';') => None,
            Tok::Punct(b'{') => {
                let mut scratch = std::mem::take(&mut self.stmts);
                let body = self.block(&t, 1, &mut scratch);
                scratch.clear();
                self.stmts = scratch;
                Some(body?)
            }
            _ => return Err(self.unexpected(&t, "'{' or ';' after the function header")),
        };
        Ok(Function {
            kind,
            linkage,
            name,
            returns,
            params,
            perf,
            body,
            line: kw.line,
        })
    }

    /// `X[, Y[, Z]]`, missing dimensions are 1.
    fn dims3(&mut self) -> PResult<[u32; 3]> {
        let mut d = [1u32; 3];
        for (i, slot) in d.iter_mut().enumerate() {
            if i > 0 && !self.eat_punct(b',') {
                break;
            }
            *slot = self.u32("a dimension")?;
        }
        Ok(d)
    }

    /// `( decl, decl, … )`.
    fn param_list(&mut self) -> PResult<Vec<VarDecl<'s>>> {
        self.expect_punct(b'(', "'('")?;
        let mut out = Vec::new();
        if self.eat_punct(b')') {
            return Ok(out);
        }
        loop {
            let t = self.next()?;
            if !is_directive(t.tok) {
                return Err(self.unexpected(&t, "a parameter declaration"));
            }
            self.declaration(t, false, &mut |d| out.push(d))?;
            let t = self.next()?;
            match t.tok {
                Tok::Punct(b',') => {}
                Tok::Punct(b')') => return Ok(out),
                _ => return Err(self.unexpected(&t, "',' or ')' in the parameter list")),
            }
        }
    }

    // ---------------------------------------------------------------- declarations

    /// A declaration starting with the already consumed directive `first`. With `multi`,
    /// several comma-separated names and a final `;` (statement form); without, exactly one
    /// name and no `;` (parameter form).
    fn declaration(
        &mut self,
        first: Token<'s>,
        multi: bool,
        out: &mut impl FnMut(VarDecl<'s>),
    ) -> PResult<()> {
        let mut a = DeclAttrs {
            linkage: Linkage::None,
            space: None,
            qualifier: None,
            align: None,
            vector: None,
            ty: None,
            ptr: None,
        };
        let mut tok = first;
        while let Tok::Word(w) = tok.tok {
            let rest = w.get(1..).unwrap_or("");
            if rest.bytes().any(|c| c == b'.') {
                for part in rest.split('.') {
                    self.decl_part(&mut a, part, &tok)?;
                }
            } else {
                // The common single-part directive (`.reg`, `.b32`, `.align`).
                self.decl_part(&mut a, rest, &tok)?;
            }
            if is_directive(self.peek().tok) {
                tok = self.next()?;
            } else {
                break;
            }
        }
        let Some(ty) = a.ty else {
            let t = self.peek();
            return Err(self.unexpected(&t, "a type in the declaration"));
        };
        let Some(space) = a.space else {
            return Err(self.err_at(&first, "declaration without a state space"));
        };
        loop {
            let (name, _) = self.name("a name in the declaration")?;
            let mut d = VarDecl {
                linkage: a.linkage,
                space,
                space_qualifier: a.qualifier,
                align: a.align,
                vector: a.vector,
                ty,
                ptr: a.ptr,
                name,
                range: None,
                dims: Vec::new(),
                init: None,
                line: first.line,
            };
            if self.eat_punct(b'<') {
                d.range = Some(self.u32("a register count")?);
                self.expect_punct(b'>', "'>' after the register count")?;
            }
            while self.peek_punct(b'[') {
                let open = self.next()?;
                if d.dims.len() >= MAX_DEPTH {
                    return Err(self.err_at(&open, "too many array dimensions"));
                }
                if self.eat_punct(b']') {
                    d.dims.push(None);
                } else {
                    d.dims.push(Some(self.u64("an array dimension")?));
                    self.expect_punct(b']', "']' after the array dimension")?;
                }
            }
            if self.peek_punct(b'=') {
                let eq = self.next()?;
                d.init = Some(self.initializer(&eq, 1)?);
            }
            out(d);
            if !multi {
                return Ok(());
            }
            let t = self.next()?;
            match t.tok {
                Tok::Punct(b',') => {}
                Tok::Punct(b';') => return Ok(()),
                _ => return Err(self.missing(&t, "';' after declaration")),
            }
        }
    }

    fn decl_part(&mut self, a: &mut DeclAttrs<'s>, part: &'s str, tok: &Token<'s>) -> PResult<()> {
        let (base, qual) = if part.as_bytes().contains(&b':') {
            match part.split_once("::") {
                Some((b, q)) => (b, Some(q)),
                None => (part, None),
            }
        } else {
            (part, None)
        };
        if a.space.is_none()
            && let Some(l) = linkage(tok_dot(part))
        {
            a.linkage = l;
            return Ok(());
        }
        if let Some(s) = state_space(base) {
            if let Some(p) = a.ptr.as_mut() {
                if p.space.is_none() {
                    p.space = Some(s);
                    return Ok(());
                }
            } else if a.space.is_none() {
                a.space = Some(s);
                a.qualifier = qual;
                return Ok(());
            }
            return Err(self.err_at(tok, format!("duplicate state space `.{part}`")));
        }
        match base {
            "align" => {
                let n = self.u32("an alignment after .align")?;
                if let Some(p) = a.ptr.as_mut() {
                    p.align = Some(n);
                } else {
                    a.align = Some(n);
                }
            }
            "v2" | "v4" | "v8" | "v16" => {
                a.vector = base.get(1..).and_then(|n| n.parse().ok());
            }
            "ptr" => {
                a.ptr = Some(PtrAttr {
                    space: None,
                    align: None,
                });
            }
            "attribute" => {
                self.expect_punct(b'(', "'(' after .attribute")?;
                loop {
                    let t = self.next()?;
                    match t.tok {
                        Tok::Punct(b')') => break,
                        Tok::Eof => return Err(self.unexpected(&t, "')'")),
                        _ => {}
                    }
                }
            }
            "" => return Err(self.err_at(tok, "empty directive name")),
            _ => {
                if a.space.is_none() {
                    return Err(self.err_at(tok, format!("unknown state space `.{part}`")));
                }
                if a.ty.is_some() {
                    return Err(
                        self.err_at(tok, format!("unexpected `.{part}` in the declaration"))
                    );
                }
                a.ty = Some(part);
            }
        }
        Ok(())
    }

    fn initializer(&mut self, at: &Token<'s>, depth: usize) -> PResult<Initializer<'s>> {
        self.depth_check(at, depth)?;
        let t = self.peek();
        if t.tok == Tok::Punct(b'{') {
            self.next()?;
            let mut items = Vec::new();
            if self.eat_punct(b'}') {
                return Ok(Initializer::List(items));
            }
            loop {
                items.push(self.initializer(&t, depth + 1)?);
                let s = self.next()?;
                match s.tok {
                    Tok::Punct(b',') => {}
                    Tok::Punct(b'}') => return Ok(Initializer::List(items)),
                    _ => return Err(self.unexpected(&s, "',' or '}' in the initializer")),
                }
            }
        }
        if let Tok::Word(w) = t.tok
            && !w.starts_with('.')
            && !w.starts_with('%')
            && self.peek2().tok == Tok::Punct(b'=')
        {
            self.next()?;
            self.next()?;
            let value = self.initializer(&t, depth + 1)?;
            return Ok(Initializer::Field {
                name: w,
                value: Box::new(value),
            });
        }
        Ok(Initializer::Expr(self.expr(depth)?))
    }

    // ---------------------------------------------------------------- constant expressions

    fn expr(&mut self, depth: usize) -> PResult<Expr<'s>> {
        self.binary(0, depth)
    }

    fn binary_op(tok: Tok<'_>) -> Option<(BinaryOp, u8)> {
        Some(match tok {
            Tok::Punct(b'|') => (BinaryOp::Or, 1),
            Tok::Punct(b'^') => (BinaryOp::Xor, 2),
            Tok::Punct(b'&') => (BinaryOp::And, 3),
            Tok::Punct(b'L') => (BinaryOp::Shl, 4),
            Tok::Punct(b'R') => (BinaryOp::Shr, 4),
            Tok::Punct(b'+') => (BinaryOp::Add, 5),
            Tok::Punct(b'-') => (BinaryOp::Sub, 5),
            Tok::Punct(b'*') => (BinaryOp::Mul, 6),
            Tok::Punct(b'/') => (BinaryOp::Div, 6),
            Tok::Punct(b'%') => (BinaryOp::Rem, 6),
            _ => return None,
        })
    }

    fn binary(&mut self, min_prec: u8, depth: usize) -> PResult<Expr<'s>> {
        let t = self.peek();
        self.depth_check(&t, depth)?;
        let mut lhs = self.unary(depth + 1)?;
        // Every operator deepens the (left-leaning) tree: count it against the cap so that
        // `1+1+…+1` cannot build a tree too deep to drop.
        let mut tree_depth = depth;
        while let Some((op, prec)) = Self::binary_op(self.peek().tok) {
            if prec < min_prec {
                break;
            }
            let op_tok = self.next()?;
            tree_depth += 1;
            self.depth_check(&op_tok, tree_depth)?;
            let rhs = self.binary(prec + 1, depth + 1)?;
            lhs = Expr::Binary(op, Box::new(lhs), Box::new(rhs));
        }
        Ok(lhs)
    }

    fn unary(&mut self, depth: usize) -> PResult<Expr<'s>> {
        let t = self.next()?;
        self.depth_check(&t, depth)?;
        Ok(match t.tok {
            Tok::Num(n) => match parse_number(n) {
                Ok(Number::Int(v)) => Expr::Int(v),
                Ok(Number::F32(v)) => Expr::F32(v),
                Ok(Number::F64(v)) => Expr::F64(v),
                Err(m) => return Err(self.err_at(&t, m)),
            },
            Tok::Word(w) if !w.starts_with('.') => {
                if self.peek_punct(b'(') {
                    self.next()?;
                    let inner = self.expr(depth + 1)?;
                    self.expect_punct(b')', "')'")?;
                    Expr::Call(w, Box::new(inner))
                } else {
                    Expr::Symbol(w)
                }
            }
            Tok::Punct(b'(') => {
                let inner = self.expr(depth + 1)?;
                self.expect_punct(b')', "')'")?;
                inner
            }
            Tok::Punct(b'-') => Expr::Unary(UnaryOp::Neg, Box::new(self.unary(depth + 1)?)),
            Tok::Punct(b'~') => Expr::Unary(UnaryOp::Not, Box::new(self.unary(depth + 1)?)),
            Tok::Punct(b'!') => Expr::Unary(UnaryOp::LogicalNot, Box::new(self.unary(depth + 1)?)),
            Tok::Punct(b'+') => self.unary(depth + 1)?,
            _ => return Err(self.unexpected(&t, "a constant expression")),
        })
    }

    // ---------------------------------------------------------------- bodies

    /// The statements of a block whose `{` (token `open`) was consumed, up to its `}`.
    ///
    /// Statements are pushed onto `statements` above whatever the enclosing blocks hold, and
    /// this block's suffix is moved out into an exactly sized vector at the end.
    fn block(
        &mut self,
        open: &Token<'s>,
        depth: usize,
        statements: &mut Vec<Statement<'s>>,
    ) -> PResult<Block<'s>> {
        self.depth_check(open, depth)?;
        let base = statements.len();
        loop {
            let t = self.next()?;
            match t.tok {
                Tok::Punct(b'}') => break,
                Tok::Punct(b'{') => {
                    let inner = self.block(&t, depth + 1, statements)?;
                    statements.push(Statement::Block(inner));
                }
                Tok::Punct(b'@') => {
                    let neg = self.eat_punct(b'!');
                    let (predicate, _) = self.name("a predicate after '@'")?;
                    let guard = Guard {
                        negated: neg,
                        predicate,
                    };
                    let op = self.next()?;
                    self.instruction(&t, op, Some(guard), statements)?;
                }
                Tok::Word(w) if w.starts_with('.') => self.body_directive(t, w, statements)?,
                Tok::Word(w) => {
                    if self.peek_punct(b':') {
                        self.next()?;
                        if self.peek().tok == Tok::Word(".callprototype") {
                            let kw = self.next()?;
                            let end = self.skip_statement(&kw)?;
                            let text = self
                                .lex
                                .source()
                                .get(kw.start as usize..end.start as usize)
                                .unwrap_or("")
                                .trim_end();
                            statements.push(Statement::CallPrototype {
                                name: w,
                                text,
                                line: t.line,
                            });
                        } else if let Tok::Word(kind @ (".branchtargets" | ".calltargets")) =
                            self.peek().tok
                        {
                            self.next()?;
                            let targets = self.target_list(kind)?;
                            statements.push(if kind == ".branchtargets" {
                                Statement::BranchTargets {
                                    name: w,
                                    targets,
                                    line: t.line,
                                }
                            } else {
                                Statement::CallTargets {
                                    name: w,
                                    targets,
                                    line: t.line,
                                }
                            });
                        } else {
                            statements.push(Statement::Label {
                                name: w,
                                line: t.line,
                            });
                        }
                    } else {
                        self.instruction(&t, t, None, statements)?;
                    }
                }
                Tok::Eof => {
                    return Err(ParseError {
                        line: t.line,
                        column: t.col,
                        message: format!(
                            "unexpected end of input: missing '}}' for the block opened at {}:{}",
                            open.line, open.col
                        ),
                    });
                }
                _ => return Err(self.unexpected(&t, "a statement")),
            }
        }
        Ok(Block {
            statements: take_tail(statements, base),
            line: open.line,
        })
    }

    /// `NAME, NAME, …;` after `.branchtargets` / `.calltargets` (at least one name).
    fn target_list(&mut self, kind: &str) -> PResult<Vec<&'s str>> {
        let mut targets = Vec::new();
        loop {
            let (name, _) = self.name(&format!("a label in the {kind} list"))?;
            targets.push(name);
            if !self.eat_punct(b',') {
                break;
            }
        }
        self.expect_punct(b';', &format!("',' or ';' in the {kind} list"))?;
        Ok(targets)
    }

    fn body_directive(
        &mut self,
        t: Token<'s>,
        w: &'s str,
        out: &mut Vec<Statement<'s>>,
    ) -> PResult<()> {
        match w {
            ".loc" => {
                self.loc_directive()?;
            }
            ".pragma" => {
                let text = self.string("a string after .pragma")?;
                self.expect_punct(b';', "';' after .pragma")?;
                out.push(Statement::Pragma { text, line: t.line });
            }
            _ => {
                self.check_declaration_start(&t, w)?;
                self.declaration(t, true, &mut |d| out.push(Statement::Var(d)))?;
            }
        }
        Ok(())
    }

    /// A directive that starts a statement must be a state space or linkage, or be followed
    /// by more directives (then it is reported as an unknown state space).
    fn check_declaration_start(&mut self, t: &Token<'s>, w: &str) -> PResult<()> {
        let rest = w.get(1..).unwrap_or("");
        // The first part, up to a `.` or `:` (ASCII, so a char boundary).
        let first = match rest.bytes().position(|c| c == b'.' || c == b':') {
            Some(i) => rest.get(..i).unwrap_or(rest),
            None => rest,
        };
        let known =
            w.len() > 1 && (state_space(first).is_some() || linkage(tok_dot(first)).is_some());
        if !known && !is_directive(self.peek().tok) {
            return Err(self.err_at(t, format!("unknown directive `{w}`")));
        }
        Ok(())
    }

    // ---------------------------------------------------------------- instructions

    /// One instruction, pushed onto `out`.
    fn instruction(
        &mut self,
        start: &Token<'s>,
        op: Token<'s>,
        guard: Option<Guard<'s>>,
        out: &mut Vec<Statement<'s>>,
    ) -> PResult<()> {
        let word = match op.tok {
            Tok::Word(w) if w.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') => w,
            _ => return Err(self.unexpected(&op, "an instruction opcode")),
        };
        let (opcode, modifiers) = match word.bytes().position(|c| c == b'.') {
            // `.` is ASCII, so both sides are char boundaries.
            Some(i) => (
                word.get(..i).unwrap_or(word),
                word.get(i + 1..).unwrap_or(""),
            ),
            None => (word, ""),
        };
        let t = self.peek();
        if matches!(t.tok, Tok::Punct(b'}') | Tok::Eof) {
            return Err(self.missing(&t, "';' after instruction"));
        }
        let operands = if t.tok == Tok::Punct(b';') {
            Vec::new()
        } else {
            let base = self.ops.len();
            loop {
                self.operand(1)?;
                if !self.eat_punct(b',') {
                    break;
                }
            }
            take_tail(&mut self.ops, base)
        };
        self.expect_punct(b';', "';' after instruction")?;
        // Built in place in the statement stack (no intermediate copies of the 176-byte
        // statement).
        out.push(Statement::Instruction(Instruction {
            guard,
            opcode,
            modifiers,
            operands,
            line: start.line,
            column: start.col,
            loc: self.loc,
        }));
        Ok(())
    }

    /// `+N`, `-N`, `+-N` … after a base; 0 when absent.
    fn offset(&mut self) -> PResult<i64> {
        let mut total: i64 = 0;
        loop {
            let t = self.peek();
            let mut negative = match t.tok {
                Tok::Punct(b'+') => false,
                Tok::Punct(b'-') => true,
                _ => return Ok(total),
            };
            self.bump();
            while let Tok::Punct(c @ (b'+' | b'-')) = self.peek().tok {
                self.bump();
                negative ^= c == b'-';
            }
            let (v, nt) = self.int("an integer offset")?;
            let v = if negative { -v } else { v };
            total = i64::try_from(v)
                .ok()
                .and_then(|v| total.checked_add(v))
                .ok_or_else(|| self.err_at(&nt, "offset out of range"))?;
        }
    }

    fn operand_list(&mut self, close: u8, depth: usize) -> PResult<Vec<Operand<'s>>> {
        if self.eat_punct(close) {
            return Ok(Vec::new());
        }
        let base = self.ops.len();
        loop {
            self.operand(depth + 1)?;
            let t = self.next()?;
            match t.tok {
                Tok::Punct(b',') => {}
                Tok::Punct(c) if c == close => return Ok(take_tail(&mut self.ops, base)),
                _ => {
                    return Err(self.unexpected(
                        &t,
                        &format!("',' or '{}' in the operand list", char::from(close)),
                    ));
                }
            }
        }
    }

    /// One operand, pushed onto the operand stack `self.ops` (written in place: returning a
    /// 48-byte `Operand` through a `Result` and copying it cost a store-forwarding stall).
    fn operand(&mut self, depth: usize) -> PResult<()> {
        let t = self.next()?;
        self.depth_check(&t, depth)?;
        let o = match t.tok {
            // `a|b` (setp, shfl, elect destinations), also with `_` or non-`%` names from
            // inline asm (`_|%p1`, `P1|P2`).
            Tok::Word(w) if !w.starts_with('.') && self.peek_punct(b'|') => {
                self.bump();
                let (q, _) = self.name("a predicate after '|'")?;
                Operand::PredPair(w, q)
            }
            Tok::Word("_") => Operand::Sink,
            Tok::Word(w) if w.starts_with('%') => Operand::Reg(w),
            Tok::Word(w) if !w.starts_with('.') => Operand::Symbol {
                name: w,
                offset: self.offset()?,
            },
            Tok::Punct(b'!') => {
                let (r, _) = self.name("a predicate after '!'")?;
                Operand::NotReg(r)
            }
            Tok::Num(_) | Tok::Punct(b'-' | b'+') => {
                let mut negative = false;
                let mut nt = t;
                while let Tok::Punct(c @ (b'+' | b'-')) = nt.tok {
                    negative ^= c == b'-';
                    nt = self.next()?;
                }
                let Tok::Num(n) = nt.tok else {
                    return Err(self.unexpected(&nt, "a number after the sign"));
                };
                match parse_number(n) {
                    Ok(Number::Int(v)) => Operand::Int(if negative { -v } else { v }),
                    Ok(Number::F32(v)) => Operand::F32(if negative { v ^ 0x8000_0000 } else { v }),
                    Ok(Number::F64(v)) => Operand::F64(if negative {
                        v ^ 0x8000_0000_0000_0000
                    } else {
                        v
                    }),
                    Err(m) => return Err(self.err_at(&nt, m)),
                }
            }
            Tok::Punct(b'{') => Operand::Vector(self.operand_list(b'}', depth)?),
            Tok::Punct(b'(') => Operand::Paren(self.operand_list(b')', depth)?),
            Tok::Punct(b'[') => self.bracket(&t, depth)?,
            _ => return Err(self.unexpected(&t, "an operand")),
        };
        self.ops.push(o);
        Ok(())
    }

    fn bracket(&mut self, open: &Token<'s>, depth: usize) -> PResult<Operand<'s>> {
        if self.peek_punct(b']') {
            return Err(self.err_at(open, "empty brackets"));
        }
        let first = self.bracket_elem(depth + 1)?;
        // The common case `[base+offset]` needs no vector.
        if self.eat_punct(b']') {
            return Ok(match first {
                BracketElem::Addr(a) => Operand::Address(a),
                BracketElem::Op(o) => Operand::Bracket(vec![o]),
            });
        }
        let mut elems = vec![first];
        loop {
            let t = self.next()?;
            match t.tok {
                Tok::Punct(b',') => elems.push(self.bracket_elem(depth + 1)?),
                Tok::Punct(b']') => break,
                _ => return Err(self.unexpected(&t, "',' or ']' in the brackets")),
            }
        }
        Ok(Operand::Bracket(
            elems.into_iter().map(BracketElem::into_operand).collect(),
        ))
    }

    fn bracket_elem(&mut self, depth: usize) -> PResult<BracketElem<'s>> {
        let t = self.peek();
        match t.tok {
            Tok::Word(w) if w != "_" && !w.starts_with('.') => {
                self.next()?;
                let base = if w.starts_with('%') {
                    AddressBase::Reg(w)
                } else {
                    AddressBase::Symbol(w)
                };
                let offset = self.offset()?;
                Ok(BracketElem::Addr(Address { base, offset }))
            }
            Tok::Num(_) => {
                let (v, nt) = self.int("an address")?;
                let base =
                    i64::try_from(v).map_err(|_| self.err_at(&nt, "address out of range"))?;
                let off = self.offset()?;
                let offset = base
                    .checked_add(off)
                    .ok_or_else(|| self.err_at(&nt, "address out of range"))?;
                Ok(BracketElem::Addr(Address {
                    base: AddressBase::Absolute,
                    offset,
                }))
            }
            _ => {
                self.operand(depth)?;
                match self.ops.pop() {
                    Some(o) => Ok(BracketElem::Op(o)),
                    None => Err(self.err_at(&t, "internal error: operand stack underflow")),
                }
            }
        }
    }
}

/// The value of a decimal literal of at most 9 digits without a leading zero (`0` itself
/// included), else `None`.
#[inline]
fn small_decimal(text: &str) -> Option<u32> {
    let b = text.as_bytes();
    if b.is_empty() || b.len() > 9 || (b[0] == b'0' && b.len() > 1) {
        return None;
    }
    let mut v: u32 = 0;
    for &c in b {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u32::from(c - b'0');
    }
    Some(v)
}

/// Moves `v[base..]` out into an exactly sized vector with a single copy, leaving `v[..base]`
/// (and `v`'s capacity) in place.
fn take_tail<T>(v: &mut Vec<T>, base: usize) -> Vec<T> {
    if base == 0 {
        let mut out = Vec::with_capacity(v.len());
        out.append(v);
        out
    } else {
        v.split_off(base)
    }
}

/// `visible` → `.visible` for the linkage table (which is keyed with dots).
fn tok_dot(part: &str) -> &'static str {
    match part {
        "visible" => ".visible",
        "extern" => ".extern",
        "weak" => ".weak",
        "common" => ".common",
        _ => "",
    }
}
