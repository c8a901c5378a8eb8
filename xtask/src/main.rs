//! `cargo xtask`: project automation.
//!
//! - `cargo xtask fixtures` regenerates the committed synthetic stores under `fixtures/`.
//! - `cargo xtask fixtures --big N [--seed S] --out DIR` writes a large realistic store of
//!   `N` top-level sessions (never committed; put it under `target/`).
//! - `cargo xtask fixtures --big-session OUT [--seed S] [--bytes N]` writes one large session
//!   file.
//! - `cargo xtask bench [--runs N] [--sizes 1000,10000] [--wide N] [--seed S]
//!   [--list-bin PATH] [--only list|transcript|stats|search|failures]` measures `list --json` against the
//!   I/O floor, opening a 128 MiB session against Pi (`PI_NODE`, `ORACLE_CACHE`), and
//!   `stats --by day` and search counts against ripgrep (see `xtask::bench`).
//! - `cargo xtask man [--out DIR]` writes the manual pages (`pi-retrospect.1` and one per
//!   command, generated from the flags by clap_mangen) into DIR, by default `target/man`.
//! - `cargo xtask layering` checks each crate's normal dependencies against the layering table
//!   of ARCHITECTURE.md (see `xtask::layering`).
//! - `cargo xtask pi-package` puts the release binary, the skill and the tool list into
//!   `pi-package/` and packs it with `npm pack` (see `pi_package.rs`).
//! - `cargo xtask pi-e2e [--bin PATH]` registers the MCP server with the real Pi and calls
//!   every tool through Pi's MCP client from a codemode script, then installs the packed Pi
//!   package with `pi install` and calls every tool through it (needs Node 22 and Pi 1.6;
//!   see `pi_e2e.rs`).

use std::fs;
use std::io::{BufWriter, Write};
use std::path::PathBuf;

mod pi_e2e;
mod pi_package;

use anyhow::{Context, bail};
use xtask::bench::{self, BenchOptions, Section};

const USAGE: &str = "usage:
  cargo xtask fixtures
  cargo xtask fixtures --big N [--seed S] --out DIR
  cargo xtask fixtures --big-session OUT [--seed S] [--bytes N]
  cargo xtask bench [--runs N] [--sizes 1000,10000] [--wide N] [--seed S] [--list-bin PATH]
                    [--only list|transcript|stats|search|failures]
  cargo xtask man [--out DIR]
    (the transcript section compares with Pi when it finds Node 22 and Pi's SDK: env PI_NODE,
    ORACLE_CACHE, default /tmp/oracle-cache)
  cargo xtask layering
    (checks every crate's dependencies against ARCHITECTURE.md's layering table)
  cargo xtask pi-package
    (the Pi package with the host's release binary, packed into target/pi-package/ by npm pack)
  cargo xtask pi-e2e [--bin PATH]
    (the MCP server and the Pi package through the real Pi 1.6: same PI_NODE and ORACLE_CACHE)";

fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let workspace = workspace_root();
    match args.first().map(String::as_str) {
        Some("fixtures") if args.len() == 1 => {
            let dir = workspace.join("fixtures");
            xtask::fixtures::write_all(&dir)
                .with_context(|| format!("cannot write fixtures under {}", dir.display()))?;
            println!(
                "wrote {0}/sessions, {0}/beyond/sessions and {0}/agent",
                dir.display()
            );
            Ok(())
        }
        Some("fixtures") => generated_fixtures(&Flags::parse(&args[1..])?),
        Some("bench") => {
            let flags = Flags::parse(&args[1..])?;
            let mut options = BenchOptions {
                pi_node: std::env::var_os("PI_NODE").map(PathBuf::from),
                oracle_cache: std::env::var_os("ORACLE_CACHE").map(PathBuf::from),
                ..BenchOptions::default()
            };
            for (name, value) in &flags.0 {
                match name.as_str() {
                    "--runs" => options.n_runs = number(name, value)? as usize,
                    "--wide" => options.n_wide_runs = number(name, value)?,
                    "--seed" => options.seed = number(name, value)?,
                    "--list-bin" => options.list_binary = Some(PathBuf::from(value)),
                    "--only" => {
                        let section = Section::from_name(value).with_context(|| {
                            format!("--only needs list, transcript, stats, search or failures, not {value:?}")
                        })?;
                        options.sections = vec![section];
                    }
                    "--sizes" => {
                        options.sizes = value
                            .split(',')
                            .map(|size| number(name, size))
                            .collect::<anyhow::Result<_>>()?;
                    }
                    _ => bail!("unknown flag {name}\n{USAGE}"),
                }
            }
            bench::run(&workspace, &options)
        }
        Some("man") => {
            let flags = Flags::parse(&args[1..])?;
            flags.allow(&["--out"])?;
            let out = flags
                .get("--out")
                .map_or_else(|| workspace.join("target/man"), PathBuf::from);
            man(&workspace, &out)
        }
        Some("layering") if args.len() == 1 => xtask::layering::run(&workspace),
        Some("pi-package") if args.len() == 1 => pi_package::run(&workspace),
        Some("pi-e2e") => pi_e2e::run(&workspace, &args[1..]),
        _ => bail!("{USAGE}"),
    }
}

/// `man`: builds the release binary and has it write its manual pages into `out`.
fn man(workspace: &std::path::Path, out: &std::path::Path) -> anyhow::Result<()> {
    let built = bench::build(workspace, &[("cli", "pi-retrospect")])?;
    let binary = built
        .get("pi-retrospect")
        .context("cargo did not report the pi-retrospect binary")?;
    let out = std::env::current_dir()?.join(out);
    let status = std::process::Command::new(binary)
        .arg("man")
        .arg(&out)
        .status()
        .with_context(|| format!("cannot run {}", binary.display()))?;
    if !status.success() {
        bail!("{} man failed", binary.display());
    }
    println!(
        "wrote the manual pages into {} (read one with: man {}/pi-retrospect-list.1)",
        out.display(),
        out.display()
    );
    Ok(())
}

/// `fixtures --big ...` and `fixtures --big-session ...`.
fn generated_fixtures(flags: &Flags) -> anyhow::Result<()> {
    let seed = flags.number("--seed")?.unwrap_or(1);
    if let Some(n_sessions) = flags.number("--big")? {
        flags.allow(&["--big", "--seed", "--out"])?;
        let out = PathBuf::from(flags.get("--out").context("--big needs --out DIR")?);
        let stats = xtask::big_store::write_big_store(&out, n_sessions, seed)
            .with_context(|| format!("cannot write the store under {}", out.display()))?;
        println!(
            "wrote {} sessions and {} runs in {} projects ({} MB) under {}",
            stats.n_sessions,
            stats.n_runs,
            stats.n_projects,
            stats.n_bytes / 1_000_000,
            out.display()
        );
        return Ok(());
    }
    if let Some(out) = flags.get("--big-session") {
        flags.allow(&["--big-session", "--seed", "--bytes"])?;
        let n_bytes = flags.number("--bytes")?.unwrap_or(64 * 1024 * 1024);
        let out = PathBuf::from(out);
        let file =
            fs::File::create(&out).with_context(|| format!("cannot create {}", out.display()))?;
        let mut writer = BufWriter::new(file);
        xtask::gen_session::write_big_session(&mut writer, seed, n_bytes)
            .and_then(|()| writer.flush())
            .with_context(|| format!("cannot write {}", out.display()))?;
        println!("wrote {}", out.display());
        return Ok(());
    }
    bail!("{USAGE}")
}

/// `--name value` pairs, in order.
struct Flags(Vec<(String, String)>);

impl Flags {
    fn parse(args: &[String]) -> anyhow::Result<Flags> {
        let mut pairs = Vec::new();
        let mut args = args.iter();
        while let Some(name) = args.next() {
            if !name.starts_with("--") {
                bail!("unexpected argument {name}\n{USAGE}");
            }
            let value = args
                .next()
                .with_context(|| format!("{name} needs a value\n{USAGE}"))?;
            pairs.push((name.clone(), value.clone()));
        }
        Ok(Flags(pairs))
    }

    fn get(&self, name: &str) -> Option<&str> {
        self.0
            .iter()
            .rev()
            .find(|(flag, _)| flag == name)
            .map(|(_, value)| value.as_str())
    }

    fn number(&self, name: &str) -> anyhow::Result<Option<u64>> {
        self.get(name).map(|value| number(name, value)).transpose()
    }

    fn allow(&self, names: &[&str]) -> anyhow::Result<()> {
        match self
            .0
            .iter()
            .find(|(flag, _)| !names.contains(&flag.as_str()))
        {
            Some((flag, _)) => bail!("unknown flag {flag}\n{USAGE}"),
            None => Ok(()),
        }
    }
}

fn number(name: &str, value: &str) -> anyhow::Result<u64> {
    value
        .replace('_', "")
        .parse()
        .with_context(|| format!("{name} needs a number, not {value:?}"))
}

fn workspace_root() -> PathBuf {
    let manifest_dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    manifest_dir
        .parent()
        .map(PathBuf::from)
        .unwrap_or(manifest_dir)
}
