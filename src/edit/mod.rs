//! `edit`: the kustomization edits Argo CD and release tooling run (`kustomize edit set ...`,
//! `kustomize edit add ...`), with kustomize's semantics and refusals, made in place.
pub mod document;
