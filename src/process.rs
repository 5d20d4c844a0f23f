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

/// The most a program's stdout may hold unless the caller says otherwise: what one input file
/// may hold ([`crate::bounded_read::MAX_FILE_BYTES`]), as a plugin's or helm's output is input.
pub const DEFAULT_STDOUT_LIMIT: usize = crate::bounded_read::MAX_FILE_BYTES as usize;

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
    #[error("'{argv}' printed more than {limit} bytes on stdout, the most its output may hold, and was stopped")]
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
            stdout_limit: Some(DEFAULT_STDOUT_LIMIT),
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

    /// The most stdout may hold (default [`DEFAULT_STDOUT_LIMIT`]); past it the child is
    /// stopped and the run fails.
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

    /// Runs the program to its end, or until its timeout or stdout limit. Once the child has
    /// ended (or been stopped), what it left in its pipes is read and the rest of its process
    /// group is killed: a descendant that still holds stdout or stderr (`setsid sleep 600 &`)
    /// neither keeps us waiting nor outlives the call in its group.
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
        let ended = Arc::new(AtomicBool::new(false));
        let stdout = read_limited(child.stdout.take(), self.stdout_limit, Arc::clone(&over_limit), Arc::clone(&ended));
        let stderr = read_tail(child.stderr.take(), self.stderr_tail, Arc::clone(&ended));
        let started = Instant::now();
        let outcome = loop {
            match has_exited(&mut child) {
                Ok(true) => break Ok(()),
                Ok(false) => {
                    if self.timeout.is_some_and(|limit| started.elapsed() >= limit) {
                        break Err(ProcessError::TimedOut { argv: self.display(), after: self.timeout.unwrap_or_default(), stderr: String::new() });
                    }
                    if let Some(limit) = self.stdout_limit.filter(|_| over_limit.load(Ordering::Relaxed)) {
                        break Err(ProcessError::OutputTooLarge { argv: self.display(), limit });
                    }
                    std::thread::sleep(Duration::from_millis(2));
                }
                Err(e) => break Err(ProcessError::Io { argv: self.display(), message: e.to_string() }),
            }
        };
        // The child's group goes (while the child is not yet reaped, its id cannot be reused),
        // then the readers take what is left in the pipes and stop.
        let status = stop(&mut child);
        ended.store(true, Ordering::Relaxed);
        let (out, over) = stdout.join().unwrap_or_default();
        let (err, truncated) = stderr.join().unwrap_or_default();
        // A feeder still writing is blocked on a pipe only a leftover descendant holds: leave it.
        if let Some(feeder) = feeder.filter(|f| f.is_finished()) {
            let _ = feeder.join();
        }
        match outcome {
            Err(ProcessError::TimedOut { argv, after, .. }) => Err(ProcessError::TimedOut { argv, after, stderr: Finished::tail_text(&err, truncated) }),
            Err(other) => Err(other),
            Ok(()) if over => Err(ProcessError::OutputTooLarge { argv: self.display(), limit: self.stdout_limit.unwrap_or_default() }),
            Ok(()) => match status {
                Some(status) => Ok(Finished { status, stdout: out, stderr: err, stderr_truncated: truncated }),
                None => Err(ProcessError::Io { argv: self.display(), message: "could not collect its exit status".into() }),
            },
        }
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

/// Whether the child has ended, without reaping it (so its process group id stays its own).
fn has_exited(child: &mut Child) -> std::io::Result<bool> {
    #[cfg(unix)]
    {
        use rustix::process::{waitid, Pid, WaitId, WaitIdOptions};
        let pid = libc::pid_t::try_from(child.id()).ok().and_then(Pid::from_raw).ok_or_else(|| std::io::Error::other("no process id"))?;
        let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
        return Ok(waitid(WaitId::Pid(pid), options)?.is_some());
    }
    #[cfg(not(unix))]
    return child.try_wait().map(|s| s.is_some());
}

/// Ends everything left in the child's process group (the child too, when it still runs),
/// and reaps the child; returns how it ended.
fn stop(child: &mut Child) -> Option<ExitStatus> {
    #[cfg(unix)]
    {
        if let Some(pid) = libc::pid_t::try_from(child.id()).ok().and_then(rustix::process::Pid::from_raw) {
            // The group made by `process_group(0)` at spawn; the child, unreaped, still holds its id.
            let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
        }
    }
    #[cfg(not(unix))]
    let _ = child.kill();
    child.wait().ok()
}

type Reader = JoinHandle<(Vec<u8>, bool)>;

/// How long a reader waits for data before looking whether the child has ended.
const POLL_INTERVAL_NS: i64 = 50_000_000;
/// After the child has ended, at most this many reads take what is left in a pipe (a
/// descendant that goes on writing into it is not followed for ever).
const READS_AFTER_END: usize = 256;

/// Reads `pipe` and hands each piece to `take` (which answers whether to go on), until the
/// pipe ends, or, once `ended` is raised, until nothing more is waiting in it.
fn pump<R: Read + std::os::fd::AsFd>(mut pipe: R, ended: &AtomicBool, mut take: impl FnMut(&[u8]) -> bool) {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let mut buffer = vec![0u8; 64 * 1024];
    let mut reads_after_end = 0;
    loop {
        let ending = ended.load(Ordering::Relaxed);
        let wait = Timespec { tv_sec: 0, tv_nsec: if ending { 0 } else { POLL_INTERVAL_NS } };
        let ready = {
            let mut fds = [PollFd::new(&pipe, PollFlags::IN)];
            match poll(&mut fds, Some(&wait)) {
                Ok(n) => n > 0,
                Err(rustix::io::Errno::INTR) => continue,
                Err(_) => break,
            }
        };
        if !ready {
            if ending {
                break;
            }
            continue;
        }
        if ending {
            reads_after_end += 1;
            if reads_after_end > READS_AFTER_END {
                break;
            }
        }
        match pipe.read(&mut buffer) {
            Ok(0) => break,
            Ok(n) => {
                if !take(&buffer[..n]) {
                    break;
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
}

/// Reads a pipe to its end, or up to `limit` bytes (then `true`, also raised in `over`, so the
/// waiting side stops a child that goes on writing).
fn read_limited<R: Read + std::os::fd::AsFd + Send + 'static>(pipe: Option<R>, limit: Option<usize>, over: Arc<AtomicBool>, ended: Arc<AtomicBool>) -> Reader {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let Some(pipe) = pipe else { return (bytes, false) };
        let mut past = false;
        pump(pipe, &ended, |piece| {
            // Only what fits is kept: the buffer never grows past the limit (doubling it there
            // would hold twice the limit at once).
            let room = limit.map_or(piece.len(), |limit| limit.saturating_sub(bytes.len()).min(piece.len()));
            bytes.extend_from_slice(&piece[..room]);
            if room < piece.len() {
                past = true;
                over.store(true, Ordering::Relaxed);
                return false;
            }
            true
        });
        (bytes, past)
    })
}

/// Reads a pipe to its end, keeping only its last `keep` bytes (then `true`: some were dropped).
fn read_tail<R: Read + std::os::fd::AsFd + Send + 'static>(pipe: Option<R>, keep: usize, ended: Arc<AtomicBool>) -> Reader {
    std::thread::spawn(move || {
        let mut tail: Vec<u8> = Vec::new();
        let mut dropped = false;
        let Some(pipe) = pipe else { return (tail, false) };
        pump(pipe, &ended, |piece| {
            tail.extend_from_slice(piece);
            if tail.len() > keep.saturating_mul(2).max(keep + 64 * 1024) {
                let cut = tail.len() - keep;
                tail.drain(..cut);
                dropped = true;
            }
            true
        });
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
    fn stdout_up_to_its_limit_is_kept_whole_and_one_byte_more_fails() {
        let done = Program::new("sh").args(["-c", "head -c 100000 /dev/zero"]).stdout_limit(100_000).run().unwrap();
        assert_eq!(done.stdout.len(), 100_000);
        assert!(done.stdout.iter().all(|&b| b == 0));
        let error = Program::new("sh").args(["-c", "head -c 100001 /dev/zero"]).stdout_limit(100_000).run().unwrap_err();
        assert!(matches!(error, ProcessError::OutputTooLarge { limit: 100_000, .. }), "{error}");
    }

    #[test]
    fn a_missing_program_is_named() {
        let error = Program::new("peerpods-no-such-program").run().unwrap_err();
        assert_eq!(error.to_string(), "'peerpods-no-such-program' not found (is it installed and on PATH?)");
    }
}
