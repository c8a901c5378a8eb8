//! `pi-retrospect pick`: a terminal session picker over the application layer. Find a Pi
//! session fast and resume it.
//!
//! The first screen is drawn from the current directory's sessions alone, read from the one
//! project directory Pi files them under ([`pi_retrospect_app::picker::list_here`]), so it
//! shows at once on any store; the whole store is listed next and every session's name and
//! first message read after that, on background threads, while the keyboard stays live.
//!
//! Keys: typing filters by name, first message, cwd and id (fuzzy, fzf's syntax, matched
//! characters highlighted); ↑/↓ (Ctrl-P/Ctrl-N), PgUp/PgDn, Home/End move; → shows a
//! session's subagent runs and ← hides them; Tab switches between this directory and all
//! projects; Ctrl-F searches the sessions' full text for what is typed with the `search`
//! command's engine (`app::search`; Esc leaves the search); Ctrl-O reads the transcript in a pager; Enter resumes the session in Pi, asking
//! first when it ran in another directory (or, with `--print`, hands its path back); Esc or
//! Ctrl-C leaves.
//!
//! The picker draws on `/dev/tty`, as fzf does, so it works inside `$( )`; it leaves the
//! terminal as it found it when it returns, on a panic and on SIGINT, SIGTERM or SIGHUP, and
//! ends at once when the terminal goes away. It
//! never writes to the session store. It reads no environment variable: the front end passes
//! `NO_COLOR`'s verdict and `$PAGER` in [`PickOptions`].
//!
//! ```no_run
//! use pi_retrospect_app::Environment;
//! use pi_retrospect_pick::{Outcome, PickOptions, pick, resume};
//!
//! let env = Environment::from_process()?;
//! let options = PickOptions::default();
//! match pick(&options, &env)? {
//!     // Replaces this process with Pi; returns only when Pi cannot be started.
//!     Outcome::Resume { path, cwd, is_fork } => {
//!         return Err(resume("pi", &path, &cwd, is_fork).into());
//!     }
//!     Outcome::Chosen(path) => println!("{path}"),
//!     Outcome::Cancelled | Outcome::Interrupted { .. } | Outcome::TerminalLost => {}
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

#![deny(missing_docs)]

mod error;
mod external;
mod fuzzy;
mod index;
mod run;
mod state;
mod terminal;
mod view;
mod worker;

use std::path::PathBuf;

use pi_retrospect_app::ListRequest;

pub use error::PickError;
pub use external::resume;
pub use run::{first_screen, pick};

/// How the picker runs.
#[derive(Debug, Clone)]
pub struct PickOptions {
    /// Which stores (and which sessions) to list; body facts are always read in the
    /// background, whatever `read_summaries` says.
    pub list: ListRequest,
    /// Enter hands the path back ([`Outcome::Chosen`]) instead of resuming in Pi.
    pub print: bool,
    /// Start with every project listed, not only the current directory's sessions.
    pub all_projects: bool,
    /// Use colour (the front end decides: `NO_COLOR`, `--color`).
    pub paint: pi_retrospect_render::Paint,
    /// The pager for transcripts, a shell command (`$PAGER`); `less -R` when `None`.
    pub pager: Option<String>,
    /// Variables set for the pager: the front end sets `LESS=R` when `LESS` is unset, as git
    /// does, so that `PAGER=less` shows the transcript's colours rather than escape codes.
    pub pager_env: Vec<(String, String)>,
}

impl Default for PickOptions {
    /// Returns the default picker: Pi's own stores, resume on Enter, this directory first,
    /// colour, `less -R`.
    fn default() -> PickOptions {
        PickOptions {
            list: ListRequest::default(),
            print: false,
            all_projects: false,
            paint: pi_retrospect_render::Paint::ON,
            pager: None,
            pager_env: Vec::new(),
        }
    }
}

/// How the picker ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// The person left without choosing.
    Cancelled,
    /// A session was chosen with `print` set: its path.
    Chosen(String),
    /// A session was chosen to resume in Pi (which runs it in the directory it recorded, or,
    /// when that is gone, asks), or to fork into the current directory.
    Resume {
        /// The session file.
        path: String,
        /// The directory to run Pi in.
        cwd: PathBuf,
        /// Fork the session into `cwd` (`pi --fork PATH`: a new session, the old one kept)
        /// instead of resuming it (`pi --session PATH`).
        is_fork: bool,
    },
    /// SIGINT, SIGTERM or SIGHUP arrived (the terminal was given back): the signal, for an
    /// exit status of 128 + it.
    Interrupted {
        /// The signal's number.
        signal: i32,
    },
    /// The terminal went away (closed, hung up, unreadable): nothing could be restored.
    TerminalLost,
}
