//! Which store(s) to read: flags first, then Pi's environment variables, then its defaults.

use std::path::{Path, PathBuf};

use anyhow::Context;
use pi_retrospect_walk::{Layout, Store};

/// The process environment the resolution reads, gathered in one place so tests can fake it.
#[derive(Debug, Clone, Default)]
pub struct Env {
    /// Current directory.
    pub cwd: PathBuf,
    /// `$HOME`.
    pub home: Option<PathBuf>,
    /// `$PI_CODING_AGENT_DIR`.
    pub agent_dir: Option<String>,
}

impl Env {
    /// Reads the real process environment.
    pub fn from_process() -> anyhow::Result<Env> {
        let cwd = std::env::current_dir().context("cannot read the current directory")?;
        Ok(Env {
            cwd,
            home: std::env::var_os("HOME")
                .filter(|home| !home.is_empty())
                .map(PathBuf::from),
            agent_dir: std::env::var("PI_CODING_AGENT_DIR")
                .ok()
                .filter(|dir| !dir.is_empty()),
        })
    }

    /// Returns Pi's agent directory: `$PI_CODING_AGENT_DIR` (with `~` expanded) or `~/.pi/agent`.
    pub fn agent_dir(&self) -> anyhow::Result<PathBuf> {
        match &self.agent_dir {
            Some(dir) => self.expand_tilde(dir),
            None => Ok(self.home()?.join(".pi").join("agent")),
        }
    }

    /// Expands a leading `~` or `~/` the way Pi does.
    pub fn expand_tilde(&self, text: &str) -> anyhow::Result<PathBuf> {
        if text == "~" {
            return self.home();
        }
        match text.strip_prefix("~/") {
            Some(rest) => Ok(self.home()?.join(rest)),
            None => Ok(PathBuf::from(text)),
        }
    }

    fn home(&self) -> anyhow::Result<PathBuf> {
        self.home
            .clone()
            .context("cannot find the home directory: $HOME is not set")
    }

    /// Returns `store_root` as a [`Store`], resolved against the current directory.
    pub fn store(&self, root: &Path, layout: Layout) -> anyhow::Result<Store> {
        Store::resolve(root, &self.cwd, layout)
            .map_err(|warning| anyhow::anyhow!("{}: {}", warning.path, warning.reason))
    }
}
