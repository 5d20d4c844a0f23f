//! Go's `net/url` rules where they decide what kustomize downloads: `url.Parse` says whether a
//! `resources` entry is an HTTP file at all (an entry that does not parse is a local path), and
//! kustomize v5.8 sends `url.ParseRequestURI(entry).String()`: a `#` is part of the path (sent
//! as `%23`), and the path is percent-encoded the way Go encodes it (`|` as `%7C`, a space as
//! `%20`, UTF-8 bytes one by one), while the query is sent as written.
//!
//! Written here because the `url` crate follows the WHATWG URL standard, which splits off the
//! fragment and escapes a different set of characters: the request would not be kustomize's.
use crate::yaml::go_syntax::quote as go_quote;

/// The parts of a URL Go's parser tells apart (the subset kustomize's HTTP files use).
#[derive(Debug, PartialEq, Eq)]
struct Parsed {
    scheme: String,
    /// `scheme:opaque` (no `//`, no leading `/`).
    opaque: Option<String>,
    user: UserInfo,
    /// As unescaped by Go (`%C3%A9` becomes `é`): bytes, as a Go string holds any.
    host: Vec<u8>,
    has_authority: bool,
    /// Unescaped, and the text it was written as where that is not Go's default escaping.
    path: Vec<u8>,
    raw_path: Option<String>,
    raw_query: Option<String>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    Host,
    Zone,
    UserPassword,
    Fragment,
}

/// Whether Go's `url.Parse` accepts `raw` (the fragment after the first `#` checked apart).
pub fn parses(raw: &str) -> bool {
    let (url, fragment) = raw.split_once('#').map_or((raw, None), |(u, f)| (u, Some(f)));
    parse(url, false).is_ok() && fragment.is_none_or(|f| unescape(f, Mode::Fragment).is_ok())
}

/// The URL kustomize v5.8 requests for the HTTP file `raw`, or Go's error
/// (`parse "RAW": invalid URL escape "%zz"`).
pub fn request_url(raw: &str) -> Result<String, String> {
    let url = parse(raw, true).map_err(|e| format!("parse {}: {e}", go_quote(raw)))?;
    Ok(url.to_go_string())
}

fn parse(raw: &str, via_request: bool) -> Result<Parsed, String> {
    if raw.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".into());
    }
    if raw.is_empty() && via_request {
        return Err("empty url".into());
    }
    let (scheme, rest) = scheme(raw)?;
    let scheme = scheme.to_ascii_lowercase();
    let (rest, raw_query) = if rest.ends_with('?') && rest.matches('?').count() == 1 {
        (&rest[..rest.len() - 1], Some(String::new()))
    } else {
        match rest.split_once('?') {
            Some((r, q)) => (r, Some(q.to_string())),
            None => (rest, None),
        }
    };
    let mut url = Parsed {
        scheme,
        opaque: None,
        user: None,
        host: Vec::new(),
        has_authority: false,
        path: Vec::new(),
        raw_path: None,
        raw_query,
    };
    if !rest.starts_with('/') {
        if !url.scheme.is_empty() {
            url.opaque = Some(rest.to_string());
            return Ok(url);
        }
        if via_request {
            return Err("invalid URI for request".into());
        }
        if rest.split('/').next().is_some_and(|segment| segment.contains(':')) {
            return Err("first path segment in URL cannot contain colon".into());
        }
    }
    let mut rest = rest;
    if (!url.scheme.is_empty() || !via_request && !rest.starts_with("///")) && rest.starts_with("//") {
        let authority = &rest[2..];
        let (authority, path) = authority.find('/').map_or((authority, ""), |i| (&authority[..i], &authority[i..]));
        let (user, host) = authority_parts(authority)?;
        url.user = user;
        url.host = host;
        url.has_authority = true;
        rest = path;
    }
    url.path = unescape(rest, Mode::Path)?;
    url.raw_path = (escape(&url.path, Mode::Path) != rest).then(|| rest.to_string());
    Ok(url)
}

/// `scheme:rest`, or no scheme (Go's `getScheme`).
fn scheme(raw: &str) -> Result<(&str, &str), String> {
    for (i, c) in raw.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".into()),
            b':' => return Ok((&raw[..i], &raw[i + 1..])),
            _ => return Ok(("", raw)),
        }
    }
    Ok(("", raw))
}

type UserInfo = Option<(Vec<u8>, Option<Vec<u8>>)>;

fn authority_parts(authority: &str) -> Result<(UserInfo, Vec<u8>), String> {
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    let host = parse_host(host)?;
    let Some(userinfo) = userinfo else { return Ok((None, host)) };
    let valid = userinfo.bytes().all(|c| {
        c.is_ascii_alphanumeric() || b"-._:~!$&'()*+,;=%@".contains(&c)
    });
    if !valid {
        return Err("net/url: invalid userinfo".into());
    }
    let user = match userinfo.split_once(':') {
        None => (unescape(userinfo, Mode::UserPassword)?, None),
        Some((name, password)) => (unescape(name, Mode::UserPassword)?, Some(unescape(password, Mode::UserPassword)?)),
    };
    Ok((Some(user), host))
}

/// `host[:port]`, unescaped (Go's `parseHost`).
fn parse_host(host: &str) -> Result<Vec<u8>, String> {
    match host.rfind('[') {
        Some(i) if i > 0 => Err("invalid IP-literal".into()),
        Some(_) => {
            let close = host.rfind(']').ok_or("missing ']' in host")?;
            let colon_port = &host[close + 1..];
            if !valid_optional_port(colon_port) {
                return Err(format!("invalid port {} after host", go_quote(colon_port)));
            }
            let inner = &host[1..close];
            let mut unescaped = match inner.find("%25") {
                Some(zone) => [unescape(&inner[..zone], Mode::Host)?, unescape(&inner[zone..], Mode::Zone)?].concat(),
                None => unescape(inner, Mode::Host)?,
            };
            let text = String::from_utf8_lossy(&unescaped).into_owned();
            if text.split('%').next().unwrap_or_default().parse::<std::net::Ipv6Addr>().is_err() {
                return Err(format!("invalid host: ParseAddr({}): unable to parse IP", go_quote(&text)));
            }
            unescaped.insert(0, b'[');
            unescaped.push(b']');
            unescaped.extend(unescape(colon_port, Mode::Host)?);
            Ok(unescaped)
        }
        None => {
            if let Some(i) = host.find(':') {
                let colon_port = &host[i..];
                if !valid_optional_port(colon_port) {
                    return Err(format!("invalid port {} after host", go_quote(colon_port)));
                }
            }
            unescape(host, Mode::Host)
        }
    }
}

fn valid_optional_port(port: &str) -> bool {
    port.is_empty() || port.strip_prefix(':').is_some_and(|digits| digits.bytes().all(|b| b.is_ascii_digit()))
}

/// Go's `shouldEscape`: whether byte `c` is written `%XX` in the part `mode`.
fn should_escape(c: u8, mode: Mode) -> bool {
    if c.is_ascii_alphanumeric() {
        return false;
    }
    if matches!(mode, Mode::Host | Mode::Zone) && b"!$&'()*+,;=:[]<>\"".contains(&c) {
        return false;
    }
    match c {
        b'-' | b'_' | b'.' | b'~' => return false,
        b'$' | b'&' | b'+' | b',' | b'/' | b':' | b';' | b'=' | b'?' | b'@' => match mode {
            Mode::Path => return c == b'?',
            Mode::UserPassword => return matches!(c, b'@' | b'/' | b'?' | b':'),
            Mode::Fragment => return false,
            Mode::Host | Mode::Zone => {}
        },
        _ => {}
    }
    !(mode == Mode::Fragment && matches!(c, b'!' | b'(' | b')' | b'*'))
}

/// Go's `unescape`: `%XX` decoded; a malformed escape, or (in a host) an ASCII byte a host may
/// not hold, is an error.
fn unescape(s: &str, mode: Mode) -> Result<Vec<u8>, String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' => {
                let hex = |b: Option<&u8>| b.and_then(|b| (*b as char).to_digit(16));
                let (Some(high), Some(low)) = (hex(bytes.get(i + 1)), hex(bytes.get(i + 2))) else {
                    let bad: String = s[i..].chars().take(3).collect();
                    return Err(format!("invalid URL escape {}", go_quote(&bad)));
                };
                let escaped = &s[i..i + 3];
                if mode == Mode::Host && high < 8 && escaped != "%25" {
                    return Err(format!("invalid URL escape {}", go_quote(escaped)));
                }
                let byte = (high * 16 + low) as u8;
                if mode == Mode::Zone && escaped != "%25" && byte != b' ' && should_escape(byte, Mode::Host) {
                    return Err(format!("invalid URL escape {}", go_quote(escaped)));
                }
                out.push(byte);
                i += 3;
            }
            c => {
                if matches!(mode, Mode::Host | Mode::Zone) && c < 0x80 && should_escape(c, mode) {
                    return Err(format!("invalid character {} in host name", go_quote(&(c as char).to_string())));
                }
                out.push(c);
                i += 1;
            }
        }
    }
    Ok(out)
}

fn escape(s: &[u8], mode: Mode) -> String {
    let mut out = String::with_capacity(s.len());
    for &c in s {
        if should_escape(c, mode) {
            out.push_str(&format!("%{c:02X}"));
        } else {
            out.push(c as char);
        }
    }
    out
}

/// Whether `raw_path` is a valid escaping of a path (Go's `validEncoded`).
fn valid_encoded(raw_path: &str) -> bool {
    raw_path.bytes().all(|c| b"!$&'()*+,;=:@[]%".contains(&c) || !should_escape(c, Mode::Path))
}

impl Parsed {
    fn escaped_path(&self) -> String {
        if let Some(raw) = &self.raw_path {
            if valid_encoded(raw) && unescape(raw, Mode::Path).is_ok_and(|p| p == self.path) {
                return raw.clone();
            }
        }
        if self.path == b"*" {
            return "*".into();
        }
        escape(&self.path, Mode::Path)
    }

    /// Go's `URL.String()`.
    fn to_go_string(&self) -> String {
        let mut out = String::new();
        if !self.scheme.is_empty() {
            out.push_str(&self.scheme);
            out.push(':');
        }
        match &self.opaque {
            Some(opaque) if !opaque.is_empty() => out.push_str(opaque),
            _ => {
                let omit_host = !self.has_authority && self.host.is_empty() && self.user.is_none();
                if (!self.scheme.is_empty() || !self.host.is_empty() || self.user.is_some()) && !omit_host {
                    if !self.host.is_empty() || !self.path.is_empty() || self.user.is_some() {
                        out.push_str("//");
                    }
                    if let Some((name, password)) = &self.user {
                        out.push_str(&escape(name, Mode::UserPassword));
                        if let Some(password) = password {
                            out.push(':');
                            out.push_str(&escape(password, Mode::UserPassword));
                        }
                        out.push('@');
                    }
                    out.push_str(&escape(&self.host, Mode::Host));
                }
                let path = self.escaped_path();
                if !path.is_empty() && !path.starts_with('/') && !self.host.is_empty() {
                    out.push('/');
                }
                out.push_str(&path);
            }
        }
        if let Some(query) = &self.raw_query {
            out.push('?');
            out.push_str(query);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // What kustomize v5.8.1 requested from a loopback server for each entry (its request line).
    #[test]
    fn the_request_is_the_url_go_writes() {
        let cases = [
            ("http://127.0.0.1:8765/a b.yaml", "http://127.0.0.1:8765/a%20b.yaml"),
            ("http://127.0.0.1:8765/cm.yaml#frag", "http://127.0.0.1:8765/cm.yaml%23frag"),
            ("http://127.0.0.1:8765/x%2Fy.yaml", "http://127.0.0.1:8765/x%2Fy.yaml"),
            ("http://127.0.0.1:8765/é.yaml", "http://127.0.0.1:8765/%C3%A9.yaml"),
            ("http://127.0.0.1:8765/c|m.yaml", "http://127.0.0.1:8765/c%7Cm.yaml"),
            ("HTTPS://Host.example/p/q.yaml?ref=v1&x=%zz", "https://Host.example/p/q.yaml?ref=v1&x=%zz"),
            ("https://u:p%40ss@h/f.yaml", "https://u:p%40ss@h/f.yaml"),
            ("http://[::1]:80/f.yaml", "http://[::1]:80/f.yaml"),
        ];
        for (entry, sent) in cases {
            assert_eq!(request_url(entry).as_deref(), Ok(sent), "{entry}");
        }
    }

    #[test]
    fn an_entry_go_cannot_parse_is_no_url() {
        for entry in ["http://h/%zz.yaml", "http://h/a#%zz", "http://h b/x.yaml", "http://h:port/x", "http://h/\u{7}x", "http://[1.2.3.4]/x"] {
            assert!(!parses(entry), "{entry}");
        }
        for entry in ["http://h/a b.yaml", "http://h/x.yaml#frag", "https://h/é?q=%zz", "http://h:8080/x"] {
            assert!(parses(entry), "{entry}");
        }
        assert_eq!(request_url("http://h/%zz").unwrap_err(), r#"parse "http://h/%zz": invalid URL escape "%zz""#);
    }
}
