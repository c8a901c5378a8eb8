//! Shared fixtures: session files materialised from JSONL lines in temp dirs, and compact
//! descriptions of hits for table-driven assertions.

#![allow(dead_code)]

use std::path::{Path, PathBuf};

use pi_retrospect_search::{
    FileResult, Mode, Pattern, Query, Scope, SearchFile, SearchHit, Searcher,
};
use pi_retrospect_testkit::{Entry, Message};

/// A version 3 header line.
pub use pi_retrospect_testkit::HEADER;

/// Returns JSONL text: `header` and `lines`, each ending in a newline.
pub fn jsonl_with(header: &str, lines: &[&str]) -> String {
    pi_retrospect_testkit::jsonl(std::iter::once(&header).chain(lines))
}

/// Returns JSONL text: the version 3 header and `lines`.
pub fn jsonl(lines: &[&str]) -> String {
    jsonl_with(HEADER, lines)
}

/// Returns `{"id":ID,"parentId":PARENT,...,"type":"message","message":MESSAGE}`.
pub fn message(id: &str, parent: Option<&str>, message: &str) -> String {
    envelope(id, parent)
        .raw_members(r#""type":"message""#)
        .member("message", message)
        .to_string()
}

/// Returns an entry line with `id`, `parent` and the members `body`.
pub fn entry(id: &str, parent: Option<&str>, body: &str) -> String {
    envelope(id, parent).raw_members(body).to_string()
}

/// Returns an entry with `id` and `parent` written at one fixed time, its type left to the
/// members added after them (the envelope first, as other writers order it).
fn envelope(id: &str, parent: Option<&str>) -> Entry {
    Entry::untyped()
        .id(id)
        .parent(parent)
        .at("2026-01-01T00:00:01.000Z")
}

/// Returns a user message line whose content string is `text` (JSON-escaped here).
pub fn user(id: &str, parent: Option<&str>, text: &str) -> String {
    message(id, parent, &Message::user(text).to_string())
}

/// Returns a temp dir holding `name` with exactly `contents`, and the file's path.
pub fn materialise(name: &str, contents: &[u8]) -> (tempfile::TempDir, PathBuf) {
    pi_retrospect_testkit::temp_file(name, contents)
}

/// Returns the search file for `path` at depth 0.
pub fn file(path: &Path) -> SearchFile {
    SearchFile {
        path: path.to_str().expect("temp paths are UTF-8").to_owned(),
        depth: 0,
    }
}

/// Returns the searcher for `pattern` over `scope`.
pub fn searcher(pattern: Pattern, scope: Scope) -> Searcher {
    let mut query = Query::new(pattern);
    query.scope = scope;
    Searcher::new(&query).expect("pattern compiles")
}

/// Searches `contents` as a file on disk, checks that the in-memory search and the decode-
/// every-line reference agree with it, and returns the file's result.
pub fn search(searcher: &Searcher, contents: &[u8]) -> FileResult {
    let (_dir, path) = materialise("session.jsonl", contents);
    let target = file(&path);
    let on_disk = searcher.search_file(&target, Mode::Hits, None);
    let in_memory = searcher.search_bytes(&target, contents, Mode::Hits, None);
    let reference = searcher.search_bytes_decoding_every_line(&target, contents, Mode::Hits, None);
    assert_eq!(on_disk.hits, in_memory.hits, "disk and memory differ");
    assert_eq!(
        in_memory.hits, reference.hits,
        "fast path and reference differ"
    );
    assert_eq!(on_disk.n_bytes, contents.len() as u64);
    on_disk
}

/// Returns a hit as `line:field[:role][@tool][*]:snippet-with-[match]`, where `*` marks the
/// active branch.
pub fn describe(hit: &SearchHit) -> String {
    let mut text = format!("{}:{}", hit.line_no, hit.field.as_str());
    if let Some(role) = &hit.role {
        text.push_str(&format!(":{role}"));
    }
    if let Some(tool) = &hit.tool_name {
        text.push_str(&format!("@{tool}"));
    }
    if hit.is_on_active_branch {
        text.push('*');
    }
    let range = hit.match_range;
    text.push_str(&format!(
        ":{}[{}]{}",
        &hit.snippet[..range.start],
        &hit.snippet[range.start..range.end],
        &hit.snippet[range.end..]
    ));
    text
}

/// Returns every hit of `result`, described.
pub fn describe_all(result: &FileResult) -> Vec<String> {
    result.hits.iter().map(describe).collect()
}
