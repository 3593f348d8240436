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
        "contracts" => contracts(),
        "pg" => pg(&args[1..]),
        "fuzz" => fuzz(if soak() { 600 } else { 20 }),
        "api-fuzz" => api_schema_fuzz(soak()),
        "help" | "--help" | "-h" => {
            println!(
                "usage: cargo xtask test    run every check (fmt, clippy, no_std, tests, web, vectors, contracts, fuzz)"
            );
            println!(
                "       TRIAD_SOAK=1 cargo xtask test    the same with long fuzz runs and the long \
                 reliability runs (RELIABILITY.md)"
            );
            println!(
                "       cargo xtask web     only the web app: its type check and the browser tests"
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

/// What `triad <args>` prints, trimmed; its standard error when it fails.
fn triad_output(bin: &Path, args: &[&str]) -> Result<String, String> {
    let what = format!("triad {}", args.first().copied().unwrap_or_default());
    let out = Command::new(bin)
        .args(args)
        .output()
        .map_err(|e| format!("{what}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "{what} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_owned())
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

/// The cargo-fuzz release the fuzz targets are built with.
const CARGO_FUZZ: &str = "0.13.2";

/// Installs cargo-fuzz [`CARGO_FUZZ`] unless that very release is installed (another one is
/// replaced, so every run builds the targets with the same flags).
fn ensure_cargo_fuzz() -> Result<(), String> {
    let installed = Command::new("cargo")
        .args(["fuzz", "--version"])
        .current_dir(root())
        .output()
        .is_ok_and(|o| {
            o.status.success()
                && String::from_utf8_lossy(&o.stdout).trim() == format!("cargo-fuzz {CARGO_FUZZ}")
        });
    if installed {
        return Ok(());
    }
    step(
        &format!("install cargo-fuzz {CARGO_FUZZ}"),
        "cargo",
        &[
            "install",
            "cargo-fuzz",
            "--locked",
            "--force",
            "--version",
            CARGO_FUZZ,
        ],
    )
}

/// The fuzz targets, one for every decoder of outside input: (fuzz directory, target,
/// whether the default run includes it). Each starts from its committed seed corpus,
/// `<fuzz directory>/corpus/<target>`. The fuzz directories are crates of their own, but
/// their lock files pin the same versions of what they share.
const FUZZ_TARGETS: &[(&str, &str, bool)] = &[
    // Board strings (the SOS contract's state strings and position numbers).
    ("crates/triad-rules/fuzz", "parse_board", true),
    // Engine commands, as the API makes them.
    ("crates/triad-engine/fuzz", "commands", true),
    // Agents' app messages (the A2A tic-tac-toe protocol) and the game state machine.
    ("crates/triad-protocol/fuzz", "decode", true),
    // Agents' signed envelopes.
    ("crates/triad-protocol/fuzz", "envelope", true),
    // Login messages, keys, Ed25519 and Sui personal-message signatures.
    ("crates/triad-identity/fuzz", "login", true),
    // Every API request body, through the router on a real SQLite file. Its instrumented
    // build is the whole server: a few minutes on two cores.
    ("crates/triad-server/fuzz", "api_bodies", true),
];

/// The flags every fuzz build and run shares: no sanitizer (the code has no `unsafe`; the
/// targets look for panics, hangs and runaway memory), and one target directory for all the
/// fuzz crates (`<target>/fuzz`), so what they have in common (libFuzzer, the Triad crates
/// below the server, serde …) is compiled once. A build and a run with the same flags share
/// one build.
fn fuzz_flags<'a>(dir: &'a str, shared_target: &'a str) -> [&'a str; 6] {
    [
        "--fuzz-dir",
        dir,
        "-s",
        "none",
        "--target-dir",
        shared_target,
    ]
}

/// A run of every fuzz target for `seconds` each; an input that takes over 10 s is a hang
/// and fails the run, as a panic does. Each fuzz directory is built first, as a step of its
/// own, and its targets then run on that build.
fn fuzz(seconds: u64) -> Result<(), String> {
    ensure_cargo_fuzz()?;
    let scratch = std::env::temp_dir().join(format!("triad-fuzz-{}", std::process::id()));
    let long = seconds >= 60;
    let shared_target = target_dir()?.join("fuzz");
    let shared_target = shared_target.to_string_lossy();
    let mut built: Vec<&str> = Vec::new();
    for &(dir, target, in_default) in FUZZ_TARGETS {
        if !in_default && !long {
            println!("\n(fuzz {target}: only with TRIAD_SOAK=1)");
            continue;
        }
        let flags = fuzz_flags(dir, &shared_target);
        if !built.contains(&dir) {
            step(
                &format!("build the fuzz targets in {dir}"),
                "cargo",
                &[&["+stable", "fuzz", "build"][..], &flags].concat(),
            )
            .map_err(|e| {
                format!(
                    "{e}: the fuzz build failed (a compile error, or cargo-fuzz or the \
                     toolchain; nothing was fuzzed)"
                )
            })?;
            built.push(dir);
        }
        // New inputs go to a scratch directory, so the run never changes the committed
        // seed corpus it starts from.
        let fresh = scratch.join(target);
        std::fs::create_dir_all(&fresh).map_err(|e| format!("{}: {e}", fresh.display()))?;
        let seeds = root().join(dir).join("corpus").join(target);
        let has_seeds = std::fs::read_dir(&seeds).is_ok_and(|mut d| d.next().is_some());
        if !has_seeds {
            return Err(format!(
                "{}: the seed corpus of {target} is missing or empty",
                seeds.display()
            ));
        }
        // libFuzzer writes an input that fails (crash-, timeout-, oom-, leak-…) here.
        let artifacts = root().join(dir).join("artifacts").join(target);
        let before = files_in(&artifacts);
        let max_time = format!("-max_total_time={seconds}");
        let (fresh, seeds) = (fresh.to_string_lossy(), seeds.to_string_lossy());
        let run = [
            &["+stable", "fuzz", "run"][..],
            &flags,
            &[
                target,
                &fresh,
                &seeds,
                "--",
                &max_time,
                "-timeout=10",
                "-rss_limit_mb=2048",
            ],
        ]
        .concat();
        if let Err(e) = step(&format!("fuzz {target} for {seconds} s"), "cargo", &run) {
            let found: Vec<PathBuf> = files_in(&artifacts)
                .into_iter()
                .filter(|f| !before.contains(f))
                .collect();
            return Err(match found.first() {
                Some(input) => format!(
                    "{e}: fuzzing found a problem in Triad; the input is {} (run it again with \
                     `cargo fuzz run --fuzz-dir {dir} -s none {target} {}`)",
                    input.display(),
                    input.display()
                ),
                None => format!(
                    "{e}: the fuzzer itself failed and left no failing input (cargo-fuzz, \
                     libFuzzer or the machine; not a finding in Triad)"
                ),
            });
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    Ok(())
}

/// The files directly in `dir` (none if it is missing).
fn files_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// The dependencies of Triad's peer benchmark (`bench/peer`, boardgame.io), from its lock:
/// `triad bench`'s test checks its move scripts against the peer's
/// `loadgen.js --dump-moves`, which loads them.
fn peerbench_deps() -> Result<(), String> {
    if !succeeds("node", &["--version"]) {
        return Err("node is needed to check triad bench's move scripts; install nodejs".into());
    }
    npm_ci("the peer benchmark", &root().join("bench/peer"))
}

/// `npm ci` in `dir`: exactly the packages its `package-lock.json` pins, each checked
/// against the lock's integrity hash, in a `node_modules` made anew (whatever an earlier run
/// left there is removed first).
fn npm_ci(what: &str, dir: &Path) -> Result<(), String> {
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
fn sui_vectors() -> Result<(), String> {
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

/// The web app: the type check of its JavaScript (JSDoc, `tsc --noEmit`), and the tests in
/// `e2e/` that drive Debian's Chromium headless (playwright-core) against a freshly built
/// `triad serve`.
fn web() -> Result<(), String> {
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
    npm_ci("solc", &reference)?;
    let check = ["build.mjs", "--check"];
    step_with(
        "solc reproduces the reference bytecode",
        &reference,
        &[],
        "node",
        &check,
    )
}

/// The schemathesis release the API is fuzzed with, and the lock of everything it installs
/// (every transitive package pinned, with its hashes): a fresh machine gets exactly what the
/// last green run used.
const SCHEMATHESIS: &str = "4.32.5";
const SCHEMATHESIS_LOCK: &str = include_str!("../locks/schemathesis.txt");

/// Installs the locked schemathesis in `<target>/schemathesis-venv` unless that venv was made
/// from this very lock (its copy of the lock says so); its `st`.
fn ensure_schemathesis() -> Result<PathBuf, String> {
    let venv = target_dir()?.join("schemathesis-venv");
    let st = venv.join("bin").join("st");
    let stamp = venv.join("triad-lock.txt");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == SCHEMATHESIS_LOCK) && st.is_file() {
        return Ok(st);
    }
    // A venv from another lock (or an unlocked install) is made anew, never patched.
    let _ = std::fs::remove_dir_all(&venv);
    let venv_text = venv.to_string_lossy();
    step(
        "make a venv for schemathesis",
        "python3",
        &["-m", "venv", &venv_text],
    )?;
    let lock = root().join("xtask/locks/schemathesis.txt");
    let pip = venv.join("bin").join("pip");
    step(
        &format!("install schemathesis {SCHEMATHESIS} from its lock"),
        &pip.to_string_lossy(),
        &[
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--require-hashes",
            "--only-binary=:all:",
            "-r",
            &lock.to_string_lossy(),
        ],
    )?;
    std::fs::write(&stamp, SCHEMATHESIS_LOCK).map_err(|e| format!("{}: {e}", stamp.display()))?;
    Ok(st)
}

/// What a failed schemathesis run was, read from its output: a finding in Triad (a failed
/// check) or a crash of the tool itself (a Python error inside schemathesis or hypothesis,
/// which says nothing about Triad).
#[derive(Debug, PartialEq, Eq)]
enum FuzzFailure {
    Finding,
    ToolCrash,
}

impl FuzzFailure {
    fn of(output: &str) -> FuzzFailure {
        // schemathesis prints its checks' failures under "FAILURES"; errors it hit in its own
        // code (or in hypothesis, or CPython) are reported as "Runtime Error"/tracebacks under
        // "ERRORS", with no failure.
        let finding = output.contains("FAILURES") || output.contains("Failed checks");
        if finding {
            FuzzFailure::Finding
        } else {
            FuzzFailure::ToolCrash
        }
    }
}

/// A `triad serve` child, killed when dropped.
struct ServeChild(std::process::Child);

impl Drop for ServeChild {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The API fuzzed from its own OpenAPI document with schemathesis, against the real binary
/// on 127.0.0.1, logged in (`triad login`) as the owner: no answer may be a 5xx, and every
/// answer must match the document (status, content type, headers, body schema). The
/// default run tries 25 cases per operation; `TRIAD_SOAK=1` tries 500.
fn api_schema_fuzz(soak: bool) -> Result<(), String> {
    use std::io::BufRead as _;
    let st = ensure_schemathesis()?;
    let bin = build_triad("for the API fuzzing")?;
    let scratch = env::temp_dir().join(format!("triad-schemathesis-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(&scratch).map_err(|e| format!("{}: {e}", scratch.display()))?;
    let key = scratch.join("key.json");
    let key_text = key.to_string_lossy().into_owned();
    let owner = triad_output(&bin, &["keygen", "--key-file", &key_text])?;
    let log = std::fs::File::create(scratch.join("server.log"))
        .map_err(|e| format!("server.log: {e}"))?;
    let mut child = Command::new(&bin)
        .args(["serve", "--addr", "127.0.0.1:0", "--owner", &owner])
        .arg("--database")
        .arg(scratch.join("triad.db"))
        .args(["--rate-per-ip", "1000000", "--rate-per-address", "1000000"])
        .args(["--rate-burst", "1000000"])
        .args([
            "--max-connections-per-ip",
            "100000",
            "--max-long-polls-per-ip",
            "100000",
        ])
        .env("TRIAD_LOG", "warn")
        .stdout(std::process::Stdio::piped())
        .stderr(log)
        .spawn()
        .map_err(|e| format!("triad serve: {e}"))?;
    let stdout = child.stdout.take().ok_or("triad serve: no stdout")?;
    let server = ServeChild(child);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if let Some(addr) = line.strip_prefix("Triad is listening on ") {
                let _ = tx.send(addr.trim().to_owned());
            }
        }
    });
    let base = rx
        .recv_timeout(std::time::Duration::from_secs(30))
        .map_err(|_| "triad serve did not say where it listens within 30 s".to_owned())?;
    let token = triad_output(&bin, &["login", "--server", &base, "--key-file", &key_text])?;
    let schema = format!("{base}/api/openapi.json");
    let auth = format!("Authorization: Bearer {token}");
    let examples = if soak { "500" } else { "25" };
    let report = scratch.join("report");
    let report_text = report.to_string_lossy();
    let args = [
        "run",
        &schema,
        "--checks",
        "not_a_server_error,status_code_conformance,content_type_conformance,response_headers_conformance,response_schema_conformance",
        "--header",
        &auth,
        // Logging out would end the session the rest of the run uses.
        "--exclude-path",
        "/api/auth/logout",
        "--max-examples",
        examples,
        "--seed",
        "20261121",
        // One worker: CPython 3.11's AST constructor is not thread-safe, and hypothesis
        // parses strategies' lambda sources, so two workers crashed the tool now and then
        // ("AST constructor recursion depth mismatch").
        "--workers",
        "1",
        "--request-timeout",
        "20",
        "--suppress-health-check",
        "all",
        "--report",
        "junit",
        "--report-dir",
        &report_text,
    ];
    let name = format!("schemathesis {SCHEMATHESIS} against the OpenAPI document");
    let st = st.to_string_lossy();
    let mut result = step_teed(&name, &root(), &[], &st, &args);
    if let Err((_, output)) = &result
        && FuzzFailure::of(output) == FuzzFailure::ToolCrash
    {
        // The same seed again: a finding would come back; a crash of the tool's own is said
        // to be one, and only a second one fails the run.
        println!(
            "\nschemathesis itself crashed (no check failed: not a finding in Triad); once more"
        );
        result = step_teed(&name, &root(), &[], &st, &args);
    }
    let result = result.map_err(|(message, output)| match FuzzFailure::of(&output) {
        FuzzFailure::Finding => format!("{message}: schemathesis found a problem in Triad"),
        FuzzFailure::ToolCrash => format!(
            "{message}: schemathesis itself crashed twice (no check failed; not a finding in \
             Triad)"
        ),
    });
    drop(server);
    if result.is_ok() {
        let _ = std::fs::remove_dir_all(&scratch);
    } else {
        eprintln!(
            "the server's log and schemathesis' report are in {}",
            scratch.display()
        );
    }
    result
}

fn test() -> Result<(), String> {
    let started = Instant::now();
    let soak = soak();
    println!("cargo xtask test{}", free_disk(&root()));
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

/// The server's test suites that run a second time on PostgreSQL (`TRIAD_TEST_BACKEND`),
/// and the binary's tests that drive several nodes on it.
/// `--workspace`, not `-p`: the same features as the first run, so nothing is rebuilt.
const POSTGRES_SUITES: &[&str] = &[
    "--workspace",
    "--test",
    "api",
    "--test",
    "apps",
    "--test",
    "auth",
    "--test",
    "errors",
    "--test",
    "security",
    "--test",
    "system",
    "--test",
    "web",
];

fn postgres_suites(pg: &Postgres) -> Result<(), String> {
    let mut env = pg.env();
    env.push(("TRIAD_TEST_BACKEND", "postgres".to_owned()));
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    step_with(
        "the server's tests on PostgreSQL",
        &root(),
        &env,
        "cargo",
        &[&["test"][..], POSTGRES_SUITES].concat(),
    )
}

/// `cargo xtask pg [-- CMD …]`: runs CMD with a PostgreSQL server in `TRIAD_TEST_POSTGRES`
/// (by default, every test that uses PostgreSQL).
fn pg(args: &[String]) -> Result<(), String> {
    let pg = Postgres::start()?;
    let args: Vec<&str> = args
        .iter()
        .map(String::as_str)
        .skip_while(|a| *a == "--")
        .collect();
    if args.is_empty() {
        let env = pg.env();
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        step_with(
            "the cluster tests",
            &root(),
            &env,
            "cargo",
            &[
                "test",
                "--workspace",
                "--test",
                "cluster",
                "--test",
                "server_cluster",
            ],
        )?;
        return postgres_suites(&pg);
    }
    let env = pg.env();
    let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
    step_with("command", &root(), &env, args[0], &args[1..])
}

/// The PostgreSQL server the tests use: the one at 127.0.0.1:5432 when it lets the
/// `postgres` user in without a password, else a throwaway cluster on a free port in a
/// temporary directory (installing Debian's postgresql package when it is missing), stopped
/// and removed when this is dropped, also on failure. Each test makes a database of its own,
/// named with this run's prefix; on a shared server they are dropped at the end.
struct Postgres {
    url: String,
    prefix: String,
    /// The throwaway cluster: its `bin` directory and its root directory.
    own: Option<(PathBuf, PathBuf)>,
}

impl Postgres {
    fn start() -> Result<Postgres, String> {
        let prefix = format!("triad_t{}", std::process::id());
        let local = "postgres://postgres@127.0.0.1:5432";
        if succeeds("psql", &[&format!("{local}/postgres"), "-qAtc", "SELECT 1"]) {
            println!("\n==> PostgreSQL: using the server at 127.0.0.1:5432");
            return Ok(Postgres {
                url: local.to_owned(),
                prefix,
                own: None,
            });
        }
        let bin = match postgres_bin() {
            Some(bin) => bin,
            None => {
                let quiet = [("DEBIAN_FRONTEND", "noninteractive")];
                step_with("apt-get update", &root(), &quiet, "apt-get", &["update"])?;
                step_with(
                    "install PostgreSQL for the tests",
                    &root(),
                    &quiet,
                    "apt-get",
                    &["install", "-y", "postgresql"],
                )?;
                postgres_bin().ok_or(
                    "no /usr/lib/postgresql/*/bin/initdb after installing Debian's postgresql package",
                )?
            }
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .map_err(|e| format!("no free port for PostgreSQL: {e}"))?
            .port();
        let dir = env::temp_dir().join(format!("triad-pg-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        let dir_s = dir.to_string_lossy().to_string();
        let own = Postgres {
            url: format!("postgres://postgres@127.0.0.1:{port}"),
            prefix,
            own: Some((bin.clone(), dir.clone())),
        };
        step("own the cluster directory", "chown", &["postgres:", &dir_s])?;
        let data = format!("{dir_s}/data");
        let initdb = bin.join("initdb").to_string_lossy().to_string();
        step(
            "a throwaway PostgreSQL cluster",
            "runuser",
            &[
                "-u",
                "postgres",
                "--",
                &initdb,
                "-D",
                &data,
                "-U",
                "postgres",
                "--auth=trust",
                "-E",
                "UTF8",
                "--locale=C.UTF-8",
            ],
        )?;
        let pg_ctl = bin.join("pg_ctl").to_string_lossy().to_string();
        let options = format!(
            "-c listen_addresses=127.0.0.1 -p {port} -c unix_socket_directories={dir_s} \
             -c max_connections=400 -c fsync=off"
        );
        step(
            "start PostgreSQL",
            "runuser",
            &[
                "-u",
                "postgres",
                "--",
                &pg_ctl,
                "-D",
                &data,
                "-l",
                &format!("{dir_s}/log"),
                "-w",
                "-t",
                "30",
                "-o",
                &options,
                "start",
            ],
        )?;
        Ok(own)
    }

    /// The environment the tests read.
    fn env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("TRIAD_TEST_POSTGRES", self.url.clone()),
            ("TRIAD_TEST_DB_PREFIX", self.prefix.clone()),
        ]
    }
}

impl Drop for Postgres {
    fn drop(&mut self) {
        match &self.own {
            Some((bin, dir)) => {
                let pg_ctl = bin.join("pg_ctl");
                let data = dir.join("data");
                let _ = Command::new("runuser")
                    .args(["-u", "postgres", "--"])
                    .arg(pg_ctl)
                    .arg("-D")
                    .arg(data)
                    .args(["-m", "immediate", "-w", "stop"])
                    .output();
                let _ = std::fs::remove_dir_all(dir);
            }
            None => {
                let admin = format!("{}/postgres", self.url);
                let list = Command::new("psql")
                    .args([&admin, "-qAtc"])
                    .arg(format!(
                        "SELECT datname FROM pg_database WHERE datname LIKE '{}\\_%'",
                        self.prefix
                    ))
                    .output();
                if let Ok(list) = list {
                    for name in String::from_utf8_lossy(&list.stdout).lines() {
                        let _ = Command::new("psql")
                            .args([&admin, "-qc"])
                            .arg(format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"))
                            .output();
                    }
                }
            }
        }
    }
}

/// The newest `/usr/lib/postgresql/*/bin` that has `initdb`.
fn postgres_bin() -> Option<PathBuf> {
    let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
        .ok()?
        .filter_map(Result::ok)
        .filter_map(|e| {
            let version = e.file_name().to_string_lossy().parse::<u32>().ok()?;
            let bin = e.path().join("bin");
            bin.join("initdb").is_file().then_some((version, bin))
        })
        .collect();
    found.sort();
    found.pop().map(|(_, bin)| bin)
}

#[cfg(test)]
mod tests {
    use super::FuzzFailure;

    #[test]
    fn a_failed_check_is_a_finding_and_a_python_error_alone_is_a_crash() {
        let finding = "=== FAILURES ===\n__ POST /api/queue __\n1. Server error\n";
        assert_eq!(FuzzFailure::of(finding), FuzzFailure::Finding);
        let crash = "=== ERRORS ===\n__ POST /api/challenges/{id}/accept __\nRuntime Error\n\n\
                     SystemError: AST constructor recursion depth mismatch\n";
        assert_eq!(FuzzFailure::of(crash), FuzzFailure::ToolCrash);
    }
}
