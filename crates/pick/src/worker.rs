//! The background work of the picker, each on its own thread so the keyboard never waits:
//! the whole store's listing and then every session's body facts (names, first messages),
//! previews (the latest asked for wins), and full-text searches with the `search` command's
//! engine (a new one stops the old). Everything comes back to the event loop as
//! [`Message`]s on one channel.

use std::ops::ControlFlow;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, channel};

use pi_retrospect_app::picker::{PreviewLimits, preview};
use pi_retrospect_app::{
    CaseMode, Environment, ListRequest, SearchEvent as Event, SearchMode as Mode, SearchRequest,
    SearchTerms,
};
use pi_retrospect_core::SessionSummary;
use pi_retrospect_core::order::SortOrder;

use crate::index::Index;
use crate::state::{FoundText, PreviewSlot};

/// Body facts read per batch sent to the event loop.
const SUMMARY_BATCH: usize = 256;
/// Files searched per progress report (a file with a hit is reported at once).
const SEARCH_BATCH: usize = 256;

/// What the background threads report.
#[derive(Debug)]
pub(crate) enum Message {
    /// The whole store's index, and how many body facts will be read.
    Index {
        /// The index.
        index: Index,
        /// How many sessions' body facts are to be read.
        n_to_read: usize,
    },
    /// Listing the whole store failed (the current directory's sessions stay listed).
    IndexFailed(String),
    /// Body facts read.
    Summaries(Vec<(String, SessionSummary)>),
    /// A preview read.
    Preview(String, PreviewSlot),
    /// A preview asked for and skipped for a newer request (asked again when selected again).
    PreviewSkipped(String),
    /// Progress of a full-text search.
    Search {
        /// Which search.
        generation: u64,
        /// Paths found since the last report, each with the text around its first match.
        matched: Vec<(String, Option<FoundText>)>,
        /// Files searched so far.
        n_done: usize,
        /// Whether the search has finished.
        is_done: bool,
    },
    /// A full-text search failed (a store that cannot be listed).
    SearchFailed {
        /// Which search.
        generation: u64,
        /// Why.
        reason: String,
    },
}

/// The background threads and the channel they report on.
#[derive(Debug)]
pub(crate) struct Workers {
    sender: Sender<Message>,
    /// Where the reports arrive.
    pub receiver: Receiver<Message>,
    stop: Arc<AtomicBool>,
    preview_requests: Option<Sender<String>>,
    search_generation: Arc<AtomicU64>,
}

impl Workers {
    /// Returns workers with nothing started; the preview thread starts on the first request.
    pub fn new() -> Workers {
        let (sender, receiver) = channel();
        Workers {
            sender,
            receiver,
            stop: Arc::new(AtomicBool::new(false)),
            preview_requests: None,
            search_generation: Arc::new(AtomicU64::new(0)),
        }
    }

    /// Lists the whole store (header-only), then reads every session's body facts, those of
    /// `here` first.
    pub fn start_index(&self, request: ListRequest, env: Environment, here: String) {
        let sender = self.sender.clone();
        let stop = Arc::clone(&self.stop);
        spawn("pick-index", move || {
            let result = pi_retrospect_app::list(&request, &env);
            let index = match result {
                Ok(result) => Index::from_listing(&result.listing),
                Err(error) => {
                    let _ = sender.send(Message::IndexFailed(error.to_string()));
                    return;
                }
            };
            let paths = index.paths_to_read(&here);
            let message = Message::Index {
                index,
                n_to_read: paths.len(),
            };
            if sender.send(message).is_err() {
                return;
            }
            // Through the summary cache, which keeps what is read for the next start; the
            // picker has no place to show its notes.
            let reader = pi_retrospect_app::SummaryReader::open(&request, &env);
            for batch in paths.chunks(SUMMARY_BATCH) {
                if stop.load(Ordering::Relaxed) {
                    break;
                }
                let refs: Vec<&str> = batch.iter().map(String::as_str).collect();
                let read = reader.read(&refs);
                let summaries = batch
                    .iter()
                    .zip(read)
                    .map(|(path, result)| (path.clone(), result.unwrap_or_default()))
                    .collect();
                if sender.send(Message::Summaries(summaries)).is_err() {
                    break;
                }
            }
            let _ = reader.finish();
        });
    }

    /// Asks for the preview of `path`; a request still waiting when a newer one comes is
    /// dropped.
    pub fn request_preview(&mut self, path: String, env: &Environment) {
        if self.preview_requests.is_none() {
            let (requests, receiver) = channel::<String>();
            let sender = self.sender.clone();
            let stop = Arc::clone(&self.stop);
            let env = env.clone();
            spawn("pick-preview", move || {
                while let Ok(mut path) = receiver.recv() {
                    while let Ok(newer) = receiver.try_recv() {
                        let _ = sender.send(Message::PreviewSkipped(path));
                        path = newer;
                    }
                    if stop.load(Ordering::Relaxed) {
                        return;
                    }
                    let slot = match preview(&path, &PreviewLimits::default(), &env) {
                        Ok(preview) => PreviewSlot::Ready(Box::new(preview)),
                        Err(error) => PreviewSlot::Failed(error.to_string()),
                    };
                    if sender.send(Message::Preview(path, slot)).is_err() {
                        return;
                    }
                }
            });
            self.preview_requests = Some(requests);
        }
        if let Some(requests) = &self.preview_requests {
            let _ = requests.send(path);
        }
    }

    /// Starts full-text search `generation` for `term` over the sessions of `request`'s stores
    /// (`app::search`, the first hit of each file, over the default searchable texts with
    /// smart case, as `search` has them), newest first; stops any older search.
    pub fn start_search(
        &self,
        term: &str,
        generation: u64,
        request: ListRequest,
        env: Environment,
    ) {
        self.search_generation.store(generation, Ordering::SeqCst);
        let current = Arc::clone(&self.search_generation);
        let stop = Arc::clone(&self.stop);
        let sender = self.sender.clone();
        let search = SearchRequest {
            sessions: ListRequest {
                read_summaries: false,
                ..request
            },
            session: None,
            terms: SearchTerms {
                case: CaseMode::Smart,
                ..SearchTerms::new(term)
            },
            order: SortOrder::NEWEST_FIRST,
            // The first hit of each file (its scan stops there), for the text shown on its row.
            mode: Mode::Hits,
            limit: None,
            max_per_file: Some(1),
            resume_at: None,
        };
        spawn("pick-search", move || {
            let is_current =
                || current.load(Ordering::SeqCst) == generation && !stop.load(Ordering::Relaxed);
            let mut matched = Vec::new();
            let mut found: Option<FoundText> = None;
            let mut n_done = 0;
            let mut n_unreported = 0;
            let result = pi_retrospect_app::search(&search, &env, &mut |event| {
                if !is_current() {
                    return ControlFlow::Break(());
                }
                let count = match event {
                    Event::Hit(hit) => {
                        found = Some(FoundText::of(hit));
                        return ControlFlow::Continue(());
                    }
                    Event::Warning(_) => return ControlFlow::Continue(()),
                    Event::FileDone(count) => count,
                };
                n_done += 1;
                n_unreported += 1;
                let found = found.take();
                if count.n_hits > 0 {
                    matched.push((count.path.clone(), found));
                }
                if !matched.is_empty() || n_unreported >= SEARCH_BATCH {
                    n_unreported = 0;
                    let message = Message::Search {
                        generation,
                        matched: std::mem::take(&mut matched),
                        n_done,
                        is_done: false,
                    };
                    if sender.send(message).is_err() {
                        return ControlFlow::Break(());
                    }
                }
                ControlFlow::Continue(())
            });
            if !is_current() {
                return;
            }
            let message = match result {
                Ok(_) => Message::Search {
                    generation,
                    matched,
                    n_done,
                    is_done: true,
                },
                Err(error) => Message::SearchFailed {
                    generation,
                    reason: error.to_string(),
                },
            };
            let _ = sender.send(message);
        });
    }

    /// Stops the running full-text search.
    pub fn stop_search(&self) {
        self.search_generation.fetch_add(1 << 32, Ordering::SeqCst);
    }

    /// Stops every background thread at its next check (reads already started finish).
    pub fn stop(&self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Starts a named background thread; a thread that cannot be started leaves its work undone
/// (the picker keeps working with what it has).
fn spawn(name: &str, work: impl FnOnce() + Send + 'static) {
    let _ = std::thread::Builder::new()
        .name(name.to_owned())
        .spawn(work);
}

#[cfg(test)]
mod tests {
    use super::*;
    use pi_retrospect_testkit::{Entry, Header};

    /// The picker's index gets a session's name however deep in a long file it was set, and
    /// keeps it in the summary cache for the next start.
    #[test]
    fn the_index_gets_a_name_set_in_the_middle_of_a_long_file() {
        let dir = tempfile::tempdir().expect("temp dir");
        let project = dir.path().join("store/--w--");
        std::fs::create_dir_all(&project).expect("mkdir");
        std::fs::create_dir(dir.path().join("cache")).expect("mkdir");
        let filler = Entry::message(
            pi_retrospect_testkit::Message::with_role("assistant").text_member(
                "content",
                "filler filler filler filler filler filler filler filler",
            ),
        )
        .at("2026-01-01T00:01:00.000Z");
        let filler = format!("{filler}\n").repeat(20_000);
        let body = format!(
            "{}\n{}\n{filler}{}\n{filler}",
            Header::new("big").cwd("/w"),
            Entry::message(pi_retrospect_testkit::Message::user("first question"))
                .at("2026-01-01T00:00:01.000Z"),
            Entry::session_info("Named in the middle").at("2026-01-01T00:00:02.000Z"),
        );
        let path = project.join("big.jsonl");
        std::fs::write(&path, body).expect("write");
        let cache_dir = dir.path().join("cache/pi-retrospect");
        let env = Environment {
            cwd: "/w".into(),
            cache_dir: Some(cache_dir.clone()),
            ..Environment::default()
        };
        let request = ListRequest {
            stores: pi_retrospect_app::StoreFlags {
                sessions_root: Some(dir.path().join("store")),
                ..pi_retrospect_app::StoreFlags::default()
            },
            ..ListRequest::default()
        };
        let workers = Workers::new();
        workers.start_index(request, env, "/w".to_owned());
        let timeout = std::time::Duration::from_secs(120);
        let (mut index, n_to_read) = match workers.receiver.recv_timeout(timeout) {
            Ok(Message::Index { index, n_to_read }) => (index, n_to_read),
            other => panic!("expected the index, got {other:?}"),
        };
        assert_eq!(n_to_read, 1);
        match workers.receiver.recv_timeout(timeout) {
            Ok(Message::Summaries(summaries)) => {
                for (path, summary) in &summaries {
                    index.set_summary(path, summary);
                }
            }
            other => panic!("expected summaries, got {other:?}"),
        }
        let path = path.to_str().expect("utf-8");
        let entry = &index.entries[index.find(path).expect("indexed")];
        assert_eq!(entry.name(), Some("Named in the middle"));
        // The reader writes the cache once it has read everything.
        let cache_file = cache_dir.join(pi_retrospect_app::CACHE_FILE_NAME);
        let deadline = std::time::Instant::now() + timeout;
        while !cache_file.exists() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        let cache = std::fs::read_to_string(&cache_file).expect("cache written");
        assert!(cache.contains("Named in the middle"));
    }
}
