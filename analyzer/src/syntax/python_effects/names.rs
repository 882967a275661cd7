//! Names, literals and imports as the syntax tree writes them, shared by the
//! module and function readers.

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, ExprContext, Number, Stmt, UnaryOp};

use super::Import;
use crate::base::TextRange;
use crate::syntax::Value;

pub(super) fn range(r: ruff_text_size::TextRange) -> TextRange {
    TextRange::new(r.start().to_u32(), r.end().to_u32())
}

/// The names an import statement binds, and what they name.
pub(super) fn imports_of(stmt: &Stmt, out: &mut Vec<Import>) {
    match stmt {
        Stmt::Import(i) => {
            for alias in &i.names {
                let dotted = alias.name.id.as_str();
                // `import a.b` binds `a`; `import a.b as m` binds `a.b`.
                let (local, module) = match &alias.asname {
                    Some(a) => (a.id.as_str(), dotted),
                    None => {
                        let head = dotted.split('.').next().unwrap_or("");
                        (head, head)
                    }
                };
                out.push(Import {
                    local: local.into(),
                    module: module.into(),
                    level: 0,
                    name: None,
                });
            }
        }
        Stmt::ImportFrom(i) => {
            for alias in &i.names {
                out.push(Import {
                    local: alias
                        .asname
                        .as_ref()
                        .unwrap_or(&alias.name)
                        .id
                        .as_str()
                        .into(),
                    module: i.module.as_ref().map_or("", |m| m.id.as_str()).into(),
                    level: i.level,
                    name: Some(alias.name.id.as_str().into()),
                });
            }
        }
        _ => {}
    }
}

/// A literal constant.
pub(super) fn literal(expr: &Expr) -> Option<Value> {
    Some(match expr {
        Expr::StringLiteral(s) => Value::Str(s.value.to_str().to_string()),
        Expr::NumberLiteral(n) => match &n.value {
            Number::Int(i) => Value::Int((i.as_i64()? as i128).into()),
            Number::Float(f) => Value::Float(*f),
            Number::Complex { .. } => return None,
        },
        Expr::BooleanLiteral(b) => Value::Bool(b.value),
        Expr::NoneLiteral(_) => Value::Null,
        Expr::UnaryOp(u) if u.op == UnaryOp::USub => match literal(&u.operand)? {
            Value::Int(i) => Value::Int((-i.get()).into()),
            Value::Float(f) => Value::Float(-f),
            _ => return None,
        },
        _ => return None,
    })
}

/// `a.b.c` as written, when it is names all the way down.
pub(super) fn dotted(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Name(n) => Some(n.id.to_string()),
        Expr::Attribute(a) => Some(format!("{}.{}", dotted(&a.value)?, a.attr.id)),
        _ => None,
    }
}

/// Names stored by a statement or expression (assignment targets, loop
/// variables, `with … as`, walrus, imports, nested defs).
#[derive(Default)]
pub(super) struct StoredNames(pub(super) Vec<String>);

impl<'a> Visitor<'a> for StoredNames {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(f) => self.0.push(f.name.id.to_string()),
            Stmt::ClassDef(c) => self.0.push(c.name.id.to_string()),
            Stmt::Import(i) => {
                for a in &i.names {
                    let n = a.asname.as_ref().unwrap_or(&a.name).id.as_str();
                    self.0.push(n.split('.').next().unwrap_or(n).to_string());
                }
            }
            Stmt::ImportFrom(i) => {
                for a in &i.names {
                    self.0
                        .push(a.asname.as_ref().unwrap_or(&a.name).id.to_string());
                }
            }
            Stmt::Global(g) => self.0.extend(g.names.iter().map(|n| n.id.to_string())),
            Stmt::Nonlocal(g) => self.0.extend(g.names.iter().map(|n| n.id.to_string())),
            Stmt::Try(t) => {
                for h in &t.handlers {
                    let ast::ExceptHandler::ExceptHandler(h) = h;
                    if let Some(n) = &h.name {
                        self.0.push(n.id.to_string());
                    }
                }
                visitor::walk_stmt(self, stmt);
            }
            _ => visitor::walk_stmt(self, stmt),
        }
    }
    fn visit_expr(&mut self, expr: &'a Expr) {
        stacker::maybe_grow(64 << 10, 1 << 20, || {
            if let Expr::Name(n) = expr {
                if n.ctx != ExprContext::Load {
                    self.0.push(n.id.to_string());
                }
            }
            visitor::walk_expr(self, expr);
        })
    }
    fn visit_pattern(&mut self, pattern: &'a ast::Pattern) {
        match pattern {
            ast::Pattern::MatchAs(p) => self.0.extend(p.name.iter().map(|n| n.id.to_string())),
            ast::Pattern::MatchStar(p) => self.0.extend(p.name.iter().map(|n| n.id.to_string())),
            ast::Pattern::MatchMapping(p) => self.0.extend(p.rest.iter().map(|n| n.id.to_string())),
            _ => {}
        }
        visitor::walk_pattern(self, pattern);
    }
}

/// Names declared `global` anywhere.
#[derive(Default)]
pub(super) struct GlobalDecls(pub(super) Vec<String>);

impl<'a> Visitor<'a> for GlobalDecls {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        stacker::maybe_grow(64 << 10, 1 << 20, || {
            if let Stmt::Global(g) = stmt {
                self.0.extend(g.names.iter().map(|n| n.id.to_string()));
            }
            visitor::walk_stmt(self, stmt);
        })
    }
    fn visit_expr(&mut self, _: &'a Expr) {}
}

/// Names read anywhere inside (a nested function, lambda or comprehension).
#[derive(Default)]
pub(super) struct LoadedNames(pub(super) Vec<(String, TextRange)>);

impl<'a> Visitor<'a> for LoadedNames {
    fn visit_expr(&mut self, expr: &'a Expr) {
        stacker::maybe_grow(64 << 10, 1 << 20, || {
            if let Expr::Name(n) = expr {
                if n.ctx == ExprContext::Load {
                    self.0.push((n.id.to_string(), range(n.range)));
                }
            }
            visitor::walk_expr(self, expr);
        })
    }
}
