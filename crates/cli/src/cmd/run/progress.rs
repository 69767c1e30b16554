//! A progress line on stderr for executions longer than a second.

use std::io::Write;
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Prints "running NODE ... Ns" every second until stopped.
pub struct Progress {
    stop: Sender<()>,
    thread: JoinHandle<()>,
}

impl Progress {
    /// Starts the ticker for `what`.
    pub fn start(what: &str) -> Progress {
        let (stop, ticks) = mpsc::channel::<()>();
        let what = what.to_owned();
        let thread = std::thread::spawn(move || {
            let started = Instant::now();
            let mut shown = false;
            while let Err(RecvTimeoutError::Timeout) = ticks.recv_timeout(Duration::from_secs(1)) {
                eprint!(
                    "\r  running {what} ... {:.0} s",
                    started.elapsed().as_secs_f64()
                );
                let _ = std::io::stderr().flush();
                shown = true;
            }
            if shown {
                eprintln!();
            }
        });
        Progress { stop, thread }
    }

    /// Stops the ticker and ends its line.
    pub fn stop(self) {
        let _ = self.stop.send(());
        let _ = self.thread.join();
    }
}
