//! `cargo run --release -p ptx-parser --example throughput [FILE.ptx] [ITERATIONS]`: parses a
//! file (or the benchmark's generated 8 MB module) repeatedly and prints MB/s.

#[path = "../benches/common/mod.rs"]
mod common;

use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let text = match args.get(1).filter(|a| a.as_str() != "-") {
        Some(path) => std::fs::read_to_string(path).expect("readable file"),
        None => common::big_module(8 << 20),
    };
    let iterations: u32 = args.get(2).and_then(|n| n.parse().ok()).unwrap_or(10);
    let mut best = f64::INFINITY;
    for _ in 0..iterations {
        let t = Instant::now();
        match ptx_parser::parse(&text) {
            Ok(m) => std::hint::black_box(m.functions.len()),
            Err(e) => {
                eprintln!("error: {e}");
                std::process::exit(1);
            }
        };
        best = best.min(t.elapsed().as_secs_f64());
    }
    println!(
        "{} bytes, best {:.2} ms, {:.1} MB/s",
        text.len(),
        best * 1e3,
        text.len() as f64 / best / 1e6
    );
}
