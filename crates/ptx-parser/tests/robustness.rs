//! Mutation robustness: thousands of corrupted variants of real PTX must each parse to `Ok`
//! or `Err` without panicking or hanging. Deterministic (seeded), so failures reproduce.

use ptx_parser::parse;

const FIXTURES: &[&str] = &[
    include_str!("fixtures/nvcc_reduce.ptx"),
    include_str!("fixtures/triton_scopes.ptx"),
    include_str!("fixtures/sm90_tma.ptx"),
];

/// xorshift64*: small, deterministic, good enough for fuzzing.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: usize) -> usize {
        if n == 0 {
            0
        } else {
            (self.next() % n as u64) as usize
        }
    }
}

/// Parses `bytes` (made valid UTF-8 lossily) and checks basic sanity of an error.
fn check(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    if let Err(e) = parse(&text) {
        assert!(e.line >= 1 && e.column >= 1, "bad position in {e}");
        assert!(!e.message.is_empty());
        let lines = text.split('\n').count() as u32;
        assert!(
            e.line <= lines.max(1),
            "error line {} past end ({lines})",
            e.line
        );
    }
}

#[test]
fn fixtures_parse() {
    for f in FIXTURES {
        parse(f).unwrap();
    }
}

#[test]
fn truncation_at_every_position() {
    for f in FIXTURES {
        let b = f.as_bytes();
        for end in 0..=b.len() {
            check(&b[..end]);
        }
        // And every suffix start, at a stride.
        for start in (0..b.len()).step_by(7) {
            check(&b[start..]);
        }
    }
}

#[test]
fn random_mutations() {
    const ALPHABET: &[u8] =
        b" \n\t;,{}[]()<>=+-*/!@|:~&^%._$\"0123456789abcdefxXfFdDuU.reg.shared{{}}//\x2a";
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    for round in 0..6000 {
        let f = FIXTURES[round % FIXTURES.len()].as_bytes();
        let mut b = f.to_vec();
        let edits = 1 + rng.below(4);
        for _ in 0..edits {
            match rng.below(6) {
                0 => {
                    // Byte flip.
                    let i = rng.below(b.len());
                    if let Some(x) = b.get_mut(i) {
                        *x ^= 1 << rng.below(8);
                    }
                }
                1 => {
                    // Delete a line.
                    let lines: Vec<_> = b.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
                    let k = rng.below(lines.len());
                    b = lines
                        .iter()
                        .enumerate()
                        .filter(|(i, _)| *i != k)
                        .map(|(_, l)| l.clone())
                        .collect::<Vec<_>>()
                        .join(&b'\n');
                }
                2 => {
                    // Duplicate a line.
                    let mut lines: Vec<_> = b.split(|&c| c == b'\n').map(<[u8]>::to_vec).collect();
                    let k = rng.below(lines.len());
                    if let Some(l) = lines.get(k).cloned() {
                        lines.insert(k, l);
                    }
                    b = lines.join(&b'\n');
                }
                3 => {
                    // Random ASCII insertion.
                    let i = rng.below(b.len() + 1);
                    let n = 1 + rng.below(8);
                    for j in 0..n {
                        let c = ALPHABET[rng.below(ALPHABET.len())];
                        b.insert((i + j).min(b.len()), c);
                    }
                }
                4 => {
                    // Delete a range.
                    let i = rng.below(b.len());
                    let n = rng.below(40).min(b.len() - i);
                    b.drain(i..i + n);
                }
                _ => {
                    // Truncate.
                    let i = rng.below(b.len() + 1);
                    b.truncate(i);
                }
            }
        }
        check(&b);
    }
}

#[test]
fn deep_nesting_is_an_error_not_a_crash() {
    let n = 100_000;
    let cases = [
        format!(".entry k() {}", "{".repeat(n)),
        format!(".entry k() {{ mov.u32 %r1, {}; }}", "{".repeat(n)),
        format!(".entry k() {{ mov.u32 %r1, {}; }}", "[".repeat(n)),
        format!(".entry k() {{ call f, {}; }}", "(".repeat(n)),
        format!(".global .u32 x = {};", "{".repeat(n)),
        format!(".global .u32 x = {}1;", "(".repeat(n)),
        format!(".global .u32 x = {}1;", "-".repeat(n)),
        format!(".global .u32 x = 1{};", "+1".repeat(n)),
        format!(".global .u32 x[1]{};", "[1]".repeat(n)),
    ];
    for c in &cases {
        let e = parse(c).unwrap_err();
        assert_eq!(e.line, 1, "{e}");
    }
    // Long but flat input is fine.
    let flat = format!(".global .u32 x[{n}] = {{{}0}};", "0, ".repeat(n - 1));
    let m = parse(&flat).unwrap();
    assert_eq!(m.globals.len(), 1);
    let mut body = String::from(".entry k() {\n");
    for i in 0..n {
        body.push_str(&format!("L{i}: add.s32 %r1, %r1, {i};\n"));
    }
    body.push('}');
    assert!(parse(&body).is_ok());
}

mod prop {
    use proptest::prelude::*;

    /// Token-ish fragments, so random sequences reach deep into the grammar.
    const PIECES: &[&str] = &[
        ".entry k()",
        ".func",
        "(",
        ")",
        "{",
        "}",
        "[",
        "]",
        ",",
        ";",
        ":",
        "@",
        "!",
        "|",
        "=",
        "+",
        "-",
        "<",
        ">",
        ".reg",
        ".b32",
        ".pred",
        "%r<4>",
        "%r1",
        "%p1",
        "_",
        "L1",
        "$L__BB0_1",
        "bar.sync",
        "ld.shared.v4.f32",
        "0f3F800000",
        "0x10",
        "1.5",
        "42",
        ".loc 1 2 3",
        ", inlined_at 1 2 3",
        ".shared",
        ".align 8",
        ".param",
        ".u64",
        ".ptr",
        ".global",
        "\"s\"",
        "/*",
        "*/",
        "//",
        "\n",
        " ",
        ".section .debug_info",
        ".pragma",
        ".file 1 \"a\"",
        ".maxntid 1, 2",
        "generic(",
        "@@DWARF",
        ".version 8.0",
        "0d3FF0",
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 3000, .. ProptestConfig::default() })]

        #[test]
        fn random_token_soup_never_panics(idx in proptest::collection::vec(0..PIECES.len(), 0..60)) {
            let text: String = idx.iter().map(|&i| PIECES[i]).collect::<Vec<_>>().join(" ");
            let _ = ptx_parser::parse(&text);
        }

        #[test]
        fn random_bytes_never_panic(s in "\\PC{0,200}") {
            let _ = ptx_parser::parse(&s);
        }
    }
}
