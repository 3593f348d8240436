//! What runs in Node: the web app's type check and browser tests, the Sui SDK's vectors and
//! the peer benchmark's dependencies, each installed with `npm ci` from its lock.

use super::*;

/// The dependencies of Triad's peer benchmark (`bench/peer`, boardgame.io), from its lock:
/// `triad bench`'s test checks its move scripts against the peer's
/// `loadgen.js --dump-moves`, which loads them.
pub(crate) fn peerbench_deps() -> Result<(), String> {
    if !succeeds("node", &["--version"]) {
        return Err("node is needed to check triad bench's move scripts; install nodejs".into());
    }
    npm_ci("the peer benchmark", &root().join("bench/peer"))
}

/// `npm ci` in `dir`: exactly the packages its `package-lock.json` pins, each checked
/// against the lock's integrity hash, in a `node_modules` made anew (whatever an earlier run
/// left there is removed first).
pub(crate) fn npm_ci(what: &str, dir: &Path) -> Result<(), String> {
    step_with(
        &format!("install {what} from its lock"),
        dir,
        &[],
        "npm",
        &["ci", "--no-audit", "--no-fund", "--loglevel=error"],
    )
    .map_err(|e| {
        format!(
            "{e}: npm could not install what {} pins (npm, the registry or the network, or \
             a package.json out of step with its lock); not a finding in Triad",
            dir.join("package-lock.json").display()
        )
    })
}

/// The official Sui SDK, run in Node, reproduces `tests/sui_vectors.json` byte for byte.
pub(crate) fn sui_vectors() -> Result<(), String> {
    let dir = root().join("crates/triad-identity/vectors");
    if !succeeds("node", &["--version"]) {
        return Err("node is needed to check the Sui SDK vectors; install nodejs".into());
    }
    npm_ci("the Sui SDK", &dir)?;
    println!("\n==> Sui SDK vectors: node generate.mjs | diff");
    let out = Command::new("node")
        .arg("generate.mjs")
        .current_dir(&dir)
        .output()
        .map_err(|e| format!("node generate.mjs: {e}"))?;
    let committed = std::fs::read(root().join("crates/triad-identity/tests/sui_vectors.json"))
        .map_err(|e| format!("sui_vectors.json: {e}"))?;
    if !out.status.success() || out.stdout != committed {
        return Err(
            "the official Sui SDK no longer produces the committed vectors; regenerate them \
             (see crates/triad-identity/src/lib.rs) and review the difference"
                .into(),
        );
    }
    println!("<== the SDK reproduces tests/sui_vectors.json byte for byte");
    Ok(())
}

/// Installs Debian's Chromium when it is missing: the browser tests drive it.
pub(crate) fn ensure_chromium() -> Result<(), String> {
    const CHROMIUM: &str = "/usr/bin/chromium";
    if Path::new(CHROMIUM).exists() {
        return Ok(());
    }
    let quiet = [("DEBIAN_FRONTEND", "noninteractive")];
    step_with("apt-get update", &root(), &quiet, "apt-get", &["update"])?;
    step_with(
        "install Chromium for the browser tests",
        &root(),
        &quiet,
        "apt-get",
        &["install", "-y", "chromium"],
    )?;
    if Path::new(CHROMIUM).exists() {
        Ok(())
    } else {
        Err(format!(
            "{CHROMIUM} is still missing after installing Debian's chromium package"
        ))
    }
}

/// The web app: the type check of its JavaScript (JSDoc, `tsc --noEmit`), and the tests in
/// `e2e/` that drive Debian's Chromium headless (playwright-core) against a freshly built
/// `triad serve`.
pub(crate) fn web() -> Result<(), String> {
    ensure_chromium()?;
    if !succeeds("node", &["--version"]) {
        return Err("node is needed for the web app's tests; install nodejs".into());
    }
    let e2e = root().join("e2e");
    npm_ci("the browser-test packages", &e2e)?;
    step_with(
        "type-check the web app",
        &e2e,
        &[],
        "npx",
        &["--no-install", "tsc", "--noEmit", "-p", "tsconfig.web.json"],
    )?;
    let bin = build_triad("for the browser tests")?;
    let bin = bin.to_string_lossy();
    step_teed(
        "browser tests",
        &e2e,
        &[("TRIAD_BIN", &bin)],
        "node",
        // Two files at a time: each starts its own server and browser, and most of a
        // browser test is waiting, so two share the machine's cores well.
        &["--test", "--test-concurrency=2"],
    )
    .map_err(|(message, output)| {
        // playwright-core names the call that failed: a browser that never started says
        // nothing about the app.
        if output.contains("browserType.launch") {
            format!(
                "{message}: Chromium did not start (the browser or the machine; not a finding \
                 in Triad)"
            )
        } else {
            format!("{message}: a browser test failed (a finding in the web app or the server)")
        }
    })
}
