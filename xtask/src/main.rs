//! Project chores that need more than cargo: `cargo xtask <task>`.
//!
//! Tasks:
//! - `header`: regenerate `include/hydroplot.h` with the pinned cbindgen from
//!   `cbindgen.toml`;
//! - `header --check`: regenerate in memory and fail, showing the first
//!   differing lines, when the checked-in header differs (CI runs this);
//! - `bless-render`: run the pixel tests (`tests/it/render.rs`) so that they
//!   write the images they render to `<target dir>/bless/`, and print the
//!   candidates' paths for review; the references are not touched;
//! - `bless-render --accept`: copy the reviewed candidates in
//!   `<target dir>/bless/` over `tests/data/render/` (nothing is rendered).
//!
//! Only `src/ffi` is parsed. The version macros live in `cbindgen.toml`
//! (`after_includes`) so that a plain
//! `cbindgen --config cbindgen.toml --output include/hydroplot.h src/ffi/mod.rs`
//! gives the same header; this task checks them against `Cargo.toml`.

mod bless;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

const HEADER: &str = "include/hydroplot.h";
const CONFIG: &str = "cbindgen.toml";
/// Only the C ABI module is parsed: the rest of the crate is Rust-only.
const FFI_ROOT: &str = "src/ffi/mod.rs";

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let result = match args.as_slice() {
        ["header"] => header(false),
        ["header", "--check"] => header(true),
        ["bless-render"] => bless::render_candidates(&root()),
        ["bless-render", "--accept"] => bless::accept(&root()),
        _ => Err(
            "usage: cargo xtask header [--check] | bless-render [--accept]".to_string(),
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("xtask: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The workspace root: the parent of this crate's directory.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

/// Generates the header; writes it, or with `check` compares it to the file.
fn header(check: bool) -> Result<(), String> {
    let root = root();
    let config_path = root.join(CONFIG);
    let config = cbindgen::Config::from_file(&config_path)?;
    let version = package_version(&root.join("Cargo.toml"))?;
    check_version_macros(config.after_includes.as_deref().unwrap_or(""), &version)?;

    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(root.join(FFI_ROOT))
        .generate()
        .map_err(|e| format!("cbindgen could not generate the header: {e}"))?;
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let generated = String::from_utf8(generated)
        .map_err(|_| "cbindgen wrote a header that is not UTF-8".to_string())?;
    if generated.contains("_private[") {
        return Err(
            "an opaque handle struct is declared #[repr(C)], so cbindgen emits its \
                    zero-sized field (not valid C): declare handle structs without #[repr(C)]"
                .to_string(),
        );
    }

    let header_path = root.join(HEADER);
    if check {
        let current = std::fs::read_to_string(&header_path)
            .map_err(|e| format!("cannot read {}: {e}", header_path.display()))?;
        match first_difference(&current, &generated) {
            None => {
                println!("{HEADER} is up to date");
                Ok(())
            }
            Some(report) => Err(format!(
                "{HEADER} differs from what cbindgen generates from the sources \
                 (run `cargo xtask header` and commit the result):\n{report}"
            )),
        }
    } else {
        std::fs::write(&header_path, &generated)
            .map_err(|e| format!("cannot write {}: {e}", header_path.display()))?;
        println!("wrote {HEADER}");
        Ok(())
    }
}

/// The `version` of the `[package]` table of a Cargo.toml.
fn package_version(manifest: &Path) -> Result<String, String> {
    let text = std::fs::read_to_string(manifest)
        .map_err(|e| format!("cannot read {}: {e}", manifest.display()))?;
    let mut in_package = false;
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            in_package = line == "[package]";
        } else if let (true, Some(rest)) = (in_package, line.strip_prefix("version")) {
            if let Some(value) = rest.trim_start().strip_prefix('=') {
                return Ok(value.trim().trim_matches('"').to_string());
            }
        }
    }
    Err(format!(
        "{} has no version in its [package] table",
        manifest.display()
    ))
}

/// The version macros the header must carry for `version` ("MAJOR.MINOR.PATCH").
fn version_macros(version: &str) -> Result<String, String> {
    let parts: Vec<&str> = version.split('.').collect();
    let [major, minor, patch] = parts.as_slice() else {
        return Err(format!(
            "version {version:?} in Cargo.toml is not MAJOR.MINOR.PATCH"
        ));
    };
    Ok(format!(
        "#define HYDROPLOT_VERSION_MAJOR {major}\n\
         #define HYDROPLOT_VERSION_MINOR {minor}\n\
         #define HYDROPLOT_VERSION_PATCH {patch}\n\
         #define HYDROPLOT_VERSION \"{version}\""
    ))
}

/// Fails unless `after_includes` defines exactly the macros for `version`.
fn check_version_macros(after_includes: &str, version: &str) -> Result<(), String> {
    let expected = version_macros(version)?;
    if after_includes.contains(&expected) {
        Ok(())
    } else {
        Err(format!(
            "the version macros in {CONFIG} (after_includes) do not match version {version} \
             of Cargo.toml; they must read:\n{expected}"
        ))
    }
}

/// Describes the first line where `current` and `generated` differ, or `None`.
fn first_difference(current: &str, generated: &str) -> Option<String> {
    if current == generated {
        return None;
    }
    let (old, new): (Vec<&str>, Vec<&str>) =
        (current.lines().collect(), generated.lines().collect());
    let at = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
    let show = |lines: &[&str], sign: char| -> String {
        lines
            .iter()
            .skip(at)
            .take(5)
            .map(|l| format!("{sign} {l}\n"))
            .collect()
    };
    Some(format!(
        "first difference at line {} ({} lines checked in, {} generated):\n{}{}",
        at + 1,
        old.len(),
        new.len(),
        show(&old, '-'),
        show(&new, '+')
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn macros_split_the_version() {
        let m = version_macros("0.12.3").unwrap();
        assert!(m.contains("#define HYDROPLOT_VERSION_MAJOR 0\n"));
        assert!(m.contains("#define HYDROPLOT_VERSION_MINOR 12\n"));
        assert!(m.contains("#define HYDROPLOT_VERSION_PATCH 3\n"));
        assert!(m.ends_with("#define HYDROPLOT_VERSION \"0.12.3\""));
        assert!(version_macros("1.2").is_err());
    }

    #[test]
    fn difference_names_the_first_differing_line() {
        assert_eq!(first_difference("a\nb\n", "a\nb\n"), None);
        let d = first_difference("a\nb\nc\n", "a\nx\nc\n").unwrap();
        assert!(d.starts_with("first difference at line 2 (3 lines checked in, 3 generated)"));
        assert!(d.contains("- b\n") && d.contains("+ x\n"));
    }
}
