//! Whole-file tests on the realistic fixtures under `tests/fixtures/`.

use ptx_parser::*;

const NVCC: &str = include_str!("fixtures/nvcc_reduce.ptx");
const TRITON: &str = include_str!("fixtures/triton_scopes.ptx");
const SM90: &str = include_str!("fixtures/sm90_tma.ptx");

/// All instructions of a block, depth first.
fn instructions<'a, 's>(b: &'a Block<'s>, out: &mut Vec<&'a Instruction<'s>>) {
    for s in &b.statements {
        match s {
            Statement::Instruction(i) => out.push(i),
            Statement::Block(inner) => instructions(inner, out),
            _ => {}
        }
    }
}

fn all_instructions<'a, 's>(f: &'a Function<'s>) -> Vec<&'a Instruction<'s>> {
    let mut out = Vec::new();
    if let Some(b) = &f.body {
        instructions(b, &mut out);
    }
    out
}

#[test]
fn nvcc_file_header_and_globals() {
    let m = parse(NVCC).unwrap();
    assert_eq!(m.version, Some((8, 4)));
    assert_eq!(m.target, vec!["sm_80", "debug"]);
    assert_eq!(m.address_size, Some(64));
    assert_eq!(m.files.len(), 2);
    assert_eq!(m.file_path(1), Some("user/reduce.cu"));
    assert_eq!(m.files[1].timestamp, Some(1_712_345_678));
    assert_eq!(m.files[1].size, Some(8642));
    assert_eq!(m.files[0].timestamp, None);
    let names: Vec<_> = m.globals.iter().map(|g| g.name).collect();
    assert_eq!(names, vec!["$str", "scale", "table", "coeffs", "tex_in"]);
    assert_eq!(m.globals[0].size_bytes(), Some(12));
    assert_eq!(m.globals[3].dims, vec![Some(2), Some(2)]);
    assert_eq!(m.globals[4].ty, "texref");
    let names: Vec<_> = m
        .functions
        .iter()
        .map(|f| (f.name, f.body.is_some()))
        .collect();
    assert_eq!(
        names,
        vec![
            ("vprintf", false),
            ("_Z6squaref", true),
            ("_Z6reducePKfPfi", true)
        ]
    );
    assert_eq!(m.functions[0].linkage, Linkage::Extern);
    assert_eq!(m.functions[0].returns.len(), 1);
    assert_eq!(m.functions[0].params.len(), 2);
    let k = m.entries().next().unwrap();
    assert_eq!(k.name, "_Z6reducePKfPfi");
    assert_eq!(k.perf.maxntid, Some([256, 1, 1]));
    assert_eq!(k.perf.minnctapersm, Some(2));
    assert_eq!(
        k.params[0].ptr,
        Some(PtrAttr {
            space: Some(StateSpace::Global),
            align: Some(4)
        })
    );
}

#[test]
fn nvcc_body() {
    let m = parse(NVCC).unwrap();
    let k = m.function("_Z6reducePKfPfi").unwrap();
    let ins = all_instructions(k);
    let bars: Vec<_> = ins.iter().filter(|i| i.opcode == "bar").collect();
    assert_eq!(bars.len(), 2);
    assert_eq!(bars[0].modifiers, "sync");
    assert_eq!(bars[0].operands, vec![Operand::Int(0)]);
    assert_eq!(
        bars[0].loc.map(|l| (l.file, l.line, l.column)),
        Some((1, 15, 3))
    );
    // The call sequence is a nested block with its own .param declarations.
    let body = k.body.as_ref().unwrap();
    let nested: Vec<_> = body
        .statements
        .iter()
        .filter_map(|s| match s {
            Statement::Block(b) => Some(b),
            _ => None,
        })
        .collect();
    assert_eq!(nested.len(), 1);
    let call = nested[0]
        .statements
        .iter()
        .find_map(|s| match s {
            Statement::Instruction(i) if i.opcode == "call" => Some(i),
            _ => None,
        })
        .unwrap();
    assert_eq!(
        call.operands,
        vec![
            Operand::Paren(vec![Operand::Symbol {
                name: "retval0",
                offset: 0
            }]),
            Operand::Symbol {
                name: "_Z6squaref",
                offset: 0
            },
            Operand::Paren(vec![Operand::Symbol {
                name: "param0",
                offset: 0
            }]),
        ]
    );
    let loc = call.loc.unwrap();
    assert_eq!((loc.file, loc.line, loc.column), (1, 13, 9));
    assert_eq!(
        loc.inlined_at,
        Some(InlinedAt {
            file: 1,
            line: 20,
            column: 5
        })
    );
    let tex = ins.iter().find(|i| i.opcode == "tex").unwrap();
    assert_eq!(
        tex.operands[1],
        Operand::Bracket(vec![
            Operand::Symbol {
                name: "tex_in",
                offset: 0
            },
            Operand::Vector(vec![Operand::Reg("%f4"), Operand::Reg("%f5")]),
        ])
    );
    let ret = ins.last().unwrap();
    assert_eq!(ret.opcode, "ret");
    assert_eq!(ret.loc.map(|l| l.line), Some(25));
}

#[test]
fn triton_nested_scopes_and_repeated_labels() {
    let m = parse(TRITON).unwrap();
    assert_eq!(m.globals[0].dims, vec![None]);
    assert_eq!(m.globals[0].linkage, Linkage::Extern);
    let k = m.entries().next().unwrap();
    assert_eq!(k.perf.reqntid, Some([128, 1, 1]));
    let body = k.body.as_ref().unwrap();
    let blocks: Vec<&Block> = body
        .statements
        .iter()
        .filter_map(|s| match s {
            Statement::Block(b) => Some(b),
            _ => None,
        })
        .collect();
    assert_eq!(blocks.len(), 3);
    for b in &blocks[..2] {
        assert!(matches!(
            b.statements[0],
            Statement::Var(VarDecl {
                space: StateSpace::Reg,
                ty: "pred",
                name: "P1",
                ..
            })
        ));
        assert!(matches!(
            b.statements[1],
            Statement::Label {
                name: "LAB_WAIT",
                ..
            }
        ));
    }
    // A scope inside a scope.
    assert!(matches!(blocks[2].statements[1], Statement::Block(_)));
    let Statement::Instruction(wait) = &blocks[1].statements[2] else {
        panic!("expected an instruction");
    };
    assert_eq!(wait.opcode, "mbarrier");
    assert_eq!(wait.modifiers, "try_wait.parity.shared::cta.b64");
    assert!(wait.has_modifier("shared::cta"));
    let Statement::Instruction(bra) = &blocks[1].statements[3] else {
        panic!("expected an instruction");
    };
    assert_eq!(
        bra.guard,
        Some(Guard {
            negated: true,
            predicate: "P1"
        })
    );
    // The pragma inside the body.
    assert!(body.statements.iter().any(|s| matches!(
        s,
        Statement::Pragma {
            text: "nounroll",
            ..
        }
    )));
    let ins = all_instructions(k);
    let max = ins.iter().find(|i| i.opcode == "max").unwrap();
    assert_eq!(
        max.loc,
        Some(SourceLoc {
            file: 1,
            line: 30,
            column: 5,
            inlined_at: Some(InlinedAt {
                file: 1,
                line: 22,
                column: 11
            })
        })
    );
    let cp = ins
        .iter()
        .find(|i| i.opcode == "cp" && i.modifiers == "async.cg.shared.global")
        .unwrap();
    assert_eq!(
        cp.operands[0],
        Operand::Address(Address {
            base: AddressBase::Reg("%r2"),
            offset: 0
        })
    );
    assert_eq!(cp.operands[2], Operand::Int(16));
    assert_eq!(m.file_path(1), Some("triton/matmul.py"));
}

#[test]
fn sm90_cluster_and_bulk_copies() {
    let m = parse(SM90).unwrap();
    let k = m.entries().next().unwrap();
    assert!(k.perf.explicitcluster);
    assert_eq!(k.perf.reqnctapercluster, Some([2, 1, 1]));
    assert_eq!(k.perf.maxclusterrank, Some(2));
    assert_eq!(k.perf.maxnreg, Some(168));
    assert_eq!(k.params[0].align, Some(64));
    assert_eq!(k.params[0].dims, vec![Some(128)]);
    let ins = all_instructions(k);
    let tma = ins
        .iter()
        .find(|i| i.modifiers.starts_with("async.bulk.tensor.3d"))
        .unwrap();
    assert_eq!(tma.opcode, "cp");
    assert_eq!(
        tma.modifiers,
        "async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster"
    );
    assert_eq!(
        tma.operands[1],
        Operand::Bracket(vec![
            Operand::Reg("%rd1"),
            Operand::Vector(vec![
                Operand::Reg("%r7"),
                Operand::Reg("%r8"),
                Operand::Reg("%r9")
            ]),
        ])
    );
    let elect = ins.iter().find(|i| i.opcode == "elect").unwrap();
    assert_eq!(
        elect.operands,
        vec![Operand::PredPair("%r4", "%p2"), Operand::Int(-1)]
    );
    let arrive = ins
        .iter()
        .find(|i| i.opcode == "mbarrier" && i.modifiers == "arrive.shared::cta.b64")
        .unwrap();
    assert_eq!(arrive.operands[0], Operand::Sink);
    let bar = ins
        .iter()
        .find(|i| i.opcode == "bar" && i.modifiers == "arrive")
        .unwrap();
    assert_eq!(bar.operands, vec![Operand::Int(1), Operand::Int(64)]);
    assert!(bar.loc.is_none());
    assert_eq!(ins.last().unwrap().opcode, "exit");
}
