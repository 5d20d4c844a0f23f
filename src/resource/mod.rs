//! The resource model: one Kubernetes object, its identity and the history of that identity.
pub mod decode;
mod id;
pub mod nodes;
pub mod provenance;
mod resmap;
pub mod scope;

pub use id::{effective_namespace, split_api_version, Gvk, ResId, NOT_A_NAMESPACE};
pub use nodes::{NodeFacts, NodePath, Step};
pub use resmap::ResMap;

/// The annotation that marks a resource rendered from a helm chart (removed before printing).
pub const HELM_GENERATED: &str = "config.kubernetes.io/helm-generated";

use std::sync::Arc;

use serde_json::{Map, Value};

use crate::yaml::empty_nulls::{EmptyNulls, QuotedScalars};

/// How a generated ConfigMap/Secret combines with one of the same name from a lower layer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Behavior {
    /// No `behavior` (or one kustomize does not know): acts as create.
    #[default]
    Unspecified,
    Create,
    Replace,
    Merge,
}

impl Behavior {
    /// The behavior a generator's `behavior:` text names; kustomize takes any other text (`Create`,
    /// a typo, nothing) as unspecified, which acts as create.
    pub fn from_text(text: &str) -> Behavior {
        match text {
            "merge" => Behavior::Merge,
            "replace" => Behavior::Replace,
            "create" => Behavior::Create,
            _ => Behavior::Unspecified,
        }
    }

    /// Its name, as kustomize writes it in `internal.config.kubernetes.io/generatorBehavior`.
    pub fn as_str(self) -> &'static str {
        match self {
            Behavior::Unspecified => "unspecified",
            Behavior::Create => "create",
            Behavior::Replace => "replace",
            Behavior::Merge => "merge",
        }
    }
}

/// One Kubernetes object in a build.
#[derive(Clone, Debug)]
pub struct Resource {
    /// The object itself, always a JSON object.
    pub value: Value,
    /// Ids this resource had before renames (prefix, suffix, namespace, patches), oldest first.
    pub previous_ids: Vec<ResId>,
    /// Prefixes and suffixes applied so far, for name references that must follow them.
    pub prefixes: Vec<String>,
    pub suffixes: Vec<String>,
    /// Generator behaviour, for resources made by configMapGenerator/secretGenerator.
    pub behavior: Behavior,
    /// Whether the name gets a content hash suffix at the end of the build.
    pub needs_hash_suffix: bool,
    /// Whether this resource came from a generator (kept for merge/replace across layers).
    pub generated: bool,
    /// `config.kubernetes.io/origin` data, when buildMetadata asks for it.
    pub origin: Option<Value>,
    /// Transformer runs over this resource, for `transformerAnnotations`.
    pub transformations: Vec<Value>,
    /// Shared value nodes and untagged scalars, which kustomize's node tree has and JSON lacks.
    pub nodes: NodeFacts,
    /// Where the resource, as read from its file, holds nulls written as nothing (`key:`);
    /// the first strategic merge patch drops them (see [`EmptyNulls`]).
    pub empty_nulls: Option<Arc<EmptyNulls>>,
    /// Where the resource, as read from its file, holds quoted scalars: kyaml keeps their
    /// style when their value is set, and error messages that print a node show it.
    pub quoted: Option<Arc<QuotedScalars>>,
    /// Where each field was read from and which steps wrote it; only `explain` records it
    /// (see [`provenance`]), a plain build leaves it `None`.
    pub provenance: Option<Box<provenance::Provenance>>,
    /// Where the resource holds a key go-yaml reads as a boolean or a number: written so in its
    /// file (`1: a`), or created untagged from a kustomization's string map (`"true"`, `"1"`).
    /// kyaml keeps such a key's node, and kustomize fails to turn the resource into JSON: for a
    /// JSON patch, or at the end of the build (see `lib::refuse_unencodable`).
    pub plain_keys: Vec<NodePath>,
}

/// What Go's JSON encoder says of a map with a key that is no string.
pub const UNENCODABLE_MAP: &str = "json: unsupported type: map[interface {}]interface {}";

impl Resource {
    /// The keys of [`Self::plain_keys`] still there.
    pub fn live_plain_keys(&self) -> impl Iterator<Item = &NodePath> {
        self.plain_keys.iter().filter(|path| nodes::value_at(&self.value, path).is_some())
    }

    /// Whether a key of [`Self::plain_keys`] is still there.
    pub fn holds_plain_key(&self) -> bool {
        self.live_plain_keys().next().is_some()
    }

    /// A copy whose mappings and lists hold exactly their entries. `clone` copies a mapping's
    /// hash table and gives its entries the table's capacity (up to twice as many as there
    /// are); the resources of a file read once stay in the build until its end, so they are
    /// copied this way.
    pub fn copy_exact(&self) -> Resource {
        let Resource {
            value,
            previous_ids,
            prefixes,
            suffixes,
            behavior,
            needs_hash_suffix,
            generated,
            origin,
            transformations,
            nodes,
            empty_nulls,
            quoted,
            provenance,
            plain_keys,
        } = self;
        Resource {
            value: copy_exact(value),
            previous_ids: previous_ids.clone(),
            prefixes: prefixes.clone(),
            suffixes: suffixes.clone(),
            behavior: *behavior,
            needs_hash_suffix: *needs_hash_suffix,
            generated: *generated,
            origin: origin.clone(),
            transformations: transformations.clone(),
            nodes: nodes.clone(),
            empty_nulls: empty_nulls.clone(),
            quoted: quoted.clone(),
            provenance: provenance.clone(),
            plain_keys: plain_keys.clone(),
        }
    }

    pub fn new(value: Value) -> Self {
        Resource {
            value,
            previous_ids: Vec::new(),
            prefixes: Vec::new(),
            suffixes: Vec::new(),
            behavior: Behavior::Unspecified,
            needs_hash_suffix: false,
            generated: false,
            origin: None,
            transformations: Vec::new(),
            nodes: NodeFacts::default(),
            empty_nulls: None,
            quoted: None,
            provenance: None,
            plain_keys: Vec::new(),
        }
    }

    /// Runs a write to the resource's value; a change at one path of a shared node shows at all
    /// of its paths afterwards, as kustomize writes existing nodes in place.
    pub fn write<T>(&mut self, f: impl FnOnce(&mut Value) -> T) -> T {
        if self.nodes.is_empty() {
            return f(&mut self.value);
        }
        let before = self.nodes.snapshot(&self.value);
        let out = f(&mut self.value);
        self.nodes.propagate(&mut self.value, before);
        out
    }

    /// [`Self::write`] for a write that only sets the entries named `is_written_key` of maps,
    /// creating fields on the way (labels, annotations): when no shared or untagged scalar is
    /// such an entry, nothing shared can change, and the values need no snapshot.
    pub fn write_map_entries<T>(&mut self, is_written_key: impl Fn(&str) -> bool, f: impl FnOnce(&mut Value) -> T) -> T {
        if self.nodes.is_empty() || self.nodes.may_change_scalars_at_keys(&self.value, is_written_key) {
            return self.write(f);
        }
        let out = f(&mut self.value);
        self.nodes.forget_overwritten(&self.value);
        out
    }

    /// kyaml's `SetAnnotations`, as kustomize runs it after each transformer when it tracks
    /// origins: the annotations become fresh string nodes, shared with nothing.
    pub fn rewrite_annotations(&mut self) {
        if !self.nodes.is_empty() {
            let path = [Step::Key("metadata".into()), Step::Key("annotations".into())];
            self.nodes.map_rewritten(&mut self.value, &path);
        }
    }

    /// [`Self::write`] for a write that may replace whole maps and lists (a strategic-merge
    /// patch): a scalar whose map was replaced is no longer linked to anything.
    pub fn write_replacing<T>(&mut self, f: impl FnOnce(&mut Value) -> T) -> T {
        if self.nodes.is_empty() && self.plain_keys.is_empty() {
            return f(&mut self.value);
        }
        let before = self.nodes.snapshot_marking_parents(&mut self.value, &self.plain_keys);
        let out = f(&mut self.value);
        self.nodes.propagate_with_keys(&mut self.value, before, &mut self.plain_keys);
        out
    }

    pub fn map_mut(&mut self) -> &mut Map<String, Value> {
        self.value.as_object_mut().expect("a resource is always a mapping")
    }

    fn str_at(&self, key: &str) -> &str {
        crate::fast_hash::get(&self.value, key).and_then(Value::as_str).unwrap_or("")
    }

    fn metadata_str(&self, key: &str) -> &str {
        crate::fast_hash::get(&self.value, "metadata").and_then(|m| crate::fast_hash::get(m, key)).and_then(Value::as_str).unwrap_or("")
    }

    pub fn api_version(&self) -> &str {
        self.str_at("apiVersion")
    }

    pub fn kind(&self) -> &str {
        self.str_at("kind")
    }

    pub fn name(&self) -> &str {
        self.metadata_str("name")
    }

    pub fn namespace(&self) -> &str {
        self.metadata_str("namespace")
    }

    pub fn gvk(&self) -> Gvk {
        Gvk::from_api_version(self.api_version(), self.kind())
    }

    /// The id the resource has now.
    pub fn current_id(&self) -> ResId {
        ResId::of_value(&self.value)
    }

    /// The id the resource had when it was first loaded or generated.
    pub fn original_id(&self) -> ResId {
        self.previous_ids.first().cloned().unwrap_or_else(|| self.current_id())
    }

    /// Every id this resource has had, the current one last.
    pub fn all_ids(&self) -> Vec<ResId> {
        let mut ids = self.previous_ids.clone();
        ids.push(self.current_id());
        ids
    }

    /// The metadata mapping, created when absent.
    pub fn metadata_mut(&mut self) -> &mut Map<String, Value> {
        let map = self.map_mut();
        let meta = map.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
        if !meta.is_object() {
            *meta = Value::Object(Map::new());
        }
        meta.as_object_mut().unwrap()
    }

    /// Renames the resource (the hash suffix), storing the old id first for name references
    /// and patch targets.
    pub fn set_name(&mut self, name: &str) {
        if self.name() == name {
            return;
        }
        self.store_previous_id();
        self.metadata_mut().insert("name".into(), Value::String(name.to_string()));
    }

    /// Sets `metadata.namespace`; the namespace transformer has stored the id already.
    pub fn set_namespace(&mut self, namespace: &str) {
        if self.namespace() != namespace {
            self.metadata_mut().insert("namespace".into(), Value::String(namespace.to_string()));
        }
    }

    /// kustomize's `StorePreviousId`: the current id joins the ids the resource has had, even
    /// when it is the last one again (a transformer that may rename stores it, renamed or not),
    /// so the list reads as kustomize's `previous*` annotations do.
    pub fn store_previous_id(&mut self) {
        self.previous_ids.push(self.current_id());
    }

    /// kustomize's `CurId().Equals`: the same group, version, kind and name, in the same
    /// effective namespace, compared without building the ids.
    pub fn has_same_current_id(&self, other: &Resource) -> bool {
        self.has_same_current_id_scoped(other, &|| !crate::patch::is_namespaced(self.api_version(), self.kind()))
    }

    /// [`Self::has_same_current_id`], told whether the kind is cluster-scoped (asked only when
    /// the namespaces differ and are not both the default one): one resource compared with many
    /// asks the schema once.
    pub fn has_same_current_id_scoped(&self, other: &Resource, cluster_scoped: &dyn Fn() -> bool) -> bool {
        let default = |ns: &str| ns.is_empty() || ns == "default";
        let (a, b) = (self.namespace(), other.namespace());
        // Names and namespaces first: where many resources share a name, they tell them apart.
        self.name() == other.name()
            && (a == b || (default(a) && default(b)) || cluster_scoped())
            && self.kind() == other.kind()
            && id::split_api_version(self.api_version()) == id::split_api_version(other.api_version())
    }

    /// A string-to-string map under metadata (`labels`, `annotations`).
    pub fn metadata_map(&self, field: &str) -> Option<&Map<String, Value>> {
        crate::fast_hash::get(crate::fast_hash::get(&self.value, "metadata")?, field)?.as_object()
    }

    pub fn labels(&self) -> Option<&Map<String, Value>> {
        self.metadata_map("labels")
    }

    pub fn annotations(&self) -> Option<&Map<String, Value>> {
        self.metadata_map("annotations")
    }

    pub fn annotation(&self, key: &str) -> Option<&str> {
        crate::fast_hash::field(self.annotations()?, key)?.as_str()
    }

    /// Whether the resource came out of a chart (marked [`HELM_GENERATED`] by the helm
    /// generator; the namespace transformer leaves it alone).
    pub fn is_helm_generated(&self) -> bool {
        self.annotation(HELM_GENERATED) == Some("true")
    }

    /// Sets or removes (with `None`) one entry of `metadata.labels`/`metadata.annotations`.
    pub fn set_metadata_entry(&mut self, field: &str, key: &str, value: Option<&str>) {
        let meta = self.metadata_mut();
        match value {
            Some(v) => {
                let m = meta.entry(field).or_insert_with(|| Value::Object(Map::new()));
                if !m.is_object() {
                    *m = Value::Object(Map::new());
                }
                m.as_object_mut().unwrap().insert(key.to_string(), Value::String(v.to_string()));
            }
            None => {
                if let Some(m) = meta.get_mut(field).and_then(Value::as_object_mut) {
                    m.shift_remove(key);
                    if m.is_empty() {
                        meta.shift_remove(field);
                    }
                }
            }
        }
    }

    /// kustomize drops resources annotated `config.kubernetes.io/local-config: "true"` from the output.
    pub fn is_local_config(&self) -> bool {
        self.annotation("config.kubernetes.io/local-config") == Some("true")
    }
}

/// A copy of `value` whose mappings and lists hold exactly their entries (see
/// [`Resource::copy_exact`]).
pub fn copy_exact(value: &Value) -> Value {
    match value {
        Value::Object(map) => {
            let mut copy = Map::with_capacity(map.len());
            for (key, item) in map {
                copy.insert(key.clone(), copy_exact(item));
            }
            Value::Object(copy)
        }
        Value::Array(items) => Value::Array(items.iter().map(copy_exact).collect()),
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn keys(value: &Value) -> Vec<&str> {
        value.as_object().unwrap().keys().map(String::as_str).collect()
    }

    #[test]
    fn an_exact_copy_is_equal_and_keeps_the_order_of_keys() {
        let value = json!({"z": 1, "a": {"y": [1, {"q": null, "b": true}], "c": "text"}, "m": [], "k": {}});
        let copy = copy_exact(&value);
        assert_eq!(copy, value);
        assert_eq!(keys(&copy), ["z", "a", "m", "k"]);
        assert_eq!(keys(&copy["a"]), ["y", "c"]);
        assert_eq!(keys(&copy["a"]["y"][1]), ["q", "b"]);
        let mut resource = Resource::new(value.clone());
        resource.prefixes.push("p-".into());
        resource.generated = true;
        let copied = resource.copy_exact();
        assert_eq!(copied.value, value);
        assert_eq!(copied.prefixes, ["p-"]);
        assert!(copied.generated);
    }

    fn object(api_version: &str, kind: &str, name: &str, namespace: Option<&str>) -> Resource {
        let mut metadata = json!({"name": name});
        if let Some(ns) = namespace {
            metadata["namespace"] = json!(ns);
        }
        Resource::new(json!({"apiVersion": api_version, "kind": kind, "metadata": metadata}))
    }

    /// kustomize's `ResId.Equals`: by effective namespace.
    #[test]
    fn ids_are_the_same_in_the_same_effective_namespace() {
        let cm = |ns| object("v1", "ConfigMap", "cm", ns);
        assert!(cm(None).has_same_current_id(&cm(Some("default"))), "no namespace is default");
        assert!(cm(Some("a")).has_same_current_id(&cm(Some("a"))));
        assert!(!cm(Some("a")).has_same_current_id(&cm(Some("b"))));
        assert!(!cm(None).has_same_current_id(&object("v1", "Secret", "cm", None)), "another kind");
        assert!(!cm(None).has_same_current_id(&object("v2", "ConfigMap", "cm", None)), "another version");
        assert!(!cm(None).has_same_current_id(&object("v1", "ConfigMap", "other", None)), "another name");
        let role = |ns| object("rbac.authorization.k8s.io/v1", "ClusterRole", "r", ns);
        assert!(role(None).has_same_current_id(&role(Some("x"))), "a cluster-scoped kind's namespace does not count");
        assert_eq!(role(Some("x")).current_id().effective_namespace(), NOT_A_NAMESPACE);
    }

    /// kustomize's `StorePreviousId` keeps every id stored, a repeated one too.
    #[test]
    fn every_stored_id_is_kept_in_order() {
        let mut r = object("v1", "ConfigMap", "cm", None);
        r.store_previous_id();
        r.store_previous_id();
        r.set_namespace("a");
        r.set_name("cm-1");
        let ids: Vec<String> = r.previous_ids.iter().map(ToString::to_string).collect();
        assert_eq!(ids, ["ConfigMap.v1.[noGrp]/cm.[noNs]", "ConfigMap.v1.[noGrp]/cm.[noNs]", "ConfigMap.v1.[noGrp]/cm.a"]);
        assert_eq!(r.current_id().to_string(), "ConfigMap.v1.[noGrp]/cm-1.a");
    }
}
