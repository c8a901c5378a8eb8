//! Builders of Pi session files for the workspace's tests: one way to write a header, an
//! entry line, a session file and a store in Pi's layout, so tests say what a session holds
//! rather than how its JSON is spelled.
//!
//! Every line is written as Pi writes it: members in Pi's order (`type`, `id`, `parentId`,
//! `timestamp`, then the kind's own members in the order they are set), strings escaped as
//! `JSON.stringify` and serde_json escape them, no spaces. A test that needs a line Pi would
//! never write (a damaged one, other writers' spellings) writes that text itself.
//!
//! ```
//! use pi_retrospect_testkit::{Entry, Header, Message, Store, Usage};
//!
//! let store = Store::new();
//! let header = Header::new("s1").cwd("/work/app");
//! let path = store.write_session(
//!     &header,
//!     &[
//!         Entry::message(Message::user("hello")).id("u1").parent(None).at("2026-01-01T00:00:01.000Z"),
//!         Entry::message(Message::assistant(&[]).model("m").usage(Usage::tokens(10, 1)))
//!             .id("a1")
//!             .parent(Some("u1"))
//!             .at("2026-01-01T00:00:02.000Z"),
//!     ],
//! );
//! assert!(path.ends_with("--work-app--/2026-01-01T00-00-00-000Z_s1.jsonl"));
//! ```

#![deny(missing_docs)]
#![expect(
    clippy::unwrap_used,
    reason = "test support: a fixture that cannot be made is a failed test"
)]

mod entry;
mod header;
mod store;

pub use entry::{Block, Cost, Entry, Message, Usage};
pub use header::{HEADER, Header};
pub use store::{
    Store, append_jsonl, fork_path, jsonl, project_dir_name, run_path, session_file_name,
    temp_file, timestamp_in_month, write_jsonl, write_session_file,
};

/// Returns `text` as a JSON string, quoted and escaped.
pub fn json_string(text: &str) -> String {
    serde_json::to_string(text).unwrap()
}

/// Returns `id` as a JSON string, or `null` for none.
pub fn json_string_or_null(id: Option<&str>) -> String {
    id.map_or_else(|| "null".to_owned(), json_string)
}

/// Returns the JSON object whose members are `members` (each `"key":value`), in order.
fn object(members: &[String]) -> String {
    format!("{{{}}}", members.join(","))
}

/// Returns the member `"key":raw`.
fn member(key: &str, raw: &str) -> String {
    format!("{}:{raw}", json_string(key))
}
