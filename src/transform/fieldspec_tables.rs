//! The field spec tables that drive the transformers: kustomize's builtin ones (compiled in from
//! `builtin_fieldspecs.yaml`, which build.rs writes as lines: they read faster at start), merged
//! with the user's `configurations:` files and with what `crds:` files declare, the way
//! kustomize's `TransformerConfig` merges them.
use std::sync::OnceLock;

use serde_json::{Map, Value};

use super::fieldspec::FieldSpec;
use super::sort::compare_gvk;
use crate::error::{Error, Result};
use crate::resource::Gvk;

/// `builtin_fieldspecs.yaml`, as build.rs writes it: one line per field spec (see there).
const BUILTIN_LINES: &str = include_str!(concat!(env!("OUT_DIR"), "/builtin_fieldspecs.tsv"));

/// "Resources of kind `gvk` are named by these fields of other resources" (one `nameReference` entry).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NameBackReference {
    /// The referral target: the kind whose `metadata/name` the referrers hold.
    pub gvk: Gvk,
    /// The fields, in referrer kinds, that hold such a name.
    pub referrers: Vec<FieldSpec>,
}

/// Every table of a kustomize transformer configuration.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FieldSpecTables {
    pub name_prefix: Vec<FieldSpec>,
    pub name_suffix: Vec<FieldSpec>,
    pub namespace: Vec<FieldSpec>,
    /// `commonLabels` and `labels` with `includeSelectors`: metadata, templates and selectors.
    pub common_labels: Vec<FieldSpec>,
    /// The `labels:` key of a configuration file; kustomize's builtin tables leave it empty.
    pub labels: Vec<FieldSpec>,
    /// `labels` with `includeTemplates`: metadata and pod templates, no selectors.
    pub template_labels: Vec<FieldSpec>,
    /// `labels` with `includeVolumeClaimTemplates` (kustomize v5.8.3): a StatefulSet's
    /// `volumeClaimTemplates`, which `includeTemplates` no longer reaches.
    pub volume_claim_template_labels: Vec<FieldSpec>,
    pub common_annotations: Vec<FieldSpec>,
    pub name_reference: Vec<NameBackReference>,
    pub var_reference: Vec<FieldSpec>,
    pub images: Vec<FieldSpec>,
    pub replicas: Vec<FieldSpec>,
}

/// How many plain field spec tables there are (all but nameReference): one per field of
/// [`FieldSpecTables::field_spec_tables_mut`]'s array, and one mark each when a merge sorts.
const PLAIN_TABLES: usize = 11;

impl FieldSpecTables {
    /// kustomize's builtin tables, as its build sees them: parsed, sorted and deduplicated once.
    pub fn builtin() -> &'static FieldSpecTables {
        static BUILTIN: OnceLock<FieldSpecTables> = OnceLock::new();
        BUILTIN.get_or_init(|| {
            let parsed = FieldSpecTables::from_lines(BUILTIN_LINES);
            // kustomize's resource accumulator starts from an empty configuration and merges the
            // defaults into it, which drops the tables' duplicate entries.
            let mut tables = FieldSpecTables::default();
            tables.merge(parsed).unwrap_or_else(|e| panic!("builtin field specs conflict: {e}"));
            tables
        })
    }

    /// The tables one kustomization brings (kustomize's `MakeTransformerConfig`): the builtin
    /// tables merged with its `configurations:` files, the files first merged in order into an
    /// empty configuration. Merge the result into the tree's accumulated tables, which start
    /// empty and take each base's tables first, then the kustomization's `crds:`. The repeated,
    /// sorted merging is what lets a file's `metadata/name` spec for one kind drop the builtin
    /// spec for every kind, as it does in kustomize.
    pub fn for_configurations(files: Vec<FieldSpecTables>) -> Result<FieldSpecTables> {
        let mut tables = FieldSpecTables::builtin().clone();
        if files.is_empty() {
            return Ok(tables);
        }
        let mut loaded = FieldSpecTables::default();
        for file in files {
            loaded.merge(file)?;
        }
        tables.merge(loaded)?;
        Ok(tables)
    }

    /// The tables build.rs writes from `builtin_fieldspecs.yaml`, sorted as
    /// [`FieldSpecTables::from_config_value`] sorts what it reads. The lines are the build's own:
    /// one that does not parse is a bug of build.rs, and panics.
    fn from_lines(text: &str) -> FieldSpecTables {
        let mut tables = FieldSpecTables::default();
        let gvk = |group: &str, version: &str, kind: &str| Gvk { group: group.into(), version: version.into(), kind: kind.into() };
        let spec = |[group, version, kind, path, create]: [&str; 5]| FieldSpec { gvk: gvk(group, version, kind), path: path.into(), create: create == "true" };
        for line in text.lines() {
            let fields: Vec<&str> = line.split('\t').collect();
            match fields[..] {
                ["nameReference", group, version, kind] => {
                    tables.name_reference.push(NameBackReference { gvk: gvk(group, version, kind), referrers: Vec::new() });
                }
                ["fieldSpec", group, version, kind, path, create] => {
                    let entry = tables.name_reference.last_mut().unwrap_or_else(|| panic!("builtin field specs: {line:?} follows no nameReference entry"));
                    entry.referrers.push(spec([group, version, kind, path, create]));
                }
                [table, group, version, kind, path, create] => {
                    let mut named = tables.field_spec_tables_mut();
                    let found = named.iter_mut().find(|t| t.key == table).unwrap_or_else(|| panic!("builtin field specs: no table {table:?}"));
                    found.specs.push(spec([group, version, kind, path, create]));
                }
                _ => panic!("builtin field specs: {line:?} is not a line build.rs writes"),
            }
        }
        tables.sort();
        tables
    }

    /// Reads one configuration file (`namePrefix: [...]`, `nameReference: [...]`, ...). Keys are
    /// matched without regard to case and unknown keys are ignored, as Go's JSON decoding does;
    /// the tables come out sorted, as kustomize sorts them after loading.
    pub fn from_config_value(value: &Value) -> Result<FieldSpecTables> {
        let mut tables = FieldSpecTables::default();
        let map = match value {
            Value::Null => return Ok(tables),
            Value::Object(map) => map,
            other => return Err(Error::msg(format!("a transformer configuration must be a mapping, got {other}"))),
        };
        for (key, entry) in map {
            if key.eq_ignore_ascii_case("nameReference") {
                tables.name_reference = name_back_references_from_value(entry)?;
                continue;
            }
            if let Some(table) = tables.field_spec_tables_mut().into_iter().find(|t| key.eq_ignore_ascii_case(t.key)) {
                *table.specs = FieldSpec::list_from_value(Some(entry)).map_err(|e| e.context(key))?;
            }
        }
        tables.sort();
        Ok(tables)
    }

    /// Adds `other`'s entries to these tables (kustomize's `TransformerConfig.Merge`): a field spec
    /// already present is skipped, one that differs only in `create` is an error, nameReference
    /// entries for the same kind pool their referrers; every table is sorted again afterwards.
    /// Tables merged into are always in order (the builtin ones, or what a merge made), so one
    /// that took nothing new is left as it is: sorting it again would find it in order.
    pub fn merge(&mut self, mut other: FieldSpecTables) -> Result<()> {
        let incoming_references = std::mem::take(&mut other.name_reference);
        let mut references = std::mem::take(&mut self.name_reference);
        let mut grew = [false; PLAIN_TABLES];
        let merged = self
            .field_spec_tables_mut()
            .into_iter()
            .zip(other.field_spec_tables_mut())
            .zip(&mut grew)
            .try_for_each(|((mine, theirs), grew)| {
                *grew = merge_field_specs(mine.specs, std::mem::take(theirs.specs))
                    .map_err(|e| e.context(format!("failed to merge {} fieldSpec", mine.merge_name)))?;
                Ok(())
            })
            .and_then(|()| {
                merge_name_back_references(&mut references, incoming_references)
                    .map_err(|e| e.context("failed to merge NameReference fieldSpec"))
            });
        self.name_reference = references;
        let references_grew = merged?;
        self.sort_some(grew, references_grew);
        Ok(())
    }

    /// The tables a `crds:` file adds: an OpenAPI definitions map (type name -> `{Schema: ...}`),
    /// as kustomize's `LoadConfigFromCRDs` reads it. For every type that looks like a Kubernetes
    /// object, properties annotated `x-kubernetes-object-ref-kind` (with an api version) become
    /// nameReference entries, and `x-kubernetes-annotation`, `x-kubernetes-label-selector` and
    /// `x-kubernetes-identity` add commonAnnotations, commonLabels and namePrefix field specs.
    /// `written_as_json`: the file's text begins with `{` (kustomize then decodes it as JSON, and
    /// Go's error has no YAML wrapping).
    pub fn from_crd(definitions: &Value, written_as_json: bool) -> Result<FieldSpecTables> {
        let map = match definitions {
            Value::Object(map) => map,
            Value::Null => return Ok(FieldSpecTables::default()),
            other => return Err(go_unmarshal_error(other, "accumulator.nameToApiMap", written_as_json)),
        };
        let mut result = FieldSpecTables::default();
        for (type_name, definition) in map {
            match definition {
                // Go decodes a null into the zero definition: not a type, skipped.
                Value::Null => continue,
                Value::Object(_) => {}
                other => return Err(go_unmarshal_error(other, "accumulator.OpenAPIDefinition", written_as_json)),
            }
            let Some(properties) = schema_properties(definition) else { continue };
            if !["kind", "apiVersion", "metadata"].iter().all(|k| properties.contains_key(*k)) {
                continue;
            }
            // The type name's last dot-separated part is the kind; group and version stay empty.
            let kind = type_name.rsplit('.').next().unwrap_or(type_name);
            let gvk = Gvk { kind: kind.to_string(), ..Gvk::default() };
            let mut tables = FieldSpecTables::default();
            let mut visiting = vec![type_name.as_str()];
            load_crd_type(&mut tables, &gvk, map, type_name, &mut Vec::new(), &mut visiting);
            result.merge(tables)?;
        }
        Ok(result)
    }

    fn sort(&mut self) {
        self.sort_some([true; PLAIN_TABLES], true);
    }

    /// Sorts the plain tables marked in `tables` (in [`Self::field_spec_tables_mut`]'s order)
    /// and, when `references`, the nameReference entries.
    fn sort_some(&mut self, tables: [bool; PLAIN_TABLES], references: bool) {
        for (table, marked) in self.field_spec_tables_mut().into_iter().zip(tables) {
            if marked {
                table.specs.sort_by(|a, b| compare_gvk(&a.gvk, &b.gvk));
            }
        }
        if references {
            self.name_reference.sort_by(|a, b| compare_gvk(&a.gvk, &b.gvk));
        }
    }

    /// The plain field spec tables, in the order kustomize merges them, with their configuration
    /// key and the name kustomize's merge errors use.
    fn field_spec_tables_mut(&mut self) -> [NamedTable<'_>; PLAIN_TABLES] {
        let FieldSpecTables {
            name_prefix,
            name_suffix,
            namespace,
            common_labels,
            labels,
            template_labels,
            volume_claim_template_labels,
            common_annotations,
            name_reference: _,
            var_reference,
            images,
            replicas,
        } = self;
        [
            NamedTable { key: "namePrefix", merge_name: "NamePrefix", specs: name_prefix },
            NamedTable { key: "nameSuffix", merge_name: "NameSuffix", specs: name_suffix },
            NamedTable { key: "namespace", merge_name: "NameSpace", specs: namespace },
            NamedTable { key: "commonAnnotations", merge_name: "CommonAnnotations", specs: common_annotations },
            NamedTable { key: "commonLabels", merge_name: "CommonLabels", specs: common_labels },
            NamedTable { key: "labels", merge_name: "Labels", specs: labels },
            NamedTable { key: "templateLabels", merge_name: "TemplateLabels", specs: template_labels },
            NamedTable { key: "volumeClaimTemplateLabels", merge_name: "VolumeClaimTemplateLabels", specs: volume_claim_template_labels },
            NamedTable { key: "varReference", merge_name: "VarReference", specs: var_reference },
            NamedTable { key: "images", merge_name: "Images", specs: images },
            NamedTable { key: "replicas", merge_name: "Replicas", specs: replicas },
        ]
    }
}

struct NamedTable<'a> {
    key: &'static str,
    merge_name: &'static str,
    specs: &'a mut Vec<FieldSpec>,
}

fn name_back_references_from_value(value: &Value) -> Result<Vec<NameBackReference>> {
    let items = match value {
        Value::Null => return Ok(Vec::new()),
        Value::Array(items) => items,
        other => return Err(Error::msg(format!("nameReference must be a list, got {other}"))),
    };
    items
        .iter()
        .map(|item| {
            let map = item
                .as_object()
                .ok_or_else(|| Error::msg(format!("a nameReference entry must be a mapping, got {item}")))?;
            let target = FieldSpec::from_value(item)?;
            let referrers = map.iter().rfind(|(k, _)| k.eq_ignore_ascii_case("fieldSpecs")).map(|(_, v)| v);
            Ok(NameBackReference { gvk: target.gvk, referrers: FieldSpec::list_from_value(referrers)? })
        })
        .collect()
}

/// kustomize's `FsSlice.MergeAll`: appends the incoming specs not already present. A spec is
/// present when one with the same path is selected by the incoming spec's group/version/kind
/// (empty parts match anything).
pub fn merge_field_specs(existing: &mut Vec<FieldSpec>, incoming: Vec<FieldSpec>) -> Result<bool> {
    // Spec against spec, a large table (a `crds:` file's thousands of fields) would cost the
    // product of its length and the merged table's (which grows as it is merged, from empty for
    // the builtin tables); past a few hundred comparisons the specs are found by path.
    if incoming.len().saturating_mul(existing.len() + incoming.len()) <= 256 {
        merge_field_specs_scanning(existing, incoming)
    } else {
        merge_field_specs_by_path(existing, incoming)
    }
}

/// [`merge_field_specs`], each incoming spec compared with every existing one.
fn merge_field_specs_scanning(existing: &mut Vec<FieldSpec>, incoming: Vec<FieldSpec>) -> Result<bool> {
    let before = existing.len();
    for spec in incoming {
        match existing.iter().find(|x| x.path == spec.path && x.gvk.is_selected_by(&spec.gvk)) {
            Some(present) if present.create != spec.create => return Err(conflicting()),
            Some(_) => {}
            None => existing.push(spec),
        }
    }
    Ok(existing.len() > before)
}

/// [`merge_field_specs`], each incoming spec compared only with the existing ones of its path
/// (indexed by the path's hash), in the order they were added: the same first match.
fn merge_field_specs_by_path(existing: &mut Vec<FieldSpec>, incoming: Vec<FieldSpec>) -> Result<bool> {
    use std::hash::BuildHasher;
    let before = existing.len();
    let state = crate::fast_hash::FastState::default();
    let mut by_path: crate::fast_hash::FastHashMap<u64, Vec<usize>> = crate::fast_hash::FastHashMap::default();
    for (i, spec) in existing.iter().enumerate() {
        by_path.entry(state.hash_one(spec.path.as_str())).or_default().push(i);
    }
    for spec in incoming {
        let key = state.hash_one(spec.path.as_str());
        let candidates = by_path.get(&key).map(Vec::as_slice).unwrap_or(&[]);
        let present = candidates.iter().map(|&i| &existing[i]).find(|x| x.path == spec.path && x.gvk.is_selected_by(&spec.gvk));
        match present.map(|present| present.create != spec.create) {
            Some(true) => return Err(conflicting()),
            Some(false) => {}
            None => {
                by_path.entry(key).or_default().push(existing.len());
                existing.push(spec);
            }
        }
    }
    Ok(existing.len() > before)
}

fn conflicting() -> Error {
    Error::msg("conflicting fieldspecs")
}

/// kustomize's `nbrSlice.mergeAll`: an entry for a kind already listed pools its referrers into
/// that entry; an entry for a new kind is appended as it is. Whether one was appended.
fn merge_name_back_references(existing: &mut Vec<NameBackReference>, incoming: Vec<NameBackReference>) -> Result<bool> {
    let before = existing.len();
    for entry in incoming {
        let present: Vec<usize> = existing.iter().enumerate().filter(|(_, p)| p.gvk == entry.gvk).map(|(i, _)| i).collect();
        // Each entry of the kind takes the referrers; the last takes them without a copy.
        match present.split_last() {
            None => existing.push(entry),
            Some((&last, others)) => {
                for &i in others {
                    merge_field_specs(&mut existing[i].referrers, entry.referrers.clone())?;
                }
                merge_field_specs(&mut existing[last].referrers, entry.referrers)?;
            }
        }
    }
    Ok(existing.len() > before)
}

/// The `properties` of a definition's schema (Go decodes the `Schema` key without regard to case).
fn schema_properties(definition: &Value) -> Option<&Map<String, Value>> {
    let schema = definition.as_object()?.iter().find(|(k, _)| k.eq_ignore_ascii_case("schema"))?.1;
    schema.get("properties")?.as_object()
}

/// kustomize's `loadCrdIntoConfig`: walks the properties of `type_name`, following `$ref`s into
/// other definitions of the same file, and records the annotated fields under `path`.
fn load_crd_type<'a>(
    tables: &mut FieldSpecTables,
    gvk: &Gvk,
    definitions: &'a Map<String, Value>,
    type_name: &str,
    path: &mut Vec<String>,
    visiting: &mut Vec<&'a str>,
) {
    let Some(properties) = definitions.get(type_name).and_then(schema_properties) else { return };
    let spec_at = |path: &[String]| FieldSpec { gvk: gvk.clone(), path: path.join("/"), create: false };
    for (name, property) in properties {
        let extension = |key: &str| property.get(key).and_then(Value::as_str);
        path.push(name.clone());
        // The merges below cannot conflict: every spec they add has `create: false`.
        if extension("x-kubernetes-annotation").is_some() {
            let _ = merge_field_specs(&mut tables.common_annotations, vec![spec_at(path)]);
        }
        if extension("x-kubernetes-label-selector").is_some() {
            let _ = merge_field_specs(&mut tables.common_labels, vec![spec_at(path)]);
        }
        if extension("x-kubernetes-identity").is_some() {
            let _ = merge_field_specs(&mut tables.name_prefix, vec![spec_at(path)]);
        }
        if let (Some(version), Some(kind)) =
            (extension("x-kubernetes-object-ref-api-version"), extension("x-kubernetes-object-ref-kind"))
        {
            let name_key = extension("x-kubernetes-object-ref-name-key").unwrap_or("name");
            let mut name_path = path.clone();
            name_path.push(name_key.to_string());
            let target = Gvk { group: String::new(), version: version.to_string(), kind: kind.to_string() };
            let entry = NameBackReference { gvk: target, referrers: vec![spec_at(&name_path)] };
            let _ = merge_name_back_references(&mut tables.name_reference, vec![entry]);
        }
        if let Some((reference, _)) = definitions.get_key_value(extension("$ref").unwrap_or_default()) {
            // kustomize follows references without a guard; a type that contains itself would
            // never end there, so this walk stops at the cycle instead.
            if !visiting.contains(&reference.as_str()) {
                visiting.push(reference);
                load_crd_type(tables, gvk, definitions, reference, path, visiting);
                visiting.pop();
            }
        }
        path.pop();
    }
}

/// Go's `encoding/json` refusing `value` for a Go value of `go_type`, as kustomize's decoding of
/// an OpenAPI definitions file says it (through YAML unless the text was JSON).
fn go_unmarshal_error(value: &Value, go_type: &str, written_as_json: bool) -> Error {
    let kind = crate::kustomization::go_json::json_kind(value);
    let through_yaml = if written_as_json { "" } else { "error unmarshaling JSON: while decoding JSON: " };
    Error::msg(format!("{through_yaml}json: cannot unmarshal {kind} into Go value of type {go_type}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Merging by path gives what comparing every pair gives: the same specs kept, in the same
    /// order, the same conflicts found, over tables with repeated paths, kinds and selectors
    /// that leave parts empty.
    #[test]
    fn merging_by_path_is_merging_spec_by_spec() {
        let mut seed = 7u64;
        let mut next = |n: u64| {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) % n
        };
        let mut table = |len: usize, creates: bool| -> Vec<FieldSpec> {
            (0..len)
                .map(|_| FieldSpec {
                    gvk: Gvk {
                        group: ["", "apps", "batch"][next(3) as usize].into(),
                        version: ["", "v1"][next(2) as usize].into(),
                        kind: ["", "Deployment", "Job", "Service"][next(4) as usize].into(),
                    },
                    path: format!("spec/f{}", next(12)),
                    create: creates && next(4) == 0,
                })
                .collect()
        };
        let (mut conflicts, mut merged) = (0, 0);
        for round in 0..200 {
            let (existing, incoming) = (table(20 + round % 30, round % 3 == 0), table(15 + round % 25, round % 5 == 0));
            let (mut scanned, mut indexed) = (existing.clone(), existing);
            let a = merge_field_specs_scanning(&mut scanned, incoming.clone());
            let b = merge_field_specs_by_path(&mut indexed, incoming);
            assert_eq!(a.as_ref().ok(), b.as_ref().ok(), "round {round}");
            assert_eq!(scanned, indexed, "round {round}");
            if a.is_ok() { merged += 1 } else { conflicts += 1 }
        }
        assert!(conflicts > 10 && merged > 10, "both outcomes tried: {conflicts} conflicts, {merged} merges");
    }

    /// After a merge (which sorts only the tables that took new specs) every table is as sorting
    /// them all would leave it: the builtin tables merged with themselves, with a
    /// configuration's specs in no order, and with those again.
    #[test]
    fn a_merge_leaves_every_table_in_order() {
        let config = json!({
            "commonLabels": [
                {"path": "spec/z/labels", "kind": "Zebra", "create": true},
                {"path": "spec/a/labels", "kind": "Deployment", "create": true},
                {"path": "spec/m/labels", "group": "apps", "kind": "Apple", "create": true},
            ],
            "nameReference": [
                {"kind": "Zebra", "version": "v1", "fieldSpecs": [{"path": "spec/ref", "kind": "Apple"}]},
                {"kind": "ConfigMap", "version": "v1", "fieldSpecs": [{"path": "spec/cm", "kind": "Apple"}]},
            ],
        });
        let mut unsorted = FieldSpecTables::from_config_value(&config).unwrap();
        unsorted.common_labels.reverse();
        unsorted.name_reference.reverse();
        let fully_sorted = |tables: &FieldSpecTables| {
            let mut sorted = tables.clone();
            sorted.sort();
            sorted
        };
        let mut tables = FieldSpecTables::builtin().clone();
        tables.merge(FieldSpecTables::builtin().clone()).unwrap();
        assert_eq!(&tables, FieldSpecTables::builtin(), "the builtin tables merged with themselves changed");
        for round in ["new specs", "the same specs again"] {
            tables.merge(unsorted.clone()).unwrap();
            assert_eq!(tables, fully_sorted(&tables), "{round}: a table is out of order");
        }
        assert!(tables.common_labels.iter().any(|s| s.gvk.kind == "Zebra"));
        assert!(tables.name_reference.iter().any(|r| r.gvk.kind == "Zebra"));
    }

    /// The lines build.rs writes make the tables the YAML file makes, as our parser reads it and
    /// a `configurations:` file is read: the same specs in every table, the same nameReference
    /// entries with the same referrers, before and after the merge that drops duplicates.
    #[test]
    fn the_builtin_tables_as_lines_are_the_yaml_file() {
        let yaml = crate::yaml::parse::parse_document(include_str!("builtin_fieldspecs.yaml")).unwrap();
        let from_yaml = FieldSpecTables::from_config_value(&yaml).unwrap();
        let from_lines = FieldSpecTables::from_lines(BUILTIN_LINES);
        assert_eq!(from_lines, from_yaml);
        assert!(from_lines.common_labels.len() > 10 && from_lines.common_labels.iter().any(|s| s.create) && from_lines.common_labels.iter().any(|s| !s.create));
        assert!(from_lines.name_reference.len() > 10 && from_lines.name_reference.iter().all(|r| !r.referrers.is_empty()));
        let mut merged = FieldSpecTables::default();
        merged.merge(from_yaml).unwrap();
        assert_eq!(&merged, FieldSpecTables::builtin());
    }

    /// A line build.rs would never write is its bug, said plainly.
    #[test]
    #[should_panic(expected = "no table")]
    fn a_line_naming_no_table_panics() {
        FieldSpecTables::from_lines("nameSuffixes\t\t\t\tmetadata/name\tfalse\n");
    }

    fn gvk(group: &str, version: &str, kind: &str) -> Gvk {
        Gvk { group: group.into(), version: version.into(), kind: kind.into() }
    }

    fn spec(kind: &str, path: &str, create: bool) -> FieldSpec {
        FieldSpec { gvk: gvk("", "", kind), path: path.into(), create }
    }

    #[test]
    fn builtin_tables_merged_into_themselves_are_unchanged() {
        let mut tables = FieldSpecTables::builtin().clone();
        tables.merge(FieldSpecTables::builtin().clone()).unwrap();
        assert_eq!(&tables, FieldSpecTables::builtin());
    }

    #[test]
    fn builtin_tables_have_kustomize_sizes_after_deduplication() {
        let t = FieldSpecTables::builtin();
        assert_eq!(t.name_prefix, vec![spec("", "metadata/name", false)]);
        assert_eq!(t.name_suffix, vec![spec("", "metadata/name", false)]);
        assert_eq!(t.namespace.len(), 3);
        assert_eq!(t.common_labels.len(), 32);
        assert_eq!(t.template_labels.len(), 9);
        assert_eq!(t.volume_claim_template_labels, vec![FieldSpec { gvk: Gvk { group: "apps".into(), kind: "StatefulSet".into(), ..Gvk::default() }, path: "spec/volumeClaimTemplates[]/metadata/labels".into(), create: true }]);
        assert_eq!(t.common_annotations.len(), 9);
        assert_eq!(t.var_reference.len(), 72);
        assert_eq!(t.images.len(), 7);
        assert_eq!(t.replicas.len(), 4);
        assert!(t.labels.is_empty());
        assert_eq!(t.name_reference.len(), 16);
    }

    #[test]
    fn builtin_name_reference_is_sorted_by_kind_rank_then_group_version_kind() {
        let kinds: Vec<&str> = FieldSpecTables::builtin().name_reference.iter().map(|n| n.gvk.kind.as_str()).collect();
        assert_eq!(
            kinds,
            [
                "StorageClass",
                "ServiceAccount",
                "Role",
                "ClusterRole",
                "ConfigMap",
                "Secret",
                "Service",
                "PriorityClass",
                "PersistentVolume",
                "PersistentVolumeClaim",
                "Deployment",
                "StatefulSet",
                // Unranked kinds, by group then version then kind ("~G" for no group sorts last).
                "ValidatingAdmissionPolicy",
                "IngressClass",
                "ReplicaSet",
                "ReplicationController",
            ]
        );
    }

    /// The order compares `group_version_kind` as text, as kyaml does: not part by part (a group
    /// `a_b` comes before `a`, whose text goes on with `_v`), empty parts as `~G`/`~V`/`~K` (after
    /// every letter), and equal entries keep their order.
    #[test]
    fn tables_sort_as_kyaml_compares_the_text_of_the_id() {
        let mut specs: Vec<FieldSpec> = [
            ("a", "v1", "Widget", "1"),
            ("a_b", "v1", "Widget", "2"),
            ("", "v1", "Widget", "3"),
            ("a", "", "Widget", "4"),
            ("z", "v1", "ValidatingWebhookConfiguration", "5"),
            ("z", "v1", "Namespace", "6"),
            ("a", "v1", "Widget", "7"),
            ("a", "v1", "", "8"),
        ]
        .into_iter()
        .map(|(g, v, k, path)| FieldSpec { gvk: gvk(g, v, k), path: path.into(), create: false })
        .collect();
        specs.sort_by(|a, b| compare_gvk(&a.gvk, &b.gvk));
        let order: Vec<&str> = specs.iter().map(|s| s.path.as_str()).collect();
        assert_eq!(order, ["6", "2", "1", "7", "8", "4", "3", "5"]);
    }

    #[test]
    fn builtin_secret_referrers_keep_the_duplicate_entry_kustomize_keeps() {
        // Entries for new kinds are appended unmerged, so Ingress spec/tls/secretName stays twice.
        let secret = FieldSpecTables::builtin().name_reference.iter().find(|n| n.gvk.kind == "Secret").unwrap();
        let tls = secret.referrers.iter().filter(|f| f.path == "spec/tls/secretName").count();
        assert_eq!(tls, 2);
        assert_eq!(secret.gvk, gvk("", "v1", "Secret"));
    }

    #[test]
    fn escaped_annotation_paths_survive_parsing() {
        let cm = FieldSpecTables::builtin().name_reference.iter().find(|n| n.gvk.kind == "ConfigMap").unwrap();
        let last = cm.referrers.last().unwrap();
        assert_eq!(last.path, r"metadata/annotations/nginx.ingress.kubernetes.io\/fastcgi-params-configmap");
        assert_eq!(last.gvk.kind, "Ingress");
    }

    #[test]
    fn config_keys_match_without_case_and_tables_come_out_sorted() {
        let v = json!({
            "NamePrefix": [{"path": "spec/x", "kind": "Deployment"}, {"path": "spec/y", "kind": "Namespace"}],
            "unknownKey": [1, 2],
            "nameReference": [{"kind": "Bee", "version": "v1", "fieldSpecs": [{"path": "spec/bee", "kind": "Hive"}]}]
        });
        let t = FieldSpecTables::from_config_value(&v).unwrap();
        assert_eq!(t.name_prefix, vec![spec("Namespace", "spec/y", false), spec("Deployment", "spec/x", false)]);
        assert_eq!(t.name_reference[0].referrers, vec![spec("Hive", "spec/bee", false)]);
    }

    #[test]
    fn merge_skips_specs_already_selected_and_rejects_create_conflicts() {
        let mut t = FieldSpecTables { images: vec![spec("Pod", "spec/x", true)], ..Default::default() };
        // A wildcard incoming spec selects the Pod one: already present.
        t.merge(FieldSpecTables { images: vec![spec("", "spec/x", true)], ..Default::default() }).unwrap();
        assert_eq!(t.images, vec![spec("Pod", "spec/x", true)]);
        // A specific incoming spec does not select a wildcard one: appended.
        let mut w = FieldSpecTables { images: vec![spec("", "spec/x", true)], ..Default::default() };
        w.merge(FieldSpecTables { images: vec![spec("Pod", "spec/x", true)], ..Default::default() }).unwrap();
        assert_eq!(w.images.len(), 2);
        let err = t.merge(FieldSpecTables { images: vec![spec("Pod", "spec/x", false)], ..Default::default() });
        assert_eq!(err.unwrap_err().to_string(), "failed to merge Images fieldSpec: conflicting fieldspecs");
    }

    #[test]
    fn merge_pools_referrers_of_the_same_kind() {
        let mut t = FieldSpecTables::builtin().clone();
        let before = t.name_reference.iter().find(|n| n.gvk.kind == "ConfigMap").unwrap().referrers.len();
        let user = json!({"nameReference": [
            {"kind": "ConfigMap", "version": "v1", "fieldSpecs": [
                {"path": "spec/configMapName", "kind": "MyKind"},
                {"path": "spec/template/spec/volumes/configMap/name", "kind": "Deployment"}]},
            {"kind": "Bee", "version": "v1beta1", "fieldSpecs": [{"path": "spec/beeRef/name", "kind": "MyKind"}]}
        ]});
        t.merge(FieldSpecTables::from_config_value(&user).unwrap()).unwrap();
        let cm = t.name_reference.iter().find(|n| n.gvk.kind == "ConfigMap").unwrap();
        assert_eq!(cm.referrers.len(), before + 1);
        assert_eq!(cm.referrers.last().unwrap(), &spec("MyKind", "spec/configMapName", false));
        // Bee is unranked: after the well-known kinds; "~G_v1beta1" sorts after groups, before "~G_~V".
        let kinds: Vec<&str> = t.name_reference.iter().map(|n| n.gvk.kind.as_str()).collect();
        let bee = kinds.iter().position(|k| *k == "Bee").unwrap();
        assert_eq!(kinds[bee - 1], "IngressClass");
        assert_eq!(kinds[bee + 1], "ReplicaSet");
    }

    /// A tree's accumulated tables for one kustomization with these configuration files.
    fn accumulated(files: Vec<Value>) -> FieldSpecTables {
        let files = files.iter().map(|f| FieldSpecTables::from_config_value(f).unwrap()).collect();
        let mut tables = FieldSpecTables::default();
        tables.merge(FieldSpecTables::for_configurations(files).unwrap()).unwrap();
        tables
    }

    #[test]
    fn a_configured_name_spec_for_one_kind_replaces_the_builtin_one() {
        // kustomize v5.6.0, namePrefix p- over a Deployment and a Service with the configuration
        // `namePrefix: [{path: metadata/name, kind: Deployment}]` (alone, or with a generic
        // metadata/name spec in any order): only the Deployment gets the prefix, once.
        let deployment_only = vec![spec("Deployment", "metadata/name", false)];
        let one = json!({"namePrefix": [{"path": "metadata/name", "kind": "Deployment"}]});
        assert_eq!(accumulated(vec![one.clone()]).name_prefix, deployment_only);
        let generic = json!({"namePrefix": [{"path": "metadata/name"}]});
        assert_eq!(accumulated(vec![generic.clone(), one.clone()]).name_prefix, deployment_only);
        assert_eq!(accumulated(vec![one, generic]).name_prefix, deployment_only);
        // A spec for another path leaves the builtin one alone.
        let other_path = json!({"namePrefix": [{"path": "spec/foo", "kind": "Deployment"}]});
        assert_eq!(accumulated(vec![other_path]).name_prefix.len(), 2);
    }

    #[test]
    fn a_configured_name_spec_for_a_webhook_kind_adds_to_the_builtin_one() {
        // The same with kind ValidatingWebhookConfiguration: webhook kinds sort after the generic
        // spec, so both stay and kustomize prefixes such a webhook twice ("p-p-w").
        let webhook = json!({"namePrefix": [{"path": "metadata/name", "kind": "ValidatingWebhookConfiguration"}]});
        assert_eq!(
            accumulated(vec![webhook]).name_prefix,
            vec![spec("", "metadata/name", false), spec("ValidatingWebhookConfiguration", "metadata/name", false)]
        );
    }

    #[test]
    fn a_kustomization_without_configurations_brings_the_builtin_tables() {
        assert_eq!(&accumulated(Vec::new()), FieldSpecTables::builtin());
    }

    #[test]
    fn crd_object_ref_annotations_become_name_references() {
        // The shape of kustomize's crd_test.go definitions file, trimmed.
        let defs = json!({
            "example.com/v1.MyKind": {"Schema": {"properties": {
                "apiVersion": {"type": "string"}, "kind": {"type": "string"},
                "metadata": {"$ref": "k8s.io/apimachinery/pkg/apis/meta/v1.ObjectMeta"},
                "spec": {"$ref": "example.com/v1.MyKindSpec"}}}},
            "example.com/v1.MyKindSpec": {"Schema": {"properties": {
                "beeRef": {"x-kubernetes-object-ref-api-version": "v1beta1", "x-kubernetes-object-ref-kind": "Bee",
                           "$ref": "example.com/v1.BeeRef"},
                "secretRef": {"x-kubernetes-object-ref-api-version": "v1", "x-kubernetes-object-ref-kind": "Secret",
                              "x-kubernetes-object-ref-name-key": "secretName"},
                "labels": {"x-kubernetes-label-selector": ""}}}},
            "example.com/v1.BeeRef": {"Schema": {"properties": {"name": {"type": "string"}}}}
        });
        let t = FieldSpecTables::from_crd(&defs, false).unwrap();
        let by_kind = |k: &str| t.name_reference.iter().find(|n| n.gvk.kind == k).unwrap();
        assert_eq!(by_kind("Bee").gvk, gvk("", "v1beta1", "Bee"));
        assert_eq!(by_kind("Bee").referrers, vec![spec("MyKind", "spec/beeRef/name", false)]);
        assert_eq!(by_kind("Secret").referrers, vec![spec("MyKind", "spec/secretRef/secretName", false)]);
        assert_eq!(t.common_labels, vec![spec("MyKind", "spec/labels", false)]);
        // Secret ranks before the unlisted Bee.
        assert_eq!(t.name_reference[0].gvk.kind, "Secret");
    }

    #[test]
    fn crd_types_that_do_not_look_like_objects_are_skipped() {
        let defs = json!({"a.B": {"Schema": {"properties": {
            "kind": {}, "metadata": {},
            "x": {"x-kubernetes-object-ref-api-version": "v1", "x-kubernetes-object-ref-kind": "Secret"}}}}});
        assert_eq!(FieldSpecTables::from_crd(&defs, false).unwrap(), FieldSpecTables::default());
    }
}
