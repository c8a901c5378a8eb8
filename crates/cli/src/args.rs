//! Flags and help text shared by several commands: the stores (the same for `list` and the
//! reading commands) and the colour choice.

use std::path::PathBuf;

use clap::{Args, ValueEnum};

/// The paragraph on SESSION, damage and sanitising shared by `show`, `inspect` and `entries`.
macro_rules! session_help {
    () => {
        "\
SESSION is a path to a session file (relative to the current directory, `~` expanded), a \
session id or a unique prefix of one (looked up in the store the way `list` finds it, \
subagent runs included), or `latest`. A word with a /, ending in .jsonl or starting with ~ \
is a path; any other word is a path when a file of that name is in the current directory \
(the file wins, and a note names the stored session when the word is also an id or id \
prefix), else an id; a word that is no id or id prefix is a session's name or the start of \
one, any case (quote it: \"Debug flaky webhook\"; several matching names are a usage error \
listing them). `latest` is the most recently active top-level session (newest \
last entry, as `list --sort activity` orders them) whose cwd is the current directory (else \
the nearest directory above with sessions, else the whole store, with a note), leaving \
out $PI_SESSION_FILE; `latest~N` goes N sessions further back. An id only the archive holds \
fails with a hint to add --include-archive. A prefix that matches several sessions is a usage error \
(exit 2) listing their paths, and so is a session that cannot be found; one that cannot be \
opened, or a file whose first line is not a session header (checked as `list` checks it), \
exits 1 with the reason (2 from `entries --grep` and `inspect … search`, whose 1 means \
nothing matched, as in `search`).

Damage in the file (a line that is not JSON, a missing parent, a version 1 file without \
ids) never fails the command: text output lists it on stderr (the first 20 warnings, then \
a count by kind), --json in `warnings` (every one, streamed from a second read of the file when there \
are more than 20 of a kind). Text output strips terminal control sequences \
and bidi overrides from session content and escapes one-line fields (ids, types, roles, \
paths) visibly; times are local there and UTC in JSON. The file is only read, never written."
    };
}

pub const SESSION_HELP: &str = session_help!();

/// Where the sessions are: the same flags, with the same meaning, for `list` and for the
/// commands that read one session (where they say where to look an id or `latest` up).
#[derive(Debug, Clone, Args)]
pub struct StoreArgs {
    /// A store in Pi's default layout (`DIR/--<cwd-slug>--/<stem>.jsonl`); only this store is read.
    #[arg(long, value_name = "DIR", global = true, help_heading = "Stores")]
    pub sessions_root: Option<PathBuf>,

    /// Pi's custom session directory (session files directly inside it), read with the default root.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with = "sessions_root",
        global = true,
        help_heading = "Stores"
    )]
    pub session_dir: Option<PathBuf>,

    /// Also read `sessions-archive/` beside the sessions root, in the default layout.
    #[arg(long, global = true, help_heading = "Stores")]
    pub include_archive: bool,
}

impl StoreArgs {
    /// Returns the application's view of these flags.
    pub fn flags(&self) -> pi_retrospect_app::StoreFlags {
        pi_retrospect_app::StoreFlags {
            sessions_root: self.sessions_root.clone(),
            session_dir: self.session_dir.clone(),
            include_archive: self.include_archive,
        }
    }
}

/// When to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Only on a terminal (not TERM=dumb) or with CLICOLOR_FORCE, and never when NO_COLOR is set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

impl StoreArgs {
    /// Returns the session SESSION names, looked up now in these stores (an id, `latest`),
    /// so that the reading command opens a path. A note on how `latest` chose (a directory
    /// above the current one) goes to stderr.
    pub fn target(
        &self,
        session: &str,
        env: &pi_retrospect_app::Environment,
    ) -> Result<pi_retrospect_app::SessionTarget, pi_retrospect_app::AppError> {
        let stores = self.flags();
        let reference = pi_retrospect_app::SessionRef::parse(session, env)?;
        if reference == pi_retrospect_app::SessionRef::Stdin {
            return Ok(pi_retrospect_app::SessionTarget {
                session: reference,
                stores,
            });
        }
        let located = pi_retrospect_app::locate_session(&reference, &stores, env)?;
        for note in &located.notes {
            crate::output::print_note(note);
        }
        let session = match located.path.to_str() {
            Some(path) => pi_retrospect_app::SessionRef::Path(path.to_owned()),
            None => reference,
        };
        Ok(pi_retrospect_app::SessionTarget { session, stores })
    }
}

/// The session filters `search` and `stats` share with `list`: which projects, and whether the
/// session running the command is left out.
#[derive(Debug, Args)]
pub struct SessionFilterArgs {
    /// Sessions whose cwd equals DIR (repeatable).
    #[arg(long, value_name = "DIR", help_heading = "Filters")]
    pub cwd: Vec<String>,

    /// Sessions whose cwd is DIR or below it (repeatable).
    #[arg(long, value_name = "DIR", help_heading = "Filters")]
    pub cwd_prefix: Vec<String>,

    /// Sessions of the current directory.
    #[arg(long, help_heading = "Filters")]
    pub here: bool,

    /// Let the cwd filters also match sibling worktrees `DIR-<suffix>`.
    #[arg(long, help_heading = "Filters")]
    pub worktrees: bool,

    /// Leave out `$PI_SESSION_FILE` (the session running the command) with its runs.
    #[arg(long, help_heading = "Filters")]
    pub exclude_current: bool,
}

impl SessionFilterArgs {
    /// Returns `request` with these filters set.
    pub fn apply(&self, request: pi_retrospect_app::ListRequest) -> pi_retrospect_app::ListRequest {
        pi_retrospect_app::ListRequest {
            cwd: self.cwd.clone(),
            cwd_prefix: self.cwd_prefix.clone(),
            here: self.here,
            worktrees: self.worktrees,
            exclude_current: self.exclude_current,
            ..request
        }
    }
}

/// Parses a `--limit N` that must be at least 1: every command refuses 0 and negative
/// numbers with the same message.
pub fn positive_limit(value: &str) -> Result<u64, String> {
    at_least_one(value, "--limit")
}

/// Parses search's `--max-count NUM` as [`positive_limit`] parses a limit.
pub fn positive_max_count(value: &str) -> Result<u64, String> {
    at_least_one(value, "--max-count")
}

/// Parses a count of at least 1 given with `flag`.
fn at_least_one(value: &str, flag: &str) -> Result<u64, String> {
    let number: i128 = value
        .trim()
        .parse()
        .map_err(|_| format!("expected a whole number of at least 1, not {value:?}"))?;
    if number < 1 {
        return Err(format!(
            "must be at least 1, not {number} (leave {flag} out for no limit)"
        ));
    }
    u64::try_from(number).map_err(|_| format!("{number} is too large"))
}

/// Returns the worker threads `--threads` asks for (0: one per core when left out), refusing
/// 0 as `list` does.
pub fn threads(value: Option<usize>) -> anyhow::Result<usize> {
    match value {
        None => Ok(0),
        Some(0) => Err(crate::UsageError(
            "--threads must be at least 1 (leave it out for one thread per core)".to_owned(),
        )
        .into()),
        Some(threads) => Ok(threads),
    }
}

/// Returns how the command line spells `input`: a flag, or the name of a positional argument
/// (`inspect`'s entry and query are positional; elsewhere the entry is `--entry`).
pub fn input_name(input: pi_retrospect_app::Input, is_inspect: bool) -> &'static str {
    use pi_retrospect_app::Input;
    match input {
        Input::Session => "SESSION",
        Input::Since => "--since",
        Input::Until => "--until",
        Input::ActiveSince => "--active-since",
        Input::ActiveUntil => "--active-until",
        Input::Limit => "--limit",
        Input::Pattern => "PATTERN",
        Input::Query => "QUERY",
        Input::Cursor => "--cursor",
        Input::Cwd => "--cwd",
        Input::CwdPrefix => "--cwd-prefix",
        Input::Id => "--id",
        Input::Name => "--name",
        Input::Entry if is_inspect => "ENTRY",
        Input::Entry => "--entry",
        Input::Parent => "--parent",
        Input::Lines => "--lines",
        Input::Grep => "--grep",
        Input::TimeZone => "--timezone",
        Input::Out => "--out",
        Input::Rollup => "--rollup",
        _ => input.name(),
    }
}

/// The case flags every searching command shares (`search`, `inspect … search`,
/// `entries --grep`): smart case unless one is given; the last one given wins.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct CaseArgs {
    /// Match case exactly (default: smart case, which ignores case unless the pattern has an
    /// upper-case letter).
    #[arg(short = 's', long, overrides_with_all = ["ignore_case", "smart_case"], help_heading = "Matching")]
    pub case_sensitive: bool,

    /// Ignore case.
    #[arg(short = 'i', long, overrides_with_all = ["case_sensitive", "smart_case"], help_heading = "Matching")]
    pub ignore_case: bool,

    /// Smart case, the default; still accepted so that older scripts keep working.
    #[arg(short = 'S', long, hide = true, overrides_with_all = ["case_sensitive", "ignore_case"])]
    pub smart_case: bool,
}

impl CaseArgs {
    /// Returns the case rule these flags ask for.
    pub fn mode(&self) -> pi_retrospect_app::CaseMode {
        pi_retrospect_app::CaseMode::from_flags(self.case_sensitive, self.ignore_case)
    }
}
