//! `triad keygen`, `triad whoami` and `triad login`: the player's Ed25519 key file, and
//! logging in to a server with it.

use std::{
    io::{BufRead, IsTerminal, Write},
    path::{Path, PathBuf},
};

use anyhow::Context;
use clap::Args;
use rand::{rand_core::UnwrapErr, rngs::SysRng};
use triad_identity::{KeyFile, KeyFileError};

/// Make a new Ed25519 key and save it (mode 0600) in your config directory.
#[derive(Debug, Args)]
pub(crate) struct KeygenArgs {
    /// Where to write the key [default: $TRIAD_KEY_FILE, else <config dir>/triad/key.json].
    #[arg(long)]
    key_file: Option<PathBuf>,
    /// Replace an existing key file (its key is lost for good).
    #[arg(long)]
    force: bool,
}

/// Print the address of your key.
#[derive(Debug, Args)]
pub(crate) struct WhoamiArgs {
    /// The key file [default: $TRIAD_KEY_FILE, else <config dir>/triad/key.json].
    #[arg(long)]
    key_file: Option<PathBuf>,
}

fn path(given: Option<PathBuf>) -> anyhow::Result<PathBuf> {
    match given {
        Some(p) => Ok(p),
        None => KeyFile::default_path().context("cannot find where to keep the key"),
    }
}

/// Loads the key file at `path`. A file other users may read (a key exported by the web
/// app and saved by a browser is `0644`) is refused with the command that fixes it; when a
/// person is at the terminal (standard input and error are terminals), they are asked
/// first whether to make it private (`0600`) and go on.
///
/// # Errors
/// When the file cannot be read or is not a key file, or when its mode stays open.
pub(crate) fn load_key(path: &Path) -> anyhow::Result<KeyFile> {
    match KeyFile::load(path) {
        Err(refused @ KeyFileError::InsecurePermissions { mode, .. })
            if std::io::stdin().is_terminal() && std::io::stderr().is_terminal() =>
        {
            if !ask_to_make_private(path, mode)? {
                // The refusal, with its `chmod 600` advice.
                return Err(anyhow::Error::new(refused))
                    .with_context(|| format!("cannot read {}", path.display()));
            }
            make_private(path)?;
            KeyFile::load(path).with_context(|| format!("cannot read {}", path.display()))
        }
        loaded => loaded.with_context(|| format!("cannot read {}", path.display())),
    }
}

/// Asks on the terminal whether to make a key file private; no (the default) unless the
/// answer starts with `y`.
fn ask_to_make_private(path: &Path, mode: u32) -> anyhow::Result<bool> {
    let mut err = std::io::stderr().lock();
    write!(
        err,
        "The key file {} can be read by other users (mode {mode:03o}).\n\
         Make it private, as `chmod 600 {}` does? [y/N] ",
        path.display(),
        path.display()
    )?;
    err.flush()?;
    let mut answer = String::new();
    std::io::stdin().lock().read_line(&mut answer)?;
    Ok(answer.trim().to_ascii_lowercase().starts_with('y'))
}

/// Sets a file's mode to `0600`: read and write for its owner only.
fn make_private(path: &Path) -> anyhow::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .with_context(|| format!("cannot change the mode of {}", path.display()))?;
        eprintln!("{} is now private (mode 600).", path.display());
    }
    Ok(())
}

pub(crate) fn keygen(args: KeygenArgs) -> anyhow::Result<()> {
    let path = path(args.key_file)?;
    let key = KeyFile::generate(&mut UnwrapErr(SysRng));
    key.save(&path, args.force)
        .with_context(|| format!("cannot write {}", path.display()))?;
    println!("{}", key.address_string());
    eprintln!("key saved in {}", path.display());
    Ok(())
}

pub(crate) fn whoami(args: WhoamiArgs) -> anyhow::Result<()> {
    let path = path(args.key_file)?;
    let key = load_key(&path)?;
    println!("{}", key.address_string());
    Ok(())
}

/// Log in to a server with your key and print a bearer token (for scripts and curl).
#[derive(Debug, Args)]
pub(crate) struct LoginArgs {
    /// The server.
    #[arg(long, env = "TRIAD_SERVER", default_value = "http://127.0.0.1:8080")]
    server: String,
    /// The key file [default: $TRIAD_KEY_FILE, else <config dir>/triad/key.json].
    #[arg(long)]
    key_file: Option<PathBuf>,
}

/// Signs the server's login challenge with `key` and returns the token. An agent logs in
/// with `bot`: the server marks the account a bot, for good.
pub(crate) async fn log_in(
    client: &reqwest::Client,
    server: &str,
    key: &KeyFile,
    bot: bool,
) -> anyhow::Result<String> {
    let server = server.trim_end_matches('/');
    let challenge: serde_json::Value = answer(
        client
            .post(format!("{server}/api/auth/challenge"))
            .json(&serde_json::json!({ "public_key": key.public_key_hex() }))
            .send()
            .await
            .with_context(|| format!("cannot reach {server}"))?,
    )
    .await?;
    let message = challenge["message"]
        .as_str()
        .context("the server sent no message to sign")?;
    let signature = triad_identity::sign_ed25519(key.signing_key(), message.as_bytes());
    let session: serde_json::Value = answer(
        client
            .post(format!("{server}/api/auth/login"))
            .json(&serde_json::json!({
                "challenge_id": challenge["challenge_id"],
                "public_key": key.public_key_hex(),
                "signature": signature,
                "bot": bot,
            }))
            .send()
            .await?,
    )
    .await?;
    session["token"]
        .as_str()
        .map(str::to_owned)
        .context("the server sent no token")
}

/// The JSON body of a successful response, or the server's error message.
pub(crate) async fn answer(response: reqwest::Response) -> anyhow::Result<serde_json::Value> {
    let status = response.status();
    let body: serde_json::Value = response.json().await.unwrap_or(serde_json::Value::Null);
    if status.is_success() {
        Ok(body)
    } else {
        let message = body["message"].as_str().unwrap_or("no message");
        let name = body["error"].as_str().unwrap_or("error");
        anyhow::bail!("{name} ({status}): {message}")
    }
}

pub(crate) fn login(args: LoginArgs) -> anyhow::Result<()> {
    let path = path(args.key_file)?;
    let key = load_key(&path)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let token = runtime.block_on(log_in(&reqwest::Client::new(), &args.server, &key, false))?;
    println!("{token}");
    Ok(())
}
