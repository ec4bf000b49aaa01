//! `--dot FILE`: the barrier dependence graph of every kernel in Graphviz, one
//! `subgraph cluster_N` per kernel. Nodes are dynamic barriers labelled `bar ID gen G`;
//! those a violation names are red.

use std::fmt::Write;

use crate::report::RunReport;

fn quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\n' => out.push_str("\\n"),
            _ => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The Graphviz text for every kernel that has a graph.
pub fn render(run: &RunReport) -> String {
    let mut out =
        String::from("digraph weft {\n  node [shape=box, style=filled, fillcolor=white];\n");
    for (k, kernel) in run.kernels.iter().enumerate() {
        let Some(graph) = &kernel.dot else { continue };
        let title = format!("{} ({})", kernel.kernel, kernel.file.path.display());
        let _ = writeln!(out, "  subgraph cluster_{k} {{");
        let _ = writeln!(out, "    label = {};", quote(&title));
        for (n, node) in graph.nodes.iter().enumerate() {
            let color = if node.violated { "#f4a6a6" } else { "#d8ecd8" };
            let _ = writeln!(
                out,
                "    k{k}_n{n} [label={}, fillcolor={}];",
                quote(&node.label),
                quote(color)
            );
        }
        for (from, to) in &graph.edges {
            let _ = writeln!(out, "    k{k}_n{from} -> k{k}_n{to};");
        }
        out.push_str("  }\n");
    }
    out.push_str("}\n");
    out
}
