//! `cargo run -p ptx-parser --example stats FILE.ptx`: prints a summary of a parsed module
//! (functions, statement counts, opcodes), or the parse error.

use ptx_parser::*;
use std::collections::BTreeMap;

fn walk<'s>(b: &Block<'s>, ops: &mut BTreeMap<&'s str, usize>, n: &mut [usize; 4]) {
    for s in &b.statements {
        match s {
            Statement::Instruction(i) => {
                *ops.entry(i.opcode).or_default() += 1;
                n[0] += 1;
                if i.loc.is_some() {
                    n[3] += 1;
                }
            }
            Statement::Block(inner) => {
                n[1] += 1;
                walk(inner, ops, n);
            }
            Statement::Label { .. } => n[2] += 1,
            _ => {}
        }
    }
}

fn main() {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: stats FILE.ptx");
        std::process::exit(2);
    };
    let text = std::fs::read_to_string(&path).expect("readable file");
    let m = match parse(&text) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{path}:{e}");
            std::process::exit(1);
        }
    };
    println!(
        "version {:?} target {:?} files {} globals {}",
        m.version,
        m.target,
        m.files.len(),
        m.globals.len()
    );
    for f in &m.functions {
        let mut ops = BTreeMap::new();
        let mut n = [0usize; 4];
        if let Some(b) = &f.body {
            walk(b, &mut ops, &mut n);
        }
        println!(
            "{:?} {} params {} instructions {} (with .loc {}) blocks {} labels {}",
            f.kind,
            f.name,
            f.params.len(),
            n[0],
            n[3],
            n[1],
            n[2]
        );
        let list: Vec<_> = ops.iter().map(|(k, v)| format!("{k}:{v}")).collect();
        println!("  {}", list.join(" "));
    }
}
