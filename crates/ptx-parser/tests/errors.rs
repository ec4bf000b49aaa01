//! Malformed input: precise positions and useful messages.

use ptx_parser::*;

fn err(src: &str) -> ParseError {
    parse(src).expect_err("expected a parse error")
}

fn at(src: &str) -> (u32, u32, String) {
    let e = err(src);
    (e.line, e.column, e.message)
}

#[test]
fn missing_semicolon_after_instruction() {
    // Reported right after the last token of the instruction.
    let (l, c, m) = at(".entry k() {\n  mov.u32 %r1, %r2\n  ret;\n}");
    assert_eq!((l, c), (2, 19));
    assert_eq!(m, "expected ';' after instruction, found `ret`");
    // Same line: at the offending token.
    let (l, c, m) = at(".entry k() {\n  mov.u32 %r1, %r2 %r3;\n}");
    assert_eq!((l, c), (2, 20));
    assert!(m.starts_with("expected ';' after instruction"), "{m}");
}

#[test]
fn display_format() {
    let e = err(".entry k() {\n  ret\n}");
    assert_eq!(
        e.to_string(),
        "2:6: expected ';' after instruction, found `}`"
    );
}

#[test]
fn unterminated_block_comment() {
    let (l, c, m) = at(".version 8.0\n  /* never\n closed");
    assert_eq!((l, c, m.as_str()), (2, 3, "unterminated block comment"));
}

#[test]
fn unterminated_string() {
    let (l, c, m) = at(".file 1 \"abc\n");
    assert_eq!((l, c, m.as_str()), (1, 9, "unterminated string literal"));
}

#[test]
fn unknown_state_space() {
    let (l, c, m) = at(".version 8.0\n.sharde .align 4 .b8 x[4];");
    assert_eq!((l, c, m.as_str()), (2, 1, "unknown state space `.sharde`"));
    let (l, c, m) = at(".entry k() {\n\t.sharde .b8 x[4];\n}");
    assert_eq!((l, c, m.as_str()), (2, 2, "unknown state space `.sharde`"));
}

#[test]
fn unknown_directive_in_body() {
    let (l, c, m) = at(".entry k() {\n  .frob;\n}");
    assert_eq!((l, c, m.as_str()), (2, 3, "unknown directive `.frob`"));
}

#[test]
fn truncated_body() {
    let (l, c, m) = at(".entry k() {\n  ret;\n");
    assert_eq!((l, c), (3, 1));
    assert_eq!(
        m,
        "unexpected end of input: missing '}' for the block opened at 1:12"
    );
}

#[test]
fn truncated_in_operand() {
    let (l, _, m) = at(".entry k() {\n  ld.global.u32 %r1, [%rd1");
    assert_eq!(l, 2);
    assert!(m.contains("end of input"), "{m}");
}

#[test]
fn bad_numbers() {
    let (l, c, m) = at(".entry k() {\n mov.f32 %f1, 0f3F80;\n}");
    assert_eq!((l, c), (2, 15));
    assert_eq!(m, "0f float literal needs exactly 8 hex digits");
    let (_, _, m) = at(".entry k() {\n mov.u32 %r1, 09;\n}");
    assert_eq!(m, "invalid digit in integer literal");
    let (_, _, m) = at(".entry k() {\n mov.u64 %r1, 0x1FFFFFFFFFFFFFFFFF;\n}");
    assert_eq!(m, "integer literal out of range");
}

#[test]
fn unexpected_character() {
    let (l, c, m) = at(".entry k() {\n mov.u32 %r1, #3;\n}");
    assert_eq!((l, c, m.as_str()), (2, 15, "unexpected character '#'"));
}

#[test]
fn bad_header() {
    let (l, c, m) = at(".version eight\n");
    assert_eq!((l, c), (1, 10));
    assert!(m.starts_with("expected MAJOR.MINOR"), "{m}");
    let (l, c, m) = at("mov.u32 %r1, 1;");
    assert_eq!((l, c), (1, 1));
    assert!(m.starts_with("expected a directive at module scope"), "{m}");
}

#[test]
fn bad_function_header() {
    let (_, _, m) = at(".entry k(.param .u32 a .param .u32 b) {}");
    assert!(
        m.starts_with("expected ',' or ')' in the parameter list"),
        "{m}"
    );
    let (_, _, m) = at(".entry k() .maxthreads 3 {}");
    assert_eq!(m, "unknown function directive `.maxthreads`");
    let (_, _, m) = at(".entry k() ret;");
    assert!(
        m.starts_with("expected '{' or ';' after the function header"),
        "{m}"
    );
}

#[test]
fn bad_declarations() {
    let (l, c, m) = at(".entry k() {\n .reg .b32 %r<10;\n}");
    assert_eq!((l, c), (2, 17));
    assert!(
        m.starts_with("expected '>' after the register count"),
        "{m}"
    );
    let (_, _, m) = at(".global .b32 x\n.global .b32 y;");
    assert!(m.starts_with("expected ';' after declaration"), "{m}");
    let (_, _, m) = at(".global x;");
    assert!(m.starts_with("expected a type"), "{m}");
    let (_, _, m) = at(".global .shared .b32 x;");
    assert_eq!(m, "duplicate state space `.shared`");
}

#[test]
fn unterminated_section() {
    let (l, c, m) = at(".section .debug_info {\n .b8 1\n");
    assert_eq!((l, c), (1, 22));
    assert!(m.contains("unterminated"), "{m}");
}

#[test]
fn nesting_cap() {
    let src = format!(".entry k() {}", "{".repeat(MAX_DEPTH + 10));
    let e = err(&src);
    assert_eq!(e.line, 1);
    assert_eq!(e.message, format!("nesting deeper than {MAX_DEPTH} levels"));
    // Exactly at the cap is fine.
    let ok = format!(
        ".entry k() {{{}{}",
        "{".repeat(MAX_DEPTH - 1),
        "}".repeat(MAX_DEPTH)
    );
    assert!(parse(&ok).is_ok());
}

#[test]
fn bad_operands() {
    let (_, _, m) = at(".entry k() { x [], 1; }");
    assert_eq!(m, "empty brackets");
    let (_, _, m) = at(".entry k() { x [%r1+%r2]; }");
    assert!(m.starts_with("expected an integer offset"), "{m}");
    let (_, _, m) = at(".entry k() { x .b32; }");
    assert!(m.starts_with("expected an operand"), "{m}");
    let (_, _, m) = at(".entry k() { @ ret; }");
    assert!(m.starts_with("expected an instruction opcode"), "{m}");
    let (_, _, m) = at(".entry k() { x {%r1 %r2}; }");
    assert!(
        m.starts_with("expected ',' or '}' in the operand list"),
        "{m}"
    );
}
