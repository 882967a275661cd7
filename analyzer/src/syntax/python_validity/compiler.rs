//! The errors CPython's compiler raises after parsing (`return` outside a
//! function, `break` outside a loop, `nonlocal` at module level, a starred
//! assignment target on its own …): an import fails on them just as on a
//! parse error.
//!
//! ruff's `SemanticSyntaxChecker` knows the rules; it asks its caller where
//! in the module each node is (function, class, comprehension, loop, the
//! scope's `global` declarations). This walk answers, and only the rules
//! whose answers it gives exactly, and that hold on every Python from 3.11
//! on, are reported ([`reported`]).

use std::cell::RefCell;

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, PythonVersion, Stmt};
use ruff_python_parser::semantic_errors::{
    LazyImportContext, SemanticSyntaxChecker, SemanticSyntaxContext, SemanticSyntaxError,
    SemanticSyntaxErrorKind as Kind,
};
use ruff_text_size::TextRange;

/// The first compile-time error of a parsed module, by position.
pub(super) fn first_error(module: &ast::ModModule, source: &str) -> Option<SemanticSyntaxError> {
    let mut walk = Walk {
        checker: SemanticSyntaxChecker::new(),
        scopes: vec![Scope::new(ScopeKind::Module, &module.body)],
        source,
        errors: RefCell::new(Vec::new()),
    };
    walk.visit_body(&module.body);
    walk.errors
        .into_inner()
        .into_iter()
        .filter(|e| reported(&e.kind))
        .min_by_key(|e| e.range.start())
}

/// The rules reported. Left out: those that need every binding of the
/// enclosing scopes (`nonlocal` without a binding, use before `nonlocal`),
/// those that depend on the Python version (type parameters, async
/// comprehensions, lazy imports, expressions in annotations), and a name
/// both `nonlocal` and `global` (the checker has the kind, not the check).
fn reported(kind: &Kind) -> bool {
    matches!(
        kind,
        Kind::ReturnOutsideFunction
            | Kind::YieldOutsideFunction(_)
            | Kind::AwaitOutsideAsyncFunction(_)
            | Kind::BreakOutsideLoop
            | Kind::ContinueOutsideLoop
            | Kind::NonlocalDeclarationAtModuleLevel
            | Kind::NonModuleImportStar(_)
            | Kind::DuplicateParameter(_)
            | Kind::DuplicateKeywordArgument(_)
            | Kind::SingleStarredAssignment
            | Kind::MultipleStarredExpressions
            | Kind::InvalidStarExpression
            | Kind::WriteToDebug(_)
            | Kind::LoadBeforeGlobalDeclaration { .. }
            | Kind::AnnotatedGlobal(_)
            | Kind::GlobalParameter(_)
            | Kind::NonlocalParameter(_)
            | Kind::LateFutureImport
            | Kind::FutureFeatureNotDefined(_)
            | Kind::IrrefutableCasePattern(_)
            | Kind::MultipleCaseAssignment(_)
            | Kind::MultipleStarredNamesInSequencePattern
            | Kind::DuplicateMatchKey(_)
            | Kind::DuplicateMatchClassAttribute(_)
            | Kind::DifferentMatchPatternBindings
            | Kind::ReboundComprehensionVariable
            | Kind::NamedExpressionInComprehensionIterable
            | Kind::NamedExpressionInClassBodyComprehension
            | Kind::YieldFromInAsyncFunction
            | Kind::ReturnInGenerator
    )
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ScopeKind {
    Module,
    Class,
    Function {
        is_async: bool,
    },
    Lambda,
    /// The part of a comprehension Python runs in its own scope: all but
    /// the first iterable.
    Comprehension {
        is_async: bool,
        generator: bool,
    },
}

struct Scope {
    kind: ScopeKind,
    /// `global` declarations of this scope's own body (not nested scopes'),
    /// by name; Python applies them to the whole body, before and after.
    globals: Vec<(String, TextRange)>,
    parameters: Vec<String>,
    /// Loops around the current statement, within this scope.
    loops: usize,
}

impl Scope {
    fn new(kind: ScopeKind, body: &[Stmt]) -> Scope {
        let mut globals = Vec::new();
        collect_globals(body, &mut globals);
        Scope {
            kind,
            globals,
            parameters: Vec::new(),
            loops: 0,
        }
    }

    fn plain(kind: ScopeKind) -> Scope {
        Scope {
            kind,
            globals: Vec::new(),
            parameters: Vec::new(),
            loops: 0,
        }
    }
}

/// The names a body declares `global`, through compound statements but not
/// into nested functions or classes (their own scopes).
fn collect_globals(body: &[Stmt], out: &mut Vec<(String, TextRange)>) {
    let mut pending: Vec<&[Stmt]> = vec![body];
    while let Some(body) = pending.pop() {
        for stmt in body {
            match stmt {
                Stmt::Global(g) => out.extend(g.names.iter().map(|n| (n.id.to_string(), g.range))),
                Stmt::If(s) => {
                    pending.push(&s.body);
                    pending.extend(s.elif_else_clauses.iter().map(|c| &c.body[..]));
                }
                Stmt::For(s) => pending.extend([&s.body[..], &s.orelse[..]]),
                Stmt::While(s) => pending.extend([&s.body[..], &s.orelse[..]]),
                Stmt::With(s) => pending.push(&s.body),
                Stmt::Try(s) => {
                    pending.extend([&s.body[..], &s.orelse[..], &s.finalbody[..]]);
                    pending.extend(s.handlers.iter().map(|h| match h {
                        ast::ExceptHandler::ExceptHandler(h) => &h.body[..],
                    }));
                }
                Stmt::Match(s) => pending.extend(s.cases.iter().map(|c| &c.body[..])),
                _ => {}
            }
        }
    }
}

struct Walk<'s> {
    checker: SemanticSyntaxChecker,
    scopes: Vec<Scope>,
    source: &'s str,
    errors: RefCell<Vec<SemanticSyntaxError>>,
}

impl Walk<'_> {
    fn scope(&self) -> &Scope {
        // The module's scope is never popped: there is always a last one.
        &self.scopes[self.scopes.len() - 1]
    }

    /// The innermost scope that is not a comprehension's.
    fn enclosing(&self) -> ScopeKind {
        self.scopes
            .iter()
            .rev()
            .map(|s| s.kind)
            .find(|k| !matches!(k, ScopeKind::Comprehension { .. }))
            .unwrap_or(ScopeKind::Module)
    }

    fn check_stmt(&mut self, stmt: &Stmt) {
        let mut checker = std::mem::take(&mut self.checker);
        checker.visit_stmt(stmt, self);
        self.checker = checker;
    }

    fn check_expr(&mut self, expr: &Expr) {
        let mut checker = std::mem::take(&mut self.checker);
        checker.visit_expr(expr, self);
        self.checker = checker;
    }

    /// Defaults and annotations run in the enclosing scope.
    fn parameters_outside(&mut self, parameters: &ast::Parameters) {
        for p in parameters.iter() {
            if let Some(default) = p.default() {
                self.visit_expr(default);
            }
            if let Some(annotation) = p.annotation() {
                self.visit_expr(annotation);
            }
        }
    }

    fn in_scope(&mut self, scope: Scope, f: impl FnOnce(&mut Self)) {
        self.scopes.push(scope);
        f(self);
        self.scopes.pop();
    }

    fn comprehension(
        &mut self,
        generators: &[ast::Comprehension],
        generator: bool,
        elements: &[&Expr],
    ) {
        let Some(first) = generators.first() else {
            return;
        };
        self.visit_expr(&first.iter);
        let is_async = generators.iter().any(|g| g.is_async);
        self.in_scope(
            Scope::plain(ScopeKind::Comprehension {
                is_async,
                generator,
            }),
            |walk| {
                for (i, g) in generators.iter().enumerate() {
                    if i > 0 {
                        walk.visit_expr(&g.iter);
                    }
                    walk.visit_expr(&g.target);
                    for condition in &g.ifs {
                        walk.visit_expr(condition);
                    }
                }
                for element in elements {
                    walk.visit_expr(element);
                }
            },
        );
    }

    fn loop_body(&mut self, body: &[Stmt]) {
        let last = self.scopes.len() - 1;
        self.scopes[last].loops += 1;
        self.visit_body(body);
        self.scopes[last].loops -= 1;
    }
}

impl<'a> Visitor<'a> for Walk<'_> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        // Nesting is bounded by the caller (see `SHALLOW_LINE_BYTES`), but a
        // debug build's frames are large: grow the stack on the heap.
        stacker::maybe_grow(64 << 10, 1 << 20, || {
            self.check_stmt(stmt);
            match stmt {
                Stmt::FunctionDef(f) => {
                    for d in &f.decorator_list {
                        self.visit_decorator(d);
                    }
                    self.parameters_outside(&f.parameters);
                    if let Some(returns) = &f.returns {
                        self.visit_expr(returns);
                    }
                    let mut scope = Scope::new(
                        ScopeKind::Function {
                            is_async: f.is_async,
                        },
                        &f.body,
                    );
                    scope.parameters = f.parameters.iter().map(|p| p.name().to_string()).collect();
                    self.in_scope(scope, |walk| walk.visit_body(&f.body));
                }
                Stmt::ClassDef(c) => {
                    for d in &c.decorator_list {
                        self.visit_decorator(d);
                    }
                    if let Some(arguments) = &c.arguments {
                        self.visit_arguments(arguments);
                    }
                    self.in_scope(Scope::new(ScopeKind::Class, &c.body), |walk| {
                        walk.visit_body(&c.body)
                    });
                }
                Stmt::For(s) => {
                    self.visit_expr(&s.target);
                    self.visit_expr(&s.iter);
                    self.loop_body(&s.body);
                    self.visit_body(&s.orelse);
                }
                Stmt::While(s) => {
                    self.visit_expr(&s.test);
                    self.loop_body(&s.body);
                    self.visit_body(&s.orelse);
                }
                _ => visitor::walk_stmt(self, stmt),
            }
        })
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        stacker::maybe_grow(64 << 10, 1 << 20, || {
            self.check_expr(expr);
            match expr {
                Expr::Lambda(l) => {
                    if let Some(parameters) = &l.parameters {
                        self.parameters_outside(parameters);
                    }
                    let mut scope = Scope::plain(ScopeKind::Lambda);
                    if let Some(parameters) = &l.parameters {
                        scope.parameters =
                            parameters.iter().map(|p| p.name().to_string()).collect();
                    }
                    self.in_scope(scope, |walk| walk.visit_expr(&l.body));
                }
                Expr::ListComp(c) => self.comprehension(&c.generators, false, &[&c.elt]),
                Expr::SetComp(c) => self.comprehension(&c.generators, false, &[&c.elt]),
                Expr::Generator(c) => self.comprehension(&c.generators, true, &[&c.elt]),
                Expr::DictComp(c) => {
                    let mut elements: Vec<&Expr> = c.key.iter().map(|k| &**k).collect();
                    elements.push(&c.value);
                    self.comprehension(&c.generators, false, &elements);
                }
                _ => visitor::walk_expr(self, expr),
            }
        })
    }
}

impl SemanticSyntaxContext for Walk<'_> {
    fn future_annotations_or_stub(&self) -> bool {
        false
    }

    fn lazy_import_context(&self) -> Option<LazyImportContext> {
        None
    }

    fn python_version(&self) -> PythonVersion {
        // mozaiks 0.2.0's lowest; version-dependent rules are not reported.
        PythonVersion::PY311
    }

    fn source(&self) -> &str {
        self.source
    }

    fn global(&self, name: &str) -> Option<TextRange> {
        match self.scope().kind {
            ScopeKind::Lambda | ScopeKind::Comprehension { .. } => None,
            _ => self
                .scope()
                .globals
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, r)| *r),
        }
    }

    fn has_nonlocal_binding(&self, _name: &str) -> bool {
        // Not known here: `nonlocal` without a binding is not reported.
        true
    }

    fn in_async_context(&self) -> bool {
        matches!(self.enclosing(), ScopeKind::Function { is_async: true })
    }

    fn in_await_allowed_context(&self) -> bool {
        // A generator expression runs lazily: `await` in it is allowed
        // wherever the expression is.
        matches!(
            self.enclosing(),
            ScopeKind::Function { .. } | ScopeKind::Lambda
        ) || self.in_generator_context()
    }

    fn in_yield_allowed_context(&self) -> bool {
        matches!(
            self.scope().kind,
            ScopeKind::Function { .. } | ScopeKind::Lambda
        )
    }

    fn in_sync_comprehension(&self) -> bool {
        self.scopes.iter().any(|s| {
            matches!(
                s.kind,
                ScopeKind::Comprehension {
                    is_async: false,
                    ..
                }
            )
        })
    }

    fn in_class_body_comprehension(&self) -> bool {
        // Asked when the comprehension itself is visited, from the scope
        // around it, and from the comprehensions nested in it.
        self.enclosing() == ScopeKind::Class
    }

    fn in_module_scope(&self) -> bool {
        self.scope().kind == ScopeKind::Module
    }

    fn in_function_scope(&self) -> bool {
        matches!(
            self.scope().kind,
            ScopeKind::Function { .. } | ScopeKind::Lambda
        )
    }

    fn in_generator_context(&self) -> bool {
        matches!(
            self.scope().kind,
            ScopeKind::Comprehension {
                generator: true,
                ..
            }
        )
    }

    fn in_notebook(&self) -> bool {
        false
    }

    fn report_semantic_error(&self, error: SemanticSyntaxError) {
        self.errors.borrow_mut().push(error);
    }

    fn in_loop_context(&self) -> bool {
        self.scope().loops > 0
    }

    fn is_bound_parameter(&self, name: &str) -> bool {
        self.scope().parameters.iter().any(|p| p == name)
    }
}
