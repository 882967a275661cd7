//! The module level: its imports, constants, tables and `Enum` members, and
//! each top-level function's effects.

use ruff_python_ast::visitor::Visitor;
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::Ranged;

use super::function::{bounded, function};
use super::names::{dotted, imports_of, literal, range, GlobalDecls, StoredNames};
use super::{Import, ModuleEffects, Sym};
use crate::base::hash::{HashMap, HashSet};

/// Largest module-level table read (in nodes, about two per entry).
const MAX_CONSTANT_SIZE: usize = 4096;

/// Reads a parsed module's effects.
pub fn read(module: &ast::ModModule) -> ModuleEffects {
    let mut out = ModuleEffects::default();
    let mut function_imports: Vec<Import> = Vec::new();
    let mut globals: HashMap<Box<str>, Option<Sym>> = HashMap::default();
    let bind = |globals: &mut HashMap<Box<str>, Option<Sym>>, name: Box<str>, sym: Sym| {
        globals
            .entry(name)
            .and_modify(|s| *s = None)
            .or_insert(Some(sym));
    };
    for stmt in &module.body {
        match stmt {
            Stmt::FunctionDef(f) => {
                out.functions.push(function(f, &mut function_imports));
                globals.insert(f.name.id.as_str().into(), None);
            }
            Stmt::Import(_) | Stmt::ImportFrom(_) => {
                let mut imports = Vec::new();
                imports_of(stmt, &mut imports);
                for i in imports {
                    globals.insert(i.local.clone(), None);
                    out.imports.push(i);
                }
            }
            Stmt::Assign(a) => {
                let value = bounded(
                    constant(&a.value, &globals),
                    MAX_CONSTANT_SIZE,
                    range(a.range),
                );
                for target in &a.targets {
                    match target {
                        Expr::Name(n) => bind(&mut globals, n.id.as_str().into(), value.clone()),
                        other => unbind_targets(other, &mut globals),
                    }
                }
            }
            Stmt::AnnAssign(a) => match (&*a.target, &a.value) {
                (Expr::Name(n), Some(v)) => {
                    let value = bounded(constant(v, &globals), MAX_CONSTANT_SIZE, range(a.range));
                    bind(&mut globals, n.id.as_str().into(), value);
                }
                (target, _) => unbind_targets(target, &mut globals),
            },
            Stmt::ClassDef(c) => {
                globals.insert(c.name.id.as_str().into(), None);
                enum_members(c, &mut globals);
            }
            other => {
                // Anything else binding module names (loops, `with`,
                // `global` in a function, augmented assignment) unbinds them.
                let mut names = StoredNames::default();
                names.visit_stmt(other);
                for n in names.0 {
                    globals.insert(n.into(), None);
                }
            }
        }
    }
    for i in function_imports {
        if !out.imports.iter().any(|m| m.local == i.local) {
            out.imports.push(i);
        }
    }
    // `global X` in a function rebinds X at run time.
    let mut rebound = GlobalDecls::default();
    rebound.visit_body(&module.body);
    for n in rebound.0 {
        globals.insert(n.into(), None);
    }
    let mut globals: Vec<(Box<str>, Sym)> = globals
        .into_iter()
        .filter_map(|(n, s)| Some((n, s?)))
        .collect();
    globals.sort_by(|a, b| a.0.cmp(&b.0));
    out.globals = globals;
    out
}

fn unbind_targets(target: &Expr, globals: &mut HashMap<Box<str>, Option<Sym>>) {
    let mut names = StoredNames::default();
    names.visit_expr(target);
    for n in names.0 {
        globals.insert(n.into(), None);
    }
}

/// A module-level value: literals, tables and names bound before.
fn constant(expr: &Expr, globals: &HashMap<Box<str>, Option<Sym>>) -> Sym {
    stacker::maybe_grow(64 << 10, 1 << 20, || match expr {
        Expr::Dict(d) => {
            let mut items = Vec::with_capacity(d.items.len());
            for item in &d.items {
                let Some(key) = &item.key else {
                    return Sym::Unknown(range(expr.range()));
                };
                items.push((constant(key, globals), constant(&item.value, globals)));
            }
            Sym::Dict(items)
        }
        Expr::List(l) => Sym::Seq(l.elts.iter().map(|e| constant(e, globals)).collect()),
        Expr::Tuple(t) => Sym::Seq(t.elts.iter().map(|e| constant(e, globals)).collect()),
        Expr::Name(n) => match globals.get(n.id.as_str()) {
            Some(Some(s)) => s.clone(),
            _ => Sym::Unknown(range(expr.range())),
        },
        Expr::Attribute(_) => match dotted(expr) {
            Some(name) => Sym::Global(name.into()),
            None => Sym::Unknown(range(expr.range())),
        },
        other => literal(other).map_or(Sym::Unknown(range(expr.range())), Sym::Const),
    })
}

/// `class Verdict(str, Enum): DONE = "done"`: `Verdict.DONE` and
/// `Verdict.DONE.value`.
fn enum_members(class: &ast::StmtClassDef, globals: &mut HashMap<Box<str>, Option<Sym>>) {
    let bases: Vec<String> = class
        .arguments
        .iter()
        .flat_map(|a| a.args.iter())
        .filter_map(dotted)
        .collect();
    let last = |b: &String| b.rsplit('.').next().unwrap_or("").to_string();
    let is_enum = bases
        .iter()
        .any(|b| matches!(last(b).as_str(), "Enum" | "StrEnum" | "IntEnum"));
    if !is_enum {
        return;
    }
    let str_based = bases
        .iter()
        .any(|b| matches!(last(b).as_str(), "str" | "StrEnum"));
    let mut seen: HashSet<String> = HashSet::default();
    for stmt in &class.body {
        let Stmt::Assign(a) = stmt else { continue };
        let [Expr::Name(n)] = &a.targets[..] else {
            continue;
        };
        let Some(value) = literal(&a.value) else {
            continue;
        };
        if !seen.insert(n.id.to_string()) {
            continue;
        }
        // An alias (a second name for an equal value) is the first member.
        let name = format!("{}.{}", class.name.id, n.id);
        globals.insert(
            name.clone().into(),
            Some(Sym::Member {
                value: value.clone(),
                str_based,
            }),
        );
        globals.insert(format!("{name}.value").into(), Some(Sym::Const(value)));
    }
}
