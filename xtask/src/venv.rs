//! Python venvs made from hash-pinned locks (`xtask/locks/*.txt`, compiled by pip-compile).

use super::*;

/// A venv in `<target>/<name>` holding exactly what `lock` pins (the text of
/// `xtask/locks/<lock_file>`), unless one was made from this very lock before (its copy of
/// the lock says so). A venv from another lock is made anew, never patched. Its directory.
pub(crate) fn locked_venv(
    name: &str,
    what: &str,
    lock_file: &str,
    lock: &str,
) -> Result<PathBuf, String> {
    let venv = target_dir()?.join(name);
    let python = venv.join("bin").join("python");
    let stamp = venv.join("triad-lock.txt");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == lock) && python.is_file() {
        return Ok(venv);
    }
    let _ = std::fs::remove_dir_all(&venv);
    let venv_text = venv.to_string_lossy();
    step(
        &format!("make a venv for {what}"),
        "python3",
        &["-m", "venv", &venv_text],
    )?;
    let lock_path = root().join("xtask/locks").join(lock_file);
    let pip = venv.join("bin").join("pip");
    step(
        &format!("install {what} from its lock"),
        &pip.to_string_lossy(),
        &[
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "--no-deps",
            "--require-hashes",
            "--only-binary=:all:",
            "-r",
            &lock_path.to_string_lossy(),
        ],
    )
    .map_err(|e| {
        format!(
            "{e}: pip could not install what {} pins (PyPI or the network); not a finding in \
             Triad",
            lock_path.display()
        )
    })?;
    std::fs::write(&stamp, lock).map_err(|e| format!("{}: {e}", stamp.display()))?;
    Ok(venv)
}
