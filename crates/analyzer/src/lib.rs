//! rime-analyzer: which engine configurations can run a graph on a target, and why not.
