//! Python tool, hook and middleware files, parsed with tree-sitter-python and
//! never imported: top-level functions with their parameters, imported and
//! assigned names, string literals, and syntax errors.

use tree_sitter::{Node, Parser};

use super::TextRange;

/// How a parameter can be passed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    PositionalOnly,
    PositionalOrKeyword,
    KeywordOnly,
    /// `*args`
    VarPositional,
    /// `**kwargs`
    VarKeyword,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub kind: ParamKind,
    pub has_default: bool,
    pub range: TextRange,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    pub name_range: TextRange,
    pub is_async: bool,
    pub params: Vec<Param>,
}

impl Function {
    pub fn param(&self, name: &str) -> Option<&Param> {
        self.params.iter().find(|p| p.name == name)
    }

    pub fn has_var_keyword(&self) -> bool {
        self.params.iter().any(|p| p.kind == ParamKind::VarKeyword)
    }
}

/// What a module defines at top level, as far as static reading can tell.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Module {
    pub functions: Vec<Function>,
    /// Names bound by `import` / `from … import` (the name as bound).
    pub imported: Vec<(String, TextRange)>,
    /// Names bound by top-level assignments.
    pub assigned: Vec<(String, TextRange)>,
    /// Contents of every string literal (used to see which context keys code mentions).
    pub strings: Vec<String>,
    /// `context_variables.set("key", …)` calls with a literal key.
    pub context_writes: Vec<(String, TextRange)>,
    pub syntax_errors: Vec<TextRange>,
}

impl Module {
    pub fn function(&self, name: &str) -> Option<&Function> {
        self.functions.iter().rev().find(|f| f.name == name)
    }
}

fn range(node: Node<'_>) -> TextRange {
    TextRange::new(node.start_byte() as u32, node.end_byte() as u32)
}

fn text<'s>(node: Node<'_>, src: &'s str) -> &'s str {
    src.get(node.start_byte()..node.end_byte()).unwrap_or("")
}

/// Parses a Python source file. Never panics; a file tree-sitter cannot
/// parse at all yields an empty module with one syntax error.
pub fn parse(src: &str) -> Module {
    let mut parser = Parser::new();
    let mut module = Module::default();
    if parser.set_language(&tree_sitter_python::LANGUAGE.into()).is_err() {
        return module;
    }
    let Some(tree) = parser.parse(src, None) else {
        module.syntax_errors.push(TextRange::empty(0));
        return module;
    };
    let root = tree.root_node();
    let mut cursor = root.walk();
    for child in root.named_children(&mut cursor) {
        top_level(child, src, &mut module);
    }
    if root.has_error() {
        collect_errors(root, &mut module.syntax_errors);
    }
    walk_strings(root, src, &mut module);
    module
}

fn top_level(node: Node<'_>, src: &str, module: &mut Module) {
    match node.kind() {
        "decorated_definition" => {
            if let Some(def) = node.child_by_field_name("definition") {
                top_level(def, src, module);
            }
        }
        "function_definition" => {
            if let Some(f) = function(node, src) {
                module.functions.push(f);
            }
        }
        "import_statement" | "import_from_statement" | "future_import_statement" => {
            let mut cursor = node.walk();
            for name in node.children_by_field_name("name", &mut cursor) {
                let bound = match name.kind() {
                    "aliased_import" => name.child_by_field_name("alias").unwrap_or(name),
                    _ => name,
                };
                // `import a.b` binds `a`.
                let bound_text = text(bound, src).split('.').next().unwrap_or("").to_string();
                module.imported.push((bound_text, range(bound)));
            }
        }
        "expression_statement" => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                if child.kind() == "assignment" {
                    if let Some(left) = child.child_by_field_name("left") {
                        if left.kind() == "identifier" {
                            module.assigned.push((text(left, src).to_string(), range(left)));
                        }
                    }
                }
            }
        }
        // Definitions inside `if`/`try` at module level are still module attributes.
        "if_statement" | "try_statement" | "with_statement" | "block" | "else_clause" | "elif_clause" | "except_clause"
        | "finally_clause" => {
            let mut cursor = node.walk();
            for child in node.named_children(&mut cursor) {
                top_level(child, src, module);
            }
        }
        _ => {}
    }
}

fn function(node: Node<'_>, src: &str) -> Option<Function> {
    let name = node.child_by_field_name("name")?;
    let is_async = node.child(0).is_some_and(|c| c.kind() == "async");
    let mut params = Vec::new();
    if let Some(list) = node.child_by_field_name("parameters") {
        let mut keyword_only = false;
        let mut cursor = list.walk();
        for p in list.named_children(&mut cursor) {
            let (ident, kind, has_default) = match p.kind() {
                "identifier" => (Some(p), ParamKind::PositionalOrKeyword, false),
                "typed_parameter" => {
                    // `x: T`, `*args: T` or `**kw: T`
                    let inner = p.named_child(0);
                    match inner.map(|i| i.kind()) {
                        Some("list_splat_pattern") => (inner.and_then(|i| i.named_child(0)), ParamKind::VarPositional, false),
                        Some("dictionary_splat_pattern") => (inner.and_then(|i| i.named_child(0)), ParamKind::VarKeyword, false),
                        _ => (inner, ParamKind::PositionalOrKeyword, false),
                    }
                }
                "default_parameter" | "typed_default_parameter" => {
                    (p.child_by_field_name("name"), ParamKind::PositionalOrKeyword, true)
                }
                "list_splat_pattern" => (p.named_child(0), ParamKind::VarPositional, false),
                "dictionary_splat_pattern" => (p.named_child(0), ParamKind::VarKeyword, false),
                "keyword_separator" => {
                    keyword_only = true;
                    continue;
                }
                "positional_separator" => {
                    for earlier in params.iter_mut() {
                        let earlier: &mut Param = earlier;
                        if earlier.kind == ParamKind::PositionalOrKeyword {
                            earlier.kind = ParamKind::PositionalOnly;
                        }
                    }
                    continue;
                }
                _ => continue,
            };
            let Some(ident) = ident else { continue };
            let kind = match kind {
                ParamKind::PositionalOrKeyword if keyword_only => ParamKind::KeywordOnly,
                other => other,
            };
            if kind == ParamKind::VarPositional {
                keyword_only = true;
            }
            params.push(Param {
                name: text(ident, src).to_string(),
                kind,
                has_default,
                range: range(p),
            });
        }
    }
    Some(Function {
        name: text(name, src).to_string(),
        name_range: range(name),
        is_async,
        params,
    })
}

fn collect_errors(root: Node<'_>, out: &mut Vec<TextRange>) {
    // Iterative walk: tool files can be deep, recursion is not bounded by input.
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        if out.len() >= 5 {
            return;
        }
        if node.is_error() || node.is_missing() {
            out.push(range(node));
            continue;
        }
        if node.has_error() {
            let mut cursor = node.walk();
            let children: Vec<_> = node.children(&mut cursor).collect();
            stack.extend(children.into_iter().rev());
        }
    }
}

/// Collects string literal contents and `<x>.set("key", …)` calls on a
/// `context_variables`-like receiver.
fn walk_strings(root: Node<'_>, src: &str, module: &mut Module) {
    let mut stack = vec![root];
    while let Some(node) = stack.pop() {
        match node.kind() {
            "string" => {
                let mut content = String::new();
                let mut cursor = node.walk();
                for part in node.named_children(&mut cursor) {
                    if part.kind() == "string_content" {
                        content.push_str(text(part, src));
                    }
                }
                module.strings.push(content);
                continue;
            }
            "call" => {
                if let (Some(function), Some(arguments)) = (node.child_by_field_name("function"), node.child_by_field_name("arguments")) {
                    if function.kind() == "attribute" {
                        let attribute = function.child_by_field_name("attribute").map(|a| text(a, src));
                        let object = function.child_by_field_name("object").map(|o| text(o, src)).unwrap_or("");
                        if attribute == Some("set") && object.contains("context") {
                            if let Some(first) = arguments.named_child(0).filter(|a| a.kind() == "string") {
                                let mut cursor = first.walk();
                                let key: String = first
                                    .named_children(&mut cursor)
                                    .filter(|p| p.kind() == "string_content")
                                    .map(|p| text(p, src))
                                    .collect();
                                module.context_writes.push((key, range(first)));
                            }
                        }
                    }
                }
            }
            _ => {}
        }
        let mut cursor = node.walk();
        let children: Vec<_> = node.named_children(&mut cursor).collect();
        stack.extend(children.into_iter().rev());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn functions_and_parameter_kinds() {
        let src = "import os\nfrom a.b import c as d, e\nX = 1\n\n@decorator\nasync def f(a, /, b, c=1, *args, d, e: int = 2, **kw):\n    context_variables.set('key_one', 1)\n    return 'text'\n\ndef g(x: int, *, y): pass\n";
        let m = parse(src);
        assert!(m.syntax_errors.is_empty());
        let f = m.function("f").unwrap();
        assert!(f.is_async);
        let kinds: Vec<(&str, ParamKind, bool)> = f.params.iter().map(|p| (p.name.as_str(), p.kind, p.has_default)).collect();
        assert_eq!(
            kinds,
            vec![
                ("a", ParamKind::PositionalOnly, false),
                ("b", ParamKind::PositionalOrKeyword, false),
                ("c", ParamKind::PositionalOrKeyword, true),
                ("args", ParamKind::VarPositional, false),
                ("d", ParamKind::KeywordOnly, false),
                ("e", ParamKind::KeywordOnly, true),
                ("kw", ParamKind::VarKeyword, false),
            ]
        );
        assert_eq!(&src[f.name_range.start as usize..f.name_range.end as usize], "f");
        let g = m.function("g").unwrap();
        assert_eq!(g.params[1].kind, ParamKind::KeywordOnly);
        let imported: Vec<&str> = m.imported.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(imported, vec!["os", "d", "e"]);
        assert_eq!(m.assigned[0].0, "X");
        assert_eq!(m.context_writes[0].0, "key_one");
        assert!(m.strings.contains(&"text".to_string()));
    }

    #[test]
    fn syntax_errors_are_located_and_the_rest_is_kept() {
        let m = parse("def ok(a):\n    pass\n\ndef broken(:\n    pass\n");
        assert!(!m.syntax_errors.is_empty());
        assert!(m.function("ok").is_some());
    }
}
