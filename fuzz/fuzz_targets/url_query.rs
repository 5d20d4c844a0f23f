//! Remote base URLs and their queries (`?ref=`, `?version=`, `?timeout=`, `?submodules=`):
//! parsed without a panic; a timeout is never past Go's largest duration, and a ref that
//! git could read as an option is refused before git runs. An HTTP file's URL as kustomize
//! requests it (Go's rules) is the same URL when read again.
#![no_main]
use libfuzzer_sys::fuzz_target;
use peerpods_build::remote::go_url;
use peerpods_build::remote::url::{parse_go_duration, parse_query, RepoSpec, MAX_TIMEOUT};

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = go_url::parses(text);
    if let Ok(request) = go_url::request_url(text) {
        assert_eq!(go_url::request_url(&request).as_deref(), Ok(request.as_str()), "{text:?}");
    }
    let (_, timeout, _) = parse_query(text);
    if let Ok(timeout) = timeout {
        assert!(timeout <= MAX_TIMEOUT);
    }
    if let Some(Ok(duration)) = parse_go_duration(text) {
        assert!(duration <= MAX_TIMEOUT);
    }
    if let Ok(spec) = RepoSpec::parse(text) {
        assert!(spec.timeout <= MAX_TIMEOUT);
        let _ = (spec.clone_spec(), spec.kust_root(), spec.origin_path());
        let git_ref = if spec.git_ref.is_empty() { "HEAD" } else { spec.git_ref.as_str() };
        assert_eq!(peerpods_build::remote::git::check_ref("u", git_ref).is_err(), git_ref.starts_with('-'));
    }
});
