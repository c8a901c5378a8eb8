//! The `list` contract at library level, on the committed fixture stores and on temporary
//! trees for what git cannot hold. Every walk runs with one thread and with several, and the
//! two must agree.

use std::path::{Path, PathBuf};

use pi_retrospect_core::{Listing, Session};
use pi_retrospect_walk::{BodyReach, Layout, Store, WalkOptions, list};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fixtures")
}

fn store(root: &Path) -> Store {
    Store::resolve(root, Path::new("/"), Layout::Projects).expect("utf-8 root")
}

/// Lists `root` serially and in parallel, asserts both agree, and returns the listing.
fn list_both(store: &Store) -> Listing {
    let serial = list(store, &WalkOptions { threads: 1 }).expect("descriptors to spare");
    let parallel = list(store, &WalkOptions { threads: 4 }).expect("descriptors to spare");
    assert_eq!(serial, parallel, "1 thread and 4 threads must agree");
    serial
}

/// Returns `depth|relative path` lines for every session, depth first.
fn outline(listing: &Listing, root: &str) -> Vec<String> {
    fn walk(sessions: &[Session], depth: usize, root: &str, out: &mut Vec<String>) {
        for session in sessions {
            let relative = session.path.strip_prefix(root).unwrap_or(&session.path);
            out.push(format!("{depth}|{relative}"));
            walk(&session.subagent_sessions, depth + 1, root, out);
        }
    }
    let mut out = Vec::new();
    walk(&listing.sessions, 0, root, &mut out);
    out
}

fn warnings(listing: &Listing, root: &str) -> Vec<String> {
    listing
        .warnings
        .iter()
        .map(|warning| {
            let relative = warning.path.strip_prefix(root).unwrap_or(&warning.path);
            format!("{relative}: {}", warning.reason)
        })
        .collect()
}

const PARENT: &str =
    "/--home-user-app--/2026-09-01T10-00-00-000Z_01990000-0000-7000-8000-000000000001";

#[test]
fn contract_store_rows_nesting_and_order() {
    let store = store(&fixtures().join("sessions"));
    let listing = list_both(&store);
    let expected = vec![
        "0|/--home-user-app--/2026-09-05T08-00-00-000Z_leap-day.jsonl".to_owned(),
        format!("0|{PARENT}.jsonl"),
        format!("1|{PARENT}/5f0c2a4e-1b7d-4c2a-9e3f-000000000003/nested/run-0/session.jsonl"),
        format!("1|{PARENT}/5f0c2a4e-1b7d-4c2a-9e3f-000000000001/run-1/session.jsonl"),
        format!("1|{PARENT}/5f0c2a4e-1b7d-4c2a-9e3f-000000000001/run-0/session.jsonl"),
        format!("1|{PARENT}/5f0c2a4e-1b7d-4c2a-9e3f-000000000002/run-0/session.jsonl"),
        format!(
            "2|{PARENT}/5f0c2a4e-1b7d-4c2a-9e3f-000000000002/run-0/session/5f0c2a4e-1b7d-4c2a-9e3f-000000000003/run-0/session.jsonl"
        ),
        "0|/--home-user-app--/2026-09-02T08-00-00-000Z_tie-a.jsonl".to_owned(),
        "0|/--home-user-app--/2026-09-02T08-00-00-000Z_tie-b.jsonl".to_owned(),
        "0|/--home-user-app--/2026-09-03T09-00-00-000Z_fork.jsonl".to_owned(),
        "0|/--home-user-app--/2026-09-03T09-30-00-000Z_empty-parent.jsonl".to_owned(),
        "0|/--home-user-app--/2026-09-04T09-00-00-000Z_bom.jsonl".to_owned(),
        "0|/--home-user-app--/2026-09-04T10-00-00-000Z_crlf.jsonl".to_owned(),
        "0|/--home-user-app--/2026-09-04T11-00-00-000Z_no-newline.jsonl".to_owned(),
        "0|/--home-user-app--/2026-09-04T12-00-00-000Z_header-4096.jsonl".to_owned(),
        "0|/--home-user-tool--/2026-09-06T10-00-00-000Z_01990000-0000-7000-8000-000000000030.jsonl"
            .to_owned(),
    ];
    assert_eq!(outline(&listing, &store.root), expected);
}

#[test]
fn contract_store_warns_once_per_broken_file() {
    let store = store(&fixtures().join("sessions"));
    let listing = list_both(&store);
    let expected = vec![
        format!("{PARENT}/5f0c2a4e-1b7d-4c2a-9e3f-000000000002/run-1/session.jsonl: first line is not valid JSON: EOF while parsing an object at line 1 column 37"),
        "/--home-user-app--/2026-09-04T13-00-00-000Z_header-4097.jsonl: first line is longer than 4096 bytes".to_owned(),
        "/--home-user-tool--/broken-blank-line.jsonl: first line is empty".to_owned(),
        "/--home-user-tool--/broken-empty-cwd.jsonl: session header has no cwd".to_owned(),
        "/--home-user-tool--/broken-empty-file.jsonl: file is empty".to_owned(),
        "/--home-user-tool--/broken-empty-line.jsonl: first line is empty".to_owned(),
        "/--home-user-tool--/broken-impossible-date.jsonl: session header has no valid ISO 8601 timestamp".to_owned(),
        "/--home-user-tool--/broken-no-id.jsonl: session header has no id".to_owned(),
        "/--home-user-tool--/broken-no-timestamp.jsonl: session header has no valid ISO 8601 timestamp".to_owned(),
        "/--home-user-tool--/broken-not-json.jsonl: first line is not valid JSON: key must be a string at line 1 column 2".to_owned(),
        "/--home-user-tool--/broken-not-object.jsonl: first line is not a JSON object".to_owned(),
        "/--home-user-tool--/broken-not-session.jsonl: first line is not a session header (type: message)".to_owned(),
        "/--home-user-tool--/broken-parent-not-string.jsonl: session header parentSession is not a string".to_owned(),
    ];
    let (out_of_scope, contract): (Vec<_>, Vec<_>) = listing
        .warnings
        .iter()
        .cloned()
        .partition(|warning| warning.is_out_of_scope);
    let contract = Listing {
        sessions: Vec::new(),
        warnings: contract,
    };
    assert_eq!(warnings(&contract, &store.root), expected);
    // The two symlinks of the store and the container left by a deleted session are out of
    // the contract's scope: said, but not in its documents.
    let out_of_scope = Listing {
        sessions: Vec::new(),
        warnings: out_of_scope,
    };
    assert_eq!(
        warnings(&out_of_scope, &store.root),
        [
            "/--home-user-app--/2026-08-01T00-00-00-000Z_orphan: holds the subagent runs of a session file that is not there: they are not listed, and not counted",
            "/--home-user-tool--/2026-09-06T00-00-00-000Z_link.jsonl: is a symbolic link (not followed)",
            "/--linked-project--: is a symbolic link (not followed)",
        ]
    );
}

#[test]
fn contract_store_fields_and_invariants() {
    let store = store(&fixtures().join("sessions"));
    let listing = list_both(&store);
    let mut paths = Vec::new();
    fn visit<'a>(sessions: &'a [Session], paths: &mut Vec<&'a str>) {
        for pair in sessions.windows(2) {
            assert!(
                pair[0].chronological_cmp(&pair[1]).is_lt(),
                "order at every level"
            );
        }
        for session in sessions {
            assert!(session.path.starts_with('/'), "absolute path");
            assert!(session.cwd.starts_with('/'), "absolute cwd");
            paths.push(&session.path);
            visit(&session.subagent_sessions, paths);
        }
    }
    visit(&listing.sessions, &mut paths);
    let n_paths = paths.len();
    paths.sort_unstable();
    paths.dedup();
    assert_eq!(paths.len(), n_paths, "each file at most once");
    for warning in &listing.warnings {
        assert!(
            !paths.contains(&warning.path.as_str()),
            "a file is a row or a warning, not both"
        );
    }

    let find = |suffix: &str| {
        listing
            .sessions
            .iter()
            .find(|session| session.path.ends_with(suffix))
            .expect("session present")
    };
    assert_eq!(
        find("_fork.jsonl").parent_session_path.as_deref(),
        Some(
            "/home/user/.pi/agent/sessions/--home-user-app--/2026-09-01T10-00-00-000Z_01990000-0000-7000-8000-000000000001.jsonl"
        )
    );
    assert_eq!(find("_empty-parent.jsonl").parent_session_path, None);
    assert_eq!(
        find("_tie-a.jsonl").timestamp,
        "2026-09-02T10:00:00.000+02:00"
    );
    assert_eq!(
        find("_bom.jsonl").id,
        "01990000-0000-7000-8000-000000000014"
    );
}

#[test]
fn beyond_store_keeps_the_documented_guarantees() {
    let store = store(&fixtures().join("beyond/sessions"));
    let listing = list_both(&store);
    let p = "/--home-user-beyond--";
    let parent = format!("{p}/2026-10-01T10-00-00-000Z_01990000-0000-7000-8000-000000000100");
    let fork =
        format!("{parent}/forks/2026-10-01T10-01-00-000Z_01990000-0000-7000-8000-000000000101");
    let expected = vec![
        format!("0|{parent}.jsonl"),
        format!("1|{parent}/5f0c2a4e-1b7d-4c2a-9e3f-000000000001/run-0/session.jsonl"),
        format!("1|{fork}.jsonl"),
        format!("2|{fork}/5f0c2a4e-1b7d-4c2a-9e3f-000000000001/run-0/session.jsonl"),
        format!("0|{p}/2026-10-03T00-00-00-000Z_b-earlier.jsonl"),
        format!("0|{p}/2026-10-03T00-00-00-000Z_a-later.jsonl"),
        format!("0|{p}/2026-10-04T01-00-00-000Z_windows-cwd.jsonl"),
        format!("0|{p}/2026-10-04T02-00-00-000Z_unc-cwd.jsonl"),
        format!("0|{p}/.jsonl"),
        format!("0|{p}/..jsonl"),
        format!("0|{p}/...jsonl"),
        format!("0|{p}/2026-10-06T00-00-00-000Z_file-container.jsonl"),
        format!("0|{p}/2026-10-06T01-00-00-000Z_link-container.jsonl"),
    ];
    assert_eq!(outline(&listing, &store.root), expected);
    let expected_warnings = vec![
        format!(
            "{p}/2026-10-02T00-00-00-000Z_offset-24.jsonl: session header has no valid ISO 8601 timestamp"
        ),
        format!(
            "{p}/2026-10-02T00-00-00-000Z_second-60.jsonl: session header has no valid ISO 8601 timestamp"
        ),
        format!(
            "{p}/2026-10-04T00-00-00-000Z_relative-cwd.jsonl: session header cwd is not an absolute path: projects/app"
        ),
        format!(
            "{p}/2026-10-04T03-00-00-000Z_lone-surrogate.jsonl: first line is not valid JSON: unexpected end of hex escape at line 1 column 47"
        ),
        // Out of the contract's scope: said, but not in its documents.
        format!("{p}/2026-10-06T01-00-00-000Z_link-container: is a symbolic link (not followed)"),
    ];
    assert_eq!(warnings(&listing, &store.root), expected_warnings);
}

fn write(root: &Path, relative: &str, contents: &[u8]) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, contents).expect("write");
}

const GOOD: &str = r#"{"type":"session","id":"s","timestamp":"2026-01-01T00:00:00Z","cwd":"/w"}"#;

fn mkfifo(path: &Path) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let status = std::process::Command::new("mkfifo")
        .arg(path)
        .status()
        .expect("mkfifo");
    assert!(status.success());
}

fn symlink(target: &Path, link: &Path) {
    std::fs::create_dir_all(link.parent().expect("parent")).expect("mkdir");
    std::os::unix::fs::symlink(target, link).expect("symlink");
}

/// A FIFO or a symlink where a session file, a run or a project
/// directory could be is never opened (a FIFO would block, a symlink could lead out of the
/// store), and never followed; but each is one warning naming its path and what it is,
/// marked out of scope (the contract's documents do not list it). A directory `---` is no
/// `--<slug>--` (its two `--` overlap), and says so.
#[test]
fn fifos_and_symlinks_are_never_opened_and_each_is_said() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    write(root, "--p--/a.jsonl", GOOD.as_bytes());
    write(root, "elsewhere/real.jsonl", GOOD.as_bytes());
    write(root, "elsewhere/run/session.jsonl", GOOD.as_bytes());
    mkfifo(&root.join("--p--/pipe.jsonl"));
    mkfifo(&root.join("--p--/a/L/run-0/session.jsonl"));
    symlink(
        &root.join("elsewhere/real.jsonl"),
        &root.join("--p--/link.jsonl"),
    );
    symlink(Path::new("/dev/zero"), &root.join("--p--/zero.jsonl"));
    symlink(
        &root.join("--p--/loop.jsonl"),
        &root.join("--p--/loop.jsonl"),
    );
    symlink(
        &root.join("elsewhere/run/session.jsonl"),
        &root.join("--p--/a/L/run-1/session.jsonl"),
    );
    symlink(
        &root.join("elsewhere/real.jsonl"),
        &root.join("--p--/a/forks/f.jsonl"),
    );
    symlink(&root.join("--p--"), &root.join("--linked--"));
    symlink(&root.join("elsewhere"), &root.join("--p--/not-a-session"));
    std::fs::create_dir_all(root.join("---")).expect("mkdir");
    std::fs::create_dir_all(root.join("permission-forwarding")).expect("mkdir");

    let store = store(root);
    let listing = list_both(&store);
    assert_eq!(outline(&listing, &store.root), ["0|/--p--/a.jsonl"]);
    assert_eq!(
        warnings(&listing, &store.root),
        [
            "/---: not a project directory: its leading and trailing `--` overlap, so the name \
             is not `--<slug>--`; not entered",
            "/--linked--: is a symbolic link (not followed)",
            "/--p--/a/L/run-0/session.jsonl: not a regular file: FIFO",
            "/--p--/a/L/run-1/session.jsonl: is a symbolic link (not followed)",
            "/--p--/a/forks/f.jsonl: is a symbolic link (not followed)",
            "/--p--/link.jsonl: is a symbolic link (not followed)",
            "/--p--/loop.jsonl: is a symbolic link (not followed)",
            "/--p--/pipe.jsonl: not a regular file: FIFO",
            "/--p--/zero.jsonl: is a symbolic link (not followed)",
        ]
    );
    assert!(
        listing
            .warnings
            .iter()
            .all(|warning| warning.is_out_of_scope),
        "{:?}",
        listing.warnings
    );

    // A custom (flat) session directory is its own project directory: the same rule.
    let flat = Store::resolve(&root.join("--p--"), Path::new("/"), Layout::Flat).expect("utf-8");
    let listing = list(&flat, &WalkOptions { threads: 2 }).expect("descriptors to spare");
    assert_eq!(
        warnings(&listing, &flat.root)
            .iter()
            .filter(|line| !line.starts_with("/a/"))
            .collect::<Vec<_>>(),
        [
            "/link.jsonl: is a symbolic link (not followed)",
            "/loop.jsonl: is a symbolic link (not followed)",
            "/pipe.jsonl: not a regular file: FIFO",
            "/zero.jsonl: is a symbolic link (not followed)",
        ]
    );
}

/// A symlinked directory where runs could be (a session's container, a
/// `<launch-uuid>/` or a `run-<n>/` directory) is never followed, but its runs do not vanish
/// without a word: one out-of-scope warning each. A symlink no session claims, a symlink to a
/// file and a dangling one inside a container are out of scope by rule and not said.
#[test]
fn symlinked_run_directories_are_never_followed_and_each_is_said() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    write(root, "--p--/a.jsonl", GOOD.as_bytes());
    write(root, "--p--/b.jsonl", GOOD.as_bytes());
    write(root, "--p--/a/L/run-0/session.jsonl", GOOD.as_bytes());
    write(
        root,
        "elsewhere/container/L/run-0/session.jsonl",
        GOOD.as_bytes(),
    );
    write(
        root,
        "elsewhere/launch/run-0/session.jsonl",
        GOOD.as_bytes(),
    );
    write(root, "elsewhere/run/session.jsonl", GOOD.as_bytes());
    write(root, "elsewhere/notes.md", b"notes");
    symlink(&root.join("elsewhere/container"), &root.join("--p--/b"));
    symlink(&root.join("elsewhere"), &root.join("--p--/unclaimed"));
    symlink(&root.join("elsewhere/launch"), &root.join("--p--/a/M"));
    symlink(&root.join("elsewhere/run"), &root.join("--p--/a/L/run-1"));
    symlink(
        &root.join("elsewhere/notes.md"),
        &root.join("--p--/a/L/notes.md"),
    );
    symlink(&root.join("nowhere"), &root.join("--p--/a/L/dangling"));

    let store = store(root);
    let listing = list_both(&store);
    assert_eq!(
        outline(&listing, &store.root),
        [
            "0|/--p--/a.jsonl",
            "1|/--p--/a/L/run-0/session.jsonl",
            "0|/--p--/b.jsonl",
        ]
    );
    assert_eq!(
        warnings(&listing, &store.root),
        [
            "/--p--/a/L/run-1: is a symbolic link (not followed)",
            "/--p--/a/M: is a symbolic link (not followed)",
            "/--p--/b: is a symbolic link (not followed)",
        ]
    );
    assert!(
        listing
            .warnings
            .iter()
            .all(|warning| warning.is_out_of_scope),
        "{:?}",
        listing.warnings
    );
}

#[test]
fn names_that_are_not_utf8_are_warnings_that_say_so() {
    use std::os::unix::ffi::OsStrExt;
    let dir = tempfile::tempdir().expect("temp dir");
    write(dir.path(), "--p--/a.jsonl", GOOD.as_bytes());
    let bad_file = dir
        .path()
        .join("--p--")
        .join(std::ffi::OsStr::from_bytes(b"bad\xff.jsonl"));
    std::fs::write(&bad_file, GOOD).expect("write");
    let bad_dir = dir
        .path()
        .join("--p--/a")
        .join(std::ffi::OsStr::from_bytes(b"L\xfe"));
    std::fs::create_dir_all(bad_dir.join("run-0")).expect("mkdir");
    std::fs::write(bad_dir.join("run-0/session.jsonl"), GOOD).expect("write");
    let bad_project = dir.path().join(std::ffi::OsStr::from_bytes(b"--q\xff--"));
    std::fs::create_dir_all(&bad_project).expect("mkdir");

    let store = store(dir.path());
    let listing = list_both(&store);
    assert_eq!(outline(&listing, &store.root), ["0|/--p--/a.jsonl"]);
    let reasons = warnings(&listing, &store.root);
    assert_eq!(
        reasons,
        [
            "/--p--/a/L\u{FFFD}: directory name is not valid UTF-8 (shown with U+FFFD replacements); skipped",
            "/--p--/bad\u{FFFD}.jsonl: file name is not valid UTF-8 (shown with U+FFFD replacements); skipped",
            "/--q\u{FFFD}--: directory name is not valid UTF-8 (shown with U+FFFD replacements); skipped",
        ]
    );
}

#[test]
fn missing_and_empty_roots() {
    let dir = tempfile::tempdir().expect("temp dir");
    let missing = store(&dir.path().join("nope"));
    let listing = list_both(&missing);
    assert!(listing.sessions.is_empty());
    assert_eq!(listing.warnings.len(), 1);
    assert_eq!(listing.warnings[0].path, missing.root);
    assert!(
        listing.warnings[0]
            .reason
            .starts_with("sessions root not readable:")
    );

    let empty = store(dir.path());
    assert_eq!(list_both(&empty), Listing::default());

    write(dir.path(), "file-root", b"x");
    let file_root = list_both(&store(&dir.path().join("file-root")));
    assert!(
        file_root.warnings[0]
            .reason
            .starts_with("sessions root not readable:")
    );
}

#[test]
fn relative_roots_resolve_to_absolute_paths() {
    let fixtures = fixtures().canonicalize().expect("fixtures exist");
    let store = Store::resolve(
        Path::new("./sessions/../sessions/"),
        &fixtures,
        Layout::Projects,
    )
    .expect("utf-8");
    assert_eq!(store.root, format!("{}/sessions", fixtures.display()));
    let listing = list_both(&store);
    assert!(
        listing
            .sessions
            .iter()
            .all(|session| session.path.starts_with(&store.root))
    );
}

#[test]
fn flat_layout_lists_a_custom_session_directory() {
    let dir = tempfile::tempdir().expect("temp dir");
    write(dir.path(), "a.jsonl", GOOD.as_bytes());
    write(dir.path(), "a/L/run-0/session.jsonl", GOOD.as_bytes());
    write(dir.path(), "--p--/b.jsonl", GOOD.as_bytes());
    let flat = Store::resolve(dir.path(), Path::new("/"), Layout::Flat).expect("utf-8");
    let listing = list_both(&flat);
    assert_eq!(
        outline(&listing, &flat.root),
        ["0|/a.jsonl", "1|/a/L/run-0/session.jsonl"]
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(24))]

    /// Random trees of runs: serial and parallel agree, and every file appears exactly once.
    #[test]
    fn random_run_trees_list_every_file_once(
        runs in proptest::collection::vec((0u8..3, 0u8..3, 0u8..60), 0..30)
    ) {
        let dir = tempfile::tempdir().expect("temp dir");
        write(dir.path(), "--p--/s.jsonl", GOOD.as_bytes());
        let mut expected = std::collections::BTreeSet::new();
        for (launch, run, second) in &runs {
            let nested = if second % 3 == 0 { "/session/N/run-0" } else { "" };
            let relative = format!("--p--/s/L{launch}/run-{run}{nested}/session.jsonl");
            let header = GOOD.replace("00:00:00Z", &format!("00:00:{second:02}Z"));
            write(dir.path(), &relative, header.as_bytes());
            expected.insert(relative);
        }
        let store = store(dir.path());
        let listing = list_both(&store);
        let mut seen: Vec<String> = outline(&listing, &store.root)
            .into_iter()
            .skip(1)
            .map(|line| line.split_once("|/").map(|(_, path)| path.to_owned()).unwrap_or_default())
            .collect();
        let n_seen = seen.len();
        seen.sort();
        seen.dedup();
        proptest::prop_assert_eq!(seen.len(), n_seen);
        proptest::prop_assert_eq!(seen.into_iter().collect::<std::collections::BTreeSet<_>>(), expected);
    }
}

#[test]
fn wide_launch_directories_list_every_run_in_order() {
    // A directory with many entries inside a container is visited in parallel; the
    // result must be the same as a serial walk, run for run.
    let dir = tempfile::tempdir().expect("temp dir");
    write(dir.path(), "--p--/s.jsonl", GOOD.as_bytes());
    let header_at = |second: usize| {
        GOOD.replace(
            "00:00:00Z",
            &format!("00:{:02}:{:02}Z", second / 60, second % 60),
        )
    };
    for run in 0..150 {
        write(
            dir.path(),
            &format!("--p--/s/L/run-{run}/session.jsonl"),
            header_at(run).as_bytes(),
        );
    }
    for nested in [3, 77, 149] {
        write(
            dir.path(),
            &format!("--p--/s/L/run-{nested}/session/M/run-0/session.jsonl"),
            header_at(1000 + nested).as_bytes(),
        );
    }
    for fork in 0..70 {
        write(
            dir.path(),
            &format!("--p--/s/forks/f{fork:02}.jsonl"),
            header_at(2000 + fork).as_bytes(),
        );
    }
    write(dir.path(), "--p--/s/L/run-5/session.jsonl", b"not json");
    let store = store(dir.path());
    let listing = list_both(&store);
    let rows = outline(&listing, &store.root);
    assert_eq!(rows.len(), 1 + 149 + 3 + 70, "every readable run, once");
    assert_eq!(rows[1], "1|/--p--/s/L/run-0/session.jsonl");
    assert_eq!(rows[4], "1|/--p--/s/L/run-3/session.jsonl");
    assert_eq!(rows[5], "2|/--p--/s/L/run-3/session/M/run-0/session.jsonl");
    assert_eq!(
        rows.last().map(String::as_str),
        Some("1|/--p--/s/forks/f69.jsonl")
    );
    assert_eq!(
        warnings(&listing, &store.root),
        [
            "/--p--/s/L/run-5/session.jsonl: first line is not valid JSON: expected ident at line 1 column 2"
        ]
    );
}

/// A body reader for tests: reads every byte of a file with positional reads (so the
/// descriptor's offset must not matter) and plans by the top-level session's cwd.
struct WholeBytes;

impl pi_retrospect_walk::BodyReader for WholeBytes {
    type Kind = &'static str;
    type Body = (&'static str, Vec<u8>);

    fn plan(&self, row: &pi_retrospect_core::SessionRow) -> Option<(BodyReach, &'static str)> {
        match row.header.cwd.as_str() {
            "/tree" => Some((BodyReach::Tree, "tree")),
            "/session" => Some((BodyReach::Session, "session")),
            _ => None,
        }
    }

    fn read(
        &self,
        kind: &'static str,
        _path: &str,
        file: &std::fs::File,
        _head: pi_retrospect_walk::Head<'_>,
    ) -> Self::Body {
        use std::os::unix::fs::FileExt;
        let mut bytes = vec![0u8; 4096];
        let n_read = file.read_at(&mut bytes, 0).expect("readable");
        bytes.truncate(n_read);
        (kind, bytes)
    }
}

#[test]
fn body_reads_happen_on_the_walks_descriptors_as_planned() {
    // `list --long` reads bodies where the walk read the headers. Each planned
    // transcript is read exactly once, whole, whatever the thread count; a tree planned
    // `Session` reads only its top-level file, an unplanned one nothing, a broken header
    // nothing; the listing is the plain walk's.
    let dir = tempfile::tempdir().expect("temp dir");
    let with_cwd = |cwd: &str, second: usize| {
        GOOD.replace("\"cwd\":\"/w\"", &format!("\"cwd\":\"{cwd}\""))
            .replace("00:00:00Z", &format!("00:00:{second:02}Z"))
            + "\n{\"type\":\"message\"}\n"
    };
    for (stem, cwd) in [("t", "/tree"), ("s", "/session"), ("n", "/none")] {
        write(
            dir.path(),
            &format!("--p--/{stem}.jsonl"),
            with_cwd(cwd, 0).as_bytes(),
        );
        for run in 0..70 {
            write(
                dir.path(),
                &format!("--p--/{stem}/L/run-{run}/session.jsonl"),
                with_cwd("/run", run % 60).as_bytes(),
            );
        }
    }
    write(dir.path(), "--p--/t/L/run-5/session.jsonl", b"not json");
    let store = store(dir.path());
    let mut results = Vec::new();
    for threads in [1, 4] {
        let options = WalkOptions { threads };
        let (listing, mut bodies) = pi_retrospect_walk::list_stores_with(
            std::slice::from_ref(&store),
            &options,
            &WholeBytes,
        )
        .expect("descriptors to spare");
        assert_eq!(
            listing,
            list(&store, &options).expect("descriptors to spare")
        );
        bodies.sort();
        results.push(bodies);
    }
    assert_eq!(results[0], results[1], "1 thread and 4 threads must agree");
    let bodies = &results[0];
    let planned: Vec<(&str, &str)> = bodies
        .iter()
        .map(|(path, (kind, _))| (path.strip_prefix(&store.root).unwrap_or(path), *kind))
        .collect();
    assert_eq!(planned.len(), 1 + 69 + 1, "{planned:?}");
    assert!(planned.contains(&("/--p--/t.jsonl", "tree")));
    assert!(planned.contains(&("/--p--/t/L/run-0/session.jsonl", "tree")));
    assert!(!planned.contains(&("/--p--/t/L/run-5/session.jsonl", "tree")));
    assert!(planned.contains(&("/--p--/s.jsonl", "session")));
    assert!(
        planned
            .iter()
            .all(|(path, _)| !path.starts_with("/--p--/s/"))
    );
    assert!(
        planned
            .iter()
            .all(|(path, _)| !path.starts_with("/--p--/n"))
    );
    for (path, (_, bytes)) in bodies {
        assert_eq!(bytes, &std::fs::read(path).expect("readable"), "{path}");
    }
}
