//! Deterministic text renderings of support reports and heuristics rankings (used by the CLI
//! and by snapshot tests).

use std::fmt::Write as _;

use rime_graph::{Graph, Node, Port};

use crate::heuristics::Candidate;
use crate::report::{ConfigReport, NodeReport};
use crate::workspace::human_bytes;
use crate::{EngineKind, Rejection, SupportReport};

/// The report as an aligned text table per node, followed by every reason and workspace layout.
pub fn render_report(report: &SupportReport) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "target: {}", report.target());
    let engines: Vec<&str> = report
        .supported_engines()
        .iter()
        .map(|e| e.name())
        .collect();
    let _ = writeln!(
        out,
        "graph: {} node(s); supported by: {}",
        report.nodes.len(),
        if engines.is_empty() {
            "none".to_owned()
        } else {
            engines.join(", ")
        }
    );
    if !report.graph_rejections.is_empty() {
        let _ = writeln!(out, "graph rejections (block every engine):");
        rejections(&mut out, "  ", &report.graph_rejections);
    }
    for node in &report.nodes {
        render_node(&mut out, report.graph(), node);
    }
    out
}

fn render_node(out: &mut String, graph: &Graph, node: &NodeReport) {
    let _ = write!(
        out,
        "\nnode `{}` ({})",
        rime_graph::shown(&node.name),
        node.op
    );
    if let Some(s) = node.shape {
        let _ = write!(
            out,
            " B={} Hq={} Hk={} Hv={} Sq={} Skv={} Dqk={} Dv={}",
            s.b, s.hq, s.hk, s.hv, s.sq, s.skv, s.dqk, s.dv
        );
    }
    out.push('\n');
    if let Some(n) = graph.node(node.node) {
        let _ = writeln!(out, "  features: {}", features(graph, n));
    }
    if !node.rejections.is_empty() {
        let _ = writeln!(out, "  any engine (blocks every configuration):");
        rejections(out, "    ", &node.rejections);
    }
    if node.configs.is_empty() {
        return;
    }
    let rows: Vec<[String; 6]> = node.configs.iter().map(row).collect();
    let header = [
        "engine",
        "route",
        "kernel",
        "verdict",
        "workspace",
        "reasons",
    ]
    .map(String::from);
    let mut widths = header.clone().map(|h| h.len());
    for r in &rows {
        for (w, cell) in widths.iter_mut().zip(r) {
            *w = (*w).max(cell.len());
        }
    }
    for r in std::iter::once(&header).chain(&rows) {
        let line: Vec<String> = r
            .iter()
            .zip(widths)
            .map(|(cell, w)| format!("{cell:<w$}"))
            .collect();
        let _ = writeln!(out, "  {}", line.join("  ").trim_end());
    }
    for engine in EngineKind::ALL {
        let configs: Vec<&ConfigReport> =
            node.configs.iter().filter(|c| c.engine == engine).collect();
        // Rejections every route of the engine shares are printed once.
        let shared: Vec<Rejection> = match configs.split_first() {
            Some((first, rest)) if !rest.is_empty() => first
                .rejections
                .iter()
                .filter(|r| rest.iter().all(|c| c.rejections.contains(r)))
                .cloned()
                .collect(),
            _ => Vec::new(),
        };
        if !shared.is_empty() {
            let _ = writeln!(out, "  {engine} (every route):");
            rejections(out, "    ", &shared);
        }
        for c in configs {
            let own: Vec<Rejection> = c
                .rejections
                .iter()
                .filter(|r| !shared.contains(r))
                .cloned()
                .collect();
            if !own.is_empty() {
                let _ = writeln!(out, "  {}:", c.label());
                rejections(out, "    ", &own);
            }
        }
    }
    for c in node.configs.iter() {
        let Some(w) = c.workspace.as_ref().filter(|w| !w.regions().is_empty()) else {
            continue;
        };
        let regions: Vec<String> = w
            .regions()
            .iter()
            .map(|r| format!("{}@{}+{}", r.kind, r.offset, r.bytes))
            .collect();
        let _ = writeln!(
            out,
            "  workspace {}: {} B = {}",
            c.label(),
            w.total_bytes(),
            regions.join(", ")
        );
    }
}

fn row(c: &ConfigReport) -> [String; 6] {
    let codes: Vec<&str> = c.rejections.iter().map(|r| r.code.code()).collect();
    [
        c.engine.name().to_owned(),
        c.route.map_or("-".to_owned(), |r| r.name().to_owned()),
        c.kernel.map_or("-".to_owned(), |k| k.name.to_owned()),
        c.verdict.name().to_owned(),
        c.workspace
            .as_ref()
            .map_or("-".to_owned(), |w| human_bytes(w.total_bytes())),
        if codes.is_empty() {
            "-".to_owned()
        } else {
            codes.join(",")
        },
    ]
}

fn rejections(out: &mut String, indent: &str, list: &[Rejection]) {
    for r in list {
        let _ = writeln!(out, "{indent}{r}");
        let _ = writeln!(out, "{indent}  hint: {}", r.hint);
    }
}

/// The node's options and optional ports, in a fixed order.
fn features(graph: &Graph, n: &Node) -> String {
    let o = &n.options;
    let mut f = Vec::new();
    if o.deterministic {
        f.push("deterministic".to_owned());
    }
    match (o.left_bound, o.right_bound) {
        (None, Some(0)) => f.push(format!("causal {}", o.diagonal_alignment.name())),
        (None, None) => {}
        (l, r) => f.push(format!(
            "band left={} right={} {}",
            l.map_or("-".into(), |v| v.to_string()),
            r.map_or("-".into(), |v| v.to_string()),
            o.diagonal_alignment.name()
        )),
    }
    if o.padding_mask {
        f.push("padding".into());
    }
    if o.alibi_mask {
        f.push("alibi".into());
    }
    if let Some(p) = o.dropout_probability {
        f.push(format!("dropout p={p}"));
    }
    if let Some(s) = o.attn_scale {
        f.push(format!("scale={s}"));
    }
    for port in [
        Port::Bias,
        Port::DBias,
        Port::Sink,
        Port::DSink,
        Port::DropoutMask,
        Port::RngDump,
    ] {
        if let Some(t) = n.port(port).and_then(|id| graph.get(id)) {
            f.push(format!("{port}{:?}", t.dims));
        }
    }
    if f.is_empty() {
        "none".into()
    } else {
        f.join(", ")
    }
}

/// The ranking as text: one line per candidate with its explanation.
pub fn render_candidates(report: &SupportReport, candidates: &[Candidate]) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "target: {}", report.target());
    for node in &report.nodes {
        let _ = writeln!(
            out,
            "node `{}` ({}):",
            rime_graph::shown(&node.name),
            node.op
        );
        let mine: Vec<&Candidate> = candidates.iter().filter(|c| c.node == node.node).collect();
        if mine.is_empty() && node.supported().next().is_some() {
            let _ = writeln!(
                out,
                "  no configuration left: the pin or deselection removed every supported one \
                 (see `rime check`)"
            );
        } else if mine.is_empty() {
            let _ = writeln!(out, "  no supported configuration (see `rime check`)");
        }
        for c in mine {
            let kernel = c
                .config
                .kernel
                .map_or(String::new(), |k| format!(" [{}]", k.name));
            let _ = writeln!(
                out,
                "  {}. {}{}: {}",
                c.rank,
                c.config.label(),
                kernel,
                c.explanation
            );
        }
    }
    out
}
