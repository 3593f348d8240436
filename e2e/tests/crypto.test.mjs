// The web app's BLAKE2b and Sui addresses, in Node (no browser): RFC 7693's vector,
// published BLAKE2b-256 vectors, Node's own BLAKE2b-512 on inputs of every length around
// the block size, and the Sui SDK's address vectors. The same modules run in the page.

import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';

import { blake2b, blake2b256 } from '../../web/js/blake2b.js';
import { formatAmount, parseAmount } from '../../web/js/format.js';
import { addressOf } from '../../web/js/wallet.js';
import { ROOT } from '../lib/harness.mjs';

const hex = (bytes) => Buffer.from(bytes).toString('hex');
const utf8 = (text) => new TextEncoder().encode(text);

test('BLAKE2b-512 of "abc" is RFC 7693 appendix A', () => {
  assert.equal(
    hex(blake2b(utf8('abc'))),
    'ba80a53f981c4d0d6a2797b69f12f6e94c212f14685ac4b74b12bb6fdbffa2d1' +
      '7d87c5392aab792dc252d5de4533cc9518d38aa8dbf1925ab92386edd4009923',
  );
});

test('BLAKE2b-256 matches the published vectors', () => {
  assert.equal(hex(blake2b256(new Uint8Array())), '0e5751c026e543b2e8ab2eb06099daa1d1e5df47778f7787faab45cdf12fe3a8');
  assert.equal(hex(blake2b256(utf8('abc'))), 'bddd813c634239723171ef3fee98579b94964e3bb1cb3e427262c8c068d52319');
  assert.equal(
    hex(blake2b256(utf8('The quick brown fox jumps over the lazy dog'))),
    '01718cec35cd3d796dd00020e0bfecb473ad23457d063b75eff29c0ffa2e58a9',
  );
});

test('BLAKE2b-512 agrees with Node on every length around one and two blocks', () => {
  const lengths = [...Array(260).keys(), 383, 384, 385, 1000, 4096];
  for (const n of lengths) {
    const data = randomBytes(n);
    assert.equal(hex(blake2b(data)), createHash('blake2b512').update(data).digest('hex'), `length ${n}`);
  }
});

test('BLAKE2b refuses output lengths outside 1-64', () => {
  assert.throws(() => blake2b(new Uint8Array(), 0), RangeError);
  assert.throws(() => blake2b(new Uint8Array(), 65), RangeError);
  assert.equal(blake2b(new Uint8Array(), 1).length, 1);
});

test('addresses are the Sui SDK’s for every committed key vector', () => {
  const vectors = JSON.parse(readFileSync(path.join(ROOT, 'crates/triad-identity/tests/sui_vectors.json'), 'utf8'));
  assert.ok(vectors.keys.length >= 3, 'the vector file has keys');
  for (const key of vectors.keys) {
    const publicKey = new Uint8Array(Buffer.from(key.public_key, 'hex'));
    assert.equal(addressOf(publicKey), key.sui_address, key.name);
  }
});

test('amounts round-trip between coins and minor units', () => {
  assert.equal(parseAmount('1'), 1_000_000n);
  assert.equal(parseAmount('0.25'), 250_000n);
  assert.equal(parseAmount(' 1,000.5 '), 1_000_500_000n);
  assert.equal(parseAmount(''), 0n);
  assert.throws(() => parseAmount('-1'), /amount/);
  assert.throws(() => parseAmount('1.0000001'), /decimals/);
  assert.throws(() => parseAmount('1e3'), /amount/);
  assert.equal(formatAmount('1800000'), '1.80');
  assert.equal(formatAmount('-1000000'), '\u22121.00');
  assert.equal(formatAmount('1234567890123'), '1,234,567.890123');
  assert.equal(formatAmount(800_000n, { sign: true }), '+0.80');
});
