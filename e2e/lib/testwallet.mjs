// A Sui wallet for the browser tests, injected into the page before its scripts run
// (`page.addInitScript`), as an extension's content script is: it registers through the
// Wallet Standard's window events only, and signs in the page, with a real Ed25519 key
// (WebCrypto), in Sui's personal-message format:
//
//   digest    = BLAKE2b-256([3, 0, 0] ‖ ULEB128(len(message)) ‖ message)
//   signature = base64(0x00 ‖ Ed25519(secret, digest) ‖ public key)
//   address   = 0x ‖ hex(BLAKE2b-256(0x00 ‖ public key))
//
// Its BLAKE2b is the web app's file (web/js/blake2b.js), read here and compiled into the
// script, so the wallet shares no module with the page; the server checks every signature
// with its own (Rust) code, and the in-page signatures are checked against the Sui SDK's
// vectors (crates/triad-identity/tests/sui_vectors.json) by tests/suiwallet.test.mjs.
//
// Options (all optional):
// - seedHex: the 32-byte secret (hex); a fresh random key without it;
// - name: the wallet's name (default "Test Wallet");
// - order: 'before' (the wallet loads before the app and waits for `app-ready`) or
//   'after' (the wallet registers once the page has loaded, with `register-wallet`);
// - reject: 'connect' or 'sign': the user says no at that step;
// - wrongKey: signs with another key than the account's (a broken or hostile wallet);
// - chains: the wallet's chains (default ['sui:mainnet', 'sui:testnet']);
// - noSign: leaves out `sui:signPersonalMessage`.
//
// It remembers a site its user connected across the site's reloads, as an extension does,
// and answers a silent connect with that account.
//
// In the page, `window.__testWallet` lets a test act as the wallet's user (`disconnect()`
// from the extension's side, `sign(bytes)` for the vectors) and see what happened (`log`).

import { readFileSync } from 'node:fs';
import path from 'node:path';

import { ROOT } from './harness.mjs';

/** The web app's BLAKE2b as a script fragment: its `export`s dropped. */
function blake2bSource() {
  return readFileSync(path.join(ROOT, 'web/js/blake2b.js'), 'utf8').replace(/^export /gm, '');
}

/** The wallet itself, run in the page (serialised: it may use nothing from this module). */
function wallet(options, blake2b256) {
  const PKCS8_PREFIX = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];
  const hex = (bytes) => [...bytes].map((b) => b.toString(16).padStart(2, '0')).join('');
  const fromHex = (text) => new Uint8Array(text.match(/../g).map((b) => parseInt(b, 16)));
  const base64 = (bytes) => btoa(String.fromCharCode(...bytes));
  const log = [];

  /** An Ed25519 key from a 32-byte seed, and its public key. */
  async function keyFrom(seed) {
    const pkcs8 = new Uint8Array([...PKCS8_PREFIX, ...seed]);
    const privateKey = await crypto.subtle.importKey('pkcs8', pkcs8, { name: 'Ed25519' }, true, ['sign']);
    const jwk = await crypto.subtle.exportKey('jwk', privateKey);
    const publicKey = Uint8Array.from(atob(jwk.x.replace(/-/g, '+').replace(/_/g, '/')), (c) => c.charCodeAt(0));
    return { privateKey, publicKey };
  }
  const randomSeed = () => crypto.getRandomValues(new Uint8Array(32));

  /** BCS's ULEB128 length prefix. */
  function uleb128(n) {
    const out = [];
    do {
      let byte = n & 0x7f;
      n >>>= 7;
      if (n) byte |= 0x80;
      out.push(byte);
    } while (n);
    return out;
  }

  /** Sui's personal-message signature of `message` by `key`, carrying `publicKey`. */
  async function signPersonal(key, publicKey, message) {
    const intentMessage = new Uint8Array([3, 0, 0, ...uleb128(message.length), ...message]);
    const digest = blake2b256(intentMessage);
    const signature = new Uint8Array(await crypto.subtle.sign({ name: 'Ed25519' }, key.privateKey, digest));
    return base64(new Uint8Array([0x00, ...signature, ...publicKey]));
  }

  const ready = (async () => {
    const key = await keyFrom(options.seedHex ? fromHex(options.seedHex) : randomSeed());
    // A wrong-key wallet signs with another key but names the account's in the signature.
    const signer = options.wrongKey ? await keyFrom(randomSeed()) : key;
    const address = `0x${hex(blake2b256(new Uint8Array([0x00, ...key.publicKey])))}`;
    return { key, signer, address };
  })();

  const chains = options.chains ?? ['sui:mainnet', 'sui:testnet'];
  const listeners = new Set();
  let accounts = [];
  let account = null;
  const emitChange = () => {
    for (const fn of [...listeners]) fn({ accounts });
  };
  const refuse = (step) => {
    log.push(`${step}:rejected`);
    const e = new Error('User rejected the request.');
    e.name = 'UserRejectedRequestError';
    throw e;
  };

  // As an extension does, the wallet remembers the sites its user connected across their
  // reloads (here in the site's own storage, under the wallet's name), and a silent
  // connect answers with the account of a remembered site without asking anyone.
  const remembered = `__testWallet.connected:${options.name ?? 'Test Wallet'}`;
  const share = ({ key, address }) => {
    account = Object.freeze({ address, publicKey: key.publicKey, chains, features: ['sui:signPersonalMessage'], label: 'Account 1' });
    accounts = [account];
  };

  const features = {
    'standard:connect': {
      version: '1.0.0',
      async connect(input) {
        const keyed = await ready;
        if (input?.silent) {
          if (!accounts.length && localStorage.getItem(remembered)) share(keyed);
          log.push(`connect:silent:${accounts.length}`);
          return { accounts };
        }
        if (options.reject === 'connect') refuse('connect');
        share(keyed);
        localStorage.setItem(remembered, '1');
        log.push('connect');
        emitChange();
        return { accounts };
      },
    },
    'standard:disconnect': {
      version: '1.0.0',
      async disconnect() {
        log.push('disconnect');
        accounts = [];
        account = null;
        localStorage.removeItem(remembered);
        emitChange();
      },
    },
    'standard:events': {
      version: '1.0.0',
      on(event, listener) {
        if (event !== 'change') return () => {};
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    },
  };
  if (!options.noSign) {
    features['sui:signPersonalMessage'] = {
      version: '1.1.0',
      async signPersonalMessage({ message, account: asked }) {
        const { key, signer } = await ready;
        if (!account || asked?.address !== account.address) throw new Error('That account is not connected.');
        if (!(message instanceof Uint8Array)) throw new Error('message must be a Uint8Array');
        if (options.reject === 'sign') refuse('sign');
        log.push(`sign:${new TextDecoder().decode(message).split('\n')[0]}`);
        return { bytes: base64(message), signature: await signPersonal(signer, key.publicKey, message) };
      },
    };
  }

  const name = options.name ?? 'Test Wallet';
  const icon = `data:image/svg+xml;base64,${btoa('<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="8" fill="#4da2ff"/><path d="M16 6c4 5 7 9 7 13a7 7 0 0 1-14 0c0-4 3-8 7-13z" fill="#fff"/></svg>')}`;
  const theWallet = {
    version: '1.0.0',
    name,
    icon,
    chains,
    features,
    get accounts() {
      return accounts;
    },
  };

  // The wallet side of the standard (`@wallet-standard/wallet`'s registerWallet). The log
  // says which way the wallet was registered: by its own event (the app was listening) or
  // on the app's `app-ready` (the wallet was there first).
  function registerWallet() {
    const callback = (how) => ({ register }) => {
      log.push(`registered:${how}`);
      register(theWallet);
    };
    window.dispatchEvent(Object.assign(new Event('wallet-standard:register-wallet'), { detail: callback('register-wallet') }));
    window.addEventListener('wallet-standard:app-ready', ({ detail }) => callback('app-ready')(detail));
  }
  if (options.order === 'after') {
    window.addEventListener('load', () => setTimeout(registerWallet, 200));
  } else {
    registerWallet();
  }

  window.__testWallet = {
    log,
    ready: () => ready.then(({ address, key }) => ({ address, publicKeyHex: hex(key.publicKey) })),
    /** The user disconnects from the wallet's side (its popup), not the page's. */
    disconnect: () => features['standard:disconnect'].disconnect(),
    /** Signs raw bytes (hex) as a personal message, for the vectors. */
    sign: async (messageHex) => {
      const { key, signer } = await ready;
      return signPersonal(signer, key.publicKey, messageHex ? fromHex(messageHex) : new Uint8Array());
    },
  };
}

/**
 * Installs the test wallet in every page of `page`'s context from the next navigation on.
 * @param {import('playwright-core').Page} page
 * @param {object} [options] see the top of this file
 */
export async function installTestWallet(page, options = {}) {
  const content = `(() => {\n${blake2bSource()}\n(${wallet.toString()})(${JSON.stringify(options)}, blake2b256);\n})();`;
  await page.addInitScript({ content });
}
