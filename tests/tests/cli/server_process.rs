//! `mzk lsp` as a process: how it ends with its client.

use super::*;

#[test]
fn lsp_process_exits_promptly_after_exit_while_stdin_stays_open() {
    use std::io::Write;
    use std::process::Stdio;
    let mut server = Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("mzk lsp starts");
    let mut stdin = server.stdin.take().unwrap();
    for message in [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"capabilities":{}}}"#,
        r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#,
        // Emacs sends `"params": null` with shutdown.
        r#"{"jsonrpc":"2.0","id":2,"method":"shutdown","params":null}"#,
        r#"{"jsonrpc":"2.0","method":"exit","params":null}"#,
    ] {
        write!(stdin, "Content-Length: {}\r\n\r\n{message}", message.len()).unwrap();
    }
    stdin.flush().unwrap();
    // `stdin` stays open, as an editor keeps the pipe: the server must still go.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    let status = loop {
        if let Some(status) = server.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = server.kill();
            panic!("mzk lsp still running 10 s after `exit`");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    drop(stdin);
}

/// Starts `mzk lsp`, initializes it with `process_id`, and returns it with
/// its input still open.
fn lsp_initialized(process_id: Option<u32>) -> (std::process::Child, std::process::ChildStdin) {
    use std::io::Write;
    use std::process::Stdio;
    let mut server = Command::new(env!("CARGO_BIN_EXE_mzk-e2e"))
        .arg("lsp")
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("mzk lsp starts");
    let mut stdin = server.stdin.take().unwrap();
    let pid = process_id.map_or("null".to_string(), |p| p.to_string());
    for message in [
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"initialize","params":{{"processId":{pid},"capabilities":{{}}}}}}"#
        ),
        r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#.to_string(),
    ] {
        write!(stdin, "Content-Length: {}\r\n\r\n{message}", message.len()).unwrap();
    }
    stdin.flush().unwrap();
    (server, stdin)
}

/// Waits up to 10 s for the server to end on its own.
fn ends_within_ten_seconds(mut server: std::process::Child, why: &str) -> std::process::ExitStatus {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        if let Some(status) = server.try_wait().unwrap() {
            return status;
        }
        if std::time::Instant::now() > deadline {
            let _ = server.kill();
            let _ = server.wait();
            panic!("mzk lsp still running 10 s after {why}");
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_killed_client_leaves_no_server_behind() {
    // The client dies: its end of the pipe closes, without shutdown or exit.
    let (server, stdin) = lsp_initialized(None);
    drop(stdin);
    ends_within_ten_seconds(server, "its input closed");
    // The client dies but the pipe stays open (inherited elsewhere): the
    // server watches the `processId` it was given.
    let mut editor = Command::new("sleep").arg("1").spawn().unwrap();
    let (server, stdin) = lsp_initialized(Some(editor.id()));
    editor.wait().unwrap(); // gone, and reaped
    let status = ends_within_ten_seconds(server, "its editor process ended");
    assert!(
        !status.success(),
        "an exit without shutdown reports failure: {status}"
    );
    drop(stdin);
}
