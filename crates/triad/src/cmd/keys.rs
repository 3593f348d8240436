//! `triad keygen` and `triad whoami`: the player's Ed25519 key file.

use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use rand::{rand_core::UnwrapErr, rngs::SysRng};
use triad_identity::KeyFile;

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
    let key = KeyFile::load(&path).with_context(|| format!("cannot read {}", path.display()))?;
    println!("{}", key.address_string());
    Ok(())
}
