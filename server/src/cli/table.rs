//! Aligned text tables for the terminal (`mzk runs list`, `mzk context`):
//! a header row, then a row per item, columns two spaces apart.

/// How a column's cells line up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Align {
    Left,
    Right,
}

/// The table, each line ending in a newline and without trailing spaces.
/// A row may carry a note printed on its own line below it, indented.
pub fn render(header: &[(&str, Align)], rows: &[(Vec<String>, Option<String>)]) -> String {
    let mut widths: Vec<usize> = header.iter().map(|(h, _)| h.chars().count()).collect();
    for (cells, _) in rows {
        for (w, cell) in widths.iter_mut().zip(cells) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &mut dyn Iterator<Item = &str>| {
        let mut text = String::new();
        for (i, (cell, ((_, align), w))) in cells.zip(header.iter().zip(&widths)).enumerate() {
            if i > 0 {
                text.push_str("  ");
            }
            match align {
                Align::Left => text.push_str(&format!("{cell:<w$}")),
                Align::Right => text.push_str(&format!("{cell:>w$}")),
            }
        }
        text.trim_end().to_string() + "\n"
    };
    let mut out = line(&mut header.iter().map(|(h, _)| *h));
    for (cells, note) in rows {
        out.push_str(&line(&mut cells.iter().map(String::as_str)));
        if let Some(note) = note {
            out.push_str(&format!("  {note}\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::{render, Align};

    #[test]
    fn columns_line_up_and_notes_go_below() {
        let rows = vec![
            (vec!["a".to_string(), "1".to_string()], None),
            (
                vec!["long name".to_string(), "100".to_string()],
                Some("why".to_string()),
            ),
        ];
        assert_eq!(
            render(&[("NAME", Align::Left), ("N", Align::Right)], &rows),
            "NAME         N\na            1\nlong name  100\n  why\n"
        );
    }
}
