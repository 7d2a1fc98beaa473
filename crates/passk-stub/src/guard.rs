//! What Ollama's middlewares answer before any route (`server/routes.go`, `GenerateRoutes`:
//! `r.Use(cors.New(corsConfig), allowedHostsMiddleware(s.addr))`):
//!
//! - CORS (gin-contrib/cors as Ollama configures it): a request without `Origin`, or from its own
//!   host, passes; an origin not allowed (`envconfig.AllowedOrigins`: localhost, 127.0.0.1 and
//!   0.0.0.0 on any port over http or https, `app://`, `file://`, `tauri://`, `vscode-webview://`,
//!   `vscode-file://` and browser extensions) gets 403; an allowed origin's `OPTIONS` preflight gets
//!   204 with the allowed methods, headers and max age.
//! - Allowed hosts (`allowedHostsMiddleware`): on a server bound to loopback, a `Host` that is not
//!   a loopback, private or unspecified address, `localhost`, this machine's name, or a name under
//!   `.localhost`, `.local` or `.internal` gets 403 (DNS-rebinding protection); an allowed name's
//!   `OPTIONS` gets 204.

use super::http::{Request, Response};
use std::net::IpAddr;

/// gin-contrib/cors `DefaultConfig().AllowMethods`, as it writes them.
const ALLOW_METHODS: &str = "GET,POST,PUT,PATCH,DELETE,HEAD,OPTIONS";

/// `corsConfig.AllowHeaders` in `routes.go`, canonicalised as gin-contrib/cors writes them.
const ALLOW_HEADERS: &str = "Authorization,Content-Type,User-Agent,Accept,X-Requested-With,\
Openai-Beta,X-Stainless-Arch,X-Stainless-Async,X-Stainless-Custom-Poll-Interval,\
X-Stainless-Helper-Method,X-Stainless-Lang,X-Stainless-Os,X-Stainless-Package-Version,\
X-Stainless-Poll-Helper,X-Stainless-Retry-Count,X-Stainless-Runtime,\
X-Stainless-Runtime-Version,X-Stainless-Timeout";

/// `DefaultConfig().MaxAge`, 12 hours, in seconds.
const MAX_AGE: &str = "43200";

/// The middlewares' answer, when they answer before the routes.
pub(crate) fn before_routes(req: &Request, loopback: bool) -> Option<Response> {
    cors(req).or_else(|| allowed_host(req, loopback))
}

fn empty(status: u16, headers: Vec<(&'static str, String)>) -> Response {
    Response::Empty { status, headers }
}

fn cors(req: &Request) -> Option<Response> {
    let origin = req.origin.as_deref().filter(|o| !o.is_empty())?;
    let host = req.host.as_deref().unwrap_or_default();
    if origin == format!("http://{host}") || origin == format!("https://{host}") {
        return None;
    }
    if !origin_allowed(origin) {
        return Some(empty(403, Vec::new()));
    }
    if req.method == "OPTIONS" {
        return Some(empty(
            204,
            vec![
                ("Access-Control-Allow-Origin", origin.to_string()),
                ("Access-Control-Allow-Methods", ALLOW_METHODS.to_string()),
                ("Access-Control-Allow-Headers", ALLOW_HEADERS.to_string()),
                ("Access-Control-Max-Age", MAX_AGE.to_string()),
                ("Vary", "Origin".to_string()),
            ],
        ));
    }
    None
}

/// `envconfig.AllowedOrigins` (with no `OLLAMA_ORIGINS`) and gin-contrib/cors's browser
/// extensions, wildcards as gin-contrib/cors matches them.
fn origin_allowed(origin: &str) -> bool {
    const SCHEMES: [&str; 9] = [
        "app://",
        "file://",
        "tauri://",
        "vscode-webview://",
        "vscode-file://",
        "chrome-extension://",
        "safari-extension://",
        "moz-extension://",
        "ms-browser-extension://",
    ];
    if SCHEMES.iter().any(|s| origin.starts_with(s)) {
        return true;
    }
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = rest.split_once(':').map_or(rest, |(h, _)| h);
    ["localhost", "127.0.0.1", "0.0.0.0"].contains(&host)
}

fn allowed_host(req: &Request, loopback: bool) -> Option<Response> {
    if !loopback {
        return None;
    }
    let given = req.host.as_deref().unwrap_or_default();
    let host = strip_port(given);
    if let Ok(ip) = host.parse::<IpAddr>() {
        return (!local_ip(ip)).then(|| empty(403, Vec::new()));
    }
    if !allowed_name(host) {
        return Some(empty(403, Vec::new()));
    }
    (req.method == "OPTIONS").then(|| empty(204, Vec::new()))
}

/// `net.SplitHostPort`, falling back to the whole value.
fn strip_port(hostport: &str) -> &str {
    if let Some(rest) = hostport.strip_prefix('[') {
        return rest.split_once(']').map_or(hostport, |(h, _)| h);
    }
    match hostport.rsplit_once(':') {
        Some((h, p)) if !h.contains(':') && p.chars().all(|c| c.is_ascii_digit()) => h,
        _ => hostport,
    }
}

fn local_ip(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => v4.is_loopback() || v4.is_private() || v4.is_unspecified(),
        IpAddr::V6(v6) => {
            v6.is_loopback() || v6.is_unspecified() || (v6.segments()[0] & 0xfe00) == 0xfc00
        }
    }
}

/// `allowedHost` in `routes.go`.
fn allowed_name(host: &str) -> bool {
    let host = host.to_ascii_lowercase();
    if host.is_empty() || host == "localhost" {
        return true;
    }
    let this = sysinfo::System::host_name().unwrap_or_default();
    if !this.is_empty() && host == this.to_ascii_lowercase() {
        return true;
    }
    [".localhost", ".local", ".internal"]
        .iter()
        .any(|tld| host.ends_with(tld))
}
