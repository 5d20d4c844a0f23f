//! Comparing two renderings resource by resource: what a change does to a build, or how two
//! overlays differ. Resources are matched by identity (group, kind, namespace, name), so a renamed
//! resource shows as one removed and one added; each changed resource lists the field paths that
//! differ and a unified diff of its YAML as `kustomize build` prints it.
pub mod fields;
pub mod git;

use std::collections::HashMap;
use std::fmt;
use std::path::Path;

use serde_json::Value;
use similar::{ChangeTag, TextDiff};

use crate::explain::render::{describe, resolve_path};
use crate::resource::provenance::Provenance;
use crate::{build, BuildOptions};

/// What can stop a comparison.
#[derive(Debug, thiserror::Error)]
pub enum DiffError {
    /// One side does not build.
    #[error("{label}: {message}")]
    Build { label: String, message: String },
    /// git could not be run, or refused (unknown revision, not a repository).
    #[error("{0}")]
    Git(String),
    /// Extracting a revision into a temporary folder failed.
    #[error("{path}: {message}")]
    Io { path: String, message: String },
}

/// Which resource: the parts of kustomize's resource id that a reviewer reads.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResourceKey {
    pub group: String,
    pub kind: String,
    pub namespace: String,
    pub name: String,
}

impl fmt::Display for ResourceKey {
    /// `Kind/namespace/name`, or `Kind/name` for a resource without a namespace.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.namespace.is_empty() {
            write!(f, "{}/{}", self.kind, self.name)
        } else {
            write!(f, "{}/{}/{}", self.kind, self.namespace, self.name)
        }
    }
}

/// One resource of a rendering: its identity, its value and its YAML, and when the build
/// recorded it (`diff --explain`), where each field came from.
pub struct RenderedResource {
    pub key: ResourceKey,
    pub value: Value,
    pub yaml: String,
    pub provenance: Option<Box<Provenance>>,
}

/// A build's resources in output order; empty for a folder that does not exist on that side.
#[derive(Default)]
pub struct Rendering {
    pub resources: Vec<RenderedResource>,
}

/// Builds `dir` (labelled `label` in errors); a missing folder renders as nothing, so an overlay
/// that a change adds or removes shows as all added or all removed.
pub fn render(dir: &Path, label: &str, options: &BuildOptions) -> Result<Rendering, DiffError> {
    if !dir.exists() {
        return Ok(Rendering::default());
    }
    let built = build(dir, options).map_err(|failure| DiffError::Build { label: label.to_string(), message: failure.error.to_string() })?;
    let resources = built
        .resources
        .iter()
        .map(|r| RenderedResource {
            key: ResourceKey {
                group: r.gvk().group,
                kind: r.kind().to_string(),
                namespace: r.namespace().to_string(),
                name: r.name().to_string(),
            },
            yaml: crate::yaml::emit::emit_stream([&r.value]),
            value: r.value.clone(),
            provenance: r.provenance.clone(),
        })
        .collect();
    Ok(Rendering { resources })
}

/// How a resource differs between the two sides.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ChangeKind {
    Added,
    Removed,
    Changed,
}

impl fmt::Display for ChangeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            ChangeKind::Added => "added",
            ChangeKind::Removed => "removed",
            ChangeKind::Changed => "changed",
        })
    }
}

/// One resource that differs; the YAML of a side it is absent from is empty.
pub struct ResourceChange<'a> {
    pub key: &'a ResourceKey,
    pub kind: ChangeKind,
    pub old_yaml: &'a str,
    pub new_yaml: &'a str,
    /// The field paths whose values differ (empty for added and removed resources).
    pub fields: Vec<String>,
    /// With provenance (`diff --explain`): for each differing field (or, for an added or
    /// removed resource, the resource itself), what set it on each side.
    pub set_by: Vec<SetBy>,
}

/// What set one field on each side: `file:line:column step`, `None` where the side lacks it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SetBy {
    /// The field path, empty for the whole resource.
    pub field: String,
    pub old: Option<String>,
    pub new: Option<String>,
}

/// What set the field at `field` (the resource's `kind`, which its file or generator wrote,
/// for the whole resource).
fn set_by(side: Option<&RenderedResource>, field: &str) -> Option<String> {
    let side = side?;
    let path = resolve_path(&side.value, if field.is_empty() { "kind" } else { field })?;
    let events = &side.provenance.as_ref()?.at(&path)?.events;
    let event = if field.is_empty() { events.first() } else { events.last() };
    event.map(describe)
}

fn explain(old: Option<&RenderedResource>, new: Option<&RenderedResource>, fields: &[String]) -> Vec<SetBy> {
    if !old.or(new).is_some_and(|r| r.provenance.is_some()) {
        return Vec::new();
    }
    let whole = [String::new()];
    let fields = if old.is_some() && new.is_some() { fields } else { &whole };
    fields.iter().map(|field| SetBy { field: field.clone(), old: set_by(old, field), new: set_by(new, field) }).collect()
}

impl ResourceChange<'_> {
    /// A unified diff of the resource's YAML, with `old_label`/`new_label` naming the sides;
    /// an absent side is `/dev/null`, as in `diff -N`.
    pub fn unified_diff(&self, old_label: &str, new_label: &str) -> String {
        let old_header = if self.kind == ChangeKind::Added { "/dev/null".to_string() } else { format!("{old_label} {}", self.key) };
        let new_header = if self.kind == ChangeKind::Removed { "/dev/null".to_string() } else { format!("{new_label} {}", self.key) };
        TextDiff::from_lines(self.old_yaml, self.new_yaml).unified_diff().context_radius(3).header(&old_header, &new_header).to_string()
    }

    /// Lines added and removed.
    pub fn line_counts(&self) -> (usize, usize) {
        let diff = TextDiff::from_lines(self.old_yaml, self.new_yaml);
        let mut counts = (0, 0);
        for change in diff.iter_all_changes() {
            match change.tag() {
                ChangeTag::Insert => counts.0 += 1,
                ChangeTag::Delete => counts.1 += 1,
                ChangeTag::Equal => {}
            }
        }
        counts
    }
}

/// The resources that differ: changed and added ones in the new side's order, then removed ones
/// in the old side's order.
pub fn compare<'a>(old: &'a Rendering, new: &'a Rendering) -> Vec<ResourceChange<'a>> {
    let old_by_key: HashMap<&ResourceKey, &RenderedResource> = old.resources.iter().map(|r| (&r.key, r)).collect();
    let new_by_key: HashMap<&ResourceKey, &RenderedResource> = new.resources.iter().map(|r| (&r.key, r)).collect();
    let mut changes = Vec::new();
    for now in &new.resources {
        match old_by_key.get(&now.key) {
            Some(before) if before.yaml == now.yaml => {}
            Some(before) => {
                let fields = fields::differing_paths(&before.value, &now.value);
                let set_by = explain(Some(before), Some(now), &fields);
                changes.push(ResourceChange { key: &now.key, kind: ChangeKind::Changed, old_yaml: &before.yaml, new_yaml: &now.yaml, fields, set_by })
            }
            None => changes.push(ResourceChange {
                key: &now.key,
                kind: ChangeKind::Added,
                old_yaml: "",
                new_yaml: &now.yaml,
                fields: Vec::new(),
                set_by: explain(None, Some(now), &[]),
            }),
        }
    }
    for before in &old.resources {
        if !new_by_key.contains_key(&before.key) {
            let set_by = explain(Some(before), None, &[]);
            changes.push(ResourceChange { key: &before.key, kind: ChangeKind::Removed, old_yaml: &before.yaml, new_yaml: "", fields: Vec::new(), set_by });
        }
    }
    changes
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn resource(kind: &str, name: &str, data: Value) -> RenderedResource {
        let value = json!({"apiVersion": "v1", "kind": kind, "metadata": {"name": name, "namespace": "ns"}, "data": data});
        RenderedResource {
            key: ResourceKey { group: String::new(), kind: kind.into(), namespace: "ns".into(), name: name.into() },
            yaml: crate::yaml::emit::emit_stream([&value]),
            value,
            provenance: None,
        }
    }

    #[test]
    fn identical_renderings_have_no_changes() {
        let a = Rendering { resources: vec![resource("ConfigMap", "cm", json!({"A": "1"}))] };
        let b = Rendering { resources: vec![resource("ConfigMap", "cm", json!({"A": "1"}))] };
        assert!(compare(&a, &b).is_empty());
    }

    #[test]
    fn a_rename_is_a_removal_and_an_addition() {
        let a = Rendering { resources: vec![resource("ConfigMap", "old", json!({"A": "1"}))] };
        let b = Rendering { resources: vec![resource("ConfigMap", "new", json!({"A": "1"}))] };
        let changes: Vec<(ChangeKind, String)> = compare(&a, &b).iter().map(|c| (c.kind, c.key.to_string())).collect();
        assert_eq!(changes, [(ChangeKind::Added, "ConfigMap/ns/new".to_string()), (ChangeKind::Removed, "ConfigMap/ns/old".to_string())]);
    }

    #[test]
    fn a_changed_value_names_its_field_and_counts_its_lines() {
        let a = Rendering { resources: vec![resource("ConfigMap", "cm", json!({"A": "1", "B": "2"}))] };
        let b = Rendering { resources: vec![resource("ConfigMap", "cm", json!({"A": "1", "B": "3"}))] };
        let changes = compare(&a, &b);
        assert_eq!(changes.len(), 1);
        assert_eq!(changes[0].fields, ["data.B"]);
        assert_eq!(changes[0].line_counts(), (1, 1));
        let diff = changes[0].unified_diff("main:x", "x");
        assert!(diff.starts_with("--- main:x ConfigMap/ns/cm\n+++ x ConfigMap/ns/cm\n@@"), "{diff}");
        assert!(diff.contains("\n-  B: \"2\"\n+  B: \"3\"\n"), "{diff}");
    }
}
