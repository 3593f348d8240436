// @ts-check
/**
 * The app side of the Wallet Standard (github.com/wallet-standard/wallet-standard), in plain
 * JavaScript, as `@wallet-standard/app`'s `getWallets()` does it, so that a browser
 * extension's Sui wallet finds Triad's page without a bundler or its npm package:
 *
 * - the page listens for `wallet-standard:register-wallet` events, whose `detail` is a
 *   callback the page calls with its `{ register }` API (a wallet that loads after the page);
 * - the page dispatches `wallet-standard:app-ready` on `window` with `detail: { register }`
 *   (a wallet that loaded before the page and listens for it).
 *
 * Either way the wallet calls `register(wallet)`. A wallet object has `name`, `icon` (a data
 * URL), `chains`, `accounts` and `features` keyed by name, e.g. `standard:connect`. Of those
 * registered, Triad keeps the Sui wallets it can log in with ({@link isSuiLoginWallet}).
 *
 * The Sui side: `sui:signPersonalMessage` signs `message` (bytes) for `account` and returns
 * `{ bytes, signature }`, the signature a base64 Sui serialised signature the server checks
 * as `"scheme": "sui-personal-message"` (triad-identity's signature.rs).
 * @module
 */

/**
 * @typedef {{ address: string, publicKey: Uint8Array, chains: readonly string[], features: readonly string[], label?: string, icon?: string }} WalletAccount
 * @typedef {{
 *   version: string, name: string, icon: string, chains: readonly string[],
 *   accounts: readonly WalletAccount[], features: Record<string, any>,
 * }} StandardWallet
 * @typedef {{ register: (...wallets: StandardWallet[]) => () => void }} RegisterApi
 * @typedef {'register' | 'unregister'} WalletsEventName
 */

export const CONNECT = 'standard:connect';
export const DISCONNECT = 'standard:disconnect';
export const EVENTS = 'standard:events';
export const SIGN_PERSONAL_MESSAGE = 'sui:signPersonalMessage';

/** @type {Set<StandardWallet>} */
const registered = new Set();
/** @type {Record<WalletsEventName, Set<(...wallets: StandardWallet[]) => void>>} */
const listeners = { register: new Set(), unregister: new Set() };
let started = false;

/**
 * Registers wallets (the API a wallet is handed); a wallet already registered is not again.
 * @param {...StandardWallet} wallets
 * @returns {() => void} unregisters them
 */
function register(...wallets) {
  const fresh = wallets.filter((w) => w && typeof w === 'object' && !registered.has(w));
  if (!fresh.length) return () => {};
  for (const w of fresh) registered.add(w);
  emit('register', fresh);
  return () => {
    for (const w of fresh) registered.delete(w);
    emit('unregister', fresh);
  };
}

/** @param {WalletsEventName} event @param {StandardWallet[]} wallets */
function emit(event, wallets) {
  for (const fn of [...listeners[event]]) {
    try {
      fn(...wallets);
    } catch (error) {
      console.error(error);
    }
  }
}

/**
 * Announces the page to wallets, once, and listens for them: call it as early as the page
 * can (a wallet that registers before is heard when the page announces itself).
 */
export function startWalletStandard() {
  if (started) return;
  started = true;
  const api = /** @type {RegisterApi} */ (Object.freeze({ register }));
  window.addEventListener('wallet-standard:register-wallet', (event) => {
    const callback = /** @type {CustomEvent} */ (event).detail;
    if (typeof callback === 'function') {
      try {
        callback(api);
      } catch (error) {
        console.error(error);
      }
    }
  });
  window.dispatchEvent(new CustomEvent('wallet-standard:app-ready', { detail: api }));
}

/** Every wallet registered so far. @returns {StandardWallet[]} */
export function registeredWallets() {
  return [...registered];
}

/**
 * Calls `fn` when wallets register or unregister.
 * @param {WalletsEventName} event
 * @param {(...wallets: StandardWallet[]) => void} fn
 * @returns {() => void} stops
 */
export function onWallets(event, fn) {
  listeners[event].add(fn);
  return () => listeners[event].delete(fn);
}

/**
 * Whether a wallet can log in to Triad: it connects, signs Sui personal messages, and
 * speaks a Sui chain.
 * @param {StandardWallet} wallet
 */
export function isSuiLoginWallet(wallet) {
  const features = wallet.features ?? {};
  return (
    typeof features[CONNECT]?.connect === 'function' &&
    typeof features[SIGN_PERSONAL_MESSAGE]?.signPersonalMessage === 'function' &&
    (wallet.chains ?? []).some((c) => String(c).startsWith('sui:'))
  );
}

/** The registered wallets Triad can log in with. */
export function suiWallets() {
  return registeredWallets().filter(isSuiLoginWallet);
}

/**
 * Connects: the wallet asks its user, and answers with the accounts it lets the page see.
 * With `silent`, the wallet asks nobody and answers with the accounts it already lets the
 * page see (none, when it was never connected or was disconnected since).
 * @param {StandardWallet} wallet
 * @param {{ silent?: boolean }} [input]
 * @returns {Promise<readonly WalletAccount[]>}
 */
export async function connectWallet(wallet, input) {
  /** @type {{ accounts?: readonly WalletAccount[] }} */
  const result = await wallet.features[CONNECT].connect(input?.silent ? { silent: true } : undefined);
  return result?.accounts ?? wallet.accounts ?? [];
}

/**
 * Asks the wallet to sign `text` (its UTF-8 bytes) as a Sui personal message.
 * @param {StandardWallet} wallet
 * @param {WalletAccount} account
 * @param {string} text
 * @returns {Promise<string>} the base64 Sui serialised signature
 */
export async function signPersonalMessage(wallet, account, text) {
  /** @type {{ signature?: unknown }} */
  const result = await wallet.features[SIGN_PERSONAL_MESSAGE].signPersonalMessage({ message: new TextEncoder().encode(text), account });
  if (typeof result?.signature !== 'string') throw new Error(`${wallet.name} returned no signature.`);
  return result.signature;
}

/**
 * Disconnects, if the wallet offers it (its failure is not the page's: the page forgets the
 * connection either way).
 * @param {StandardWallet} wallet
 */
export async function disconnectWallet(wallet) {
  try {
    await wallet.features[DISCONNECT]?.disconnect?.();
  } catch {
    /* the page forgets the connection whatever the wallet says */
  }
}

/**
 * Follows the wallet's `change` events (`standard:events`): `fn` hears its accounts after
 * each change.
 * @param {StandardWallet} wallet
 * @param {(accounts: readonly WalletAccount[]) => void} fn
 * @returns {() => void} stops
 */
export function onWalletChange(wallet, fn) {
  const on = wallet.features[EVENTS]?.on;
  if (typeof on !== 'function') return () => {};
  const off = on.call(wallet.features[EVENTS], 'change', (/** @type {{ accounts?: readonly WalletAccount[] }} */ properties) => {
    if (properties && 'accounts' in properties) fn(properties.accounts ?? []);
  });
  return typeof off === 'function' ? off : () => {};
}

/**
 * Whether a wallet's error means its user said no (the wallets' own words vary: the
 * standard names none, and Sui wallets throw `Error`s saying "rejected" or "denied").
 * @param {unknown} error
 */
export function isRejection(error) {
  const text = error instanceof Error ? `${error.name} ${error.message}` : String(error);
  return /reject|denied|declin|cancel/i.test(text);
}
