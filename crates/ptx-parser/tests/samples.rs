//! Parses every `.ptx` file under the repository's `samples/` and `corpus/build/`
//! directories, if they exist (zero files is a pass).

use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else if p.extension().is_some_and(|x| x == "ptx") {
            out.push(p);
        }
    }
}

#[test]
fn every_sample_parses() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let mut files = Vec::new();
    collect(&repo.join("samples"), &mut files);
    collect(&repo.join("corpus/build"), &mut files);
    files.sort();
    let mut failures = Vec::new();
    for f in &files {
        let Ok(text) = std::fs::read_to_string(f) else {
            continue;
        };
        match ptx_parser::parse(&text) {
            Ok(m) => assert!(
                !m.functions.is_empty() || text.trim().is_empty(),
                "{}: no functions",
                f.display()
            ),
            Err(e) => failures.push(format!("{}:{e}", f.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
