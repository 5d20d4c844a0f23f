//! One file over HTTP(S) (a `resources` entry such as `https://host/app/pod.yaml`, or any other
//! file a kustomization names by URL), with a timeout and a size limit. Proxies come from
//! `HTTPS_PROXY`/`HTTP_PROXY`/`NO_PROXY`; certificates are checked against the system's trust store;
//! redirects are followed within [`super::redirects`]' limits.
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// How long one download may take.
const TIMEOUT: Duration = Duration::from_secs(60);
/// The largest file accepted: far above any manifest, small enough to never exhaust memory.
pub const SIZE_LIMIT: u64 = 32 * 1024 * 1024;

/// Why a download failed.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    /// The server answered with a status outside 200..=299 (kustomize's wording).
    #[error("HTTP Error: status code {code} ({reason})")]
    Status { code: u16, reason: String },
    #[error("larger than {SIZE_LIMIT} bytes")]
    TooLarge,
    #[error("{0}")]
    Transport(String),
}

/// Downloads `url`, returning its text. The request is for the URL as kustomize v5.8 writes it
/// ([`super::go_url::request_url`]).
pub fn get(url: &str) -> Result<String, HttpError> {
    String::from_utf8(get_bytes(url)?).map_err(|_| HttpError::Transport("the file is not valid UTF-8".into()))
}

/// A file kustomize's loader reads from `url` (its `Load`, for every field that names a file),
/// with the loader's words for a failure: Go's `Get "URL": ...` for a request that got no
/// answer, `HTTP Error: status code 404 (Not Found)` for a refusal, and `URL is a git repository`
/// when the refused URL is also a git URL.
pub fn get_file(url: &str) -> Result<Vec<u8>, String> {
    let request = super::go_url::request_url(url)?;
    get_bytes(url).map_err(|e| match e {
        HttpError::Status { .. } if super::RepoSpec::parse(url).is_ok() => "URL is a git repository".to_string(),
        HttpError::Status { .. } => e.to_string(),
        HttpError::TooLarge | HttpError::Transport(_) => format!("Get {}: {e}", crate::yaml::go_syntax::quote(&request)),
    })
}

/// The bytes of downloaded files this process keeps at most.
const KEPT_BYTES: usize = 64 * 1024 * 1024;

/// Files downloaded by this process, by URL, and their bytes in all: the roots of one run
/// (`build DIR DIR...`, a component every app uses) that name one URL download it once, those
/// built side by side too (the second waits for the first's download). Failures are not kept.
#[derive(Default)]
struct Downloaded {
    files: HashMap<String, Arc<Mutex<Option<Vec<u8>>>>>,
    bytes: usize,
}

static DOWNLOADED: Mutex<Option<Downloaded>> = Mutex::new(None);

/// Downloads `url` once per process, returning its bytes.
fn get_bytes(url: &str) -> Result<Vec<u8>, HttpError> {
    let downloaded = || DOWNLOADED.lock().unwrap_or_else(|e| e.into_inner());
    let slot = downloaded().get_or_insert_with(Downloaded::default).files.entry(url.to_string()).or_default().clone();
    let mut file = slot.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(bytes) = file.as_ref() {
        return Ok(bytes.clone());
    }
    let bytes = download(url)?;
    let mut guard = downloaded();
    let kept = guard.get_or_insert_with(Downloaded::default);
    if kept.bytes + bytes.len() <= KEPT_BYTES {
        kept.bytes += bytes.len();
        *file = Some(bytes.clone());
    }
    Ok(bytes)
}

/// Downloads `url`, returning its bytes.
fn download(url: &str) -> Result<Vec<u8>, HttpError> {
    let url = super::go_url::request_url(url).map_err(HttpError::Transport)?;
    let url = url.as_str();
    let tls = ureq::tls::TlsConfig::builder().root_certs(ureq::tls::RootCerts::PlatformVerifier).build();
    // Redirects are followed as Go follows them (up to ten), within `redirects`' two limits:
    // an https download stays on https, and only a written inward host leads inward.
    let https = url.get(..8).is_some_and(|scheme| scheme.eq_ignore_ascii_case("https://"));
    let config = ureq::Agent::config_builder()
        .timeout_global(Some(TIMEOUT))
        .http_status_as_error(false)
        .https_only(https)
        // Go stops at the tenth redirect: nine are followed.
        .max_redirects(9)
        .tls_config(tls)
        .build();
    let agent = ureq::Agent::with_parts(config, ureq::unversioned::transport::DefaultConnector::default(), super::redirects::RedirectGuard::new(url));
    let mut response = agent.get(url).call().map_err(|e| match e {
        ureq::Error::Timeout(_) => HttpError::Transport(format!("timed out after {TIMEOUT:?}")),
        ureq::Error::RequireHttpsOnly(to) => HttpError::Transport(format!("refused: a redirect from https to plain http ({to})")),
        ureq::Error::Other(refusal) => HttpError::Transport(refusal.to_string()),
        // Go's client's words.
        ureq::Error::TooManyRedirects => HttpError::Transport("stopped after 10 redirects".into()),
        other => HttpError::Transport(other.to_string()),
    })?;
    let status = response.status();
    if !status.is_success() {
        let reason = status.canonical_reason().unwrap_or("").to_string();
        return Err(HttpError::Status { code: status.as_u16(), reason });
    }
    response.body_mut().with_config().limit(SIZE_LIMIT).read_to_vec().map_err(|e| match e {
        ureq::Error::BodyExceedsLimit(_) => HttpError::TooLarge,
        other => HttpError::Transport(other.to_string()),
    })
}
