//! An outage of the whole service costs nobody time: the real `triad serve`, on a real
//! SQLite file, is killed mid-game and comes back two hours later, far past the move
//! timeout; the player to move has the time they had, so the opponent's timeout claim is
//! refused (110 `deadline_not_reached`) and the move is taken. A plain restart gives
//! nothing back. On PostgreSQL (`TRIAD_TEST_POSTGRES`; `cargo xtask pg -- cargo test -p
//! triad --test outage`), a node that comes back while another node lives gives nothing
//! back, and the first node back after every node was down gives the outage back, once.
//!
//! The servers run the dev clock, which stands still unless moved, over a restart too: a
//! test makes the outage by starting the next run's clock later (`--dev-clock-start-ms`).

mod support;

use std::time::Duration;

use support::{Api, Mv, Server, free_port, fresh_database, new_key};

const HOUR_MS: u64 = 60 * 60 * 1000;

const X_CENTRE: Mv = Mv {
    seq: 1,
    cell: 4,
    mark: "X",
};
const O_CORNER: Mv = Mv {
    seq: 2,
    cell: 0,
    mark: "O",
};

/// The server's time, and the deadline of match `id`.
async fn clock_and_deadline(api: &Api, id: u64) -> (u64, u64) {
    let now = api.advance(0).await;
    let m = api.match_(id).await;
    assert_eq!(m["deadline"]["kind"], "timeout");
    (now, m["deadline"]["at_ms"].as_u64().expect("a deadline"))
}

/// Waits for the heartbeat to record the clock as it stands (one beat a second).
async fn a_beat() {
    tokio::time::sleep(Duration::from_millis(1_300)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_restart_after_an_outage_longer_than_the_move_timeout_costs_no_time() {
    let dir = tempfile::tempdir().unwrap();
    let owner = new_key();
    let mut server = Server::start(dir.path(), &owner.address_string(), &[]).await;
    let api = server.api.clone();
    let alice = api.login(&new_key()).await;
    let bob = api.login(&new_key()).await;
    let id = api.challenge_accepted(&alice, &bob, "tic-tac-toe", 0).await;
    api.play(&alice, id, X_CENTRE).await;
    // Bob thinks for 20 s; the server goes down then.
    api.advance(20_000).await;
    let (down, deadline) = clock_and_deadline(&api, id).await;
    assert_eq!(deadline - down, 40_001, "Bob has 40 s left");
    a_beat().await;

    server.kill9();
    let back = down + 2 * HOUR_MS;
    server
        .restart_with(&["--dev-clock-start-ms", &back.to_string()])
        .await;
    let api = server.api.clone();
    let (now, moved) = clock_and_deadline(&api, id).await;
    assert_eq!(now, back);
    assert_eq!(
        moved,
        deadline + 2 * HOUR_MS,
        "the deadline moved by the outage"
    );
    assert_eq!(
        moved - now,
        40_001,
        "Bob has the time he had when the server went down"
    );
    // Alice may not claim the win; Bob moves.
    api.claim(&alice, id).await.expect_error(409, 110);
    let m = api.play(&bob, id, O_CORNER).await;
    assert_eq!(m["phase"], "in_progress");
    assert!(
        server
            .logs()
            .contains("every running clock was given the time back")
    );

    // A plain restart: the clock goes on where it stood, and nothing is given back.
    a_beat().await;
    server.restart().await;
    let api = server.api.clone();
    let (again, deadline) = clock_and_deadline(&api, id).await;
    assert_eq!((again, deadline), (back, back + 60_001));
}

mod cluster {
    //! Two nodes on one PostgreSQL database.

    use super::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_node_back_while_another_lives_gives_nothing_back_and_a_full_outage_once() {
        let url = fresh_database("outage").await;
        let owner = new_key();
        let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
        let mut nodes = Vec::new();
        for dir in &dirs {
            let addr = format!("127.0.0.1:{}", free_port());
            nodes.push(
                Server::start(
                    dir.path(),
                    &owner.address_string(),
                    &["--addr", &addr, "--database", &url],
                )
                .await,
            );
        }
        let api = nodes[0].api.clone();
        let alice = api.login(&new_key()).await;
        let bob = api.login(&new_key()).await;
        let id = api.challenge_accepted(&alice, &bob, "tic-tac-toe", 0).await;
        api.play(&alice, id, X_CENTRE).await;
        let (t0, deadline) = clock_and_deadline(&api, id).await;
        a_beat().await;

        // Node 1 comes back with its clock an hour on, so the heartbeat looks an hour old
        // to it; but node 0 beats all along: nothing is given back.
        nodes[1].kill9();
        let later = (t0 + HOUR_MS).to_string();
        nodes[1]
            .restart_with(&["--dev-clock-start-ms", &later])
            .await;
        let seen = nodes[1].api.match_(id).await["deadline"]["at_ms"].as_u64();
        assert_eq!(seen, Some(deadline), "a node's restart gives nothing back");
        assert!(nodes[1].logs().contains("another node beats"));

        // Every node down for two hours after the last beat (node 1's, an hour on): the
        // first back gives the outage back, the second nothing more.
        a_beat().await;
        let down = nodes[0].api.advance(0).await.max(t0 + HOUR_MS);
        nodes[0].kill9();
        nodes[1].kill9();
        let back = (down + 2 * HOUR_MS).to_string();
        nodes[0]
            .restart_with(&["--dev-clock-start-ms", &back])
            .await;
        let moved = nodes[0].api.match_(id).await["deadline"]["at_ms"]
            .as_u64()
            .unwrap();
        assert_eq!(moved, deadline + 2 * HOUR_MS, "the outage is given back");
        nodes[1]
            .restart_with(&["--dev-clock-start-ms", &back])
            .await;
        assert_eq!(
            nodes[1].api.match_(id).await["deadline"]["at_ms"].as_u64(),
            Some(moved),
            "the outage is given back once"
        );
        // (Node 1's clock ran an hour ahead while the service was up: Bob's time ran out
        // then, so the claim and the move after an outage are the SQLite test's.)
    }
}
