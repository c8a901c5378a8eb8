//! Detecting a session file that changed while it was read.
//!
//! Pi appends to a session while it runs, and a reader takes a consistent snapshot by reading
//! only up to the size seen at open. A file rewritten *in place* is different: the bytes read
//! may mix two versions. Comparing the size and a hash of the first bytes before and after
//! the read (the first way this was done) misses a rewrite that ends where it started
//! (A→B→A, which most runs of a rewriting test produced) and one that changes bytes beyond
//! the hashed prefix. So a read is
//! bracketed by two `fstat`s of the open descriptor (device, inode, size, mtime and ctime with
//! nanoseconds), and every byte read is hashed as it streams by ([`HashingReader`]). When the
//! two `fstat`s differ, the bytes read are hashed again from the file as it is now: equal
//! means pure growth (an append), anything else is reported. When they are equal, only the
//! first [`PREFIX_BYTES`] are compared again, for a write that landed within the same
//! timestamp tick as the first `fstat`.
//!
//! A file replaced by a rename is not a change: the descriptor still reads the old inode,
//! whole and consistent.

use std::fs::File;
use std::io::{self, Read};

/// Bytes at the start of a file compared again even when its metadata did not change.
pub(crate) const PREFIX_BYTES: u64 = 64 * 1024;

/// The metadata of an open file compared before and after it is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileState {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i64),
    ctime: (i64, i64),
}

impl FileState {
    /// Returns the state of `file` from `fstat` on its descriptor.
    pub(crate) fn of(file: &File) -> io::Result<FileState> {
        let metadata = file.metadata()?;
        Ok(FileState::from_metadata(&metadata))
    }

    /// Returns the state recorded in `metadata` (taken from the open descriptor).
    #[cfg(unix)]
    pub(crate) fn from_metadata(metadata: &std::fs::Metadata) -> FileState {
        use std::os::unix::fs::MetadataExt;
        FileState {
            dev: metadata.dev(),
            ino: metadata.ino(),
            size: metadata.len(),
            mtime: (metadata.mtime(), metadata.mtime_nsec()),
            ctime: (metadata.ctime(), metadata.ctime_nsec()),
        }
    }

    /// Returns the state recorded in `metadata` (taken from the open descriptor).
    #[cfg(not(unix))]
    pub(crate) fn from_metadata(metadata: &std::fs::Metadata) -> FileState {
        let nanos = metadata
            .modified()
            .ok()
            .and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |since| since.as_nanos() as i64);
        FileState {
            dev: 0,
            ino: 0,
            size: metadata.len(),
            mtime: (nanos, 0),
            ctime: (0, 0),
        }
    }

    /// Returns the file's size in bytes.
    pub(crate) fn size(&self) -> u64 {
        self.size
    }
}

/// A streaming 64-bit hash of a byte stream, the same however the stream is split.
///
/// Four independent multiply-rotate lanes over 32-byte blocks, so it runs at several bytes
/// per cycle and adds little to a parse; it only has to tell two versions of one file apart,
/// not resist an adversary.
#[derive(Debug, Clone)]
pub(crate) struct ContentHash {
    lanes: [u64; 4],
    pending: [u8; 32],
    n_pending: usize,
    n_bytes: u64,
}

const MULTIPLIER: u64 = 0x9E37_79B9_7F4A_7C15;
const LANE_SEEDS: [u64; 4] = [
    0x243F_6A88_85A3_08D3,
    0x1319_8A2E_0370_7344,
    0xA409_3822_299F_31D0,
    0x082E_FA98_EC4E_6C89,
];

impl Default for ContentHash {
    fn default() -> Self {
        ContentHash {
            lanes: LANE_SEEDS,
            pending: [0; 32],
            n_pending: 0,
            n_bytes: 0,
        }
    }
}

impl ContentHash {
    fn block(&mut self, block: &[u8]) {
        for (lane, word) in self.lanes.iter_mut().zip(block.chunks_exact(8)) {
            let mut bytes = [0u8; 8];
            bytes.copy_from_slice(word);
            let word = u64::from_le_bytes(bytes);
            *lane = (*lane ^ word).wrapping_mul(MULTIPLIER).rotate_left(29);
        }
    }

    /// Adds `bytes` to the stream.
    pub(crate) fn update(&mut self, mut bytes: &[u8]) {
        self.n_bytes += bytes.len() as u64;
        if self.n_pending > 0 {
            let take = (32 - self.n_pending).min(bytes.len());
            self.pending[self.n_pending..self.n_pending + take].copy_from_slice(&bytes[..take]);
            self.n_pending += take;
            bytes = &bytes[take..];
            if self.n_pending < 32 {
                return;
            }
            let pending = self.pending;
            self.block(&pending);
            self.n_pending = 0;
        }
        let mut blocks = bytes.chunks_exact(32);
        for block in &mut blocks {
            self.block(block);
        }
        let rest = blocks.remainder();
        self.pending[..rest.len()].copy_from_slice(rest);
        self.n_pending = rest.len();
    }

    /// Returns the hash of the stream so far.
    pub(crate) fn finish(&self) -> u64 {
        let mut copy = self.clone();
        let mut tail = [0u8; 32];
        tail[..copy.n_pending].copy_from_slice(&copy.pending[..copy.n_pending]);
        if copy.n_pending > 0 {
            copy.block(&tail);
        }
        let mut hash = copy.n_bytes.wrapping_mul(MULTIPLIER);
        for lane in copy.lanes {
            hash = (hash ^ lane).wrapping_mul(MULTIPLIER).rotate_left(31);
        }
        hash ^ (hash >> 32)
    }
}

/// A reader that hashes every byte it hands on.
#[derive(Debug)]
pub(crate) struct HashingReader<R> {
    inner: R,
    hash: ContentHash,
}

impl<R: Read> HashingReader<R> {
    /// Returns a reader over `inner` with an empty hash.
    pub(crate) fn new(inner: R) -> Self {
        HashingReader {
            inner,
            hash: ContentHash::default(),
        }
    }

    /// Returns the hash of the bytes read so far.
    pub(crate) fn hash(&self) -> u64 {
        self.hash.finish()
    }
}

impl<R: Read> Read for HashingReader<R> {
    fn read(&mut self, buffer: &mut [u8]) -> io::Result<usize> {
        let n_read = self.inner.read(buffer)?;
        self.hash.update(&buffer[..n_read]);
        Ok(n_read)
    }
}

/// Returns the hash of the first `len` bytes of `file` as it is now (of fewer when it is
/// shorter), read positionally so the descriptor's offset is untouched.
pub(crate) fn hash_prefix(file: &File, len: u64) -> io::Result<u64> {
    let mut hash = ContentHash::default();
    let mut buffer = vec![0u8; usize::try_from(len.min(1 << 20)).unwrap_or(1 << 20)];
    let mut offset = 0u64;
    while offset < len {
        let want =
            usize::try_from(len - offset).map_or(buffer.len(), |left| left.min(buffer.len()));
        match pi_retrospect_read::read_at(file, &mut buffer[..want], offset) {
            Ok(0) => break,
            Ok(n_read) => {
                hash.update(&buffer[..n_read]);
                offset += n_read as u64;
            }
            Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(hash.finish())
}

/// Returns whether the first `n_bytes` of `file` still hash to `read_hash`, checked only
/// when its state differs from `seen` (the state after the bytes were read): `Ok(true)` when
/// the bytes are as they were read (unchanged, or only appended to).
pub(crate) fn is_unchanged_since(
    file: &File,
    seen: FileState,
    n_bytes: u64,
    read_hash: u64,
) -> io::Result<bool> {
    let now = FileState::of(file)?;
    if now == seen {
        return Ok(true);
    }
    if now.size < n_bytes {
        return Ok(false);
    }
    Ok(hash_prefix(file, n_bytes)? == read_hash)
}

/// What a reader knows about one read of a file: the state before, the first bytes' hash
/// before, and the hash of every byte read.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ReadWatch {
    before: FileState,
    limit: u64,
    prefix_len: u64,
    prefix_before: u64,
}

impl ReadWatch {
    /// Returns a watch over `file` taken before its first read of at most `limit` bytes.
    pub(crate) fn start(file: &File, before: FileState, limit: u64) -> io::Result<ReadWatch> {
        let prefix_len = limit.min(PREFIX_BYTES);
        Ok(ReadWatch {
            before,
            limit,
            prefix_len,
            prefix_before: hash_prefix(file, prefix_len)?,
        })
    }

    /// Returns a message saying how the file changed when the `n_bytes` read (whose hash is
    /// `read_hash`) may mix two versions of it, or `None` when they are one version: the file
    /// is unchanged or only grew after them; and the file's state after the read.
    pub(crate) fn finish(
        &self,
        file: &File,
        n_bytes: u64,
        read_hash: u64,
    ) -> io::Result<(Option<String>, FileState)> {
        let after = FileState::of(file)?;
        let change = self.compare(file, after, n_bytes, read_hash)?;
        Ok((change, after))
    }

    fn compare(
        &self,
        file: &File,
        after: FileState,
        n_bytes: u64,
        read_hash: u64,
    ) -> io::Result<Option<String>> {
        if after.size < self.limit.min(self.before.size) || n_bytes < self.limit {
            return Ok(Some(format!(
                "the file shrank from {} to {} bytes while it was read (rewritten or truncated); the entries may mix two versions of it",
                self.before.size, after.size
            )));
        }
        if after != self.before {
            if after.dev != self.before.dev || after.ino != self.before.ino {
                return Ok(Some(
                    "the file was replaced while it was read; the entries may mix two versions of it"
                        .to_owned(),
                ));
            }
            if hash_prefix(file, n_bytes)? != read_hash {
                return Ok(Some(format!(
                    "the file was rewritten in place while it was read (its first {n_bytes} bytes differ from those read); the entries may mix two versions of it"
                )));
            }
            return Ok(None);
        }
        if hash_prefix(file, self.prefix_len)? != self.prefix_before {
            return Ok(Some(format!(
                "the first {} bytes of the file changed while it was read (rewritten in place); the entries may mix two versions of it",
                self.prefix_len
            )));
        }
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The hash of a stream does not depend on how it is split into reads.
    #[test]
    fn the_hash_is_independent_of_splits() {
        let bytes: Vec<u8> = (0..1000u32).map(|idx| (idx * 7 % 251) as u8).collect();
        let mut whole = ContentHash::default();
        whole.update(&bytes);
        for split in [1usize, 3, 31, 32, 33, 100, 999] {
            let mut parts = ContentHash::default();
            for chunk in bytes.chunks(split) {
                parts.update(chunk);
            }
            assert_eq!(parts.finish(), whole.finish(), "split {split}");
        }
        let mut changed = bytes.clone();
        changed[517] ^= 1;
        let mut other = ContentHash::default();
        other.update(&changed);
        assert_ne!(other.finish(), whole.finish());
        let mut shorter = ContentHash::default();
        shorter.update(&bytes[..999]);
        assert_ne!(shorter.finish(), whole.finish());
    }
}
