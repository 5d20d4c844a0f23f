//! Which `resources`/`components` entries name a git repository, and how kustomize splits them
//! (`api/internal/git/repospec.go`): the URL `git` clones, the folder inside it, and the query
//! (`ref`/`version`, `timeout`, `submodules`).
use std::time::Duration;

/// A git repository, a ref and a kustomization folder inside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RepoSpec {
    /// The entry as written.
    pub raw: String,
    /// Scheme, user and host, normalized as kustomize does: `https://github.com/`, `git@host:`, `file://`.
    pub host: String,
    /// The repository below the host: `org/repo`, `org/project/_git/repo`, `/abs/repo.git`.
    pub repo_path: String,
    /// The kustomization folder inside the repository (may be empty, may end with `/`).
    pub kust_root_path: String,
    /// `?ref=`, else `?version=`; empty for the remote's HEAD.
    pub git_ref: String,
    /// `?submodules=` (default true).
    pub submodules: bool,
    /// `?timeout=` for each git command (default 27 s).
    pub timeout: Duration,
    /// A `?timeout=` too large for a duration (kustomize's Go would overflow): the fetch
    /// fails with this message instead of running.
    pub invalid_timeout: Option<String>,
}

/// The longest timeout a URL may ask for: Go's largest duration (about 292 years).
pub const MAX_TIMEOUT: Duration = Duration::from_nanos(i64::MAX as u64);

/// kustomize's timeout for one git command.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(27);

/// kustomize's warning for a `git::` prefix, which it drops.
pub const FORCED_GIT_WARNING: &str = "Warning: Forcing the git protocol using the 'git::' URL prefix is not supported. Kustomize currently strips this invalid prefix, but will stop doing so in a future release. Please remove the 'git::' prefix from your configuration.";

const FILE_SCHEME: &str = "file://";
const SCHEMES: [&str; 4] = ["ssh://", "https://", "http://", FILE_SCHEME];

/// Why an entry is not a git repository URL.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UrlError {
    #[error("uri looks like abs path: {0}")]
    AbsolutePath(String),
    #[error("failed to parse scheme")]
    Scheme,
    #[error("failed to parse host segment")]
    Host,
    #[error("failed to parse repo path segment")]
    RepoPath,
    #[error("url path exits repo: {0}")]
    ExitsRepo(String),
}

impl RepoSpec {
    /// What `git` fetches: host and repository path.
    pub fn clone_spec(&self) -> String {
        format!("{}{}", self.host, self.repo_path)
    }

    /// The kustomization folder inside the repository, cleaned (`""` for the top).
    pub fn kust_root(&self) -> String {
        let cleaned = clean_path(&self.kust_root_path);
        if cleaned == "." { String::new() } else { cleaned.trim_start_matches('/').to_string() }
    }

    /// The origin path kustomize records for the kustomization folder: the folder, or the
    /// placeholder `notCloned` for the repository's top (kustomize takes it from a checkout
    /// path it has not made yet).
    pub fn origin_path(&self) -> String {
        let root = self.kust_root();
        if root.is_empty() { "notCloned".into() } else { root }
    }

    /// Parses a git-like URL; an error means the entry is not one (kustomize then reads it as a
    /// local path).
    pub fn parse(entry: &str) -> Result<RepoSpec, UrlError> {
        if entry.starts_with('/') {
            return Err(UrlError::AbsolutePath(entry.to_string()));
        }
        let (rest, query) = entry.split_once('?').unwrap_or((entry, ""));
        let (git_ref, timeout, submodules) = parse_query(query);
        let (timeout, invalid_timeout) = match timeout {
            Ok(timeout) => (timeout, None),
            Err(message) => (DEFAULT_TIMEOUT, Some(message)),
        };
        let (host, rest) = extract_host(rest)?;
        let default_segments = if host.starts_with(FILE_SCHEME) { None } else { Some(2) };
        let (repo_path, kust_root_path) = split_path(rest, default_segments)?;
        Ok(RepoSpec { raw: entry.to_string(), host, repo_path, kust_root_path, git_ref, submodules, timeout, invalid_timeout })
    }
}

/// Whether kustomize reads `entry` as one file over HTTP(S) before anything else (Go's
/// `url.Parse` accepts it, with scheme `http` or `https`; an entry it refuses is a local path).
pub fn is_http_url(entry: &str) -> bool {
    let starts = |scheme: &str| entry.get(..scheme.len()).is_some_and(|start| start.eq_ignore_ascii_case(scheme));
    (starts("http://") || starts("https://")) && super::go_url::parses(entry)
}

/// Whether an HTTP(S) URL marks a repository explicitly (`//` or `_git/` in its path, or a path
/// part ending in `.git`): such a URL is never read as a file, so a cached build asks no server.
pub fn has_git_marker(entry: &str) -> bool {
    let without_query = entry.split('?').next().unwrap_or(entry);
    let after_scheme = without_query.split_once("://").map_or(without_query, |(_, rest)| rest);
    let path = after_scheme.split_once('/').map_or("", |(_, path)| path);
    path.contains("//") || path.contains("_git/") || path.split('/').any(|part| part.ends_with(".git"))
}

/// `ref` (else `version`), `timeout`, `submodules`; a query that does not parse gives the
/// defaults; a timeout past [`MAX_TIMEOUT`] is an error.
pub fn parse_query(query: &str) -> (String, Result<Duration, String>, bool) {
    let defaults = (String::new(), Ok(DEFAULT_TIMEOUT), true);
    let mut values: Vec<(String, String)> = Vec::new();
    for pair in query.split('&').filter(|p| !p.is_empty()) {
        if pair.contains(';') {
            return defaults;
        }
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match (unescape_query(key), unescape_query(value)) {
            (Some(k), Some(v)) => values.push((k, v)),
            _ => return defaults,
        }
    }
    let get = |name: &str| values.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str()).unwrap_or("");
    let mut git_ref = get("version").to_string();
    if !get("ref").is_empty() {
        git_ref = get("ref").to_string();
    }
    let too_long = |text: &str| format!("timeout '{text}' is longer than the largest duration ({MAX_TIMEOUT:?})");
    let timeout = match get("timeout") {
        "" => Ok(DEFAULT_TIMEOUT),
        text => match text.parse::<i64>() {
            Ok(seconds) if seconds > 0 => Some(Duration::from_secs(seconds.unsigned_abs())).filter(|d| *d <= MAX_TIMEOUT).ok_or_else(|| too_long(text)),
            _ => match parse_go_duration(text) {
                Some(Ok(duration)) if !duration.is_zero() => Ok(duration),
                Some(Err(Overflow)) => Err(too_long(text)),
                _ => Ok(DEFAULT_TIMEOUT),
            },
        },
    };
    let submodules = match get("submodules") {
        "1" | "t" | "T" | "TRUE" | "true" | "True" => true,
        "0" | "f" | "F" | "FALSE" | "false" | "False" => false,
        _ => true,
    };
    (git_ref, timeout, submodules)
}

/// Go's `url.QueryUnescape`: `+` is a space, `%XX` a byte; a bad escape is an error.
fn unescape_query(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = text.get(i + 1..i + 3)?;
                out.push(u8::from_str_radix(hex, 16).ok()?);
                i += 2;
            }
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8(out).ok()
}

/// A duration past Go's largest.
#[derive(Debug, PartialEq, Eq)]
pub struct Overflow;

/// Go's `time.ParseDuration` for positive values: `1h2m3.5s`, `300ms`, `90s`; `None` for text
/// that is no duration, `Some(Err)` for one past Go's largest (as Go refuses it), all in
/// integer nanoseconds with checked arithmetic (no float, no panic).
pub fn parse_go_duration(text: &str) -> Option<Result<Duration, Overflow>> {
    let text = text.strip_prefix('+').unwrap_or(text);
    if text.is_empty() || text.starts_with('-') {
        return None;
    }
    if text == "0" {
        return Some(Ok(Duration::ZERO));
    }
    const LIMIT: u128 = i64::MAX as u128;
    let mut total: u128 = 0;
    let mut overflow = false;
    let mut rest = text;
    while !rest.is_empty() {
        let number_end = rest.find(|c: char| !(c.is_ascii_digit() || c == '.')).unwrap_or(rest.len());
        let (whole, fraction) = rest[..number_end].split_once('.').unwrap_or((&rest[..number_end], ""));
        if (whole.is_empty() && fraction.is_empty()) || fraction.contains('.') {
            return None;
        }
        rest = &rest[number_end..];
        let unit_end = rest.find(|c: char| c.is_ascii_digit() || c == '.').unwrap_or(rest.len());
        let nanos_per_unit: u128 = match &rest[..unit_end] {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        rest = &rest[unit_end..];
        // The whole part, digit by digit, stopping at the limit; then the fraction's digits
        // that still count (a unit is at most 3.6e12 ns: 13 digits).
        let mut value: u128 = 0;
        for digit in whole.bytes() {
            value = value * 10 + u128::from(digit - b'0');
            if value > LIMIT {
                overflow = true;
                break;
            }
        }
        let mut part = value.saturating_mul(nanos_per_unit);
        let mut scale = nanos_per_unit;
        for digit in fraction.bytes().take(20) {
            scale /= 10;
            part += u128::from(digit - b'0') * scale;
        }
        total = total.saturating_add(part);
        overflow |= total > LIMIT;
    }
    if overflow {
        return Some(Err(Overflow));
    }
    Some(Ok(Duration::from_nanos(total as u64)))
}

/// Splits off the scheme, user and host; `git::` (go-getter's prefix) is dropped.
fn extract_host(entry: &str) -> Result<(String, &str), UrlError> {
    let n = strip_prefix_ignore_case(entry, "git::").unwrap_or(entry);
    let (scheme, n) = SCHEMES
        .iter()
        .find_map(|s| strip_prefix_ignore_case(n, s).map(|rest| (*s, rest)))
        .unwrap_or(("", n));
    let (username, n) = split_username(n);
    let lower = n.get(..11).unwrap_or(n).to_ascii_lowercase();
    let standard_github = lower.starts_with("github.com/") || lower.starts_with("github.com:");
    let accept_scp = scheme.is_empty() && (!username.is_empty() || standard_github);
    if scheme.is_empty() && !accept_scp {
        return Err(UrlError::Scheme);
    }
    if scheme == FILE_SCHEME {
        // Everything after `file://`, a "user" included, is the repository's path.
        return Ok((scheme.to_string(), &entry[entry.len() - n.len() - username.len()..]));
    }
    let (mut host, rest) = match path_separator(n, accept_scp) {
        Some(i) => (&n[..=i], &n[i + 1..]),
        None => (n, ""),
    };
    let (mut scheme, mut username) = (scheme, username);
    if standard_github {
        // kustomize normalizes GitHub: ssh (a scheme or a user) to `user@github.com:`, else https.
        if scheme.starts_with("ssh://") || !username.is_empty() {
            (scheme, host) = ("", "github.com:");
        } else {
            (scheme, username, host) = ("https://", "", "github.com/");
        }
    }
    if host.is_empty() {
        return Err(UrlError::Host);
    }
    Ok((format!("{scheme}{username}{host}"), rest))
}

fn strip_prefix_ignore_case<'a>(s: &'a str, prefix: &str) -> Option<&'a str> {
    let head = s.get(..prefix.len())?;
    head.eq_ignore_ascii_case(prefix).then(|| &s[prefix.len()..])
}

/// A leading `name@` (a letter, then letters, digits and dashes).
fn split_username(s: &str) -> (&str, &str) {
    let bytes = s.as_bytes();
    if !bytes.first().is_some_and(u8::is_ascii_alphabetic) {
        return ("", s);
    }
    let end = bytes.iter().position(|b| !(b.is_ascii_alphanumeric() || *b == b'-')).unwrap_or(bytes.len());
    if bytes.get(end) == Some(&b'@') { (&s[..=end], &s[end + 1..]) } else { ("", s) }
}

/// Where the host ends: the first `/`, or for scp-like URLs an earlier `:`.
fn path_separator(s: &str, accept_scp: bool) -> Option<usize> {
    let slash = s.find('/');
    if accept_scp {
        if let Some(colon) = s.find(':').filter(|c| *c > 0) {
            if slash.is_none_or(|slash| colon < slash) {
                return Some(colon);
            }
        }
    }
    slash
}

/// Splits the repository from the kustomization folder: at `_git/<repo>`, else at `//`, else
/// after `.git`, else after `default_segments` parts (all of them for `file://`).
fn split_path(n: &str, default_segments: Option<usize>) -> Result<(String, String), UrlError> {
    let (repo, root) = if let Some(i) = n.find("_git/") {
        let after = &n[i + 5..];
        let (repo_name, root) = after.split_once('/').unwrap_or((after, ""));
        (format!("{}{repo_name}", &n[..i + 5]), root.to_string())
    } else if let Some(i) = n.find("//") {
        (n[..i].to_string(), n[i + 2..].to_string())
    } else if let Some(i) = n.find(".git") {
        (n[..i + 4].to_string(), n[i + 4..].to_string())
    } else {
        match default_segments {
            None => (n.to_string(), String::new()),
            Some(count) => {
                let parts: Vec<&str> = n.split('/').collect();
                if parts.len() < count {
                    return Err(UrlError::RepoPath);
                }
                (parts[..count].join("/"), parts[count..].join("/"))
            }
        }
    };
    if repo.is_empty() {
        return Err(UrlError::RepoPath);
    }
    let cleaned = clean_path(root.trim_start_matches('/'));
    if cleaned == ".." || cleaned.starts_with("../") {
        return Err(UrlError::ExitsRepo(n.to_string()));
    }
    let root = root.strip_prefix('/').unwrap_or(&root).to_string();
    Ok((repo, root))
}

/// Go's `path.Clean`: one slash between parts, no `.`, `..` resolved where it can be.
pub fn clean_path(path: &str) -> String {
    let rooted = path.starts_with('/');
    let mut parts: Vec<&str> = Vec::new();
    for part in path.split('/') {
        match part {
            "" | "." => {}
            ".." => match parts.last() {
                Some(&last) if last != ".." => {
                    parts.pop();
                }
                _ if rooted => {}
                _ => parts.push(".."),
            },
            other => parts.push(other),
        }
    }
    let joined = parts.join("/");
    match (rooted, joined.is_empty()) {
        (true, _) => format!("/{joined}"),
        (false, true) => ".".into(),
        (false, false) => joined,
    }
}

/// Go's `filepath.Join`: the non-empty parts joined with `/`, cleaned; `""` when all are empty.
pub fn join_path(parts: &[&str]) -> String {
    let kept: Vec<&str> = parts.iter().copied().filter(|p| !p.is_empty()).collect();
    if kept.is_empty() { String::new() } else { clean_path(&kept.join("/")) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (entry, clone spec, kustomization folder, ref)
    const GOOD: &[(&str, &str, &str, &str)] = &[
        ("github.com/org/repo//path?ref=v1", "https://github.com/org/repo", "path", "v1"),
        ("gitHub.com/org/repo/deploy/dev", "https://github.com/org/repo", "deploy/dev", ""),
        ("github.com:org/repo?ref=main", "https://github.com/org/repo", "", "main"),
        ("http://github.com/org/repo.git/dir", "https://github.com/org/repo.git", "dir", ""),
        ("https://github.com/org/repo.git//path?ref=v1.2.3", "https://github.com/org/repo.git", "path", "v1.2.3"),
        ("hTTps://github.com/org/repo", "https://github.com/org/repo", "", ""),
        ("https://github.com/org/repo//examples/dev/?ref=kustomize%2Fv4.5.7", "https://github.com/org/repo", "examples/dev", "kustomize/v4.5.7"),
        ("https://host.example/org/repo//path", "https://host.example/org/repo", "path", ""),
        ("https://example.org/path/to/repo.git/examples/dev", "https://example.org/path/to/repo.git", "examples/dev", ""),
        ("https://itfs.example.com/collection/project/_git/repo/dir?version=v1.0.0", "https://itfs.example.com/collection/project/_git/repo", "dir", "v1.0.0"),
        ("https://user@dev.azure.com/org/project/_git/repo//a/b", "https://user@dev.azure.com/org/project/_git/repo", "a/b", ""),
        ("git::https://gitlab.com/org/repo//dir?ref=x", "https://gitlab.com/org/repo", "dir", "x"),
        ("git::http://git.example.com/org/repo", "http://git.example.com/org/repo", "", ""),
        ("ssh://git@host.example/org/repo.git//path?ref=branch", "ssh://git@host.example/org/repo.git", "path", "branch"),
        ("ssh://git@github.com/org/repo//dev?ref=v1", "git@github.com:org/repo", "dev", "v1"),
        ("ssh://git.example.com:7999/org/repo/dir", "ssh://git.example.com:7999/org/repo", "dir", ""),
        ("ssh://git@ssh.github.com:443/user/repo.git", "ssh://git@ssh.github.com:443/user/repo.git", "", ""),
        ("git@github.com:org/repo.git/path", "git@github.com:org/repo.git", "path", ""),
        ("git@github.com/org/repo/path", "git@github.com:org/repo", "path", ""),
        ("org-12345@github.com/org/repo", "org-12345@github.com:org/repo", "", ""),
        ("git@gitlab.com:group/sub/project.git?ref=v0.1.0", "git@gitlab.com:group/sub/project.git", "", "v0.1.0"),
        ("git@bitbucket.org:company/project.git//path?ref=b", "git@bitbucket.org:company/project.git", "path", "b"),
        ("git@gitlab.com/user:name/repo.git/path", "git@gitlab.com/user:name/repo.git", "path", ""),
        ("file:///abs/repo.git//path?ref=v1", "file:///abs/repo.git", "path", "v1"),
        ("file:///abs/repo.git/path", "file:///abs/repo.git", "path", ""),
        ("file:///abs/repo?version=main", "file:///abs/repo", "", "main"),
        ("file://git@home/path/repo.git//p", "file://git@home/path/repo.git", "p", ""),
        ("file:///", "file:///", "", ""),
        ("https://authority/org/repo?ref=group/version", "https://authority/org/repo", "", "group/version"),
        ("https://authority/org/repo/?ref=includes.git/x", "https://authority/org/repo", "", "includes.git/x"),
        ("http://127.0.0.1:8080/org/pod.yaml", "http://127.0.0.1:8080/org/pod.yaml", "", ""),
        ("https://x/o/r?ref=a&version=b", "https://x/o/r", "", "a"),
        ("https://x/o/r?version=b", "https://x/o/r", "", "b"),
    ];

    #[test]
    fn url_forms_split_as_kustomize_splits_them() {
        for (entry, clone, root, git_ref) in GOOD {
            let spec = RepoSpec::parse(entry).unwrap_or_else(|e| panic!("{entry}: {e}"));
            assert_eq!((spec.clone_spec().as_str(), spec.kust_root().as_str(), spec.git_ref.as_str()), (*clone, *root, *git_ref), "{entry}");
        }
    }

    #[test]
    fn entries_that_are_not_repositories_are_refused() {
        for (entry, error) in [
            ("/tmp", "uri looks like abs path"),
            ("../../tmp", "failed to parse scheme"),
            ("base", "failed to parse scheme"),
            ("src/github.com/org/repo/path", "failed to parse scheme"),
            ("htxxxtp://github.com/", "failed to parse scheme"),
            ("ssh://git.example.com", "failed to parse repo path segment"),
            ("git::___", "failed to parse scheme"),
            ("https://host?ref=group/version", "failed to parse repo path segment"),
            ("https://github.com/org/repo.git//path/../../exits/repo", "url path exits repo"),
            ("github.com!org/repo.git//path", "failed to parse scheme"),
            ("gh:org/repo", "failed to parse scheme"),
            ("https://github.com/thisisa404.yaml", "failed to parse repo path segment"),
            ("file:////tmp//path/to/whatever", "failed to parse repo path segment"),
            ("git@ssh://github.com/org/repo.git//path", "failed to parse repo path segment"),
            ("http://127.0.0.1:8080/pod.yaml", "failed to parse repo path segment"),
        ] {
            let got = RepoSpec::parse(entry).map(|s| s.clone_spec());
            assert!(matches!(&got, Err(e) if e.to_string().contains(error)), "{entry}: {got:?}");
        }
    }

    #[test]
    fn query_timeout_and_submodules_read_as_kustomize_reads_them() {
        let spec = |q: &str| RepoSpec::parse(&format!("https://x/o/r?{q}")).unwrap();
        assert_eq!(spec("timeout=500").timeout, Duration::from_secs(500));
        assert_eq!(spec("timeout=1m30s").timeout, Duration::from_secs(90));
        assert_eq!(spec("timeout=0").timeout, DEFAULT_TIMEOUT);
        assert_eq!(spec("timeout=soon").timeout, DEFAULT_TIMEOUT);
        assert_eq!(spec("timeout=1.5h").timeout, Duration::from_secs(5400));
        assert_eq!(spec("timeout=300ms").timeout, Duration::from_millis(300));
        for huge in ["6000000000000000h", "9223372036854775807", "2562048h", "99999999999999999999999999s"] {
            let spec = spec(&format!("timeout={huge}"));
            assert!(spec.invalid_timeout.as_deref().is_some_and(|m| m.contains(huge)), "{huge}: {spec:?}");
        }
        assert_eq!(spec("timeout=2562047h").invalid_timeout, None);
        assert!(!spec("submodules=0").submodules);
        assert!(!spec("submodules=False").submodules);
        assert!(spec("submodules=maybe").submodules);
        assert!(spec("").submodules);
        // A query that does not parse gives every default, the ref included.
        let bad = spec("ref=v1&timeout=5&x=%zz");
        assert_eq!((bad.git_ref.as_str(), bad.timeout), ("", DEFAULT_TIMEOUT));
        assert_eq!(spec("ref=a+b").git_ref, "a b");
    }

    #[test]
    fn origin_paths_follow_kustomize() {
        assert_eq!(RepoSpec::parse("file:///r.git").unwrap().origin_path(), "notCloned");
        assert_eq!(RepoSpec::parse("https://github.com/o/r//examples/dev/").unwrap().origin_path(), "examples/dev");
    }

    #[test]
    fn paths_clean_as_go_cleans_them() {
        assert_eq!(clean_path("a//b/./c/../d"), "a/b/d");
        assert_eq!(clean_path("../a"), "../a");
        assert_eq!(clean_path("/../a"), "/a");
        for (path, want) in [("./comp/x", "comp/x"), ("a/b/../../..", ".."), ("", "."), ("/x/../../y", "/y"), ("comp//x/", "comp/x")] {
            assert_eq!(clean_path(path), want, "{path}");
        }
        assert_eq!(join_path(&["notCloned", "../base/pod.yaml"]), "base/pod.yaml");
        assert_eq!(join_path(&["", "http://h:1/p.yaml"]), "http:/h:1/p.yaml");
    }

    #[test]
    fn explicit_repository_markers_are_seen() {
        assert!(has_git_marker("https://h/o/r.git//p?ref=v1") && has_git_marker("http://h/o/r//p") && has_git_marker("https://h/p/_git/r"));
        assert!(!has_git_marker("https://h/o/pod.yaml") && !has_git_marker("https://h/o/file.git.yaml") && !has_git_marker("https://h/o/r?ref=a//b"));
    }

    #[test]
    fn only_http_schemes_are_http_files() {
        assert!(is_http_url("HTTPS://h/x.yaml") && is_http_url("http://h/x"));
        assert!(!is_http_url("file:///x") && !is_http_url("github.com/o/r") && !is_http_url("git::https://h/o/r"));
    }
}
