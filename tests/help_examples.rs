//! Executes every example of the CLI's `--help` texts, of `README.md` and of the docs'
//! shell blocks on fresh stores, so that none can rot; checks that every command's `-h`
//! shows a one-line example and `--help` puts each example on its own line.
//!
//! Conventions (also stated in `src/cli_help.rs`): commands run from the repository root
//! with `tgms` on `PATH`; `/tmp/` is replaced by a fresh temporary directory that holds
//! `store`, a store with the shipped CollegeMsg dataset; `cargo run --release -- ` is
//! `tgms `; `<trace_id>` is the trace id the previous example printed; a line ending in
//! `# exits N` must exit with N. Lines that need a model server or serve until stopped
//! (`src/cli_help.rs` `NOT_RUN`) and `cargo` build/test commands are not run; the test
//! names which and checks they are only those.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const NOT_RUN: [&str; 2] = ["# needs a model server", "# serves until stopped"];

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn tgms(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tgms"))
        .args(args)
        .current_dir(repo())
        .output()
        .unwrap()
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// The subcommand names listed under `Commands:` of a help text (without `help`).
fn subcommands(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(str::to_string)
        .collect()
}

/// The example lines of a long help: the indented lines after `Examples:`.
fn help_examples(help: &str) -> Vec<String> {
    help.lines()
        .skip_while(|l| l.trim_end() != "Examples:")
        .skip(1)
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.trim().to_string())
        .collect()
}

/// Every command path of the CLI (`[]` is the top level), from the help texts themselves.
fn command_paths() -> Vec<Vec<String>> {
    let mut paths = vec![Vec::new()];
    let mut i = 0;
    while i < paths.len() {
        let path: Vec<String> = paths[i].clone();
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("--help");
        for sub in subcommands(&text(&tgms(&args))) {
            let mut p = path.clone();
            p.push(sub);
            paths.push(p);
        }
        i += 1;
    }
    paths
}

/// A directory with `store` (CollegeMsg) for one group of examples.
struct Sandbox {
    dir: tempfile::TempDir,
}

impl Sandbox {
    fn new(template: &Path) -> Sandbox {
        let dir = tempfile::tempdir().unwrap();
        let st = Command::new("cp")
            .args(["-a"])
            .arg(template)
            .arg(dir.path().join("store"))
            .status()
            .unwrap();
        assert!(st.success());
        Sandbox { dir }
    }

    /// Runs one example line; `prev` is the previous example's stdout.
    fn run(&self, line: &str, prev: &str) -> Output {
        let tmp = format!("{}/", self.dir.path().display());
        let mut cmd = line
            .replace("cargo run --release -- ", "tgms ")
            .replace("/tmp/", &tmp);
        if cmd.contains("<trace_id>") {
            let id = prev
                .split("\"trace_id\":\"")
                .nth(1)
                .and_then(|r| r.get(..64))
                .unwrap_or("no-trace-id-printed");
            cmd = cmd.replace("<trace_id>", id);
        }
        let bin_dir = Path::new(env!("CARGO_BIN_EXE_tgms")).parent().unwrap();
        let path = format!(
            "{}:{}",
            bin_dir.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        Command::new("timeout")
            .args(["300", "bash", "-c", &cmd])
            .current_dir(repo())
            .env("PATH", path)
            .env("TMPDIR", self.dir.path())
            .env("NO_COLOR", "1")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap()
    }
}

/// The expected exit status of an example line (`# exits N`, else 0).
fn expected_exit(line: &str) -> i32 {
    line.split("# exits ")
        .nth(1)
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or(0)
}

/// Whether a line is shown but deliberately not executed.
fn not_run(line: &str) -> bool {
    NOT_RUN.iter().any(|m| line.contains(m))
        || (line.starts_with("cargo ") && !line.starts_with("cargo run --release -- "))
}

/// Runs a sequence of lines in one sandbox; returns the failures as text.
fn run_all(
    template: &Path,
    what: &str,
    lines: &[String],
    skipped: &mut Vec<String>,
) -> Vec<String> {
    let sb = Sandbox::new(template);
    let mut prev = String::new();
    let mut failures = Vec::new();
    for line in lines {
        if not_run(line) {
            skipped.push(format!("{what}: {line}"));
            continue;
        }
        let o = sb.run(line, &prev);
        if o.status.code() != Some(expected_exit(line)) {
            failures.push(format!(
                "{what}: `{line}` exited {:?}\nstdout: {}\nstderr: {}",
                o.status.code(),
                text(&o).chars().take(600).collect::<String>(),
                String::from_utf8_lossy(&o.stderr)
                    .chars()
                    .take(600)
                    .collect::<String>()
            ));
        }
        prev = text(&o);
    }
    failures
}

/// The CollegeMsg store every sandbox starts from.
fn template() -> (tempfile::TempDir, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let s = d.path().join("store");
    let s_str = s.to_str().unwrap();
    assert!(tgms(&["init", s_str]).status.success());
    let o = tgms(&["ingest", s_str, "--dataset", "collegemsg"]);
    assert!(o.status.success(), "{o:?}");
    (d, s)
}

/// The shell lines of the ```sh / ```bash blocks of a Markdown file (continuations joined).
fn markdown_lines(file: &str) -> Vec<String> {
    let md = std::fs::read_to_string(repo().join(file)).unwrap();
    let mut lines = Vec::new();
    let mut in_block = false;
    let mut pending = String::new();
    for l in md.lines() {
        let t = l.trim();
        if t.starts_with("```") {
            in_block = !in_block && (t == "```sh" || t == "```bash");
            continue;
        }
        if !in_block || t.is_empty() || t.starts_with('#') {
            continue;
        }
        if let Some(head) = t.strip_suffix('\\') {
            pending.push_str(head);
            continue;
        }
        pending.push_str(t);
        lines.push(std::mem::take(&mut pending));
    }
    lines
}

#[test]
fn every_help_has_examples_that_paste_and_run() {
    let (_keep, tpl) = template();
    let mut failures = Vec::new();
    let mut skipped = Vec::new();
    let mut ran = 0;
    for path in command_paths() {
        let name = format!("tgms {}", path.join(" "));
        let mut args: Vec<&str> = path.iter().map(String::as_str).collect();
        args.push("-h");
        let short = text(&tgms(&args));
        // `-h` ends with one example on one line.
        let ex_line = short.lines().find(|l| l.starts_with("Example: tgms "));
        if ex_line.is_none() {
            failures.push(format!("{name} -h shows no one-line example:\n{short}"));
        }
        args.pop();
        args.push("--help");
        let long = text(&tgms(&args));
        let examples = help_examples(&long);
        if examples.is_empty() {
            failures.push(format!("{name} --help has no Examples section"));
            continue;
        }
        // Each example is one whole command line (clap did not join or wrap them).
        for e in &examples {
            if !e.contains("tgms ") {
                failures.push(format!("{name}: example line runs no tgms command: {e}"));
            }
        }
        if let Some(l) = ex_line {
            assert_eq!(l.trim_start_matches("Example: "), examples[0], "{name}");
        }
        ran += examples.len();
        failures.extend(run_all(&tpl, &name, &examples, &mut skipped));
    }
    assert!(ran >= 40, "only {ran} examples found");
    for s in &skipped {
        assert!(
            s.contains(": tgms ask ") || s.contains(": tgms serve "),
            "only examples that need a model server or serve until stopped may be skipped: {s}"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn readme_and_docs_examples_run() {
    let (_keep, tpl) = template();
    let mut failures = Vec::new();
    let mut skipped = Vec::new();
    for file in ["README.md", "docs/getting-started.md", "docs/plans.md"] {
        let lines = markdown_lines(file);
        assert!(!lines.is_empty(), "{file} has no shell examples");
        failures.extend(run_all(&tpl, file, &lines, &mut skipped));
    }
    for s in &skipped {
        assert!(
            s.contains(": cargo ") || NOT_RUN.iter().any(|m| s.contains(m)),
            "{s}"
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn markdown_lines_join_continuations_and_skip_comments() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("x.md");
    std::fs::write(
        &f,
        "text\n```sh\n# comment\ntgms a \\\n  --b\n\ntgms c\n```\n```json\n{}\n```\n",
    )
    .unwrap();
    // markdown_lines reads relative to the repository; use an absolute path.
    let lines = markdown_lines(f.to_str().unwrap());
    assert_eq!(lines, vec!["tgms a --b".to_string(), "tgms c".to_string()]);
    assert_eq!(expected_exit("tgms x   # exits 3"), 3);
    assert!(not_run("cargo test --workspace --release"));
    assert!(!not_run("cargo run --release -- demo"));
}
