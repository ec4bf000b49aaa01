//! Warp-level execution (`exec/warp.rs`) against lane-by-lane execution on random kernels:
//! straight-line integer code (comparisons of every kind, signed and unsigned, divisions by
//! zero among them), shared stores and loads (racy ones too; of 1, 2, 4 and 8
//! bytes, signed, guarded, of known and unknown values, with and without value terms),
//! branches on the lane and thread index, uniform loops, early exits, barriers (for all
//! threads and counted, arrives and syncs), shuffles
//! (with and without a predicate result, some from lanes out of range or inactive, some of
//! an unknown parameter), votes and `activemask`, floating-point arithmetic (computed and
//! opaque, guarded, of known values and of unknown ones by the same or other sources),
//! `mma.sync`, `ldmatrix`, shared atomics and global loads, with and without
//! `--warp-sync`, on full and partial warps.

use proptest::prelude::*;

use super::samples::assert_same;
use crate::exec::Paths;
use crate::{Config, emulate_on};
use weft_program::CtaShape;

/// A piece of a random kernel.
#[derive(Debug, Clone)]
enum Item {
    /// One instruction (a template over registers `a`, `b`, `c`, predicate `p`, immediate).
    Inst(u8, u8, u8, u8, u8, u32),
    /// `if (p) { body }` on a thread-dependent predicate.
    If(u8, Vec<Item>),
    /// A loop with a uniform trip count.
    Loop(u8, Vec<Item>),
}

fn item(depth: u32) -> BoxedStrategy<Item> {
    let inst = (0u8..64, 2u8..10, 2u8..10, 2u8..10, 1u8..5, 0u32..300)
        .prop_map(|(k, a, b, c, p, imm)| Item::Inst(k, a, b, c, p, imm));
    if depth == 0 {
        return inst.boxed();
    }
    prop_oneof![
        6 => inst,
        1 => (1u8..5, prop::collection::vec(item(depth - 1), 0..6)).prop_map(|(p, b)| Item::If(p, b)),
        1 => (1u8..4, prop::collection::vec(item(depth - 1), 0..6)).prop_map(|(n, b)| Item::Loop(n, b)),
    ]
    .boxed()
}

/// PTX for `items`; `top` marks code that every thread reaches together (barriers only
/// there, so most kernels synchronize correctly; collectives anywhere).
fn emit(items: &[Item], top: bool, out: &mut String, labels: &mut u32, depth: u32) {
    for it in items {
        match it {
            Item::Inst(k, a, b, c, p, imm) => {
                let l = match k {
                    0 => format!("add.s32 %r{a}, %r{b}, %r{c};"),
                    1 => format!("xor.b32 %r{a}, %r{b}, {imm};"),
                    2 => format!("mul.lo.s32 %r{a}, %r{b}, {imm};"),
                    3 => format!("shr.u32 %r{a}, %r{b}, {};", imm % 5),
                    4 => format!("mad.lo.s32 %r{a}, %r{b}, %r{c}, {imm};"),
                    5 => format!("rem.u32 %r{a}, %r{b}, {};", imm % 7 + 1),
                    6 => format!("setp.lt.u32 %p{p}, %r{b}, {imm};"),
                    7 => format!("selp.b32 %r{a}, %r{b}, %r{c}, %p{p};"),
                    8 => format!("@%p{p} add.s32 %r{a}, %r{b}, 1;"),
                    9 | 10 => format!(
                        "and.b32 %r10, %r{b}, 252;\n    add.s32 %r10, %r10, %r11;\n    st.shared.u32 [%r10], %r{c};"
                    ),
                    11 | 12 => format!(
                        "and.b32 %r10, %r{b}, 252;\n    add.s32 %r10, %r10, %r11;\n    ld.shared.u32 %r{a}, [%r10];"
                    ),
                    13 => format!("shfl.sync.bfly.b32 %r{a}, %r{b}, {}, 31, -1;", imm % 32),
                    14 => format!("shfl.sync.idx.b32 %r{a}, %r{b}, %r{c}, 31, -1;"),
                    15 => format!("vote.sync.ballot.b32 %r{a}, %p{p}, -1;"),
                    16 => format!("activemask.b32 %r{a};"),
                    17 => format!("and.b32 %r{a}, %r1, {};", imm % 64),
                    18 if top => "bar.sync 0;".to_string(),
                    19 if top => "bar.warp.sync -1;".to_string(),
                    // Counted barriers: arrives that release their warp at once, syncs that
                    // wait for the count (of one to three warps; more than the CTA is an
                    // error), on warps of which some lanes exited.
                    42 if top => format!("bar.arrive 1, {};", 32 * (1 + imm % 3)),
                    43 if top => format!("bar.sync 1, {};", 32 * (1 + imm % 3)),
                    20 => format!("setp.eq.u32 %p{p}, %r1, {};", imm % 80),
                    21 => format!("@%p{p} exit;"),
                    22 => format!("redux.sync.add.u32 %r{a}, %r{b}, -1;"),
                    23 => format!(
                        "shfl.sync.down.b32 %r{a}|%p{p}, %r{b}, {}, {}, -1;",
                        imm % 32,
                        [31, 15, 0x81f, 0][*imm as usize % 4]
                    ),
                    24 => format!("shfl.sync.up.b32 %r{a}|%p{p}, {imm}, {}, 0, -1;", imm % 9),
                    25 => format!("@%p{p} ld.param.u32 %r{a}, [n];"),
                    26 => format!(
                        "and.b32 %r10, %r{b}, 255;\n    add.s32 %r10, %r10, %r11;\n    st.shared.u8 [%r10], %r{c};"
                    ),
                    27 => format!(
                        "and.b32 %r10, %r{b}, 252;\n    add.s32 %r10, %r10, %r11;\n    ld.shared.s16 %r{a}, [%r10+2];"
                    ),
                    28 => format!(
                        "and.b32 %r10, %r{b}, 248;\n    add.s32 %r10, %r10, %r11;\n    cvt.u64.u32 %rd1, %r{c};\n    shl.b64 %rd1, %rd1, {};\n    st.shared.u64 [%r10], %rd1;",
                        imm % 40
                    ),
                    29 => format!(
                        "and.b32 %r10, %r{b}, 248;\n    add.s32 %r10, %r10, %r11;\n    ld.shared.u64 %rd2, [%r10];\n    cvt.u32.u64 %r{a}, %rd2;"
                    ),
                    31 => format!(
                        "setp.{}.s32 %p{p}, %r{b}, {};",
                        ["lt", "le", "gt", "ge", "ne", "eq"][*imm as usize % 6],
                        *imm as i32 - 150
                    ),
                    32 => format!(
                        "setp.{}.u16 %p{p}, %r{b}, %r{c};",
                        ["lo", "ls", "hi", "hs"][*imm as usize % 4]
                    ),
                    33 => format!("div.s32 %r{a}, %r{b}, %r{c};"),
                    // Consecutive elements per lane (`base + lane * size`: one entry of the
                    // reorder check for the warp's accesses), overlapping other offsets'.
                    34 => format!(
                        "shl.b32 %r10, %r2, 2;\n    add.s32 %r10, %r10, %r11;\n    st.shared.u32 [%r10+{}], %r{c};",
                        4 * (imm % 33)
                    ),
                    35 => format!(
                        "shl.b32 %r10, %r2, 2;\n    add.s32 %r10, %r10, %r11;\n    ld.shared.u32 %r{a}, [%r10+{}];",
                        4 * (imm % 33)
                    ),
                    36 => format!(
                        "add.s32 %r10, %r2, %r11;\n    st.shared.u8 [%r10+{}], %r{c};",
                        imm % 225
                    ),
                    // Shifts by immediates of the width and more too.
                    39 => format!("shr.s32 %r{a}, %r{b}, {};", imm % 40),
                    40 => format!("shl.b32 %r{a}, %r{b}, {};", imm % 40),
                    41 => format!("shr.u16 %r{a}, %r{b}, {};", imm % 20),
                    // Descending addresses: not consecutive elements, each lane tracked.
                    37 => format!(
                        "sub.s32 %r10, 31, %r2;\n    shl.b32 %r10, %r10, 2;\n    add.s32 %r10, %r10, %r11;\n    st.shared.u32 [%r10+{}], %r{c};",
                        4 * (imm % 33)
                    ),
                    38 => format!(
                        "shl.b32 %r10, %r2, 3;\n    add.s32 %r10, %r10, %r11;\n    @%p{p} ld.shared.u64 %rd2, [%r10];\n    cvt.u32.u64 %r{a}, %rd2;"
                    ),
                    // Floating-point arithmetic, computed (`.rn`) and opaque, tensor-core
                    // results, `ldmatrix` rows, shared atomics, global loads: lock-step
                    // groups step the pure ones once per distinct operand tuple
                    // (`warp_pure`), on lanes with equal and different operands.
                    44 => format!("mov.b32 %f{a}, %r{b};"),
                    45 => format!("add.rn.f32 %f{a}, %f{b}, %f{c};"),
                    46 => format!("mul.f32 %f{a}, %f{b}, 0f3F000000;"),
                    47 => format!("ex2.approx.ftz.f32 %f{a}, %f{b};"),
                    48 => format!("fma.rn.f32 %f{a}, %f{b}, %f{c}, %f{a};"),
                    49 => format!(
                        "mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32 {{%f{a}, %f{b}, %f{c}, %f9}}, {{%r{b}, %r{c}}}, {{%r{a}}}, {{%f{b}, %f{c}, %f{a}, %f9}};"
                    ),
                    50 => format!("mov.b32 %r{a}, %f{b};"),
                    51 => format!(
                        "and.b32 %r10, %r{b}, 240;\n    add.s32 %r10, %r10, %r11;\n    ldmatrix.sync.aligned.m8n8.x1.shared.b16 {{%r{a}}}, [%r10];"
                    ),
                    52 => format!(
                        "and.b32 %r10, %r{b}, 252;\n    add.s32 %r10, %r10, %r11;\n    atom.shared.add.u32 %r{a}, [%r10], %r{c};"
                    ),
                    53 => format!("ld.global.u32 %r{a}, [%rd3+{}];", 4 * (imm % 4)),
                    54 => format!("@%p{p} sub.rn.f32 %f{a}, %f{b}, %f{c};"),
                    55 => format!("cvt.rn.f32.u32 %f{a}, %r{b};\n    cp.async.commit_group;"),
                    // Float results that commands show: stored (each lane its own word
                    // of `fs`, so that no reorder check repeats the run lane by lane),
                    // and branched on.
                    56 | 57 => format!(
                        "mov.u32 %r10, fs;\n    shl.b32 %r12, %r2, 2;\n    add.s32 %r10, %r10, %r12;\n    st.shared.f32 [%r10], %f{c};"
                    ),
                    58 | 59 => format!("setp.lt.f32 %p{p}, %f{b}, %f{c};"),
                    // Integer arithmetic on a termed unknown and lane-dependent values:
                    // distinct results per lane, stored in each lane's word.
                    60 | 61 => {
                        format!("ld.param.u32 %r{a}, [n];\n    add.s32 %r{a}, %r{a}, %r{b};")
                    }
                    62 | 63 => format!(
                        "mov.u32 %r10, fs;\n    shl.b32 %r12, %r2, 2;\n    add.s32 %r10, %r10, %r12;\n    st.shared.u32 [%r10], %r{c};"
                    ),
                    30 => format!(
                        "and.b32 %r10, %r{b}, 252;\n    add.s32 %r10, %r10, %r11;\n    @%p{p} st.shared.u16 [%r10+2], %r{c};"
                    ),
                    _ => format!("sub.s32 %r{a}, %r{b}, %r{c};"),
                };
                out.push_str("    ");
                out.push_str(&l);
                out.push('\n');
            }
            Item::If(p, body) => {
                *labels += 1;
                let l = *labels;
                out.push_str(&format!("    @!%p{p} bra SKIP{l};\n"));
                emit(body, false, out, labels, depth);
                out.push_str(&format!("SKIP{l}:\n"));
            }
            Item::Loop(n, body) => {
                *labels += 1;
                let l = *labels;
                let r = 20 + depth;
                out.push_str(&format!("    mov.u32 %r{r}, 0;\nLOOP{l}:\n"));
                emit(body, top, out, labels, depth + 1);
                out.push_str(&format!(
                    "    add.s32 %r{r}, %r{r}, 1;\n    setp.lt.u32 %p7, %r{r}, {n};\n    @%p7 bra LOOP{l};\n"
                ));
            }
        }
    }
}

fn kernel(items: &[Item]) -> String {
    let mut body = String::new();
    let mut labels = 0;
    emit(items, true, &mut body, &mut labels, 0);
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u32 n)\n{{\n    .reg .b32 %r<32>;\n    .reg .pred %p<8>;\n    .reg .b64 %rd<4>;\n    .reg .f32 %f<12>;\n    .shared .align 16 .b8 s[256];\n    .shared .align 4 .b8 fs[128];\n    mov.u32 %r1, %tid.x;\n    mov.u32 %r11, s;\n    mov.u32 %r2, %laneid;\n    mul.lo.s32 %r3, %r1, 7;\n    and.b32 %r4, %r1, 3;\n    mov.u32 %r5, 0;\n    mov.u32 %r6, 1;\n    mov.u32 %r7, 2;\n    mov.u32 %r8, 3;\n    mov.u32 %r9, 4;\n    setp.lt.u32 %p1, %r2, 5;\n    setp.eq.u32 %p2, %r4, 1;\n    setp.gt.u32 %p3, %r1, 40;\n    setp.ne.u32 %p4, %r2, 31;\n    mov.u64 %rd3, 4096;\n    cvt.rn.f32.u32 %f2, %r2;\n    cvt.rn.f32.u32 %f3, %r4;\n    mov.b32 %f4, %r5;\n    mov.b32 %f5, %r6;\n    mov.b32 %f6, 0f3F800000;\n    mov.b32 %f7, %r3;\n    mov.b32 %f8, %r9;\n    mov.b32 %f9, %r7;\n{body}    ret;\n}}\n"
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    /// Warp-level execution and lane-by-lane execution compute the same emulation.
    #[test]
    fn warp_execution_agrees_with_lanes(
        items in prop::collection::vec(item(2), 1..24),
        threads in prop::sample::select(vec![32u32, 48, 64, 96]),
        warp_sync in any::<bool>(),
        value_terms in any::<bool>(),
    ) {
        let text = kernel(&items);
        let module = ptx_parser::parse(&text).expect("generated PTX parses");
        let cfg = Config {
            threads: Some(CtaShape::linear(threads)),
            warp_sync,
            value_terms,
            step_limit: 20_000,
            ..Config::default()
        };
        let warp = emulate_on(&module, "k", &cfg, Paths::Fast);
        let lanes = emulate_on(&module, "k", &cfg, Paths::Lanes);
        match (warp, lanes) {
            (Ok(w), Ok(l)) => assert_same(&text, &w, &l),
            (Err(w), Err(l)) => prop_assert_eq!(w.to_string(), l.to_string()),
            (w, l) => panic!("warp {:?} but lanes {:?}\n{text}", w.err(), l.err()),
        }
    }

    /// The same when a step budget (a lane's, or the CTA's) stops the run part way: the
    /// warp passes that could reach a budget run lane by lane (`Machine::near_budget`),
    /// and a stop inside a pass with lock-step still repeats the run lane by lane.
    #[test]
    fn warp_execution_agrees_with_lanes_at_budgets(
        items in prop::collection::vec(item(2), 1..24),
        threads in prop::sample::select(vec![32u32, 64, 96]),
        step_limit in 20u64..2_000,
    ) {
        let text = kernel(&items);
        let module = ptx_parser::parse(&text).expect("generated PTX parses");
        let cfg = Config {
            threads: Some(CtaShape::linear(threads)),
            step_limit,
            ..Config::default()
        };
        let warp = emulate_on(&module, "k", &cfg, Paths::Fast);
        let lanes = emulate_on(&module, "k", &cfg, Paths::Lanes);
        match (warp, lanes) {
            (Ok(w), Ok(l)) => assert_same(&text, &w, &l),
            (Err(w), Err(l)) => prop_assert_eq!(w.to_string(), l.to_string()),
            (w, l) => panic!("warp {:?} but lanes {:?}\n{text}", w.err(), l.err()),
        }
    }
}

/// A kernel whose warps store consecutive elements of `width` bytes (lane `l` at
/// `s + l * width + 256`), load the elements `shift` lanes over and store what they read
/// where it shows (its value's id); the lanes below `first` exit first, or, `guarded`,
/// skip the first store; `lone`: only lane `first` (the warp's first running lane, the
/// reorder check's cursor) loads and stores again.
fn shifted_elements(width: u32, shift: i32, first: u32, guarded: bool, lone: bool) -> String {
    let (ty, v, w) = match width {
        1 => ("u8", "%r3", "%r4"),
        4 => ("u32", "%r3", "%r4"),
        _ => ("u64", "%rd1", "%rd2"),
    };
    let load = 256 + shift * width as i32;
    let (exit, guard) = if guarded {
        ("", "@!%p1 ")
    } else {
        ("    @%p1 exit;\n", "")
    };
    let again = if lone { "@%p2 " } else { "" };
    format!(
        ".version 8.0\n.target sm_90\n.address_size 64\n.visible .entry k(.param .u32 n)\n{{\n    .reg .b32 %r<16>;\n    .reg .pred %p<4>;\n    .reg .b64 %rd<4>;\n    .shared .align 8 .b8 s[1024];\n    mov.u32 %r1, %tid.x;\n    mov.u32 %r2, %laneid;\n    mov.u32 %r11, s;\n    setp.lt.u32 %p1, %r2, {first};\n    setp.eq.u32 %p2, %r2, {first};\n{exit}    mul.lo.u32 %r10, %r2, {width};\n    add.u32 %r10, %r10, %r11;\n    add.u32 %r3, %r1, 7;\n    cvt.u64.u32 %rd1, %r3;\n    {guard}st.shared.{ty} [%r10+256], {v};\n    {again}ld.shared.{ty} {w}, [%r10+{load}];\n    {again}st.shared.{ty} [%r10+640], {w};\n    ret;\n}}\n"
    )
}

/// Lanes of a warp that load what other lanes of the warp stored in the same pass, at
/// consecutive elements (one entry of the reorder check per warp instruction,
/// `Machine::track_lanes`, and the pass checked element by element,
/// `Tracker::check_elements`): a lane that reads a higher lane's element is found and the
/// run repeated lane by lane, whatever the lowest lane of the warp's accesses.
#[test]
fn warp_consecutive_elements_agree_with_lanes() {
    for width in [1, 4, 8] {
        for shift in -2..=2 {
            for first in [0, 1, 3] {
                for (guarded, lone) in [(false, false), (true, false), (false, true), (true, true)]
                {
                    let text = shifted_elements(width, shift, first, guarded, lone);
                    let module = ptx_parser::parse(&text).expect("generated PTX parses");
                    let cfg = Config {
                        threads: Some(CtaShape::linear(64)),
                        ..Config::default()
                    };
                    let warp = emulate_on(&module, "k", &cfg, Paths::Fast);
                    let lanes = emulate_on(&module, "k", &cfg, Paths::Lanes);
                    match (warp, lanes) {
                        (Ok(w), Ok(l)) => assert_same(&text, &w, &l),
                        (w, l) => panic!("warp {:?} but lanes {:?}\n{text}", w.err(), l.err()),
                    }
                }
            }
        }
    }
}
