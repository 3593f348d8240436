//! Project automation: `cargo xtask <task>`.
//!
//! `cargo xtask test` is the one command that runs every check: the format check, clippy
//! with warnings denied, and every test. It installs what the tests need when it is missing
//! and fails loudly rather than skipping.

use std::{
    env,
    path::{Path, PathBuf},
    process::{Command, ExitCode},
    time::Instant,
};

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let task = args.first().map_or("help", String::as_str);
    let result = match task {
        "test" => test(),
        "web" => web(),
        "contracts" => contracts(),
        "help" | "--help" | "-h" => {
            println!(
                "usage: cargo xtask test    run every check (fmt, clippy, no_std, tests, web, vectors, fuzz)"
            );
            println!("       TRIAD_SOAK=1 cargo xtask test    the same with long fuzz runs");
            println!(
                "       cargo xtask web     only the web app: its type check and the browser tests"
            );
            println!(
                "       cargo xtask contracts    only the Stylus contracts (contracts/README.md)"
            );
            Ok(())
        }
        other => Err(format!("unknown task {other:?}; try `cargo xtask help`")),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("xtask: error: {e}");
            ExitCode::FAILURE
        }
    }
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

/// Runs one step, printing its name and how long it took; a failing step stops everything.
fn step(name: &str, program: &str, args: &[&str]) -> Result<(), String> {
    println!("\n==> {name}: {program} {}", args.join(" "));
    let started = Instant::now();
    let status = Command::new(program)
        .args(args)
        .current_dir(root())
        .status()
        .map_err(|e| format!("{name}: could not run {program}: {e}"))?;
    println!("<== {name}: {:.1} s", started.elapsed().as_secs_f64());
    if status.success() {
        Ok(())
    } else {
        Err(format!("{name} failed ({status})"))
    }
}

/// Whether a command runs and succeeds (quietly).
fn succeeds(program: &str, args: &[&str]) -> bool {
    Command::new(program)
        .args(args)
        .current_dir(root())
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Installs a rustup target when it is missing.
fn ensure_target(target: &str) -> Result<(), String> {
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed"])
        .output()
        .map_err(|e| format!("rustup is needed to check the no_std build: {e}"))?;
    if String::from_utf8_lossy(&installed.stdout)
        .lines()
        .any(|l| l.trim() == target)
    {
        return Ok(());
    }
    step(
        "install the no_std target",
        "rustup",
        &["target", "add", target],
    )
}

/// Installs cargo-fuzz when it is missing.
fn ensure_cargo_fuzz() -> Result<(), String> {
    if succeeds("cargo", &["fuzz", "--version"]) {
        return Ok(());
    }
    step(
        "install cargo-fuzz",
        "cargo",
        &["install", "cargo-fuzz", "--locked", "--version", "0.13.2"],
    )
}

/// The fuzz targets: (fuzz directory, target, seconds in the default run).
const FUZZ_TARGETS: &[(&str, &str)] = &[
    ("crates/triad-rules/fuzz", "parse_board"),
    ("crates/triad-engine/fuzz", "commands"),
    ("crates/triad-protocol/fuzz", "decode"),
];

fn fuzz(seconds: u64) -> Result<(), String> {
    ensure_cargo_fuzz()?;
    let scratch = std::env::temp_dir().join(format!("triad-fuzz-{}", std::process::id()));
    for &(dir, target) in FUZZ_TARGETS {
        // New inputs go to a scratch directory, so the run never changes the committed
        // seed corpus it starts from.
        let fresh = scratch.join(target);
        std::fs::create_dir_all(&fresh).map_err(|e| format!("{}: {e}", fresh.display()))?;
        let seeds = root().join(dir).join("corpus").join(target);
        let max_time = format!("-max_total_time={seconds}");
        step(
            &format!("fuzz {target} for {seconds} s"),
            "cargo",
            &[
                "+stable",
                "fuzz",
                "run",
                "--fuzz-dir",
                dir,
                "-s",
                "none",
                target,
                &fresh.to_string_lossy(),
                &seeds.to_string_lossy(),
                "--",
                &max_time,
            ],
        )?;
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}

/// The boardgame.io peer benchmark's dependencies: `triad bench`'s test checks its move
/// scripts against the peer's `loadgen.js --dump-moves`, which needs them.
fn peerbench_deps(shared: &std::path::Path) -> Result<(), String> {
    let dir = shared.join("peerbench");
    if dir.join("node_modules/boardgame.io").is_dir() {
        return Ok(());
    }
    if !succeeds("node", &["--version"]) {
        return Err("node is needed to check triad bench's move scripts; install nodejs".into());
    }
    println!("\n==> npm ci in {}", dir.display());
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(&dir)
        .status()
        .map_err(|e| format!("npm ci: {e}"))?;
    if !status.success() {
        return Err(format!("npm ci failed in {}", dir.display()));
    }
    Ok(())
}

fn sui_vectors() -> Result<(), String> {
    let dir = root().join("crates/triad-identity/vectors");
    if !succeeds("node", &["--version"]) {
        return Err("node is needed to check the Sui SDK vectors; install nodejs".into());
    }
    let status = Command::new("npm")
        .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
        .current_dir(&dir)
        .status()
        .map_err(|e| format!("npm ci: {e}"))?;
    if !status.success() {
        return Err("npm ci failed in crates/triad-identity/vectors".into());
    }
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

/// Like [`step`], but in `dir` and with extra environment variables.
fn step_with(
    name: &str,
    dir: &Path,
    env: &[(&str, &str)],
    program: &str,
    args: &[&str],
) -> Result<(), String> {
    println!("\n==> {name}: {program} {}", args.join(" "));
    let started = Instant::now();
    let status = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .status()
        .map_err(|e| format!("{name}: could not run {program}: {e}"))?;
    println!("<== {name}: {:.1} s", started.elapsed().as_secs_f64());
    if status.success() {
        Ok(())
    } else {
        Err(format!("{name} failed ({status})"))
    }
}

/// Installs Debian's Chromium when it is missing: the browser tests drive it.
fn ensure_chromium() -> Result<(), String> {
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

/// Where cargo puts what it builds (`CARGO_TARGET_DIR`, a config file, or `target/`).
fn target_dir() -> Result<PathBuf, String> {
    let out = Command::new("cargo")
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .current_dir(root())
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    let key = "\"target_directory\":\"";
    let start = text
        .find(key)
        .ok_or("cargo metadata did not name the target directory")?
        + key.len();
    let len = text[start..]
        .find('"')
        .ok_or("cargo metadata's target directory is unterminated")?;
    Ok(PathBuf::from(
        text[start..start + len].replace("\\\\", "\\"),
    ))
}

/// The web app: the type check of its JavaScript (JSDoc, `tsc --noEmit`), and the tests in
/// `e2e/` that drive Debian's Chromium headless (playwright-core) against a freshly built
/// `triad serve`.
fn web() -> Result<(), String> {
    ensure_chromium()?;
    if !succeeds("node", &["--version"]) {
        return Err("node is needed for the web app's tests; install nodejs".into());
    }
    let e2e = root().join("e2e");
    step_with(
        "install the browser-test packages",
        &e2e,
        &[],
        "npm",
        &["ci", "--no-audit", "--no-fund", "--loglevel=error"],
    )?;
    step_with(
        "type-check the web app",
        &e2e,
        &[],
        "npx",
        &["--no-install", "tsc", "--noEmit", "-p", "tsconfig.web.json"],
    )?;
    step(
        "build triad for the browser tests",
        "cargo",
        &["build", "-p", "triad"],
    )?;
    let bin = target_dir()?.join("debug").join("triad");
    let bin = bin.to_string_lossy();
    step_with(
        "browser tests",
        &e2e,
        &[("TRIAD_BIN", &bin)],
        "node",
        // Two files at a time: each starts its own server and browser, and most of a
        // browser test is waiting, so two share the machine's cores well.
        &["--test", "--test-concurrency=2"],
    )
}

/// The Stylus contracts in `contracts/`, a workspace of its own (see its README): format,
/// clippy, the wasm release builds, their compressed size as Stylus measures it, every
/// contract test (with the differential test against the Solidity reference), and the check
/// that the pinned solc still compiles that reference to the committed bytecode. It uses the
/// toolchain `contracts/rust-toolchain.toml` pins (installed if missing) and
/// `contracts/target`.
fn contracts() -> Result<(), String> {
    let dir = root().join("contracts");
    let pin = std::fs::read_to_string(dir.join("rust-toolchain.toml"))
        .map_err(|e| format!("contracts/rust-toolchain.toml: {e}"))?;
    let toolchain = pin
        .lines()
        .find_map(|l| l.trim().strip_prefix("channel = "))
        .map(|v| v.trim_matches('"').to_string())
        .ok_or("contracts/rust-toolchain.toml names no channel")?;
    let wasm = "wasm32-unknown-unknown";
    if !succeeds("rustup", &["run", &toolchain, "rustc", "--version"]) {
        let args = ["toolchain", "install", &toolchain, "--profile", "minimal"];
        let parts = ["-c", "rustfmt", "-c", "clippy", "-t", wasm];
        step(
            "install the contracts' toolchain",
            "rustup",
            &[&args[..], &parts].concat(),
        )?;
    }
    let installed = Command::new("rustup")
        .args(["target", "list", "--installed", "--toolchain", &toolchain])
        .output()
        .map_err(|e| format!("rustup: {e}"))?;
    if !String::from_utf8_lossy(&installed.stdout)
        .lines()
        .any(|l| l.trim() == wasm)
    {
        let args = ["target", "add", wasm, "--toolchain", &toolchain];
        step("install the wasm target", "rustup", &args)?;
    }
    // `cargo xtask` runs under the root's toolchain, which rustup passes on to children in
    // RUSTUP_TOOLCHAIN: the contracts' commands name theirs.
    let target = dir.join("target");
    let target_dir = target.to_string_lossy();
    let env = [
        ("RUSTUP_TOOLCHAIN", toolchain.as_str()),
        ("CARGO_TARGET_DIR", target_dir.as_ref()),
    ];
    let cargo = |name: &str, args: &[&str]| step_with(name, &dir, &env, "cargo", args);
    cargo("contracts: format", &["fmt", "--all", "--check"])?;
    let lints = ["--workspace", "--all-targets", "--", "-D", "warnings"];
    cargo(
        "contracts: clippy",
        &[&["clippy", "--locked"][..], &lints].concat(),
    )?;
    let release = ["build", "--locked", "--release", "--target", wasm];
    let contracts = ["-p", "cryptosos", "-p", "tictactoe"];
    cargo(
        "contracts: wasm builds",
        &[&release[..], &contracts].concat(),
    )?;
    let built = target.join(wasm).join("release");
    let sos = built.join("cryptosos.wasm");
    let ttt = built.join("tictactoe.wasm");
    let (sos, ttt) = (sos.to_string_lossy(), ttt.to_string_lossy());
    let measure = [
        "run",
        "--locked",
        "-q",
        "-p",
        "size-check",
        "--",
        &sos,
        &ttt,
    ];
    cargo("contracts: sizes as Stylus measures them", &measure)?;
    cargo("contracts: tests", &["test", "--locked", "--workspace"])?;
    if !succeeds("node", &["--version"]) {
        return Err("node is needed to rebuild the contracts' Solidity reference".into());
    }
    let reference = dir.join("reference");
    let ci = ["ci", "--no-audit", "--no-fund", "--loglevel=error"];
    step_with("install solc", &reference, &[], "npm", &ci)?;
    let check = ["build.mjs", "--check"];
    step_with(
        "solc reproduces the reference bytecode",
        &reference,
        &[],
        "node",
        &check,
    )
}

fn test() -> Result<(), String> {
    let started = Instant::now();
    let shared = root().join("../shared");
    if !shared.join("oracles/moves.js").is_file() {
        return Err(format!(
            "{} is missing: the tests need ../shared beside the repository (the seeds and the moves.js oracle)",
            shared.display()
        ));
    }
    let soak = env::var("TRIAD_SOAK").is_ok_and(|v| v == "1");
    step("format", "cargo", &["fmt", "--all", "--check"])?;
    step(
        "clippy",
        "cargo",
        &[
            "clippy",
            "--workspace",
            "--all-targets",
            "--",
            "-D",
            "warnings",
        ],
    )?;
    ensure_target("thumbv7em-none-eabi")?;
    step(
        "no_std build of the rules",
        "cargo",
        &[
            "build",
            "-p",
            "triad-rules",
            "--target",
            "thumbv7em-none-eabi",
            "--all-features",
        ],
    )?;
    peerbench_deps(&shared)?;
    step("tests", "cargo", &["test", "--workspace", "--all-targets"])?;
    step("doc tests", "cargo", &["test", "--workspace", "--doc"])?;
    web()?;
    sui_vectors()?;
    fuzz(if soak { 600 } else { 20 })?;
    println!(
        "\nall checks passed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
