//! Placeholder until the patch engine lands.
use serde_json::Value;
#[derive(Clone, Debug, Default)]
pub struct Schema;
impl Schema { pub fn builtin() -> Self { Schema } }
pub fn strategic_merge(_t: &mut Value, _p: &Value, _s: &Schema) -> Result<(), String> { Err("not yet".into()) }
pub fn apply_json6902(_t: &mut Value, _p: &Value) -> Result<(), String> { Err("not yet".into()) }
