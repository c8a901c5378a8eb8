//! The process facts the tool depends on, read in one place and passed around as a value.

use std::path::{Path, PathBuf};

use pi_retrospect_walk::{Layout, Store};

use crate::error::AppError;

/// The process environment every capability reads, gathered in one place so tests and
/// servers can supply their own.
#[derive(Debug, Clone)]
pub struct Environment {
    /// Current directory.
    pub cwd: PathBuf,
    /// `$HOME`.
    pub home: Option<PathBuf>,
    /// `$PI_CODING_AGENT_DIR`.
    pub agent_dir: Option<String>,
    /// `$PI_CODING_AGENT_SESSION_DIR`.
    pub session_dir: Option<String>,
    /// `$PI_SESSION_FILE`: the session running this command, when Pi runs it.
    pub session_file: Option<String>,
    /// The instant ages such as `--since 3d` count back from.
    pub now: jiff::Timestamp,
    /// The time zone of local dates and of times shown to a person.
    pub time_zone: jiff::tz::TimeZone,
    /// The longest line `show`, `entries` and `inspect` hold in memory
    /// (`$PI_RETROSPECT_MAX_LINE`, default 64 MiB); a longer one is skipped with a warning.
    pub max_line_bytes: usize,
    /// The directory of the summary cache (`$XDG_CACHE_HOME/pi-retrospect`, else
    /// `~/.cache/pi-retrospect`), or `None` for no cache (`$PI_RETROSPECT_NO_CACHE` set, or
    /// neither variable set): what `list --long`/`--jsonl`, `--name` and the picker read
    /// whole-body facts through (see `cache.rs`).
    pub cache_dir: Option<PathBuf>,
}

/// The variable that turns the summary cache off for every command of the process (the
/// MCP server and the picker included), as `--no-cache` does for one.
pub const NO_CACHE_VARIABLE: &str = "PI_RETROSPECT_NO_CACHE";

/// The variable that sets the line cap of the reading commands, so that the cap is
/// documented and can be raised.
pub const MAX_LINE_VARIABLE: &str = "PI_RETROSPECT_MAX_LINE";

/// Returns a byte count written as digits with an optional `K`, `M` or `G` (1024-based), or
/// `None` when it is not one or is 0.
fn parse_byte_count(text: &str) -> Option<usize> {
    let text = text.trim();
    let (digits, unit) = match text.char_indices().find(|(_, c)| !c.is_ascii_digit()) {
        Some((at, _)) => text.split_at(at),
        None => (text, ""),
    };
    let multiplier: usize = match unit.to_ascii_uppercase().as_str() {
        "" | "B" => 1,
        "K" | "KB" | "KIB" => 1 << 10,
        "M" | "MB" | "MIB" => 1 << 20,
        "G" | "GB" | "GIB" => 1 << 30,
        _ => return None,
    };
    digits
        .parse::<usize>()
        .ok()
        .and_then(|n| n.checked_mul(multiplier))
        .filter(|&n| n > 0)
}

impl Default for Environment {
    /// Returns an environment with no variables set, `/` as current directory, the Unix epoch
    /// as now and UTC: a blank slate for tests to fill in.
    fn default() -> Environment {
        Environment {
            cwd: PathBuf::from("/"),
            home: None,
            agent_dir: None,
            session_dir: None,
            session_file: None,
            now: jiff::Timestamp::UNIX_EPOCH,
            time_zone: jiff::tz::TimeZone::UTC,
            max_line_bytes: pi_retrospect_read::DEFAULT_MAX_LINE_BYTES,
            cache_dir: None,
        }
    }
}

impl Environment {
    /// Reads the real process environment: the one place the tool reads it.
    pub fn from_process() -> Result<Environment, AppError> {
        let cwd = std::env::current_dir()
            .map_err(|error| AppError::io(format!("cannot read the current directory: {error}")))?;
        let non_empty = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        let home = std::env::var_os("HOME")
            .filter(|home| !home.is_empty())
            .map(PathBuf::from);
        // XDG's rule: a relative `$XDG_CACHE_HOME` is ignored.
        let cache_dir = match std::env::var_os(NO_CACHE_VARIABLE).filter(|value| !value.is_empty())
        {
            Some(_) => None,
            None => std::env::var_os("XDG_CACHE_HOME")
                .map(PathBuf::from)
                .filter(|dir| dir.is_absolute())
                .or_else(|| home.as_ref().map(|home| home.join(".cache")))
                .map(|dir| dir.join("pi-retrospect")),
        };
        Ok(Environment {
            cwd,
            home,
            cache_dir,
            agent_dir: non_empty("PI_CODING_AGENT_DIR"),
            session_dir: non_empty("PI_CODING_AGENT_SESSION_DIR"),
            session_file: non_empty("PI_SESSION_FILE"),
            now: jiff::Timestamp::now(),
            time_zone: jiff::tz::TimeZone::system(),
            max_line_bytes: match non_empty(MAX_LINE_VARIABLE) {
                Some(text) => parse_byte_count(&text).ok_or_else(|| {
                    AppError::usage(format!(
                        "${MAX_LINE_VARIABLE}: expected a number of bytes of at least 1, \
                         optionally with K, M or G (1024-based): 67108864, 64M; got {text:?}"
                    ))
                })?,
                None => pi_retrospect_read::DEFAULT_MAX_LINE_BYTES,
            },
        })
    }

    /// Returns the read limits of a whole-session read: the line cap of this environment.
    pub fn read_limits(&self) -> pi_retrospect_transcript::ReadLimits {
        pi_retrospect_transcript::ReadLimits {
            max_line_bytes: self.max_line_bytes,
            ..pi_retrospect_transcript::ReadLimits::default()
        }
    }

    /// Returns Pi's agent directory: `$PI_CODING_AGENT_DIR` (with `~` expanded) or `~/.pi/agent`.
    pub fn agent_dir(&self) -> Result<PathBuf, AppError> {
        match &self.agent_dir {
            Some(dir) => self.expand_tilde(dir),
            None => Ok(self.home()?.join(".pi").join("agent")),
        }
    }

    /// Expands a leading `~` or `~/` the way Pi does.
    pub fn expand_tilde(&self, text: &str) -> Result<PathBuf, AppError> {
        if text == "~" {
            return self.home();
        }
        match text.strip_prefix("~/") {
            Some(rest) => Ok(self.home()?.join(rest)),
            None => Ok(PathBuf::from(text)),
        }
    }

    /// Returns `text` with `~` expanded, made absolute against the current directory and
    /// normalised lexically, as a string.
    pub fn absolute(&self, text: &str) -> Result<String, AppError> {
        let expanded = self.expand_tilde(text)?;
        let joined = self.cwd.join(expanded);
        let joined = joined.to_str().ok_or_else(|| {
            AppError::usage(format!("{}: path is not valid UTF-8", joined.display()))
        })?;
        Ok(pi_retrospect_core::path::normalize_absolute(joined))
    }

    fn home(&self) -> Result<PathBuf, AppError> {
        self.home
            .clone()
            .ok_or_else(|| AppError::io("cannot find the home directory: $HOME is not set"))
    }

    pub(crate) fn store(
        &self,
        root: &Path,
        layout: Layout,
        missing_ok: bool,
    ) -> Result<Store, AppError> {
        let mut store = Store::resolve(root, &self.cwd, layout)
            .map_err(|warning| AppError::io(format!("{}: {}", warning.path, warning.reason)))?;
        store.missing_ok = missing_ok;
        Ok(store)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts() {
        for (text, expected) in [
            ("67108864", Some(67_108_864)),
            ("64M", Some(64 << 20)),
            ("64mib", Some(64 << 20)),
            ("1k", Some(1024)),
            ("2G", Some(2 << 30)),
            ("0", None),
            ("", None),
            ("x", None),
            ("-1", None),
            ("1T", None),
        ] {
            assert_eq!(parse_byte_count(text), expected, "{text}");
        }
    }
}
