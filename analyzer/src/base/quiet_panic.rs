//! Tests of code that must panic (debug assertions, refused test inputs):
//! the panic is caught with the default hook's report switched off, so a
//! passing run prints no backtrace that reads like a failure.

use std::sync::Mutex;

/// Hook swaps are process-wide: one at a time.
static HOOK: Mutex<()> = Mutex::new(());

/// The message of the panic `f` raises, or `None` when it returns.
pub fn panic_message(f: impl FnOnce() + std::panic::UnwindSafe) -> Option<String> {
    let _one = HOOK.lock().unwrap_or_else(|e| e.into_inner());
    let hook = std::panic::take_hook();
    std::panic::set_hook(Box::new(|_| {}));
    let outcome = std::panic::catch_unwind(f);
    std::panic::set_hook(hook);
    let payload = outcome.err()?;
    Some(
        payload
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default(),
    )
}
