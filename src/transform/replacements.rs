//! Placeholder until replacements land.
use crate::error::{Error, Result};
use crate::kustomization::Loader;
use crate::resource::ResMap;
use serde_json::Value;
pub fn apply_replacements(_r: &mut ResMap, _v: &[Value], _l: &Loader) -> Result<()> { Err(Error::msg("replacements are not supported yet")) }
