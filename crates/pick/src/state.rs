//! The picker's state machine: what is listed and selected, what the person typed, what is
//! still loading; keys in, [`Command`]s out. Pure apart from one check that a directory
//! exists, so every behaviour is tested without a terminal.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};

use pi_retrospect_app::picker::{Preview, redact};
use pi_retrospect_core::SessionSummary;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use crate::fuzzy::Fuzzy;
use crate::index::Index;

/// Which sessions are listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scope {
    /// Only those whose cwd is the current directory.
    Here,
    /// Every project's.
    All,
}

/// One visible line of the list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Row {
    /// The entry shown.
    pub entry: usize,
    /// How many of its runs are not shown under it.
    pub n_hidden_runs: usize,
}

/// What the preview pane has for a session.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum PreviewSlot {
    /// Asked for, not read yet.
    Loading,
    /// Read.
    Ready(Box<Preview>),
    /// Could not be read: why.
    Failed(String),
}

/// The text around a full-text search's first match in a session: one line, terminal-safe
/// (the search's snippet), with where the match sits in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundText {
    /// The snippet.
    pub snippet: String,
    /// The match's byte range in `snippet`.
    pub range: std::ops::Range<usize>,
}

impl FoundText {
    /// Returns the found text of `hit`, its credentials redacted as the rows' titles are.
    pub fn of(hit: &pi_retrospect_core::search::SearchHit) -> FoundText {
        match hit.snippet_parts() {
            Some((before, found, after)) => {
                let before = redact(before).text;
                let found = redact(found).text;
                let after = redact(after).text;
                FoundText {
                    range: before.len()..before.len() + found.len(),
                    snippet: format!("{before}{found}{after}"),
                }
            }
            None => FoundText {
                snippet: redact(&hit.snippet).text,
                range: 0..0,
            },
        }
    }
}

/// A full-text search and what it found so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FullText {
    /// The text searched for.
    pub term: String,
    /// Which search this is; results of older ones are dropped.
    pub generation: u64,
    /// The entries whose text holds the term.
    pub matched: HashSet<usize>,
    /// The text around the first match of each matched entry, shown on its row.
    pub texts: HashMap<usize, FoundText>,
    /// Files searched so far.
    pub n_done: usize,
    /// Files to search.
    pub n_total: usize,
    /// Whether every file has been searched.
    pub is_done: bool,
}

/// What the person is doing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mode {
    /// Moving through the list and typing a filter.
    Browse,
    /// Told that Pi resumes the session in its own directory, not here, and asked whether to
    /// resume it there or fork it into here.
    Confirm {
        /// The session file.
        path: String,
        /// The session's cwd.
        cwd: String,
    },
}

/// What the event loop must do after a key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Command {
    /// Nothing beyond drawing again.
    Nothing,
    /// Leave without choosing.
    Quit,
    /// Leave and print the session's path (`--print`).
    Print(String),
    /// Leave and resume the session in Pi, in `cwd`.
    Resume {
        /// The session file.
        path: String,
        /// The directory to run Pi in.
        cwd: PathBuf,
        /// Fork it into `cwd` (`pi --fork`) instead of resuming it (`pi --session`).
        is_fork: bool,
    },
    /// Show the session's transcript in the pager, then come back.
    Page(String),
    /// Start a full-text search (and drop any older one).
    Search {
        /// The text to find.
        term: String,
        /// The search's generation.
        generation: u64,
    },
    /// Stop the running full-text search.
    StopSearch,
}

/// How far the background reads have got.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Loading {
    /// Whether every project has been listed (else only the current directory's).
    pub is_index_complete: bool,
    /// Body facts read.
    pub n_summaries_done: usize,
    /// Body facts to read.
    pub n_summaries_total: usize,
}

/// Previews kept at most; the oldest are forgotten beyond this.
const MAX_PREVIEWS: usize = 256;

/// The whole state of the picker.
#[derive(Debug)]
pub(crate) struct State {
    /// Every known session and run.
    pub index: Index,
    /// The current directory, as sessions' cwds are compared with it.
    pub here: String,
    /// Which sessions are listed.
    pub scope: Scope,
    /// Whether the person chose the scope (then it is never switched for them).
    has_chosen_scope: bool,
    /// The filter typed.
    pub query: String,
    /// The full-text search shown, if any.
    pub full_text: Option<FullText>,
    /// Sessions whose runs are shown (by path, so they survive a new index).
    expanded: HashSet<String>,
    /// What is listed, top to bottom.
    pub rows: Vec<Row>,
    /// How many top-level sessions are in scope.
    pub n_in_scope: usize,
    /// How many top-level sessions are listed.
    pub n_listed: usize,
    /// The selected row.
    pub selected: usize,
    /// The first row drawn.
    pub offset: usize,
    /// Rows the list shows at once (set when drawing).
    pub page_rows: usize,
    /// Matched character positions of the rows drawn, by entry.
    pub highlights: HashMap<usize, Vec<u32>>,
    /// What the person is doing.
    pub mode: Mode,
    /// A message for the status line, until the next key.
    pub status: Option<String>,
    /// How far loading has got.
    pub loading: Loading,
    /// Previews read or asked for, by path.
    pub previews: HashMap<String, PreviewSlot>,
    /// Whether Enter prints the path instead of resuming.
    pub is_print: bool,
    generation: u64,
}

impl State {
    /// Returns the state for `index` (the current directory's sessions, or all) listed in
    /// `scope`.
    pub fn new(index: Index, here: String, scope: Scope, is_print: bool) -> State {
        let mut state = State {
            index,
            here,
            scope,
            has_chosen_scope: scope == Scope::All,
            query: String::new(),
            full_text: None,
            expanded: HashSet::new(),
            rows: Vec::new(),
            n_in_scope: 0,
            n_listed: 0,
            selected: 0,
            offset: 0,
            page_rows: 10,
            highlights: HashMap::new(),
            mode: Mode::Browse,
            status: None,
            loading: Loading::default(),
            previews: HashMap::new(),
            is_print,
            generation: 0,
        };
        state.recompute();
        state
    }

    /// Returns the selected entry.
    pub fn selected_entry(&self) -> Option<usize> {
        self.rows.get(self.selected).map(|row| row.entry)
    }

    /// Returns the selected session's path.
    pub fn selected_path(&self) -> Option<&str> {
        self.selected_entry()
            .map(|idx| self.index.entries[idx].path.as_str())
    }

    /// Returns the path whose preview should be read now: the selected one, when it has
    /// none yet.
    pub fn wanted_preview(&self) -> Option<String> {
        let path = self.selected_path()?;
        (!self.previews.contains_key(path)).then(|| path.to_owned())
    }

    /// Records that the preview of `path` was asked for.
    pub fn preview_requested(&mut self, path: String) {
        if self.previews.len() >= MAX_PREVIEWS {
            self.previews
                .retain(|_, slot| matches!(slot, PreviewSlot::Loading));
        }
        self.previews.insert(path, PreviewSlot::Loading);
    }

    /// Records a preview read in the background.
    pub fn preview_read(&mut self, path: String, slot: PreviewSlot) {
        self.previews.insert(path, slot);
    }

    /// Forgets a preview that was asked for and skipped, so it is asked for again when its
    /// session is selected again.
    pub fn preview_skipped(&mut self, path: &str) {
        if self.previews.get(path) == Some(&PreviewSlot::Loading) {
            self.previews.remove(path);
        }
    }

    /// Replaces the index (the whole store listed after the current directory's part),
    /// keeping the selection, the expanded sessions and any body facts already read.
    pub fn replace_index(&mut self, mut index: Index, is_complete: bool) {
        let selected_path = self.selected_path().map(str::to_owned);
        for entry in &self.index.entries {
            if let Some(idx) = index.find(&entry.path)
                && entry.has_summary
            {
                let target = &mut index.entries[idx];
                target.has_summary = true;
                target.haystack.clone_from(&entry.haystack);
                target.fields = entry.fields.clone();
            }
        }
        let matched_paths: Option<Vec<(String, Option<FoundText>)>> =
            self.full_text.as_ref().map(|full_text| {
                full_text
                    .matched
                    .iter()
                    .map(|&idx| {
                        (
                            self.index.entries[idx].path.clone(),
                            full_text.texts.get(&idx).cloned(),
                        )
                    })
                    .collect()
            });
        self.index = index;
        if let (Some(full_text), Some(paths)) = (&mut self.full_text, matched_paths) {
            full_text.matched.clear();
            full_text.texts.clear();
            for (path, text) in paths {
                if let Some(idx) = self.index.find(&path) {
                    full_text.matched.insert(idx);
                    if let Some(text) = text {
                        full_text.texts.insert(idx, text);
                    }
                }
            }
        }
        self.loading.is_index_complete = is_complete;
        self.recompute_keeping(selected_path);
        if is_complete
            && self.scope == Scope::Here
            && !self.has_chosen_scope
            && self.n_in_scope == 0
        {
            self.scope = Scope::All;
            self.status = Some("No sessions were started here: showing all projects".to_owned());
            self.recompute();
        }
    }

    /// Records body facts read in the background.
    pub fn add_summaries(&mut self, summaries: &[(String, SessionSummary)]) {
        for (path, summary) in summaries {
            self.index.set_summary(path, summary);
        }
        self.loading.n_summaries_done += summaries.len();
        if !Fuzzy::new(&self.query).is_empty() {
            self.recompute();
        }
        self.highlights.clear();
    }

    /// Records that full-text search `generation` reads about `n_total` files (the sessions
    /// and runs known now; the search lists the store again).
    pub fn search_started(&mut self, generation: u64, n_total: usize) {
        if let Some(full_text) = &mut self.full_text
            && full_text.generation == generation
        {
            full_text.n_total = n_total;
        }
    }

    /// Records that full-text search `generation` failed.
    pub fn search_failed(&mut self, generation: u64, reason: &str) {
        if let Some(full_text) = &mut self.full_text
            && full_text.generation == generation
        {
            full_text.is_done = true;
            self.status = Some(format!("full-text search failed: {reason}"));
        }
    }

    /// Records the progress of full-text search `generation`: newly matched paths and files
    /// searched so far.
    pub fn search_progress(
        &mut self,
        generation: u64,
        matched: &[(String, Option<FoundText>)],
        n_done: usize,
        is_done: bool,
    ) {
        let Some(full_text) = &mut self.full_text else {
            return;
        };
        if full_text.generation != generation {
            return;
        }
        for (path, text) in matched {
            if let Some(idx) = self.index.find(path) {
                full_text.matched.insert(idx);
                if let Some(text) = text {
                    full_text.texts.insert(idx, text.clone());
                }
            }
        }
        full_text.n_done = n_done;
        full_text.n_total = full_text.n_total.max(n_done);
        full_text.is_done = is_done;
        if !matched.is_empty() {
            self.recompute();
        }
    }

    /// Rebuilds the visible rows from the index, the scope, the filter or full-text search,
    /// and the expanded sessions, keeping the selected session selected when it is still
    /// listed.
    fn recompute(&mut self) {
        let selected_path = self.selected_path().map(str::to_owned);
        self.recompute_keeping(selected_path);
    }

    /// Rebuilds the visible rows like [`State::recompute`], selecting `selected_path` when it
    /// is listed.
    fn recompute_keeping(&mut self, selected_path: Option<String>) {
        let mut fuzzy = Fuzzy::new(&self.query);
        let is_filtering = self.full_text.is_some() || !fuzzy.is_empty();
        let mut kept: Vec<(u32, Vec<Row>)> = Vec::new();
        self.n_in_scope = 0;
        for &top in &self.index.tops {
            if self.scope == Scope::Here && self.index.entries[top].cwd != self.here {
                continue;
            }
            self.n_in_scope += 1;
            let mut rows = Vec::new();
            if is_filtering {
                if let Some(score) = self.matching_rows(top, &mut fuzzy, &mut rows) {
                    kept.push((score, rows));
                }
            } else {
                self.expanded_rows(top, &mut rows);
                kept.push((0, rows));
            }
        }
        if !fuzzy.is_empty() && self.full_text.is_none() {
            // Stable: equal scores keep the newest first.
            kept.sort_by_key(|kept| std::cmp::Reverse(kept.0));
        }
        self.n_listed = kept.len();
        self.rows = kept.into_iter().flat_map(|(_, rows)| rows).collect();
        self.highlights.clear();
        self.selected = selected_path
            .and_then(|path| {
                self.rows
                    .iter()
                    .position(|row| self.index.entries[row.entry].path == path)
            })
            .unwrap_or(0);
    }

    /// Pushes the row of `idx` and, when it is expanded, its runs' rows.
    fn expanded_rows(&self, idx: usize, rows: &mut Vec<Row>) {
        let entry = &self.index.entries[idx];
        let is_expanded = self.expanded.contains(&entry.path);
        rows.push(Row {
            entry: idx,
            n_hidden_runs: if is_expanded { 0 } else { entry.children.len() },
        });
        if is_expanded {
            for &child in &entry.children {
                self.expanded_rows(child, rows);
            }
        }
    }

    /// Pushes the rows of the entries under `idx` (itself included) that match, with the
    /// entries between them and `idx`; returns the best score, `None` when nothing matches.
    fn matching_rows(&self, idx: usize, fuzzy: &mut Fuzzy, rows: &mut Vec<Row>) -> Option<u32> {
        let entry = &self.index.entries[idx];
        let own = match &self.full_text {
            Some(full_text) => full_text.matched.contains(&idx).then_some(0),
            None => fuzzy.score(entry.filter_text(&self.query)),
        };
        let at = rows.len();
        rows.push(Row {
            entry: idx,
            n_hidden_runs: 0,
        });
        let mut best = own;
        let mut n_shown = 0;
        for &child in &entry.children {
            if let Some(score) = self.matching_rows(child, fuzzy, rows) {
                n_shown += 1;
                best = Some(best.map_or(score, |best| best.max(score)));
            }
        }
        if best.is_none() {
            rows.truncate(at);
            return None;
        }
        rows[at].n_hidden_runs = entry.children.len() - n_shown;
        best
    }

    /// Scrolls so that the selected row is among the `page_rows` rows drawn, and finds the
    /// matched characters of those rows. Called before every draw.
    pub fn prepare(&mut self, page_rows: usize) {
        self.page_rows = page_rows.max(1);
        if self.selected < self.offset {
            self.offset = self.selected;
        } else if self.selected >= self.offset + self.page_rows {
            self.offset = self.selected + 1 - self.page_rows;
        }
        let max_offset = self.rows.len().saturating_sub(self.page_rows);
        self.offset = self.offset.min(max_offset);
        if self.full_text.is_some() {
            self.highlights.clear();
            return;
        }
        let mut fuzzy = Fuzzy::new(&self.query);
        if fuzzy.is_empty() {
            self.highlights.clear();
            return;
        }
        let end = (self.offset + self.page_rows).min(self.rows.len());
        for row in &self.rows[self.offset..end] {
            if !self.highlights.contains_key(&row.entry) {
                let indices = fuzzy
                    .indices(self.index.entries[row.entry].filter_text(&self.query))
                    .unwrap_or_default();
                self.highlights.insert(row.entry, indices);
            }
        }
    }

    /// Handles one key and returns what the event loop must do.
    pub fn handle_key(&mut self, key: KeyEvent) -> Command {
        if key.kind == KeyEventKind::Release {
            return Command::Nothing;
        }
        let is_control = key.modifiers.contains(KeyModifiers::CONTROL);
        if is_control && key.code == KeyCode::Char('c') {
            return Command::Quit;
        }
        self.status = None;
        if let Mode::Confirm { path, cwd } = &self.mode {
            let (path, cwd) = (path.clone(), cwd.clone());
            return match key.code {
                KeyCode::Char('y' | 'Y') | KeyCode::Enter => Command::Resume {
                    path,
                    cwd: PathBuf::from(cwd),
                    is_fork: false,
                },
                KeyCode::Char('f' | 'F') => Command::Resume {
                    path,
                    cwd: PathBuf::from(&self.here),
                    is_fork: true,
                },
                KeyCode::Char('n' | 'N') | KeyCode::Esc => {
                    self.mode = Mode::Browse;
                    Command::Nothing
                }
                _ => Command::Nothing,
            };
        }
        match (key.code, is_control) {
            (KeyCode::Esc, _) => {
                if self.full_text.is_some() {
                    self.full_text = None;
                    self.recompute();
                    Command::StopSearch
                } else {
                    Command::Quit
                }
            }
            (KeyCode::Enter, _) => self.choose(),
            (KeyCode::Up, _) | (KeyCode::Char('p' | 'k'), true) => self.move_by(-1),
            (KeyCode::Down, _) | (KeyCode::Char('n' | 'j'), true) => self.move_by(1),
            (KeyCode::PageUp, _) => self.move_by(-page(self.page_rows)),
            (KeyCode::PageDown, _) => self.move_by(page(self.page_rows)),
            (KeyCode::Home, _) => self.move_by(isize::MIN / 2),
            (KeyCode::End, _) => self.move_by(isize::MAX / 2),
            (KeyCode::Right, _) => self.expand(),
            (KeyCode::Left, _) => self.collapse(),
            (KeyCode::Tab | KeyCode::BackTab, _) => {
                self.scope = match self.scope {
                    Scope::Here => Scope::All,
                    Scope::All => Scope::Here,
                };
                self.has_chosen_scope = true;
                self.recompute();
                Command::Nothing
            }
            (KeyCode::Char('f'), true) => self.search(),
            (KeyCode::Char('o'), true) => match self.selected_path() {
                Some(path) => Command::Page(path.to_owned()),
                None => Command::Nothing,
            },
            (KeyCode::Char('u'), true) => self.edit_query(String::clear),
            (KeyCode::Char('w'), true) => self.edit_query(|query| {
                let kept = query.trim_end().rfind(' ').map_or(0, |space| space + 1);
                query.truncate(kept);
            }),
            (KeyCode::Backspace, _) => self.edit_query(|query| {
                query.pop();
            }),
            (KeyCode::Char(character), false)
                if !key.modifiers.contains(KeyModifiers::ALT) && !character.is_control() =>
            {
                self.edit_query(|query| query.push(character))
            }
            _ => Command::Nothing,
        }
    }

    fn move_by(&mut self, delta: isize) -> Command {
        let last = self.rows.len().saturating_sub(1);
        let target = self.selected.saturating_add_signed(delta).min(last);
        self.selected = target;
        Command::Nothing
    }

    fn expand(&mut self) -> Command {
        let Some(idx) = self.selected_entry() else {
            return Command::Nothing;
        };
        let entry = &self.index.entries[idx];
        if entry.children.is_empty() {
            return Command::Nothing;
        }
        let is_shown = self
            .rows
            .get(self.selected + 1)
            .is_some_and(|next| self.index.entries[next.entry].parent == Some(idx));
        if is_shown {
            self.selected += 1;
        } else if self.is_filtering() {
            self.status = Some("Clear the filter to see every run".to_owned());
        } else {
            self.expanded.insert(entry.path.clone());
            self.recompute();
        }
        Command::Nothing
    }

    fn collapse(&mut self) -> Command {
        let Some(idx) = self.selected_entry() else {
            return Command::Nothing;
        };
        let entry = &self.index.entries[idx];
        if !self.is_filtering() && self.expanded.remove(&entry.path) {
            self.recompute();
            return Command::Nothing;
        }
        if let Some(parent) = entry.parent
            && let Some(row) = self.rows.iter().position(|row| row.entry == parent)
        {
            self.selected = row;
        }
        Command::Nothing
    }

    fn is_filtering(&self) -> bool {
        self.full_text.is_some() || !self.query.trim().is_empty()
    }

    fn choose(&mut self) -> Command {
        let Some(idx) = self.selected_entry() else {
            return Command::Nothing;
        };
        let entry = &self.index.entries[idx];
        if self.is_print {
            return Command::Print(entry.path.clone());
        }
        // Pi runs a resumed session in the directory it recorded, whatever the current one
        // is; when that directory is gone, Pi itself asks what to do, so the picker does not
        // ask first.
        if entry.cwd == self.here || !Path::new(&entry.cwd).is_dir() {
            return Command::Resume {
                path: entry.path.clone(),
                cwd: PathBuf::from(&self.here),
                is_fork: false,
            };
        }
        self.mode = Mode::Confirm {
            path: entry.path.clone(),
            cwd: entry.cwd.clone(),
        };
        Command::Nothing
    }

    fn search(&mut self) -> Command {
        let term = self.query.trim().to_owned();
        if term.is_empty() {
            self.status = Some("Type the text to find, then press Ctrl-F".to_owned());
            return Command::Nothing;
        }
        self.generation += 1;
        self.full_text = Some(FullText {
            term: term.clone(),
            generation: self.generation,
            matched: HashSet::new(),
            texts: HashMap::new(),
            n_done: 0,
            n_total: 0,
            is_done: false,
        });
        self.selected = 0;
        self.recompute();
        Command::Search {
            term,
            generation: self.generation,
        }
    }

    fn edit_query(&mut self, edit: impl FnOnce(&mut String)) -> Command {
        let before = self.query.clone();
        edit(&mut self.query);
        if self.query == before {
            return Command::Nothing;
        }
        let had_search = self.full_text.take().is_some();
        self.recompute();
        self.selected = 0;
        if had_search {
            Command::StopSearch
        } else {
            Command::Nothing
        }
    }
}

/// Returns a page's worth of rows as a signed step.
fn page(page_rows: usize) -> isize {
    isize::try_from(page_rows.max(1)).unwrap_or(1)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::index::tests::session;
    use pi_retrospect_core::Listing;

    /// Returns a key press.
    pub fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    /// Returns a key press with Ctrl.
    pub fn ctrl(character: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(character), KeyModifiers::CONTROL)
    }

    /// Returns the presses that type `text`.
    pub fn typed(text: &str) -> Vec<KeyEvent> {
        text.chars().map(|c| key(KeyCode::Char(c))).collect()
    }

    /// The test store: three sessions in `/w` (one with two runs, one of them with a run of
    /// its own), two in `/x`; names on some.
    pub fn sample_state(is_print: bool) -> State {
        let listing = Listing {
            sessions: vec![
                session(
                    "0001aaaa",
                    1,
                    "/w",
                    vec![
                        session(
                            "0002bbbb",
                            2,
                            "/w",
                            vec![session("0003cccc", 3, "/w", vec![])],
                        ),
                        session("0004dddd", 4, "/w", vec![]),
                    ],
                ),
                session("0005eeee", 5, "/x", vec![]),
                session("0006ffff", 6, "/w", vec![]),
                session("0007gggg", 7, "/x", vec![]),
                session("0008hhhh", 8, "/w", vec![]),
            ],
            warnings: Vec::new(),
        };
        let mut state = State::new(
            Index::from_listing(&listing),
            "/w".to_owned(),
            Scope::Here,
            is_print,
        );
        state.replace_index(Index::from_listing(&listing), true);
        let facts = [
            ("0001aaaa", Some("fix the parser"), "the parser drops lines"),
            ("0002bbbb", None, "Summarize README.md in one line."),
            ("0003cccc", None, "Count the files"),
            ("0004dddd", None, "Review the parser tests"),
            ("0005eeee", Some("release notes"), "write the release notes"),
            ("0006ffff", None, "why is CI red"),
            ("0007gggg", None, "plan the parser rewrite"),
            ("0008hhhh", Some("bump deps"), "update every dependency"),
        ];
        let summaries: Vec<(String, SessionSummary)> = facts
            .iter()
            .map(|(id, name, first)| {
                (
                    format!("/s/{id}.jsonl"),
                    SessionSummary {
                        name: name.map(str::to_owned),
                        first_user_message: Some((*first).to_owned()),
                        last_activity: None,
                        last_activity_unknown: None,
                    },
                )
            })
            .collect();
        state.add_summaries(&summaries);
        state
    }

    /// Returns the listed rows as `id` indented by depth, with `+N` for hidden runs.
    pub fn listed(state: &State) -> Vec<String> {
        state
            .rows
            .iter()
            .map(|row| {
                let entry = &state.index.entries[row.entry];
                let hidden = if row.n_hidden_runs > 0 {
                    format!(" +{}", row.n_hidden_runs)
                } else {
                    String::new()
                };
                format!("{}{}{hidden}", "  ".repeat(entry.depth), &entry.id[..4])
            })
            .collect()
    }

    fn press_all(state: &mut State, keys: &[KeyEvent]) -> Vec<Command> {
        keys.iter().map(|&key| state.handle_key(key)).collect()
    }

    /// A hit's text keeps the match marked where it now sits, and its credentials are
    /// redacted as the rows' titles are.
    #[test]
    fn found_text_redacts_and_keeps_the_match() {
        let snippet = "export API_KEY=sk-abcdef0123456789abcdef01 then the needle";
        let start = snippet.find("needle").expect("needle");
        let hit = pi_retrospect_core::search::SearchHit {
            path: "/s/a.jsonl".to_owned(),
            depth: 0,
            line_no: 3,
            entry_id: None,
            timestamp: None,
            entry_type: "message".to_owned(),
            role: Some("user".to_owned()),
            field: pi_retrospect_core::search::FieldKind::User,
            tool_name: None,
            model: None,
            is_on_active_branch: true,
            snippet: snippet.to_owned(),
            match_range: pi_retrospect_core::search::MatchRange {
                start,
                end: start + "needle".len(),
            },
            n_matches: 1,
        };
        let found = FoundText::of(&hit);
        assert!(!found.snippet.contains("sk-abcdef"), "{found:?}");
        assert!(found.snippet.contains("[redacted"), "{found:?}");
        assert_eq!(&found.snippet[found.range.clone()], "needle");
    }

    #[test]
    fn keys_drive_the_list() {
        // (keys, rows listed, selected session id, last command)
        let cases: Vec<(Vec<KeyEvent>, Vec<&str>, &str, Command)> = vec![
            (
                vec![],
                vec!["0008", "0006", "0001 +2"],
                "0008",
                Command::Nothing,
            ),
            (
                vec![key(KeyCode::Tab)],
                vec!["0008", "0007", "0006", "0005", "0001 +2"],
                "0008",
                Command::Nothing,
            ),
            (
                vec![key(KeyCode::Down), key(KeyCode::Down), key(KeyCode::Right)],
                vec!["0008", "0006", "0001", "  0002 +1", "  0004"],
                "0001",
                Command::Nothing,
            ),
            (
                vec![
                    key(KeyCode::End),
                    key(KeyCode::Right),
                    key(KeyCode::Right),
                    key(KeyCode::Right),
                    key(KeyCode::Right),
                ],
                vec!["0008", "0006", "0001", "  0002", "    0003", "  0004"],
                "0003",
                Command::Nothing,
            ),
            (
                vec![
                    key(KeyCode::End),
                    key(KeyCode::Right),
                    key(KeyCode::Right),
                    key(KeyCode::Left),
                    key(KeyCode::Left),
                ],
                vec!["0008", "0006", "0001 +2"],
                "0001",
                Command::Nothing,
            ),
            (
                typed("parser"),
                vec!["0001 +1", "  0004"],
                "0001",
                Command::Nothing,
            ),
            (
                [vec![key(KeyCode::Tab)], typed("parser")].concat(),
                vec!["0007", "0001 +1", "  0004"],
                "0007",
                Command::Nothing,
            ),
            (
                typed("count"),
                vec!["0001 +1", "  0002", "    0003"],
                "0001",
                Command::Nothing,
            ),
            (typed("zzzz"), vec![], "", Command::Nothing),
            (
                [typed("zzzz"), vec![ctrl('u')]].concat(),
                vec!["0008", "0006", "0001 +2"],
                "0008",
                Command::Nothing,
            ),
            (
                [typed("bump d"), vec![ctrl('w')]].concat(),
                vec!["0008"],
                "0008",
                Command::Nothing,
            ),
            (
                vec![key(KeyCode::Down), key(KeyCode::Up), key(KeyCode::Up)],
                vec!["0008", "0006", "0001 +2"],
                "0008",
                Command::Nothing,
            ),
            (
                vec![ctrl('f')],
                vec!["0008", "0006", "0001 +2"],
                "0008",
                Command::Nothing,
            ),
            (
                vec![key(KeyCode::Esc)],
                vec!["0008", "0006", "0001 +2"],
                "0008",
                Command::Quit,
            ),
            (
                vec![key(KeyCode::Down), ctrl('o')],
                vec!["0008", "0006", "0001 +2"],
                "0006",
                Command::Page("/s/0006ffff.jsonl".to_owned()),
            ),
            (
                vec![ctrl('c')],
                vec!["0008", "0006", "0001 +2"],
                "0008",
                Command::Quit,
            ),
        ];
        for (keys, rows, selected, command) in cases {
            let mut state = sample_state(false);
            let commands = press_all(&mut state, &keys);
            let last = commands.last().cloned().unwrap_or(Command::Nothing);
            let selected_id = state
                .selected_entry()
                .map_or("", |idx| &state.index.entries[idx].id[..4]);
            assert_eq!(listed(&state), rows, "{keys:?}");
            assert_eq!(selected_id, selected, "{keys:?}");
            assert_eq!(last, command, "{keys:?}");
        }
    }

    /// Pi resumes `--session PATH` in the session's recorded directory,
    /// so the picker offers to resume it there or to fork it into here (`pi --fork`), and
    /// asks nothing when that directory is gone (Pi asks then).
    #[test]
    fn enter_resumes_prints_or_asks() {
        let listing = Listing {
            sessions: vec![
                session("0001aaaa", 1, "/", vec![]),
                session("0002bbbb", 2, "/nonexistent-dir-of-a-test", vec![]),
                session("0003cccc", 3, "/w", vec![]),
            ],
            warnings: Vec::new(),
        };
        let resume = |id: &str, cwd: &str, is_fork: bool| Command::Resume {
            path: format!("/s/{id}.jsonl"),
            cwd: PathBuf::from(cwd),
            is_fork,
        };
        let asked = Mode::Confirm {
            path: "/s/0001aaaa.jsonl".to_owned(),
            cwd: "/".to_owned(),
        };
        let down = |n: usize| vec![key(KeyCode::Down); n];
        // (print mode, keys, last command, mode after)
        let cases: Vec<(bool, Vec<KeyEvent>, Command, Mode)> = vec![
            (
                false,
                vec![key(KeyCode::Enter)],
                resume("0003cccc", "/w", false),
                Mode::Browse,
            ),
            (
                true,
                [down(2), vec![key(KeyCode::Enter)]].concat(),
                Command::Print("/s/0001aaaa.jsonl".to_owned()),
                Mode::Browse,
            ),
            (
                false,
                [down(2), vec![key(KeyCode::Enter)]].concat(),
                Command::Nothing,
                asked.clone(),
            ),
            (
                false,
                [down(2), vec![key(KeyCode::Enter), key(KeyCode::Char('y'))]].concat(),
                resume("0001aaaa", "/", false),
                asked.clone(),
            ),
            (
                false,
                [down(2), vec![key(KeyCode::Enter), key(KeyCode::Char('f'))]].concat(),
                resume("0001aaaa", "/w", true),
                asked.clone(),
            ),
            (
                false,
                [down(2), vec![key(KeyCode::Enter), key(KeyCode::Char('h'))]].concat(),
                Command::Nothing,
                asked,
            ),
            (
                false,
                [down(2), vec![key(KeyCode::Enter), key(KeyCode::Esc)]].concat(),
                Command::Nothing,
                Mode::Browse,
            ),
            // The session's directory is gone: Pi is started here and asks itself.
            (
                false,
                [down(1), vec![key(KeyCode::Enter)]].concat(),
                resume("0002bbbb", "/w", false),
                Mode::Browse,
            ),
            (
                false,
                [typed("zzzz"), vec![key(KeyCode::Enter)]].concat(),
                Command::Nothing,
                Mode::Browse,
            ),
        ];
        for (is_print, keys, command, mode) in cases {
            let mut state = State::new(
                Index::from_listing(&listing),
                "/w".to_owned(),
                Scope::All,
                is_print,
            );
            let commands = press_all(&mut state, &keys);
            assert_eq!(commands.last(), Some(&command), "{keys:?}");
            assert_eq!(state.mode, mode, "{keys:?}");
        }
    }

    #[test]
    fn full_text_search_lists_what_it_found() {
        let mut state = sample_state(false);
        press_all(&mut state, &typed("needle"));
        assert_eq!(listed(&state), Vec::<String>::new());
        assert_eq!(
            state.handle_key(ctrl('f')),
            Command::Search {
                term: "needle".to_owned(),
                generation: 1
            }
        );
        assert_eq!(listed(&state), Vec::<String>::new());
        // A stale generation is dropped; a run that matches shows under its session.
        state.search_started(1, 8);
        state.search_progress(0, &[("/s/0006ffff.jsonl".to_owned(), None)], 1, false);
        assert_eq!(listed(&state), Vec::<String>::new());
        state.search_progress(1, &[("/s/0003cccc.jsonl".to_owned(), None)], 4, false);
        assert_eq!(
            state
                .full_text
                .as_ref()
                .map(|search| (search.n_done, search.n_total)),
            Some((4, 8))
        );
        state.search_progress(1, &[("/s/0008hhhh.jsonl".to_owned(), None)], 8, true);
        assert_eq!(listed(&state), ["0008", "0001 +1", "  0002", "    0003"]);
        // Esc leaves the search, then quits.
        assert_eq!(state.handle_key(key(KeyCode::Esc)), Command::StopSearch);
        assert_eq!(listed(&state), Vec::<String>::new());
        assert_eq!(state.handle_key(key(KeyCode::Esc)), Command::Quit);
    }

    #[test]
    fn typing_during_a_search_stops_it() {
        let mut state = sample_state(false);
        press_all(&mut state, &typed("parser"));
        state.handle_key(ctrl('f'));
        assert_eq!(
            state.handle_key(key(KeyCode::Backspace)),
            Command::StopSearch
        );
        assert!(state.full_text.is_none());
        assert_eq!(state.query, "parse");
    }

    #[test]
    fn an_empty_directory_switches_to_all_projects_once_listed() {
        let listing = Listing {
            sessions: vec![session("0001aaaa", 1, "/x", vec![])],
            warnings: Vec::new(),
        };
        let mut state = State::new(Index::default(), "/w".to_owned(), Scope::Here, false);
        assert_eq!(state.rows.len(), 0);
        state.replace_index(Index::from_listing(&listing), true);
        assert_eq!(state.scope, Scope::All);
        assert_eq!(state.rows.len(), 1);
        assert!(state.status.is_some());
    }

    #[test]
    fn selection_and_facts_survive_a_new_index() {
        let mut state = sample_state(false);
        state.handle_key(key(KeyCode::Down));
        let selected = state.selected_path().map(str::to_owned);
        let listing = Listing {
            sessions: vec![
                session("0006ffff", 6, "/w", vec![]),
                session("0009iiii", 9, "/w", vec![]),
            ],
            warnings: Vec::new(),
        };
        state.replace_index(Index::from_listing(&listing), true);
        assert_eq!(state.selected_path().map(str::to_owned), selected);
        assert_eq!(listed(&state), ["0009", "0006"]);
        let idx = state.index.find("/s/0006ffff.jsonl").expect("kept");
        assert_eq!(
            state.index.entries[idx].first_message(),
            Some("why is CI red")
        );
    }

    #[test]
    fn scrolling_keeps_the_selection_drawn() {
        let mut state = sample_state(false);
        state.handle_key(key(KeyCode::Tab));
        // (page rows, keys, offset)
        let cases = [(2, 0, 0), (2, 3, 2), (2, 4, 3), (10, 4, 0)];
        for (page_rows, n_down, offset) in cases {
            state.selected = 0;
            state.offset = 0;
            state.prepare(page_rows);
            for _ in 0..n_down {
                state.handle_key(key(KeyCode::Down));
            }
            state.prepare(page_rows);
            assert_eq!(state.offset, offset, "{page_rows} {n_down}");
        }
    }
}
