//! A progress line on stderr for steps longer than a second (an execution, the NVRTC compiles
//! of a plan build), only when stderr is a terminal: a `\r` ticker in a log or a pipe is noise.

use std::io::{IsTerminal, Write};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Prints "WHAT ... Ns" every second until stopped; nothing when stderr is not a terminal.
pub struct Progress {
    ticker: Option<(Sender<()>, JoinHandle<()>)>,
}

impl Progress {
    /// Starts the ticker for `what` ("running NODE", ...), when stderr is a terminal.
    pub fn start(what: &str) -> Progress {
        if !std::io::stderr().is_terminal() {
            return Progress { ticker: None };
        }
        let (stop, ticks) = mpsc::channel::<()>();
        let what = what.to_owned();
        let thread = std::thread::spawn(move || {
            let started = Instant::now();
            let mut shown = false;
            while let Err(RecvTimeoutError::Timeout) = ticks.recv_timeout(Duration::from_secs(1)) {
                eprint!("\r  {what} ... {:.0} s", started.elapsed().as_secs_f64());
                let _ = std::io::stderr().flush();
                shown = true;
            }
            if shown {
                eprintln!();
            }
        });
        Progress {
            ticker: Some((stop, thread)),
        }
    }

    /// Stops the ticker and ends its line.
    pub fn stop(self) {
        if let Some((stop, thread)) = self.ticker {
            let _ = stop.send(());
            let _ = thread.join();
        }
    }
}
