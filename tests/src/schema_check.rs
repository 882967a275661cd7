//! `mzk-schema-check SCHEMA_DIR BUNDLE...`: validates each bundle's files
//! against the JSON Schemas `mzk schema --out SCHEMA_DIR` wrote, with the
//! jsonschema crate, and prints one JSON line per bundle:
//! `{"bundle": NAME, "errors": [{"file": ..., "message": ...}]}`.

use std::path::PathBuf;
use std::process::ExitCode;

use mzk_analyzer::base::FILE_KINDS;
use mzk_tests::yaml_as_json;
use serde_json::json;

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1).map(PathBuf::from);
    let Some(schemas) = args.next() else {
        eprintln!("usage: mzk-schema-check SCHEMA_DIR BUNDLE...");
        return ExitCode::from(2);
    };
    let mut validators = Vec::new();
    for &kind in FILE_KINDS {
        let path = schemas.join(mzk_server::cli::schema::file_name(kind));
        let schema = match std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str(&t).map_err(|e| e.to_string()))
        {
            Ok(schema) => schema,
            Err(e) => {
                eprintln!("mzk-schema-check: {}: {e}", path.display());
                return ExitCode::from(2);
            }
        };
        match jsonschema::draft7::new(&schema) {
            Ok(validator) => validators.push((kind, validator)),
            Err(e) => {
                eprintln!("mzk-schema-check: {}: {e}", path.display());
                return ExitCode::from(2);
            }
        }
    }
    for bundle in args {
        let mut errors = Vec::new();
        for (kind, validator) in &validators {
            let Ok(text) = std::fs::read_to_string(bundle.join(kind.path())) else {
                continue;
            };
            let Some(instance) = yaml_as_json(&text) else {
                errors.push(json!({"file": kind.path(), "message": "not valid YAML"}));
                continue;
            };
            for error in validator.iter_errors(&instance) {
                errors.push(json!({"file": kind.path(), "message": error.to_string()}));
            }
        }
        let name = bundle
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        println!("{}", json!({"bundle": name, "errors": errors}));
    }
    ExitCode::SUCCESS
}
