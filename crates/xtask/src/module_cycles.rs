//! Import loops between a crate's modules. A crate that `docs/architecture.md` lists under
//! "Modules import one way" must have none: its top-level modules (a file `src/x.rs` or a
//! folder `src/x/`) form a graph by their `crate::x` references, and a strongly connected
//! part of two or more modules is a loop, reported with its members.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The crates the document lists on its `Modules import one way in: \`a\`, \`b\`.` line.
pub fn one_way_crates(document: &str) -> BTreeSet<String> {
    let marker = "Modules import one way in:";
    document
        .lines()
        .filter_map(|line| line.split_once(marker).map(|(_, rest)| rest))
        .flat_map(|rest| rest.split('`').skip(1).step_by(2).map(str::to_owned))
        .collect()
}

/// The modules `text` refers to as `crate::name` (also inside `use crate::{a, b::c}`),
/// outside line comments.
pub fn references(text: &str) -> BTreeSet<String> {
    let mut found = BTreeSet::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or_default();
        let mut rest = code;
        while let Some(at) = rest.find("crate::") {
            let before = rest[..at].chars().next_back();
            rest = &rest[at + "crate::".len()..];
            if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
                continue; // `my_crate::x`, not ours
            }
            if let Some(group) = rest.strip_prefix('{') {
                let group = group.split('}').next().unwrap_or_default();
                found.extend(group.split(',').filter_map(|item| ident(item.trim())));
            } else if let Some(name) = ident(rest) {
                found.insert(name);
            }
        }
    }
    found
}

fn ident(text: &str) -> Option<String> {
    let name: String = text
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect();
    (!name.is_empty() && name != "self").then_some(name)
}

/// The graph of a crate's top-level modules under `src`: module → the modules it refers to.
pub fn graph(src: &Path) -> Result<BTreeMap<String, BTreeSet<String>>, String> {
    let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut files = Vec::new();
    collect(src, &mut files)?;
    for file in files {
        let relative = file.strip_prefix(src).unwrap_or(&file);
        let Some(first) = relative.components().next() else {
            continue;
        };
        let top = first.as_os_str().to_string_lossy();
        let top = top.strip_suffix(".rs").unwrap_or(&top).to_owned();
        if top == "lib" || top == "main" || top == "bin" {
            continue;
        }
        let text = std::fs::read_to_string(&file)
            .map_err(|e| format!("reading {}: {e}", file.display()))?;
        let mut refers = references(&text);
        refers.remove(&top);
        graph.entry(top).or_default().extend(refers);
    }
    Ok(graph)
}

fn collect(dir: &Path, files: &mut Vec<std::path::PathBuf>) -> Result<(), String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("listing {}: {e}", dir.display()))?;
    for entry in entries {
        let path = entry
            .map_err(|e| format!("listing {}: {e}", dir.display()))?
            .path();
        if path.is_dir() {
            collect(&path, files)?;
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    Ok(())
}

/// The loops of `graph`: each strongly connected part of two or more modules, sorted.
pub fn cycles(graph: &BTreeMap<String, BTreeSet<String>>) -> Vec<Vec<String>> {
    // Kosaraju: finish order on the graph, then parts on the reversed graph.
    let mut order = Vec::new();
    let mut seen = BTreeSet::new();
    for start in graph.keys() {
        finish(graph, start, &mut seen, &mut order);
    }
    let mut reversed: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (from, targets) in graph {
        for to in targets.iter().filter(|t| graph.contains_key(*t)) {
            reversed.entry(to).or_default().push(from);
        }
    }
    let mut assigned = BTreeSet::new();
    let mut parts = Vec::new();
    for start in order.iter().rev() {
        if assigned.contains(start.as_str()) {
            continue;
        }
        let mut part = Vec::new();
        let mut stack = vec![start.as_str()];
        assigned.insert(start.clone());
        while let Some(node) = stack.pop() {
            part.push(node.to_owned());
            for next in reversed.get(node).into_iter().flatten() {
                if assigned.insert((*next).to_owned()) {
                    stack.push(next);
                }
            }
        }
        if part.len() > 1 {
            part.sort();
            parts.push(part);
        }
    }
    parts.sort();
    parts
}

fn finish(
    graph: &BTreeMap<String, BTreeSet<String>>,
    start: &str,
    seen: &mut BTreeSet<String>,
    order: &mut Vec<String>,
) {
    if !seen.insert(start.to_owned()) {
        return;
    }
    // Iterative depth-first search: (node, its targets not yet visited).
    let mut stack: Vec<(String, Vec<String>)> = vec![(start.to_owned(), targets(graph, start))];
    while let Some((node, pending)) = stack.last_mut() {
        match pending.pop() {
            Some(next) => {
                if seen.insert(next.clone()) {
                    let more = targets(graph, &next);
                    stack.push((next, more));
                }
            }
            None => {
                order.push(node.clone());
                stack.pop();
            }
        }
    }
}

fn targets(graph: &BTreeMap<String, BTreeSet<String>>, node: &str) -> Vec<String> {
    graph
        .get(node)
        .map(|t| {
            t.iter()
                .filter(|n| graph.contains_key(*n))
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(edges: &[(&str, &[&str])]) -> BTreeMap<String, BTreeSet<String>> {
        edges
            .iter()
            .map(|(from, to)| {
                (
                    (*from).to_owned(),
                    to.iter().map(|t| (*t).to_owned()).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn a_loop_is_found_with_its_members_and_a_chain_is_not() {
        let chain = g(&[("a", &["b"]), ("b", &["c"]), ("c", &[])]);
        assert!(cycles(&chain).is_empty());
        let looped = g(&[
            ("a", &["b"]),
            ("b", &["c"]),
            ("c", &["a", "d"]),
            ("d", &[]),
            ("e", &["f"]),
            ("f", &["e"]),
        ]);
        assert_eq!(cycles(&looped), [vec!["a", "b", "c"], vec!["e", "f"]]);
    }

    #[test]
    fn references_are_read_from_paths_and_groups_but_not_comments_or_other_crates() {
        let text = "use crate::shared::Shared;\nuse crate::{event_bus::Sink, tools, self};\n\
                    let x = crate::protected::sweep(); // crate::commented\n\
                    use other_crate::nope;\n";
        let found: Vec<String> = references(text).into_iter().collect();
        assert_eq!(found, ["event_bus", "protected", "shared", "tools"]);
    }

    #[test]
    fn the_document_names_the_one_way_crates() {
        let document = "text\nModules import one way in: `agent`, `protocol`.\nmore `x`\n";
        let names: Vec<String> = one_way_crates(document).into_iter().collect();
        assert_eq!(names, ["agent", "protocol"]);
    }

    #[test]
    fn a_crate_s_files_make_its_module_graph() {
        let dir = std::env::temp_dir().join(format!("xtask-cycles-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("tools")).unwrap();
        std::fs::write(dir.join("lib.rs"), "mod a; mod tools; use crate::a::X;").unwrap();
        std::fs::write(dir.join("a.rs"), "use crate::tools::T;").unwrap();
        std::fs::write(dir.join("tools").join("mod.rs"), "mod inner;").unwrap();
        std::fs::write(dir.join("tools").join("inner.rs"), "use crate::a::X;").unwrap();
        let graph = graph(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(graph, g(&[("a", &["tools"]), ("tools", &["a"])]));
        assert_eq!(cycles(&graph), [vec!["a", "tools"]]);
    }
}
