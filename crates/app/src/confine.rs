//! Confinement: the check that a session path handed in by an untrusted caller (an agent
//! talking to the MCP server) names a file inside the resolved session stores, so the tool
//! cannot be used to read arbitrary files.

use std::path::{Component, Path, PathBuf};

use crate::env::Environment;
use crate::error::AppError;
use crate::store::{StoreFlags, resolve_stores};

/// Returns the canonical path of the file `argument` names, refusing it unless it lies inside
/// one of the stores `flags` resolve to.
///
/// The argument must be absolute (a leading `~/` is expanded) and may not contain `..`; a
/// relative path is refused because the caller's working directory is not the tool's. The
/// file and every store root are resolved with symlinks followed, and the file's real
/// location must be strictly below a root's real location, so a symlink (of the file or of a
/// directory on the way) that leads outside the stores is refused too. Roots that do not
/// exist are skipped.
///
/// The check runs before the file is opened, and the returned canonical path is what should
/// be opened (its last component is never a symlink). A directory on that path replaced by
/// a symlink between the check and the open is not detected; that needs write access to the
/// store itself.
///
/// Errors name the argument's text but not the argument: the caller prefixes its own name
/// (`sessionPath: ...`). A path that is refused is a [`crate::ErrorKind::Usage`] error, a
/// file that does not exist [`crate::ErrorKind::NotFound`].
pub fn confine_to_stores(
    argument: &str,
    flags: &StoreFlags,
    env: &Environment,
) -> Result<PathBuf, AppError> {
    if argument.is_empty() {
        return Err(AppError::usage("must not be empty"));
    }
    let path = env.expand_tilde(argument)?;
    if !path.is_absolute() {
        return Err(AppError::usage(format!(
            "{argument:?} is not an absolute path; pass a path from list_sessions"
        )));
    }
    if path
        .components()
        .any(|component| component == Component::ParentDir)
    {
        return Err(AppError::usage(format!(
            "{argument:?} contains `..`; pass a path from list_sessions"
        )));
    }
    let (stores, _) = resolve_stores(flags, env)?;
    let roots: Vec<PathBuf> = stores
        .iter()
        .filter_map(|store| std::fs::canonicalize(&store.root).ok())
        .collect();
    let real = std::fs::canonicalize(&path).map_err(|error| {
        let reason = pi_retrospect_header::describe_io(&error);
        if error.kind() == std::io::ErrorKind::NotFound {
            AppError::not_found(format!("{argument}: {reason}"))
        } else {
            AppError::io(format!("{argument}: {reason}"))
        }
    })?;
    if is_inside(&real, &roots) {
        return Ok(real);
    }
    let searched: Vec<String> = stores.iter().map(|store| store.root.clone()).collect();
    let how = if real == path {
        String::new()
    } else {
        format!(" (it resolves to {})", real.display())
    };
    Err(AppError::usage(format!(
        "{argument} is outside the session stores{how}; only files under {} can be read",
        searched.join(", ")
    )))
}

/// Returns whether `path` lies strictly below one of `roots` (component-wise, so `/s-x` is
/// not below `/s`).
fn is_inside(path: &Path, roots: &[PathBuf]) -> bool {
    roots
        .iter()
        .any(|root| path != root && path.starts_with(root))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ErrorKind;

    /// Builds `<dir>/store/--w--/a.jsonl`, a file outside the store, and symlinks in and out.
    fn layout(dir: &Path) -> Environment {
        let project = dir.join("store/--w--");
        std::fs::create_dir_all(&project).expect("mkdir");
        std::fs::write(project.join("a.jsonl"), "{}\n").expect("write");
        std::fs::write(dir.join("secret.txt"), "secret\n").expect("write");
        std::fs::create_dir_all(dir.join("home")).expect("mkdir");
        std::os::unix::fs::symlink(dir.join("secret.txt"), project.join("out.jsonl"))
            .expect("symlink");
        std::os::unix::fs::symlink(dir, project.join("up")).expect("symlink");
        std::os::unix::fs::symlink(project.join("a.jsonl"), project.join("in.jsonl"))
            .expect("symlink");
        Environment {
            cwd: dir.join("store"),
            home: Some(dir.join("home")),
            ..Environment::default()
        }
    }

    fn check(argument: &str, expected: Result<&str, ErrorKind>) {
        let dir = tempfile::tempdir().expect("temp dir");
        let dir = std::fs::canonicalize(dir.path()).expect("canonical temp dir");
        let env = layout(&dir);
        let flags = StoreFlags {
            sessions_root: Some(dir.join("store")),
            ..StoreFlags::default()
        };
        let argument = argument.replace("DIR", &dir.display().to_string());
        let actual = confine_to_stores(&argument, &flags, &env);
        match (actual, expected) {
            (Ok(path), Ok(want)) => assert_eq!(
                path,
                PathBuf::from(want.replace("DIR", &dir.display().to_string())),
                "{argument}"
            ),
            (Err(error), Err(kind)) => assert_eq!(error.kind, kind, "{argument}: {error}"),
            (actual, expected) => panic!("{argument}: got {actual:?}, expected {expected:?}"),
        }
    }

    #[test]
    fn only_files_inside_the_stores() {
        let inside = "DIR/store/--w--/a.jsonl";
        let cases: &[(&str, Result<&str, ErrorKind>)] = &[
            (inside, Ok(inside)),
            // A symlink whose target is inside is read at its target.
            ("DIR/store/--w--/in.jsonl", Ok(inside)),
            ("--w--/a.jsonl", Err(ErrorKind::Usage)),
            ("a.jsonl", Err(ErrorKind::Usage)),
            ("", Err(ErrorKind::Usage)),
            ("DIR/store/--w--/../--w--/a.jsonl", Err(ErrorKind::Usage)),
            ("DIR/store/../secret.txt", Err(ErrorKind::Usage)),
            ("DIR/secret.txt", Err(ErrorKind::Usage)),
            ("DIR/store/--w--/out.jsonl", Err(ErrorKind::Usage)),
            ("DIR/store/--w--/up/secret.txt", Err(ErrorKind::Usage)),
            ("DIR/store", Err(ErrorKind::Usage)),
            ("/etc/passwd", Err(ErrorKind::Usage)),
            ("DIR/store/--w--/missing.jsonl", Err(ErrorKind::NotFound)),
            ("~/../secret.txt", Err(ErrorKind::Usage)),
        ];
        for (argument, expected) in cases {
            check(argument, *expected);
        }
    }

    #[test]
    fn a_sibling_with_the_root_as_prefix_is_outside() {
        let roots = [PathBuf::from("/s")];
        assert!(is_inside(Path::new("/s/a.jsonl"), &roots));
        assert!(!is_inside(Path::new("/s-x/a.jsonl"), &roots));
        assert!(!is_inside(Path::new("/s"), &roots));
    }
}
