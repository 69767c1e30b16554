//! A bounded map from call keys to built plans: the least recently used entry goes when it is
//! full. A training loop calls with the same shapes again and again, so it pays analysis and
//! compilation once per distinct call.

use std::collections::HashMap;
use std::hash::Hash;
use std::sync::Arc;

/// Counters of a cache, for `rime.plan_cache_info()`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheInfo {
    /// Entries held.
    pub entries: usize,
    /// Most entries held.
    pub capacity: usize,
    /// Lookups that found their plan.
    pub hits: u64,
    /// Lookups that did not (each builds a plan).
    pub misses: u64,
}

/// Least-recently-used cache of `V` by `K`.
#[derive(Debug)]
pub struct PlanCache<K, V> {
    entries: HashMap<K, (Arc<V>, u64)>,
    clock: u64,
    capacity: usize,
    hits: u64,
    misses: u64,
}

impl<K: Hash + Eq, V> PlanCache<K, V> {
    /// An empty cache of at most `capacity` (at least 1) entries.
    pub fn new(capacity: usize) -> Self {
        PlanCache {
            entries: HashMap::new(),
            clock: 0,
            capacity: capacity.max(1),
            hits: 0,
            misses: 0,
        }
    }

    /// The value of `key`, counted as a hit or a miss.
    pub fn get(&mut self, key: &K) -> Option<Arc<V>> {
        self.clock += 1;
        match self.entries.get_mut(key) {
            Some((value, used)) => {
                *used = self.clock;
                self.hits += 1;
                Some(Arc::clone(value))
            }
            None => {
                self.misses += 1;
                None
            }
        }
    }

    /// Stores `value` under `key` (evicting the least recently used entry when full) and
    /// returns the value now held for `key`.
    pub fn insert(&mut self, key: K, value: Arc<V>) -> Arc<V> {
        self.clock += 1;
        if !self.entries.contains_key(&key) {
            self.evict_to(self.capacity - 1);
        }
        let entry = self.entries.entry(key).or_insert((value, 0));
        entry.1 = self.clock;
        Arc::clone(&entry.0)
    }

    /// Drops every entry and resets the counters.
    pub fn clear(&mut self) {
        self.entries.clear();
        self.hits = 0;
        self.misses = 0;
    }

    /// Sets the capacity (at least 1), dropping least recently used entries beyond it.
    pub fn set_capacity(&mut self, capacity: usize) {
        self.capacity = capacity.max(1);
        self.evict_to(self.capacity);
    }

    /// Drops least recently used entries until at most `limit` are left (each entry's last
    /// use is a distinct tick of the clock).
    fn evict_to(&mut self, limit: usize) {
        while self.entries.len() > limit {
            let Some(oldest) = self.entries.values().map(|(_, used)| *used).min() else {
                break;
            };
            self.entries.retain(|_, (_, used)| *used != oldest);
        }
    }

    /// The counters.
    pub fn info(&self) -> CacheInfo {
        CacheInfo {
            entries: self.entries.len(),
            capacity: self.capacity,
            hits: self.hits,
            misses: self.misses,
        }
    }
}
