//! An ordered collection of resources with an index by name, so lookups never scan the whole list.
use std::cell::RefCell;
use crate::fast_hash::FastHashMap;

use super::Resource;
use crate::error::{Error, Result};

/// Passes over at least this many resources run in parallel (below, threads cost more than they give).
const PARALLEL_MIN: usize = 64;
/// At most this many resources in a row on one thread: rayon otherwise splits a pass into a
/// few long runs, and the last of them runs alone while the other threads wait.
const LEAF: usize = 8;
/// At least this many resources in a row on one thread for a pass that only reads a name or an
/// annotation of each: a shorter run costs more to hand out than to read.
const READS: usize = 64;

/// Resources in build order, indexed by every name each has had.
#[derive(Clone, Debug, Default)]
pub struct ResMap {
    resources: Vec<Resource>,
    /// Brought up to date on lookup: changes only mark positions (or everything) as changed,
    /// so a transformer that touches every resource costs one rebuild, not one per change.
    index: RefCell<NameIndex>,
    /// What may have changed since the provenance history last looked (`explain`).
    touched: Touched,
}

/// Positions whose resources may have changed (been handed out mutably, or added) since the
/// last [`ResMap::drain_touched`]: an `explain` build looks for a step's writes only there.
#[derive(Clone, Debug, Default)]
struct Touched {
    /// Any resource may have changed (positions is then empty).
    all: bool,
    positions: Vec<usize>,
}

impl Touched {
    fn mark(&mut self, position: usize) {
        if !self.all {
            self.positions.push(position);
        }
    }

    fn mark_all(&mut self) {
        self.all = true;
        self.positions = Vec::new();
    }
}

/// Positions by name, over current and previous ids.
#[derive(Clone, Debug, Default)]
struct NameIndex {
    /// Positions of the resources that have or had each name, ascending.
    by_name: FastHashMap<String, Vec<usize>>,
    /// The names each position is listed under.
    names_of: Vec<Vec<String>>,
    /// Positions that may have changed since the last lookup.
    dirty: Vec<usize>,
    /// Positions moved, or any resource may have changed: rebuild on the next lookup.
    stale: bool,
    /// No two resources share a current id, as [`ResMap::settle`] found; true only while
    /// nothing changed since (see [`NameIndex::settled`]).
    distinct_ids: bool,
}

/// The resources at `positions` (ascending, distinct; those out of range left out).
fn at_positions<'r>(resources: &'r mut [Resource], positions: &[usize]) -> Vec<&'r mut Resource> {
    let mut wanted = positions.iter().copied().peekable();
    let mut selected = Vec::with_capacity(positions.len());
    for (i, r) in resources.iter_mut().enumerate() {
        if wanted.peek() == Some(&i) {
            wanted.next();
            selected.push(r);
        }
    }
    selected
}

/// Whether one of the resources at `candidates` has `resource`'s current id (kustomize's
/// `GetMatchingResourcesByCurrentId`, which `Append` refuses to add to).
fn holds_current_id(resources: &[Resource], mut candidates: impl Iterator<Item = usize>, resource: &Resource) -> bool {
    let scope = std::cell::OnceCell::new();
    let cluster_scoped = || *scope.get_or_init(|| !crate::patch::is_namespaced(resource.api_version(), resource.kind()));
    candidates.any(|i| resources[i].has_same_current_id_scoped(resource, &cluster_scoped))
}

/// `read` of each resource, in order: on every thread when there are many (a pass that reads
/// each resource to act on them all from one thread).
fn read_each<'r, T: Send>(resources: &'r [Resource], read: impl Fn(&'r Resource) -> T + Sync) -> Vec<T> {
    use rayon::prelude::*;
    match resources.len() < PARALLEL_MIN {
        true => resources.iter().map(read).collect(),
        false => resources.par_iter().with_min_len(READS).map(|r| read(r)).collect(),
    }
}

/// The distinct names among a resource's ids.
fn names_of(r: &Resource) -> Vec<String> {
    let mut names: Vec<String> = Vec::with_capacity(r.previous_ids.len() + 1);
    for name in r.previous_ids.iter().map(|id| id.name.as_str()).chain([r.name()]) {
        if !names.iter().any(|n| n == name) {
            names.push(name.to_string());
        }
    }
    names
}

impl NameIndex {
    fn add(&mut self, position: usize, names: Vec<String>) {
        for name in &names {
            let list = self.by_name.entry(name.clone()).or_default();
            if let Err(at) = list.binary_search(&position) {
                list.insert(at, position);
            }
        }
        if self.names_of.len() <= position {
            self.names_of.resize(position + 1, Vec::new());
        }
        self.names_of[position] = names;
    }

    fn remove(&mut self, position: usize) {
        for name in std::mem::take(&mut self.names_of[position]) {
            if let Some(list) = self.by_name.get_mut(&name) {
                if let Ok(at) = list.binary_search(&position) {
                    list.remove(at);
                }
                if list.is_empty() {
                    self.by_name.remove(&name);
                }
            }
        }
    }

    /// Whether the index is up to date and [`ResMap::settle`] found the ids distinct.
    fn settled(&self) -> bool {
        self.distinct_ids && !self.stale && self.dirty.is_empty()
    }

    fn refresh(&mut self, resources: &[Resource]) {
        if self.stale || !self.dirty.is_empty() {
            // Something changed: what settle found no longer holds.
            self.distinct_ids = false;
        }
        if self.stale {
            self.by_name.clear();
            self.names_of.clear();
            self.dirty.clear();
            // The index is rebuilt whole after every pass over all resources: their names are
            // read on every thread, and only the inserts take one.
            for (i, names) in read_each(resources, names_of).into_iter().enumerate() {
                self.add(i, names);
            }
            self.stale = false;
            return;
        }
        let mut dirty = std::mem::take(&mut self.dirty);
        dirty.sort_unstable();
        dirty.dedup();
        for i in dirty {
            self.remove(i);
            self.add(i, names_of(&resources[i]));
        }
    }
}

impl ResMap {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn len(&self) -> usize {
        self.resources.len()
    }

    /// Room for `additional` more resources, in the list and in the index of their names: a
    /// level taking in many folders grows each once.
    pub fn reserve(&mut self, additional: usize) {
        self.resources.reserve(additional);
        let index = self.index.get_mut();
        index.by_name.reserve(additional);
        index.names_of.reserve(additional);
    }

    pub fn is_empty(&self) -> bool {
        self.resources.is_empty()
    }

    pub fn iter(&self) -> std::slice::Iter<'_, Resource> {
        self.resources.iter()
    }

    /// Mutable access to every resource (the index is refreshed on the next lookup).
    pub fn iter_mut(&mut self) -> std::slice::IterMut<'_, Resource> {
        self.index.get_mut().stale = true;
        self.touched.mark_all();
        self.resources.iter_mut()
    }

    pub fn as_slice(&self) -> &[Resource] {
        &self.resources
    }

    pub fn get(&self, index: usize) -> &Resource {
        &self.resources[index]
    }

    pub fn get_mut(&mut self, index: usize) -> &mut Resource {
        self.index.get_mut().dirty.push(index);
        self.touched.mark(index);
        &mut self.resources[index]
    }

    /// Runs `f` on every resource (ids may change; the index follows).
    pub fn for_each_mut<E>(&mut self, mut f: impl FnMut(&mut Resource) -> Result<(), E>) -> Result<(), E> {
        for r in self.iter_mut() {
            f(r)?;
        }
        Ok(())
    }

    /// Runs `f` on every resource, in parallel when there are many. The error returned is the
    /// first in resource order, the one a sequential run would stop at.
    pub fn try_for_each_mut_parallel<E: Send>(&mut self, f: impl Fn(&mut Resource) -> Result<(), E> + Sync) -> Result<(), E> {
        if self.resources.len() < PARALLEL_MIN {
            return self.for_each_mut(f);
        }
        self.try_steps_parallel(|_, r| f(r).map_err(|e| (0, e))).map_err(|(_, e)| e)
    }

    /// Runs `f`, several steps in order, on every resource and its position, in parallel when
    /// there are many; a resource's steps stop at its first failure, which `f` returns with the
    /// step's position. The error returned, with that step's position, is the earliest step's,
    /// first in resource order among that step's: the one the steps would stop at if each ran
    /// over all the resources before the next.
    pub fn try_steps_parallel<E: Send>(&mut self, f: impl Fn(usize, &mut Resource) -> Result<(), (usize, E)> + Sync) -> Result<(), (usize, E)> {
        use rayon::prelude::*;
        self.index.get_mut().stale = true;
        self.touched.mark_all();
        let failed = |(i, r): (usize, &mut Resource)| f(i, r).err().map(|(step, e)| ((step, i), e));
        let first_error = match self.resources.len() < PARALLEL_MIN {
            true => self.resources.iter_mut().enumerate().filter_map(failed).min_by_key(|(at, _)| *at),
            false => self.resources.par_iter_mut().with_max_len(LEAF).enumerate().filter_map(failed).min_by_key(|(at, _)| *at),
        };
        first_error.map_or(Ok(()), |((step, _), e)| Err((step, e)))
    }

    /// [`Self::try_for_each_mut_parallel`] for a pass that knows what it wrote: `f` says
    /// whether it may have changed its resource, and only those count as touched (`explain`
    /// then compares only them with their history).
    pub fn try_update_parallel<E: Send>(&mut self, f: impl Fn(&mut Resource) -> Result<bool, E> + Sync) -> Result<(), E> {
        use rayon::prelude::*;
        self.index.get_mut().stale = true;
        if self.resources.len() < PARALLEL_MIN {
            for (i, r) in self.resources.iter_mut().enumerate() {
                if f(r)? {
                    self.touched.mark(i);
                }
            }
            return Ok(());
        }
        let outcomes: Vec<Result<bool, E>> = self.resources.par_iter_mut().with_max_len(LEAF).map(|r| f(r)).collect();
        for (i, outcome) in outcomes.into_iter().enumerate() {
            if outcome? {
                self.touched.mark(i);
            }
        }
        Ok(())
    }

    /// `f` of each resource at `positions` (ascending, distinct) and of its position, in order;
    /// computed in parallel when there are many.
    pub fn map_positions_mut<T: Send>(&mut self, positions: &[usize], f: impl Fn(usize, &mut Resource) -> T + Sync) -> Vec<T> {
        use rayon::prelude::*;
        if positions.len() < PARALLEL_MIN {
            return positions.iter().map(|&i| f(i, self.get_mut(i))).collect();
        }
        self.index.get_mut().dirty.extend_from_slice(positions);
        for &i in positions {
            self.touched.mark(i);
        }
        let selected = at_positions(&mut self.resources, positions);
        assert_eq!(selected.len(), positions.len(), "positions must be ascending and in range");
        positions.par_iter().with_max_len(LEAF).zip(selected).map(|(&i, r)| f(i, r)).collect()
    }

    /// Whether a pass over the resources is worth running in parallel.
    pub fn is_large(&self) -> bool {
        self.resources.len() >= PARALLEL_MIN
    }

    /// Marks every resource as possibly renamed; the index is rebuilt on the next lookup.
    pub fn reindex(&mut self) {
        self.index.get_mut().stale = true;
    }

    /// Positions, ascending, of the resources whose current or any previous name is `name`.
    pub fn positions_named(&self, name: &str) -> Vec<usize> {
        let mut index = self.index.borrow_mut();
        index.refresh(&self.resources);
        index.by_name.get(name).cloned().unwrap_or_default()
    }

    /// Adds a resource; an id already present is an error, as in kustomize. A resource
    /// without history is touched (`explain` records it as made by the step that adds it);
    /// one with history comes in step with it (just read, or moved from elsewhere).
    pub fn append(&mut self, resource: Resource) -> Result<()> {
        let fresh = resource.provenance.is_none();
        self.push(resource)?;
        if fresh {
            self.touched.mark(self.resources.len() - 1);
        }
        Ok(())
    }

    /// [`Self::append`], leaving the new position untouched.
    fn push(&mut self, resource: Resource) -> Result<()> {
        let duplicate = {
            let mut index = self.index.borrow_mut();
            index.refresh(&self.resources);
            index.by_name.get(resource.name()).is_some_and(|list| holds_current_id(&self.resources, list.iter().copied(), &resource))
        };
        if duplicate {
            let id = resource.current_id();
            return Err(Error::msg(format!("may not add resource with an already registered id: {id}")));
        }
        let position = self.resources.len();
        let names = names_of(&resource);
        self.resources.push(resource);
        let index = self.index.get_mut();
        if !index.stale {
            index.add(position, names);
        }
        Ok(())
    }

    /// Brings the index up to date and notes whether any two resources share a current id
    /// ([`Self::first_repeated_id`]): then [`Self::append_all`] into a map holding none of
    /// these names takes them from the index without looking at the resources. Made by the
    /// thread that built the map, while its resources are at hand.
    pub fn settle(&mut self) {
        let distinct = self.first_repeated_id().is_none();
        self.index.get_mut().distinct_ids = distinct;
    }

    /// The current id of the first resource whose current id an earlier one has: what
    /// kustomize's `AppendAll` of the map into an empty one refuses.
    pub fn first_repeated_id(&self) -> Option<super::ResId> {
        use rayon::prelude::*;
        let mut index = self.index.borrow_mut();
        index.refresh(&self.resources);
        let (index, resources) = (&*index, self.resources.as_slice());
        let repeated = |(j, r): (usize, &Resource)| {
            let earlier = index.by_name.get(r.name())?.iter().copied().filter(|&i| i < j);
            holds_current_id(resources, earlier, r).then(|| r.current_id())
        };
        match self.is_large() {
            true => resources.par_iter().with_min_len(READS).enumerate().find_map_first(repeated),
            false => resources.iter().enumerate().find_map(repeated),
        }
    }

    /// Adds every resource of `other`, failing on the first id conflict. What `other` had
    /// touched stays touched; the rest arrive as they were.
    pub fn append_all(&mut self, mut other: ResMap) -> Result<()> {
        let offset = self.resources.len();
        self.resources.reserve(other.len());
        let index = self.index.get_mut();
        index.refresh(&self.resources);
        let theirs = other.index.get_mut();
        if theirs.settled() && theirs.by_name.keys().all(|name| !index.by_name.contains_key(name)) {
            // No name of theirs is among ours, and theirs are distinct ids: nothing to refuse.
            // Their index joins ours, and the resources are not looked at again (a settled map
            // is one whose index its own thread built, while its resources were at hand).
            let theirs = std::mem::take(theirs);
            index.by_name.reserve(theirs.by_name.len());
            for (name, positions) in theirs.by_name {
                index.by_name.insert(name, positions.into_iter().map(|p| p + offset).collect());
            }
            index.names_of.resize(offset, Vec::new());
            index.names_of.extend(theirs.names_of);
            self.resources.append(&mut other.resources);
        } else {
            for r in other.resources {
                self.push(r)?;
            }
        }
        if other.touched.all {
            (offset..self.resources.len()).for_each(|i| self.touched.mark(i));
        } else {
            other.touched.positions.iter().for_each(|&i| self.touched.mark(offset + i));
        }
        Ok(())
    }

    /// Replaces the resource at `index` (its id may change).
    pub fn replace(&mut self, index: usize, resource: Resource) {
        *self.get_mut(index) = resource;
    }

    /// Removes the resources at `positions` (ascending).
    pub fn remove_positions(&mut self, positions: &[usize]) {
        if positions.is_empty() {
            return;
        }
        let mut at = 0;
        self.retain(|_| {
            at += 1;
            positions.binary_search(&(at - 1)).is_err()
        });
    }

    /// Removes the resources for which `keep` is false, preserving order.
    pub fn retain(&mut self, mut keep: impl FnMut(&Resource) -> bool) {
        let before = self.resources.len();
        let mut kept = Vec::with_capacity(before);
        self.resources.retain(|r| {
            let k = keep(r);
            kept.push(k);
            k
        });
        if self.resources.len() != before {
            self.reindex();
            // Touched positions follow their resources to where they are now.
            let mut now = Vec::with_capacity(before);
            let mut next = 0;
            for &k in &kept {
                now.push(k.then_some(next));
                next += usize::from(k);
            }
            let positions = std::mem::take(&mut self.touched.positions);
            self.touched.positions = positions.into_iter().filter_map(|i| now[i]).collect();
        }
    }

    /// `read` of each resource, in order; on every thread when there are many.
    pub fn read_each<'r, T: Send>(&'r self, read: impl Fn(&'r Resource) -> T + Sync) -> Vec<T> {
        read_each(&self.resources, read)
    }

    /// [`Self::retain`], `keep` asked of every resource first ([`Self::read_each`]).
    pub fn retain_parallel(&mut self, keep: impl Fn(&Resource) -> bool + Sync) {
        // `Vec::retain` visits each resource once, in order.
        let mut answers = self.read_each(keep).into_iter();
        self.retain(|_| answers.next().expect("one answer per resource"));
    }

    /// Runs `f` on every resource that may have changed since the last call (handed out
    /// mutably or added), in parallel when there are many, and forgets them: `explain` finds
    /// a step's writes by comparing only these with their history.
    pub fn drain_touched(&mut self, f: impl Fn(&mut Resource) + Sync) {
        use rayon::prelude::*;
        let touched = std::mem::take(&mut self.touched);
        if touched.all {
            self.resources.par_iter_mut().with_min_len(PARALLEL_MIN / 2).for_each(|r| f(r));
            return;
        }
        let mut positions = touched.positions;
        positions.sort_unstable();
        positions.dedup();
        at_positions(&mut self.resources, &positions).into_par_iter().with_min_len(PARALLEL_MIN / 2).for_each(|r| f(r));
    }

    pub fn into_vec(self) -> Vec<Resource> {
        self.resources
    }

    pub fn from_vec(resources: Vec<Resource>) -> Self {
        let touched = Touched { all: true, positions: Vec::new() };
        ResMap { resources, index: RefCell::new(NameIndex { stale: true, ..Default::default() }), touched }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use serde_json::json;

    use super::*;

    fn config_map(name: &str) -> Resource {
        Resource::new(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}))
    }

    fn map_of(names: &[&str]) -> ResMap {
        let mut map = ResMap::new();
        for name in names {
            map.append(config_map(name)).unwrap();
        }
        map
    }

    /// The names of the resources `drain_touched` visits.
    fn drained(map: &mut ResMap) -> Vec<String> {
        let seen = Mutex::new(Vec::new());
        map.drain_touched(|r| seen.lock().unwrap().push(r.name().to_string()));
        let mut seen = seen.into_inner().unwrap();
        seen.sort();
        seen
    }

    #[test]
    fn only_resources_handed_out_mutably_or_added_are_touched() {
        let mut map = map_of(&["a", "b", "c"]);
        assert_eq!(drained(&mut map), ["a", "b", "c"], "resources added without history");
        assert!(drained(&mut map).is_empty(), "drained once");
        map.get_mut(1);
        assert_eq!(drained(&mut map), ["b"]);
        let _ = map.try_update_parallel(|r| Ok::<bool, ()>(r.name() == "c"));
        assert_eq!(drained(&mut map), ["c"], "a pass touches only what it says it wrote");
        let _ = map.iter_mut();
        assert_eq!(drained(&mut map), ["a", "b", "c"]);
    }

    #[test]
    fn touched_positions_follow_removals_and_merges() {
        let mut map = map_of(&["a", "b", "c", "d"]);
        drained(&mut map);
        map.get_mut(3);
        map.retain(|r| r.name() != "b");
        assert_eq!(drained(&mut map), ["d"], "d moved from position 3 to 2");

        let mut other = map_of(&["x", "y"]);
        drained(&mut other);
        other.get_mut(1);
        map.append_all(other).unwrap();
        assert_eq!(drained(&mut map), ["y"], "what the merged map had touched, at its new position");

        let mut with_history = config_map("h");
        with_history.provenance = Some(Box::default());
        map.append(with_history).unwrap();
        map.append(config_map("n")).unwrap();
        assert_eq!(drained(&mut map), ["n"], "a resource with its history comes in untouched");
    }

    fn of_kind(kind: &str, name: &str) -> Resource {
        Resource::new(json!({"apiVersion": "v1", "kind": kind, "metadata": {"name": name}}))
    }

    /// The names and kinds of a map's resources, in order.
    fn ids(map: &ResMap) -> Vec<String> {
        map.iter().map(|r| format!("{}/{}", r.kind(), r.name())).collect()
    }

    /// A settled map whose names the other map does not hold joins it by its index: every
    /// name is found at its new position, and later appends still see its ids.
    #[test]
    fn a_settled_map_joins_by_its_index() {
        let mut map = map_of(&["a", "b"]);
        let mut other = ResMap::new();
        for (kind, name) in [("Service", "web"), ("ConfigMap", "web"), ("ConfigMap", "c")] {
            other.append(of_kind(kind, name)).unwrap();
        }
        other.settle();
        assert!(other.index.get_mut().settled(), "a name shared by two kinds is still distinct ids");
        map.append_all(other).unwrap();
        assert_eq!(ids(&map), ["ConfigMap/a", "ConfigMap/b", "Service/web", "ConfigMap/web", "ConfigMap/c"]);
        assert_eq!(map.positions_named("web"), [2, 3]);
        assert_eq!(map.positions_named("c"), [4]);
        assert_eq!(map.positions_named("a"), [0]);
        let err = map.append(of_kind("Service", "web")).unwrap_err();
        assert_eq!(err.to_string(), "may not add resource with an already registered id: Service.v1.[noGrp]/web.[noNs]");
    }

    /// What a settled map is refused for, it is refused for as when appended resource by
    /// resource: an id the map already holds, or two of its own resources that came to share
    /// one after they were added.
    #[test]
    fn a_settled_map_is_refused_as_any_other() {
        let mut map = map_of(&["a"]);
        let mut other = map_of(&["b", "a"]);
        other.settle();
        let err = map.append_all(other).unwrap_err();
        assert_eq!(err.to_string(), "may not add resource with an already registered id: ConfigMap.v1.[noGrp]/a.[noNs]");

        let mut map = map_of(&["a"]);
        let mut other = map_of(&["x", "y"]);
        for r in other.iter_mut() {
            r.set_name("same");
        }
        other.settle();
        assert!(!other.index.get_mut().settled(), "two resources with one id");
        let err = map.append_all(other).unwrap_err();
        assert_eq!(err.to_string(), "may not add resource with an already registered id: ConfigMap.v1.[noGrp]/same.[noNs]");
    }

    /// In a map large enough to be looked at in parallel, the index is rebuilt after a pass
    /// and the repeated id found is the first in order, as one resource after another finds it.
    #[test]
    fn a_large_map_finds_the_first_repeated_id_in_order() {
        let names: Vec<String> = (0..300).map(|i| format!("r{i:03}")).collect();
        let mut map = map_of(&names.iter().map(String::as_str).collect::<Vec<_>>());
        assert!(map.is_large());
        assert_eq!(map.first_repeated_id(), None);
        // After a pass (the index rebuilt whole): 250 takes 40's name, then 120 takes 290's.
        for (at, name) in [(250, "r040"), (120, "r290")] {
            let _ = map.try_update_parallel(|r| {
                let hit = r.name() == names[at];
                if hit {
                    r.set_name(name);
                }
                Ok::<bool, ()>(hit)
            });
        }
        assert_eq!(map.positions_named("r040"), [40, 250]);
        assert_eq!(map.positions_named("r290"), [120, 290]);
        assert_eq!(map.positions_named("r250"), [250], "a previous name is indexed too");
        assert_eq!(map.positions_named("r041"), [41]);
        let first = map.first_repeated_id().map(|id| id.to_string());
        let one_by_one = (0..map.len()).find(|&j| (0..j).any(|i| map.get(i).name() == map.get(j).name())).map(|j| map.get(j).current_id().to_string());
        assert_eq!(first, one_by_one);
        assert_eq!(first.as_deref(), Some("ConfigMap.v1.[noGrp]/r040.[noNs]"), "250 repeats 40, before 290 repeats 120");
    }

    /// Asked on every thread, `retain_parallel` keeps what `retain` keeps, in order, with the
    /// touched positions and the index following the resources.
    #[test]
    fn retaining_in_parallel_keeps_what_retaining_keeps() {
        let names: Vec<String> = (0..300).map(|i| format!("r{i:03}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let drop = |r: &Resource| !r.name().ends_with('7');
        let (mut one_by_one, mut parallel) = (map_of(&names), map_of(&names));
        for map in [&mut one_by_one, &mut parallel] {
            drained(map);
            map.get_mut(298);
        }
        one_by_one.retain(drop);
        parallel.retain_parallel(drop);
        assert_eq!(ids(&parallel), ids(&one_by_one));
        assert_eq!(parallel.len(), 270);
        assert_eq!(drained(&mut parallel), ["r298"], "the touched resource followed to its new position");
        assert_eq!(parallel.positions_named("r298"), [268]);
        assert!(parallel.positions_named("r297").is_empty());
    }

    /// A change after `settle` is seen: the map is then appended resource by resource.
    #[test]
    fn a_change_after_settle_is_not_missed() {
        let mut other = map_of(&["x", "y"]);
        other.settle();
        other.get_mut(1).set_name("x");
        assert!(!other.index.get_mut().settled());
        let mut map = map_of(&["a"]);
        let err = map.append_all(other).unwrap_err();
        assert_eq!(err.to_string(), "may not add resource with an already registered id: ConfigMap.v1.[noGrp]/x.[noNs]");
    }
}
