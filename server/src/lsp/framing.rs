//! A guard in front of tower-lsp-server's transport. Its decoder ends the
//! input stream at the first frame it cannot decode (tokio-util's FramedRead
//! stops after an error), so one malformed message would silently end the
//! session. Here every frame is checked first: well-formed JSON-RPC messages
//! are passed on verbatim, anything else is answered with the error the
//! protocol prescribes (-32700 parse error, -32600 invalid request), and the
//! session goes on. The answers are interleaved with the server's output
//! between whole frames.

use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// A body larger than this is answered with an error and skipped.
const MAX_BODY: usize = 64 << 20;

const HEADER_END: &[u8] = b"\r\n\r\n";

/// What to do with one frame's body.
#[derive(Debug, PartialEq)]
enum Verdict {
    Forward,
    Answer(Value),
}

fn error_response(id: Value, code: i64, message: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}})
}

/// Checks a body the way tower-lsp-server will decode it.
fn check(body: &[u8]) -> Verdict {
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return Verdict::Answer(error_response(
            Value::Null,
            -32700,
            "mzk: parse error: the message body is not JSON",
        ));
    };
    let id = value.get("id").cloned();
    let valid_id = |id: &Value| id.is_null() || id.is_string() || id.is_i64() || id.is_u64();
    let answer_id = id.clone().filter(valid_id).unwrap_or(Value::Null);
    let invalid = |why: &str| {
        Verdict::Answer(error_response(
            answer_id.clone(),
            -32600,
            &format!("mzk: invalid request: {why}"),
        ))
    };
    let Some(object) = value.as_object() else {
        return invalid("a message must be a JSON object");
    };
    if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return invalid("`jsonrpc` must be \"2.0\"");
    }
    if id.as_ref().is_some_and(|id| !valid_id(id)) {
        return invalid("`id` must be a number, a string or null");
    }
    match object.get("method") {
        Some(Value::String(_)) => {
            let params_ok = object
                .get("params")
                .is_none_or(|p| p.is_object() || p.is_array() || p.is_null());
            if params_ok {
                Verdict::Forward
            } else {
                invalid("`params` must be an object or an array")
            }
        }
        Some(_) => invalid("`method` must be a string"),
        // A response to one of the server's requests.
        None if id.is_some() && (object.contains_key("result") || object.contains_key("error")) => {
            Verdict::Forward
        }
        None => invalid("a message needs a `method`, or an `id` with a `result` or `error`"),
    }
}

/// `Content-Length` from a header block, if present and valid.
fn content_length(headers: &[u8]) -> Option<usize> {
    let text = std::str::from_utf8(headers).ok()?;
    text.split("\r\n").find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse().ok())
            .flatten()
    })
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Reads frames from the client and forwards the well-formed ones to the
/// server; sends the answer to each malformed one on `answers`.
pub async fn filter_input<R, W>(
    mut input: R,
    mut to_server: W,
    answers: mpsc::UnboundedSender<Vec<u8>>,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    // Reads more input; false at the end of it.
    macro_rules! fill {
        () => {
            match input.read(&mut chunk).await {
                Ok(0) | Err(_) => false,
                Ok(n) => {
                    buf.extend_from_slice(&chunk[..n]);
                    true
                }
            }
        };
    }
    loop {
        let Some(header_end) = find(&buf, HEADER_END) else {
            if buf.len() > MAX_BODY {
                buf.clear(); // endless garbage without a header end
            }
            if !fill!() {
                return;
            }
            continue;
        };
        let Some(length) = content_length(&buf[..header_end]) else {
            let _ = answers.send(frame(
                error_response(
                    Value::Null,
                    -32700,
                    "mzk: parse error: a message without a valid Content-Length header",
                )
                .to_string()
                .as_bytes(),
            ));
            // Resynchronise on the next header block.
            let next =
                find(&buf[1..], b"Content-Length").map_or(header_end + HEADER_END.len(), |i| i + 1);
            buf.drain(..next.min(buf.len()));
            continue;
        };
        let start = header_end + HEADER_END.len();
        if length > MAX_BODY {
            let _ = answers.send(frame(
                error_response(
                    Value::Null,
                    -32700,
                    "mzk: parse error: the message is larger than 64 MiB",
                )
                .to_string()
                .as_bytes(),
            ));
            // Skip the body without keeping it.
            let mut remaining = length;
            let held = (buf.len() - start).min(remaining);
            remaining -= held;
            buf.drain(..start + held);
            while remaining > 0 {
                if !fill!() {
                    return;
                }
                let n = buf.len().min(remaining);
                buf.drain(..n);
                remaining -= n;
            }
            continue;
        }
        while buf.len() < start + length {
            if !fill!() {
                return;
            }
        }
        let body = &buf[start..start + length];
        let delivered = match check(body) {
            Verdict::Forward => {
                let framed = frame(body);
                to_server.write_all(&framed).await.is_ok() && to_server.flush().await.is_ok()
            }
            Verdict::Answer(answer) => answers.send(frame(answer.to_string().as_bytes())).is_ok(),
        };
        buf.drain(..start + length);
        if !delivered {
            return; // the server is gone
        }
    }
}

/// Copies the server's frames to the client whole, with the guard's answers
/// written between them. Ends when the server's output ends.
pub async fn merge_output<R, W>(
    mut from_server: R,
    mut output: W,
    mut answers: mpsc::UnboundedReceiver<Vec<u8>>,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = vec![0u8; 64 << 10];
    loop {
        // Write every complete frame the server produced.
        while let Some(header_end) = find(&buf, HEADER_END) {
            let start = header_end + HEADER_END.len();
            let length = content_length(&buf[..header_end]).unwrap_or(0);
            if buf.len() < start + length {
                break;
            }
            if output.write_all(&buf[..start + length]).await.is_err() {
                return;
            }
            buf.drain(..start + length);
        }
        let _ = output.flush().await;
        tokio::select! {
            read = from_server.read(&mut chunk) => match read {
                Ok(0) | Err(_) => break,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            },
            Some(answer) = answers.recv() => {
                if output.write_all(&answer).await.is_err() {
                    return;
                }
            }
        }
    }
    let _ = output.write_all(&buf).await;
    let _ = output.flush().await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verdicts() {
        let answer_code = |body: &str| match check(body.as_bytes()) {
            Verdict::Forward => None,
            Verdict::Answer(v) => Some((v["error"]["code"].as_i64().unwrap(), v["id"].clone())),
        };
        assert_eq!(
            answer_code(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{}}"#),
            None
        );
        assert_eq!(answer_code(r#"{"jsonrpc":"2.0","method":"x"}"#), None);
        assert_eq!(
            answer_code(r#"{"jsonrpc":"2.0","id":"a","result":null}"#),
            None
        );
        assert_eq!(
            answer_code(r#"{"jsonrpc":"2.0","id":1,"#),
            Some((-32700, Value::Null))
        );
        assert_eq!(answer_code(r#"[1,2]"#), Some((-32600, Value::Null)));
        assert_eq!(
            answer_code(r#"{"id":3,"method":"x"}"#),
            Some((-32600, json!(3)))
        );
        assert_eq!(
            answer_code(r#"{"jsonrpc":"2.0","id":4,"method":7}"#),
            Some((-32600, json!(4)))
        );
        assert_eq!(
            answer_code(r#"{"jsonrpc":"2.0","id":5,"method":"x","params":3}"#),
            Some((-32600, json!(5)))
        );
        assert_eq!(
            answer_code(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"x"}"#),
            Some((-32600, Value::Null))
        );
        assert_eq!(answer_code("\u{0}\u{1}"), Some((-32700, Value::Null)));
    }

    #[test]
    fn content_length_is_read_case_insensitively() {
        assert_eq!(content_length(b"content-length: 12"), Some(12));
        assert_eq!(
            content_length(b"Content-Type: x\r\nContent-Length:7"),
            Some(7)
        );
        assert_eq!(content_length(b"Content-Length: -1"), None);
        assert_eq!(content_length(b"Foo: 1"), None);
    }
}
