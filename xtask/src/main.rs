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
        "help" | "--help" | "-h" => {
            println!(
                "usage: cargo xtask test    run every check (fmt, clippy, no_std, tests, vectors, fuzz)"
            );
            println!("       TRIAD_SOAK=1 cargo xtask test    the same with long fuzz runs");
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
    step("tests", "cargo", &["test", "--workspace", "--all-targets"])?;
    step("doc tests", "cargo", &["test", "--workspace", "--doc"])?;
    sui_vectors()?;
    fuzz(if soak { 600 } else { 20 })?;
    println!(
        "\nall checks passed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
