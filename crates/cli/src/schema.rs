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
}

/// Runs `schema` with `args`, writing to `out`.
pub fn run(args: &SchemaArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let schema = match args.document {
        SchemaDocument::List => pi_retrospect_render::schema::LIST_SCHEMA,
    };
    out.write_all(schema.as_bytes())?;
    Ok(())
}
