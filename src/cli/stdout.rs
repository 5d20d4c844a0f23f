//! The program's standard output. A reader that stops reading (`| head`) closes the pipe: the
//! output ends there, quietly, and the command's outcome is what it would have been, as with
//! ripgrep; never an `Error: ... Broken pipe`, never a panic.
use std::io::{self, Write};

/// Writes `bytes` on stdout.
pub fn print(bytes: &[u8]) -> Result<(), String> {
    quiet_when_closed(io::stdout().lock().write_all(bytes)).map_err(|e| format!("writing output: {e}"))
}

/// `result`, with a closed stdout taken as the end the reader asked for.
pub fn quiet_when_closed(result: io::Result<()>) -> io::Result<()> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}
