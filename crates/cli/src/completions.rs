//! `pi-retrospect completions SHELL`: a completion script for the shell, generated from the
//! flags themselves; and the hidden `man DIR`, which writes the manual pages that
//! `cargo xtask man` installs in `target/man/`.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, CommandFactory};
use clap_complete::Shell;

/// Flags of `completions`.
#[derive(Debug, Args)]
pub struct CompletionsArgs {
    /// The shell to complete for.
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Flags of the hidden `man`.
#[derive(Debug, Args)]
pub struct ManArgs {
    /// The directory to write `pi-retrospect.1` and one page per command into.
    #[arg(value_name = "DIR")]
    pub out_dir: PathBuf,
}

pub const COMPLETIONS_HELP: &str = "\
Examples:
  mkdir -p ~/.local/share/bash-completion/completions
  pi-retrospect completions bash > ~/.local/share/bash-completion/completions/pi-retrospect
  mkdir -p ~/.zfunc
  pi-retrospect completions zsh > ~/.zfunc/_pi-retrospect
  mkdir -p ~/.config/fish/completions
  pi-retrospect completions fish > ~/.config/fish/completions/pi-retrospect.fish";

/// Writes the completion script for `args.shell` to `out`.
pub fn run(args: &CompletionsArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut command = crate::Opts::command();
    // clap_complete writes through a `Write` it owns; collect, then write once, so a write
    // error reaches the caller.
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "pi-retrospect", &mut script);
    out.write_all(&script)?;
    Ok(())
}

/// Writes the manual pages into `args.out_dir`, creating it.
pub fn run_man(args: &ManArgs) -> anyhow::Result<()> {
    std::fs::create_dir_all(&args.out_dir)
        .with_context(|| format!("creating {}", args.out_dir.display()))?;
    clap_mangen::generate_to(crate::Opts::command(), &args.out_dir)
        .with_context(|| format!("writing manual pages into {}", args.out_dir.display()))?;
    Ok(())
}
