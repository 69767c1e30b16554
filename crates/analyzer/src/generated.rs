//! Test support: generated files (docs, schema) must match what the code generates.

/// Asserts that the file at `relative` (from the repository root) equals `fresh`; rewrites it
/// first when `RIME_UPDATE_DOCS` is set.
pub(crate) fn assert_fresh(relative: &str, fresh: &str) {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .join(relative);
    if std::env::var_os("RIME_UPDATE_DOCS").is_some() {
        std::fs::write(&path, fresh).expect("write generated file");
    }
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        on_disk == fresh,
        "{relative} is stale: run `RIME_UPDATE_DOCS=1 cargo test -p rime-analyzer`"
    );
}
