//! kustomize's deprecated `vars`: `$(NAME)` in the varReference fields replaced by a field of
//! another resource, once, at the top of the build (after hash suffixes and name references).
//!
//! As kustomize v5.6.0 (`ResAccumulator.MergeVars`/`ResolveVars`, `filters/refvar`):
//!
//! * a var names its resource by the resource's *original* id; without a namespace (and for
//!   namespaced kinds) the namespace is not compared, and two matches are an error;
//! * the value is read with kyaml's `GetFieldValue` (`a.b[0].c` or `a.b.0.c`) and keeps its
//!   type: a string that is exactly `$(NAME)` becomes that number or boolean; inside a longer
//!   string the value is printed as Go's `%v` prints it; maps and lists are not substituted;
//! * `$$` is a literal `$`, unknown `$(X)` stay as they are;
//! * only strings are expanded: scalars, the string values of maps, and lists, whose items must
//!   all be strings.
use serde_json::Value;

use super::fieldspec::FieldSpec;
use super::path::{field_spec_part, split_field_spec_path, split_var_field_path};
use super::replacements::{gvk_string, lookup, res_id_string, stringify_annotations, GoJson};
use crate::error::{Error, Result};
use crate::resource::{Gvk, ResId, ResMap, Resource, Step};

/// Where `merge_vars` records the resource a var was bound to: the ids that resource had then,
/// which stay a prefix of its id history. (NUL cannot appear in a YAML key.)
const BOUND_KEY: &str = "\u{0}boundTo";

/// kustomize's `ResAccumulator.MergeVars`, for one kustomization after its transformers ran:
/// binds each of its `vars` to the one resource (of that kustomization's tree) whose original id
/// it names, refuses names already taken, and appends the bound vars to `accumulated`.
pub fn merge_vars(resources: &ResMap, accumulated: &mut Vec<Value>, incoming: &[Value]) -> Result<()> {
    let parsed: Vec<Var> = incoming.iter().map(Var::from_value).collect::<Result<_>>()?;
    let context = || {
        let all: Vec<String> = parsed.iter().map(Var::describe_raw).collect();
        format!("merging vars [{}]", all.join(" "))
    };
    let mut bound = Vec::with_capacity(incoming.len());
    for (v, value) in parsed.iter().zip(incoming) {
        let matched = v.matching(resources).map_err(|e| Error::msg(format!("{}: {e}", context())))?;
        let history = match matched {
            Some(i) => Value::Array(resources.get(i).all_ids().iter().map(id_value).collect()),
            None => Value::Null,
        };
        let mut value = value.clone();
        if let Some(obj) = value.as_object_mut() {
            obj.insert(BOUND_KEY.into(), history);
        }
        bound.push(value);
    }
    for (i, v) in parsed.iter().enumerate() {
        let name = Some(v.name.as_str());
        let taken = accumulated.iter().chain(&incoming[..i]).any(|o| o.get("name").and_then(Value::as_str) == name);
        if taken {
            return Err(Error::msg(format!("{}: var '{}' already encountered", context(), v.name)));
        }
    }
    accumulated.extend(bound);
    Ok(())
}

/// The resource whose id history starts with the one recorded when its var was bound; failing
/// that (an id changed without being remembered), the only one with the same original id.
fn bound_resource(resources: &ResMap, history: &[Value]) -> Option<usize> {
    let histories: Vec<Vec<Value>> = resources.iter().map(|r| r.all_ids().iter().map(id_value).collect()).collect();
    if let Some(i) = histories.iter().position(|ids| ids.starts_with(history)) {
        return Some(i);
    }
    let same_origin: Vec<usize> = (0..histories.len()).filter(|&i| histories[i].first() == history.first()).collect();
    match same_origin.as_slice() {
        [one] => Some(*one),
        _ => None,
    }
}

fn id_value(id: &ResId) -> Value {
    Value::Array([&id.gvk.group, &id.gvk.version, &id.gvk.kind, &id.name, &id.namespace].map(|s| Value::String(s.clone())).to_vec())
}

/// Resolves the vars of the whole build in the fields of `var_reference`. Vars bound by
/// `merge_vars` use that binding; others are bound here, against every resource.
pub fn resolve_vars(resources: &mut ResMap, vars: &[Value], var_reference: &[FieldSpec]) -> Result<()> {
    if vars.is_empty() {
        return Ok(());
    }
    let parsed: Vec<Var> = vars.iter().map(Var::from_value).collect::<Result<_>>()?;
    let mut targets = Vec::with_capacity(vars.len());
    for (v, value) in parsed.iter().zip(vars) {
        let target = match value.get(BOUND_KEY) {
            Some(Value::Array(history)) => bound_resource(resources, history),
            Some(_) => None,
            None => v.matching(resources).map_err(|e| {
                let all: Vec<String> = parsed.iter().map(Var::describe_raw).collect();
                Error::msg(format!("merging vars [{}]: {e}", all.join(" ")))
            })?,
        };
        targets.push(target);
    }
    let vars = parsed;

    // makeVarReplacementMap: in name order, each var's value from its resource.
    let mut order: Vec<usize> = (0..vars.len()).collect();
    order.sort_by(|&a, &b| vars[a].name.cmp(&vars[b].name));
    let mut table: Vec<(String, VarValue)> = Vec::new();
    for i in order {
        let v = &vars[i];
        let Some(index) = targets[i] else {
            return Err(Error::msg(format!(
                "var '{}' cannot be mapped to a field in the set of known resources",
                v.describe(true)
            )));
        };
        let value = field_value(&resources.get(index).value, v.field_path()).ok_or_else(|| {
            Error::msg(format!("field specified in var '{}' not found in corresponding resource", v.describe(true)))
        })?;
        table.push((v.name.clone(), value));
    }
    let mapping = |name: &str| table.iter().find(|(n, _)| n == name).map(|(_, v)| v);

    resources.for_each_mut(|r| {
        let id = r.current_id();
        let api_version = r.api_version().to_string();
        let kind = r.kind().to_string();
        for spec in var_reference.iter().filter(|s| s.applies_to(&api_version, &kind)) {
            let parts = split_field_spec_path(&spec.path);
            // kustomize retypes every string-like scalar it visits, untagged ones as strings.
            let Resource { value, nodes, .. } = &mut *r;
            nodes.type_untagged_as_strings(value, |path| spec_path_reaches(&parts, path));
            r.write(|value| walk(value, &parts, &mapping)).map_err(|e| {
                Error::msg(format!("considering field '{}' of object {}: {e}", spec.path, res_id_string(&id)))
            })?;
        }
        Ok::<(), Error>(())
    })?;
    stringify_annotations(resources);
    Ok(())
}

/// One `vars` entry (`types.Var`).
#[derive(Clone, Debug, Default, PartialEq)]
struct Var {
    name: String,
    api_version: String,
    /// The inline group/version/kind of the objref, as written.
    gvk: Gvk,
    obj_name: String,
    namespace: String,
    field_path: String,
}

impl Var {
    /// Decodes an entry as kustomize decodes the Kustomization (strict, case-insensitive names).
    fn from_value(v: &Value) -> Result<Var> {
        let d = GoJson { strict: true, prefix: "vars.".into() };
        let mut var = Var::default();
        let decoded = match v {
            Value::Null => Ok(()),
            Value::Object(obj) => d.fields(obj, &["name", "objref", "fieldref", BOUND_KEY], |i, value| match (i, value) {
                (0, _) => d.string(value, &mut var.name, "Var", "name"),
                (_, Value::Null) => Ok(()),
                (1, Value::Object(objref)) => {
                    const NAMES: [&str; 6] = ["apiVersion", "group", "version", "kind", "name", "namespace"];
                    d.fields(objref, &NAMES, |j, value| {
                        let (slot, path) = match j {
                            0 => (&mut var.api_version, "objref.apiVersion"),
                            1 => (&mut var.gvk.group, "objref.Gvk.group"),
                            2 => (&mut var.gvk.version, "objref.Gvk.version"),
                            3 => (&mut var.gvk.kind, "objref.Gvk.kind"),
                            4 => (&mut var.obj_name, "objref.name"),
                            _ => (&mut var.namespace, "objref.namespace"),
                        };
                        d.string(value, slot, "Target", path)
                    })
                }
                (1, other) => Err(d.type_error(other, "Var", "objref", "types.Target")),
                (3, _) => Ok(()),
                (_, Value::Object(fieldref)) => d.fields(fieldref, &["fieldPath"], |_, value| {
                    d.string(value, &mut var.field_path, "FieldSelector", "fieldref.fieldPath")
                }),
                (_, other) => Err(d.type_error(other, "Var", "fieldref", "types.FieldSelector")),
            }),
            other => Err(format!(
                "json: cannot unmarshal {} into Go struct field Kustomization.vars of type types.Var",
                if other.is_number() { "number" } else if other.is_string() { "string" } else if other.is_array() { "array" } else { "bool" }
            )),
        };
        decoded.map_err(|e| Error::msg(format!("invalid Kustomization: {e}")))?;
        Ok(var)
    }

    /// `Target.GVK`: the apiVersion, when set, overrides group and version.
    fn target_gvk(&self) -> Gvk {
        let mut gvk = self.gvk.clone();
        if !self.api_version.is_empty() {
            let parts: Vec<&str> = self.api_version.split('/').collect();
            match parts.as_slice() {
                [group, version] => {
                    gvk.group = group.to_string();
                    gvk.version = version.to_string();
                }
                [version] => gvk.version = version.to_string(),
                _ => {}
            }
        }
        gvk
    }

    fn field_path(&self) -> &str {
        if self.field_path.is_empty() {
            "metadata.name"
        } else {
            &self.field_path
        }
    }

    /// The one resource whose original id the var names, if any; more than one is an error.
    fn matching(&self, resources: &ResMap) -> std::result::Result<Option<usize>, String> {
        let matched: Vec<usize> =
            resources.iter().enumerate().filter(|(_, r)| self.names(&r.original_id())).map(|(i, _)| i).collect();
        if matched.len() > 1 {
            return Err(format!(
                "found {} resId matches for var {} (unable to disambiguate)",
                matched.len(),
                self.describe(false)
            ));
        }
        Ok(matched.first().copied())
    }

    /// Whether the var's objref names the resource whose original id is `id`: same group,
    /// version, kind and name, and the same effective namespace when the objref gives one. (The
    /// objref's kind is taken as namespaced whatever it is, as kustomize builds it without its
    /// scope; so a namespace never names a cluster-scoped resource.)
    fn names(&self, id: &ResId) -> bool {
        let gvkn = self.target_gvk() == id.gvk && self.obj_name == id.name;
        gvkn && (self.namespace.is_empty() || self.namespace == id.effective_namespace())
    }

    /// Go's `%v` of the var as written.
    fn describe_raw(&self) -> String {
        format!("{{{} {} {{{}}}}}", self.name, gvk_string(&self.gvk), self.field_path)
    }

    /// Go's `%v` of the var once its objref's apiVersion is applied (and its field path defaulted).
    fn describe(&self, defaulted: bool) -> String {
        let path = if defaulted { self.field_path() } else { &self.field_path };
        format!("{{{} {} {{{path}}}}}", self.name, gvk_string(&self.target_gvk()))
    }
}

/// A var's value, as kyaml's `GetFieldValue` types it.
#[derive(Clone, Debug, PartialEq)]
enum VarValue {
    Str(String),
    Int(i64),
    Float(f64),
    Bool(bool),
    /// A map or list: never substituted.
    Complex,
}

impl VarValue {
    /// Go's `%v`.
    fn to_text(&self) -> String {
        match self {
            VarValue::Str(s) => s.clone(),
            VarValue::Int(i) => i.to_string(),
            VarValue::Float(f) => go_format_g(*f),
            VarValue::Bool(b) => b.to_string(),
            VarValue::Complex => String::new(),
        }
    }

    fn to_value(&self) -> Value {
        match self {
            VarValue::Str(s) => Value::String(s.clone()),
            VarValue::Int(i) => Value::from(*i),
            VarValue::Float(f) => serde_json::Number::from_f64(*f).map(Value::Number).unwrap_or_else(|| Value::String(go_format_g(*f))),
            VarValue::Bool(b) => Value::Bool(*b),
            VarValue::Complex => Value::Null,
        }
    }
}

/// `RNode.GetFieldValue`: dots separate fields, `name[3]` indexes a list.
fn field_value(resource: &Value, path: &str) -> Option<VarValue> {
    let parts = split_var_field_path(path);
    let node = lookup(resource, &parts).ok()??;
    Some(match node {
        Value::String(s) => VarValue::Str(s.clone()),
        Value::Number(n) if n.is_f64() => VarValue::Float(n.as_f64()?),
        Value::Number(n) => VarValue::Int(n.as_i64()?),
        Value::Bool(b) => VarValue::Bool(*b),
        Value::Null => VarValue::Str("null".into()),
        Value::Object(_) | Value::Array(_) => VarValue::Complex,
    })
}

/// The result of expanding one string.
#[derive(Debug, PartialEq)]
enum Expanded {
    /// The string was exactly one known var: its typed value.
    Whole(VarValue),
    Text(String),
}

/// kustomize's `refvar.DoReplacements` with its `MakePrimitiveReplacer` mapping.
fn expand<'t>(input: &str, mapping: &dyn Fn(&str) -> Option<&'t VarValue>) -> Expanded {
    let b = input.as_bytes();
    let mut buf: Vec<u8> = Vec::with_capacity(b.len());
    let mut checkpoint = 0;
    let mut cursor = 0;
    while cursor < b.len() {
        if b[cursor] == b'$' && cursor + 1 < b.len() {
            buf.extend_from_slice(&b[checkpoint..cursor]);
            let rest = &input[cursor + 1..];
            let advance = match rest.as_bytes()[0] {
                b'$' => {
                    buf.push(b'$');
                    1
                }
                b'(' => match rest.find(')') {
                    Some(close) => {
                        let name = &rest[1..close];
                        let known = mapping(name).filter(|v| **v != VarValue::Complex);
                        if input.len() == name.len() + 3 {
                            return Expanded::Whole(known.cloned().unwrap_or_else(|| VarValue::Str(input.to_string())));
                        }
                        match known {
                            Some(v) => buf.extend_from_slice(v.to_text().as_bytes()),
                            None => buf.extend_from_slice(format!("$({name})").as_bytes()),
                        }
                        close + 1
                    }
                    None => {
                        buf.extend_from_slice(b"$(");
                        1
                    }
                },
                other => {
                    // Go appends the byte as a rune.
                    buf.push(b'$');
                    buf.extend_from_slice(char::from(other).to_string().as_bytes());
                    1
                }
            };
            cursor += advance;
            checkpoint = cursor + 1;
        }
        cursor += 1;
    }
    buf.extend_from_slice(&b[checkpoint.min(b.len())..]);
    Expanded::Text(String::from_utf8_lossy(&buf).into_owned())
}

/// kustomize's fieldspec filter without creation, expanding vars where the path ends.
fn walk<'t>(node: &mut Value, path: &[String], mapping: &dyn Fn(&str) -> Option<&'t VarValue>) -> Result<(), String> {
    let Some(first) = path.first() else {
        return set(node, mapping);
    };
    match node {
        Value::Null => Ok(()),
        Value::Array(items) => {
            for item in items.iter_mut() {
                walk(item, path, mapping).map_err(|e| format!("visit traversal on path: [{}]: {e}", path.join(" ")))?;
            }
            Ok(())
        }
        Value::Object(map) => {
            let (name, is_seq) = field_spec_part(first);
            if name == "*" {
                // kyaml's PathGetter, which walks var references, has no wildcard.
                return Err("fieldName: *: wildcard is not supported in PathGetter".into());
            }
            let Some(child) = map.get_mut(name) else { return Ok(()) };
            if is_seq && child.is_null() {
                // kustomize turns a null it was told is a list into one.
                *child = Value::Array(Vec::new());
            }
            walk(child, &path[1..], mapping)
        }
        _ => Err("expected sequence or mapping node".into()),
    }
}

/// Whether [`walk`] along `parts` visits the scalar at `path`: sequences on the way are walked
/// element by element, and where the parts end a map's values or a list's items are visited.
fn spec_path_reaches(parts: &[String], path: &[Step]) -> bool {
    let mut parts = parts.iter();
    let mut steps = path.iter();
    loop {
        let Some(part) = parts.next() else {
            return steps.count() <= 1;
        };
        let (name, _) = field_spec_part(part);
        let matched = loop {
            match steps.next() {
                Some(Step::Index(_)) => continue,
                Some(Step::Key(k)) => break k == name,
                None => break false,
            }
        };
        if !matched {
            return false;
        }
    }
}

/// `refvar.Filter.set`: expands strings, leaves other scalars alone.
fn set<'t>(node: &mut Value, mapping: &dyn Fn(&str) -> Option<&'t VarValue>) -> Result<(), String> {
    let expand_into = |v: &mut Value| {
        if let Value::String(s) = v {
            *v = match expand(s, mapping) {
                Expanded::Whole(value) => value.to_value(),
                Expanded::Text(t) => Value::String(t),
            };
        }
    };
    match node {
        Value::Object(map) => map.values_mut().for_each(expand_into),
        Value::Array(items) => {
            for item in items.iter_mut() {
                if !item.is_string() {
                    return Err("invalid value type expect a string".into());
                }
                expand_into(item);
            }
        }
        other => expand_into(other),
    }
    Ok(())
}

/// Go's `strconv.FormatFloat(f, 'g', -1, 64)`, which `%v` uses.
fn go_format_g(f: f64) -> String {
    let mut text = String::new();
    crate::yaml::write_go_format_g(f, &mut text);
    text
}

#[cfg(test)]
mod tests {
    //! Expectations transcribed from `kubectl kustomize` (kustomize v5.6.0) on equivalent
    //! kustomizations.
    use super::*;
    use crate::resource::Resource;
    use serde_json::json;

    fn spec(path: &str) -> FieldSpec {
        FieldSpec { gvk: Gvk::default(), path: path.into(), create: false }
    }

    /// The varReference paths these tests use.
    fn var_reference() -> Vec<FieldSpec> {
        ["spec/containers/command", "spec/containers/args", "spec/containers/env/value", "metadata/annotations", "spec/ports/port"]
            .into_iter()
            .map(spec)
            .collect()
    }

    fn service() -> Value {
        json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "svc", "namespace": "ns1"},
               "spec": {"ports": [{"port": 8080, "name": "http"}], "f": 1.5, "b": true, "m": {"a": "b"},
                        "l": ["x", "y"], "s": "42", "nul": null}})
    }

    fn pod(name: &str, container: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {"containers": [container]}})
    }

    fn var(name: &str, field_path: &str) -> Value {
        json!({"name": name, "objref": {"kind": "Service", "name": "svc", "apiVersion": "v1"}, "fieldref": {"fieldPath": field_path}})
    }

    fn resolve(resources: Vec<Resource>, vars: Vec<Value>) -> Result<Vec<Value>> {
        let mut m = ResMap::from_vec(resources);
        resolve_vars(&mut m, &vars, &var_reference())?;
        Ok(m.into_vec().into_iter().map(|r| r.value).collect())
    }

    fn plain(values: Vec<Value>) -> Vec<Resource> {
        values.into_iter().map(Resource::new).collect()
    }

    #[test]
    fn values_keep_their_type_when_they_are_the_whole_string() {
        let c = json!({"name": "c",
            "command": ["$(SVC)", "$$(SVC)", "a$(SVC)b", "$(NOPE)", "$(", "$x", "$(SVC", "$$", "x$"],
            "args": ["$(PORT)", "p=$(PORT)", "$(F)", "$(B)", "b=$(B)", "$(M)", "m=$(M)", "$(L)", "l=$(L)", "$(S)", "f=$(F)"],
            "env": [{"name": "A", "value": "$(PORT)"}, {"name": "B", "value": "$(SVC).$(SVC)"}]});
        // The service was renamed by a prefix: the var still names its original id, and yields
        // the current name.
        let mut svc = Resource::new(service());
        svc.set_name("p-svc");
        let vars = vec![
            json!({"name": "SVC", "objref": {"kind": "Service", "name": "svc", "apiVersion": "v1"}}),
            var("PORT", "spec.ports[0].port"),
            var("F", "spec.f"),
            var("B", "spec.b"),
            var("M", "spec.m"),
            var("L", "spec.l"),
            var("S", "spec.s"),
        ];
        let out = resolve(vec![svc, Resource::new(pod("pod", c))], vars).unwrap();
        let c = &out[1]["spec"]["containers"][0];
        assert_eq!(c["command"], json!(["p-svc", "$(SVC)", "ap-svcb", "$(NOPE)", "$(", "$x", "$(SVC", "$", "x$"]));
        assert_eq!(c["args"], json!([8080, "p=8080", 1.5, true, "b=true", "$(M)", "m=$(M)", "$(L)", "l=$(L)", "42", "f=1.5"]));
        assert_eq!(c["env"], json!([{"name": "A", "value": 8080}, {"name": "B", "value": "p-svc.p-svc"}]));
    }

    #[test]
    fn null_fields_give_the_text_null() {
        let c = json!({"name": "c", "command": ["$(N)", "a$(N)b"]});
        let out = resolve(plain(vec![service(), pod("pod", c)]), vec![var("N", "spec.nul")]).unwrap();
        assert_eq!(out[1]["spec"]["containers"][0]["command"], json!(["null", "anullb"]));
    }

    #[test]
    fn maps_and_string_maps_in_reference_fields() {
        // metadata/annotations is a map: its string values are expanded, others left alone.
        let mut p = pod("pod", json!({"name": "c", "command": "$(S)", "args": {"a": "$(S)", "b": 1}}));
        p["metadata"]["annotations"] = json!({"x": "v=$(S)", "p": "$(P)"});
        let out = resolve(plain(vec![service(), p]), vec![var("S", "metadata.name"), var("P", "spec.ports[0].port")]).unwrap();
        // A number in an annotation comes out as text, as kustomize rewrites annotations.
        assert_eq!(out[1]["metadata"]["annotations"], json!({"x": "v=svc", "p": "8080"}));
        assert_eq!(out[1]["spec"]["containers"][0]["command"], json!("svc"));
        assert_eq!(out[1]["spec"]["containers"][0]["args"], json!({"a": "svc", "b": 1}));
    }

    #[test]
    fn nulls_on_the_path_are_skipped() {
        let p = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
                       "spec": {"containers": [null, {"name": "c", "command": null, "args": ["$(S)"]}]}});
        let empty = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "q"}, "spec": {"containers": null}});
        let out = resolve(plain(vec![service(), p, empty.clone()]), vec![var("S", "metadata.name")]).unwrap();
        assert_eq!(out[1]["spec"]["containers"][1], json!({"name": "c", "command": null, "args": ["svc"]}));
        assert_eq!(out[2], empty);
    }

    #[test]
    fn lists_of_non_strings_are_errors() {
        let p = pod("pod8", json!({"name": "c", "command": [["a"]]}));
        let e = resolve(plain(vec![service(), p]), vec![var("S", "metadata.name")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "considering field 'spec/containers/command' of object Pod.v1.[noGrp]/pod8.[noNs]: visit traversal on path: [command]: invalid value type expect a string"
        );
        let p = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pod6", "namespace": "n"}, "spec": {"containers": "abc"}});
        let e = resolve(plain(vec![service(), p]), vec![var("S", "metadata.name")]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "considering field 'spec/containers/command' of object Pod.v1.[noGrp]/pod6.n: expected sequence or mapping node"
        );
    }

    #[test]
    fn unknown_objects_and_fields_are_errors() {
        let res = || plain(vec![service(), pod("pod", json!({"name": "c"}))]);
        let e = resolve(res(), vec![json!({"name": "SVC", "objref": {"kind": "Service", "name": "nope", "apiVersion": "v1"}})]);
        assert_eq!(
            e.unwrap_err().to_string(),
            "var '{SVC Service.v1.[noGrp] {metadata.name}}' cannot be mapped to a field in the set of known resources"
        );
        let e = resolve(res(), vec![json!({"name": "SVC", "objref": {"kind": "Service", "name": "nope", "group": "g", "version": "v1", "namespace": "x"}, "fieldref": {"fieldPath": "spec.x"}})]);
        assert_eq!(e.unwrap_err().to_string(), "var '{SVC Service.v1.g {spec.x}}' cannot be mapped to a field in the set of known resources");
        let e = resolve(res(), vec![var("SVC", "spec.nope")]);
        assert_eq!(
            e.unwrap_err().to_string(),
            "field specified in var '{SVC Service.v1.[noGrp] {spec.nope}}' not found in corresponding resource"
        );
        // Without an apiVersion the version is empty and matches nothing.
        let e = resolve(res(), vec![json!({"name": "SVC", "objref": {"kind": "Service", "name": "svc"}})]);
        assert_eq!(
            e.unwrap_err().to_string(),
            "var '{SVC Service.[noVer].[noGrp] {metadata.name}}' cannot be mapped to a field in the set of known resources"
        );
        // An apiVersion of three parts leaves group and version as written.
        let e = resolve(res(), vec![json!({"name": "SVC", "objref": {"kind": "Service", "name": "svc", "apiVersion": "a/b/c", "group": "zz", "version": "v9"}, "fieldref": {"fieldPath": "spec.s"}})]);
        assert_eq!(e.unwrap_err().to_string(), "var '{SVC Service.v9.zz {spec.s}}' cannot be mapped to a field in the set of known resources");
        // `[name=x]` is not an index for GetFieldValue.
        let e = resolve(res(), vec![var("SVC", "spec.ports[name=http].port")]);
        assert_eq!(
            e.unwrap_err().to_string(),
            "field specified in var '{SVC Service.v1.[noGrp] {spec.ports[name=http].port}}' not found in corresponding resource"
        );
    }

    #[test]
    fn namespaces_are_compared_only_when_given() {
        let c = json!({"name": "c", "command": ["$(SVC)"]});
        let with_ns = |ns: &str| json!({"name": "SVC", "objref": {"kind": "Service", "name": "svc", "apiVersion": "v1", "namespace": ns}});
        let out = resolve(plain(vec![service(), pod("pod", c.clone())]), vec![with_ns("ns1")]).unwrap();
        assert_eq!(out[1]["spec"]["containers"][0]["command"], json!(["svc"]));
        assert!(resolve(plain(vec![service(), pod("pod", c.clone())]), vec![with_ns("other")]).is_err());
        // `default` names a resource without a namespace.
        let v = json!({"name": "P", "objref": {"kind": "Pod", "name": "pod", "apiVersion": "v1", "namespace": "default"}});
        let out = resolve(plain(vec![pod("pod", json!({"name": "c", "command": ["$(P)"]}))]), vec![v]).unwrap();
        assert_eq!(out[0]["spec"]["containers"][0]["command"], json!(["pod"]));
    }

    #[test]
    fn a_namespace_in_the_objref_never_names_a_cluster_scoped_resource() {
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "myns"}});
        let p = pod("p", json!({"name": "c", "command": ["$(NS)"]}));
        let v = |objref: Value| json!({"name": "NS", "objref": objref});
        let out = resolve(plain(vec![ns.clone(), p.clone()]), vec![v(json!({"kind": "Namespace", "name": "myns", "apiVersion": "v1"}))]);
        assert_eq!(out.unwrap()[1]["spec"]["containers"][0]["command"], json!(["myns"]));
        for namespace in ["default", "myns"] {
            let objref = json!({"kind": "Namespace", "name": "myns", "apiVersion": "v1", "namespace": namespace});
            let e = resolve(plain(vec![ns.clone(), p.clone()]), vec![v(objref)]).unwrap_err();
            assert_eq!(e.to_string(), "var '{NS Namespace.v1.[noGrp] {metadata.name}}' cannot be mapped to a field in the set of known resources");
        }
    }

    #[test]
    fn two_resources_with_the_named_id_are_ambiguous() {
        let mut other = service();
        other["metadata"]["namespace"] = json!("ns2");
        let e = resolve(plain(vec![service(), other]), vec![json!({"name": "SVC", "objref": {"kind": "Service", "name": "svc", "apiVersion": "v1"}})]);
        assert_eq!(
            e.unwrap_err().to_string(),
            "merging vars [{SVC Service.[noVer].[noGrp] {}}]: found 2 resId matches for var {SVC Service.v1.[noGrp] {}} (unable to disambiguate)"
        );
    }

    #[test]
    fn entries_are_decoded_strictly_with_go_names() {
        let res = || plain(vec![service(), pod("pod", json!({"name": "c", "command": ["$(SVC)"]}))]);
        let e = resolve(res(), vec![json!({"name": "SVC", "objref": {"kind": "Service", "name": "svc", "apiVersion": "v1"}, "bogus": 1})]);
        assert_eq!(e.unwrap_err().to_string(), "invalid Kustomization: json: unknown field \"bogus\"");
        let e = resolve(res(), vec![json!({"name": 5, "objref": {"kind": "Service"}})]);
        assert_eq!(e.unwrap_err().to_string(), "invalid Kustomization: json: cannot unmarshal number into Go struct field Var.vars.name of type string");
        let e = resolve(res(), vec![json!({"name": "S", "objref": {"kind": 5}})]);
        assert_eq!(e.unwrap_err().to_string(), "invalid Kustomization: json: cannot unmarshal number into Go struct field Target.vars.objref.Gvk.kind of type string");
        let e = resolve(res(), vec![json!({"name": "S", "objref": 3})]);
        assert_eq!(e.unwrap_err().to_string(), "invalid Kustomization: json: cannot unmarshal number into Go struct field Var.vars.objref of type types.Target");
        let e = resolve(res(), vec![json!({"name": "S", "objref": {"kind": "Service"}, "fieldref": {"fieldPath": 3}})]);
        assert_eq!(
            e.unwrap_err().to_string(),
            "invalid Kustomization: json: cannot unmarshal number into Go struct field FieldSelector.vars.fieldref.fieldPath of type string"
        );
        // Names match case-insensitively (TestSimpleServicePortVarReplace writes `fieldpath`).
        let v = json!({"name": "SVC", "objref": {"apiversion": "v1", "Kind": "Service", "NAME": "svc", "namespace": "ns1"}, "FieldRef": {"FIELDPATH": "spec.s"}});
        let out = resolve(res(), vec![v]).unwrap();
        assert_eq!(out[1]["spec"]["containers"][0]["command"], json!(["42"]));
    }

    #[test]
    fn index_paths_read_list_elements() {
        let c = json!({"name": "c", "command": ["$(P)"]});
        for path in ["spec.ports.0.port", "spec.ports[0].port"] {
            let out = resolve(plain(vec![service(), pod("pod", c.clone())]), vec![var("P", path)]).unwrap();
            assert_eq!(out[1]["spec"]["containers"][0]["command"], json!([8080]), "{path}");
        }
    }

    #[test]
    fn vars_bind_to_the_resources_of_their_own_kustomization() {
        // variableref__TestVaribaleRefDifferentPrefix: two bases each declare a var on their own
        // Service `elasticsearch` and add their prefix; an overlay adds `base-`. Bound per base,
        // each var finds its own Service, which a match over the whole build could not tell apart.
        let svc = || json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "elasticsearch"}});
        let v = |name: &str| json!({"name": name, "objref": {"kind": "Service", "name": "elasticsearch", "apiVersion": "v1"}});
        let mut accumulated = Vec::new();
        let mut all = Vec::new();
        for prefix in ["dev", "test"] {
            let mut s = Resource::new(svc());
            s.set_name(&format!("{prefix}-elasticsearch"));
            let level = ResMap::from_vec(vec![s.clone()]);
            merge_vars(&level, &mut accumulated, &[v(&format!("{prefix}-name"))]).unwrap();
            all.push(s);
        }
        let user = json!({"name": "u", "command": ["$(dev-name)", "$(test-name)"]});
        all.push(Resource::new(pod("user", user)));
        for r in &mut all {
            let name = format!("base-{}", r.name());
            r.set_name(&name);
        }
        let mut m = ResMap::from_vec(all);
        resolve_vars(&mut m, &accumulated, &var_reference()).unwrap();
        assert_eq!(m.get(2).value["spec"]["containers"][0]["command"], json!(["base-dev-elasticsearch", "base-test-elasticsearch"]));
    }

    #[test]
    fn merging_refuses_ambiguous_and_repeated_vars() {
        let mut other = service();
        other["metadata"]["namespace"] = json!("ns2");
        let two = ResMap::from_vec(plain(vec![service(), other]));
        let e = merge_vars(&two, &mut Vec::new(), &[json!({"name": "SVC", "objref": {"kind": "Service", "name": "svc", "apiVersion": "v1"}})]);
        assert_eq!(
            e.unwrap_err().to_string(),
            "merging vars [{SVC Service.[noVer].[noGrp] {}}]: found 2 resId matches for var {SVC Service.v1.[noGrp] {}} (unable to disambiguate)"
        );
        let one = ResMap::from_vec(plain(vec![service()]));
        let mut accumulated = Vec::new();
        let svc = json!({"name": "SVC", "objref": {"kind": "Service", "name": "svc", "apiVersion": "v1"}});
        merge_vars(&one, &mut accumulated, std::slice::from_ref(&svc)).unwrap();
        let x = json!({"name": "X", "objref": {"kind": "Service", "name": "svc", "apiVersion": "v1"}});
        let e = merge_vars(&one, &mut accumulated, &[x, svc.clone()]);
        assert_eq!(
            e.unwrap_err().to_string(),
            "merging vars [{X Service.[noVer].[noGrp] {}} {SVC Service.[noVer].[noGrp] {}}]: var 'SVC' already encountered"
        );
        let e = merge_vars(&one, &mut Vec::new(), &[svc.clone(), svc]);
        assert!(e.unwrap_err().to_string().ends_with(": var 'SVC' already encountered"));
    }

    #[test]
    fn a_var_bound_to_nothing_cannot_be_mapped_later() {
        // Bound in a base where its resource does not exist: an overlay's resource of that id
        // does not count.
        let mut accumulated = Vec::new();
        merge_vars(&ResMap::new(), &mut accumulated, &[var("S", "spec.s")]).unwrap();
        let e = resolve(plain(vec![service()]), accumulated).unwrap_err();
        assert_eq!(e.to_string(), "var '{S Service.v1.[noGrp] {spec.s}}' cannot be mapped to a field in the set of known resources");
    }

    #[test]
    fn floats_print_as_go_prints_them() {
        assert_eq!(go_format_g(1.5), "1.5");
        assert_eq!(go_format_g(3.0), "3");
        assert_eq!(go_format_g(100000.0), "100000");
        assert_eq!(go_format_g(1e6), "1e+06");
        assert_eq!(go_format_g(123456789.0), "1.23456789e+08");
        assert_eq!(go_format_g(0.0001), "0.0001");
        assert_eq!(go_format_g(0.00001), "1e-05");
        assert_eq!(go_format_g(-2.5), "-2.5");
    }
}
