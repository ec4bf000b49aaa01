//! One test per grammar form, asserting the parsed tree.

use ptx_parser::*;

/// Parses `body` as the body of a kernel and returns its statements.
fn body(src: &str) -> Vec<Statement<'_>> {
    let text: &'static str = Box::leak(format!(".entry k()\n{{\n{src}\n}}\n").into_boxed_str());
    let m = parse(text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    let f = m.functions.into_iter().next().unwrap();
    f.body.unwrap().statements
}

/// The single instruction of `src`.
fn ins(src: &str) -> Instruction<'_> {
    let mut s = body(src);
    assert_eq!(s.len(), 1, "{s:?}");
    match s.pop() {
        Some(Statement::Instruction(i)) => i,
        other => panic!("not an instruction: {other:?}"),
    }
}

fn ops(src: &str) -> Vec<Operand<'_>> {
    ins(src).operands
}

fn sym(name: &str, offset: i64) -> Operand<'_> {
    Operand::Symbol { name, offset }
}

fn addr(base: AddressBase<'_>, offset: i64) -> Operand<'_> {
    Operand::Address(Address { base, offset })
}

fn err(src: &str) -> ParseError {
    parse(src).expect_err("expected a parse error")
}

// ---------------------------------------------------------------- module level

#[test]
fn comments_are_skipped() {
    let m =
        parse("// line\n/* block\n { ; */ .version 7.0 // trailing\n.target sm_70 /**/\n").unwrap();
    assert_eq!(m.version, Some((7, 0)));
    assert_eq!(m.target, vec!["sm_70"]);
}

#[test]
fn header_directives() {
    let m = parse(".version 8.5\n.target sm_90a, texmode_independent\n.address_size 32\n").unwrap();
    assert_eq!(m.version, Some((8, 5)));
    assert_eq!(m.target, vec!["sm_90a", "texmode_independent"]);
    assert_eq!(m.address_size, Some(32));
    assert!(m.functions.is_empty());
}

#[test]
fn entry_and_func_linkage() {
    let m = parse(
        ".visible .entry a() {}\n.weak .func b() {}\n.extern .func c();\n.entry d {}\n.func e;",
    )
    .unwrap();
    let got: Vec<_> = m
        .functions
        .iter()
        .map(|f| (f.name, f.kind, f.linkage, f.body.is_some()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("a", FunctionKind::Entry, Linkage::Visible, true),
            ("b", FunctionKind::Func, Linkage::Weak, true),
            ("c", FunctionKind::Func, Linkage::Extern, false),
            ("d", FunctionKind::Entry, Linkage::None, true),
            ("e", FunctionKind::Func, Linkage::None, false),
        ]
    );
    assert_eq!(m.functions[2].line, 3);
}

#[test]
fn params_with_align_arrays_and_ptr() {
    let m = parse(
        ".entry k(.param .align 8 .b8 s[16], .param .u64 .ptr .global .align 16 p, \
         .param .u64 .ptr .shared q, .param .u32 n) {}",
    )
    .unwrap();
    let p = &m.functions[0].params;
    assert_eq!(p.len(), 4);
    assert_eq!(
        (
            p[0].space,
            p[0].align,
            p[0].ty,
            p[0].name,
            p[0].dims.clone()
        ),
        (StateSpace::Param, Some(8), "b8", "s", vec![Some(16)])
    );
    assert_eq!(p[0].size_bytes(), Some(16));
    assert_eq!(
        p[1].ptr,
        Some(PtrAttr {
            space: Some(StateSpace::Global),
            align: Some(16)
        })
    );
    assert_eq!(p[1].align, None);
    assert_eq!(
        p[2].ptr,
        Some(PtrAttr {
            space: Some(StateSpace::Shared),
            align: None
        })
    );
    assert_eq!(p[3].ptr, None);
}

#[test]
fn func_return_params_and_noreturn() {
    let m = parse(
        ".func (.param .b32 r, .param .align 4 .b8 r2[8]) f(.param .b32 a) .noreturn { ret; }",
    )
    .unwrap();
    let f = &m.functions[0];
    assert_eq!(f.name, "f");
    assert_eq!(f.returns.len(), 2);
    assert_eq!(f.returns[0].name, "r");
    assert_eq!(f.returns[1].dims, vec![Some(8)]);
    assert_eq!(f.params[0].name, "a");
    assert!(f.perf.noreturn);
}

#[test]
fn perf_directives() {
    let m = parse(
        ".entry k() .maxntid 128 .reqntid 64, 2 .minnctapersm 4 .maxnctapersm 8 .maxnreg 32 \
         .explicitcluster .reqnctapercluster 2, 2, 1 .maxclusterrank 8 {}",
    )
    .unwrap();
    let p = m.functions[0].perf;
    assert_eq!(p.maxntid, Some([128, 1, 1]));
    assert_eq!(p.reqntid, Some([64, 2, 1]));
    assert_eq!(p.minnctapersm, Some(4));
    assert_eq!(p.maxnctapersm, Some(8));
    assert_eq!(p.maxnreg, Some(32));
    assert!(p.explicitcluster);
    assert_eq!(p.reqnctapercluster, Some([2, 2, 1]));
    assert_eq!(p.maxclusterrank, Some(8));
    assert!(!p.noreturn);
}

#[test]
fn module_variables() {
    let m = parse(
        ".global .align 4 .b32 g;\n\
         .shared .align 16 .v4 .f32 sv[8];\n\
         .const .f64 c[2][3];\n\
         .extern .shared .align 16 .b8 smem[];\n\
         .global .texref t;\n\
         .shared::cta .b64 bar;\n\
         .visible .global .v2.u32 pair;\n\
         .tex .u32 oldtex;\n\
         .local .b8 l[4];\n",
    )
    .unwrap();
    let g = &m.globals;
    assert_eq!(g.len(), 9);
    assert_eq!(
        (g[0].space, g[0].align, g[0].ty),
        (StateSpace::Global, Some(4), "b32")
    );
    assert_eq!((g[1].vector, g[1].size_bytes()), (Some(4), Some(128)));
    assert_eq!(g[2].dims, vec![Some(2), Some(3)]);
    assert_eq!(g[2].size_bytes(), Some(48));
    assert_eq!(
        (g[3].linkage, g[3].dims.clone()),
        (Linkage::Extern, vec![None])
    );
    assert_eq!(g[3].size_bytes(), None);
    assert_eq!((g[4].ty, g[4].name), ("texref", "t"));
    assert_eq!(
        (g[5].space, g[5].space_qualifier),
        (StateSpace::Shared, Some("cta"))
    );
    assert_eq!(
        (g[6].linkage, g[6].vector, g[6].ty),
        (Linkage::Visible, Some(2), "u32")
    );
    assert_eq!(g[7].space, StateSpace::Tex);
    assert_eq!(g[8].space, StateSpace::Local);
    assert!(g.iter().all(|v| v.line >= 1));
    assert_eq!(g[8].line, 9);
}

#[test]
fn initializers() {
    let m = parse(
        ".global .u32 a[3] = {1, -2, 0x10};\n\
         .global .f32 b[2][2] = {{1.0, 0f3F800000}, {2.5, 0d3FF0000000000000}};\n\
         .global .u64 c = generic(sym)+8;\n\
         .global .u64 d = sym2 - 4 * 2;\n\
         .global .u32 e = (1 << 4) | ~0 & 0xFF ^ 3 % 2 / 1;\n\
         .global .samplerref s = { addr_mode_0 = clamp_to_edge, filter_mode = nearest };\n\
         .global .u32 empty[1] = {};\n",
    )
    .unwrap();
    let g = &m.globals;
    use Expr::*;
    use Initializer as I;
    assert_eq!(
        g[0].init,
        Some(I::List(vec![
            I::Expr(Int(1)),
            I::Expr(Unary(UnaryOp::Neg, Box::new(Int(2)))),
            I::Expr(Int(16)),
        ]))
    );
    assert_eq!(
        g[1].init,
        Some(I::List(vec![
            I::List(vec![
                I::Expr(F32(1.0f32.to_bits())),
                I::Expr(F32(0x3F80_0000))
            ]),
            I::List(vec![
                I::Expr(F32(2.5f32.to_bits())),
                I::Expr(F64(0x3FF0_0000_0000_0000))
            ]),
        ]))
    );
    assert_eq!(
        g[2].init,
        Some(I::Expr(Binary(
            BinaryOp::Add,
            Box::new(Call("generic", Box::new(Symbol("sym")))),
            Box::new(Int(8))
        )))
    );
    assert_eq!(
        g[3].init,
        Some(I::Expr(Binary(
            BinaryOp::Sub,
            Box::new(Symbol("sym2")),
            Box::new(Binary(BinaryOp::Mul, Box::new(Int(4)), Box::new(Int(2))))
        )))
    );
    // Precedence: | is loosest.
    let Some(I::Expr(Binary(BinaryOp::Or, l, _))) = &g[4].init else {
        panic!("{:?}", g[4].init)
    };
    assert_eq!(
        **l,
        Binary(BinaryOp::Shl, Box::new(Int(1)), Box::new(Int(4)))
    );
    assert_eq!(
        g[5].init,
        Some(I::List(vec![
            I::Field {
                name: "addr_mode_0",
                value: Box::new(I::Expr(Symbol("clamp_to_edge")))
            },
            I::Field {
                name: "filter_mode",
                value: Box::new(I::Expr(Symbol("nearest")))
            },
        ]))
    );
    assert_eq!(g[6].init, Some(I::List(vec![])));
}

#[test]
fn pragma_section_dwarf_and_alias_are_skipped() {
    let m = parse(
        ".pragma \"nounroll\";\n\
         .section .debug_info\n{\n.b32 1 ; {{ }} \"}\" // }\n$L__x:\n.b8 1,2 /* } */\n}\n\
         @@DWARF .byte 0x2 }}}\n\
         .alias f, g;\n\
         .section .debug_loc { }\n\
         .entry k() { ret; }\n",
    )
    .unwrap();
    assert_eq!(m.functions.len(), 1);
    assert_eq!(m.functions[0].line, 11);
}

#[test]
fn file_directive_forms() {
    let m = parse(
        ".file 1 \"a.cu\"\n.file 2 \"/inc/b.h\", 1700000000, 1234\n.file 3 \"/dir\" \"c.cu\"\n",
    )
    .unwrap();
    assert_eq!(
        m.files[0],
        FileEntry {
            index: 1,
            path: "a.cu",
            directory: None,
            timestamp: None,
            size: None,
            line: 1
        }
    );
    assert_eq!(m.files[1].timestamp, Some(1_700_000_000));
    assert_eq!(m.files[1].size, Some(1234));
    assert_eq!(
        (m.files[2].directory, m.files[2].path),
        (Some("/dir"), "c.cu")
    );
    assert_eq!(m.file_path(2), Some("/inc/b.h"));
}

#[test]
fn loc_forms_map_to_instructions() {
    let s = body(
        "ret;\n\
         .loc 1 10 5\n\
         add.s32 %r1, %r1, 1;\n\
         .loc 2 20\n\
         add.s32 %r1, %r1, 2;\n\
         .loc 1 30 7, function_name $L__info_string0, inlined_at 1 40 9\n\
         add.s32 %r1, %r1, 3;\n\
         .loc 1 31 2, function_name $L__info_string1+12, inlined_at 1 41 3\n\
         { add.s32 %r1, %r1, 4; }",
    );
    let locs: Vec<Option<SourceLoc>> = s
        .iter()
        .map(|st| match st {
            Statement::Instruction(i) => i.loc,
            Statement::Block(b) => match &b.statements[0] {
                Statement::Instruction(i) => i.loc,
                _ => panic!(),
            },
            _ => panic!("{st:?}"),
        })
        .collect();
    let l = |file, line, column, inl: Option<(u32, u32, u32)>| {
        Some(SourceLoc {
            file,
            line,
            column,
            inlined_at: inl.map(|(file, line, column)| InlinedAt { file, line, column }),
        })
    };
    assert_eq!(
        locs,
        vec![
            None,
            l(1, 10, 5, None),
            l(2, 20, 0, None),
            l(1, 30, 7, Some((1, 40, 9))),
            l(1, 31, 2, Some((1, 41, 3))),
        ]
    );
}

#[test]
fn loc_resets_at_each_function() {
    let m = parse(".func f() { .loc 1 5 1\n ret; }\n.entry k() { ret; }").unwrap();
    let first = |f: &Function| match &f.body.as_ref().unwrap().statements[0] {
        Statement::Instruction(i) => i.loc,
        _ => panic!(),
    };
    assert_eq!(first(&m.functions[0]).map(|l| l.line), Some(5));
    assert_eq!(first(&m.functions[1]), None);
}

// ---------------------------------------------------------------- body statements

#[test]
fn reg_declarations() {
    let s = body(".reg .b32 %r<100>, %x;\n.reg .pred %p;\n.reg .v4 .f32 %v;\n.reg .f16x2 %h<4>;");
    let v: Vec<_> = s
        .iter()
        .map(|st| match st {
            Statement::Var(d) => (d.space, d.ty, d.name, d.range, d.vector),
            _ => panic!(),
        })
        .collect();
    assert_eq!(
        v,
        vec![
            (StateSpace::Reg, "b32", "%r", Some(100), None),
            (StateSpace::Reg, "b32", "%x", None, None),
            (StateSpace::Reg, "pred", "%p", None, None),
            (StateSpace::Reg, "f32", "%v", None, Some(4)),
            (StateSpace::Reg, "f16x2", "%h", Some(4), None),
        ]
    );
}

#[test]
fn body_variables_and_pragma() {
    let s = body(
        ".local .align 8 .b8 __local_depot0[16];\n.shared .align 4 .b8 sm[64];\n\
         .param .b64 param0;\n.pragma \"nounroll\";",
    );
    assert!(
        matches!(&s[0], Statement::Var(d) if d.space == StateSpace::Local && d.size_bytes() == Some(16))
    );
    assert!(
        matches!(&s[1], Statement::Var(d) if d.space == StateSpace::Shared && d.align == Some(4))
    );
    assert!(
        matches!(&s[2], Statement::Var(d) if d.space == StateSpace::Param && d.name == "param0")
    );
    assert_eq!(
        s[3],
        Statement::Pragma {
            text: "nounroll",
            line: 6
        }
    );
}

#[test]
fn labels_of_every_style() {
    let s = body("$L__BB0_1:\nLBB0_2:\n$Lt_0_1: ret;\n");
    let names: Vec<_> = s
        .iter()
        .filter_map(|st| match st {
            Statement::Label { name, .. } => Some(*name),
            _ => None,
        })
        .collect();
    assert_eq!(names, vec!["$L__BB0_1", "LBB0_2", "$Lt_0_1"]);
    assert!(matches!(s[0], Statement::Label { line: 3, .. }));
}

#[test]
fn call_prototype() {
    let s = body(
        "prototype_0 : .callprototype (.param .b32 _) _ (.param .b32 _);\ncall (%r1), %rd5, (p0), prototype_0;",
    );
    assert_eq!(
        s[0],
        Statement::CallPrototype {
            name: "prototype_0",
            text: ".callprototype (.param .b32 _) _ (.param .b32 _)",
            line: 3
        }
    );
    let Statement::Instruction(call) = &s[1] else {
        panic!()
    };
    assert_eq!(
        call.operands,
        vec![
            Operand::Paren(vec![Operand::Reg("%r1")]),
            Operand::Reg("%rd5"),
            Operand::Paren(vec![sym("p0", 0)]),
            sym("prototype_0", 0),
        ]
    );
}

#[test]
fn nested_scopes_with_repeated_labels() {
    let s = body("{ .reg .pred P1; L: @P1 bra L; }\n{ .reg .pred P1; L: bra L; { L: ret; } }");
    let Statement::Block(a) = &s[0] else { panic!() };
    let Statement::Block(b) = &s[1] else { panic!() };
    assert!(matches!(
        a.statements[1],
        Statement::Label { name: "L", .. }
    ));
    assert!(matches!(
        b.statements[1],
        Statement::Label { name: "L", .. }
    ));
    let Statement::Block(c) = &b.statements[3] else {
        panic!()
    };
    assert!(matches!(
        c.statements[0],
        Statement::Label { name: "L", .. }
    ));
    assert_eq!(a.line, 3);
}

// ---------------------------------------------------------------- instructions

#[test]
fn guards() {
    let i = ins("@%p1 bra $L__BB0_1;");
    assert_eq!(
        i.guard,
        Some(Guard {
            negated: false,
            predicate: "%p1"
        })
    );
    assert_eq!(i.operands, vec![sym("$L__BB0_1", 0)]);
    let i = ins("@!%p2 bra.uni L;");
    assert_eq!(
        i.guard,
        Some(Guard {
            negated: true,
            predicate: "%p2"
        })
    );
    assert_eq!((i.opcode, i.modifiers), ("bra", "uni"));
    assert_eq!((i.line, i.column), (3, 1));
}

#[test]
fn opcode_and_modifier_chains() {
    let cases = [
        (
            "ld.volatile.shared.v4.f32 {%f1,%f2,%f3,%f4}, [%r1];",
            "ld",
            "volatile.shared.v4.f32",
        ),
        (
            "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r1], [%rd1, {%r2, %r3, %r4}], [%r5], %rs1;",
            "cp",
            "async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster",
        ),
        ("setp.ne.and.b32 %p1, %r1, 0, %p2;", "setp", "ne.and.b32"),
        (
            "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2,%r3,%r4}, {%r5,%r6}, {%f1,%f2,%f3,%f4};",
            "mma",
            "sync.aligned.m16n8k16.row.col.f32.f16.f16.f32",
        ),
        ("ret;", "ret", ""),
        ("exit;", "exit", ""),
        ("frobnicate.x.y %r1, 3;", "frobnicate", "x.y"),
    ];
    for (src, op, mods) in cases {
        let i = ins(src);
        assert_eq!((i.opcode, i.modifiers), (op, mods), "{src}");
    }
    let i = ins(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2}], [%r5];",
    );
    assert!(i.has_modifier("shared::cluster"));
    assert!(i.has_modifier("mbarrier::complete_tx::bytes"));
    assert!(!i.has_modifier("shared"));
    let i = ins("frobnicate.x.y %r1, 3;");
    assert_eq!(i.operands, vec![Operand::Reg("%r1"), Operand::Int(3)]);
}

#[test]
fn special_registers() {
    let o =
        ops("mov.u32 %r1, %tid.x, %ctaid.y, %envreg3, %laneid, %clock64, %SP, %SPL, %nctaid.z;");
    assert_eq!(
        o,
        [
            "%r1",
            "%tid.x",
            "%ctaid.y",
            "%envreg3",
            "%laneid",
            "%clock64",
            "%SP",
            "%SPL",
            "%nctaid.z"
        ]
        .map(Operand::Reg)
        .to_vec()
    );
}

#[test]
fn vector_operands_with_sink() {
    let o = ops("ld.shared.v4.u32 {%r1, %r2, _, %r4}, [%r5];");
    assert_eq!(
        o[0],
        Operand::Vector(vec![
            Operand::Reg("%r1"),
            Operand::Reg("%r2"),
            Operand::Sink,
            Operand::Reg("%r4")
        ])
    );
    assert_eq!(ops("mbarrier.arrive.b64 _, [%r1];")[0], Operand::Sink);
}

#[test]
fn address_forms() {
    let o = ops("x [%rd1+16], [%rd1+-4], [%rd1-4], [sym], [sym+8], [0x100], [%r2], [ %r3 + 0 ];");
    assert_eq!(
        o,
        vec![
            addr(AddressBase::Reg("%rd1"), 16),
            addr(AddressBase::Reg("%rd1"), -4),
            addr(AddressBase::Reg("%rd1"), -4),
            addr(AddressBase::Symbol("sym"), 0),
            addr(AddressBase::Symbol("sym"), 8),
            addr(AddressBase::Absolute, 256),
            addr(AddressBase::Reg("%r2"), 0),
            addr(AddressBase::Reg("%r3"), 0),
        ]
    );
}

#[test]
fn multi_element_brackets() {
    let o = ops("tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [tex, {%f5, %f6}];");
    assert_eq!(
        o[1],
        Operand::Bracket(vec![
            sym("tex", 0),
            Operand::Vector(vec![Operand::Reg("%f5"), Operand::Reg("%f6")])
        ])
    );
    let o = ops("x [%rd1+8, 3];");
    assert_eq!(
        o[0],
        Operand::Bracket(vec![addr(AddressBase::Reg("%rd1"), 8), Operand::Int(3)])
    );
    let o = ops("x [{%r1}];");
    assert_eq!(
        o[0],
        Operand::Bracket(vec![Operand::Vector(vec![Operand::Reg("%r1")])])
    );
}

#[test]
fn immediates() {
    let o = ops(
        "x 42, -7, 0x1F, 0XfF, 017, 0b101, 4294967295U, 0f3F800000, -0f3F800000, \
         0d3FF0000000000000, 1.0, -2.5, 0, 1e3;",
    );
    assert_eq!(
        o,
        vec![
            Operand::Int(42),
            Operand::Int(-7),
            Operand::Int(31),
            Operand::Int(255),
            Operand::Int(15),
            Operand::Int(5),
            Operand::Int(4_294_967_295),
            Operand::F32(0x3F80_0000),
            Operand::F32(0xBF80_0000),
            Operand::F64(0x3FF0_0000_0000_0000),
            Operand::F32(1.0f32.to_bits()),
            Operand::F32((-2.5f32).to_bits()),
            Operand::Int(0),
            Operand::F32(1000.0f32.to_bits()),
        ]
    );
}

#[test]
fn labels_and_symbols_as_operands() {
    let o = ops("mov.u64 %rd1, $str+4, sym, sym-8, _Z3fooi;");
    assert_eq!(
        o,
        vec![
            Operand::Reg("%rd1"),
            sym("$str", 4),
            sym("sym", 0),
            sym("sym", -8),
            sym("_Z3fooi", 0)
        ]
    );
}

#[test]
fn not_predicates_and_pred_pairs() {
    let o = ops("setp.eq.and.s32 %p1|%p2, %r1, 0, !%p3;");
    assert_eq!(
        o,
        vec![
            Operand::PredPair("%p1", "%p2"),
            Operand::Reg("%r1"),
            Operand::Int(0),
            Operand::NotReg("%p3")
        ]
    );
}

#[test]
fn pred_pairs_with_sinks_and_plain_names() {
    assert_eq!(
        ops("elect.sync _|%p1, -1;"),
        vec![Operand::PredPair("_", "%p1"), Operand::Int(-1)]
    );
    assert_eq!(
        ops("setp.ne.s32 P1|P2, %r1, 0;")[0],
        Operand::PredPair("P1", "P2")
    );
    assert_eq!(
        ops("shfl.sync.bfly.b32 %r1|%p1, %r2, 1, 31, -1;")[0],
        Operand::PredPair("%r1", "%p1")
    );
}

#[test]
fn call_syntax() {
    let o = ops("call.uni (retval0), _Z3fooi, (param0, param1);");
    assert_eq!(
        o,
        vec![
            Operand::Paren(vec![sym("retval0", 0)]),
            sym("_Z3fooi", 0),
            Operand::Paren(vec![sym("param0", 0), sym("param1", 0)]),
        ]
    );
    let o = ops("call.uni _Z3barv, ();");
    assert_eq!(o, vec![sym("_Z3barv", 0), Operand::Paren(vec![])]);
    let o = ops("call.uni\n(retval0),\n_Z3fooi,\n(\nparam0\n);");
    assert_eq!(o.len(), 3);
}

#[test]
fn instruction_positions() {
    let s = body("  mov.u32 %r1, 1;\n\t@%p1 ret;");
    let pos: Vec<_> = s
        .iter()
        .map(|st| match st {
            Statement::Instruction(i) => (i.line, i.column),
            _ => panic!(),
        })
        .collect();
    assert_eq!(pos, vec![(3, 3), (4, 2)]);
}

#[test]
fn unknown_module_directive_rule() {
    // `.alias` is skipped; any other unknown directive is an error, never a silent
    // misparse.
    assert!(parse(".alias a, b;\n").is_ok());
    let e = err(".frob 3;\n");
    assert_eq!((e.line, e.column), (1, 1));
    assert_eq!(e.message, "unknown directive `.frob`");
}

#[test]
fn old_nvcc_style() {
    let src = "\t.version 1.4\n\t.target sm_13\n\t.file\t1\t\"/tmp/tmpxft_00001_foo.cudafe2.gpu\"\n\
        \t.tex .u32 texRef;\n\
        \t.entry _Z3fooPi (\n\t\t.param .u32 __cudaparm__Z3fooPi_a)\n\t{\n\
        \t.reg .u16 %rh<4>;\n\t.reg .u32 %r<5>;\n\t.loc\t1\t5\t0\n\
        $LDWbegin__Z3fooPi:\n\tcvt.u32.u16 \t%r1, %tid.x;\n\
        \tld.param.u32 \t%r2, [__cudaparm__Z3fooPi_a];\n\
        \tbar.sync \t0;\n$Lt_0_1:\n\t@%p1 bra.uni \t$Lt_0_1;\n\texit;\n$LDWend__Z3fooPi:\n\t} // _Z3fooPi\n";
    let m = parse(src).unwrap();
    assert_eq!(m.version, Some((1, 4)));
    assert_eq!(m.globals[0].space, StateSpace::Tex);
    let k = m.entries().next().unwrap();
    let stmts = &k.body.as_ref().unwrap().statements;
    let labels = stmts
        .iter()
        .filter(|s| matches!(s, Statement::Label { .. }))
        .count();
    assert_eq!(labels, 3);
    let bar = stmts
        .iter()
        .find_map(|s| match s {
            Statement::Instruction(i) if i.opcode == "bar" => Some(i),
            _ => None,
        })
        .unwrap();
    assert_eq!(bar.loc.map(|l| (l.file, l.line, l.column)), Some((1, 5, 0)));
}

#[test]
fn dwarf_lines_inside_bodies_are_skipped() {
    let s = body("@@DWARF .byte 1 }\nret;");
    assert_eq!(s.len(), 1);
}

#[test]
fn loc_with_generic_dwarf_flags() {
    let s = body(".loc 1 7 2 prologue_end is_stmt 0\nret;");
    let Statement::Instruction(i) = &s[0] else {
        panic!()
    };
    assert_eq!(i.loc.map(|l| (l.line, l.column)), Some((7, 2)));
}

#[test]
fn branch_targets_and_brx() {
    let s = body(
        "JTI0_0:\n\t.branchtargets\n\t\t$L__BB0_3,\n\t\t$L__BB0_5;\nbrx.idx.uni %r13, JTI0_0;\n$L__BB0_3:\nret;\n$L__BB0_5:\nret;",
    );
    assert_eq!(
        s[0],
        Statement::BranchTargets {
            name: "JTI0_0",
            targets: vec!["$L__BB0_3", "$L__BB0_5"],
            line: 3
        }
    );
    let Statement::Instruction(brx) = &s[1] else {
        panic!("{:?}", s[1])
    };
    assert_eq!(brx.opcode, "brx");
    assert_eq!(brx.modifiers, "idx.uni");
    assert_eq!(
        brx.operands,
        vec![
            Operand::Reg("%r13"),
            Operand::Symbol {
                name: "JTI0_0",
                offset: 0
            }
        ]
    );
    assert!(matches!(
        s[2],
        Statement::Label {
            name: "$L__BB0_3",
            ..
        }
    ));
}

#[test]
fn call_targets() {
    let s = body("Ftgt: .calltargets f0, f1, f2;");
    assert_eq!(
        s,
        vec![Statement::CallTargets {
            name: "Ftgt",
            targets: vec!["f0", "f1", "f2"],
            line: 3
        }]
    );
}

#[test]
fn branch_targets_malformed() {
    for src in [
        "T: .branchtargets ;",
        "T: .branchtargets a b;",
        "T: .branchtargets a,;",
        "T: .branchtargets a",
    ] {
        let text = format!(".entry k()\n{{\n{src}\n}}\n");
        assert!(parse(&text).is_err(), "{src}");
    }
}
