//! `pi-retrospect search`: flags -> `app::search` -> `render::search`, streamed as found.

use std::io::{IsTerminal, Write};
use std::ops::ControlFlow;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use pi_retrospect_app::{
    Environment, ListRequest, Progress, SearchEvent as Event, SearchMode as Mode, SearchRequest,
    SearchTerms,
};
use pi_retrospect_core::order::{SortKey, SortOrder};
use pi_retrospect_core::search::SearchWarning;
use pi_retrospect_render::search::{self as search_render, JsonStream, TextWriter};

use crate::args::{CaseArgs, ColorChoice, SessionFilterArgs, StoreArgs};
use crate::progress::ProgressDisplay;

/// The long help of `search`.
pub const SEARCH_HELP: &str = "\
Searches every session of the store (subagent runs included) without an index, exactly: the \
pattern is matched against the text of each entry, never against JSON field names, ids, \
image data or signatures, and a match across a JSON escape (a quote, a newline) is found.

Searched by default: user and assistant text, API errors of failed responses, `!` commands \
and their output, compaction and branch summaries, custom messages, session names and \
labels. Opt in with --thinking, --tool-args (string values, never keys), --tool-results, \
--system; narrow with --role, --tool, --model. `inspect ... search` and `entries --grep` look \
in the same texts with the same flags (the README's table \"Searchable text\").

The pattern is literal unless -E; smart case (case is ignored unless the pattern has an \
upper-case letter) unless -s (--case-sensitive) or -i (--ignore-case); -w matches whole words. Sessions come \
newest first (--sort), hits in file order, each session under its path and a line with its \
title and cwd; on a terminal every line is cut to its width, the match kept in view. Exit status: 0 when something matched, 1 when \
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

    #[command(flatten)]
    pub case: CaseArgs,

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

    /// Only messages with this role (repeatable); entries Pi turns into messages have its
    /// role (`custom_message`: custom, `branch_summary`: branchSummary, `compaction`:
    /// compactionSummary).
    #[arg(long, value_name = "ROLE", value_parser = clap::builder::PossibleValuesParser::new(crate::entries::ROLES), help_heading = "Scope")]
    pub role: Vec<String>,

    /// Only calls and results of this tool (repeatable).
    #[arg(long, value_name = "NAME", value_parser = clap::builder::NonEmptyStringValueParser::new(), help_heading = "Scope")]
    pub tool: Vec<String>,

    /// Only assistant messages of this model (`model` or `provider/model`, repeatable).
    #[arg(long, value_name = "MODEL", value_parser = clap::builder::NonEmptyStringValueParser::new(), help_heading = "Scope")]
    pub model: Vec<String>,

    /// Only this session (a path, an id or unique prefix, or `latest`; a word naming a file in
    /// the current directory is that file).
    #[arg(long, value_name = "SESSION", help_heading = "Filters")]
    pub session: Option<String>,

    #[command(flatten)]
    pub filters: SessionFilterArgs,

    /// Hits in entries written at or after WHEN (each entry's own time, as `entries` and
    /// `stats` filter).
    #[arg(long, value_name = "WHEN", help_heading = "Filters")]
    pub since: Option<String>,

    /// Hits in entries written at or before WHEN.
    #[arg(long, value_name = "WHEN", help_heading = "Filters")]
    pub until: Option<String>,

    /// Characters of context on each side of a match.
    #[arg(long, short = 'C', value_name = "N", default_value_t = pi_retrospect_app::DEFAULT_CONTEXT_CHARS, help_heading = "Output")]
    pub context: usize,

    /// Stop after N hits.
    #[arg(long, short = 'n', value_name = "N", allow_negative_numbers = true, value_parser = crate::args::positive_limit, help_heading = "Output")]
    pub limit: Option<u64>,

    /// At most NUM hits per session file, its first (as ripgrep's -m); with --count, counts
    /// stop at NUM.
    #[arg(long, short = 'm', value_name = "NUM", allow_negative_numbers = true, value_parser = crate::args::positive_max_count, help_heading = "Output")]
    pub max_count: Option<u64>,

    /// Order of sessions.
    #[arg(long, value_enum, default_value_t = SortArg::Newest, help_heading = "Output")]
    pub sort: SortArg,

    /// Print the number of hits per session file (`PATH:N`; with --json a `counts` array,
    /// with --jsonl one `count` row per file).
    #[arg(long, short = 'c', group = "search_mode", help_heading = "Output")]
    pub count: bool,

    /// Print only the paths of session files with hits, one per line (with --json a `files`
    /// array, with --jsonl one `file` row per path). Paths are written as they are, unless
    /// stdout is a terminal, where control characters are escaped.
    #[arg(long, short = 'l', group = "search_mode", help_heading = "Output")]
    pub files_with_matches: bool,

    /// One JSON document (`pi-retrospect schema search`), streamed as found.
    #[arg(long, group = "search_format", help_heading = "Output")]
    pub json: bool,

    /// One hit (or count, or path) per line as JSON, streamed as found.
    #[arg(long, group = "search_format", help_heading = "Output")]
    pub jsonl: bool,

    /// When to colour.
    #[arg(long, value_enum, default_value_t = ColorChoice::Auto, value_name = "WHEN", help_heading = "Output")]
    pub color: ColorChoice,

    /// Worker threads (at most 256; default: one per core).
    #[arg(long, value_name = "N", help_heading = "Output")]
    pub threads: Option<usize>,
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
    let paint = pi_retrospect_render::Paint {
        is_on: !args.json && !args.jsonl && crate::term::use_color(args.color).is_on,
    };
    // ripgrep writes paths as they are unless they go to a terminal; so do `--count` and
    // `-l` (every path is valid UTF-8; a control character in one is escaped on a terminal).
    let is_raw_paths = !std::io::stdout().is_terminal();
    let mut sink = std::io::sink();
    let (mut json, text_out): (Option<JsonStream<'_>>, &mut dyn Write) = if args.json {
        let stream = match request.mode {
            Mode::Hits => JsonStream::hits(out),
            Mode::Count => JsonStream::counts(out),
            Mode::FilesWithMatches => JsonStream::files(out),
        };
        (Some(stream), &mut sink)
    } else {
        (None, out)
    };
    let mut text = TextWriter::new(text_out, paint)
        .with_time_zone(env.time_zone.clone())
        .with_width(crate::term::fit_width());
    let mut write_error: Option<std::io::Error> = None;
    let mut note = |result: std::io::Result<()>| match result {
        Ok(()) => ControlFlow::Continue(()),
        Err(error) => {
            write_error = Some(error);
            ControlFlow::Break(())
        }
    };
    // Text and --json keep warnings for the end (stderr after the hits, or the document's
    // member); --jsonl streams them as rows.
    let mut warnings: Vec<SearchWarning> = Vec::new();
    let progress = Arc::new(Progress::default());
    let display = crate::progress::is_wanted().then(|| ProgressDisplay::start(progress.clone()));
    // Results written to the terminal that shows the progress line erase it first and reach
    // the terminal before it is drawn again.
    let is_stdout_shared = display.is_some() && std::io::stdout().is_terminal();
    let totals = pi_retrospect_app::search_with_progress(&request, env, &progress, &mut |event| {
        let is_written = match event {
            Event::Hit(_) => true,
            Event::Warning(_) => args.jsonl,
            Event::FileDone(count) => count.n_hits > 0 && (args.count || args.files_with_matches),
        };
        let held = display
            .as_ref()
            .filter(|_| is_written && is_stdout_shared)
            .map(ProgressDisplay::hold);
        if let Some(json) = &mut json {
            let flow = match event {
                Event::Hit(hit) => note(json.hit(hit)),
                Event::Warning(warning) => {
                    warnings.push(warning.clone());
                    ControlFlow::Continue(())
                }
                Event::FileDone(count) if count.n_hits > 0 && args.count => note(json.count(count)),
                Event::FileDone(count) if count.n_hits > 0 && args.files_with_matches => {
                    note(json.file(&count.path))
                }
                Event::FileDone(_) => ControlFlow::Continue(()),
            };
            if held.is_some() && flow.is_continue() {
                return note(json.flush());
            }
            return flow;
        }
        let flow = match event {
            Event::Hit(hit) if args.jsonl => note(search_render::write_hit_jsonl(text.out(), hit)),
            Event::Hit(hit) => {
                if text.is_new_file(&hit.path) {
                    text.set_heading(pi_retrospect_app::session_heading(&hit.path));
                }
                note(text.write_hit(hit))
            }
            Event::Warning(warning) if args.jsonl => {
                note(search_render::write_warning_jsonl(text.out(), warning))
            }
            Event::Warning(warning) => {
                warnings.push(warning.clone());
                ControlFlow::Continue(())
            }
            Event::FileDone(count) if count.n_hits > 0 && args.count => note(if args.jsonl {
                search_render::write_count_jsonl(text.out(), count)
            } else {
                search_render::write_count(text.out(), count, is_raw_paths)
            }),
            Event::FileDone(count) if count.n_hits > 0 && args.files_with_matches => {
                note(if args.jsonl {
                    search_render::write_file_jsonl(text.out(), &count.path)
                } else {
                    search_render::write_path(text.out(), &count.path, is_raw_paths)
                })
            }
            Event::FileDone(_) => ControlFlow::Continue(()),
        };
        if held.is_some() && flow.is_continue() {
            return note(text.out().flush());
        }
        flow
    });
    // The line is erased before anything else is written: the document's end, the warnings
    // or an error.
    drop(display);
    let totals = totals?;
    if let Some(error) = write_error {
        return Err(error.into());
    }
    if let Some(json) = json {
        json.finish(&warnings, &totals)?;
    } else if !warnings.is_empty() {
        text.out().flush()?;
        if !crate::output::is_quiet() {
            let stderr = std::io::stderr();
            let mut stderr = stderr.lock();
            for warning in &warnings {
                crate::output::write_warning_line(&mut stderr, &warning.path, &warning.message);
            }
        }
    }
    // Nothing found: a person at a terminal is told which texts were not looked in (the
    // first thing to widen); a script's stderr stays clean.
    let not_searched = request.terms.not_searched();
    if totals.n_hits == 0
        && !not_searched.is_empty()
        && !crate::output::is_quiet()
        && std::io::stderr().is_terminal()
    {
        let line = pi_retrospect_render::inspect::not_searched_line(
            &not_searched,
            pi_retrospect_render::inspect::Spelling::Flags,
        );
        eprintln!("pi-retrospect: no hits; {line}");
    }
    Ok(SearchOutcome {
        is_match: totals.n_hits > 0,
    })
}

fn request(args: &SearchArgs, env: &Environment) -> anyhow::Result<SearchRequest> {
    let terms = SearchTerms {
        is_regex: args.regex,
        case: args.case.mode(),
        is_whole_word: args.word,
        thinking: args.thinking,
        tool_args: args.tool_args,
        tool_results: args.tool_results,
        system: args.system,
        roles: args.role.clone(),
        tools: args.tool.clone(),
        models: args.model.clone(),
        since: args.since.clone(),
        until: args.until.clone(),
        context_chars: args.context,
        ..SearchTerms::new(args.pattern.clone())
    };
    let session = args
        .session
        .as_deref()
        .map(|session| args.store.target(session, env))
        .transpose()?;
    Ok(SearchRequest {
        sessions: args.filters.apply(ListRequest {
            stores: args.store.flags(),
            // Only a session active in the range can hold an entry written in it.
            active_since: args.since.clone(),
            active_until: args.until.clone(),
            threads: crate::args::threads(args.threads)?,
            ..ListRequest::default()
        }),
        session,
        terms,
        order: match args.sort {
            SortArg::Newest => SortOrder::NEWEST_FIRST,
            SortArg::Oldest => SortOrder::OLDEST_FIRST,
            SortArg::Path => SortOrder::by(SortKey::Path),
        },
        mode: if args.count {
            Mode::Count
        } else if args.files_with_matches {
            Mode::FilesWithMatches
        } else {
            Mode::Hits
        },
        limit: args.limit,
        max_per_file: args.max_count,
        resume_at: None,
    })
}
