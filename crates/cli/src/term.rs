//! What the terminal gets: whether to colour and how wide to fit, one rule for every command.

use std::io::IsTerminal;

use pi_retrospect_render::Paint;

use crate::args::ColorChoice;

/// Returns whether to colour standard output for `choice`.
///
/// `auto` colours only a terminal that is not `TERM=dumb` (as ripgrep does), or any output
/// when `CLICOLOR_FORCE` is set to something other than `0`, and never when `NO_COLOR` is set
/// and non-empty (<https://no-color.org>). `always` and `never` are the user's explicit word
/// and win over every variable.
pub fn use_color(choice: ColorChoice) -> Paint {
    let is_on = match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => auto_color(std::io::stdout().is_terminal(), &|name| {
            std::env::var_os(name)
        }),
    };
    Paint { is_on }
}

/// The `auto` rule of [`use_color`] for an output that `is_terminal`, with the environment
/// read through `var`.
pub(crate) fn auto_color(
    is_terminal: bool,
    var: &dyn Fn(&str) -> Option<std::ffi::OsString>,
) -> bool {
    let is_set = |name: &str| var(name).is_some_and(|value| !value.is_empty());
    let is_forced = var("CLICOLOR_FORCE").is_some_and(|value| value != "0" && !value.is_empty());
    let is_dumb = var("TERM").is_some_and(|term| term == "dumb");
    ((is_terminal && !is_dumb) || is_forced) && !is_set("NO_COLOR")
}

/// Returns the width to fit lines into when standard output is a terminal: `$COLUMNS` when it
/// is a positive number, else the terminal's width, else 80. `None` when standard output is
/// not a terminal: a pipe gets whole lines.
pub fn fit_width() -> Option<usize> {
    if !std::io::stdout().is_terminal() {
        return None;
    }
    let columns = std::env::var("COLUMNS")
        .ok()
        .and_then(|columns| columns.trim().parse::<usize>().ok())
        .filter(|columns| *columns > 0);
    Some(
        columns
            .or_else(|| terminal_size::terminal_size().map(|(width, _)| usize::from(width.0)))
            .filter(|width| *width > 0)
            .unwrap_or(80),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auto_with(is_terminal: bool, vars: &[(&str, &str)]) -> bool {
        auto_color(is_terminal, &|name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| std::ffi::OsString::from(value))
        })
    }

    #[test]
    fn auto_colour_follows_the_terminal_and_the_variables() {
        assert!(auto_with(true, &[]));
        assert!(auto_with(true, &[("TERM", "xterm-256color")]));
        assert!(!auto_with(false, &[]));
        // A dumb terminal gets none, unless forced.
        assert!(!auto_with(true, &[("TERM", "dumb")]));
        assert!(auto_with(
            true,
            &[("TERM", "dumb"), ("CLICOLOR_FORCE", "1")]
        ));
        assert!(auto_with(false, &[("CLICOLOR_FORCE", "1")]));
        assert!(!auto_with(false, &[("CLICOLOR_FORCE", "0")]));
        assert!(!auto_with(true, &[("NO_COLOR", "1")]));
        assert!(!auto_with(
            false,
            &[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "x")]
        ));
        assert!(auto_with(true, &[("NO_COLOR", "")]));
    }
}
