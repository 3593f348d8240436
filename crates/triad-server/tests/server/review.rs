//! Game review over the API: a finished match's analysis, any moves' analysis, the board
//! as a picture, and the review page's link preview.

use crate::common::Server;

/// X 1, O 4 (a mistake: only the centre holds the draw), X 2, O 5 (the game is lost; this
/// loses sooner), X 3.
#[tokio::test]
async fn a_finished_match_is_reviewed_move_by_move() {
    let server = Server::start().await;
    let (x, o) = (server.user().await, server.user().await);
    let id = server.challenge_accepted(&x, &o, 0).await;

    // No review while the match is in play: it would be a hint.
    server.play(&x, id, 1, 0, "X").await.expect(201);
    server
        .get(&format!("/api/matches/{id}/review"))
        .send()
        .await
        .expect_error(409, 238, "match_not_finished");
    server.play(&o, id, 2, 3, "O").await.expect(201);
    server.play(&x, id, 3, 1, "X").await.expect(201);
    server.play(&o, id, 4, 4, "O").await.expect(201);
    server.play(&x, id, 5, 2, "X").await.expect(201);

    let r = server
        .get(&format!("/api/matches/{id}/review"))
        .send()
        .await;
    let review = r.expect(200);
    assert_eq!(review["game"], "tic-tac-toe");
    assert_eq!(review["match"]["id"], id);
    assert_eq!(review["start"]["verdict"], "draw");
    assert_eq!(review["start"]["winner"], serde_json::Value::Null);
    let plies = review["plies"].as_array().unwrap();
    assert_eq!(plies.len(), 5);
    let judgements: Vec<&str> = plies
        .iter()
        .map(|p| p["judgement"].as_str().unwrap())
        .collect();
    assert_eq!(judgements[0], "best");
    assert_eq!(judgements[1], "mistake");
    assert_eq!(judgements[2], "best");
    // O5 loses sooner than the block at 3 would: the loss is kept, its distance is not.
    assert_eq!(judgements[3], "inaccuracy");
    assert_eq!(judgements[4], "best");
    // O's mistake: the best was a draw (the centre), the move played loses.
    assert_eq!(plies[1]["best_value"]["verdict"], "draw");
    assert_eq!(plies[1]["played_value"]["verdict"], "loss");
    assert_eq!(
        plies[1]["best"],
        serde_json::json!([{"cell": 4, "mark": "O"}])
    );
    assert_eq!(plies[1]["value"]["winner"], "first");
    assert_eq!(plies[1]["square"], 4);
    // The last position: X has won, O (to move) has lost in 0 plies.
    assert_eq!(
        plies[4]["value"],
        serde_json::json!({"verdict": "loss", "plies": 0, "winner": "first"})
    );
    assert_eq!(plies[4]["board"], "XXXOO----");
    assert_eq!(review["accuracy"]["first"]["percent"], 100.0);
    assert_eq!(review["accuracy"]["second"]["mistakes"], 1);
    assert_eq!(review["accuracy"]["second"]["inaccuracies"], 1);
    assert_eq!(review["accuracy"]["second"]["moves"], 2);
    // Neither of O's moves kept the value.
    assert_eq!(review["accuracy"]["second"]["percent"], 0.0);

    // The same moves reviewed without the match give the same plies.
    let r = server
        .get("/api/review/tic-tac-toe?moves=X1,O4,X2,O5,X3")
        .send()
        .await;
    let loose = r.expect(200);
    assert_eq!(loose["plies"], review["plies"]);
    assert!(loose.get("match").is_none());

    server
        .get("/api/matches/999/review")
        .send()
        .await
        .expect_error(404, 100, "unknown_match");
    server.stop().await;
}

#[tokio::test]
async fn bad_move_lists_say_which_move_is_wrong() {
    let server = Server::start().await;
    let r = server
        .get("/api/review/tic-tac-toe?moves=X5,O5")
        .send()
        .await;
    let body = r.expect_error(400, 215, "invalid_parameter");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .starts_with("move 2 is not legal"),
        "{body}"
    );
    let r = server.get("/api/review/sos?moves=S5,Q1").send().await;
    let body = r.expect_error(400, 215, "invalid_parameter");
    assert!(
        body["message"]
            .as_str()
            .unwrap()
            .contains("move 2 (\"Q1\")"),
        "{body}"
    );
    server
        .get("/api/review/chess?moves=")
        .send()
        .await
        .expect_error(400, 215, "invalid_parameter");
    // The empty board is a review with no plies.
    let r = server.get("/api/review/sos").send().await;
    assert_eq!(r.expect(200)["plies"], serde_json::json!([]));
    server.stop().await;
}

#[tokio::test]
async fn boards_are_pictures_in_svg_and_png() {
    let server = Server::start().await;
    let r = server
        .get("/api/boards/tic-tac-toe/XXXOO----.png?last=3")
        .send()
        .await;
    r.expect(200);
    assert_eq!(r.headers["content-type"], "image/png");
    let r = server.get("/api/boards/sos/SO-------.svg").send().await;
    r.expect(200);
    assert_eq!(r.headers["content-type"], "image/svg+xml; charset=utf-8");
    assert!(r.text.starts_with("<svg"));
    for bad in [
        "/api/boards/sos/SO-------.gif",
        "/api/boards/sos/XO-------.svg",
        "/api/boards/tic-tac-toe/XXXXX----.svg",
        "/api/boards/tic-tac-toe/X--------.svg?last=2",
    ] {
        server
            .get(bad)
            .send()
            .await
            .expect_error(400, 215, "invalid_parameter");
    }
    server.stop().await;
}

#[tokio::test]
async fn a_review_link_has_a_preview_of_the_board_at_its_move() {
    let server = Server::start().await;
    let (x, o) = (server.user().await, server.user().await);
    let id = server.challenge_accepted(&x, &o, 0).await;
    server.x_wins(&x, &o, id).await.expect(201);

    let r = server
        .get(&format!("/review/{id}?ply=2"))
        .header("accept", "text/html")
        .send()
        .await;
    r.expect(200);
    assert_eq!(r.headers["content-type"], "text/html; charset=utf-8");
    assert!(r.headers.contains_key("content-security-policy"));
    let page = &r.text;
    assert!(
        page.contains(&format!("<title>Tic-tac-toe · match {id} · Triad</title>")),
        "{page}"
    );
    assert!(
        page.contains(
            r#"<meta property="og:image" content="/api/boards/tic-tac-toe/X--O-----.png?last=4">"#
        ),
        "{page}"
    );
    assert!(page.contains(r#"<meta name="twitter:card" content="summary_large_image">"#));
    assert!(page.contains("X won in 5 moves."), "{page}");
    assert!(page.contains(r#"<script type="module" src="/js/main.js">"#));
    // The picture it names is served.
    server
        .get("/api/boards/tic-tac-toe/X--O-----.png?last=4")
        .send()
        .await
        .expect(200);

    // A local game's share link: the same preview, from its moves alone.
    let r = server
        .get("/review?game=tic-tac-toe&moves=X1,O4,X2,O5,X3&ply=2")
        .header("accept", "text/html")
        .send()
        .await;
    r.expect(200);
    let page = &r.text;
    assert!(
        page.contains("<title>Tic-tac-toe · a game to review · Triad</title>"),
        "{page}"
    );
    assert!(
        page.contains(
            r#"<meta property="og:image" content="/api/boards/tic-tac-toe/X--O-----.png?last=4">"#
        ),
        "{page}"
    );
    assert!(
        page.contains("X won in 5 moves. Accuracy: X 100%, O 0%. Move 2: O4 (mistake)."),
        "{page}"
    );
    assert!(
        page.contains(r#"content="/review?game=tic-tac-toe&amp;moves=X1,O4,X2,O5,X3&amp;ply=2""#),
        "{page}"
    );
    // SOS, unfinished, shown at its end.
    let r = server
        .get("/review?game=sos&moves=S5,O1")
        .header("accept", "text/html")
        .send()
        .await;
    assert!(
        r.text
            .contains(r#"content="/api/boards/sos/O---S----.png?last=1""#),
        "{}",
        r.text
    );
    assert!(r.text.contains("2 moves; the game goes on."), "{}", r.text);

    // A match that is not over, or not there, or moves that are not a game (or none): the
    // plain page, which says so itself.
    for path in [
        "/review/999",
        "/review/abc",
        "/review",
        "/review?game=sos&moves=X5",
        "/review?game=chess&moves=X5",
        "/review?moves=X1,O1",
    ] {
        let r = server.get(path).header("accept", "text/html").send().await;
        assert!(!r.text.contains("og:image"), "{path}");
        assert!(r.text.contains("/js/main.js"), "{path}");
    }
    server.stop().await;
}

/// With a public address configured, a preview's addresses are absolute, as link previews
/// need them.
#[tokio::test]
async fn a_review_link_names_absolute_addresses_under_the_public_url() {
    let server =
        Server::start_with(|args| args.public_url = Some("https://triad.example/".to_owned()))
            .await;
    let (x, o) = (server.user().await, server.user().await);
    let id = server.challenge_accepted(&x, &o, 0).await;
    server.x_wins(&x, &o, id).await.expect(201);
    let r = server
        .get(&format!("/review/{id}?ply=1"))
        .header("accept", "text/html")
        .send()
        .await;
    let page = &r.text;
    assert!(
        page.contains(r#"<meta property="og:image" content="https://triad.example/api/boards/tic-tac-toe/X--------.png?last=1">"#),
        "{page}"
    );
    assert!(
        page.contains(&format!(
            r#"content="https://triad.example/review/{id}?ply=1""#
        )),
        "{page}"
    );
    let r = server
        .get("/review?moves=X5")
        .header("accept", "text/html")
        .send()
        .await;
    assert!(
        r.text.contains(
            r#"content="https://triad.example/api/boards/tic-tac-toe/----X----.png?last=5""#
        ),
        "{}",
        r.text
    );
    server.stop().await;
}

#[tokio::test]
async fn a_record_in_notation_is_reviewed_and_a_bad_one_says_where() {
    let server = Server::start().await;
    let (x, o) = (server.user().await, server.user().await);
    let id = server.challenge_accepted(&x, &o, 0).await;
    server.x_wins(&x, &o, id).await.expect(201);
    let notation = server
        .get(&format!("/api/matches/{id}/notation"))
        .send()
        .await;
    notation.expect(200);
    let record = notation.text.clone();
    let by_match = server
        .get(&format!("/api/matches/{id}/review"))
        .send()
        .await
        .expect(200)
        .clone();
    let r = server
        .post("/api/review")
        .json(&serde_json::json!({ "notation": record }))
        .send()
        .await;
    let imported = r.expect(200);
    assert_eq!(imported["plies"], by_match["plies"]);
    assert_eq!(imported["accuracy"], by_match["accuracy"]);

    // Square 1 twice: the rules refuse it, at its line.
    let bad = "[Game \"tic-tac-toe\"]\n\n1. X1 O1 *\n";
    let r = server
        .post("/api/review")
        .json(&serde_json::json!({ "notation": bad }))
        .send()
        .await;
    let body = r.expect_error(422, 236, "notation_illegal_move");
    assert!(
        body["message"].as_str().unwrap().contains("line 3"),
        "{body}"
    );
    server
        .post("/api/review")
        .json(&serde_json::json!({ "notation": "hello" }))
        .send()
        .await
        .expect_error(422, 235, "notation_invalid");
    server.stop().await;
}
