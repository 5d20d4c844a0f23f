//! kustomize's ReplacementTransformer (`api/filters/replacement`): copy one field of one
//! resource into fields of other resources.
//!
//! What kustomize v5.6.0 does, and so what this does:
//!
//! * entries are inline replacements or `{path: file}`; a file holds one replacement or a
//!   list of them (only its first YAML document counts), decoded leniently (unknown fields
//!   ignored) while inline entries are decoded strictly, both with Go's case-insensitive
//!   field names;
//! * the source must be selected by exactly one resource, comparing each of its ids (current
//!   and previous) with exact group/version/kind/name/namespace (no regular expressions);
//! * the source field is read with kyaml's `PathGetter` (`a.0.b`, `a.[k=v].b`, `a.-`); a
//!   missing, null, or empty map/list source is an error;
//! * targets are selected by id (any id; since v5.8 each id field an anchored regular expression,
//!   the namespace as written) and by label/annotation selectors, and rejected when any of their
//!   ids matches a reject's id fields or they match a reject's selectors;
//! * target fields are found with kyaml's `PathMatcher` (`*`, numeric indexes, `[k=regex]`,
//!   `[=regex]`), creating missing parts with `create: true`; finding nothing is an error;
//! * a scalar target keeps its own YAML type and only takes the source's text (so `"8080"`
//!   into a number gives a number, and `abc` into a number fails as kustomize fails when it
//!   re-reads the object); a map or list target is replaced by the source node as it is; a
//!   created scalar is typed from its text.
mod decode;
mod matching;
mod structured_data;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::fast_hash::field_mut;
use crate::kustomization::types::Selector as KSelector;
use crate::kustomization::Loader;
use crate::resource::nodes::{value_at, value_at_mut};
use crate::resource::{ResMap, Resource, Step};
use crate::transform::path::split_replacement_path;
use crate::transform::select::CompiledSelector;
use crate::yaml::go_syntax::quote as go_quote;
use crate::yaml::scalar::ScalarTag;

use decode::*;
use matching::*;
pub(crate) use decode::{gvk_string, loader_message, res_id_string, GoJson};
pub(crate) use matching::lookup;

/// The field read and written when a replacement names none.
const DEFAULT_FIELD_PATH: &str = "metadata.name";

/// Applies the kustomization's `replacements` entries, in order.
/// For a loading walk: reads the files `replacements` entries name (`path:`), applying nothing.
pub fn read_replacement_files(replacements: &[Value], loader: &Loader) -> Result<()> {
    decode::load_replacements(replacements, loader).map(drop)
}

pub fn apply_replacements(resources: &mut ResMap, replacements: &[Value], loader: &Loader) -> Result<()> {
    let list = load_replacements(replacements, loader)?;
    let mut deferred = None;
    let outcome = list.iter().try_for_each(|r| apply_one(resources, r, &mut deferred));
    let outcome = outcome.map_err(|e| match e.to_string().starts_with("excessive") {
        true => e.context(format!("replacements of {}", loader.root().display())),
        false => e,
    });
    resources.reindex();
    outcome?;
    validate_metadata(resources)?;
    stringify_annotations(resources);
    // kustomize only notices a value its target's type cannot hold when it re-reads the object,
    // after every replacement ran.
    match deferred {
        Some(e) => Err(e),
        None => Ok(()),
    }
}

/// kyaml's `GetValidatedMetadata`, which kustomize applies to the objects a filter returns: a
/// replacement may not leave a resource without a kind or (unless a List) a name.
fn validate_metadata(resources: &ResMap) -> Result<()> {
    for r in resources.iter() {
        let text = |v: Option<&Value>| v.map(scalar_text).unwrap_or_default();
        let meta = r.value.get("metadata");
        let kind = text(r.value.get("kind"));
        let name = text(meta.and_then(|m| m.get("name")));
        let problem = if kind.is_empty() {
            "missing kind"
        } else if !kind.ends_with("List") && name.is_empty() {
            "missing metadata.name"
        } else {
            continue;
        };
        // Go's %v of kyaml's ResourceMeta.
        let map = |field: &str| {
            let mut pairs: Vec<(String, String)> = meta
                .and_then(|m| m.get(field))
                .and_then(Value::as_object)
                .map(|m| m.iter().map(|(k, v)| (k.clone(), scalar_text(v))).collect())
                .unwrap_or_default();
            pairs.sort();
            let body: Vec<String> = pairs.into_iter().map(|(k, v)| format!("{k}:{v}")).collect();
            format!("map[{}]", body.join(" "))
        };
        return Err(Error::msg(format!(
            "{problem} in object {{{{{} {kind}}} {{{{{name} {}}} {} {}}}}}",
            text(r.value.get("apiVersion")),
            text(meta.and_then(|m| m.get("namespace"))),
            map("labels"),
            map("annotations")
        )));
    }
    Ok(())
}

/// kustomize rewrites every resource's annotations as strings (`GetAnnotations`/`SetAnnotations`
/// when it drops its build annotations): a number written into an annotation comes out as text,
/// a map or list as an empty string.
pub(crate) fn stringify_annotations(resources: &mut ResMap) {
    let _ = resources.try_for_each_mut_parallel(|r| {
        let Resource { value, nodes, .. } = r;
        nodes.type_untagged_as_strings(value, |path| {
            matches!(path, [Step::Key(m), Step::Key(a), _] if m == "metadata" && a == "annotations")
        });
        let annotations = r.value.as_object_mut().and_then(|m| field_mut(m, "metadata")).and_then(Value::as_object_mut).and_then(|m| field_mut(m, "annotations")).and_then(Value::as_object_mut);
        for value in annotations.into_iter().flat_map(|a| a.values_mut()) {
            if !value.is_string() {
                *value = Value::String(scalar_text(value));
            }
        }
        Ok::<(), std::convert::Infallible>(())
    });
}

// ---------------------------------------------------------------------------
// The filter
// ---------------------------------------------------------------------------


fn apply_one(resources: &mut ResMap, r: &Replacement, deferred: &mut Option<Error>) -> Result<()> {
    let (Some(targets), true) = (&r.targets, r.source.is_some() || r.source_value.is_some()) else {
        return Err(Error::msg("replacements must specify a source and at least one target"));
    };
    let (mut value, live) = match (&r.source, &r.source_value) {
        (Some(_), Some(_)) => return Err(Error::msg("value and resource selectors are mutually exclusive")),
        (Some(source), None) => source_value(resources, source)?,
        (None, text) => (Source::Scalar { tag: ScalarTag::None, text: text.clone().unwrap_or_default() }, None),
    };
    for target in targets {
        let Some(select) = &target.select else {
            return Err(Error::msg("target must specify resources to select"));
        };
        let default_paths = [DEFAULT_FIELD_PATH.to_string()];
        let paths: &[String] = if target.field_paths.is_empty() { &default_paths } else { &target.field_paths };
        let select_meta = metadata_selector(select)?;
        let reject_meta: Vec<CompiledSelector> = target
            .reject
            .iter()
            .flatten()
            .filter(|r| !r.label_selector.is_empty() || !r.annotation_selector.is_empty())
            .map(metadata_selector)
            .collect::<Result<_>>()?;
        // Since v5.8 the id fields of `select` and `reject` are anchored regular expressions.
        let select_ids = id_patterns(&select.id)?;
        let reject_ids: Vec<CompiledSelector> =
            target.reject.iter().flatten().map(|r| &r.id).filter(|id| !id.is_empty()).map(id_patterns).collect::<Result<_>>()?;
        for i in 0..resources.len() {
            let res = resources.get(i);
            if !select_meta.matches(res) || reject_meta.iter().any(|s| s.matches(res)) {
                continue;
            }
            let ids = res.all_ids();
            let selected = ids.iter().any(|id| select_ids.matches_id(id));
            let rejected = ids.iter().any(|id| reject_ids.iter().any(|r| r.matches_id(id)));
            if selected && !rejected {
                let source_here = live.as_ref().filter(|(j, _)| *j == i).map(|(_, path)| path.as_slice());
                copy_to_target(resources.get_mut(i), &value, source_here, target, paths, deferred)?;
                // kustomize's source is the live node: what this target wrote into it, the next sees.
                if let Some(now) = source_here.and_then(|path| value_at(&resources.get(i).value, path)) {
                    value = Source::Node(now.clone());
                }
            }
        }
    }
    Ok(())
}

/// A selector that checks only labels and annotations (ids are compared exactly, elsewhere).
fn metadata_selector(s: &Selector) -> Result<CompiledSelector> {
    CompiledSelector::new(&KSelector {
        label_selector: s.label_selector.clone(),
        annotation_selector: s.annotation_selector.clone(),
        ..Default::default()
    })
}

/// The id fields of a target's `select` or `reject`, as patterns.
fn id_patterns(id: &IdSelector) -> Result<CompiledSelector> {
    CompiledSelector::new(&KSelector {
        group: id.group.clone(),
        version: id.version.clone(),
        kind: id.kind.clone(),
        name: id.name.clone(),
        namespace: id.namespace.clone(),
        ..Default::default()
    })
    .map_err(|e| Error::msg(format!("error creating target selector: {e}")))
}

/// The source node, found in exactly one resource and refined by the source options; for a map
/// or list, also the resource's index and the node's path there (kustomize copies the live node
/// at each write, so what a write creates inside it is copied too).
fn source_value(resources: &ResMap, source: &SourceSelector) -> Result<(Source, Option<(usize, Vec<Step>)>)> {
    let mut found: Option<(usize, &Resource)> = None;
    for (i, res) in resources.iter().enumerate() {
        if res.all_ids().iter().any(|id| source.id.selects(id)) {
            if found.is_some() {
                return Err(Error::msg(format!("multiple matches for selector {}", source.describe())));
            }
            found = Some((i, res));
        }
    }
    let Some((index, res)) = found else {
        return Err(Error::msg(format!("nothing selected by {}", source.describe())));
    };
    let field_path = if source.field_path.is_empty() { DEFAULT_FIELD_PATH } else { &source.field_path };
    let node = lookup(&res.value, &split_replacement_path(field_path))
        .map_err(|e| Error::msg(format!("error looking up replacement source: {e}")))?;
    let missing = match node {
        None | Some(Value::Null) => true,
        Some(Value::Object(m)) => m.is_empty(),
        Some(Value::Array(a)) => a.is_empty(),
        Some(_) => false,
    };
    if missing {
        return Err(Error::msg(format!(
            "fieldPath `{field_path}` is missing for replacement source {}",
            res_id_string(&source.id.as_res_id())
        )));
    }
    let node = node.unwrap();
    let value = match Kind::of(node) {
        Kind::Scalar => match res.nodes.untagged_text_of(&res.value, node) {
            Some(text) => Source::Scalar { tag: ScalarTag::None, text: text.to_string() },
            None => Source::Scalar { tag: ScalarTag::of_value(node), text: scalar_text(node) },
        },
        _ => {
            crate::budget::current().charge_copies(node, 1).map_err(|e| Error::msg(e.to_string()))?;
            Source::Node(node.clone())
        }
    };
    match &source.options {
        Some(o) if !o.delimiter.is_empty() => {
            let Source::Scalar { tag, text } = &value else {
                return Err(Error::msg("delimiter option can only be used with scalar nodes"));
            };
            let parts: Vec<&str> = text.split(o.delimiter.as_str()).collect();
            if o.index < 0 || o.index as usize >= parts.len() {
                return Err(Error::msg(format!("options.index {} is out of bounds for value {text}", o.index)));
            }
            Ok((Source::Scalar { tag: *tag, text: parts[o.index as usize].to_string() }, None))
        }
        _ => {
            let live = matches!(value, Source::Node(_)).then(|| lookup_with_path(&res.value, &split_replacement_path(field_path)));
            Ok((value, live.flatten().map(|(path, _)| (index, path))))
        }
    }
}

/// Writes the value at every field path of the target into one resource.
fn copy_to_target(
    res: &mut Resource,
    value: &Source,
    source_here: Option<&[Step]>,
    target: &TargetSelector,
    paths: &[String],
    deferred: &mut Option<Error>,
) -> Result<()> {
    let create = target.options.as_ref().is_some_and(|o| o.create);
    for fp in paths {
        let failure = |detail: Option<String>| {
            let what = if create { "unable to find or create field" } else { "unable to find field" };
            let head = format!("{what} {} in replacement target", go_quote(fp));
            Error::msg(match detail {
                Some(d) => format!("{head}: {d}"),
                None => head,
            })
        };
        if structured_data::write(res, value, fp, create.then(|| value.kind()), target.options.as_ref()).map_err(Error::msg)? {
            continue;
        }
        let mut matcher = Matcher::new(create.then(|| value.kind()));
        // Written like `Resource::write`, reading the untagged scalars on the way.
        let Resource { value: root, nodes, .. } = &mut *res;
        let before = nodes.snapshot(root);
        matcher.filter(root, &split_replacement_path(fp), &mut Vec::new()).map_err(|e| failure(Some(e)))?;
        if matcher.hits.is_empty() {
            return Err(failure(None));
        }
        // The source is in this resource: copied as it is now, with what the matcher created.
        let live = source_here.and_then(|path| value_at(root, path)).filter(|_| matches!(value, Source::Node(_)));
        let live = live.map(|now| Source::Node(now.clone()));
        let value = live.as_ref().unwrap_or(value);
        let mut untagged = Vec::new();
        for hit in &matcher.hits {
            let Hit::Node(path) = hit else { continue };
            // A created scalar has no tag (and no text yet); one without a tag keeps having none.
            let was_untagged = if matcher.fresh.contains(path) { Some(String::new()) } else { nodes.untagged_text(path).map(str::to_string) };
            let node = value_at_mut(root, path).expect("matched path exists");
            if let Some(text) = set_field_value(node, was_untagged.as_deref(), target.options.as_ref(), value, deferred)? {
                untagged.push((path.clone(), text, node.clone()));
            }
        }
        nodes.propagate(root, before);
        for (path, text, resolved) in untagged {
            nodes.mark_untagged(path, text, resolved);
        }
    }
    Ok(())
}

/// `options.delimiter`: `current` split at the delimiter, its `index`th part replaced by `text`
/// (a negative index puts `text` first, one past the end appends it), joined again.
fn delimited(current: &str, o: &FieldOptions, text: &str) -> String {
    let mut parts: Vec<&str> = current.split(o.delimiter.as_str()).collect();
    if o.index < 0 {
        parts.insert(0, text);
    } else if o.index as usize >= parts.len() {
        parts.push(text);
    } else {
        parts[o.index as usize] = text;
    }
    parts.join(&o.delimiter)
}

/// kustomize's `setFieldValue`: a scalar target keeps its type and takes the (joined) text;
/// a map or list target becomes the value.
/// `untagged` is the text of a target scalar without a YAML tag (empty when just created); the
/// text written into such a scalar is returned, as it stays untagged.
fn set_field_value(
    target: &mut Value,
    untagged: Option<&str>,
    options: Option<&FieldOptions>,
    value: &Source,
    deferred: &mut Option<Error>,
) -> Result<Option<String>> {
    let target_kind = Kind::of(target);
    let mut text = value.text().to_string();
    let mut joined = false;
    if let Some(o) = options.filter(|o| !o.delimiter.is_empty()) {
        if target_kind != Kind::Scalar {
            return Err(Error::msg("delimiter option can only be used with scalar nodes"));
        }
        let current = untagged.map_or_else(|| scalar_text(target), str::to_string);
        text = delimited(&current, o, &text);
        joined = true;
    }
    let result = if target_kind == Kind::Scalar {
        let tag = if untagged.is_some() { ScalarTag::None } else { ScalarTag::of_value(target) };
        typed_scalar(tag, &text)
    } else {
        match value {
            Source::Scalar { tag, .. } => typed_scalar(*tag, &text),
            // The delimiter check above keeps `joined` false here.
            Source::Node(v) if !joined => {
                // A map or list copied into the target: charged to the build's node budget.
                crate::budget::current().charge_copies(v, 1).map_err(|e| Error::msg(e.to_string()))?;
                Ok(v.clone())
            }
            Source::Node(_) => typed_scalar(ScalarTag::Str, &text),
        }
    };
    let stays_untagged = (untagged.is_some() && target_kind == Kind::Scalar).then(|| text.clone());
    match result {
        Ok(v) => *target = v,
        Err(message) => {
            *target = Value::String(text);
            deferred.get_or_insert(Error::msg(message));
        }
    }
    Ok(stays_untagged)
}

#[cfg(test)]
mod tests {
    //! Expectations transcribed from `kubectl kustomize` (kustomize v5.6.0) on equivalent
    //! kustomizations.
    use super::*;
    use crate::kustomization::LoadRestrictor;
    use serde_json::json;
    use std::path::{Path, PathBuf};

    fn resmap(values: Vec<Value>) -> ResMap {
        ResMap::from_vec(values.into_iter().map(Resource::new).collect())
    }

    fn loader() -> Loader {
        Loader::new(Path::new(env!("CARGO_MANIFEST_DIR")), LoadRestrictor::RootOnly).unwrap()
    }

    fn run(resources: Vec<Value>, replacements: Value) -> Result<Vec<Value>> {
        let mut m = resmap(resources);
        apply_replacements(&mut m, replacements.as_array().unwrap(), &loader())?;
        Ok(m.into_vec().into_iter().map(|r| r.value).collect())
    }

    fn err(resources: Vec<Value>, replacements: Value) -> String {
        run(resources, replacements).unwrap_err().to_string()
    }

    fn cm(name: &str, data: Value) -> Value {
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data})
    }

    fn deploy(name: &str, spec: Value) -> Value {
        json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name}, "spec": spec})
    }

    fn one_target(source: Value, field_paths: Value, options: Value) -> Value {
        json!([{"source": source, "targets": [{"select": {"kind": "Deployment"}, "fieldPaths": field_paths, "options": options}]}])
    }

    /// Runs a replacement from `data.<field>` of ConfigMap `src` into the Deployment's `spec`.
    fn into_spec(data: Value, field: &str, spec: Value, paths: Value, options: Value) -> Result<Value> {
        let source = json!({"kind": "ConfigMap", "name": "src", "fieldPath": format!("data.{field}")});
        let out = run(vec![cm("src", data), deploy("a", spec)], one_target(source, paths, options))?;
        Ok(out[1]["spec"].clone())
    }

    #[test]
    fn copies_a_container_image_by_index() {
        // ReplacementTransformer__TestReplacementTransformer.
        let d = deploy("deploy", json!({"template": {"spec": {"containers": [
            {"image": "foobar:1", "name": "replaced-with-digest"},
            {"image": "postgres:1.8.0", "name": "postgresdb"}]}}}));
        let out = run(
            vec![d],
            json!([{"source": {"kind": "Deployment", "fieldPath": "spec.template.spec.containers.0.image"},
                    "targets": [{"select": {"kind": "Deployment"}, "fieldPaths": ["spec.template.spec.containers.1.image"]}]}]),
        )
        .unwrap();
        assert_eq!(out[0]["spec"]["template"]["spec"]["containers"][1]["image"], json!("foobar:1"));
    }

    #[test]
    fn scalar_targets_keep_their_own_type() {
        // "42" (a string) into a number stays a number; 7 into a string becomes "7".
        let spec = json!({"int": 8080, "str": "abc"});
        let out = into_spec(json!({"n": "42"}), "n", spec.clone(), json!(["spec.int", "spec.str"]), json!(null)).unwrap();
        assert_eq!(out, json!({"int": 42, "str": "42"}));
        let out = into_spec(json!({"i": 7}), "i", spec.clone(), json!(["spec.int", "spec.str"]), json!(null)).unwrap();
        assert_eq!(out, json!({"int": 7, "str": "7"}));
        // "true" (a string) into a boolean gives a boolean.
        let out = into_spec(json!({"t": "true"}), "t", json!({"b": false}), json!(["spec.b"]), json!(null)).unwrap();
        assert_eq!(out, json!({"b": true}));
    }

    #[test]
    fn text_that_the_target_type_cannot_hold_fails_like_kustomize() {
        let e = into_spec(json!({"v": "hello"}), "v", json!({"int": 8080}), json!(["spec.int"]), json!(null)).unwrap_err();
        assert_eq!(e.to_string(), "map[string]interface {}(nil): yaml: cannot decode !!str `hello` as a !!int");
        let e = into_spec(json!({"n": "42"}), "n", json!({"n1": null}), json!(["spec.n1"]), json!(null)).unwrap_err();
        assert_eq!(e.to_string(), "map[string]interface {}(nil): yaml: cannot decode !!int `42` as a !!null");
        // A map into a number: the map's text is empty, which is null.
        let e = into_spec(json!({"m": {"k1": "v1"}}), "m", json!({"int": 1}), json!(["spec.int"]), json!(null)).unwrap_err();
        assert_eq!(e.to_string(), "map[string]interface {}(nil): yaml: cannot decode !!null `` as a !!int");
    }

    #[test]
    fn map_and_list_targets_are_replaced_by_the_source_node() {
        let spec = json!({"map": {"x": "y"}, "list": ["p", "q"], "emptymap": {}, "str": "abc", "nul": null});
        let paths = json!(["spec.map", "spec.list", "spec.emptymap"]);
        let out = into_spec(json!({"n": "42"}), "n", spec.clone(), paths.clone(), json!(null)).unwrap();
        assert_eq!(out, json!({"map": "42", "list": "42", "emptymap": "42", "str": "abc", "nul": null}));
        let out = into_spec(json!({"l": [1, 2]}), "l", spec.clone(), paths, json!(null)).unwrap();
        assert_eq!(out["map"], json!([1, 2]));
        // A map into a string scalar leaves an empty string; into a null, still null.
        let out = into_spec(json!({"m": {"k1": "v1"}}), "m", spec, json!(["spec.str", "spec.nul"]), json!(null)).unwrap();
        assert_eq!((out["str"].clone(), out["nul"].clone()), (json!(""), json!(null)));
    }

    #[test]
    fn annotations_end_up_as_strings() {
        // A created annotation typed as a number, and a map written into one, come out as text;
        // labels keep what they were given.
        let mut d = deploy("a", json!({}));
        d["metadata"]["labels"] = json!({"l": "x"});
        let r = json!([
            {"source": {"kind": "ConfigMap", "fieldPath": "data.n"},
             "targets": [{"select": {"kind": "Deployment"}, "fieldPaths": ["metadata.annotations.x", "metadata.labels.y"], "options": {"create": true}}]},
            {"source": {"kind": "ConfigMap", "fieldPath": "data.m"},
             "targets": [{"select": {"kind": "Deployment"}, "fieldPaths": ["metadata.annotations.mm", "metadata.labels.mm"], "options": {"create": true}}]}]);
        let out = run(vec![cm("src", json!({"n": "42", "m": {"a": "b"}})), d], r).unwrap();
        assert_eq!(out[1]["metadata"]["annotations"], json!({"x": "42", "mm": ""}));
        assert_eq!(out[1]["metadata"]["labels"], json!({"l": "x", "y": 42, "mm": {"a": "b"}}));
    }

    #[test]
    fn created_scalars_are_typed_from_their_text() {
        let out = into_spec(json!({"n": "42"}), "n", json!({}), json!(["spec.new"]), json!({"create": true})).unwrap();
        assert_eq!(out, json!({"new": 42}));
        let out = into_spec(json!({"t": "true"}), "t", json!({}), json!(["spec.new"]), json!({"create": true})).unwrap();
        assert_eq!(out, json!({"new": true}));
        let out = into_spec(json!({"o": "0o17"}), "o", json!({}), json!(["spec.new"]), json!({"create": true})).unwrap();
        assert_eq!(out, json!({"new": 15}));
        // A date is a timestamp, which kustomize writes back as RFC 3339 text.
        let out = into_spec(json!({"d": "2001-12-14"}), "d", json!({}), json!(["spec.new"]), json!({"create": true})).unwrap();
        assert_eq!(out, json!({"new": "2001-12-14T00:00:00Z"}));
    }

    #[test]
    fn create_builds_lists_and_elements_for_missing_parts() {
        let containers = json!({"containers": [{"name": "nginx", "image": "nginx:1"}]});
        let create = json!({"create": true});
        let v = json!({"v": "hello"});
        let out = into_spec(v.clone(), "v", json!({}), json!(["spec.newlist.0.x"]), create.clone()).unwrap();
        assert_eq!(out, json!({"newlist": [{"x": "hello"}]}));
        let out = into_spec(v.clone(), "v", json!({}), json!(["spec.newlist2.[name=a].x"]), create.clone()).unwrap();
        assert_eq!(out, json!({"newlist2": [{"name": "a", "x": "hello"}]}));
        // An index equal to the length appends.
        let out = into_spec(v.clone(), "v", containers.clone(), json!(["spec.containers.1.image"]), create.clone()).unwrap();
        assert_eq!(out["containers"][1], json!({"image": "hello"}));
        // A missing [name=...] element is appended with that name, typed from its text.
        let out = into_spec(v.clone(), "v", containers.clone(), json!(["spec.containers.[name=42].image"]), create.clone()).unwrap();
        assert_eq!(out["containers"][1], json!({"name": 42, "image": "hello"}));
        // Creating below a null does nothing, and is no error.
        let out = into_spec(v, "v", json!({"nul": null}), json!(["spec.nul.x"]), create).unwrap();
        assert_eq!(out, json!({"nul": null}));
    }

    #[test]
    fn list_selectors_match_unanchored_regular_expressions() {
        let spec = json!({"containers": [
            {"name": "nginx", "image": "nginx:1", "args": ["a", "b", "42"]},
            {"name": "sidecar-nginx", "image": "side:1"},
            {"name": "other", "image": "other:1"}]});
        let v = json!({"v": "hello"});
        let out = into_spec(v.clone(), "v", spec.clone(), json!(["spec.containers.[name=ngin].image"]), json!(null)).unwrap();
        let images: Vec<&Value> = out["containers"].as_array().unwrap().iter().map(|c| &c["image"]).collect();
        assert_eq!(images, [&json!("hello"), &json!("hello"), &json!("other:1")]);
        // `[=4]` matches the string "42" through its quoted YAML text.
        let out = into_spec(v.clone(), "v", spec.clone(), json!(["spec.containers.0.args.[=4]"]), json!(null)).unwrap();
        assert_eq!(out["containers"][0]["args"], json!(["a", "b", "hello"]));
        // `*` visits every element.
        let out = into_spec(v.clone(), "v", spec.clone(), json!(["spec.containers.*.image"]), json!(null)).unwrap();
        assert!(out["containers"].as_array().unwrap().iter().all(|c| c["image"] == json!("hello")));
        let e = into_spec(v, "v", spec, json!(["spec.containers.[name=^ngin$].image"]), json!(null)).unwrap_err();
        assert_eq!(e.to_string(), "unable to find field \"spec.containers.[name=^ngin$].image\" in replacement target");
    }

    #[test]
    fn map_keys_with_dots_are_escaped_or_bracketed() {
        let d = json!({"apiVersion": "v1", "kind": "Deployment", "metadata": {"name": "a", "annotations": {"a.b/c": "x"}}});
        for path in [r"metadata.annotations.a\.b/c", "metadata.annotations.[a.b/c]"] {
            let out = run(
                vec![cm("src", json!({"v": "hello"})), d.clone()],
                json!([{"source": {"kind": "ConfigMap", "fieldPath": "data.v"},
                        "targets": [{"select": {"kind": "Deployment"}, "fieldPaths": [path]}]}]),
            )
            .unwrap();
            assert_eq!(out[1]["metadata"]["annotations"]["a.b/c"], json!("hello"), "{path}");
        }
        for field in ["data.[dotted.key]", r"data.dotted\.key"] {
            let r = json!([{"source": {"kind": "ConfigMap", "fieldPath": field},
                            "targets": [{"select": {"kind": "Deployment"}}]}]);
            let out = run(vec![cm("src", json!({"dotted.key": "dk"})), deploy("a", json!({}))], r).unwrap();
            assert_eq!(out[1]["metadata"]["name"], json!("dk"), "{field}");
        }
    }

    #[test]
    fn missing_target_fields_are_errors_without_create() {
        let v = json!({"v": "hello"});
        let e = into_spec(v.clone(), "v", json!({}), json!(["spec.nope"]), json!(null)).unwrap_err();
        assert_eq!(e.to_string(), "unable to find field \"spec.nope\" in replacement target");
        let e = into_spec(v.clone(), "v", json!({"c": [{"a": 1}, {"a": 2}]}), json!(["spec.c.5.a"]), json!(null)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unable to find field \"spec.c.5.a\" in replacement target: index 5 specified but only 2 elements found"
        );
        let e = into_spec(v.clone(), "v", json!({"str": "abc"}), json!(["spec.str.x"]), json!(null)).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unable to find field \"spec.str.x\" in replacement target: wrong node kind: expected MappingNode but got ScalarNode: node contents:\nabc"
        );
        let e = into_spec(v.clone(), "v", json!({"c": []}), json!(["spec.c.[1].x"]), json!(null)).unwrap_err();
        assert!(e.to_string().ends_with(": list path element must contain fieldName=fieldValue for element to match"));
        let e = into_spec(v, "v", json!({}), json!(["spec.newmap.*.x"]), json!({"create": true})).unwrap_err();
        assert_eq!(
            e.to_string(),
            "unable to find or create field \"spec.newmap.*.x\" in replacement target: wrong node kind: expected SequenceNode but got MappingNode: node contents:\n{}"
        );
    }

    #[test]
    fn delimiters_split_the_source_and_splice_the_target() {
        let data = json!({"v": "a-b-c", "n": 8080});
        let img = json!({"img": "x:y:z"});
        let run_with = |source_options: Value, target_options: Value| {
            let source = json!({"kind": "ConfigMap", "name": "src", "fieldPath": "data.v", "options": source_options});
            run(vec![cm("src", data.clone()), deploy("a", img.clone())], one_target(source, json!(["spec.img"]), target_options))
                .map(|out| out[1]["spec"]["img"].clone())
        };
        assert_eq!(run_with(json!({"delimiter": "-", "index": 1}), json!(null)).unwrap(), json!("b"));
        assert_eq!(run_with(json!({"delimiter": "-"}), json!(null)).unwrap(), json!("a"));
        assert_eq!(
            run_with(json!({"delimiter": "-", "index": 3}), json!(null)).unwrap_err().to_string(),
            "options.index 3 is out of bounds for value a-b-c"
        );
        assert_eq!(run_with(json!({}), json!({"delimiter": ":", "index": 1})).unwrap(), json!("x:a-b-c:z"));
        // Past the end appends; a negative index prepends.
        assert_eq!(run_with(json!({}), json!({"delimiter": ":", "index": 5})).unwrap(), json!("x:y:z:a-b-c"));
        assert_eq!(run_with(json!({}), json!({"delimiter": ":", "index": -3})).unwrap(), json!("a-b-c:x:y:z"));
        // A split number keeps its type in a list target.
        let source = json!({"kind": "ConfigMap", "name": "src", "fieldPath": "data.n", "options": {"delimiter": "0"}});
        let out = run(vec![cm("src", data.clone()), deploy("a", json!({"l": [1]}))], one_target(source, json!(["spec.l"]), json!(null)));
        assert_eq!(out.unwrap()[1]["spec"]["l"], json!(8));
        // A delimiter into a map target, and into a created field.
        let e = into_spec(data.clone(), "v", json!({"m": {"k": "v"}}), json!(["spec.m"]), json!({"delimiter": "2"})).unwrap_err();
        assert_eq!(e.to_string(), "delimiter option can only be used with scalar nodes");
        let out = into_spec(data, "v", json!({}), json!(["spec.nope"]), json!({"delimiter": "2", "index": 1, "create": true}));
        assert_eq!(out.unwrap(), json!({"nope": "2a-b-c"}));
    }

    #[test]
    fn source_must_match_exactly_one_resource() {
        let res = vec![cm("src", json!({"v": "x"})), cm("src2", json!({"v": "y"})), deploy("a", json!({"x": 1}))];
        let t = json!([{"select": {"name": "a"}, "fieldPaths": ["spec.x"]}]);
        let e = err(res.clone(), json!([{"source": {"kind": "ConfigMap"}, "targets": t}]));
        assert_eq!(e, "multiple matches for selector ConfigMap.[noVer].[noGrp]/[noName].[noNs]");
        // Names are compared exactly, not as regular expressions.
        let e = err(res.clone(), json!([{"source": {"kind": "ConfigMap", "name": "src.*", "fieldPath": "data.v"}, "targets": t}]));
        assert_eq!(e, "nothing selected by ConfigMap.[noVer].[noGrp]/src.*.[noNs]:data.v");
        let e = err(
            res.clone(),
            json!([{"source": {"group": "apps", "version": "v1", "kind": "ConfigMap", "name": "zz", "fieldPath": "data.v",
                               "options": {"delimiter": "-", "index": 1}}, "targets": t}]),
        );
        assert_eq!(e, "nothing selected by ConfigMap.v1.apps/zz.[noNs]:data.v:-(1), create=false");
        let e = err(res.clone(), json!([{"source": {"name": "zz", "fieldPath": "data.e"}, "targets": t}]));
        assert_eq!(e, "nothing selected by [noKind].[noVer].[noGrp]/zz.[noNs]:data.e");
        let e = err(res, json!([{"source": {"kind": "ConfigMap", "name": "src", "fieldPath": "data.nope"}, "targets": t}]));
        assert_eq!(e, "fieldPath `data.nope` is missing for replacement source ConfigMap.[noVer].[noGrp]/src.[noNs]");
    }

    #[test]
    fn empty_null_or_misshaped_sources_are_errors() {
        let t = json!([{"select": {"kind": "Deployment"}}]);
        let data = json!({"em": {}, "el": [], "nul": null, "v": "hello"});
        let res = vec![cm("src", data), deploy("a", json!({}))];
        for field in ["em", "el", "nul"] {
            let e = err(res.clone(), json!([{"source": {"kind": "ConfigMap", "fieldPath": format!("data.{field}")}, "targets": t}]));
            assert_eq!(e, format!("fieldPath `data.{field}` is missing for replacement source ConfigMap.[noVer].[noGrp]/[noName].[noNs]"));
        }
        let e = err(res.clone(), json!([{"source": {"kind": "ConfigMap", "fieldPath": "data.v.x"}, "targets": t}]));
        assert_eq!(e, "error looking up replacement source: wrong node kind: expected MappingNode but got ScalarNode: node contents:\nhello");
        let e = err(res, json!([{"source": {"kind": "ConfigMap", "fieldPath": "data.v.-1"}, "targets": t}]));
        assert_eq!(e, "error looking up replacement source: array index -1 cannot be negative");
    }

    #[test]
    fn source_paths_support_indexes_last_and_exact_list_selectors() {
        let spec = json!({"containers": [{"name": "nginx", "image": "nginx:1"}, {"name": "other", "image": "other:1"}]});
        let res = vec![deploy("a", spec), cm("dst", json!({"v": "old"}))];
        for (path, want) in [("spec.containers.-.name", "other"), ("spec.containers.[name=other].image", "other:1"), ("spec.containers.0.name", "nginx")] {
            let r = json!([{"source": {"kind": "Deployment", "fieldPath": path},
                            "targets": [{"select": {"kind": "ConfigMap"}, "fieldPaths": ["data.v"]}]}]);
            assert_eq!(run(res.clone(), r).unwrap()[1]["data"]["v"], json!(want), "{path}");
        }
    }

    #[test]
    fn targets_match_any_id_and_rejects_match_any_id() {
        // An overlay added -dev: selecting by the original name works, and rejecting by either
        // the original or the current name wins (replacementtransformer__...SuffixTransformerAndReject).
        let mut a = Resource::new(deploy("a", json!({"x": "old"})));
        a.set_name("a-dev");
        let mut b = Resource::new(deploy("b", json!({"x": "old"})));
        b.set_name("b-dev");
        let mut src = Resource::new(cm("src", json!({"v": "hello"})));
        src.set_name("src-dev");
        let mut m = ResMap::from_vec(vec![src, a, b]);
        let r = json!([{"source": {"kind": "ConfigMap", "name": "src", "fieldPath": "data.v"},
                        "targets": [{"select": {"name": "a"}, "reject": [{"name": "a-dev"}], "fieldPaths": ["spec.x"]},
                                    {"select": {"name": "b-dev"}, "reject": [{"kind": "ConfigMap"}], "fieldPaths": ["spec.x"]}]}]);
        apply_replacements(&mut m, r.as_array().unwrap(), &loader()).unwrap();
        assert_eq!(m.get(1).value["spec"]["x"], json!("old"));
        assert_eq!(m.get(2).value["spec"]["x"], json!("hello"));
    }

    #[test]
    fn rejects_by_id_or_by_labels_independently() {
        let mut a = deploy("a", json!({"x": "old"}));
        a["metadata"]["labels"] = json!({"app": "x"});
        let mut b = deploy("b", json!({"x": "old"}));
        b["metadata"]["labels"] = json!({"app": "y"});
        let src = cm("src", json!({"v": "hello"}));
        // One reject with a name and a label selector rejects a (by name) and b (by label).
        let r = json!([{"source": {"kind": "ConfigMap", "fieldPath": "data.v"},
                        "targets": [{"select": {"kind": "Deployment"}, "reject": [{"name": "a", "labelSelector": "app=y"}], "fieldPaths": ["spec.x"]}]}]);
        let out = run(vec![src.clone(), a.clone(), b.clone()], r).unwrap();
        assert_eq!((out[1]["spec"]["x"].clone(), out[2]["spec"]["x"].clone()), (json!("old"), json!("old")));
        let r = json!([{"source": {"kind": "ConfigMap", "fieldPath": "data.v"},
                        "targets": [{"select": {"labelSelector": "app=y"}, "fieldPaths": ["spec.x"]}]}]);
        let out = run(vec![src, a, b], r).unwrap();
        assert_eq!((out[1]["spec"]["x"].clone(), out[2]["spec"]["x"].clone()), (json!("old"), json!("hello")));
    }

    #[test]
    fn default_namespace_selects_a_source_without_one_but_no_target_without_one() {
        // v5.8: a target's namespace is a regular expression over the namespace as written.
        let out = run(
            vec![cm("src", json!({"v": "hello"})), deploy("a", json!({"x": "old"}))],
            json!([{"source": {"kind": "ConfigMap", "namespace": "default", "fieldPath": "data.v"},
                    "targets": [{"select": {"name": "a", "namespace": "default"}, "fieldPaths": ["spec.x"]},
                                {"select": {"name": "a", "namespace": ""}, "fieldPaths": ["spec.y"], "options": {"create": true}}]}]),
        )
        .unwrap();
        assert_eq!((out[1]["spec"]["x"].clone(), out[1]["spec"]["y"].clone()), (json!("old"), json!("hello")));
    }

    #[test]
    fn cluster_scoped_resources_count_as_in_the_default_namespace() {
        let ns = json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "myns"}});
        let out = run(
            vec![ns, cm("src", json!({"v": "x"}))],
            json!([{"source": {"kind": "Namespace"},
                    "targets": [{"select": {"namespace": "default"}, "fieldPaths": ["metadata.annotations.ns"], "options": {"create": true}}]}]),
        )
        .unwrap();
        // A cluster-scoped source is found in `default`; a target without a namespace is not (v5.8).
        assert_eq!(out[0]["metadata"]["annotations"], Value::Null);
        assert_eq!(out[1]["metadata"]["annotations"], Value::Null);
        let out = run(
            vec![json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "myns"}}), cm("src", json!({"v": "x"}))],
            json!([{"source": {"kind": "Namespace", "namespace": "default"},
                    "targets": [{"select": {"kind": "ConfigMap"}, "fieldPaths": ["metadata.annotations.ns"], "options": {"create": true}}]}]),
        )
        .unwrap();
        assert_eq!(out[1]["metadata"]["annotations"], json!({"ns": "myns"}));
    }

    #[test]
    fn resources_must_keep_a_kind_and_a_name() {
        let mut d = deploy("a", json!({"int": 1}));
        d["metadata"]["namespace"] = json!("x");
        d["metadata"]["labels"] = json!({"b": "2", "a": "1"});
        d["metadata"]["annotations"] = json!({"z": "y"});
        let r = json!([{"source": {"kind": "ConfigMap", "fieldPath": "data.e"}, "targets": [{"select": {"name": "a"}}]}]);
        let e = err(vec![cm("src", json!({"e": ""})), d.clone()], r);
        assert_eq!(e, "missing metadata.name in object {{apps/v1 Deployment} {{ x} map[a:1 b:2] map[z:y]}}");
        // Checked before a value the target cannot hold is noticed.
        let r = json!([{"source": {"kind": "ConfigMap", "fieldPath": "data.v"}, "targets": [{"select": {"name": "a"}, "fieldPaths": ["spec.int"]}]},
                       {"source": {"kind": "ConfigMap", "fieldPath": "data.e"}, "targets": [{"select": {"name": "b"}}]}]);
        let e = err(vec![cm("src", json!({"e": "", "v": "hello"})), d, deploy("b", json!({}))], r);
        assert_eq!(e, "missing metadata.name in object {{apps/v1 Deployment} {{ } map[] map[]}}");
        let r = json!([{"source": {"kind": "ConfigMap", "fieldPath": "data.e"}, "targets": [{"select": {"name": "b"}, "fieldPaths": ["kind"]}]}]);
        let e = err(vec![cm("src", json!({"e": ""})), deploy("b", json!({}))], r);
        assert_eq!(e, "missing kind in object {{apps/v1 } {{b } map[] map[]}}");
    }

    #[test]
    fn default_field_paths_are_metadata_name() {
        let out = run(
            vec![cm("src", json!({"v": "renamed"})), deploy("a", json!({}))],
            json!([{"source": {"kind": "ConfigMap", "fieldPath": "data.v"}, "targets": [{"select": {"kind": "Deployment"}}]}]),
        )
        .unwrap();
        assert_eq!(out[1]["metadata"]["name"], json!("renamed"));
    }

    #[test]
    fn malformed_entries_use_kustomize_messages() {
        let res = vec![cm("src", json!({"v": "x"})), deploy("a", json!({}))];
        for (r, want) in [
            (json!([{"source": {"kind": "ConfigMap"}}]), "replacements must specify a source and at least one target"),
            (json!([{"source": {"kind": "ConfigMap"}, "targets": []}]), "replacements must specify a source and at least one target"),
            (json!([{"targets": [{"select": {}}]}]), "replacements must specify a source and at least one target"),
            (json!([{}]), "replacements must specify a source and at least one target"),
            (json!([{"source": {"kind": "ConfigMap"}, "targets": [{"fieldPaths": ["x"]}]}]), "target must specify resources to select"),
            (json!([{"sourceValues": "foo", "targets": []}]), "invalid Kustomization: json: unknown field \"sourceValues\""),
            (
                json!([{"source": {"kind": "ConfigMap", "fieldPath": "data.v"}, "targets": [{"select": {"kind": "Deployment"}, "options": {"index": "1"}}]}]),
                "invalid Kustomization: json: cannot unmarshal string into Go struct field FieldOptions.replacements.Replacement.targets.options.index of type int",
            ),
            (
                json!([{"source": {"kind": 5}}]),
                "invalid Kustomization: json: cannot unmarshal number into Go struct field SourceSelector.replacements.Replacement.source.ResId.Gvk.kind of type string",
            ),
            (
                json!([{"targets": [{"reject": {}}]}]),
                "invalid Kustomization: json: cannot unmarshal object into Go struct field TargetSelector.replacements.Replacement.targets.reject of type []*types.Selector",
            ),
            (
                json!([{"source": {"options": {"index": 1.5}}}]),
                "invalid Kustomization: json: cannot unmarshal number 1.5 into Go struct field FieldOptions.replacements.Replacement.source.options.index of type int",
            ),
            (
                json!([{"path": 5}]),
                "invalid Kustomization: json: cannot unmarshal number into Go struct field ReplacementField.replacements.path of type string",
            ),
        ] {
            assert_eq!(err(res.clone(), r.clone()), want, "{r}");
        }
    }

    #[test]
    fn field_names_match_case_insensitively_as_in_go() {
        let out = run(
            vec![cm("src", json!({"v": "hello"})), deploy("a", json!({"img": "x"}))],
            json!([{"source": {"kind": "ConfigMap", "Name": "src", "FIELDPATH": "data.v"},
                    "targets": [{"select": {"kind": "Deployment"}, "FieldPaths": ["spec.img"]}]}]),
        )
        .unwrap();
        assert_eq!(out[1]["spec"]["img"], json!("hello"));
    }

    /// A folder with files, removed when dropped.
    struct Dir(PathBuf);

    impl Dir {
        fn new(files: &[(&str, &str)]) -> Dir {
            let n = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap().as_nanos();
            let p = std::env::temp_dir().join(format!("ppb-replacements-{}-{n}", std::process::id()));
            std::fs::create_dir_all(&p).unwrap();
            for (name, text) in files {
                std::fs::write(p.join(name), text).unwrap();
            }
            Dir(p)
        }

        fn loader(&self) -> Loader {
            Loader::new(&self.0, LoadRestrictor::RootOnly).unwrap()
        }
    }

    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn path_entries_hold_one_replacement_or_a_list() {
        let one = r#"{"source": {"kind": "ConfigMap", "name": "src", "fieldPath": "data.v", "bogus": 1},
                      "sourceValues": "x", "targets": [{"select": {"kind": "Deployment"}, "fieldPaths": ["spec.img"]}]}"#;
        let list = r#"[{"source": {"kind": "ConfigMap", "name": "src", "fieldPath": "data.v"},
                        "targets": [{"select": {"kind": "Deployment"}, "fieldPaths": ["spec.img"]}]},
                       {"source": {"kind": "ConfigMap", "name": "src", "fieldPath": "data.n"},
                        "targets": [{"select": {"kind": "Deployment"}, "fieldPaths": ["spec.int"]}]},
                       {"source": {"kind": "ConfigMap", "name": "src"}, "targets": []}]"#;
        let dir = Dir::new(&[("one.json", one), ("list.json", list), ("scalar.json", "\"just a string\"")]);
        let res = || resmap(vec![cm("src", json!({"v": "a-b-c", "n": 8080})), deploy("a", json!({"img": "x:y:z", "int": 123}))]);
        // Unknown fields are ignored in files; an empty target list is no error there.
        let mut m = res();
        apply_replacements(&mut m, &[json!({"path": "one.json"})], &dir.loader()).unwrap();
        assert_eq!(m.get(1).value["spec"], json!({"img": "a-b-c", "int": 123}));
        let mut m = res();
        apply_replacements(&mut m, &[json!({"path": "list.json"})], &dir.loader()).unwrap();
        assert_eq!(m.get(1).value["spec"], json!({"img": "a-b-c", "int": 8080}));
        let e = apply_replacements(&mut res(), &[json!({"path": "scalar.json"})], &dir.loader()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "trouble configuring builtin ReplacementTransformer with config: `\nReplacements:\n- path: scalar.json\n`: unsupported replacement type encountered within replacement path: string"
        );
    }

    #[test]
    fn configuration_errors_print_the_configuration() {
        let dir = Dir::new(&[]);
        let entries = [
            json!({"source": {"kind": "ConfigMap", "name": "src", "fieldPath": "data.v", "version": "v1",
                              "options": {"delimiter": "-", "index": 1}},
                   "targets": [{"select": {"kind": "Deployment", "labelSelector": "a=b"}, "reject": [{"name": "x"}, {}],
                                "fieldPaths": ["spec.img"], "options": {"create": true, "index": 0}},
                               {"select": {}}]}),
            json!({"path": "nope.yaml"}),
        ];
        let e = apply_replacements(&mut ResMap::new(), &entries, &dir.loader()).unwrap_err().to_string();
        let missing = dir.0.canonicalize().unwrap().join("nope.yaml");
        let want = format!(
            "trouble configuring builtin ReplacementTransformer with config: `
Replacements:
- source:
    fieldPath: data.v
    kind: ConfigMap
    name: src
    options:
      delimiter: '-'
      index: 1
    version: v1
  targets:
  - fieldPaths:
    - spec.img
    options:
      create: true
    reject:
    - name: x
    - {{}}
    select:
      kind: Deployment
      labelSelector: a=b
  - select: {{}}
- path: nope.yaml
`: evalsymlink failure on '{p}' : lstat {p}: no such file or directory",
            p = missing.display()
        );
        assert_eq!(e, want);
        let both = [json!({"path": "x.yaml", "source": {"kind": "ConfigMap"}})];
        let e = apply_replacements(&mut ResMap::new(), &both, &dir.loader()).unwrap_err().to_string();
        assert!(e.ends_with("`: cannot specify both path and inline replacement"), "{e}");
    }
}
