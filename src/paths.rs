//! Path identity: whether two paths name one file. Inputs, outputs and
//! caches are compared with it before anything is read or written, so no
//! output or cache can ever land on an input.
//!
//! Two paths name one file when both exist and share device and inode (so
//! hard links, symbolic links, `./x.gpkg` and `x.gpkg` all count), or when
//! their canonical forms are equal (for files that do not exist yet).

use crate::{Error, Result};
use std::path::{Component, Path, PathBuf};

/// The canonical form of `path`: the real path of the file when it exists;
/// else the real path of its directory joined with its name; else the path
/// made absolute with `.` and `..` resolved lexically.
pub fn canonical(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    if let (Some(dir), Some(name)) = (absolute.parent(), absolute.file_name()) {
        if let Ok(real_dir) = std::fs::canonicalize(dir) {
            return real_dir.join(name);
        }
    }
    let mut out = PathBuf::new();
    for component in absolute.components() {
        match component {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

/// Whether `a` and `b` name the same file.
pub fn same_file(a: &Path, b: &Path) -> bool {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        if let (Ok(ma), Ok(mb)) = (std::fs::metadata(a), std::fs::metadata(b)) {
            return ma.dev() == mb.dev() && ma.ino() == mb.ino();
        }
    }
    canonical(a) == canonical(b)
}

/// `files` (role, path), owned, as the borrowed pairs [`check_distinct`]
/// and `output::check_outputs` take.
pub fn as_pairs(files: &[(String, PathBuf)]) -> impl Iterator<Item = (&str, &Path)> {
    files
        .iter()
        .map(|(role, path)| (role.as_str(), path.as_path()))
}

/// Checks that no two of `files` — `(role, path)` pairs such as
/// `("hydro_data", input)`, `("gpkg", output)` — name the same file;
/// `Error::InvalidArgument` naming both roles otherwise.
pub fn check_distinct(files: &[(&str, &Path)]) -> Result<()> {
    for (i, (role_a, a)) in files.iter().enumerate() {
        for (role_b, b) in &files[i + 1..] {
            if same_file(a, b) {
                return Err(Error::InvalidArgument(format!(
                    "{role_a} ({}) and {role_b} ({}) name the same file; give each its own path so neither destroys the other",
                    a.display(),
                    b.display()
                )));
            }
        }
    }
    Ok(())
}

/// Refuses, as `role` (`"hydro_data"`, `"cache_data"`), an existing `path`
/// that is not a regular file: a FIFO (whose open would wait for a writer
/// forever), a directory, a device or a socket. Looks with `stat` (which
/// follows links and opens nothing); `Error::InvalidArgument` naming the
/// path and what it is. A path that does not exist passes: its open says so.
pub fn check_regular(path: &Path, role: &str) -> Result<()> {
    let Ok(meta) = std::fs::metadata(path) else {
        return Ok(());
    };
    if meta.is_file() {
        return Ok(());
    }
    Err(Error::InvalidArgument(format!(
        "{role} {} is {}, not a regular file; give the path of a file",
        path.display(),
        kind(&meta.file_type())
    )))
}

/// What a file that is not a regular file is, in words.
fn kind(t: &std::fs::FileType) -> &'static str {
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if t.is_fifo() {
            return "a FIFO (named pipe)";
        }
        if t.is_char_device() || t.is_block_device() {
            return "a device";
        }
        if t.is_socket() {
            return "a socket";
        }
    }
    if t.is_dir() {
        "a directory"
    } else {
        "a special file"
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spellings_links_and_missing_files_compare_canonically() {
        let dir = std::env::temp_dir().join(format!("hydroplot-paths-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        let file = dir.join("x.gpkg");
        std::fs::write(&file, b"x").unwrap();
        let dotted = dir.join("sub/../././x.gpkg");
        assert!(same_file(&file, &dotted));
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(&file, dir.join("link.gpkg")).unwrap();
            assert!(same_file(&file, &dir.join("link.gpkg")));
            std::fs::hard_link(&file, dir.join("hard.gpkg")).unwrap();
            assert!(same_file(&dir.join("hard.gpkg"), &dir.join("link.gpkg")));
        }
        // Neither exists yet: compared by their canonical spellings.
        assert!(same_file(
            &dir.join("new.cache"),
            &dir.join("sub/../new.cache")
        ));
        assert!(!same_file(&dir.join("new.cache"), &dir.join("other.cache")));
        assert!(same_file(&dir.join("no/such/../a"), &dir.join("no/a")));
        let e = check_distinct(&[("hydro_data", &file), ("cache_data", &dotted)]).unwrap_err();
        assert!(
            matches!(&e, Error::InvalidArgument(m) if m.contains("hydro_data") && m.contains("cache_data")),
            "{e}"
        );
        assert!(check_distinct(&[("hydro_data", &file), ("gpkg", &dir.join("out.gpkg"))]).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
