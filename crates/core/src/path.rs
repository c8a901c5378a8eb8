//! Lexical path helpers: containers, absolute-path tests and normalisation.
//!
//! These operate on strings because every path in the output must be valid UTF-8; the walk
//! rejects names that are not before they reach here.

/// Returns the container directory of a session file: `dir/x.jsonl` -> `dir/x`.
///
/// A session's subagent runs live under its container. A file whose stem is empty, `.` or
/// `..` (`.jsonl`, `..jsonl`, `...jsonl`) has no container, because `dir/`, `dir/.` and
/// `dir/..` are not directories of its own: they would make the file contain its siblings or
/// its parent.
pub fn container_of(path: &str) -> Option<&str> {
    let without_extension = path.strip_suffix(".jsonl")?;
    let stem = match without_extension.rfind('/') {
        Some(slash) => &without_extension[slash + 1..],
        None => without_extension,
    };
    if stem.is_empty() || stem == "." || stem == ".." {
        return None;
    }
    Some(without_extension)
}

/// Returns whether `cwd` is an absolute path on POSIX or Windows.
///
/// Pi records the cwd of the machine it ran on, so both families are accepted: `/x` on POSIX;
/// `C:\x` or `C:/x` (a drive letter, a colon and a separator); and UNC `\\server\share` or
/// `//server/share`. A drive-relative `C:x` and a rooted-but-driveless `\x` are not absolute.
pub fn is_absolute_cwd(cwd: &str) -> bool {
    let bytes = cwd.as_bytes();
    match bytes {
        [b'/', ..] => true,
        [b'\\', b'\\', rest @ ..] => !rest.is_empty() && rest[0] != b'\\',
        [drive, b':', b'\\' | b'/', ..] => drive.is_ascii_alphabetic(),
        _ => false,
    }
}

/// Returns `path` normalised lexically as Node's `path.resolve` does for an absolute input:
/// `.` segments and repeated or trailing slashes removed, `..` popping a segment (never above `/`).
pub fn normalize_absolute(path: &str) -> String {
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "" | "." => {}
            ".." => {
                segments.pop();
            }
            other => segments.push(other),
        }
    }
    let mut normalized = String::with_capacity(path.len());
    for segment in &segments {
        normalized.push('/');
        normalized.push_str(segment);
    }
    if normalized.is_empty() {
        normalized.push('/');
    }
    normalized
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containers() {
        let cases = [
            ("/s/--p--/a_b.jsonl", Some("/s/--p--/a_b")),
            ("/s/--p--/x.y.jsonl", Some("/s/--p--/x.y")),
            ("/s/--p--/.jsonl", None),
            ("/s/--p--/..jsonl", None),
            ("/s/--p--/...jsonl", None),
            ("/s/--p--/....jsonl", Some("/s/--p--/...")),
            ("/s/--p--/a.json", None),
            ("run-0/session.jsonl", Some("run-0/session")),
        ];
        for (input, expected) in cases {
            assert_eq!(container_of(input), expected, "container_of({input:?})");
        }
    }

    #[test]
    fn absolute_cwds() {
        let cases = [
            ("/", true),
            ("/home/me/app", true),
            ("C:\\Users\\me", true),
            ("c:/Users/me", true),
            ("\\\\server\\share", true),
            ("//server/share", true),
            ("", false),
            ("relative/dir", false),
            ("./x", false),
            ("~/x", false),
            ("C:", false),
            ("C:relative", false),
            ("\\rooted", false),
            ("\\\\", false),
            ("1:\\x", false),
        ];
        for (input, expected) in cases {
            assert_eq!(
                is_absolute_cwd(input),
                expected,
                "is_absolute_cwd({input:?})"
            );
        }
    }

    #[test]
    fn normalizes_like_node_resolve() {
        let cases = [
            ("/a/b/../c/./d/", "/a/c/d"),
            ("/..", "/"),
            ("//a//b", "/a/b"),
            ("/", "/"),
            ("/a/..", "/"),
        ];
        for (input, expected) in cases {
            assert_eq!(normalize_absolute(input), expected, "normalize({input:?})");
        }
    }
}

/// The part of a session path that names it inside its store, whatever the store's own path:
/// `<launch-id>/run-<n>/session.jsonl` for a subagent run (pi-subagents' layout; the launch
/// id makes it unique) and `<project-dir>/<ts>_<id>.jsonl` for a top-level session. A path
/// recorded in a file (a run's `sessionFile`, a header's `parentSession`) names the store as
/// it was when written; once the store is copied, moved or reached through a link, only this
/// tail still matches. `None` for a path of neither shape. A tail never starts with `/`, so it
/// cannot be mistaken for an absolute path kept in the same set.
pub fn store_tail(path: &str) -> Option<&str> {
    let (dir, file) = path.rsplit_once('/')?;
    let start_of = |text: &str| text.rfind('/').map_or(0, |idx| idx + 1);
    let is_name = |name: &str| !name.is_empty() && name != "." && name != "..";
    if file == "session.jsonl" {
        let (before_run, run) = dir.rsplit_once('/')?;
        let digits = run.strip_prefix("run-")?;
        if digits.is_empty() || !digits.bytes().all(|byte| byte.is_ascii_digit()) {
            return None;
        }
        let start = start_of(before_run);
        return is_name(&before_run[start..]).then(|| &path[start..]);
    }
    let start = start_of(dir);
    (is_name(&dir[start..]) && file.ends_with(".jsonl")).then(|| &path[start..])
}

#[cfg(test)]
mod store_tail_tests {
    use super::store_tail;

    #[test]
    fn a_tail_names_a_session_inside_its_store() {
        let table = [
            (
                "/s/--p--/20_a/7a1e/run-0/session.jsonl",
                Some("7a1e/run-0/session.jsonl"),
            ),
            ("/s/--p--/2026_a.jsonl", Some("--p--/2026_a.jsonl")),
            ("/s/--p--/x/run-/session.jsonl", None),
            ("/s/../run-1/session.jsonl", None),
            ("/s/--p--/notes.txt", None),
            ("plain.jsonl", None),
        ];
        for (path, expected) in table {
            assert_eq!(store_tail(path), expected, "{path}");
        }
    }
}
