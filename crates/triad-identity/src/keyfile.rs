//! The key file that `triad keygen` writes and `triad whoami` and logins read.

use std::borrow::Cow;
use std::ffi::OsString;
use std::fmt;
use std::fs::{DirBuilder, File};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use ed25519_dalek::{SigningKey, VerifyingKey};
use rand::CryptoRng;
use serde::Deserialize;
use zeroize::Zeroizing;

use crate::address::{address_of, decode_hex, format_address, parse_address};
use crate::error::KeyFileError;
use crate::signature::public_key_hex;

/// The environment variable that overrides [`KeyFile::default_path`].
pub const KEY_FILE_ENV: &str = "TRIAD_KEY_FILE";

/// The only `scheme` a key file may have.
const SCHEME: &str = "ed25519";

/// Far larger than any key file; bigger files are refused unread.
const MAX_KEY_FILE_LEN: usize = 4096;

/// A player's Ed25519 key pair, as stored in a key file.
///
/// `Debug` shows only the address; the secret key is zeroed in memory when the
/// `KeyFile` is dropped.
///
/// # Format
///
/// UTF-8 JSON, one object with exactly these four string fields, as written:
///
/// ```json
/// {
///   "scheme": "ed25519",
///   "secret_key": "<64 hex digits: the 32-byte Ed25519 secret key (RFC 8032 seed)>",
///   "public_key": "<64 hex digits: the 32-byte Ed25519 public key>",
///   "address": "0x<64 hex digits: the key's Sui address>"
/// }
/// ```
///
/// `secret_key` is the same 32 bytes the Sui SDK's `Ed25519Keypair.fromSecretKey`
/// takes. `public_key` and `address` are derived from it; they are stored so people
/// and scripts can read them without tools, and checked on load so a damaged or
/// hand-edited file is refused rather than silently signing as someone else.
/// Unknown fields are refused too, and any `scheme` other than `ed25519`.
///
/// # Permissions
///
/// [`KeyFile::save`] creates the file with mode `0600` (and missing parent
/// directories with mode `0700`) and replaces it atomically. [`KeyFile::load`]
/// *refuses* (not merely warns about) a file that group or others can access in
/// any way, as OpenSSH does for private keys: a library cannot know whether a
/// warning would be seen, and a secret key others can read is already compromised,
/// which the owner should learn and fix with `chmod 600`. On non-Unix platforms the
/// file system's own access control applies and no mode is checked.
///
/// # Example
///
/// ```
/// use rand::rand_core::UnwrapErr;
/// use rand::rngs::SysRng;
/// use triad_identity::KeyFile;
///
/// let dir = tempfile::tempdir()?;
/// let path = dir.path().join("triad").join("key.json"); // or KeyFile::default_path()?
///
/// let key = KeyFile::generate(&mut UnwrapErr(SysRng));
/// key.save(&path, false)?;
///
/// let loaded = KeyFile::load(&path)?;
/// assert_eq!(loaded.address(), key.address());
/// assert!(key.save(&path, false).is_err(), "an existing key is never overwritten silently");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone, PartialEq, Eq)]
pub struct KeyFile {
    signing_key: SigningKey,
}

impl KeyFile {
    /// A new key pair from 32 bytes of `rng`, which must be cryptographically
    /// secure.
    pub fn generate<R: CryptoRng + ?Sized>(rng: &mut R) -> KeyFile {
        let mut secret = Zeroizing::new([0; 32]);
        rng.fill_bytes(secret.as_mut());
        KeyFile {
            signing_key: SigningKey::from_bytes(&secret),
        }
    }

    /// Wraps an existing key pair.
    pub fn from_signing_key(signing_key: SigningKey) -> KeyFile {
        KeyFile { signing_key }
    }

    /// The key pair, for signing (see [`sign_ed25519`](crate::sign_ed25519)).
    pub fn signing_key(&self) -> &SigningKey {
        &self.signing_key
    }

    /// The public key.
    pub fn verifying_key(&self) -> VerifyingKey {
        self.signing_key.verifying_key()
    }

    /// The public key as 64 lowercase hex digits, as sent to the server.
    pub fn public_key_hex(&self) -> String {
        public_key_hex(&self.verifying_key())
    }

    /// The player's address (see [`address_of`]).
    pub fn address(&self) -> [u8; 32] {
        address_of(&self.verifying_key())
    }

    /// The player's address as `0x` and 64 lowercase hex digits.
    pub fn address_string(&self) -> String {
        format_address(&self.address())
    }

    /// Where the key file lives unless the user says otherwise:
    /// `$TRIAD_KEY_FILE` if set and not empty, else `triad/key.json` in the user's
    /// config directory (`$XDG_CONFIG_HOME`, or `~/.config`, on Linux; the
    /// platform's equivalent elsewhere, as the `dirs` crate defines it).
    ///
    /// # Errors
    ///
    /// [`KeyFileError::NoConfigDir`] if neither is available.
    pub fn default_path() -> Result<PathBuf, KeyFileError> {
        resolve_default_path(std::env::var_os(KEY_FILE_ENV), dirs::config_dir())
    }

    /// Writes the key file to `path`, with mode `0600` on Unix.
    ///
    /// Missing parent directories are created (mode `0700` on Unix). The file is
    /// written to a temporary file in the same directory, flushed to disk and then
    /// renamed into place, so `path` never holds a partial key. Unless `force` is
    /// true, an existing file at `path` is left alone and
    /// [`KeyFileError::AlreadyExists`] returned; the check and the rename are one
    /// atomic step, so a concurrent `save` cannot slip in between.
    ///
    /// # Errors
    ///
    /// [`KeyFileError::AlreadyExists`], or [`KeyFileError::Io`] naming the step
    /// that failed.
    pub fn save(&self, path: &Path, force: bool) -> Result<(), KeyFileError> {
        let dir = directory_of(path);
        create_private_dir(dir)?;
        if !force && path.symlink_metadata().is_ok() {
            return Err(KeyFileError::AlreadyExists {
                path: path.to_owned(),
            });
        }

        let io_error = |action: &'static str, path: &Path| {
            let path = path.to_owned();
            move |source| KeyFileError::Io {
                action,
                path,
                source,
            }
        };
        let mut builder = tempfile::Builder::new();
        builder.prefix(".triad-key-").suffix(".tmp");
        #[cfg(unix)]
        builder.permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600));
        let mut temp = builder
            .tempfile_in(dir)
            .map_err(io_error("create a temporary file in", dir))?;
        // The creation mode is filtered by the umask; set it exactly.
        #[cfg(unix)]
        temp.as_file()
            .set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))
            .map_err(io_error("set permissions on", temp.path()))?;
        temp.write_all(self.to_json().as_bytes())
            .map_err(io_error("write", temp.path()))?;
        temp.as_file()
            .sync_all()
            .map_err(io_error("flush", temp.path()))?;

        let persisted = if force {
            temp.persist(path)
        } else {
            temp.persist_noclobber(path)
        };
        // On failure the temporary file is deleted as `PersistError` drops.
        persisted.map_err(|err| match err.error.kind() {
            io::ErrorKind::AlreadyExists => KeyFileError::AlreadyExists {
                path: path.to_owned(),
            },
            _ => KeyFileError::Io {
                action: "write",
                path: path.to_owned(),
                source: err.error,
            },
        })?;
        sync_dir(dir);
        Ok(())
    }

    /// Reads and checks the key file at `path`.
    ///
    /// # Errors
    ///
    /// [`KeyFileError::NotFound`] if there is no file,
    /// [`KeyFileError::InsecurePermissions`] if group or others have any access to
    /// it (Unix), [`KeyFileError::Malformed`] if it is not a key file in the
    /// [documented format](KeyFile#format) or its fields disagree, and [`KeyFileError::Io`]
    /// for other operating-system errors.
    pub fn load(path: &Path) -> Result<KeyFile, KeyFileError> {
        let io_error = |action: &'static str| {
            move |source| KeyFileError::Io {
                action,
                path: path.to_owned(),
                source,
            }
        };
        let malformed = |problem: String| KeyFileError::Malformed {
            path: path.to_owned(),
            problem,
        };
        let file = match File::open(path) {
            Ok(file) => file,
            Err(err) if err.kind() == io::ErrorKind::NotFound => {
                return Err(KeyFileError::NotFound {
                    path: path.to_owned(),
                });
            }
            Err(err) => return Err(io_error("open")(err)),
        };
        // Inspect the opened file itself, not the path, which could change.
        let metadata = file.metadata().map_err(io_error("inspect"))?;
        if !metadata.is_file() {
            return Err(malformed("it is not a regular file".to_owned()));
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = metadata.permissions().mode() & 0o777;
            if mode & 0o077 != 0 {
                return Err(KeyFileError::InsecurePermissions {
                    path: path.to_owned(),
                    mode,
                });
            }
        }
        // Preallocate so reading never reallocates and strands unzeroed copies.
        let mut text = Zeroizing::new(String::with_capacity(MAX_KEY_FILE_LEN + 1));
        file.take(MAX_KEY_FILE_LEN as u64 + 1)
            .read_to_string(&mut text)
            .map_err(|err| match err.kind() {
                io::ErrorKind::InvalidData => malformed("it is not UTF-8 text".to_owned()),
                _ => io_error("read")(err),
            })?;
        if text.len() > MAX_KEY_FILE_LEN {
            return Err(malformed(format!(
                "it is larger than {MAX_KEY_FILE_LEN} bytes, far more than a key file"
            )));
        }
        KeyFile::from_json(&text).map_err(malformed)
    }

    /// The key file's text (see the [format](KeyFile#format)).
    fn to_json(&self) -> Zeroizing<String> {
        let secret_key = Zeroizing::new(hex::encode(self.signing_key.as_bytes()));
        // Built by hand: every value is hex, so nothing needs escaping, and the
        // preallocated buffer never reallocates and leaves copies of the secret.
        let mut json = Zeroizing::new(String::with_capacity(512));
        for part in [
            "{\n  \"scheme\": \"",
            SCHEME,
            "\",\n  \"secret_key\": \"",
            &secret_key,
            "\",\n  \"public_key\": \"",
            &self.public_key_hex(),
            "\",\n  \"address\": \"",
            &self.address_string(),
            "\"\n}\n",
        ] {
            json.push_str(part);
        }
        json
    }

    /// Parses and cross-checks a key file's text; the error says what is wrong,
    /// without key material.
    fn from_json(text: &str) -> Result<KeyFile, String> {
        #[derive(Deserialize)]
        #[serde(deny_unknown_fields)]
        struct Stored<'a> {
            #[serde(borrow)]
            scheme: Cow<'a, str>,
            #[serde(borrow)]
            secret_key: Cow<'a, str>,
            #[serde(borrow)]
            public_key: Cow<'a, str>,
            #[serde(borrow)]
            address: Cow<'a, str>,
        }

        let stored: Stored<'_> = serde_json::from_str(text).map_err(|err| {
            format!(
                "expected a JSON object with string fields scheme, secret_key, public_key and address ({err})"
            )
        })?;
        if stored.scheme != SCHEME {
            return Err(format!(
                "its scheme is {:?}, and only \"ed25519\" keys are supported",
                stored.scheme
            ));
        }
        let secret = Zeroizing::new(
            decode_hex::<32>("secret_key", &stored.secret_key).map_err(|err| err.to_string())?,
        );
        let key = KeyFile::from_signing_key(SigningKey::from_bytes(&secret));
        let public_key =
            decode_hex::<32>("public_key", &stored.public_key).map_err(|err| err.to_string())?;
        let address = parse_address(&stored.address).map_err(|err| err.to_string())?;
        let damaged = "the file is damaged or was edited; restore it from a backup";
        if public_key != *key.verifying_key().as_bytes() {
            return Err(format!(
                "public_key does not belong to secret_key; {damaged}"
            ));
        }
        if address != key.address() {
            return Err(format!("address does not belong to secret_key; {damaged}"));
        }
        Ok(key)
    }
}

impl fmt::Debug for KeyFile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyFile")
            .field("address", &self.address_string())
            .finish_non_exhaustive()
    }
}

/// [`KeyFile::default_path`] with its inputs passed in, so it can be tested without
/// touching the process environment.
fn resolve_default_path(
    key_file_env: Option<OsString>,
    config_dir: Option<PathBuf>,
) -> Result<PathBuf, KeyFileError> {
    if let Some(path) = key_file_env.filter(|path| !path.is_empty()) {
        return Ok(PathBuf::from(path));
    }
    config_dir
        .map(|dir| dir.join("triad").join("key.json"))
        .ok_or(KeyFileError::NoConfigDir)
}

/// The directory `path` is in; `.` for a bare file name.
fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// Creates `dir` and its missing ancestors, readable only by the owner on Unix.
fn create_private_dir(dir: &Path) -> Result<(), KeyFileError> {
    let mut builder = DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir).map_err(|source| KeyFileError::Io {
        action: "create directory",
        path: dir.to_owned(),
        source,
    })
}

/// Flushes a directory entry change (the rename) to disk where the platform allows.
///
/// Best effort: the key file itself is already complete and flushed, and some file
/// systems cannot sync a directory at all.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(dir) = File::open(dir) {
        let _ = dir.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key() -> KeyFile {
        KeyFile::from_signing_key(SigningKey::from_bytes(&[5; 32]))
    }

    #[test]
    fn json_has_the_documented_shape_and_round_trips() {
        let key = key();
        let json = key.to_json();
        let value: serde_json::Value = serde_json::from_str(&json).unwrap();
        let object = value.as_object().unwrap();
        assert_eq!(
            object.keys().map(String::as_str).collect::<Vec<_>>().len(),
            4
        );
        assert_eq!(object["scheme"], "ed25519");
        assert_eq!(object["secret_key"], "05".repeat(32));
        assert_eq!(object["public_key"], key.public_key_hex());
        assert_eq!(object["address"], key.address_string());
        assert!(json.starts_with("{\n  \"scheme\": \"ed25519\",\n  \"secret_key\": "));
        assert!(json.ends_with("\"\n}\n"));
        assert_eq!(KeyFile::from_json(&json), Ok(key));
    }

    #[test]
    fn inconsistent_or_unknown_content_is_refused() {
        let json = key().to_json();
        let other = KeyFile::from_signing_key(SigningKey::from_bytes(&[6; 32]));
        let cases = [
            (
                json.replace(&key().public_key_hex(), &other.public_key_hex()),
                "public_key does not belong",
            ),
            (
                json.replace(&key().address_string(), &other.address_string()),
                "address does not belong",
            ),
            (
                json.replace("\"ed25519\"", "\"secp256k1\""),
                "only \"ed25519\"",
            ),
            (
                json.replace("\"scheme\"", "\"comment\": \"\", \"scheme\""),
                "unknown field",
            ),
            (json.replace("\"address\": ", "\"addr\": "), "unknown field"),
            (
                json.replace(&"05".repeat(32), &"05".repeat(31)),
                "secret_key must be exactly 64 hex digits",
            ),
            ("[]".to_owned(), "expected a JSON object"),
            (String::new(), "expected a JSON object"),
        ];
        for (text, expected) in cases {
            let problem = KeyFile::from_json(&text).unwrap_err();
            assert!(
                problem.contains(expected),
                "{problem:?} should contain {expected:?}"
            );
            assert!(
                !problem.contains(&"05".repeat(32)),
                "no key material in {problem:?}"
            );
        }
    }

    #[test]
    fn debug_shows_the_address_and_not_the_secret() {
        let debug = format!("{:?}", key());
        assert!(debug.contains(&key().address_string()));
        assert!(!debug.contains(&"05".repeat(32)));
    }

    #[test]
    fn a_bare_file_name_is_saved_in_the_current_directory() {
        assert_eq!(directory_of(Path::new("key.json")), Path::new("."));
        assert_eq!(directory_of(Path::new("a/key.json")), Path::new("a"));
        assert_eq!(directory_of(Path::new("/key.json")), Path::new("/"));
    }

    #[test]
    fn default_path_prefers_the_environment_variable() {
        let config = Some(PathBuf::from("/home/p/.config"));
        assert_eq!(
            resolve_default_path(Some("/keys/k.json".into()), config.clone()).unwrap(),
            PathBuf::from("/keys/k.json")
        );
        assert_eq!(
            resolve_default_path(Some(OsString::new()), config.clone()).unwrap(),
            PathBuf::from("/home/p/.config/triad/key.json")
        );
        assert_eq!(
            resolve_default_path(None, config).unwrap(),
            PathBuf::from("/home/p/.config/triad/key.json")
        );
        assert!(matches!(
            resolve_default_path(None, None),
            Err(KeyFileError::NoConfigDir)
        ));
    }
}
