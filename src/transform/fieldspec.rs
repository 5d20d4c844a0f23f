//! Field specs: the data that says which kinds and which paths a transformer touches,
//! and the walker that visits those paths (kyaml's fieldspec filter).
use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::fast_hash::{field, field_mut, get};
use super::path::{field_spec_part, split_field_spec_path};
use crate::resource::{Gvk, NodePath, Step};

/// One "kind + path" rule, as written in kustomize's tables and `configurations` files.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FieldSpec {
    /// Which resources the rule applies to; empty parts match anything.
    pub gvk: Gvk,
    /// Slash-separated path (`spec/template/metadata/labels`); `\/` escapes a slash.
    pub path: String,
    /// Whether a missing field is created.
    pub create: bool,
}

impl FieldSpec {
    /// Reads `{group, version, kind, path, create}`.
    pub fn from_value(v: &Value) -> Result<Self> {
        let obj = v.as_object().ok_or_else(|| Error::msg(format!("a field spec must be a mapping, got {v}")))?;
        // A spec has a handful of keys: found by comparing them, not by hashing each name.
        let field = |k: &str| crate::fast_hash::field(obj, k);
        let s = |k: &str| field(k).and_then(Value::as_str).unwrap_or("").to_string();
        Ok(FieldSpec {
            gvk: Gvk { group: s("group"), version: s("version"), kind: s("kind") },
            path: s("path"),
            create: field("create").and_then(Value::as_bool).unwrap_or(false),
        })
    }

    pub fn list_from_value(v: Option<&Value>) -> Result<Vec<Self>> {
        match v {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::Array(items)) => items.iter().map(FieldSpec::from_value).collect(),
            Some(other) => Err(Error::msg(format!("field specs must be a list, got {other}"))),
        }
    }

    /// kyaml's `isMatchGVK`: kind, group and version compared only when the spec sets them.
    pub fn applies_to(&self, api_version: &str, kind: &str) -> bool {
        let (group, version) = split_api_version(api_version);
        self.applies_to_parts(group, version, kind)
    }

    /// [`Self::applies_to`] with the apiVersion already split.
    fn applies_to_parts(&self, group: &str, version: &str, kind: &str) -> bool {
        (self.gvk.kind.is_empty() || self.gvk.kind == kind)
            && (self.gvk.group.is_empty() || self.gvk.group == group)
            && (self.gvk.version.is_empty() || self.gvk.version == version)
    }

    /// The path split on unescaped slashes.
    pub fn path_parts(&self) -> Vec<String> {
        split_field_spec_path(&self.path)
    }

    /// The field a walk along the path ends at (its last part, without `[]`): what the spec
    /// writes sits under that key.
    pub fn last_field(&self) -> Option<String> {
        last_field_of(&self.path_parts())
    }
}

/// [`FieldSpec::last_field`] of a path already split ([`FieldSpec::path_parts`]).
pub fn last_field_of(parts: &[String]) -> Option<String> {
    parts.last().map(|last| field_spec_part(last).0.to_string())
}

/// `apps/v1` -> (`apps`, `v1`); `v1` -> (``, `v1`).
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.rsplit_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    }
}

/// What to create at the end of a path that is missing, when the spec says `create: true`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CreateKind {
    /// Never create (the spec's `create` is ignored).
    Nothing,
    /// A scalar field (names, namespaces, images...).
    Scalar,
    /// A mapping (labels, annotations, selectors).
    Mapping,
}

/// Visits every node at `parts` below `node`, calling `visit` on each (kyaml's fieldspec filter):
/// sequences met on the way are walked element by element; a missing field stops the walk unless
/// `create` asks for it.
pub fn walk<S: AsRef<str>>(
    node: &mut Value,
    parts: &[S],
    create: bool,
    create_kind: CreateKind,
    visit: &mut dyn FnMut(&mut Value) -> Result<()>,
) -> Result<()> {
    walk_at(node, parts, create, create_kind, None, &mut false, &mut |node, _| visit(node))
}

/// One step of the path [`walk_at`] reports, borrowed from the field spec's path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepRef<'p> {
    Key(&'p str),
    Index(usize),
}

/// The owned form of a reported path, as the resource model keeps it.
pub fn owned_path(steps: &[StepRef]) -> NodePath {
    steps
        .iter()
        .map(|s| match s {
            StepRef::Key(k) => Step::Key((*k).to_string()),
            StepRef::Index(i) => Step::Index(*i),
        })
        .collect()
}

/// [`walk`], telling `visit` where each node is when `at` is given, and setting `altered` when
/// the walk itself adds a field or gives a null the kind the path says.
pub fn walk_at<'p, S: AsRef<str>>(
    node: &mut Value,
    parts: &'p [S],
    create: bool,
    create_kind: CreateKind,
    mut at: Option<&mut Vec<StepRef<'p>>>,
    altered: &mut bool,
    visit: &mut dyn FnMut(&mut Value, &[StepRef<'p>]) -> Result<()>,
) -> Result<()> {
    let Some((first, rest)) = parts.split_first() else {
        return visit(node, at.as_deref().map_or(&[], |a| a.as_slice()));
    };
    match node {
        Value::Null => Ok(()),
        Value::Array(items) => {
            for (i, item) in items.iter_mut().enumerate() {
                if let Some(a) = at.as_deref_mut() {
                    a.push(StepRef::Index(i));
                }
                let result = walk_at(item, parts, create, create_kind, at.as_deref_mut(), altered, visit);
                if let Some(a) = at.as_deref_mut() {
                    a.pop();
                }
                result?;
            }
            Ok(())
        }
        Value::Object(map) => {
            let first = first.as_ref();
            let (name, is_seq) = field_spec_part(first);
            if name.is_empty() {
                return Err(Error::msg("cannot set or create an empty field name"));
            }
            let creating = create && create_kind != CreateKind::Nothing && !is_seq;
            if creating && field(map, name).is_none() {
                let fresh = if rest.is_empty() && create_kind == CreateKind::Scalar {
                    Value::Null
                } else {
                    Value::Object(Map::new())
                };
                map.insert(name.to_string(), fresh);
                *altered = true;
            }
            let Some(child) = field_mut(map, name) else { return Ok(()) };
            // A field that exists but is null takes the kind the path says it has (kyaml does this
            // even when not creating, for `name[]` sequence hints).
            if child.is_null() {
                if is_seq {
                    *child = Value::Array(Vec::new());
                    *altered = true;
                } else if creating && !(rest.is_empty() && create_kind == CreateKind::Scalar) {
                    *child = Value::Object(Map::new());
                    *altered = true;
                }
            }
            if let Some(a) = at.as_deref_mut() {
                a.push(StepRef::Key(name));
            }
            // (kyaml adds `fieldName: ...` only to errors of the lookup itself, which cannot fail here)
            let result = walk_at(child, rest, create, create_kind, at.as_deref_mut(), altered, visit);
            if let Some(a) = at.as_deref_mut() {
                a.pop();
            }
            result
        }
        _ => Err(Error::msg("expected sequence or mapping node")),
    }
}

/// Field specs made ready for a pass over many resources: each path is split once for the pass,
/// not once per resource it visits.
pub struct SpecPaths<'s> {
    specs: &'s [FieldSpec],
    /// Every spec's path split as kyaml's `PathSplitter` splits it, one spec after another: the
    /// parts of spec `i` end at `ends[i]`.
    parts: Vec<Cow<'s, str>>,
    ends: Vec<usize>,
}

/// A walk along a field spec's path that failed: the spec, and why.
#[derive(Debug)]
pub struct SpecFailure<'s> {
    pub spec: &'s FieldSpec,
    pub error: Error,
}

impl From<SpecFailure<'_>> for Error {
    fn from(failure: SpecFailure<'_>) -> Error {
        failure.error
    }
}

/// The visit a walk calls at each node it reaches, with the node's path (an owned path is made
/// only when the visit asks for it).
pub type VisitAt<'v> = dyn FnMut(&mut Value, &dyn Fn() -> NodePath) -> Result<()> + 'v;

/// The visit a walk calls at each node it reaches, with the node's path borrowed from the specs.
pub type StepsVisit<'p, 'v> = dyn FnMut(&mut Value, &[StepRef<'p>]) -> Result<()> + 'v;

impl<'s> SpecPaths<'s> {
    pub fn new(specs: &'s [FieldSpec]) -> Self {
        let mut parts = Vec::with_capacity(specs.len() * 4);
        let mut ends = Vec::with_capacity(specs.len());
        for spec in specs {
            push_spec_path(&spec.path, &mut parts);
            ends.push(parts.len());
        }
        SpecPaths { specs, parts, ends }
    }

    fn parts(&self, index: usize) -> &[Cow<'s, str>] {
        let start = index.checked_sub(1).map_or(0, |before| self.ends[before]);
        &self.parts[start..self.ends[index]]
    }

    pub fn specs(&self) -> &'s [FieldSpec] {
        self.specs
    }

    /// Applies `visit` at every path of the specs that apply to the resource `value`, in the
    /// specs' order. Which specs apply is decided by the resource's apiVersion and kind before
    /// any walk. Says whether the walks themselves changed `value` (added a field, or gave a
    /// null the kind its path says) apart from what `visit` does.
    pub fn apply(&self, value: &mut Value, create_kind: CreateKind, visit: &mut dyn FnMut(&mut Value) -> Result<()>) -> Result<bool, SpecFailure<'s>> {
        let mut altered = false;
        self.visit_all(value, create_kind, false, &mut altered, &mut |node, _| visit(node))?;
        Ok(altered)
    }

    /// [`Self::apply`], telling `visit` where each node is, as steps borrowed from the specs'
    /// paths (see [`owned_path`] for the resource model's form).
    pub fn apply_at<'p>(&'p self, value: &mut Value, create_kind: CreateKind, visit: &mut StepsVisit<'p, '_>) -> Result<(), SpecFailure<'s>> {
        self.visit_all(value, create_kind, true, &mut false, visit)
    }

    /// The walk of the spec at `index` alone, if it applies to `value` as it is now; `track`
    /// says whether `visit` is told where each node is (an empty path otherwise).
    pub fn apply_one(&self, index: usize, value: &mut Value, create_kind: CreateKind, track: bool, visit: &mut VisitAt<'_>) -> Result<()> {
        let (api_version, kind) = api_version_and_kind(value);
        if !self.specs[index].applies_to(api_version, kind) {
            return Ok(());
        }
        self.walk_one(index, value, create_kind, &mut Vec::new(), track, &mut false, &mut |node, path| visit(node, &|| owned_path(path)))
    }

    fn visit_all<'p>(&'p self, value: &mut Value, create_kind: CreateKind, track: bool, altered: &mut bool, visit: &mut StepsVisit<'p, '_>) -> Result<(), SpecFailure<'s>> {
        // Decided before any walk (a walk may write them), without copying them: a bit per
        // spec, a list only for long tables.
        let applying = {
            let (api_version, kind) = api_version_and_kind(value);
            let (group, version) = split_api_version(api_version);
            let applies = |spec: &FieldSpec| spec.applies_to_parts(group, version, kind);
            match self.specs.len() {
                0..=64 => Applying::Bits(self.specs.iter().enumerate().fold(0u64, |bits, (i, spec)| bits | (u64::from(applies(spec)) << i))),
                _ => Applying::List(self.specs.iter().map(applies).collect()),
            }
        };
        // One path buffer for every walk of this resource.
        let mut at = Vec::new();
        for (i, spec) in self.specs.iter().enumerate() {
            if applying.get(i) {
                self.walk_one(i, value, create_kind, &mut at, track, altered, visit).map_err(|error| SpecFailure { spec, error })?;
            }
        }
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn walk_one<'p>(
        &'p self,
        index: usize,
        value: &mut Value,
        create_kind: CreateKind,
        at: &mut Vec<StepRef<'p>>,
        track: bool,
        altered: &mut bool,
        visit: &mut StepsVisit<'p, '_>,
    ) -> Result<()> {
        at.clear();
        let spec = &self.specs[index];
        walk_at(value, self.parts(index), spec.create, create_kind, track.then_some(at), altered, visit)
    }
}

/// A resource's apiVersion and kind, empty when missing or not text.
fn api_version_and_kind(value: &Value) -> (&str, &str) {
    let text = |key| get(value, key).and_then(Value::as_str).unwrap_or("");
    (text("apiVersion"), text("kind"))
}

/// Appends the parts of `path` split as [`split_field_spec_path`] splits it, borrowed from
/// `path` when it escapes no slash.
fn push_spec_path<'s>(path: &'s str, parts: &mut Vec<Cow<'s, str>>) {
    match plain_parts(path) {
        Some(plain) => parts.extend(plain.map(Cow::Borrowed)),
        None => parts.extend(split_field_spec_path(path).into_iter().map(Cow::Owned)),
    }
}

/// The parts of a spec path that escapes no slash, borrowed: a leading slash is dropped, as
/// kyaml's `PathSplitter` drops it (`/a/b` is `a/b`), and the rest split at each `/`. None for
/// a path with a `\`, which [`split_field_spec_path`] splits.
fn plain_parts(path: &str) -> Option<std::str::Split<'_, char>> {
    (!path.contains('\\')).then(|| path.strip_prefix('/').unwrap_or(path).split('/'))
}

/// Which of a list of field specs apply to a resource.
enum Applying {
    Bits(u64),
    List(Vec<bool>),
}

impl Applying {
    fn get(&self, i: usize) -> bool {
        match self {
            Applying::Bits(bits) => bits >> i & 1 == 1,
            Applying::List(list) => list[i],
        }
    }
}

/// [`walk`] along `spec`'s path.
pub fn walk_spec_path(value: &mut Value, spec: &FieldSpec, create_kind: CreateKind, visit: &mut dyn FnMut(&mut Value) -> Result<()>) -> Result<()> {
    with_spec_parts(spec, &mut |parts| walk(value, parts, spec.create, create_kind, visit))
}

/// Calls `f` with `spec`'s path split, without allocating when it is plain and short.
fn with_spec_parts(spec: &FieldSpec, f: &mut dyn FnMut(&[&str]) -> Result<()>) -> Result<()> {
    let mut parts = [""; 16];
    let mut count = 0;
    if let Some(plain) = plain_parts(&spec.path) {
        for part in plain {
            if count == parts.len() {
                break;
            }
            parts[count] = part;
            count += 1;
        }
        if count < parts.len() {
            return f(&parts[..count]);
        }
    }
    let owned = spec.path_parts();
    let borrowed: Vec<&str> = owned.iter().map(String::as_str).collect();
    f(&borrowed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn spec(path: &str, create: bool) -> FieldSpec {
        FieldSpec { gvk: Gvk::default(), path: path.into(), create }
    }

    #[test]
    fn walk_visits_every_element_of_sequences_on_the_path() {
        let mut v = json!({"spec": {"containers": [{"image": "a"}, {"image": "b"}, {"name": "c"}]}});
        let mut seen = Vec::new();
        walk(&mut v, &split_field_spec_path("spec/containers/image"), false, CreateKind::Scalar, &mut |n| {
            seen.push(n.as_str().unwrap().to_string());
            Ok(())
        })
        .unwrap();
        assert_eq!(seen, vec!["a", "b"]);
    }

    #[test]
    fn walk_creates_missing_mappings_only_when_asked() {
        let mut v = json!({"metadata": {}});
        let specs = [spec("spec/selector/matchLabels", true)];
        let altered = SpecPaths::new(&specs)
            .apply(&mut v, CreateKind::Mapping, &mut |n| {
                n.as_object_mut().unwrap().insert("a".into(), json!("b"));
                Ok(())
            })
            .unwrap();
        assert!(altered, "the walk created the selector");
        assert_eq!(v, json!({"metadata": {}, "spec": {"selector": {"matchLabels": {"a": "b"}}}}));
        let mut untouched = json!({"metadata": {}});
        let specs = [spec("spec/selector", false)];
        let altered = SpecPaths::new(&specs)
            .apply(&mut untouched, CreateKind::Mapping, &mut |_| panic!("must not visit a missing field"))
            .unwrap();
        assert!(!altered);
        assert_eq!(untouched, json!({"metadata": {}}));
    }

    /// kyaml's `PathSplitter` drops a leading slash (`/a/b` is `a/b`), escaped or not; a path
    /// of one empty part stays one (and names no field).
    #[test]
    fn a_leading_slash_is_dropped_from_spec_paths() {
        for (path, parts) in [
            ("/metadata/labels", &["metadata", "labels"][..]),
            ("metadata/labels", &["metadata", "labels"]),
            (r"/metadata/annotations/a.io\/b", &["metadata", "annotations", "a.io/b"]),
            ("/", &[""]),
            ("", &[""]),
        ] {
            let mut split = Vec::new();
            push_spec_path(path, &mut split);
            assert_eq!(split, parts, "{path}");
            assert_eq!(split_field_spec_path(path), parts, "{path}");
        }
        let mut v = json!({"spec": {"replicas": 1}});
        walk_spec_path(&mut v, &spec("/spec/replicas", true), CreateKind::Scalar, &mut |n| {
            *n = json!(3);
            Ok(())
        })
        .unwrap();
        assert_eq!(v, json!({"spec": {"replicas": 3}}));
    }

    /// A failed walk names its spec; the specs before it have been applied.
    #[test]
    fn a_failed_walk_names_its_spec() {
        let specs = [spec("metadata/labels", true), spec("spec/template", true), spec("spec/other", true)];
        let mut v = json!({"metadata": {}, "spec": {"template": "text", "other": {}}});
        let mut seen = 0;
        let failure = SpecPaths::new(&specs)
            .apply_at(&mut v, CreateKind::Mapping, &mut |node, _| {
                seen += 1;
                match node {
                    Value::Object(_) => Ok(()),
                    _ => Err(Error::msg("not a mapping")),
                }
            })
            .unwrap_err();
        assert_eq!(failure.spec.path, "spec/template");
        assert_eq!(failure.error.to_string(), "not a mapping");
        assert_eq!(seen, 2, "the third spec is not walked");
    }

    #[test]
    fn spec_with_kind_applies_only_to_that_kind_and_group() {
        let s = FieldSpec { gvk: Gvk { group: "apps".into(), version: String::new(), kind: "Deployment".into() }, path: "x".into(), create: false };
        assert!(s.applies_to("apps/v1", "Deployment"));
        assert!(!s.applies_to("v1", "Deployment"));
        assert!(!s.applies_to("apps/v1", "StatefulSet"));
    }
}
