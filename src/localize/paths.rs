//! Where the localizer puts what it copies: the default destination name, and the folders under
//! `localized-files/` for HTTP files and remote roots (kustomize's `api/internal/localizer/util.go`).
use std::path::{Path, PathBuf};

use crate::remote::url::clean_path;
use crate::remote::RepoSpec;

/// The prefix of the default destination's name (`localized-<target>`).
pub const DEST_PREFIX: &str = "localized";
/// The folder, inside a localized root, that holds its remote content.
pub const LOCALIZE_DIR: &str = "localized-files";
/// The folder inside [`LOCALIZE_DIR`] for `file://` repositories.
pub const FILE_SCHEME_DIR: &str = "file-schemed";

/// The destination used when none is given: `localized-<folder>` for a local target
/// (`localized` for `/`), `localized-<folder or repository>-<ref with / as ->` for a remote one.
pub fn default_dest_name(target_root: &Path, remote: Option<(&RepoSpec, &Path)>) -> String {
    let mut folder = target_root.file_name().map(|n| n.to_string_lossy().into_owned());
    if let Some((spec, repository)) = remote {
        // The checkout's folder is no name of the user's: the repository's top is named by its URL.
        if target_root == repository {
            folder = Some(url_base(&spec.repo_path).to_string());
        }
        let folder = folder.unwrap_or_default();
        return format!("{DEST_PREFIX}-{folder}-{}", spec.git_ref.replace('/', "-"));
    }
    match folder {
        Some(folder) => format!("{DEST_PREFIX}-{folder}"),
        None => DEST_PREFIX.to_string(),
    }
}

/// The last part of a URL path, trailing slashes ignored.
pub fn url_base(url: &str) -> &str {
    let cleaned = url.trim_end_matches('/');
    cleaned.rsplit('/').next().unwrap_or(cleaned)
}

/// The localized path of an HTTP(S) file: `localized-files/<host>/<path, dot-segments removed>`,
/// without user, port, query or fragment; the path stays percent-encoded as written.
pub fn localized_file_path(url: &str) -> PathBuf {
    let (_, rest) = url.split_once("://").unwrap_or(("", url));
    let rest = rest.split(['?', '#']).next().unwrap_or(rest);
    let (authority, path) = match rest.find('/') {
        Some(slash) => (&rest[..slash], &rest[slash..]),
        None => (rest, ""),
    };
    let cleaned = clean_path(&format!("/{path}"));
    join_relative(Path::new(LOCALIZE_DIR).join(hostname(authority)), &cleaned)
}

/// The localized path of a remote root: `localized-files/<host>/<repository path without .git>/
/// <ref>/<folder in the repository>`, the folder taken from the checkout (symlinks resolved).
pub fn localized_root_path(spec: &RepoSpec, repository: &Path, root: &Path) -> Result<PathBuf, String> {
    let host = host_folder(spec)?;
    let in_repo = root.strip_prefix(repository).map_err(|_| format!("{} is not inside {}", root.display(), repository.display()))?;
    let repo_path = spec.repo_path.strip_suffix(".git").unwrap_or(&spec.repo_path);
    let base = join_relative(Path::new(LOCALIZE_DIR).join(host), &clean_path(&format!("/{repo_path}")));
    let with_ref = join_relative(base, &clean_path(&spec.git_ref));
    Ok(with_ref.join(in_repo))
}

/// The folder under [`LOCALIZE_DIR`] for a repository's host: `gh` for the `gh:` shorthand,
/// [`FILE_SCHEME_DIR`] for `file://`, else the host name alone.
fn host_folder(spec: &RepoSpec) -> Result<String, String> {
    let scheme = spec.host.split_once("://").map_or(spec.host.as_str(), |(scheme, _)| scheme);
    let authority = match scheme {
        "gh:" => return Ok("gh".into()),
        "file" => return Ok(FILE_SCHEME_DIR.into()),
        "https" | "http" | "ssh" => spec.host.split_once("://").map_or("", |(_, rest)| rest),
        // scp-like `user@host:`
        _ => spec.host.as_str(),
    };
    let authority = authority.trim_end_matches('/').trim_end_matches(':');
    let authority = authority.split('/').next().unwrap_or("");
    let host = hostname(authority);
    if host.is_empty() {
        return Err(format!("unable to parse host of remote root {:?}", spec.raw));
    }
    Ok(host)
}

/// Go's `URL.Hostname()` of an authority: no user, no port, no IPv6 brackets.
fn hostname(authority: &str) -> String {
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, host)| host);
    if let Some(bracketed) = host_port.strip_prefix('[') {
        return bracketed.split(']').next().unwrap_or("").to_string();
    }
    host_port.split(':').next().unwrap_or("").to_string()
}

/// `base` joined with a cleaned path (`/a/b`, `a/b` or `.`), without its leading `/`.
fn join_relative(base: PathBuf, cleaned: &str) -> PathBuf {
    let relative = cleaned.trim_start_matches('/');
    if relative.is_empty() || relative == "." {
        base
    } else {
        base.join(relative)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(url: &str) -> String {
        localized_file_path(url).display().to_string()
    }

    #[test]
    fn http_files_go_under_their_host_and_cleaned_path() {
        assert_eq!(file("https://raw.githubusercontent.com/org/repo/ref/path/to/file.yaml"), "localized-files/raw.githubusercontent.com/org/repo/ref/path/to/file.yaml");
        assert_eq!(file("http://host/path"), "localized-files/host/path");
        assert_eq!(file("http://userinfo@host:1234/path/file?query"), "localized-files/host/path/file");
        assert_eq!(file("https://host"), "localized-files/host");
        assert_eq!(file("https://host//"), "localized-files/host");
        assert_eq!(file("https://host/file%2Eyaml"), "localized-files/host/file%2Eyaml");
        assert_eq!(file("https://host/path/blah/../to/foo/bar/../../file/./"), "localized-files/host/path/to/file");
        assert_eq!(file("https://host/foo/bar/baz/../../../../file"), "localized-files/host/file");
        assert_eq!(file("https://[2001:4860:4860::8888]/file.yaml"), "localized-files/2001:4860:4860::8888/file.yaml");
        assert_eq!(file("https://host/*"), "localized-files/host/*");
        assert_eq!(file("https://host/.../.file"), "localized-files/host/.../.file");
    }

    #[test]
    fn remote_roots_go_under_host_repository_ref_and_folder() {
        let cases = [
            ("ssh://git@github.com/org/repo//%s?ref=value", "github.com/org/repo/value"),
            ("git@github.com:org/repo//%s?ref=value", "github.com/org/repo/value"),
            ("https://gitlab.com/org/repo//%s?ref=value", "gitlab.com/org/repo/value"),
            ("file:///var/run/repo//%s?ref=value", "file-schemed/var/run/repo/value"),
            ("https://[2001:4860:4860::8888]/org/repo//%s?ref=value", "2001:4860:4860::8888/org/repo/value"),
            ("https://localhost.com:8080/org/repo//%s?ref=value", "localhost.com/org/repo/value"),
            ("https://github.com/repo//%s?ref=value", "github.com/repo/value"),
            ("https://github.com/org1/org2/repo.git//%s?ref=value", "github.com/org1/org2/repo/value"),
            ("https://github.com/./../org/../org/repo.git//%s?ref=value", "github.com/org/repo/value"),
            ("https://github.com/org/repo/%s?ref=value", "github.com/org/repo/value"),
            ("https://gitlab.com/org./repo..git//%s?ref=value", "gitlab.com/org./repo./value"),
            ("https://gitlab.com/org/repo//%s?ref=group/version/kind", "gitlab.com/org/repo/group/version/kind"),
        ];
        for (url, expected) in cases {
            let spec = RepoSpec::parse(&url.replace("%s", "path/to/root")).unwrap();
            let got = localized_root_path(&spec, Path::new("/tmp/repo"), Path::new("/tmp/repo/path/to/root")).unwrap();
            assert_eq!(got.display().to_string(), format!("localized-files/{expected}/path/to/root"), "{url}");
        }
    }

    #[test]
    fn default_destinations_are_named_after_target_and_ref() {
        let spec = RepoSpec::parse("https://github.com/org/repo?ref=value").unwrap();
        assert_eq!(default_dest_name(Path::new("/tmp/x"), Some((&spec, Path::new("/tmp/x")))), "localized-repo-value");
        let slashed = RepoSpec::parse("https://github.com/org/repo?ref=group/version").unwrap();
        assert_eq!(default_dest_name(Path::new("/tmp/x"), Some((&slashed, Path::new("/tmp/x")))), "localized-repo-group-version");
        assert_eq!(default_dest_name(Path::new("/tmp/x/sub"), Some((&spec, Path::new("/tmp/x")))), "localized-sub-value");
        assert_eq!(default_dest_name(Path::new("/a/target"), None), "localized-target");
        assert_eq!(default_dest_name(Path::new("/"), None), "localized");
        assert_eq!(url_base("github.com/org/repo//"), "repo");
    }
}
