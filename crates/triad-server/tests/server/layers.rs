//! The server's one-way layering, checked on its source: `api/` translates between the wire
//! and the services below it, so no module outside `api/` (other than `lib.rs`, which
//! builds the router) may import from it. ARCHITECTURE.md, `crates/triad-server`.

use std::path::{Path, PathBuf};

/// Every `.rs` file below `dir`.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir(dir).expect("the crate's src/ is readable") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            found.extend(sources(&path));
        } else if path.extension().is_some_and(|e| e == "rs") {
            found.push(path);
        }
    }
    found
}

/// The top-level names a `use` or path brings in from `crate::`: `crate::api::x` gives
/// `api`, `crate::{api::y, core}` gives `api` and `core`. Comments are skipped.
fn crate_modules_used(text: &str) -> Vec<String> {
    let code: String = text
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut used = Vec::new();
    for (at, _) in code.match_indices("crate::") {
        let rest = &code[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // The top-level items of the group, up to its closing brace.
            let mut depth = 0usize;
            let mut item = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        used.push(std::mem::take(&mut item));
                        continue;
                    }
                    _ => {}
                }
                if depth == 0 {
                    item.push(c);
                }
            }
            used.push(item);
        } else {
            used.push(rest.to_owned());
        }
    }
    used.iter()
        .map(|item| {
            item.trim()
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        })
        .filter(|name: &String| !name.is_empty())
        .collect()
}

#[test]
fn no_module_below_the_api_imports_from_it() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut offenders = Vec::new();
    for path in sources(&src) {
        let relative = path.strip_prefix(&src).expect("below src/");
        if relative.starts_with("api") || relative == Path::new("lib.rs") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("a source file is readable");
        if crate_modules_used(&text).iter().any(|m| m == "api") {
            offenders.push(relative.display().to_string());
        }
    }
    assert!(
        offenders.is_empty(),
        "these modules import from api/, which only translates for the services below it: {offenders:?}"
    );
}

#[test]
fn the_check_sees_plain_and_grouped_imports() {
    assert_eq!(
        crate_modules_used("use crate::api::error::ApiError;"),
        ["api"]
    );
    assert_eq!(
        crate_modules_used("use crate::{\n    api::{self, error},\n    core::Core,\n};"),
        ["api", "core"]
    );
    assert!(
        crate_modules_used("// use crate::api::x;\nuse crate::store;")
            .iter()
            .all(|m| m != "api")
    );
}
