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
        }
    }
}

impl Environment {
    /// Reads the real process environment: the one place the tool reads it.
    pub fn from_process() -> Result<Environment, AppError> {
        let cwd = std::env::current_dir()
            .map_err(|error| AppError::io(format!("cannot read the current directory: {error}")))?;
        let non_empty = |name: &str| std::env::var(name).ok().filter(|value| !value.is_empty());
        Ok(Environment {
            cwd,
            home: std::env::var_os("HOME")
                .filter(|home| !home.is_empty())
                .map(PathBuf::from),
            agent_dir: non_empty("PI_CODING_AGENT_DIR"),
            session_dir: non_empty("PI_CODING_AGENT_SESSION_DIR"),
            session_file: non_empty("PI_SESSION_FILE"),
            now: jiff::Timestamp::now(),
            time_zone: jiff::tz::TimeZone::system(),
        })
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
