//! `GET /api/matches/{id}/notation` on a real server: a played match's record parses back
//! to the match's moves and result.

use serde_json::Value;
use triad_engine::{
    EndReason, MatchId, Seat,
    notation::{self, GameResult},
};

use crate::common::Server;

/// The moves of a match view as `(cell, mark)`.
fn view_moves(m: &Value) -> Vec<(u8, String)> {
    m["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|mv| {
            (
                mv["cell"].as_u64().unwrap() as u8,
                mv["mark"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn record_moves(record: &notation::Record) -> Vec<(u8, String)> {
    record
        .moves
        .iter()
        .map(|mv| (mv.cell.index(), mv.mark.to_string()))
        .collect()
}

#[tokio::test]
async fn a_played_match_exports_as_notation_that_parses_back() {
    let server = Server::start().await;
    let (x, o) = (server.user().await, server.user().await);
    let id = server.challenge_accepted(&x, &o, 0).await;
    server.play(&x, id, 1, 4, "X").await.expect(201);
    server.play(&o, id, 2, 0, "O").await.expect(201);

    // In play: the moves so far and the result `*`.
    let r = server
        .get(&format!("/api/matches/{id}/notation"))
        .send()
        .await;
    r.expect(200);
    assert_eq!(r.headers["content-type"], "text/plain; charset=utf-8");
    let record = notation::parse(&r.text).unwrap();
    assert_eq!(record.result, GameResult::Unfinished);
    assert_eq!(record.termination, None);
    assert_eq!(record_moves(&record), view_moves(&server.match_(id).await));

    // Finished: X wins on the top row.
    let (x2, o2) = (server.user().await, server.user().await);
    let id2 = server.challenge_accepted(&x2, &o2, 0).await;
    server.x_wins(&x2, &o2, id2).await.expect(201);
    let r = server
        .get(&format!("/api/matches/{id2}/notation"))
        .send()
        .await;
    r.expect(200);
    assert_eq!(
        r.headers["content-disposition"],
        format!("attachment; filename=\"triad-tic-tac-toe-{id2}.txt\"").as_str()
    );
    let record = notation::parse(&r.text).unwrap();
    let view = server.match_(id2).await;
    assert_eq!(record_moves(&record), view_moves(&view));
    assert_eq!(record.match_id, Some(MatchId(id2)));
    assert_eq!(record.result, GameResult::FirstWon);
    assert_eq!(record.termination, Some(EndReason::Win));
    assert_eq!(record.stake, Some(0));
    assert_eq!(
        record.players,
        [
            x2.address.parse().ok().map(Seat::Human),
            o2.address.parse().ok().map(Seat::Human)
        ]
    );
    assert!(
        r.text.ends_with("\n\n1. X1 O4 2. X2 O5 3. X3 1-0\n"),
        "{}",
        r.text
    );
    // The text is what render writes for the parsed record: one canonical form.
    assert_eq!(notation::render(&record), r.text);
}

#[tokio::test]
async fn an_unknown_match_has_no_notation() {
    let server = Server::start().await;
    server
        .get("/api/matches/999/notation")
        .send()
        .await
        .expect_error(404, 100, "unknown_match");
    server
        .get("/api/matches/x/notation")
        .send()
        .await
        .expect(400);
}

/// The notation's errors, as the endpoints that read records answer them: 422 with the
/// notation's own code, name and message (line and column included).
#[test]
fn notation_errors_are_api_errors_with_the_same_code_and_name() {
    use triad_server::api::error::{Api, ApiError};
    for (text, code) in [
        ("1. X5", 235),
        ("[Game \"sos\"]\n1. S5 O5", 236),
        ("[Game \"sos\"]\n1. S1 O2 2. S3 0-1", 237),
    ] {
        let e = notation::parse(text).unwrap_err();
        assert_eq!(e.code(), code);
        let api = ApiError::from(e.clone());
        assert_eq!(
            (api.status.as_u16(), api.body.code, api.body.error),
            (422, e.code(), e.name())
        );
        assert_eq!(api.body.message, e.to_string());
    }
    let mut codes: Vec<u16> = Api::ALL.iter().map(|a| a.describe().0).collect();
    let all = codes.len();
    codes.sort_unstable();
    codes.dedup();
    assert_eq!(codes.len(), all, "every API error has a code of its own");
    assert!(codes.contains(&235) && codes.contains(&236) && codes.contains(&237));
}
