//! Patch and replacement targets: kustomize's `Selector` (anchored regular expressions for
//! group, version, kind, name and namespace; label and annotation selectors).
use regex::Regex;
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::kustomization::types::Selector;
use super::fieldspec::split_api_version;
use crate::resource::{ResId, Resource};

/// A compiled selector.
pub struct CompiledSelector {
    group: Option<Pattern>,
    version: Option<Pattern>,
    kind: Option<Pattern>,
    name: Option<Pattern>,
    namespace: Option<Pattern>,
    labels: Vec<Requirement>,
    annotations: Vec<Requirement>,
}

/// An anchored selector pattern. Most patterns are plain names and kinds; those are compared
/// as text, which spares compiling a regular expression per patch entry.
enum Pattern {
    Literal(String),
    Regex(Regex),
}

impl Pattern {
    fn is_match(&self, text: &str) -> bool {
        match self {
            Pattern::Literal(literal) => literal == text,
            Pattern::Regex(re) => re.is_match(text),
        }
    }
}

fn anchored(pattern: &str) -> Result<Option<Pattern>> {
    if pattern.is_empty() {
        return Ok(None);
    }
    if regex::escape(pattern) == pattern {
        return Ok(Some(Pattern::Literal(pattern.to_string())));
    }
    Regex::new(&format!("^(?:{})$", go_regexp_syntax(pattern)))
        .map(|re| Some(Pattern::Regex(re)))
        .map_err(|e| Error::msg(format!("invalid regular expression '{pattern}' in target: {e}")))
}

/// A Go (RE2) regular expression in the syntax of the `regex` crate. The two agree but for `{`:
/// Go takes a `{` that opens no repetition (`{2}`, `{2,}`, `{2,5}`) as a literal character
/// (`cluster-${NAME}`), the crate refuses it; such a `{` is escaped.
pub fn go_regexp_syntax(pattern: &str) -> std::borrow::Cow<'_, str> {
    if !pattern.contains('{') {
        return pattern.into();
    }
    let bytes = pattern.as_bytes();
    let mut out = String::with_capacity(pattern.len() + 4);
    let (mut escaped, mut in_class) = (false, false);
    for (i, c) in pattern.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' => escaped = true,
            '[' => in_class = true,
            ']' => in_class = false,
            '{' if !in_class && !opens_repetition(&bytes[i + 1..]) => {
                out.push_str("\\{");
                continue;
            }
            _ => {}
        }
        out.push(c);
    }
    out.into()
}

/// Whether `rest` (after a `{`) is `n}`, `n,}` or `n,m}`.
fn opens_repetition(rest: &[u8]) -> bool {
    let digits = |s: &[u8]| s.iter().take_while(|b| b.is_ascii_digit()).count();
    let n = digits(rest);
    if n == 0 {
        return false;
    }
    match rest.get(n) {
        Some(b'}') => true,
        Some(b',') => {
            let m = digits(&rest[n + 1..]);
            rest.get(n + 1 + m) == Some(&b'}')
        }
        _ => false,
    }
}

impl CompiledSelector {
    pub fn new(s: &Selector) -> Result<Self> {
        Ok(CompiledSelector {
            group: anchored(&s.group)?,
            version: anchored(&s.version)?,
            kind: anchored(&s.kind)?,
            name: anchored(&s.name)?,
            namespace: anchored(&s.namespace)?,
            labels: parse_selector(&s.label_selector)?,
            annotations: parse_selector(&s.annotation_selector)?,
        })
    }

    /// The name every selected resource has or had, when the selector names one plainly.
    pub fn literal_name(&self) -> Option<&str> {
        match &self.name {
            Some(Pattern::Literal(name)) => Some(name),
            _ => None,
        }
    }

    /// Whether `id` matches the group, version, kind, name and namespace patterns, the namespace
    /// as the id holds it (empty for none): how kustomize v5.8 matches replacement targets
    /// (`TargetSelectorRegex`); labels and annotations are left to [`CompiledSelector::matches`].
    pub fn matches_id(&self, id: &ResId) -> bool {
        let ok = |re: &Option<Pattern>, text: &str| re.as_ref().is_none_or(|re| re.is_match(text));
        ok(&self.group, &id.gvk.group)
            && ok(&self.version, &id.gvk.version)
            && ok(&self.kind, &id.gvk.kind)
            && ok(&self.name, &id.name)
            && ok(&self.namespace, &id.namespace)
    }

    /// Whether `r` is selected: name and namespace may match the original or the current id.
    pub fn matches(&self, r: &Resource) -> bool {
        let api_version = r.api_version();
        let (group, version) = split_api_version(api_version);
        let kind = r.kind();
        let ok = |re: &Option<Pattern>, a: &str, b: &str| re.as_ref().is_none_or(|re| re.is_match(a) || re.is_match(b));
        let original = r.previous_ids.first();
        ok(&self.kind, kind, kind)
            && ok(&self.group, group, group)
            && ok(&self.version, version, version)
            && ok(&self.name, original.map_or(r.name(), |id| &id.name), r.name())
            && self.namespace.as_ref().is_none_or(|re| {
                let current = crate::resource::effective_namespace(api_version, kind, r.namespace());
                re.is_match(original.map_or(current, ResId::effective_namespace)) || re.is_match(current)
            })
            && self.labels.iter().all(|q| q.matches(r.labels()))
            && self.annotations.iter().all(|q| q.matches(r.annotations()))
    }
}

/// One term of a Kubernetes label selector.
#[derive(Debug, PartialEq)]
enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    NotExists(String),
}

impl Requirement {
    fn matches(&self, map: Option<&Map<String, Value>>) -> bool {
        // Label values are compared as text (`1` matches "1").
        let get = |k: &str| map.and_then(|m| m.get(k)).and_then(crate::kustomization::types::scalar_text);
        match self {
            Requirement::Equals(k, v) => get(k).as_ref() == Some(v),
            Requirement::NotEquals(k, v) => get(k).as_ref() != Some(v),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.contains(&x)),
            Requirement::NotIn(k, vs) => get(k).is_none_or(|x| !vs.contains(&x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::NotExists(k) => get(k).is_none(),
        }
    }
}

/// Parses `a=b,c!=d,e in (x,y),f notin (z),g,!h`.
fn parse_selector(text: &str) -> Result<Vec<Requirement>> {
    let mut terms = Vec::new();
    let mut rest = text.trim();
    while !rest.is_empty() {
        // A term ends at a comma outside parentheses.
        let mut depth = 0;
        let end = rest
            .char_indices()
            .find(|&(_, c)| {
                match c {
                    '(' => depth += 1,
                    ')' => depth -= 1,
                    _ => {}
                }
                c == ',' && depth == 0
            })
            .map(|(i, _)| i)
            .unwrap_or(rest.len());
        terms.push(parse_term(rest[..end].trim(), text)?);
        rest = rest[end..].trim_start_matches(',').trim();
    }
    Ok(terms)
}

fn parse_term(term: &str, whole: &str) -> Result<Requirement> {
    let bad = || Error::msg(format!("unable to parse requirement '{term}' in selector '{whole}'"));
    let set = |s: &str| -> Result<Vec<String>> {
        let inner = s.trim().strip_prefix('(').and_then(|s| s.strip_suffix(')')).ok_or_else(bad)?;
        Ok(inner.split(',').map(|v| v.trim().to_string()).filter(|v| !v.is_empty()).collect())
    };
    if let Some(key) = term.strip_prefix('!') {
        return Ok(Requirement::NotExists(key.trim().to_string()));
    }
    if let Some((k, v)) = term.split_once("!=") {
        return Ok(Requirement::NotEquals(k.trim().into(), v.trim().into()));
    }
    if let Some((k, v)) = term.split_once("==").or_else(|| term.split_once('=')) {
        return Ok(Requirement::Equals(k.trim().into(), v.trim().into()));
    }
    if let Some((k, v)) = term.split_once(" notin ") {
        return Ok(Requirement::NotIn(k.trim().into(), set(v)?));
    }
    if let Some((k, v)) = term.split_once(" in ") {
        return Ok(Requirement::In(k.trim().into(), set(v)?));
    }
    if term.contains(char::is_whitespace) || term.is_empty() {
        return Err(bad());
    }
    Ok(Requirement::Exists(term.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn labels(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn a_brace_that_opens_no_repetition_is_a_literal_as_in_go() {
        assert_eq!(go_regexp_syntax("cluster-${NAME}-{a}"), "cluster-$\\{NAME}-\\{a}");
        assert_eq!(go_regexp_syntax("a{2}b{1,}c{1,3}"), "a{2}b{1,}c{1,3}");
        assert_eq!(go_regexp_syntax("x{,3}[{]\\{"), "x\\{,3}[{]\\{");
        let m = |p: &str, s: &str| matches!(anchored(p).unwrap(), Some(pattern) if pattern.is_match(s));
        assert!(m("web-{a}", "web-{a}") && m("web-{x", "web-{x") && m("ab{2}", "abb"));
        assert!(!m("web-${A}", "web-${A}"), "`$` anchors, as in Go");
    }

    #[test]
    fn label_selector_terms_follow_kubernetes_syntax() {
        let reqs = parse_selector("app=web, tier in (a, b),!legacy,env!=prod").unwrap();
        let m = labels(json!({"app": "web", "tier": "b", "env": "dev"}));
        assert!(reqs.iter().all(|r| r.matches(Some(&m))));
        let m2 = labels(json!({"app": "web", "tier": "c"}));
        assert!(!reqs.iter().all(|r| r.matches(Some(&m2))));
    }

    #[test]
    fn name_patterns_are_anchored() {
        let s = CompiledSelector::new(&Selector { name: "app".into(), ..Default::default() }).unwrap();
        let r = Resource::new(json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "my-app"}}));
        assert!(!s.matches(&r));
        let s = CompiledSelector::new(&Selector { name: ".*app".into(), ..Default::default() }).unwrap();
        assert!(s.matches(&r));
    }

    fn deployment() -> Resource {
        Resource::new(json!({
            "apiVersion": "apps/v1", "kind": "Deployment",
            "metadata": {"name": "web", "namespace": "shop", "annotations": {"team": "a"}}
        }))
    }

    fn selects(selector: Selector) -> bool {
        CompiledSelector::new(&selector).unwrap().matches(&deployment())
    }

    #[test]
    fn group_version_and_kind_are_anchored_patterns() {
        assert!(selects(Selector { group: "apps".into(), version: "v1".into(), kind: "Deployment".into(), ..Default::default() }));
        assert!(selects(Selector { group: "app.*".into(), kind: "Deploy.*".into(), ..Default::default() }));
        assert!(!selects(Selector { group: "app".into(), ..Default::default() }));
        assert!(!selects(Selector { version: "v1beta1".into(), ..Default::default() }));
        assert!(!selects(Selector { kind: "StatefulSet|DaemonSet".into(), ..Default::default() }));
    }

    #[test]
    fn namespace_matches_the_original_or_the_current_one() {
        // As the namespace transformer moves it: the id stored first.
        let mut r = deployment();
        r.store_previous_id();
        r.set_namespace("prod");
        let by = |ns: &str| CompiledSelector::new(&Selector { namespace: ns.into(), ..Default::default() }).unwrap().matches(&r);
        assert!(by("shop"), "the original namespace still selects");
        assert!(by("prod"), "the current namespace selects");
        assert!(!by("other"));
    }

    #[test]
    fn empty_namespace_is_selected_as_default() {
        let r = Resource::new(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}));
        assert!(CompiledSelector::new(&Selector { namespace: "default".into(), ..Default::default() }).unwrap().matches(&r));
    }

    #[test]
    fn annotation_selector_uses_selector_syntax() {
        assert!(selects(Selector { annotation_selector: "team=a".into(), ..Default::default() }));
        assert!(selects(Selector { annotation_selector: "team in (a,b)".into(), ..Default::default() }));
        assert!(!selects(Selector { annotation_selector: "team!=a".into(), ..Default::default() }));
        assert!(!selects(Selector { annotation_selector: "owner".into(), ..Default::default() }));
    }
}
