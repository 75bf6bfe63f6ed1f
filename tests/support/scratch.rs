//! Folders of the tests' own, all of a test process's under one folder of
//! the system's temporary folder, `hydroplot-tests-<pid>`, which is
//! removed when the process exits: a run leaves nothing behind (the basin
//! parts tests alone copied 150 MB of samples a run, never removed). A
//! folder a killed run left is removed by the next run, once no process
//! has its number (Linux's `/proc` says so; elsewhere it stays).

use std::path::{Path, PathBuf};
use std::sync::Once;

/// The start of each test process's folder name.
const PREFIX: &str = "hydroplot-tests-";

/// A fresh, empty folder `name` (a test's own name: unique in the process)
/// in this process's folder, removed with it at exit.
pub fn temp_dir(name: &str) -> PathBuf {
    static CLEAN_AT_EXIT: Once = Once::new();
    CLEAN_AT_EXIT.call_once(|| {
        remove_orphans();
        // SAFETY: registers a plain function with no arguments, which the
        // C library calls once, at exit.
        unsafe {
            libc::atexit(remove_own);
        }
    });
    let dir = own().join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// This process's folder.
fn own() -> PathBuf {
    std::env::temp_dir().join(format!("{PREFIX}{}", std::process::id()))
}

extern "C" fn remove_own() {
    let _ = std::fs::remove_dir_all(own());
}

/// Removes the folders of test processes that are gone.
fn remove_orphans() {
    let proc = Path::new("/proc");
    if !proc.join("self").exists() {
        return;
    }
    let Ok(entries) = std::fs::read_dir(std::env::temp_dir()) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let pid = (name.to_str())
            .and_then(|n| n.strip_prefix(PREFIX))
            .and_then(|pid| pid.parse::<u32>().ok());
        if let Some(pid) = pid {
            if !proc.join(pid.to_string()).exists() {
                let _ = std::fs::remove_dir_all(entry.path());
            }
        }
    }
}
