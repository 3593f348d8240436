// @ts-check
/**
 * Who is playing: the wallet, the login, `GET /api/me`, and the inbox topic.
 *
 * On start the page loads (or, on the first visit, makes) the wallet and logs in with the
 * server's challenge: `POST /api/auth/challenge` returns a message naming the address the
 * server computed from the public key; the page checks it names the address computed here
 * (with its own BLAKE2b) before signing, so a server that disagrees about who this is gets
 * no signature. The token is kept in localStorage for its lifetime and renewed by itself
 * when the server refuses it. A player who logs out stays out until they log in again.
 *
 * A Sui wallet connected through the Wallet Standard ({@link connectSuiWallet}) logs in
 * instead of the page's key: its account's address is the player, and the wallet signs the
 * challenge as a Sui personal message. Its login is saved beside the page key's, with the
 * wallet's name and the account: after a reload the page finds that wallet again and asks
 * it, silently (`standard:connect` with `silent`), for the accounts it still shares; when
 * the account is among them the saved token stands, and nothing is asked of the player.
 * When the wallet is gone, shares the account no more, or the token was refused, the page
 * says so and plays with its own key, whose saved login still stands; so does a disconnect
 * (by the page or by the wallet). A log out while the wallet plays logs out the page's key
 * too. Moves made through a connected wallet go unsigned (the API allows it; the server's
 * transcript key signs every match either way): the move signature is a plain Ed25519
 * signature, which a wallet does not make, and a wallet prompt for every move would be no
 * game.
 *
 * Views listen with {@link onSession} (the session changed: login, balance, active match)
 * and {@link onInbox} (an inbox event: a challenge, a match start, money).
 * @module
 */

import { api, ApiError, newestOnly, onTokenRejected, setToken, settled } from './api.js';
import { realtime } from './realtime.js';
import { addressOf, loadOrCreateWallet, signText, storeWallet, walletSupport } from './wallet.js';
import { connectWallet, disconnectWallet, onWalletChange, onWallets, signPersonalMessage, startWalletStandard, suiWallets } from './walletstandard.js';
import { toHex } from './format.js';

/**
 * @typedef {import('./wallet.js').Wallet} Wallet
 * @typedef {import('./walletstandard.js').StandardWallet} StandardWallet
 * @typedef {import('./walletstandard.js').WalletAccount} WalletAccount
 * @typedef {{ wallet: StandardWallet, account: WalletAccount, address: string, publicKeyHex: string }} Connected
 * @typedef {import('./realtime.js').ServerEvent} ServerEvent
 * @typedef {{ rating: number, deviation: number, volatility: number }} Rating
 * @typedef {{ rating: number, deviation: number, attempts: number, solved: number }} PuzzleRecord
 * @typedef {{ address: string, name?: string | null, bot?: boolean, wins: number, games: number, draws: number, tournament_wins?: number, rating: Rating, active_match: number | null, puzzles?: PuzzleRecord }} PlayerView
 * @typedef {{ kind: 'human' | 'computer', address?: string, level?: string, marks: string[], name?: string, bot?: boolean }} SeatView
 * @typedef {{ seq: number, cell: number, mark: string, player: 'first' | 'second' }} MoveView
 * @typedef {{ before: number, after: number, change: number }} RatingChangeView
 * @typedef {{ reason: string, winner: 'first' | 'second' | null, winner_address: string | null, cells: number[], ended_ms: number, ratings?: RatingChangeView[] }} OutcomeView
 * @typedef {{ challenger: string, opponent: string, first: string, expires_at_ms: number }} ChallengeView
 * @typedef {{
 *   id: number, game: 'tic-tac-toe' | 'sos', stake: string, origin: string, rematch_of: number | null,
 *   tournament?: number | null, round?: number | null,
 *   phase: 'waiting' | 'ready' | 'in_progress' | 'finished', host: string, players: SeatView[] | null,
 *   board: string, turn: 'first' | 'second' | null, turn_address: string | null, seq: number,
 *   moves: MoveView[], deadline: { at_ms: number, kind: string } | null, cancel_allowed_at_ms: number | null,
 *   outcome: OutcomeView | null, challenge: ChallengeView | null, rematch_offer: 'first' | 'second' | null,
 *   rematch: number | null, created_ms: number, last_activity_ms: number,
 * }} MatchView
 * @typedef {{ address: string, balance: string, owner: boolean, active_match: MatchView | null, stats: PlayerView }} MeView
 * @typedef {'starting' | 'unsupported' | 'anonymous' | 'logging-in' | 'online' | 'error'} SessionStatus
 */

const TOKEN_KEY = 'triad.session';
const LOGGED_OUT_KEY = 'triad.loggedOut';
/** The connected Sui wallet's login: `{ wallet, address, token, expires_at }`. */
const WALLET_LOGIN_KEY = 'triad.walletLogin';
/** How long a reload waits for the saved wallet to register once the page has loaded. */
const WALLET_WAIT_MS = 2_000;

export const session = {
  /** @type {SessionStatus} */
  status: /** @type {SessionStatus} */ ('starting'),
  /** @type {Wallet | null} */
  wallet: null,
  /** Whether the wallet was made on this visit. */
  created: false,
  /** @type {MeView | null} */
  me: null,
  /** @type {string | null} why the wallet or the login is not available */
  problem: null,
  /** A Sui wallet logged in instead of the page's key (saved across reloads). @type {Connected | null} */
  connected: null,
  /** Why the last connected wallet was let go, when the player did not ask. @type {string | null} */
  walletNotice: null,
};

/** The token in use (the API's and the socket's). @type {string | null} */
let currentToken = null;

/** @param {string | null} token */
function useToken(token) {
  currentToken = token;
  setToken(token);
  realtime.setToken(token);
}

/** @type {Set<() => void>} */
const sessionListeners = new Set();
/** @type {Set<(event: ServerEvent, info: { live: boolean }) => void>} */
const inboxListeners = new Set();
/** @type {(() => void) | null} */
let stopInbox = null;
/** @type {Promise<boolean> | null} */
let loginInFlight = null;

/** @param {() => void} fn @returns {() => void} */
export function onSession(fn) {
  sessionListeners.add(fn);
  return () => sessionListeners.delete(fn);
}

/** @param {(event: ServerEvent, info: { live: boolean }) => void} fn @returns {() => void} */
export function onInbox(fn) {
  inboxListeners.add(fn);
  return () => inboxListeners.delete(fn);
}

function changed() {
  for (const fn of [...sessionListeners]) fn();
}

/** The logged-in address, or null. */
export function myAddress() {
  return session.status === 'online' && session.me ? session.me.address : null;
}

/**
 * Who plays now: the connected Sui wallet's account, else the page's own key.
 * @returns {{ address: string, publicKeyHex: string } | null}
 */
export function identity() {
  return session.connected ?? session.wallet;
}

/** Loads the wallet and logs in (unless the player logged out). */
export async function startSession() {
  startWalletStandard();
  onTokenRejected(() => login());
  realtime.onAuthError(() => {
    void login();
  });
  const unsupported = await walletSupport();
  if (unsupported) {
    session.status = 'unsupported';
    session.problem = unsupported;
    changed();
    return;
  }
  try {
    const { wallet, created } = await loadOrCreateWallet();
    session.wallet = wallet;
    session.created = created;
  } catch (e) {
    session.status = 'error';
    session.problem = `Your wallet could not be loaded: ${e instanceof Error ? e.message : String(e)}`;
    changed();
    return;
  }
  if (await resumeWallet()) return;
  if (localStorage.getItem(LOGGED_OUT_KEY) === session.wallet.address) {
    session.status = 'anonymous';
    changed();
    return;
  }
  const saved = readSavedToken(session.wallet.address);
  if (saved) {
    useToken(saved);
    session.status = 'logging-in';
    changed();
    try {
      await goOnline();
      return;
    } catch (e) {
      if (!(e instanceof ApiError) || e.status !== 401) {
        session.status = 'error';
        session.problem = e instanceof Error ? e.message : String(e);
        changed();
        return;
      }
    }
  }
  await login();
}

/**
 * Whether a saved login's token has a minute left at least.
 * @param {{ expires_at?: unknown }} saved
 */
function fresh(saved) {
  return Date.parse(String(saved.expires_at)) > Date.now() + 60_000;
}

/**
 * @param {string} address
 * @returns {string | null}
 */
function readSavedToken(address) {
  try {
    const saved = JSON.parse(localStorage.getItem(TOKEN_KEY) ?? 'null');
    if (saved && saved.address === address && fresh(saved)) {
      return String(saved.token);
    }
  } catch {
    /* a damaged entry is ignored: log in again */
  }
  return null;
}

/**
 * Logs in with the server's challenge. Concurrent calls share one login.
 * @returns {Promise<boolean>} whether it worked
 */
export function login() {
  loginInFlight ??= doLogin().finally(() => {
    loginInFlight = null;
  });
  return loginInFlight;
}

async function doLogin() {
  const connected = session.connected;
  if (connected) return walletLogin(connected);
  const wallet = session.wallet;
  if (!wallet) return false;
  localStorage.removeItem(LOGGED_OUT_KEY);
  session.status = 'logging-in';
  session.problem = null;
  changed();
  try {
    const challenge = await askChallenge(wallet);
    const signature = await signText(wallet, challenge.message);
    /** @type {{ token: string, address: string, expires_at: string }} */
    const result = await api(
      'POST',
      '/api/auth/login',
      { challenge_id: challenge.challenge_id, public_key: wallet.publicKeyHex, signature },
      { auth: false },
    );
    localStorage.setItem(TOKEN_KEY, JSON.stringify(result));
    useToken(result.token);
    await goOnline();
    return true;
  } catch (e) {
    session.status = 'error';
    session.problem = e instanceof Error ? e.message : String(e);
    changed();
    return false;
  }
}

/**
 * A login challenge for a key, checked to name the address computed here: a server that
 * disagrees about who this is gets no signature.
 * @param {{ address: string, publicKeyHex: string }} who
 * @returns {Promise<{ challenge_id: string, message: string, expires_at: string }>}
 */
async function askChallenge(who) {
  /** @type {{ challenge_id: string, message: string, expires_at: string }} */
  const challenge = await api('POST', '/api/auth/challenge', { public_key: who.publicKeyHex }, { auth: false });
  const named = challenge.message.split('\n')[1];
  if (named !== who.address) {
    throw new Error(`The server named the address ${named} for this key, but it is ${who.address}. Nothing was signed.`);
  }
  return challenge;
}

/**
 * Logs a connected wallet's account in: the wallet signs the challenge as a Sui personal
 * message. The token is kept for this page only.
 * @param {Connected} connected
 * @returns {Promise<{ token: string, address: string, expires_at: string }>}
 */
async function walletSession(connected) {
  const challenge = await askChallenge(connected);
  const signature = await signPersonalMessage(connected.wallet, connected.account, challenge.message);
  return api(
    'POST',
    '/api/auth/login',
    { challenge_id: challenge.challenge_id, public_key: connected.publicKeyHex, signature, scheme: 'sui-personal-message' },
    { auth: false },
  );
}

/**
 * Logs the connected wallet in again (its token lapsed or was refused).
 * @param {Connected} connected
 */
async function walletLogin(connected) {
  session.status = 'logging-in';
  session.problem = null;
  changed();
  try {
    const result = await walletSession(connected);
    if (session.connected !== connected) return false;
    useToken(result.token);
    saveWalletLogin(connected, result);
    await goOnline();
    return true;
  } catch (e) {
    // The wallet said no, or the server did: back to the page's own key.
    await dropWallet(`${connected.wallet.name} did not log in again (${e instanceof Error ? e.message : String(e)}).`, true);
    return false;
  }
}

/**
 * The connected account a wallet shared: the first that is a Sui account of an Ed25519 key
 * (its address is its public key's, as Triad's addresses are).
 * @param {StandardWallet} wallet
 * @param {readonly WalletAccount[]} accounts
 * @returns {Connected}
 */
function pickAccount(wallet, accounts) {
  if (!accounts.length) throw new Error(`${wallet.name} shared no account. Unlock it, choose an account, and connect again.`);
  for (const account of accounts) {
    const key = account.publicKey instanceof Uint8Array ? account.publicKey : new Uint8Array(account.publicKey ?? []);
    if (key.length === 32 && addressOf(key) === String(account.address).toLowerCase()) {
      return { wallet, account, address: addressOf(key), publicKeyHex: toHex(key) };
    }
  }
  throw new Error(`${wallet.name}'s account is not an Ed25519 one. Triad logs in Sui accounts of Ed25519 keys: choose one in the wallet and connect again.`);
}

/**
 * Connects a Sui wallet and logs its account in. The wallet asks its user twice (to share
 * an account, then to sign the login message); when either is refused, or the server
 * refuses the signature, this throws and nothing changes: the page stays as it was.
 * @param {StandardWallet} wallet
 */
export async function connectSuiWallet(wallet) {
  const connected = pickAccount(wallet, await connectWallet(wallet));
  const result = await walletSession(connected);
  // Signed and accepted: switch. The page's own login stays saved for after the wallet
  // is let go; a wallet connected before is let go now.
  if (session.connected) await dropWallet(null, false);
  adopt(connected, result.token);
  saveWalletLogin(connected, result);
  try {
    await goOnline();
  } catch (e) {
    // Logged in, but `me` could not be read: back to the page's own key, and say why.
    await dropWallet(null, true);
    throw e;
  }
}

/**
 * Plays as a connected wallet's account with `token`, following the wallet's changes: an
 * account it no longer shares is let go.
 * @param {Connected} connected
 * @param {string} token
 */
function adopt(connected, token) {
  stopInbox?.();
  stopInbox = null;
  session.connected = connected;
  session.problem = null;
  session.walletNotice = null;
  session.status = 'logging-in';
  useToken(token);
  const { wallet } = connected;
  stopWalletEvents = onWalletChange(wallet, (accounts) => {
    if (session.connected !== connected) return;
    if (!accounts.some((a) => String(a.address).toLowerCase() === connected.address)) {
      void dropWallet(`${wallet.name} disconnected, or switched to another account: you play with this browser's key again.`, true);
    }
  });
  changed();
}

/**
 * Saves a wallet's login for after a reload.
 * @param {Connected} connected
 * @param {{ token: string, expires_at: string }} login
 */
function saveWalletLogin(connected, login) {
  const saved = { wallet: connected.wallet.name, address: connected.address, token: login.token, expires_at: login.expires_at };
  localStorage.setItem(WALLET_LOGIN_KEY, JSON.stringify(saved));
}

/** The saved wallet login, when its token has time left. @returns {{ wallet: string, address: string, token: string } | null} */
function readWalletLogin() {
  try {
    const saved = JSON.parse(localStorage.getItem(WALLET_LOGIN_KEY) ?? 'null');
    if (saved && typeof saved.wallet === 'string' && typeof saved.address === 'string' && typeof saved.token === 'string' && fresh(saved)) {
      return { wallet: saved.wallet, address: saved.address, token: saved.token };
    }
  } catch {
    /* a damaged entry is dropped below */
  }
  localStorage.removeItem(WALLET_LOGIN_KEY);
  return null;
}

/**
 * The registered Sui wallet called `name`; waits for it to register until `ms` after the
 * page has loaded (extensions register as it loads, some once it has).
 * @param {string} name
 * @param {number} ms
 * @returns {Promise<StandardWallet | null>}
 */
function registeredWallet(name, ms) {
  const find = () => suiWallets().find((w) => w.name === name) ?? null;
  const now = find();
  if (now) return Promise.resolve(now);
  return new Promise((resolve) => {
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer;
    const done = (/** @type {StandardWallet | null} */ wallet) => {
      clearTimeout(timer);
      window.removeEventListener('load', arm);
      stop();
      resolve(wallet);
    };
    const arm = () => {
      timer = setTimeout(() => done(null), ms);
    };
    const stop = onWallets('register', () => {
      const wallet = find();
      if (wallet) done(wallet);
    });
    if (document.readyState === 'complete') arm();
    else window.addEventListener('load', arm, { once: true });
  });
}

/**
 * After a reload, plays again as the wallet account saved, without asking the player: the
 * wallet is found among those registered, asked silently for the accounts it shares, and
 * the saved token must still stand. When any of it fails, the saved login is forgotten
 * and the player told why.
 * @returns {Promise<boolean>} whether the wallet's account plays
 */
async function resumeWallet() {
  const saved = readWalletLogin();
  if (!saved) return false;
  session.status = 'logging-in';
  changed();
  const wallet = await registeredWallet(saved.wallet, WALLET_WAIT_MS);
  /** @type {Connected | null} */
  let connected = null;
  if (wallet) {
    try {
      const shared = (await connectWallet(wallet, { silent: true })).filter((a) => String(a.address).toLowerCase() === saved.address);
      connected = pickAccount(wallet, shared);
    } catch {
      /* not shared (or not an Ed25519 account): said below */
    }
  }
  if (!connected) {
    localStorage.removeItem(WALLET_LOGIN_KEY);
    session.walletNotice = wallet
      ? `${saved.wallet} no longer shares the account you logged in with: you play with this browser's key. Connect it again to play as that account.`
      : `${saved.wallet} was not found in this browser: you play with this browser's key. Connect a wallet on the wallet page to play as its account.`;
    return false;
  }
  // The saved token is asked about before it is used: a refused one must not set off a new
  // login, which would have the wallet ask its user to sign with nobody having asked.
  const check = await fetch('/api/me', { headers: { authorization: `Bearer ${saved.token}` } }).catch(() => null);
  if (check?.status === 401) {
    localStorage.removeItem(WALLET_LOGIN_KEY);
    session.walletNotice = `${saved.wallet}'s login has ended: you play with this browser's key. Connect it again to play as that account.`;
    return false;
  }
  adopt(connected, saved.token);
  try {
    await goOnline();
  } catch (e) {
    // As for the page's own key: the server could not be reached. The login stays saved.
    session.status = 'error';
    session.problem = e instanceof Error ? e.message : String(e);
    changed();
  }
  return true;
}

/** @type {() => void} */
let stopWalletEvents = () => {};

/** Disconnects the connected wallet (the player's choice) and returns to the page's own key. */
export async function disconnectSuiWallet() {
  const connected = session.connected;
  if (!connected) return;
  // Told first, with its `change` unheard: this disconnect is the player's own.
  stopWalletEvents();
  await disconnectWallet(connected.wallet);
  await dropWallet(null, true);
}

/**
 * Forgets the connected wallet and revokes its token; with `resume`, the page's own key
 * plays again (its saved login, or a new one), else the page is logged out.
 * @param {string | null} why shown to the player (null: they chose it)
 * @param {boolean} resume
 */
async function dropWallet(why, resume) {
  const connected = session.connected;
  if (!connected) return;
  stopWalletEvents();
  stopWalletEvents = () => {};
  session.connected = null;
  localStorage.removeItem(WALLET_LOGIN_KEY);
  const revoked = currentToken;
  stopInbox?.();
  stopInbox = null;
  session.me = null;
  session.status = 'logging-in';
  useToken(null);
  changed();
  if (revoked) await revoke(revoked);
  session.walletNotice = why;
  if (resume) await resumeOwnKey();
  else session.status = 'anonymous';
  changed();
}

/** Logs the page's own key in again: its saved token when it still stands, else a login. */
async function resumeOwnKey() {
  const wallet = session.wallet;
  if (!wallet) {
    session.status = 'anonymous';
    return;
  }
  const saved = readSavedToken(wallet.address);
  if (saved && localStorage.getItem(LOGGED_OUT_KEY) !== wallet.address) {
    useToken(saved);
    session.status = 'logging-in';
    try {
      await goOnline();
      return;
    } catch {
      /* refused: log in afresh */
    }
  }
  if (localStorage.getItem(LOGGED_OUT_KEY) === wallet.address) {
    session.status = 'anonymous';
    return;
  }
  await login();
}

/** Logs out: revokes the token and stays out on this browser until the player logs in. */
export async function logout() {
  const connected = session.connected;
  if (connected) {
    // Out, as asked: not back in with the page's key, now or after a reload.
    stopWalletEvents();
    if (session.wallet) localStorage.setItem(LOGGED_OUT_KEY, session.wallet.address);
    await disconnectWallet(connected.wallet);
    await dropWallet(null, false);
    return;
  }
  // No request sets out with the token from here; those already sent are answered before
  // the server is told to revoke it.
  const revoked = currentToken;
  localStorage.removeItem(TOKEN_KEY);
  if (session.wallet) localStorage.setItem(LOGGED_OUT_KEY, session.wallet.address);
  useToken(null);
  stopInbox?.();
  stopInbox = null;
  session.me = null;
  session.status = 'anonymous';
  changed();
  if (revoked) await revoke(revoked);
}

/**
 * Revokes a token the page no longer uses, once the requests already sent with it are
 * answered (revoked sooner, they would come back 401). The token is forgotten here
 * whatever the server says.
 * @param {string} token
 */
async function revoke(token) {
  await settled(token);
  await fetch('/api/auth/logout', { method: 'POST', headers: { authorization: `Bearer ${token}` } }).catch(() => {});
}

/**
 * Replaces the wallet with an imported one and logs it in.
 * @param {Wallet} wallet
 */
export async function switchWallet(wallet) {
  if (session.status === 'online') await logout();
  await storeWallet(wallet);
  session.wallet = wallet;
  session.created = false;
  await login();
}

const meRead = newestOnly();

/** Reloads `GET /api/me` (balance, active match, stats). */
export async function refreshMe() {
  const asked = currentToken;
  // Logged out (or between two logins): the server would only answer 401.
  if (asked === null) throw new ApiError('You are not logged in: log in and try again.', { name: 'logged_out' });
  const newest = meRead();
  /** @type {MeView} */
  const me = await api('GET', '/api/me');
  // An answer for a token the page has since let go (a logout, a wallet dropped) is stale:
  // keeping it would show that account's money under no login. An answer to an earlier read
  // that arrives after a later one's would bring back an older balance.
  if (currentToken !== asked || !newest()) return me;
  session.me = me;
  changed();
  return me;
}

/** The server's transcript key id, asked once. @type {Promise<string> | null} */
let serverKeyId = null;

/**
 * The player's own signature of a move, so that the match's transcript proves the move was
 * theirs (`triad-move/v1`, docs/transcript.md); null without a wallet, or when the server's
 * key cannot be read (the move then goes unsigned, as the API allows).
 * @param {number} matchId
 * @param {number} seq
 * @param {number} cell
 * @param {string} mark
 * @returns {Promise<{ public_key: string, signature: string } | null>}
 */
export async function signMove(matchId, seq, cell, mark) {
  const wallet = session.wallet;
  // A connected Sui wallet's moves go unsigned: the page's key is not the player's then.
  if (!wallet || session.connected || session.status !== 'online') return null;
  try {
    serverKeyId ??= api('GET', '/.well-known/triad-transcript-key', undefined, { auth: false }).then((k) => /** @type {{ key_id: string }} */ (k).key_id);
    const keyId = await serverKeyId;
    const text = ['triad-move/v1', `server: ${keyId}`, `match: ${matchId}`, `seq: ${seq}`, `cell: ${cell}`, `mark: ${mark}`, `by: ${wallet.address}`].join('\n');
    return { public_key: wallet.publicKeyHex, signature: await signText(wallet, text) };
  } catch {
    serverKeyId = null;
    return null;
  }
}

/** The latest event sequence number, where a new subscription starts from. */
export async function headSeq() {
  /** @type {{ events: number }} */
  const health = await api('GET', '/healthz', undefined, { auth: false });
  return health.events;
}

/**
 * Follows a topic from the log's head, for a view that reloads when it changes: `changed`
 * runs on every live event `wanted` accepts (all, by default), and once after a
 * resubscription that missed events.
 * @param {string} topic
 * @param {() => void} changed
 * @param {(event: any) => boolean} [wanted]
 * @returns {() => void} unsubscribes
 */
export function followTopic(topic, changed, wanted = () => true) {
  let stop = () => {};
  let stopped = false;
  headSeq()
    .catch(() => 0)
    .then((since) => {
      if (stopped) return;
      stop = realtime.subscribe(topic, since, {
        onEvent: (event, info) => {
          if (info.live && wanted(event)) changed();
        },
        onSynced: ({ missed }) => {
          if (missed) changed();
        },
      });
    });
  return () => {
    stopped = true;
    stop();
  };
}

let refreshTimer = 0;
/** Refreshes `me` soon, once for a burst of events (a match's end moves money several times). */
function refreshMeSoon() {
  window.clearTimeout(refreshTimer);
  const asked = currentToken;
  refreshTimer = window.setTimeout(() => {
    // For the login whose inbox spoke: not once it logged out (no token: a 401), nor for
    // the account that came after it.
    if (asked !== null && currentToken === asked) refreshMe().catch(() => {});
  }, 60);
}

/**
 * Loads `me` and follows the inbox from the log's head as it was *before* `me` was read:
 * an event that lands in between (a deposit, a challenge) then comes in the inbox's
 * catch-up and refreshes `me`, instead of falling in the gap between the two reads.
 */
async function goOnline() {
  const asked = currentToken;
  const since = await headSeq().catch(() => 0);
  // Let go meanwhile (logged out, a wallet dropped, another login took over): that flow
  // owns the session, and `me` asked now would go with its token, or with none (a 401).
  if (currentToken !== asked) return;
  await refreshMe();
  if (currentToken !== asked) return;
  session.status = 'online';
  followInbox(since);
  changed();
}

/** @param {number} since the log's head before `me` was last read */
function followInbox(since) {
  if (stopInbox) return;
  /** @type {() => void} */
  let stop = () => {};
  stopInbox = () => stop();
  stop = realtime.subscribe('inbox', since, {
    onEvent(event, info) {
      for (const fn of [...inboxListeners]) fn(event, info);
      if (info.live) refreshMeSoon();
    },
    onSynced({ missed }) {
      if (missed) refreshMeSoon();
    },
  });
}
