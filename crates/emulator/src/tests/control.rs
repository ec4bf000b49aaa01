//! Indexed branches (`brx.idx`).

use super::{param_n, run, unverifiable_reason, views, write};
use crate::{Config, Region, Why, emulate};
use weft_program::CommandView;

const JUMP_TABLE: &str = r#"
    .reg .b32 %r<3>;
    .shared .align 4 .b8 s[16];
    T: .branchtargets A, B, C;
    mov.u32 %r1, %tid.x;
    rem.u32 %r2, %r1, 3;
    {
        brx.idx.uni %r2, T;
    }
A:
    st.shared.u32 [s], 1;
    bra E;
B:
    st.shared.u32 [s+4], 2;
    bra E;
C:
    st.shared.u32 [s+8], 3;
E:
    ret;
"#;

#[test]
fn brx_idx_with_known_index_branches_to_each_target() {
    let e = run(JUMP_TABLE, "", &Config::default());
    assert!(e.unverifiable.is_empty(), "{:?}", e.unverifiable);
    let base = e.shared[0].offset;
    for t in 0..6 {
        let k = (t % 3) as u32;
        assert_eq!(
            views(&e, t),
            vec![write(base + 4 * k, 4), CommandView::Exit],
            "thread {t}"
        );
    }
}

#[test]
fn brx_idx_with_unknown_index_is_unverifiable() {
    let body = ".reg .b32 %r1;\n ld.param.u32 %r1, [n];\n brx.idx %r1, T;\n T: .branchtargets A, B;\n A: bar.sync 0;\n B: ret;";
    let (why, reg, sources) = unverifiable_reason(body, ".param .u32 n", &Config::default());
    assert_eq!(why, Why::IndexedBranchUnknown { entries: 2 });
    assert_eq!(reg.as_deref(), Some("%r1"));
    assert_eq!(sources, param_n());
}

#[test]
fn brx_idx_out_of_range_is_unverifiable() {
    let body = ".reg .b32 %r1;\n mov.u32 %r1, 5;\n brx.idx %r1, T;\n T: .branchtargets A, B;\n A: ret;\n B: ret;";
    let (why, reg, _) = unverifiable_reason(body, "", &Config::default());
    assert_eq!(
        why,
        Why::IndexedBranchOutOfRange {
            index: 5,
            entries: 2
        }
    );
    assert_eq!(reg.as_deref(), Some("%r1"));
}

#[test]
fn brx_idx_targets_are_cfg_successors() {
    // The unknown branch decides whether the jump table runs; only its second target
    // synchronizes, so the region check must follow every table entry.
    let body = ".reg .b32 %r<3>;\n .reg .pred %p;\n ld.param.u32 %r1, [n];\n setp.eq.u32 %p, %r1, 0;\n mov.u32 %r2, 0;\n @%p bra L;\n brx.idx %r2, T;\n T: .branchtargets A, B;\n A: bra L;\n B: bar.sync 0;\n L: ret;";
    let (why, _, _) = unverifiable_reason(body, ".param .u32 n", &Config::default());
    assert!(
        matches!(why, Why::BranchDecidesSync(Region::Synchronizes(_))),
        "{why:?}"
    );
}

#[test]
fn brx_idx_undeclared_table_is_an_input_error() {
    let src = ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n.maxntid 32, 1, 1\n{\n.reg .b32 %r1;\nmov.u32 %r1, 0;\nbrx.idx %r1, T;\nret;\n}\n";
    let module = ptx_parser::parse(src).expect("test PTX parses");
    let e = emulate(&module, "k", &Config::default());
    let msg = e.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(msg.contains("not a `.branchtargets` table"), "{msg}");
}

/// The IR is validated once after lowering: an instruction with fewer operands than the
/// interpreter reads is an input error naming its PTX line, not a guess at run time.
#[test]
fn too_few_operands_is_an_input_error() {
    for (body, expected) in [
        (
            "add.u32 %r1, %r2;",
            "`add.u32` takes at least 3 operands, found 2",
        ),
        (
            "mad.lo.u32 %r1, %r2, %r1;",
            "`mad.lo.u32` takes at least 4 operands, found 3",
        ),
        (
            "selp.b32 %r1, %r2, %r1;",
            "`selp.b32` takes at least 4 operands, found 3",
        ),
    ] {
        let src = format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n.maxntid 32, 1, 1\n{{\n.reg .b32 %r<3>;\nmov.u32 %r2, 0;\n{body}\nret;\n}}\n"
        );
        let module = ptx_parser::parse(&src).expect("test PTX parses");
        let msg = emulate(&module, "k", &Config::default())
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(msg == format!("PTX line 9: {expected}"), "{body}: {msg}");
    }
}

/// A label defined twice in one scope is an input error (ptxas rejects it), not a guess at
/// which definition a branch means; the same label in sibling `{ }` blocks is two labels.
#[test]
fn duplicate_labels_are_an_input_error() {
    let kernel = |body: &str| {
        format!(
            ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k()\n.maxntid 32, 1, 1\n{{\n.reg .pred %p<2>;\n{body}\nret;\n}}\n"
        )
    };
    let twice = kernel("$L: bar.sync 0;\n$L: bar.sync 0;\n@%p1 bra $L;");
    let module = ptx_parser::parse(&twice).expect("parses");
    let err = crate::emulate(&module, "k", &Config::default()).expect_err("duplicate label");
    assert!(err.to_string().contains("duplicate label `$L`"), "{err}");

    let blocks = kernel("{ $L: bar.sync 0; }\n{ $L: bar.sync 0; }");
    let module = ptx_parser::parse(&blocks).expect("parses");
    assert!(crate::emulate(&module, "k", &Config::default()).is_ok());
}
