//! peerpods-build: `kustomize build`, byte for byte, in Rust.
pub mod error;
pub mod generate;
pub mod kustomization;
pub mod patch;
pub mod transform;
pub mod resource;
pub mod yaml;
