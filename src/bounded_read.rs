//! The one reader of files someone else wrote (kustomizations, resources, patches, a chart's
//! files for the render cache key): regular files only, and at most [`MAX_FILE_BYTES`] of them.
//!
//! A link to `/dev/zero` would otherwise be read without end, and a FIFO would block the build
//! for ever (it is opened without waiting for a writer, then refused): helm itself refuses such
//! files (`cannot load irregular file`), and no kustomization or resource is one.
use std::io::{Error, ErrorKind, Read, Result};
use std::path::Path;

/// The most one file may hold: far above any real manifest (a 100 MB resource file builds),
/// well below what would exhaust memory.
pub const MAX_FILE_BYTES: u64 = 256 * 1024 * 1024;

/// Whether a link at `path` itself is followed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Links {
    Follow,
    /// `O_NOFOLLOW`: a link is refused (the caller resolved the path already).
    Refuse,
}

/// Reads the regular file `path`, refusing anything else (a device, a FIFO, a socket, a folder)
/// and a file longer than `limit` bytes. The errors do not name the file: callers do.
pub fn read_regular_file(path: &Path, links: Links, limit: u64) -> Result<Vec<u8>> {
    read_opened(open(path, links)?, limit)
}

/// The first half of [`read_regular_file`]: `path` opened for reading, without waiting on a
/// FIFO. What is there is not yet looked at; a caller can tell a failed open from a refused file.
pub fn open(path: &Path, links: Links) -> Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        // O_NONBLOCK: opening a FIFO does not wait for a writer; it is refused below.
        let mut flags = libc::O_NONBLOCK | libc::O_CLOEXEC;
        if links == Links::Refuse {
            flags |= libc::O_NOFOLLOW;
        }
        options.custom_flags(flags);
    }
    options.open(path)
}

/// The second half of [`read_regular_file`]: all of an opened `file`, when it is a regular file
/// of at most `limit` bytes.
pub fn read_opened(file: std::fs::File, limit: u64) -> Result<Vec<u8>> {
    let meta = file.metadata()?;
    if meta.is_dir() {
        // What a read of a folder says, as before this check.
        return Err(Error::from_raw_os_error(libc::EISDIR));
    }
    if !meta.is_file() {
        return Err(Error::new(ErrorKind::InvalidInput, NotRegular));
    }
    // O_NONBLOCK stays set: Linux ignores it for regular files (open(2)), and clearing it would
    // cost a system call per file.
    let expected = meta.len().min(limit);
    let mut bytes = Vec::with_capacity(expected.min(16 * 1024 * 1024) as usize + 1);
    read_to_end(file.take(limit.saturating_add(1)), &mut bytes, expected)?;
    if bytes.len() as u64 > limit {
        return Err(too_large(limit));
    }
    Ok(bytes)
}

/// [`read_opened`]'s refusal of a device, a FIFO or a socket.
#[derive(Debug)]
struct NotRegular;

impl std::fmt::Display for NotRegular {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("not a regular file (a device, FIFO or socket); only regular files are read")
    }
}

impl std::error::Error for NotRegular {}

/// Whether [`read_opened`] failed because what was opened is no regular file (a folder, a
/// device, a FIFO or a socket), not in reading one.
pub fn not_a_regular_file(error: &Error) -> bool {
    error.raw_os_error() == Some(libc::EISDIR) || error.get_ref().is_some_and(|inner| inner.is::<NotRegular>())
}

/// Reads all of `reader` into `bytes`. A regular file's read that returns fewer bytes than asked
/// for has reached its end; when that happens at the size `fstat` gave, the read that would
/// return nothing is not made (one system call less per file). A file that grew is read on.
fn read_to_end(mut reader: impl Read, bytes: &mut Vec<u8>, expected: u64) -> Result<()> {
    loop {
        if bytes.len() == bytes.capacity() {
            bytes.reserve(bytes.capacity().clamp(8 * 1024, 16 * 1024 * 1024));
        }
        let start = bytes.len();
        let room = bytes.capacity() - start;
        bytes.resize(start + room, 0);
        let read = match reader.read(&mut bytes[start..]) {
            Ok(read) => read,
            Err(e) if e.kind() == ErrorKind::Interrupted => {
                bytes.truncate(start);
                continue;
            }
            Err(e) => {
                bytes.truncate(start);
                return Err(e);
            }
        };
        bytes.truncate(start + read);
        if read == 0 || (read < room && bytes.len() as u64 == expected) {
            return Ok(());
        }
    }
}

/// [`read_regular_file`] (links followed, [`MAX_FILE_BYTES`]) as UTF-8 text.
pub fn read_text(path: &Path) -> Result<String> {
    let bytes = read_regular_file(path, Links::Follow, MAX_FILE_BYTES)?;
    String::from_utf8(bytes).map_err(|_| Error::new(ErrorKind::InvalidData, "stream did not contain valid UTF-8"))
}

/// The error for a file past its bound (the caller names the file).
pub fn too_large(limit: u64) -> Error {
    Error::new(ErrorKind::InvalidData, format!("larger than {limit} bytes, the most one file may hold"))
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// Serves `text` in pieces of at most `piece` bytes, counting the reads asked of it.
    struct Pieces<'a> {
        text: &'a [u8],
        piece: usize,
        reads: usize,
    }

    impl Read for Pieces<'_> {
        fn read(&mut self, buf: &mut [u8]) -> Result<usize> {
            self.reads += 1;
            let n = self.piece.min(buf.len()).min(self.text.len());
            buf[..n].copy_from_slice(&self.text[..n]);
            self.text = &self.text[n..];
            Ok(n)
        }
    }

    #[test]
    fn a_short_read_at_the_expected_size_ends_the_read_and_a_grown_file_is_read_whole() {
        let text: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
        for (len, piece) in [(0, 7), (1, 7), (5, 2), (8_191, 100_000), (20_000, 100_000), (20_000, 3_000)] {
            let mut pieces = Pieces { text: &text[..len], piece, reads: 0 };
            let mut bytes = Vec::with_capacity(len + 1);
            read_to_end(&mut pieces, &mut bytes, len as u64).unwrap();
            assert_eq!(bytes, &text[..len], "{len} bytes in pieces of {piece}");
            // Whole in one read: no further read to find the end.
            if piece > len {
                assert_eq!(pieces.reads, 1, "{len} bytes in pieces of {piece}");
            }
        }
        // The file grew after its size was taken: everything there is read.
        let mut pieces = Pieces { text: &text, piece: 4_096, reads: 0 };
        let mut bytes = Vec::with_capacity(11);
        read_to_end(&mut pieces, &mut bytes, 10).unwrap();
        assert_eq!(bytes, text);
    }

    #[test]
    fn regular_files_are_read_and_others_refused() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("a.yaml");
        std::fs::write(&file, "a: 1\n").unwrap();
        assert_eq!(read_regular_file(&file, Links::Refuse, 100).unwrap(), b"a: 1\n");
        assert!(read_regular_file(&file, Links::Refuse, 3).unwrap_err().to_string().contains("larger than 3 bytes"));
        let zero = dir.path().join("zero");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        let error = read_regular_file(&zero, Links::Follow, MAX_FILE_BYTES).unwrap_err();
        assert!(error.to_string().contains("not a regular file"), "{error}");
        assert!(read_regular_file(&zero, Links::Refuse, MAX_FILE_BYTES).is_err());
        let fifo = dir.path().join("fifo");
        rustix::fs::mknodat(rustix::fs::CWD, &fifo, rustix::fs::FileType::Fifo, rustix::fs::Mode::from_raw_mode(0o600), 0).unwrap();
        // Without O_NONBLOCK this open would wait for a writer for ever.
        let error = read_regular_file(&fifo, Links::Follow, MAX_FILE_BYTES).unwrap_err();
        assert!(error.to_string().contains("not a regular file"), "{error}");
    }
}
