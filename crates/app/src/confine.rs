//! Confinement: the check that a session path handed in by an untrusted caller (an agent
//! talking to the MCP server) names a session file the walk of the resolved stores would
//! list, so the tool cannot be used to read arbitrary files.

use std::path::{Component, Path, PathBuf};

use pi_retrospect_walk::{Layout, Store};

use crate::env::Environment;
use crate::error::AppError;
use crate::store::{StoreFlags, resolve_stores};

/// Returns the canonical path of the file `argument` names, refusing it unless it is a
/// session file of one of the stores `flags` resolve to.
///
/// A session file is what the walk lists: a `*.jsonl` directly inside a project directory
/// (`<root>/--<slug>--/` in the default layout, the root itself in a flat one), or a run of
/// such a session: a `session.jsonl` at any depth below its container (the directory named
/// after its stem, beside it), or a `*.jsonl` directly inside a `forks` directory there,
/// never below `subagent-artifacts`. Any other file below a root (a `.jsonl` in some
/// subdirectory of a flat store, say) is refused.
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
/// Every error is about [`crate::Input::Session`]: its message names the argument's text but
/// not the argument, which the caller spells its own way (`sessionPath: ...`). A path that is refused is a [`crate::ErrorKind::Usage`] error, a
/// file that does not exist [`crate::ErrorKind::NotFound`].
pub fn confine_to_stores(
    argument: &str,
    flags: &StoreFlags,
    env: &Environment,
) -> Result<PathBuf, AppError> {
    confine(argument, flags, env).map_err(|error| error.about(crate::Input::Session))
}

fn confine(argument: &str, flags: &StoreFlags, env: &Environment) -> Result<PathBuf, AppError> {
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
    let roots: Vec<(PathBuf, Layout)> = stores
        .iter()
        .filter_map(|store: &Store| {
            let root = std::fs::canonicalize(&store.root).ok()?;
            Some((root, store.layout))
        })
        .collect();
    // A path that is below no root, as written or as the roots resolve, is refused before the
    // file system is asked anything: whether it exists is no business of a caller.
    let is_below_as_written = stores.iter().any(|store| {
        let root = Path::new(&store.root);
        path != root && path.starts_with(root)
    }) || roots
        .iter()
        .any(|(root, _)| path != *root && path.starts_with(root));
    if !is_below_as_written {
        let searched: Vec<String> = stores.iter().map(|store| store.root.clone()).collect();
        return Err(AppError::usage(format!(
            "{argument} is outside the session stores; only files under {} can be read",
            searched.join(", ")
        )));
    }
    let real = std::fs::canonicalize(&path).map_err(|error| {
        let reason = pi_retrospect_read::describe_io(&error);
        if error.kind() == std::io::ErrorKind::NotFound {
            AppError::not_found(format!("{argument}: {reason}"))
        } else {
            AppError::io(format!("{argument}: {reason}"))
        }
    })?;
    let mut is_below_a_root = false;
    for (root, layout) in &roots {
        if real == *root {
            continue;
        }
        let Ok(relative) = real.strip_prefix(root) else {
            continue;
        };
        is_below_a_root = true;
        if is_listed(root, relative, *layout) {
            return Ok(real);
        }
    }
    if is_below_a_root {
        return Err(AppError::usage(format!(
            "{argument} is not a session file of the stores (a *.jsonl in a project \
             directory, or one of its runs); pass a path from list_sessions"
        )));
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

/// Name pi-subagents gives every run transcript (as in the walk).
const RUN_FILE_NAME: &str = "session.jsonl";
/// Directory under a container whose `*.jsonl` files are runs (as in the walk).
const FORKS_DIR_NAME: &str = "forks";
/// Directory under a container that the walk never enters.
const ARTIFACTS_DIR_NAME: &str = "subagent-artifacts";

/// Returns whether `relative`, a real path below the real `root` of a store laid out as
/// `layout`, is a file the walk of that store lists (see [`confine_to_stores`]).
fn is_listed(root: &Path, relative: &Path, layout: Layout) -> bool {
    let mut names: Vec<&str> = Vec::new();
    for component in relative.components() {
        match component {
            Component::Normal(name) => match name.to_str() {
                Some(name) => names.push(name),
                None => return false,
            },
            _ => return false,
        }
    }
    let (project_dir, in_project) = match layout {
        Layout::Projects => match names.split_first() {
            Some((first, rest)) if is_project_dir_name(first) => (root.join(first), rest),
            _ => return false,
        },
        Layout::Flat => (root.to_owned(), names.as_slice()),
    };
    match in_project {
        [file] => file.ends_with(".jsonl"),
        [container, below @ .., file] => {
            let is_run = *file == RUN_FILE_NAME
                || (below.last() == Some(&FORKS_DIR_NAME) && file.ends_with(".jsonl"));
            is_run
                && !matches!(*container, "" | "." | "..")
                && !below.contains(&ARTIFACTS_DIR_NAME)
                && is_session_file(&project_dir.join(format!("{container}.jsonl")))
        }
        [] => false,
    }
}

/// Returns whether a project directory's entry has the `--<slug>--` shape the walk takes.
fn is_project_dir_name(name: &str) -> bool {
    name.len() >= 4 && name.starts_with("--") && name.ends_with("--")
}

/// Returns whether `path` is a regular file, not through a symlink: the session whose
/// container holds a run.
fn is_session_file(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok_and(|metadata| metadata.is_file())
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
            // Outside the stores, a missing file is refused as an existing one is: the answer
            // never tells whether a path exists.
            ("/no/such/dir/a.jsonl", Err(ErrorKind::Usage)),
            ("DIR/missing.jsonl", Err(ErrorKind::Usage)),
            ("DIR/store/--w--/missing.jsonl", Err(ErrorKind::NotFound)),
            ("~/../secret.txt", Err(ErrorKind::Usage)),
        ];
        for (argument, expected) in cases {
            check(argument, *expected);
        }
    }

    #[test]
    fn a_sibling_with_the_root_as_prefix_is_outside() {
        let dir = tempfile::tempdir().expect("temp dir");
        let dir = std::fs::canonicalize(dir.path()).expect("canonical temp dir");
        for (path, contents) in [("s/--p--/a.jsonl", "{}\n"), ("s-x/--p--/a.jsonl", "{}\n")] {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, contents).expect("write");
        }
        let env = Environment {
            cwd: dir.clone(),
            home: Some(dir.join("home")),
            ..Environment::default()
        };
        let flags = StoreFlags {
            sessions_root: Some(dir.join("s")),
            ..StoreFlags::default()
        };
        let inside = dir.join("s/--p--/a.jsonl");
        let confined = confine_to_stores(inside.to_str().expect("utf-8"), &flags, &env);
        assert_eq!(confined.expect("inside"), inside);
        let sibling = dir.join("s-x/--p--/a.jsonl");
        let confined = confine_to_stores(sibling.to_str().expect("utf-8"), &flags, &env);
        assert_eq!(confined.expect_err("outside").kind, ErrorKind::Usage);
    }

    /// Below a root, only the files the walk lists are sessions.
    #[test]
    fn only_files_the_walk_lists() {
        let dir = tempfile::tempdir().expect("temp dir");
        let dir = std::fs::canonicalize(dir.path()).expect("canonical temp dir");
        for path in [
            "root/--p--/a.jsonl",
            "root/--p--/a/session.jsonl",
            "root/--p--/a/run-1/deep/session.jsonl",
            "root/--p--/a/forks/f.jsonl",
            "root/--p--/a/run-1/forks/g.jsonl",
            "root/--p--/a/other.jsonl",
            "root/--p--/a/subagent-artifacts/session.jsonl",
            "root/--p--/b/session.jsonl",
            "root/--p--/deeper/x.jsonl",
            "root/not-a-project/a.jsonl",
            "root/top.jsonl",
            "flat/s.jsonl",
            "flat/s/session.jsonl",
            "flat/outdir/x.jsonl",
            "flat/--p--/a.jsonl",
        ] {
            let path = dir.join(path);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, "{}\n").expect("write");
        }
        let env = Environment {
            cwd: dir.clone(),
            home: Some(dir.join("home")),
            ..Environment::default()
        };
        let projects = StoreFlags {
            sessions_root: Some(dir.join("root")),
            ..StoreFlags::default()
        };
        let flat = StoreFlags {
            session_dir: Some(dir.join("flat")),
            ..StoreFlags::default()
        };
        for (flags, path, is_listed) in [
            (&projects, "root/--p--/a.jsonl", true),
            (&projects, "root/--p--/a/session.jsonl", true),
            (&projects, "root/--p--/a/run-1/deep/session.jsonl", true),
            (&projects, "root/--p--/a/forks/f.jsonl", true),
            (&projects, "root/--p--/a/run-1/forks/g.jsonl", true),
            (&projects, "root/--p--/a/other.jsonl", false),
            (
                &projects,
                "root/--p--/a/subagent-artifacts/session.jsonl",
                false,
            ),
            // A container without its session beside it is no container.
            (&projects, "root/--p--/b/session.jsonl", false),
            (&projects, "root/--p--/deeper/x.jsonl", false),
            (&projects, "root/not-a-project/a.jsonl", false),
            (&projects, "root/top.jsonl", false),
            (&flat, "flat/s.jsonl", true),
            (&flat, "flat/s/session.jsonl", true),
            (&flat, "flat/outdir/x.jsonl", false),
            (&flat, "flat/--p--/a.jsonl", false),
        ] {
            let path = dir.join(path);
            let confined = confine_to_stores(path.to_str().expect("utf-8"), flags, &env);
            match (confined, is_listed) {
                (Ok(real), true) => assert_eq!(real, path),
                (Err(error), false) => assert_eq!(error.kind, ErrorKind::Usage, "{error}"),
                (actual, _) => panic!("{}: {actual:?}", path.display()),
            }
        }
    }
}
