//! The A2A tic-tac-toe protocol's own specification (the excerpt in
//! `testdata/a2a-tic-tac-toe.md`): its manifest, every payload it shows, and its example game
//! replayed message for message.

use triad_protocol::{App, Ending, Game, Message, Step, board_of, board_string, decode_data};
use triad_rules::Player;

/// The specification's manifest, messages and example game (see `testdata/README.md`).
const SPEC: &str = include_str!("../../../testdata/a2a-tic-tac-toe.md");

/// One `reef apps send <to> <app> <action> --payload '<json>'` of the specification.
#[derive(Debug)]
struct Send {
    /// Who sends it, in the example game (`Alice`/`Bob`), or empty.
    from: String,
    app: String,
    action: String,
    payload: String,
}

fn sends(text: &str) -> Vec<Send> {
    text.lines()
        .filter_map(|line| {
            let at = line.find("reef apps send ")?;
            let from = line[..at]
                .split('→')
                .next()
                .unwrap_or_default()
                .trim()
                .to_owned();
            let words: Vec<&str> = line[at..].split_whitespace().collect();
            let start = line.find("--payload '")? + "--payload '".len();
            let end = line[start..].find('\'')? + start;
            Some(Send {
                from,
                app: words[4].to_owned(),
                action: words[5].to_owned(),
                payload: line[start..end].to_owned(),
            })
        })
        .collect()
}

/// The example's boards as drawn after each move, as 9-character strings.
fn drawn_boards(example: &str) -> Vec<String> {
    let rows: Vec<String> = example
        .lines()
        .map(str::trim)
        .filter(|l| l.len() >= 9 && l.split(" | ").count() == 3 && l.starts_with(['.', 'X', 'O']))
        .map(|l| {
            l.split(" | ")
                .map(|c| c.chars().next().unwrap())
                .map(|c| if c == '.' { '-' } else { c })
                .collect()
        })
        .collect();
    rows.chunks(3).map(|r| r.concat()).collect()
}

#[test]
fn the_manifest_is_the_specifications_front_matter() {
    let text = SPEC;
    let end = text[4..].find("\n---\n").expect("the front matter closes") + 4 + 5;
    assert_eq!(App::TicTacToe.manifest().front_matter(), &text[..end]);
}

#[test]
fn every_payload_in_the_specification_decodes_and_encodes_back_byte_for_byte() {
    let all = sends(SPEC);
    assert!(
        all.len() >= 14,
        "the specification shows at least 14 sends, found {}",
        all.len()
    );
    for send in all {
        let app = App::from_id(&send.app).unwrap();
        let message = Message::decode_json(app, &send.action, &send.payload)
            .unwrap_or_else(|e| panic!("{send:?}: {e}"));
        assert_eq!(message.action().id(), send.action);
        assert_eq!(message.payload_json(app), send.payload, "{send:?}");
        let data = serde_json::json!({"appId": send.app, "action": send.action, "payload": message.payload(app)});
        assert_eq!(decode_data(&data).unwrap(), (app, message));
    }
}

/// Alice (X) challenges Bob (O); X wins with the diagonal 0-4-8: every message the two state
/// machines send is the specification's, byte for byte, and after every move both boards are
/// the board the specification draws.
#[test]
fn the_example_game_replays_message_for_message() {
    let text = SPEC;
    let example = &text[text.find("## Example Game").expect("the example")..];
    let script = sends(example);
    let boards = drawn_boards(example);
    assert_eq!(script.len(), 8, "propose, accept, five moves, result");
    assert_eq!(boards.len(), 5, "a board after each move");
    let app = App::TicTacToe;

    // propose and accept
    let (mut alice, propose) = Game::propose(app, Player::First, None);
    assert_eq!(script[0].from, "Alice");
    assert_eq!(propose.payload_json(app), script[0].payload);
    let received = Message::decode_json(app, &script[0].action, &script[0].payload).unwrap();
    let Message::Propose(proposal) = received else {
        panic!("a proposal")
    };
    let (mut bob, accept) = Game::accept(app, &proposal);
    assert_eq!(script[1].from, "Bob");
    assert_eq!(accept.payload_json(app), script[1].payload);
    assert_eq!(alice.receive(&accept).unwrap(), [Step::Accepted]);

    // the moves, and the result declared by the player who made the last one
    let mut board_index = 0;
    for send in &script[2..] {
        let expected = Message::decode_json(app, &send.action, &send.payload).unwrap();
        let (mover, other) = match send.from.as_str() {
            "Alice" => (&mut alice, &mut bob),
            "Bob" => (&mut bob, &mut alice),
            who => panic!("unknown player {who}"),
        };
        let Message::Move(m) = &expected else {
            // The result: the mover declared it with its last move, already sent below.
            assert_eq!(send.action, "result");
            continue;
        };
        assert!(mover.my_turn(), "{} moves in turn", send.from);
        let sent = mover.play(m.position.index(), m.mark).unwrap();
        assert_eq!(
            sent[0].payload_json(app),
            send.payload,
            "{} sends the specification's move",
            send.from
        );
        let steps = other.receive(&sent[0]).unwrap();
        assert_eq!(
            steps,
            [Step::Moved {
                cell: m.position.index(),
                mark: m.mark
            }]
        );
        for game in [&*mover, &*other] {
            assert_eq!(
                board_string(&board_of(game.position())),
                boards[board_index]
            );
        }
        board_index += 1;
        if let Some(result) = sent.get(1) {
            let declared = script.last().unwrap();
            assert_eq!(
                declared.from, send.from,
                "the last mover declares the result"
            );
            assert_eq!(result.payload_json(app), declared.payload);
            assert_eq!(
                other.receive(result).unwrap(),
                [Step::Ended(Ending::Win {
                    winner: Player::First
                })]
            );
        }
    }
    assert_eq!(board_index, 5);
    for game in [&alice, &bob] {
        assert_eq!(
            game.ending(),
            Some(&Ending::Win {
                winner: Player::First
            })
        );
        assert!(game.is_settled());
    }
    // The specification's example, delivered twice: every repeat is ignored.
    for send in &script[2..] {
        let again = Message::decode_json(app, &send.action, &send.payload).unwrap();
        let receiver = if send.from == "Alice" {
            &mut bob
        } else {
            &mut alice
        };
        assert_eq!(
            receiver.receive(&again).unwrap(),
            [Step::Ignored],
            "{send:?}"
        );
    }
}
