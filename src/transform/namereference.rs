//! Name references: once prefixes, suffixes, namespaces and hash suffixes have renamed resources,
//! every field that names one of them by an old name is made to name it by its current one
//! (kustomize's nameReference transformer, `api/filters/nameref`).
//!
//! For each referrer (a resource selected, by its original kind, by a referrer field spec of the
//! table) and each such field, the value is looked up among the resources that once had that name
//! ("previous names"; a resource never renamed is never a candidate). Candidates must have been of
//! the target kind, be reachable from the referrer (same namespace, cluster-scoped, a service
//! account, or a namespace named by a RoleBinding's service account subjects) and, for `roleRef`
//! fields, of the kind the roleRef names. When several remain, those whose prefixes and suffixes
//! agree with the referrer's win; still several with different names is an error.
use std::cell::RefCell;
use crate::fast_hash::{FastHashMap, FastHashSet};

use serde_json::Value;

use super::fieldspec::{last_field_of, walk, CreateKind, FieldSpec};
use super::fieldspec_tables::{FieldSpecTables, NameBackReference};
use crate::error::{Error, Result};
use crate::resource::{scope::is_namespaced, Gvk, ResMap, Resource};

/// Rewrites every name reference listed in `table` to the current name of what it refers to;
/// `tracks_origins` says whether an error that prints a resource shows its origin and runs.
pub fn resolve_name_references(resources: &mut ResMap, table: &[NameBackReference], tracks_origins: bool) -> Result<()> {
    let facts: Vec<Facts> = {
        use rayon::prelude::*;
        resources.as_slice().par_iter().with_min_len(64).map(Facts::of).collect()
    };
    let index = Index::build(&facts);
    let made;
    let specs = match ReferrerSpecs::builtin(table) {
        Some(builtin) => builtin,
        None => {
            made = ReferrerSpecs::new(table);
            &made
        }
    };
    let referrers: Vec<usize> = (0..resources.len()).filter(|&i| specs.selects_any(&facts[i].original_gvk)).collect();
    let pass = Pass { facts: &facts, index: &index, specs };
    // A referrer's update reads only the facts and its own value, so referrers are updated side
    // by side, and the first failure in resource order is the one a sequential pass stops at.
    // Unless a lookup may be ambiguous: the error then prints the other candidates as a pass in
    // resource order has them at that point (earlier ones updated, later ones not). kustomize's
    // own pass goes in a Go map's order, which changes from run to run; this is one of its
    // outcomes, always the same.
    if resources.is_large() && !index.may_be_ambiguous(&facts, specs) {
        // Written through the resource: a name written where a shared label or annotation node
        // is shows at each of its paths (see `resource::nodes`).
        let outcomes = resources.map_positions_mut(&referrers, |i, r| {
            let outcome = match pass.may_write_shared(r) {
                true => r.write(|value| pass.update(i, value)),
                false => pass.update(i, &mut r.value),
            };
            outcome.map_err(|failure| (i, failure))
        });
        return match outcomes.into_iter().find_map(Result::err) {
            None => Ok(()),
            Some((_, Failure { error, candidates })) if candidates.is_empty() => Err(error),
            // Not met (no lookup could be ambiguous); said as well as it can be.
            Some((i, Failure { error, candidates })) => {
                Err(Error::msg(format!("{error}\n{}", failure_details(resources, i, &resources.get(i).value, &candidates, tracks_origins))))
            }
        };
    }
    for i in referrers {
        // Other resources (and the referrer itself, which may name itself) are looked up in the
        // facts only, so the value can move out while it is edited.
        let r = resources.get(i);
        let before = pass.may_write_shared(r).then(|| r.nodes.snapshot(&r.value));
        let mut value = std::mem::take(&mut resources.get_mut(i).value);
        let outcome = pass.update(i, &mut value);
        let outcome = outcome.map_err(|Failure { error, candidates }| match candidates.is_empty() {
            true => error,
            false => Error::msg(format!("{error}\n{}", failure_details(resources, i, &value, &candidates, tracks_origins))),
        });
        let r = resources.get_mut(i);
        r.value = value;
        if let Some(before) = before {
            r.nodes.propagate(&mut r.value, before);
        }
        outcome?;
    }
    Ok(())
}

/// What every referrer's update consults.
struct Pass<'a> {
    facts: &'a [Facts],
    index: &'a Index<'a>,
    specs: &'a ReferrerSpecs<'a>,
}

/// A referrer's failed update: the error, and the candidates when a name matched several.
struct Failure {
    error: Error,
    candidates: Vec<usize>,
}

impl Pass<'_> {
    /// Whether the referrer holds a shared label or annotation node a spec's path may end at.
    fn may_write_shared(&self, r: &Resource) -> bool {
        !r.nodes.is_empty() && r.nodes.shares_a_key(|key| self.specs.last_fields.contains(key))
    }

    /// Updates the fields of the referrer at position `i` (its value, `value`), spec by spec.
    fn update(&self, i: usize, value: &mut Value) -> std::result::Result<(), Failure> {
        let facts = self.facts;
        let referrer = Referrer::new(i, facts, value).map_err(|error| Failure { error, candidates: Vec::new() })?;
        for s in self.specs.selecting(&facts[i].original_gvk) {
            let spec = &self.specs.all[s];
            let role_ref = spec.spec.path.ends_with("roleRef/name").then(|| role_ref_gvk(value)).flatten();
            let lookup = Lookup {
                facts,
                index: self.index,
                referrer: &referrer,
                target: spec.target,
                role_ref,
                ambiguous: RefCell::default(),
            };
            update_field(value, &spec.parts, &lookup).map_err(|e| {
                let id = facts[i].current_id();
                let error = e
                    .context(format!("considering field '{}' of object {id}", spec.spec.path))
                    .context(format!("updating name reference in '{}' field of '{id}'", spec.spec.path));
                Failure { error, candidates: lookup.ambiguous.take() }
            })?;
        }
        Ok(())
    }
}

/// What the filter needs to know about one resource, read once before any field changes.
struct Facts {
    /// The current group, version and kind.
    gvk: Gvk,
    name: String,
    namespace: String,
    cluster_scoped: bool,
    /// kustomize's `PrevIds`: previous kinds and names, with the current group and version.
    previous: Vec<(Gvk, String)>,
    original_gvk: Gvk,
    /// Effective namespace of the original id; `None` when that id is cluster-scoped.
    original_namespace: Option<String>,
    prefixes: Vec<String>,
    suffixes: Vec<String>,
}

impl Facts {
    fn of(resource: &Resource) -> Facts {
        let gvk = resource.gvk();
        let with_kind = |kind: &str| Gvk { group: gvk.group.clone(), version: gvk.version.clone(), kind: kind.to_string() };
        let previous: Vec<(Gvk, String)> =
            resource.previous_ids.iter().map(|id| (with_kind(&id.gvk.kind), id.name.clone())).collect();
        let (original_gvk, original_namespace) = match resource.previous_ids.first() {
            Some(id) => (with_kind(&id.gvk.kind), id.namespace.as_str()),
            None => (gvk.clone(), resource.namespace()),
        };
        let original_namespace =
            (!is_cluster_scoped(&original_gvk)).then(|| effective_namespace(original_namespace).to_string());
        let cluster_scoped = is_cluster_scoped(&gvk);
        Facts {
            name: resource.name().to_string(),
            namespace: resource.namespace().to_string(),
            gvk,
            cluster_scoped,
            previous,
            original_gvk,
            original_namespace,
            prefixes: non_empty(&resource.prefixes),
            suffixes: non_empty(&resource.suffixes),
        }
    }

    /// The current id, for messages (made only when one is said).
    fn current_id(&self) -> String {
        crate::resource::ResId { gvk: self.gvk.clone(), namespace: self.namespace.clone(), name: self.name.clone() }.to_string()
    }

    fn effective_namespace(&self) -> &str {
        effective_namespace(&self.namespace)
    }
}

/// The affixes without empty ones, which kustomize never records.
fn non_empty(affixes: &[String]) -> Vec<String> {
    affixes.iter().filter(|a| !a.is_empty()).cloned().collect()
}

/// `default` for no namespace, as kustomize compares namespaces.
fn effective_namespace(namespace: &str) -> &str {
    if namespace.is_empty() {
        "default"
    } else {
        namespace
    }
}

/// Positions of resources by previous name and by original namespace, in resource order.
struct Index<'a> {
    by_previous_name: FastHashMap<&'a str, Vec<usize>>,
    by_original_namespace: FastHashMap<&'a str, Vec<usize>>,
}

impl<'a> Index<'a> {
    /// Whether some lookup could find several candidates that differ (the only failure that
    /// reads other resources): two resources that once had one name and were once of one kind
    /// (of any kinds, when a target of the table selects every kind). Said yes to more often
    /// than it happens: the candidates' namespaces and affixes may yet tell them apart.
    fn may_be_ambiguous(&self, facts: &[Facts], specs: &ReferrerSpecs) -> bool {
        let any_kind = specs.all.iter().any(|s| s.target.kind.is_empty());
        self.by_previous_name.values().filter(|named| named.len() > 1).any(|named| {
            if any_kind {
                return true;
            }
            // The first candidate seen of each kind; a few kinds at most, so a list.
            let mut kinds: Vec<(&str, usize)> = Vec::new();
            named.iter().any(|&c| {
                facts[c].previous.iter().any(|(gvk, _)| match kinds.iter().find(|(kind, _)| *kind == gvk.kind) {
                    Some(&(_, first)) => first != c,
                    None => {
                        kinds.push((&gvk.kind, c));
                        false
                    }
                })
            })
        })
    }

    fn build(facts: &'a [Facts]) -> Index<'a> {
        let mut by_previous_name = FastHashMap::default();
        by_previous_name.reserve(facts.iter().filter(|f| !f.previous.is_empty()).count());
        let mut index = Index { by_previous_name, by_original_namespace: FastHashMap::default() };
        for (i, f) in facts.iter().enumerate() {
            // Each name once per resource; a resource had a few names at most.
            for (n, (_, name)) in f.previous.iter().enumerate() {
                if !f.previous[..n].iter().any(|(_, earlier)| earlier == name) {
                    index.by_previous_name.entry(name.as_str()).or_default().push(i);
                }
            }
            if let Some(ns) = &f.original_namespace {
                index.by_original_namespace.entry(ns.as_str()).or_default().push(i);
            }
        }
        index
    }
}

/// One referrer field spec of the table, with the kind it refers to and its split path.
struct ReferrerSpec<'t> {
    target: &'t Gvk,
    spec: &'t FieldSpec,
    parts: Vec<String>,
}

/// The table's referrer specs in table order, bucketed by the kind they select.
struct ReferrerSpecs<'t> {
    all: Vec<ReferrerSpec<'t>>,
    by_kind: FastHashMap<&'t str, Vec<usize>>,
    any_kind: Vec<usize>,
    /// The last field of every spec's path: a shared node under another key is never written.
    last_fields: FastHashSet<String>,
}

impl<'t> ReferrerSpecs<'t> {
    fn new(table: &'t [NameBackReference]) -> Self {
        let mut specs = ReferrerSpecs { all: Vec::new(), by_kind: FastHashMap::default(), any_kind: Vec::new(), last_fields: FastHashSet::default() };
        for back_reference in table {
            for spec in &back_reference.referrers {
                let position = specs.all.len();
                match spec.gvk.kind.as_str() {
                    "" => specs.any_kind.push(position),
                    kind => specs.by_kind.entry(kind).or_default().push(position),
                }
                let parts = spec.path_parts();
                specs.last_fields.extend(last_field_of(&parts));
                specs.all.push(ReferrerSpec { target: &back_reference.gvk, spec, parts });
            }
        }
        specs
    }

    /// The specs of kustomize's builtin table, made once per process (the many roots of one
    /// run each resolve with it), when `table` is that table.
    fn builtin(table: &[NameBackReference]) -> Option<&'static ReferrerSpecs<'static>> {
        let builtin = &FieldSpecTables::builtin().name_reference;
        if !std::ptr::eq(table, builtin.as_slice()) {
            return None;
        }
        static SPECS: std::sync::OnceLock<ReferrerSpecs<'static>> = std::sync::OnceLock::new();
        Some(SPECS.get_or_init(|| ReferrerSpecs::new(builtin)))
    }

    /// Whether any spec selects `gvk`.
    fn selects_any(&self, gvk: &Gvk) -> bool {
        let of_kind = self.by_kind.get(gvk.kind.as_str()).map(Vec::as_slice).unwrap_or(&[]);
        of_kind.iter().chain(&self.any_kind).any(|&p| gvk.is_selected_by(&self.all[p].spec.gvk))
    }

    /// The specs whose group/version/kind selects `gvk`, in table order.
    fn selecting(&self, gvk: &Gvk) -> Vec<usize> {
        let of_kind = self.by_kind.get(gvk.kind.as_str()).map(Vec::as_slice).unwrap_or(&[]);
        let mut positions: Vec<usize> = of_kind.iter().chain(&self.any_kind).copied().collect();
        positions.sort_unstable();
        positions.retain(|&p| gvk.is_selected_by(&self.all[p].spec.gvk));
        positions
    }
}

/// A resource whose fields may name others, and which resources it can name at all
/// (kustomize's `SubsetThatCouldBeReferencedByResource`).
struct Referrer {
    position: usize,
    /// Namespaces of the service accounts a RoleBinding's subjects name.
    role_binding_namespaces: FastHashSet<String>,
}

impl Referrer {
    fn new(position: usize, facts: &[Facts], value: &Value) -> Result<Referrer> {
        let me = &facts[position];
        let mut role_binding_namespaces = FastHashSet::default();
        if !me.cluster_scoped && me.gvk.kind == "RoleBinding" {
            for subject in value.get("subjects").and_then(Value::as_array).into_iter().flatten() {
                let (Some(namespace), Some(kind)) = (subject.get("namespace"), subject.get("kind")) else { continue };
                if kind.as_str() != Some("ServiceAccount") {
                    continue;
                }
                match namespace.as_str() {
                    Some(ns) => {
                        role_binding_namespaces.insert(ns.to_string());
                    }
                    None => {
                        return Err(Error::msg(format!(
                            "Invalid Input: namespace is blank for resource \"{}\"\n",
                            me.current_id()
                        )))
                    }
                }
            }
        }
        Ok(Referrer { position, role_binding_namespaces })
    }

    fn can_refer_to(&self, facts: &[Facts], candidate: usize) -> bool {
        let (me, other) = (&facts[self.position], &facts[candidate]);
        me.cluster_scoped
            || other.cluster_scoped
            || other.effective_namespace() == me.effective_namespace()
            || self.role_binding_namespaces.contains(&other.namespace)
    }
}

/// The group and kind a referrer's `roleRef` names, when it names both.
fn role_ref_gvk(value: &Value) -> Option<Gvk> {
    let role_ref = value.get("roleRef")?;
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    Some(Gvk { group: text(role_ref.get("apiGroup")?), version: String::new(), kind: text(role_ref.get("kind")?) })
}

/// Everything one field update consults.
struct Lookup<'a> {
    facts: &'a [Facts],
    index: &'a Index<'a>,
    referrer: &'a Referrer,
    target: &'a Gvk,
    role_ref: Option<Gvk>,
    /// The candidates left when a name matched several resources (the error's details).
    ambiguous: RefCell<Vec<usize>>,
}

/// Which current values make several remaining candidates interchangeable.
#[derive(Clone, Copy)]
enum SameWhen {
    Names,
    NamesAndNamespaces,
}

/// Walks `parts` in the referrer and rewrites every name found there.
fn update_field(value: &mut Value, parts: &[String], lookup: &Lookup) -> Result<()> {
    walk(value, parts, false, CreateKind::Nothing, &mut |node| update_node(node, lookup))
}

fn update_node(node: &mut Value, lookup: &Lookup) -> Result<()> {
    match node {
        Value::Null => Ok(()),
        Value::Object(_) => update_mapping(node, lookup),
        Value::Array(items) => items.iter_mut().try_for_each(|item| match item {
            Value::Null => Ok(()),
            Value::Object(_) => update_mapping(item, lookup),
            Value::Array(_) => Err(Error::msg(format!("{item} is expected to be either a string or a map of string"))),
            _ => update_scalar(item, lookup),
        }),
        _ => update_scalar(node, lookup),
    }
}

/// The text of a scalar as YAML wrote it.
fn scalar_text(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => String::new(),
    }
}

fn update_scalar(node: &mut Value, lookup: &Lookup) -> Result<()> {
    let old_name = scalar_text(node);
    let Some(referral) = select_referral(&old_name, lookup, |_| true, SameWhen::Names)? else { return Ok(()) };
    let new_name = &lookup.facts[referral].name;
    if *new_name != old_name {
        *node = Value::String(new_name.clone());
    }
    Ok(())
}

/// A `{name, namespace}` mapping (RoleBinding subjects, webhook services): both come from the
/// referral, and a namespace in the mapping narrows the candidates to that namespace.
fn update_mapping(node: &mut Value, lookup: &Lookup) -> Result<()> {
    let map = node.as_object_mut().expect("update_mapping is called on mappings");
    let old_name = match map.get("name") {
        Some(name) => scalar_text(name),
        None => return Err(Error::msg("path config error; no 'name' field in node")),
    };
    let in_namespace = namespace_filter(map.get("namespace").map(scalar_text), lookup);
    let Some(referral) = select_referral(&old_name, lookup, in_namespace, SameWhen::NamesAndNamespaces)? else {
        return Ok(());
    };
    let referral = &lookup.facts[referral];
    if referral.name == old_name && referral.namespace.is_empty() {
        return Ok(());
    }
    map.insert("name".into(), Value::String(referral.name.clone()));
    // An empty namespace is a wildcard here, not "default": it must not overwrite one.
    if !referral.namespace.is_empty() {
        map.insert("namespace".into(), Value::String(referral.namespace.clone()));
    }
    Ok(())
}

/// kustomize's `filterMapCandidatesByNamespace`: the resources whose original namespace is
/// `namespace` if the referrer can reach any, else those whose current namespace is.
fn namespace_filter<'a>(namespace: Option<String>, lookup: &'a Lookup) -> impl Fn(usize) -> bool + 'a {
    let facts = lookup.facts;
    let rule = namespace.map(|ns| {
        let reachable = |c: &usize| lookup.referrer.can_refer_to(facts, *c);
        let by_original = lookup.index.by_original_namespace.get(ns.as_str()).is_some_and(|l| l.iter().any(reachable));
        (ns, by_original)
    });
    move |c| match &rule {
        None => true,
        Some((ns, true)) => facts[c].original_namespace.as_ref() == Some(ns),
        Some((ns, false)) => !facts[c].cluster_scoped && facts[c].effective_namespace() == ns,
    }
}

/// kustomize's `selectReferral`: the one resource `old_name` refers to, if any.
fn select_referral(
    old_name: &str,
    lookup: &Lookup,
    also: impl Fn(usize) -> bool,
    same_when: SameWhen,
) -> Result<Option<usize>> {
    let facts = lookup.facts;
    let me = &facts[lookup.referrer.position];
    let was_of_kind = |c: usize, gvk: &Gvk| facts[c].previous.iter().any(|(g, _)| g.is_selected_by(gvk));
    let same_namespace_as_referrer = |c: usize| {
        let other = &facts[c];
        me.cluster_scoped
            || other.cluster_scoped
            || other.gvk.kind == "ServiceAccount"
            || other.effective_namespace() == me.effective_namespace()
    };
    let mut candidates: Vec<usize> = lookup
        .index
        .by_previous_name
        .get(old_name)
        .into_iter()
        .flatten()
        .copied()
        .filter(|&c| lookup.referrer.can_refer_to(facts, c) && also(c))
        .filter(|&c| was_of_kind(c, lookup.target))
        .filter(|&c| lookup.role_ref.as_ref().is_none_or(|gvk| was_of_kind(c, gvk)))
        .filter(|&c| same_namespace_as_referrer(c))
        .collect();
    for allow_empty in [true, false] {
        if candidates.len() == 1 {
            return Ok(Some(candidates[0]));
        }
        candidates.retain(|&c| affixes_agree(&facts[c], me, allow_empty));
    }
    match candidates.as_slice() {
        [] => Ok(None),
        [only] => Ok(Some(*only)),
        [first, rest @ ..] => {
            let same = |c: &usize| {
                facts[*c].name == facts[*first].name
                    && (matches!(same_when, SameWhen::Names) || facts[*c].namespace == facts[*first].namespace)
            };
            if rest.iter().all(same) {
                return Ok(Some(*first));
            }
            let ids: Vec<String> = candidates.iter().map(|&c| facts[c].current_id()).collect();
            let message = format!("found multiple possible referrals: {}", ids.join(", "));
            *lookup.ambiguous.borrow_mut() = candidates;
            Err(Error::msg(message))
        }
    }
}

/// kustomize's dump of the referrer and the candidates after a "multiple possible referrals"
/// error, each with the build annotations kustomize keeps on resources during a build.
fn failure_details(resources: &ResMap, referrer: usize, referrer_value: &Value, candidates: &[usize], tracks_origins: bool) -> String {
    let dump = |i: usize| {
        let value = if i == referrer { referrer_value } else { &resources.get(i).value };
        let mut out = String::new();
        crate::yaml::emit::emit_document(&crate::build_metadata::with_build_annotations(resources.get(i), value, tracks_origins), &mut out);
        out
    };
    let mut details = format!("\n**** Too many possible referral targets to referrer:\n{}\n", dump(referrer));
    for (n, &c) in candidates.iter().enumerate() {
        details.push_str(&format!("--- possible referral {n}:\n{}\n", dump(c)));
    }
    details
}

/// kustomize's `PrefixesSuffixesEquals`: the innermost prefixes and suffixes agree; with
/// `allow_empty`, a side without any prefixes (or suffixes) agrees with anything.
fn affixes_agree(candidate: &Facts, referrer: &Facts, allow_empty: bool) -> bool {
    let agree = |a: &[String], b: &[String]| (allow_empty && (a.is_empty() || b.is_empty())) || same_ending(a, b);
    agree(&candidate.prefixes, &referrer.prefixes) && agree(&candidate.suffixes, &referrer.suffixes)
}

/// kustomize's `SameEndingSubSlice`: the shorter list is the tail of the longer one; an empty
/// list only matches an empty list.
fn same_ending(a: &[String], b: &[String]) -> bool {
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    if short.is_empty() {
        return long.is_empty();
    }
    long.ends_with(short)
}

/// Whether kustomize knows `gvk` as cluster-scoped; kinds it does not know count as namespaced.
fn is_cluster_scoped(gvk: &Gvk) -> bool {
    !is_namespaced(&gvk.api_version(), &gvk.kind)
}

#[cfg(test)]
mod tests {
    //! Each test builds the resources as kustomize's transformers leave them just before name
    //! references are fixed (renamed, with their previous ids, prefixes and suffixes), and checks
    //! the referrers against `kustomize build` (kubectl v1.33, kustomize v5.6.0) of the equivalent
    //! kustomization, quoted in each test.
    use super::*;
    use crate::transform::fieldspec_tables::FieldSpecTables;
    use pretty_assertions::assert_eq;
    use serde_json::json;

    fn builtin() -> &'static [NameBackReference] {
        &FieldSpecTables::builtin().name_reference
    }

    /// The prefix/suffix transformer: remembers the id, renames, records the affixes.
    fn affix(resource: &mut Resource, prefix: &str, suffix: &str) {
        resource.store_previous_id();
        let name = format!("{prefix}{}{suffix}", resource.name());
        resource.metadata_mut().insert("name".into(), json!(name));
        if !prefix.is_empty() {
            resource.prefixes.push(prefix.into());
        }
        if !suffix.is_empty() {
            resource.suffixes.push(suffix.into());
        }
    }

    /// The namespace transformer: remembers every id, moves the namespaced ones.
    fn into_namespace(resource: &mut Resource, namespace: &str) {
        resource.store_previous_id();
        if !is_cluster_scoped(&resource.gvk()) {
            resource.metadata_mut().insert("namespace".into(), json!(namespace));
        }
    }

    fn resmap(values: Vec<Value>, transform: impl Fn(&mut Resource)) -> ResMap {
        ResMap::from_vec(
            values
                .into_iter()
                .map(|v| {
                    let mut r = Resource::new(v);
                    transform(&mut r);
                    r
                })
                .collect(),
        )
    }

    fn resolved(mut resources: ResMap) -> Vec<Value> {
        resolve_name_references(&mut resources, builtin(), false).unwrap();
        resources.into_vec().into_iter().map(|r| r.value).collect()
    }

    #[test]
    fn prefixed_names_are_followed_in_pod_templates_and_scale_targets() {
        // namePrefix: p-, a Deployment using a ConfigMap and a Secret in every builtin way, and
        // an HPA scaling it. "other" and "missing" name nothing that was renamed: untouched.
        let out = resolved(resmap(
            vec![
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}),
                json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "sec"}}),
                json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {"template": {"spec": {
                    "imagePullSecrets": [{"name": "sec"}, {"name": "other"}],
                    "containers": [{"name": "c",
                        "envFrom": [{"configMapRef": {"name": "cm"}}, {"secretRef": {"name": "sec"}}],
                        "env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "k"}}}]}],
                    "volumes": [
                        {"name": "v", "projected": {"sources": [{"configMap": {"name": "cm"}}, {"secret": {"name": "sec"}}]}},
                        {"name": "w", "configMap": {"name": "missing"}}]}}}}),
                json!({"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "hpa"},
                    "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}}),
            ],
            |r| affix(r, "p-", ""),
        ));
        assert_eq!(
            out[2]["spec"]["template"]["spec"],
            json!({
                "imagePullSecrets": [{"name": "p-sec"}, {"name": "other"}],
                "containers": [{"name": "c",
                    "envFrom": [{"configMapRef": {"name": "p-cm"}}, {"secretRef": {"name": "p-sec"}}],
                    "env": [{"name": "X", "valueFrom": {"configMapKeyRef": {"name": "p-cm", "key": "k"}}}]}],
                "volumes": [
                    {"name": "v", "projected": {"sources": [{"configMap": {"name": "p-cm"}}, {"secret": {"name": "p-sec"}}]}},
                    {"name": "w", "configMap": {"name": "missing"}}]})
        );
        assert_eq!(out[3]["spec"]["scaleTargetRef"]["name"], json!("p-web"));
    }

    #[test]
    fn only_renamed_and_reachable_resources_are_candidates() {
        // base: namePrefix b-, ConfigMaps cm (namespace other) and local; top: a ConfigMap plain
        // and a Pod naming all three. cm is in another namespace, plain was never renamed; the
        // Pod's missing prefix does not matter when one candidate is left.
        let mut resources = resmap(
            vec![
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "other"}}),
                json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "local"}}),
            ],
            |r| affix(r, "b-", ""),
        )
        .into_vec();
        resources.push(Resource::new(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "plain"}})));
        resources.push(Resource::new(
            json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pod"}, "spec": {"volumes": [
            {"name": "a", "configMap": {"name": "cm"}},
            {"name": "b", "configMap": {"name": "local"}},
            {"name": "c", "configMap": {"name": "plain"}}]}}),
        ));
        let out = resolved(ResMap::from_vec(resources));
        let names: Vec<&Value> =
            out[3]["spec"]["volumes"].as_array().unwrap().iter().map(|v| &v["configMap"]["name"]).collect();
        assert_eq!(names, vec!["cm", "b-local", "plain"]);
    }

    #[test]
    fn role_binding_reaches_service_accounts_of_its_subjects_namespaces() {
        // conformance rolebindingacrossnamespace TestRoleBindingAcrossNamespace: nameSuffix -ns2;
        // subjects in other namespaces follow their service accounts, a subject whose kind is
        // not a ServiceAccount resource keeps its name.
        let out = resolved(resmap(
            vec![
                json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "my-sa1", "namespace": "ns1"}}),
                json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "my-sa2", "namespace": "ns2"}}),
                json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "my-sa3", "namespace": "ns3"}}),
                json!({"apiVersion": "v1", "kind": "NotServiceAccount", "metadata": {"name": "my-nsa", "namespace": "ns1"}}),
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "my-role", "namespace": "ns2"}}),
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                    "metadata": {"name": "my-role-binding", "namespace": "ns2"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "my-role"},
                    "subjects": [
                        {"kind": "ServiceAccount", "name": "my-sa1", "namespace": "ns1"},
                        {"kind": "ServiceAccount", "name": "my-sa2", "namespace": "ns2"},
                        {"kind": "ServiceAccount", "name": "my-sa3", "namespace": "ns3"},
                        {"kind": "NotServiceAccount", "name": "my-nsa", "namespace": "ns1"}]}),
            ],
            |r| affix(r, "", "-ns2"),
        ));
        assert_eq!(out[5]["roleRef"]["name"], json!("my-role-ns2"));
        assert_eq!(
            out[5]["subjects"],
            json!([
                {"kind": "ServiceAccount", "name": "my-sa1-ns2", "namespace": "ns1"},
                {"kind": "ServiceAccount", "name": "my-sa2-ns2", "namespace": "ns2"},
                {"kind": "ServiceAccount", "name": "my-sa3-ns2", "namespace": "ns3"},
                {"kind": "NotServiceAccount", "name": "my-nsa", "namespace": "ns1"}])
        );
    }

    #[test]
    fn role_ref_follows_the_kind_it_names() {
        // conformance nameupdateinroleref TestNameUpdateInRoleRef: namespace foo, and a patch
        // renaming the ClusterRole my-role (not the Role my-role) to prefix_my-role.
        let mut resources = resmap(
            vec![
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "my-role"}}),
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "my-role"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "my-role"},
                    "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "foo"}]}),
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "my-role"}}),
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "my-role"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "version": "v1", "kind": "Role", "name": "my-role"},
                    "subjects": [{"kind": "ServiceAccount", "name": "default"}]}),
            ],
            |_| {},
        );
        resources.get_mut(0).set_name("prefix_my-role");
        resources
            .for_each_mut(|r| -> Result<()> {
                into_namespace(r, "foo");
                Ok(())
            })
            .unwrap();
        let out = resolved(resources);
        assert_eq!(out[1]["roleRef"]["name"], json!("prefix_my-role"));
        assert_eq!(out[3]["roleRef"]["name"], json!("my-role"));
        // No ServiceAccount "default" among the resources: the subjects stay as they are.
        assert_eq!(out[3]["subjects"], json!([{"kind": "ServiceAccount", "name": "default"}]));
    }

    #[test]
    fn mapping_references_take_the_referral_namespace() {
        // namespace: foo, namePrefix: p-; a ClusterRoleBinding subject without namespace and
        // webhook services (with and without namespace) get name and namespace; a subject in
        // a namespace where nothing was renamed stays.
        let out = resolved(resmap(
            vec![
                json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}}),
                json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc"}}),
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "crb"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
                    "subjects": [
                        {"kind": "ServiceAccount", "name": "sa"},
                        {"kind": "ServiceAccount", "name": "sa", "namespace": "elsewhere"},
                        {"kind": "User", "name": "alice"}]}),
                json!({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
                    "metadata": {"name": "vwc"}, "webhooks": [
                        {"name": "a.example.com", "clientConfig": {"service": {"name": "svc", "namespace": "default", "path": "/validate"}}},
                        {"name": "b.example.com", "clientConfig": {"service": {"name": "svc"}}}]}),
                json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}}),
                // The namespace transformer already moved this subject (named "default") to foo,
                // where nothing was originally: the current namespace decides.
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding", "metadata": {"name": "crb2"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "view"},
                    "subjects": [{"kind": "ServiceAccount", "name": "default", "namespace": "foo"}]}),
            ],
            |r| {
                into_namespace(r, "foo");
                affix(r, "p-", "");
            },
        ));
        assert_eq!(
            out[2]["subjects"],
            json!([
                {"kind": "ServiceAccount", "name": "p-sa", "namespace": "foo"},
                {"kind": "ServiceAccount", "name": "sa", "namespace": "elsewhere"},
                {"kind": "User", "name": "alice"}])
        );
        assert_eq!(
            out[3]["webhooks"],
            json!([
                {"name": "a.example.com", "clientConfig": {"service": {"name": "p-svc", "namespace": "foo", "path": "/validate"}}},
                {"name": "b.example.com", "clientConfig": {"service": {"name": "p-svc", "namespace": "foo"}}}])
        );
        assert_eq!(out[5]["subjects"], json!([{"kind": "ServiceAccount", "name": "p-default", "namespace": "foo"}]));
    }

    #[test]
    fn subjects_of_any_kind_follow_a_renamed_service_account() {
        // namePrefix: p-; kustomize matches subjects by name only, so User and Group subjects
        // named like the service account are renamed too.
        let out = resolved(resmap(
            vec![
                json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}}),
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "rb"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "r"},
                    "subjects": [
                        {"kind": "User", "name": "sa"},
                        {"kind": "Group", "name": "sa", "namespace": "default"},
                        {"kind": "ServiceAccount", "name": "sa"}]}),
            ],
            |r| affix(r, "p-", ""),
        ));
        assert_eq!(
            out[1]["subjects"],
            json!([
                {"kind": "User", "name": "p-sa"},
                {"kind": "Group", "name": "p-sa", "namespace": "default"},
                {"kind": "ServiceAccount", "name": "p-sa"}])
        );
        assert_eq!(out[1]["roleRef"]["name"], json!("r"));
    }

    #[test]
    fn candidates_whose_affixes_agree_with_the_referrer_win() {
        // Bases: b1 (namePrefix a-) and b2 (nameSuffix -s) each with ConfigMap cm; b3 (namePrefix
        // r-) a Pod using cm. Ignoring empty affixes, only cm-s agrees with the Pod's r- prefix.
        let mut resources = Vec::new();
        for (prefix, suffix) in [("a-", ""), ("", "-s")] {
            let mut cm = Resource::new(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}));
            affix(&mut cm, prefix, suffix);
            resources.push(cm);
        }
        let mut pod = Resource::new(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
            "spec": {"volumes": [{"name": "v", "configMap": {"name": "cm"}}]}}));
        affix(&mut pod, "r-", "");
        resources.push(pod);
        let out = resolved(ResMap::from_vec(resources.clone()));
        assert_eq!(out[2]["spec"]["volumes"][0]["configMap"]["name"], json!("cm-s"));
        // Empty affixes recorded by a transformer run with only a prefix (or a suffix) are not
        // affixes: kustomize never records them.
        let mut padded = resources.clone();
        for r in &mut padded {
            r.prefixes.push(String::new());
            r.suffixes.insert(0, String::new());
        }
        let out = resolved(ResMap::from_vec(padded));
        assert_eq!(out[2]["spec"]["volumes"][0]["configMap"]["name"], json!("cm-s"));

        // The same with b2 using namePrefix b- and b3 no prefix: both candidates agree while
        // empty affixes count as wildcards, neither agrees exactly: the reference stays.
        let mut second = Resource::new(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}));
        affix(&mut second, "b-", "");
        resources[1] = second;
        resources[2].prefixes.clear();
        let out = resolved(ResMap::from_vec(resources));
        assert_eq!(out[2]["spec"]["volumes"][0]["configMap"]["name"], json!("cm"));
    }

    #[test]
    fn several_candidates_with_one_name_are_one_referral() {
        // Bases a and b (namespaces a and b) each with Secret s; top: namePrefix p-, a ClusterRole
        // naming s in resourceNames and an Ingress in namespace a naming s in its TLS section
        // and in an annotation field spec (escaped slash in its path).
        let mut resources = Vec::new();
        for ns in ["a", "b"] {
            let mut s = Resource::new(json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}}));
            into_namespace(&mut s, ns);
            resources.push(s);
        }
        resources.push(Resource::new(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "cr"},
            "rules": [{"apiGroups": [""], "resources": ["secrets"], "resourceNames": ["s", "t"], "verbs": ["get"]}]})));
        resources.push(Resource::new(json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress",
            "metadata": {"name": "ing", "namespace": "a", "annotations": {
                "nginx.ingress.kubernetes.io/auth-secret": "s", "ingress.kubernetes.io/auth-secret": "nope"}},
            "spec": {"tls": [{"secretName": "s"}]}})));
        for r in &mut resources {
            affix(r, "p-", "");
        }
        let out = resolved(ResMap::from_vec(resources));
        assert_eq!(out[2]["rules"][0]["resourceNames"], json!(["p-s", "t"]));
        assert_eq!(out[3]["spec"]["tls"], json!([{"secretName": "p-s"}]));
        assert_eq!(
            out[3]["metadata"]["annotations"],
            json!({"nginx.ingress.kubernetes.io/auth-secret": "p-s", "ingress.kubernetes.io/auth-secret": "nope"})
        );
    }

    #[test]
    fn several_candidates_with_different_names_are_an_error() {
        // Bases a and b (namespaces a and b) each generating ConfigMap cm with other data (so
        // other hash suffixes); a ClusterRole naming cm. kustomize:
        //   ... found multiple possible referrals: ConfigMap.v1.[noGrp]/cm-h86gkk55b9.a,
        //   ConfigMap.v1.[noGrp]/cm-7dhtbt57df.b
        let mut resources = Vec::new();
        for (ns, hash) in [("a", "h86gkk55b9"), ("b", "7dhtbt57df")] {
            let mut cm = Resource::new(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"}}));
            into_namespace(&mut cm, ns);
            cm.set_name(&format!("cm-{hash}"));
            resources.push(cm);
        }
        resources.push(Resource::new(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "cr"}, "rules": [{"resourceNames": ["cm"], "verbs": ["get"]}]})));
        let err = resolve_name_references(&mut ResMap::from_vec(resources), builtin(), false).unwrap_err().to_string();
        assert!(
            err.starts_with(
                "updating name reference in 'rules/resourceNames' field of 'ClusterRole.v1.rbac.authorization.k8s.io/cr.[noNs]': \
                 considering field 'rules/resourceNames' of object ClusterRole.v1.rbac.authorization.k8s.io/cr.[noNs]: "
            ),
            "{err}"
        );
        let (message, details) = err.split_once('\n').unwrap();
        assert!(
            message.ends_with(
                "found multiple possible referrals: ConfigMap.v1.[noGrp]/cm-h86gkk55b9.a, ConfigMap.v1.[noGrp]/cm-7dhtbt57df.b"
            ),
            "{err}"
        );
        // Then the referrer and the candidates, with the build annotations kustomize shows.
        assert!(
            details.starts_with("\n**** Too many possible referral targets to referrer:\napiVersion: rbac"),
            "{err}"
        );
        assert!(details.contains("\n--- possible referral 1:\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  annotations:\n    internal.config.kubernetes.io/previousKinds: ConfigMap,ConfigMap\n    internal.config.kubernetes.io/previousNames: cm,cm\n    internal.config.kubernetes.io/previousNamespaces: default,b\n  name: cm-7dhtbt57df\n  namespace: b\n"), "{err}");
    }

    #[test]
    fn subjects_in_two_namespaces_are_an_error_for_a_cluster_role_binding() {
        // conformance namedspacedserviceaccounts TestNamedspacedServiceAccountsWithOverlap: bases
        // a and b (namespaces a and b) each with ServiceAccount sa and a ClusterRoleBinding whose
        // subject names sa without namespace.
        let mut resources = Vec::new();
        for ns in ["a", "b"] {
            resources
                .push(Resource::new(json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "sa"}})));
            resources.push(Resource::new(
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
                "metadata": {"name": format!("crb-{ns}")},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": format!("cr-{ns}")},
                "subjects": [{"kind": "ServiceAccount", "name": "sa"}]}),
            ));
            for r in resources.iter_mut().rev().take(2) {
                into_namespace(r, ns);
            }
        }
        let err = resolve_name_references(&mut ResMap::from_vec(resources), builtin(), false).unwrap_err().to_string();
        assert!(err.starts_with("updating name reference in 'subjects' field of 'ClusterRoleBinding.v1.rbac.authorization.k8s.io/crb-a.[noNs]'"), "{err}");
        assert!(
            err.lines().next().unwrap().ends_with(
                "found multiple possible referrals: ServiceAccount.v1.[noGrp]/sa.a, ServiceAccount.v1.[noGrp]/sa.b"
            ),
            "{err}"
        );
    }

    #[test]
    fn role_binding_service_account_subject_without_namespace_value_is_an_error() {
        // conformance blankvalues TestBlankNamespace4240: `namespace:` left empty.
        let mut resources = resmap(
            vec![
                json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "test"}}),
                json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding", "metadata": {"name": "test"},
                    "subjects": [{"kind": "ServiceAccount", "name": "test", "namespace": null}],
                    "roleRef": {"kind": "Role", "name": "test", "apiGroup": "rbac.authorization.k8s.io"}}),
            ],
            |_| {},
        );
        let err = resolve_name_references(&mut resources, builtin(), false).unwrap_err().to_string();
        assert_eq!(
            err,
            "Invalid Input: namespace is blank for resource \"RoleBinding.v1.rbac.authorization.k8s.io/test.[noNs]\"\n"
        );
    }

    #[test]
    fn a_resource_may_name_itself() {
        // conformance namereference TestIssue4682_NameReferencesToSelfInAnnotations: namespace
        // newNs (the Namespace oldNs is renamed by it), nameSuffix -updated (not on Namespaces),
        // and a configuration naming both from ConfigMap data and annotations.
        let config = json!({"nameReference": [
            {"kind": "Namespace", "fieldSpecs": [
                {"path": "data/theNamespace", "kind": "ConfigMap", "version": "v1"},
                {"path": "metadata/annotations/theNamespace", "kind": "ConfigMap", "version": "v1"},
                {"path": "metadata/annotations/theNamespace", "kind": "Namespace", "version": "v1"}]},
            {"kind": "ConfigMap", "fieldSpecs": [
                {"path": "data/theConfigMap", "kind": "ConfigMap", "version": "v1"},
                {"path": "metadata/annotations/theConfigMap", "kind": "ConfigMap", "version": "v1"},
                {"path": "metadata/annotations/theConfigMap", "kind": "Namespace", "version": "v1"}]}]});
        let mut tables = FieldSpecTables::builtin().clone();
        tables.merge(FieldSpecTables::from_config_value(&config).unwrap()).unwrap();
        let refs = json!({"theConfigMap": "cm", "theNamespace": "oldNs"});
        let mut cm = Resource::new(json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"annotations": refs, "name": "cm", "namespace": "oldNs"}, "data": refs}));
        let mut ns = Resource::new(
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"annotations": refs, "name": "oldNs"}}),
        );
        into_namespace(&mut cm, "newNs");
        ns.store_previous_id();
        ns.metadata_mut().insert("name".into(), json!("newNs"));
        affix(&mut cm, "", "-updated");
        let mut resources = ResMap::from_vec(vec![cm, ns]);
        resolve_name_references(&mut resources, &tables.name_reference, false).unwrap();
        let updated = json!({"theConfigMap": "cm-updated", "theNamespace": "newNs"});
        assert_eq!(resources.get(0).value["data"], updated);
        assert_eq!(resources.get(0).value["metadata"]["annotations"], updated);
        assert_eq!(resources.get(1).value["metadata"]["annotations"], updated);
    }

    #[test]
    fn affix_lists_agree_on_their_common_ending() {
        let l = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert!(same_ending(&l(&["a", "b"]), &l(&["b"])));
        assert!(!same_ending(&l(&["a", "b"]), &l(&["a"])));
        assert!(same_ending(&l(&[]), &l(&[])));
        assert!(!same_ending(&l(&[]), &l(&["a"])));
    }
}
