//! Every limit the analyzer puts on its input, in one place.
//!
//! Each one keeps a hostile or broken file from exhausting memory, time or the
//! stack: past a limit the input is refused with a diagnostic, never a crash.
//! Where mozaiks (through PyYAML or Python's compiler) has a limit of its own,
//! ours is the same or looser, so mzk never refuses what the reference runs.

/// Files larger than this are not parsed (MZ007).
pub const MAX_FILE_BYTES: usize = 16 * 1024 * 1024;

/// YAML collections nested deeper than this are not built (MZ008). Every pass
/// over a YAML tree may recurse: the tree it gets is never deeper.
pub const MAX_YAML_DEPTH: usize = 256;

/// The number of nodes aliases may add to one YAML document (MZ003).
pub const MAX_ALIAS_EXPANSION: usize = 100_000;

/// Brackets open at once in a `context_expression` (MZ402). This is Python's
/// tokenizer limit (`MAXLEVEL`): the 201st open bracket is the SyntaxError
/// "too many nested parentheses", and `${name}` counts as one, since mozaiks
/// rewrites it to the call `__ctx('name')` before parsing.
pub const MAX_EXPRESSION_BRACKETS: usize = 200;

/// Nodes nested inside one another in a `context_expression` tree (MZ402):
/// `not`, calls and list or tuple displays. Python's compiler recurses over
/// the tree and raises RecursionError at about 1,000 levels with its default
/// recursion limit (measured on Python 3.11: 995 `not`s compile at the top
/// level of a script, 996 do not; mozaiks compiles from deeper in its stack, so
/// it gives up sooner). Only counted nodes are real Python nodes, so a tree
/// past this limit certainly fails to compile in mozaiks; every pass over an
/// expression tree may recurse, since the parser builds none deeper.
pub const MAX_EXPRESSION_DEPTH: usize = 1_000;

/// Brackets open at once in a Python file the analyzer reads (MZ504): again
/// Python's tokenizer limit, "too many nested parentheses".
pub const MAX_PYTHON_BRACKETS: usize = 200;

/// Indentation levels in a Python file (MZ504): Python's tokenizer limit
/// (`MAXINDENT`), "too many levels of indentation".
pub const MAX_PYTHON_INDENT: usize = 100;

/// Nesting of JSON the runner reads (context and smoke files, tool results,
/// model replies): serde_json's own limit, named here so messages can say it.
pub const MAX_VALUE_DEPTH: usize = 128;

/// The stack of every thread that analyses a bundle or evaluates what it
/// holds (the main thread has as much): the deepest trees the limits above
/// let through need under 4 MiB in a debug build (measured by the tests of
/// the expression parser and evaluator), and less in a release build. The
/// 2 MiB that Rust and tokio give other threads by default is not enough.
pub const THREAD_STACK_BYTES: usize = 8 << 20;
