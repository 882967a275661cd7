//! Names Python code builds at run time rather than writes out: context keys
//! and model names made by concatenation (`"bundle_repair_" + suffix`),
//! f-strings, `str.format` and `%` templates, with module-level string
//! constants as parts. A part that is a loop variable over a literal tuple,
//! list, set or dict (or a module-level tuple of strings) is resolved to
//! the finite set of names the loop builds; any other unknown part leaves a
//! pattern (the literal head and tail around it), and every name the pattern
//! fits counts as built: a name is never called unused while code may build
//! it. Literal names are found by the identifier scan (`model::mentions`).

use tree_sitter::{Node, Parser};

use crate::hash::HashMap;

mod excerpt;

/// Files larger than this are not parsed for built names (the identifier
/// scan still reads them).
const MAX_SOURCE: usize = 4 * 1024 * 1024;

/// What one module builds.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BuiltNames {
    /// Names resolved to a finite set.
    pub exact: Vec<String>,
    /// (head, tail) around a part that could not be resolved.
    pub patterns: Vec<(String, String)>,
}

impl BuiltNames {
    /// Whether `name` is one of the names the module may build.
    pub fn builds(&self, name: &str) -> bool {
        self.exact.iter().any(|e| e == name)
            || self.patterns.iter().any(|(head, tail)| {
                name.len() > head.len() + tail.len()
                    && name.starts_with(head.as_str())
                    && name.ends_with(tail.as_str())
            })
    }

    pub fn is_empty(&self) -> bool {
        self.exact.is_empty() && self.patterns.is_empty()
    }

    pub fn extend(&mut self, other: BuiltNames) {
        self.exact.extend(other.exact);
        self.patterns.extend(other.patterns);
    }
}

/// One part of a built string.
#[derive(Debug, Clone)]
enum Part<'t> {
    Literal(String),
    /// Unknown at rest; the node, to resolve a loop variable.
    Unknown(Node<'t>),
}

struct Scan<'s> {
    src: &'s str,
    /// Module-level `NAME = "text"`.
    constants: HashMap<&'s str, String>,
    /// Module-level `NAME = ("a", "b")` (tuple, list or set of strings).
    sequences: HashMap<&'s str, Vec<String>>,
    out: BuiltNames,
}

/// Parsed files' results, by a hash of their text, kept by the caller's
/// cache: the language server re-analyses on every keystroke, and the
/// Python files rarely change.
#[derive(Debug)]
pub struct BuiltMemo(crate::memo::Memo<BuiltNames>);

impl Default for BuiltMemo {
    fn default() -> BuiltMemo {
        BuiltMemo(crate::memo::Memo::new(1024))
    }
}

impl BuiltMemo {
    /// [`scan`], kept by a hash of the text.
    pub fn scan(&self, src: &str) -> std::sync::Arc<BuiltNames> {
        self.0.get_or(crate::memo::key([src]), || scan(src))
    }

    /// [`BuiltMemo::scan`] for a caller that already cut `src` down to its
    /// [`buildable`] text (to read its string pieces first).
    pub fn scan_buildable(&self, src: &str, buildable: &str) -> std::sync::Arc<BuiltNames> {
        self.0
            .get_or(crate::memo::key([src]), || built_from(src, buildable))
    }
}

/// The names `src` builds. Never fails: what does not parse builds nothing.
/// Only the excerpt of the lines that can build names is parsed.
pub fn scan(src: &str) -> BuiltNames {
    built_from(src, &buildable(src))
}

/// The names `src` builds, read from its [`buildable`] text.
fn built_from(src: &str, buildable: &str) -> BuiltNames {
    if src.len() > MAX_SOURCE {
        return BuiltNames::default();
    }
    scan_whole(buildable)
}

/// The text [`scan`] parses: the excerpt of `src` (see [`excerpt`]), or
/// all of it when it has a lexical error. Every built name comes from the
/// string literals of this text.
pub fn buildable(src: &str) -> std::borrow::Cow<'_, str> {
    match excerpt::excerpt(src) {
        Some(excerpt) => excerpt.into(),
        None => src.into(),
    }
}

/// [`scan`] over the whole file: what the excerpt must agree with.
#[doc(hidden)]
pub fn scan_whole(src: &str) -> BuiltNames {
    if src.len() > MAX_SOURCE {
        return BuiltNames::default();
    }
    let mut parser = Parser::new();
    if parser
        .set_language(&tree_sitter_python::LANGUAGE.into())
        .is_err()
    {
        return BuiltNames::default();
    }
    let Some(tree) = parser.parse(src, None) else {
        return BuiltNames::default();
    };
    let root = tree.root_node();
    let mut scan = Scan {
        src,
        constants: HashMap::default(),
        sequences: HashMap::default(),
        out: BuiltNames::default(),
    };
    scan.module_constants(root);
    // Every node, iteratively (no recursion, whatever the nesting).
    let mut cursor = root.walk();
    loop {
        let node = cursor.node();
        scan.visit(node);
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() {
                let mut out = scan.out;
                out.exact.sort();
                out.exact.dedup();
                out.patterns.sort();
                out.patterns.dedup();
                return out;
            }
        }
    }
}

fn is_word(text: &str) -> bool {
    text.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

impl<'s> Scan<'s> {
    fn text(&self, node: Node<'_>) -> &'s str {
        self.src.get(node.byte_range()).unwrap_or("")
    }

    /// A string literal without interpolation, as written between its quotes.
    fn plain_string(&self, node: Node<'_>) -> Option<String> {
        if node.kind() != "string" {
            return None;
        }
        let mut value = String::new();
        let mut cursor = node.walk();
        for child in node.children(&mut cursor) {
            match child.kind() {
                "string_start" => {
                    let start = self.text(child);
                    if start.contains(['f', 'F', 'b', 'B']) {
                        return None;
                    }
                }
                "string_content" | "escape_sequence" => value.push_str(self.text(child)),
                "string_end" => {}
                _ => return None,
            }
        }
        Some(value)
    }

    fn module_constants(&mut self, root: Node<'_>) {
        let mut cursor = root.walk();
        for statement in root.children(&mut cursor) {
            if statement.kind() != "expression_statement" {
                continue;
            }
            let Some(assignment) = statement.named_child(0) else {
                continue;
            };
            if assignment.kind() != "assignment" {
                continue;
            }
            let (Some(left), Some(right)) = (
                assignment.child_by_field_name("left"),
                assignment.child_by_field_name("right"),
            ) else {
                continue;
            };
            if left.kind() != "identifier" {
                continue;
            }
            let name = self.text(left);
            if let Some(value) = self.plain_string(right) {
                self.constants.insert(name, value);
            } else if let Some(values) = self.string_collection(right) {
                self.sequences.insert(name, values);
            }
        }
    }

    /// The strings of a literal tuple, list or set of strings, or the string
    /// keys of a dict literal.
    fn string_collection(&self, node: Node<'_>) -> Option<Vec<String>> {
        let mut values = Vec::new();
        let mut cursor = node.walk();
        match node.kind() {
            "tuple" | "list" | "set" | "parenthesized_expression" => {
                for child in node.named_children(&mut cursor) {
                    values.push(self.plain_string(child)?);
                }
            }
            "dictionary" => {
                for child in node.named_children(&mut cursor) {
                    let key = child.child_by_field_name("key")?;
                    values.push(self.plain_string(key)?);
                }
            }
            _ => return None,
        }
        Some(values)
    }

    /// The values a loop gives `name` at `at`: the nearest enclosing `for`
    /// (statement or comprehension) binding it, over a literal collection, a
    /// dict literal's `.items()`/`.keys()`, or a module-level sequence.
    fn loop_values(&self, at: Node<'_>, name: &str) -> Option<Vec<String>> {
        let mut node = at;
        let mut comprehension_scopes = Vec::new();
        while let Some(parent) = node.parent() {
            if matches!(
                parent.kind(),
                "list_comprehension"
                    | "set_comprehension"
                    | "dictionary_comprehension"
                    | "generator_expression"
            ) {
                let mut cursor = parent.walk();
                comprehension_scopes.extend(
                    parent
                        .named_children(&mut cursor)
                        .filter(|c| c.kind() == "for_in_clause"),
                );
            }
            let clauses: Vec<Node> = if parent.kind() == "for_statement" {
                vec![parent]
            } else {
                std::mem::take(&mut comprehension_scopes)
            };
            for clause in clauses {
                let (Some(left), Some(right)) = (
                    clause.child_by_field_name("left"),
                    clause.child_by_field_name("right"),
                ) else {
                    continue;
                };
                let first = match left.kind() {
                    "identifier" => Some(left),
                    "pattern_list" | "tuple_pattern" => left.named_child(0),
                    _ => None,
                };
                if first.is_none_or(|f| self.text(f) != name) {
                    continue;
                }
                return self.iterated(right);
            }
            if matches!(parent.kind(), "function_definition" | "class_definition") {
                return None;
            }
            node = parent;
        }
        None
    }

    fn iterated(&self, right: Node<'_>) -> Option<Vec<String>> {
        match right.kind() {
            "identifier" => self.sequences.get(self.text(right)).cloned(),
            "call" => {
                let function = right.child_by_field_name("function")?;
                if function.kind() != "attribute" {
                    return None;
                }
                let method = self.text(function.child_by_field_name("attribute")?);
                let object = function.child_by_field_name("object")?;
                if !matches!(method, "items" | "keys") || object.kind() != "dictionary" {
                    return None;
                }
                self.string_collection(object)
            }
            _ => self.string_collection(right),
        }
    }

    /// The value of a part: a string literal or a module-level constant.
    fn part(&self, node: Node<'s>) -> Part<'s> {
        if let Some(value) = self.plain_string(node) {
            return Part::Literal(value);
        }
        if node.kind() == "identifier" {
            if let Some(value) = self.constants.get(self.text(node)) {
                return Part::Literal(value.clone());
            }
        }
        if node.kind() == "parenthesized_expression" && node.named_child_count() == 1 {
            if let Some(inner) = node.named_child(0) {
                return self.part(inner);
            }
        }
        Part::Unknown(node)
    }

    fn visit(&mut self, node: Node<'s>) {
        match node.kind() {
            "binary_operator" => {
                let operator = node
                    .child_by_field_name("operator")
                    .map(|o| self.text(o))
                    .unwrap_or("");
                let parent_is_plus = node.parent().is_some_and(|p| {
                    p.kind() == "binary_operator"
                        && p.child_by_field_name("operator")
                            .is_some_and(|o| self.text(o) == "+")
                });
                if operator == "+" && !parent_is_plus {
                    let mut parts = Vec::new();
                    self.plus_parts(node, &mut parts);
                    self.record(&parts);
                } else if operator == "%" {
                    let Some(template) = node
                        .child_by_field_name("left")
                        .and_then(|l| self.plain_string(l))
                    else {
                        return;
                    };
                    let parts = percent_parts(&template, node);
                    self.record(&parts);
                }
            }
            "string" => {
                let mut cursor = node.walk();
                let children: Vec<Node> = node.children(&mut cursor).collect();
                if !children.iter().any(|c| c.kind() == "interpolation") {
                    return;
                }
                let mut parts = Vec::new();
                for child in children {
                    match child.kind() {
                        "string_content" | "escape_sequence" => {
                            parts.push(Part::Literal(self.text(child).to_string()))
                        }
                        "interpolation" => match child.named_child(0) {
                            Some(expression) => parts.push(self.part(expression)),
                            None => parts.push(Part::Unknown(child)),
                        },
                        _ => {}
                    }
                }
                self.record(&parts);
            }
            "call" => {
                let Some(function) = node.child_by_field_name("function") else {
                    return;
                };
                if function.kind() != "attribute"
                    || function
                        .child_by_field_name("attribute")
                        .is_none_or(|a| self.text(a) != "format")
                {
                    return;
                }
                let Some(template) = function
                    .child_by_field_name("object")
                    .and_then(|o| self.plain_string(o))
                else {
                    return;
                };
                let parts = brace_parts(&template, node);
                self.record(&parts);
            }
            _ => {}
        }
    }

    /// The operands of a chain of `+`, in order.
    fn plus_parts(&self, node: Node<'s>, parts: &mut Vec<Part<'s>>) {
        // Left-nested chains: walk down the left spine, then read back.
        let mut spine = vec![node];
        let mut left = node.child_by_field_name("left");
        while let Some(l) = left {
            let is_plus = l.kind() == "binary_operator"
                && l.child_by_field_name("operator")
                    .is_some_and(|o| self.text(o) == "+");
            if !is_plus || spine.len() > 256 {
                break;
            }
            spine.push(l);
            left = l.child_by_field_name("left");
        }
        if let Some(l) = left {
            parts.push(self.part(l));
        }
        for op in spine.iter().rev() {
            match op.child_by_field_name("right") {
                Some(r) => parts.push(self.part(r)),
                None => parts.push(Part::Unknown(*op)),
            }
        }
    }

    /// Records what a sequence of parts builds.
    fn record(&mut self, parts: &[Part<'s>]) {
        let unknown: Vec<usize> = parts
            .iter()
            .enumerate()
            .filter(|(_, p)| matches!(p, Part::Unknown(_)))
            .map(|(i, _)| i)
            .collect();
        let literal = |range: &[Part]| -> String {
            range
                .iter()
                .map(|p| match p {
                    Part::Literal(s) => s.as_str(),
                    Part::Unknown(_) => "",
                })
                .collect()
        };
        match unknown.as_slice() {
            [] => {
                let name = literal(parts);
                if !name.is_empty() && is_word(&name) {
                    self.out.exact.push(name);
                }
            }
            &[i] => {
                let (head, tail) = (literal(&parts[..i]), literal(&parts[i + 1..]));
                if !is_word(&head) || !is_word(&tail) {
                    return;
                }
                let Part::Unknown(node) = parts[i] else {
                    return;
                };
                let resolved = (node.kind() == "identifier")
                    .then(|| self.loop_values(node, self.text(node)))
                    .flatten();
                match resolved {
                    Some(values) => self.out.exact.extend(
                        values
                            .iter()
                            .map(|v| format!("{head}{v}{tail}"))
                            .filter(|n| is_word(n)),
                    ),
                    None => self.pattern(head, tail),
                }
            }
            &[first, .., last] => {
                let (head, tail) = (literal(&parts[..first]), literal(&parts[last + 1..]));
                if is_word(&head) && is_word(&tail) {
                    self.pattern(head, tail);
                }
            }
        }
    }

    /// A pattern worth keeping: at least three known characters at one end,
    /// so `x + "s"` does not make every name ending in `s` built (and a file
    /// can be passed over when no string literal of it starts or ends with
    /// three characters of a name, see `model::mentions`).
    fn pattern(&mut self, head: String, tail: String) {
        if head.len() >= 3 || tail.len() >= 3 {
            self.out.patterns.push((head, tail));
        }
    }
}

/// The parts of a `str.format` template: `{…}` fields are unknown.
fn brace_parts<'t>(template: &str, at: Node<'t>) -> Vec<Part<'t>> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '{' if chars.peek() == Some(&'{') => {
                chars.next();
                literal.push('{');
            }
            '}' if chars.peek() == Some(&'}') => {
                chars.next();
                literal.push('}');
            }
            '{' => {
                parts.push(Part::Literal(std::mem::take(&mut literal)));
                for c in chars.by_ref() {
                    if c == '}' {
                        break;
                    }
                }
                parts.push(Part::Unknown(at));
            }
            c => literal.push(c),
        }
    }
    parts.push(Part::Literal(literal));
    parts
}

/// The parts of a `%` template: conversions (`%s`, `%(key)s`, `%05d`) are
/// unknown, `%%` is a percent sign.
fn percent_parts<'t>(template: &str, at: Node<'t>) -> Vec<Part<'t>> {
    let mut parts = Vec::new();
    let mut literal = String::new();
    let mut chars = template.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            literal.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            literal.push('%');
            continue;
        }
        parts.push(Part::Literal(std::mem::take(&mut literal)));
        if chars.peek() == Some(&'(') {
            for c in chars.by_ref() {
                if c == ')' {
                    break;
                }
            }
        }
        // Flags, width, precision, then the conversion letter.
        for c in chars.by_ref() {
            if c.is_ascii_alphabetic() {
                break;
            }
        }
        parts.push(Part::Unknown(at));
    }
    parts.push(Part::Literal(literal));
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn concatenation_resolved_over_a_dict_literal_loop() {
        let built = scan(
            "def f(context, status, result):\n    for suffix, value in {\"status\": status, \"result\": result}.items():\n        _set(context, \"bundle_repair_\" + suffix, value)\n",
        );
        assert_eq!(
            built.exact,
            ["bundle_repair_result", "bundle_repair_status"]
        );
        assert!(built.patterns.is_empty());
        assert!(!built.builds("bundle_repair_other"));
    }

    #[test]
    fn forms_that_leave_a_pattern_or_resolve() {
        let src = r#"PREFIX = "draft_"
KEYS = ("a", "b")
def f(ctx, name, n):
    ctx.set(PREFIX + name, 1)
    ctx.get(f"{name}_summary")
    ctx.get("stage_{}_done".format(n))
    ctx.get("retry_%s" % name)
    for k in KEYS:
        ctx.set(f"lane_{k}", 1)
    [ctx.get("tab_" + t) for t in ("x", "y")]
    open(f"modules/{name}/module.yaml")
    ctx.get(name + "s")
"#;
        let built = scan(src);
        for name in [
            "draft_plan",
            "order_summary",
            "stage_2_done",
            "retry_count",
            "lane_a",
            "lane_b",
            "tab_x",
            "tab_y",
        ] {
            assert!(built.builds(name), "{name}: {built:?}");
        }
        for name in ["lane_c", "tab_z", "summary", "orders", "modules"] {
            assert!(!built.builds(name), "{name}: {built:?}");
        }
    }

    #[test]
    fn broken_source_builds_nothing_worse_than_what_parses() {
        let built = scan("def f(:\n  x = \"a_\" + y\n");
        assert!(built.builds("a_b") || built.is_empty());
    }
}
