// Test vectors for triad-identity, made with the official Sui TypeScript SDK.
//
// Regenerate (from this directory):
//
//     npm ci && node generate.mjs > ../tests/sui_vectors.json
//
// The output is deterministic: fixed secret keys, fixed messages, no clocks and no
// randomness (Ed25519 signatures are deterministic), so running it again must
// reproduce the committed file byte for byte.
//
// Besides the SDK's own outputs (address, plain signature, signPersonalMessage
// signature), this file carries a second, independent implementation of the
// Triad login message (`renderLoginMessage` below) and of the timestamp format,
// so the Rust test also checks that a non-Rust client can produce the exact bytes
// the server signs.

import { Ed25519Keypair } from "@mysten/sui/keypairs/ed25519";
import { messageWithIntent } from "@mysten/sui/cryptography";
import { bcs } from "@mysten/sui/bcs";
import { verifyPersonalMessageSignature } from "@mysten/sui/verify";
import { blake2b } from "@noble/hashes/blake2.js";
import { readFileSync } from "node:fs";

const sdkVersion = JSON.parse(
  readFileSync(new URL("./node_modules/@mysten/sui/package.json", import.meta.url)),
).version;

const hex = (bytes) => Buffer.from(bytes).toString("hex");
const utf8 = (text) => new TextEncoder().encode(text);

/** 32 bytes where byte i is (start + i * step) mod 256. */
function patternBytes(start, step) {
  return Uint8Array.from({ length: 32 }, (_, i) => (start + i * step) % 256);
}

// A reference JavaScript rendering of triad_identity::LoginMessage::render.
// Timestamps are milliseconds since the Unix epoch, rendered with
// Date.prototype.toISOString, which is exactly `YYYY-MM-DDTHH:MM:SS.sssZ`
// for years 0000..=9999.
function renderLoginMessage({ domain, address, nonce, issuedAtMs, expiresAtMs }) {
  return [
    `${domain} wants you to sign in to Triad with your account:`,
    address,
    "",
    "Signing this message proves you control this account. It is not a transaction and costs nothing.",
    "",
    "Version: 1",
    `Nonce: ${nonce}`,
    `Issued At: ${new Date(issuedAtMs).toISOString()}`,
    `Expiration Time: ${new Date(expiresAtMs).toISOString()}`,
  ].join("\n");
}

async function signatures(keypair, name, message) {
  const { signature: suiPersonalMessageSignature, bytes } =
    await keypair.signPersonalMessage(message);
  if (bytes !== Buffer.from(message).toString("base64")) {
    throw new Error(`${name}: signPersonalMessage echoed different bytes`);
  }
  // The SDK must accept its own signature, or the vector is worthless.
  const signer = await verifyPersonalMessageSignature(message, suiPersonalMessageSignature);
  if (signer.toSuiAddress() !== keypair.toSuiAddress()) {
    throw new Error(`${name}: SDK verified the signature for another address`);
  }
  const personalMessageDigest = blake2b(
    messageWithIntent("PersonalMessage", bcs.byteVector().serialize(message).toBytes()),
    { dkLen: 32 },
  );
  return {
    name,
    message_hex: hex(message),
    ed25519_signature: hex(await keypair.sign(message)),
    sui_personal_message_digest: hex(personalMessageDigest),
    sui_personal_message_signature: suiPersonalMessageSignature,
  };
}

const keys = [
  { name: "ascending", secret: patternBytes(0, 1) },
  { name: "all-0x42", secret: new Uint8Array(32).fill(0x42) },
  { name: "stride-37", secret: patternBytes(200, 37) },
];

const timestampsMs = [
  0, 1, 999, 1_000, 59_999, 86_399_999, 86_400_000, 951_782_400_000, 951_868_799_999,
  978_307_199_999, 1_704_067_200_000, 1_767_225_599_999, 4_107_542_400_000,
  253_402_300_799_999,
];

const login = {
  domain: "triad.example:8443",
  nonce: "0f1e2d3c4b5a69788796a5b4c3d2e1f0",
  issuedAtMs: 1_767_225_600_000,
  expiresAtMs: 1_767_225_900_000,
};

const output = {
  generator: "crates/triad-identity/vectors/generate.mjs",
  sdk: `@mysten/sui@${sdkVersion}`,
  keys: [],
  timestamps: timestampsMs.map((ms) => ({ ms, rfc3339: new Date(ms).toISOString() })),
  login_messages: [],
};

for (const { name, secret } of keys) {
  const keypair = Ed25519Keypair.fromSecretKey(secret);
  const address = keypair.toSuiAddress();
  const loginText = renderLoginMessage({ ...login, address });
  output.login_messages.push({
    key: name,
    domain: login.domain,
    address,
    nonce: login.nonce,
    issued_at_ms: login.issuedAtMs,
    expires_at_ms: login.expiresAtMs,
    rendered: loginText,
  });

  const messages = [
    ["empty", new Uint8Array(0)],
    ["ascii", utf8("hello, triad")],
    // 127 and 128 bytes straddle the one-/two-byte ULEB128 length prefix in BCS.
    ["127-bytes", utf8("a".repeat(127))],
    ["128-bytes", utf8("b".repeat(128))],
    ["non-ascii", utf8("Connexion à Triad ✓ — 井字棋 🎮\nNonce: ü")],
    ["binary", Uint8Array.from({ length: 40 }, (_, i) => (i * 151 + 7) % 256)],
    ["login-message", utf8(loginText)],
    ["login-message-like-non-ascii", utf8(loginText.replace("Triad", "Triad — Morpion ✕◯"))],
  ];
  if (name === "ascending") {
    // 16384 bytes needs a three-byte ULEB128 length prefix.
    messages.push(["16384-bytes", Uint8Array.from({ length: 16384 }, (_, i) => i % 251)]);
  }

  const entry = {
    name,
    secret_key: hex(secret),
    public_key: hex(keypair.getPublicKey().toRawBytes()),
    sui_address: address,
    signatures: [],
  };
  for (const [messageName, message] of messages) {
    entry.signatures.push(await signatures(keypair, messageName, message));
  }
  output.keys.push(entry);
}

process.stdout.write(`${JSON.stringify(output, null, 2)}\n`);
