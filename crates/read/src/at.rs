//! Positional reads: reading a file at an offset without moving its descriptor's own offset,
//! so one open file can be read from its start, its end and its middle by different readers
//! (the walk's head, the summary, stats) without any of them seeking.

use std::fs::File;
use std::io::{self, Read};

/// Reads once from `offset` into `buffer` and returns how many bytes came (0 at the end).
pub fn read_at(file: &File, buffer: &mut [u8], offset: u64) -> io::Result<usize> {
    // A stop asked for by another thread fails the read (see `stop`).
    crate::stop::check()?;
    #[cfg(unix)]
    let n_read = std::os::unix::fs::FileExt::read_at(file, buffer, offset)?;
    #[cfg(not(unix))]
    let n_read = {
        use std::io::{Seek, SeekFrom};
        // Without positional reads, a clone of the descriptor shares its offset; every
        // reader here reads through this function, so none relies on the offset.
        let mut file = file;
        file.seek(SeekFrom::Start(offset))?;
        file.read(buffer)?
    };
    #[cfg(feature = "count-reads")]
    READS.with(|reads| {
        let (n_reads, n_bytes) = reads.get();
        reads.set((n_reads + 1, n_bytes + n_read as u64));
    });
    Ok(n_read)
}

#[cfg(feature = "count-reads")]
thread_local! {
    /// The reads [`read_at`] made on this thread, and the bytes they returned.
    static READS: std::cell::Cell<(u64, u64)> = const { std::cell::Cell::new((0, 0)) };
}

/// Returns how many positional reads this thread has made so far and how many bytes they
/// returned: for tests that hold a reader to the few reads it should need.
#[cfg(feature = "count-reads")]
pub fn reads_on_this_thread() -> (u64, u64) {
    READS.with(std::cell::Cell::get)
}

/// Reads from `offset` until `buffer` is full or the file ends, and returns how many bytes
/// came; an interrupted read is retried.
pub fn read_full_at(file: &File, buffer: &mut [u8], offset: u64) -> io::Result<usize> {
    let mut n_filled = 0;
    while n_filled < buffer.len() {
        match read_at(file, &mut buffer[n_filled..], offset + n_filled as u64) {
            Ok(0) => break,
            Ok(n_read) => n_filled += n_read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(n_filled)
}

/// A [`Read`] over a file from a given offset by positional reads, which leave the
/// descriptor's own offset alone.
#[derive(Debug, Clone, Copy)]
pub struct ReadAt<'a> {
    /// The file read.
    pub file: &'a File,
    /// Where the next read starts.
    pub offset: u64,
}

impl<'a> ReadAt<'a> {
    /// Returns a reader of `file` from byte `offset` on.
    pub fn new(file: &'a File, offset: u64) -> ReadAt<'a> {
        ReadAt { file, offset }
    }
}

impl Read for ReadAt<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let n_read = read_at(self.file, buffer, self.offset)?;
        self.offset += n_read as u64;
        Ok(n_read)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_at_an_offset_without_moving_the_descriptor() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("f");
        std::fs::write(&path, b"0123456789").expect("write");
        let mut file = File::open(&path).expect("open");
        let mut buffer = [0u8; 4];
        assert_eq!(read_full_at(&file, &mut buffer, 3).expect("read"), 4);
        assert_eq!(&buffer, b"3456");
        let mut buffer = [0u8; 8];
        assert_eq!(read_full_at(&file, &mut buffer, 6).expect("read"), 4);
        assert_eq!(&buffer[..4], b"6789");
        let mut rest = Vec::new();
        ReadAt::new(&file, 7).read_to_end(&mut rest).expect("read");
        assert_eq!(rest, b"789");
        let mut from_start = Vec::new();
        file.read_to_end(&mut from_start).expect("read");
        assert_eq!(from_start, b"0123456789");
    }
}
