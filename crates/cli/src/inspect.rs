//! `pi-retrospect inspect`: flags -> `app::inspect` -> `render::inspect`.

use std::io::Write;

use clap::{Args, Subcommand};
use pi_retrospect_app::{Environment, InspectRequest, InspectView, SearchScope};

use crate::args::{CaseArgs, ColorChoice, SESSION_HELP, StoreArgs};
use crate::output::{print_change_since_read, print_warnings};

pub const INSPECT_HELP: &str = concat!(
    session_help!(),
    "\n\n",
    "\
Views (a checkpoint is the last entry of a completed assistant turn: the response plus the \
tool results answering its calls):
  overview           checkpoints across the whole tree, in file order
  ancestors [ENTRY]  checkpoints on the path from the root to ENTRY (default: the leaf)
  children ENTRY     the next checkpoint on each path below ENTRY
  search QUERY       literal matches, smart case unless -s or -i, in the texts `search`
                     looks in (user and assistant text, API errors, `!` commands and their
                     output, summaries, custom messages, session names, labels);
                     --tool-results adds tool output, --tool-args tool-call arguments
                     (values, never keys), --thinking thinking, --system system prompts (the
                     page says what it did not search; the README's table \"Searchable
                     text\")
  read ENTRY         one entry with --before ancestors and --after descendants; at a branch
                     point the child ids are listed instead of choosing one. A long entry's
                     text continues on the next pages (8,000 characters each)

ENTRY is an entry id, or `line:N` (the entry on physical line N; the only handle in version \
1 files). Results carry entry ids, parent/child checkpoint relations, labels, previews cut \
to 240 characters, how each response ended (stopReason, errorMessage: marked [error: ...], \
[aborted], [cut off: output limit] in text), which tool results failed (isError), and token \
counts that are estimates (serialized characters / 4). Image data is never returned; \
thinking, tool-call arguments, system prompts and tool output only with the flags above. \
Times are local in text, UTC in JSON.

Pages hold --limit results (default 20, at most 50). When there are more, the page ends with \
a cursor: pass it with --cursor to the same command to continue. The cursor remembers how \
much of the file the first page read, so later pages describe the same snapshot even while \
Pi appends to the file.

Examples (on the committed fixtures, from the repository root, with R=fixtures/pi-real/sessions):
  pi-retrospect inspect 01a22de2-540d overview --sessions-root $R
  pi-retrospect inspect 01a22de2-540d search \"git push\" --tool-args --sessions-root $R
  pi-retrospect inspect 01a22de2-540d search \"no such file\" --tool-results --sessions-root $R
  pi-retrospect inspect 01a22b41-c1e1 read e0dbe164 --before 2 --after 5 --sessions-root $R
  pi-retrospect inspect 01a22de2-540d read 8b495b2c --tool-results --sessions-root $R
  pi-retrospect inspect 01a22de2-5609 overview --limit 5 --sessions-root $R
  pi-retrospect inspect 01a22b41-c1e1 ancestors --sessions-root $R --json | jq .nTotal"
);

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
        allow_negative_numbers = true,
        value_parser = page_limit,
        help_heading = "Paging"
    )]
    pub limit: u8,

    /// Continue a previous page: the cursor it printed, with the same view and flags.
    #[arg(long, value_name = "CURSOR", global = true, help_heading = "Paging")]
    pub cursor: Option<String>,

    /// Include tool output (search it, preview it); it can hold sensitive source material.
    #[arg(long, global = true, help_heading = "Scope")]
    pub tool_results: bool,

    /// Search tool-call arguments too (a `bash` call's command, a `read` call's path).
    #[arg(long, global = true, help_heading = "Scope")]
    pub tool_args: bool,

    /// Search thinking blocks too.
    #[arg(long, global = true, help_heading = "Scope")]
    pub thinking: bool,

    /// Search system prompts too.
    #[arg(long, global = true, help_heading = "Scope")]
    pub system: bool,

    /// Print the page as a JSON document.
    #[arg(long, global = true, help_heading = "Output")]
    pub json: bool,

    /// When to use colour (accepted by every command that prints, so that one alias or script
    /// can pass it everywhere; this command's text has no colour to turn on or off).
    #[arg(long, global = true, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN", help_heading = "Output")]
    pub color: ColorChoice,
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
    /// Literal search, smart case, over the texts `search` looks in (the README's table
    /// "Searchable text").
    Search {
        /// The text to find.
        query: String,
        #[command(flatten)]
        case: CaseArgs,
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

impl InspectViewArg {
    /// Returns the transcript crate's view for these flags.
    fn view(&self) -> InspectView {
        match self {
            InspectViewArg::Overview => InspectView::Overview,
            InspectViewArg::Ancestors { entry } => InspectView::Ancestors {
                entry: entry.clone(),
            },
            InspectViewArg::Children { entry } => InspectView::Children {
                entry: entry.clone(),
            },
            InspectViewArg::Search { query, .. } => InspectView::Search {
                query: query.clone(),
            },
            InspectViewArg::Read {
                entry,
                before,
                after,
            } => InspectView::Read {
                entry: entry.clone(),
                before: usize::from(*before),
                after: usize::from(*after),
            },
        }
    }
}

/// Runs `inspect` with `args`, writing to `out`.
/// Runs `inspect`; returns whether something was found: `false` only for a search whose first
/// page has no hit (a later page, asked for with a cursor, may be the empty end).
pub fn run(args: &InspectArgs, env: &Environment, out: &mut dyn Write) -> anyhow::Result<bool> {
    let request = InspectRequest {
        target: args.store.target(&args.session, env)?,
        view: args.view.view(),
        limit: Some(usize::from(args.limit)),
        cursor: args.cursor.clone(),
        scope: SearchScope {
            tool_results: args.tool_results,
            tool_args: args.tool_args,
            thinking: args.thinking,
            system: args.system,
        },
        case: match &args.view {
            InspectViewArg::Search { case, .. } => case.mode(),
            _ => CaseArgs::default().mode(),
        },
    };
    let result = pi_retrospect_app::inspect(&request, env)?;
    let session = &result.session;
    let is_found = !matches!(request.view, InspectView::Search { .. })
        || request.cursor.is_some()
        || result
            .page
            .hits
            .as_ref()
            .is_some_and(|hits| !hits.is_empty());
    if args.json {
        pi_retrospect_render::inspect::write_json_all_warnings(
            out,
            &session.path,
            &result.page,
            &session.transcript,
        )?;
        return Ok(is_found);
    }
    print_warnings(&session.path, session.transcript.warnings());
    let style = pi_retrospect_render::inspect::InspectStyle {
        offset: result.offset,
        time_zone: &env.time_zone,
        spelling: pi_retrospect_render::inspect::Spelling::Flags,
    };
    pi_retrospect_render::inspect::write_text(
        out,
        &session.path,
        &result.page,
        &request.view,
        &style,
    )?;
    out.flush()?;
    print_change_since_read(&session.path, &session.transcript)?;
    Ok(is_found)
}

/// Parses `inspect --limit`: the rule and message of every `--limit`, and at most 50 a page.
fn page_limit(value: &str) -> Result<u8, String> {
    let limit = crate::args::positive_limit(value)?;
    u8::try_from(limit)
        .ok()
        .filter(|&limit| limit <= 50)
        .ok_or_else(|| format!("must be at most 50 a page, not {limit}"))
}
