//! What an interactive picker needs beyond [`list`](crate::list()): the current directory's
//! sessions read without walking the rest of the store (so a first screen can be drawn before
//! the whole index is read), and a bounded preview of one session.

use std::collections::BTreeMap;
use std::path::Path;

use pi_retrospect_core::{Listing, Session, SessionRow};
use pi_retrospect_handoff::HandoffOptions;
/// The messages of a preview are those of a handoff excerpt.
pub use pi_retrospect_handoff::{HandoffMessage, HandoffRole};
/// The redaction a preview's messages get, for the other text a picker shows of a session
/// (its name and first message).
pub use pi_retrospect_handoff::{Redacted, redact};
use pi_retrospect_transcript::Transcript;
use pi_retrospect_walk::{Layout, Store, WalkOptions};

use crate::env::Environment;
use crate::error::AppError;
use crate::list::{ListRequest, ListResult};
use crate::store::resolve_stores;

/// Returns the name of the project directory Pi keeps the sessions of `cwd` in:
/// `--<cwd without its leading separator, every '/', '\' and ':' made '-'>--`
/// (`/home/me/app` -> `--home-me-app--`).
pub fn project_dir_name(cwd: &str) -> String {
    let trimmed = cwd
        .strip_prefix('/')
        .or_else(|| cwd.strip_prefix('\\'))
        .unwrap_or(cwd);
    let slug: String = trimmed
        .chars()
        .map(|character| match character {
            '/' | '\\' | ':' => '-',
            other => other,
        })
        .collect();
    format!("--{slug}--")
}

/// Lists the sessions whose cwd is the current directory, reading only the project directory
/// Pi files them under in each default-layout store (and every custom, flat, store whole),
/// with `request`'s other filters, sort and limit applied. Header-only, whatever
/// `request.read_summaries` says, but for the last activity of each session when the sort
/// asks for it (a bounded read from the file's end).
///
/// This is the quick part of a listing, for a first screen: a session whose file sits in
/// another project directory than its cwd's is found only by [`list`](crate::list()).
pub fn list_here(request: &ListRequest, env: &Environment) -> Result<ListResult, AppError> {
    let here = ListRequest {
        here: true,
        read_summaries: false,
        unique_id_prefixes: false,
        ..request.clone()
    };
    let query = here.filter(env)?;
    let (stores, store_warnings) = resolve_stores(&request.stores, env)?;
    let cwd = env
        .cwd
        .to_str()
        .ok_or_else(|| AppError::io("the current directory is not valid UTF-8"))?;
    let project = project_dir_name(&pi_retrospect_core::path::normalize_absolute(cwd));
    // Only the current directory's project directory is read below, where a missing one is
    // normal; a root that cannot be read at all (a typo, a file) would show as an empty
    // store, so it fails here with the reason `list` gives in its warning.
    for store in &stores {
        match std::fs::read_dir(&store.root) {
            Ok(_) => {}
            Err(error) if store.missing_ok && error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => {
                return Err(AppError::io(format!(
                    "{}: sessions root not readable: {}",
                    store.root,
                    pi_retrospect_read::describe_io(&error)
                )));
            }
        }
    }
    let stores: Vec<Store> = stores
        .into_iter()
        .map(|store| match store.layout {
            Layout::Projects => Store {
                root: format!("{}/{project}", store.root.trim_end_matches('/')),
                layout: Layout::Flat,
                missing_ok: true,
            },
            Layout::Flat => store,
        })
        .collect();
    let mut listing = pi_retrospect_walk::list_stores(
        &stores,
        &WalkOptions {
            threads: request.threads,
        },
    )?;
    listing.warnings.extend(store_warnings);
    if let Some(current) = crate::list::current_to_leave_out(&here, env)? {
        current.remove_from(&mut listing.sessions);
    }
    // Ordered by last activity (Pi's `/resume` order), the few sessions of one directory
    // have their ends read: a bounded read per file.
    let activities = if query.order.key == pi_retrospect_core::order::SortKey::Activity {
        let paths: Vec<&str> = listing
            .sessions
            .iter()
            .map(|session| session.path.as_str())
            .collect();
        let read = crate::list::read_last_activities(&paths);
        let mut activities = crate::list::PathMap::default();
        for (path, result) in paths.iter().zip(read) {
            match result {
                Ok(summary) => {
                    activities.insert((*path).to_owned(), summary);
                }
                Err(warning) => listing.warnings.push(warning),
            }
        }
        activities
    } else {
        crate::list::PathMap::default()
    };
    query.apply(&mut listing, &|path| activities.get(path));
    listing.warnings.sort();
    listing.warnings.dedup();
    Ok(ListResult {
        listing,
        ..ListResult::default()
    })
}

/// How much of a session a preview reads and keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PreviewLimits {
    /// At most this many of the latest user and assistant messages.
    pub max_messages: usize,
    /// Each message's text cut to at most this many bytes.
    pub max_message_bytes: usize,
    /// All messages' text together at most this many bytes.
    pub max_total_bytes: usize,
}

impl Default for PreviewLimits {
    /// Returns the picker's limits: six messages, 1 KiB each, 4 KiB together.
    fn default() -> PreviewLimits {
        PreviewLimits {
            max_messages: 6,
            max_message_bytes: 1024,
            max_total_bytes: 4096,
        }
    }
}

/// A bounded preview of one session: what it is, what it cost, and how it ended.
#[derive(Debug, Clone, PartialEq)]
pub struct Preview {
    /// The session file.
    pub path: String,
    /// The header's session id.
    pub session_id: Option<String>,
    /// The name Pi shows (latest `session_info`), raw.
    pub name: Option<String>,
    /// The header's working directory.
    pub cwd: Option<String>,
    /// The earliest and latest entry timestamps, UTC RFC 3339.
    pub first_activity: Option<String>,
    /// The latest entry timestamp, UTC RFC 3339.
    pub last_activity: Option<String>,
    /// Models used, `provider/model`, in order of first use.
    pub models: Vec<String>,
    /// Number of messages per role.
    pub messages_by_role: BTreeMap<String, u64>,
    /// Number of entries.
    pub n_entries: usize,
    /// Tokens and cost of the file itself (not of its runs), counted as Pi counts them;
    /// `None` when it holds no usage record.
    pub usage: Option<pi_retrospect_core::stats::Usage>,
    /// The latest user and assistant text messages, oldest first: terminal controls stripped,
    /// credentials redacted, cut to the limits. Never thinking, tool calls or tool output.
    pub messages: Vec<HandoffMessage>,
    /// How many user and assistant messages with text the active branch holds.
    pub n_messages_available: usize,
}

/// Reads a bounded preview of the session file at `path` (read-only, like every read here).
pub fn preview(path: &str, limits: &PreviewLimits, env: &Environment) -> Result<Preview, AppError> {
    let header = pi_retrospect_header::read_header(Path::new(path))
        .map_err(|error| AppError::io(format!("{path}: {error}")))?;
    let transcript = Transcript::open(Path::new(path))?;
    let facts = pi_retrospect_transcript::facts(&transcript)?;
    let options = HandoffOptions {
        max_messages: limits.max_messages,
        max_message_bytes: limits.max_message_bytes,
        max_excerpt_bytes: limits.max_total_bytes,
        ..HandoffOptions::default()
    };
    let handoff = pi_retrospect_handoff::handoff(&transcript, Path::new(path), &options)
        .map_err(|error| AppError::io(crate::error::error_chain(&error)))?;
    drop(transcript);
    let listing = Listing {
        sessions: vec![Session::from_row(SessionRow {
            path: path.to_owned(),
            header,
        })],
        warnings: Vec::new(),
    };
    let report = pi_retrospect_stats::stats(
        &listing,
        pi_retrospect_stats::StatsOptions::new(env.time_zone.clone()),
    );
    Ok(Preview {
        path: path.to_owned(),
        session_id: facts.session_id,
        name: facts.name,
        cwd: facts.cwd,
        first_activity: facts.first_activity,
        last_activity: facts.last_activity,
        models: facts.models,
        messages_by_role: facts.messages_by_role,
        n_entries: facts.n_entries,
        usage: (!report.total.is_empty()).then_some(report.total),
        messages: handoff.excerpt.messages,
        n_messages_available: handoff.excerpt.n_available,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_dir_names_follow_pi() {
        let cases = [
            ("/home/me/app", "--home-me-app--"),
            ("/", "----"),
            (
                "/tmp/pi-real-fixture/home/user/project",
                "--tmp-pi-real-fixture-home-user-project--",
            ),
            ("C:\\Users\\me\\app", "--C--Users-me-app--"),
            ("\\\\server\\share", "---server-share--"),
        ];
        for (cwd, expected) in cases {
            assert_eq!(project_dir_name(cwd), expected, "{cwd}");
        }
    }

    fn paths(sessions: &[Session], out: &mut Vec<String>) {
        for session in sessions {
            out.push(session.path.clone());
            paths(&session.subagent_sessions, out);
        }
    }

    /// The quick listing of one project directory finds what the whole walk filtered by the
    /// current directory finds, on the committed stores.
    #[test]
    fn list_here_agrees_with_the_whole_walk() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        let cases = [
            ("sessions", "/home/user/app", true),
            ("sessions", "/home/user/tool", true),
            ("sessions", "/nowhere", false),
            (
                "pi-real/sessions",
                "/tmp/pi-real-fixture/home/user/project",
                true,
            ),
        ];
        for (store, cwd, is_found) in cases {
            let env = Environment {
                cwd: cwd.into(),
                ..Environment::default()
            };
            let request = ListRequest {
                stores: crate::StoreFlags {
                    sessions_root: Some(root.join(store)),
                    ..crate::StoreFlags::default()
                },
                ..ListRequest::default()
            };
            let quick = list_here(&request, &env).expect("listed here");
            let whole = crate::list(
                &ListRequest {
                    here: true,
                    ..request.clone()
                },
                &env,
            )
            .expect("listed");
            let (mut quick_paths, mut whole_paths) = (Vec::new(), Vec::new());
            paths(&quick.listing.sessions, &mut quick_paths);
            paths(&whole.listing.sessions, &mut whole_paths);
            assert_eq!(quick_paths, whole_paths, "{store} {cwd}");
            assert_eq!(!quick_paths.is_empty(), is_found, "{store} {cwd}");
        }
    }

    /// A sessions root that does not exist or is a file fails the quick
    /// listing with the reason `list` warns of, instead of showing an empty store.
    #[test]
    fn list_here_refuses_a_root_it_cannot_read() {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures");
        let file = Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml");
        // (root, the end of the message)
        let cases = [
            (
                fixtures.join("no-such-root"),
                "sessions root not readable: No such file or directory",
            ),
            (file, "sessions root not readable: Not a directory"),
        ];
        for (root, expected) in cases {
            let request = ListRequest {
                stores: crate::StoreFlags {
                    sessions_root: Some(root.clone()),
                    ..crate::StoreFlags::default()
                },
                ..ListRequest::default()
            };
            let error = list_here(&request, &Environment::default()).expect_err("refused");
            assert_eq!(error.kind, crate::ErrorKind::Io, "{}", root.display());
            assert!(error.message.ends_with(expected), "{}", error.message);
            assert!(error.message.contains("no-such-root") || error.message.contains("Cargo.toml"));
        }
    }

    /// A preview holds the header facts, usage and the latest text messages, cut to the
    /// limits, on a file the real Pi wrote.
    #[test]
    fn preview_is_bounded_and_holds_the_facts() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(
            "../../fixtures/pi-real/sessions/--tmp-pi-real-fixture-home-user-project--/2026-11-30T19-15-37-733Z_01a22de2-5685-7602-8b63-cd825dec9328.jsonl",
        );
        let path = path.to_str().expect("UTF-8 path");
        let cases = [(1, 16, 16), (6, 1024, 4096), (3, 40, 60)];
        for (max_messages, max_message_bytes, max_total_bytes) in cases {
            let limits = PreviewLimits {
                max_messages,
                max_message_bytes,
                max_total_bytes,
            };
            let preview = preview(path, &limits, &Environment::default()).expect("preview");
            assert_eq!(preview.name.as_deref(), Some("Costs and usage"));
            assert!(!preview.models.is_empty());
            assert!(preview.usage.is_some_and(|usage| usage.total > 0));
            assert!(preview.messages.len() <= max_messages);
            assert!(!preview.messages.is_empty());
            assert!(
                preview
                    .messages
                    .iter()
                    .all(|message| message.text.len() <= max_message_bytes)
            );
            let total: usize = preview
                .messages
                .iter()
                .map(|message| message.text.len())
                .sum();
            assert!(total <= max_total_bytes, "{total} > {max_total_bytes}");
        }
    }
}
