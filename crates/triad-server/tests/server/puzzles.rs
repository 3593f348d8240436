//! `/api/puzzles` on a real server: the daily puzzle by the server's clock, pages, one
//! puzzle without its solution, and attempts checked move by move, rated once per player
//! and puzzle for a logged-in player and unrated for anyone else.

use serde_json::{Value, json};
use triad_solver::puzzles::{self, DAY_MS, Goal, Puzzle};

use crate::common::*;

fn moves_json(line: &[triad_rules::Move]) -> Value {
    line.iter()
        .map(|m| json!({"cell": m.cell.index(), "mark": m.mark.char().to_string()}))
        .collect()
}

fn puzzle(goal: Goal) -> &'static Puzzle {
    puzzles::all().iter().find(|p| p.goal() == goal).unwrap()
}

/// A first move that loses the goal.
fn wrong(p: &Puzzle) -> triad_rules::Move {
    let correct = p.correct_moves();
    p.position()
        .legal_moves()
        .into_iter()
        .find(|m| !correct.contains(m))
        .unwrap()
}

async fn attempt(server: &Server, user: Option<&User>, id: &str, line: &Value) -> Resp {
    let call = server
        .post(&format!("/api/puzzles/{id}/attempts"))
        .json(&json!({ "moves": line }));
    match user {
        Some(user) => call.auth(user).send().await,
        None => call.send().await,
    }
}

/// Plays a puzzle through the API as the web app does: the player's move, then the reply
/// the server gives, until the answer is decided. `choose` picks the player's moves.
async fn play_out(
    server: &Server,
    user: Option<&User>,
    p: &Puzzle,
    choose: impl Fn(usize) -> triad_rules::Move,
) -> Value {
    let mut line: Vec<Value> = Vec::new();
    for turn in 0..9 {
        let mv = choose(turn);
        line.push(json!({"cell": mv.cell.index(), "mark": mv.mark.char().to_string()}));
        let r = attempt(
            server,
            user,
            &p.id().to_string(),
            &Value::from(line.clone()),
        )
        .await;
        let body = r.expect(200).clone();
        if body["status"] != "going" {
            return body;
        }
        assert_eq!(body["rated"], false, "an undecided line rates nothing");
        line.push(body["reply"].clone());
    }
    panic!("{} was never decided", p.id());
}

#[tokio::test]
async fn the_daily_puzzle_follows_the_servers_clock() {
    let server = Server::start().await;
    let now = server.now().await;
    let r = server.get("/api/puzzles/daily").send().await;
    let body = r.expect(200).clone();
    let day = now / DAY_MS;
    assert_eq!(body["day"], day);
    assert_eq!(body["next_at_ms"], (day + 1) * DAY_MS);
    let today = puzzles::daily(day);
    assert_eq!(body["puzzle"]["id"], today.id().to_string());
    assert_eq!(body["puzzle"]["board"], today.position().to_string());
    server.advance(DAY_MS).await;
    let tomorrow = server
        .get("/api/puzzles/daily")
        .send()
        .await
        .expect(200)
        .clone();
    assert_eq!(tomorrow["day"], day + 1);
    assert_eq!(
        tomorrow["puzzle"]["id"],
        puzzles::daily(day + 1).id().to_string()
    );
    assert_ne!(tomorrow["puzzle"]["id"], body["puzzle"]["id"]);
}

#[tokio::test]
async fn a_puzzle_shows_its_position_and_goal_but_never_its_solution() {
    let server = Server::start().await;
    let p = puzzle(Goal::WinIn(2));
    let id = p.id().to_string();
    let body = server
        .get(&format!("/api/puzzles/{id}"))
        .send()
        .await
        .expect(200)
        .clone();
    assert_eq!(body["id"], id);
    assert_eq!(body["game"], "tic-tac-toe");
    assert_eq!(body["board"], p.position().to_string());
    assert_eq!(body["goal"], "win");
    assert_eq!(body["moves"], 2);
    assert_eq!(body["title"], "win in 2");
    assert_eq!(body["rating"]["rating"], 1500.0);
    assert_eq!(body["rating"]["attempts"], 0);
    let fields: Vec<&str> = body
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        fields,
        [
            "board", "game", "goal", "id", "marks", "moves", "rating", "title", "turn"
        ]
    );
    // The set ends with SOS, where either side places S or O.
    let body = server
        .get(&format!(
            "/api/puzzles/{}",
            puzzles::all().last().unwrap().id()
        ))
        .send()
        .await
        .expect(200)
        .clone();
    assert_eq!(body["game"], "sos");
    assert_eq!(body["marks"], json!(["S", "O"]));
    for unknown in ["tic-tac-toe-0", "sos-99999", "chess-1", "x"] {
        server
            .get(&format!("/api/puzzles/{unknown}"))
            .send()
            .await
            .expect_error(404, 129, "unknown_puzzle");
    }
}

#[tokio::test]
async fn pages_cover_the_filtered_set_in_order() {
    let server = Server::start().await;
    let expected: Vec<String> = puzzles::all()
        .iter()
        .filter(|p| p.goal().kind() == "win" && p.id().game == triad_rules::GameKind::TicTacToe)
        .map(|p| p.id().to_string())
        .collect();
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let mut path = "/api/puzzles?game=tic-tac-toe&kind=win&limit=100".to_owned();
        if let Some(a) = &after {
            path.push_str(&format!("&after={a}"));
        }
        let page = server.get(&path).send().await.expect(200).clone();
        for p in page["puzzles"].as_array().unwrap() {
            seen.push(p["id"].as_str().unwrap().to_owned());
        }
        match page["next_after"].as_str() {
            Some(next) => after = Some(next.to_owned()),
            None => break,
        }
    }
    assert_eq!(seen, expected);
    let first = server.get("/api/puzzles").send().await.expect(200).clone();
    assert_eq!(first["puzzles"].as_array().unwrap().len(), 20);
    server
        .get("/api/puzzles?kind=mate")
        .send()
        .await
        .expect_error(400, 215, "invalid_parameter");
    server
        .get("/api/puzzles?game=chess")
        .send()
        .await
        .expect_error(400, 215, "invalid_parameter");
    server
        .get("/api/puzzles?limit=0")
        .send()
        .await
        .expect_error(400, 215, "invalid_parameter");
    server
        .get("/api/puzzles?after=sos-0")
        .send()
        .await
        .expect_error(400, 242, "unknown_puzzle_cursor");
}

#[tokio::test]
async fn an_anonymous_attempt_is_checked_move_by_move_and_unrated() {
    let server = Server::start().await;
    let p = puzzle(Goal::WinIn(3));
    let solution = p.solution();
    let body = play_out(&server, None, p, |turn| solution[2 * turn]).await;
    assert_eq!(body["status"], "solved");
    assert_eq!(body["rated"], false);
    assert_eq!(body["player_rating"], Value::Null);
    assert_eq!(body["solution"], moves_json(&solution));
    let failed = attempt(&server, None, &p.id().to_string(), &moves_json(&[wrong(p)])).await;
    let failed = failed.expect(200);
    assert_eq!(failed["status"], "failed");
    assert_eq!(failed["wrong_move"], 0);
    assert_eq!(
        failed["correct_first_moves"],
        moves_json(&p.correct_moves())
    );
    let r = server.get(&format!("/api/puzzles/{}", p.id())).send().await;
    assert_eq!(r.expect(200)["rating"]["attempts"], 0, "nothing rated");
}

#[tokio::test]
async fn a_logged_in_players_first_attempt_is_rated_and_later_ones_are_not() {
    let server = Server::start().await;
    let (alice, bob) = (server.user().await, server.user().await);
    let p = puzzle(Goal::WinIn(2));
    let id = p.id().to_string();
    let solution = p.solution();
    let body = play_out(&server, Some(&alice), p, |turn| solution[2 * turn]).await;
    assert_eq!(body["status"], "solved");
    assert_eq!(body["rated"], true);
    assert_eq!(body["player_rating"]["before"], 1500.0);
    assert!(body["player_rating"]["after"].as_f64().unwrap() > 1500.0);
    assert!(body["puzzle_rating"]["after"].as_f64().unwrap() < 1500.0);
    // Again: checked, not rated.
    let again = attempt(&server, Some(&alice), &id, &moves_json(&solution)).await;
    let again = again.expect(200);
    assert_eq!(
        (again["status"].as_str(), again["rated"].as_bool()),
        (Some("solved"), Some(false))
    );
    // Bob fails it: his rating falls, the puzzle's rises.
    let failed = attempt(&server, Some(&bob), &id, &moves_json(&[wrong(p)])).await;
    let failed = failed.expect(200);
    assert_eq!(
        (failed["status"].as_str(), failed["rated"].as_bool()),
        (Some("failed"), Some(true))
    );
    assert!(failed["player_rating"]["after"].as_f64().unwrap() < 1500.0);
    let view = server
        .get(&format!("/api/puzzles/{id}"))
        .send()
        .await
        .expect(200)
        .clone();
    assert_eq!(view["rating"]["attempts"], 2);
    assert_eq!(view["rating"]["solved"], 1);
    // The players' views show their puzzle ratings.
    let player = server
        .get(&format!("/api/players/{}", alice.address))
        .send()
        .await
        .expect(200)
        .clone();
    assert_eq!(player["puzzles"]["attempts"], 1);
    assert_eq!(player["puzzles"]["rating"], body["player_rating"]["after"]);
    assert_eq!(player["games"], 0, "puzzles are not games");
    let me = server
        .get("/api/me")
        .auth(&bob)
        .send()
        .await
        .expect(200)
        .clone();
    assert_eq!(me["stats"]["puzzles"]["solved"], 0);
    // The rated attempts are events in the log: a restart replays them.
    let dir = server.stop().await;
    let args = base_args(dir.path());
    let server = Server::start_in(dir, args).await;
    let view = server
        .get(&format!("/api/puzzles/{id}"))
        .send()
        .await
        .expect(200)
        .clone();
    assert_eq!(view["rating"]["attempts"], 2);
}

#[tokio::test]
async fn a_draw_the_defence_completes_is_solved_with_its_reply() {
    let server = Server::start().await;
    let alice = server.user().await;
    // A save-the-draw puzzle with an even number of marks left: the defence fills the board.
    let p = puzzles::all()
        .iter()
        .find(|p| p.goal() == Goal::SaveTheDraw && p.solution().len() % 2 == 0)
        .unwrap();
    let solution = p.solution();
    let body = play_out(&server, Some(&alice), p, |turn| solution[2 * turn]).await;
    assert_eq!(body["status"], "solved");
    assert_eq!(
        body["reply"],
        moves_json(&solution[solution.len() - 1..])[0]
    );
    assert_eq!(body["rated"], true);
    let view = server
        .get(&format!("/api/puzzles/{}", p.id()))
        .send()
        .await
        .expect(200)
        .clone();
    assert_eq!(view["rating"]["solved"], 1);
}

#[tokio::test]
async fn bad_lines_and_bad_logins_are_refused_with_the_reason() {
    let server = Server::start().await;
    let alice = server.user().await;
    let p = puzzle(Goal::WinIn(2));
    let id = p.id().to_string();
    let first = p.correct_moves()[0];
    let occupied = attempt(&server, Some(&alice), &id, &moves_json(&[first, first])).await;
    let body = occupied.expect_error(422, 130, "invalid_puzzle_line");
    assert!(body["message"].as_str().unwrap().contains("move 2"));
    let bad_mark = json!([{"cell": first.cell.index(), "mark": "Q"}]);
    attempt(&server, None, &id, &bad_mark)
        .await
        .expect_error(422, 130, "invalid_puzzle_line");
    let bad_cell = json!([{"cell": 9, "mark": "X"}]);
    attempt(&server, None, &id, &bad_cell)
        .await
        .expect_error(422, 130, "invalid_puzzle_line");
    attempt(&server, None, "sos-0", &json!([]))
        .await
        .expect_error(404, 129, "unknown_puzzle");
    let ten: Value = (0..10)
        .map(|c| json!({"cell": c % 9, "mark": "X"}))
        .collect();
    attempt(&server, None, &id, &ten)
        .await
        .expect_error(400, 215, "invalid_parameter");
    server
        .post(&format!("/api/puzzles/{id}/attempts"))
        .token("not-a-token")
        .json(&json!({"moves": []}))
        .send()
        .await
        .expect_error(401, 202, "invalid_token");
    // An empty line is the player's turn: going, no reply.
    let empty = attempt(&server, None, &id, &json!([])).await;
    let empty = empty.expect(200);
    assert_eq!(
        (empty["status"].as_str(), &empty["reply"]),
        (Some("going"), &Value::Null)
    );
}
