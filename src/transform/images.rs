//! `images`: change image names, tags and digests in containers.
use std::sync::atomic::{AtomicBool, Ordering};

use regex::Regex;
use serde_json::Value;

use super::fieldspec::{CreateKind, FieldSpec, SpecPaths};
use super::steps::{Outcome, ResourceStep};
use crate::error::Result;
use crate::kustomization::types::Image;
use crate::resource::{ResMap, Resource};

/// Splits `[host[:port]/]path[:tag][@digest]` into name, tag and digest (kustomize's `image.Split`).
pub fn split_image(image: &str) -> (&str, &str, &str) {
    let slash = image.find('/').filter(|&i| i > 0).unwrap_or(0);
    let search = &image[slash..];
    let at = search.find('@').map(|i| i + slash);
    let colon = search.find(':').map(|i| i + slash);
    match (colon, at) {
        (None, None) => (image, "", ""),
        (c, Some(a)) if c.is_none_or(|c| a < c) => (&image[..a], "", &image[a + 1..]),
        (Some(c), Some(a)) => (&image[..c], &image[c + 1..a], &image[a + 1..]),
        (Some(c), None) => (&image[..c], &image[c + 1..], ""),
        (None, Some(_)) => unreachable!(),
    }
}

/// One compiled `images` entry.
struct ImageRule<'a> {
    rule: &'a Image,
    /// kustomize's `IsImageMatched`: the name is used as a regular expression, tag or digest optional.
    matcher: ImageMatcher,
}

/// kustomize's image pattern (v5.8.3, api v0.21.3): `^NAME(:TAG)?(@ALGORITHM:DIGEST)?$`, the
/// algorithm any OCI digest algorithm (`sha256`, `sha512`, `multihash+base58`). Image names are
/// nearly always plain text with dots (any character, to a regular expression), which is matched
/// directly: compiling a regular expression per `images` entry costs more than the whole match.
enum ImageMatcher {
    Dotted(Vec<char>),
    Regex(Regex),
    /// A name that is no valid regular expression (`nginx[`): kustomize v5.8.3 matches nothing
    /// with it (v5.8.1 panicked).
    Nothing,
}

/// What may follow the name: kustomize's `(:[a-zA-Z0-9_.{}-]*)?(@[a-zA-Z0-9]+([.+_-][a-zA-Z0-9]+)*:[a-zA-Z0-9_.{}-]*)?$`.
pub(crate) const TAG_AND_DIGEST: &str = "(:[a-zA-Z0-9_.{}-]*)?(@[a-zA-Z0-9]+([.+_-][a-zA-Z0-9]+)*:[a-zA-Z0-9_.{}-]*)?$";

impl ImageMatcher {
    fn new(name: &str) -> Self {
        if regex::escape(name) == name.replace('.', "\\.") {
            return ImageMatcher::Dotted(name.chars().collect());
        }
        Regex::new(&format!("^{name}{TAG_AND_DIGEST}")).map_or(ImageMatcher::Nothing, ImageMatcher::Regex)
    }

    /// Whether the name compiled (kustomize's `IsImageMatched` returns false for every image
    /// otherwise).
    fn is_valid(&self) -> bool {
        !matches!(self, ImageMatcher::Nothing)
    }
}

/// Whether an `images` entry's name is a valid regular expression (one that is not matches no
/// image).
pub fn is_valid_name(name: &str) -> bool {
    ImageMatcher::new(name).is_valid()
}

impl ImageMatcher {
    fn is_match(&self, image: &str) -> bool {
        let name = match self {
            ImageMatcher::Regex(re) => return re.is_match(image),
            ImageMatcher::Nothing => return false,
            ImageMatcher::Dotted(name) => name,
        };
        let mut chars = image.chars();
        for &want in name {
            match chars.next() {
                Some(c) if c == want || (want == '.' && c != '\n') => {}
                _ => return false,
            }
        }
        let is_tag_char = |c: char| c.is_ascii_alphanumeric() || "_.{}-".contains(c);
        let mut rest = chars.as_str();
        if let Some(tagged) = rest.strip_prefix(':') {
            rest = tagged.trim_start_matches(is_tag_char);
        }
        if let Some(digest) = rest.strip_prefix('@').and_then(strip_algorithm) {
            rest = digest.trim_start_matches(is_tag_char);
        }
        rest.is_empty()
    }
}

/// `ALGORITHM:` at the start of `text` (OCI: `[a-zA-Z0-9]+([.+_-][a-zA-Z0-9]+)*`), and what
/// follows the colon.
fn strip_algorithm(text: &str) -> Option<&str> {
    let (algorithm, rest) = text.split_once(':')?;
    let component_ok = |c: &str| !c.is_empty() && c.bytes().all(|b| b.is_ascii_alphanumeric());
    algorithm.split(['.', '+', '_', '-']).all(component_ok).then_some(rest)
}

impl ImageRule<'_> {
    fn rewrite(&self, image: &str) -> Option<String> {
        if !self.matcher.is_match(image) {
            return None;
        }
        let (name, tag, digest) = split_image(image);
        let rule = self.rule;
        let mut name = if rule.new_name.is_empty() { name.to_string() } else { rule.new_name.clone() };
        // A new tag or digest replaces both the old tag and digest; a tag suffix only applies
        // when neither is given, and drops the digest.
        let (tag, digest) = match (rule.new_tag.as_str(), rule.digest.as_str()) {
            ("", "") if !rule.tag_suffix.is_empty() => (format!("{tag}{}", rule.tag_suffix), String::new()),
            ("", "") => (tag.to_string(), digest.to_string()),
            (t, "") => (t.to_string(), String::new()),
            ("", d) => (String::new(), d.to_string()),
            (t, d) => (t.to_string(), d.to_string()),
        };
        if !tag.is_empty() {
            name = format!("{name}:{tag}");
        }
        if !digest.is_empty() {
            name = format!("{name}@{digest}");
        }
        Some(name)
    }
}

/// Applies every `images` entry; returns, per entry, whether it changed any image.
pub fn set_images(resources: &mut ResMap, images: &[Image], specs: &[FieldSpec]) -> Result<Vec<bool>> {
    let step = ImageRewrites::new(images, specs);
    resources.try_update_parallel(|r| step.rewrite(r))?;
    Ok(step.matched())
}

/// Every `images` entry applied to one resource, and which entries changed an image so far.
pub struct ImageRewrites<'a> {
    rules: Vec<ImageRule<'a>>,
    matched: Vec<AtomicBool>,
    paths: SpecPaths<'a>,
    /// The last field of each path an image is written at: a shared label or annotation node
    /// (`resource::nodes`) under another key is never written, and needs no write through.
    last_fields: Vec<String>,
}

impl<'a> ImageRewrites<'a> {
    pub fn new(images: &'a [Image], specs: &'a [FieldSpec]) -> Self {
        let rules: Vec<ImageRule> = images.iter().map(|rule| ImageRule { rule, matcher: ImageMatcher::new(&rule.name) }).collect();
        let matched = rules.iter().map(|_| AtomicBool::new(false)).collect();
        let last_fields = specs.iter().filter_map(FieldSpec::last_field).collect();
        ImageRewrites { rules, matched, paths: SpecPaths::new(specs), last_fields }
    }

    /// Per entry, whether it changed an image of the resources it was applied to.
    pub fn matched(&self) -> Vec<bool> {
        self.matched.iter().map(|m| m.load(Ordering::Relaxed)).collect()
    }

    /// Applies every entry to `r`; says whether an image changed.
    fn rewrite(&self, r: &mut Resource) -> Result<bool> {
        let writes_shared = !r.nodes.is_empty() && r.nodes.shares_a_key(|key| key == "image" || self.last_fields.iter().any(|f| f == key));
        match writes_shared {
            true => r.write(|value| set_images_in(value, &self.rules, &self.matched, &self.paths)),
            false => set_images_in(&mut r.value, &self.rules, &self.matched, &self.paths),
        }
    }
}

impl ResourceStep for ImageRewrites<'_> {
    fn apply(&self, _at: usize, r: &mut Resource) -> Result<Outcome> {
        self.rewrite(r).map(|_| Outcome::Kept)
    }
}

/// Every rule applied to one resource's value; says whether an image changed.
fn set_images_in(value: &mut Value, rules: &[ImageRule<'_>], matched: &[AtomicBool], paths: &SpecPaths<'_>) -> Result<bool> {
    let mut wrote = false;
    // Every rule visits the same nodes (rules only rewrite strings), so a resource without
    // container lists is walked for them once, and once no image left could match a later
    // rule, the later rules would change nothing and are not run.
    let mut has_containers = true;
    for (i, rule) in rules.iter().enumerate() {
        let later = &rules[i + 1..];
        let mut later_may_match = false;
        let mut update = |node: &mut Value| {
            if let Some(new) = node.as_str().and_then(|s| rule.rewrite(s)) {
                matched[i].store(true, Ordering::Relaxed);
                *node = Value::String(new);
                wrote = true;
            }
            later_may_match |= node.as_str().is_some_and(|s| later.iter().any(|r| r.matcher.is_match(s)));
            Ok(())
        };
        if has_containers {
            has_containers = update_containers_anywhere(value, &mut update)?;
        }
        let altered = paths.apply(value, CreateKind::Nothing, &mut update)?;
        wrote |= altered;
        if !later_may_match {
            break;
        }
    }
    Ok(wrote)
}

/// kustomize's legacy image filter: every `containers`/`initContainers` list at any depth. Says
/// whether there was one.
fn update_containers_anywhere(node: &mut Value, update: &mut dyn FnMut(&mut Value) -> Result<()>) -> Result<bool> {
    let mut found = false;
    match node {
        Value::Array(items) => {
            for item in items {
                found |= update_containers_anywhere(item, update)?;
            }
        }
        Value::Object(map) => {
            for (key, value) in map.iter_mut() {
                if !(value.is_object() || value.is_array()) {
                    continue;
                }
                found |= update_containers_anywhere(value, update)?;
                if key == "containers" || key == "initContainers" {
                    if let Value::Array(containers) = value {
                        found = true;
                        for image in containers.iter_mut().filter_map(|c| c.get_mut("image")) {
                            update(image)?;
                        }
                    }
                }
            }
        }
        _ => {}
    }
    Ok(found)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_keeps_a_registry_port_in_the_name() {
        assert_eq!(split_image("192.168.122.1:5000/cloud-api-adaptor"), ("192.168.122.1:5000/cloud-api-adaptor", "", ""));
        assert_eq!(split_image("192.168.122.1:5000/caa:v1"), ("192.168.122.1:5000/caa", "v1", ""));
        assert_eq!(split_image("nginx@sha256:abc"), ("nginx", "", "sha256:abc"));
        assert_eq!(split_image("nginx:1.2@sha256:abc"), ("nginx", "1.2", "sha256:abc"));
        assert_eq!(split_image("nginx"), ("nginx", "", ""));
    }

    fn rule(name: &str, new_name: &str, new_tag: &str, digest: &str) -> Image {
        Image { name: name.into(), new_name: new_name.into(), new_tag: new_tag.into(), digest: digest.into(), ..Default::default() }
    }

    fn rewrite(r: &Image, image: &str) -> Option<String> {
        ImageRule { rule: r, matcher: ImageMatcher::new(&r.name) }.rewrite(image)
    }

    #[test]
    fn new_tag_replaces_tag_and_digest() {
        assert_eq!(rewrite(&rule("nginx", "", "1.25", ""), "nginx@sha256:abc").as_deref(), Some("nginx:1.25"));
        assert_eq!(rewrite(&rule("nginx", "my/nginx", "", ""), "nginx:1.0").as_deref(), Some("my/nginx:1.0"));
        assert_eq!(rewrite(&rule("nginx", "", "", "sha256:d"), "nginx:1.0").as_deref(), Some("nginx@sha256:d"));
        assert_eq!(rewrite(&rule("nginx", "", "", ""), "nginx-other:1.0"), None);
        assert_eq!(rewrite(&rule("httpd", "", "2.6", ""), "httpd:2.4@sha256:aa").as_deref(), Some("httpd:2.6"));
        assert_eq!(rewrite(&rule("jq", "m/jq", "", ""), "jq:1.7@sha256:aa").as_deref(), Some("m/jq:1.7@sha256:aa"));
    }

    #[test]
    fn a_tag_suffix_applies_only_without_a_new_tag_or_digest_and_drops_the_digest() {
        let suffixed = |new_tag: &str| Image { tag_suffix: "-x".into(), ..rule("a", "", new_tag, "") };
        assert_eq!(rewrite(&suffixed(""), "a:1@sha256:d").as_deref(), Some("a:1-x"));
        assert_eq!(rewrite(&suffixed("2"), "a:1").as_deref(), Some("a:2"));
    }

    #[test]
    fn plain_names_match_as_the_regular_expression_would() {
        let names = ["nginx", "registry.example.com/a/b", "a.b", "x:5000/y", "ngin.", "n*", "a|b"];
        let images = ["nginx", "nginx:1", "nginx@sha256", "nginx@sha256:1.2_x-{}", "nginx:1@sha256:ab", "nginx-x", "nginx:a/b",
            "registry.example.com/a/b:1.0", "registryXexample.com/a/b", "a\nb", "aXb:", "x:5000/y", "ngin\n", "nnn", "b",
            "nginx:1.2@sha256:", "nginx@sha256:ab:1", "nginx@sha512:ab", "nginx:1@sha256:a/b", "nginx@multihash+base58:Qm",
            "nginx@sha256+:ab", "nginx@+sha256:ab", "nginx@sha..256:ab", "nginx@:ab", "nginx@sha_2-5.6:ab", "nginx:1@SHA512:x"];
        for name in names {
            let re = Regex::new(&format!("^{name}{TAG_AND_DIGEST}")).unwrap();
            let ours = ImageMatcher::new(name);
            for image in images {
                assert_eq!(ours.is_match(image), re.is_match(image), "{name} ~ {image}");
            }
        }
    }

    #[test]
    fn a_name_that_is_no_regular_expression_matches_nothing() {
        for name in ["nginx[", "a(b", "a)"] {
            assert!(!is_valid_name(name), "{name}");
            assert_eq!(rewrite(&rule(name, "", "2", ""), name), None);
        }
        // `^*x` compiles in Go as in Rust (kustomize v5.8.3 matches `x` with it).
        assert!(is_valid_name("n.*x") && is_valid_name("registry.example.com/a") && is_valid_name("*x"));
    }
}
