//! `valuesInline` combined with a values file as kustomize combines them: kyaml's `merge2`
//! (the source wins over the destination; maps merge key by key; a null in the source removes
//! the key; lists are replaced, as merge2 infers no list keys here).
use serde_json::{Map, Value};

/// `source` merged into `destination` (the source's values win).
pub fn merge(source: Value, destination: Value) -> Value {
    match (source, destination) {
        (Value::Object(source), Value::Object(mut destination)) => {
            for (key, value) in source {
                if value.is_null() {
                    destination.shift_remove(&key);
                    continue;
                }
                let merged = match destination.shift_remove(&key) {
                    Some(old) => merge(value, old),
                    None => value,
                };
                destination.insert(key, merged);
            }
            Value::Object(destination)
        }
        (source, _) => source,
    }
}

/// The values as a map (kyaml's `Map()`): a document that is not a map gives an empty one.
pub fn as_map(values: Value) -> Value {
    match values {
        Value::Object(_) => values,
        _ => Value::Object(Map::new()),
    }
}
