//! The engine's module layering (`ARCHITECTURE.md`, "The engine"), checked from the
//! sources: the graph of `crate::` imports between the engine's modules has no cycle, and
//! the format layer (`engine/src/format/`) imports nothing but the stored model and the
//! foundations it is written in terms of. Test modules (`#[cfg(test)] mod …`) and comments
//! are not imports.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// What `format/` may import besides itself.
const FORMAT_MAY_IMPORT: &[&str] = &["error", "fault", "model", "op", "time"];

fn rs_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).expect("read engine/src") {
        let p = e.expect("dir entry").path();
        if p.is_dir() {
            rs_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// The source without comments and without its test modules: a `#[cfg(test)] mod`
/// declared out of line (`mod tests;`) is skipped with its attributes, one declared inline
/// up to its matching closing brace; the code after either is kept.
fn product_code(text: &str) -> String {
    let lines: Vec<&str> = text.lines().map(str::trim_start).collect();
    let strip = |l: &str| -> String {
        match l.find("//") {
            Some(k) => l[..k].to_string(),
            None => l.to_string(),
        }
    };
    let mut out = String::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].starts_with("#[cfg(test)]") {
            let mut j = i + 1;
            while j < lines.len() && lines[j].starts_with("#[") {
                j += 1;
            }
            let decl = lines.get(j).copied().unwrap_or("");
            let decl = decl.strip_prefix("pub(crate) ").unwrap_or(decl);
            if decl.starts_with("mod ") {
                if !decl.trim_end().ends_with(';') {
                    // Inline: through the line where the module's braces balance.
                    let (mut depth, mut opened) = (0i64, false);
                    while j < lines.len() {
                        let code = strip(lines[j]);
                        opened |= code.contains('{');
                        depth += code.matches('{').count() as i64;
                        depth -= code.matches('}').count() as i64;
                        if opened && depth <= 0 {
                            break;
                        }
                        j += 1;
                    }
                }
                i = j + 1;
                continue;
            }
        }
        out.push_str(&strip(lines[i]));
        out.push('\n');
        i += 1;
    }
    out
}

/// The files of test-only modules declared out of line (`#[cfg(test)] mod tests;` in
/// `a/b.rs` is `a/b/tests.rs`; in a `mod.rs` or `lib.rs`, `tests.rs` beside it).
fn test_module_files(file: &Path, text: &str) -> Vec<PathBuf> {
    let lines: Vec<&str> = text.lines().map(str::trim_start).collect();
    let dir = match file.file_stem().and_then(|s| s.to_str()) {
        Some("mod" | "lib") => file.parent().map(Path::to_path_buf),
        _ => Some(file.with_extension("")),
    };
    let mut out = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        if !l.starts_with("#[cfg(test)]") {
            continue;
        }
        let mut j = i + 1;
        while j < lines.len() && lines[j].starts_with("#[") {
            j += 1;
        }
        let decl = lines.get(j).copied().unwrap_or("");
        let decl = decl.strip_prefix("pub(crate) ").unwrap_or(decl);
        if let (Some(name), Some(dir)) = (
            decl.strip_prefix("mod ").and_then(|d| d.strip_suffix(';')),
            &dir,
        ) {
            out.push(dir.join(format!("{}.rs", name.trim())));
        }
    }
    out
}

/// The top-level module a file belongs to (`format` for everything under `format/`) and,
/// for a file in a module's folder (`format/`, `rows/`, `store/`, `read/`), its module
/// within that folder.
fn module_of(src: &Path, file: &Path) -> (String, Option<String>) {
    let rel = file.strip_prefix(src).expect("file under engine/src");
    let parts: Vec<String> = rel
        .iter()
        .map(|c| c.to_string_lossy().trim_end_matches(".rs").to_string())
        .collect();
    let top = parts[0].clone();
    let inner = (parts.len() > 1 && parts[1] != "mod").then(|| parts[1].clone());
    (top, inner)
}

/// The names `crate::` paths in `code` start with (`crate::a::b` → `a`; in
/// `use crate::{a::x, b}` → `a`, `b`).
fn crate_refs(code: &str) -> BTreeSet<String> {
    let mut refs = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_alphanumeric() || *c == '_')
            .collect()
    };
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find("};").unwrap_or(group.len());
            let mut depth = 0;
            let mut start = true;
            for (k, c) in group[..end].char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => start = true,
                    c if start && !c.is_whitespace() => {
                        refs.insert(ident(&group[k..]));
                        start = false;
                    }
                    _ => {}
                }
            }
        } else {
            refs.insert(ident(rest));
        }
    }
    refs.remove("");
    refs
}

/// A cycle of `g`, if it has one.
fn find_cycle(g: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit(
        v: &str,
        g: &BTreeMap<String, BTreeSet<String>>,
        state: &mut BTreeMap<String, u8>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        state.insert(v.to_string(), 1);
        path.push(v.to_string());
        for w in g.get(v).into_iter().flatten() {
            match state.get(w.as_str()).copied().unwrap_or(0) {
                1 => {
                    let from = path.iter().position(|x| x == w).unwrap_or(0);
                    let mut cycle = path[from..].to_vec();
                    cycle.push(w.clone());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(w, g, state, path) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        path.pop();
        state.insert(v.to_string(), 2);
        None
    }
    let mut state = BTreeMap::new();
    for v in g.keys() {
        if state.get(v.as_str()).copied().unwrap_or(0) == 0 {
            if let Some(c) = visit(v, g, &mut state, &mut Vec::new()) {
                return Some(c);
            }
        }
    }
    None
}

struct Graphs {
    /// Top-level module → the top-level modules it imports.
    top: BTreeMap<String, BTreeSet<String>>,
    /// Per folder (`format`, `rows`, ...): module within it → the modules of the same folder
    /// it imports.
    inner: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
    /// Module within `format/` → what it imports outside `format/`.
    format_out: BTreeMap<String, BTreeSet<String>>,
}

fn graphs() -> Graphs {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let lib = std::fs::read_to_string(src.join("lib.rs")).expect("lib.rs");
    // Names lib.rs re-exports (`pub use read::{Snapshot, ...}`) point at their module.
    let mut reexport: BTreeMap<String, String> = BTreeMap::new();
    for stmt in product_code(&lib).split(';') {
        let Some(rest) = stmt.trim().strip_prefix("pub use ") else {
            continue;
        };
        let Some((module, names)) = rest.split_once("::") else {
            continue;
        };
        for n in names.trim_matches(|c| c == '{' || c == '}').split(',') {
            reexport.insert(n.trim().to_string(), module.trim().to_string());
        }
    }
    let mut files = Vec::new();
    rs_files(&src, &mut files);
    let test_files: Vec<PathBuf> = files
        .iter()
        .flat_map(|f| test_module_files(f, &std::fs::read_to_string(f).expect("source")))
        .collect();
    files.retain(|f| !test_files.contains(f));
    let mut g = Graphs {
        top: BTreeMap::new(),
        inner: BTreeMap::new(),
        format_out: BTreeMap::new(),
    };
    for f in files {
        let (top, inner) = module_of(&src, &f);
        if top == "lib" {
            continue;
        }
        let code = product_code(&std::fs::read_to_string(&f).expect("source"));
        let refs = crate_refs(&code);
        for r in &refs {
            let target = reexport.get(r).cloned().unwrap_or_else(|| r.clone());
            if target != top {
                g.top.entry(top.clone()).or_default().insert(target.clone());
            }
            g.top.entry(top.clone()).or_default();
            if let Some(inner) = &inner {
                if target == top {
                    // `crate::rows::X`: the module X of the same folder (a lowercase name;
                    // `crate::rows::Rows` is the folder's root, which declares them).
                    let prefix = format!("crate::{top}::");
                    for (at, _) in code.match_indices(&prefix) {
                        let name: String = code[at + prefix.len()..]
                            .chars()
                            .take_while(|c| c.is_alphanumeric() || *c == '_')
                            .collect();
                        if &name != inner && name.starts_with(|c: char| c.is_ascii_lowercase()) {
                            g.inner
                                .entry(top.clone())
                                .or_default()
                                .entry(inner.clone())
                                .or_default()
                                .insert(name);
                        }
                    }
                } else if top == "format" {
                    g.format_out
                        .entry(inner.clone())
                        .or_default()
                        .insert(target);
                }
            }
        }
    }
    g
}

#[test]
fn the_engine_modules_import_each_other_without_a_cycle() {
    let g = graphs();
    assert!(
        g.top.len() > 10,
        "the scan found too few modules: {:?}",
        g.top.keys()
    );
    assert!(
        g.top["store"].contains("format") && g.top["read"].contains("rows"),
        "the scan misses known imports: {:?}",
        g.top["store"]
    );
    assert!(
        g.inner["rows"]["delta"].contains("interner") && g.inner["format"]["seg"].contains("le"),
        "the scan misses known imports within folders: {:?}",
        g.inner
    );
    if let Some(c) = find_cycle(&g.top) {
        panic!("import cycle between engine modules: {}", c.join(" → "));
    }
    for (folder, graph) in &g.inner {
        if let Some(c) = find_cycle(graph) {
            panic!("import cycle inside {folder}/: {}", c.join(" → "));
        }
    }
}

#[test]
fn the_format_layer_imports_only_the_model_and_the_foundations() {
    let g = graphs();
    assert!(
        g.format_out.contains_key("seg") && g.format_out.contains_key("base"),
        "the scan found no format modules: {:?}",
        g.format_out.keys()
    );
    for (module, imports) in &g.format_out {
        let bad: Vec<&String> = imports
            .iter()
            .filter(|i| !FORMAT_MAY_IMPORT.contains(&i.as_str()))
            .collect();
        assert!(
            bad.is_empty(),
            "format/{module}.rs imports {bad:?}: the format layer knows nothing of the \
             memtable, the read path or the store (allowed: {FORMAT_MAY_IMPORT:?})"
        );
    }
}

#[test]
fn the_scan_sees_a_cycle_and_a_grouped_import() {
    let refs = crate_refs("use crate::{a::x, b, c::{d, e}};\nlet y = crate::f::g();");
    assert_eq!(
        refs.into_iter().collect::<Vec<_>>(),
        ["a", "b", "c", "f"].map(String::from)
    );
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    g.entry("a".into()).or_default().insert("b".into());
    g.entry("b".into()).or_default().insert("c".into());
    assert_eq!(find_cycle(&g), None);
    g.entry("c".into()).or_default().insert("a".into());
    assert_eq!(
        find_cycle(&g).map(|c| c.len()),
        Some(4),
        "a → b → c → a is a cycle"
    );
    let code = product_code(
        "use crate::x;\n// crate::y\n#[cfg(test)]\nmod tests {\n use crate::z;\n fn f() {}\n}\n\
         #[cfg(test)]\n#[allow(unused)]\nmod more;\nuse crate::w;\n",
    );
    assert_eq!(
        crate_refs(&code).into_iter().collect::<Vec<_>>(),
        ["w", "x"],
        "test modules skipped, the code after them kept"
    );
    let decl = "#[cfg(test)]\npub(crate) mod tests;\nmod other;\n";
    assert_eq!(
        test_module_files(Path::new("/s/a/b.rs"), decl),
        [PathBuf::from("/s/a/b/tests.rs")]
    );
    assert_eq!(
        test_module_files(Path::new("/s/a/mod.rs"), decl),
        [PathBuf::from("/s/a/tests.rs")]
    );
}
