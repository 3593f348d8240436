"""A verifier of Triad's signed transcripts (docs/transcript.md), written from the format's
documentation alone: the file's one form, the key, the hash chain, the server's Ed25519
signature of its head, and the players' own signatures of their messages and moves. (It does not
replay the moves and the money; `triad verify` does.)

    python verify_transcript.py TRANSCRIPT PUBLIC_KEY_HEX

exits 0 and prints "ok" when the transcript verifies, else 1 with the reason.
"""

from __future__ import annotations

import hashlib
import json
import re
import struct
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

FORMAT = "triad-transcript/1"
HEADER_DOMAIN = b"triad-transcript/1 header\0"
HEAD_DOMAIN = b"triad-transcript/1 head\0"
FIELDS = ["format", "server_key", "match_id", "payouts", "events", "messages", "links", "head", "signature"]
MESSAGE = ["from", "to", "app", "action", "payload", "public_key", "signature"]
AGENT_DOMAIN = "triad-agent-message/v1"
MOVE_DOMAIN = "triad-move/v1"
PAYOUTS = ["win_bps_of_pot", "draw_bps_of_stake", "timeout_bps_of_pot", "cancel_bps_of_stake"]


class Refused(Exception):
    """The transcript does not verify; the message says where."""


def h(data: bytes) -> bytes:
    """BLAKE2b-256."""
    return hashlib.blake2b(data, digest_size=32).digest()


def lower_hex(text: object, nbytes: int, field: str) -> bytes:
    if not isinstance(text, str) or not re.fullmatch(f"[0-9a-f]{{{2 * nbytes}}}", text):
        raise Refused(f"{field}: not {2 * nbytes} lowercase hex digits")
    return bytes.fromhex(text)


def check_signed_move(i: int, event_text: str, key_id: str, match_id: int) -> None:
    """A move whose event carries its player's signature: the key is the mover's address's
    and it signed this move (`triad-move/v1`)."""
    try:
        event = json.loads(event_text)
    except ValueError:
        raise Refused(f"events[{i}]: not JSON") from None
    kind = event.get("kind") if isinstance(event, dict) else None
    if not isinstance(kind, dict) or kind.get("type") != "moved" or "signed" not in kind:
        return
    by, signed = kind.get("by"), kind["signed"]
    mover = by.get("human") if isinstance(by, dict) else None
    if not isinstance(mover, str) or not isinstance(signed, dict):
        raise Refused(f"events[{i}].signed: not a person's signature of a move")
    public = lower_hex(signed.get("public_key"), 32, f"events[{i}].signed.public_key")
    if "0x" + h(b"\x00" + public).hex() != mover:
        raise Refused(f"events[{i}].signed.public_key: not the mover's key")
    text = (
        f"{MOVE_DOMAIN}\nserver: {key_id}\nmatch: {match_id}\nseq: {kind.get('seq')}\n"
        f"cell: {kind.get('cell')}\nmark: {kind.get('mark')}\nby: {mover}"
    ).encode("utf-8")
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(
            lower_hex(signed.get("signature"), 64, f"events[{i}].signed.signature"), text
        )
    except InvalidSignature:
        raise Refused(f"events[{i}].signed.signature: not the mover's signature of the move") from None


def verify(data: bytes, trusted_key_hex: str) -> dict:
    """Checks `data` (a transcript file's bytes) against the server's key; returns the parsed
    transcript or raises Refused."""
    try:
        t = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as e:
        raise Refused(f"the file: not JSON: {e}") from None
    if not isinstance(t, dict) or list(t) != FIELDS:
        raise Refused(f"the file: the fields are not {FIELDS}")
    # The one form: two-space indentation, ": " after keys, UTF-8, a final newline.
    if (json.dumps(t, indent=2, ensure_ascii=False) + "\n").encode("utf-8") != data:
        raise Refused("the file: not in the transcript's one form")
    if t["format"] != FORMAT:
        raise Refused(f"format: not {FORMAT}")
    key = t["server_key"]
    if not isinstance(key, dict) or list(key) != ["algorithm", "public_key", "key_id"]:
        raise Refused("server_key: not algorithm, public_key, key_id")
    if key["algorithm"] != "ed25519":
        raise Refused("server_key.algorithm: not ed25519")
    public = lower_hex(key["public_key"], 32, "server_key.public_key")
    if public != lower_hex(trusted_key_hex, 32, "the trusted key"):
        raise Refused("server_key.public_key: not the server's key you trust")
    if key["key_id"] != h(public)[:8].hex():
        raise Refused("server_key.key_id: not the public key's id")
    match_id, payouts = t["match_id"], t["payouts"]
    if not isinstance(match_id, int) or isinstance(match_id, bool) or not 0 <= match_id < 2**64:
        raise Refused("match_id: not a u64")
    if not isinstance(payouts, dict) or list(payouts) != PAYOUTS:
        raise Refused(f"payouts: the fields are not {PAYOUTS}")
    for name in PAYOUTS:
        value = payouts[name]
        if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 2**32:
            raise Refused(f"payouts.{name}: not a u32")
    events, links = t["events"], t["links"]
    if not isinstance(events, list) or not events or not all(isinstance(e, str) for e in events):
        raise Refused("events: not a non-empty list of strings")
    messages = t["messages"]
    if not isinstance(messages, list):
        raise Refused("messages: not a list")
    texts = [e.encode("utf-8") for e in events]
    for i, e in enumerate(events):
        check_signed_move(i, e, key["key_id"], match_id)
    for j, m in enumerate(messages):
        if not isinstance(m, dict) or list(m) != MESSAGE or not all(isinstance(v, str) for v in m.values()):
            raise Refused(f"messages[{j}]: the fields are not {MESSAGE}, all strings")
        signed = (
            f"{AGENT_DOMAIN}\nfrom: {m['from']}\nto: {m['to']}\napp: {m['app']}\n"
            f"action: {m['action']}\npayload: {m['payload']}"
        ).encode("utf-8")
        sender = lower_hex(m["public_key"], 32, f"messages[{j}].public_key")
        if "0x" + h(b"\x00" + sender).hex() != m["from"]:
            raise Refused(f"messages[{j}].public_key: not the sender's key")
        try:
            Ed25519PublicKey.from_public_bytes(sender).verify(
                lower_hex(m["signature"], 64, f"messages[{j}].signature"), signed
            )
        except InvalidSignature:
            raise Refused(f"messages[{j}].signature: not the sender's signature of the message") from None
        texts.append(signed + f"\npublic_key: {m['public_key']}\nsignature: {m['signature']}".encode("utf-8"))
    if not isinstance(links, list) or len(links) != len(texts):
        raise Refused("links: not one per event and message")
    link = h(
        HEADER_DOMAIN
        + public
        + struct.pack(">Q", match_id)
        + b"".join(struct.pack(">I", payouts[name]) for name in PAYOUTS)
    )
    for i, (text, stated) in enumerate(zip(texts, links)):
        link = h(link + text)
        if stated != link.hex():
            raise Refused(f"links[{i}]: not the chain's link after entry {i}")
    if t["head"] != link.hex():
        raise Refused("head: not the last link")
    signature = lower_hex(t["signature"], 64, "signature")
    try:
        Ed25519PublicKey.from_public_bytes(public).verify(signature, HEAD_DOMAIN + link)
    except InvalidSignature:
        raise Refused("signature: not the server key's signature of the head") from None
    return t


def main(argv: list[str]) -> int:
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[1], "rb") as f:
        data = f.read()
    try:
        verify(data, argv[2])
    except Refused as e:
        print(f"{argv[1]} does not verify: {e}", file=sys.stderr)
        return 1
    print("ok")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
