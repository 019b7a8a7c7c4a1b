//! The documentation in `docs/` stays true: the generated pages (`docs/operators.md`,
//! `docs/cli.md`) equal what the binary generates now, every relative link of the docs and
//! the README points at a file (and heading) that exists, and no help text cites the
//! internal spec, which users do not have.

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn tgms(args: &[&str]) -> String {
    let o = Command::new(env!("CARGO_BIN_EXE_tgms"))
        .args(args)
        .output()
        .unwrap();
    assert!(o.status.success(), "tgms {args:?}: {o:?}");
    String::from_utf8(o.stdout).unwrap()
}

fn read(rel: &str) -> String {
    std::fs::read_to_string(repo().join(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"))
}

/// Compares a checked-in generated page with the binary's output, naming the command that
/// regenerates it.
fn assert_current(rel: &str, args: &[&str]) {
    let now = tgms(args);
    let file = read(rel);
    if file != now {
        let line = file
            .lines()
            .zip(now.lines())
            .position(|(a, b)| a != b)
            .unwrap_or_else(|| file.lines().count().min(now.lines().count()));
        panic!(
            "{rel} is out of date (first difference at line {}): regenerate it with\n    \
             cargo run --release -- {} > {rel}\nand review the diff",
            line + 1,
            args.join(" ")
        );
    }
}

#[test]
fn operator_reference_is_current() {
    assert_current("docs/operators.md", &["tools", "--format", "markdown"]);
}

#[test]
fn cli_reference_is_current() {
    assert_current("docs/cli.md", &["help-markdown"]);
}

/// GitHub's anchor of a heading: lowercase, spaces to `-`, punctuation other than `-` and
/// `_` dropped.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

fn anchors(md: &str) -> BTreeSet<String> {
    let mut in_code = false;
    md.lines()
        .filter(|l| {
            if l.starts_with("```") {
                in_code = !in_code;
            }
            !in_code && l.starts_with('#')
        })
        .map(|l| slug(l.trim_start_matches('#')))
        .collect()
}

/// The relative link targets `](target)` of a Markdown text, outside code blocks.
fn links(md: &str) -> Vec<String> {
    let mut in_code = false;
    let mut v = Vec::new();
    for l in md.lines() {
        if l.starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        for part in l.split("](").skip(1) {
            if let Some(end) = part.find(')') {
                let t = &part[..end];
                if !t.starts_with("http") && !t.starts_with("mailto:") {
                    v.push(t.to_string());
                }
            }
        }
    }
    v
}

#[test]
fn every_relative_link_resolves() {
    let mut files = vec!["README.md".to_string()];
    for e in std::fs::read_dir(repo().join("docs")).unwrap() {
        let p = e.unwrap().path();
        if p.extension().is_some_and(|x| x == "md") {
            files.push(format!("docs/{}", p.file_name().unwrap().to_str().unwrap()));
        }
    }
    let mut broken = Vec::new();
    for f in &files {
        let md = read(f);
        let dir = Path::new(f).parent().unwrap();
        for l in links(&md) {
            let (path, anchor) = l.split_once('#').unwrap_or((&l, ""));
            let target = if path.is_empty() {
                Path::new(f).to_path_buf()
            } else {
                dir.join(path)
            };
            if !repo().join(&target).exists() {
                broken.push(format!("{f}: {l} (no file {})", target.display()));
                continue;
            }
            if !anchor.is_empty() && target.extension().is_some_and(|x| x == "md") {
                let text = std::fs::read_to_string(repo().join(&target)).unwrap();
                if !anchors(&text).contains(anchor) {
                    broken.push(format!("{f}: {l} (no heading #{anchor})"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn help_texts_cite_no_internal_spec() {
    // docs/cli.md is every help text (cli_reference_is_current keeps it so).
    let cli = read("docs/cli.md");
    let banned = [
        "spec/",
        "agent-surface",
        "plans-and-claims",
        "evaluation.md",
        "data-model §",
        "TV20",
    ];
    for b in banned {
        assert!(!cli.contains(b), "a help text cites `{b}`");
    }
    for (i, l) in cli.lines().enumerate() {
        // `format-spec.md §…` is in the repository; any other § points into the spec.
        let rest = l.replace("format-spec.md §", "");
        assert!(!rest.contains('§'), "docs/cli.md:{}: {l}", i + 1);
    }
}

#[test]
fn slugs_follow_github() {
    assert_eq!(slug(" E_COST"), "e_cost");
    assert_eq!(
        slug("Deviation: gating covers the prose (D-V8)"),
        "deviation-gating-covers-the-prose-d-v8"
    );
    assert_eq!(
        slug("Reading: \"valid at\" and \"as of\""),
        "reading-valid-at-and-as-of"
    );
    assert_eq!(links("see [a](b.md#c) and [x](https://y)"), vec!["b.md#c"]);
}
