//! Rule pages (Markdown) as a terminal shows them: headings underlined,
//! code blocks indented without their fences, `**strong**` and links as
//! plain words, colour only when asked.

const BOLD: &str = "\x1b[1m";
const CODE: &str = "\x1b[36m";
const RESET: &str = "\x1b[0m";

/// The page for a terminal; `color` adds bold headings and cyan code.
pub fn render(markdown: &str, color: bool) -> String {
    let mut out = String::new();
    let mut in_code = false;
    for line in markdown.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            let code = if color {
                format!("{CODE}{line}{RESET}")
            } else {
                line.to_string()
            };
            out.push_str(&format!("    {code}\n"));
            continue;
        }
        let heading = line
            .strip_prefix("## ")
            .map(|h| (h, '─'))
            .or_else(|| line.strip_prefix("# ").map(|h| (h, '═')));
        if let Some((text, rule)) = heading {
            let text = inline(text, false);
            let width = text.chars().count();
            if color {
                out.push_str(&format!("{BOLD}{text}{RESET}\n"));
            } else {
                out.push_str(&format!("{text}\n"));
            }
            out.push_str(&rule.to_string().repeat(width));
            out.push('\n');
            continue;
        }
        out.push_str(&inline(line, color));
        out.push('\n');
    }
    out
}

/// One line's inline marks: `**strong**` loses its stars (bold in colour),
/// `[text](url)` reads `text (url)`, `code` keeps its backticks without
/// colour and is cyan with it.
fn inline(line: &str, color: bool) -> String {
    let mut out = String::new();
    let mut rest = line;
    while let Some(c) = rest.chars().next() {
        if let Some(after) = rest.strip_prefix("**") {
            if let Some(end) = after.find("**") {
                let strong = &after[..end];
                match color {
                    true => out.push_str(&format!("{BOLD}{strong}{RESET}")),
                    false => out.push_str(strong),
                }
                rest = &after[end + 2..];
                continue;
            }
        }
        if c == '`' {
            if let Some(end) = rest[1..].find('`') {
                let code = &rest[1..=end];
                match color {
                    true => out.push_str(&format!("{CODE}{code}{RESET}")),
                    false => out.push_str(&format!("`{code}`")),
                }
                rest = &rest[end + 2..];
                continue;
            }
        }
        if c == '[' {
            let link = rest.find("](").and_then(|close| {
                let end = rest[close..].find(')')? + close;
                Some((&rest[1..close], &rest[close + 2..end], end))
            });
            if let Some((text, url, end)) = link.filter(|(t, _, _)| !t.contains(']')) {
                out.push_str(&format!("{text} ({url})"));
                rest = &rest[end + 1..];
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::render;

    #[test]
    fn a_page_reads_as_text() {
        let page = "# MZ101 unknown-key\n\nA key **nobody** defines: see [the docs](docs/x.md) or `mzk check`.\n\n## Example\n\n```yaml\nconditon_key: x\n```\n";
        assert_eq!(
            render(page, false),
            "MZ101 unknown-key\n═════════════════\n\nA key nobody defines: see the docs (docs/x.md) or `mzk check`.\n\nExample\n───────\n\n    conditon_key: x\n"
        );
        let colored = render(page, true);
        assert!(colored.contains("\x1b[1mMZ101 unknown-key\x1b[0m"));
        assert!(colored.contains("\x1b[36mmzk check\x1b[0m"));
        assert!(colored.contains("    \x1b[36mconditon_key: x\x1b[0m"));
    }

    #[test]
    fn unclosed_marks_stay_as_written() {
        assert_eq!(render("a `b and **c [d](e", false), "a `b and **c [d](e\n");
        assert_eq!(render("ünïcode `é`", false), "ünïcode `é`\n");
    }
}
