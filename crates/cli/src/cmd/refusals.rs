//! Why an engine (or every engine) does not run a graph: the rejections of each node it does
//! not support, as one line each, for the messages of `check --require-engine` and of `run`.

use rime_analyzer::{EngineKind, SupportReport};

/// For every node that `engine` (`None`: any engine) does not support, the rejections that
/// stand in the way: the graph's, the node's, and those of the engine's configurations of it
/// (every engine's for `None`), each once, as `node `NAME`: CODE subject: message`.
pub fn refusals(report: &SupportReport, engine: Option<EngineKind>) -> Vec<String> {
    let mut lines: Vec<String> = report
        .graph_rejections
        .iter()
        .map(|r| format!("graph: {r}"))
        .collect();
    let ours = |e: EngineKind| engine.is_none_or(|want| want == e);
    for node in &report.nodes {
        if node.supported().any(|c| ours(c.engine)) {
            continue;
        }
        let name = rime_graph::shown(&node.name);
        let configs: Vec<_> = node.configs.iter().filter(|c| ours(c.engine)).collect();
        if configs.is_empty() {
            lines.push(format!(
                "node `{name}`: the engine has no configuration for it"
            ));
        }
        for r in node
            .rejections
            .iter()
            .chain(configs.iter().flat_map(|c| &c.rejections))
        {
            let line = format!("node `{name}`: {r}");
            if !lines.contains(&line) {
                lines.push(line);
            }
        }
    }
    lines
}
