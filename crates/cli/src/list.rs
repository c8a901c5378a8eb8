//! `pi-retrospect list`: the sessions index.

use std::io::Write;

use pi_retrospect_walk::{Layout, WalkOptions};

use crate::opts::ListArgs;
use crate::store::Env;

/// Runs `list` with `args`, writing to `out`.
pub fn run(args: &ListArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let env = Env::from_process()?;
    let root = match &args.sessions_root {
        Some(root) => root.clone(),
        None => env.agent_dir()?.join("sessions"),
    };
    let store = env.store(&root, Layout::Projects)?;
    let listing = pi_retrospect_walk::list(
        &store,
        &WalkOptions {
            threads: args.threads,
        },
    );
    if args.json {
        pi_retrospect_render::write_json(out, &listing)?;
    } else {
        pi_retrospect_render::write_text(out, &listing)?;
    }
    Ok(())
}
