//! `mzk schema`: one JSON Schema (draft-07, what yaml-language-server reads)
//! per bundle file kind, generated from the analyzer's schema description —
//! the same tables validation, completion and hover use — plus the
//! `yaml.schemas` snippet that maps each schema to its file.
//!
//! JSON Schema cannot say everything mozaiks checks (cross-field rules,
//! cross-file references, lax coercions of quoted scalars); the schemas accept
//! what mozaiks accepts on their own terms, and `mzk check` does the rest.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;

use mzk_analyzer::base::{FileKind, FILE_KINDS};
use mzk_analyzer::schema::{file_schema, Default, Field, Kind, ListKind, Object, Refers, TextKind};
use serde_json::{json, Map, Value};

#[derive(clap::Args, Debug)]
pub struct SchemaArgs {
    /// The folder to write the schemas to (created when missing).
    #[arg(long)]
    out: PathBuf,
}

/// The schema file name of a kind: `agents.schema.json`,
/// `extended_orchestration.task_batches.schema.json`.
pub fn file_name(kind: FileKind) -> String {
    let stem = kind.path().trim_end_matches(".yaml").replace('/', ".");
    format!("{stem}.schema.json")
}

pub fn run(args: SchemaArgs) -> ExitCode {
    if let Err(e) = std::fs::create_dir_all(&args.out) {
        eprintln!("mzk: {}: {e}", args.out.display());
        return ExitCode::from(2);
    }
    let mut mapping = Map::new();
    for &kind in FILE_KINDS {
        let name = file_name(kind);
        let path = args.out.join(&name);
        let text = serde_json::to_string_pretty(&json_schema(kind)).unwrap_or_default();
        if let Err(e) = std::fs::write(&path, text + "\n") {
            eprintln!("mzk: {}: {e}", path.display());
            return ExitCode::from(2);
        }
        mapping.insert(name, json!([format!("**/{}", kind.path())]));
    }
    let snippet = json!({ "yaml.schemas": mapping });
    let snippet_path = args.out.join("yaml-language-server.settings.json");
    let text = serde_json::to_string_pretty(&snippet).unwrap_or_default();
    if let Err(e) = std::fs::write(&snippet_path, text + "\n") {
        eprintln!("mzk: {}: {e}", snippet_path.display());
        return ExitCode::from(2);
    }
    eprintln!(
        "mzk: wrote {} schemas and {} to {}",
        FILE_KINDS.len(),
        snippet_path
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default(),
        args.out.display()
    );
    ExitCode::SUCCESS
}

/// The JSON Schema of one file kind.
pub fn json_schema(kind: FileKind) -> Value {
    let schema = file_schema(kind);
    let mut definitions = Definitions::default();
    let mut root = definitions.object(schema.root);
    let root_map = root.as_object_mut().expect("an object schema");
    root_map.insert(
        "$schema".into(),
        json!("http://json-schema.org/draft-07/schema#"),
    );
    root_map.insert(
        "title".into(),
        json!(format!("mozaiks 0.2.0 {}", kind.path())),
    );
    root_map.insert("description".into(), json!(schema.doc));
    root_map.insert(
        "definitions".into(),
        Value::Object(definitions.done.into_iter().collect()),
    );
    root
}

/// Shared object shapes, emitted once each under `definitions` and referenced.
#[derive(Default)]
struct Definitions {
    /// Shape address → definition name.
    names: BTreeMap<usize, String>,
    done: BTreeMap<String, Value>,
}

impl Definitions {
    /// `{"$ref": ...}` to an object shape, defining it on first use.
    fn reference(&mut self, shape: &'static Object) -> Value {
        let address = shape as *const Object as usize;
        let name = match self.names.get(&address) {
            Some(name) => name.clone(),
            None => {
                let base: String = shape
                    .name
                    .chars()
                    .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
                    .collect();
                let mut name = base.clone();
                let mut n = 2;
                while self.names.values().any(|v| *v == name) {
                    name = format!("{base}_{n}");
                    n += 1;
                }
                self.names.insert(address, name.clone());
                // Reserve the name before recursing: shapes can be recursive.
                self.done.insert(name.clone(), Value::Null);
                let value = self.object(shape);
                self.done.insert(name.clone(), value);
                name
            }
        };
        json!({ "$ref": format!("#/definitions/{name}") })
    }

    /// An object shape: its fields (aliases too), required keys, nothing else.
    fn object(&mut self, shape: &'static Object) -> Value {
        let mut properties = Map::new();
        let mut required = Vec::new();
        for field in shape.fields {
            let schema = self.field(field);
            if let Some(alias) = field.alias {
                properties.insert(alias.to_string(), schema.clone());
            }
            properties.insert(field.name.to_string(), schema);
            if field.required {
                required.push(json!(field.name));
            }
        }
        let mut out = json!({
            "type": "object",
            "description": shape.doc,
            "properties": properties,
            "additionalProperties": false,
        });
        if !required.is_empty() {
            out["required"] = Value::Array(required);
        }
        out
    }

    fn field(&mut self, field: &Field) -> Value {
        let mut schema = self.kind(&field.kind);
        if let Some(map) = schema.as_object_mut() {
            let description = match (names(field.references()), &field.kind) {
                (Some(names), Kind::List(_) | Kind::StrOrList) => {
                    format!("{} Each names {names}.", field.doc)
                }
                (Some(names), _) => format!("{} Names {names}.", field.doc),
                (None, _) => field.doc.to_string(),
            };
            map.insert("description".into(), json!(description));
            if let Some(default) = default_value(&field.default) {
                map.insert("default".into(), default);
            }
        }
        schema
    }

    fn kind(&mut self, kind: &Kind) -> Value {
        match *kind {
            // mozaiks converts anything with str() (MZ118 warns).
            Kind::Text(TextKind::Optional) => json!({}),
            Kind::Text(TextKind::OptionalRequired) => json!({ "type": ["string", "null"] }),
            Kind::Text(TextKind::Min1) => json!({ "type": "string", "minLength": 1 }),
            Kind::Text(TextKind::Required | TextKind::ExactName) => {
                json!({ "type": "string", "pattern": "\\S" })
            }
            Kind::Enum { values, nullable } => with_null(json!({ "enum": values }), nullable),
            // Folded on load (stripped, lower-cased, `-` read as `_`).
            Kind::ToolType { nullable } => with_null(
                json!({
                    "type": "string",
                    "pattern": folded_pattern(mzk_analyzer::schema::TOOL_TYPES, true, true, false),
                }),
                nullable,
            ),
            // Stripped and lower-cased on load; blank reads as null.
            Kind::LowerEnum { values } => with_null(
                json!({ "type": "string", "pattern": folded_pattern(values, true, false, true) }),
                true,
            ),
            // Stripped on load, case kept; blank reads as null.
            Kind::Catalog { values } => with_null(
                json!({ "type": "string", "pattern": folded_pattern(values, false, false, true) }),
                true,
            ),
            Kind::VersionOne => json!({ "const": 1 }),
            Kind::Bool { nullable } => with_null(lax_bool(), nullable),
            Kind::Int {
                min,
                max,
                nullable,
                strict,
            } => {
                let mut int = json!({ "type": "integer" });
                if let Some(min) = min {
                    int["minimum"] = json!(min);
                }
                if let Some(max) = max {
                    int["maximum"] = json!(max);
                }
                let schema = if strict {
                    int
                } else {
                    json!({ "anyOf": [int, { "type": "string", "pattern": "^\\s*[+-]?[0-9]+\\s*$" }] })
                };
                with_null(schema, nullable)
            }
            Kind::Float { min } => json!({ "anyOf": [
                { "type": "number", "minimum": min },
                { "type": "string", "pattern": "^\\s*[+-]?([0-9]+\\.?[0-9]*|\\.[0-9]+)([eE][+-]?[0-9]+)?\\s*$" }
            ] }),
            Kind::List(list) => self.list(list),
            Kind::EnumList { values, .. } => json!({
                "type": "array",
                "items": { "enum": values },
            }),
            Kind::StrOrList => json!({ "anyOf": [
                { "type": "string" },
                { "type": "array", "items": { "type": "string" } }
            ] }),
            Kind::Dict { nullable } => with_null(json!({ "type": "object" }), nullable),
            Kind::DictOrDefault | Kind::Any => json!({}),
            Kind::Object { shape, nullable } => {
                let reference = self.reference(shape);
                if nullable {
                    json!({ "anyOf": [reference, { "type": "null" }] })
                } else {
                    reference
                }
            }
            Kind::ObjectList(shape) => {
                json!({ "type": "array", "items": self.reference(shape) })
            }
            Kind::ObjectMap {
                shape, non_empty, ..
            } => {
                let mut map = json!({
                    "type": "object",
                    "additionalProperties": self.reference(shape),
                });
                if non_empty {
                    map["minProperties"] = json!(1);
                }
                map
            }
            Kind::Registry => json!({
                "type": "object",
                "additionalProperties": { "type": ["string", "null"] },
            }),
            Kind::ModelDefinitions => {
                let variants = [
                    &mzk_analyzer::schema::files::SO_MODEL,
                    &mzk_analyzer::schema::files::SO_LITERAL,
                    &mzk_analyzer::schema::files::SO_UNION,
                ]
                .map(|shape| self.reference(shape));
                json!({
                    "type": "object",
                    "additionalProperties": { "oneOf": variants },
                })
            }
        }
    }

    fn list(&mut self, list: ListKind) -> Value {
        match list {
            ListKind::Clean {
                nullable,
                non_empty,
                ..
            } => {
                let mut schema = json!({ "type": "array", "items": { "type": "string" } });
                if non_empty {
                    schema["minItems"] = json!(1);
                }
                with_null(schema, nullable)
            }
            ListKind::Raw => json!({ "type": "array", "items": { "type": "string" } }),
            ListKind::Exact { non_empty } => {
                let mut schema = json!({
                    "type": "array",
                    "items": { "type": "string", "pattern": "^\\S(.*\\S)?$" },
                    "uniqueItems": true,
                });
                if non_empty {
                    schema["minItems"] = json!(1);
                }
                schema
            }
            ListKind::Any {
                nullable,
                non_empty,
            } => {
                let mut schema = json!({ "type": "array" });
                if non_empty {
                    schema["minItems"] = json!(1);
                }
                with_null(schema, nullable)
            }
            ListKind::Dicts { nullable } => with_null(
                json!({ "type": "array", "items": { "type": "object" } }),
                nullable,
            ),
        }
    }
}

/// What a field's value names, as its description says it: a JSON Schema
/// cannot list the bundle's names, but an editor's hover can say what the
/// value must be one of (the same `Refers` that mzk's completion offers).
fn names(refers: Refers) -> Option<&'static str> {
    Some(match refers {
        Refers::Nothing => return None,
        Refers::Agent {
            user: true,
            terminate: true,
        } => "an agent of agents.yaml, `user` or `terminate`",
        Refers::Agent { user: true, .. } => "an agent of agents.yaml or `user`",
        Refers::Agent {
            terminate: true, ..
        } => "an agent of agents.yaml or `terminate`",
        Refers::Agent { .. } => "an agent of agents.yaml",
        Refers::Variable => "a context variable of context_variables.yaml",
        Refers::Model { primitives: true } => {
            "a definition of structured_outputs.yaml or a primitive type (`str`, `int` …)"
        }
        Refers::Model { primitives: false } => "a definition of structured_outputs.yaml",
        Refers::Function => "a function of the entry's Python file",
    })
}

/// A pattern for text that, once stripped (with `any_case`, lower-cased;
/// with `dashes`, `-` read as `_`), is one of `values`; `blank` also admits
/// blank text.
fn folded_pattern(values: &[&str], any_case: bool, dashes: bool, blank: bool) -> String {
    let alternatives: Vec<String> = values
        .iter()
        .map(|value| {
            value
                .chars()
                .map(|c| match c {
                    c if any_case && c.is_ascii_alphabetic() => {
                        format!("[{}{}]", c.to_ascii_lowercase(), c.to_ascii_uppercase())
                    }
                    '_' if dashes => "[-_]".to_string(),
                    c if "\\^$.|?*+()[]{}/".contains(c) => format!("\\{c}"),
                    c => c.to_string(),
                })
                .collect()
        })
        .collect();
    format!(
        "^\\s*({}){}\\s*$",
        alternatives.join("|"),
        if blank { "?" } else { "" }
    )
}

/// Booleans as Pydantic's lax mode reads them (YAML 1.2 readers see `yes`
/// and `on` as strings).
fn lax_bool() -> Value {
    let words = [
        "true", "false", "yes", "no", "on", "off", "t", "f", "y", "n",
    ];
    let mut spellings: Vec<String> = vec!["1".into(), "0".into()];
    for word in words {
        let capitalised = word[..1].to_uppercase() + &word[1..];
        spellings.extend([word.to_string(), capitalised, word.to_uppercase()]);
    }
    spellings.dedup();
    json!({ "anyOf": [
        { "type": "boolean" },
        { "enum": [0, 1] },
        { "enum": spellings }
    ] })
}

/// Adds `null` to what a schema accepts.
fn with_null(schema: Value, nullable: bool) -> Value {
    if !nullable {
        return schema;
    }
    match schema.get("type").cloned() {
        // Keywords other than `type` constrain only their own type.
        Some(Value::String(t)) => {
            let mut schema = schema;
            schema["type"] = json!([t, "null"]);
            schema
        }
        _ if schema.get("enum").is_some() => {
            let mut schema = schema;
            if let Some(values) = schema["enum"].as_array_mut() {
                values.push(Value::Null);
            }
            schema
        }
        _ => json!({ "anyOf": [schema, { "type": "null" }] }),
    }
}

fn default_value(default: &Default) -> Option<Value> {
    Some(match default {
        Default::None | Default::Unset | Default::Object => return None,
        Default::Null => Value::Null,
        Default::Bool(b) => json!(b),
        Default::Int(i) => json!(i),
        Default::Float(f) => json!(f),
        Default::Str(s) => json!(s),
        Default::EmptyList => json!([]),
        Default::EmptyMap => json!({}),
    })
}
