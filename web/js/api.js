// @ts-check
/**
 * The HTTP API client. Every failure becomes an {@link ApiError} whose `message` is the
 * server's plain-words `message` (or, when the server could not be reached or did not
 * answer in the API's shape, a sentence saying so): the page never shows raw JSON.
 * @module
 */

import { syncClock } from './clock.js';

/**
 * For a read that is made again and again (on every live event): answers can arrive out
 * of order, and one to an older read that arrives after a newer one's would draw the
 * past. Call the returned function as each read sets out; what it returns says, once the
 * answer is in, whether that answer is still the newest (and takes its place if so).
 * @returns {() => () => boolean}
 */
export function newestOnly() {
  let asked = 0;
  let drawn = 0;
  return () => {
    const mine = ++asked;
    return () => {
      if (mine <= drawn) return false;
      drawn = mine;
      return true;
    };
  };
}

/** An API failure, in plain words. */
export class ApiError extends Error {
  /**
   * @param {string} message what happened and what to do
   * @param {{ status?: number, code?: number, name?: string, retryAfterS?: number | null }} [details]
   */
  constructor(message, details = {}) {
    super(message);
    this.name = 'ApiError';
    /** The HTTP status; 0 when the server could not be reached. */
    this.status = details.status ?? 0;
    /** The API's stable code (see /api/openapi.json), or -1. */
    this.code = details.code ?? -1;
    /** The API's snake_case error name, or `network`/`unexpected`. */
    this.error = details.name ?? 'unexpected';
    /** Seconds to wait, from `Retry-After`. */
    this.retryAfterS = details.retryAfterS ?? null;
  }
}

/**
 * The engine's refusal of a stake, a transfer or a withdrawal the balance does not cover.
 * Its message counts minor units; the page says it in coins itself (`notEnoughText`).
 */
export const INSUFFICIENT_BALANCE = 105;

/** Codes after which logging in again helps: invalid or expired token. */
const RELOGIN_CODES = new Set([202, 203]);

/** @type {string | null} */
let token = null;
/** @type {(() => Promise<boolean>) | null} */
let relogin = null;

/**
 * Sets the bearer token for requests that need one.
 * @param {string | null} value
 */
export function setToken(value) {
  token = value;
}

/** Requests in flight, by the token they carry. @type {Map<string, Set<Promise<unknown>>>} */
const inFlight = new Map();

/**
 * Waits for every request sent with `value` to be answered, so that revoking the token
 * cannot race a request the page already sent with it (that request would come back 401).
 * @param {string} value
 */
export async function settled(value) {
  const pending = inFlight.get(value);
  if (pending) await Promise.allSettled([...pending]);
}

/**
 * Sets what to do when the server says the token is invalid or expired: log in again and
 * report whether it worked. The failed request is then sent once more.
 * @param {() => Promise<boolean>} fn
 */
export function onTokenRejected(fn) {
  relogin = fn;
}

/**
 * Calls the API.
 *
 * @template T
 * @param {'GET' | 'POST' | 'PUT' | 'DELETE'} method
 * @param {string} path starting with /api/ (or /healthz)
 * @param {unknown} [body] sent as JSON
 * @param {{ auth?: boolean, idempotencyKey?: string, retried?: boolean }} [options]
 * @returns {Promise<T>}
 */
export async function api(method, path, body, options = {}) {
  /** @type {Record<string, string>} */
  const headers = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const useToken = options.auth !== false && token !== null;
  if (useToken) headers.authorization = `Bearer ${token}`;
  if (options.idempotencyKey) headers['idempotency-key'] = options.idempotencyKey;
  /** @type {Response} */
  let response;
  const sent = fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    cache: 'no-store',
  });
  const carried = useToken ? token : null;
  if (carried !== null) {
    const pending = inFlight.get(carried) ?? new Set();
    inFlight.set(carried, pending.add(sent));
    sent.catch(() => {}).finally(() => {
      pending.delete(sent);
      if (pending.size === 0 && inFlight.get(carried) === pending) inFlight.delete(carried);
    });
  }
  try {
    response = await sent;
  } catch {
    throw new ApiError('Cannot reach the Triad server. Check your connection and try again.', {
      name: 'network',
    });
  }
  if (response.status === 204) return /** @type {T} */ (undefined);
  const text = await response.text();
  /** @type {any} */
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    json = null;
  }
  if (response.ok) {
    if (json === null) {
      throw new ApiError('The server sent an answer this page cannot read. Reload the page and try again.');
    }
    learnTime(json);
    return /** @type {T} */ (json);
  }
  if (json && typeof json.message === 'string') {
    const retry = response.headers.get('retry-after');
    const error = new ApiError(sentence(json.message), {
      status: response.status,
      code: typeof json.code === 'number' ? json.code : -1,
      name: typeof json.error === 'string' ? json.error : 'unexpected',
      retryAfterS: retry ? Number(retry) : null,
    });
    if (useToken && RELOGIN_CODES.has(error.code) && relogin && !options.retried) {
      if (await relogin()) return api(method, path, body, { ...options, retried: true });
    }
    throw error;
  }
  throw new ApiError(`The server answered ${response.status} ${response.statusText || 'without a reason'}. Try again in a moment.`, {
    status: response.status,
  });
}

/**
 * The server's messages are lower-case clauses ("not your turn; wait for …"): shown as a
 * sentence.
 * @param {string} message
 */
export function sentence(message) {
  const m = message.trim();
  if (!m) return 'Something went wrong.';
  const first = m[0].toUpperCase() + m.slice(1);
  return /[.!?]$/.test(first) ? first : `${first}.`;
}

/**
 * A command's answer carries its events with the server's time: keeps the clock in step.
 * @param {any} json
 */
function learnTime(json) {
  const events = json && Array.isArray(json.events) ? json.events : null;
  const last = events && events.length ? events[events.length - 1] : null;
  if (last && typeof last.at_ms === 'number') syncClock(last.at_ms);
}

/** A fresh idempotency key for a command the page may resend. */
export function newIdempotencyKey() {
  return crypto.randomUUID();
}
