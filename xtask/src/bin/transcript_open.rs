//! `transcript_open FILE`: the Rust side of the transcript benchmark in `cargo xtask bench`.
//!
//! It does exactly the work Pi does to open a session and build what goes to the model
//! (`SessionManager.open` + `getBranch` + `buildSessionContext`, see `benches/pi-open.mjs`):
//! `Transcript::open` (every entry's envelope, the tree and the leaf), the active branch and the
//! context. It prints one summary line on stderr (entries, active-branch length, context
//! messages, warnings), so none of the work can be optimised away, and nothing else.

use std::path::PathBuf;

use anyhow::Context as _;
use pi_retrospect_transcript::Transcript;

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args_os().skip(1);
    let path = PathBuf::from(args.next().context("usage: transcript_open FILE")?);
    if args.next().is_some() {
        anyhow::bail!("usage: transcript_open FILE");
    }
    let session =
        Transcript::open(&path).with_context(|| format!("cannot open {}", path.display()))?;
    let branch = session.active_branch();
    let context = session.context();
    eprintln!(
        "entries {} branch {} context {} warnings {}",
        session.entries().len(),
        branch.len(),
        context.messages.len(),
        session.warnings().len()
    );
    Ok(())
}
