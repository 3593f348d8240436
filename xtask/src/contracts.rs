//! The Stylus contracts' checks (their own workspace and toolchain).

use super::*;
use crate::node::npm_ci;

/// The Stylus contracts in `contracts/`, a workspace of its own (see its README): format,
/// clippy, the wasm release builds, their compressed size as Stylus measures it, every
/// contract test (with the differential test against the Solidity reference), and the check
/// that the pinned solc still compiles that reference to the committed bytecode. It uses the
/// toolchain `contracts/rust-toolchain.toml` pins (installed if missing) and
/// `contracts/target`.
pub(crate) fn contracts() -> Result<(), String> {
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
