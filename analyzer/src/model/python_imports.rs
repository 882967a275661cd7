//! The modules the bound Python modules import from the bundle or from the
//! workflows root's `_shared` folder, read (never imported) for the helpers
//! they define: where a bound function hands the context to an imported
//! helper, `model::writes` follows it there. Imports of anything else (the
//! standard library, mozaiks, third-party packages) are not read.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::file_cache::FileCache;
use super::python::{BindingOwner, BindingTarget};
use super::Bundle;
use crate::base::fs::normalize;
use crate::base::fs::FileSystem;
use crate::base::FileId;
use crate::syntax::python_effects::{Call, Effect, Import, ModuleEffects, ParamIx};
use crate::syntax::{python, LineIndex};

/// Most modules read beyond the bound ones.
const MAX_IMPORTED_MODULES: usize = 64;

/// A module of the bundle's Python code: bound, or imported by bound code.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ModuleRef {
    Bound(FileId),
    /// Index into [`Bundle::imported_python`].
    Imported(usize),
}

#[derive(Debug, Clone)]
pub struct ImportedModule {
    /// Path relative to the bundle folder (`../_shared/…` for shared code).
    pub relative: String,
    pub text: Arc<str>,
    pub line_index: LineIndex,
    pub module: python::Module,
}

/// What a name a module imports stands for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Link {
    /// `import pkg.mod as m`, `from . import helpers`: a module.
    Module(ModuleRef),
    /// `from .helpers import store`: a name defined by a module.
    Name(ModuleRef, Box<str>),
}

/// The imported names of the bundle's modules that resolve to its own code.
#[derive(Debug, Clone, Default)]
pub struct Links {
    entries: Vec<(ModuleRef, Box<str>, Link)>,
}

impl Links {
    pub fn get(&self, from: ModuleRef, local: &str) -> Option<&Link> {
        self.entries
            .iter()
            .rev()
            .find(|(m, l, _)| *m == from && &**l == local)
            .map(|(_, _, link)| link)
    }
}

/// Follows the bridge from each bound function through the helpers it is
/// handed to, reading the modules of the bundle or `_shared` those helpers
/// are imported from (and only those: a module the bridge never reaches
/// cannot write through it).
pub fn load(bundle: &mut Bundle, fs: &dyn FileSystem, cache: &mut FileCache) {
    let dir = normalize(&bundle.dir);
    let Some(root) = dir.parent().map(Path::to_path_buf) else {
        return;
    };
    let bundle_name = dir
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut paths: Vec<(PathBuf, ModuleRef)> = bundle
        .python
        .iter()
        .filter_map(|p| {
            let f = bundle.file(p.file)?;
            Some((normalize(&dir.join(&f.relative)), ModuleRef::Bound(p.file)))
        })
        .collect();
    // (module, function, the parameters that may hold the bridge)
    let mut queue: Vec<(ModuleRef, Box<str>, Vec<ParamIx>)> = Vec::new();
    for binding in &bundle.bindings {
        let (BindingTarget::File(file), Some(function)) = (&binding.target, &binding.function)
        else {
            continue;
        };
        let at = ModuleRef::Bound(*file);
        let Some(f) = effects_of(bundle, at).and_then(|e| e.function(&function.text).cloned())
        else {
            continue;
        };
        let holder = match binding.owner {
            BindingOwner::Middleware(_) => (f.positional > 0).then_some(0),
            _ => f.param("context_variables"),
        };
        if let Some(holder) = holder {
            queue.push((at, function.text.as_str().into(), vec![holder]));
        }
    }
    let mut links = Links::default();
    let mut seen: Vec<(ModuleRef, Box<str>, Vec<ParamIx>)> = Vec::new();
    while let Some(item) = queue.pop() {
        if seen.contains(&item) || seen.len() >= MAX_FOLLOWED {
            continue;
        }
        seen.push(item.clone());
        let (at, function, holders) = item;
        let Some(effects) = effects_of(bundle, at) else {
            continue;
        };
        let Some(f) = effects.function(&function) else {
            continue;
        };
        let calls: Vec<Call> = f
            .effects
            .iter()
            .filter_map(|e| match e {
                Effect::Invoke { call, .. } => Some(call.clone()),
                _ => None,
            })
            .collect();
        for call in calls {
            let positional: Vec<usize> = (0..call.args.len())
                .filter(|&i| call.args[i].may_be_param(&|p| holders.contains(&p)))
                .collect();
            let keywords: Vec<Box<str>> = call
                .keywords
                .iter()
                .filter(|(_, v)| v.may_be_param(&|p| holders.contains(&p)))
                .map(|(k, _)| k.clone())
                .collect();
            if positional.is_empty() && keywords.is_empty() {
                continue;
            }
            let Some((target, name)) = callee(
                bundle,
                fs,
                cache,
                (&dir, &root, &bundle_name),
                &mut paths,
                &mut links,
                at,
                &call.callee,
            ) else {
                continue;
            };
            let Some(callee_effects) = effects_of(bundle, target) else {
                continue;
            };
            let Some(callee_fn) = callee_effects.function(&name) else {
                continue;
            };
            let mut params: Vec<ParamIx> = positional
                .into_iter()
                .filter(|&i| i < callee_fn.positional)
                .map(|i| i as ParamIx)
                .collect();
            params.extend(keywords.iter().filter_map(|k| callee_fn.param(k)));
            params.sort_unstable();
            params.dedup();
            if !params.is_empty() {
                queue.push((target, name, params));
            }
        }
    }
    bundle.python_links = links;
}

/// Helpers followed from the bound functions, at most.
const MAX_FOLLOWED: usize = 4096;

fn effects_of(bundle: &Bundle, r: ModuleRef) -> Option<Arc<ModuleEffects>> {
    module_of(bundle, r).and_then(|m| m.effects.clone())
}

/// The module and function a callee name of module `at` stands for,
/// reading an imported module when needed and noting the links followed.
#[allow(clippy::too_many_arguments)]
fn callee(
    bundle: &mut Bundle,
    fs: &dyn FileSystem,
    cache: &mut FileCache,
    (dir, root, bundle_name): (&Path, &Path, &str),
    paths: &mut Vec<(PathBuf, ModuleRef)>,
    links: &mut Links,
    mut at: ModuleRef,
    name: &str,
) -> Option<(ModuleRef, Box<str>)> {
    let mut name: String = name.to_string();
    // A re-export is followed a few modules deep.
    for _ in 0..4 {
        let effects = effects_of(bundle, at)?;
        if effects.function(&name).is_some() {
            return Some((at, name.into()));
        }
        let (head, rest) = match name.split_once('.') {
            Some((h, r)) => (h.to_string(), Some(r.to_string())),
            None => (name.clone(), None),
        };
        let import = effects.import(&head)?.clone();
        let path = paths
            .iter()
            .find(|(_, r)| *r == at)
            .map(|(p, _)| p.clone())?;
        let (target_path, imported) = resolve(root, bundle_name, &path, &import, fs)?;
        let target = match paths.iter().find(|(p, _)| *p == target_path) {
            Some((_, r)) => *r,
            None => {
                if bundle.imported_python.len() >= MAX_IMPORTED_MODULES {
                    return None;
                }
                let module = read(cache, fs, dir, &target_path)?;
                bundle.imported_python.push(module);
                let r = ModuleRef::Imported(bundle.imported_python.len() - 1);
                paths.push((target_path, r));
                r
            }
        };
        let link = match &imported {
            Some(n) => Link::Name(target, n.clone()),
            None => Link::Module(target),
        };
        if links.get(at, &head) != Some(&link) {
            links.entries.push((at, head.into(), link));
        }
        name = match (imported, rest) {
            (Some(n), None) => n.to_string(),
            (Some(n), Some(r)) => format!("{n}.{r}"),
            (None, Some(r)) => r,
            (None, None) => return None,
        };
        at = target;
    }
    None
}

/// The parsed module behind a reference.
pub fn module_of(bundle: &Bundle, r: ModuleRef) -> Option<&python::Module> {
    match r {
        ModuleRef::Bound(id) => bundle
            .python
            .iter()
            .find(|p| p.file == id)
            .map(|p| &p.module),
        ModuleRef::Imported(i) => bundle.imported_python.get(i).map(|m| &m.module),
    }
}

fn read(
    cache: &mut FileCache,
    fs: &dyn FileSystem,
    dir: &Path,
    path: &Path,
) -> Option<ImportedModule> {
    let memo = cache.text(fs, path).ok()?;
    let module = if memo.text.len() <= crate::base::limits::MAX_FILE_BYTES {
        let text = Arc::clone(&memo.text);
        cache.python(path, &memo.text, &[], |same_text| {
            python::parse_reusing(&text, &[], same_text)
        })
    } else {
        python::Module {
            too_large: true,
            ..python::Module::default()
        }
    };
    Some(ImportedModule {
        relative: super::python::relative_to(dir, path),
        text: memo.text,
        line_index: memo.line_index,
        module,
    })
}

/// The file an import names, and the name it imports from it (`None` when
/// the local name is the module itself). Absolute imports resolve when a
/// package on their path is the bundle's own folder or `_shared`
/// (`factory_app.workflows._shared.platform.build`); relative ones from the
/// importing file's folder.
fn resolve(
    root: &Path,
    bundle_name: &str,
    importer: &Path,
    import: &Import,
    fs: &dyn FileSystem,
) -> Option<(PathBuf, Option<Box<str>>)> {
    let parts: Vec<&str> = import.module.split('.').filter(|p| !p.is_empty()).collect();
    let base: PathBuf = if import.level > 0 {
        let mut base = importer.parent()?.to_path_buf();
        for _ in 1..import.level {
            base = base.parent()?.to_path_buf();
        }
        parts.iter().fold(base, |b, p| b.join(p))
    } else {
        let k = parts
            .iter()
            .position(|p| *p == bundle_name || *p == "_shared")?;
        parts[k..].iter().fold(root.to_path_buf(), |b, p| b.join(p))
    };
    let base = normalize(&base);
    if !base.starts_with(root) {
        return None;
    }
    let module_file = |b: &Path| -> Option<PathBuf> {
        let file = b.with_extension("py");
        if fs.is_file(&file) {
            return Some(file);
        }
        let init = b.join("__init__.py");
        fs.is_file(&init).then_some(init)
    };
    match &import.name {
        None => module_file(&base).map(|f| (f, None)),
        // `from pkg import name`: a name of the module, else a submodule.
        Some(name) => {
            if !parts.is_empty() || import.level > 0 {
                if let Some(f) = module_file(&base) {
                    if !(f.ends_with("__init__.py") && module_file(&base.join(&**name)).is_some()) {
                        return Some((f, Some(name.clone())));
                    }
                }
            }
            module_file(&base.join(&**name)).map(|f| (f, None))
        }
    }
}
