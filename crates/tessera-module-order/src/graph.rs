//! Cycles among the files of a crate: strongly connected components of
//! the import graph (Tarjan's algorithm), those of more than one file.

use crate::import::{Import, ModulePath};
use std::collections::BTreeMap;

/// Each set of files that import one another in a cycle.
pub fn cycles(imports: &[Import]) -> Vec<Vec<ModulePath>> {
    let mut nodes: Vec<&ModulePath> = imports.iter().flat_map(|i| [&i.from, &i.to]).collect();
    nodes.sort();
    nodes.dedup();
    let index: BTreeMap<&ModulePath, usize> =
        nodes.iter().enumerate().map(|(n, m)| (*m, n)).collect();
    let mut edges = vec![Vec::new(); nodes.len()];
    for i in imports {
        edges[index[&i.from]].push(index[&i.to]);
    }
    let mut tarjan = Tarjan::new(&edges);
    for v in 0..nodes.len() {
        if tarjan.order[v].is_none() {
            tarjan.visit(v);
        }
    }
    let mut found: Vec<Vec<ModulePath>> = tarjan
        .components
        .into_iter()
        .filter(|c| c.len() > 1)
        .map(|c| {
            let mut c: Vec<ModulePath> = c.into_iter().map(|v| nodes[v].clone()).collect();
            c.sort();
            c
        })
        .collect();
    found.sort();
    found
}

/// Tarjan's strongly connected components, iterative (no recursion depth
/// to run out of).
struct Tarjan<'e> {
    edges: &'e [Vec<usize>],
    order: Vec<Option<usize>>,
    low: Vec<usize>,
    stack: Vec<usize>,
    on_stack: Vec<bool>,
    next: usize,
    components: Vec<Vec<usize>>,
}

impl<'e> Tarjan<'e> {
    fn new(edges: &'e [Vec<usize>]) -> Tarjan<'e> {
        let n = edges.len();
        Tarjan {
            edges,
            order: vec![None; n],
            low: vec![0; n],
            stack: Vec::new(),
            on_stack: vec![false; n],
            next: 0,
            components: Vec::new(),
        }
    }

    fn number(&mut self, v: usize) {
        self.order[v] = Some(self.next);
        self.low[v] = self.next;
        self.next += 1;
        self.stack.push(v);
        self.on_stack[v] = true;
    }

    fn visit(&mut self, root: usize) {
        self.number(root);
        // (node, index of the next edge to follow)
        let mut calls = vec![(root, 0)];
        while let Some(&mut (v, ref mut e)) = calls.last_mut() {
            if let Some(&w) = self.edges[v].get(*e) {
                *e += 1;
                match self.order[w] {
                    None => {
                        self.number(w);
                        calls.push((w, 0));
                    }
                    Some(ow) if self.on_stack[w] => self.low[v] = self.low[v].min(ow),
                    Some(_) => {}
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _)) = calls.last() {
                self.low[parent] = self.low[parent].min(self.low[v]);
            }
            if Some(self.low[v]) == self.order[v] {
                let mut component = Vec::new();
                while let Some(w) = self.stack.pop() {
                    self.on_stack[w] = false;
                    component.push(w);
                    if w == v {
                        break;
                    }
                }
                self.components.push(component);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn import(from: &str, to: &str) -> Import {
        let path = |s: &str| s.split('/').map(str::to_owned).collect::<ModulePath>();
        Import {
            from: path(from),
            to: path(to),
            text: String::new(),
            line: 1,
        }
    }

    #[test]
    fn finds_cycles_and_nothing_else() {
        let imports = [
            import("a", "b"),
            import("b", "c"),
            import("c", "a"),
            import("c", "d"),
            import("d/x", "d/y"),
            import("d/y", "d/x"),
            import("e", "d"),
        ];
        let found = cycles(&imports);
        let shown: Vec<Vec<String>> = found
            .iter()
            .map(|c| c.iter().map(|m| m.join("/")).collect())
            .collect();
        assert_eq!(shown, [vec!["a", "b", "c"], vec!["d/x", "d/y"]]);
        assert!(cycles(&imports[3..4]).is_empty());
    }
}
