//! docs/architecture.md stays true: each top-level module of `src/` uses
//! only modules of lower layers (so there is no circle between modules),
//! no two files of `src/` import each other, even through others, and the
//! files of the dev-only mock crate import each other in no circle and use
//! none of the library's code that reads, parses or computes data.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The layers of docs/architecture.md, bottom up.
const LAYERS: &[&[&str]] = &[
    &["url", "cancel"],
    &["error", "config", "observer", "feature", "tls"],
    &[
        "http", "parallel", "paths", "crs", "network", "table", "points",
    ],
    &["context", "output", "collection"],
    &["render", "cache", "gpkg"],
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

/// Rule 1: `extern "C"` only in `ffi/` (what hydroplot exports) and in
/// these files: the SQLite VFS and busy handler whose callbacks SQLite
/// calls, and the CLI's signal handler (the program's, not the library's).
const ALLOWED_C: [&str; 3] = [
    "gpkg/readahead.rs",
    "gpkg/watch.rs",
    "bin/hydroplot/interrupt.rs",
];

#[test]
fn c_functions_live_only_in_ffi_and_the_sqlite_vfs() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let outside: Vec<String> = (files.iter())
        .map(|f| {
            f.strip_prefix(&src)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/")
        })
        .filter(|f| !f.starts_with("ffi/") && !ALLOWED_C.contains(&f.as_str()))
        .filter(|f| {
            code_of(&std::fs::read_to_string(src.join(f)).unwrap()).contains("extern \"C\"")
        })
        .collect();
    assert!(outside.is_empty(), "extern \"C\" outside ffi/: {outside:?}");
}

/// The code of a source file without comments and its test module.
fn code_of(source: &str) -> String {
    let code = source.split("#[cfg(test)]").next().unwrap_or(source);
    code.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The first path segments after each `prefix` in `code`: `a` for
/// `prefix a::b`, `a` and `b` for `prefix {a, b::c}`.
fn segments_after(code: &str, prefix: &str) -> BTreeSet<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    code.match_indices(prefix)
        .filter(|(i, _)| {
            // `prefix` as a whole path segment (not `hydroplot::http::`).
            let before = code[..*i].chars().next_back();
            !before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':')
        })
        .flat_map(|(i, _)| {
            let rest = &code[i + prefix.len()..];
            match rest.strip_prefix('{') {
                Some(group) => group
                    .split('}')
                    .next()
                    .unwrap_or("")
                    .split(',')
                    .map(ident)
                    .collect(),
                None => vec![ident(rest)],
            }
        })
        .filter(|s| !s.is_empty())
        .collect()
}

/// A circle in `edges`, as the files along it, if there is one.
fn find_circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        node: &str,
        edges: &BTreeMap<String, BTreeSet<String>>,
        path: &mut Vec<String>,
        done: &mut BTreeSet<String>,
    ) -> Option<Vec<String>> {
        if let Some(at) = path.iter().position(|n| n == node) {
            let mut circle = path[at..].to_vec();
            circle.push(node.to_string());
            return Some(circle);
        }
        if done.contains(node) {
            return None;
        }
        path.push(node.to_string());
        for next in edges.get(node).into_iter().flatten() {
            if let Some(circle) = visit(next, edges, path, done) {
                return Some(circle);
            }
        }
        path.pop();
        done.insert(node.to_string());
        None
    }
    let mut done = BTreeSet::new();
    edges
        .keys()
        .find_map(|node| visit(node, edges, &mut Vec::new(), &mut done))
}

/// Which files of the mock library use which: `lib` (the crate root) uses
/// module `m` where it writes `m::`; a module uses the module it names with
/// `super::` or `crate::`, and the root for any other item named that way.
fn mock_file_uses() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("mock/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let code: BTreeMap<String, String> = files
        .iter()
        .filter(|f| !f.ends_with("main.rs")) // the binary, another crate
        .map(|f| {
            let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
            (stem, code_of(&std::fs::read_to_string(f).unwrap()))
        })
        .collect();
    let modules: BTreeSet<&String> = code.keys().filter(|m| *m != "lib").collect();
    let mut edges = BTreeMap::new();
    for (file, code) in &code {
        let used: BTreeSet<String> = if file == "lib" {
            modules
                .iter()
                .filter(|m| !segments_after(code, &format!("{m}::")).is_empty())
                .map(|m| m.to_string())
                .collect()
        } else {
            let mut named = segments_after(code, "super::");
            named.extend(segments_after(code, "crate::"));
            named
                .into_iter()
                .map(|n| {
                    if modules.contains(&n) {
                        n
                    } else {
                        "lib".into()
                    }
                })
                .filter(|n| n != file)
                .collect()
        };
        edges.insert(file.clone(), used);
    }
    edges
}

#[test]
fn the_mock_files_import_each_other_in_no_circle() {
    let edges = mock_file_uses();
    assert!(
        edges["http"].contains("fabric") && edges["lib"].contains("http"),
        "the check sees the router's arrows: {edges:?}"
    );
    if let Some(circle) = find_circle(&edges) {
        panic!(
            "the mock's files import in a circle: {}",
            circle.join(" -> ")
        );
    }
}

/// The module path of each file of `src/` (`plot/outlets` for
/// `src/plot/outlets.rs`, `plot` for `src/plot/mod.rs`), with its code;
/// the crate root and the program (`bin/`) left out.
fn src_modules() -> BTreeMap<Vec<String>, String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    files
        .iter()
        .filter_map(|f| {
            let relative = f.strip_prefix(&src).unwrap().with_extension("");
            let mut path: Vec<String> = (relative.components())
                .map(|c| c.as_os_str().to_string_lossy().into_owned())
                .collect();
            if path[0] == "bin" || path == ["lib"] {
                return None;
            }
            if path.last().is_some_and(|l| l == "mod") {
                path.pop();
            }
            Some((path, code_of(&std::fs::read_to_string(f).unwrap())))
        })
        .collect()
}

/// The paths named in `code` from `at` on: `a::b` gives `[a, b]`, and a
/// group `a::{b, c::d}` gives `[a, b]` and `[a, c, d]`.
fn paths_from(code: &str, prefix: Vec<String>, out: &mut Vec<Vec<String>>) {
    let mut path = prefix;
    let mut rest = code;
    loop {
        rest = rest.trim_start();
        let ident: String = (rest.chars())
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        if !ident.is_empty() {
            rest = &rest[ident.len()..];
            path.push(ident);
            match rest.strip_prefix("::") {
                Some(more) => rest = more,
                None => break,
            }
        } else if let Some(group) = rest.strip_prefix('{') {
            let (mut depth, mut start) = (0, 0);
            for (i, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        paths_from(&group[start..i], path.clone(), out);
                        return;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        paths_from(&group[start..i], path.clone(), out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            return;
        } else {
            break;
        }
    }
    out.push(path);
}

/// Which files of `src/` use which: a file uses the file that defines the
/// longest module path it names through `crate::`, `super::` or `self::`,
/// or through a child module's bare name (`child::item` in a `mod.rs`).
fn src_file_uses() -> BTreeMap<String, BTreeSet<String>> {
    let modules = src_modules();
    let mut edges = BTreeMap::new();
    for (module, code) in &modules {
        let mut named = Vec::new();
        let mut from = |anchor: &str, base: Vec<String>| {
            for (i, _) in code.match_indices(anchor) {
                let before = code[..i].chars().next_back();
                if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                    continue;
                }
                let mut base = base.clone();
                let mut rest = &code[i + anchor.len()..];
                while let Some(more) = rest.strip_prefix("super::").filter(|_| anchor == "super::")
                {
                    base.pop();
                    rest = more;
                }
                paths_from(rest, base, &mut named);
            }
        };
        let parent = module[..module.len() - 1].to_vec();
        from("crate::", Vec::new());
        from("super::", parent);
        from("self::", module.clone());
        for child in modules
            .keys()
            .filter(|m| m.len() == module.len() + 1 && m.starts_with(module))
        {
            from(&format!("{}::", child[module.len()]), module.clone());
        }
        let used: BTreeSet<String> = (named.iter())
            .filter_map(|path| {
                (1..=path.len())
                    .rev()
                    .map(|n| path[..n].to_vec())
                    .find(|p| modules.contains_key(p))
            })
            .filter(|p| p != module)
            .map(|p| p.join("/"))
            .collect();
        edges.insert(module.join("/"), used);
    }
    edges
}

#[test]
fn the_files_of_src_import_each_other_in_no_circle() {
    let edges = src_file_uses();
    assert!(
        edges["plot/local"].contains("plot/outlets") && edges["ffi/context"].contains("context"),
        "the check sees the arrows: {edges:?}"
    );
    if let Some(circle) = find_circle(&edges) {
        panic!("files of src/ import in a circle: {}", circle.join(" -> "));
    }
}

/// The library's modules that read, parse or compute data: the mock must
/// do all of that itself, or its "local equals service" tests would compare
/// the library with itself. (It may name things with `collection` and
/// `config`, and build a client's `context`.)
const CODE_UNDER_TEST: [&str; 5] = ["gpkg", "table", "feature", "http", "render"];

/// The items a `use` group or path names first: `a` for `a::b`, and for
/// `{a::{b, c}, d}` `a` and `d` (commas inside nested braces ignored).
fn first_segments(rest: &str) -> Vec<String> {
    let ident = |s: &str| -> String {
        s.trim_start()
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let Some(group) = rest.trim_start().strip_prefix('{') else {
        return vec![ident(rest)];
    };
    let (mut depth, mut items, mut start) = (0usize, Vec::new(), 0);
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => {
                items.push(ident(&group[start..i]));
                break;
            }
            '}' => depth -= 1,
            ',' if depth == 0 => {
                items.push(ident(&group[start..i]));
                start = i + 1;
            }
            _ => {}
        }
    }
    items
}

/// What each file of `mock/src` (the binary's too, test modules included)
/// takes from the library's modules in [`CODE_UNDER_TEST`], or from a
/// renamed library (`use hydroplot as h`, `hydroplot::{self, ..}`), which
/// this check could not follow.
fn mock_uses_of_code_under_test() -> Vec<String> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("mock/src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut found = Vec::new();
    for file in files {
        let source = std::fs::read_to_string(&file).unwrap();
        let code: String = (source.lines())
            .map(|l| l.split("//").next().unwrap_or(""))
            .collect::<Vec<_>>()
            .join("\n")
            .replace("::hydroplot::", " hydroplot::");
        let name = file.strip_prefix(&src).unwrap().display().to_string();
        if code.contains("hydroplot as ") {
            found.push(format!("{name}: renames the hydroplot crate"));
        }
        for (at, _) in code.match_indices("hydroplot::") {
            let before = code[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue; // another crate's path, such as `hydroplot_mock::`
            }
            for module in first_segments(&code[at + "hydroplot::".len()..]) {
                if CODE_UNDER_TEST.contains(&module.as_str()) || module == "self" {
                    found.push(format!("{name}: hydroplot::{module}"));
                }
            }
        }
    }
    found
}

#[test]
fn the_mock_shares_no_code_with_the_library_it_tests() {
    assert_eq!(
        first_segments("{config::{Config, Names}, feature::Feature};"),
        ["config", "feature"],
        "the check reads nested use groups"
    );
    let found = mock_uses_of_code_under_test();
    assert!(
        found.is_empty(),
        "the mock reads, parses or computes with the library under test:\n{}",
        found.join("\n")
    );
}
