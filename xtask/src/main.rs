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
            println!("usage: cargo xtask test    run every check (fmt, clippy, tests)");
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

fn test() -> Result<(), String> {
    let started = Instant::now();
    let shared = root().join("../shared");
    if !shared.join("oracles/moves.js").is_file() {
        return Err(format!(
            "{} is missing: the tests need ../shared beside the repository (the seeds and the moves.js oracle)",
            shared.display()
        ));
    }
    step("format", "cargo", &["fmt", "--all", "--check"])?;
    step(
        "clippy",
        "cargo",
        &["clippy", "--workspace", "--all-targets", "--", "-D", "warnings"],
    )?;
    step("tests", "cargo", &["test", "--workspace", "--all-targets"])?;
    step("doc tests", "cargo", &["test", "--workspace", "--doc"])?;
    println!(
        "\nall checks passed in {:.0} s",
        started.elapsed().as_secs_f64()
    );
    Ok(())
}
