//! A small HTTP/1.1 server over tokio's `TcpStream`: keep-alive, `Content-Length` and chunked
//! request bodies, and chunked NDJSON responses. It is all the stub needs, and it gives the fault
//! injector full control of the socket (reset, hang, a body cut short) that a framework would hide.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::time::{Duration, Instant};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::net::tcp::{OwnedReadHalf, OwnedWriteHalf};
use tokio::sync::watch;

/// Largest request head or body accepted.
const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 64 * 1024 * 1024;

/// One parsed request.
#[derive(Debug)]
pub(crate) struct Request {
    pub method: String,

    pub path: String,
    pub body: Vec<u8>,
    /// The `Host` header, when sent.
    pub host: Option<String>,
    /// The `Origin` header, when sent.
    pub origin: Option<String>,
    keep_alive: bool,
}

/// Builds the final line of a stream from the time since handler entry.
pub(crate) type FinalLine = Box<dyn FnOnce(Duration) -> Vec<u8> + Send>;

/// One step of a streamed response.
pub(crate) enum Part {
    /// Wait before the next line.
    Delay(Duration),
    /// One NDJSON line (newline added).
    Line(Vec<u8>),
    /// The last line, built when it is due.
    Final(FinalLine),
    /// Close the connection here, without the stream's terminating chunk.
    Close,
    /// Release what the stream held (a model's slot): when reached, or when the stream ends early.
    Release(super::slots::Slot),
}

/// What the handler wants sent.
pub(crate) enum Response {
    /// A whole body with `Content-Length`.
    Full {
        status: u16,
        content_type: &'static str,
        body: Vec<u8>,
    },
    /// A chunked NDJSON body.
    Stream { parts: Vec<Part> },
    /// A chunked `text/event-stream` body (each line a whole server-sent event).
    Events { parts: Vec<Part> },
    /// A head declaring the whole body's length, its first `sent` bytes, then the connection closed.
    Cut {
        content_type: &'static str,
        body: Vec<u8>,
        sent: usize,
    },
    /// A status with these headers and no body (a CORS preflight's 204, a 403).
    Empty {
        status: u16,
        headers: Vec<(&'static str, String)>,
    },
    /// gin's 405 for a path that other methods serve, with the `Allow` header naming them.
    NotAllowed { allow: String },
    /// Reset the connection (RST) without answering.
    Reset,
    /// Answer nothing for this long, then close.
    Hang(Duration),
}

impl Response {
    /// A JSON body.
    pub(super) fn json(status: u16, value: &serde_json::Value) -> Response {
        Response::Full {
            status,
            content_type: "application/json; charset=utf-8",
            body: value.to_string().into_bytes(),
        }
    }
}

/// The request handler: request and handler-entry instant in, response out.
pub(crate) type Handler = std::sync::Arc<
    dyn Fn(Request, Instant) -> Pin<Box<dyn Future<Output = Response> + Send>> + Send + Sync,
>;

/// Serves one connection until the client closes it, a response closes it, or shutdown.
pub(crate) async fn serve_connection(
    stream: TcpStream,
    handler: Handler,
    mut shutdown: watch::Receiver<bool>,
) {
    let _ = stream.set_nodelay(true);
    let (rd, mut wr) = stream.into_split();
    let mut reader = BufReader::new(rd);
    loop {
        let req = tokio::select! {
            r = read_request(&mut reader, &mut wr) => r,
            _ = shutdown.changed() => return,
        };
        let req = match req {
            Ok(Some(req)) => req,
            Err(e) if e.kind() == io::ErrorKind::InvalidData => {
                // What Go's `net/http` answers a request it cannot read, before closing.
                let _ = write_all(&mut wr, BAD_REQUEST).await;
                return;
            }
            _ => return,
        };
        let keep_alive = req.keep_alive;
        let head_only = req.method == "HEAD";
        let entry = Instant::now();
        let resp = tokio::select! {
            r = handler(req, entry) => r,
            _ = shutdown.changed() => return,
            () = client_gone(&mut reader) => return,
        };
        let stream_type = match resp {
            Response::Events { .. } => "text/event-stream",
            _ => "application/x-ndjson",
        };
        let written = match resp {
            Response::Reset => {
                reset(reader.into_inner(), wr);
                return;
            }
            Response::Hang(d) => {
                tokio::select! {
                    _ = tokio::time::sleep(d) => {}
                    _ = shutdown.changed() => {}
                }
                return;
            }
            Response::NotAllowed { allow } => {
                const BODY: &[u8] = b"405 method not allowed";
                let mut out = head(405, "text/plain", Some(BODY.len()), keep_alive);
                // The Allow header goes with the head's other headers, before its blank line.
                out.truncate(out.len() - 2);
                out.extend_from_slice(format!("Allow: {allow}\r\n\r\n").as_bytes());
                if !head_only {
                    out.extend_from_slice(BODY);
                }
                write_all(&mut wr, &out).await
            }
            Response::Full {
                status,
                content_type,
                body,
            } => {
                // HEAD: the length GET's body would have (as Go's server sets it), no body.
                let mut out = head(status, content_type, Some(body.len()), keep_alive);
                if !head_only {
                    out.extend_from_slice(&body);
                }
                write_all(&mut wr, &out).await
            }
            Response::Empty { status, headers } => {
                let mut out = format!("HTTP/1.1 {status} {}\r\n", reason(status));
                for (name, value) in headers {
                    out.push_str(&format!("{name}: {value}\r\n"));
                }
                let connection = if keep_alive { "keep-alive" } else { "close" };
                out.push_str(&format!(
                    "Content-Length: 0\r\nConnection: {connection}\r\n\r\n"
                ));
                write_all(&mut wr, out.as_bytes()).await
            }
            Response::Cut {
                content_type,
                body,
                sent,
            } => {
                let mut out = head(200, content_type, Some(body.len()), false);
                out.extend_from_slice(&body[..sent.min(body.len())]);
                let _ = write_all(&mut wr, &out).await;
                let _ = wr.shutdown().await;
                return;
            }
            Response::Stream { parts } | Response::Events { parts } => {
                match write_stream(&mut wr, parts, stream_type, entry, keep_alive).await {
                    Ok(true) => Ok(()),
                    Ok(false) => {
                        let _ = wr.shutdown().await;
                        return;
                    }
                    Err(e) => Err(e),
                }
            }
        };
        if written.is_err() || !keep_alive {
            let _ = wr.shutdown().await;
            return;
        }
    }
}

/// Closes with SO_LINGER 0, so the peer sees a reset instead of an orderly close.
fn reset(rd: OwnedReadHalf, wr: OwnedWriteHalf) {
    if let Ok(stream) = rd.reunite(wr) {
        let _ = stream.set_zero_linger();
        drop(stream);
    }
}

/// Go's `net/http` answer to a request it cannot parse (`server.go`, `conn.serve`).
const BAD_REQUEST: &[u8] = b"HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain; charset=utf-8\r\nConnection: close\r\n\r\n400 Bad Request";

async fn read_request(
    reader: &mut BufReader<OwnedReadHalf>,
    wr: &mut OwnedWriteHalf,
) -> io::Result<Option<Request>> {
    let mut line = Vec::new();
    // Skip blank lines between requests (RFC 9112 allows a stray CRLF).
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).await? == 0 {
            return Ok(None);
        }
        if !line.trim_ascii().is_empty() {
            break;
        }
    }
    let start = String::from_utf8_lossy(&line).trim().to_string();
    let mut words = start.split_whitespace();
    let (Some(method), Some(target), version) = (words.next(), words.next(), words.next()) else {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "bad request line",
        ));
    };
    let http10 = version == Some("HTTP/1.0");
    let mut content_length = 0usize;
    let mut chunked = false;
    let mut keep_alive = !http10;
    let mut expect_continue = false;
    let (mut host, mut origin) = (None, None);
    let mut head = line.len();
    loop {
        line.clear();
        if reader.read_until(b'\n', &mut line).await? == 0 {
            return Ok(None);
        }
        head += line.len();
        if head > MAX_HEAD {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "request head too large",
            ));
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim();
        if text.is_empty() {
            break;
        }
        let Some((name, value)) = text.split_once(':') else {
            continue;
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => {
                content_length = value.parse().map_err(|_| {
                    io::Error::new(io::ErrorKind::InvalidData, "bad content-length")
                })?;
            }
            "transfer-encoding" => chunked = value.to_ascii_lowercase().contains("chunked"),
            "expect" => expect_continue = value.eq_ignore_ascii_case("100-continue"),
            "host" => host = Some(value.to_string()),
            "origin" => origin = Some(value.to_string()),
            "connection" => {
                let v = value.to_ascii_lowercase();
                if v.contains("close") {
                    keep_alive = false;
                } else if v.contains("keep-alive") {
                    keep_alive = true;
                }
            }
            _ => {}
        }
    }
    if expect_continue && !http10 {
        write_all(wr, b"HTTP/1.1 100 Continue\r\n\r\n").await?;
    }
    let body = if chunked {
        read_chunked(reader).await?
    } else {
        read_exact(reader, content_length).await?
    };
    let raw_path = target.split('?').next().unwrap_or(target);
    let path = unescape_path(raw_path)
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidData, "invalid URL escape"))?;
    Ok(Some(Request {
        method: method.to_string(),
        path,
        body,
        host,
        origin,
        keep_alive,
    }))
}

/// The request path as Go's `net/url` gives `URL.Path`, which gin routes on: every `%XX` decoded
/// (`/v1/models/qwen2.5%3A3b` names `qwen2.5:3b`); `None` for a `%` not followed by two hex digits,
/// which Go's server refuses.
fn unescape_path(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = std::str::from_utf8(bytes.get(i + 1..i + 3)?).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

/// Resolves once the client has closed the connection, as Go's `net/http` then cancels the
/// request's context (a request waiting for a model's slot gives it up); bytes of a next request
/// stay buffered.
async fn client_gone(reader: &mut BufReader<OwnedReadHalf>) {
    match reader.fill_buf().await {
        Ok([]) | Err(_) => {}
        Ok(_) => std::future::pending().await,
    }
}

async fn read_exact(reader: &mut BufReader<OwnedReadHalf>, n: usize) -> io::Result<Vec<u8>> {
    if n > MAX_BODY {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "request body too large",
        ));
    }
    let mut body = vec![0u8; n];
    reader.read_exact(&mut body).await?;
    Ok(body)
}

async fn read_chunked(reader: &mut BufReader<OwnedReadHalf>) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    let mut line = Vec::new();
    loop {
        line.clear();
        reader.read_until(b'\n', &mut line).await?;
        let size_text = String::from_utf8_lossy(&line);
        let size_text = size_text.trim().split(';').next().unwrap_or("");
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "bad chunk size"))?;
        if size == 0 {
            // Trailers, then the final blank line.
            loop {
                line.clear();
                if reader.read_until(b'\n', &mut line).await? == 0 || line.trim_ascii().is_empty() {
                    return Ok(body);
                }
            }
        }
        if body.len() + size > MAX_BODY {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "request body too large",
            ));
        }
        let chunk = read_exact(reader, size).await?;
        body.extend_from_slice(&chunk);
        line.clear();
        reader.read_until(b'\n', &mut line).await?;
    }
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        204 => "No Content",
        403 => "Forbidden",
        400 => "Bad Request",
        404 => "Not Found",
        405 => "Method Not Allowed",
        409 => "Conflict",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Unknown",
    }
}

fn head(status: u16, content_type: &str, length: Option<usize>, keep_alive: bool) -> Vec<u8> {
    let framing = match length {
        Some(n) => format!("Content-Length: {n}"),
        None => "Transfer-Encoding: chunked".to_string(),
    };
    let connection = if keep_alive { "keep-alive" } else { "close" };
    format!("HTTP/1.1 {status} {}\r\nContent-Type: {content_type}\r\n{framing}\r\nConnection: {connection}\r\n\r\n", reason(status))
        .into_bytes()
}

async fn write_all(wr: &mut OwnedWriteHalf, out: &[u8]) -> io::Result<()> {
    wr.write_all(out).await?;
    wr.flush().await
}

fn chunk(line: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", line.len() + 1).into_bytes();
    out.extend_from_slice(line);
    out.extend_from_slice(b"\n\r\n");
    out
}

/// Writes a stream; `Ok(false)` when a `Close` part ended it without its terminating chunk.
async fn write_stream(
    wr: &mut OwnedWriteHalf,
    parts: Vec<Part>,
    content_type: &str,
    entry: Instant,
    keep_alive: bool,
) -> io::Result<bool> {
    // Like Ollama, the head goes out with the first line, so the time to the first byte is real.
    let mut pending = head(200, content_type, None, keep_alive);
    let mut has_line = false;
    for part in parts {
        match part {
            Part::Delay(d) => {
                if has_line && !pending.is_empty() {
                    wr.write_all(&pending).await?;
                    wr.flush().await?;
                    pending.clear();
                }
                tokio::time::sleep(d).await;
            }
            Part::Line(l) => {
                pending.extend_from_slice(&chunk(&l));
                has_line = true;
            }
            Part::Final(f) => pending.extend_from_slice(&chunk(&f(entry.elapsed()))),
            Part::Close => {
                write_all(wr, &pending).await?;
                return Ok(false);
            }
            Part::Release(held) => drop(held),
        }
    }
    pending.extend_from_slice(b"0\r\n\r\n");
    write_all(wr, &pending).await?;
    Ok(true)
}
