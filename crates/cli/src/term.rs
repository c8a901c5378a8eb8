//! What the terminal gets: whether to colour and how wide to fit, one rule for every command.

use std::io::IsTerminal;

use crate::args::ColorChoice;

/// Returns whether to colour standard output for `choice`.
///
/// `auto` colours only a terminal, or any output when `CLICOLOR_FORCE` is set to something
/// other than `0`, and never when `NO_COLOR` is set and non-empty (<https://no-color.org>).
/// `always` and `never` are the user's explicit word and win over both variables.
pub fn use_color(choice: ColorChoice) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            let is_set = |name: &str| std::env::var_os(name).is_some_and(|value| !value.is_empty());
            let is_forced = std::env::var_os("CLICOLOR_FORCE")
                .is_some_and(|value| value != "0" && !value.is_empty());
            (std::io::stdout().is_terminal() || is_forced) && !is_set("NO_COLOR")
        }
    }
}

/// Returns the width to fit lines into: the terminal's, else `$COLUMNS`, else 120.
pub fn width() -> usize {
    terminal_size::terminal_size()
        .filter(|_| std::io::stdout().is_terminal())
        .map(|(width, _)| usize::from(width.0))
        .or_else(|| {
            std::env::var("COLUMNS")
                .ok()
                .and_then(|columns| columns.parse().ok())
        })
        .unwrap_or(120)
}
