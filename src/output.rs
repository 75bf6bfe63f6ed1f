//! Files the library writes (maps, GeoPackages, pages, caches): always to a
//! fresh temporary name beside the target, then renamed, so a failure never
//! leaves a partial file and readers never see one.
//!
//! A temporary name is `.<target name>.hydroplot-tmp.<pid>.<n>`: the pid of
//! the writing process can be read back from it, so the temporary files a
//! killed process left behind are removed by the next write to the same
//! target ([`TempFile::beside`]), and nothing else ever is.

use crate::cancel::{Cancelled, Stop};
use crate::error::io_error;
use crate::{Error, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The mark between a target's name and the pid in its temporary names.
const TEMP_MARK: &str = "hydroplot-tmp";

/// A path must be given: an empty one is `Error::InvalidArgument` naming
/// `what` (`"PNG file"`, `"hydro_data"`), where the system's error would
/// name no file at all.
pub fn check_path_given(path: &Path, what: &str) -> Result<()> {
    if path.as_os_str().is_empty() {
        Err(Error::InvalidArgument(format!("{what} path is empty")))
    } else {
        Ok(())
    }
}

/// Checks, before any work, that `path` may be written: it must not be a
/// directory, device or other special file (writing as root over
/// `/dev/null` would replace it), with `overwrite` false it must not exist,
/// and its folder must exist and take a new file (tried with a temporary
/// file, removed at once). Every message names `path`.
pub fn check_target(path: &Path, overwrite: bool) -> Result<()> {
    check_kind(path, overwrite)?;
    TempFile::beside(path).map(drop)
}

/// Checks the outputs of one call before any work: no two of `others` (the
/// call's inputs, caches and outputs checked elsewhere) and `outputs`, all
/// `(role, path)` pairs, name one file ([`crate::paths::check_distinct`]),
/// and each of `outputs` passes [`check_target`].
pub fn check_outputs(
    others: &[(&str, &Path)],
    outputs: &[(&str, &Path)],
    overwrite: bool,
) -> Result<()> {
    let all: Vec<(&str, &Path)> = others.iter().chain(outputs).copied().collect();
    crate::paths::check_distinct(&all)?;
    outputs
        .iter()
        .try_for_each(|(_, path)| check_target(path, overwrite))
}

/// The part of [`check_target`] that looks only at `path` itself. A
/// symbolic link is refused: the rename that writes the file would replace
/// the link itself (a file the user made) and leave the file it points to
/// as it was.
fn check_kind(path: &Path, overwrite: bool) -> Result<()> {
    if let Ok(to) = std::fs::read_link(path) {
        return Err(Error::Io(format!(
            "{} is a symbolic link (to {}); not replacing it: give the path of the file itself",
            path.display(),
            to.display()
        )));
    }
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
    write_atomically_with(path, true, |w| w.write_all(bytes))
}

/// Writes `path` through a temporary sibling and a rename, its content
/// streamed by `write` into a buffered writer of the temporary file (so a
/// large document is never held whole in memory). An error of `write`
/// leaves no file behind. With `overwrite` false an existing `path` is
/// kept (`Error::Exists`), even one that appears while writing.
pub fn write_atomically_with(
    path: &Path,
    overwrite: bool,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    write_atomically_until(path, overwrite, &Stop::never(), write)
}

/// [`write_atomically_with`] for a call that can be cancelled: once `stop`
/// is, the writing fails at its next buffer written out and nothing is
/// left (`Error::Cancelled`); a cancel after the last byte still leaves
/// `path` as it was.
pub fn write_atomically_until(
    path: &Path,
    overwrite: bool,
    stop: &Stop,
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> Result<()> {
    check_kind(path, overwrite)?;
    let temp = TempFile::beside(path)?;
    let written = std::fs::OpenOptions::new()
        .write(true)
        .truncate(true)
        .open(temp.path())
        .and_then(|file| {
            let mut w = std::io::BufWriter::new(Watched { file, stop });
            write(&mut w)?;
            w.into_inner().map_err(|e| e.into_error())?.file.sync_all()
        });
    stop.check()?;
    written.map_err(|e| io_error(path, e))?;
    temp.persist(path, overwrite)
}

/// A file whose writes fail once its call is cancelled.
struct Watched<'a> {
    file: std::fs::File,
    stop: &'a Stop,
}

impl Write for Watched<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match self.stop.is_requested() {
            true => Err(std::io::Error::other(Cancelled::MESSAGE)),
            false => self.file.write(buf),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

/// A temporary file beside a target, removed when dropped unless persisted.
pub struct TempFile(PathBuf);

/// The `<n>` of this process's next temporary name ([`TempFile::beside`]).
static NEXT_TEMP: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

impl TempFile {
    /// Reserves a fresh name (created empty, never an existing file) in the
    /// directory of `target`, after removing the temporary files of
    /// `target` whose process is gone ([`remove_stale_temps`]). A folder
    /// that is missing, not a folder or not writable is `Error::Io` naming
    /// `target`.
    pub fn beside(target: &Path) -> Result<TempFile> {
        let dir = folder_of(target);
        let prefix = temp_prefix(target);
        remove_stale_temps(dir, &prefix);
        for _ in 0..100 {
            // A number never used before in this process: a name another
            // thread renamed away is never taken again, so that thread's
            // clean-up cannot remove this file.
            let n = NEXT_TEMP.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            let candidate = dir.join(format!("{prefix}{}.{n}", std::process::id()));
            // create_new reserves the name atomically against other writers.
            match std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .open(&candidate)
            {
                Ok(_) => return Ok(TempFile(candidate)),
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(folder_error(target, dir, e)),
            }
        }
        Err(Error::Io(format!(
            "cannot write {}: no temporary file name is free in {}",
            target.display(),
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
        // Removes the temporary name if it is still there; a name that was
        // renamed away is never given again ([`TempFile::beside`]).
        drop(self);
        result
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The folder a target is written in (`.` for a bare file name).
fn folder_of(target: &Path) -> &Path {
    match target.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// `.<target name>.hydroplot-tmp.`: what every temporary name of `target`
/// starts with, followed by `<pid>.<n>`.
fn temp_prefix(target: &Path) -> String {
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    format!(".{name}.{TEMP_MARK}.")
}

/// Why a temporary file cannot be made in `dir`, naming the target.
fn folder_error(target: &Path, dir: &Path, e: std::io::Error) -> Error {
    let why = match std::fs::metadata(dir) {
        Err(_) => format!("its folder {} does not exist", dir.display()),
        Ok(m) if !m.is_dir() => format!("{} is not a folder", dir.display()),
        Ok(_) => format!(
            "its folder {} does not take a new file ({e})",
            dir.display()
        ),
    };
    Error::Io(format!("cannot write {}: {why}", target.display()))
}

/// Removes the files of `dir` named exactly `<prefix><pid>.<n>` (both
/// decimal) that are regular files and whose process `pid` is gone: the
/// temporary files of a writer that was killed. A live process's files,
/// other names and anything that is not a plain file are never touched;
/// failures are ignored (the write goes on beside them).
fn remove_stale_temps(dir: &Path, prefix: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(prefix))
            .and_then(temp_owner)
        else {
            continue;
        };
        let plain_file = entry.file_type().is_ok_and(|t| t.is_file());
        if plain_file && process_is_gone(pid) {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The pid of a temporary name's tail `<pid>.<n>`, when it is exactly that.
fn temp_owner(tail: &str) -> Option<u32> {
    let (pid, n) = tail.split_once('.')?;
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if digits(pid) && digits(n) {
        pid.parse().ok()
    } else {
        None
    }
}

/// Whether no process `pid` exists (`kill(pid, 0)` fails with `ESRCH`).
/// Only that answer counts: a process we may not signal is alive.
fn process_is_gone(pid: u32) -> bool {
    #[cfg(unix)]
    {
        let Ok(pid) = libc::pid_t::try_from(pid) else {
            return false;
        };
        if pid <= 0 {
            return false;
        }
        // SAFETY: signal 0 only checks that the process exists.
        let status = unsafe { libc::kill(pid, 0) };
        status == -1 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
    }
    #[cfg(not(unix))]
    {
        let _ = pid;
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A new empty folder of this test process under the system's temp dir.
    fn fresh_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("hydroplot-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

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
    fn a_cancelled_write_leaves_the_old_file_and_no_temporary() {
        let dir = fresh_dir("output-cancel");
        let target = dir.join("big.json");
        write_atomically(&target, b"old").unwrap();
        let canceller = crate::cancel::Canceller::new();
        let stop = canceller.stop_for_call();
        let e = write_atomically_until(&target, true, &stop, |w| {
            w.write_all(&[b' '; 100_000])?;
            canceller.cancel();
            // More than the buffer holds: the next write out fails.
            w.write_all(&[b' '; 100_000])
        })
        .unwrap_err();
        assert!(matches!(e, Error::Cancelled(_)), "{e:?}");
        // A cancel after the last byte: still nothing written.
        let e = write_atomically_until(&target, true, &stop, |w| w.write_all(b"new")).unwrap_err();
        assert!(matches!(e, Error::Cancelled(_)), "{e:?}");
        assert_eq!(std::fs::read(&target).unwrap(), b"old");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_write_replaces_whole_and_leaves_no_temporary() {
        let dir = fresh_dir("output");
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

    #[test]
    fn a_renamed_temporary_name_is_never_given_again() {
        // Were it given again, the first writer's clean-up after its rename
        // could remove the second writer's file (two threads indexing one
        // GeoPackage once lost their index that way).
        let dir = fresh_dir("names");
        let target = dir.join("a.hydroplot-index");
        let first = TempFile::beside(&target).unwrap();
        let first_name = first.path().to_path_buf();
        first.persist(&target, true).unwrap();
        let second = TempFile::beside(&target).unwrap();
        assert_ne!(second.path(), first_name);
        drop(second);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_missing_or_unusable_folder_is_refused_naming_the_target() {
        let dir = fresh_dir("folder");
        std::fs::write(dir.join("plain"), b"x").unwrap();
        for (target, why) in [
            (dir.join("no/such/out.gpkg"), "does not exist"),
            (dir.join("plain/out.png"), "is not a folder"),
        ] {
            let e = check_target(&target, true).unwrap_err();
            let m = e.to_string();
            assert!(matches!(e, Error::Io(_)), "{m}");
            assert!(
                m.contains(&target.display().to_string()) && m.contains(why),
                "{m}"
            );
            assert!(!m.contains(TEMP_MARK), "{m}");
        }
        assert!(check_target(&dir.join("out.png"), true).is_ok());
        // The probe leaves nothing behind.
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn only_the_temporary_files_of_dead_processes_are_removed() {
        let dir = fresh_dir("stale");
        // A process that has ended and been reaped: its pid is gone.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let dead = child.id();
        child.wait().unwrap();
        let live = std::process::id();
        let stale = format!(".a.png.hydroplot-tmp.{dead}.0");
        let kept = [
            format!(".a.png.hydroplot-tmp.{live}.7"), // a live writer's
            format!(".a.png.hydroplot-tmp.{dead}.0.bak"), // not the pattern
            format!(".b.png.hydroplot-tmp.{dead}.0"), // another target's
            format!(".a.png.hydroplot-tmp.{dead}.x"), // not the pattern
            "a.png.hydroplot-tmp.1.0".to_string(),    // not hidden
        ];
        for name in kept.iter().chain([&stale]) {
            std::fs::write(dir.join(name), b"user bytes").unwrap();
        }
        // A folder with the pattern's name is not a temporary file.
        std::fs::create_dir(dir.join(format!(".a.png.hydroplot-tmp.{dead}.1"))).unwrap();
        write_atomically(&dir.join("a.png"), b"png").unwrap();
        assert!(!dir.join(&stale).exists());
        for name in &kept {
            assert_eq!(
                std::fs::read(dir.join(name)).unwrap(),
                b"user bytes",
                "{name}"
            );
        }
        assert!(dir.join(format!(".a.png.hydroplot-tmp.{dead}.1")).is_dir());
        assert_eq!(std::fs::read(dir.join("a.png")).unwrap(), b"png");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn without_overwrite_an_existing_file_is_kept() {
        let dir = fresh_dir("keep");
        let target = dir.join("a.png");
        std::fs::write(&target, b"mine").unwrap();
        let e = write_atomically_with(&target, false, |w| w.write_all(b"new")).unwrap_err();
        assert!(matches!(e, Error::Exists(_)), "{e}");
        assert_eq!(std::fs::read(&target).unwrap(), b"mine");
        assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 1);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
