//! The committed synthetic stores must be exactly what `cargo xtask fixtures` writes.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// Returns every entry under `root` as relative path -> file bytes, symlink target, or dir.
fn snapshot(root: &Path) -> BTreeMap<String, String> {
    fn visit(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
        let mut entries: Vec<_> = fs::read_dir(dir)
            .expect("read dir")
            .map(|entry| entry.expect("entry"))
            .collect();
        entries.sort_by_key(|entry| entry.file_name());
        for entry in entries {
            let path = entry.path();
            let relative = path
                .strip_prefix(root)
                .expect("under root")
                .display()
                .to_string();
            let kind = entry.file_type().expect("file type");
            if kind.is_symlink() {
                let target = fs::read_link(&path).expect("link");
                out.insert(relative, format!("-> {}", target.display()));
            } else if kind.is_dir() {
                out.insert(relative.clone(), "dir".to_owned());
                visit(root, &path, out);
            } else {
                let bytes = fs::read(&path).expect("read");
                out.insert(relative, format!("{:?}", String::from_utf8_lossy(&bytes)));
            }
        }
    }
    let mut out = BTreeMap::new();
    visit(root, root, &mut out);
    out
}

#[test]
fn committed_fixtures_match_the_generator() {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures");
    let fresh = tempfile::tempdir().expect("temp dir");
    xtask::fixtures::write_all(fresh.path()).expect("generate");
    for store in ["sessions", "beyond/sessions", "agent"] {
        assert_eq!(
            snapshot(&committed.join(store)),
            snapshot(&fresh.path().join(store)),
            "fixtures/{store} is stale: run `cargo xtask fixtures`"
        );
    }
}
