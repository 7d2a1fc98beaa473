//! `OLLAMA_HOST` parsing, the way Ollama's own client reads it (`envconfig.Host` and
//! `ConnectableHost`): `[scheme://]host[:port][/path]`, no scheme means `http` on port 11434, an
//! explicit `http://` without a port means 80, `https://` means 443, and an unspecified bind address
//! (`0.0.0.0`, `::`, empty) means loopback.

use super::error::WireError;
use std::net::IpAddr;

/// Ollama's default port when no scheme is given.
pub const DEFAULT_PORT: u16 = 11434;

/// Turns an `OLLAMA_HOST` value into a base URL without a trailing slash, e.g.
/// `"0.0.0.0"` -> `"http://127.0.0.1:11434"`, `"http://box"` -> `"http://box:80"`.
pub fn parse_host(s: &str) -> Result<String, WireError> {
    let bad = |reason: &str| WireError::Host {
        value: s.to_string(),
        reason: reason.to_string(),
    };
    let trimmed = s.trim();
    let (scheme, rest, default_port) = match trimmed.split_once("://") {
        None if trimmed == "ollama.com" => ("https", "ollama.com:443", 443),
        None => ("http", trimmed, DEFAULT_PORT),
        Some((scheme, rest)) => match scheme.to_ascii_lowercase().as_str() {
            "http" => ("http", rest, 80),
            "https" => ("https", rest, 443),
            _ => return Err(bad("the scheme must be http or https")),
        },
    };
    let (hostport, path) = match rest.split_once('/') {
        Some((hp, path)) => (hp, path.trim_end_matches('/')),
        None => (rest, ""),
    };
    let (host, port) = split_host_port(hostport).map_err(|r| bad(&r))?;
    if let Some(c) = host
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':' | '%')))
    {
        return Err(bad(&format!(
            "the host name holds {c:?}, which no host name or address holds"
        )));
    }
    let port = match port {
        None => default_port,
        Some(p) => p
            .parse::<u16>()
            .map_err(|_| bad("the port must be a number from 0 to 65535"))?,
    };
    let host = connectable(&host);
    let host = if host.contains(':') {
        format!("[{host}]")
    } else {
        host
    };
    let mut url = format!("{scheme}://{host}:{port}");
    if !path.is_empty() {
        url.push('/');
        url.push_str(path);
    }
    Ok(url)
}

/// Splits `host[:port]`, `[v6]:port`, `[v6]` or a bare IPv6 address.
fn split_host_port(hp: &str) -> Result<(String, Option<&str>), String> {
    if let Some(rest) = hp.strip_prefix('[') {
        let (host, after) = rest.split_once(']').ok_or("missing ']' in IPv6 address")?;
        return match after {
            "" => Ok((host.to_string(), None)),
            _ => match after.strip_prefix(':') {
                Some(port) => Ok((host.to_string(), Some(port))),
                None => Err("unexpected text after ']'".to_string()),
            },
        };
    }
    match hp.matches(':').count() {
        0 => Ok((hp.to_string(), None)),
        1 => {
            let (h, p) = hp.split_once(':').unwrap_or((hp, ""));
            Ok((h.to_string(), Some(p)))
        }
        // A bare IPv6 address such as `::` or `::1`.
        _ if hp.parse::<IpAddr>().is_ok() => Ok((hp.to_string(), None)),
        _ => Err("too many colons (write IPv6 addresses as [addr]:port)".to_string()),
    }
}

/// Replaces an unspecified bind address with loopback, as Ollama's client does.
fn connectable(host: &str) -> String {
    match host.parse::<IpAddr>() {
        Ok(IpAddr::V4(v4)) if v4.is_unspecified() => "127.0.0.1".to_string(),
        Ok(IpAddr::V6(v6)) if v6.is_unspecified() => "::1".to_string(),
        Ok(ip) => ip.to_string(),
        Err(_) if host.is_empty() => "127.0.0.1".to_string(),
        Err(_) => host.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(s: &str) -> String {
        parse_host(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn no_scheme_means_http_on_11434() {
        assert_eq!(ok(""), "http://127.0.0.1:11434");
        assert_eq!(ok("localhost"), "http://localhost:11434");
        assert_eq!(ok("box:8080"), "http://box:8080");
        assert_eq!(ok(" 10.0.0.2 "), "http://10.0.0.2:11434");
    }

    #[test]
    fn explicit_scheme_defaults_to_its_port() {
        assert_eq!(ok("http://localhost"), "http://localhost:80");
        assert_eq!(ok("https://example.org"), "https://example.org:443");
        assert_eq!(ok("HTTP://box:9"), "http://box:9");
        assert_eq!(ok("ollama.com"), "https://ollama.com:443");
    }

    #[test]
    fn unspecified_addresses_become_loopback() {
        assert_eq!(ok("0.0.0.0"), "http://127.0.0.1:11434");
        assert_eq!(ok("0.0.0.0:11435"), "http://127.0.0.1:11435");
        assert_eq!(ok("::"), "http://[::1]:11434");
        assert_eq!(ok("[::]:7"), "http://[::1]:7");
        assert_eq!(ok(":11435"), "http://127.0.0.1:11435");
        assert_eq!(ok("[::1]"), "http://[::1]:11434");
    }

    #[test]
    fn a_path_is_kept() {
        assert_eq!(ok("http://proxy:8000/ollama/"), "http://proxy:8000/ollama");
    }

    #[test]
    fn nonsense_is_an_error() {
        assert!(parse_host("ftp://box").is_err());
        assert!(parse_host("box:port").is_err());
        assert!(parse_host("box:70000").is_err());
        assert!(parse_host("[::1").is_err());
        assert!(parse_host("a:b:c").is_err());
    }
}
