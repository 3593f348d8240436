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

mod contracts;
mod fuzz;
mod interop;
mod node;
mod pg;
mod schemathesis;
mod venv;

use contracts::contracts;
use fuzz::fuzz;
use interop::interop;
use node::{peerbench_deps, sui_vectors, web};
use pg::{Postgres, pg, postgres_suites};
use schemathesis::api_schema_fuzz;

/// Whether the steps run cargo with `CARGO_INCREMENTAL=0` (set by `cargo xtask test`).
static NOT_INCREMENTAL: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn main() -> ExitCode {
    let args: Vec<String> = env::args().skip(1).collect();
    let task = args.first().map_or("help", String::as_str);
    if task == "test" && env::var_os("CARGO_INCREMENTAL").is_none() {
        // A whole run builds each crate once: incremental state would only add about 2 GB
        // of disk (a CI machine once ran out of it). A developer's own setting wins.
        NOT_INCREMENTAL.store(true, std::sync::atomic::Ordering::Relaxed);
    }
    let result = match task {
        "test" => test(),
        "web" => web(),
        "interop" => interop(),
        "contracts" => contracts(),
        "pg" => pg(&args[1..]),
        "fuzz" => fuzz(if soak() { 600 } else { 20 }),
        "api-fuzz" => api_schema_fuzz(soak()),
        "help" | "--help" | "-h" => {
            println!(
                "usage: cargo xtask test    run every check (fmt, clippy, no_std, tests, web, interop, vectors, contracts, fuzz)"
            );
            println!(
                "       TRIAD_SOAK=1 cargo xtask test    the same with long fuzz runs and the long \
                 reliability runs (RELIABILITY.md)"
            );
            println!(
                "       cargo xtask web     only the web app: its type check and the browser tests"
            );
            println!(
                "       cargo xtask interop    only the official MCP and A2A clients against triad serve"
            );
            println!(
                "       cargo xtask contracts    only the Stylus contracts (contracts/README.md)"
            );
            println!(
                "       cargo xtask pg [-- CMD …]    run CMD (default: the PostgreSQL tests) with a PostgreSQL server in TRIAD_TEST_POSTGRES"
            );
            println!("       cargo xtask fuzz    only the fuzz targets (TRIAD_SOAK=1: 600 s each)");
            println!(
                "       cargo xtask api-fuzz    only schemathesis against the OpenAPI document"
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

/// Whether `TRIAD_SOAK=1` asks for the long runs.
fn soak() -> bool {
    env::var("TRIAD_SOAK").is_ok_and(|v| v == "1")
}

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives one level below the workspace root")
        .to_path_buf()
}

/// Runs one step, printing its name and how long it took; a failing step stops everything.
fn step(name: &str, program: &str, args: &[&str]) -> Result<(), String> {
    step_with(name, &root(), &[], program, args)
}

/// `" (N.N GB free on the disk)"` for the filesystem holding `dir`, from `df`, or nothing
/// if `df` can't tell. A full disk shows up as strange failures (a linker's bus error, say),
/// so every step says how much is left.
fn free_disk(dir: &Path) -> String {
    let Ok(out) = Command::new("df").args(["-Pk"]).arg(dir).output() else {
        return String::new();
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let available_kib = text
        .lines()
        .nth(1)
        .and_then(|line| line.split_whitespace().nth(3))
        .and_then(|field| field.parse::<u64>().ok());
    match available_kib {
        Some(kib) => format!(" ({:.1} GB free on the disk)", kib as f64 / 1e6 * 1.024),
        None => String::new(),
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
    let mut command = Command::new(program);
    if NOT_INCREMENTAL.load(std::sync::atomic::Ordering::Relaxed) {
        command.env("CARGO_INCREMENTAL", "0");
    }
    let status = command
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .status()
        .map_err(|e| format!("{name}: could not run {program}: {e}"))?;
    let disk = free_disk(dir);
    println!("<== {name}: {:.1} s{disk}", started.elapsed().as_secs_f64());
    if status.success() {
        Ok(())
    } else {
        Err(format!("{name} failed ({status}){disk}"))
    }
}

/// Like [`step_with`], but the program's standard output is also kept: on failure, the
/// message and everything it printed.
fn step_teed(
    name: &str,
    dir: &Path,
    env: &[(&str, &str)],
    program: &str,
    args: &[&str],
) -> Result<(), (String, String)> {
    use std::io::{BufRead as _, Write as _};
    println!("\n==> {name}: {program} {}", args.join(" "));
    let started = Instant::now();
    let mut child = Command::new(program)
        .args(args)
        .envs(env.iter().copied())
        .current_dir(dir)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .map_err(|e| {
            (
                format!("{name}: could not run {program}: {e}"),
                String::new(),
            )
        })?;
    let mut output = String::new();
    if let Some(stdout) = child.stdout.take() {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            println!("{line}");
            output.push_str(&line);
            output.push('\n');
        }
    }
    let _ = std::io::stdout().flush();
    let status = child
        .wait()
        .map_err(|e| (format!("{name}: {e}"), output.clone()))?;
    println!("<== {name}: {:.1} s", started.elapsed().as_secs_f64());
    if status.success() {
        Ok(())
    } else {
        Err((format!("{name} failed ({status})"), output))
    }
}

/// What the workspace's tests build, `cargo test --workspace --all-targets`, without
/// running them: the `triad` binary the browser tests and the API fuzzing drive is the one
/// the tests built (`<target>/debug/triad`, test profile, the workspace's features), so
/// after the tests nothing is compiled again. Its path.
fn build_triad(purpose: &str) -> Result<PathBuf, String> {
    step(
        &format!("build triad {purpose} (as the tests build it)"),
        "cargo",
        &[&["test", "--no-run"][..], WORKSPACE_TESTS].concat(),
    )?;
    Ok(target_dir()?.join("debug").join("triad"))
}

/// The workspace's tests: every crate, every target (libraries, binaries, integration tests,
/// benches and examples, each built as a test).
const WORKSPACE_TESTS: &[&str] = &["--workspace", "--all-targets"];

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

/// Fails unless the lock file of the workspace at `dir` (relative to the root) already
/// records every dependency, so that no build of the run resolves versions nobody chose:
/// cargo would otherwise rewrite a stale lock and go on, and `cargo fuzz build` has no
/// `--locked` to refuse it.
pub(crate) fn lock_is_current(dir: &str) -> Result<(), String> {
    let manifest = root().join(dir).join("Cargo.toml");
    let out = Command::new("cargo")
        .args([
            "metadata",
            "--locked",
            "--format-version",
            "1",
            "--manifest-path",
        ])
        .arg(&manifest)
        .current_dir(root())
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    if out.status.success() {
        return Ok(());
    }
    Err(format!(
        "{dir}/Cargo.lock is out of date with its Cargo.toml files (run `cargo metadata \
         --format-version 1 --manifest-path {dir}/Cargo.toml > /dev/null` and commit the lock \
         file, after checking the versions it chose): {}",
        String::from_utf8_lossy(&out.stderr).trim()
    ))
}

fn test() -> Result<(), String> {
    let started = Instant::now();
    let soak = soak();
    println!("cargo xtask test{}", free_disk(&root()));
    step("format", "cargo", &["fmt", "--all", "--check"])?;
    // The workspace's own lock is checked by `cargo xtask` itself (`run --locked`); the
    // contracts' steps run `--locked`.
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
    peerbench_deps()?;
    let pg = Postgres::start()?;
    let pg_env = pg.env();
    let pg_env: Vec<(&str, &str)> = pg_env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    step_with(
        "tests",
        &root(),
        &pg_env,
        "cargo",
        &[&["test"][..], WORKSPACE_TESTS].concat(),
    )?;
    postgres_suites(&pg)?;
    drop(pg);
    step("doc tests", "cargo", &["test", "--workspace", "--doc"])?;
    web()?;
    interop()?;
    api_schema_fuzz(soak)?;
    sui_vectors()?;
    contracts()?;
    fuzz(if soak { 600 } else { 20 })?;
    println!(
        "\nall checks passed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
