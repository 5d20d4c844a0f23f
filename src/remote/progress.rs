//! One line on stderr for a fetch that takes a while: `fetching github.com/org/repo?ref=v1 ...`,
//! printed once the fetch has run for [`DELAY`], when stderr is a terminal or under
//! `--progress`, never under `--quiet`, never on stdout. Fast fetches (a warm cache) print
//! nothing. Anything slow the build waits for (remote bases, HTTP files, chart pulls) can use it.
use std::io::IsTerminal;
use std::sync::mpsc;
use std::time::Duration;

/// How long a fetch runs before its line is printed.
pub const DELAY: Duration = Duration::from_secs(1);

/// Whether slow fetches print their line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Progress {
    /// When stderr is a terminal.
    #[default]
    Auto,
    /// `--progress`: always.
    Always,
    /// `--quiet`: never.
    Never,
}

impl Progress {
    fn enabled(self) -> bool {
        match self {
            Progress::Auto => std::io::stderr().is_terminal(),
            Progress::Always => true,
            Progress::Never => false,
        }
    }
}

/// Runs `work`, printing `fetching WHAT ...` on stderr if it is still running after [`DELAY`].
pub fn while_fetching<T>(progress: Progress, what: &str, work: impl FnOnce() -> T) -> T {
    if !progress.enabled() {
        return work();
    }
    let (done, finished) = mpsc::channel::<()>();
    std::thread::scope(|scope| {
        scope.spawn(move || {
            // Woken by the drop of `done` when the work ends first.
            if finished.recv_timeout(DELAY) == Err(mpsc::RecvTimeoutError::Timeout) {
                eprintln!("fetching {what} ...");
            }
        });
        let result = work();
        drop(done);
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_runs_the_work_alone_and_returns_its_value() {
        assert_eq!(while_fetching(Progress::Never, "x", || 42), 42);
        assert_eq!(while_fetching(Progress::Always, "x", || "fast"), "fast");
    }
}
