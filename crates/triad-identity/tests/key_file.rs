//! Key files on a real file system.

use std::fs;
use std::path::Path;

use rand::SeedableRng;
use rand_chacha::ChaCha20Rng;
use triad_identity::{KeyFile, KeyFileError, parse_address};

fn key(seed: u64) -> KeyFile {
    KeyFile::generate(&mut ChaCha20Rng::seed_from_u64(seed))
}

/// Names in `dir`, sorted, to see that no temporary files are left behind.
fn entries(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|entry| entry.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn save_then_load_round_trips_and_creates_parents() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("config").join("triad").join("key.json");
    let key = key(1);
    key.save(&path, false).unwrap();

    let loaded = KeyFile::load(&path).unwrap();
    assert_eq!(loaded, key);
    assert_eq!(loaded.address_string(), key.address_string());
    assert_eq!(entries(path.parent().unwrap()), ["key.json"]);

    let json: serde_json::Value =
        serde_json::from_str(&fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(json["scheme"], "ed25519");
    assert_eq!(json["public_key"], key.public_key_hex());
    assert_eq!(
        parse_address(json["address"].as_str().unwrap()),
        Ok(key.address())
    );
    assert_eq!(
        json["secret_key"],
        hex::encode(key.signing_key().as_bytes())
    );
}

#[test]
fn distinct_seeds_give_distinct_keys() {
    assert_ne!(key(1).address(), key(2).address());
    assert_eq!(key(3), key(3));
}

#[cfg(unix)]
#[test]
fn files_and_new_directories_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("new").join("key.json");
    key(1).save(&path, false).unwrap();
    let mode = |path: &Path| fs::metadata(path).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&path), 0o600);
    assert_eq!(mode(path.parent().unwrap()), 0o700);
    key(2).save(&path, true).unwrap();
    assert_eq!(mode(&path), 0o600);
}

#[test]
fn an_existing_key_is_kept_unless_forced() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("key.json");
    let (first, second) = (key(1), key(2));
    first.save(&path, false).unwrap();

    let err = second.save(&path, false).unwrap_err();
    assert!(matches!(err, KeyFileError::AlreadyExists { .. }), "{err:?}");
    assert_eq!(err.code(), "key_file_exists");
    assert!(err.to_string().contains("--force"));
    assert_eq!(KeyFile::load(&path).unwrap(), first);

    second.save(&path, true).unwrap();
    assert_eq!(KeyFile::load(&path).unwrap(), second);
    assert_eq!(entries(dir.path()), ["key.json"]);
}

#[test]
fn a_missing_file_says_how_to_create_one() {
    let dir = tempfile::tempdir().unwrap();
    let err = KeyFile::load(&dir.path().join("absent.json")).unwrap_err();
    assert!(matches!(err, KeyFileError::NotFound { .. }), "{err:?}");
    assert_eq!(err.code(), "key_file_not_found");
    assert!(err.to_string().contains("triad keygen"));
}

#[cfg(unix)]
#[test]
fn files_others_can_access_are_refused() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("key.json");
    key(1).save(&path, false).unwrap();
    for mode in [0o644, 0o640, 0o604, 0o660, 0o601, 0o610] {
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        let err = KeyFile::load(&path).unwrap_err();
        assert!(
            matches!(err, KeyFileError::InsecurePermissions { mode: m, .. } if m == mode),
            "{mode:o}: {err:?}"
        );
        assert_eq!(err.code(), "key_file_insecure_permissions");
        assert!(err.to_string().contains("chmod 600"), "{err}");
    }
    for mode in [0o600, 0o400] {
        fs::set_permissions(&path, fs::Permissions::from_mode(mode)).unwrap();
        assert!(KeyFile::load(&path).is_ok(), "{mode:o}");
    }
}

#[test]
fn files_that_are_not_key_files_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let write = |name: &str, contents: &[u8]| {
        let path = dir.path().join(name);
        fs::write(&path, contents).unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            fs::set_permissions(&path, fs::Permissions::from_mode(0o600)).unwrap();
        }
        path
    };
    let cases = [
        write("garbage", b"not json"),
        write("binary", &[0xff, 0xfe, 0x00]),
        write("large", &vec![b' '; 10_000]),
        write("empty", b""),
        dir.path().to_owned(),
    ];
    for path in cases {
        let err = KeyFile::load(&path).unwrap_err();
        assert!(
            matches!(err, KeyFileError::Malformed { .. }),
            "{}: {err:?}",
            path.display()
        );
        assert_eq!(err.code(), "key_file_malformed");
    }
}

#[test]
fn saving_over_a_directory_fails_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("occupied");
    fs::create_dir(&path).unwrap();
    fs::write(path.join("inside"), b"x").unwrap();
    let err = key(1).save(&path, true).unwrap_err();
    assert!(matches!(err, KeyFileError::Io { .. }), "{err:?}");
    assert_eq!(entries(dir.path()), ["occupied"]);
}
