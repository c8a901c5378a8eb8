//! The terminal the picker draws on: `/dev/tty` itself, as fzf does, so that standard output
//! stays free for the chosen path inside `$( )`. Raw mode and the alternate screen are
//! entered once and always left: when the picker returns, when it is dropped, on a panic, and
//! around a pager or any other program that needs the terminal.

use std::fs::{File, OpenOptions};
use std::io::{self, Write};
use std::sync::Once;
use std::sync::atomic::{AtomicBool, Ordering};

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::cursor::Show;
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};

use crate::error::PickError;

/// Whether the terminal is in raw mode on the alternate screen (what a panic must undo).
static IS_ACTIVE: AtomicBool = AtomicBool::new(false);

/// Opens the process's terminal for reading and writing, whatever standard input and output
/// are; fails politely when there is none.
pub(crate) fn open_tty() -> Result<File, PickError> {
    OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
        .map_err(|error| PickError::NoTerminal { error })
}

/// The picker's screen: a ratatui terminal over `/dev/tty`, in raw mode on the alternate
/// screen while it is active.
pub(crate) struct Screen {
    /// The terminal drawn on.
    pub terminal: Terminal<CrosstermBackend<File>>,
}

impl std::fmt::Debug for Screen {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Screen").finish_non_exhaustive()
    }
}

impl Screen {
    /// Takes over `tty`: raw mode, the alternate screen, a panic hook that gives the terminal
    /// back before the panic message is printed.
    pub fn enter(tty: File) -> Result<Screen, PickError> {
        install_panic_hook();
        let mut screen = Screen {
            terminal: Terminal::new(CrosstermBackend::new(tty))?,
        };
        screen.resume()?;
        Ok(screen)
    }

    /// Gives the terminal back as it was (for a pager, or for good).
    pub fn suspend(&mut self) -> io::Result<()> {
        if IS_ACTIVE.swap(false, Ordering::SeqCst) {
            let left = execute!(self.terminal.backend_mut(), LeaveAlternateScreen, Show);
            disable_raw_mode()?;
            left?;
        }
        Ok(())
    }

    /// Takes the terminal over again after [`Screen::suspend`], and redraws from scratch.
    pub fn resume(&mut self) -> io::Result<()> {
        if !IS_ACTIVE.swap(true, Ordering::SeqCst) {
            enable_raw_mode()?;
            execute!(self.terminal.backend_mut(), EnterAlternateScreen)?;
            // `Terminal::clear` would ask the terminal where its cursor is, which some never
            // answer; a resize to the same size clears and forces a full redraw without asking.
            let size = self.terminal.size()?;
            self.terminal
                .resize(ratatui::layout::Rect::new(0, 0, size.width, size.height))?;
        }
        Ok(())
    }
}

impl Drop for Screen {
    fn drop(&mut self) {
        let _ = self.suspend();
    }
}

/// Returns whether the terminal behind `tty` has gone away (hung up: the window closed, the
/// connection dropped), where reading it only ever returns end of file.
pub(crate) fn is_gone(tty: &File) -> bool {
    rustix::termios::tcgetattr(tty).is_err()
}

/// Restores the terminal from where the screen itself cannot be reached: a panic hook, or the
/// watchdog that ends a picker stuck after a signal.
pub(crate) fn restore_after_panic() {
    if IS_ACTIVE.swap(false, Ordering::SeqCst) {
        let _ = disable_raw_mode();
        if let Ok(mut tty) = OpenOptions::new().write(true).open("/dev/tty") {
            let _ = execute!(tty, LeaveAlternateScreen, Show);
            let _ = tty.flush();
        }
    }
}

fn install_panic_hook() {
    static INSTALLED: Once = Once::new();
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore_after_panic();
            previous(info);
        }));
    });
}
