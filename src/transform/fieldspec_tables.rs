//! Placeholder until the tables land.
use super::fieldspec::FieldSpec;
use crate::error::Result;
use crate::resource::Gvk;
use serde_json::Value;
#[derive(Clone, Debug, Default)]
pub struct NameBackReference { pub gvk: Gvk, pub referrers: Vec<FieldSpec> }
#[derive(Clone, Debug, Default)]
pub struct FieldSpecTables { pub name_prefix: Vec<FieldSpec>, pub name_suffix: Vec<FieldSpec>, pub namespace: Vec<FieldSpec>, pub common_labels: Vec<FieldSpec>, pub template_labels: Vec<FieldSpec>, pub common_annotations: Vec<FieldSpec>, pub images: Vec<FieldSpec>, pub replicas: Vec<FieldSpec>, pub var_reference: Vec<FieldSpec>, pub name_reference: Vec<NameBackReference> }
impl FieldSpecTables {
    pub fn merge(&mut self, _o: FieldSpecTables) {}
    pub fn from_config_value(_v: &Value) -> Result<Self> { Ok(Self::default()) }
    pub fn from_crd(_v: &Value) -> Self { Self::default() }
}
