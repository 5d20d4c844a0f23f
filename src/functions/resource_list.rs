//! The KRM function protocol as data: the `ResourceList` a function reads and writes
//! (kyaml's `kio.ByteWriter`/`ByteReader` with `KeepReaderAnnotations`), and the YAML stream
//! an old-style exec plugin reads and writes.
use serde_json::{Map, Value};

use crate::resource::ResId;
use crate::yaml::emit::emit_stream;
use crate::yaml::parse::{parse_documents, ParseError};

/// The resource's id as YAML, which kustomize writes on every resource it hands a transformer
/// so that it can recognise them in the output.
pub const ID_ANNOTATION: &str = "kustomize.config.k8s.io/id";
/// Marks the functionConfig, so that a generator's echo of it is dropped from the output.
pub const LOCAL_CONFIG_ANNOTATION: &str = "config.kubernetes.io/local-config";

/// Annotations kyaml writes on each item it sends (its position, twice, and its id, twice),
/// then removes from what comes back; the item's index is the first, the id the second value.
const INDEX_ANNOTATIONS: [&str; 3] =
    ["config.kubernetes.io/index", "internal.config.kubernetes.io/index", "internal.config.kubernetes.io/annotations-migration-resource-id"];
const ITEM_ID_ANNOTATIONS: [&str; 2] = ["internal.config.kubernetes.io/id", "config.k8s.io/id"];
/// Annotations that never reach a build's output, whoever wrote them: kyaml's bookkeeping
/// (positions, ids, paths, sequence indent) and kustomize's resource id.
const BOOKKEEPING_ANNOTATIONS: [&str; 11] = [
    "config.kubernetes.io/index",
    "internal.config.kubernetes.io/index",
    "internal.config.kubernetes.io/annotations-migration-resource-id",
    "internal.config.kubernetes.io/id",
    "config.k8s.io/id",
    "config.kubernetes.io/path",
    "internal.config.kubernetes.io/path",
    "config.k8s.io/path",
    "internal.config.kubernetes.io/seqindent",
    "internal.config.kubernetes.io/generatorBehavior",
    ID_ANNOTATION,
];

/// What a KRM function reads on stdin: `items` and the `functionConfig` that drives it.
#[derive(Debug, Clone, Default)]
pub struct ResourceList {
    pub items: Vec<Value>,
    pub function_config: Value,
}

impl ResourceList {
    /// The list for a function configured by `config` (marked local, as kustomize marks it).
    pub fn new(config: &Value, items: Vec<Value>) -> ResourceList {
        let mut function_config = config.clone();
        set_annotation(&mut function_config, LOCAL_CONFIG_ANNOTATION, "true");
        ResourceList { items, function_config }
    }

    /// The list a generator gets: its config is also its one item (kyaml's pipeline runs
    /// nothing without an item).
    pub fn for_generator(config: &Value) -> ResourceList {
        let list = ResourceList::new(config, Vec::new());
        let item = list.function_config.clone();
        ResourceList { items: vec![item], ..list }
    }

    /// The bytes sent to the function: items numbered as kyaml numbers them.
    pub fn encode(&self) -> Vec<u8> {
        let items = self
            .items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let mut item = item.clone();
                for key in INDEX_ANNOTATIONS {
                    set_annotation(&mut item, key, &i.to_string());
                }
                for key in ITEM_ID_ANNOTATIONS {
                    set_annotation(&mut item, key, &(i + 1).to_string());
                }
                item
            })
            .collect();
        let mut list = Map::new();
        list.insert("apiVersion".into(), Value::String("config.kubernetes.io/v1".into()));
        list.insert("kind".into(), Value::String("ResourceList".into()));
        list.insert("items".into(), Value::Array(items));
        list.insert("functionConfig".into(), self.function_config.clone());
        emit_stream([&Value::Object(list)]).into_bytes()
    }
}

/// What came back from a function: a `ResourceList` (its `results` ignored, as `build` ignores
/// them) or, as kyaml also accepts, a plain stream of resources; YAML or JSON. The objects are
/// returned with the bookkeeping annotations removed.
pub fn decode_output(text: &str) -> Result<Vec<Value>, ParseError> {
    let docs: Vec<Value> = parse_documents(text)?.into_iter().filter(|d| !d.is_null()).collect();
    let is_list = |d: &Value| {
        d.get("kind").and_then(Value::as_str) == Some("ResourceList")
            && d.get("apiVersion").and_then(Value::as_str).is_some_and(|v| v.starts_with("config.kubernetes.io/"))
    };
    let items = match docs.as_slice() {
        [list] if is_list(list) => match list.get("items") {
            Some(Value::Array(items)) => items.clone(),
            _ => Vec::new(),
        },
        _ => docs,
    };
    Ok(items.into_iter().map(without_bookkeeping).collect())
}

/// A transformer's input for an old-style exec plugin: the resources as one YAML stream.
pub fn encode_stream(items: &[Value]) -> Vec<u8> {
    emit_stream(items.iter()).into_bytes()
}

/// `resource` with its id written in [`ID_ANNOTATION`] (sigs.k8s.io/yaml's encoding of a ResId).
pub fn with_id_annotation(mut resource: Value, id: &ResId) -> Value {
    let mut fields = Map::new();
    for (key, value) in [("group", &id.gvk.group), ("kind", &id.gvk.kind), ("name", &id.name), ("namespace", &id.namespace), ("version", &id.gvk.version)] {
        if !value.is_empty() {
            fields.insert(key.into(), Value::String(value.clone()));
        }
    }
    let text = emit_stream([&Value::Object(fields)]);
    set_annotation(&mut resource, ID_ANNOTATION, &text);
    resource
}

/// `object` without kyaml's and kustomize's bookkeeping annotations (and without an
/// `annotations` map left empty by that).
pub fn without_bookkeeping(mut object: Value) -> Value {
    let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) else { return object };
    if let Some(annotations) = metadata.get_mut("annotations").and_then(Value::as_object_mut) {
        for key in BOOKKEEPING_ANNOTATIONS {
            annotations.shift_remove(key);
        }
        if annotations.is_empty() {
            metadata.shift_remove("annotations");
        }
    }
    object
}

/// `object` with the annotation `key: value`.
pub fn with_annotation(mut object: Value, key: &str, value: &str) -> Value {
    set_annotation(&mut object, key, value);
    object
}

fn set_annotation(object: &mut Value, key: &str, value: &str) {
    let Some(object) = object.as_object_mut() else { return };
    let metadata = object.entry("metadata").or_insert_with(|| Value::Object(Map::new()));
    if !metadata.is_object() {
        *metadata = Value::Object(Map::new());
    }
    let annotations = metadata.as_object_mut().unwrap().entry("annotations").or_insert_with(|| Value::Object(Map::new()));
    if !annotations.is_object() {
        *annotations = Value::Object(Map::new());
    }
    annotations.as_object_mut().unwrap().insert(key.into(), Value::String(value.into()));
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn generator_gets_its_config_as_the_one_item_marked_local() {
        let config = json!({"apiVersion": "x/v1", "kind": "Gen", "metadata": {"name": "g"}});
        let list = ResourceList::for_generator(&config);
        let text = String::from_utf8(list.encode()).unwrap();
        let back = parse_documents(&text).unwrap().remove(0);
        assert_eq!(back["kind"], "ResourceList");
        assert_eq!(back["functionConfig"]["metadata"]["annotations"][LOCAL_CONFIG_ANNOTATION], "true");
        assert_eq!(back["items"][0]["metadata"]["annotations"]["config.kubernetes.io/index"], "0");
        assert_eq!(back["items"][0]["metadata"]["annotations"]["config.k8s.io/id"], "1");
    }

    #[test]
    fn output_loses_bookkeeping_and_empty_annotations() {
        let text = "apiVersion: config.kubernetes.io/v1\nkind: ResourceList\nitems:\n- kind: A\n  metadata:\n    name: a\n    annotations:\n      config.kubernetes.io/index: '0'\n      kustomize.config.k8s.io/id: x\nresults:\n- message: ok\n";
        assert_eq!(decode_output(text).unwrap(), vec![json!({"kind": "A", "metadata": {"name": "a"}})]);
    }

    #[test]
    fn json_output_and_plain_streams_are_accepted() {
        let json_list = r#"{"apiVersion": "config.kubernetes.io/v1", "kind": "ResourceList", "items": [{"kind": "A", "metadata": {"name": "a"}}]}"#;
        assert_eq!(decode_output(json_list).unwrap().len(), 1);
        assert_eq!(decode_output("kind: A\nmetadata: {name: a}\n---\nkind: B\nmetadata: {name: b}\n").unwrap().len(), 2);
    }

    #[test]
    fn id_annotation_is_the_id_as_yaml_with_empty_parts_left_out() {
        let id = ResId { gvk: crate::resource::Gvk::from_api_version("apps/v1", "Deployment"), namespace: String::new(), name: "d".into() };
        let value = with_id_annotation(json!({"metadata": {"name": "d"}}), &id);
        assert_eq!(value["metadata"]["annotations"][ID_ANNOTATION], "group: apps\nkind: Deployment\nname: d\nversion: v1\n");
    }
}
