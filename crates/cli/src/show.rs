//! `pi-retrospect show`: flags -> `app::show` -> `render::show`.

use std::io::Write;

use clap::Args;
use pi_retrospect_app::{Environment, ShowRequest, ShowView};
use pi_retrospect_render::show::{
    JsonView, ShowParts, ShowStyle, TranscriptBody, TranscriptWriteError, write_json_element,
    write_json_head, write_json_tail, write_jsonl_item, write_jsonl_session, write_jsonl_tree_row,
    write_jsonl_warnings, write_transcript,
};

use crate::args::{ColorChoice, SESSION_HELP, StoreArgs};
use crate::output::{print_change_since_read, print_warnings};
use crate::term::{fit_width, use_color};

pub const SHOW_HELP: &str = concat!(
    session_help!(),
    "\n\n",
    "\
The heading gives the session's first and last activity (local time), the session it was \
forked from and where the copied entries end, the session that launched it (for a subagent \
run) and the runs it launched with their first task.

The transcript follows the active branch (root to the last entry appended, as Pi resumes \
it). Each block starts with the entry id in brackets, so `inspect SESSION read ID` or \
`entries SESSION --entry ID` can jump to it. A response that failed is marked ([error: ...], \
[aborted], [cut off: output limit]), and so is a failed tool result ([error]) or `!` command \
([exit 2]); `!!` marks a command kept out of the model's context. A `bash` call shows its \
whole command, wrapped; other calls a readable summary of their arguments (--tool-args: all \
of them). Tool results, `!` output and long notes keep their first and last lines up to \
--output-chars characters and say how much they left out; Pi's own truncation notice is \
kept. Thinking is hidden unless --thinking; a system prompt is one line unless --system.

--tree draws every entry: the active path flush left (`*`, the leaf `@`), each side branch \
right under its branch point, marked `|` and starting with `+`; --fold makes each side \
branch one line. Previews are cut to the terminal's width.

--json carries everything whole: full tool output and arguments (with each call's \
toolCallId), stop reasons and errors, and UTC timestamps on every item. --jsonl writes the \
same as one JSON row per line: first `{\"kind\": \"session\", ...}` with the heading fields, \
then each item (with --tree, `{\"kind\": \"treeRow\", \"row\": {...}}`), then every warning as \
`{\"kind\": \"warning\", \"warning\": {...}}` (`pi-retrospect schema show`, `$defs/JsonlRow`).

Examples (on the committed fixtures, from the repository root, with R=fixtures/pi-real/sessions):
  pi-retrospect show 01a22de2-540d --sessions-root $R
  pi-retrospect show 01a22de2-540d --sessions-root $R --output-chars 300 --tool-args
  pi-retrospect show 01a22b41-c0ec --sessions-root $R --thinking --system
  pi-retrospect show 01a22de2-5609 --sessions-root $R --tree --fold
  pi-retrospect show 01a22de2-540d --sessions-root $R --json | jq '.items[].toolCallId // empty'"
);

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

    /// With --tree: fold each side branch into one line.
    #[arg(long, requires = "tree")]
    pub fold: bool,

    /// Show thinking blocks (hidden by default).
    #[arg(long, conflicts_with = "tree")]
    pub thinking: bool,

    /// Show system prompts whole (one line each by default).
    #[arg(long, conflicts_with = "tree")]
    pub system: bool,

    /// Show every tool call's full arguments under it.
    #[arg(long, conflicts_with = "tree")]
    pub tool_args: bool,

    /// Characters kept of each tool result, `!` output and long note, first and last lines
    /// (at most one line per 50 characters); 0 keeps only the header line. --json keeps all.
    #[arg(
        long = "output-chars",
        alias = "tool-output",
        value_name = "N",
        default_value_t = 2000,
        conflicts_with = "tree"
    )]
    pub tool_output: usize,

    /// Print a JSON document instead of text (never cut; `pi-retrospect schema show`).
    #[arg(long, group = "show_format", help_heading = "Output")]
    pub json: bool,

    /// Print one JSON row per line, never cut: a `session` row with the heading fields, the
    /// items (with --tree, `treeRow` rows), then a `warning` row per warning
    /// (`pi-retrospect schema show`, `$defs/JsonlRow`).
    #[arg(long, group = "show_format", help_heading = "Output")]
    pub jsonl: bool,

    /// When to use colour.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN", help_heading = "Output")]
    pub color: ColorChoice,
}

/// Runs `show` with `args`, writing to `out`.
pub fn run(args: &ShowArgs, env: &Environment, out: &mut dyn Write) -> anyhow::Result<()> {
    let request = ShowRequest {
        target: args.store.target(&args.session, env)?,
        tree: args.tree,
        thinking: args.thinking,
        tool_output_chars: (!args.json && !args.jsonl).then_some(args.tool_output),
    };
    let result = pi_retrospect_app::show(&request, env)?;
    let session = &result.session;
    let parts = ShowParts {
        path: &session.path,
        transcript: &session.transcript,
        facts: &result.facts,
        lineage: &result.lineage,
    };
    // Items and rows are written as they are made, so memory holds one at a time.
    if args.json {
        let mut n_elements = 0;
        match result.view {
            ShowView::Items => {
                write_json_head(out, &parts, JsonView::Items)?;
                result.for_each_item(|item| {
                    write_json_element(out, &item, n_elements)?;
                    n_elements += 1;
                    anyhow::Ok(())
                })?;
            }
            ShowView::Tree => {
                write_json_head(out, &parts, JsonView::Tree)?;
                result.for_each_tree_row(|row| {
                    write_json_element(out, &row, n_elements)?;
                    n_elements += 1;
                    anyhow::Ok(())
                })?;
            }
        }
        write_json_tail(out, &parts, n_elements)?;
        return Ok(());
    }
    if args.jsonl {
        write_jsonl_session(out, &parts)?;
        match result.view {
            ShowView::Items => result.for_each_item(|item| {
                write_jsonl_item(out, &item)?;
                anyhow::Ok(())
            })?,
            ShowView::Tree => result.for_each_tree_row(|row| {
                write_jsonl_tree_row(out, &row)?;
                anyhow::Ok(())
            })?,
        }
        // The warnings come last, after every read of content, so they end with a rewrite
        // made while it was shown.
        write_jsonl_warnings(out, &session.transcript)?;
        return Ok(());
    }
    let style = ShowStyle {
        paint: use_color(args.color),
        width: fit_width().unwrap_or(120),
        time_zone: &env.time_zone,
        system: args.system,
        tool_args: args.tool_args,
        fold: args.fold,
    };
    print_warnings(&session.path, session.transcript.warnings());
    let body = match result.view {
        ShowView::Tree => TranscriptBody::Tree {
            counts: result.tree_counts(),
            for_each: &mut |visit| result.for_each_tree_row(visit),
        },
        ShowView::Items => TranscriptBody::Items {
            n_active_entries: result.n_active_entries(),
            for_each: &mut |visit| result.for_each_item(visit),
        },
    };
    // Each failure as itself, so that a closed pipe is still an `io::Error` in the chain.
    write_transcript(out, &parts, &style, body).map_err(|error| match error {
        TranscriptWriteError::Write(error) => anyhow::Error::from(error),
        TranscriptWriteError::Read(error) => anyhow::Error::from(error),
    })?;
    out.flush()?;
    print_change_since_read(&session.path, &session.transcript)
}
