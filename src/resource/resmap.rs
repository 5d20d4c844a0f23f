//! An ordered collection of resources with an index by id, so lookups never scan the whole list.
use std::collections::HashMap;

use super::{ResId, Resource};
use crate::error::{Error, Result};

/// Resources in build order, indexed by their current id.
#[derive(Clone, Debug, Default)]
pub struct ResMap {
    resources: Vec<Resource>,
    by_current_id: HashMap<ResId, Vec<usize>>,
}

impl ResMap {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.resources.len()
    }

    pub fn is_empty(&self) -> bool {
        self.resources.is_empty()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Resource> {
        self.resources.iter()
    }

    /// Mutable access to every resource; the index is rebuilt afterwards by `reindex`,
    /// which callers that rename must call (`for_each_mut` does it for them).
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, Resource> {
        self.resources.iter_mut()
    }

    pub fn as_slice(&self) -> &[Resource] {
        &self.resources
    }

    pub fn get(&self, index: usize) -> &Resource {
        &self.resources[index]
    }

    pub fn get_mut(&mut self, index: usize) -> &mut Resource {
        &mut self.resources[index]
    }

    /// Runs `f` on every resource, then refreshes the index (ids may have changed).
    pub fn for_each_mut<E>(&mut self, mut f: impl FnMut(&mut Resource) -> Result<(), E>) -> Result<(), E> {
        for r in &mut self.resources {
            f(r)?;
        }
        self.reindex();
        Ok(())
    }

    pub fn reindex(&mut self) {
        self.by_current_id.clear();
        for (i, r) in self.resources.iter().enumerate() {
            self.by_current_id.entry(r.current_id()).or_default().push(i);
        }
    }

    /// Adds a resource; an id already present is an error, as in kustomize.
    pub fn append(&mut self, resource: Resource) -> Result<()> {
        let id = resource.current_id();
        if self.by_current_id.contains_key(&id) {
            return Err(Error::msg(format!("may not add resource with an already registered id: {id}")));
        }
        self.by_current_id.entry(id).or_default().push(self.resources.len());
        self.resources.push(resource);
        Ok(())
    }

    /// Adds every resource of `other`, failing on the first id conflict.
    pub fn append_all(&mut self, other: ResMap) -> Result<()> {
        for r in other.resources {
            self.append(r)?;
        }
        Ok(())
    }

    /// Positions of the resources whose current id is `id`.
    pub fn indices_of_current_id(&self, id: &ResId) -> &[usize] {
        self.by_current_id.get(id).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Replaces the resource at `index` (its id may change).
    pub fn replace(&mut self, index: usize, resource: Resource) {
        self.resources[index] = resource;
        self.reindex();
    }

    /// Removes the resources for which `keep` is false, preserving order.
    pub fn retain(&mut self, keep: impl FnMut(&Resource) -> bool) {
        self.resources.retain(keep);
        self.reindex();
    }

    pub fn into_vec(self) -> Vec<Resource> {
        self.resources
    }

    pub fn from_vec(resources: Vec<Resource>) -> Self {
        let mut map = ResMap { resources, by_current_id: HashMap::new() };
        map.reindex();
        map
    }

    pub fn sort_by(&mut self, compare: impl FnMut(&Resource, &Resource) -> std::cmp::Ordering) {
        self.resources.sort_by(compare);
        self.reindex();
    }
}
