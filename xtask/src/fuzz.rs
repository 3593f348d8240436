//! Fuzzing: the cargo-fuzz targets, built once into one target directory and run for a
//! while each, and what a failed run was (a finding in Triad or the fuzzer failing).

use super::*;

/// The cargo-fuzz release the fuzz targets are built with.
pub(crate) const CARGO_FUZZ: &str = "0.13.2";

/// Installs cargo-fuzz [`CARGO_FUZZ`] unless that very release is installed (another one is
/// replaced, so every run builds the targets with the same flags).
pub(crate) fn ensure_cargo_fuzz() -> Result<(), String> {
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
pub(crate) const FUZZ_TARGETS: &[(&str, &str, bool)] = &[
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

/// The fuzz directory whose short run (the default 20 s) is built without optimisation. Its
/// instrumented build is the whole server, which optimised at one codegen unit a crate takes
/// three times as long, for about 30× fewer executions in 20 s. A short run is a check that
/// the target builds, replays its seed corpus and holds for a few thousand new inputs; the
/// long runs (`TRIAD_SOAK=1`), where executions are what a run is for, are optimised. The
/// other directories build in under a minute optimised, and unoptimised their signature
/// checks run 60 – 110× slower, so their short runs stay optimised. RELIABILITY.md
/// ("Fuzzing every decoder of outside input") has the figures and how they were measured.
const UNOPTIMISED_WHEN_SHORT: &str = "crates/triad-server/fuzz";

/// The flags every fuzz build and run shares: no sanitizer (the code has no `unsafe`; the
/// targets look for panics, hangs and runaway memory), and one target directory for all the
/// fuzz crates (`<target>/fuzz`), so what they have in common (libFuzzer, the Triad crates
/// below the server, serde …) is compiled once. A build and a run with the same flags share
/// one build.
///
/// An optimised build is cargo-fuzz's default (release, one codegen unit a crate) with debug
/// assertions and overflow checks, which cargo-fuzz turns on unless asked for `--release`
/// alone; the other kind is unoptimised (`--dev`, see [`UNOPTIMISED_WHEN_SHORT`]).
pub(crate) fn fuzz_flags<'a>(
    dir: &'a str,
    shared_target: &'a str,
    optimised: bool,
) -> [&'a str; 7] {
    [
        "--fuzz-dir",
        dir,
        "-s",
        "none",
        "--target-dir",
        shared_target,
        build_flag(optimised),
    ]
}

/// The flag that asks cargo-fuzz for an optimised build or an unoptimised one (see
/// [`fuzz_flags`]).
fn build_flag(optimised: bool) -> &'static str {
    if optimised {
        "--debug-assertions"
    } else {
        "--dev"
    }
}

/// A run of every fuzz target for `seconds` each; an input that takes over 10 s is a hang
/// and fails the run, as a panic does. Each fuzz directory is built first, as a step of its
/// own, and its targets then run on that build.
pub(crate) fn fuzz(seconds: u64) -> Result<(), String> {
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
        let optimised = long || dir != UNOPTIMISED_WHEN_SHORT;
        let flags = fuzz_flags(dir, &shared_target, optimised);
        if !built.contains(&dir) {
            // `cargo fuzz build` has no `--locked`.
            lock_is_current(dir)?;
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
                     `cargo fuzz run --fuzz-dir {dir} -s none {} {target} {}`)",
                    input.display(),
                    build_flag(optimised),
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
pub(crate) fn files_in(dir: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(dir)
        .map(|d| d.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default()
}
