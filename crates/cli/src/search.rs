//! `pi-retrospect search`: flags -> `app::search` -> `render::search`, streamed as found.

use std::io::{IsTerminal, Write};
use std::ops::ControlFlow;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use pi_retrospect_app::{Environment, ListRequest, SearchRequest};
use pi_retrospect_core::search::{FieldKind, SearchDocument, SearchWarning};
use pi_retrospect_search::{
    CaseMode, Event, FieldKinds, Mode, Pattern, Progress, Query, Scope, SessionOrder,
};

use crate::args::{ColorChoice, SessionFilterArgs, StoreArgs};
use crate::progress::ProgressDisplay;

/// The long help of `search`.
pub const SEARCH_HELP: &str = "\
Searches every session of the store (subagent runs included) without an index, exactly: the \
pattern is matched against the text of each entry, never against JSON field names, ids, \
image data or signatures, and a match across a JSON escape (a quote, a newline) is found.

Searched by default: user and assistant text, `!` commands and their output, compaction and \
branch summaries, custom messages, session names and labels. Opt in with --thinking, \
--tool-args, --tool-results, --system; narrow with --role, --tool, --model.

The pattern is literal unless -E; case-sensitive unless -i, or -S (smart case: sensitive \
only when the pattern has an upper-case letter); -w matches whole words. Sessions come \
newest first (--sort), hits in file order. Exit status: 0 when something matched, 1 when \
nothing did, 2 on an error.

Examples (on the committed fixtures, from the repository root, with R=fixtures/pi-real/sessions):
  pi-retrospect search --sessions-root $R \"no such file\" --tool-results
  pi-retrospect search --sessions-root $R -i \"git push\" --tool-args --json
  pi-retrospect search --sessions-root $R -E \"rate limit|429\" --count
  pi-retrospect search --sessions-root $R -w approach --files-with-matches
  pi-retrospect search --sessions-root $R config --session 01a22de2-540d --jsonl";

/// The order of sessions in the output.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SortArg {
    /// Newest session first.
    Newest,
    /// Oldest session first.
    Oldest,
    /// By path.
    Path,
}

/// Flags of `search`.
#[derive(Debug, Args)]
pub struct SearchArgs {
    /// What to look for: literal text, or a regular expression with -E.
    #[arg(value_name = "PATTERN")]
    pub pattern: String,

    #[command(flatten)]
    pub store: StoreArgs,

    /// Treat PATTERN as a regular expression (Rust `regex` syntax).
    #[arg(short = 'E', long, help_heading = "Matching")]
    pub regex: bool,

    /// Ignore case.
    #[arg(
        short = 'i',
        long,
        conflicts_with = "smart_case",
        help_heading = "Matching"
    )]
    pub ignore_case: bool,

    /// Ignore case unless PATTERN has an upper-case letter.
    #[arg(short = 'S', long, help_heading = "Matching")]
    pub smart_case: bool,

    /// Match whole words only.
    #[arg(short = 'w', long, help_heading = "Matching")]
    pub word: bool,

    /// Also search thinking.
    #[arg(long, help_heading = "Scope")]
    pub thinking: bool,

    /// Also search tool-call arguments (a bash command, a path).
    #[arg(long, help_heading = "Scope")]
    pub tool_args: bool,

    /// Also search tool output.
    #[arg(long, help_heading = "Scope")]
    pub tool_results: bool,

    /// Also search system prompts.
    #[arg(long, help_heading = "Scope")]
    pub system: bool,

    /// Only messages with this role (repeatable).
    #[arg(long, value_name = "ROLE", help_heading = "Scope")]
    pub role: Vec<String>,

    /// Only calls and results of this tool (repeatable).
    #[arg(long, value_name = "NAME", help_heading = "Scope")]
    pub tool: Vec<String>,

    /// Only assistant messages of this model (`model` or `provider/model`, repeatable).
    #[arg(long, value_name = "MODEL", help_heading = "Scope")]
    pub model: Vec<String>,

    /// Only this session (a path, an id or unique prefix, or `latest`).
    #[arg(long, value_name = "SESSION", help_heading = "Filters")]
    pub session: Option<String>,

    #[command(flatten)]
    pub filters: SessionFilterArgs,

    /// Sessions that started at or after WHEN.
    #[arg(long, value_name = "WHEN", help_heading = "Filters")]
    pub since: Option<String>,

    /// Sessions that started at or before WHEN.
    #[arg(long, value_name = "WHEN", help_heading = "Filters")]
    pub until: Option<String>,

    /// Characters of context on each side of a match.
    #[arg(long, short = 'C', value_name = "N", default_value_t = pi_retrospect_search::DEFAULT_CONTEXT_CHARS, help_heading = "Output")]
    pub context: usize,

    /// Stop after N hits.
    #[arg(long, short = 'n', value_name = "N", help_heading = "Output")]
    pub limit: Option<u64>,

    /// Order of sessions.
    #[arg(long, value_enum, default_value_t = SortArg::Newest, help_heading = "Output")]
    pub sort: SortArg,

    /// Print the number of hits per session file.
    #[arg(long, short = 'c', group = "search_mode", help_heading = "Output")]
    pub count: bool,

    /// Print only the paths of session files with hits, one per line.
    #[arg(long, short = 'l', group = "search_mode", help_heading = "Output")]
    pub files_with_matches: bool,

    /// One JSON document (`pi-retrospect schema search`).
    #[arg(long, group = "search_format", help_heading = "Output")]
    pub json: bool,

    /// One hit per line as JSON, streamed as found.
    #[arg(long, group = "search_format", help_heading = "Output")]
    pub jsonl: bool,

    /// When to colour.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN", help_heading = "Output")]
    pub color: ColorChoice,

    /// Worker threads (default: one per core).
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        hide_default_value = true,
        help_heading = "Output"
    )]
    pub threads: usize,
}

/// What a search ended with: whether anything matched (exit 0) or not (exit 1).
pub struct SearchOutcome {
    /// At least one hit.
    pub is_match: bool,
}

/// Runs `search` with `args`, writing to `out`.
pub fn run(
    args: &SearchArgs,
    env: &Environment,
    out: &mut dyn Write,
) -> anyhow::Result<SearchOutcome> {
    let request = request(args, env)?;
    let is_color = !args.json && !args.jsonl && crate::term::use_color(args.color);
    let mut document = SearchDocument::default();
    let mut text = pi_retrospect_render::search::TextWriter::new(out, is_color);
    let mut write_error: Option<std::io::Error> = None;
    let mut note = |result: std::io::Result<()>| match result {
        Ok(()) => ControlFlow::Continue(()),
        Err(error) => {
            write_error = Some(error);
            ControlFlow::Break(())
        }
    };
    let mut warnings: Vec<SearchWarning> = Vec::new();
    let progress = Arc::new(Progress::default());
    let display = crate::progress::is_wanted().then(|| ProgressDisplay::start(progress.clone()));
    // Results written to the terminal that shows the progress line erase it first and reach
    // the terminal before it is drawn again.
    let is_stdout_shared = display.is_some() && std::io::stdout().is_terminal();
    let totals = pi_retrospect_app::search_with_progress(&request, env, &progress, &mut |event| {
        let is_written = match event {
            Event::Hit(_) => !args.json,
            Event::Warning(_) => args.jsonl,
            Event::FileDone(count) => {
                count.n_hits > 0 && (args.count || args.files_with_matches) && !args.json
            }
        };
        let held = display
            .as_ref()
            .filter(|_| is_written && is_stdout_shared)
            .map(ProgressDisplay::hold);
        let flow = match event {
            Event::Hit(hit) if args.json => {
                document.hits.push(hit.clone());
                ControlFlow::Continue(())
            }
            Event::Hit(hit) if args.jsonl => note(pi_retrospect_render::search::write_hit_jsonl(
                text.out(),
                hit,
            )),
            Event::Hit(hit) => note(text.write_hit(hit)),
            Event::Warning(warning) if args.json => {
                document.warnings.push(warning.clone());
                ControlFlow::Continue(())
            }
            Event::Warning(warning) if args.jsonl => note(
                pi_retrospect_render::search::write_warning_jsonl(text.out(), warning),
            ),
            Event::Warning(warning) => {
                warnings.push(warning.clone());
                ControlFlow::Continue(())
            }
            Event::FileDone(count) if count.n_hits > 0 && args.count && !args.json => {
                note(pi_retrospect_render::search::write_count(text.out(), count))
            }
            Event::FileDone(count) if count.n_hits > 0 && args.files_with_matches && !args.json => {
                note(pi_retrospect_render::search::write_path(
                    text.out(),
                    &count.path,
                ))
            }
            Event::FileDone(_) => ControlFlow::Continue(()),
        };
        if held.is_some() && flow.is_continue() {
            return note(text.out().flush());
        }
        flow
    });
    // The line is erased before anything else is written: the document, the warnings or an
    // error.
    drop(display);
    let totals = totals?;
    if let Some(error) = write_error {
        return Err(error.into());
    }
    if args.json {
        document.totals = totals;
        pi_retrospect_render::search::write_json(text.out(), &document)?;
    }
    if !warnings.is_empty() {
        text.out().flush()?;
        let stderr = std::io::stderr();
        let mut stderr = stderr.lock();
        if !crate::output::is_quiet() {
            for warning in &warnings {
                let _ = pi_retrospect_render::search::write_warning_text(&mut stderr, warning);
            }
        }
    }
    Ok(SearchOutcome {
        is_match: totals.n_hits > 0,
    })
}

fn request(args: &SearchArgs, env: &Environment) -> anyhow::Result<SearchRequest> {
    let pattern = if args.regex {
        Pattern::regex(args.pattern.clone())
    } else {
        Pattern::literal(args.pattern.clone())
    };
    let case = if args.ignore_case {
        CaseMode::Insensitive
    } else if args.smart_case {
        CaseMode::Smart
    } else {
        CaseMode::Sensitive
    };
    let mut pattern = pattern.with_case(case);
    if args.word {
        pattern = pattern.whole_word();
    }
    let mut kinds = FieldKinds::default_kinds();
    for (is_on, kind) in [
        (args.thinking, FieldKind::Thinking),
        (args.tool_args, FieldKind::ToolArgs),
        (args.tool_results, FieldKind::ToolResult),
        (args.system, FieldKind::System),
    ] {
        if is_on {
            kinds = kinds.with(kind);
        }
    }
    let mut query = Query::new(pattern);
    query.scope = Scope {
        kinds,
        roles: args.role.clone(),
        tools: args.tool.clone(),
        models: args.model.clone(),
    };
    query.context_chars = args.context;
    let session = args
        .session
        .as_deref()
        .map(|session| args.store.target(session, env))
        .transpose()?;
    Ok(SearchRequest {
        sessions: args.filters.apply(ListRequest {
            stores: args.store.flags(),
            since: args.since.clone(),
            until: args.until.clone(),
            threads: args.threads,
            ..ListRequest::default()
        }),
        session,
        query,
        order: match args.sort {
            SortArg::Newest => SessionOrder::Newest,
            SortArg::Oldest => SessionOrder::Oldest,
            SortArg::Path => SessionOrder::Path,
        },
        mode: if args.count {
            Mode::Count
        } else if args.files_with_matches {
            Mode::FilesWithMatches
        } else {
            Mode::Hits
        },
        limit: args.limit,
    })
}
