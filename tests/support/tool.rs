//! The outside tools some tests judge by (ogrinfo, gdalinfo, Chromium): when
//! one is missing, a test skips locally, saying so on stderr, and fails in CI
//! (`CI=true`), naming what is missing; a test never passes by skipping there.

use std::process::Command;

/// `found`, or when it is `None`: a panic naming `what` under `CI=true`, else
/// a note on stderr and `None`, on which the caller returns (a local skip).
/// `what` names the tool and its package ("ogrinfo (Debian gdal-bin)").
pub fn required<T>(found: Option<T>, what: &str) -> Option<T> {
    required_under(std::env::var("CI").ok().as_deref(), found, what)
}

/// [`required`] with the value of `CI` given.
pub fn required_under<T>(ci: Option<&str>, found: Option<T>, what: &str) -> Option<T> {
    if found.is_none() {
        assert!(
            ci != Some("true"),
            "{what} is missing, and CI=true: in CI a missing tool is a failure, never a skip"
        );
        eprintln!("skipped: {what} is missing (in CI, CI=true, this fails)");
    }
    found
}

/// `Some(())` when the program `name` starts (`name --version`), for [`required`].
pub fn runs(name: &str) -> Option<()> {
    Command::new(name)
        .arg("--version")
        .output()
        .ok()
        .map(|_| ())
}
