//! `cargo xtask`: project automation. `cargo xtask fixtures` regenerates the committed
//! synthetic stores under `fixtures/`.

use std::path::PathBuf;

use anyhow::{Context, bail};

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let workspace = workspace_root();
    match args.first().map(String::as_str) {
        Some("fixtures") if args.len() == 1 => {
            let dir = workspace.join("fixtures");
            xtask::fixtures::write_all(&dir)
                .with_context(|| format!("cannot write fixtures under {}", dir.display()))?;
            println!(
                "wrote {}/sessions and {}/beyond/sessions",
                dir.display(),
                dir.display()
            );
            Ok(())
        }
        _ => bail!("usage: cargo xtask fixtures"),
    }
}

fn workspace_root() -> PathBuf {
    let manifest_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map(PathBuf::from)
        .unwrap_or(manifest_dir)
}
