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
 * Views listen with {@link onSession} (the session changed: login, balance, active match)
 * and {@link onInbox} (an inbox event: a challenge, a match start, money).
 * @module
 */

import { api, ApiError, onTokenRejected, setToken } from './api.js';
import { realtime } from './realtime.js';
import { loadOrCreateWallet, signText, storeWallet, walletSupport } from './wallet.js';

/**
 * @typedef {import('./wallet.js').Wallet} Wallet
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
};

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

/** Loads the wallet and logs in (unless the player logged out). */
export async function startSession() {
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
  if (localStorage.getItem(LOGGED_OUT_KEY) === session.wallet.address) {
    session.status = 'anonymous';
    changed();
    return;
  }
  const saved = readSavedToken(session.wallet.address);
  if (saved) {
    setToken(saved);
    realtime.setToken(saved);
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
 * @param {string} address
 * @returns {string | null}
 */
function readSavedToken(address) {
  try {
    const saved = JSON.parse(localStorage.getItem(TOKEN_KEY) ?? 'null');
    if (saved && saved.address === address && Date.parse(saved.expires_at) > Date.now() + 60_000) {
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
  const wallet = session.wallet;
  if (!wallet) return false;
  localStorage.removeItem(LOGGED_OUT_KEY);
  session.status = 'logging-in';
  session.problem = null;
  changed();
  try {
    /** @type {{ challenge_id: string, message: string, expires_at: string }} */
    const challenge = await api('POST', '/api/auth/challenge', { public_key: wallet.publicKeyHex }, { auth: false });
    const named = challenge.message.split('\n')[1];
    if (named !== wallet.address) {
      throw new Error(
        `The server named the address ${named} for this key, but it is ${wallet.address}. Nothing was signed.`,
      );
    }
    const signature = await signText(wallet, challenge.message);
    /** @type {{ token: string, address: string, expires_at: string }} */
    const result = await api(
      'POST',
      '/api/auth/login',
      { challenge_id: challenge.challenge_id, public_key: wallet.publicKeyHex, signature },
      { auth: false },
    );
    localStorage.setItem(TOKEN_KEY, JSON.stringify(result));
    setToken(result.token);
    realtime.setToken(result.token);
    await goOnline();
    return true;
  } catch (e) {
    session.status = 'error';
    session.problem = e instanceof Error ? e.message : String(e);
    changed();
    return false;
  }
}

/** Logs out: revokes the token and stays out on this browser until the player logs in. */
export async function logout() {
  try {
    await api('POST', '/api/auth/logout');
  } catch {
    /* the token is forgotten here whatever the server says */
  }
  localStorage.removeItem(TOKEN_KEY);
  if (session.wallet) localStorage.setItem(LOGGED_OUT_KEY, session.wallet.address);
  setToken(null);
  realtime.setToken(null);
  stopInbox?.();
  stopInbox = null;
  session.me = null;
  session.status = 'anonymous';
  changed();
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

/** Reloads `GET /api/me` (balance, active match, stats). */
export async function refreshMe() {
  /** @type {MeView} */
  const me = await api('GET', '/api/me');
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
  if (!wallet || session.status !== 'online') return null;
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
  refreshTimer = window.setTimeout(() => {
    refreshMe().catch(() => {});
  }, 60);
}

/**
 * Loads `me` and follows the inbox from the log's head as it was *before* `me` was read:
 * an event that lands in between (a deposit, a challenge) then comes in the inbox's
 * catch-up and refreshes `me`, instead of falling in the gap between the two reads.
 */
async function goOnline() {
  const since = await headSeq().catch(() => 0);
  await refreshMe();
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
