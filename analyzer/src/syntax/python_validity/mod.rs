//! Whether Python can compile a bound module at all: the whole file parsed
//! with ruff's Python parser, a hand-written parser of CPython's grammar.
//!
//! A syntax error anywhere, even deep in a function body nobody binds, makes
//! mozaiks' import of the module fail. tree-sitter-python was the other
//! candidate: on the 223 Python files of the corpus, the examples and the
//! fixtures it parses 5.6 MB/s against ruff's 45 MB/s, and its error recovery
//! accepts code Python refuses (a Python 2 `print` statement, for one).
//!
//! A module that parses is then checked for the errors CPython's compiler
//! raises after parsing (`compiler.rs`). Syntax that only some Python
//! versions accept is not reported: mzk does not know which Python (3.11 or
//! later, for mozaiks 0.2.0) runs the bundle.

mod compiler;

use ruff_python_ast::{ModModule, PySourceType};
use ruff_python_parser::{parse_unchecked_source, Parsed};

use super::python_effects::{self, ModuleEffects};
use crate::base::TextRange;

/// The first syntax error of a module, as the parser words it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub range: TextRange,
    /// What is wrong (`Expected an expression`).
    pub problem: String,
}

/// Logical lines up to this many bytes parse and drop on the analysis
/// threads' stacks: the parser grows its own stack on the heap, but dropping
/// the tree recurses once per level of nesting, and an expression nests at
/// most one level per byte of its line, and statements are at most 100
/// indentation levels deep (a level takes under 100 bytes of stack in a
/// release build, under 200 in a debug one; the threads have 8 MiB).
const SHALLOW_LINE_BYTES: usize = 10_000;

/// Longer logical lines (a data table written as one literal; text in
/// strings does not count) are parsed on a thread whose stack grows with the
/// line: 512 bytes a byte, reserved and only touched as deep as the tree
/// goes. Beyond this, nothing is claimed.
const MAX_LINE_BYTES: usize = 256 << 10;

/// The module's first syntax error, if Python refuses to compile it, given
/// the length of its longest logical line; `None` also when the module is too
/// deeply nested to be read here (see [`MAX_LINE_BYTES`]).
pub fn first_error(src: &str, longest_line: usize) -> Option<SyntaxError> {
    check_and_read(src, longest_line).0
}

/// The module's first syntax error and, when Python compiles it, what its
/// functions do with their parameters (read from the same parse).
pub fn check_and_read(
    src: &str,
    longest_line: usize,
) -> (Option<SyntaxError>, Option<ModuleEffects>) {
    with_parsed(src, longest_line, |parsed| {
        let error = |range: ruff_text_size::TextRange, problem: String| SyntaxError {
            range: TextRange::new(range.start().to_u32(), range.end().to_u32()),
            problem,
        };
        let first = match parsed.errors().iter().min_by_key(|e| e.location.start()) {
            Some(e) => Some(error(e.location, e.error.to_string())),
            None => {
                compiler::first_error(parsed.syntax(), src).map(|e| error(e.range, e.to_string()))
            }
        };
        let effects = first
            .is_none()
            .then(|| python_effects::read(parsed.syntax()));
        (first, effects)
    })
    .unwrap_or((None, None))
}

/// What `read` finds in `src` parsed (with the parser's error recovery),
/// given the length of its longest logical line: on this thread when the
/// nesting is shallow, on a thread whose stack grows with the line when it
/// is not, `None` past [`MAX_LINE_BYTES`] or if the parser panics. `read`
/// must grow the stack for its own recursion (`stacker::maybe_grow`).
pub fn with_parsed<R: Send>(
    src: &str,
    longest_line: usize,
    read: impl FnOnce(&Parsed<ModModule>) -> R + Send,
) -> Option<R> {
    // The parser is a dependency: were it ever to panic, that is no claim
    // about the user's module.
    let run = || {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            read(&parse_unchecked_source(src, PySourceType::Python))
        }))
        .ok()
    };
    if longest_line <= SHALLOW_LINE_BYTES {
        return run();
    }
    if longest_line > MAX_LINE_BYTES {
        return None;
    }
    let stack = crate::base::limits::THREAD_STACK_BYTES + 512 * longest_line;
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .stack_size(stack)
            .spawn_scoped(scope, run)
            .ok()?
            .join()
            .ok()?
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn error(src: &str) -> Option<(String, String)> {
        first_error(src, src.len()).map(|e| {
            (
                src[e.range.start as usize..e.range.end as usize].to_string(),
                e.problem,
            )
        })
    }

    #[test]
    fn an_error_inside_a_function_body_is_found() {
        let src = "def ok(x):\n    return x\n\ndef broken(y):\n    if y\n        return 1\n";
        let (text, problem) = error(src).unwrap();
        assert_eq!(text, "\n");
        assert!(problem.contains("Expected `:`"), "{problem}");
    }

    #[test]
    fn valid_modules_have_no_error() {
        for src in [
            "",
            "import os\n",
            "async def f(a, /, b=1, *args, c, **kw):\n    async with x as y:\n        await y\n    return [i async for i in a]\n",
            "match x:\n    case {'a': [1, *rest]} | [*rest]:\n        pass\n    case _:\n        pass\n",
            "def f():\n    try:\n        pass\n    except* ValueError:\n        pass\n",
            "x = f'{a!r:>{width}}' 'b' r'\\x00'\ny = b'a' rb'\\x00'\n",
        ] {
            assert_eq!(error(src), None, "{src}");
        }
    }

    #[test]
    fn bytes_beside_text_are_refused() {
        let (_, problem) = error("x = 'a' b'b'\n").unwrap();
        assert!(problem.contains("Bytes literal"), "{problem}");
    }

    /// Errors only CPython's compiler raises, each beside a lookalike it
    /// accepts (tests/conformance/python_syntax.py compares many more with
    /// CPython itself).
    #[test]
    fn compile_errors_are_found_and_lookalikes_pass() {
        for (refused, accepted) in [
            ("return 1\n", "def f():\n    return 1\n"),
            (
                "for x in y:\n    pass\nelse:\n    break\n",
                "while x:\n    break\n",
            ),
            (
                "def f():\n    await x\n",
                "def f():\n    return (await x for x in y)\n",
            ),
            (
                "def f():\n    x = 1\n    global x\n",
                "def f():\n    global x\n    x = 1\n",
            ),
            (
                "class C:\n    z = [(y := x) for x in r]\n",
                "def f():\n    return [(y := x) for x in r]\n",
            ),
            ("def f(a, a):\n    pass\n", "def f(a, *, b):\n    pass\n"),
        ] {
            assert!(error(refused).is_some(), "{refused}");
            assert_eq!(error(accepted), None, "{accepted}");
        }
        let (text, problem) = error("def f():\n    pass\nreturn 1\n").unwrap();
        assert_eq!(text, "return 1");
        assert!(problem.contains("outside of a function"), "{problem}");
    }

    #[test]
    fn python_2_print_is_refused() {
        let (text, _) = error("def f():\n    print 'hello'\n").unwrap();
        assert_eq!(text, "'hello'");
    }

    #[test]
    fn deep_nesting_neither_crashes_nor_claims_more_than_it_read() {
        // 50,000 levels: over the shallow bound, so parsed on a thread sized
        // for the line; the module is valid Python grammar.
        let deep = format!("x = {}1\n", "-".repeat(50_000));
        assert_eq!(first_error(&deep, deep.len()), None);
        let broken = format!("x = {}\n", "-".repeat(50_000));
        assert!(first_error(&broken, broken.len()).is_some());
        // Past the largest line read, nothing is claimed.
        assert_eq!(first_error(&broken, MAX_LINE_BYTES + 1), None);
    }
}
