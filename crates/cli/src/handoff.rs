//! `pi-retrospect handoff`: flags -> `app::handoff` -> `render::handoff`, to stdout or a file.

use std::io::Write;
use std::path::PathBuf;

use clap::Args;
use pi_retrospect_app::{Environment, HandoffOptions, HandoffRequest};
use pi_retrospect_render::handoff::{MarkdownOptions, write_json, write_markdown};

use crate::args::{ColorChoice, SESSION_HELP, StoreArgs};

/// The long help of `handoff`.
pub const HANDOFF_HELP: &str = "\
Prints a Markdown document to paste into a new Pi session so the work can go on with a \
clean context: where the session is (path, id, cwd, name, models, first and last activity), \
the goal when given, the original task (the first user message), the command that resumes \
it (`pi --session PATH`), the latest compaction summary, the files edit and write calls \
touched, the failures of the last three turns with their error text (failed, aborted and \
cut-off replies, tool errors with the call that failed, `!` commands that failed), and the \
most recent user and assistant text messages of its active branch, newest last.

Never included: images, thinking, system and custom messages, custom entries, branch \
summaries, other tool calls and results. Common credentials (provider and vendor API keys, \
GitHub/GitLab/Slack/npm/Stripe/... tokens, AWS keys, bearer tokens, JWTs, private keys, \
key and cookie headers, passwords in URLs, on command lines and after \"password is\", \
KEY=value lines naming a secret) are replaced by `[redacted: KIND]` and counted in the \
header; terminal control and bidi characters are removed. Redaction is by shape: best \
effort, not a guarantee. Messages removed from the model's context by a context edit are \
left out.

Bounds: every one-line field (name, cwd, id, each model, times, paths) is cut at 512 bytes \
and ends in `… [cut: N bytes]`; at most 16 models, 20 warnings, 50 files and 8 failures are \
listed (with their counts); the task is cut at 2 KiB, the compaction summary at 4 KiB, each \
failure's text at 1 KiB; the whole document is at most 192 KiB (or twice --max-bytes plus \
64 KiB, if larger), files, then the oldest messages, then failures dropped to fit.

--out writes only the regular file named: never inside a session store or over a session \
file, never through or over a symbolic link, never to a FIFO, socket, device or directory \
(refused at once), even with --force. The document is written to a temporary file in the \
same directory and renamed into place, so a reader never sees half of it.

Examples:
  pi-retrospect handoff latest --goal \"finish the parser\"
  pi-retrospect handoff latest --json | jq -r '.excerpt.messages[-1].text'
  pi-retrospect handoff latest --out handoff.md";

/// Flags of `handoff`.
#[derive(Debug, Args)]
#[command(after_help = SESSION_HELP)]
pub struct HandoffArgs {
    /// A session file path, a session id or unique id prefix, or `latest`.
    #[arg(value_name = "SESSION")]
    pub session: String,

    #[command(flatten)]
    pub store: StoreArgs,

    /// The goal of the work to continue, written at the top.
    #[arg(long, value_name = "TEXT")]
    pub goal: Option<String>,

    /// At most N messages.
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..), default_value_t = HandoffOptions::default().max_messages, help_heading = "Limits")]
    pub max_messages: usize,

    /// Each message cut at N bytes of UTF-8.
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..), default_value_t = HandoffOptions::default().max_message_bytes, help_heading = "Limits")]
    pub max_message_bytes: usize,

    /// All messages together cut at N bytes of UTF-8.
    #[arg(long, value_name = "N", value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..), default_value_t = HandoffOptions::default().max_excerpt_bytes, help_heading = "Limits")]
    pub max_bytes: usize,

    /// Print the document as JSON (`pi-retrospect schema handoff`).
    #[arg(long, help_heading = "Output")]
    pub json: bool,

    /// When to use colour (accepted by every command that prints, so that one alias or script
    /// can pass it everywhere; this command's text has no colour to turn on or off).
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN", help_heading = "Output")]
    pub color: ColorChoice,

    /// Write the document to FILE instead of stdout (`-`: stdout). Never over an existing
    /// file, and never inside a session store, over a session file, through a symbolic link
    /// or to a FIFO or device, even with --force.
    #[arg(long, short = 'o', value_name = "FILE", help_heading = "Output")]
    pub out: Option<PathBuf>,

    /// With --out, replace FILE when it exists.
    #[arg(long, requires = "out", help_heading = "Output")]
    pub force: bool,
}

/// Runs `handoff` with `args`, writing to `out` (or to `--out FILE`).
pub fn run(args: &HandoffArgs, env: &Environment, out: &mut dyn Write) -> anyhow::Result<()> {
    let request = HandoffRequest {
        target: args.store.target(&args.session, env)?,
        options: HandoffOptions {
            goal: args.goal.clone(),
            max_messages: args.max_messages,
            max_message_bytes: args.max_message_bytes,
            max_excerpt_bytes: args.max_bytes,
            // The document bound grows with a larger --max-bytes rather than overruling it.
            max_document_bytes: HandoffOptions::default()
                .max_document_bytes
                .max(args.max_bytes.saturating_mul(2).saturating_add(64 * 1024)),
            ..HandoffOptions::default()
        },
    };
    let handoff = pi_retrospect_app::handoff(&request, env)?;
    let mut document = Vec::new();
    if args.json {
        write_json(&mut document, &handoff)?;
    } else {
        let options = MarkdownOptions {
            zone: env.time_zone.clone(),
        };
        write_markdown(&mut document, &handoff, &options)?;
    }
    match args
        .out
        .as_deref()
        .filter(|path| *path != std::path::Path::new("-"))
    {
        None => out.write_all(&document)?,
        Some(path) => pi_retrospect_app::write_handoff(
            path,
            &document,
            args.force,
            std::path::Path::new(&handoff.source.path),
            &args.store.flags(),
            env,
        )?,
    }
    Ok(())
}
