//! `cargo xtask layering`: checks the workspace's dependency graph against the layering table of
//! ARCHITECTURE.md, so the table is the one statement of which crate may use which.
//!
//! The table is an allow-list: a crate's normal dependencies among ours must be in its "may
//! depend on (ours)" column (`everything` allows any, `nothing` none). Its "never on" column
//! names external crates (and ours) that may not be reached through normal dependencies at
//! all, `no crate but X depends on it` restricts who may depend on the crate, and `no crate
//! depends on it` makes it dev-only (a test kit: any crate's tests may use it, no library or
//! binary). Text in parentheses is commentary and ignored. Dev-dependencies and
//! build-dependencies are not checked: tests and examples may use more than the library does.

use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::Path;

use anyhow::{Context, bail};

/// One row of the layering table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The crate's short name as the table spells it (`core`, `cli`).
    pub name: String,
    /// Our crates it may depend on directly; `None` when the table says `everything`.
    pub allowed: Option<BTreeSet<String>>,
    /// Crates (ours by short name, external by package name) it may never reach.
    pub never: BTreeSet<String>,
    /// When set, only these crates of ours may depend on it (through normal dependencies;
    /// empty: none, a dev-only crate).
    pub only_dependents: Option<BTreeSet<String>>,
}

/// The normal-dependency graph of the workspace, by package name.
#[derive(Debug, Clone, Default)]
pub struct Graph {
    /// Our crates: package name to short name (`pi-retrospect-core` to `core`).
    pub ours: BTreeMap<String, String>,
    /// Every package's normal dependencies, by package name.
    pub edges: BTreeMap<String, BTreeSet<String>>,
}

impl Graph {
    /// Returns the package name of our crate called `short` in the table.
    fn package_of(&self, short: &str) -> Option<&str> {
        self.ours
            .iter()
            .find(|(_, name)| *name == short)
            .map(|(package, _)| package.as_str())
    }

    /// Returns every package `package` reaches through normal dependencies, itself excluded.
    fn reachable(&self, package: &str) -> BTreeSet<String> {
        let mut seen = BTreeSet::new();
        let mut queue = VecDeque::from([package.to_string()]);
        while let Some(next) = queue.pop_front() {
            for dependency in self.edges.get(&next).into_iter().flatten() {
                if seen.insert(dependency.clone()) {
                    queue.push_back(dependency.clone());
                }
            }
        }
        seen
    }
}

/// Returns the rows of the first table under the `## Layering` heading of `markdown`.
pub fn parse_table(markdown: &str) -> anyhow::Result<Vec<Rule>> {
    let section = markdown
        .split("\n## ")
        .find(|section| section.starts_with("Layering"))
        .context("ARCHITECTURE.md has no `## Layering` section")?;
    let rows: Vec<Vec<&str>> = section
        .lines()
        .map(str::trim)
        .skip_while(|line| !line.starts_with('|'))
        .take_while(|line| line.starts_with('|'))
        .map(|line| {
            line.trim_matches('|')
                .split('|')
                .map(str::trim)
                .collect::<Vec<_>>()
        })
        .collect();
    let header = rows.first().context("the Layering section has no table")?;
    let column = |title: &str| {
        header
            .iter()
            .position(|cell| cell.eq_ignore_ascii_case(title))
            .with_context(|| format!("the layering table has no {title:?} column"))
    };
    let (name_column, allowed_column, never_column) = (
        column("crate")?,
        column("may depend on (ours)")?,
        column("never on")?,
    );
    let mut rules = Vec::new();
    for row in rows.iter().skip(2) {
        let cell = |index: usize| row.get(index).copied().unwrap_or("");
        let names = backticked(cell(name_column));
        let [name] = names.as_slice() else {
            bail!(
                "a layering row names no single crate: {:?}",
                row.join(" | ")
            );
        };
        let allowed_text = without_parentheses(cell(allowed_column));
        let allowed = match allowed_text.trim() {
            "everything" => None,
            "nothing" => Some(BTreeSet::new()),
            text => Some(backticked(text).into_iter().collect()),
        };
        let mut never = BTreeSet::new();
        let mut only_dependents = None;
        for clause in without_parentheses(cell(never_column)).split(';') {
            let clause = clause.trim();
            if clause == "no crate depends on it" {
                only_dependents = Some(BTreeSet::new());
                continue;
            }
            if let Some(rest) = clause.strip_prefix("no crate but") {
                only_dependents = Some(backticked(rest).into_iter().collect());
                continue;
            }
            for item in clause.split(',').map(str::trim) {
                if item.is_empty() || item == "every other crate of ours" {
                    continue;
                }
                let item = item.trim_matches('`');
                if !item
                    .chars()
                    .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
                {
                    bail!("cannot read {item:?} in the \"never on\" cell of `{name}`");
                }
                never.insert(item.to_string());
            }
        }
        rules.push(Rule {
            name: name.clone(),
            allowed,
            never,
            only_dependents,
        });
    }
    Ok(rules)
}

/// Returns every way `graph` breaks `rules`, one sentence each; empty when it keeps them.
pub fn check(rules: &[Rule], graph: &Graph) -> Vec<String> {
    let mut problems = Vec::new();
    let listed: BTreeSet<&str> = rules.iter().map(|rule| rule.name.as_str()).collect();
    for short in graph.ours.values() {
        if !listed.contains(short.as_str()) {
            problems.push(format!(
                "`{short}` is a crate of the workspace but has no row in the layering table"
            ));
        }
    }
    for rule in rules {
        let Some(package) = graph.package_of(&rule.name) else {
            problems.push(format!(
                "the layering table lists `{}`, which is not a crate of the workspace",
                rule.name
            ));
            continue;
        };
        let direct = graph.edges.get(package).cloned().unwrap_or_default();
        if let Some(allowed) = &rule.allowed {
            for dependency in &direct {
                let Some(short) = graph.ours.get(dependency) else {
                    continue;
                };
                if !allowed.contains(short) {
                    problems.push(format!(
                        "`{}` depends on `{short}`, which its row does not allow (may depend \
                         on: {})",
                        rule.name,
                        list_or_nothing(allowed)
                    ));
                }
            }
        }
        let reachable = graph.reachable(package);
        for never in &rule.never {
            let target = graph.package_of(never).unwrap_or(never);
            if !graph.edges.contains_key(target) {
                problems.push(format!(
                    "the \"never on\" cell of `{}` names `{never}`, which no package of the \
                     workspace's graph is called (a misspelling would make the rule empty)",
                    rule.name
                ));
            } else if reachable.contains(target) {
                problems.push(format!("`{}` depends on `{never}`, directly or through another crate, which its row forbids", rule.name));
            }
        }
        if let Some(dependents) = &rule.only_dependents {
            for (other_package, other) in &graph.ours {
                let depends = graph
                    .edges
                    .get(other_package)
                    .is_some_and(|edges| edges.contains(package));
                if depends && dependents.is_empty() {
                    problems.push(format!(
                        "`{other}` depends on `{}`, which no crate may depend on (a \
                         dev-dependency only)",
                        rule.name
                    ));
                } else if depends && !dependents.contains(other) {
                    problems.push(format!(
                        "`{other}` depends on `{}`, which only {} may depend on",
                        rule.name,
                        list_or_nothing(dependents)
                    ));
                }
            }
        }
    }
    problems
}

/// Returns the graph of normal dependencies that `cargo metadata`'s JSON describes; our crates
/// are the workspace members under `crates/` (not `xtask` or `benches`).
pub fn graph_from_metadata(metadata: &serde_json::Value) -> anyhow::Result<Graph> {
    let root = metadata["workspace_root"]
        .as_str()
        .context("cargo metadata has no workspace_root")?;
    let crates_dir = Path::new(root).join("crates");
    let packages = metadata["packages"]
        .as_array()
        .context("cargo metadata has no packages")?;
    let mut names_by_id = BTreeMap::new();
    let mut graph = Graph::default();
    let members: BTreeSet<&str> = metadata["workspace_members"]
        .as_array()
        .context("cargo metadata has no workspace_members")?
        .iter()
        .filter_map(serde_json::Value::as_str)
        .collect();
    for package in packages {
        let (Some(id), Some(name), Some(manifest)) = (
            package["id"].as_str(),
            package["name"].as_str(),
            package["manifest_path"].as_str(),
        ) else {
            bail!("cargo metadata lists a package without id, name or manifest_path");
        };
        names_by_id.insert(id.to_string(), name.to_string());
        if members.contains(id) && Path::new(manifest).starts_with(&crates_dir) {
            let short = name.strip_prefix("pi-retrospect-").unwrap_or(name);
            graph.ours.insert(name.to_string(), short.to_string());
        }
    }
    let nodes = metadata["resolve"]["nodes"]
        .as_array()
        .context("cargo metadata has no resolve graph (was it run with --no-deps?)")?;
    for node in nodes {
        let id = node["id"].as_str().context("a resolve node without id")?;
        let name = names_by_id
            .get(id)
            .with_context(|| format!("resolve node {id} is not among the packages"))?;
        let edges = graph.edges.entry(name.clone()).or_default();
        for dependency in node["deps"].as_array().into_iter().flatten() {
            let is_normal = dependency["dep_kinds"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|kind| kind["kind"].is_null());
            if !is_normal {
                continue;
            }
            let target = dependency["pkg"]
                .as_str()
                .and_then(|pkg| names_by_id.get(pkg))
                .with_context(|| format!("a dependency of {name} is not among the packages"))?;
            edges.insert(target.clone());
        }
    }
    Ok(graph)
}

/// `cargo xtask layering`: reads ARCHITECTURE.md and `cargo metadata` and fails on any
/// dependency the table does not allow.
pub fn run(workspace: &Path) -> anyhow::Result<()> {
    let architecture = workspace.join("ARCHITECTURE.md");
    let markdown = std::fs::read_to_string(&architecture)
        .with_context(|| format!("cannot read {}", architecture.display()))?;
    let rules = parse_table(&markdown)?;
    let output = std::process::Command::new(std::env::var("CARGO").unwrap_or("cargo".into()))
        .args(["metadata", "--format-version", "1", "--locked"])
        .current_dir(workspace)
        .output()
        .context("cannot run cargo metadata")?;
    if !output.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).context("cargo metadata wrote no JSON")?;
    let graph = graph_from_metadata(&metadata)?;
    let problems = check(&rules, &graph);
    if !problems.is_empty() {
        for problem in &problems {
            eprintln!("layering: {problem}");
        }
        bail!(
            "{} layering violation(s) of ARCHITECTURE.md's table",
            problems.len()
        );
    }
    println!(
        "ok: {} crates keep ARCHITECTURE.md's layering table",
        rules.len()
    );
    Ok(())
}

/// Returns `text` without its parenthesised remarks.
fn without_parentheses(text: &str) -> String {
    let mut depth = 0usize;
    let mut kept = String::new();
    for c in text.chars() {
        match c {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            _ if depth == 0 => kept.push(c),
            _ => {}
        }
    }
    kept
}

/// Returns the words between backticks in `text`.
fn backticked(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

/// Returns `names` as `` `a`, `b` ``, or `nothing`.
fn list_or_nothing(names: &BTreeSet<String>) -> String {
    if names.is_empty() {
        return "nothing".to_string();
    }
    names
        .iter()
        .map(|name| format!("`{name}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "# Title\n\n## Layering\n\nSome words.\n\n\
        | crate | may depend on (ours) | never on |\n\
        | --- | --- | --- |\n\
        | `core` | nothing | every other crate of ours, rayon (no threads) |\n\
        | `walk` | `core` (its types) | clap |\n\
        | `mcp` | `core`, `walk` | clap; no crate but `cli` depends on it |\n\
        | `cli` | everything | |\n\
        | `kit` | nothing | rayon; no crate depends on it (tests only) |\n\n\
        ## Next\n";

    fn graph(edges: &[(&str, &[&str])]) -> Graph {
        let mut graph = Graph::default();
        for short in ["core", "walk", "mcp", "cli", "kit"] {
            let package = if short == "cli" {
                short.to_string()
            } else {
                format!("pi-retrospect-{short}")
            };
            graph.ours.insert(package.clone(), short.to_string());
            graph.edges.entry(package).or_default();
        }
        for name in ["rayon", "clap"] {
            graph.edges.entry(name.to_string()).or_default();
        }
        for (from, to) in edges {
            graph
                .edges
                .entry(from.to_string())
                .or_default()
                .extend(to.iter().map(|name| name.to_string()));
        }
        graph
    }

    #[test]
    fn reads_the_columns_and_leaves_out_remarks() {
        let rules = parse_table(TABLE).expect("the test table parses");
        let names: Vec<_> = rules.iter().map(|rule| rule.name.as_str()).collect();
        assert_eq!(names, ["core", "walk", "mcp", "cli", "kit"]);
        assert_eq!(rules[0].allowed, Some(BTreeSet::new()));
        assert_eq!(rules[0].never, BTreeSet::from(["rayon".to_string()]));
        assert_eq!(rules[1].allowed, Some(BTreeSet::from(["core".to_string()])));
        assert_eq!(
            rules[2].only_dependents,
            Some(BTreeSet::from(["cli".to_string()]))
        );
        assert_eq!(rules[3].allowed, None);
        assert_eq!(rules[4].only_dependents, Some(BTreeSet::new()));
    }

    #[test]
    fn a_graph_that_keeps_the_table_passes() {
        let rules = parse_table(TABLE).expect("the test table parses");
        let graph = graph(&[
            ("pi-retrospect-walk", &["pi-retrospect-core", "rayon"]),
            ("pi-retrospect-mcp", &["pi-retrospect-walk"]),
            ("cli", &["pi-retrospect-mcp", "clap"]),
        ]);
        assert_eq!(check(&rules, &graph), Vec::<String>::new());
    }

    #[test]
    fn each_kind_of_violation_is_named() {
        let rules = parse_table(TABLE).expect("the test table parses");
        let cases: &[(&str, &[&str], &str)] = &[
            (
                "pi-retrospect-core",
                &["pi-retrospect-walk"],
                "`core` depends on `walk`",
            ),
            (
                "pi-retrospect-walk",
                &["pi-retrospect-mcp"],
                "`walk` depends on `mcp`",
            ),
            (
                "pi-retrospect-core",
                &["some-crate"],
                "no row in the layering table",
            ),
            (
                "pi-retrospect-walk",
                &["clap"],
                "`walk` depends on `clap`, directly or through another crate",
            ),
        ];
        for (from, to, expected) in cases {
            let mut graph = graph(&[(from, to)]);
            if to.contains(&"some-crate") {
                graph
                    .ours
                    .insert("some-crate".to_string(), "some-crate".to_string());
            }
            let problems = check(&rules, &graph);
            assert!(
                problems.iter().any(|problem| problem.contains(expected)),
                "{from} -> {to:?}: {problems:?}"
            );
        }
    }

    #[test]
    fn a_forbidden_crate_reached_through_another_is_found() {
        let rules = parse_table(TABLE).expect("the test table parses");
        let graph = graph(&[("pi-retrospect-core", &["helper"]), ("helper", &["rayon"])]);
        let problems = check(&rules, &graph);
        assert!(
            problems
                .iter()
                .any(|problem| problem.contains("`core` depends on `rayon`")),
            "{problems:?}"
        );
    }

    #[test]
    fn only_the_named_dependents_may_use_a_crate() {
        let rules = parse_table(TABLE).expect("the test table parses");
        let problems = check(
            &rules,
            &graph(&[("pi-retrospect-walk", &["pi-retrospect-mcp"])]),
        );
        assert!(
            problems
                .iter()
                .any(|problem| problem.contains("only `cli` may depend on")),
            "{problems:?}"
        );
    }

    #[test]
    fn a_dev_only_crate_is_no_crates_normal_dependency() {
        let rules = parse_table(TABLE).expect("the test table parses");
        let problems = check(&rules, &graph(&[("cli", &["pi-retrospect-kit"])]));
        assert!(
            problems
                .iter()
                .any(|problem| problem
                    .contains("`cli` depends on `kit`, which no crate may depend on")),
            "{problems:?}"
        );
        // As a dev-dependency it is not in the graph of normal dependencies at all.
        assert_eq!(check(&rules, &graph(&[])), Vec::<String>::new());
    }

    #[test]
    fn a_misspelt_forbidden_crate_is_an_error() {
        let table = TABLE.replace("clap |", "clapp |");
        let rules = parse_table(&table).expect("the test table parses");
        let problems = check(&rules, &graph(&[]));
        assert!(
            problems
                .iter()
                .any(|problem| problem.contains("names `clapp`")),
            "{problems:?}"
        );
    }
}
