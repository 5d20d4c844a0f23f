//! The replacements' configuration: kustomize's `types.Replacement` and friends, decoded from
//! inline entries and `path:` files as Go's encoding/json decodes them, and the id strings its
//! messages use.
use serde_json::{Map, Value};

use crate::error::{Error, Result};
use crate::kustomization::Loader;
use crate::resource::{Gvk, ResId};
use crate::yaml::parse::parse_documents;

// ---------------------------------------------------------------------------
// Configuration: kustomize's types.Replacement and friends
// ---------------------------------------------------------------------------

/// Group, version, kind, name and namespace, each compared exactly when set (`resid.ResId`).
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct IdSelector {
    pub(super) group: String,
    pub(super) version: String,
    pub(super) kind: String,
    pub(super) name: String,
    pub(super) namespace: String,
}

impl IdSelector {
    pub(super) fn is_empty(&self) -> bool {
        self.group.is_empty() && self.version.is_empty() && self.kind.is_empty() && self.name.is_empty() && self.namespace.is_empty()
    }

    pub(super) fn as_res_id(&self) -> ResId {
        ResId {
            gvk: Gvk { group: self.group.clone(), version: self.version.clone(), kind: self.kind.clone() },
            name: self.name.clone(),
            namespace: self.namespace.clone(),
        }
    }

    /// `ResId.IsSelectedBy`: unset fields match anything; an empty namespace is `default`.
    /// (The ids kustomize compares here are built without their kind's scope, so cluster-scoped
    /// resources count as being in `default` too.)
    pub(super) fn selects(&self, id: &ResId) -> bool {
        let namespace = if id.namespace.is_empty() { "default" } else { &id.namespace };
        (self.name.is_empty() || self.name == id.name)
            && (self.namespace.is_empty() || self.namespace == namespace)
            && id.gvk.is_selected_by(&self.as_res_id().gvk)
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct FieldOptions {
    pub(super) delimiter: String,
    pub(super) index: i64,
    pub(super) encoding: String,
    pub(super) create: bool,
}

impl FieldOptions {
    /// `FieldOptions.String`, used in source selector messages.
    pub(super) fn describe(options: Option<&FieldOptions>) -> String {
        match options {
            Some(o) if !o.delimiter.is_empty() || o.create => format!("{}({}), create={}", o.delimiter, o.index, o.create),
            _ => String::new(),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct SourceSelector {
    pub(super) id: IdSelector,
    pub(super) field_path: String,
    pub(super) options: Option<FieldOptions>,
}

impl SourceSelector {
    /// `SourceSelector.String`: the id, then the field path and options when set.
    pub(super) fn describe(&self) -> String {
        let mut parts = vec![res_id_string(&self.id.as_res_id())];
        if !self.field_path.is_empty() {
            parts.push(self.field_path.clone());
        }
        let options = FieldOptions::describe(self.options.as_ref());
        if !options.is_empty() {
            parts.push(options);
        }
        parts.join(":")
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Selector {
    pub(super) id: IdSelector,
    pub(super) annotation_selector: String,
    pub(super) label_selector: String,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct TargetSelector {
    pub(super) select: Option<Selector>,
    pub(super) reject: Vec<Option<Selector>>,
    pub(super) field_paths: Vec<String>,
    pub(super) options: Option<FieldOptions>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Replacement {
    pub(super) source: Option<SourceSelector>,
    pub(super) targets: Option<Vec<TargetSelector>>,
    /// A static value instead of a source (`sourceValue`, kustomize v5.7).
    pub(super) source_value: Option<String>,
}

/// One entry of the kustomization's `replacements` (`types.ReplacementField`).
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct ReplacementField {
    pub(super) replacement: Replacement,
    pub(super) path: String,
}

// ---------------------------------------------------------------------------
// Decoding as Go's encoding/json does it (case-insensitive names, its error texts)
// ---------------------------------------------------------------------------

/// How a document is being decoded: strictly (the kustomization) or leniently (a file).
pub(crate) struct GoJson {
    /// Unknown fields are errors.
    pub strict: bool,
    /// Prefix of the field paths in type errors (`replacements.Replacement.` inline, `` in files).
    pub prefix: String,
}

impl GoJson {
    pub(super) fn value_kind(v: &Value, into_int: bool) -> String {
        match v {
            Value::String(_) => "string".into(),
            Value::Number(n) if into_int => format!("number {n}"),
            Value::Number(_) => "number".into(),
            Value::Bool(_) => "bool".into(),
            Value::Array(_) => "array".into(),
            Value::Object(_) => "object".into(),
            Value::Null => "null".into(),
        }
    }

    /// `json: cannot unmarshal X into Go struct field S.path of type T`.
    pub fn type_error(&self, v: &Value, strukt: &str, path: &str, ty: &str) -> String {
        format!(
            "json: cannot unmarshal {} into Go struct field {strukt}.{}{path} of type {ty}",
            Self::value_kind(v, ty == "int"),
            self.prefix
        )
    }

    /// Visits the fields of an object in document order; `names` are the Go JSON names, matched
    /// exactly first and then case-insensitively. Unknown names are errors when strict.
    pub fn fields<'v>(
        &self,
        obj: &'v Map<String, Value>,
        names: &[&str],
        mut visit: impl FnMut(usize, &'v Value) -> Result<(), String>,
    ) -> Result<(), String> {
        for (key, value) in obj {
            let index = names
                .iter()
                .position(|n| n == key)
                .or_else(|| names.iter().position(|n| n.to_lowercase() == key.to_lowercase()));
            match index {
                Some(i) => visit(i, value)?,
                None if self.strict => return Err(format!("json: unknown field \"{key}\"")),
                None => {}
            }
        }
        Ok(())
    }

    pub fn string(&self, v: &Value, out: &mut String, strukt: &str, path: &str) -> Result<(), String> {
        match v {
            Value::Null => Ok(()),
            Value::String(s) => {
                *out = s.clone();
                Ok(())
            }
            other => Err(self.type_error(other, strukt, path, "string")),
        }
    }

    pub(super) fn int(&self, v: &Value, out: &mut i64, strukt: &str, path: &str) -> Result<(), String> {
        match v {
            Value::Null => Ok(()),
            Value::Number(n) if n.as_i64().is_some() => {
                *out = n.as_i64().unwrap();
                Ok(())
            }
            other => Err(self.type_error(other, strukt, path, "int")),
        }
    }

    pub(super) fn boolean(&self, v: &Value, out: &mut bool, strukt: &str, path: &str) -> Result<(), String> {
        match v {
            Value::Null => Ok(()),
            Value::Bool(b) => {
                *out = *b;
                Ok(())
            }
            other => Err(self.type_error(other, strukt, path, "bool")),
        }
    }

    /// An object field (a struct or a pointer to one); `None` for null.
    pub(super) fn object<'v>(&self, v: &'v Value, strukt: &str, path: &str, ty: &str) -> Result<Option<&'v Map<String, Value>>, String> {
        match v {
            Value::Null => Ok(None),
            Value::Object(m) => Ok(Some(m)),
            other => Err(self.type_error(other, strukt, path, ty)),
        }
    }

    /// A list field; `None` for null.
    pub(super) fn list<'v>(&self, v: &'v Value, strukt: &str, path: &str, ty: &str) -> Result<Option<&'v Vec<Value>>, String> {
        match v {
            Value::Null => Ok(None),
            Value::Array(a) => Ok(Some(a)),
            other => Err(self.type_error(other, strukt, path, ty)),
        }
    }

    /// The inline group/version/kind/name/namespace of a selector; `false` for other names.
    pub(super) fn id_field(&self, id: &mut IdSelector, name: &str, v: &Value, strukt: &str, base: &str) -> Result<bool, String> {
        let (slot, path) = match name {
            "group" => (&mut id.group, "ResId.Gvk.group"),
            "version" => (&mut id.version, "ResId.Gvk.version"),
            "kind" => (&mut id.kind, "ResId.Gvk.kind"),
            "name" => (&mut id.name, "ResId.name"),
            "namespace" => (&mut id.namespace, "ResId.namespace"),
            _ => return Ok(false),
        };
        self.string(v, slot, strukt, &format!("{base}.{path}"))?;
        Ok(true)
    }

    pub(super) fn options(&self, v: &Value, base: &str) -> Result<Option<FieldOptions>, String> {
        let Some(obj) = self.object(v, "", "", "")? else { return Ok(None) };
        let mut o = FieldOptions::default();
        self.fields(obj, &["delimiter", "index", "encoding", "create"], |i, v| match i {
            0 => self.string(v, &mut o.delimiter, "FieldOptions", &format!("{base}.delimiter")),
            1 => self.int(v, &mut o.index, "FieldOptions", &format!("{base}.index")),
            2 => self.string(v, &mut o.encoding, "FieldOptions", &format!("{base}.encoding")),
            _ => self.boolean(v, &mut o.create, "FieldOptions", &format!("{base}.create")),
        })?;
        Ok(Some(o))
    }

    pub(super) fn source(&self, obj: &Map<String, Value>) -> Result<SourceSelector, String> {
        const NAMES: [&str; 7] = ["group", "version", "kind", "name", "namespace", "fieldPath", "options"];
        let mut s = SourceSelector::default();
        self.fields(obj, &NAMES, |i, v| match i {
            0..=4 => self.id_field(&mut s.id, NAMES[i], v, "SourceSelector", "source").map(|_| ()),
            5 => self.string(v, &mut s.field_path, "SourceSelector", "source.fieldPath"),
            _ => {
                if !v.is_object() && !v.is_null() {
                    return Err(self.type_error(v, "SourceSelector", "source.options", "types.FieldOptions"));
                }
                s.options = self.options(v, "source.options")?;
                Ok(())
            }
        })?;
        Ok(s)
    }

    pub(super) fn selector(&self, obj: &Map<String, Value>, base: &str) -> Result<Selector, String> {
        const NAMES: [&str; 7] = ["group", "version", "kind", "name", "namespace", "annotationSelector", "labelSelector"];
        let mut s = Selector::default();
        self.fields(obj, &NAMES, |i, v| match i {
            0..=4 => self.id_field(&mut s.id, NAMES[i], v, "Selector", base).map(|_| ()),
            5 => self.string(v, &mut s.annotation_selector, "Selector", &format!("{base}.annotationSelector")),
            _ => self.string(v, &mut s.label_selector, "Selector", &format!("{base}.labelSelector")),
        })?;
        Ok(s)
    }

    pub(super) fn target(&self, obj: &Map<String, Value>) -> Result<TargetSelector, String> {
        let mut t = TargetSelector::default();
        self.fields(obj, &["select", "reject", "fieldPaths", "options"], |i, v| {
            match i {
                0 => {
                    t.select = match self.object(v, "TargetSelector", "targets.select", "types.Selector")? {
                        Some(m) => Some(self.selector(m, "targets.select")?),
                        None => None,
                    }
                }
                1 => {
                    t.reject.clear();
                    for item in self.list(v, "TargetSelector", "targets.reject", "[]*types.Selector")?.into_iter().flatten() {
                        let r = match self.object(item, "TargetSelector", "targets.reject", "types.Selector")? {
                            Some(m) => Some(self.selector(m, "targets.reject")?),
                            None => None,
                        };
                        t.reject.push(r);
                    }
                }
                2 => {
                    t.field_paths.clear();
                    for item in self.list(v, "TargetSelector", "targets.fieldPaths", "[]string")?.into_iter().flatten() {
                        let mut s = String::new();
                        self.string(item, &mut s, "TargetSelector", "targets.fieldPaths")?;
                        t.field_paths.push(s);
                    }
                }
                _ => {
                    if !v.is_object() && !v.is_null() {
                        return Err(self.type_error(v, "TargetSelector", "targets.options", "types.FieldOptions"));
                    }
                    t.options = self.options(v, "targets.options")?;
                }
            }
            Ok(())
        })?;
        Ok(t)
    }

    /// The fields of `types.Replacement` (`source`, `targets`), plus `path` when `with_path`.
    pub(super) fn replacement_field(&self, obj: &Map<String, Value>, strukt: &str, with_path: bool) -> Result<ReplacementField, String> {
        let mut f = ReplacementField::default();
        let names: &[&str] = if with_path { &["source", "targets", "sourceValue", "path"] } else { &["source", "targets", "sourceValue"] };
        self.fields(obj, names, |i, v| {
            match i {
                0 => {
                    f.replacement.source = match self.object(v, strukt, "source", "types.SourceSelector")? {
                        Some(m) => Some(self.source(m)?),
                        None => None,
                    }
                }
                1 => {
                    f.replacement.targets = match self.list(v, strukt, "targets", "[]*types.TargetSelector")? {
                        Some(items) => {
                            let mut targets = Vec::new();
                            for item in items {
                                match self.object(item, strukt, "targets", "types.TargetSelector")? {
                                    Some(m) => targets.push(self.target(m)?),
                                    None => targets.push(TargetSelector::default()),
                                }
                            }
                            Some(targets)
                        }
                        None => None,
                    }
                }
                2 if !v.is_null() => {
                    let mut value = String::new();
                    self.string(v, &mut value, strukt, "sourceValue")?;
                    f.replacement.source_value = Some(value);
                }
                2 => {}
                _ => {
                    // `path` sits outside the inline Replacement in Go's field path.
                    let inline = GoJson { strict: self.strict, prefix: "replacements.".into() };
                    inline.string(v, &mut f.path, "ReplacementField", "path")?
                }
            }
            Ok(())
        })?;
        Ok(f)
    }
}

/// The kustomization's entries, decoded strictly as kustomize decodes the Kustomization.
pub(super) fn decode_inline(entry: &Value) -> Result<ReplacementField> {
    let d = GoJson { strict: true, prefix: "replacements.Replacement.".into() };
    let decoded = match entry {
        Value::Null => Ok(ReplacementField::default()),
        Value::Object(obj) => d.replacement_field(obj, "ReplacementField", true),
        other => Err(format!(
            "json: cannot unmarshal {} into Go struct field Kustomization.replacements of type types.ReplacementField",
            GoJson::value_kind(other, false)
        )),
    };
    let mut field = decoded.map_err(|e| Error::msg(format!("invalid Kustomization: {e}")))?;
    // kustomize hands the entries to the transformer through YAML with `omitempty`:
    // an empty target list arrives as no list at all.
    if field.replacement.targets.as_ref().is_some_and(Vec::is_empty) {
        field.replacement.targets = None;
    }
    Ok(field)
}

/// The replacements of a `path:` file: one mapping or a list of them (first document only).
pub(super) fn decode_file(text: &str) -> std::result::Result<Vec<Replacement>, String> {
    let docs = parse_documents(text).map_err(|e| format!("error converting YAML to JSON: yaml: line {}: {}", e.line, e.message))?;
    let doc = docs.into_iter().next().unwrap_or(Value::Null);
    let d = GoJson { strict: false, prefix: String::new() };
    let wrap = |e: String| format!("error unmarshaling JSON: while decoding JSON: {e}");
    let one = |v: &Value| -> std::result::Result<Replacement, String> {
        match v {
            Value::Null => Ok(Replacement::default()),
            Value::Object(obj) => Ok(d.replacement_field(obj, "Replacement", false)?.replacement),
            other => Err(format!(
                "json: cannot unmarshal {} into Go value of type types.Replacement",
                GoJson::value_kind(other, false)
            )),
        }
    };
    match &doc {
        Value::Array(items) => items.iter().map(|i| one(i).map_err(wrap)).collect(),
        Value::Object(_) => Ok(vec![one(&doc).map_err(wrap)?]),
        Value::String(_) => Err("unsupported replacement type encountered within replacement path: string".into()),
        Value::Number(_) => Err("unsupported replacement type encountered within replacement path: float64".into()),
        Value::Bool(_) => Err("unsupported replacement type encountered within replacement path: bool".into()),
        Value::Null => Err("unsupported replacement type encountered within replacement path: invalid".into()),
    }
}

/// The transformer configuration as kustomize prints it in configuration errors.
pub(super) fn config_dump(fields: &[ReplacementField]) -> String {
    pub(super) fn put(m: &mut Map<String, Value>, k: &str, v: &str) {
        if !v.is_empty() {
            m.insert(k.into(), Value::String(v.into()));
        }
    }
    pub(super) fn id(m: &mut Map<String, Value>, id: &IdSelector) {
        put(m, "group", &id.group);
        put(m, "version", &id.version);
        put(m, "kind", &id.kind);
        put(m, "name", &id.name);
        put(m, "namespace", &id.namespace);
    }
    pub(super) fn options(o: &FieldOptions) -> Value {
        let mut m = Map::new();
        put(&mut m, "delimiter", &o.delimiter);
        if o.index != 0 {
            m.insert("index".into(), Value::from(o.index));
        }
        put(&mut m, "encoding", &o.encoding);
        if o.create {
            m.insert("create".into(), Value::Bool(true));
        }
        Value::Object(m)
    }
    pub(super) fn selector(s: &Option<Selector>) -> Value {
        let Some(s) = s else { return Value::Null };
        let mut m = Map::new();
        id(&mut m, &s.id);
        put(&mut m, "annotationSelector", &s.annotation_selector);
        put(&mut m, "labelSelector", &s.label_selector);
        Value::Object(m)
    }
    let entries = fields
        .iter()
        .map(|f| {
            let mut m = Map::new();
            if let Some(s) = &f.replacement.source {
                let mut sm = Map::new();
                id(&mut sm, &s.id);
                put(&mut sm, "fieldPath", &s.field_path);
                if let Some(o) = &s.options {
                    sm.insert("options".into(), options(o));
                }
                m.insert("source".into(), Value::Object(sm));
            }
            if let Some(value) = &f.replacement.source_value {
                m.insert("sourceValue".into(), Value::String(value.clone()));
            }
            if let Some(targets) = f.replacement.targets.as_ref().filter(|t| !t.is_empty()) {
                let list = targets
                    .iter()
                    .map(|t| {
                        let mut tm = Map::new();
                        tm.insert("select".into(), selector(&t.select));
                        if !t.reject.is_empty() {
                            tm.insert("reject".into(), Value::Array(t.reject.iter().map(selector).collect()));
                        }
                        if !t.field_paths.is_empty() {
                            tm.insert("fieldPaths".into(), t.field_paths.iter().map(|p| Value::String(p.clone())).collect());
                        }
                        if let Some(o) = &t.options {
                            tm.insert("options".into(), options(o));
                        }
                        Value::Object(tm)
                    })
                    .collect();
                m.insert("targets".into(), Value::Array(list));
            }
            put(&mut m, "path", &f.path);
            Value::Object(m)
        })
        .collect();
    let mut root = Map::new();
    root.insert("Replacements".into(), Value::Array(entries));
    let mut out = String::new();
    crate::yaml::emit::emit_document(&Value::Object(root), &mut out);
    out
}

/// Decodes the entries and reads the `path:` files, as the transformer's `Config` does.
pub(super) fn load_replacements(entries: &[Value], loader: &Loader) -> Result<Vec<Replacement>> {
    let fields: Vec<ReplacementField> = entries.iter().map(decode_inline).collect::<Result<_>>()?;
    let config_error = |message: String| {
        Error::msg(format!(
            "trouble configuring builtin ReplacementTransformer with config: `\n{}`: {message}",
            config_dump(&fields)
        ))
    };
    let mut out = Vec::new();
    for f in &fields {
        if f.path.is_empty() {
            out.push(f.replacement.clone());
            continue;
        }
        if f.replacement.source.is_some() || f.replacement.targets.as_ref().is_some_and(|t| !t.is_empty()) {
            return Err(config_error("cannot specify both path and inline replacement".into()));
        }
        let (_, text) = loader.read(&f.path).map_err(|e| config_error(loader_message(e)))?;
        out.extend(decode_file(&text).map_err(config_error)?);
    }
    Ok(out)
}

/// kustomize's loader wording for a file that cannot be read.
pub(crate) fn loader_message(e: Error) -> String {
    match e {
        Error::Missing { message, .. } => message,
        Error::Io { path, message } if message == "no such file or directory" => {
            let p = path.display();
            format!("evalsymlink failure on '{p}' : lstat {p}: {message}")
        }
        other => other.to_string(),
    }
}

// ---------------------------------------------------------------------------
// Ids and messages
// ---------------------------------------------------------------------------

/// `resid.Gvk.String`: `Kind.version.group` with `[noKind]`, `[noVer]`, `[noGrp]` for empty parts.
pub(crate) fn gvk_string(gvk: &Gvk) -> String {
    let or = |s: &str, empty: &'static str| if s.is_empty() { empty.to_string() } else { s.to_string() };
    format!("{}.{}.{}", or(&gvk.kind, "[noKind]"), or(&gvk.version, "[noVer]"), or(&gvk.group, "[noGrp]"))
}

/// `resid.ResId.String`: `Kind.version.group/name.namespace` with `[noName]`, `[noNs]`.
pub(crate) fn res_id_string(id: &ResId) -> String {
    let name = if id.name.is_empty() { "[noName]" } else { &id.name };
    let ns = if id.namespace.is_empty() { "[noNs]" } else { &id.namespace };
    format!("{}/{name}.{ns}", gvk_string(&id.gvk))
}
