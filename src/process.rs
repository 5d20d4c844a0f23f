//! The one place that starts programs (git, helm, docker, exec functions and plugins).
//!
//! A [`Program`] is an argv (never a shell line), a working folder, the environment changes on
//! top of ours, the bytes for stdin, a timeout and a bound on what is kept of stderr. Callers
//! describe the call; this module runs it the same way for all of them: the child gets its own
//! process group so a timeout ends its children too, stdin is written on its own thread so a
//! child that answers before reading everything cannot deadlock us, and stderr keeps only its
//! tail, since a chatty plugin must not fill our memory or our error lines.
use std::ffi::{OsStr, OsString};
use std::fmt;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// What is kept of a program's stderr unless the caller says otherwise: its last 64 KiB.
pub const DEFAULT_STDERR_TAIL: usize = 64 * 1024;

/// A program to run: everything about the call, set by the caller, run by [`Program::run`].
#[derive(Debug, Clone)]
pub struct Program {
    program: OsString,
    args: Vec<OsString>,
    current_dir: Option<PathBuf>,
    clear_env: bool,
    env_set: Vec<(OsString, OsString)>,
    env_remove: Vec<OsString>,
    stdin: Option<Vec<u8>>,
    timeout: Option<Duration>,
    stderr_tail: usize,
    stdout_limit: Option<usize>,
}

/// A program that ran to its end (successfully or not).
#[derive(Debug)]
pub struct Finished {
    pub status: ExitStatus,
    pub stdout: Vec<u8>,
    /// The last [`Program::stderr_tail`] bytes of stderr.
    pub stderr: Vec<u8>,
    /// Whether stderr was longer than what was kept.
    pub stderr_truncated: bool,
}

impl Finished {
    pub fn success(&self) -> bool {
        self.status.success()
    }

    /// stderr as text, lossily decoded and trimmed; `...` first when its head was dropped.
    pub fn stderr_text(&self) -> String {
        let text = String::from_utf8_lossy(&self.stderr);
        let text = text.trim();
        if self.stderr_truncated {
            format!("...{text}")
        } else {
            text.to_string()
        }
    }

    /// `exit status 3`, or `killed by signal 9`: how the program ended, in words.
    pub fn status_text(&self) -> String {
        describe_status(self.status)
    }
}

/// Why a program did not run to its end.
#[derive(Debug, thiserror::Error)]
pub enum ProcessError {
    #[error("'{program}' not found (is it installed and on PATH?)")]
    NotFound { program: String },
    #[error("cannot run '{program}': {message}")]
    Spawn { program: String, message: String },
    #[error("'{argv}' ran longer than {after:?} and was stopped")]
    TimedOut { argv: String, after: Duration, stderr: String },
    #[error("'{argv}' printed more than {limit} bytes on stdout and was stopped")]
    OutputTooLarge { argv: String, limit: usize },
    #[error("'{argv}': {message}")]
    Io { argv: String, message: String },
}

impl Program {
    pub fn new(program: impl AsRef<OsStr>) -> Program {
        Program {
            program: program.as_ref().to_os_string(),
            args: Vec::new(),
            current_dir: None,
            clear_env: false,
            env_set: Vec::new(),
            env_remove: Vec::new(),
            stdin: None,
            timeout: None,
            stderr_tail: DEFAULT_STDERR_TAIL,
            stdout_limit: None,
        }
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Program {
        self.args.push(arg.as_ref().to_os_string());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Program
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args.extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    /// The working folder of the child (ours when not set).
    pub fn current_dir(mut self, dir: impl AsRef<Path>) -> Program {
        self.current_dir = Some(dir.as_ref().to_path_buf());
        self
    }

    /// Starts the child with an empty environment; [`Program::env`] adds to it.
    pub fn env_clear(mut self) -> Program {
        self.clear_env = true;
        self
    }

    pub fn env(mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Program {
        self.env_set.push((name.as_ref().to_os_string(), value.as_ref().to_os_string()));
        self
    }

    /// Several variables at once, in order (a later one wins).
    pub fn envs<I, K, V>(mut self, vars: I) -> Program
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        self.env_set.extend(vars.into_iter().map(|(k, v)| (k.as_ref().to_os_string(), v.as_ref().to_os_string())));
        self
    }

    pub fn env_remove(mut self, name: impl AsRef<OsStr>) -> Program {
        self.env_remove.push(name.as_ref().to_os_string());
        self
    }

    /// Bytes written to the child's stdin (stdin is empty when not set).
    pub fn stdin(mut self, bytes: Vec<u8>) -> Program {
        self.stdin = Some(bytes);
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> Program {
        self.timeout = Some(timeout);
        self
    }

    /// How many bytes of stderr's end to keep.
    pub fn stderr_tail(mut self, bytes: usize) -> Program {
        self.stderr_tail = bytes;
        self
    }

    /// The most stdout may hold; past it the child is stopped and the run fails.
    pub fn stdout_limit(mut self, bytes: usize) -> Program {
        self.stdout_limit = Some(bytes);
        self
    }

    pub fn program(&self) -> &OsStr {
        &self.program
    }

    pub fn arguments(&self) -> &[OsString] {
        &self.args
    }

    /// The argv as one line for messages (arguments with spaces quoted).
    pub fn display(&self) -> String {
        std::iter::once(&self.program)
            .chain(self.args.iter())
            .map(|part| {
                let text = part.to_string_lossy();
                if text.is_empty() || text.contains(char::is_whitespace) {
                    format!("'{text}'")
                } else {
                    text.into_owned()
                }
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    fn command(&self) -> Command {
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        if let Some(dir) = &self.current_dir {
            command.current_dir(dir);
        }
        if self.clear_env {
            command.env_clear();
        }
        for name in &self.env_remove {
            command.env_remove(name);
        }
        for (name, value) in &self.env_set {
            command.env(name, value);
        }
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            // Its own process group: a timeout then ends whatever the child started as well.
            command.process_group(0);
        }
        command
    }

    fn spawn_error(&self, error: std::io::Error) -> ProcessError {
        let program = self.program.to_string_lossy().into_owned();
        if error.kind() == std::io::ErrorKind::NotFound {
            ProcessError::NotFound { program }
        } else {
            ProcessError::Spawn { program, message: error.to_string() }
        }
    }

    /// Runs the program to its end, or until its timeout or stdout limit.
    pub fn run(&self) -> Result<Finished, ProcessError> {
        let mut command = self.command();
        command
            .stdin(if self.stdin.is_some() { Stdio::piped() } else { Stdio::null() })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|e| self.spawn_error(e))?;
        let feeder = self.stdin.clone().and_then(|bytes| {
            let mut pipe = child.stdin.take()?;
            // A child that stops reading early closes the pipe; that is its business, not an error.
            Some(std::thread::spawn(move || {
                let _ = pipe.write_all(&bytes);
            }))
        });
        let over_limit = Arc::new(AtomicBool::new(false));
        let stdout = read_limited(child.stdout.take(), self.stdout_limit, Arc::clone(&over_limit));
        let stderr = read_tail(child.stderr.take(), self.stderr_tail);
        let started = Instant::now();
        let status = loop {
            match child.try_wait() {
                Ok(Some(status)) => break status,
                Ok(None) => {
                    if self.timeout.is_some_and(|limit| started.elapsed() >= limit) {
                        stop(&mut child);
                        let (tail, truncated) = stderr.join().unwrap_or_default();
                        let stderr = Finished::tail_text(&tail, truncated);
                        return Err(ProcessError::TimedOut { argv: self.display(), after: self.timeout.unwrap_or_default(), stderr });
                    }
                    if let Some(limit) = self.stdout_limit.filter(|_| over_limit.load(Ordering::Relaxed)) {
                        stop(&mut child);
                        return Err(ProcessError::OutputTooLarge { argv: self.display(), limit });
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(e) => {
                    stop(&mut child);
                    return Err(ProcessError::Io { argv: self.display(), message: e.to_string() });
                }
            }
        };
        if let Some(feeder) = feeder {
            let _ = feeder.join();
        }
        let (out, over) = stdout.join().unwrap_or_default();
        if over {
            return Err(ProcessError::OutputTooLarge { argv: self.display(), limit: self.stdout_limit.unwrap_or_default() });
        }
        let (err, truncated) = stderr.join().unwrap_or_default();
        Ok(Finished { status, stdout: out, stderr: err, stderr_truncated: truncated })
    }

    /// Starts the program with stdin and stdout piped and stderr passed through, for a
    /// conversation (`git cat-file --batch`); the caller ends it.
    pub fn spawn_conversation(&self) -> Result<Child, ProcessError> {
        let mut command = self.command();
        command.stdin(Stdio::piped()).stdout(Stdio::piped()).stderr(Stdio::inherit());
        command.spawn().map_err(|e| self.spawn_error(e))
    }
}

impl Finished {
    fn tail_text(bytes: &[u8], truncated: bool) -> String {
        Finished { status: ExitStatus::default(), stdout: Vec::new(), stderr: bytes.to_vec(), stderr_truncated: truncated }.stderr_text()
    }
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.display())
    }
}

/// `exit status N` or `killed by signal N`.
pub fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    status.to_string()
}

/// Ends the child and everything in its process group, and reaps it.
fn stop(child: &mut Child) {
    #[cfg(unix)]
    {
        if let Ok(pid) = libc::pid_t::try_from(child.id()) {
            // SAFETY: kill(2) with a negative pid signals the child's own process group (made by
            // `process_group(0)` at spawn); it touches no memory of ours.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

type Reader = JoinHandle<(Vec<u8>, bool)>;

/// Reads a pipe to its end, or up to `limit` bytes (then `true`, also raised in `over`, so the
/// waiting side stops a child that goes on writing).
fn read_limited<R: Read + Send + 'static>(pipe: Option<R>, limit: Option<usize>, over: Arc<AtomicBool>) -> Reader {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let Some(pipe) = pipe else { return (bytes, false) };
        match limit {
            None => {
                let mut pipe = pipe;
                let _ = pipe.read_to_end(&mut bytes);
                (bytes, false)
            }
            Some(limit) => {
                let mut bounded = pipe.take(limit as u64 + 1);
                let _ = bounded.read_to_end(&mut bytes);
                let past = bytes.len() > limit;
                over.store(past, Ordering::Relaxed);
                bytes.truncate(limit);
                (bytes, past)
            }
        }
    })
}

/// Reads a pipe to its end, keeping only its last `keep` bytes (then `true`: some were dropped).
fn read_tail<R: Read + Send + 'static>(pipe: Option<R>, keep: usize) -> Reader {
    std::thread::spawn(move || {
        let mut tail: Vec<u8> = Vec::new();
        let mut dropped = false;
        let Some(mut pipe) = pipe else { return (tail, false) };
        let mut buffer = [0u8; 8192];
        loop {
            match pipe.read(&mut buffer) {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    tail.extend_from_slice(&buffer[..n]);
                    if tail.len() > keep.saturating_mul(2).max(keep + 8192) {
                        let cut = tail.len() - keep;
                        tail.drain(..cut);
                        dropped = true;
                    }
                }
            }
        }
        if tail.len() > keep {
            let cut = tail.len() - keep;
            tail.drain(..cut);
            dropped = true;
        }
        (tail, dropped)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_an_argv_without_a_shell() {
        let done = Program::new("printf").arg("%s|").arg("a b; echo c").run().unwrap();
        assert!(done.success());
        assert_eq!(done.stdout, b"a b; echo c|");
    }

    #[test]
    fn stdin_environment_and_folder_reach_the_child() {
        let dir = tempfile::tempdir().unwrap();
        let done = Program::new("sh")
            .args(["-c", "cat; printf ' %s ' \"$PEERPODS_TEST_VALUE\"; pwd"])
            .env("PEERPODS_TEST_VALUE", "x")
            .current_dir(dir.path())
            .stdin(b"input".to_vec())
            .run()
            .unwrap();
        let text = String::from_utf8(done.stdout).unwrap();
        let canonical = dir.path().canonicalize().unwrap();
        assert_eq!(text, format!("input x {}\n", canonical.display()));
    }

    #[test]
    fn a_cleared_environment_holds_only_what_is_set() {
        let done = Program::new("/usr/bin/env").env_clear().env("ONLY", "1").run().unwrap();
        assert_eq!(String::from_utf8(done.stdout).unwrap(), "ONLY=1\n");
    }

    #[test]
    fn a_timeout_stops_the_child_and_its_children() {
        let started = Instant::now();
        let error = Program::new("sh").args(["-c", "sleep 30 & sleep 30"]).timeout(Duration::from_millis(200)).run().unwrap_err();
        assert!(matches!(error, ProcessError::TimedOut { .. }), "{error}");
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn stderr_keeps_its_tail() {
        let done = Program::new("sh").args(["-c", "i=0; while [ $i -lt 2000 ]; do echo line$i >&2; i=$((i+1)); done; exit 3"]).stderr_tail(100).run().unwrap();
        assert!(!done.success());
        assert_eq!(done.status_text(), "exit status 3");
        assert!(done.stderr_truncated);
        assert!(done.stderr.len() <= 100);
        assert!(done.stderr_text().ends_with("line1999"), "{}", done.stderr_text());
    }

    #[test]
    fn stdout_past_its_limit_fails() {
        let error = Program::new("sh").args(["-c", "head -c 100000 /dev/zero"]).stdout_limit(1000).run().unwrap_err();
        assert!(matches!(error, ProcessError::OutputTooLarge { limit: 1000, .. }), "{error}");
    }

    #[test]
    fn a_missing_program_is_named() {
        let error = Program::new("peerpods-no-such-program").run().unwrap_err();
        assert_eq!(error.to_string(), "'peerpods-no-such-program' not found (is it installed and on PATH?)");
    }
}
