//! Which stores to read: flags first, then Pi's environment variables and settings, then its
//! defaults, in the order Pi itself resolves its session directory.

use std::path::{Path, PathBuf};

use pi_retrospect_core::Warning;
use pi_retrospect_read::{OpenError, Symlinks, open_regular};
use pi_retrospect_walk::{Layout, Store};

use crate::env::Environment;
use crate::error::AppError;

/// Where the user pointed the tool. A leading `~` in either directory is expanded (a shell
/// leaves `--sessions-root=~/x` alone) and a relative one is taken from the current directory.
#[derive(Debug, Clone, Default)]
pub struct StoreFlags {
    /// `--sessions-root DIR`.
    pub sessions_root: Option<PathBuf>,
    /// `--session-dir DIR`.
    pub session_dir: Option<PathBuf>,
    /// `--include-archive`.
    pub include_archive: bool,
}

/// Returns the stores to list and any warnings met while finding them (a settings file that
/// is not valid JSON, say).
///
/// Order: `--sessions-root` alone; otherwise a custom directory from `--session-dir`,
/// `$PI_CODING_AGENT_SESSION_DIR`, or `sessionDir` in the project's `.pi/settings.json` or
/// the agent directory's `settings.json` (the project's wins, as in Pi), listed in the flat
/// layout together with the default root `<agent-dir>/sessions`; otherwise the default root.
/// With `--include-archive`, `sessions-archive/` beside the sessions root is listed too, in
/// the default layout, as the last store. Optional stores that do not exist are not warned about.
pub fn resolve_stores(
    flags: &StoreFlags,
    env: &Environment,
) -> Result<(Vec<Store>, Vec<Warning>), AppError> {
    let mut warnings = Vec::new();
    let mut stores = Vec::new();
    let sessions_root = match &flags.sessions_root {
        Some(root) => {
            let root = expand_flag(root, env)?;
            stores.push(env.store(&root, Layout::Projects, false)?);
            root
        }
        None => {
            let agent_dir = env.agent_dir()?;
            let default_root = agent_dir.join("sessions");
            let custom = match &flags.session_dir {
                Some(dir) => Some(expand_flag(dir, env)?),
                None => match &env.session_dir {
                    Some(dir) => Some(env.expand_tilde(dir)?),
                    None => settings_session_dir(env, &agent_dir, &mut warnings)?,
                },
            };
            match custom {
                Some(custom) => {
                    // Both are walked even when the custom directory is the default root
                    // itself: the flat store takes the files directly inside it, the default
                    // store the `--<slug>--` directories, so nothing is listed twice.
                    stores.push(env.store(&custom, Layout::Flat, false)?);
                    stores.push(env.store(&default_root, Layout::Projects, true)?);
                }
                None => stores.push(env.store(&default_root, Layout::Projects, false)?),
            }
            default_root
        }
    };
    if flags.include_archive {
        let archive = env
            .cwd
            .join(&sessions_root)
            .with_file_name("sessions-archive");
        stores.push(env.store(&archive, Layout::Projects, true)?);
    }
    Ok((stores, warnings))
}

/// Returns a directory flag with a leading `~` expanded; a path that is not UTF-8 is kept.
fn expand_flag(dir: &Path, env: &Environment) -> Result<PathBuf, AppError> {
    match dir.to_str() {
        Some(text) if text.starts_with('~') => env.expand_tilde(text),
        _ => Ok(dir.to_owned()),
    }
}

/// Returns advice when an explicitly named store looks laid out differently from what its
/// flag expects: `--sessions-root` at a project directory (`--<cwd-slug>--`) or at a
/// directory of session files (Pi's custom session directory), or `--session-dir` at a
/// sessions root. Meant for a lookup that found nothing; it reads the named directory's
/// entries (never a file) and stops at the first telling one.
pub(crate) fn layout_hints(flags: &StoreFlags, stores: &[Store]) -> Vec<String> {
    let mut hints = Vec::new();
    if flags.sessions_root.is_some()
        && let Some(store) = stores.first()
    {
        let root = Path::new(&store.root);
        let is_project_dir = root
            .file_name()
            .and_then(|name| name.to_str())
            .is_some_and(|name| name.len() >= 4 && name.starts_with("--") && name.ends_with("--"));
        if is_project_dir {
            hints.push(format!(
                "{} looks like a project directory (--<cwd-slug>--); --sessions-root takes the \
                 directory that holds them: --sessions-root {}",
                store.root,
                root.parent().unwrap_or(root).display()
            ));
        } else if has_entry(root, |name, is_dir| !is_dir && name.ends_with(".jsonl")) {
            hints.push(format!(
                "{} holds session files directly, as Pi's custom session directory does; read \
                 it with --session-dir {}",
                store.root, store.root
            ));
        }
    }
    if flags.session_dir.is_some()
        && let Some(store) = stores.first()
        && has_entry(Path::new(&store.root), |name, is_dir| {
            is_dir && name.len() >= 4 && name.starts_with("--") && name.ends_with("--")
        })
    {
        hints.push(format!(
            "{} holds project directories (--<cwd-slug>--), as a sessions root does; read it \
             with --sessions-root {}",
            store.root, store.root
        ));
    }
    hints
}

/// Returns whether `dir` has an entry (not followed if a symlink) for which `is_telling`
/// holds, given its name and whether it is a directory.
fn has_entry(dir: &Path, is_telling: impl Fn(&str, bool) -> bool) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.flatten().any(|entry| {
        let is_dir = entry.file_type().is_ok_and(|kind| kind.is_dir());
        entry
            .file_name()
            .to_str()
            .is_some_and(|name| is_telling(name, is_dir))
    })
}

/// The largest settings file read; Pi's are a few kilobytes.
const MAX_SETTINGS_BYTES: u64 = 1024 * 1024;

/// Reads a settings file without ever blocking or reading without bound: it is opened
/// non-blocking (a FIFO planted in a cloned repository's `.pi/` must not hang every command),
/// must be a regular file (a symlink to one is fine, as for Pi), and may hold at most
/// [`MAX_SETTINGS_BYTES`].
fn read_settings_file(path: &Path) -> Result<Vec<u8>, SettingsError> {
    use std::io::Read;
    let (file, metadata) = open_regular(path, Symlinks::Follow)?;
    if metadata.len() > MAX_SETTINGS_BYTES {
        return Err(SettingsError::TooLarge);
    }
    let mut bytes = Vec::with_capacity(usize::try_from(metadata.len()).unwrap_or(0));
    file.take(MAX_SETTINGS_BYTES)
        .read_to_end(&mut bytes)
        .map_err(SettingsError::Read)?;
    Ok(bytes)
}

/// Why a settings file was not used.
#[derive(Debug, thiserror::Error)]
enum SettingsError {
    #[error("{}", .0.reason())]
    Open(#[from] OpenError),
    #[error("larger than {MAX_SETTINGS_BYTES} bytes")]
    TooLarge,
    #[error("{}", pi_retrospect_read::describe_io(.0))]
    Read(std::io::Error),
}

impl SettingsError {
    fn is_not_found(&self) -> bool {
        matches!(self, SettingsError::Open(OpenError::Io { error, .. }) if error.kind() == std::io::ErrorKind::NotFound)
    }
}

/// Returns `sessionDir` from Pi's settings files, the project's overriding the global one.
///
/// A project's settings come with the repository, so its `sessionDir` may not make the
/// store `/`, `$HOME` or a directory above `$HOME`: that would put every file there within
/// reach of a caller of the MCP server. Such a value is ignored with a warning naming the
/// settings file, and the global settings are read instead.
fn settings_session_dir(
    env: &Environment,
    agent_dir: &Path,
    warnings: &mut Vec<Warning>,
) -> Result<Option<PathBuf>, AppError> {
    let candidates = [
        env.cwd.join(".pi").join("settings.json"),
        env.cwd.join(agent_dir).join("settings.json"),
    ];
    for (idx, path) in candidates.into_iter().enumerate() {
        let is_project = idx == 0;
        let bytes = match read_settings_file(&path) {
            Ok(bytes) => bytes,
            Err(error) if error.is_not_found() => continue,
            Err(error) => {
                warnings.push(Warning::new(
                    path.display().to_string(),
                    format!("settings file not readable, its sessionDir is ignored: {error}"),
                ));
                continue;
            }
        };
        let value: serde_json::Value = match serde_json::from_slice(&bytes) {
            Ok(value) => value,
            Err(error) => {
                warnings.push(Warning::new(
                    path.display().to_string(),
                    format!("settings file is not valid JSON, its sessionDir is ignored: {error}"),
                ));
                continue;
            }
        };
        match value.get("sessionDir") {
            None | Some(serde_json::Value::Null) => {}
            Some(serde_json::Value::String(dir)) if dir.is_empty() => {}
            Some(serde_json::Value::String(dir)) => {
                let dir = env.expand_tilde(dir)?;
                if is_project && is_too_wide(&env.cwd.join(&dir), env) {
                    warnings.push(Warning::new(
                        path.display().to_string(),
                        format!(
                            "project settings sessionDir {} is /, $HOME or above $HOME; \
                             ignored",
                            dir.display()
                        ),
                    ));
                    continue;
                }
                return Ok(Some(dir));
            }
            Some(_) => warnings.push(Warning::new(
                path.display().to_string(),
                "settings sessionDir is not a string; ignored",
            )),
        }
    }
    Ok(None)
}

/// Returns whether `dir` (absolute) is the file system root, `$HOME` or an ancestor of
/// `$HOME`, compared with symlinks resolved where the directories exist.
fn is_too_wide(dir: &Path, env: &Environment) -> bool {
    let dir = normalized(dir);
    if dir.parent().is_none() {
        return true;
    }
    let Some(home) = &env.home else {
        return false;
    };
    let home = normalized(home);
    home.starts_with(&dir)
}

/// Returns `path` with symlinks resolved when it exists, else normalised lexically.
fn normalized(path: &Path) -> PathBuf {
    if let Ok(real) = std::fs::canonicalize(path) {
        return real;
    }
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::ParentDir => {
                out.pop();
            }
            std::path::Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(dir: &Path) -> Environment {
        Environment {
            cwd: dir.join("work"),
            home: Some(dir.join("home")),
            ..Environment::default()
        }
    }

    fn roots(flags: &StoreFlags, env: &Environment) -> (Vec<String>, Vec<String>) {
        let (stores, warnings) = resolve_stores(flags, env).expect("resolves");
        let base = env
            .home
            .as_ref()
            .and_then(|home| home.parent())
            .expect("base");
        let base = base.display().to_string();
        (
            stores
                .iter()
                .map(|store| {
                    format!(
                        "{:?}{} {}",
                        store.layout,
                        if store.missing_ok { "?" } else { "" },
                        store.root.replace(&base, "")
                    )
                })
                .collect(),
            warnings
                .iter()
                .map(|warning| warning.reason.clone())
                .collect(),
        )
    }

    #[test]
    fn resolution_order() {
        let dir = tempfile::tempdir().expect("temp dir");
        std::fs::create_dir_all(dir.path().join("work/.pi")).expect("mkdir");
        let mut env = env(dir.path());
        let flags = StoreFlags::default();
        assert_eq!(roots(&flags, &env).0, ["Projects /home/.pi/agent/sessions"]);

        env.agent_dir = Some("~/agent".into());
        assert_eq!(roots(&flags, &env).0, ["Projects /home/agent/sessions"]);

        let agent = dir.path().join("home/agent");
        std::fs::create_dir_all(&agent).expect("mkdir");
        std::fs::write(
            agent.join("settings.json"),
            r#"{"sessionDir":"~/from-settings"}"#,
        )
        .expect("write");
        assert_eq!(
            roots(&flags, &env).0,
            ["Flat /home/from-settings", "Projects? /home/agent/sessions"]
        );
        std::fs::write(
            dir.path().join("work/.pi/settings.json"),
            r#"{"sessionDir":"rel"}"#,
        )
        .expect("write");
        assert_eq!(
            roots(&flags, &env).0,
            ["Flat /work/rel", "Projects? /home/agent/sessions"]
        );

        env.session_dir = Some("~/from-env".into());
        assert_eq!(
            roots(&flags, &env).0,
            ["Flat /home/from-env", "Projects? /home/agent/sessions"]
        );

        // A custom directory that is the default root itself: both layouts over it.
        let same = StoreFlags {
            session_dir: Some(dir.path().join("home/agent/sessions")),
            ..StoreFlags::default()
        };
        assert_eq!(
            roots(&same, &env).0,
            [
                "Flat /home/agent/sessions",
                "Projects? /home/agent/sessions"
            ]
        );

        let with_flag = StoreFlags {
            session_dir: Some("/abs/dir".into()),
            ..StoreFlags::default()
        };
        assert_eq!(
            roots(&with_flag, &env).0,
            ["Flat /abs/dir", "Projects? /home/agent/sessions"]
        );

        let root_flag = StoreFlags {
            sessions_root: Some("store/sessions".into()),
            include_archive: true,
            ..StoreFlags::default()
        };
        assert_eq!(
            roots(&root_flag, &env).0,
            [
                "Projects /work/store/sessions",
                "Projects? /work/store/sessions-archive"
            ]
        );
    }

    /// A project's `sessionDir` may not open `/`, `$HOME` or above;
    /// the global settings' may (they are the user's own).
    #[test]
    fn a_project_session_dir_may_not_be_home_or_above() {
        let dir = tempfile::tempdir().expect("temp dir");
        let dir = std::fs::canonicalize(dir.path()).expect("canonical");
        std::fs::create_dir_all(dir.join("work/.pi")).expect("mkdir");
        std::fs::create_dir_all(dir.join("home/.pi/agent")).expect("mkdir");
        let env = env(&dir);
        let flags = StoreFlags::default();
        let settings = dir.join("work/.pi/settings.json");
        let ignored = |value: &str| {
            std::fs::write(&settings, format!(r#"{{"sessionDir":{value}}}"#)).expect("write");
            let (stores, warnings) = roots(&flags, &env);
            assert_eq!(stores, ["Projects /home/.pi/agent/sessions"], "{value}");
            assert_eq!(warnings.len(), 1, "{value}");
            assert!(
                warnings[0].contains("is /, $HOME or above $HOME"),
                "{warnings:?}"
            );
        };
        ignored(r#""/""#);
        ignored(r#""~""#);
        ignored(r#""~/""#);
        ignored(r#""..""#);
        ignored(r#""../..""#);
        ignored(&format!("{:?}", dir.display().to_string()));
        ignored(&format!(
            "{:?}",
            dir.join("home/../home").display().to_string()
        ));
        let (stores, warnings) = resolve_stores(&flags, &env).expect("resolves");
        assert_eq!(
            warnings[0].path,
            settings.display().to_string(),
            "the warning names the settings file"
        );
        assert_eq!(stores.len(), 1);

        // Below $HOME is fine, and the global settings may name $HOME.
        std::fs::write(&settings, r#"{"sessionDir":"~/sessions"}"#).expect("write");
        assert_eq!(
            roots(&flags, &env),
            (
                vec![
                    "Flat /home/sessions".to_owned(),
                    "Projects? /home/.pi/agent/sessions".to_owned()
                ],
                vec![]
            )
        );
        std::fs::remove_file(&settings).expect("rm");
        std::fs::write(
            dir.join("home/.pi/agent/settings.json"),
            r#"{"sessionDir":"~"}"#,
        )
        .expect("write");
        assert_eq!(
            roots(&flags, &env).0,
            ["Flat /home", "Projects? /home/.pi/agent/sessions"]
        );
    }

    /// An explicit directory is `~`-expanded like every other path.
    #[test]
    fn flags_expand_tilde() {
        let dir = tempfile::tempdir().expect("temp dir");
        let env = env(dir.path());
        let check = |flags: StoreFlags, expected: &[&str]| {
            assert_eq!(roots(&flags, &env).0, expected, "{flags:?}");
        };
        check(
            StoreFlags {
                sessions_root: Some("~/x".into()),
                include_archive: true,
                ..StoreFlags::default()
            },
            &["Projects /home/x", "Projects? /home/sessions-archive"],
        );
        check(
            StoreFlags {
                session_dir: Some("~".into()),
                ..StoreFlags::default()
            },
            &["Flat /home", "Projects? /home/.pi/agent/sessions"],
        );
        check(
            StoreFlags {
                sessions_root: Some("./~x".into()),
                ..StoreFlags::default()
            },
            &["Projects /work/~x"],
        );
    }

    /// A sessions root that is a project directory or a flat directory, and a
    /// custom directory that is a sessions root, get a hint.
    #[test]
    fn layout_hints_name_the_right_flag() {
        let dir = tempfile::tempdir().expect("temp dir");
        let env = env(dir.path());
        let root = dir.path().join("work/sessions");
        std::fs::create_dir_all(root.join("--w--")).expect("mkdir");
        std::fs::write(root.join("--w--/a.jsonl"), "").expect("write");
        std::fs::create_dir_all(dir.path().join("work/flat")).expect("mkdir");
        std::fs::write(dir.path().join("work/flat/b.jsonl"), "").expect("write");
        let check = |flags: StoreFlags, expected: &[&str]| {
            let (stores, _) = resolve_stores(&flags, &env).expect("resolves");
            let base = dir.path().display().to_string();
            let hints: Vec<String> = layout_hints(&flags, &stores)
                .into_iter()
                .map(|hint| hint.replace(&base, ""))
                .collect();
            assert_eq!(hints, expected, "{flags:?}");
        };
        let root_flag = |path: &str| StoreFlags {
            sessions_root: Some(path.into()),
            ..StoreFlags::default()
        };
        check(
            root_flag("sessions/--w--"),
            &[
                "/work/sessions/--w-- looks like a project directory (--<cwd-slug>--); \
                 --sessions-root takes the directory that holds them: --sessions-root \
                 /work/sessions",
            ],
        );
        check(
            root_flag("flat"),
            &[
                "/work/flat holds session files directly, as Pi's custom session directory \
                 does; read it with --session-dir /work/flat",
            ],
        );
        check(root_flag("sessions"), &[]);
        check(root_flag("missing"), &[]);
        check(
            StoreFlags {
                session_dir: Some("sessions".into()),
                ..StoreFlags::default()
            },
            &[
                "/work/sessions holds project directories (--<cwd-slug>--), as a sessions root \
                 does; read it with --sessions-root /work/sessions",
            ],
        );
    }

    #[test]
    fn bad_settings_are_warnings() {
        let dir = tempfile::tempdir().expect("temp dir");
        let env = env(dir.path());
        let agent = dir.path().join("home/.pi/agent");
        std::fs::create_dir_all(&agent).expect("mkdir");
        std::fs::write(agent.join("settings.json"), "{ not json").expect("write");
        let (stores, warnings) = roots(&StoreFlags::default(), &env);
        assert_eq!(stores, ["Projects /home/.pi/agent/sessions"]);
        assert_eq!(warnings.len(), 1);
        assert!(
            warnings[0].starts_with("settings file is not valid JSON"),
            "{warnings:?}"
        );

        std::fs::write(agent.join("settings.json"), r#"{"sessionDir":7}"#).expect("write");
        let (_, warnings) = roots(&StoreFlags::default(), &env);
        assert_eq!(warnings, ["settings sessionDir is not a string; ignored"]);

        // A FIFO must not block, a device must not be read without bound: both are warnings.
        std::fs::remove_file(agent.join("settings.json")).expect("remove");
        let status = std::process::Command::new("mkfifo")
            .arg(agent.join("settings.json"))
            .status()
            .expect("mkfifo");
        assert!(status.success());
        let (stores, warnings) = roots(&StoreFlags::default(), &env);
        assert_eq!(stores, ["Projects /home/.pi/agent/sessions"]);
        assert_eq!(
            warnings,
            [
                "settings file not readable, its sessionDir is ignored: is a FIFO, not a regular file"
            ]
        );
        std::fs::remove_file(agent.join("settings.json")).expect("remove");
        std::os::unix::fs::symlink("/dev/zero", agent.join("settings.json")).expect("symlink");
        let (_, warnings) = roots(&StoreFlags::default(), &env);
        assert_eq!(
            warnings,
            [
                "settings file not readable, its sessionDir is ignored: is a device, not a regular file"
            ]
        );
        std::fs::remove_file(agent.join("settings.json")).expect("remove");
        std::fs::write(agent.join("settings.json"), vec![b' '; 2 * 1024 * 1024]).expect("write");
        let (_, warnings) = roots(&StoreFlags::default(), &env);
        assert_eq!(
            warnings,
            ["settings file not readable, its sessionDir is ignored: larger than 1048576 bytes"]
        );
    }
}
