//! Resource identity: group/version/kind plus namespace and name, printed as kustomize prints it.
use std::fmt;

/// Group, version and kind of a resource (`apps/v1` + `Deployment`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Gvk {
    pub group: String,
    pub version: String,
    pub kind: String,
}

/// An apiVersion's group and version, split at the first `/` as kustomize does (`v1` has no group).
pub fn split_api_version(api_version: &str) -> (&str, &str) {
    api_version.split_once('/').unwrap_or(("", api_version))
}

impl Gvk {
    /// Splits an apiVersion (`apps/v1`, `v1`) into group and version.
    pub fn from_api_version(api_version: &str, kind: &str) -> Self {
        let (group, version) = split_api_version(api_version);
        Gvk { group: group.to_string(), version: version.to_string(), kind: kind.to_string() }
    }

    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// kustomize's `IsSelected`: empty fields of the selector match anything.
    pub fn is_selected_by(&self, selector: &Gvk) -> bool {
        (selector.group.is_empty() || selector.group == self.group)
            && (selector.version.is_empty() || selector.version == self.version)
            && (selector.kind.is_empty() || selector.kind == self.kind)
    }
}

impl fmt::Display for Gvk {
    /// `Deployment.v1.apps`, with `[noVer]`/`[noGrp]` for empty parts, as kustomize's `Gvk.String`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let version = if self.version.is_empty() { "[noVer]" } else { &self.version };
        let group = if self.group.is_empty() { "[noGrp]" } else { &self.group };
        write!(f, "{}.{}.{}", self.kind, version, group)
    }
}

/// What kustomize's `EffectiveNamespace` gives a kind it knows as cluster-scoped.
pub const NOT_A_NAMESPACE: &str = "_non_namespaceable_";

/// kustomize's `EffectiveNamespace` of an id with these parts: [`NOT_A_NAMESPACE`] for a kind it
/// knows as cluster-scoped (whatever namespace the object names), `default` for no namespace.
/// Two ids are the same id when their effective namespaces are.
pub fn effective_namespace<'a>(api_version: &str, kind: &str, namespace: &'a str) -> &'a str {
    if !crate::patch::is_namespaced(api_version, kind) {
        NOT_A_NAMESPACE
    } else if namespace.is_empty() {
        "default"
    } else {
        namespace
    }
}

/// The identity of one resource in a build.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ResId {
    pub gvk: Gvk,
    pub namespace: String,
    pub name: String,
}

impl ResId {
    /// [`effective_namespace`] of this id.
    pub fn effective_namespace(&self) -> &str {
        effective_namespace(&self.gvk.api_version(), &self.gvk.kind, &self.namespace)
    }

    /// kustomize's `ResId.Equals`: the same group, version, kind and name, in the same
    /// effective namespace.
    pub fn same_as(&self, other: &ResId) -> bool {
        self.gvk == other.gvk && self.name == other.name && self.effective_namespace() == other.effective_namespace()
    }

    /// The id an object names: its apiVersion, kind, metadata.name and metadata.namespace
    /// (empty where absent or not a string).
    pub fn of_value(value: &serde_json::Value) -> ResId {
        use crate::fast_hash::get;
        fn text(v: Option<&serde_json::Value>) -> &str {
            v.and_then(serde_json::Value::as_str).unwrap_or("")
        }
        let metadata = get(value, "metadata");
        ResId {
            gvk: Gvk::from_api_version(text(get(value, "apiVersion")), text(get(value, "kind"))),
            namespace: text(metadata.and_then(|m| get(m, "namespace"))).to_string(),
            name: text(metadata.and_then(|m| get(m, "name"))).to_string(),
        }
    }
}

impl fmt::Display for ResId {
    /// `Deployment.v1.apps/name.namespace`, with `[noNs]` for no namespace, as kustomize's `ResId.String`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ns = if self.namespace.is_empty() { "[noNs]" } else { &self.namespace };
        write!(f, "{}/{}.{}", self.gvk, self.name, ns)
    }
}
