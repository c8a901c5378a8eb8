//! `pi-retrospect entries`: flags -> `app::entries` -> `render::entries`.

use std::io::Write;

use clap::Args;
use pi_retrospect_app::{EntriesRequest, Environment};

use crate::args::{CaseArgs, ColorChoice, SESSION_HELP, StoreArgs};
use crate::output::{print_change_since_read, print_warnings};

pub const ENTRIES_HELP: &str = concat!(
    session_help!(),
    "\n\n",
    "\
Rows are `{lineNo, id, parentId, timestamp, type, messageRole, text}` (plus `raw`, the line's \
JSON unchanged, with --raw). `text` is the entry's human-readable body: never thinking, tool \
calls or images. `lineNo` is the physical line (line 1 is the header and never a row) and the \
stable handle; in a version 1 file `id` and `parentId` are null and one warning says so.

Message rows add what the text leaves out: `stopReason` and `errorMessage` of a response, \
`isError` of a tool result, `exitCode`, `cancelled`, `truncated` and `excludeFromContext` of \
a `!` command, the names of the tools a response called (`toolCalls`), and counts of images \
and thinking blocks. Text output marks failures ([error: ...], [exit 2]) and shows what \
stands in for a missing text (-> the tools called, (thinking only), (image)); times there \
are local, in JSON UTC.

Filters combine with AND; repeated --type, --role and --grep values OR. --grep is literal, \
smart case unless -s (--case-sensitive) or -i (--ignore-case), and looks in the texts \
`search` looks in (user and assistant text, API errors, `!` commands and their output, \
summaries, custom messages, session names, labels; the README's table \"Searchable text\"); \
--tool-args adds tool-call arguments (\"did it run git push?\"), --thinking thinking, \
--tool-results tool output, --system system prompts (--role toolResult or system adds \
theirs). --since/--until compare each entry's own timestamp (entries \
without one are left out) and take the same forms as in `list`.

--json prints `{ \"path\", \"sessionId\", \"version\", \"entries\": [...], \"warnings\": [...] }` \
(`pi-retrospect schema entries`); --jsonl prints one row per line and the warnings on stderr.

Examples (on the committed fixtures, from the repository root, with R=fixtures/pi-real/sessions):
  pi-retrospect entries 01a22de2-540d --sessions-root $R --role user --jsonl | jq -r .text
  pi-retrospect entries 01a22de2-540d --sessions-root $R --grep \"git push\" --tool-args
  pi-retrospect entries 01a22b41-c1e1 --sessions-root $R --lines 5..8 --raw --json
  pi-retrospect entries 01a22b41-c1e1 --sessions-root $R --grep approach --limit 3
  pi-retrospect entries 01a22de2-540d --sessions-root $R --since 2026-11-30 --role toolResult"
);

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
    #[arg(
        long = "entry",
        alias = "id",
        value_name = "ENTRY",
        help_heading = "Filters"
    )]
    pub id: Option<String>,

    /// Only entries whose parent has this id, or is at this `line:N` handle.
    #[arg(
        long = "parent",
        alias = "parent-id",
        value_name = "ENTRY",
        help_heading = "Filters"
    )]
    pub parent_id: Option<String>,

    /// Only entries of this type (`message`, `compaction`, `label`, ...; repeatable).
    #[arg(long = "type", value_name = "TYPE", value_parser = clap::builder::PossibleValuesParser::new(ENTRY_TYPES), help_heading = "Filters")]
    pub types: Vec<String>,

    /// Only messages with this role (`user`, `assistant`, `toolResult`, ...; repeatable).
    #[arg(long = "role", value_name = "ROLE", value_parser = clap::builder::PossibleValuesParser::new(ROLES), help_heading = "Filters")]
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

    #[command(flatten)]
    pub case: CaseArgs,

    /// --grep also looks in tool-call arguments' values (a `bash` call's command, a `read`
    /// call's path).
    #[arg(long, requires = "grep", help_heading = "Filters")]
    pub tool_args: bool,

    /// --grep also looks in thinking blocks.
    #[arg(long, requires = "grep", help_heading = "Filters")]
    pub thinking: bool,

    /// --grep also looks in tool output.
    #[arg(long, requires = "grep", help_heading = "Filters")]
    pub tool_results: bool,

    /// --grep also looks in system prompts.
    #[arg(long, requires = "grep", help_heading = "Filters")]
    pub system: bool,

    /// At most N rows.
    #[arg(long, value_name = "N", allow_negative_numbers = true, value_parser = crate::args::positive_limit, help_heading = "Filters")]
    pub limit: Option<u64>,

    /// Include each line's JSON unchanged as `raw` (in text output: on the line below the row).
    #[arg(long, help_heading = "Output")]
    pub raw: bool,

    /// When to use colour (accepted by every command that prints, so that one alias or script
    /// can pass it everywhere; this command's text has no colour to turn on or off).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN", help_heading = "Output")]
    pub color: ColorChoice,

    /// Print a JSON document `{ path, sessionId, version, entries, warnings }`.
    #[arg(long, group = "entries_format", help_heading = "Output")]
    pub json: bool,

    /// Print one JSON row per line (warnings go to stderr).
    #[arg(long, group = "entries_format", help_heading = "Output")]
    pub jsonl: bool,
}

/// The entry types `--type` accepts: every type Pi 1.6.0 writes.
const ENTRY_TYPES: [&str; 11] = pi_retrospect_core::entry_kinds::ENTRY_TYPES;

/// The message roles `--role` accepts (version 3 spellings), here and in `search`.
pub(crate) const ROLES: [&str; 8] = pi_retrospect_core::entry_kinds::MESSAGE_ROLES;

/// Runs `entries` with `args`, writing to `out`.
/// Runs `entries`; returns whether a row was found, when `--grep` asks for one (`true`
/// without it: a filter that selects nothing is an empty answer, not a failed search).
pub fn run(args: &EntriesArgs, env: &Environment, out: &mut dyn Write) -> anyhow::Result<bool> {
    let request = EntriesRequest {
        lines: args.lines.clone(),
        id: args.id.clone(),
        parent_id: args.parent_id.clone(),
        types: args.types.clone(),
        roles: args.roles.clone(),
        since: args.since.clone(),
        until: args.until.clone(),
        grep: args.grep.clone(),
        case: args.case.mode(),
        grep_scope: pi_retrospect_app::SearchScope {
            tool_results: args.tool_results,
            tool_args: args.tool_args,
            thinking: args.thinking,
            system: args.system,
        },
        limit: args.limit,
        raw: args.raw,
    };
    let target = args.store.target(&args.session, env)?;
    let result = pi_retrospect_app::entries(&target, &request, env)?;
    let session = &result.session;
    if args.json {
        // Rows are written as they are read, so memory stays at one row.
        let transcript = &session.transcript;
        pi_retrospect_render::entries::write_json_head(out, &session.path, transcript)?;
        let mut n_rows = 0;
        result.for_each_row(|row| {
            pi_retrospect_render::entries::write_json_row(out, &row, n_rows)?;
            n_rows += 1;
            anyhow::Ok(())
        })?;
        pi_retrospect_render::entries::write_json_tail(out, transcript, n_rows)?;
        return Ok(args.grep.is_empty() || n_rows > 0);
    }
    print_warnings(&session.path, session.transcript.warnings());
    let n_rows = if args.jsonl {
        let mut n_rows = 0_usize;
        result.for_each_row(|row| {
            pi_retrospect_render::entries::write_jsonl_row(out, &row)?;
            n_rows += 1;
            anyhow::Ok(())
        })?;
        n_rows
    } else {
        // Aligned columns need every row's width first: the rows are read twice, measured
        // and then written, so that none is held.
        let mut table = pi_retrospect_render::entries::TextTable::new(&env.time_zone);
        result.for_each_row(|row| {
            table.measure(&row);
            anyhow::Ok(())
        })?;
        table.write_heading(out)?;
        let mut n_rows = 0_usize;
        result.for_each_row(|row| {
            table.write_row(out, &row)?;
            n_rows += 1;
            anyhow::Ok(())
        })?;
        n_rows
    };
    out.flush()?;
    print_change_since_read(&session.path, &session.transcript)?;
    Ok(args.grep.is_empty() || n_rows > 0)
}
