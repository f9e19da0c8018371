//! The README is a door: every relative link in it, in `docs/` and in the
//! READMEs beside the code leads to a file that exists, and every `#anchor`
//! to a heading of that file.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The repository's root (this package's manifest directory), as `cargo
/// test` names it when it runs the test: a binary reused from a build in
/// another clone (a shared `CARGO_TARGET_DIR`) would name that clone.
fn root() -> PathBuf {
    std::env::var_os("CARGO_MANIFEST_DIR").map_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")), PathBuf::from)
}

/// The Markdown files the check reads.
fn documents() -> Vec<PathBuf> {
    let root = root();
    let mut files = vec![root.join("README.md"), root.join("infra/README.md")];
    for dir in ["docs", "shared", "clients"] {
        let Ok(entries) = std::fs::read_dir(root.join(dir)) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "md") {
                files.push(path);
            } else if path.join("README.md").is_file() {
                files.push(path.join("README.md"));
            }
        }
    }
    files.sort();
    files
}

/// The text outside fenced code blocks (a `#` in a shell block is no heading).
fn prose(text: &str) -> Vec<&str> {
    let mut fenced = false;
    text.lines()
        .filter(|line| {
            if line.trim_start().starts_with("```") {
                fenced = !fenced;
                return false;
            }
            !fenced
        })
        .collect()
}

/// GitHub's anchor of a heading: lowercase, punctuation dropped, spaces to hyphens.
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

fn anchors(path: &Path) -> BTreeSet<String> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    prose(&text)
        .into_iter()
        .filter_map(|line| line.strip_prefix('#').map(|h| h.trim_start_matches('#')))
        .map(|heading| slug(&heading.replace('`', "")))
        .collect()
}

/// The targets of `[label](target)` links in `line`.
fn links(line: &str) -> Vec<&str> {
    let mut found = Vec::new();
    let mut rest = line;
    while let Some(at) = rest.find("](") {
        let after = &rest[at + 2..];
        let Some(end) = after.find(')') else { break };
        found.push(after[..end].trim());
        rest = &after[end..];
    }
    found
}

#[test]
fn every_relative_link_of_the_readme_and_docs_leads_to_a_file_and_heading_that_exist() {
    let root = root();
    let root_real = root.canonicalize().unwrap();
    let mut broken = Vec::new();
    let files = documents();
    assert!(files.len() >= 8, "the docs were not found: {files:?}");
    for file in &files {
        let text = std::fs::read_to_string(file).unwrap();
        let dir = file.parent().unwrap();
        for line in prose(&text) {
            for target in links(line) {
                if target.contains("://") || target.starts_with("mailto:") || target.starts_with('<') {
                    continue;
                }
                let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
                let resolved = if path.is_empty() { file.clone() } else { dir.join(path) };
                // Links out of the repository (the steering repo's DESIGN.md) are not ours to check.
                let inside = resolved
                    .canonicalize()
                    .map(|p| p.starts_with(&root_real))
                    .unwrap_or_else(|_| !path.starts_with("../") || dir != root);
                if !inside {
                    continue;
                }
                let shown = file.strip_prefix(&root).unwrap_or(file).display().to_string();
                if !resolved.exists() {
                    broken.push(format!("{shown}: {target} (no such file)"));
                    continue;
                }
                if !anchor.is_empty() && resolved.is_file() && !anchors(&resolved).contains(anchor) {
                    broken.push(format!("{shown}: {target} (no such heading)"));
                }
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_readme_is_a_door_not_a_design_log() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines <= 300,
        "README.md has {lines} lines: move the detail to docs/ or beside the code"
    );
    for section in [
        "## The two commands",
        "## Watch a retry become a replay",
        "## Configuration",
        "## Deploying",
    ] {
        assert!(readme.contains(section), "README.md lacks {section}");
    }
}

#[test]
fn headings_become_the_anchors_github_makes() {
    assert_eq!(
        slug("Deployed: sign-in with OpenID Connect"),
        "deployed-sign-in-with-openid-connect"
    );
    assert_eq!(
        slug("How idempotency works (and what it costs)"),
        "how-idempotency-works-and-what-it-costs"
    );
    assert_eq!(links("see [a](b.md) and [c](d#e)."), ["b.md", "d#e"]);
}

/// Every `.rs` file under `dir`, recursively.
fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            files.extend(rust_files(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
    files
}

#[test]
fn a_backend_fails_with_the_ports_errors_and_never_words_a_tool_error() {
    // The tools alone turn an ErpError into the model-facing ToolError
    // (`From<ErpError> for ToolError` in the contract crate); a backend's
    // code, outside its tests, states facts only.
    let mut wording = Vec::new();
    for backend in ["shared/erp-builtin/src", "shared/erp-tryton/src"] {
        for file in rust_files(&root().join(backend)) {
            let text = std::fs::read_to_string(&file).unwrap();
            let code = text.split("#[cfg(test)]").next().unwrap_or_default();
            if code.contains("ToolError") {
                wording.push(file.display().to_string());
            }
        }
    }
    assert!(wording.is_empty(), "backend code naming ToolError: {wording:?}");
}
