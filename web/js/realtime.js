// @ts-check
/**
 * The realtime connection: one WebSocket to `/api/ws` for the whole page, with topics
 * (`match:<id>`, `inbox`, `lobby`) that views subscribe to. Updates only ever arrive here;
 * the page never polls.
 *
 * The login token is sent as the socket's first message (`{"type":"auth"}`), not in its
 * URL. When the session ends (a logout, or its expiry) the server closes the socket (code
 * 4001); the reconnect then finds the token refused and the page logs out.
 *
 * Each topic remembers the `seq` of the last event it delivered. When the connection
 * drops (the network went away, the server restarted, the socket went quiet), the client
 * reconnects by itself with backoff, resubscribes every topic with `since` = that seq, and
 * the server sends exactly the events that were missed, then `subscribed`. Handlers hear
 * each event once, in order, flagged `live: false` while catching up, and then `onSynced`
 * with `missed: true` when anything arrived during the catch-up, so a view can refetch
 * once rather than per event.
 *
 * The server replays at most a page of a topic's history per `subscribe`: a longer
 * catch-up ends with `more` (subscribe again from its `seq`), and one over the address's
 * replay budget with an `error` naming the topic and `retry_after_s` (subscribe again
 * then). Both are followed here, so a view still hears every event, then `onSynced`.
 * @module
 */

import { syncClock } from './clock.js';

/**
 * @typedef {{ seq: number, at_ms: number, kind: { type: string, [key: string]: any } }} ServerEvent
 * @typedef {{
 *   onEvent?: (event: ServerEvent, info: { live: boolean }) => void,
 *   onSynced?: (info: { seq: number, missed: boolean }) => void,
 * }} TopicHandler
 * @typedef {{ lastSeq: number, handlers: Set<TopicHandler>, synced: boolean, missed: boolean }} Topic
 * @typedef {'connecting' | 'open' | 'reconnecting' | 'offline'} Status
 */

const PING_EVERY_MS = 15_000;
/** A socket silent this long (no pong, no event) is taken for dead and replaced. */
const SILENCE_LIMIT_MS = 40_000;
const BACKOFF_MS = [250, 500, 1000, 2000, 4000, 8000];

export class Realtime {
  constructor() {
    /** @type {Map<string, Topic>} */
    this.topics = new Map();
    /** @type {WebSocket | null} */
    this.ws = null;
    /** @type {string | null} */
    this.token = null;
    /** @type {Status} */
    this.status = 'connecting';
    /** @type {Set<(status: Status) => void>} */
    this.statusListeners = new Set();
    /** @type {Set<(code: number) => void>} */
    this.authListeners = new Set();
    this.attempt = 0;
    this.lastMessageAt = 0;
    /** @type {number} */
    this.retryTimer = 0;
    /** @type {number} */
    this.watchdog = 0;
    this.started = false;
    window.addEventListener('offline', () => this.goOffline());
    window.addEventListener('online', () => this.reconnectNow());
  }

  /** Opens the connection (once). */
  start() {
    if (this.started) return;
    this.started = true;
    this.connect();
    this.watchdog = window.setInterval(() => this.checkAlive(), PING_EVERY_MS);
  }

  /**
   * Uses a new login token (or none): reconnects so the server knows who is listening.
   * @param {string | null} token
   */
  setToken(token) {
    if (token === this.token) return;
    this.token = token;
    if (this.started) this.reconnectNow();
  }

  /**
   * Follows a topic. `since`: deliver the events after this sequence number first (0 for
   * the topic's whole history). A topic already followed keeps its own position.
   * @param {string} topic
   * @param {number} since
   * @param {TopicHandler} handler
   * @returns {() => void} stops following
   */
  subscribe(topic, since, handler) {
    let entry = this.topics.get(topic);
    if (!entry) {
      entry = { lastSeq: since, handlers: new Set(), synced: false, missed: false };
      this.topics.set(topic, entry);
      this.sendSubscribe(topic, entry);
    } else if (entry.synced) {
      const seq = entry.lastSeq;
      queueMicrotask(() => handler.onSynced?.({ seq, missed: false }));
    }
    entry.handlers.add(handler);
    return () => {
      const current = this.topics.get(topic);
      if (!current) return;
      current.handlers.delete(handler);
      if (current.handlers.size === 0) {
        this.topics.delete(topic);
        this.send({ type: 'unsubscribe', topic });
      }
    };
  }

  /** @param {(status: Status) => void} fn */
  onStatus(fn) {
    this.statusListeners.add(fn);
    fn(this.status);
    return () => this.statusListeners.delete(fn);
  }

  /** Calls `fn` when the server refuses the token (codes 202, 203). @param {(code: number) => void} fn */
  onAuthError(fn) {
    this.authListeners.add(fn);
  }

  /** @param {Status} status */
  setStatus(status) {
    if (status === this.status) return;
    this.status = status;
    for (const fn of this.statusListeners) fn(status);
  }

  connect() {
    window.clearTimeout(this.retryTimer);
    if (!navigator.onLine) {
      this.setStatus('offline');
      return;
    }
    const scheme = location.protocol === 'https:' ? 'wss' : 'ws';
    // The token goes in the first message, never in the URL (proxies log URLs). The
    // server closes a socket that says nothing within 10 s: the first message is the
    // `auth`, or a `ping` for a visitor who follows nothing yet.
    const ws = new WebSocket(`${scheme}://${location.host}/api/ws`);
    this.ws = ws;
    this.setStatus(this.attempt === 0 ? 'connecting' : 'reconnecting');
    ws.onopen = () => {
      if (this.ws !== ws) return;
      this.attempt = 0;
      this.lastMessageAt = Date.now();
      this.setStatus('open');
      this.send(this.token ? { type: 'auth', token: this.token } : { type: 'ping' });
      for (const [topic, entry] of this.topics) this.sendSubscribe(topic, entry);
    };
    ws.onmessage = (message) => {
      if (this.ws !== ws) return;
      this.lastMessageAt = Date.now();
      /** @type {any} */
      let data;
      try {
        data = JSON.parse(String(message.data));
      } catch {
        return;
      }
      this.receive(data);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      for (const entry of this.topics.values()) entry.synced = false;
      this.scheduleReconnect();
    };
  }

  /** @param {any} data */
  receive(data) {
    if (data.type === 'event') {
      const entry = this.topics.get(localTopic(data.topic));
      const event = /** @type {ServerEvent} */ (data.event);
      if (!entry || typeof event?.seq !== 'number' || event.seq <= entry.lastSeq) return;
      entry.lastSeq = event.seq;
      const live = entry.synced;
      if (!live) entry.missed = true;
      else if (typeof event.at_ms === 'number') syncClock(event.at_ms);
      for (const handler of [...entry.handlers]) handler.onEvent?.(event, { live });
    } else if (data.type === 'subscribed') {
      const entry = this.topics.get(localTopic(data.topic));
      if (typeof data.now_ms === 'number') syncClock(data.now_ms);
      if (!entry) return;
      entry.synced = true;
      const missed = entry.missed;
      entry.missed = false;
      for (const handler of [...entry.handlers]) handler.onSynced?.({ seq: entry.lastSeq, missed });
    } else if (data.type === 'more') {
      // The catch-up stopped after a page: ask for the next one, from where it stopped.
      const topic = localTopic(data.topic);
      const entry = this.topics.get(topic);
      if (entry) this.sendSubscribe(topic, entry);
    } else if (data.type === 'error') {
      if (data.code === 202 || data.code === 203) for (const fn of this.authListeners) fn(data.code);
      else if (typeof data.topic === 'string' && typeof data.retry_after_s === 'number') {
        // A catch-up refused for now (the replay budget): subscribe again when told.
        const topic = localTopic(data.topic);
        const ws = this.ws;
        window.setTimeout(() => {
          const entry = this.topics.get(topic);
          if (entry && this.ws === ws) this.sendSubscribe(topic, entry);
        }, data.retry_after_s * 1000);
      }
    }
  }

  /**
   * @param {string} topic
   * @param {Topic} entry
   */
  sendSubscribe(topic, entry) {
    if (topic === 'inbox' && !this.token) return;
    entry.synced = false;
    this.send({ type: 'subscribe', topic, since: entry.lastSeq });
  }

  /** @param {unknown} message */
  send(message) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify(message));
  }

  scheduleReconnect() {
    window.clearTimeout(this.retryTimer);
    if (!navigator.onLine) {
      this.setStatus('offline');
      return;
    }
    this.setStatus('reconnecting');
    const base = BACKOFF_MS[Math.min(this.attempt, BACKOFF_MS.length - 1)];
    this.attempt++;
    this.retryTimer = window.setTimeout(() => this.connect(), base + Math.random() * base * 0.3);
  }

  /** Drops the socket and connects again at once (a new token, or the network is back). */
  reconnectNow() {
    const old = this.ws;
    this.ws = null;
    if (old) {
      old.onclose = null;
      old.close();
    }
    for (const entry of this.topics.values()) entry.synced = false;
    this.attempt = 0;
    this.connect();
  }

  goOffline() {
    const old = this.ws;
    this.ws = null;
    if (old) {
      old.onclose = null;
      old.close();
    }
    for (const entry of this.topics.values()) entry.synced = false;
    window.clearTimeout(this.retryTimer);
    this.setStatus('offline');
  }

  checkAlive() {
    if (!this.ws || this.ws.readyState !== WebSocket.OPEN) return;
    if (Date.now() - this.lastMessageAt > SILENCE_LIMIT_MS) {
      const dead = this.ws;
      this.ws = null;
      dead.onclose = null;
      dead.close();
      for (const entry of this.topics.values()) entry.synced = false;
      this.scheduleReconnect();
      return;
    }
    this.send({ type: 'ping' });
  }
}

/**
 * The server names the inbox by address (`inbox:0x…`); the page follows it as `inbox`.
 * @param {unknown} topic
 */
function localTopic(topic) {
  const t = String(topic);
  return t.startsWith('inbox:') ? 'inbox' : t;
}

/** The page's one connection. */
export const realtime = new Realtime();
