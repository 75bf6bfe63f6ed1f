//! Files the library writes (maps, GeoPackages): always to a fresh temporary
//! name beside the target, then renamed, so a failure never leaves a partial
//! file and readers never see one.

use crate::error::io_error;
use crate::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Checks that `path` may be written: it must not be a directory, device or
/// other special file (writing as root over `/dev/null` would replace it),
/// and with `overwrite` false it must not exist.
pub fn check_target(path: &Path, overwrite: bool) -> Result<()> {
    match std::fs::metadata(path) {
        Ok(meta) if !meta.is_file() => Err(Error::Io(format!(
            "{} exists and is not a regular file; not replacing it",
            path.display()
        ))),
        Ok(_) if !overwrite => Err(Error::Exists(format!(
            "{} exists and overwrite is off",
            path.display()
        ))),
        _ => Ok(()),
    }
}

/// Writes `bytes` to `path` through a temporary sibling and a rename.
pub fn write_atomically(path: &Path, bytes: &[u8]) -> Result<()> {
    write_atomically_with(path, |w| w.write_all(bytes))
}

/// Writes `path` through a temporary sibling and a rename, its content
/// streamed by `write` into a buffered writer of the temporary file (so a
/// large document is never held whole in memory). An error of `write`
/// leaves no file behind.
pub fn write_atomically_with(
    path: &Path,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    check_target(path, true)?;
    let temp = TempFile::beside(path)?;
    let written = std::fs::File::create(temp.path()).and_then(|f| {
        let mut w = std::io::BufWriter::new(f);
        write(&mut w)?;
        w.into_inner().map_err(|e| e.into_error())?.sync_all()
    });
    written.map_err(|e| io_error(path, e))?;
    temp.persist(path, true)
}

/// A temporary file beside a target, removed when dropped unless persisted.
pub struct TempFile(PathBuf);

impl TempFile {
    /// Reserves a fresh name (created empty, never an existing file) in the
    /// directory of `target`.
    pub fn beside(target: &Path) -> Result<TempFile> {
        let dir = match target.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        let stem = target
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        for attempt in 0..100u32 {
            let candidate = dir.join(format!(".{stem}.{}-{attempt}.tmp", std::process::id()));
            // create_new reserves the name atomically against other writers.
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&candidate)
            {
                Ok(_) => return Ok(TempFile(candidate)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(io_error(&candidate, e)),
            }
        }
        Err(Error::Io(format!(
            "no temporary file name is free in {}",
            dir.display()
        )))
    }

    /// The temporary file's path.
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Moves the file to `target`. Without `overwrite`, a target that
    /// appeared meanwhile is kept (`Error::Exists`).
    pub fn persist(self, target: &Path, overwrite: bool) -> Result<()> {
        let result = if overwrite {
            std::fs::rename(&self.0, target).map_err(|e| io_error(target, e))
        } else {
            // hard_link fails if the target exists, so nothing is clobbered.
            match std::fs::hard_link(&self.0, target) {
                Ok(()) => Ok(()),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(Error::Exists(
                    format!("{} exists and overwrite is off", target.display()),
                )),
                // File systems without hard links: the earlier check must do.
                Err(_) => std::fs::rename(&self.0, target).map_err(|e| io_error(target, e)),
            }
        };
        drop(self); // removes the temporary name if it is still there
        result
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn special_files_are_never_replaced() {
        let e = write_atomically(Path::new("/dev/null"), b"x").unwrap_err();
        assert!(
            matches!(e, Error::Io(_)) && e.to_string().contains("not a regular file"),
            "{e}"
        );
        assert!(!std::fs::metadata("/dev/null").unwrap().is_file());
        let dir = std::env::temp_dir();
        assert!(write_atomically(&dir, b"x").is_err());
    }

    #[test]
    fn a_write_replaces_whole_and_leaves_no_temporary() {
        let dir = std::env::temp_dir().join(format!("hydroplot-output-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let target = dir.join("a.png");
        write_atomically(&target, b"first").unwrap();
        write_atomically(&target, b"second").unwrap();
        assert_eq!(std::fs::read(&target).unwrap(), b"second");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        assert!(matches!(
            check_target(&target, false),
            Err(Error::Exists(_))
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
