//! Placeholder until name references land.
use super::fieldspec_tables::NameBackReference;
use crate::error::Result;
use crate::resource::ResMap;
pub fn resolve_name_references(_r: &mut ResMap, _t: &[NameBackReference]) -> Result<()> { Ok(()) }
