//! `triad export` and `triad play --from`: a match saved from a real server in notation,
//! and records read back in the terminal.

mod support;

use std::process::Command;

use support::{Server, TTT_TOP_ROW, new_key, nth, run_to_exit};
use triad_engine::notation::{self, GameResult};

fn triad(args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_triad"));
    cmd.args(args).env("NO_COLOR", "1");
    cmd
}

#[tokio::test]
async fn export_saves_the_servers_record_and_play_from_shows_it_over() {
    let dir = tempfile::tempdir().unwrap();
    let server = Server::start(dir.path(), &new_key().address_string(), &[]).await;
    let (alice, bob) = (
        server.api.login(&new_key()).await,
        server.api.login(&new_key()).await,
    );
    let id = server
        .api
        .challenge_accepted(&alice, &bob, "tic-tac-toe", 0)
        .await;
    for n in 1..=5 {
        let who = if n % 2 == 1 { &alice } else { &bob };
        server.api.play(who, id, nth(&TTT_TOP_ROW, n)).await;
    }
    let base = server.api.base.clone();
    let file = dir.path().join("game.txt");
    let (status, _, err) = run_to_exit(
        triad(&[
            "export",
            &id.to_string(),
            "--server",
            &base,
            "-o",
            file.to_str().unwrap(),
        ]),
        dir.path(),
        "export",
    )
    .await;
    assert!(status.success(), "{err}");
    assert!(
        err.contains(&format!("Saved match {id} (tic-tac-toe, 5 moves, 1-0)")),
        "{err}"
    );
    let saved = std::fs::read_to_string(&file).unwrap();
    let served = reqwest::get(format!("{base}/api/matches/{id}/notation"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(saved, served);
    let record = notation::parse(&saved).unwrap();
    assert_eq!(record.result, GameResult::FirstWon);
    assert_eq!(record.moves.len(), 5);
    assert!(
        saved.contains(&format!("[First \"{}\"]", alice.address)),
        "{saved}"
    );

    // To standard output, the same text.
    let (status, out, err) = run_to_exit(
        triad(&["export", &id.to_string(), "--server", &base]),
        dir.path(),
        "stdout",
    )
    .await;
    assert!(status.success(), "{err}");
    assert_eq!(out, saved);

    // An unknown match: the server's refusal, and no file.
    let missing = dir.path().join("missing.txt");
    let (status, _, err) = run_to_exit(
        triad(&[
            "export",
            "999",
            "--server",
            &base,
            "-o",
            missing.to_str().unwrap(),
        ]),
        dir.path(),
        "unknown",
    )
    .await;
    assert!(!status.success());
    assert!(err.contains("unknown_match (404 Not Found)"), "{err}");
    assert!(!missing.exists());

    // The finished game, shown and not continued.
    let (status, out, err) = run_to_exit(
        triad(&["play", "--from", file.to_str().unwrap()]),
        dir.path(),
        "over",
    )
    .await;
    assert!(status.success(), "{err}");
    assert!(
        out.contains("is over after 5 moves: X won (win). Nothing is left to play."),
        "{out}"
    );
    assert!(out.contains("[X]|[X]|[X]"), "{out}");
}

#[tokio::test]
async fn play_from_goes_on_from_the_records_position_and_names_a_bad_line() {
    let dir = tempfile::tempdir().unwrap();
    let game = dir.path().join("game.txt");
    // X in the centre, O in a corner; X goes on with 9, 3, 7 against O's 2, 8.
    std::fs::write(&game, "[Game \"tic-tac-toe\"]\n\n1. X5 {opening} O1 *\n").unwrap();
    let mut cmd = triad(&["play", "--from", game.to_str().unwrap(), "--vs", "human"]);
    let input = dir.path().join("input");
    std::fs::write(&input, "9\n2\n3\n8\n7\n").unwrap();
    cmd.stdin(std::fs::File::open(&input).unwrap());
    let (status, out, err) = run_to_exit(cmd, dir.path(), "continue").await;
    assert!(status.success(), "{out}{err}");
    assert!(out.contains("Going on after 2 moves."), "{out}");
    assert!(
        out.ends_with("X wins with three in a row on squares 3, 5, 7.\n"),
        "{out}"
    );

    // An SOS record with an illegal move: the file, line and column, and nothing played.
    let bad = dir.path().join("bad.txt");
    std::fs::write(&bad, "[Game \"sos\"]\n1. S5 O5\n").unwrap();
    let (status, out, err) = run_to_exit(
        triad(&["play", "--from", bad.to_str().unwrap()]),
        dir.path(),
        "bad",
    )
    .await;
    assert!(!status.success());
    assert_eq!(out, "");
    assert!(
        err.contains("bad.txt: line 2, column 7: O5 is illegal: that cell is already taken"),
        "{err}"
    );
    assert!(err.contains("(notation_illegal_move)"), "{err}");

    // Not notation at all, and a file that is not there.
    std::fs::write(&bad, "hello\n").unwrap();
    let (status, _, err) = run_to_exit(
        triad(&["play", "--from", bad.to_str().unwrap()]),
        dir.path(),
        "hello",
    )
    .await;
    assert!(!status.success());
    assert!(
        err.contains("bad.txt: line 1, column 1: the record does not say its game"),
        "{err}"
    );
    let (status, _, err) = run_to_exit(
        triad(&["play", "--from", "/no/such/file"]),
        dir.path(),
        "none",
    )
    .await;
    assert!(!status.success());
    assert!(err.contains("cannot read /no/such/file"), "{err}");
    // The file says the game: --game with it is refused.
    let (status, _, err) = run_to_exit(
        triad(&["play", "--from", game.to_str().unwrap(), "--game", "sos"]),
        dir.path(),
        "both",
    )
    .await;
    assert_eq!(status.code(), Some(2), "{err}");
}
