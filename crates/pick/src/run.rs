//! The event loop: the first screen from the current directory's sessions, then keys and
//! background reports in, redraws out, until the person chooses or leaves.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use pi_retrospect_app::Environment;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{self, Event};

use crate::error::PickError;
use crate::external::{DEFAULT_PAGER, page, transcript};
use crate::index::Index;
use crate::state::{Command, Scope, State};
use crate::terminal::{Screen, open_tty};
use crate::view::{Theme, ViewContext, draw};
use crate::worker::{Message, Workers};
use crate::{Outcome, PickOptions};

/// How long the loop waits for a key before looking at the background reports.
const TICK: Duration = Duration::from_millis(40);

/// Runs the picker on the terminal until the person chooses a session or leaves.
pub fn pick(options: &PickOptions, env: &Environment) -> Result<Outcome, PickError> {
    let tty = open_tty()?;
    let mut state = first_state(options, env)?;
    let context = ViewContext {
        theme: Theme {
            is_color: options.is_color,
        },
        time_zone: &env.time_zone,
    };
    let quit = Arc::new(AtomicBool::new(false));
    for signal in [
        signal_hook::consts::SIGTERM,
        signal_hook::consts::SIGHUP,
        signal_hook::consts::SIGINT,
    ] {
        // Without the handler a signal still ends the process; only the terminal's restoration
        // would be lost, so a failure to register is not worth refusing to start.
        let _ = signal_hook::flag::register(signal, Arc::clone(&quit));
    }
    let mut screen = Screen::enter(tty.try_clone()?)?;
    screen
        .terminal
        .draw(|frame| draw(frame, &mut state, &context))?;
    let mut workers = Workers::new();
    let mut request = options.list.clone();
    request.read_summaries = false;
    workers.start_index(request, env.clone(), state.here.clone());
    let outcome = loop {
        if quit.load(Ordering::Relaxed) {
            break Outcome::Cancelled;
        }
        if let Some(path) = state.wanted_preview() {
            state.preview_requested(path.clone());
            workers.request_preview(path, env);
        }
        let mut is_dirty = false;
        if event::poll(TICK)? {
            match event::read()? {
                Event::Key(key) => {
                    is_dirty = true;
                    match state.handle_key(key) {
                        Command::Nothing => {}
                        Command::Quit => break Outcome::Cancelled,
                        Command::Print(path) => break Outcome::Chosen(path),
                        Command::Resume { path, cwd } => break Outcome::Resume { path, cwd },
                        Command::Page(path) => {
                            let width = screen.terminal.size()?.width;
                            let text = transcript(&path, env, options.is_color, usize::from(width));
                            match text {
                                Ok(text) => {
                                    let pager = options.pager.as_deref().unwrap_or(DEFAULT_PAGER);
                                    screen.suspend()?;
                                    let paged = page(&text, pager, &tty);
                                    screen.resume()?;
                                    if let Err(error) = paged {
                                        state.status = Some(format!("cannot run {pager}: {error}"));
                                    }
                                }
                                Err(error) => state.status = Some(error.to_string()),
                            }
                        }
                        Command::Search { term, generation } => {
                            workers.start_search(&term, generation, state.search_paths());
                        }
                        Command::StopSearch => workers.stop_search(),
                    }
                }
                Event::Resize(..) => is_dirty = true,
                _ => {}
            }
        }
        while let Ok(message) = workers.receiver.try_recv() {
            is_dirty = true;
            apply(&mut state, message);
        }
        if is_dirty {
            screen
                .terminal
                .draw(|frame| draw(frame, &mut state, &context))?;
        }
    };
    workers.stop();
    screen.suspend()?;
    Ok(outcome)
}

/// Returns the state of the first screen: the current directory's sessions, listed without
/// walking the rest of the store.
fn first_state(options: &PickOptions, env: &Environment) -> Result<State, PickError> {
    let quick = pi_retrospect_app::picker::list_here(&options.list, env)?;
    let here = here(env);
    let scope = if options.all_projects {
        Scope::All
    } else {
        Scope::Here
    };
    let index = Index::from_listing(&quick.listing);
    Ok(State::new(index, here, scope, options.print))
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
            n_total,
        } => state.search_progress(generation, &matched, n_done, n_total, n_done == n_total),
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
            is_color: options.is_color,
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
