//! The `pi-retrospect` binary: parses flags, resolves them into a configuration, runs one
//! command, and maps the outcome to an exit code.
//!
//! Exit codes: 0 on success (bad session files are warnings, not failures; a closed pipe such
//! as `| head` also exits 0), 1 when the tool itself fails (for example stdout cannot be
//! written), 2 on a usage error.

mod entries;
mod inspect;
mod list;
mod opts;
mod session_arg;
mod show;
mod store;
mod term;
mod when;

use std::io::{self, Write};
use std::process::ExitCode;

use clap::Parser;

use crate::opts::{Command, Opts};

fn main() -> ExitCode {
    let opts = match Opts::try_parse() {
        Ok(opts) => opts,
        Err(error) => {
            // clap prints help and version to stdout (exit 0) and usage errors to stderr (exit 2).
            let code = error.exit_code();
            if let Err(print_error) = error.print()
                && print_error.kind() != io::ErrorKind::BrokenPipe
            {
                let _ = writeln!(io::stderr(), "pi-retrospect: cannot write: {print_error}");
                return ExitCode::from(1);
            }
            return ExitCode::from(u8::try_from(code).unwrap_or(2));
        }
    };
    let stdout = io::stdout();
    let mut out = io::BufWriter::new(stdout.lock());
    let result = run(opts, &mut out).and_then(|()| out.flush().map_err(anyhow::Error::from));
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) if is_broken_pipe(&error) => ExitCode::SUCCESS,
        Err(error) => {
            let _ = writeln!(io::stderr(), "pi-retrospect: {error:#}");
            match error.downcast_ref::<UsageError>() {
                Some(_) => ExitCode::from(2),
                None => ExitCode::from(1),
            }
        }
    }
}

fn run(opts: Opts, out: &mut dyn Write) -> anyhow::Result<()> {
    match opts.command {
        Command::List(args) => list::run(&args, out),
        Command::Show(args) => show::run(&args, out),
        Command::Inspect(args) => inspect::run(&args, out),
        Command::Entries(args) => entries::run(&args, out),
        Command::Schema(args) => match args.document {
            opts::SchemaDocument::List => {
                out.write_all(pi_retrospect_render::schema::LIST_SCHEMA.as_bytes())?;
                Ok(())
            }
        },
    }
}

/// An error in how the tool was called (a bad flag value); exits 2 like clap's own.
#[derive(Debug)]
pub struct UsageError(pub String);

impl std::fmt::Display for UsageError {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(&self.0)
    }
}

impl std::error::Error for UsageError {}

/// Returns whether `error` is, somewhere in its chain, a write to a closed pipe (`| head`),
/// whether it surfaced as an `io::Error` or inside a `serde_json::Error`.
fn is_broken_pipe(error: &anyhow::Error) -> bool {
    error.chain().any(|cause| {
        let kind = match cause.downcast_ref::<io::Error>() {
            Some(io_error) => Some(io_error.kind()),
            None => cause
                .downcast_ref::<serde_json::Error>()
                .and_then(serde_json::Error::io_error_kind),
        };
        kind == Some(io::ErrorKind::BrokenPipe)
    })
}
