//! The server's guard: a panic while answering becomes an error response
//! or a logged message, never the end of the server.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};

use tower_lsp_server::jsonrpc::Result;

/// Runs an `ide` computation, turning a panic into an error response: one bad
/// request must not take the server (and the editor's diagnostics) down.
pub(crate) fn guarded<T>(request: &str, f: impl FnOnce() -> T) -> Result<T> {
    std::panic::catch_unwind(AssertUnwindSafe(f))
        .map_err(|panic| internal_error(request, &panic_detail(&*panic)))
}

pub(crate) fn invalid_params(message: &str) -> tower_lsp_server::jsonrpc::Error {
    tower_lsp_server::jsonrpc::Error::invalid_params(message.to_string())
}

/// The text of a panic's payload (what `panic!` was given).
pub(super) fn panic_detail(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_default()
}

/// A future whose panic, on any poll, becomes its output instead of
/// unwinding into the message loop. Dropping it still cancels the work, as
/// the protocol's `$/cancelRequest` expects (a spawned task would run on).
pub(super) struct CatchPanic<F: Future>(pub(super) Pin<Box<F>>);

impl<F: Future> Future for CatchPanic<F> {
    type Output = std::thread::Result<F::Output>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.0.as_mut();
        match std::panic::catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Err(panic) => Poll::Ready(Err(panic)),
        }
    }
}

pub(super) fn internal_error(method: &str, detail: &str) -> tower_lsp_server::jsonrpc::Error {
    tower_lsp_server::jsonrpc::Error {
        code: tower_lsp_server::jsonrpc::ErrorCode::InternalError,
        message: format!(
            "mzk: internal error in {method} ({detail}); please report it — the server keeps running"
        )
        .into(),
        data: None,
    }
}
