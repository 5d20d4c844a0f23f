//! Strategic merge patch, as kustomize v5.6.0 applies it: the kyaml `merge2`
//! walker with `ListIncreaseDirection: prepend` (not apimachinery's strategicpatch).
//!
//! What that means, in short (each point checked against the reference):
//! - Maps merge field by field; fields only in the patch are added in sorted order.
//! - `null` in the patch removes the field; a `null` already in the target stays.
//! - Lists whose schema strategy includes `merge` are merged by their keys
//!   (`x-kubernetes-list-map-keys`, else `x-kubernetes-patch-merge-key`); the result
//!   starts with the patch's elements, in patch order, then the target's other elements.
//!   With several keys (ports), target elements all move to the end, in target order.
//!   A `merge` list without a key (`finalizers`) merges its scalar values the same way.
//! - Every other list is replaced by the patch's list, as is (no directive processing).
//! - `$patch: delete` removes a map or a keyed list element (the whole resource at the
//!   top: the target becomes `null`); `$patch: replace` replaces a map (on a keyed list
//!   element it is dropped and the target element is kept unchanged, as kyaml does);
//!   `$patch: merge` is the default. Any other `$patch` value is an error.
//! - In a `merge` list whose target exists, an item whose only key is `$patch` directs the
//!   whole list (the first such item counts; all items with its value are dropped): `delete`
//!   removes the field, `replace` makes the patch's list the result, its items not merged
//!   with the target's. In other lists, and where the target has no such list, the item is
//!   an ordinary item and is printed.
//! - `$retainKeys`, `$setElementOrder/...` and `$deleteFromPrimitiveList/...` are *not*
//!   directives for kyaml: they are ordinary fields and land in the output.
//! - Kinds without a schema (CRDs without `openapi:`) merge maps and replace lists.
//!
//! Keyed lists whose elements all carry all keys (the normal case) merge in linear
//! time through hash indexes; anything irregular (missing keys, duplicates, empty
//! elements) goes through a literal port of kyaml's element setter, quirks included.
use std::borrow::Cow;

use crate::fast_hash::{field, field_mut, FastHashMap, FastHashSet};
use serde_json::{Map, Value};

use super::schema::{Schema, SchemaNode};
use crate::yaml::empty_nulls::EmptyNulls;
use super::PatchError;

type Result<T> = std::result::Result<T, PatchError>;

/// Apply the strategic merge patch `patch` to `target` in place.
///
/// The schema of the target is found from its `apiVersion`/`kind` (then the patch's).
/// A `$patch: replace` at the top changes nothing.
/// When the patch deletes the whole object (`$patch: delete` at the top), `target`
/// becomes `Value::Null`; the caller should then drop the resource (kustomize also
/// drops a resource that ends up as an empty map).
///
/// `empty_nulls` says where the target holds nulls written as nothing (`key:`): those
/// fields are dropped wherever the walk meets them (kyaml sets every target field again
/// and an empty value clears it), while a null written `null` or `~` stays.
///
/// Returns whether `target` changed (is no longer `==` to what it was): the walk knows where
/// it wrote, so nothing is compared but the values it wrote over. `transparent` is a key the
/// caller wrote into the target's maps for its own purposes: not counted as content then.
pub fn strategic_merge(target: &mut Value, patch: Value, schema: &Schema, empty_nulls: Option<&EmptyNulls>, transparent: Option<&str>) -> Result<bool> {
    if patch.get("$patch").and_then(Value::as_str) == Some("replace") {
        // kyaml builds the replacement on the patch's own node, and kustomize keeps only what
        // the walk changed in the resource's node: nothing.
        return Ok(false);
    }
    let dest = std::mem::take(target);
    let mut w = Walker { schema, transparent };
    let (out, changed) = w.walk(Some(dest), Some(patch), None, empty_nulls)?;
    *target = match out {
        Out::Clear => return Ok(true),
        Out::Dest(v) | Out::Origin(v) => v,
    };
    Ok(changed)
}

/// What a walk produced: nothing (clear the field), the target's node (possibly
/// merged in place), or the patch's node. kyaml distinguishes the last two by node
/// identity; keyed lists keep the target's element when it exists.
///
/// Each walk also says whether the value it produced differs from the target's value it
/// was given (meaningful when there was one and the result is a value).
enum Out {
    Clear,
    Dest(Value),
    Origin(Value),
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    Map,
    Seq,
    Scalar,
}

fn kind_of(v: &Value) -> Option<Kind> {
    match v {
        Value::Null => None,
        Value::Object(_) => Some(Kind::Map),
        Value::Array(_) => Some(Kind::Seq),
        _ => Some(Kind::Scalar),
    }
}

fn kind_name(k: Kind) -> &'static str {
    match k {
        Kind::Map => "MappingNode",
        Kind::Seq => "SequenceNode",
        Kind::Scalar => "ScalarNode",
    }
}

fn is_null(v: &Option<Value>) -> bool {
    matches!(v, None | Some(Value::Null))
}

/// The text of a scalar as the YAML node holds it (maps and lists have none).
fn node_value(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::Null => "null".to_string(),
        _ => String::new(),
    }
}

/// [`node_value`] without copying a string, for a value only compared.
fn node_text(v: &Value) -> Cow<'_, str> {
    match v {
        Value::String(s) => Cow::Borrowed(s),
        _ => Cow::Owned(node_value(v)),
    }
}

/// The key values of an element of a list merged by `keys`, for the indexed merge: none unless
/// the element is a non-empty mapping holding every key as a non-empty scalar.
fn key_texts<'v>(elem: &'v Value, keys: &[impl AsRef<str>]) -> Option<Vec<Cow<'v, str>>> {
    let m = elem.as_object().filter(|m| !m.is_empty())?;
    keys.iter().map(|k| field(m, k.as_ref()).filter(|x| is_key_scalar(x)).map(node_text)).collect()
}

/// Whether `elem` has what [`key_texts`] reads, without reading it out.
fn holds_every_key(elem: &Value, keys: &[impl AsRef<str>]) -> bool {
    let Some(m) = elem.as_object().filter(|m| !m.is_empty()) else { return false };
    keys.iter().all(|k| field(m, k.as_ref()).is_some_and(is_key_scalar))
}

/// A key field's value an element is matched by: a non-empty string, a number or a boolean.
fn is_key_scalar(v: &Value) -> bool {
    match v {
        Value::String(s) => !s.is_empty(),
        Value::Number(_) | Value::Bool(_) => true,
        _ => false,
    }
}

/// kyaml `ElementValuesList` for one element: "" for a missing, null or empty key field.
fn key_value(elem: &Value, key: &str) -> String {
    match elem.as_object().and_then(|m| m.get(key)) {
        None | Some(Value::Null) => String::new(),
        Some(Value::Object(m)) if m.is_empty() => String::new(),
        Some(Value::Array(a)) if a.is_empty() => String::new(),
        Some(v) => node_value(v),
    }
}

fn is_empty_map(v: &Value) -> bool {
    matches!(v, Value::Object(m) if m.is_empty())
}

fn wrong_kind_of(expected: Kind, got: &Value) -> PatchError {
    let got_kind = kind_of(got).map(kind_name).unwrap_or("ScalarNode");
    PatchError(format!(
        "wrong node kind: expected {} but got {}: node contents:\n{}",
        kind_name(expected),
        got_kind,
        yaml_text(got)
    ))
}

/// A plain block-YAML rendering, for error messages only.
fn yaml_text(v: &Value) -> String {
    fn scalar(v: &Value) -> String {
        match v {
            Value::String(s) => {
                if s.is_empty() || s.contains([':', '#', '\n', '"', '\'']) || s.trim() != s {
                    serde_json::to_string(s).unwrap_or_default()
                } else {
                    s.clone()
                }
            }
            Value::Object(m) if m.is_empty() => "{}".into(),
            Value::Array(a) if a.is_empty() => "[]".into(),
            other => other.to_string(),
        }
    }
    fn go(v: &Value, indent: usize, out: &mut String) {
        let pad = " ".repeat(indent);
        match v {
            Value::Object(m) if !m.is_empty() => {
                for (k, val) in m {
                    match val {
                        Value::Object(x) if !x.is_empty() => {
                            out.push_str(&format!("{pad}{k}:\n"));
                            go(val, indent + 2, out);
                        }
                        Value::Array(x) if !x.is_empty() => {
                            out.push_str(&format!("{pad}{k}:\n"));
                            go(val, indent, out);
                        }
                        _ => out.push_str(&format!("{pad}{k}: {}\n", scalar(val))),
                    }
                }
            }
            Value::Array(a) if !a.is_empty() => {
                for item in a {
                    let mut inner = String::new();
                    go(item, indent + 2, &mut inner);
                    let inner = inner.trim_start().to_string();
                    out.push_str(&format!("{pad}- {inner}"));
                    if !inner.ends_with('\n') {
                        out.push('\n');
                    }
                }
            }
            other => out.push_str(&format!("{pad}{}\n", scalar(other))),
        }
    }
    let mut out = String::new();
    go(v, 0, &mut out);
    out
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Directive {
    Merge,
    Replace,
    Delete,
    Unknown,
}

/// kyaml `determineSmpDirective`: read and remove `$patch` from a map patch.
/// A value other than delete/replace/merge is an error (left in place).
fn directive(origin: &mut Option<Value>) -> Result<Directive> {
    match origin {
        None => Ok(Directive::Merge),
        Some(Value::Array(_)) => Ok(Directive::Merge),
        Some(Value::Object(m)) => {
            let Some(v) = field(m, "$patch") else { return Ok(Directive::Merge) };
            let text = node_value(v);
            let d = match text.as_str() {
                "delete" => Directive::Delete,
                "replace" => Directive::Replace,
                "merge" => Directive::Merge,
                _ => return Err(PatchError(format!("unknown patch strategy '{text}'"))),
            };
            m.shift_remove("$patch");
            Ok(d)
        }
        Some(other) => {
            let tag = match other {
                Value::Null => "!!null",
                Value::Bool(_) => "!!bool",
                Value::Number(n) if n.is_f64() => "!!float",
                Value::Number(_) => "!!int",
                _ => "!!str",
            };
            Err(PatchError(format!(
                "no implemented strategic merge patch strategy for '{tag}' ('{}')",
                yaml_text(other).trim_end()
            )))
        }
    }
}

/// kyaml `determineSequenceNodePatchStrategy`: the first map item holding `$patch` is a
/// directive for the whole list when `$patch` is its only key. Its value must be delete,
/// replace or merge; then every map item with that `$patch` value is removed from the patch's
/// list, and so are null and empty items (kyaml's element setter drops them on the way).
/// Any other first `$patch` item leaves the list to merge, item by item.
fn sequence_directive(list: &mut Vec<Value>) -> Result<Directive> {
    let Some(item) = list.iter().filter_map(Value::as_object).find(|m| field(m, "$patch").is_some()) else {
        return Ok(Directive::Merge);
    };
    if item.len() > 1 {
        return Ok(Directive::Merge);
    }
    let text = node_value(&item["$patch"]);
    let d = match text.as_str() {
        "delete" => Directive::Delete,
        "replace" => Directive::Replace,
        "merge" => Directive::Merge,
        _ => return Err(PatchError(format!("unknown patch strategy '{text}'"))),
    };
    list.retain(|v| match v {
        Value::Null => false,
        Value::Object(m) => !m.is_empty() && field(m, "$patch").is_none_or(|p| node_value(p) != text),
        _ => true,
    });
    Ok(d)
}

struct Walker<'s> {
    schema: &'s Schema,
    /// See [`strategic_merge`].
    transparent: Option<&'s str>,
}

impl<'s> Walker<'s> {
    /// `target == result`, but for the caller's transparent key in their maps.
    fn same(&self, target: &Value, result: &Value) -> bool {
        let Some(key) = self.transparent else { return target == result };
        match (target, result) {
            (Value::Object(t), Value::Object(r)) => {
                let content = |m: &Map<String, Value>| m.len() - usize::from(m.contains_key(key));
                content(t) == content(r) && t.iter().filter(|(k, _)| *k != key).all(|(k, v)| r.get(k).is_some_and(|rv| self.same(v, rv)))
            }
            (Value::Array(t), Value::Array(r)) => t.len() == r.len() && t.iter().zip(r).all(|(a, b)| self.same(a, b)),
            _ => target == result,
        }
    }

    /// kyaml `Walker.GetSchema` without comment schemas: the given schema, else the
    /// schema of the first source carrying a known apiVersion and kind.
    fn schema_of(&self, given: Option<SchemaNode<'s>>, srcs: [Option<&Value>; 2]) -> Option<SchemaNode<'s>> {
        if given.is_some() {
            return given;
        }
        for src in srcs.into_iter().flatten() {
            let (Some(kind), Some(av)) = (src.get("kind").and_then(Value::as_str), src.get("apiVersion").and_then(Value::as_str))
            else {
                continue;
            };
            if kind.is_empty() || av.is_empty() {
                continue;
            }
            if let Some(s) = self.schema.root(av, kind) {
                return Some(s);
            }
        }
        None
    }

    /// Whether walking `dest` without a patch (`walk(Some(dest), None, ..)`, which kyaml does for
    /// every target field the patch does not name) would give it back unchanged: no empty null
    /// to drop and no merge list its walk would rebuild (duplicates, elements without their
    /// keys, null or empty elements). Read without copying, so such fields stay where they are.
    fn settled(&self, dest: &Value, sch: Option<SchemaNode<'s>>, nulls: Option<&EmptyNulls>) -> bool {
        match dest {
            Value::Object(map) => {
                let sch = self.schema_of(sch, [Some(dest), None]);
                map.iter().all(|(key, value)| self.settled_field(key, value, sch, nulls))
            }
            Value::Array(items) => {
                let Some(sch) = self.schema_of(sch, [Some(dest), None]).filter(|s| s.has_merge_strategy()) else {
                    // A list replaced as a whole: its items are not walked.
                    return true;
                };
                let keys = sch.merge_keys();
                if keys.is_empty() {
                    // merge_primitive's regular case keeps such a list as it is.
                    let mut seen = FastHashSet::default();
                    return items.iter().all(|v| matches!(kind_of(v), Some(Kind::Scalar)) && seen.insert(node_text(v)));
                }
                let elements = sch.elements();
                if !items.iter().all(|item| holds_every_key(item, &keys)) {
                    return self.settled_irregular(items, &keys, elements);
                }
                // merge_keyed's indexed case keeps each element in place: every element a
                // non-empty mapping holding every key as a non-empty scalar, no two alike, each
                // settled itself.
                let mut seen = FastHashSet::with_capacity_and_hasher(items.len(), Default::default());
                items.iter().enumerate().all(|(i, item)| {
                    key_texts(item, &keys).is_some_and(|t| seen.insert(t)) && self.settled(item, elements, nulls.and_then(|n| n.item(i)))
                })
            }
            _ => true,
        }
    }

    /// [`Self::settled`] for a merge list some element of which lacks a key (container ports
    /// without a `protocol`), which the walk rebuilds through [`Self::merge_generic`]. That
    /// rebuild gives the list back as it was when every element is a non-empty mapping holding
    /// the same keys as the others (those kyaml finds a value for: a non-empty scalar), at least
    /// one, with values no two elements share, each element settled itself (empty nulls
    /// included: an irregular list keeps them). Then each element is matched by those keys alone,
    /// found in its own place, walked unchanged and set back in that place, and the list comes
    /// out in its order (set element by element when there is one key, taken out and appended
    /// again in order when there are several). Any other irregular list is walked.
    fn settled_irregular(&self, items: &[Value], keys: &[&str], elements: Option<SchemaNode<'s>>) -> bool {
        let texts = |item: &Value| -> Vec<String> { keys.iter().map(|k| key_value(item, k)).collect() };
        let Some(first) = items.first() else { return true };
        let held: Vec<bool> = texts(first).iter().map(|t| !t.is_empty()).collect();
        if !held.contains(&true) {
            return false;
        }
        let mut seen = FastHashSet::with_capacity_and_hasher(items.len(), Default::default());
        items.iter().all(|item| {
            let texts = texts(item);
            matches!(item, Value::Object(m) if !m.is_empty())
                && texts.iter().zip(&held).all(|(text, held)| text.is_empty() != *held)
                && seen.insert(texts)
                && self.settled(item, elements, None)
        })
    }

    /// [`Self::settled`] for one field of a mapping whose schema is `sch`: a null stays unless
    /// it was written as nothing.
    fn settled_field(&self, key: &str, value: &Value, sch: Option<SchemaNode<'s>>, nulls: Option<&EmptyNulls>) -> bool {
        let nulls = nulls.and_then(|n| n.field(key));
        match value {
            Value::Null => !nulls.is_some_and(EmptyNulls::here),
            Value::Object(_) | Value::Array(_) => self.settled(value, sch.and_then(|s| s.field(key)), nulls),
            _ => true,
        }
    }

    fn walk(&mut self, dest: Option<Value>, origin: Option<Value>, sch: Option<SchemaNode<'s>>, nulls: Option<&EmptyNulls>) -> Result<(Out, bool)> {
        let sch = self.schema_of(sch, [dest.as_ref(), origin.as_ref()]);
        let kind = dest.as_ref().and_then(kind_of).or_else(|| origin.as_ref().and_then(kind_of));
        if let Some(k) = kind {
            for src in [&dest, &origin].into_iter().flatten() {
                if kind_of(src).is_some_and(|sk| sk != k) {
                    return Err(wrong_kind_of(k, src));
                }
            }
        }
        match kind {
            Some(Kind::Map) | None => self.walk_map(dest, origin, sch, nulls),
            Some(Kind::Seq) if sch.is_some_and(|s| s.has_merge_strategy()) => self.walk_assoc(dest, origin, sch.unwrap(), nulls),
            // non-associative lists and scalars: the patch's value wins as is
            Some(_) => Ok(match (origin, dest) {
                (Some(o), d) => {
                    let o = keep_quoted_style(o, d.as_ref());
                    let changed = d.as_ref().is_none_or(|d| !self.same(d, &o));
                    (Out::Origin(o), changed)
                }
                (None, Some(d)) => (Out::Dest(d), false),
                (None, None) => (Out::Clear, false),
            }),
        }
    }

    fn walk_map(&mut self, dest: Option<Value>, mut origin: Option<Value>, sch: Option<SchemaNode<'s>>, nulls: Option<&EmptyNulls>) -> Result<(Out, bool)> {
        // kyaml Merger.VisitMap
        // The target's map a `$patch: replace` replaces, to tell whether the result differs.
        let mut replaced = None;
        let (mut new_dest, is_dest) = if is_null(&dest) {
            let ps = directive(&mut origin).unwrap_or(Directive::Unknown);
            if ps == Directive::Delete {
                return Ok((Out::Clear, false));
            }
            match (&origin, dest) {
                // an explicit null already in the target is kept
                (None, Some(Value::Null)) => return Ok((Out::Dest(Value::Null), false)),
                (None, _) => return Ok((Out::Clear, false)),
                (Some(o), _) => (o.clone(), false),
            }
        } else {
            if matches!(origin, Some(Value::Null)) {
                return Ok((Out::Clear, false));
            }
            match directive(&mut origin)? {
                Directive::Delete => return Ok((Out::Clear, false)),
                Directive::Replace => {
                    replaced = dest;
                    (origin.clone().unwrap_or(Value::Null), false)
                }
                _ => (dest.unwrap_or(Value::Null), true),
            }
        };
        let nulls = nulls.filter(|_| is_dest);
        let Value::Object(dmap) = &mut new_dest else { return Ok(self.wrap(new_dest, is_dest, replaced.as_ref())) };
        let omap = match origin {
            Some(Value::Object(m)) => m,
            _ => Map::new(),
        };
        // The fields to walk, in the order of their keys: the patch's (moved out of it), and the
        // target's fields the patch does not name only when the walk would change them (see
        // `settled`).
        let mut fields: Vec<(String, Option<Value>)> = dmap
            .iter()
            .filter(|(k, v)| field(&omap, k).is_none() && !self.settled_field(k, v, sch, nulls))
            .map(|(k, _)| (k.clone(), None))
            .collect();
        fields.extend(omap.into_iter().map(|(k, v)| (k, Some(v))));
        fields.sort_unstable_by(|a, b| a.0.cmp(&b.0));
        let mut changed = false;
        for (key, o) in fields {
            let fs = sch.and_then(|s| s.field(&key));
            let d = field_mut(dmap, &key).map(std::mem::take);
            let had = d.is_some();
            let field_nulls = nulls.and_then(|n| n.field(&key));
            if o.is_none() && matches!(d, Some(Value::Null)) {
                if field_nulls.is_some_and(EmptyNulls::here) {
                    dmap.shift_remove(&key);
                    changed = true;
                }
                // else kept as it is (the field still holds the null)
                continue;
            }
            match self.walk(d, o, fs, field_nulls)? {
                (Out::Clear | Out::Origin(Value::Null), _) => {
                    dmap.shift_remove(&key);
                    changed |= had;
                }
                (Out::Dest(v) | Out::Origin(v), field_changed) => {
                    changed |= !had || field_changed;
                    match field_mut(dmap, &key) {
                        Some(slot) => *slot = v,
                        None => {
                            dmap.insert(key, v);
                        }
                    }
                }
            }
        }
        let (out, replaced_changed) = self.wrap(new_dest, is_dest, replaced.as_ref());
        Ok((out, changed || replaced_changed))
    }

    /// A map merged into the target's (`is_dest`) or made from the patch: the latter differs
    /// from the target's null or `replaced` map unless equal to it.
    fn wrap(&self, v: Value, is_dest: bool, replaced: Option<&Value>) -> (Out, bool) {
        match is_dest {
            true => (Out::Dest(v), false),
            false => {
                let changed = replaced.is_none_or(|r| !self.same(r, &v));
                (Out::Origin(v), changed)
            }
        }
    }

    fn walk_assoc(&mut self, dest: Option<Value>, origin: Option<Value>, sch: SchemaNode<'s>, nulls: Option<&EmptyNulls>) -> Result<(Out, bool)> {
        // kyaml Merger.VisitList for associative lists
        // The target's list a `$patch: replace` replaces, to tell whether the result differs.
        let mut replaced = None;
        let (dest_list, origin_list, alias) = if is_null(&dest) {
            match origin {
                Some(Value::Array(o)) => (o, None, true),
                _ => return Ok((Out::Clear, false)),
            }
        } else {
            match origin {
                Some(Value::Null) => return Ok((Out::Clear, false)),
                Some(Value::Array(mut o)) => match sequence_directive(&mut o)? {
                    Directive::Delete => return Ok((Out::Clear, false)),
                    // kyaml makes the patch's list the target: its items merge with themselves
                    Directive::Replace => {
                        replaced = dest;
                        (o, None, true)
                    }
                    _ => (into_array(dest), Some(o), false),
                },
                _ => (into_array(dest), None, false),
            }
        };
        let keys: Vec<String> = sch.merge_keys().into_iter().map(str::to_string).collect();
        let elem_schema = sch.elements();
        let (list, changed) = if keys.is_empty() {
            self.merge_primitive(dest_list, origin_list, alias)?
        } else {
            self.merge_keyed(dest_list, origin_list, alias, &keys, elem_schema, nulls.filter(|_| !alias))?
        };
        Ok(match alias {
            true => {
                let list = Value::Array(list);
                let changed = replaced.as_ref().is_none_or(|r| !self.same(r, &list));
                (Out::Origin(list), changed)
            }
            false => (Out::Dest(Value::Array(list)), changed),
        })
    }

    /// [`Self::merge_generic`], and whether the list it gives differs from `dest` (when not
    /// `alias`; irregular lists are rare, so the target's list is copied to tell).
    #[allow(clippy::too_many_arguments)]
    fn merge_generic_compared(
        &mut self,
        dest: Vec<Value>,
        origin: Option<Vec<Value>>,
        alias: bool,
        keys: &[String],
        elem_schema: Option<SchemaNode<'s>>,
        primitive: bool,
    ) -> Result<(Vec<Value>, bool)> {
        // Whether the list changed, as `same` tells it, from digests: the list is not copied to
        // be compared (a collision, about 2^-64, would only warn that the patch changed nothing).
        let digester = crate::fast_hash::Digester::new();
        let before = (!alias).then(|| crate::fast_hash::digest_items(&dest, &digester, self.transparent));
        let out = self.merge_generic(dest, origin, alias, keys, elem_schema, primitive)?;
        let changed = before.is_none_or(|before| crate::fast_hash::digest_items(&out, &digester, self.transparent) != before);
        Ok((out, changed))
    }

    /// A `merge` list without keys (e.g. finalizers): unique values, the patch's first.
    /// Also says whether the list differs from `dest` (when not `alias`).
    fn merge_primitive(&mut self, dest: Vec<Value>, origin: Option<Vec<Value>>, alias: bool) -> Result<(Vec<Value>, bool)> {
        let regular = |l: &[Value]| {
            let mut seen = FastHashSet::default();
            l.iter().all(|v| matches!(kind_of(v), Some(Kind::Scalar)) && seen.insert(node_value(v)))
        };
        let fast = regular(&dest) && (alias || regular(origin.as_deref().unwrap_or(&[])));
        if !fast {
            return self.merge_generic_compared(dest, origin, alias, &[String::new()], None, true);
        }
        let dest_len = dest.len();
        // Each value with its place in the target's list.
        let mut dest_by_value: FastHashMap<String, (usize, Value)> = FastHashMap::with_capacity_and_hasher(dest.len(), Default::default());
        let dest_order: Vec<String> = dest
            .into_iter()
            .enumerate()
            .map(|(i, v)| {
                let s = node_value(&v);
                dest_by_value.insert(s.clone(), (i, v));
                s
            })
            .collect();
        let mut out = Vec::with_capacity(dest_order.len() + origin.as_ref().map_or(0, Vec::len));
        // The list is unchanged when it is the target's values, each at its own place (a value
        // from the patch alone is not `==` to any of the target's: its text differs).
        let mut changed = false;
        let mut seen = FastHashSet::default();
        if !alias {
            for v in origin.unwrap_or_default() {
                let s = node_value(&v);
                seen.insert(s.clone());
                match dest_by_value.remove(&s) {
                    Some((i, d)) => {
                        changed |= i != out.len();
                        out.push(d);
                    }
                    None => {
                        changed = true;
                        out.push(v);
                    }
                }
            }
        }
        for s in dest_order {
            if seen.insert(s.clone()) {
                if let Some((i, v)) = dest_by_value.remove(&s) {
                    changed |= i != out.len();
                    out.push(v);
                }
            }
        }
        changed |= out.len() != dest_len;
        Ok((out, changed))
    }

    /// A list merged by keys; also says whether it differs from `dest` (when not `alias`).
    fn merge_keyed(
        &mut self,
        dest: Vec<Value>,
        origin: Option<Vec<Value>>,
        alias: bool,
        keys: &[String],
        elem_schema: Option<SchemaNode<'s>>,
        nulls: Option<&EmptyNulls>,
    ) -> Result<(Vec<Value>, bool)> {
        // Owned: the elements move into the walk while their key values are still in use.
        let tuple_of = |v: &Value| -> Option<Vec<String>> { Some(key_texts(v, keys)?.into_iter().map(Cow::into_owned).collect()) };
        // Each element's key values, read once: a walk leaves them as they are (the patch's
        // element has the same ones), so they also say where each merged element goes.
        let tuples = |l: &[Value]| -> Option<Vec<Vec<String>>> { l.iter().map(tuple_of).collect() };
        fn index(tuples: &[Vec<String>]) -> Option<FastHashMap<&[String], usize>> {
            let mut idx = FastHashMap::with_capacity_and_hasher(tuples.len(), Default::default());
            for (i, t) in tuples.iter().enumerate() {
                if idx.insert(t.as_slice(), i).is_some() {
                    return None;
                }
            }
            Some(idx)
        }
        let dest_tuples = tuples(&dest);
        let origin_tuples = match (alias, origin.as_deref()) {
            (true, _) | (false, None) => Some(Vec::new()),
            (false, Some(o)) => tuples(o),
        };
        let indexes = match (&dest_tuples, &origin_tuples) {
            (Some(d), Some(o)) => index(d).zip(index(o)),
            _ => None,
        };
        let Some((dest_idx, origin_idx)) = indexes else {
            return self.merge_generic_compared(dest, origin, alias, keys, elem_schema, false);
        };
        let (dest_tuples, origin_tuples) = (dest_tuples.as_deref().unwrap_or_default(), origin_tuples.as_deref().unwrap_or_default());
        // Aliased, the list merges with itself.
        let origin_idx = if alias { &dest_idx } else { &origin_idx };

        // Fast path: every element has every key, no duplicates on either side.
        let mut origin_list: Vec<Value> = if alias { Vec::new() } else { origin.unwrap_or_default() };
        let origin_src = if alias { dest_tuples } else { origin_tuples };
        let mut seen = FastHashSet::with_capacity_and_hasher(origin_src.len() + dest_tuples.len(), Default::default());
        let order: Vec<&[String]> = origin_src.iter().chain(dest_tuples).map(Vec::as_slice).filter(|t| seen.insert(*t)).collect();

        let mut dest_slots: Vec<Option<Value>> = dest.into_iter().map(Some).collect();
        // Whether the walk changed the element in each slot.
        let mut slot_changed = vec![false; dest_slots.len()];
        let mut merged: FastHashMap<&[String], Value> = FastHashMap::with_capacity_and_hasher(order.len(), Default::default());
        for &t in &order {
            let di = dest_idx.get(t).copied();
            // A target element the patch does not name stays in its slot when its walk would
            // not change it.
            if let (Some(i), false) = (di, alias || origin_idx.contains_key(t)) {
                if dest_slots[i].as_ref().is_some_and(|d| self.settled(d, elem_schema, nulls.and_then(|n| n.item(i)))) {
                    continue;
                }
            }
            // Each element is walked once, so it moves into the walk; the target's element is
            // copied only where it must survive the walk: when aliased, or when the patch's
            // element carries a `$patch` directive (`replace` keeps the target's element).
            let o = if alias { None } else { origin_idx.get(t).map(|&i| std::mem::take(&mut origin_list[i])) };
            let keep_dest = alias || o.as_ref().is_some_and(|o| o.get("$patch").is_some());
            let d = di.and_then(|i| if keep_dest { dest_slots[i].clone() } else { dest_slots[i].take() });
            let o = if alias { d.clone() } else { o };
            let (out, mut element_changed) = self.walk(d, o, elem_schema, di.and_then(|i| nulls?.item(i)))?;
            let (val, in_place) = match out {
                Out::Clear => (None, false),
                Out::Dest(v) => (Some(v), true),
                Out::Origin(v) => (Some(v), false),
            };
            match val {
                None | Some(Value::Null) => {
                    if let Some(i) = di {
                        dest_slots[i] = None;
                    }
                }
                Some(v) if is_empty_map(&v) => {
                    if let Some(i) = di {
                        dest_slots[i] = None;
                    }
                }
                Some(mut v) => {
                    if let Value::Object(m) = &mut v {
                        for (k, s) in keys.iter().zip(t) {
                            if !m.contains_key(k) {
                                m.insert(k.clone(), scalar_from_text(s));
                                element_changed = true;
                            }
                        }
                    } else {
                        return Err(wrong_kind_of(Kind::Map, &v));
                    }
                    // An element merged in place is output from its slot; the others from `merged`.
                    match (di, in_place) {
                        (Some(i), true) => {
                            dest_slots[i] = Some(v);
                            slot_changed[i] = element_changed;
                        }
                        _ => {
                            merged.insert(t, v);
                        }
                    }
                }
            }
        }
        let dest_len = dest_slots.len();
        let mut out = Vec::with_capacity(order.len());
        // The list is unchanged when it is the target's elements, each at its own place and
        // unchanged by its walk (an element from the patch alone has keys no target element has).
        let mut changed = false;
        let at_its_place = |out: &Vec<Value>, i: usize| i == out.len() && !slot_changed[i];
        if keys.len() == 1 {
            // each target element takes the place of its merged item
            for &t in &order {
                let kept = dest_idx.get(t).and_then(|&i| Some((i, dest_slots[i].take()?)));
                if let Some((i, v)) = kept {
                    changed |= !at_its_place(&out, i);
                    out.push(v);
                } else if let Some(v) = merged.remove(t) {
                    changed = true;
                    out.push(v);
                }
            }
        } else {
            // target elements are removed and appended again, in target order
            for &t in &order {
                if dest_idx.get(t).is_none_or(|&i| dest_slots[i].is_none()) {
                    if let Some(v) = merged.remove(t) {
                        changed = true;
                        out.push(v);
                    }
                }
            }
            for (i, v) in dest_slots.into_iter().enumerate() {
                if let Some(v) = v {
                    changed |= !at_its_place(&out, i);
                    out.push(v);
                }
            }
        }
        changed |= out.len() != dest_len;
        Ok((out, changed))
    }

    /// A literal port of kyaml's `setAssociativeSequenceElements` for irregular lists.
    fn merge_generic(
        &mut self,
        mut dest: Vec<Value>,
        origin: Option<Vec<Value>>,
        alias: bool,
        keys: &[String],
        elem_schema: Option<SchemaNode<'s>>,
        primitive: bool,
    ) -> Result<Vec<Value>> {
        let origin = if alias { None } else { origin };
        // elementValues / elementPrimitiveValues: the patch's first, then the target's
        let mut values_list: Vec<Vec<String>> = Vec::new();
        {
            let mut seen: FastHashSet<Vec<String>> = FastHashSet::default();
            let srcs: Vec<&[Value]> = match &origin {
                Some(o) => vec![o, &dest],
                None => vec![&dest],
            };
            for src in srcs {
                for elem in src {
                    let t: Vec<String> = if primitive {
                        vec![node_value(elem)]
                    } else {
                        keys.iter().map(|k| key_value(elem, k)).collect()
                    };
                    if t.is_empty() || !seen.insert(t.clone()) {
                        continue;
                    }
                    values_list.push(t);
                }
            }
        }
        let keys: Vec<String> = if primitive { vec![String::new()] } else { keys.to_vec() };
        if keys.len() > 1 {
            merge_values(&mut values_list);
        }
        let valid_key_set: FastHashSet<&str> = values_list
            .iter()
            .flat_map(|vals| vals.iter().zip(&keys).filter(|(v, _)| !v.is_empty()).map(|(_, k)| k.as_str()))
            .collect();
        let mut items: Vec<Value> = Vec::new();
        let mut valid_keys: Vec<String> = keys.clone();
        for values in &values_list {
            if values.is_empty() {
                continue;
            }
            let (vk, vv) = validate_keys(&valid_key_set, values, &keys);
            valid_keys = vk.clone();
            let (k2, v2) = {
                let single: FastHashSet<&str> =
                    values.iter().zip(&keys).filter(|(v, _)| !v.is_empty()).map(|(_, k)| k.as_str()).collect();
                validate_keys(&single, values, &keys)
            };
            let di = element_list(&dest, &k2, &v2);
            let d = di.map(|i| dest[i].clone());
            let o = if alias { d.clone() } else { origin.as_deref().and_then(|o| element_list(o, &k2, &v2)).map(|i| o_get(&origin, i)) };
            // The target list changes as elements are set, so its indices no longer say where
            // the empty nulls were: irregular lists keep theirs.
            let (mut val, in_place) = match self.walk(d, o, elem_schema, None)?.0 {
                Out::Clear => (None, false),
                Out::Dest(v) => (Some(v), true),
                Out::Origin(v) => (Some(v), false),
            };
            let mut exit = false;
            for (i, key) in vk.iter().enumerate() {
                let gone = match &val {
                    None | Some(Value::Null) => true,
                    Some(v) => is_empty_map(v),
                };
                if gone {
                    element_setter(&mut dest, None, &vk, &vv)?;
                    exit = true;
                } else if let Some(v) = &mut val {
                    match v {
                        Value::Object(m) if !m.contains_key(key) && !vv[i].is_empty() => {
                            m.insert(key.clone(), scalar_from_text(&vv[i]));
                        }
                        Value::Object(_) => {}
                        _ if key.is_empty() => {}
                        other if !vv[i].is_empty() => return Err(wrong_kind_of(Kind::Map, other)),
                        _ => {}
                    }
                }
            }
            if exit {
                continue;
            }
            let val = val.expect("not cleared");
            if let (Some(i), true) = (di, in_place) {
                if i < dest.len() {
                    dest[i] = val.clone();
                }
            }
            element_setter(&mut items, Some(val), &vk, &vv)?;
        }
        if !values_list.is_empty() {
            dest = append_list_node(items, dest, &valid_keys)?;
        }
        Ok(dest)
    }
}

/// The patch's scalar as kyaml's field setter writes it over the target's: in the target
/// node's style. Over a quoted scalar (a string YAML 1.1 reads as something else was quoted) a
/// number or boolean prints quoted, a string (`replicas: "3"` patched with `5` is `"5"`).
fn keep_quoted_style(patch: Value, target: Option<&Value>) -> Value {
    match (&patch, target) {
        (Value::Number(_) | Value::Bool(_), Some(Value::String(old))) if crate::yaml::reads_as_non_string_in_yaml_1_1(old) => Value::String(patch.to_string()),
        _ => patch,
    }
}

fn o_get(origin: &Option<Vec<Value>>, i: usize) -> Value {
    origin.as_ref().map(|o| o[i].clone()).unwrap_or(Value::Null)
}

fn into_array(v: Option<Value>) -> Vec<Value> {
    match v {
        Some(Value::Array(a)) => a,
        _ => Vec::new(),
    }
}

/// A key value kyaml writes back as an untagged scalar: numbers and booleans stay so.
fn scalar_from_text(s: &str) -> Value {
    if let Ok(i) = s.parse::<i64>() {
        return Value::from(i);
    }
    match s {
        "true" => Value::Bool(true),
        "false" => Value::Bool(false),
        _ => Value::String(s.to_string()),
    }
}

/// kyaml `mergeValues`: key tuples that differ only where one side is empty are unified.
fn merge_values(list: &mut [Vec<String>]) {
    for i in 0..list.len() {
        for j in 0..list.len() {
            if let Some(res) = match_values(&list[i], &list[j]) {
                list[i] = res.clone();
                list[j] = res;
            }
        }
    }
}

fn match_values(a: &[String], b: &[String]) -> Option<Vec<String>> {
    if a.len() != b.len() {
        return None;
    }
    let mut common = false;
    let mut res = Vec::with_capacity(a.len());
    for (x, y) in a.iter().zip(b) {
        if x == y {
            common = true;
            res.push(x.clone());
        } else if !x.is_empty() && !y.is_empty() {
            return None;
        } else if !x.is_empty() {
            res.push(x.clone());
        } else {
            res.push(y.clone());
        }
    }
    common.then_some(res)
}

/// kyaml `validateKeys`: keep the keys that have a value somewhere (all when none has).
fn validate_keys(valid: &FastHashSet<&str>, values: &[String], keys: &[String]) -> (Vec<String>, Vec<String>) {
    if valid.is_empty() {
        return (keys.to_vec(), values.to_vec());
    }
    let vk = keys.iter().filter(|k| valid.contains(k.as_str())).cloned().collect();
    let vv = values
        .iter()
        .zip(keys)
        .filter(|(v, k)| !v.is_empty() || valid.contains(k.as_str()))
        .map(|(v, _)| v.clone())
        .collect();
    (vk, vv)
}

/// kyaml `ElementMatcher`: the first element whose key fields hold the values.
fn element_list(list: &[Value], keys: &[String], values: &[String]) -> Option<usize> {
    if keys.is_empty() || keys[0].is_empty() {
        let want = values.first().map(String::as_str).unwrap_or("");
        return list.iter().position(|v| node_value(v) == want);
    }
    if keys.len() != values.len() {
        return None;
    }
    list.iter().position(|v| {
        let Some(m) = v.as_object() else { return false };
        keys.iter().zip(values).all(|(k, want)| m.get(k).is_some_and(|f| node_value(f) == *want))
    })
}

/// kyaml `FieldMatcher{Name, StringValue}` applied to a list element.
fn field_matches(elem: &Value, name: &str, want: &str) -> Result<bool> {
    if name.is_empty() {
        if !matches!(kind_of(elem), Some(Kind::Scalar)) {
            return Err(wrong_kind_of(Kind::Scalar, elem));
        }
        return Ok(node_value(elem) == want);
    }
    let Value::Object(m) = elem else { return Err(wrong_kind_of(Kind::Map, elem)) };
    Ok(match m.get(name) {
        None => false,
        Some(_) if want.is_empty() => true,
        Some(f) => node_value(f) == want,
    })
}

/// kyaml `ElementSetter`: replace (or, without an element, delete) the elements matching
/// the key values; append when nothing matched. Drops null and empty-map elements.
fn element_setter(list: &mut Vec<Value>, element: Option<Value>, keys: &[String], values: &[String]) -> Result<()> {
    let default_keys = [String::new()];
    let keys: &[String] = if keys.is_empty() { &default_keys } else { keys };
    let mapping_setter = !keys[0].is_empty() && values.first().is_some_and(|v| !v.is_empty());
    let mut out = Vec::with_capacity(list.len() + 1);
    let mut found_any = false;
    for elem in list.drain(..) {
        if elem.is_null() || is_empty_map(&elem) {
            continue;
        }
        if !elem.is_object() && mapping_setter {
            out.push(elem);
            continue;
        }
        let mut matched = false;
        let mut found = true;
        for (j, key) in keys.iter().enumerate() {
            if j < values.len() {
                matched = field_matches(&elem, key, &values[j])?;
            }
            if !matched {
                found = false;
                break;
            }
        }
        if !found {
            if !values.is_empty() {
                out.push(elem);
            }
            continue;
        }
        found_any = true;
        if let Some(e) = &element {
            out.push(e.clone());
        }
    }
    *list = out;
    match element {
        None | Some(Value::Null) => {}
        Some(e) => {
            if !found_any {
                list.push(e);
            }
        }
    }
    Ok(())
}

/// kyaml `appendListNode(dst, src, keys)`: set each element of `src` into `dst`.
fn append_list_node(mut dst: Vec<Value>, src: Vec<Value>, keys: &[String]) -> Result<Vec<Value>> {
    for elem in src {
        if keys.first().is_none_or(|k| k.is_empty()) {
            let v = node_value(&elem);
            element_setter(&mut dst, Some(elem), &[String::new()], &[v])?;
            continue;
        }
        let mut v = Vec::with_capacity(keys.len());
        for key in keys {
            let field = match &elem {
                Value::Null => None,
                Value::Object(m) => m.get(key),
                other => return Err(wrong_kind_of(Kind::Map, other)),
            };
            match field {
                None => dst.push(elem.clone()),
                Some(f) => v.push(node_value(f)),
            }
        }
        if keys.len() > 1 {
            element_setter(&mut dst, None, keys, &v)?;
        }
        element_setter(&mut dst, Some(elem), keys, &v)?;
    }
    Ok(dst)
}

#[cfg(test)]
mod tests {
    //! Expected results were produced by kustomize v5.6.0 (`kubectl kustomize`, one
    //! resource and one `patches:` entry) for the same resource and patch.
    use super::*;
    use serde_json::json;

    fn check(resource: &str, patch: &str, expected: &str) {
        let mut target: Value = serde_json::from_str(resource).unwrap();
        let patch: Value = serde_json::from_str(patch).unwrap();
        let expected: Value = serde_json::from_str(expected).unwrap();
        let before = target.clone();
        let changed = strategic_merge(&mut target, patch.clone(), Schema::builtin(), None, None).unwrap();
        assert_eq!(target, expected);
        assert_eq!(changed, target != before, "the merge's report of a change");
        // list order is significant; compare it textually too (map key order is not)
        assert_eq!(sorted(&target).to_string(), sorted(&expected).to_string());
    }

    fn sorted(v: &Value) -> Value {
        match v {
            Value::Object(m) => {
                let mut keys: Vec<_> = m.keys().collect();
                keys.sort();
                Value::Object(keys.into_iter().map(|k| (k.clone(), sorted(&m[k]))).collect())
            }
            Value::Array(a) => Value::Array(a.iter().map(sorted).collect()),
            other => other.clone(),
        }
    }

    /// kyaml merge2 with ListIncreaseDirection=prepend (kustomize patchstrategicmerge filter): $setElementOrder/* is an ordinary field; keyed list = patch elements then target-only ones
    #[test]
    fn set_element_order_is_not_a_directive_and_patch_elements_come_first() {
        check(
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "a"}, {"name": "b", "image": "b", "env": [{"name": "X", "value": "1"}]}]}}}}"#,
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "zeta": 1, "alpha": 2}, "spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}], "containers": [{"name": "c", "image": "c"}, {"name": "b", "image": "b2", "env": [{"name": "Y", "value": "2"}]}]}}}}"#,
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"alpha": 2, "name": "d", "zeta": 1}, "spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "b"}, {"name": "a"}], "containers": [{"image": "c", "name": "c"}, {"env": [{"name": "Y", "value": "2"}, {"name": "X", "value": "1"}], "image": "b2", "name": "b"}, {"image": "a", "name": "a"}]}}}}"#,
        );
    }

    /// primitive merge list (finalizers) prepends patch values; $retainKeys/$deleteFromPrimitiveList stay as fields; $patch: replace on a keyed element keeps the target element; $patch: delete removes one; volumes (merge,retainKeys) merge by name
    #[test]
    fn finalizers_retain_keys_and_element_replace_follow_kyaml() {
        check(
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "finalizers": ["a", "b"]}, "spec": {"template": {"spec": {"volumes": [{"name": "v1", "emptyDir": {}}, {"name": "v2", "configMap": {"name": "x"}}], "containers": [{"name": "a", "image": "a", "args": ["x", "y"], "ports": [{"containerPort": 80, "protocol": "TCP", "name": "http"}, {"containerPort": 80, "protocol": "UDP", "name": "udp"}, {"containerPort": 90, "name": "other"}]}, {"name": "b", "image": "b", "env": [{"name": "X", "value": "1"}, {"name": "Z", "value": "3"}]}]}}}}"#,
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "finalizers": ["c", "a"], "$deleteFromPrimitiveList/finalizers": ["b"]}, "spec": {"template": {"spec": {"volumes": [{"name": "v2", "$retainKeys": ["name", "secret"], "secret": {"secretName": "s"}}, {"name": "v0", "emptyDir": {}}], "containers": [{"name": "a", "$patch": "replace", "image": "a2"}, {"name": "b", "env": [{"name": "Z", "$patch": "delete"}, {"name": "W", "value": "4"}]}]}}}}"#,
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"$deleteFromPrimitiveList/finalizers": ["b"], "finalizers": ["c", "a", "b"], "name": "d"}, "spec": {"template": {"spec": {"containers": [{"args": ["x", "y"], "image": "a", "name": "a", "ports": [{"containerPort": 80, "name": "http", "protocol": "TCP"}, {"containerPort": 80, "name": "udp", "protocol": "UDP"}, {"containerPort": 90, "name": "other"}]}, {"env": [{"name": "W", "value": "4"}, {"name": "X", "value": "1"}], "image": "b", "name": "b"}], "volumes": [{"$retainKeys": ["name", "secret"], "configMap": {"name": "x"}, "name": "v2", "secret": {"secretName": "s"}}, {"emptyDir": {}, "name": "v0"}, {"emptyDir": {}, "name": "v1"}]}}}}"#,
        );
    }

    /// kyaml ElementSetter: an element without the merge key deletes the keyed ones; empty elements vanish; target nulls are kept, patch nulls dropped
    #[test]
    fn nameless_list_element_triggers_kyaml_element_setter_quirks() {
        check(
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "creationTimestamp": null, "labels": {"keep": null}}, "spec": {"template": {"metadata": {"creationTimestamp": null}, "spec": {"initContainers": [{"name": "i1"}, {}, {"name": "i2"}], "containers": [{"name": "a", "image": "a", "ports": [{"containerPort": 80, "protocol": "TCP", "name": "http"}, {"containerPort": 81, "name": "p81"}, {"containerPort": 80, "protocol": "UDP", "name": "udp"}, {"containerPort": 90, "protocol": "TCP", "name": "other"}]}, {"image": "noname"}, {"name": "b", "image": "b"}]}}}}"#,
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "annotations": {"x": null, "y": "1"}}, "spec": {"template": {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 91, "protocol": "TCP", "name": "new"}, {"containerPort": 90, "protocol": "TCP", "name": "other2"}, {"containerPort": 81, "protocol": "TCP", "name": "p81b"}]}]}}}}"#,
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"annotations": {"y": "1"}, "creationTimestamp": null, "labels": {"keep": null}, "name": "d"}, "spec": {"template": {"metadata": {"creationTimestamp": null}, "spec": {"containers": [{"image": "noname"}], "initContainers": [{"name": "i1"}]}}}}"#,
        );
    }

    /// x-kubernetes-list-map-keys [containerPort, protocol]: mergeValues unifies tuples with an empty protocol, target elements move to the end
    #[test]
    fn ports_merge_by_container_port_and_protocol() {
        check(
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "a", "ports": [{"containerPort": 80, "protocol": "TCP", "name": "http"}, {"containerPort": 81, "name": "p81"}, {"containerPort": 80, "protocol": "UDP", "name": "udp"}, {"containerPort": 90, "protocol": "TCP", "name": "other"}]}, {"name": "b", "image": "b"}]}}}}"#,
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 91, "protocol": "TCP", "name": "new"}, {"containerPort": 90, "protocol": "TCP", "name": "other2"}, {"containerPort": 81, "protocol": "TCP", "name": "p81b"}]}]}}}}"#,
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": {"spec": {"containers": [{"image": "a", "name": "a", "ports": [{"containerPort": 91, "name": "new", "protocol": "TCP"}, {"containerPort": 80, "name": "http", "protocol": "TCP"}, {"containerPort": 81, "name": "p81"}, {"containerPort": 80, "name": "udp", "protocol": "UDP"}, {"containerPort": 90, "name": "other2", "protocol": "TCP"}]}, {"image": "b", "name": "b"}]}}}}"#,
        );
    }

    /// a list/map absent from the target is merged with itself: nulls and $patch elements go, non-keyed lists stay verbatim
    #[test]
    fn new_lists_and_maps_from_the_patch_are_cleaned_of_nulls_and_directives() {
        check(
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "a"}]}}}}"#,
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "labels": {"x": null, "y": {"z": null, "w": 1}}}, "spec": {"template": {"spec": {"initContainers": [{"name": "i1", "image": null, "env": [{"name": "A", "value": null}, {"name": "B", "$patch": "delete"}]}, {"name": "i2", "$patch": "delete"}, {"image": "noname", "args": ["a", null]}], "containers": [{"name": "a", "args": ["x"], "env": [{"name": "E", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}]}]}}}}"#,
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"labels": {"y": {"w": 1}}, "name": "d"}, "spec": {"template": {"spec": {"containers": [{"args": ["x"], "env": [{"name": "E", "valueFrom": {"fieldRef": {"fieldPath": "x"}}}], "image": "a", "name": "a"}], "initContainers": [{"args": ["a", null], "image": "noname"}]}}}}"#,
        );
    }

    /// Service ports keyed by [port, protocol]; duplicate primitive values collapse
    #[test]
    fn service_ports_and_duplicate_finalizers() {
        check(
            r#"{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "finalizers": ["a", "b", "a", "c"]}, "spec": {"ports": [{"port": 80, "protocol": "TCP", "targetPort": 8080}, {"port": 80, "protocol": "UDP"}, {"port": 443, "name": "https"}], "selector": {"app": "x"}}}"#,
            r#"{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "s", "finalizers": ["c", "d", "d"]}, "spec": {"ports": [{"port": 443, "protocol": "TCP", "name": "https2"}, {"port": 80, "protocol": "UDP", "$patch": "delete"}, {"port": 9090}]}}"#,
            r#"{"apiVersion": "v1", "kind": "Service", "metadata": {"finalizers": ["c", "d", "a", "b"], "name": "s"}, "spec": {"ports": [{"port": 9090}, {"port": 80, "protocol": "TCP", "targetPort": 8080}, {"name": "https", "port": 443}], "selector": {"app": "x"}}}"#,
        );
    }

    /// no schema for a CRD: lists replaced as is, maps merged, patch nulls remove
    #[test]
    fn unknown_kind_merges_maps_and_replaces_lists() {
        check(
            r#"{"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "f"}, "spec": {"list": [{"name": "a", "v": 1}], "map": {"a": 1, "b": {"c": 2}}}}"#,
            r#"{"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "f"}, "spec": {"list": [{"name": "b", "v": 2, "x": null}], "map": {"b": {"d": 3, "c": null}, "e": null}, "new": {"x": null, "y": [null, {"a": null}]}}}"#,
            r#"{"apiVersion": "example.com/v1", "kind": "Foo", "metadata": {"name": "f"}, "spec": {"list": [{"name": "b", "v": 2, "x": null}], "map": {"a": 1, "b": {"d": 3}}, "new": {"y": [null, {"a": null}]}}}"#,
        );
    }

    /// duplicate keys and an empty element in the target: literal kyaml behaviour
    #[test]
    fn irregular_target_list_goes_through_the_generic_element_setter() {
        check(
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": {"spec": {"volumes": [{"name": "v1", "emptyDir": {}}, {}, {"name": "v2", "secret": {"secretName": "s"}}], "containers": [{"name": "a", "env": [{"name": "X", "value": "1"}, {"name": "X", "value": "2"}, {"name": "Y"}]}]}}}}"#,
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": {"spec": {"volumes": [{"name": "v2", "$patch": "replace", "configMap": {"name": "c"}}], "containers": [{"name": "a", "env": [{"name": "X", "value": "3"}, {"name": "Z", "value": "4"}]}]}}}}"#,
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": {"spec": {"containers": [{"env": [{"name": "X", "value": "2"}, {"name": "Z", "value": "4"}, {"name": "Y"}], "name": "a"}], "volumes": [{"configMap": {"name": "c"}, "name": "v2"}, {"emptyDir": {}, "name": "v1"}]}}}}"#,
        );
    }

    /// A one-key merge list the patch does not name, with two elements of one key (`env` by
    /// name, `volumeMounts` by mount path), is rebuilt as kyaml walks it: the last of the two
    /// stays, in the first one's place (kubectl kustomize v5.8.1 gives the same).
    #[test]
    fn unnamed_one_key_list_with_a_repeated_key_is_rebuilt() {
        check(
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "a", "image": "a:1", "env": [{"name": "X", "value": "1"}, {"name": "X", "value": "2"}, {"name": "Y", "value": "3"}], "volumeMounts": [{"name": "v", "mountPath": "/a"}, {"name": "w", "mountPath": "/a"}]}, {"name": "b", "image": "b:1"}]}}}}"#,
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": 3}}"#,
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": 3, "template": {"spec": {"containers": [{"env": [{"name": "X", "value": "2"}, {"name": "Y", "value": "3"}], "image": "a:1", "name": "a", "volumeMounts": [{"mountPath": "/a", "name": "w"}]}, {"image": "b:1", "name": "b"}]}}}}"#,
        );
        // Each key once: the lists stay as they are.
        check(
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": 1, "template": {"spec": {"containers": [{"name": "a", "env": [{"name": "Y", "value": "3"}, {"name": "X", "value": "1"}]}]}}}}"#,
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": 3}}"#,
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"replicas": 3, "template": {"spec": {"containers": [{"name": "a", "env": [{"name": "Y", "value": "3"}, {"name": "X", "value": "1"}]}]}}}}"#,
        );
    }

    /// mergeValues matches [80,""] with [80,TCP]; the target element wins
    #[test]
    fn port_without_protocol_absorbs_the_patch_port() {
        check(
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80}, {"containerPort": 81, "protocol": "UDP"}]}]}}}}"#,
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80, "protocol": "TCP", "name": "http"}, {"containerPort": 82}]}]}}}}"#,
            r#"{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {"template": {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 82}, {"containerPort": 80}, {"containerPort": 81, "protocol": "UDP"}]}]}}}}"#,
        );
    }

    /// $patch: delete at the top: the resource is dropped
    #[test]
    fn top_level_delete_removes_the_object() {
        check(
            r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "x"}}"#,
            r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "$patch": "delete"}"#,
            r#"null"#,
        );
    }

    /// kustomize errors when a patch puts a map where the target has a scalar.
    #[test]
    fn kind_mismatch_is_an_error() {
        let mut t = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "x"}});
        let p = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": {"b": "c"}}});
        let e = strategic_merge(&mut t, p.clone(), Schema::builtin(), None, None).unwrap_err();
        assert_eq!(e.0, "wrong node kind: expected ScalarNode but got MappingNode: node contents:\nb: c\n");
    }

    /// kyaml determineSmpDirective: an unknown `$patch` value is an error.
    #[test]
    fn unknown_patch_directive_is_an_error() {
        let mut t = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "x"}});
        let p = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"$patch": "bogus"}});
        let e = strategic_merge(&mut t, p.clone(), Schema::builtin(), None, None).unwrap_err();
        assert_eq!(e.0, "unknown patch strategy 'bogus'");
    }

    /// `$patch: replace` on a map replaces it (checked with the reference on ConfigMap data).
    #[test]
    fn replace_directive_on_a_map() {
        let mut t = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"a": "x"}});
        let p = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"$patch": "replace", "b": "y"}});
        strategic_merge(&mut t, p.clone(), Schema::builtin(), None, None).unwrap();
        assert_eq!(t["data"], json!({"b": "y"}));
    }

    /// openapicustomschema: a custom schema gives a CRD merge keys and replaces the
    /// builtin schema (a Deployment's containers are then replaced, as the reference does).
    #[test]
    fn custom_schema_merges_crd_lists_and_replaces_builtin() {
        let doc = json!({"definitions": {
            "v1alpha1.MyCRD": {"properties": {"spec": {"properties": {"template": {"$ref": "#/definitions/io.k8s.api.core.v1.PodTemplateSpec"}}, "type": "object"}},
                "x-kubernetes-group-version-kind": [{"group": "example.com", "kind": "MyCRD", "version": "v1alpha1"}]},
            "io.k8s.api.core.v1.PodTemplateSpec": {"properties": {"spec": {"$ref": "#/definitions/io.k8s.api.core.v1.PodSpec"}}},
            "io.k8s.api.core.v1.PodSpec": {"properties": {"containers": {"items": {"$ref": "#/definitions/io.k8s.api.core.v1.Container"},
                "type": "array", "x-kubernetes-patch-merge-key": "name", "x-kubernetes-patch-strategy": "merge"}}},
            "io.k8s.api.core.v1.Container": {"properties": {"name": {"type": "string"}}}
        }});
        let schema = Schema::with_custom(&doc).unwrap();
        let mut crd = json!({"apiVersion": "example.com/v1alpha1", "kind": "MyCRD", "metadata": {"name": "service"},
            "spec": {"template": {"spec": {"containers": [{"name": "server", "image": "server"}]}}}});
        let p = json!({"apiVersion": "example.com/v1alpha1", "kind": "MyCRD", "metadata": {"name": "service"},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "c"}]}}}});
        strategic_merge(&mut crd, p.clone(), &schema, None, None).unwrap();
        assert_eq!(crd["spec"]["template"]["spec"]["containers"], json!([{"name": "c", "image": "c"}, {"name": "server", "image": "server"}]));
        let mut dep = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"template": {"spec": {"containers": [{"name": "a", "image": "a"}]}}}});
        let p = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"template": {"spec": {"containers": [{"name": "c", "image": "c"}]}}}});
        strategic_merge(&mut dep, p.clone(), &schema, None, None).unwrap();
        assert_eq!(dep["spec"]["template"]["spec"]["containers"], json!([{"name": "c", "image": "c"}]));
    }

    /// Long keyed lists take the hash-indexed path: merging 5k env entries stays fast.
    #[test]
    fn long_keyed_lists_merge_in_linear_time() {
        let n = 5_000;
        let env: Vec<Value> = (0..n).map(|i| json!({"name": format!("V{i}"), "value": "a"})).collect();
        let penv: Vec<Value> = (0..n).rev().map(|i| json!({"name": format!("V{i}"), "value": "b"})).collect();
        let mut t = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "env": env}]}});
        let p = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "env": penv}]}});
        let start = std::time::Instant::now();
        strategic_merge(&mut t, p.clone(), Schema::builtin(), None, None).unwrap();
        assert!(start.elapsed().as_secs() < 5);
        let out = t["spec"]["containers"][0]["env"].as_array().unwrap();
        assert_eq!(out.len(), n);
        assert_eq!(out[0], json!({"name": format!("V{}", n - 1), "value": "b"}));
    }

    #[test]
    fn empty_nulls_the_walk_reaches_are_dropped_written_nulls_stay() {
        // as kustomize v5.6.0 renders it: `matchLabels:`, `empty:` and the container's `args:`
        // go, `tilde: ~` stays, and so does `x:` in a list that is not merged by key
        let text = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: a\nspec:\n  selector:\n    matchLabels:\n  \
                    tilde: ~\n  nested:\n    empty:\n    list:\n    - x:\n  template:\n    spec:\n      containers:\n      \
                    - name: c\n        args:\n";
        let doc = crate::yaml::parse::parse_resource_documents(text).unwrap().remove(0);
        let mut t = doc.value;
        let p = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a"}, "spec": {"replicas": 2}});
        strategic_merge(&mut t, p.clone(), Schema::builtin(), doc.empty_nulls.as_ref(), None).unwrap();
        let expected = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a"}, "spec": {
            "selector": {}, "tilde": null, "nested": {"list": [{"x": null}]}, "replicas": 2,
            "template": {"spec": {"containers": [{"name": "c"}]}}}});
        assert_eq!(t, expected);
    }

    /// The merge's report of a change is the truth: the target is no longer `==` to itself.
    #[test]
    fn the_merge_reports_exactly_whether_it_changed_the_target() {
        let dep = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d", "finalizers": ["a", "b"], "labels": {"x": "1"}},
            "spec": {"replicas": 2, "template": {"spec": {
                "containers": [{"name": "a", "image": "a", "args": ["x", "y"], "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 81}],
                    "env": [{"name": "E", "value": "1"}, {"name": "F", "value": "2"}]},
                    {"name": "b", "image": "b", "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 81, "protocol": "TCP"}]}],
                "volumes": [{"name": "v", "emptyDir": {}}]}}}});
        let patch = |spec: Value| {
            let mut p = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}});
            p.as_object_mut().unwrap().extend(spec.as_object().unwrap().clone());
            p
        };
        let cases = [
            (json!({}), false),
            (json!({"spec": {"replicas": 2}}), false),
            (json!({"spec": {"replicas": 3}}), true),
            (json!({"spec": {"replicas": "2"}}), true),
            (json!({"spec": {"paused": null}}), false),
            (json!({"spec": {"replicas": null}}), true),
            (json!({"spec": {"paused": true}}), true),
            (json!({"metadata": {"labels": {"x": "1"}, "finalizers": ["a", "b"]}}), false),
            (json!({"metadata": {"finalizers": ["b"]}}), true),
            (json!({"metadata": {"finalizers": ["a"]}}), false),
            (json!({"metadata": {"finalizers": ["c"]}}), true),
            (json!({"metadata": {"labels": {"$patch": "replace", "x": "1"}}}), false),
            (json!({"metadata": {"labels": {"$patch": "replace", "x": "2"}}}), true),
            (json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "image": "a"}]}}}}), false),
            (json!({"spec": {"template": {"spec": {"containers": [{"name": "b", "image": "b"}]}}}}), true),
            (json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "args": ["x", "y"]}]}}}}), false),
            (json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "args": ["y", "x"]}]}}}}), true),
            (json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "env": [{"name": "E", "value": "1"}]}]}}}}), false),
            (json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "env": [{"name": "F", "value": "2"}]}]}}}}), true),
            (json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "env": [{"name": "E", "$patch": "delete"}]}]}}}}), true),
            (json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 80, "protocol": "TCP"}]}]}}}}), false),
            (json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 82, "protocol": "TCP"}]}]}}}}), true),
            (json!({"spec": {"template": {"spec": {"containers": [{"name": "a", "ports": [{"containerPort": 81}]}]}}}}), false),
            (json!({"spec": {"template": {"spec": {"containers": [{"name": "c"}]}}}}), true),
            (json!({"spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": "b", "ports": [{"containerPort": 81, "protocol": "TCP"}]}]}}}}), false),
            (json!({"spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": "b", "ports": [{"containerPort": 79, "protocol": "TCP"}]}]}}}}), true),
            (json!({"spec": {"template": {"spec": {"containers": [{"name": "a"}, {"name": "b", "ports": [{"containerPort": 81, "protocol": "TCP", "name": "n"}]}]}}}}), true),
            (json!({"spec": {"template": {"spec": {"volumes": [{"name": "v", "emptyDir": {}}]}}}}), false),
            (json!({"spec": {"template": {"spec": {"volumes": [{"$patch": "replace"}, {"name": "v", "emptyDir": {}}]}}}}), false),
            (json!({"spec": {"template": {"spec": {"volumes": [{"$patch": "replace"}, {"name": "w", "emptyDir": {}}]}}}}), true),
            (json!({"spec": {"template": {"spec": {"volumes": [{"name": "v", "$patch": "replace", "emptyDir": {}}]}}}}), false),
        ];
        for (spec, expected) in cases {
            let mut target = dep.clone();
            let changed = strategic_merge(&mut target, patch(spec.clone()), Schema::builtin(), None, None).unwrap();
            assert_eq!(changed, target != dep, "{spec}: the report differs from the truth");
            assert_eq!(changed, expected, "{spec}");
        }
        // A key the caller wrote into the target's maps does not count: a list replaced by an
        // equal one, but for that key, is unchanged.
        let mark = "\u{1}mark";
        let target = json!({"apiVersion": "v1", "kind": "Foo", "spec": {"list": [{"a": "1", mark: 1}], "m": {"k": "v", mark: 2}}});
        for (spec, expected) in [
            (json!({"list": [{"a": "1"}]}), false),
            (json!({"list": [{"a": "2"}]}), true),
            (json!({"m": {"k": "v"}}), false),
            (json!({"m": {"$patch": "replace", "k": "v"}}), false),
            (json!({"m": {"$patch": "replace", "k": "w"}}), true),
        ] {
            let mut merged = target.clone();
            let p = json!({"apiVersion": "v1", "kind": "Foo", "spec": spec});
            let changed = strategic_merge(&mut merged, p, Schema::builtin(), None, Some(mark)).unwrap();
            assert_eq!(changed, expected, "{spec}");
        }
    }

    #[test]
    fn replace_at_the_top_changes_nothing() {
        let mut t = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"A": "1"}});
        let before = t.clone();
        let p = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a"}, "data": {"B": "2"}, "$patch": "replace"});
        strategic_merge(&mut t, p.clone(), Schema::builtin(), None, None).unwrap();
        assert_eq!(t, before);
    }
}
