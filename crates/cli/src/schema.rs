//! `pi-retrospect schema`: the JSON Schema of a command's --json document.

use std::io::Write;

use clap::{Args, ValueEnum};

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
    /// The `show --json` document (items or tree); `$defs/JsonlRow` is one `--jsonl` row.
    Show,
    /// The `inspect --json` page.
    Inspect,
    /// The `entries --json` document; `$defs/Row` is one `--jsonl` row.
    Entries,
    /// The `handoff --json` document.
    Handoff,
    /// The `stats --json` report.
    Stats,
    /// The `search --json` document; `$defs` hold one `--jsonl` hit.
    Search,
    /// The `failures --json` document; `$defs` hold the `--jsonl` rows.
    Failures,
}

/// Runs `schema` with `args`, writing to `out`.
pub fn run(args: &SchemaArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let schema = match args.document {
        SchemaDocument::List => pi_retrospect_render::schema::LIST_SCHEMA,
        SchemaDocument::Show => pi_retrospect_render::schema::SHOW_SCHEMA,
        SchemaDocument::Inspect => pi_retrospect_render::schema::INSPECT_SCHEMA,
        SchemaDocument::Entries => pi_retrospect_render::schema::ENTRIES_SCHEMA,
        SchemaDocument::Handoff => pi_retrospect_render::handoff::HANDOFF_SCHEMA,
        SchemaDocument::Stats => pi_retrospect_render::stats::STATS_SCHEMA,
        SchemaDocument::Search => pi_retrospect_render::search::SEARCH_SCHEMA,
        SchemaDocument::Failures => pi_retrospect_render::failures::FAILURES_SCHEMA,
    };
    out.write_all(schema.as_bytes())?;
    Ok(())
}
