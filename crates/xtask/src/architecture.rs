//! `cargo xtask check-deps`: keeps `docs/architecture.md` exactly true. It reads the layer
//! table and the crate-edge list from the document and the real crate graph from
//! `cargo metadata`, and fails naming every disagreement:
//!
//! * every workspace crate has a row in the layer table, and every row is a crate;
//! * a crate depends (normal and build dependencies) only on crates of lower layers, never on
//!   a `dev` crate; dev-dependencies stay at or below the crate's own layer, or are `dev`;
//! * the document's edge list is exactly the graph's normal dependencies;
//! * the crates it lists as "Modules import one way in" have no import loop between their
//!   modules (`module_cycles`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;

use crate::json::{self, Json};

/// A crate's layer: a number (lower is more basic) or `dev` (tests and tasks only).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layer {
    Number(u32),
    Dev,
}

/// One dependency edge of the real graph.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Edge {
    pub from: String,
    pub to: String,
    /// `normal`, `build` or `dev`.
    pub kind: String,
}

/// The layer table's rows: `| 3 adapters | \`crate\` | … |`.
pub fn layers(document: &str) -> Result<BTreeMap<String, Layer>, String> {
    let mut layers = BTreeMap::new();
    for line in document.lines().filter(|l| l.starts_with('|')) {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let (Some(layer), Some(name)) = (cells.get(1), cells.get(2)) else {
            continue;
        };
        let Some(name) = name.strip_prefix('`').and_then(|n| n.strip_suffix('`')) else {
            continue;
        };
        let layer = if *layer == "dev" {
            Layer::Dev
        } else {
            let number = layer.split_whitespace().next().unwrap_or_default();
            Layer::Number(
                number
                    .parse()
                    .map_err(|_| format!("layer table: `{layer}` (crate {name}) is not a layer"))?,
            )
        };
        if layers.insert(name.to_owned(), layer).is_some() {
            return Err(format!("layer table: `{name}` has two rows"));
        }
    }
    Ok(layers)
}

/// The document's edge list: `- \`from\` → \`a\`, \`b\`` (or `→ (none)`) under
/// `## Crate edges`.
pub fn documented_edges(document: &str) -> BTreeSet<(String, String)> {
    let mut edges = BTreeSet::new();
    let mut inside = false;
    for line in document.lines() {
        if line.starts_with("## ") {
            inside = line.trim() == "## Crate edges";
            continue;
        }
        let Some(rest) = line.strip_prefix("- `").filter(|_| inside) else {
            continue;
        };
        let Some((from, targets)) = rest.split_once("` → ") else {
            continue;
        };
        for target in targets.split(',') {
            if let Some(to) = target
                .trim()
                .strip_prefix('`')
                .and_then(|t| t.strip_suffix('`'))
            {
                edges.insert((from.to_owned(), to.to_owned()));
            }
        }
    }
    edges
}

/// The workspace's crates and their edges among themselves, from `cargo metadata`.
pub fn graph(metadata: &Json) -> (BTreeSet<String>, Vec<Edge>) {
    let packages = metadata.get("packages").map_or(&[][..], Json::as_list);
    let names: BTreeSet<String> = packages
        .iter()
        .filter_map(|p| p.get("name").and_then(Json::as_str))
        .map(str::to_owned)
        .collect();
    let mut edges = Vec::new();
    for package in packages {
        let Some(from) = package.get("name").and_then(Json::as_str) else {
            continue;
        };
        for dependency in package.get("dependencies").map_or(&[][..], Json::as_list) {
            let Some(to) = dependency.get("name").and_then(Json::as_str) else {
                continue;
            };
            if !names.contains(to) {
                continue;
            }
            let kind = dependency
                .get("kind")
                .and_then(Json::as_str)
                .unwrap_or("normal");
            edges.push(Edge {
                from: from.to_owned(),
                to: to.to_owned(),
                kind: kind.to_owned(),
            });
        }
    }
    edges.sort();
    edges.dedup();
    (names, edges)
}

/// Every disagreement between the document and the graph.
pub fn problems(document: &str, metadata: &Json) -> Result<Vec<String>, String> {
    let layers = layers(document)?;
    let (names, edges) = graph(metadata);
    let mut problems = Vec::new();
    for name in &names {
        if !layers.contains_key(name) {
            problems.push(format!("crate `{name}` has no row in the layer table"));
        }
    }
    for name in layers.keys() {
        if !names.contains(name) {
            problems.push(format!(
                "the layer table names `{name}`, which is not a crate"
            ));
        }
    }
    for edge in &edges {
        let (Some(from), Some(to)) = (layers.get(&edge.from), layers.get(&edge.to)) else {
            continue;
        };
        let allowed = match (edge.kind.as_str(), from, to) {
            ("dev", _, Layer::Dev) => true,
            ("dev", Layer::Number(a), Layer::Number(b)) => b <= a,
            ("dev", Layer::Dev, Layer::Number(_)) => true,
            (_, _, Layer::Dev) => false,
            (_, Layer::Dev, Layer::Number(_)) => true,
            (_, Layer::Number(a), Layer::Number(b)) => b < a,
        };
        if !allowed {
            problems.push(format!(
                "`{}` ({}) depends on `{}` ({}) as a {} dependency, which the layer table does \
                 not allow",
                edge.from,
                describe(*from),
                edge.to,
                describe(*to),
                edge.kind
            ));
        }
    }
    let real: BTreeSet<(String, String)> = edges
        .iter()
        .filter(|e| e.kind != "dev")
        .map(|e| (e.from.clone(), e.to.clone()))
        .collect();
    let documented = documented_edges(document);
    for (from, to) in real.difference(&documented) {
        problems.push(format!(
            "`{from}` → `{to}` exists but is missing from the document's crate edges"
        ));
    }
    for (from, to) in documented.difference(&real) {
        problems.push(format!(
            "the document lists `{from}` → `{to}`, which is not a dependency"
        ));
    }
    Ok(problems)
}

/// The import loops inside the crates the document lists as importing one way.
fn module_loops(document: &str, metadata: &Json) -> Result<Vec<String>, String> {
    let packages = metadata.get("packages").map_or(&[][..], Json::as_list);
    let mut problems = Vec::new();
    for name in crate::module_cycles::one_way_crates(document) {
        let manifest = packages
            .iter()
            .find(|p| p.get("name").and_then(Json::as_str) == Some(name.as_str()))
            .and_then(|p| p.get("manifest_path").and_then(Json::as_str))
            .ok_or_else(|| {
                format!("the document lists `{name}` as importing one way, which is not a crate")
            })?;
        let src = Path::new(manifest)
            .parent()
            .unwrap_or(Path::new("."))
            .join("src");
        let graph = crate::module_cycles::graph(&src)?;
        for part in crate::module_cycles::cycles(&graph) {
            problems.push(format!(
                "`{name}`: the modules {} import each other (a loop)",
                part.join(", ")
            ));
        }
    }
    Ok(problems)
}

fn describe(layer: Layer) -> String {
    match layer {
        Layer::Number(n) => format!("layer {n}"),
        Layer::Dev => "dev".to_owned(),
    }
}

/// Runs the check on the workspace at `root`.
pub fn check(root: &Path) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(root)
        .output()
        .map_err(|e| format!("running cargo metadata: {e}"))?;
    if !output.status.success() {
        return Err(format!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr)
        ));
    }
    let metadata = json::parse(&String::from_utf8_lossy(&output.stdout))
        .map_err(|e| format!("reading cargo metadata: {e}"))?;
    let path = root.join("docs").join("architecture.md");
    let document =
        std::fs::read_to_string(&path).map_err(|e| format!("reading {}: {e}", path.display()))?;
    let mut problems = problems(&document, &metadata)?;
    problems.extend(module_loops(&document, &metadata)?);
    if problems.is_empty() {
        println!("docs/architecture.md matches the crate graph");
        Ok(())
    } else {
        Err(format!(
            "docs/architecture.md disagrees with the crate graph:\n  {}",
            problems.join("\n  ")
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DOCUMENT: &str = "\
| Layer | Crate | Responsibility |
|---|---|---|
| 0 contracts | `protocol` | wire |
| 3 adapters | `audit-store` | trail |
| 4 orchestration | `agent` | loop |
| dev | `test-support` | doubles |

## Crate edges

- `audit-store` → `protocol`
- `agent` → `protocol`
- `test-support` → `protocol`
- `protocol` → (none)

## Elsewhere

- `agent` → `audit-store`
";

    fn metadata(edges: &[(&str, &str, Option<&str>)]) -> Json {
        let packages: Vec<String> = ["protocol", "audit-store", "agent", "test-support"]
            .iter()
            .map(|name| {
                let deps: Vec<String> = edges
                    .iter()
                    .filter(|(from, _, _)| from == name)
                    .map(|(_, to, kind)| {
                        let kind = kind.map_or("null".to_owned(), |k| format!("\"{k}\""));
                        format!("{{\"name\": \"{to}\", \"kind\": {kind}}}")
                    })
                    .collect();
                format!(
                    "{{\"name\": \"{name}\", \"dependencies\": [{}]}}",
                    deps.join(", ")
                )
            })
            .collect();
        json::parse(&format!("{{\"packages\": [{}]}}", packages.join(", "))).unwrap()
    }

    #[test]
    fn a_graph_that_matches_passes() {
        let graph = metadata(&[
            ("audit-store", "protocol", None),
            ("agent", "protocol", None),
            ("agent", "test-support", Some("dev")),
            ("test-support", "protocol", None),
        ]);
        assert_eq!(problems(DOCUMENT, &graph).unwrap(), Vec::<String>::new());
    }

    #[test]
    fn an_upward_or_sideways_edge_fails_naming_it() {
        let graph = metadata(&[
            ("audit-store", "protocol", None),
            ("agent", "protocol", None),
            ("test-support", "protocol", None),
            ("audit-store", "agent", None),
            ("protocol", "test-support", None),
        ]);
        let found = problems(DOCUMENT, &graph).unwrap();
        assert!(
            found.iter().any(|p| p.starts_with(
                "`audit-store` (layer 3) depends on `agent` (layer 4) as a normal dependency"
            )),
            "{found:#?}"
        );
        assert!(
            found
                .iter()
                .any(|p| p.starts_with("`protocol` (layer 0) depends on `test-support` (dev)")),
            "{found:#?}"
        );
        assert!(
            found.iter().any(|p| p
                == "`audit-store` → `agent` exists but is missing from the document's crate edges"),
            "{found:#?}"
        );
    }

    #[test]
    fn a_documented_edge_that_does_not_exist_and_a_missing_row_fail() {
        let graph = metadata(&[("audit-store", "protocol", None)]);
        let found = problems(DOCUMENT, &graph).unwrap();
        assert!(
            found
                .iter()
                .any(|p| p == "the document lists `agent` → `protocol`, which is not a dependency"),
            "{found:#?}"
        );
        let without_row = DOCUMENT.replace("| 4 orchestration | `agent` | loop |\n", "");
        let found = problems(&without_row, &graph).unwrap();
        assert!(
            found
                .iter()
                .any(|p| p == "crate `agent` has no row in the layer table"),
            "{found:#?}"
        );
    }
}
