//! Where the lines written for people go: stdout, or stderr when the command prints a JSON
//! document (`--json`), so that stdout then holds that document and nothing else.

use std::fmt;
use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};

static TO_STDERR: AtomicBool = AtomicBool::new(false);

/// From now on, lines for people go to stderr: stdout is the JSON document's.
pub fn to_stderr() {
    TO_STDERR.store(true, Ordering::Relaxed);
}

/// Writes `text` as it is (include the newlines) where lines for people go.
pub fn text(text: impl fmt::Display) {
    // A closed pipe is no reason to fail a run whose results are in its files.
    if TO_STDERR.load(Ordering::Relaxed) {
        let _ = write!(std::io::stderr(), "{text}");
    } else {
        let _ = write!(std::io::stdout(), "{text}");
    }
}

/// `println!` for the lines written for people: stdout, or stderr under `--json`.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::human::text(format_args!("{}\n", format_args!($($arg)*)))
    };
}
pub(crate) use say;
