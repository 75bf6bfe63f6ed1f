//! docs/architecture.md stays true: each top-level module of `src/` uses
//! only modules of lower layers (so there is no circle between modules).

use std::collections::BTreeSet;
use std::path::Path;

/// The layers of docs/architecture.md, bottom up.
const LAYERS: &[&[&str]] = &[
    &["error", "config", "observer", "feature"],
    &[
        "http",
        "parallel",
        "output",
        "paths",
        "crs",
        "collection",
        "network",
        "table",
        "points",
    ],
    &["context", "gpkg"],
    &["render", "cache"],
    &["trace"],
    &["services", "arrow"],
    &["plot", "lookup"],
    &["html"],
    &["ffi"],
];

fn layer_of(module: &str) -> usize {
    LAYERS
        .iter()
        .position(|l| l.contains(&module))
        .unwrap_or_else(|| panic!("module {module} is not in docs/architecture.md's layers"))
}

/// The `crate::<module>` names a source file uses, outside comments and its test module.
fn uses(source: &str) -> BTreeSet<String> {
    let code = source.split("#[cfg(test)]").next().unwrap_or(source);
    code.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .flat_map(|l| l.match_indices("crate::").map(move |(i, _)| &l[i + 7..]))
        .map(|rest| {
            rest.chars()
                .take_while(|c| c.is_ascii_lowercase() || *c == '_')
                .collect()
        })
        .filter(|m: &String| !m.is_empty())
        .collect()
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn every_module_uses_only_lower_layers() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut wrong = Vec::new();
    for file in files {
        let relative = file.strip_prefix(&src).unwrap();
        let first = relative
            .components()
            .next()
            .unwrap()
            .as_os_str()
            .to_string_lossy();
        let module = first.trim_end_matches(".rs");
        if module == "lib" || module == "bin" {
            continue;
        }
        for used in uses(&std::fs::read_to_string(&file).unwrap()) {
            if used != module && layer_of(&used) >= layer_of(module) {
                wrong.push(format!("{} uses crate::{used}", relative.display()));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "arrows against the layers:\n{}",
        wrong.join("\n")
    );
}
