//! A session file's first line.

use std::fmt;

use crate::{json_string, member, object};

/// The line [`Header::new`]`("s1")` writes, for tests that splice a header into text.
pub const HEADER: &str =
    r#"{"type":"session","version":3,"id":"s1","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#;

/// The header line of a session: `{"type":"session","version":3,"id":…,"timestamp":…,"cwd":…}`,
/// with `parentSession` for a fork.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// The session id.
    pub id: String,
    /// When the session started, as the header spells it.
    pub timestamp: String,
    /// The working directory.
    pub cwd: String,
    /// The format version; `None` leaves the member out, as version 1 files do.
    pub version: Option<u32>,
    /// The session this one was forked from, when it is a fork.
    pub parent_session: Option<String>,
}

impl Header {
    /// The start time a header has unless told otherwise.
    pub const DEFAULT_TIMESTAMP: &str = "2026-01-01T00:00:00.000Z";

    /// Returns a version 3 header of session `id`, started at [`Header::DEFAULT_TIMESTAMP`] in
    /// `/p`.
    pub fn new(id: &str) -> Header {
        Header {
            id: id.to_owned(),
            timestamp: Self::DEFAULT_TIMESTAMP.to_owned(),
            cwd: "/p".to_owned(),
            version: Some(3),
            parent_session: None,
        }
    }

    /// Returns the header with its start time set to `timestamp`.
    pub fn timestamp(mut self, timestamp: &str) -> Header {
        self.timestamp = timestamp.to_owned();
        self
    }

    /// Returns the header with its working directory set to `cwd`.
    pub fn cwd(mut self, cwd: &str) -> Header {
        self.cwd = cwd.to_owned();
        self
    }

    /// Returns the header with format `version`, or without a version member.
    pub fn version(mut self, version: Option<u32>) -> Header {
        self.version = version;
        self
    }

    /// Returns the header of a fork of the session at `path`.
    pub fn parent_session(mut self, path: &str) -> Header {
        self.parent_session = Some(path.to_owned());
        self
    }
}

impl fmt::Display for Header {
    fn fmt(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut members = vec![member("type", "\"session\"")];
        if let Some(version) = self.version {
            members.push(member("version", &version.to_string()));
        }
        members.push(member("id", &json_string(&self.id)));
        members.push(member("timestamp", &json_string(&self.timestamp)));
        members.push(member("cwd", &json_string(&self.cwd)));
        if let Some(parent) = &self.parent_session {
            members.push(member("parentSession", &json_string(parent)));
        }
        formatter.write_str(&object(&members))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_are_written_as_pi_writes_them() {
        assert_eq!(Header::new("s1").to_string(), HEADER);
        assert_eq!(
            Header::new("f")
                .timestamp("2026-01-02T00:00:00.000Z")
                .cwd("/work/app")
                .parent_session("/s/p.jsonl")
                .to_string(),
            r#"{"type":"session","version":3,"id":"f","timestamp":"2026-01-02T00:00:00.000Z","cwd":"/work/app","parentSession":"/s/p.jsonl"}"#
        );
        assert_eq!(
            Header::new("old").version(None).to_string(),
            r#"{"type":"session","id":"old","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/p"}"#
        );
    }
}
