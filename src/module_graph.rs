//! A test of the house's shape: no two top-level modules depend on each other, directly or
//! through others. A cycle means two modules are one concern split badly, and whichever
//! changes drags the other along.

#[cfg(test)]
mod tests {
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::Path;

    /// The top-level module a source file belongs to (`src/orders/write.rs` is `orders`).
    fn module_of(path: &Path, src: &Path) -> Option<String> {
        let relative = path.strip_prefix(src).ok()?;
        let first = relative.components().next()?.as_os_str().to_str()?;
        let name = first.strip_suffix(".rs").unwrap_or(first);
        (!matches!(name, "lib" | "main")).then(|| name.to_string())
    }

    /// The top-level modules a text names through `crate::`.
    fn references(text: &str) -> BTreeSet<String> {
        let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
        let mut found = BTreeSet::new();
        for (at, _) in text.match_indices("crate::") {
            let rest = &text[at + "crate::".len()..];
            if let Some(list) = rest.strip_prefix('{') {
                let list = list.split('}').next().unwrap_or_default();
                found.extend(list.split(',').map(|item| ident(item.trim())).filter(|s| !s.is_empty()));
            } else {
                found.insert(ident(rest));
            }
        }
        found
    }

    fn files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap().map(Result::unwrap) {
            let path = entry.path();
            if path.is_dir() {
                files(&path, out);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }

    #[test]
    fn no_top_level_modules_depend_on_each_other_in_a_cycle() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut paths = Vec::new();
        files(&src, &mut paths);
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for path in paths {
            // A test-only file (`*_tests.rs`) may look across: the listing plan tests run the
            // listing engine over the real orders and shipments descriptions.
            if path.file_stem().and_then(|s| s.to_str()).is_some_and(|s| s.ends_with("_tests")) {
                continue;
            }
            let Some(module) = module_of(&path, &src) else { continue };
            let text = std::fs::read_to_string(&path).unwrap();
            let uses: Vec<String> =
                references(&text).into_iter().filter(|m| *m != module && !m.is_empty()).collect();
            graph.entry(module).or_default().extend(uses);
        }
        // Depth-first search for a path that comes back to where it started.
        fn cycle(
            graph: &BTreeMap<String, BTreeSet<String>>,
            from: &str,
            path: &mut Vec<String>,
        ) -> Option<Vec<String>> {
            for next in graph.get(from).into_iter().flatten() {
                if let Some(at) = path.iter().position(|m| m == next) {
                    return Some(path[at..].iter().cloned().chain([next.clone()]).collect());
                }
                path.push(next.clone());
                if let Some(found) = cycle(graph, next, path) {
                    return Some(found);
                }
                path.pop();
            }
            None
        }
        for start in graph.keys() {
            let found = cycle(&graph, start, &mut vec![start.clone()]);
            assert!(found.is_none(), "modules in a cycle: {}", found.unwrap_or_default().join(" -> "));
        }
    }

    /// The files of one top-level module folder that name each other through `super::` or
    /// the folder's own path; `mod.rs`, the parent every child may use, is left out.
    fn file_graph(dir: &Path) -> BTreeMap<String, BTreeSet<String>> {
        let top = dir.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        let mut paths = Vec::new();
        files(dir, &mut paths);
        let names: BTreeSet<String> = paths
            .iter()
            .filter(|p| p.parent() == Some(dir))
            .filter_map(|p| p.file_stem()?.to_str().map(str::to_string))
            .chain(paths.iter().filter_map(|p| {
                let parent = p.parent()?;
                (parent.parent() == Some(dir)).then(|| parent.file_name()?.to_str().map(str::to_string))?
            }))
            .filter(|n| n != "mod")
            .collect();
        let ident = |s: &str| s.chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect::<String>();
        let mut graph: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for path in paths {
            let relative = path.strip_prefix(dir).unwrap();
            let first = relative.components().next().unwrap().as_os_str().to_str().unwrap_or_default();
            let me = first.strip_suffix(".rs").unwrap_or(first).to_string();
            if me == "mod" {
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            let text: String =
                text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
            let nested = relative.components().count() > 1;
            let mut named = BTreeSet::new();
            for prefix in [format!("crate::{top}::"), "super::".to_string()] {
                for (at, _) in text.match_indices(&prefix) {
                    // `super::` inside a child folder's file is that folder's own parent.
                    if prefix == "super::" && nested {
                        continue;
                    }
                    let rest = &text[at + prefix.len()..];
                    let listed: Vec<String> = match rest.strip_prefix('{') {
                        Some(list) => list
                            .split('}')
                            .next()
                            .unwrap_or_default()
                            .split(',')
                            .map(|i| ident(i.trim()))
                            .collect(),
                        None => vec![ident(rest)],
                    };
                    named.extend(listed.into_iter().filter(|n| names.contains(n) && *n != me));
                }
            }
            graph.entry(me).or_default().extend(named);
        }
        graph
    }

    fn find_cycle(graph: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
        fn walk(
            graph: &BTreeMap<String, BTreeSet<String>>,
            from: &str,
            path: &mut Vec<String>,
        ) -> Option<Vec<String>> {
            for next in graph.get(from).into_iter().flatten() {
                if let Some(at) = path.iter().position(|m| m == next) {
                    return Some(path[at..].iter().cloned().chain([next.clone()]).collect());
                }
                path.push(next.clone());
                if let Some(found) = walk(graph, next, path) {
                    return Some(found);
                }
                path.pop();
            }
            None
        }
        graph.keys().find_map(|start| walk(graph, start, &mut vec![start.clone()]))
    }

    #[test]
    fn the_files_of_the_engine_and_of_the_platforms_do_not_import_each_other_in_a_cycle() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        for folder in ["sync", "platforms"] {
            let graph = file_graph(&src.join(folder));
            assert!(graph.len() > 3, "{folder} read: {graph:?}");
            let found = find_cycle(&graph);
            assert!(
                found.is_none(),
                "files of {folder} in a cycle: {}",
                found.unwrap_or_default().join(" -> ")
            );
        }
    }

    #[test]
    fn the_engine_names_no_platform_and_no_platform_address() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut paths = Vec::new();
        files(&src.join("sync"), &mut paths);
        let tokens = [
            "\"big_commerce\"",
            "\"bigcommerce\"",
            "\"sellbrite\"",
            "\"sftp\"",
            "\"ftp\"",
            "\"dropstream\"",
            "\"folder\"",
            "\"shopify\"",
            "\"woocommerce\"",
            "https://",
            "api_base",
            "platforms::big_commerce",
            "platforms::sellbrite",
        ];
        for path in paths {
            let text = std::fs::read_to_string(&path).unwrap();
            let code: String =
                text.lines().filter(|l| !l.trim_start().starts_with("//")).collect::<Vec<_>>().join("\n");
            for token in tokens {
                assert!(
                    !code.contains(token),
                    "{} names {token}: platforms belong in src/platforms",
                    path.display()
                );
            }
        }
    }

    #[test]
    fn the_domain_the_engine_and_the_platforms_know_no_http() {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut paths = Vec::new();
        for folder in ["orders", "shipments", "sync", "platforms", "db", "fields"] {
            files(&src.join(folder), &mut paths);
        }
        paths.extend(["dates.rs", "money.rs", "jsondoc.rs"].map(|f| src.join(f)));
        for path in paths {
            let text = std::fs::read_to_string(&path).unwrap();
            for line in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
                for layer in ["rocket", "crate::http", "crate::resources", "ApiError"] {
                    assert!(
                        !line.contains(layer),
                        "{} names {layer}: the HTTP layer maps the domain's own errors, not the other way round\n{line}",
                        path.display()
                    );
                }
            }
        }
    }
}
