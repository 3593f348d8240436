//! The text forms of the MCP tools' answers, for a model that reads only text: the board
//! drawn as a 3×3 grid whose empty cells show their numbers, and a line that says what to
//! do next. Also the rules of each game and the prompt that teaches a model to play.
//!
//! Everything here reads the API's JSON views (`MatchView` and the rest, as the REST
//! handlers answer them), so the text says what the structured content says.

use std::fmt::Write as _;

use serde_json::Value;
use triad_engine::Address;
use triad_rules::GameKind;

/// The board of a 9-character state string (`-` for an empty cell) as a grid, each empty
/// cell showing its number (0-8, row by row from the top-left).
#[must_use]
pub fn grid(board: &str) -> String {
    let cells: Vec<char> = board.chars().collect();
    let mut out = String::new();
    for row in 0..3 {
        let line: Vec<String> = (0..3)
            .map(|col| {
                let i = row * 3 + col;
                match cells.get(i) {
                    Some('-') | None => i.to_string(),
                    Some(c) => c.to_string(),
                }
            })
            .collect();
        let _ = writeln!(out, " {} | {} | {}", line[0], line[1], line[2]);
        if row < 2 {
            out.push_str("---+---+---\n");
        }
    }
    out
}

/// Which seat (`first`/`second`) `me` holds in a match view, if either.
#[must_use]
pub fn my_seat(view: &Value, me: Address) -> Option<&'static str> {
    let me = me.to_string();
    let players = view["players"].as_array()?;
    ["first", "second"]
        .into_iter()
        .zip(players)
        .find(|(_, seat)| seat["address"].as_str() == Some(me.as_str()))
        .map(|(name, _)| name)
}

/// The marks a seat places, as listed in the view (`["X"]`, `["S","O"]`).
fn marks(view: &Value, seat: &str) -> String {
    let index = usize::from(seat == "second");
    view["players"][index]["marks"]
        .as_array()
        .map(|marks| {
            marks
                .iter()
                .filter_map(Value::as_str)
                .collect::<Vec<_>>()
                .join(" or ")
        })
        .unwrap_or_default()
}

/// Who sits in the other seat, in words.
fn opponent(view: &Value, seat: &str) -> String {
    let index = usize::from(seat == "first");
    let other = &view["players"][index];
    match other["kind"].as_str() {
        Some("computer") => format!(
            "the computer ({})",
            other["level"].as_str().unwrap_or("perfect")
        ),
        _ => other["address"].as_str().unwrap_or("?").to_owned(),
    }
}

/// Whether it is `me`'s turn in a match view (one in play: ready for its first move, or
/// in progress; only then does it name a turn).
#[must_use]
pub fn my_turn(view: &Value, me: Address) -> bool {
    view["turn_address"].as_str() == Some(me.to_string().as_str())
}

/// Whether a match view is in play: ready for its first move, or in progress.
#[must_use]
pub fn in_play(view: &Value) -> bool {
    matches!(view["phase"].as_str(), Some("ready" | "in_progress"))
}

/// A match for a reader: its header, the grid, and what happens next.
#[must_use]
pub fn match_text(view: &Value, me: Address) -> String {
    let id = view["id"].as_u64().unwrap_or_default();
    let game = view["game"].as_str().unwrap_or("?");
    let phase = view["phase"].as_str().unwrap_or("?");
    let seat = my_seat(view, me);
    let mut out = format!("Match {id} ({game})");
    if let Some(seat) = seat {
        let _ = write!(
            out,
            ": you play {seat} ({}) against {}",
            marks(view, seat),
            opponent(view, seat)
        );
    }
    let stake = view["stake"].as_str().unwrap_or("0");
    if stake != "0" {
        let _ = write!(out, "; stake {stake} each");
    }
    out.push_str(".\n");
    out.push_str(&grid(view["board"].as_str().unwrap_or("---------")));
    let seq = view["seq"].as_u64().unwrap_or_default();
    match phase {
        "finished" => {
            let outcome = &view["outcome"];
            let reason = outcome["reason"].as_str().unwrap_or("ended");
            let verdict = match (outcome["winner"].as_str(), seat) {
                (Some(winner), Some(seat)) if winner == seat => "You won",
                (Some(_), Some(_)) => "You lost",
                (Some(winner), None) => {
                    let _ = write!(out, "Finished ({reason}): {winner} won.");
                    return out;
                }
                (None, _) => "No winner",
            };
            let _ = write!(out, "Finished ({reason}). {verdict}.");
            if let Some(next) = view["rematch"].as_u64() {
                let _ = write!(out, " The rematch is match {next}.");
            }
        }
        "ready" | "in_progress" if my_turn(view, me) => {
            let _ = write!(
                out,
                "Your turn: place {} in an empty cell with make_move (match_id {id}; this will be move {}).",
                seat.map(|s| marks(view, s)).unwrap_or_default(),
                seq + 1
            );
        }
        "ready" | "in_progress" => {
            let _ = write!(
                out,
                "Waiting for {} to move; call wait_for_turn (match_id {id}).",
                view["turn"].as_str().unwrap_or("the opponent")
            );
        }
        "waiting" if view["challenge"].is_object() => {
            let challenge = &view["challenge"];
            let _ = write!(
                out,
                "An open challenge from {} to {}; the challenged player accepts it with accept_challenge (match_id {id}) or declines it with decline_challenge.",
                challenge["challenger"].as_str().unwrap_or("?"),
                challenge["opponent"].as_str().unwrap_or("?"),
            );
        }
        "waiting" => {
            let _ = write!(
                out,
                "Waiting in the queue for an opponent; call wait_for_turn (match_id {id}) or leave_queue."
            );
        }
        _ => {
            let _ = write!(out, "Phase: {phase}.");
        }
    }
    out
}

/// The rules of a game, for a reader.
#[must_use]
pub fn rules(game: GameKind) -> &'static str {
    match game {
        GameKind::TicTacToe => TIC_TAC_TOE_RULES,
        GameKind::Sos => SOS_RULES,
    }
}

const TIC_TAC_TOE_RULES: &str = "\
# Tic-tac-toe on Triad

The board has 9 cells, numbered 0 to 8 row by row from the top-left:

 0 | 1 | 2
---+---+---
 3 | 4 | 5
---+---+---
 6 | 7 | 8

- The first player places X, the second O; they take turns, one mark in an empty cell.
- Three of your marks in a row, a column or a diagonal wins at once.
- A full board with no line is a draw.
- Each move has a time limit; a player who runs out of time may lose to a timeout claim.

With best play on both sides the game is a draw. Win a line when you can; otherwise block
the opponent's line; otherwise take the centre (4), then a corner (0, 2, 6, 8), and make
two threats at once (a fork) when you can.
";

const SOS_RULES: &str = "\
# SOS on Triad

The board has 9 cells, numbered 0 to 8 row by row from the top-left:

 0 | 1 | 2
---+---+---
 3 | 4 | 5
---+---+---
 6 | 7 | 8

- Both players place either S or O, taking turns, one mark in an empty cell.
- Whoever completes S-O-S in a row, a column or a diagonal wins at once.
- A full board with no S-O-S is a draw.
- Each move has a time limit; a player who runs out of time may lose to a timeout claim.

Before each move, check every line: if one of your moves completes S-O-S, play it. Never
leave a line with two marks that the opponent can complete (S-O-_, S-_-S or _-O-S); when
every move leaves one, the solver (analyze_position) shows which loses last.
";

/// The prompt that teaches a model to play `game` through the tools.
#[must_use]
pub fn play_prompt(game: GameKind) -> String {
    let name = game.name();
    format!(
        "You are playing {name} on Triad through its MCP tools. Play to win, and never make an illegal move.\n\n\
{rules}\n\
How to play, step by step:\n\
1. Start a game: play_computer with game \"{name}\" (level perfect, casual or random), or challenge another player's address, or join_queue. To answer a challenge, list_challenges and then accept_challenge or decline_challenge.\n\
2. Read the board in each answer: the grid shows the marks, and each empty cell shows its number (0-8).\n\
3. When it is your turn, call legal_moves, think about every line on the board, and choose. analyze_position gives the solver's exact value of each move if you want a check.\n\
4. Play it with make_move (match_id, cell, and mark: {marks}).\n\
5. When it is the opponent's turn, call wait_for_turn: it returns when it is your turn again or the match is over (call it again if it says it timed out).\n\
6. Repeat until the match is finished; then you may offer a rematch.\n\n\
If a tool refuses, it says why with a stable code and what to do; nothing changed on the server, so read the message, fix the call and try again. Resign only when asked to.",
        rules = rules(game),
        marks = match game {
            GameKind::TicTacToe => "your own mark, X if you move first, O if second",
            GameKind::Sos => "S or O, your choice each move",
        },
    )
}

/// A tournament list in words: one line each.
pub fn tournaments_text(body: &Value) -> String {
    let list = body["tournaments"]
        .as_array()
        .map(Vec::as_slice)
        .unwrap_or_default();
    if list.is_empty() {
        return "No tournaments.".to_owned();
    }
    list.iter()
        .map(tournament_line)
        .collect::<Vec<_>>()
        .join("\n")
}

/// One tournament's summary line: id, name, game, format, phase, players, fee.
fn tournament_line(t: &Value) -> String {
    let format = match (
        t["format"].as_str(),
        t["rounds"].as_u64(),
        t["duration_ms"].as_u64(),
    ) {
        (Some("swiss"), Some(rounds), _) => format!("Swiss, {rounds} rounds"),
        (Some("arena"), _, Some(ms)) => format!("arena, {} min", ms / 60_000),
        _ => "tournament".to_owned(),
    };
    let fee = match t["entry_fee"].as_str() {
        Some("0") | None => "free".to_owned(),
        Some(fee) => format!(
            "entry fee {fee}, pool {}",
            t["pool"].as_str().unwrap_or("0")
        ),
    };
    format!(
        "#{} {}: {} {format}, {}; {} of {} players; {} may enter; {fee}.",
        t["id"],
        t["name"].as_str().unwrap_or_default(),
        t["game"].as_str().unwrap_or_default(),
        t["phase"].as_str().unwrap_or_default(),
        t["players"],
        t["max_players"],
        t["entry"].as_str().unwrap_or_default(),
    )
}

/// A tournament in words: its line, the leaders, and `me`'s place and game.
pub fn tournament_text(t: &Value, me: Option<Address>) -> String {
    let mut out = tournament_line(t);
    if let Some(rows) = t["standings"].as_array().filter(|r| !r.is_empty()) {
        out.push_str("\nStandings:");
        for s in rows {
            let bot = if s["player"]["bot"] == true {
                " (bot)"
            } else {
                ""
            };
            let who = s["player"]["name"]
                .as_str()
                .or(s["player"]["address"].as_str())
                .unwrap_or_default();
            out.push_str(&format!(
                "\n  {}. {who}{bot}: {} points ({}-{}-{})",
                s["rank"], s["score"], s["wins"], s["draws"], s["losses"]
            ));
        }
    }
    if me.is_some() {
        let mine = &t["me"];
        match (mine["standing"]["rank"].as_u64(), mine["match_id"].as_u64()) {
            (Some(rank), Some(id)) => out.push_str(&format!(
                "\nYou are ranked {rank}. Your game is match {id}: play it (wait_for_turn, make_move), then call follow_tournament again."
            )),
            (Some(rank), None) => out.push_str(&format!("\nYou are ranked {rank}; no game for you right now.")),
            (None, _) => out.push_str("\nYou are not in this tournament: join_tournament enters it."),
        }
    }
    if let Some(prizes) = t["prizes"].as_array().filter(|p| !p.is_empty()) {
        out.push_str("\nPrizes:");
        for p in prizes {
            out.push_str(&format!(
                "\n  rank {}: {} to {}",
                p["rank"],
                p["amount"].as_str().unwrap_or("0"),
                p["player"]["address"].as_str().unwrap_or_default()
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_grid_numbers_empty_cells() {
        assert_eq!(
            grid("X---O---S"),
            " X | 1 | 2\n---+---+---\n 3 | O | 5\n---+---+---\n 6 | 7 | S\n"
        );
    }
}
