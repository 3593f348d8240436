//! The signed envelope: only the sender's key signs its messages, for one recipient, one
//! app, one action and one exact payload.

use serde_json::json;
use triad_identity::{SigningKey, address_of};
use triad_protocol::{
    App, GameId, GameResult, Message, Signed,
    envelope::{sign, signing_text, verify},
};
use triad_rules::Player;

fn key(seed: u8) -> SigningKey {
    SigningKey::from_bytes(&[seed; 32])
}

fn address(k: &SigningKey) -> [u8; 32] {
    address_of(&k.verifying_key())
}

fn a_move() -> Message {
    Message::decode(
        App::TicTacToe,
        "move",
        &json!({"seq":1,"replyTo":0,"position":4,"mark":"X","board":["","","","","X","","","",""],"gameId":"g7"}),
    )
    .unwrap()
}

#[test]
fn a_signed_message_verifies_for_its_sender_and_recipient() {
    let (alice, bob) = (key(1), key(2));
    let m = a_move();
    let signed = sign(&alice, &address(&bob), App::TicTacToe, &m);
    assert_eq!(signed.public_key.len(), 64);
    assert_eq!(signed.signature.len(), 128);
    verify(
        &signed,
        &address(&alice),
        &address(&bob),
        App::TicTacToe,
        &m,
    )
    .unwrap();
    // The text names everything it covers.
    let text = signing_text(&address(&alice), &address(&bob), App::TicTacToe, &m);
    assert!(text.starts_with("triad-agent-message/v1\nfrom: 0x"));
    assert!(text.ends_with(r#"payload: {"seq":1,"replyTo":0,"position":4,"mark":"X","board":["","","","","X","","","",""],"gameId":"g7"}"#));
    // The wire form.
    let wire = serde_json::to_value(&signed).unwrap();
    assert_eq!(wire.as_object().unwrap().len(), 2);
    let back: Signed = serde_json::from_value(wire).unwrap();
    assert_eq!(back, signed);
}

#[test]
fn nobody_can_speak_for_another_agent() {
    let (alice, bob, mallory) = (key(1), key(2), key(3));
    let m = a_move();
    let by_alice = sign(&alice, &address(&bob), App::TicTacToe, &m);
    let check =
        |signed: &Signed, from: &SigningKey, to: &SigningKey, app: App, message: &Message| {
            verify(signed, &address(from), &address(to), app, message)
        };
    // Mallory signs with her own key and claims to be Alice: her key is not Alice's.
    let by_mallory = sign(&mallory, &address(&bob), App::TicTacToe, &m);
    let e = check(&by_mallory, &alice, &bob, App::TicTacToe, &m).unwrap_err();
    assert_eq!((e.code(), e.name()), (230, "bad_envelope"));
    assert!(e.to_string().contains("not to the sender"), "{e}");
    // Mallory borrows Alice's key hex but not her signature.
    let forged = Signed {
        public_key: by_alice.public_key.clone(),
        signature: by_mallory.signature.clone(),
    };
    assert_eq!(
        check(&forged, &alice, &bob, App::TicTacToe, &m)
            .unwrap_err()
            .code(),
        230
    );
    // Alice's signature covers this recipient, app, action and payload only.
    assert!(check(&by_alice, &alice, &mallory, App::TicTacToe, &m).is_err());
    assert!(check(&by_alice, &alice, &bob, App::Sos, &m).is_err());
    let Message::Move(mut other) = m.clone() else {
        unreachable!()
    };
    other.game_id = Some(GameId::new("g8").unwrap());
    assert!(
        check(
            &by_alice,
            &alice,
            &bob,
            App::TicTacToe,
            &Message::Move(other)
        )
        .is_err()
    );
    let result = Message::Result(GameResult::win(Player::First, None));
    assert!(check(&by_alice, &alice, &bob, App::TicTacToe, &result).is_err());
    // Malformed keys and signatures are refused, never a panic.
    for (public_key, signature) in [
        ("", ""),
        ("zz", "00"),
        (&"00".repeat(32)[..], &"00".repeat(64)[..]),
        (&by_alice.public_key[..], "not hex"),
        (&by_alice.public_key[..], &by_alice.signature[..126]),
    ] {
        let s = Signed {
            public_key: public_key.into(),
            signature: signature.into(),
        };
        assert_eq!(
            check(&s, &alice, &bob, App::TicTacToe, &m)
                .unwrap_err()
                .code(),
            230
        );
    }
    check(&by_alice, &alice, &bob, App::TicTacToe, &m).unwrap();
}

#[test]
fn unknown_envelope_fields_are_refused() {
    let text = r#"{"publicKey":"00","signature":"00","from":"0x1"}"#;
    assert!(serde_json::from_str::<Signed>(text).is_err());
}
