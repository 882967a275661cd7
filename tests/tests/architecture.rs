//! The module graph as ARCHITECTURE.md draws it: the analyzer's top-level
//! modules sit on floors and only look down, no two modules of the crates
//! import each other (directly or around a loop), and no module outside the
//! tests pulls in its parent's names with `use super::*`. Read from the
//! sources, so a new import that runs up the layers fails here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The analyzer's floors, bottom first. A module imports only from its own
/// floor or those below (and a loop within a floor is caught as a cycle).
const ANALYZER_FLOORS: &[&[&str]] = &[
    &["base", "workspace"],
    &["rules", "tokens"],
    &["diagnostics"],
    &["syntax"],
    &["schema"],
    &["model"],
    &["graph", "prompt"],
    &["checks"],
    &["suppression"],
    &["config"],
    &["cache"],
    &["analysis"],
    &["host", "ide"],
];

/// The crates whose module graphs are checked, by source folder.
const CRATES: &[&str] = &["analyzer", "runtime", "server", "allocator"];

/// One source file: the path of the module it defines, and its code outside
/// tests (comments dropped).
struct SourceFile {
    path: PathBuf,
    module: Vec<String>,
    code: String,
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The module path a file defines: `a/b/mod.rs` and `a/b.rs` are `a::b`,
/// `lib.rs` and `main.rs` the crate root.
fn module_of(relative: &Path) -> Vec<String> {
    let mut parts: Vec<String> = relative
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    let last = parts.pop().expect("a file name");
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// The code of a file without its comments and without its test module
/// (by the crates' convention, a `#[cfg(test)] mod … {` block ends the file).
fn code_outside_tests(text: &str) -> String {
    let mut out = String::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("#[cfg(test)]") {
            // The item it marks, past any other attributes.
            let item = lines[i + 1..]
                .iter()
                .map(|l| l.trim())
                .find(|l| !l.starts_with("#["))
                .unwrap_or("");
            if item.contains("mod ") && item.ends_with('{') {
                break;
            }
        }
        out.push_str(without_comment(line));
        out.push('\n');
    }
    out
}

/// A line without its `//` comment (one outside a string literal).
fn without_comment(line: &str) -> &str {
    let mut in_string = false;
    let bytes = line.as_bytes();
    for i in 0..bytes.len() {
        match bytes[i] {
            b'"' if i == 0 || bytes[i - 1] != b'\\' => in_string = !in_string,
            b'/' if !in_string && bytes.get(i + 1) == Some(&b'/') => return &line[..i],
            _ => {}
        }
    }
    line
}

/// The modules declared `#[cfg(test)] mod name;` in a file: test code, whatever
/// their file is called.
fn test_modules_declared(module: &[String], text: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut after_cfg_test = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("#[cfg(test)]") {
            after_cfg_test = true;
            continue;
        }
        if after_cfg_test {
            if let Some(name) = trimmed
                .strip_suffix(';')
                .and_then(|t| t.rsplit_once("mod "))
                .map(|(_, name)| name.trim())
            {
                let mut path = module.to_vec();
                path.push(name.to_string());
                out.push(path);
            }
        }
        after_cfg_test = false;
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", dir.display()))
        .map(|e| e.expect("a directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A crate's source files outside its tests.
fn crate_sources(krate: &str) -> Vec<SourceFile> {
    let src = workspace_root().join(krate).join("src");
    let mut paths = Vec::new();
    rust_files(&src, &mut paths);
    let mut files = Vec::new();
    let mut test_modules = BTreeSet::new();
    for path in paths {
        let text = std::fs::read_to_string(&path).expect("a readable source file");
        let module = module_of(path.strip_prefix(&src).expect("under src"));
        test_modules.extend(test_modules_declared(&module, &text));
        files.push(SourceFile {
            path,
            code: code_outside_tests(&text),
            module,
        });
    }
    assert!(!files.is_empty(), "no sources under {}", src.display());
    files.retain(|f| {
        let named_as_test = f.module.last().is_some_and(|m| m == "tests");
        let declared_test = (1..=f.module.len()).any(|n| test_modules.contains(&f.module[..n]));
        !(named_as_test || declared_test)
    });
    files
}

/// Every path a piece of code names from its crate root (`crate::a::b`, the
/// items of `crate::{a, b::c}`) or relative to its parent (`super::x`),
/// resolved to module paths (not all segments need be modules).
fn named_paths(file: &SourceFile) -> Vec<Vec<String>> {
    let code = file.code.as_bytes();
    let mut out = Vec::new();
    let parent = &file.module[..file.module.len().saturating_sub(1)];
    let mut i = 0;
    while i < code.len() {
        let starts_word = i == 0 || !(code[i - 1].is_ascii_alphanumeric() || code[i - 1] == b'_');
        let (base, len) = if starts_word && code[i..].starts_with(b"crate::") {
            (Vec::new(), "crate::".len())
        } else if starts_word && code[i..].starts_with(b"super::") {
            (parent.to_vec(), "super::".len())
        } else {
            i += 1;
            continue;
        };
        let (paths, end) = read_path_tree(code, i + len, base);
        out.extend(paths);
        i = end.max(i + 1);
    }
    out
}

/// Reads `a::b::{c, d::e}` from `at`, each leaf's path prefixed with `base`;
/// returns the paths and where the tree ends.
fn read_path_tree(code: &[u8], mut at: usize, mut base: Vec<String>) -> (Vec<Vec<String>>, usize) {
    loop {
        if code.get(at) == Some(&b'{') {
            at += 1;
            let mut out = Vec::new();
            loop {
                while at < code.len() && code[at].is_ascii_whitespace() {
                    at += 1;
                }
                if at >= code.len() || code[at] == b'}' {
                    return (out, at + 1);
                }
                let (paths, end) = read_path_tree(code, at, base.clone());
                if end > at {
                    out.extend(paths);
                }
                // Anything not a path (`*`, a comment's leftovers) is stepped over.
                at = end.max(at + 1);
                while at < code.len() && (code[at].is_ascii_whitespace() || code[at] == b',') {
                    at += 1;
                }
            }
        }
        let start = at;
        while at < code.len() && (code[at].is_ascii_alphanumeric() || code[at] == b'_') {
            at += 1;
        }
        if at > start {
            let segment = String::from_utf8_lossy(&code[start..at]).into_owned();
            if segment == "super" {
                base.pop();
            } else {
                base.push(segment);
            }
        }
        if code[at..].starts_with(b"::") && !code[at..].starts_with(b"::<") {
            at += 2;
            continue;
        }
        // `name as alias`
        let rest = &code[at..];
        let skip_alias = rest.starts_with(b" as ");
        if skip_alias {
            at += 4;
            while at < code.len() && (code[at].is_ascii_alphanumeric() || code[at] == b'_') {
                at += 1;
            }
        }
        return (vec![base], at);
    }
}

/// The module a path lands in, cut to `depth` levels (the longest prefix
/// that is a module of the crate).
fn module_unit(path: &[String], modules: &BTreeSet<Vec<String>>, depth: usize) -> Vec<String> {
    let mut longest = Vec::new();
    for n in 1..=path.len() {
        if modules.contains(&path[..n]) {
            longest = path[..n].to_vec();
        }
    }
    longest.truncate(depth);
    longest
}

/// Modules of the first two levels (`a`, `a::b`) and the ones each imports.
fn unit_graph(files: &[SourceFile]) -> BTreeMap<Vec<String>, BTreeSet<Vec<String>>> {
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| f.module.clone()).collect();
    // What the crate root re-exports (`pub use analysis::Analysis`): a path
    // through it (`crate::Analysis`) lands in the module that defines it.
    let reexports: BTreeMap<String, Vec<String>> = files
        .iter()
        .filter(|f| f.module.is_empty())
        .flat_map(|root| root.code.lines())
        .filter_map(|line| line.trim().strip_prefix("pub use "))
        .flat_map(|tree| read_path_tree(tree.as_bytes(), 0, Vec::new()).0)
        .filter(|p| p.len() > 1 && !module_unit(p, &modules, 1).is_empty())
        .map(|p| (p.last().cloned().unwrap_or_default(), p))
        .collect();
    let mut graph: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for file in files {
        if file.module.is_empty() {
            continue; // the crate root re-exports; it is above every module
        }
        let from = module_unit(&file.module, &modules, 2);
        let edges = graph.entry(from.clone()).or_default();
        for path in named_paths(file) {
            let path = match path.first().and_then(|first| reexports.get(first)) {
                Some(through) if module_unit(&path, &modules, 1).is_empty() => {
                    through.iter().chain(&path[1..]).cloned().collect()
                }
                _ => path,
            };
            let to = module_unit(&path, &modules, 2);
            // A unit may use its own children and parent freely: a child is
            // part of its parent's unit.
            let nested = to.starts_with(&from) || from.starts_with(&to);
            if !to.is_empty() && !nested {
                edges.insert(to);
            }
        }
    }
    graph
}

/// The cycles of a graph: its strongly connected components of more than
/// one node, by reachability (the graphs have tens of nodes).
fn cycles(graph: &BTreeMap<Vec<String>, BTreeSet<Vec<String>>>) -> Vec<Vec<String>> {
    let nodes: Vec<&Vec<String>> = graph.keys().collect();
    let reach = |from: &Vec<String>| -> BTreeSet<Vec<String>> {
        let mut seen = BTreeSet::new();
        let mut stack = vec![from.clone()];
        while let Some(n) = stack.pop() {
            for next in graph.get(&n).into_iter().flatten() {
                if seen.insert(next.clone()) {
                    stack.push(next.clone());
                }
            }
        }
        seen
    };
    let reaches: BTreeMap<&Vec<String>, BTreeSet<Vec<String>>> =
        nodes.iter().map(|n| (*n, reach(n))).collect();
    let mut found = BTreeSet::new();
    for a in &nodes {
        let mut component: Vec<String> = nodes
            .iter()
            .filter(|b| a != *b && reaches[a].contains(**b) && reaches[*b].contains(*a))
            .map(|b| b.join("::"))
            .collect();
        if !component.is_empty() {
            component.push(a.join("::"));
            component.sort();
            found.insert(component);
        }
    }
    found.into_iter().collect()
}

fn floor_of(module: &str) -> Option<usize> {
    ANALYZER_FLOORS.iter().position(|f| f.contains(&module))
}

#[test]
fn analyzer_layers_only_look_down() {
    let files = crate_sources("analyzer");
    let graph = unit_graph(&files);
    let mut tops: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (from, to) in &graph {
        let entry = tops.entry(from[0].clone()).or_default();
        entry.extend(to.iter().map(|t| t[0].clone()).filter(|t| *t != from[0]));
    }
    let mut problems = Vec::new();
    for (from, to) in &tops {
        let Some(floor) = floor_of(from) else {
            problems.push(format!(
                "`{from}` is on no floor: add it to ANALYZER_FLOORS and ARCHITECTURE.md"
            ));
            continue;
        };
        for t in to {
            match floor_of(t) {
                Some(f) if f <= floor => {}
                _ => problems.push(format!("`{from}` (floor {floor}) imports `{t}`, above it")),
            }
        }
    }
    assert!(
        tops.len() >= 15,
        "expected the analyzer's top-level modules, found {tops:?}"
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_module_cycles() {
    let mut problems = Vec::new();
    for krate in CRATES {
        let graph = unit_graph(&crate_sources(krate));
        // The top-level modules too: a loop may close through a parent's
        // own items, which the finer graph counts as the parent's unit.
        let mut tops: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
        for (from, to) in &graph {
            let top = from[..1].to_vec();
            let edges = tops.entry(top.clone()).or_default();
            edges.extend(to.iter().map(|t| t[..1].to_vec()).filter(|t| *t != top));
        }
        for cycle in cycles(&graph).into_iter().chain(cycles(&tops)) {
            problems.push(format!("{krate}: {} import each other", cycle.join(", ")));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn no_glob_import_of_the_parent_outside_tests() {
    let mut offenders = Vec::new();
    for krate in CRATES {
        for file in crate_sources(krate) {
            if file.code.lines().any(|l| l.trim() == "use super::*;") {
                offenders.push(file.path.display().to_string());
            }
        }
    }
    assert!(
        offenders.is_empty(),
        "`use super::*` outside tests (import what is used, by name):\n{}",
        offenders.join("\n")
    );
}

/// The reader of the module graph itself: paths in groups, `super`, aliases.
#[test]
fn paths_are_read_as_rust_writes_them() {
    let file = SourceFile {
        path: PathBuf::from("x.rs"),
        module: vec!["a".into(), "b".into()],
        code:
            "use crate::{c::d, e::{f, g as h}, p::*};\nuse super::k::L;\nlet x = crate::m::n(1);\n"
                .into(),
    };
    let paths: Vec<String> = named_paths(&file).iter().map(|p| p.join("::")).collect();
    assert_eq!(paths, ["c::d", "e::f", "e::g", "p", "a::k::L", "m::n"]);
    assert_eq!(without_comment("let a = 1; // crate::x"), "let a = 1; ");
    assert_eq!(
        without_comment("let u = \"http://x\";"),
        "let u = \"http://x\";"
    );
    let mut graph = BTreeMap::new();
    graph.insert(
        vec!["a".to_string()],
        BTreeSet::from([vec!["b".to_string()]]),
    );
    graph.insert(
        vec!["b".to_string()],
        BTreeSet::from([vec!["a".to_string()]]),
    );
    graph.insert(
        vec!["c".to_string()],
        BTreeSet::from([vec!["a".to_string()]]),
    );
    assert_eq!(cycles(&graph), vec![vec!["a".to_string(), "b".to_string()]]);
}

/// A path through the crate root's re-exports counts as an import of the
/// module that defines the item.
#[test]
fn imports_through_reexports_are_seen() {
    let file = |module: &[&str], code: &str| SourceFile {
        path: PathBuf::from("x.rs"),
        module: module.iter().map(|m| m.to_string()).collect(),
        code: code.into(),
    };
    let files = [
        file(
            &[],
            "pub mod analysis;\npub mod model;\npub use analysis::{analyze, Analysis};\n",
        ),
        file(&["analysis"], "pub struct Analysis;\n"),
        file(&["model"], "use crate::Analysis;\n"),
    ];
    let graph = unit_graph(&files);
    assert_eq!(
        graph[&vec!["model".to_string()]],
        BTreeSet::from([vec!["analysis".to_string()]])
    );
}
