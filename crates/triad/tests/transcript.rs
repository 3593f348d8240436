//! `triad transcript` and `triad verify`: the real binary fetches a finished match's
//! transcript from a real server and checks it offline; a tampered file fails, saying
//! where, with a non-zero exit status.

mod support;

use std::process::Command;

use support::{E, Server, TTT_TOP_ROW, new_key, nth, run_to_exit};

fn triad(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_triad"));
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("TRIAD_") {
            cmd.env_remove(name);
        }
    }
    cmd.args(args);
    cmd
}

#[tokio::test]
async fn triad_verify_checks_an_exported_transcript_offline_and_refuses_a_tampered_one() {
    let dir = tempfile::tempdir().unwrap();
    let owner_key = new_key();
    let server = Server::start(dir.path(), &owner_key.address_string(), &[]).await;
    let api = &server.api;
    let owner = api.login(&owner_key).await;
    let alice = api.login(&new_key()).await;
    let bob = api.login(&new_key()).await;
    for p in [&alice, &bob] {
        api.deposit(&owner, p, 10 * E).await.ok();
    }
    let id = api.challenge_accepted(&alice, &bob, "tic-tac-toe", E).await;
    for n in 1..=5 {
        let p = if n % 2 == 1 { &alice } else { &bob };
        api.play(p, id, nth(&TTT_TOP_ROW, n)).await;
    }
    let base = api.base.clone();
    let file = dir.path().join("match.json");
    let file_arg = file.to_str().unwrap();
    let (status, _, err) = run_to_exit(
        triad(&[
            "transcript",
            &id.to_string(),
            "--server",
            &base,
            "-o",
            file_arg,
        ]),
        dir.path(),
        "transcript",
    )
    .await;
    assert!(status.success(), "{err}");

    // The key, fetched once; from here on the server is not needed.
    let key = api
        .get("/.well-known/triad-transcript-key", None)
        .await
        .ok();
    let key_hex = key["public_key"].as_str().unwrap().to_owned();
    let key_file = dir.path().join("key.json");
    std::fs::write(&key_file, key.to_string()).unwrap();
    let (status, out, err) = run_to_exit(
        triad(&["verify", file_arg, "--server", &base]),
        dir.path(),
        "verify-server",
    )
    .await;
    assert!(status.success(), "{err}");
    assert!(out.contains(&format!("verified: match {id}")), "{out}");
    assert!(out.contains("5 moves by the rules; ended: win"), "{out}");
    assert!(
        out.contains(&format!("paid 1800000 to {}", alice.address)),
        "{out}"
    );
    assert!(out.contains("to the reserve: 200000"), "{out}");
    drop(server);
    for (name, args) in [
        ("verify-key", ["--key", key_hex.as_str()]),
        (
            "verify-key-file",
            ["--key-file", key_file.to_str().unwrap()],
        ),
    ] {
        let mut all = vec!["verify", file_arg];
        all.extend(args);
        let (status, out, err) = run_to_exit(triad(&all), dir.path(), name).await;
        assert!(status.success(), "{name}: {err}");
        assert!(out.contains("verified"), "{name}: {out}");
    }

    // Without a key it says which to give.
    let (status, _, err) = run_to_exit(triad(&["verify", file_arg]), dir.path(), "no-key").await;
    assert!(!status.success());
    assert!(
        err.contains("--key HEX, --key-file FILE or --server URL"),
        "{err}"
    );

    // A changed move: the chain breaks at that event's link.
    let text = std::fs::read_to_string(&file).unwrap();
    let moved = "\\\"cell\\\":3";
    assert!(text.contains(moved), "{text}");
    let tampered = dir.path().join("tampered.json");
    std::fs::write(&tampered, text.replacen(moved, "\\\"cell\\\":5", 1)).unwrap();
    let (status, _, err) = run_to_exit(
        triad(&["verify", tampered.to_str().unwrap(), "--key", &key_hex]),
        dir.path(),
        "verify-tampered",
    )
    .await;
    assert!(!status.success());
    assert!(
        err.contains("does not verify: field links: links["),
        "{err}"
    );
    assert!(
        err.contains("is not the chain's link after events["),
        "{err}"
    );

    // One byte of the signature.
    let at = text.find("\"signature\": \"").unwrap() + 14;
    let mut bytes = text.clone().into_bytes();
    bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
    std::fs::write(&tampered, &bytes).unwrap();
    let (status, _, err) = run_to_exit(
        triad(&["verify", tampered.to_str().unwrap(), "--key", &key_hex]),
        dir.path(),
        "verify-signature",
    )
    .await;
    assert!(!status.success());
    assert!(
        err.contains("field signature: is not the server key's signature"),
        "{err}"
    );

    // A space more in the file.
    std::fs::write(&tampered, text.replacen(": ", ":  ", 1)).unwrap();
    let (status, _, err) = run_to_exit(
        triad(&["verify", tampered.to_str().unwrap(), "--key", &key_hex]),
        dir.path(),
        "verify-space",
    )
    .await;
    assert!(!status.success());
    assert!(
        err.contains("the file: is not in the transcript's one form"),
        "{err}"
    );

    // Another key.
    let other = new_key().public_key_hex();
    let (status, _, err) = run_to_exit(
        triad(&["verify", file_arg, "--key", &other]),
        dir.path(),
        "verify-other-key",
    )
    .await;
    assert!(!status.success());
    assert!(
        err.contains("field server_key.public_key: is not the server's key you trust"),
        "{err}"
    );
}
