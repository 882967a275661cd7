//! Fixture snapshots: each folder of tests/fixtures is a workflows root holding
//! one or more bundles and `expected.txt`, the diagnostics mzk must report.
//! Set UPDATE_EXPECT=1 to rewrite the expectations (then review the diff).

use mzk_tests::{render_all, repo};

#[test]
fn fixtures_match_their_expected_diagnostics() {
    let fixtures = repo().join("tests/fixtures");
    let mut cases: Vec<_> = std::fs::read_dir(&fixtures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    cases.sort();
    assert!(cases.len() >= 5, "fixtures are missing");
    let update = std::env::var_os("UPDATE_EXPECT").is_some();
    let mut failed = Vec::new();
    for case in &cases {
        let actual = render_all(case);
        let expected_path = case.join("expected.txt");
        if update {
            std::fs::write(&expected_path, &actual).unwrap();
            continue;
        }
        // A missing expectation is a failure, not an empty one: otherwise a
        // fixture whose file was lost would pass as long as it reported nothing.
        let Ok(expected) = std::fs::read_to_string(&expected_path) else {
            failed.push(format!(
                "fixture {} has no expected.txt (run with UPDATE_EXPECT=1 to write it, then review it)",
                case.display()
            ));
            continue;
        };
        if actual != expected {
            failed.push(format!(
                "fixture {}:\n--- expected\n{expected}\n--- actual\n{actual}",
                case.display()
            ));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n"));
}

#[test]
fn example_bundles_are_clean() {
    let out = render_all(&repo().join("bundles"));
    assert_eq!(out, "", "the example bundles must have no diagnostics");
}

/// Every rule has a failing case in some fixture snapshot, except the two
/// limits that need inputs too large to keep in the repository (their unit
/// tests in analyzer/src/syntax/yaml.rs build them in memory).
#[test]
fn every_rule_is_exercised_by_a_fixture() {
    let fixtures = repo().join("tests/fixtures");
    let mut expected = String::new();
    for entry in std::fs::read_dir(&fixtures).unwrap() {
        let folder = entry.unwrap().path();
        if !folder.is_dir() {
            continue;
        }
        let path = folder.join("expected.txt");
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        expected.push_str(&text);
    }
    let exempt = ["MZ007", "MZ008"];
    let missing: Vec<&str> = mzk_analyzer::rules::Rule::ALL
        .iter()
        .map(|r| r.code())
        .filter(|code| !exempt.contains(code) && !expected.contains(&format!("[{code}]")))
        .collect();
    assert!(
        missing.is_empty(),
        "rules without a fixture case: {missing:?}"
    );
}

/// Each rule page's failing example is real: every code block under
/// `## Example` in docs/rules/<CODE>.md is a verbatim excerpt, in whole lines,
/// of a file of the bundle tests/fixtures/rules/<CODE>, and that bundle's
/// analysis reports <CODE> on a line of one of the excerpts. Three limits
/// need inputs too large to show on a page (a 16 MiB file, 257 levels of
/// nesting, a prompt over the token budget); the hostile tests and the
/// prompts fixture produce them.
#[test]
fn every_rule_page_example_produces_its_code() {
    let exempt = ["MZ007", "MZ008", "MZ803"];
    let root = repo().join("tests/fixtures/rules");
    let report = render_all(&root);
    // (path relative to the root, line, code) of every reported diagnostic.
    let reported: Vec<(&str, usize, &str)> = report
        .lines()
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| {
            let (place, rest) = l.split_once(": ")?;
            let mut parts = place.split(':');
            let path = parts.next()?;
            let line = parts.next()?.parse().ok()?;
            let code = rest.split_once('[')?.1.split_once(']')?.0;
            Some((path, line, code))
        })
        .collect();
    let mut failures = Vec::new();
    for rule in mzk_analyzer::rules::Rule::ALL {
        let code = rule.code();
        if exempt.contains(&code) {
            continue;
        }
        let page = std::fs::read_to_string(repo().join(format!("docs/rules/{code}.md"))).unwrap();
        let blocks = example_blocks(&page);
        if blocks.is_empty() {
            failures.push(format!("{code}: the page's Example has no code block"));
            continue;
        }
        let files = files_under(&root, &root.join(code));
        let mut excerpts = Vec::new();
        for block in &blocks {
            let found = files.iter().find_map(|(path, text)| {
                let first = line_of_excerpt(text, block)?;
                Some((path.as_str(), first, first + block.lines().count() - 1))
            });
            match found {
                Some(excerpt) => excerpts.push(excerpt),
                None => failures.push(format!(
                    "{code}: this example block is not an excerpt of a file of tests/fixtures/rules/{code}:\n{block}"
                )),
            }
        }
        let produced = reported.iter().any(|&(path, line, c)| {
            c == code
                && excerpts
                    .iter()
                    .any(|&(p, first, last)| p == path && (first..=last).contains(&line))
        });
        if !produced {
            failures.push(format!(
                "{code}: tests/fixtures/rules/{code} does not report {code} inside the page's example {excerpts:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The contents of the fenced code blocks of a page's `## Example` section.
fn example_blocks(page: &str) -> Vec<String> {
    let Some(start) = page.find("\n## Example\n") else {
        return Vec::new();
    };
    let section = &page[start + 1..];
    let section = &section[..section[1..].find("\n## ").map_or(section.len(), |i| i + 1)];
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in section.lines() {
        match (&mut current, line.starts_with("```")) {
            (None, true) => current = Some(String::new()),
            (Some(_), true) => blocks.extend(current.take()),
            (Some(block), false) => {
                block.push_str(line);
                block.push('\n');
            }
            (None, false) => {}
        }
    }
    blocks
}

/// The files of a bundle folder (recursively), as (path relative to `root`
/// with `/` separators, text).
fn files_under(root: &std::path::Path, dir: &std::path::Path) -> Vec<(String, String)> {
    let mut files = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(dir) = stack.pop() {
        for entry in std::fs::read_dir(&dir).into_iter().flatten() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                stack.push(path);
            } else if let Ok(text) = std::fs::read_to_string(&path) {
                let relative = path.strip_prefix(root).unwrap();
                let relative: Vec<_> = relative.iter().map(|c| c.to_string_lossy()).collect();
                files.push((relative.join("/"), text));
            }
        }
    }
    files
}

/// The 1-based line where `block` (whole lines) occurs in `text`.
fn line_of_excerpt(text: &str, block: &str) -> Option<usize> {
    text.match_indices(block)
        .find(|&(at, _)| at == 0 || text.as_bytes()[at - 1] == b'\n')
        .map(|(at, _)| text[..at].matches('\n').count() + 1)
}
