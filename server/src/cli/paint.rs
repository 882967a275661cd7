//! Colour for the terminal surfaces of runs (`run`, `test`): used only when
//! the stream is a terminal and NO_COLOR is unset, as `check` decides; in a
//! pipe or a log the words stay plain.

use std::io::IsTerminal;

use anstyle::{AnsiColor, Style};

/// The one decision on colour for every command: a terminal, no
/// `--no-color`, and NO_COLOR unset or empty (no-color.org: only a
/// non-empty value turns colour off).
pub fn colour_wanted(terminal: bool, no_color_flag: bool) -> bool {
    terminal && !no_color_flag && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Paint {
    on: bool,
}

impl Paint {
    pub fn new(on: bool) -> Paint {
        Paint { on }
    }

    fn wanted(terminal: bool) -> Paint {
        Paint::new(colour_wanted(terminal, false))
    }

    pub fn for_stdout() -> Paint {
        Paint::wanted(std::io::stdout().is_terminal())
    }

    pub fn for_stderr() -> Paint {
        Paint::wanted(std::io::stderr().is_terminal())
    }

    fn with(self, style: Style, text: &str) -> String {
        if self.on {
            format!("{style}{text}{style:#}")
        } else {
            text.to_string()
        }
    }

    pub fn good(self, text: &str) -> String {
        self.with(
            Style::new().bold().fg_color(Some(AnsiColor::Green.into())),
            text,
        )
    }

    pub fn bad(self, text: &str) -> String {
        self.with(
            Style::new().bold().fg_color(Some(AnsiColor::Red.into())),
            text,
        )
    }

    pub fn warn(self, text: &str) -> String {
        self.with(Style::new().fg_color(Some(AnsiColor::Yellow.into())), text)
    }

    pub fn strong(self, text: &str) -> String {
        self.with(Style::new().bold(), text)
    }

    /// A run's closing line (`completed (…) after …`, `failed (…) …`), its
    /// status word coloured by what it means.
    pub fn outcome(self, line: &str) -> String {
        let (word, rest) = line.split_once(' ').unwrap_or((line, ""));
        let word = match word {
            "completed" => self.good(word),
            "failed" | "interrupted" => self.bad(word),
            "paused" => self.warn(word),
            _ => word.to_string(),
        };
        if rest.is_empty() {
            word
        } else {
            format!("{word} {rest}")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Paint;

    #[test]
    fn colour_only_when_asked_and_by_meaning() {
        let plain = Paint::new(false);
        assert_eq!(
            plain.outcome("failed (x) after 2 turns"),
            "failed (x) after 2 turns"
        );
        assert_eq!(plain.good("ok"), "ok");
        let on = Paint::new(true);
        let failed = on.outcome("failed (workflow_failed) after 2 turns");
        assert!(
            failed.starts_with("\u{1b}[1m\u{1b}[31mfailed\u{1b}[0m"),
            "{failed:?}"
        );
        assert!(failed.ends_with(" (workflow_failed) after 2 turns"));
        assert!(on.outcome("completed (done)").contains("\u{1b}[32m"));
        assert!(on
            .outcome("paused (awaiting_user_input)")
            .contains("\u{1b}[33m"));
        assert!(on.bad("FAIL").contains("\u{1b}[31m"));
    }
}
