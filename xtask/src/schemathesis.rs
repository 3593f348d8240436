//! The API fuzzed from its OpenAPI document with schemathesis, from a locked venv.

use super::*;
use crate::venv::locked_venv;

/// What `triad <args>` prints, trimmed; its standard error when it fails.
pub(crate) fn triad_output(bin: &Path, args: &[&str]) -> Result<String, String> {
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

/// The schemathesis release the API is fuzzed with, and the lock of everything it installs
/// (every transitive package pinned, with its hashes): a fresh machine gets exactly what the
/// last green run used.
pub(crate) const SCHEMATHESIS: &str = "4.32.5";
pub(crate) const SCHEMATHESIS_LOCK: &str = include_str!("../locks/schemathesis.txt");

/// The locked schemathesis, in `<target>/schemathesis-venv`; its `st`.
pub(crate) fn ensure_schemathesis() -> Result<PathBuf, String> {
    let venv = locked_venv(
        "schemathesis-venv",
        &format!("schemathesis {SCHEMATHESIS}"),
        "schemathesis.txt",
        SCHEMATHESIS_LOCK,
    )?;
    Ok(venv.join("bin").join("st"))
}

/// What a failed schemathesis run was, read from its output: a finding in Triad (a failed
/// check) or a crash of the tool itself (a Python error inside schemathesis or hypothesis,
/// which says nothing about Triad).
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum FuzzFailure {
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
pub(crate) struct ServeChild(std::process::Child);

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
pub(crate) fn api_schema_fuzz(soak: bool) -> Result<(), String> {
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
