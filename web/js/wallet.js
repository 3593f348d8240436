// @ts-check
/**
 * The wallet: one Ed25519 key, made by WebCrypto on the first visit and kept in this
 * browser, whose Sui address (`0x` + hex(BLAKE2b-256(0x00 ‖ public key))) is the player.
 *
 * Where the key lives: IndexedDB, as the `CryptoKey` object itself (IndexedDB stores
 * WebCrypto keys by structured clone). The secret never passes through a string the page
 * keeps (unlike a JWK or PKCS#8 text in localStorage), nothing is sent to the server, and
 * the key survives reloads. It is extractable only so that the player can export it:
 * a browser's storage can be cleared, and a key that cannot be backed up is a balance that
 * can be lost.
 *
 * The export format is the key file of `triad keygen` (`~/.config/triad/key.json`):
 * `{"scheme":"ed25519","secret_key":<64 hex>,"public_key":<64 hex>,"address":"0x…"}`, so a
 * key moves between the browser and the terminal both ways. Import also takes the 64-hex
 * secret alone, and refuses a file whose public key or address does not match its secret
 * (a damaged file must not silently sign as someone else).
 * @module
 */

import { blake2b256 } from './blake2b.js';
import { fromHex, toHex } from './format.js';

/**
 * @typedef {object} Wallet
 * @property {CryptoKey} privateKey signs login challenges
 * @property {Uint8Array} publicKey 32 bytes
 * @property {string} publicKeyHex 64 lowercase hex digits
 * @property {string} address 0x + 64 lowercase hex digits
 */

const ED25519 = { name: 'Ed25519' };
const DB_NAME = 'triad';
const STORE = 'wallet';
const RECORD = 'current';
/** PKCS#8 wrapping of a 32-byte Ed25519 seed (RFC 8410): this prefix, then the seed. */
const PKCS8_PREFIX = fromHex('302e020100300506032b657004220420');

/**
 * The Sui address of an Ed25519 public key: the flag byte 0x00 then the key, hashed.
 * @param {Uint8Array} publicKey 32 bytes
 */
export function addressOf(publicKey) {
  if (publicKey.length !== 32) throw new Error('an Ed25519 public key has 32 bytes');
  const input = new Uint8Array(33);
  input[0] = 0x00;
  input.set(publicKey, 1);
  return `0x${toHex(blake2b256(input))}`;
}

/** Why this browser cannot hold a wallet, or null when it can. */
export async function walletSupport() {
  if (!window.isSecureContext || !crypto.subtle) {
    return 'Your wallet needs a secure page: open Triad over https, or at http://127.0.0.1 or http://localhost.';
  }
  if (!('indexedDB' in window)) return 'This browser cannot store a wallet (IndexedDB is off).';
  try {
    await crypto.subtle.generateKey(ED25519, false, ['sign', 'verify']);
  } catch {
    return 'This browser cannot make Ed25519 keys. Use a current Chrome, Edge, Firefox or Safari.';
  }
  return null;
}

/** @returns {Promise<IDBDatabase>} */
function openDb() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DB_NAME, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error ?? new Error('IndexedDB did not open'));
  });
}

/**
 * Runs one request in a transaction and resolves when the transaction completes.
 * @template T
 * @param {IDBTransactionMode} mode
 * @param {(store: IDBObjectStore) => IDBRequest<T>} fn
 * @returns {Promise<T>}
 */
async function withStore(mode, fn) {
  const db = await openDb();
  try {
    return await new Promise((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const request = fn(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(request.result);
      tx.onerror = () => reject(tx.error ?? new Error('IndexedDB failed'));
      tx.onabort = () => reject(tx.error ?? new Error('IndexedDB aborted'));
    });
  } finally {
    db.close();
  }
}

/**
 * A wallet from a private key, deriving the public key from it.
 * @param {CryptoKey} privateKey extractable
 * @returns {Promise<Wallet>}
 */
async function fromPrivateKey(privateKey) {
  const jwk = await crypto.subtle.exportKey('jwk', privateKey);
  if (!jwk.x) throw new Error('the key has no public part');
  const publicKey = base64UrlDecode(jwk.x);
  return { privateKey, publicKey, publicKeyHex: toHex(publicKey), address: addressOf(publicKey) };
}

/** @param {Wallet} wallet */
async function save(wallet) {
  await withStore('readwrite', (store) =>
    store.put({ privateKey: wallet.privateKey, publicKey: wallet.publicKeyHex, savedAt: Date.now() }, RECORD),
  );
}

/**
 * The stored wallet, or a new one (stored) on the first visit.
 * @returns {Promise<{ wallet: Wallet, created: boolean }>}
 */
export async function loadOrCreateWallet() {
  /** @type {{ privateKey: CryptoKey, publicKey: string } | undefined} */
  const record = await withStore('readonly', (store) => store.get(RECORD));
  if (record && record.privateKey) {
    const wallet = await fromPrivateKey(record.privateKey);
    if (wallet.publicKeyHex !== record.publicKey) throw new Error('the stored wallet is damaged');
    return { wallet, created: false };
  }
  const pair = /** @type {CryptoKeyPair} */ (await crypto.subtle.generateKey(ED25519, true, ['sign', 'verify']));
  const publicKey = new Uint8Array(await crypto.subtle.exportKey('raw', pair.publicKey));
  const wallet = { privateKey: pair.privateKey, publicKey, publicKeyHex: toHex(publicKey), address: addressOf(publicKey) };
  await save(wallet);
  return { wallet, created: true };
}

/**
 * Signs a text's UTF-8 bytes; the signature as 128 hex digits.
 * @param {Wallet} wallet
 * @param {string} text
 */
export async function signText(wallet, text) {
  const signature = await crypto.subtle.sign(ED25519, wallet.privateKey, new TextEncoder().encode(text));
  return toHex(new Uint8Array(signature));
}

/**
 * The wallet as a `triad keygen` key file (JSON text). Whoever has it controls the balance.
 * @param {Wallet} wallet
 */
export async function exportKeyFile(wallet) {
  const jwk = await crypto.subtle.exportKey('jwk', wallet.privateKey);
  if (!jwk.d) throw new Error('this key cannot be exported');
  const file = {
    scheme: 'ed25519',
    secret_key: toHex(base64UrlDecode(jwk.d)),
    public_key: wallet.publicKeyHex,
    address: wallet.address,
  };
  return `${JSON.stringify(file, null, 2)}\n`;
}

/**
 * Reads a key file (or a bare 64-hex secret) into a wallet, without storing it.
 * @param {string} text
 * @returns {Promise<Wallet>}
 */
export async function readKeyFile(text) {
  const trimmed = text.trim();
  /** @type {{ scheme?: unknown, secret_key?: unknown, public_key?: unknown, address?: unknown }} */
  let file;
  if (/^(0x)?[0-9a-fA-F]{64}$/.test(trimmed)) {
    file = { secret_key: trimmed.replace(/^0x/, '') };
  } else {
    try {
      file = JSON.parse(trimmed);
    } catch {
      throw new Error('This is neither a Triad key file nor a 64-digit secret key.');
    }
    if (!file || typeof file !== 'object') throw new Error('This is not a Triad key file.');
  }
  if (file.scheme !== undefined && file.scheme !== 'ed25519') {
    throw new Error('Only ed25519 key files can be imported.');
  }
  if (typeof file.secret_key !== 'string' || !/^[0-9a-fA-F]{64}$/.test(file.secret_key)) {
    throw new Error('The key file has no secret_key of 64 hex digits.');
  }
  const der = new Uint8Array(PKCS8_PREFIX.length + 32);
  der.set(PKCS8_PREFIX, 0);
  der.set(fromHex(file.secret_key), PKCS8_PREFIX.length);
  /** @type {CryptoKey} */
  let privateKey;
  try {
    privateKey = await crypto.subtle.importKey('pkcs8', der, ED25519, true, ['sign']);
  } catch {
    throw new Error('This secret key is not a valid Ed25519 key.');
  }
  const wallet = await fromPrivateKey(privateKey);
  if (typeof file.public_key === 'string' && file.public_key.toLowerCase() !== wallet.publicKeyHex) {
    throw new Error('The key file is damaged: its public key does not belong to its secret key.');
  }
  if (typeof file.address === 'string' && file.address.toLowerCase() !== wallet.address) {
    throw new Error('The key file is damaged: its address does not belong to its secret key.');
  }
  return wallet;
}

/**
 * Replaces the stored wallet with an imported one.
 * @param {Wallet} wallet
 */
export async function storeWallet(wallet) {
  await save(wallet);
}

/** @param {string} text base64url without padding */
function base64UrlDecode(text) {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const binary = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(binary, (c) => c.charCodeAt(0));
}
