//! Arbitrary bytes through the JSON loaders (rime's format, cuDNN's, and the format detection
//! every command uses), then validation,
//! analysis on every target, heuristics, approval and rendering: nothing may panic, and a
//! graph that loads saves to text that loads back equal (canonical save is a fixed point).

#![no_main]

use libfuzzer_sys::fuzz_target;
use rime_graph::json;

#[path = "../../tests/support/exercise.rs"]
mod exercise;

fuzz_target!(|data: &[u8]| {
    // Non-UTF-8 input is the file loader's first rejection; the rest of the bytes still
    // make text worth parsing.
    let text = String::from_utf8_lossy(data);
    if let Ok(graph) = json::cudnn::from_str(&text, "fuzz.cudnn.json") {
        exercise::exercise(&graph);
    }
    // The path every command takes: format detection, then the reader it picks (or a forced
    // format); errors render with their place, and a detected graph validates with a describer.
    for forced in [None, Some(json::Format::Rime), Some(json::Format::Cudnn)] {
        match json::from_str_any(&text, "fuzz.any.json", forced) {
            Ok(loaded) => {
                if let Err(errors) = loaded.graph.validate() {
                    let describer = loaded.describer(&text, "fuzz.any.json");
                    for e in &errors.0 {
                        let _ = describer.describe(e);
                    }
                }
            }
            Err(e) => assert!(e.to_string().starts_with("fuzz.any.json"), "{e}"),
        }
    }
    let graph = match json::from_str(&text, "fuzz.json") {
        Ok(graph) => graph,
        Err(e) => {
            // Every load error renders with its place.
            assert!(e.to_string().starts_with("fuzz.json"), "{e}");
            return;
        }
    };
    let saved = json::to_string(&graph);
    let again = json::from_str(&saved, "saved.json").expect("a loaded graph's save loads");
    assert_eq!(again, graph, "load(save(g)) == g");
    assert_eq!(json::to_string(&again), saved, "save is a fixed point");
    if let Err(errors) = graph.validate() {
        let describer = json::Describer::new(&text, "fuzz.json", &graph);
        for e in &errors.0 {
            let _ = describer.describe(e);
        }
    }
    exercise::exercise(&graph);
});
