//! The entry point: the service over a reader and a writer (stdio for
//! `mzk lsp`), behind the framing guard.

use std::sync::Arc;

use tokio::sync::Mutex;
use tower_lsp_server::{LspService, Server};

use super::state::State;
use super::{framing, runs, Backend};

/// Serves the protocol on a reader and a writer (stdio for `mzk lsp`).
pub async fn serve<I, O>(input: I, output: O)
where
    I: tokio::io::AsyncRead + Unpin + Send + 'static,
    O: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    serve_with(input, output, false).await
}

pub(crate) async fn serve_with<I, O>(input: I, output: O, exit_with_parent: bool)
where
    I: tokio::io::AsyncRead + Unpin + Send + 'static,
    O: tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (service, socket) = LspService::new(|client| Backend {
        client,
        state: Arc::new(Mutex::new(State::default())),
        exit_with_parent,
        runs: Arc::new(runs::Runs::default()),
        analysed: Arc::new(tokio::sync::Notify::new()),
        analyses: Arc::new(super::analysis_pool::AnalysisPool::per_core()),
    });
    // The client's frames pass through the guard (framing.rs) on their way
    // in; the server's output and the guard's answers merge on the way out.
    let (server_input, guard_output) = tokio::io::duplex(1 << 16);
    let (server_output, merge_input) = tokio::io::duplex(1 << 16);
    let (answers, answers_rx) = tokio::sync::mpsc::unbounded_channel();
    // Not awaited: after `exit` it may be blocked reading a stdin the client keeps open.
    tokio::spawn(framing::filter_input(input, guard_output, answers));
    let merge = tokio::spawn(framing::merge_output(merge_input, output, answers_rx));
    Server::new(server_input, server_output, socket)
        .serve(service)
        .await;
    // The server's output half is dropped: the merge ends once it is flushed.
    let _ = merge.await;
}

/// `mzk lsp`.
pub fn main() -> std::process::ExitCode {
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(mzk_analyzer::base::limits::THREAD_STACK_BYTES)
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("mzk: cannot start the language server runtime: {err}");
            return std::process::ExitCode::from(2);
        }
    };
    runtime.block_on(serve_with(tokio::io::stdin(), tokio::io::stdout(), true));
    // After `exit` a blocking read of stdin may still be pending (the client
    // keeps the pipe open); never let the runtime wait on it.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    std::process::ExitCode::SUCCESS
}

/// The editor that started the server may die without closing the pipes
/// (a crash, or pipes inherited by another process); the protocol's answer
/// is `processId`: when that process is gone, the server exits too, and
/// leaves no orphan behind.
#[cfg(unix)]
pub(crate) async fn exit_with_parent(pid: u32) {
    loop {
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        // Signal 0 is not sent: kill only reports whether the process
        // exists (EPERM: it does, under another user).
        // SAFETY: kill with signal 0 has no effect on any process.
        let found = unsafe { libc::kill(pid as libc::pid_t, 0) } == 0
            || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM);
        if !found {
            eprintln!("mzk lsp: the editor (process {pid}) is gone; exiting");
            std::process::exit(1);
        }
    }
}
