//! `pi-retrospect show`: flags -> `app::show` -> `render::show`.

use std::io::Write;

use clap::Args;
use pi_retrospect_app::{Environment, ShowRequest, ShowView};
use pi_retrospect_render::show::{Paint, write_heading, write_items, write_json, write_tree};

use crate::args::{ColorChoice, SESSION_HELP, StoreArgs};
use crate::output::print_warnings;
use crate::term::use_color;

pub const SHOW_HELP: &str = concat!(
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
  pi-retrospect show latest~1 --tree
  pi-retrospect show latest --json | jq -r '.items[] | select(.kind == \"toolCall\") | .name'"
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

/// Runs `show` with `args`, writing to `out`.
pub fn run(args: &ShowArgs, env: &Environment, out: &mut dyn Write) -> anyhow::Result<()> {
    let request = ShowRequest {
        target: args.store.target(&args.session, env)?,
        tree: args.tree,
        thinking: args.thinking,
        tool_output_chars: args.tool_output,
    };
    let result = pi_retrospect_app::show(&request, env)?;
    let session = &result.session;
    let (items, tree) = match &result.view {
        ShowView::Items(items) => (Some(items.as_slice()), None),
        ShowView::Tree(rows) => (None, Some(rows.as_slice())),
    };
    if args.json {
        write_json(
            out,
            &session.path,
            &session.transcript,
            &result.facts,
            items,
            tree,
        )?;
        return Ok(());
    }
    let paint = Paint {
        is_on: use_color(args.color),
    };
    print_warnings(&session.path, session.transcript.warnings());
    write_heading(out, &session.path, &result.facts, &paint)?;
    match &result.view {
        ShowView::Tree(rows) => write_tree(out, rows, &paint)?,
        ShowView::Items(items) => {
            writeln!(
                out,
                "active branch: {} entries\n",
                session.transcript.active_branch().len()
            )?;
            write_items(out, items, args.tool_output, &paint)?;
        }
    }
    Ok(())
}
