//! Placeholder until vars land.
use super::fieldspec::FieldSpec;
use crate::error::{Error, Result};
use crate::resource::ResMap;
use serde_json::Value;
pub fn resolve_vars(_r: &mut ResMap, vars: &[Value], _specs: &[FieldSpec]) -> Result<()> {
    if vars.is_empty() { Ok(()) } else { Err(Error::msg("vars are not supported yet")) }
}
