//! The modules the bound Python modules import from the bundle or from the
//! workflows root's `_shared` folder, read (never imported) for the helpers
//! they define: where a bound function hands the context to an imported
//! helper, `model::writes` follows it there. Imports of anything else (the
//! standard library, mozaiks, third-party packages) are not read.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::file_cache::FileCache;
use super::python::normalize;
use super::Bundle;
use crate::diagnostics::FileId;
use crate::fs::FileSystem;
use crate::syntax::python;
use crate::syntax::python_effects::Import;
use crate::syntax::LineIndex;

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

/// Follows the imports of the bound modules (and of what they import) into
/// the bundle and the shared folder.
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
    let mut queue: Vec<(PathBuf, ModuleRef)> = paths.clone();
    let mut links = Links::default();
    while let Some((path, from)) = queue.pop() {
        let imports: Vec<Import> = match module_of(bundle, from).and_then(|m| m.effects.as_ref()) {
            Some(e) => e.imports.clone(),
            None => continue,
        };
        for import in &imports {
            let Some((target_path, name)) = resolve(&root, &bundle_name, &path, import, fs) else {
                continue;
            };
            let target = match paths.iter().find(|(p, _)| *p == target_path) {
                Some((_, r)) => *r,
                None => {
                    if bundle.imported_python.len() >= MAX_IMPORTED_MODULES {
                        continue;
                    }
                    let Some(module) = read(cache, fs, &dir, &target_path) else {
                        continue;
                    };
                    bundle.imported_python.push(module);
                    let r = ModuleRef::Imported(bundle.imported_python.len() - 1);
                    paths.push((target_path.clone(), r));
                    queue.push((target_path, r));
                    r
                }
            };
            let link = match name {
                Some(n) => Link::Name(target, n),
                None => Link::Module(target),
            };
            links.entries.push((from, import.local.clone(), link));
        }
    }
    bundle.python_links = links;
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
    let module = if memo.text.len() <= crate::limits::MAX_FILE_BYTES {
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
