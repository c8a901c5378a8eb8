//! Command-line flags, as clap parses them. Each command module resolves its flags into a
//! configuration before anything is read.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Look back over the session history of the Pi coding agent.
#[derive(Debug, Parser)]
#[command(name = "pi-retrospect", version, about, long_about = None)]
#[command(
    after_help = "Exit status: 0 on success (unreadable session files are warnings, not \
errors), 1 when the tool itself fails, 2 on a usage error."
)]
pub struct Opts {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// List every session with its subagent runs nested under it.
    #[command(after_long_help = LIST_HELP, after_help = "See --help for ordering, the two kinds of parent, and examples.")]
    List(Box<ListArgs>),
    /// Print the JSON Schema of a command's --json output.
    Schema(SchemaArgs),
    /// Read one session: its active branch as a transcript, or its whole entry tree.
    #[command(after_long_help = SHOW_HELP)]
    Show(Box<ShowArgs>),
    /// Query one session's checkpoints in bounded pages: overview, ancestors, children, search, read.
    #[command(after_long_help = INSPECT_HELP)]
    Inspect(Box<InspectArgs>),
    /// Print the stored entries of one session file in file order, one row each, for scripts.
    #[command(after_long_help = ENTRIES_HELP)]
    Entries(Box<EntriesArgs>),
}

/// The paragraph on SESSION, damage and sanitising shared by `show`, `inspect` and `entries`.
macro_rules! session_help {
    () => {
        "\
SESSION is a path to a session file (relative to the current directory, `~` expanded), a \
session id or a unique prefix of one (looked up in the store the way `list` finds it, \
subagent runs included), or `latest`: the newest top-level session (by header timestamp) \
whose cwd is the current directory. A prefix that matches several sessions is a usage error \
(exit 2) listing their paths; a session that cannot be found or opened exits 1.

Damage in the file (a line that is not JSON, a missing parent, a version 1 file without \
ids) never fails the command: text output lists it on stderr, --json in `warnings`. Text \
output strips terminal control sequences and bidi overrides from session content. The file \
is only read, never written."
    };
}

const SESSION_HELP: &str = session_help!();

const SHOW_HELP: &str = concat!(
    session_help!(),
    "\n\n",
    "\
The transcript follows the active branch (root to the last entry appended, as Pi resumes \
it). Each block starts with the entry id in brackets, so `inspect SESSION read ID` or \
`entries SESSION --id ID` can jump to it. Tool calls are one line each (`->` tool name and \
scalar arguments); tool results (`<-`) are cut to --tool-output characters; thinking is \
hidden unless --thinking.

--tree draws every entry of the file: `*` marks the active path, `@` the leaf, `+` the first \
entry of each branch below a branch point; labels are shown in brackets.

Examples:
  pi-retrospect show latest
  pi-retrospect show 01a22b41-c1e1 --thinking --tool-output 200
  pi-retrospect show ~/.pi/agent/sessions/--home-me-app--/2026-09-01T10-00-00-000Z_0199.jsonl --tree
  pi-retrospect show latest --json | jq -r '.items[] | select(.kind == \"toolCall\") | .name'"
);

const INSPECT_HELP: &str = concat!(
    session_help!(),
    "\n\n",
    "\
Views (a checkpoint is the last entry of a completed assistant turn: the response plus the \
tool results answering its calls):
  overview           checkpoints across the whole tree, in file order
  ancestors [ENTRY]  checkpoints on the path from the root to ENTRY (default: the leaf)
  children ENTRY     the next checkpoint on each path below ENTRY
  search QUERY       literal, case-insensitive matches in labels, assistant text, user
                     requests, and tool results with --tool-results
  read ENTRY         one entry with --before ancestors and --after descendants; at a branch
                     point the child ids are listed instead of choosing one

ENTRY is an entry id, or `line:N` (the entry on physical line N; the only handle in version \
1 files). Results carry entry ids, parent/child checkpoint relations, labels, previews cut \
to 240 characters and token counts that are estimates (serialized characters / 4). Thinking, \
image data and tool-call arguments are never returned; tool output only with --tool-results.

Pages hold --limit results (default 20, at most 50). When there are more, the page ends with \
a cursor: pass it with --cursor to the same command to continue. The cursor remembers how \
much of the file the first page read, so later pages describe the same snapshot even while \
Pi appends to the file.

Examples:
  pi-retrospect inspect latest overview
  pi-retrospect inspect latest search \"flaky test\" --tool-results
  pi-retrospect inspect 01a22b41 read e0dbe164 --before 2 --after 5
  pi-retrospect inspect latest overview --limit 50 --cursor c1.1f2e.14.0123456789abcdef
  pi-retrospect inspect latest ancestors --json | jq -r '.checkpoints[].entryId'"
);

const ENTRIES_HELP: &str = concat!(
    session_help!(),
    "\n\n",
    "\
Rows are `{lineNo, id, parentId, timestamp, type, messageRole, text}` (plus `raw`, the line's \
JSON unchanged, with --raw). `text` is the entry's human-readable body: never thinking, tool \
calls or images. `lineNo` is the physical line (line 1 is the header and never a row) and the \
stable handle; in a version 1 file `id` and `parentId` are null and one warning says so.

Filters combine with AND; repeated --type, --role and --grep values OR. --grep is literal and \
case-insensitive unless --case-sensitive. --since/--until compare each entry's own \
timestamp (entries without one are left out) and take the same forms as in `list`.

--json prints `{ \"path\", \"sessionId\", \"version\", \"entries\": [...], \"warnings\": [...] }`; \
--jsonl prints one row per line and the warnings on stderr.

Examples:
  pi-retrospect entries latest --role user --jsonl | jq -r .text
  pi-retrospect entries latest --lines 40..60 --raw --json
  pi-retrospect entries 01a22b41 --grep TODO --grep FIXME --type message --limit 10
  pi-retrospect entries latest --since 2h --role assistant --role toolResult"
);

/// Store flags of the commands that read one session, used only to look up an id or `latest`.
#[derive(Debug, Args)]
pub struct StoreArgs {
    /// Look ids up in this store in Pi's default layout (`DIR/--<cwd-slug>--/<stem>.jsonl`).
    #[arg(long, value_name = "DIR", global = true, help_heading = "Stores")]
    pub sessions_root: Option<PathBuf>,

    /// Pi's custom session directory, searched with the default root.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with = "sessions_root",
        global = true,
        help_heading = "Stores"
    )]
    pub session_dir: Option<PathBuf>,
}

/// Flags of `show`.
#[derive(Debug, Args)]
#[command(after_help = SESSION_HELP)]
pub struct ShowArgs {
    /// A session file path, a session id or unique id prefix, or `latest`.
    #[arg(value_name = "SESSION")]
    pub session: String,

    #[command(flatten)]
    pub store: StoreArgs,

    /// Draw the whole entry tree with branch points, labels and the active path.
    #[arg(long)]
    pub tree: bool,

    /// Show thinking blocks (hidden by default).
    #[arg(long, conflicts_with = "tree")]
    pub thinking: bool,

    /// Characters kept of each tool result, bash output and long note such as a system prompt
    /// (0: only the header line).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 2000,
        conflicts_with = "tree"
    )]
    pub tool_output: usize,

    /// Print a JSON document instead of text.
    #[arg(long, help_heading = "Output")]
    pub json: bool,

    /// When to use colour.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN", help_heading = "Output")]
    pub color: ColorChoice,
}

/// Flags of `inspect`.
#[derive(Debug, Args)]
#[command(after_help = SESSION_HELP, subcommand_value_name = "VIEW", subcommand_help_heading = "Views")]
pub struct InspectArgs {
    /// A session file path, a session id or unique id prefix, or `latest`.
    #[arg(value_name = "SESSION")]
    pub session: String,

    /// Which view.
    #[command(subcommand)]
    pub view: InspectViewArg,

    #[command(flatten)]
    pub store: StoreArgs,

    /// Results per page (1 to 50).
    #[arg(
        long,
        value_name = "N",
        global = true,
        default_value_t = 20,
        value_parser = clap::value_parser!(u8).range(1..=50),
        help_heading = "Paging"
    )]
    pub limit: u8,

    /// Continue a previous page: the cursor it printed, with the same view and flags.
    #[arg(long, value_name = "CURSOR", global = true, help_heading = "Paging")]
    pub cursor: Option<String>,

    /// Include tool output (search it, preview it); it can hold sensitive source material.
    #[arg(long, global = true)]
    pub tool_results: bool,

    /// Print the page as a JSON document.
    #[arg(long, global = true, help_heading = "Output")]
    pub json: bool,
}

/// The views of `inspect`.
#[derive(Debug, Subcommand)]
pub enum InspectViewArg {
    /// Checkpoints across the whole tree, in file order.
    Overview,
    /// Checkpoints on the path from the root to ENTRY (default: the leaf).
    Ancestors {
        /// An entry id or `line:N`.
        entry: Option<String>,
    },
    /// The next checkpoint on each path below ENTRY.
    Children {
        /// An entry id or `line:N`.
        entry: String,
    },
    /// Literal, case-insensitive search over labels, assistant text and user requests.
    Search {
        /// The text to find.
        query: String,
    },
    /// One entry with its neighbours; at a branch point the child ids are listed.
    Read {
        /// An entry id or `line:N`.
        entry: String,
        /// Ancestors to show (0 to 10).
        #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u8).range(0..=10))]
        before: u8,
        /// Descendants to show along an unbranched path (0 to 10).
        #[arg(long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u8).range(0..=10))]
        after: u8,
    },
}

/// Flags of `entries`.
#[derive(Debug, Args)]
#[command(after_help = SESSION_HELP)]
pub struct EntriesArgs {
    /// A session file path, a session id or unique id prefix, or `latest`.
    #[arg(value_name = "SESSION")]
    pub session: String,

    #[command(flatten)]
    pub store: StoreArgs,

    /// Physical lines A to B inclusive (`A..B`, `A..`, `..B` or `N`; line 1 is the header).
    #[arg(long, value_name = "A..B", help_heading = "Filters")]
    pub lines: Option<String>,

    /// Only the entry with this id, or at this `line:N` handle.
    #[arg(long, value_name = "ID", help_heading = "Filters")]
    pub id: Option<String>,

    /// Only entries whose parent has this id, or is at this `line:N` handle.
    #[arg(long, value_name = "ID", help_heading = "Filters")]
    pub parent_id: Option<String>,

    /// Only entries of this type (`message`, `compaction`, `label`, ...; repeatable).
    #[arg(long = "type", value_name = "TYPE", help_heading = "Filters")]
    pub types: Vec<String>,

    /// Only messages with this role (`user`, `assistant`, `toolResult`, ...; repeatable).
    #[arg(long = "role", value_name = "ROLE", help_heading = "Filters")]
    pub roles: Vec<String>,

    /// Entries whose own timestamp is at or after WHEN (a date, a local date-time, an RFC 3339 instant, or an age like `2h`).
    #[arg(long, value_name = "WHEN", help_heading = "Filters")]
    pub since: Option<String>,

    /// Entries whose own timestamp is at or before WHEN (a date keeps that whole local day).
    #[arg(long, value_name = "WHEN", help_heading = "Filters")]
    pub until: Option<String>,

    /// Entries whose text contains TERM literally (repeatable; any term matches).
    #[arg(long, value_name = "TERM", help_heading = "Filters")]
    pub grep: Vec<String>,

    /// Match --grep terms case-sensitively.
    #[arg(long, help_heading = "Filters")]
    pub case_sensitive: bool,

    /// At most N rows.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..), help_heading = "Filters")]
    pub limit: Option<u64>,

    /// Include each line's JSON unchanged as `raw` (in text output: on the line below the row).
    #[arg(long, help_heading = "Output")]
    pub raw: bool,

    /// Print a JSON document `{ path, sessionId, version, entries, warnings }`.
    #[arg(long, group = "entries_format", help_heading = "Output")]
    pub json: bool,

    /// Print one JSON row per line (warnings go to stderr).
    #[arg(long, group = "entries_format", help_heading = "Output")]
    pub jsonl: bool,
}

const LIST_HELP: &str = "\
Stores: --sessions-root DIR names one store in Pi's default layout. Otherwise the store is \
found the way Pi finds it: --session-dir, $PI_CODING_AGENT_SESSION_DIR, `sessionDir` in \
<agent-dir>/settings.json, and the default root <agent-dir>/sessions (<agent-dir> is \
$PI_CODING_AGENT_DIR or ~/.pi/agent). A custom directory is listed together with the default \
root, where older sessions stay.

Ordering: oldest first. Sessions are sorted by the instant their header timestamp denotes, \
ties broken by path, at every nesting level, so the newest session is the last one and a \
session's subagent runs appear in launch order. --sort changes the key of the top level \
(ties still fall back to timestamp, then path); --newest-first reverses the top level only.

Two meanings of \"parent\": nesting (a subagent run listed under the session that launched it) \
comes only from where the file sits on disk; `parentSessionPath` in --json is the header's \
fork/clone lineage, copied verbatim, and says nothing about nesting.

Filters apply to top-level sessions and combine (AND; repeated --cwd values OR); a session \
that is kept keeps its whole tree of runs.

Files that cannot be read or have no valid session header are never fatal: each is skipped \
with one warning naming its path and the reason, and the exit status stays 0.

Examples:
  pi-retrospect list --here --since 3d --long
  pi-retrospect list --cwd ~/repos/app --worktrees --newest-first --limit 5
  pi-retrospect list --since 2026-09-01 --until 2026-09-30 --with-subagents
  pi-retrospect list --name \"flaky test\" --long
  pi-retrospect list --json | jq -r '.sessions[-1].path'
  pi-retrospect list --jsonl --exclude-current | jq -r 'select(.depth == 0) | .path'";

/// Output formats of `list`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SortField {
    /// Header timestamp (the default).
    Timestamp,
    /// Working directory.
    Cwd,
    /// File path.
    Path,
    /// Session id.
    Id,
}

/// When to colour output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// Only on a terminal (or with CLICOLOR_FORCE), and never when NO_COLOR is set.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Flags of `list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// A store in Pi's default layout (`DIR/--<cwd-slug>--/<stem>.jsonl`); only this store is listed.
    #[arg(long, value_name = "DIR", help_heading = "Stores")]
    pub sessions_root: Option<PathBuf>,

    /// Pi's custom session directory (session files directly inside it), listed with the default root.
    #[arg(
        long,
        value_name = "DIR",
        conflicts_with = "sessions_root",
        help_heading = "Stores"
    )]
    pub session_dir: Option<PathBuf>,

    /// Also list `sessions-archive/` beside the sessions root, in the same layout.
    #[arg(long, help_heading = "Stores")]
    pub include_archive: bool,

    /// Sessions whose cwd is DIR (repeatable; relative to the current directory; `~` expanded).
    #[arg(long, value_name = "DIR", help_heading = "Filters")]
    pub cwd: Vec<String>,

    /// Sessions whose cwd is DIR or below it (repeatable).
    #[arg(long, value_name = "DIR", help_heading = "Filters")]
    pub cwd_prefix: Vec<String>,

    /// Same as --cwd with the current directory.
    #[arg(long, help_heading = "Filters")]
    pub here: bool,

    /// With --cwd/--cwd-prefix/--here, also sibling directories whose name is DIR's plus a dash
    /// and more (git worktrees beside the main checkout; a lexical rule). Alone, it applies to
    /// the current directory.
    #[arg(long, help_heading = "Filters")]
    pub worktrees: bool,

    /// Sessions at or after WHEN: a date (start of that local day), a local date-time
    /// (`2026-09-01T14:30`), an RFC 3339 instant, or an age (`30m`, `2h`, `3d`, `1w`).
    #[arg(long, value_name = "WHEN", help_heading = "Filters")]
    pub since: Option<String>,

    /// Sessions at or before WHEN (a date keeps that whole local day).
    #[arg(long, value_name = "WHEN", help_heading = "Filters")]
    pub until: Option<String>,

    /// Only sessions that launched at least one subagent run.
    #[arg(long, help_heading = "Filters")]
    pub with_subagents: bool,

    /// Show at most N levels of subagent nesting (0: top-level sessions only).
    #[arg(long, value_name = "N", help_heading = "Filters")]
    pub max_depth: Option<usize>,

    /// Leave out the session at $PI_SESSION_FILE (the one running this command), with its tree.
    #[arg(long, help_heading = "Filters")]
    pub exclude_current: bool,

    /// Sessions whose id starts with PREFIX (repeatable).
    #[arg(long, value_name = "PREFIX", help_heading = "Filters")]
    pub id: Vec<String>,

    /// Sessions whose name (set with Pi's /name) contains TEXT, case-insensitively. Reads bodies.
    #[arg(long, value_name = "TEXT", help_heading = "Filters")]
    pub name: Option<String>,

    /// Order the top level by this field; ties fall back to timestamp, then path.
    #[arg(long, value_enum, default_value_t = SortField::Timestamp, help_heading = "Order")]
    pub sort: SortField,

    /// Reverse the top-level order (children stay in launch order).
    #[arg(long, help_heading = "Order")]
    pub newest_first: bool,

    /// Keep at most N top-level sessions, after sorting (N >= 1).
    #[arg(
        long,
        value_name = "N",
        allow_negative_numbers = true,
        help_heading = "Order"
    )]
    pub limit: Option<i64>,

    /// Print the contract's JSON document `{ "sessions": [...], "warnings": [...] }`.
    #[arg(long, group = "format", help_heading = "Output")]
    pub json: bool,

    /// Print one flattened JSON object per line, with `depth` and `parentPath`.
    #[arg(long, group = "format", help_heading = "Output")]
    pub jsonl: bool,

    /// With --jsonl: write each session tree as soon as it is read, in no particular order.
    #[arg(long, requires = "jsonl", help_heading = "Output")]
    pub unordered: bool,

    /// One aligned line per session: local time, id, cwd, runs, and name or first message.
    #[arg(long, short = 'l', group = "format", help_heading = "Output")]
    pub long: bool,

    /// When to use colour.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN", help_heading = "Output")]
    pub color: ColorChoice,

    /// Worker threads for the walk (default: one per core).
    #[arg(long, value_name = "N", default_value_t = 0, hide_default_value = true)]
    pub threads: usize,
}

/// Flags of `schema`.
#[derive(Debug, Args)]
pub struct SchemaArgs {
    /// Which document.
    #[arg(value_enum)]
    pub document: SchemaDocument,
}

/// Documents with a schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SchemaDocument {
    /// The `list --json` document.
    List,
}
