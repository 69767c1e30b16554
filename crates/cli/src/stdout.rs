//! Standard output for reports. `println!` panics when the reader has gone (`rime check *.json
//! | head -1`: "failed printing to stdout: Broken pipe" and a backtrace, exit 101); [`outln!`]
//! and [`out!`] end the process instead, quietly and with the status a SIGPIPE death has in a
//! shell (141), as `cat` and other Unix tools do. Other write errors are reported, exit 1.

use std::fmt;
use std::io::{self, Write};

/// Writes `args` to stdout; on a closed pipe or another write error, ends the process.
pub fn write(args: fmt::Arguments<'_>, newline: bool) {
    let mut out = io::stdout().lock();
    let result = out
        .write_fmt(args)
        .and_then(|()| {
            if newline {
                out.write_all(b"\n")
            } else {
                Ok(())
            }
        })
        .and_then(|()| if newline { out.flush() } else { Ok(()) });
    if let Err(e) = result {
        closed(&e);
    }
}

fn closed(e: &io::Error) -> ! {
    if e.kind() == io::ErrorKind::BrokenPipe {
        std::process::exit(128 + 13); // what a shell reports for a SIGPIPE death
    }
    eprintln!("error: writing to standard output: {e}");
    std::process::exit(1);
}

/// `println!` that ends the process quietly when stdout is closed.
macro_rules! outln {
    () => {
        $crate::stdout::write(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!($($arg)*), true)
    };
}

/// `print!` that ends the process quietly when stdout is closed.
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::stdout::write(format_args!($($arg)*), false)
    };
}
