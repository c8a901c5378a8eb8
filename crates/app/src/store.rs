//! Which stores to read: flags first, then Pi's environment variables and settings, then its
//! defaults, in the order Pi itself resolves its session directory.

use std::path::{Path, PathBuf};

use pi_retrospect_core::Warning;
use pi_retrospect_header::{OpenError, Symlinks, open_regular};
use pi_retrospect_walk::{Layout, Store};

use crate::env::Environment;
use crate::error::AppError;

/// Where the user pointed the tool.
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
/// the default layout. Optional stores that do not exist are not warned about.
pub fn resolve_stores(
    flags: &StoreFlags,
    env: &Environment,
) -> Result<(Vec<Store>, Vec<Warning>), AppError> {
    let mut warnings = Vec::new();
    let mut stores = Vec::new();
    let sessions_root = match &flags.sessions_root {
        Some(root) => {
            stores.push(env.store(root, Layout::Projects, false)?);
            root.clone()
        }
        None => {
            let agent_dir = env.agent_dir()?;
            let default_root = agent_dir.join("sessions");
            let custom = match &flags.session_dir {
                Some(dir) => Some(dir.clone()),
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
    #[error("{}", pi_retrospect_header::describe_io(.0))]
    Read(std::io::Error),
}

impl SettingsError {
    fn is_not_found(&self) -> bool {
        matches!(self, SettingsError::Open(OpenError::Io { error, .. }) if error.kind() == std::io::ErrorKind::NotFound)
    }
}

/// Returns `sessionDir` from Pi's settings files, the project's overriding the global one.
fn settings_session_dir(
    env: &Environment,
    agent_dir: &Path,
    warnings: &mut Vec<Warning>,
) -> Result<Option<PathBuf>, AppError> {
    let candidates = [
        env.cwd.join(".pi").join("settings.json"),
        env.cwd.join(agent_dir).join("settings.json"),
    ];
    for path in candidates {
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
            Some(serde_json::Value::String(dir)) => return Ok(Some(env.expand_tilde(dir)?)),
            Some(_) => warnings.push(Warning::new(
                path.display().to_string(),
                "settings sessionDir is not a string; ignored",
            )),
        }
    }
    Ok(None)
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
