//! The event loop: the first screen from the current directory's sessions, then keys and
//! background reports in, redraws out, until the person chooses or leaves.

use std::fs::File;
use std::io::{self, Write};
use std::os::fd::AsRawFd;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use pi_retrospect_app::Environment;
use pi_retrospect_core::order::{SortKey, SortOrder};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{self, Event, KeyEvent};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGWINCH};

use crate::error::PickError;
use crate::external::{DEFAULT_PAGER, page, read_transcript, write_transcript};
use crate::index::Index;
use crate::state::{Command, Scope, State};
use crate::terminal::{Screen, is_gone, open_tty, restore_after_panic};
use crate::view::{Theme, ViewContext, draw};
use crate::worker::{Message, Workers};
use crate::{Outcome, PickOptions};

/// How long the loop waits for a key before looking at the background reports.
const TICK: Duration = Duration::from_millis(40);

/// How often the watchdog looks at the loop.
const WATCH: Duration = Duration::from_millis(100);

/// How long the watchdog lets a loop that should stop (a signal, a terminal gone) go on
/// without progress before it ends the process itself.
const GRACE: Duration = Duration::from_secs(1);

/// What the event loop got from the terminal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Input {
    /// A key.
    Key(KeyEvent),
    /// The terminal changed size.
    Resize,
    /// The terminal is gone: end of file, or it hung up.
    Closed,
}

/// The terminal as the event loop sees it: the real one over `/dev/tty`, or a test's.
pub(crate) trait Console {
    /// Draws the whole picker.
    fn draw(&mut self, state: &mut State, context: &ViewContext<'_>) -> io::Result<()>;
    /// Waits at most `timeout` for input and returns what arrived (nothing on a timeout).
    fn read(&mut self, timeout: Duration) -> io::Result<Vec<Input>>;
    /// Returns the width of the terminal in columns.
    fn width(&mut self) -> io::Result<u16>;
    /// Hands the terminal to `pager`, `feed` writing the text into it as it shows it, then
    /// takes it back; returns why the text could not be shown.
    fn page(
        &mut self,
        pager: &str,
        pager_env: &[(String, String)],
        feed: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> Result<(), String>;
}

/// The signals that end the picker, and the loop's pulse, shared with the watchdog.
#[derive(Debug, Default)]
pub(crate) struct Signals {
    /// The last of SIGINT, SIGTERM, SIGHUP received (0: none).
    received: Arc<AtomicUsize>,
    /// Set by SIGWINCH.
    resized: Arc<AtomicBool>,
    /// Counts the loop's turns, so the watchdog can tell a stuck loop.
    heartbeat: AtomicU64,
    /// Set when the loop has returned.
    is_done: AtomicBool,
    /// Set while a pager has the terminal: Ctrl-C there reaches the whole foreground group,
    /// the pager takes it (less cancels a search) and the picker lets it pass.
    is_paging: AtomicBool,
}

impl Signals {
    /// Returns the signals, their handlers registered.
    fn registered() -> Signals {
        let signals = Signals::default();
        for signal in [SIGTERM, SIGHUP, SIGINT] {
            // Without the handler a signal still ends the process; only the terminal's
            // restoration would be lost, so a failure to register is not worth refusing to
            // start.
            let value = usize::try_from(signal).unwrap_or(usize::MAX);
            let _ = signal_hook::flag::register_usize(signal, Arc::clone(&signals.received), value);
        }
        let _ = signal_hook::flag::register(SIGWINCH, Arc::clone(&signals.resized));
        signals
    }

    /// Returns the signal received, if any.
    fn pending(&self) -> Option<i32> {
        let received = self.received.load(Ordering::SeqCst);
        (received != 0).then(|| i32::try_from(received).unwrap_or(SIGTERM))
    }

    /// Returns the signal received, if any, that should end the picker: a SIGINT that
    /// arrived while a pager had the terminal was the pager's.
    fn ending(&self) -> Option<i32> {
        self.pending()
            .filter(|&signal| !(signal == SIGINT && self.is_paging.load(Ordering::SeqCst)))
    }

    /// Runs `page` with the paging mark set, and forgets a SIGINT that arrived meanwhile.
    fn paging<T>(&self, page: impl FnOnce() -> T) -> T {
        let before = self.received.load(Ordering::SeqCst);
        self.is_paging.store(true, Ordering::SeqCst);
        let result = page();
        let sigint = usize::try_from(SIGINT).unwrap_or(usize::MAX);
        if before != sigint {
            let _ =
                self.received
                    .compare_exchange(sigint, before, Ordering::SeqCst, Ordering::SeqCst);
        }
        self.is_paging.store(false, Ordering::SeqCst);
        result
    }

    /// Records one more turn of the loop.
    fn beat(&self) {
        self.heartbeat.fetch_add(1, Ordering::SeqCst);
    }
}

/// Runs the picker on the terminal until the person chooses a session or leaves.
pub fn pick(options: &PickOptions, env: &Environment) -> Result<Outcome, PickError> {
    let tty = open_tty()?;
    let mut state = first_state(options, env)?;
    let context = ViewContext {
        theme: Theme {
            paint: options.paint,
        },
        time_zone: &env.time_zone,
    };
    let signals = Arc::new(Signals::registered());
    let mut console = TtyConsole::new(Screen::enter(tty.try_clone()?)?, tty.try_clone()?)?;
    console.draw(&mut state, &context)?;
    watch(tty, Arc::clone(&signals));
    let mut workers = Workers::new();
    let mut request = in_resume_order(&options.list);
    request.read_summaries = false;
    workers.start_index(request, env.clone(), state.here.clone());
    let outcome = event_loop(
        &mut console,
        &mut state,
        &mut workers,
        options,
        env,
        &context,
        &signals,
    );
    signals.is_done.store(true, Ordering::SeqCst);
    workers.stop();
    if matches!(outcome, Ok(Outcome::TerminalLost)) || is_gone(&console.tty) {
        // Nothing can be restored on a terminal that is gone, and ratatui's terminal, when
        // dropped, would try to show the cursor and print its failure to a standard error
        // that is gone too, which panics: the process is about to end, so it is never dropped.
        let _ = console.screen.suspend();
        std::mem::forget(console);
        return outcome;
    }
    console.screen.suspend()?;
    outcome
}

/// Runs the event loop on `console` until the person chooses or leaves, a signal arrives or
/// the terminal goes away.
fn event_loop(
    console: &mut dyn Console,
    state: &mut State,
    workers: &mut Workers,
    options: &PickOptions,
    env: &Environment,
    context: &ViewContext<'_>,
    signals: &Signals,
) -> Result<Outcome, PickError> {
    loop {
        signals.beat();
        if let Some(signal) = signals.pending() {
            return Ok(Outcome::Interrupted { signal });
        }
        if let Some(path) = state.wanted_preview() {
            state.preview_requested(path.clone());
            workers.request_preview(path, env);
        }
        let mut is_dirty = signals.resized.swap(false, Ordering::SeqCst);
        // An error reading the terminal means it is unusable: leave as when it is closed.
        let inputs = console.read(TICK).unwrap_or_else(|_| vec![Input::Closed]);
        for input in inputs {
            is_dirty = true;
            let key = match input {
                Input::Closed => return Ok(Outcome::TerminalLost),
                Input::Resize => continue,
                Input::Key(key) => key,
            };
            match state.handle_key(key) {
                Command::Nothing => {}
                Command::Quit => return Ok(Outcome::Cancelled),
                Command::Print(path) => return Ok(Outcome::Chosen(path)),
                Command::Resume { path, cwd, is_fork } => {
                    return Ok(Outcome::Resume { path, cwd, is_fork });
                }
                Command::Page(path) => {
                    // Reading a large session takes a while: say so before the screen waits.
                    state.status = Some("Opening the transcript…".to_owned());
                    console.draw(state, context)?;
                    let width = usize::from(console.width()?);
                    state.status = match read_transcript(&path, env) {
                        Ok(result) => {
                            let pager = options.pager.as_deref().unwrap_or(DEFAULT_PAGER);
                            // Written into the pager as it is made.
                            let mut feed = |out: &mut dyn Write| {
                                write_transcript(out, &result, env, options.paint, width)
                            };
                            signals
                                .paging(|| console.page(pager, &options.pager_env, &mut feed))
                                .err()
                        }
                        Err(error) => Some(error.to_string()),
                    };
                }
                Command::Search { term, generation } => {
                    state.search_started(generation, state.index.entries.len());
                    let mut request = options.list.clone();
                    request.read_summaries = false;
                    workers.start_search(&term, generation, request, env.clone());
                }
                Command::StopSearch => workers.stop_search(),
            }
        }
        while let Ok(message) = workers.receiver.try_recv() {
            is_dirty = true;
            apply(state, message);
        }
        if is_dirty {
            console.draw(state, context)?;
        }
    }
}

/// The real terminal: ratatui over `/dev/tty`, and the terminal's input waited for here and
/// only then read by crossterm, whose reader loops for ever on a terminal that hung up.
struct TtyConsole {
    screen: Screen,
    tty: File,
    poll: mio::Poll,
    events: mio::Events,
}

impl TtyConsole {
    fn new(screen: Screen, tty: File) -> io::Result<TtyConsole> {
        let poll = mio::Poll::new()?;
        poll.registry().register(
            &mut mio::unix::SourceFd(&tty.as_raw_fd()),
            mio::Token(0),
            mio::Interest::READABLE,
        )?;
        Ok(TtyConsole {
            screen,
            tty,
            poll,
            events: mio::Events::with_capacity(4),
        })
    }
}

impl Console for TtyConsole {
    fn draw(&mut self, state: &mut State, context: &ViewContext<'_>) -> io::Result<()> {
        self.screen
            .terminal
            .draw(|frame| draw(frame, state, context))
            .map(|_| ())
    }

    fn read(&mut self, timeout: Duration) -> io::Result<Vec<Input>> {
        if is_gone(&self.tty) {
            return Ok(vec![Input::Closed]);
        }
        match self.poll.poll(&mut self.events, Some(timeout)) {
            Ok(()) => {}
            // A signal: the loop looks at it.
            Err(error) if error.kind() == io::ErrorKind::Interrupted => return Ok(Vec::new()),
            Err(error) => return Err(error),
        }
        let mut is_readable = false;
        for ready in &self.events {
            if ready.is_read_closed() || ready.is_error() {
                return Ok(vec![Input::Closed]);
            }
            is_readable |= ready.is_readable();
        }
        let mut inputs = Vec::new();
        // Edge-triggered: everything crossterm has is taken now.
        while is_readable && !is_gone(&self.tty) && event::poll(Duration::ZERO)? {
            match event::read()? {
                Event::Key(key) => inputs.push(Input::Key(key)),
                Event::Resize(..) => inputs.push(Input::Resize),
                _ => {}
            }
        }
        Ok(inputs)
    }

    fn width(&mut self) -> io::Result<u16> {
        Ok(self.screen.terminal.size()?.width)
    }

    fn page(
        &mut self,
        pager: &str,
        pager_env: &[(String, String)],
        feed: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
    ) -> Result<(), String> {
        let describe = |error: io::Error| format!("cannot run {pager}: {error}");
        self.screen.suspend().map_err(describe)?;
        let paged = page(pager, pager_env, &self.tty, feed);
        self.screen.resume().map_err(describe)?;
        paged.map(|_| ())
    }
}

/// Watches the loop from a thread of its own: when a signal has arrived or the terminal is
/// gone and the loop makes no progress for [`GRACE`] (stuck inside the terminal library),
/// gives the terminal back if it is still there and ends the process by that signal
/// (SIGHUP for a terminal gone), as if the picker had no handler.
fn watch(tty: File, signals: Arc<Signals>) {
    // Without the watchdog the loop still ends on every signal it gets to see, so a thread
    // that cannot be started is not worth refusing to start.
    let _ = std::thread::Builder::new()
        .name("pick-watchdog".to_owned())
        .spawn(move || {
            let mut stuck: Option<(u64, Instant)> = None;
            loop {
                std::thread::sleep(WATCH);
                if signals.is_done.load(Ordering::SeqCst) {
                    return;
                }
                let signal = signals.ending();
                let is_terminal_gone = is_gone(&tty);
                if signal.is_none() && !is_terminal_gone {
                    stuck = None;
                    continue;
                }
                let beat = signals.heartbeat.load(Ordering::SeqCst);
                match stuck {
                    Some((seen, since)) if seen == beat => {
                        if since.elapsed() >= GRACE && !signals.is_done.load(Ordering::SeqCst) {
                            if !is_terminal_gone {
                                restore_after_panic();
                            }
                            end_by(signal.unwrap_or(SIGHUP));
                        }
                    }
                    _ => stuck = Some((beat, Instant::now())),
                }
            }
        });
}

/// Ends the process by `signal`'s default action (so the shell sees 128 + the signal), or
/// with that status if the signal cannot be raised.
fn end_by(signal: i32) -> ! {
    let _ = signal_hook::low_level::emulate_default_handler(signal);
    std::process::exit(128 + signal)
}

/// Returns the state of the first screen: the current directory's sessions, listed without
/// walking the rest of the store.
fn first_state(options: &PickOptions, env: &Environment) -> Result<State, PickError> {
    let quick = pi_retrospect_app::picker::list_here(&in_resume_order(&options.list), env)?;
    let here = here(env);
    let scope = if options.all_projects {
        Scope::All
    } else {
        Scope::Here
    };
    let index = Index::from_listing(&quick.listing);
    Ok(State::new(index, here, scope, options.print))
}

/// Returns `list` ordered as Pi's `/resume` orders sessions: by last activity, so the picker
/// opens on the session worked in most recently (the index puts the listing's last first).
fn in_resume_order(list: &pi_retrospect_app::ListRequest) -> pi_retrospect_app::ListRequest {
    pi_retrospect_app::ListRequest {
        order: SortOrder::by(SortKey::Activity),
        ..list.clone()
    }
}

/// Returns the current directory as sessions' cwds are compared with it.
fn here(env: &Environment) -> String {
    let cwd = env.cwd.to_string_lossy();
    pi_retrospect_core::path::normalize_absolute(&cwd)
}

/// Applies one background report to the state.
fn apply(state: &mut State, message: Message) {
    match message {
        Message::Index { index, n_to_read } => {
            state.loading.n_summaries_total = n_to_read;
            state.loading.n_summaries_done = 0;
            state.replace_index(index, true);
        }
        Message::IndexFailed(reason) => {
            state.loading.is_index_complete = true;
            state.status = Some(format!("cannot list all projects: {reason}"));
        }
        Message::Summaries(summaries) => state.add_summaries(&summaries),
        Message::Preview(path, slot) => state.preview_read(path, slot),
        Message::PreviewSkipped(path) => state.preview_skipped(&path),
        Message::Search {
            generation,
            matched,
            n_done,
            is_done,
        } => state.search_progress(generation, &matched, n_done, is_done),
        Message::SearchFailed { generation, reason } => state.search_failed(generation, &reason),
    }
}

/// Draws the picker's first screen (the current directory's sessions, nothing read in the
/// background yet) into a `width` x `height` buffer: what [`pick`] shows before the first
/// key, without a terminal. For benchmarks and tests.
pub fn first_screen(
    options: &PickOptions,
    env: &Environment,
    width: u16,
    height: u16,
) -> Result<Buffer, PickError> {
    let mut state = first_state(options, env)?;
    let context = ViewContext {
        theme: Theme {
            paint: options.paint,
        },
        time_zone: &env.time_zone,
    };
    let mut terminal =
        Terminal::new(TestBackend::new(width, height)).map_err(|error| PickError::Terminal {
            error: std::io::Error::other(error.to_string()),
        })?;
    terminal
        .draw(|frame| draw(frame, &mut state, &context))
        .map_err(|error| PickError::Terminal {
            error: std::io::Error::other(error.to_string()),
        })?;
    Ok(terminal.backend().buffer().clone())
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use ratatui::crossterm::event::KeyCode;

    use super::*;
    use crate::state::tests::{key, sample_state};
    use pi_retrospect_testkit::{Block, Entry, Header, Message, write_session_file};

    /// The first screen is in Pi's `/resume` order: a session started early and worked in
    /// last comes first, and is the one selected.
    #[test]
    fn the_first_screen_opens_on_the_most_recently_active_session() {
        let dir = tempfile::tempdir().expect("temp dir");
        let project = dir.path().join("--w--");
        std::fs::create_dir_all(&project).expect("project dir");
        let session = |stem: &str, id: &str, start: &str, last: &str, text: &str| {
            let header = Header::new(id)
                .timestamp(&format!("2026-11-30T{start}.000Z"))
                .cwd("/w");
            let lines = [
                Entry::message(Message::user(text))
                    .id("u1")
                    .parent(None)
                    .at(&format!("2026-11-30T{start}.500Z")),
                Entry::message(Message::assistant(&[Block::text("ok")]))
                    .id("a1")
                    .parent(Some("u1"))
                    .at(&format!("2026-11-30T{last}.000Z")),
            ];
            write_session_file(&project.join(format!("{stem}.jsonl")), &header, lines);
        };
        session(
            "early",
            "0199aaaa",
            "08:00:00",
            "18:00:00",
            "started early, worked in last",
        );
        session("late", "0199bbbb", "12:00:00", "12:01:00", "started late");
        let env = Environment {
            cwd: "/w".into(),
            ..Environment::default()
        };
        let options = PickOptions {
            list: pi_retrospect_app::ListRequest {
                stores: pi_retrospect_app::StoreFlags {
                    sessions_root: Some(dir.path().to_path_buf()),
                    ..pi_retrospect_app::StoreFlags::default()
                },
                ..pi_retrospect_app::ListRequest::default()
            },
            ..PickOptions::default()
        };
        let state = first_state(&options, &env).expect("first screen");
        let paths: Vec<&str> = state
            .rows
            .iter()
            .map(|row| state.index.entries[row.entry].path.as_str())
            .collect();
        assert_eq!(paths.len(), 2, "{paths:?}");
        assert!(paths[0].ends_with("early.jsonl"), "{paths:?}");
        assert_eq!(state.selected_path(), Some(paths[0]));
    }

    #[test]
    fn ctrl_c_in_the_pager_is_the_pagers_and_other_signals_stay() {
        let as_usize = |signal: i32| usize::try_from(signal).expect("signal numbers are positive");
        let signals = Signals::default();
        signals.paging(|| {
            signals.received.store(as_usize(SIGINT), Ordering::SeqCst);
            // The watchdog does not take it for the picker's while the pager runs.
            assert_eq!(signals.ending(), None);
        });
        assert_eq!(
            signals.pending(),
            None,
            "a SIGINT while paging is forgotten"
        );

        signals.paging(|| signals.received.store(as_usize(SIGTERM), Ordering::SeqCst));
        assert_eq!(
            signals.pending(),
            Some(SIGTERM),
            "SIGTERM while paging still ends"
        );

        let signals = Signals::default();
        signals.received.store(as_usize(SIGINT), Ordering::SeqCst);
        signals.paging(|| ());
        assert_eq!(
            signals.pending(),
            Some(SIGINT),
            "a SIGINT from before the pager stays"
        );
        assert_eq!(signals.ending(), Some(SIGINT));
    }

    /// A terminal that hands the loop scripted input, one batch per wait.
    struct ScriptedConsole {
        script: VecDeque<io::Result<Vec<Input>>>,
        n_reads: usize,
    }

    impl Console for ScriptedConsole {
        fn draw(&mut self, _state: &mut State, _context: &ViewContext<'_>) -> io::Result<()> {
            Ok(())
        }

        fn read(&mut self, _timeout: Duration) -> io::Result<Vec<Input>> {
            self.n_reads += 1;
            // A loop that keeps reading after its script is one that would spin for ever.
            assert!(self.n_reads < 100, "the loop did not stop");
            self.script.pop_front().unwrap_or_else(|| Ok(Vec::new()))
        }

        fn width(&mut self) -> io::Result<u16> {
            Ok(80)
        }

        fn page(
            &mut self,
            _pager: &str,
            _pager_env: &[(String, String)],
            _feed: &mut dyn FnMut(&mut dyn Write) -> io::Result<()>,
        ) -> Result<(), String> {
            Ok(())
        }
    }

    /// Runs the loop over the sample state with `script` as the terminal's input and
    /// `signal` (0: none) already received; returns how it ended and how often it read.
    fn run(script: Vec<io::Result<Vec<Input>>>, signal: usize) -> (Outcome, usize) {
        let mut console = ScriptedConsole {
            script: script.into(),
            n_reads: 0,
        };
        let mut state = sample_state(false);
        let signals = Signals::default();
        signals.received.store(signal, Ordering::SeqCst);
        let env = Environment::default();
        let context = ViewContext {
            theme: Theme {
                paint: pi_retrospect_render::Paint::OFF,
            },
            time_zone: &env.time_zone,
        };
        let outcome = event_loop(
            &mut console,
            &mut state,
            &mut Workers::new(),
            &PickOptions::default(),
            &env,
            &context,
            &signals,
        )
        .expect("the loop ends without an error");
        (outcome, console.n_reads)
    }

    /// A terminal that is closed, hung up or unreadable ends the picker at
    /// once instead of leaving it reading end of file for ever; a signal ends it with its
    /// number (SIGTERM is 143, not 130).
    #[test]
    fn a_lost_terminal_or_a_signal_ends_the_loop() {
        let eio = || Err(io::Error::from_raw_os_error(5));
        // (input, signal received, outcome, reads)
        type Script = Vec<io::Result<Vec<Input>>>;
        let cases: Vec<(Script, i32, Outcome, usize)> = vec![
            (vec![Ok(vec![Input::Closed])], 0, Outcome::TerminalLost, 1),
            (
                vec![
                    Ok(vec![]),
                    Ok(vec![Input::Key(key(KeyCode::Down)), Input::Closed]),
                ],
                0,
                Outcome::TerminalLost,
                2,
            ),
            (vec![Ok(vec![]), eio()], 0, Outcome::TerminalLost, 2),
            (vec![], SIGTERM, Outcome::Interrupted { signal: SIGTERM }, 0),
            (vec![], SIGHUP, Outcome::Interrupted { signal: SIGHUP }, 0),
            (
                vec![Ok(vec![Input::Resize, Input::Key(key(KeyCode::Esc))])],
                0,
                Outcome::Cancelled,
                1,
            ),
        ];
        for (script, signal, outcome, n_reads) in cases {
            let signal = usize::try_from(signal).expect("a signal number");
            assert_eq!(run(script, signal), (outcome, n_reads), "signal {signal}");
        }
    }
}
