//! Triad's agent protocols driven by the clients their users run: the official Python MCP
//! and A2A SDKs (pytest, `interop/python`), and the official JavaScript A2A SDK and the MCP
//! Inspector's CLI (`node --test`, `interop/js`), each against real `triad serve` processes.

use super::*;
use crate::node::npm_ci;
use crate::venv::locked_venv;

/// The lock of the Python clients' venv: `mcp`, `a2a-sdk` and pytest, every transitive
/// package pinned with its hashes.
const INTEROP_LOCK: &str = include_str!("../locks/interop.txt");

/// Runs both suites against the binary the workspace's tests built.
pub(crate) fn interop() -> Result<(), String> {
    if !succeeds("node", &["--version"]) {
        return Err("node is needed for the JavaScript clients' tests; install nodejs".into());
    }
    let venv = locked_venv(
        "interop-venv",
        "the official Python MCP and A2A clients",
        "interop.txt",
        INTEROP_LOCK,
    )?;
    let js = root().join("interop/js");
    npm_ci(
        "the official JavaScript A2A client and the MCP Inspector",
        &js,
    )?;
    let bin = build_triad("for the official clients' tests")?;
    let bin = bin.to_string_lossy();
    let python = venv.join("bin").join("python");
    step_with(
        "the official Python clients (MCP, A2A) against triad serve",
        &root().join("interop/python"),
        &[("TRIAD_BIN", &bin)],
        &python.to_string_lossy(),
        &["-m", "pytest", "-q", "-p", "no:cacheprovider", "."],
    )
    .map_err(|e| format!("{e}: a finding in Triad's MCP or A2A server (or in the test)"))?;
    step_with(
        "the official JavaScript clients (A2A, MCP Inspector) against triad serve",
        &js,
        &[("TRIAD_BIN", &bin)],
        "node",
        &["--test", "--test-concurrency=1", "tests/"],
    )
    .map_err(|e| format!("{e}: a finding in Triad's MCP or A2A server (or in the test)"))
}
