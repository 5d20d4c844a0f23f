//! kustomize keeps a resource's build state (earlier ids, affixes, generator behaviour, hash
//! wish) as `internal.config.kubernetes.io/*` annotations on the object itself, so a plugin
//! sees them and whatever it returns is the state afterwards. We keep that state in
//! [`Resource`]'s fields: written out as those annotations for the plugin, read back from its
//! answer.
use serde_json::Value;

use crate::build_metadata::{self, affixes_text, BEHAVIOR, INTERNAL, NEEDS_HASH, PREFIXES, PREVIOUS_KINDS, PREVIOUS_NAMES, PREVIOUS_NAMESPACES, SUFFIXES};
use crate::resource::{Behavior, Gvk, ResId, Resource};

/// `resource`'s value with its state written as kustomize's internal annotations, and, when the
/// build tracks them, its origin and the transformer runs so far, which kustomize also keeps as
/// annotations while it builds.
pub fn with_state(resource: &Resource, tracks_origins: bool) -> Value {
    build_metadata::with_build_annotations(resource, &resource.value, tracks_origins)
}

/// After [`take_state`] on a plugin's answer for `old`: affixes that read as `old`'s are
/// `old`'s (with the empty entries the annotations leave out).
pub fn keep_affixes_of(resource: &mut Resource, old: &Resource) {
    if affixes_text(&resource.prefixes) == affixes_text(&old.prefixes) {
        resource.prefixes = old.prefixes.clone();
    }
    if affixes_text(&resource.suffixes) == affixes_text(&old.suffixes) {
        resource.suffixes = old.suffixes.clone();
    }
}

/// The state a plugin's answer carries (its internal annotations, which are taken off the
/// value): what kustomize would know about the resource from now on. An earlier namespace
/// reads `default` when it was empty; both are the same namespace. With `tracks_origins`, the
/// origin and transformer runs are read back too (a resource the plugin made has none).
pub fn take_state(resource: &mut Resource, tracks_origins: bool) {
    if tracks_origins {
        let mut text = |key: &str| match resource.value.pointer_mut("/metadata/annotations").and_then(Value::as_object_mut)?.shift_remove(key) {
            Some(Value::String(text)) => Some(text),
            _ => None,
        };
        let origin = text(build_metadata::ORIGIN);
        let runs = text(build_metadata::TRANSFORMATIONS);
        resource.origin = origin.and_then(|t| crate::yaml::parse::parse_document(&t).ok()).filter(Value::is_object);
        resource.transformations = match runs.and_then(|t| crate::yaml::parse::parse_document(&t).ok()) {
            Some(Value::Array(runs)) => runs,
            _ => Vec::new(),
        };
    }
    let Some(annotations) = resource.value.pointer_mut("/metadata/annotations").and_then(Value::as_object_mut) else {
        clear(resource);
        return;
    };
    let mut read = |key: &str| match annotations.shift_remove(key) {
        Some(Value::String(text)) => Some(text),
        _ => None,
    };
    let split = |text: Option<String>| text.map(|t| t.split(',').map(String::from).collect::<Vec<_>>()).unwrap_or_default();
    let behavior = read(BEHAVIOR);
    let needs_hash = read(NEEDS_HASH).as_deref() == Some("enabled");
    let prefixes = split(read(PREFIXES));
    let suffixes = split(read(SUFFIXES));
    let (kinds, names, namespaces) = (split(read(PREVIOUS_KINDS)), split(read(PREVIOUS_NAMES)), split(read(PREVIOUS_NAMESPACES)));
    annotations.retain(|key, _| !key.starts_with(INTERNAL));
    if annotations.is_empty() {
        resource.metadata_mut().shift_remove("annotations");
    }
    resource.generated = behavior.is_some();
    resource.behavior = Behavior::from_text(behavior.as_deref().unwrap_or_default());
    resource.needs_hash_suffix = needs_hash;
    resource.prefixes = prefixes;
    resource.suffixes = suffixes;
    let api_version = resource.api_version().to_string();
    resource.previous_ids = names
        .iter()
        .enumerate()
        .filter(|_| kinds.len() == names.len() && namespaces.len() == names.len())
        .map(|(i, name)| {
            let namespace = if namespaces[i] == "default" { String::new() } else { namespaces[i].clone() };
            ResId { gvk: Gvk::from_api_version(&api_version, &kinds[i]), namespace, name: name.clone() }
        })
        .collect();
}

fn clear(resource: &mut Resource) {
    resource.generated = false;
    resource.behavior = Behavior::Unspecified;
    resource.needs_hash_suffix = false;
    resource.prefixes.clear();
    resource.suffixes.clear();
    resource.previous_ids.clear();
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn state_survives_a_plugin_that_keeps_annotations() {
        let mut r = Resource::new(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p-cfg", "annotations": {"x": "y"}}}));
        r.generated = true;
        r.needs_hash_suffix = true;
        r.prefixes = vec!["p-".into()];
        r.previous_ids = vec![ResId { gvk: Gvk::from_api_version("v1", "ConfigMap"), namespace: String::new(), name: "cfg".into() }];
        let sent = with_state(&r, false);
        assert_eq!(sent["metadata"]["annotations"]["internal.config.kubernetes.io/previousNamespaces"], "default");
        let mut back = Resource::new(sent);
        take_state(&mut back, false);
        assert_eq!(back.value, r.value);
        assert_eq!((back.generated, back.needs_hash_suffix, back.prefixes.clone()), (true, true, vec!["p-".to_string()]));
        assert_eq!(back.previous_ids, r.previous_ids);
    }

    #[test]
    fn a_plugin_that_drops_the_annotations_drops_the_state() {
        let mut r = Resource::new(json!({"kind": "ConfigMap", "metadata": {"name": "c"}}));
        r.needs_hash_suffix = true;
        take_state(&mut r, false);
        assert!(!r.needs_hash_suffix);
    }
}
