//! The decoder: every malformed or unexpected payload gets its own typed error with a stable
//! code, the encoder writes the protocol's shapes, and nothing panics on any input.

use proptest::prelude::*;
use serde_json::{Value, json};
use triad_protocol::{
    Action, App, GameId, GameResult, Message, Outcome, ProtocolError, decode_data,
    decode_data_json, whole_numbers,
};
use triad_rules::{Mark, MoveError, Player};

const TTT: App = App::TicTacToe;

#[track_caller]
fn refuse(app: App, action: &str, payload: Value) -> ProtocolError {
    match Message::decode(app, action, &payload) {
        Ok(m) => panic!("{action} {payload} should be refused, decoded {m:?}"),
        Err(e) => {
            assert!(!e.to_string().is_empty() && !e.name().is_empty());
            e
        }
    }
}

#[track_caller]
fn invalid_field(app: App, action: &str, payload: Value, field: &str) {
    let e = refuse(app, action, payload.clone());
    assert_eq!(e.code(), 222, "{payload}: {e}");
    match e {
        ProtocolError::InvalidPayload { field: f, .. } => assert_eq!(f, field, "{payload}"),
        other => panic!("{other:?}"),
    }
}

fn board(cells: &[&str]) -> Value {
    json!(cells)
}

#[test]
fn error_codes_and_names_are_stable_and_unique() {
    let all = ProtocolError::all();
    let codes: Vec<u16> = all.iter().map(ProtocolError::code).collect();
    assert_eq!(
        codes,
        [
            0, 1, 2, 3, 4, 5, 220, 221, 222, 223, 224, 225, 226, 227, 228, 229, 230, 231
        ]
    );
    let names: Vec<&str> = all.iter().map(ProtocolError::name).collect();
    assert_eq!(
        names,
        [
            "game_over",
            "invalid_position",
            "not_your_turn",
            "cell_occupied",
            "mark_not_in_game",
            "not_your_mark",
            "unknown_app",
            "unknown_action",
            "invalid_payload",
            "state_conflict",
            "out_of_turn",
            "seq_mismatch",
            "reply_to_mismatch",
            "result_mismatch",
            "role_conflict",
            "game_id_mismatch",
            "bad_envelope",
            "too_many_pending",
        ]
    );
    for e in &all {
        let text = e.to_string();
        assert!(text.len() > 10, "{e:?} says what to do: {text}");
    }
}

#[test]
fn unknown_apps_and_actions() {
    let e = App::from_id("chess").unwrap_err();
    assert_eq!((e.code(), e.name()), (220, "unknown_app"));
    assert!(e.to_string().contains("tic-tac-toe and sos"));
    assert_eq!(
        App::from_id("Tic-Tac-Toe").unwrap_err().code(),
        220,
        "ids are exact"
    );
    let e = refuse(TTT, "resign", json!({}));
    assert_eq!((e.code(), e.name()), (221, "unknown_action"));
    // A long id is quoted, shortened.
    let long = "x".repeat(10_000);
    assert!(App::from_id(&long).unwrap_err().to_string().len() < 200);
}

#[test]
fn propose_and_accept() {
    assert_eq!(
        Message::decode(TTT, "propose", &json!({"seq":0,"role":"X"})).unwrap(),
        Message::Propose(triad_protocol::Propose {
            role: Player::First,
            game_id: None
        })
    );
    let m = Message::decode(
        App::Sos,
        "accept",
        &json!({"seq":0,"role":"second","gameId":"g-1"}),
    )
    .unwrap();
    assert_eq!(
        m.payload_json(App::Sos),
        r#"{"seq":0,"role":"second","gameId":"g-1"}"#
    );
    invalid_field(TTT, "propose", json!({"role":"X"}), "seq");
    invalid_field(TTT, "propose", json!({"seq":1,"role":"X"}), "seq");
    invalid_field(TTT, "propose", json!({"seq":"0","role":"X"}), "seq");
    invalid_field(TTT, "propose", json!({"seq":0.5,"role":"X"}), "seq");
    invalid_field(TTT, "propose", json!({"seq":-1,"role":"X"}), "seq");
    invalid_field(TTT, "propose", json!({"seq":0}), "role");
    invalid_field(TTT, "propose", json!({"seq":0,"role":"x"}), "role");
    invalid_field(TTT, "propose", json!({"seq":0,"role":"first"}), "role");
    invalid_field(App::Sos, "propose", json!({"seq":0,"role":"X"}), "role");
    invalid_field(TTT, "accept", json!({"seq":0,"role":7}), "role");
    invalid_field(
        TTT,
        "accept",
        json!({"seq":0,"role":"O","gameId":""}),
        "gameId",
    );
    invalid_field(
        TTT,
        "accept",
        json!({"seq":0,"role":"O","gameId":"a b"}),
        "gameId",
    );
    invalid_field(
        TTT,
        "accept",
        json!({"seq":0,"role":"O","gameId":"x".repeat(65)}),
        "gameId",
    );
    invalid_field(
        TTT,
        "accept",
        json!({"seq":0,"role":"O","gameId":12}),
        "gameId",
    );
    invalid_field(TTT, "propose", json!([0, "X"]), "payload");
    invalid_field(TTT, "propose", json!("{\"seq\":0}"), "payload");
    // Unknown fields are ignored (newer agents may add some); a null is an absent field.
    assert!(
        Message::decode(
            TTT,
            "propose",
            &json!({"seq":0,"role":"X","note":"hi","gameId":null})
        )
        .is_ok()
    );
}

#[test]
fn moves() {
    let ok =
        json!({"seq":1,"replyTo":0,"position":4,"mark":"X","board":["","","","","X","","","",""]});
    let m = Message::decode(TTT, "move", &ok).unwrap();
    assert_eq!(m.payload(TTT), ok);
    assert_eq!(m.seq(), Some(1));
    let with = |key: &str, value: Value| {
        let mut p = ok.clone();
        p[key] = value;
        p
    };
    let without = |key: &str| {
        let mut p = ok.clone();
        p.as_object_mut().unwrap().remove(key);
        p
    };
    for key in ["seq", "replyTo", "position", "mark", "board"] {
        invalid_field(TTT, "move", without(key), key);
    }
    invalid_field(TTT, "move", with("seq", json!(0)), "seq");
    invalid_field(TTT, "move", with("seq", json!(10)), "seq");
    invalid_field(TTT, "move", with("replyTo", json!(9)), "replyTo");
    invalid_field(TTT, "move", with("position", json!("4")), "position");
    invalid_field(TTT, "move", with("position", json!(4.0)), "position");
    assert_eq!(
        refuse(TTT, "move", with("position", json!(9))),
        ProtocolError::IllegalMove(MoveError::InvalidPosition)
    );
    assert_eq!(
        refuse(TTT, "move", with("position", json!(1u64 << 40))),
        ProtocolError::IllegalMove(MoveError::InvalidPosition)
    );
    invalid_field(TTT, "move", with("mark", json!("x")), "mark");
    invalid_field(TTT, "move", with("mark", json!("XO")), "mark");
    invalid_field(TTT, "move", with("mark", json!(1)), "mark");
    assert_eq!(
        refuse(TTT, "move", with("mark", json!("S"))),
        ProtocolError::IllegalMove(MoveError::MarkNotInGame)
    );
    assert_eq!(
        refuse(App::Sos, "move", with("mark", json!("X"))),
        ProtocolError::IllegalMove(MoveError::MarkNotInGame)
    );
    invalid_field(
        TTT,
        "move",
        with("board", board(&["", "", "", "", "X", "", "", ""])),
        "board",
    );
    invalid_field(TTT, "move", with("board", board(&[""; 10])), "board");
    invalid_field(TTT, "move", with("board", json!("----X----")), "board");
    invalid_field(
        TTT,
        "move",
        with("board", json!([null, "", "", "", "X", "", "", "", ""])),
        "board",
    );
    invalid_field(
        TTT,
        "move",
        with("board", board(&["S", "", "", "", "X", "", "", "", ""])),
        "board",
    );
    invalid_field(
        TTT,
        "move",
        with("board", board(&["-", "", "", "", "X", "", "", "", ""])),
        "board",
    );
    invalid_field(
        TTT,
        "move",
        with("board", board(&["x", "", "", "", "X", "", "", "", ""])),
        "board",
    );
    // The decoder reads the fields; whether the board follows is the state machine's job.
    assert!(Message::decode(TTT, "move", &with("board", board(&["O"; 9]))).is_ok());
}

#[test]
fn results() {
    let cases = [
        (
            json!({"outcome":"win","winner":"X"}),
            GameResult::win(Player::First, None),
        ),
        (json!({"outcome":"draw"}), GameResult::draw(None)),
        (
            json!({"outcome":"abort","reason":"state-conflict"}),
            GameResult::abort("state-conflict", None),
        ),
    ];
    for (payload, expected) in cases {
        let m = Message::decode(TTT, "result", &payload).unwrap();
        assert_eq!(m, Message::Result(expected));
        assert_eq!(m.payload(TTT), payload);
    }
    let abort = Message::decode(TTT, "result", &json!({"outcome":"abort"})).unwrap();
    assert!(matches!(
        abort,
        Message::Result(GameResult {
            outcome: Outcome::Abort,
            reason: None,
            ..
        })
    ));
    let sos = Message::decode(
        App::Sos,
        "result",
        &json!({"outcome":"win","winner":"second"}),
    )
    .unwrap();
    assert!(matches!(
        sos,
        Message::Result(GameResult {
            winner: Some(Player::Second),
            ..
        })
    ));
    invalid_field(TTT, "result", json!({}), "outcome");
    invalid_field(TTT, "result", json!({"outcome":"lose"}), "outcome");
    invalid_field(TTT, "result", json!({"outcome":"win"}), "winner");
    invalid_field(
        TTT,
        "result",
        json!({"outcome":"win","winner":"S"}),
        "winner",
    );
    invalid_field(
        TTT,
        "result",
        json!({"outcome":"win","winner":"first"}),
        "winner",
    );
    invalid_field(
        TTT,
        "result",
        json!({"outcome":"draw","winner":"X"}),
        "winner",
    );
    invalid_field(
        TTT,
        "result",
        json!({"outcome":"abort","reason":""}),
        "reason",
    );
    invalid_field(
        TTT,
        "result",
        json!({"outcome":"abort","reason":"a\nb"}),
        "reason",
    );
    invalid_field(
        TTT,
        "result",
        json!({"outcome":"abort","reason":"r".repeat(201)}),
        "reason",
    );
    invalid_field(
        TTT,
        "result",
        json!({"outcome":"abort","reason":5}),
        "reason",
    );
}

#[test]
fn data_parts() {
    let data = json!({"appId":"tic-tac-toe","action":"propose","payload":{"seq":0,"role":"O"}});
    let (app, m) = decode_data(&data).unwrap();
    assert_eq!(app, TTT);
    assert_eq!(m.data(app), data);
    assert_eq!(
        decode_data_json(data.to_string().as_bytes()).unwrap(),
        (app, m)
    );
    assert_eq!(
        decode_data(&json!({"appId":"go","action":"move","payload":{}}))
            .unwrap_err()
            .code(),
        220
    );
    assert_eq!(
        decode_data(&json!({"action":"move","payload":{}}))
            .unwrap_err()
            .code(),
        222
    );
    assert_eq!(
        decode_data(&json!({"appId":"sos","action":"move"}))
            .unwrap_err()
            .code(),
        222
    );
    assert_eq!(
        decode_data(&json!(["tic-tac-toe"])).unwrap_err().code(),
        222
    );
    for bytes in [
        &b"not json"[..],
        b"",
        b"{",
        b"\xff\xfe",
        b"[1,2",
        b"{\"appId\":1}",
    ] {
        assert_eq!(
            decode_data_json(bytes).unwrap_err().code(),
            222,
            "{bytes:?}"
        );
    }
    let huge = format!(
        r#"{{"appId":"sos","action":"propose","payload":{{"seq":0,"role":"first","pad":"{}"}}}}"#,
        "x".repeat(5000)
    );
    let e = decode_data_json(huge.as_bytes()).unwrap_err();
    assert!(e.to_string().contains("at most"), "{e}");
    // Deep nesting is refused by the JSON reader, not a stack overflow.
    let deep = format!("{}{}", "[".repeat(3000), "]".repeat(3000));
    assert_eq!(decode_data_json(deep.as_bytes()).unwrap_err().code(), 222);
}

#[test]
fn game_ids() {
    assert!(GameId::new("game-7.a_b:c").is_ok());
    assert!(GameId::new(&"a".repeat(64)).is_ok());
    for bad in ["", "é", "a/b", " a", &"a".repeat(65)] {
        assert_eq!(GameId::new(bad).unwrap_err().code(), 222, "{bad:?}");
    }
}

#[test]
fn manifests() {
    for app in App::ALL {
        let manifest = serde_json::to_value(app.manifest()).unwrap();
        assert_eq!(manifest["appId"], app.id());
        assert_eq!(manifest["version"], "0.3.0");
        assert_eq!(manifest["type"], "p2p");
        assert_eq!(manifest["minParticipants"], 2);
        let ids: Vec<&str> = manifest["actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["id"].as_str().unwrap())
            .collect();
        assert_eq!(ids, ["propose", "accept", "move", "result"]);
        assert_eq!(App::from_id(app.id()).unwrap(), app);
        assert_eq!(App::of_game(app.game()), app);
        for p in Player::BOTH {
            assert_eq!(app.role(app.role_name(p)), Some(p));
        }
    }
    for action in Action::ALL {
        assert_eq!(Action::from_id(action.id()).unwrap(), action);
    }
}

/// Any JSON value, up to a small depth.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        (0u64..12).prop_map(|n| json!(n)),
        any::<f64>().prop_map(|f| json!(f)),
        "[XOS]?|[a-z-]{0,12}|.{0,8}".prop_map(Value::String),
    ];
    leaf.prop_recursive(3, 24, 10, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..10).prop_map(Value::Array),
            prop::collection::btree_map(
                prop_oneof![
                    Just("seq".to_owned()),
                    Just("replyTo".to_owned()),
                    Just("position".to_owned()),
                    Just("mark".to_owned()),
                    Just("board".to_owned()),
                    Just("role".to_owned()),
                    Just("outcome".to_owned()),
                    Just("winner".to_owned()),
                    Just("reason".to_owned()),
                    Just("gameId".to_owned()),
                    "[a-z]{1,6}",
                ],
                inner,
                0..8
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A well-formed message of an app.
fn any_message(app: App) -> impl Strategy<Value = Message> {
    let marks: Vec<Mark> = match app {
        App::TicTacToe => vec![Mark::X, Mark::O],
        App::Sos => vec![Mark::S, Mark::O],
    };
    let mark = prop::sample::select(marks.clone());
    let cell = prop::option::of(prop::sample::select(marks));
    let game_id = prop::option::of("[a-zA-Z0-9._:-]{1,64}".prop_map(|s| GameId::new(&s).unwrap()));
    let player = prop::sample::select(Player::BOTH.to_vec());
    prop_oneof![
        (player.clone(), game_id.clone()).prop_map(|(role, game_id)| Message::Propose(
            triad_protocol::Propose { role, game_id }
        )),
        (player.clone(), game_id.clone())
            .prop_map(|(role, game_id)| Message::Accept(triad_protocol::Accept { role, game_id })),
        (
            1u8..=9,
            0u8..=8,
            0u8..9,
            mark,
            prop::array::uniform9(cell),
            game_id.clone()
        )
            .prop_map(
                |(seq, reply_to, position, mark, board, game_id)| Message::Move(
                    triad_protocol::Move {
                        seq,
                        reply_to,
                        position: triad_rules::Cell::new(position).unwrap(),
                        mark,
                        board,
                        game_id,
                    }
                )
            ),
        (player, game_id.clone()).prop_map(|(w, id)| Message::Result(GameResult::win(w, id))),
        game_id
            .clone()
            .prop_map(|id| Message::Result(GameResult::draw(id))),
        ("[ -~]{1,30}", game_id).prop_map(|(r, id)| Message::Result(GameResult::abort(&r, id))),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Any payload, for any app and action: a message or a typed error, never a panic; and a
    /// decoded message re-encodes to a payload that decodes to the same message.
    #[test]
    fn any_payload_decodes_or_is_refused_with_a_code(
        payload in any_json(),
        app in prop::sample::select(App::ALL.to_vec()),
        action in prop::sample::select(vec!["propose", "accept", "move", "result", "Move", ""]),
    ) {
        match Message::decode(app, action, &payload) {
            Ok(m) => {
                prop_assert_eq!(m.action().id(), action);
                let again = Message::decode(app, action, &m.payload(app)).unwrap();
                prop_assert_eq!(again, m);
            }
            Err(e) => {
                prop_assert!(e.code() <= 5 || (220..=231).contains(&e.code()));
                prop_assert!(!e.to_string().is_empty());
            }
        }
    }

    /// Any bytes as a data part: never a panic.
    #[test]
    fn any_bytes_decode_or_are_refused(bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        if let Err(e) = decode_data_json(&bytes) {
            prop_assert!(!e.name().is_empty());
        }
    }

    /// Every well-formed message survives encoding and decoding unchanged.
    #[test]
    fn messages_round_trip(
        (app, message) in prop::sample::select(App::ALL.to_vec())
            .prop_flat_map(|app| (Just(app), any_message(app)))
    ) {
        let json = message.payload_json(app);
        let decoded = Message::decode_json(app, message.action().id(), &json).unwrap();
        prop_assert_eq!(&decoded, &message);
        let (back_app, back) = decode_data(&message.data(app)).unwrap();
        prop_assert_eq!(back_app, app);
        prop_assert_eq!(back, message);
    }
}

/// The official A2A SDKs send every number as a double: whole ones become integers, so a
/// propose with `"seq": 0.0` decodes; fractions and strings stay as they are.
#[test]
fn whole_doubles_become_integers_and_others_stay() {
    assert_eq!(
        whole_numbers(json!({"a": [1.0, 2.5, -3.0], "b": "1.0", "c": 9.007_199_254_740_992e15})),
        json!({"a": [1, 2.5, -3], "b": "1.0", "c": 9.007_199_254_740_992e15})
    );
    let sent =
        json!({"appId": "tic-tac-toe", "action": "propose", "payload": {"seq": 0.0, "role": "X"}});
    assert!(
        decode_data(&sent).is_err(),
        "a double is not an integer to the decoder"
    );
    assert!(decode_data(&whole_numbers(sent)).is_ok());
}
