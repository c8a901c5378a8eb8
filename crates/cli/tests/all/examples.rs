//! Every example in the README and in each command's `--help` runs as written, on
//! a copy of the committed real-Pi fixture: `$HOME/.pi/agent/sessions` holds
//! `fixtures/pi-real/sessions` with each session's cwd moved to `$HOME/repos/app`, which is
//! the current directory, so `latest`, `--here` and `~/repos/app` name those sessions, and
//! `fixtures/` there points at the committed fixtures.
//!
//! An example is the `pi-retrospect ...` (or `cargo run ... -p cli -- ...`) part of a line, up
//! to the first unquoted `|`, `>` or `#`: what comes after (`jq`, `head`, a redirect, a
//! comment) is the shell's business. It passes when the command exits 0.

use std::path::{Path, PathBuf};

use crate::common;

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("workspace")
}

/// Copies `from` into `to`, rewriting the fixture's cwd in every session file.
fn copy_store(from: &Path, to: &Path, cwd: &str) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read fixture dir") {
        let entry = entry.expect("entry");
        let target = to.join(entry.file_name());
        if entry.file_type().expect("type").is_dir() {
            copy_store(&entry.path(), &target, cwd);
        } else {
            let text = std::fs::read_to_string(entry.path()).expect("read fixture");
            let text = text.replace("/tmp/pi-real-fixture/home/user/project", cwd);
            std::fs::write(target, text).expect("write copy");
        }
    }
}

/// Returns the arguments of the command line `line` (after the program name), split as a
/// POSIX shell would, stopping at an unquoted `|`, `>` or `#`; `~/` expanded with `home`.
fn shell_words(line: &str, home: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    let mut at_word_start = true;
    while let Some(character) = chars.next() {
        match character {
            '\'' => {
                in_word = true;
                for quoted in chars.by_ref() {
                    if quoted == '\'' {
                        break;
                    }
                    word.push(quoted);
                }
            }
            '"' => {
                in_word = true;
                while let Some(quoted) = chars.next() {
                    match quoted {
                        '"' => break,
                        '\\' => word.extend(chars.next()),
                        _ => word.push(quoted),
                    }
                }
            }
            '\\' => {
                in_word = true;
                word.extend(chars.next());
            }
            '|' | '>' => break,
            '#' if at_word_start => break,
            ' ' | '\t' => {
                if in_word {
                    words.push(std::mem::take(&mut word));
                    in_word = false;
                }
                at_word_start = true;
                continue;
            }
            '~' if at_word_start && matches!(chars.peek(), Some('/') | None | Some(' ')) => {
                in_word = true;
                word.push_str(home);
            }
            _ => {
                in_word = true;
                word.push(character);
            }
        }
        at_word_start = false;
    }
    if in_word {
        words.push(word);
    }
    words
}

/// Returns the pi-retrospect command lines in `text`: lines whose first word is
/// `pi-retrospect`, or `cargo run ... -p cli -- ...` (then `pi-retrospect` plus what follows
/// `--`).
fn examples(text: &str) -> Vec<String> {
    let mut found = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        if line.starts_with("pi-retrospect ") {
            found.push(line.to_owned());
        } else if line.starts_with("cargo run ")
            && line.contains("-p cli")
            && let Some((_, rest)) = line.split_once(" -- ")
        {
            found.push(format!("pi-retrospect {rest}"));
        }
    }
    found
}

/// Returns the README's `sh` code blocks' text.
fn readme_code() -> String {
    let readme = std::fs::read_to_string(workspace().join("README.md")).expect("README.md");
    let mut code = String::new();
    let mut in_block = false;
    for line in readme.lines() {
        if line.starts_with("```") {
            in_block = line.starts_with("```sh") || line.starts_with("```bash");
            if !line.starts_with("```sh") && !line.starts_with("```bash") {
                in_block = false;
            }
            continue;
        }
        if in_block {
            code.push_str(line);
            code.push('\n');
        }
    }
    code
}

struct Sandbox {
    _dir: tempfile::TempDir,
    home: PathBuf,
    project: PathBuf,
}

fn sandbox() -> Sandbox {
    let dir = tempfile::tempdir().expect("temp dir");
    let home = dir.path().join("home");
    let project = home.join("repos/app");
    std::fs::create_dir_all(&project).expect("mkdir");
    copy_store(
        &workspace().join("fixtures/pi-real/sessions"),
        &home.join(".pi/agent/sessions"),
        project.to_str().expect("utf-8 temp dir"),
    );
    std::os::unix::fs::symlink(workspace().join("fixtures"), project.join("fixtures"))
        .expect("symlink");
    Sandbox {
        _dir: dir,
        home,
        project,
    }
}

impl Sandbox {
    fn run(&self, example: &str) -> std::process::Output {
        let home = self.home.to_str().expect("utf-8");
        // Help texts name the committed store as `$R` (`R=fixtures/pi-real/sessions`, from the
        // repository root; `fixtures/` in the project directory points there).
        let example = example.replace("$R", "fixtures/pi-real/sessions");
        let words = shell_words(&example, home);
        assert_eq!(words[0], "pi-retrospect", "{example}");
        common::binary()
            .args(&words[1..])
            .env("HOME", &self.home)
            .current_dir(&self.project)
            .output()
            .expect("run binary")
    }
}

fn check_all(sandbox: &Sandbox, examples: &[String]) {
    let mut failures = Vec::new();
    for example in examples {
        let output = sandbox.run(example);
        if !output.status.success() {
            failures.push(format!(
                "{example}\n  exit {:?}: {}",
                output.status.code(),
                String::from_utf8_lossy(&output.stderr).trim_end()
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn the_splitter_splits_like_a_shell() {
    let check = |line: &str, expected: &[&str]| {
        assert_eq!(shell_words(line, "/h"), expected, "{line}");
    };
    check(
        "pi-retrospect list --name \"flaky test\" --long",
        &["pi-retrospect", "list", "--name", "flaky test", "--long"],
    );
    check(
        "pi-retrospect list --json | jq -r '.sessions[-1].path'   # newest",
        &["pi-retrospect", "list", "--json"],
    );
    check(
        "pi-retrospect list --cwd ~/repos/app  # a comment",
        &["pi-retrospect", "list", "--cwd", "/h/repos/app"],
    );
    check(
        "pi-retrospect completions zsh > ~/.zfunc/_pi-retrospect",
        &["pi-retrospect", "completions", "zsh"],
    );
    check(
        "pi-retrospect x a#b 'it''s'",
        &["pi-retrospect", "x", "a#b", "its"],
    );
}

#[test]
fn every_readme_example_runs() {
    let examples = examples(&readme_code());
    assert!(examples.len() >= 10, "{examples:?}");
    check_all(&sandbox(), &examples);
}

#[test]
fn every_help_example_runs() {
    let sandbox = sandbox();
    let top = sandbox.run("pi-retrospect --help");
    let top = String::from_utf8(top.stdout).expect("utf-8");
    let commands: Vec<String> = top
        .lines()
        .skip_while(|line| !line.starts_with("Commands:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .filter(|line| line.as_bytes().get(2).is_some_and(|byte| *byte != b' '))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|command| *command != "help")
        .map(str::to_owned)
        .collect();
    for command in ["list", "show", "inspect", "entries", "completions"] {
        assert!(
            commands.iter().any(|found| found == command),
            "{commands:?}"
        );
    }
    let mut all = examples(&top);
    for command in &commands {
        let output = sandbox.run(&format!("pi-retrospect {command} --help"));
        assert!(output.status.success(), "{command} --help");
        let help = String::from_utf8(output.stdout).expect("utf-8");
        let found = examples(&help);
        if ["list", "show", "inspect", "entries", "completions"].contains(&command.as_str()) {
            assert!(!found.is_empty(), "{command} --help has no examples");
        }
        all.extend(found);
    }
    check_all(&sandbox, &all);
}

/// Returns the lines of the "Examples:" section of `help`, trimmed.
fn example_section(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|line| !line.starts_with("Examples:"))
        .skip(1)
        .take_while(|line| line.starts_with("  "))
        .map(|line| line.trim().to_owned())
        .collect()
}

/// The completion examples, in `completions --help` and in the
/// README, run as written by a shell on a fresh `$HOME` (they wrote into directories that do
/// not exist there), and each writes its script.
#[test]
fn completion_examples_run_in_a_shell_on_a_fresh_home() {
    let binary_dir = Path::new(env!("CARGO_BIN_EXE_pi-retrospect"))
        .parent()
        .expect("binary dir")
        .to_owned();
    let path = format!(
        "{}:{}",
        binary_dir.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let help = common::binary()
        .args(["completions", "--help"])
        .output()
        .expect("run binary");
    let help = String::from_utf8(help.stdout).expect("utf-8");
    let readme = readme_code();
    let readme_lines: Vec<String> = readme
        .lines()
        .filter(|line| line.contains("completions") || line.starts_with("mkdir -p ~"))
        .map(str::to_owned)
        .collect();
    for (source, lines) in [("--help", example_section(&help)), ("README", readme_lines)] {
        assert!(lines.len() >= 6, "{source}: {lines:?}");
        let home = tempfile::tempdir().expect("temp dir");
        let output = std::process::Command::new("sh")
            .args(["-e", "-c", &lines.join("\n")])
            .env("HOME", home.path())
            .env("PATH", &path)
            .output()
            .expect("run sh");
        assert!(
            output.status.success(),
            "{source}: {}",
            String::from_utf8_lossy(&output.stderr)
        );
        for script in [
            ".local/share/bash-completion/completions/pi-retrospect",
            ".zfunc/_pi-retrospect",
            ".config/fish/completions/pi-retrospect.fish",
        ] {
            let written = std::fs::metadata(home.path().join(script)).map(|meta| meta.len());
            assert!(
                written.as_ref().is_ok_and(|len| *len > 0),
                "{source}: {script} {written:?}"
            );
        }
    }
}
