//! The summary cache: each session file's whole-body facts (name, first user message, last
//! activity), kept outside the stores so that `list --long`, `list --jsonl` and the picker
//! show a name set anywhere in a file without reading every body on every run.
//!
//! One file, [`FILE_NAME`], in the cache directory the [`Environment`] names
//! (`$XDG_CACHE_HOME/pi-retrospect`, else `~/.cache/pi-retrospect`; created mode 0700, and
//! never used when it lies inside a sessions root). An entry is keyed by the session file's
//! path and holds the device, inode, size and modification time it was read at:
//!
//! - all four the same: the facts are used as they are, and the body is not read;
//! - same device and inode, larger, and the bytes it had still the same (a hash of its first
//!   and last [`CHECK_BYTES`]): an append, so only the lines after the last whole line read
//!   before are read ([`pi_retrospect_transcript::scan_summary_from`]);
//! - anything else (smaller, replaced, rewritten in place): the whole body is read again.
//!
//! Files of at most [`pi_retrospect_transcript::ENDS_WHOLE_BYTES`] are read whole anyway
//! (one read) and are not kept. A cache file that cannot be decoded is ignored with one note
//! and rewritten. Concurrent runs are safe: the file is only ever replaced whole, by writing
//! a new file beside it and renaming it over the old one (the last run to finish wins; what
//! another run read in the meantime is read again next time). Nothing is locked, and
//! nothing is written under a sessions root.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use pi_retrospect_core::SessionSummary;
use pi_retrospect_core::timestamp::Timestamp;
use pi_retrospect_transcript::SummaryError;
use pi_retrospect_walk::Store;
use serde::{Deserialize, Serialize};

use crate::env::Environment;

/// The cache file's name inside the cache directory; the number is the format's version.
pub const FILE_NAME: &str = "summaries-v1.json";

/// The format version written into the file; a file of another version is replaced.
const VERSION: u32 = 1;

/// How many bytes at the start of a file and before its old end are compared to tell an
/// append from a rewrite.
const CHECK_BYTES: u64 = 4096;

/// The largest cache file read: about 160,000 sessions' facts. A larger file (damaged, or
/// planted) is not read, so it cannot hold memory far beyond what a listing shows; it is
/// reported and rebuilt like a corrupt one.
const MAX_CACHE_FILE_BYTES: u64 = 128 * 1024 * 1024;

/// What the summary cache did for one request: how each file's facts were found, and how
/// many body bytes were read for them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CacheCounts {
    /// Files whose facts were taken from the cache with no read of their body.
    pub n_hits: u64,
    /// Files read only from where an earlier read ended (they had grown).
    pub n_appended: u64,
    /// Files read whole (not cached, or changed other than by an append).
    pub n_read_whole: u64,
    /// Body bytes read for the last two (the bounded read from a file's end for its last
    /// activity, which every listing makes, is not counted).
    pub n_bytes_scanned: u64,
}

/// One session file's cached facts and the identity of the bytes they were read from.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Eq)]
struct Entry {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_seconds: i64,
    mtime_nanos: i64,
    /// Where the next line starts: an append is read from here.
    lines_end: u64,
    /// FNV-1a of the first [`CHECK_BYTES`] bytes.
    head_hash: u64,
    /// FNV-1a of the last [`CHECK_BYTES`] bytes before `size`.
    end_hash: u64,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    first_user_message: Option<String>,
    /// Seconds and nanoseconds of the last activity.
    #[serde(default)]
    last_activity: Option<(i64, u32)>,
    #[serde(default)]
    last_activity_unknown: Option<String>,
}

impl Entry {
    fn summary(&self) -> SessionSummary {
        SessionSummary {
            name: self.name.clone(),
            first_user_message: self.first_user_message.clone(),
            last_activity: self
                .last_activity
                .map(|(seconds, nanos)| Timestamp { seconds, nanos }),
            last_activity_unknown: self.last_activity_unknown.clone(),
        }
    }

    fn is_same_file(&self, metadata: &std::fs::Metadata) -> bool {
        self.dev == metadata.dev() && self.ino == metadata.ino()
    }

    fn is_unchanged(&self, metadata: &std::fs::Metadata) -> bool {
        self.is_same_file(metadata)
            && self.size == metadata.len()
            && self.mtime_seconds == metadata.mtime()
            && self.mtime_nanos == metadata.mtime_nsec()
    }
}

/// The entries by session path. Its hash is a fast one: every listed file is looked up.
type Entries = HashMap<String, Entry, foldhash::fast::RandomState>;

/// The cache file's contents.
#[derive(Debug, Default, Serialize, Deserialize)]
struct Document {
    version: u32,
    entries: Entries,
}

/// An entry as a request holds it: whether the request looked it up (a file it listed).
struct Slot {
    entry: Entry,
    is_seen: AtomicBool,
}

/// The identity of the cache file as it was read: if it is the same when the cache is
/// written back, no other run wrote it in between.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileIdentity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_nanos: i128,
}

impl FileIdentity {
    fn of(metadata: &std::fs::Metadata) -> FileIdentity {
        FileIdentity {
            dev: metadata.dev(),
            ino: metadata.ino(),
            size: metadata.len(),
            mtime_nanos: i128::from(metadata.mtime()) * 1_000_000_000
                + i128::from(metadata.mtime_nsec()),
        }
    }
}

/// The summary cache of one request: the entries read at its start, and what it read anew.
pub(crate) struct SummaryCache {
    dir: PathBuf,
    entries: HashMap<String, Slot, foldhash::fast::RandomState>,
    /// The cache file read at the start, when there was one.
    loaded: Option<FileIdentity>,
    updates: Mutex<Vec<(String, Entry)>>,
    n_hits: AtomicU64,
    n_appended: AtomicU64,
    n_read_whole: AtomicU64,
    n_bytes_scanned: AtomicU64,
    /// Whether the file read at the start could not be decoded: it is rewritten even when
    /// nothing was read anew.
    is_corrupt: bool,
}

impl SummaryCache {
    /// Opens the cache `env` names for a request over `stores`, creating its directory if
    /// need be; returns `None` when there is none to use (no cache directory, or no home for
    /// it), with notes for the person when it cannot be used or its file was corrupt.
    pub(crate) fn open(env: &Environment, stores: &[Store]) -> (Option<SummaryCache>, Vec<String>) {
        let mut notes = Vec::new();
        let Some(dir) = env.cache_dir.as_deref() else {
            return (None, notes);
        };
        match prepare_dir(dir, stores) {
            Ok(true) => {}
            Ok(false) => return (None, notes),
            Err(reason) => {
                notes.push(format!(
                    "summary cache {}: {reason}; names are read from file ends only",
                    dir.display()
                ));
                return (None, notes);
            }
        }
        let path = dir.join(FILE_NAME);
        let (entries, loaded, is_corrupt) = match load(&path) {
            Ok((entries, loaded)) => (entries, loaded, false),
            Err(reason) => {
                notes.push(format!(
                    "summary cache {}: {reason}; ignored and rebuilt",
                    path.display()
                ));
                (Entries::default(), None, true)
            }
        };
        let entries = entries
            .into_iter()
            .map(|(path, entry)| {
                let slot = Slot {
                    entry,
                    is_seen: AtomicBool::new(false),
                };
                (path, slot)
            })
            .collect();
        let cache = SummaryCache {
            dir: dir.to_owned(),
            entries,
            loaded,
            updates: Mutex::new(Vec::new()),
            n_hits: AtomicU64::new(0),
            n_appended: AtomicU64::new(0),
            n_read_whole: AtomicU64::new(0),
            n_bytes_scanned: AtomicU64::new(0),
            is_corrupt,
        };
        (Some(cache), notes)
    }

    /// Returns the whole-body facts of the session file at `path`, opened here (read-only,
    /// never through a symlink).
    pub(crate) fn summary_at(&self, path: &str) -> Result<SessionSummary, SummaryError> {
        let (file, _) = pi_retrospect_read::open_regular(
            Path::new(path),
            pi_retrospect_read::Symlinks::Refuse,
        )?;
        self.summary_of(path, &file, &[])
    }

    /// Returns the whole-body facts of the session file at `path`, open as `file`, whose
    /// first bytes the caller may already hold (`head`, possibly empty): from the cache when
    /// the file is unchanged, reading only what was appended when it grew, else reading it
    /// whole; what was read is kept for [`SummaryCache::save`].
    pub(crate) fn summary_of(
        &self,
        path: &str,
        file: &File,
        head: &[u8],
    ) -> Result<SessionSummary, SummaryError> {
        let metadata = file.metadata()?;
        let size = metadata.len();
        if !metadata.is_file() || size <= pi_retrospect_transcript::ENDS_WHOLE_BYTES as u64 {
            // Small files cost one read; anything else gets its error from the plain read.
            return pi_retrospect_transcript::read_summary_from(Path::new(path), file);
        }
        let cached = self.entries.get(path).map(|slot| {
            slot.is_seen.store(true, Ordering::Relaxed);
            &slot.entry
        });
        if let Some(entry) = cached
            && entry.is_unchanged(&metadata)
        {
            self.n_hits.fetch_add(1, Ordering::Relaxed);
            return Ok(entry.summary());
        }
        let appended_to = match cached {
            Some(entry)
                if entry.is_same_file(&metadata)
                    && size > entry.size
                    && head_hash(file, head, entry.size)? == entry.head_hash
                    && end_hash(file, entry.size)? == entry.end_hash =>
            {
                Some(entry)
            }
            _ => None,
        };
        let scan = match appended_to {
            Some(entry) => {
                self.n_appended.fetch_add(1, Ordering::Relaxed);
                pi_retrospect_transcript::scan_summary_from(
                    file,
                    size,
                    entry.summary(),
                    entry.lines_end,
                )?
            }
            None => {
                self.n_read_whole.fetch_add(1, Ordering::Relaxed);
                pi_retrospect_transcript::scan_summary_from(
                    file,
                    size,
                    SessionSummary::default(),
                    0,
                )?
            }
        };
        self.n_bytes_scanned
            .fetch_add(scan.n_bytes_scanned, Ordering::Relaxed);
        let summary = scan.summary;
        let entry = Entry {
            dev: metadata.dev(),
            ino: metadata.ino(),
            size,
            mtime_seconds: metadata.mtime(),
            mtime_nanos: metadata.mtime_nsec(),
            lines_end: scan.lines_end,
            head_hash: head_hash(file, head, size)?,
            end_hash: end_hash(file, size)?,
            name: summary.name.clone(),
            first_user_message: summary.first_user_message.clone(),
            last_activity: summary
                .last_activity
                .map(|instant| (instant.seconds, instant.nanos)),
            last_activity_unknown: summary.last_activity_unknown.clone(),
        };
        // A poisoned lock only means another reader panicked; the list itself is whole.
        let mut updates = self
            .updates
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        updates.push((path.to_owned(), entry));
        Ok(summary)
    }

    /// Returns what the cache did so far.
    pub(crate) fn counts(&self) -> CacheCounts {
        CacheCounts {
            n_hits: self.n_hits.load(Ordering::Relaxed),
            n_appended: self.n_appended.load(Ordering::Relaxed),
            n_read_whole: self.n_read_whole.load(Ordering::Relaxed),
            n_bytes_scanned: self.n_bytes_scanned.load(Ordering::Relaxed),
        }
    }

    /// Writes the cache back when it changed, with this run's reads put in: over the file
    /// as it is now when another run replaced it since it was read. When `walked` gives the
    /// stores this request walked, the entries of files under them that it did not look up
    /// and that are gone are dropped. Returns a note when it could not be written.
    pub(crate) fn save(self, walked: Option<&[Store]>) -> Vec<String> {
        let updates = self
            .updates
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let is_under_walked = |path: &str| {
            walked.is_some_and(|stores| {
                stores.iter().any(|store| {
                    path.strip_prefix(store.root.as_str())
                        .is_some_and(|rest| rest.starts_with('/'))
                })
            })
        };
        // A file looked up was listed; only the others are checked (none, when every
        // cached file was listed), without following a link.
        let gone: HashSet<&str> = self
            .entries
            .iter()
            .filter(|(path, slot)| !slot.is_seen.load(Ordering::Relaxed) && is_under_walked(path))
            .filter(|(path, _)| {
                std::fs::symlink_metadata(path)
                    .is_err_and(|error| error.kind() == std::io::ErrorKind::NotFound)
            })
            .map(|(path, _)| path.as_str())
            .collect();
        if updates.is_empty() && !self.is_corrupt && gone.is_empty() {
            return Vec::new();
        }
        let path = self.dir.join(FILE_NAME);
        // What another run wrote since this one started is kept; a file that cannot be read
        // now is replaced.
        let now = std::fs::symlink_metadata(&path)
            .ok()
            .map(|metadata| FileIdentity::of(&metadata));
        let gone: HashSet<String> = gone.into_iter().map(str::to_owned).collect();
        let mut entries: Entries = if now.is_some() && now == self.loaded {
            self.entries
                .into_iter()
                .map(|(path, slot)| (path, slot.entry))
                .collect()
        } else {
            load(&path).map(|(entries, _)| entries).unwrap_or_default()
        };
        entries.retain(|path, _| !gone.contains(path));
        entries.extend(updates);
        let document = Document {
            version: VERSION,
            entries,
        };
        match write_replacing(&self.dir, &document) {
            Ok(()) => Vec::new(),
            Err(error) => vec![format!(
                "summary cache {}: could not be written: {}",
                path.display(),
                pi_retrospect_read::describe_io(&error)
            )],
        }
    }
}

/// Makes sure `dir` exists as a directory of ours outside every store root: creates it (mode
/// 0700) and its parent when missing, but never more (a `$HOME` that does not exist gets no
/// cache). Returns `Ok(false)` when there is no place for it, or the reason it may not be
/// used.
fn prepare_dir(dir: &Path, stores: &[Store]) -> Result<bool, String> {
    if !dir.is_absolute() {
        return Err("not an absolute path".to_owned());
    }
    // Checked before anything is created: nothing may be written under a sessions root.
    let Some(existing) = dir.ancestors().find(|ancestor| ancestor.exists()) else {
        return Ok(false);
    };
    let canonical =
        std::fs::canonicalize(existing).map_err(|error| pi_retrospect_read::describe_io(&error))?;
    let rest = dir.strip_prefix(existing).unwrap_or(Path::new(""));
    let canonical = canonical.join(rest);
    for store in stores {
        let Ok(root) = std::fs::canonicalize(&store.root) else {
            continue;
        };
        if canonical.starts_with(&root) {
            return Err(format!("inside the sessions root {}", store.root));
        }
    }
    let parent = dir.parent().unwrap_or(dir);
    if !dir.exists() {
        if !parent.exists() {
            match parent.parent() {
                Some(grandparent) if grandparent.is_dir() => create_private_dir(parent)?,
                _ => return Ok(false),
            }
        }
        create_private_dir(dir)?;
    }
    // The directory itself, never a link to one, and no one else's to change.
    let metadata =
        std::fs::symlink_metadata(dir).map_err(|error| pi_retrospect_read::describe_io(&error))?;
    if !metadata.is_dir() {
        return Err("not a directory".to_owned());
    }
    if metadata.mode() & 0o022 != 0 {
        return Err("writable by other users".to_owned());
    }
    Ok(true)
}

fn create_private_dir(dir: &Path) -> Result<(), String> {
    match std::fs::DirBuilder::new().mode(0o700).create(dir) {
        Ok(()) => Ok(()),
        // Another run made it first.
        Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists => Ok(()),
        Err(error) => Err(format!(
            "could not create {}: {}",
            dir.display(),
            pi_retrospect_read::describe_io(&error)
        )),
    }
}

/// Reads the cache file at `path`: its entries and its identity (none when it does not
/// exist, no entries when it is of another version), or the reason it cannot be used.
fn load(path: &Path) -> Result<(Entries, Option<FileIdentity>), String> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC)
        .open(path);
    let mut file = match file {
        Ok(file) => file,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {
            return Ok((Entries::default(), None));
        }
        Err(error) => return Err(pi_retrospect_read::describe_io(&error)),
    };
    let metadata = file
        .metadata()
        .map_err(|error| pi_retrospect_read::describe_io(&error))?;
    if !metadata.is_file() {
        return Err("not a regular file".to_owned());
    }
    if metadata.len() > MAX_CACHE_FILE_BYTES {
        return Err(format!(
            "{} bytes, more than the {MAX_CACHE_FILE_BYTES} a cache file may hold",
            metadata.len()
        ));
    }
    let identity = Some(FileIdentity::of(&metadata));
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    std::io::Read::read_to_end(&mut file, &mut bytes)
        .map_err(|error| pi_retrospect_read::describe_io(&error))?;
    match serde_json::from_slice::<Document>(&bytes) {
        Ok(document) if document.version == VERSION => Ok((document.entries, identity)),
        Ok(_) => Ok((Entries::default(), identity)),
        Err(error) => {
            // Another version's file may have another shape: it is replaced, not reported.
            #[derive(Deserialize)]
            struct Version {
                version: u32,
            }
            match serde_json::from_slice::<Version>(&bytes) {
                Ok(Version { version }) if version != VERSION => Ok((Entries::default(), identity)),
                _ => Err(format!("not a cache file: {error}")),
            }
        }
    }
}

/// Writes `document` to a new file in `dir` and renames it over the cache file, so a reader
/// sees the old file or the new one, whole.
fn write_replacing(dir: &Path, document: &Document) -> std::io::Result<()> {
    // Unique among processes (the pid) and among the writes of one (the count); a name left
    // by a process that died is skipped.
    static N_WRITES: AtomicU64 = AtomicU64::new(0);
    let bytes = serde_json::to_vec(document).map_err(std::io::Error::other)?;
    let mut n_tries = 0;
    let (temporary, mut file) = loop {
        let temporary = dir.join(format!(
            ".{FILE_NAME}.{}.{}.tmp",
            std::process::id(),
            N_WRITES.fetch_add(1, Ordering::Relaxed)
        ));
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .custom_flags(libc::O_NOFOLLOW | libc::O_CLOEXEC)
            .open(&temporary)
        {
            Ok(file) => break (temporary, file),
            Err(error) if error.kind() == std::io::ErrorKind::AlreadyExists && n_tries < 8 => {
                n_tries += 1;
            }
            Err(error) => return Err(error),
        }
    };
    let result = file
        .write_all(&bytes)
        .and_then(|()| std::fs::rename(&temporary, dir.join(FILE_NAME)));
    if result.is_err() {
        let _ = std::fs::remove_file(&temporary);
    }
    result
}

/// Returns the hash of the first [`CHECK_BYTES`] (at most `size`) bytes of `file`, taken from
/// `head` when it holds them.
fn head_hash(file: &File, head: &[u8], size: u64) -> std::io::Result<u64> {
    let length = usize::try_from(CHECK_BYTES.min(size)).unwrap_or(0);
    if head.len() >= length {
        return Ok(check_hash(&head[..length]));
    }
    hash_at(file, 0, length)
}

/// Returns the hash of the [`CHECK_BYTES`] bytes of `file` before offset `size`.
fn end_hash(file: &File, size: u64) -> std::io::Result<u64> {
    let length = CHECK_BYTES.min(size);
    hash_at(file, size - length, usize::try_from(length).unwrap_or(0))
}

fn hash_at(file: &File, offset: u64, length: usize) -> std::io::Result<u64> {
    use std::os::unix::fs::FileExt;
    let mut buffer = vec![0u8; length];
    let mut filled = 0;
    while filled < length {
        match file.read_at(&mut buffer[filled..], offset + filled as u64) {
            // The file ended before: these bytes are not the ones cached.
            Ok(0) => break,
            Ok(n_read) => filled += n_read,
            Err(error) if error.kind() == std::io::ErrorKind::Interrupted => {}
            Err(error) => return Err(error),
        }
    }
    Ok(check_hash(&buffer[..filled]))
}

/// Returns the hash that identifies a checked piece of a file: its FNV-1a and its length.
fn check_hash(bytes: &[u8]) -> u64 {
    fnv1a(bytes) ^ bytes.len() as u64
}

/// Returns the 64-bit FNV-1a hash of `bytes`: stable across runs and builds.
fn fnv1a(bytes: &[u8]) -> u64 {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for &byte in bytes {
        hash ^= u64::from(byte);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::list::{ListRequest, list};
    use crate::store::StoreFlags;
    use pi_retrospect_testkit::{Block, Entry, Header, Message};

    /// The header of the sessions written here.
    fn header() -> String {
        Header::new("big").cwd("/w").to_string()
    }

    /// Returns `n` assistant lines of about a kilobyte each, stamped `minute`.
    fn filler(n: usize, minute: u32) -> String {
        let line = Entry::message(Message::assistant(&[Block::text(&"x".repeat(1000))]))
            .at(&format!("2026-01-01T00:{minute:02}:00.000Z"));
        format!("{line}\n").repeat(n)
    }

    fn named(name: &str) -> String {
        format!(
            "{}\n",
            Entry::session_info(name).at("2026-01-01T00:30:00.000Z")
        )
    }

    /// A session of about 3 MiB whose name is set once, in the middle.
    fn big_session() -> String {
        format!(
            "{}\n{}\n{}{}{}",
            header(),
            Entry::message(Message::user("first question")).at("2026-01-01T00:00:01.000Z"),
            filler(1500, 1),
            named("Named in the middle"),
            filler(1500, 2)
        )
    }

    /// A store holding one big session, a cache directory, and the environment naming it.
    struct Setup {
        dir: tempfile::TempDir,
        env: Environment,
    }

    impl Setup {
        fn new() -> Setup {
            let dir = tempfile::tempdir().expect("temp dir");
            std::fs::create_dir_all(dir.path().join("store/--w--")).expect("mkdir");
            std::fs::create_dir(dir.path().join("cache-home")).expect("mkdir");
            let env = Environment {
                cache_dir: Some(dir.path().join("cache-home/pi-retrospect")),
                ..Environment::default()
            };
            let setup = Setup { dir, env };
            setup.write(&big_session());
            setup
        }

        fn session(&self) -> PathBuf {
            self.dir.path().join("store/--w--/big.jsonl")
        }

        fn cache_file(&self) -> PathBuf {
            self.dir
                .path()
                .join("cache-home/pi-retrospect")
                .join(FILE_NAME)
        }

        fn write(&self, body: &str) {
            std::fs::write(self.session(), body).expect("write");
        }

        fn append(&self, text: &str) {
            let mut file = std::fs::OpenOptions::new()
                .append(true)
                .open(self.session())
                .expect("open");
            file.write_all(text.as_bytes()).expect("append");
        }

        fn request(&self) -> ListRequest {
            ListRequest {
                stores: StoreFlags {
                    sessions_root: Some(self.dir.path().join("store")),
                    ..StoreFlags::default()
                },
                read_summaries: true,
                threads: 2,
                ..ListRequest::default()
            }
        }

        /// Lists with `request` and returns the session's facts, the cache counts and the
        /// notes.
        fn list_with(
            &self,
            request: &ListRequest,
        ) -> (SessionSummary, Option<CacheCounts>, Vec<String>) {
            let result = list(request, &self.env).expect("listed");
            let session = &result.listing.sessions[0];
            let summary = match &session.summary {
                Some(summary) => SessionSummary::clone(summary),
                None => result.summaries[&session.path].clone(),
            };
            (summary, result.cache_counts, result.notes)
        }

        fn list(&self) -> (SessionSummary, Option<CacheCounts>, Vec<String>) {
            self.list_with(&self.request())
        }
    }

    fn counts(
        n_hits: u64,
        n_appended: u64,
        n_read_whole: u64,
        n_bytes_scanned: u64,
    ) -> CacheCounts {
        CacheCounts {
            n_hits,
            n_appended,
            n_read_whole,
            n_bytes_scanned,
        }
    }

    /// A name set once in the middle of a big file is found with the cache, read whole the
    /// first time and not at all the second; the bounded read without the cache misses it.
    #[test]
    fn a_name_set_in_the_middle_is_found_and_kept() {
        let setup = Setup::new();
        let size = std::fs::metadata(setup.session()).expect("stat").len();
        let (summary, counts_seen, notes) = setup.list();
        assert_eq!(summary.name.as_deref(), Some("Named in the middle"));
        assert_eq!(
            summary.first_user_message.as_deref(),
            Some("first question")
        );
        assert_eq!(counts_seen, Some(counts(0, 0, 1, size)));
        assert!(notes.is_empty(), "{notes:?}");
        let mode = std::fs::metadata(setup.cache_file().parent().expect("dir"))
            .expect("stat")
            .mode();
        assert_eq!(mode & 0o777, 0o700);
        let (again, counts_seen, _) = setup.list();
        assert_eq!(again, summary);
        assert_eq!(counts_seen, Some(counts(1, 0, 0, 0)));
        // A name filter reads through the same cache.
        let (filtered, counts_seen, _) = setup.list_with(&ListRequest {
            name_contains: Some("middle".to_owned()),
            ..setup.request()
        });
        assert_eq!(filtered, summary);
        assert_eq!(counts_seen, Some(counts(1, 0, 0, 0)));
        // So does a listing that reads after filtering (a limit).
        let (limited, counts_seen, _) = setup.list_with(&ListRequest {
            limit: Some(1),
            ..setup.request()
        });
        assert_eq!(limited, summary);
        assert_eq!(counts_seen, Some(counts(1, 0, 0, 0)));
        let (bounded, counts_seen, _) = setup.list_with(&ListRequest {
            no_cache: true,
            ..setup.request()
        });
        assert_eq!(bounded.name, None);
        assert_eq!(counts_seen, None);
    }

    /// An append is read from where the last read's whole lines ended: exactly the new
    /// bytes, and a name set in them wins; a line that was cut at the old end is read whole.
    #[test]
    fn an_append_reads_only_the_new_bytes() {
        let setup = Setup::new();
        let cut_line = named("Cut then finished");
        let (start, end) = cut_line.split_at(20);
        setup.append(start);
        let old_size = std::fs::metadata(setup.session()).expect("stat").len();
        setup.list();
        let (summary, counts_seen, _) = setup.list();
        assert_eq!(summary.name.as_deref(), Some("Named in the middle"));
        assert_eq!(counts_seen, Some(counts(1, 0, 0, 0)));
        let more = format!("{end}{}", filler(3, 40));
        setup.append(&more);
        let (summary, counts_seen, _) = setup.list();
        assert_eq!(summary.name.as_deref(), Some("Cut then finished"));
        assert_eq!(
            summary.last_activity,
            pi_retrospect_core::timestamp::parse("2026-01-01T00:40:00.000Z")
        );
        let n_new = (start.len() + more.len()) as u64;
        assert_eq!(counts_seen, Some(counts(0, 1, 0, n_new)));
        assert!(n_new < old_size / 100);
        let (_, counts_seen, _) = setup.list();
        assert_eq!(counts_seen, Some(counts(1, 0, 0, 0)));
    }

    /// A file that shrank, was replaced by another, or was rewritten in place with more bytes
    /// is read whole again, and its facts are the new file's.
    #[test]
    fn a_changed_file_is_read_whole_again() {
        let setup = Setup::new();
        setup.list();
        // Truncated.
        let shorter = format!("{}\n{}", header(), filler(100, 3));
        setup.write(&shorter);
        let (summary, counts_seen, _) = setup.list();
        assert_eq!(summary.name, None);
        assert_eq!(summary.first_user_message, None);
        assert_eq!(counts_seen, Some(counts(0, 0, 1, shorter.len() as u64)));
        // Replaced by a new file (another inode), longer.
        let replacement = format!("{shorter}{}{}", named("Replaced"), filler(10, 4));
        let staged = setup.dir.path().join("store/staged");
        std::fs::write(&staged, &replacement).expect("write");
        std::fs::rename(&staged, setup.session()).expect("rename");
        let (summary, counts_seen, _) = setup.list();
        assert_eq!(summary.name.as_deref(), Some("Replaced"));
        assert_eq!(counts_seen, Some(counts(0, 0, 1, replacement.len() as u64)));
        // Rewritten in place, longer, its start changed: not an append.
        let rewritten = replacement.replacen("Replaced", "Rewrote!", 1) + &named("Rewritten");
        let rewritten =
            rewritten.replacen("2026-01-01T00:00:00.000Z", "2026-01-01T00:00:00.001Z", 1);
        std::fs::OpenOptions::new()
            .write(true)
            .open(setup.session())
            .and_then(|mut file| file.write_all(rewritten.as_bytes()))
            .expect("rewrite");
        let (summary, counts_seen, _) = setup.list();
        assert_eq!(summary.name.as_deref(), Some("Rewritten"));
        assert_eq!(counts_seen, Some(counts(0, 0, 1, rewritten.len() as u64)));
    }

    /// A corrupt cache file is reported once, its facts are never used, and it is rebuilt.
    #[test]
    fn a_corrupt_cache_is_ignored_and_rebuilt() {
        let setup = Setup::new();
        setup.list();
        for garbage in [
            "{\"version\":1,\"entries\":{\"x\":",
            "\u{0}\u{1}binary",
            "[]",
        ] {
            std::fs::write(setup.cache_file(), garbage).expect("write");
            let (summary, counts_seen, notes) = setup.list();
            assert_eq!(summary.name.as_deref(), Some("Named in the middle"));
            assert_eq!(counts_seen.map(|counts| counts.n_read_whole), Some(1));
            assert_eq!(notes.len(), 1, "{notes:?}");
            assert!(
                notes[0].contains(FILE_NAME) && notes[0].contains("rebuilt"),
                "{notes:?}"
            );
            let (_, counts_seen, notes) = setup.list();
            assert_eq!(counts_seen, Some(counts(1, 0, 0, 0)));
            assert!(notes.is_empty(), "{notes:?}");
        }
    }

    /// A cache file larger than the bound is not read (a sparse file costs no disk here): it
    /// is reported once and rebuilt, and the listing is still right.
    #[test]
    fn an_oversized_cache_file_is_not_read() {
        let setup = Setup::new();
        setup.list();
        let file = std::fs::OpenOptions::new()
            .write(true)
            .open(setup.cache_file())
            .expect("open");
        file.set_len(MAX_CACHE_FILE_BYTES + 1).expect("grow");
        drop(file);
        let (summary, counts_seen, notes) = setup.list();
        assert_eq!(summary.name.as_deref(), Some("Named in the middle"));
        assert_eq!(counts_seen.map(|counts| counts.n_read_whole), Some(1));
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(notes[0].contains("more than the"), "{notes:?}");
        let (_, counts_seen, notes) = setup.list();
        assert_eq!(counts_seen, Some(counts(1, 0, 0, 0)));
        assert!(notes.is_empty(), "{notes:?}");
    }

    /// Runs at the same time leave a cache file every later run can use.
    #[test]
    fn concurrent_runs_leave_a_valid_cache() {
        let setup = Setup::new();
        for index in 0..20 {
            let body = format!(
                "{}\n{}{}",
                header(),
                filler(20, 5),
                named(&format!("n{index}"))
            );
            std::fs::write(
                setup.dir.path().join(format!("store/--w--/s{index}.jsonl")),
                body,
            )
            .expect("write");
        }
        std::thread::scope(|scope| {
            for _ in 0..4 {
                scope.spawn(|| setup.list());
            }
        });
        let (entries, _) = load(&setup.cache_file()).expect("a valid cache file");
        assert_eq!(entries.len(), 21);
        let result = list(&setup.request(), &setup.env).expect("listed");
        assert_eq!(result.cache_counts, Some(counts(21, 0, 0, 0)));
        // No temporary file is left behind.
        let n_files = std::fs::read_dir(setup.cache_file().parent().expect("dir"))
            .expect("read dir")
            .count();
        assert_eq!(n_files, 1);
    }

    /// With `no_cache` the cache is neither read (a planted entry with the file's identity is
    /// not used) nor written (the file keeps its bytes), nor created.
    #[test]
    fn no_cache_neither_reads_nor_writes() {
        let setup = Setup::new();
        let no_cache = ListRequest {
            no_cache: true,
            ..setup.request()
        };
        setup.list_with(&no_cache);
        assert!(!setup.cache_file().parent().expect("dir").exists());
        setup.list();
        let planted = std::fs::read_to_string(setup.cache_file())
            .expect("cache")
            .replace("Named in the middle", "Planted in the cache");
        std::fs::write(setup.cache_file(), &planted).expect("write");
        let (summary, _, _) = setup.list();
        assert_eq!(summary.name.as_deref(), Some("Planted in the cache"));
        let before = std::fs::metadata(setup.cache_file()).expect("stat");
        // The planted entry matches the file exactly, yet is not used.
        let (summary, counts_seen, _) = setup.list_with(&no_cache);
        assert_eq!(summary.name, None);
        assert_eq!(counts_seen, None);
        let filtered = list(
            &ListRequest {
                name_contains: Some("Planted".to_owned()),
                ..no_cache.clone()
            },
            &setup.env,
        )
        .expect("listed");
        assert!(filtered.listing.sessions.is_empty());
        setup.append(&named("Appended"));
        let (summary, _, _) = setup.list_with(&no_cache);
        assert_eq!(summary.name.as_deref(), Some("Appended"));
        assert_eq!(
            std::fs::read_to_string(setup.cache_file()).expect("cache"),
            planted
        );
        let after = std::fs::metadata(setup.cache_file()).expect("stat");
        assert_eq!(after.ino(), before.ino());
        assert_eq!(after.mtime_nsec(), before.mtime_nsec());
    }

    /// A cache directory inside a sessions root is never used or created; a home that does
    /// not exist gets no cache and no note.
    #[test]
    fn no_cache_inside_a_store_or_without_a_home() {
        let setup = Setup::new();
        let inside = setup.dir.path().join("store/cache");
        let env = Environment {
            cache_dir: Some(inside.join("pi-retrospect")),
            ..setup.env.clone()
        };
        let result = list(&setup.request(), &env).expect("listed");
        assert_eq!(result.cache_counts, None);
        assert_eq!(result.notes.len(), 1, "{:?}", result.notes);
        assert!(result.notes[0].contains("inside the sessions root"));
        assert!(!inside.exists());
        // Nor through a link that leads into the store.
        std::os::unix::fs::symlink(
            setup.dir.path().join("store"),
            setup.dir.path().join("link"),
        )
        .expect("symlink");
        let env = Environment {
            cache_dir: Some(setup.dir.path().join("link/cache/pi-retrospect")),
            ..setup.env.clone()
        };
        let result = list(&setup.request(), &env).expect("listed");
        assert_eq!(result.cache_counts, None);
        assert!(result.notes[0].contains("inside the sessions root"));
        assert!(!inside.exists());
        let env = Environment {
            cache_dir: Some(setup.dir.path().join("no-home/.cache/pi-retrospect")),
            ..setup.env.clone()
        };
        let result = list(&setup.request(), &env).expect("listed");
        assert_eq!(result.cache_counts, None);
        assert!(result.notes.is_empty());
        assert!(!setup.dir.path().join("no-home").exists());
    }

    /// Files that are gone from a walked store are forgotten; other stores' entries stay.
    #[test]
    fn files_gone_from_a_walked_store_are_forgotten() {
        let setup = Setup::new();
        let other = setup.dir.path().join("store/--w--/other.jsonl");
        std::fs::write(&other, format!("{}\n{}", header(), filler(30, 6))).expect("write");
        setup.list();
        let (mut entries, _) = load(&setup.cache_file()).expect("cache");
        assert_eq!(entries.len(), 2);
        let elsewhere = entries.values().next().expect("entry").clone();
        entries.insert("/elsewhere/--x--/kept.jsonl".to_owned(), elsewhere);
        let document = Document {
            version: VERSION,
            entries,
        };
        write_replacing(setup.cache_file().parent().expect("dir"), &document).expect("write");
        std::fs::remove_file(&other).expect("remove");
        setup.list();
        let mut kept: Vec<String> = load(&setup.cache_file())
            .expect("cache")
            .0
            .into_keys()
            .collect();
        kept.sort();
        assert_eq!(
            kept,
            [
                "/elsewhere/--x--/kept.jsonl".to_owned(),
                setup.session().to_str().expect("utf-8").to_owned()
            ]
        );
    }
}
