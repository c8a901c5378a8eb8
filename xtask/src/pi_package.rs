//! `cargo xtask pi-package`: the Pi package with the binary in it, packed by `npm pack`.
//!
//! It builds the release binary for the host, and puts into `pi-package/` (none of it
//! committed) what the package carries beside its extension:
//! - `bin/<platform>/pi-retrospect`, `<platform>` named as Node names it (`linux-x64`,
//!   `darwin-arm64`), where the extension looks after `PI_RETROSPECT_BIN` and `PATH`; stripped
//!   of its symbols (`strip`), which makes it several times smaller;
//! - `tools.json`, the binary's own `tools/list` answer, server instructions and version,
//!   which the extension registers its tools from when Pi loads it, so no binary runs before
//!   the first call.
//!
//! The package's skill (`pi-package/skills/`, written for the package's tool names) and its
//! README are committed.
//!
//! Then `npm pack` writes `target/pi-package/pi-retrospect-<version>.tgz`. Installing it needs
//! no Rust and downloads nothing: the package has no dependencies.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{Context, bail, ensure};
use serde_json::{Value, json};

/// The package's source directory, relative to the workspace.
pub const SOURCE_DIR: &str = "pi-package";

/// The files of the package that are committed (the rest is written by [`assemble`]).
const SOURCE_FILES: &[&str] = &["package.json", "README.md", "extension", "skills"];

/// Runs `cargo xtask pi-package`.
pub fn run(workspace: &Path) -> anyhow::Result<()> {
    let built = xtask::bench::build(workspace, &[("cli", "pi-retrospect")])?;
    let binary = built
        .get("pi-retrospect")
        .context("cargo did not report the pi-retrospect binary")?;
    let package = workspace.join(SOURCE_DIR);
    assemble(workspace, binary, &package)?;
    let tarball = npm_pack(&package, &workspace.join("target/pi-package"))?;
    println!(
        "pi-package: {} holds the binary for {} and the skill; packed {}",
        package.display(),
        platform(),
        tarball.display()
    );
    println!(
        "install it with: pi install \"npm:pi-retrospect@file:{}\"",
        tarball.display()
    );
    Ok(())
}

/// Node's name for the host platform (`process.platform`-`process.arch`), which names the
/// package's `bin/` directory.
pub fn platform() -> String {
    let os = match std::env::consts::OS {
        "macos" => "darwin",
        "windows" => "win32",
        other => other,
    };
    let arch = match std::env::consts::ARCH {
        "x86_64" => "x64",
        "aarch64" => "arm64",
        "x86" => "ia32",
        other => other,
    };
    format!("{os}-{arch}")
}

/// Copies the committed package files from the workspace into `dir` (a staging copy, so a
/// check never rewrites `pi-package/`).
pub fn stage(workspace: &Path, dir: &Path) -> anyhow::Result<()> {
    let source = workspace.join(SOURCE_DIR);
    for name in SOURCE_FILES {
        let from = source.join(name);
        if from.exists() {
            copy_tree(&from, &dir.join(name))?;
        }
    }
    Ok(())
}

pub fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<()> {
    if from.is_dir() {
        std::fs::create_dir_all(to).with_context(|| format!("cannot create {}", to.display()))?;
        for entry in
            std::fs::read_dir(from).with_context(|| format!("cannot read {}", from.display()))?
        {
            let entry = entry?;
            copy_tree(&entry.path(), &to.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        if let Some(parent) = to.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::copy(from, to)
            .map(|_| ())
            .with_context(|| format!("cannot copy {} to {}", from.display(), to.display()))
    }
}

/// Puts the binary, the skill and the generated tool list into the package at `package`.
pub fn assemble(workspace: &Path, binary: &Path, package: &Path) -> anyhow::Result<()> {
    check_version(package)?;
    let bin_dir = package.join("bin");
    remove_dir(&bin_dir)?;
    let target_dir = bin_dir.join(platform());
    std::fs::create_dir_all(&target_dir)
        .with_context(|| format!("cannot create {}", target_dir.display()))?;
    let name = if cfg!(windows) {
        "pi-retrospect.exe"
    } else {
        "pi-retrospect"
    };
    let target = target_dir.join(name);
    std::fs::copy(binary, &target)
        .with_context(|| format!("cannot copy {} to {}", binary.display(), target.display()))?;
    make_executable(&target)?;
    strip(&target);
    ensure!(
        package.join("skills/pi-retrospect/SKILL.md").is_file(),
        "{} has no skills/pi-retrospect/SKILL.md (workspace {})",
        package.display(),
        workspace.display()
    );

    let (tools, instructions, version) = list_tools_with_version(&target)?;
    let document = json!({
        "generatedBy": "cargo xtask pi-package, from the packed binary's tools/list",
        "version": version,
        "instructions": instructions,
        "tools": tools,
    });
    let text = serde_json::to_string_pretty(&document)? + "\n";
    std::fs::write(package.join("tools.json"), text).context("cannot write tools.json")?;
    Ok(())
}

/// Strips the packed copy's symbols and debug information (the build's own binary is left
/// as it is). Without a `strip` on `PATH` the copy is packed as built, with a note.
fn strip(path: &Path) {
    if cfg!(windows) {
        return;
    }
    match Command::new("strip").arg(path).status() {
        Ok(status) if status.success() => {}
        Ok(status) => eprintln!(
            "pi-package: strip {} failed ({status}); packed unstripped",
            path.display()
        ),
        Err(error) => eprintln!(
            "pi-package: no strip ({error}); {} packed unstripped",
            path.display()
        ),
    }
}

/// The package's version must be the workspace's, so a tarball names the binary it carries.
fn check_version(package: &Path) -> anyhow::Result<()> {
    let path = package.join("package.json");
    let text = std::fs::read_to_string(&path)
        .with_context(|| format!("cannot read {}", path.display()))?;
    let manifest: Value =
        serde_json::from_str(&text).with_context(|| format!("{} is not JSON", path.display()))?;
    let version = manifest["version"].as_str().unwrap_or("");
    ensure!(
        version == env!("CARGO_PKG_VERSION"),
        "{} has version {version:?} but the workspace is {}: make them equal",
        path.display(),
        env!("CARGO_PKG_VERSION")
    );
    Ok(())
}

fn remove_dir(dir: &Path) -> anyhow::Result<()> {
    match std::fs::remove_dir_all(dir) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => {
            Err(error).with_context(|| format!("cannot remove {}", dir.display()))
        }
        _ => Ok(()),
    }
}

#[cfg(unix)]
fn make_executable(path: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755))
        .with_context(|| format!("cannot make {} executable", path.display()))
}

#[cfg(not(unix))]
fn make_executable(_path: &Path) -> anyhow::Result<()> {
    Ok(())
}

/// Asks `binary mcp` for its tools (following `nextCursor`) and its instructions, the way the
/// extension does.
pub fn list_tools(binary: &Path) -> anyhow::Result<(Vec<Value>, Value)> {
    list_tools_with_version(binary).map(|(tools, instructions, _)| (tools, instructions))
}

/// [`list_tools`] and the version the server names in its `serverInfo`.
pub fn list_tools_with_version(binary: &Path) -> anyhow::Result<(Vec<Value>, Value, Value)> {
    // An empty store: listing tools reads none, and nothing of the caller's is touched.
    let empty = std::env::temp_dir().join(format!("pi-retrospect-list-{}", std::process::id()));
    std::fs::create_dir_all(&empty)?;
    let result = talk(binary, &empty);
    let _ = std::fs::remove_dir_all(&empty);
    result
}

fn talk(binary: &Path, empty: &Path) -> anyhow::Result<(Vec<Value>, Value, Value)> {
    let mut child = Command::new(binary)
        .arg("mcp")
        .arg("--sessions-root")
        .arg(empty)
        .env_remove("PI_SESSION_FILE")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .with_context(|| format!("cannot run {} mcp", binary.display()))?;
    let mut stdin = child.stdin.take().context("the server's stdin")?;
    let mut lines = BufReader::new(child.stdout.take().context("the server's stdout")?).lines();
    let mut ask = |id: u64, method: &str, params: Value| -> anyhow::Result<Value> {
        let request = json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params });
        writeln!(stdin, "{request}").context("writing to the server")?;
        loop {
            let line = lines
                .next()
                .context("the server closed its output")?
                .context("reading the server's output")?;
            let message: Value = serde_json::from_str(&line)
                .with_context(|| format!("the server wrote a line that is not JSON: {line}"))?;
            if message["id"] == json!(id) {
                if let Some(error) = message.get("error") {
                    bail!("{method} failed: {error}");
                }
                return Ok(message["result"].clone());
            }
        }
    };
    let initialize = ask(
        1,
        "initialize",
        json!({ "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": { "name": "xtask", "version": "1" } }),
    )?;
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for id in 2.. {
        let params = match &cursor {
            Some(cursor) => json!({ "cursor": cursor }),
            None => json!({}),
        };
        let page = ask(id, "tools/list", params)?;
        tools.extend(page["tools"].as_array().cloned().unwrap_or_default());
        cursor = page["nextCursor"]
            .as_str()
            .filter(|cursor| !cursor.is_empty())
            .map(str::to_owned);
        if cursor.is_none() {
            break;
        }
    }
    drop(stdin);
    let status = child.wait().context("waiting for the server")?;
    ensure!(
        status.success(),
        "{} mcp exited with {status}",
        binary.display()
    );
    ensure!(!tools.is_empty(), "{} mcp lists no tools", binary.display());
    Ok((
        tools,
        initialize["instructions"].clone(),
        initialize["serverInfo"]["version"].clone(),
    ))
}

/// Runs `npm pack` in `package`, writing the tarball into `destination`; returns its path.
pub fn npm_pack(package: &Path, destination: &Path) -> anyhow::Result<PathBuf> {
    std::fs::create_dir_all(destination)
        .with_context(|| format!("cannot create {}", destination.display()))?;
    let destination = std::fs::canonicalize(destination)?;
    let output = Command::new("npm")
        .args(["pack", "--json", "--pack-destination"])
        .arg(&destination)
        .current_dir(package)
        .stderr(Stdio::inherit())
        .output()
        .context("cannot run npm pack (npm must be on PATH)")?;
    ensure!(
        output.status.success(),
        "npm pack failed ({})",
        output.status
    );
    let report: Value =
        serde_json::from_slice(&output.stdout).context("npm pack --json did not print JSON")?;
    let file = report[0]["filename"]
        .as_str()
        .context("npm pack --json named no file")?;
    Ok(destination.join(file))
}
