//! Blessing the reference images of the pixel tests, as a reviewed step
//! outside the test run: the tests only ever read `tests/data/render/`.
//!
//! `render_candidates` runs `tests/it/render.rs` with `HYDROPLOT_RENDER_CANDIDATES`
//! pointing at `<target dir>/bless/`, where the tests write what they render;
//! `accept` copies those reviewed files over the references. Only `.png` files
//! are handled, and only the candidates this task asked the tests to write are
//! removed before a new run.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The variable through which the pixel tests learn where to write candidates.
const CANDIDATES_VAR: &str = "HYDROPLOT_RENDER_CANDIDATES";
/// The reference images, relative to the workspace root.
const REFERENCES: &str = "tests/data/render";

/// `<target dir>/bless`: `CARGO_TARGET_DIR` when set, else `<root>/target`.
fn candidates_dir(root: &Path) -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .map(|d| if d.is_absolute() { d } else { root.join(d) })
        .unwrap_or_else(|| root.join("target"))
        .join("bless")
}

/// The `.png` files directly in `dir`, sorted; none when `dir` is missing.
fn pngs(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("cannot list {}: {e}", dir.display())),
    };
    let mut out = Vec::new();
    for entry in entries {
        let path = entry
            .map_err(|e| format!("cannot list {}: {e}", dir.display()))?
            .path();
        if path.extension().is_some_and(|x| x == "png") {
            out.push(path);
        }
    }
    out.sort();
    Ok(out)
}

/// Renders fresh candidates into `<target dir>/bless/` and lists them next
/// to the references they would replace. The references are not written.
pub fn render_candidates(root: &Path) -> Result<(), String> {
    let dir = candidates_dir(root);
    for old in pngs(&dir)? {
        std::fs::remove_file(&old)
            .map_err(|e| format!("cannot remove the old candidate {}: {e}", old.display()))?;
    }
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let status = Command::new(cargo)
        .current_dir(root)
        .args(["test", "--test", "it", "render::"])
        .env(CANDIDATES_VAR, &dir)
        .status()
        .map_err(|e| format!("cannot run cargo test: {e}"))?;
    let candidates = pngs(&dir)?;
    if candidates.is_empty() {
        return Err(format!(
            "the render tests wrote no candidate to {} (cargo test {status})",
            dir.display()
        ));
    }
    if !status.success() {
        println!("the render tests failed ({status}): expected when the rendering changed");
    }
    println!("candidates for review:");
    for candidate in &candidates {
        let name = candidate.file_name().expect("a listed file has a name");
        let reference = root.join(REFERENCES).join(name);
        let state = match std::fs::read(&reference) {
            Err(_) => "new",
            Ok(bytes) if std::fs::read(candidate).ok().as_ref() == Some(&bytes) => "identical",
            Ok(_) => "differs",
        };
        println!(
            "  {}  ({state}; reference {})",
            candidate.display(),
            reference.display()
        );
    }
    println!("after review: cargo xtask bless-render --accept");
    Ok(())
}

/// Copies the candidates in `<target dir>/bless/` over the references.
pub fn accept(root: &Path) -> Result<(), String> {
    let dir = candidates_dir(root);
    let candidates = pngs(&dir)?;
    if candidates.is_empty() {
        return Err(format!(
            "no candidate in {}: run `cargo xtask bless-render` and review first",
            dir.display()
        ));
    }
    let references = root.join(REFERENCES);
    for candidate in candidates {
        let name = candidate.file_name().expect("a listed file has a name");
        let target = references.join(name);
        std::fs::copy(&candidate, &target).map_err(|e| {
            format!(
                "cannot copy {} to {}: {e}",
                candidate.display(),
                target.display()
            )
        })?;
        println!("blessed {}", target.display());
    }
    Ok(())
}
