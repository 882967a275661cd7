//! Python bindings: where each tool, lifecycle tool and prompt middleware
//! function lives, resolved as mozaiks 0.2.0 resolves it (bundle-format §13,
//! §17.1), and the parsed modules. Files are read, never imported.

use std::path::Path;

use super::file_cache::FileCache;
use super::{Bundle, Name, SourceFile};
use crate::base::fs::{normalize, FileSystem};
use crate::base::FileId;
use crate::syntax::python;

/// Names mozaiks' auto-tool handler passes besides the structured output's
/// fields (when the function declares them).
pub const AUTO_TOOL_METADATA: &[&str] = &[
    "chat_id",
    "app_id",
    "workflow_name",
    "turn_idempotency_key",
    "agent_name",
    "agent",
];

/// How the auto-tool handler matches a structured-output field to a
/// parameter of the tool (runtime-semantics §5.4): by ASCII letters and
/// digits, lower-cased, so `PhaseAgents`, `phase_agents` and `phaseAgents`
/// are one name.
pub fn auto_tool_key(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_ascii_alphanumeric())
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

/// Which declaration a binding belongs to (index into its list).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindingOwner {
    Tool(usize),
    Lifecycle(usize),
    Middleware(usize),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BindingTarget {
    /// The resolved Python file.
    File(FileId),
    /// No candidate exists; the paths tried, relative to the bundle.
    NotFound(Vec<String>),
    /// The path is absolute or leaves the workflows root.
    Outside(String),
    /// Middleware without `filename`: an import path resolved by Python.
    ImportPath,
}

#[derive(Debug, Clone)]
pub struct Binding {
    pub owner: BindingOwner,
    /// The `file` / `filename` value.
    pub path: Option<Name>,
    pub function: Option<Name>,
    pub target: BindingTarget,
}

#[derive(Debug, Clone)]
pub struct PythonFile {
    pub file: FileId,
    pub module: python::Module,
}

/// A path relative to the bundle folder, with `../` for files beside it.
pub(crate) fn relative_to(dir: &Path, path: &Path) -> String {
    if let Ok(rest) = path.strip_prefix(dir) {
        return rest.to_string_lossy().replace('\\', "/");
    }
    let mut prefix = String::new();
    let mut base = dir.to_path_buf();
    while let Some(parent) = base.parent() {
        prefix.push_str("../");
        if let Ok(rest) = path.strip_prefix(parent) {
            return format!("{prefix}{}", rest.to_string_lossy().replace('\\', "/"));
        }
        base = parent.to_path_buf();
    }
    path.to_string_lossy().into_owned()
}

/// Resolves every binding, then parses each file once with every function
/// the bundle binds from it.
pub fn load(bundle: &mut Bundle, fs: &dyn FileSystem, cache: &mut FileCache) {
    let dir = normalize(&bundle.dir);
    let root = dir
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| dir.clone());
    let mut requests: Vec<(BindingOwner, Option<Name>, Option<Name>, bool)> = Vec::new();
    for (i, t) in bundle.tools.iter().enumerate() {
        requests.push((
            BindingOwner::Tool(i),
            t.python_file.clone(),
            t.function.clone(),
            false,
        ));
    }
    for (i, t) in bundle.lifecycle_tools.iter().enumerate() {
        requests.push((
            BindingOwner::Lifecycle(i),
            t.python_file.clone(),
            t.function.clone(),
            false,
        ));
    }
    for (i, m) in bundle.middleware.iter().enumerate() {
        requests.push((
            BindingOwner::Middleware(i),
            m.filename.clone(),
            m.function.clone(),
            true,
        ));
    }
    let mut sources: Vec<FileId> = Vec::new();
    for (owner, path, function, middleware) in requests {
        let target = match &path {
            None if middleware => BindingTarget::ImportPath,
            None => continue, // `file` was missing or invalid: reported by the schema
            Some(p) => resolve(bundle, fs, cache, &dir, &root, &p.text, &mut sources),
        };
        bundle.bindings.push(Binding {
            owner,
            path,
            function,
            target,
        });
    }
    for id in sources {
        let Some(file) = bundle.file(id) else {
            continue;
        };
        let text = &file.text;
        let wanted: Vec<&str> = bundle
            .bindings
            .iter()
            .filter(|b| b.target == BindingTarget::File(id))
            .filter_map(|b| b.function.as_ref().map(|f| f.text.as_str()))
            .collect();
        // A file larger than the analyzer reads stays unparsed.
        let module = if text.len() <= crate::base::limits::MAX_FILE_BYTES {
            let path = bundle.path_of(file);
            cache.python(&path, text, &wanted, |same_text| {
                python::parse_reusing(text, &wanted, same_text)
            })
        } else {
            python::Module {
                too_large: true,
                ..python::Module::default()
            }
        };
        bundle.python.push(PythonFile { file: id, module });
    }
}

fn resolve(
    bundle: &mut Bundle,
    fs: &dyn FileSystem,
    cache: &mut FileCache,
    dir: &Path,
    root: &Path,
    requested: &str,
    sources: &mut Vec<FileId>,
) -> BindingTarget {
    let requested_path = Path::new(requested);
    if requested_path.is_absolute() {
        return BindingTarget::Outside(format!("`{requested}` is an absolute path; mozaiks resolves tool files relative to the bundle folder"));
    }
    let candidates = [
        normalize(&dir.join(requested_path)),
        normalize(&dir.join("tools").join(requested_path)),
    ];
    let mut tried = Vec::new();
    let mut escaped = false;
    for candidate in candidates {
        if !candidate.starts_with(root) {
            escaped = true;
            continue;
        }
        let relative = relative_to(dir, &candidate);
        if let Some(existing) = bundle.file_at(&relative) {
            return BindingTarget::File(existing.id);
        }
        match cache.text(fs, &candidate) {
            Ok(memo) => {
                let id = FileId(bundle.files.len() as u32);
                sources.push(id);
                bundle.files.push(SourceFile {
                    id,
                    relative,
                    kind: None,
                    line_index: memo.line_index,
                    text: memo.text,
                });
                return BindingTarget::File(id);
            }
            Err(_) => tried.push(relative),
        }
    }
    if escaped && tried.is_empty() {
        return BindingTarget::Outside(format!(
            "`{requested}` leads outside the workflows root `{}`; mozaiks refuses files outside it",
            root.display()
        ));
    }
    BindingTarget::NotFound(tried)
}
