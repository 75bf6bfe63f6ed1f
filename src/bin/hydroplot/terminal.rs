//! The terminal as an observer of the core: progress as one rewritten
//! line on stderr when it is a terminal, and warnings when asked.

use hydroplot::context::{LogLevel, Observer};
use std::io::IsTerminal;
use std::sync::Arc;

/// Progress as one rewritten line when stderr is a terminal; warnings to
/// stderr when `warnings` (a plot's come with its result instead).
pub struct Terminal {
    tty: bool,
    warnings: bool,
}

impl Terminal {
    /// The observer of stderr, showing warnings or not.
    pub fn on_stderr(warnings: bool) -> Arc<dyn Observer> {
        Arc::new(Terminal {
            tty: std::io::stderr().is_terminal(),
            warnings,
        })
    }

    fn clear_line(&self) {
        if self.tty {
            note_part!("\r\x1b[K");
        }
    }
}

impl Observer for Terminal {
    fn log(&self, level: LogLevel, message: &str) {
        if self.warnings && level <= LogLevel::Warning {
            self.clear_line();
            note!("warning: {message}");
        }
    }

    /// A stage's start with nothing known yet (0 of 0) shows nothing.
    fn progress(&self, stage: &str, done: u64, total: u64) {
        if self.tty && (done, total) != (0, 0) {
            note_part!("\r{stage}: {done} of {total}");
            if done == total {
                note!();
            }
        }
    }
}
