// @ts-check
/**
 * BLAKE2b (RFC 7693), for Sui addresses: WebCrypto has no BLAKE2.
 *
 * A direct transcription of the RFC's reference algorithm over 64-bit words held in a
 * `BigUint64Array`, whose stores wrap modulo 2^64 by themselves. Hashing a 33-byte public
 * key is one compression, so clarity wins over speed here.
 *
 * Tested against the RFC's "abc" vector, published BLAKE2b-256 vectors, Node's
 * `blake2b512` on random inputs of every length around the block size, and the Sui SDK's
 * address vectors (e2e/tests/wallet_crypto.test.mjs).
 *
 * @module
 */

/** The initialisation vector: the first 64 bits of the fractional parts of the square
 * roots of the first eight primes (as SHA-512's). */
const IV = new BigUint64Array([
  0x6a09e667f3bcc908n, 0xbb67ae8584caa73bn, 0x3c6ef372fe94f82bn, 0xa54ff53a5f1d36f1n,
  0x510e527fade682d1n, 0x9b05688c2b3e6c1fn, 0x1f83d9abfb41bd6bn, 0x5be0cd19137e2179n,
]);

/** The message schedule of each of the ten distinct rounds (rounds 10 and 11 repeat 0
 * and 1). */
const SIGMA = [
  [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15],
  [14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3],
  [11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4],
  [7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8],
  [9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13],
  [2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9],
  [12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11],
  [13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10],
  [6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5],
  [10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0],
];

const BLOCK = 128;

/**
 * Rotates a 64-bit word right.
 * @param {bigint} x
 * @param {bigint} n
 */
function rotr(x, n) {
  return BigInt.asUintN(64, (x >> n) | (x << (64n - n)));
}

/**
 * The mixing function G, on words a, b, c, d of the work vector.
 * @param {BigUint64Array} v
 * @param {number} a @param {number} b @param {number} c @param {number} d
 * @param {bigint} x @param {bigint} y
 */
function mix(v, a, b, c, d, x, y) {
  v[a] = v[a] + v[b] + x;
  v[d] = rotr(v[d] ^ v[a], 32n);
  v[c] = v[c] + v[d];
  v[b] = rotr(v[b] ^ v[c], 24n);
  v[a] = v[a] + v[b] + y;
  v[d] = rotr(v[d] ^ v[a], 16n);
  v[c] = v[c] + v[d];
  v[b] = rotr(v[b] ^ v[c], 63n);
}

/**
 * The compression function F: folds one 128-byte block into the state `h`.
 * @param {BigUint64Array} h the state, 8 words
 * @param {Uint8Array} block 128 bytes
 * @param {bigint} t bytes hashed so far, this block included
 * @param {boolean} last whether this is the final block
 */
function compress(h, block, t, last) {
  const v = new BigUint64Array(16);
  v.set(h, 0);
  v.set(IV, 8);
  v[12] ^= BigInt.asUintN(64, t);
  v[13] ^= t >> 64n;
  if (last) v[14] = ~v[14];
  const view = new DataView(block.buffer, block.byteOffset, BLOCK);
  const m = new BigUint64Array(16);
  for (let i = 0; i < 16; i++) m[i] = view.getBigUint64(i * 8, true);
  for (let round = 0; round < 12; round++) {
    const s = SIGMA[round % 10];
    mix(v, 0, 4, 8, 12, m[s[0]], m[s[1]]);
    mix(v, 1, 5, 9, 13, m[s[2]], m[s[3]]);
    mix(v, 2, 6, 10, 14, m[s[4]], m[s[5]]);
    mix(v, 3, 7, 11, 15, m[s[6]], m[s[7]]);
    mix(v, 0, 5, 10, 15, m[s[8]], m[s[9]]);
    mix(v, 1, 6, 11, 12, m[s[10]], m[s[11]]);
    mix(v, 2, 7, 8, 13, m[s[12]], m[s[13]]);
    mix(v, 3, 4, 9, 14, m[s[14]], m[s[15]]);
  }
  for (let i = 0; i < 8; i++) h[i] ^= v[i] ^ v[i + 8];
}

/**
 * BLAKE2b of `data` (unkeyed), `outLength` bytes long (1-64).
 *
 * @param {Uint8Array} data
 * @param {number} [outLength=64]
 * @returns {Uint8Array}
 */
export function blake2b(data, outLength = 64) {
  if (!Number.isInteger(outLength) || outLength < 1 || outLength > 64) {
    throw new RangeError('BLAKE2b output length must be 1 to 64 bytes');
  }
  const h = IV.slice();
  // The parameter block: digest length, no key, fanout 1, depth 1.
  h[0] ^= BigInt(0x01010000 | outLength);
  const input = data;

  const block = new Uint8Array(BLOCK);
  let t = 0n;
  let offset = 0;
  // Every block but the last is compressed as it comes; the last (possibly partial, or
  // empty for empty input) is zero-padded and flagged.
  while (input.length - offset > BLOCK) {
    block.set(input.subarray(offset, offset + BLOCK));
    t += BigInt(BLOCK);
    compress(h, block, t, false);
    offset += BLOCK;
  }
  block.fill(0);
  block.set(input.subarray(offset));
  t += BigInt(input.length - offset);
  compress(h, block, t, true);

  const out = new Uint8Array(64);
  const view = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) view.setBigUint64(i * 8, h[i], true);
  return out.slice(0, outLength);
}

/**
 * BLAKE2b-256: the hash in Sui addresses.
 * @param {Uint8Array} data
 */
export function blake2b256(data) {
  return blake2b(data, 32);
}
