#!/usr/bin/env node
// A card-bot arena bot in JavaScript: Node 18 or later, no dependencies.
//
//   node bot.js --port 9000 --secret "$SECRET"     (or ARENA_BOT_SECRET=... node bot.js)
//   node bot.js --connect URL --bot-id ID --secret "$SECRET"   (from a laptop: no port)
//
// It speaks the bot protocol of docs/protocol.md like the Python SDK does: GET / answers
// who it is (never signed); every POST must carry a valid X-Arena-Signature over
// X-Arena-Timestamp + "." + the raw body, a timestamp within 300 s of this clock and a
// request_id not seen before (else 401), once the bot has a secret. It plays Cactus,
// Cactus Game and Président with a few simple rules, and a random legal action for
// anything those rules do not cover: `choose` is the place to write a better bot.
"use strict";

const crypto = require("node:crypto");
const http = require("node:http");
const https = require("node:https");

const INFO = {
  apiversion: "1",
  name: "js-starter",
  author: "card-bot arena",
  version: "0.1.0",
  games: ["cactus", "cactus-game", "president"],
  // How many requests the bot takes at once. Node runs `choose` on one thread: requests
  // that arrive together wait for each other inside the bot, where the wait counts
  // against their deadline. Declaring 1 makes the arena send one at a time and keep
  // the others waiting on its side, where it does not. A bot whose `choose` awaits
  // (a remote service, a worker thread) may declare more.
  capacity: 1,
};
const DEFAULT_PORT = 9000; // the Python SDK's too; 8000 is the arena's own web server
const SECRET_ENV = "ARENA_BOT_SECRET";
const TIMESTAMP_HEADER = "X-Arena-Timestamp";
const SIGNATURE_HEADER = "X-Arena-Signature";
const DEFAULT_MAX_SKEW = 300; // seconds between a request's timestamp and this clock
const MAX_TIMESTAMP_DIGITS = 15;
const MAX_BODY = 1 << 20; // bytes of a request body
const MAX_REQUEST_ID = 128; // characters
const REPLAY_MEMORY = 100000; // request ids remembered at most
const IDLE_TIMEOUT_MS = 300000; // a keep-alive connection may stay idle this long
const REQUIRED_FIELDS = {
  "/start": ["match_id", "game", "options", "seat", "players"],
  "/act": ["match_id", "decision_id", "game", "seat", "view", "legal_actions", "deadline_ms"],
  "/end": ["match_id", "game", "seat", "outcome", "view"],
};

// -- signatures -------------------------------------------------------------------------

class SignatureError extends Error {}

/** The X-Arena-Signature of `body` (a Buffer: the raw bytes) sent at `timestamp` (the
 * exact text of X-Arena-Timestamp): "sha256=" + the lowercase hex of HMAC-SHA256 with the
 * secret's UTF-8 bytes as key over timestamp + "." + body. */
function sign(secret, timestamp, body) {
  const mac = crypto.createHmac("sha256", Buffer.from(secret, "utf8"));
  mac.update(Buffer.from(`${timestamp}.`, "ascii"));
  mac.update(body);
  return `sha256=${mac.digest("hex")}`;
}

/** The unix seconds of an X-Arena-Timestamp: 1 to 15 ASCII digits, nothing else. */
function parseTimestamp(timestamp) {
  if (timestamp === undefined || timestamp === null || timestamp === "") {
    throw new SignatureError(`missing ${TIMESTAMP_HEADER} header`);
  }
  const text = String(timestamp).trim();
  if (!/^[0-9]+$/.test(text)) {
    throw new SignatureError(`${TIMESTAMP_HEADER} must be unix seconds as a decimal integer`);
  }
  if (text.length > MAX_TIMESTAMP_DIGITS) {
    throw new SignatureError(
      `${TIMESTAMP_HEADER} must be unix seconds as a decimal integer of at most ` +
        `${MAX_TIMESTAMP_DIGITS} digits`,
    );
  }
  return Number(text);
}

/** Throws SignatureError saying what is wrong with a request's two headers, or returns. */
function verify(secret, timestamp, signature, body, maxSkew = DEFAULT_MAX_SKEW, now = null) {
  if (!timestamp || !signature) {
    throw new SignatureError(`missing ${TIMESTAMP_HEADER} or ${SIGNATURE_HEADER} header`);
  }
  const seconds = parseTimestamp(timestamp);
  const current = now === null ? Date.now() / 1000 : now;
  if (Math.abs(current - seconds) > maxSkew) {
    throw new SignatureError(
      `${TIMESTAMP_HEADER} is more than ${maxSkew} s away from the bot's clock`,
    );
  }
  const expected = Buffer.from(sign(secret, String(timestamp).trim(), body), "ascii");
  const given = Buffer.from(String(signature).trim(), "utf8");
  // timingSafeEqual needs equal lengths; the length of a signature is no secret
  if (expected.length !== given.length || !crypto.timingSafeEqual(expected, given)) {
    throw new SignatureError("wrong signature");
  }
}

/** Refuses a signed request played again: remembers the request_id of each request it
 * accepts while its timestamp is within `window` seconds of the clock. At most `maxIds`
 * ids: past that the oldest second of ids is forgotten, and requests that old or older
 * are refused from then on. */
class ReplayGuard {
  constructor(window = DEFAULT_MAX_SKEW, maxIds = REPLAY_MEMORY) {
    this.window = window;
    this.maxIds = maxIds;
    this.seen = new Set();
    this.bySecond = new Map(); // timestamp -> the ids accepted with it
    this.floor = null; // the newest timestamp of ids forgotten early
  }

  check(requestId, timestamp, now = null) {
    if (typeof requestId !== "string" || requestId === "") {
      throw new SignatureError("a signed request must carry a request_id (text)");
    }
    if (requestId.length > MAX_REQUEST_ID) {
      throw new SignatureError(`request_id is longer than ${MAX_REQUEST_ID} characters`);
    }
    const seconds = parseTimestamp(timestamp);
    const current = now === null ? Date.now() / 1000 : now;
    for (const [second, ids] of this.bySecond) {
      if (current - second > this.window) this.forget(second, ids);
    }
    if (current - seconds > this.window) {
      throw new SignatureError(
        `${TIMESTAMP_HEADER} is more than ${this.window} s old: too old to tell a replay`,
      );
    }
    if (this.floor !== null && seconds <= this.floor) {
      throw new SignatureError(
        `${TIMESTAMP_HEADER} is older than the bot's memory of request ids: ` +
          "too old to tell a replay",
      );
    }
    if (this.seen.has(requestId)) {
      throw new SignatureError("replayed request: this request_id was already accepted");
    }
    this.seen.add(requestId);
    if (!this.bySecond.has(seconds)) this.bySecond.set(seconds, []);
    this.bySecond.get(seconds).push(requestId);
    while (this.seen.size > this.maxIds) {
      const oldest = Math.min(...this.bySecond.keys());
      this.forget(oldest, this.bySecond.get(oldest));
      this.floor = this.floor === null ? oldest : Math.max(this.floor, oldest);
    }
  }

  forget(second, ids) {
    for (const id of ids) this.seen.delete(id);
    this.bySecond.delete(second);
  }
}

// -- playing ------------------------------------------------------------------------------

const pick = (actions) => actions[Math.floor(Math.random() * actions.length)];
const ofType = (actions, ...types) => actions.filter((a) => types.includes(a.type));
const rankOf = (card) => (card === "BJ" || card === "RJ" ? card : card.slice(0, -1));

/** One decision: an element of `legalActions` (never a new object, so always legal). */
function choose(game, view, legalActions) {
  const rules = { cactus: cactus, "cactus-game": cactusGame, president: president }[game];
  return (rules && rules(view, legalActions)) || pick(legalActions);
}

// Cactus: keep low cards (view.layouts[seat] lists my slots, a card where I know it).
function cactus(view, legal) {
  const value = (card) => view.values[rankOf(card)];
  const values = Object.values(view.values);
  const guess = values.reduce((a, b) => a + b, 0) / values.length;
  const mine = new Map(view.layouts[view.seat].map((s) => [s.slot, s.card]));
  const worth = (slot) => (mine.get(slot) == null ? guess : value(mine.get(slot)));
  const top = view.discard.length ? view.discard[view.discard.length - 1] : null;
  switch (view.decision) {
    case "turn": {
      const take = ofType(legal, "take_discard")[0];
      return top !== null && value(top) <= 2 && take ? take : ofType(legal, "draw")[0];
    }
    case "drawn":
    case "taken": {
      const swaps = ofType(legal, "swap");
      const discard = ofType(legal, "discard")[0];
      if (swaps.length && view.drawn) {
        const worst = swaps.reduce((a, b) => (worth(b.slot) > worth(a.slot) ? b : a));
        if (value(view.drawn) < worth(worst.slot) || !discard) return worst;
      }
      return discard;
    }
    case "snap": // only a card I know matches: a wrong snap costs a card
      return (
        ofType(legal, "snap").find(
          (a) => top !== null && mine.get(a.slot) && rankOf(mine.get(a.slot)) === rankOf(top),
        ) || ofType(legal, "pass")[0]
      );
    case "call": {
      const total = [...mine.keys()].reduce((sum, slot) => sum + worth(slot), 0);
      return ofType(legal, total <= 5 ? "call" : "pass")[0];
    }
    default:
      return undefined;
  }
}

// Cactus Game: complete the set worth the most Points; Stop a card aimed at me.
const SET_POINTS = { charlie: 1, spike: 2, walter: 3, joker: 3 };

function cactusGame(view, legal) {
  if (view.decision === "turn") {
    const sets = ofType(legal, "play_set");
    if (sets.length) {
      return sets.reduce((a, b) => (SET_POINTS[b.cards[0]] > SET_POINTS[a.cards[0]] ? b : a));
    }
    const plays = ofType(legal, "play");
    return plays.length ? pick(plays) : undefined;
  }
  if (view.decision === "stop") {
    const chain = view.chain || {};
    const atMe = chain.target === view.seat || (chain.players || []).includes(view.seat);
    return (atMe && ofType(legal, "stop")[0]) || ofType(legal, "pass")[0];
  }
  return undefined;
}

// Président: give the weakest cards, play the weakest rank (as many cards as allowed).
function president(view, legal) {
  const order = [...view.rank_order, "BJ", "RJ"];
  const strength = (rank) => (order.includes(rank) ? order.indexOf(rank) : order.length);
  const gives = ofType(legal, "give");
  if (gives.length) {
    const strongest = (a) => Math.max(...a.ranks.map(strength));
    return gives.reduce((a, b) => (strongest(b) < strongest(a) ? b : a));
  }
  const plays = ofType(legal, "play");
  if (plays.length) {
    const key = (a) => strength(a.rank) * 100 - (a.count || 1);
    return plays.reduce((a, b) => (key(b) < key(a) ? b : a));
  }
  return ofType(legal, "pass")[0];
}

// -- answering a request, whichever way it came ---------------------------------------------

/** The checks of docs/protocol.md and the answer, for a POST that arrived at `path` with
 * its two signature headers (undefined when missing) and raw body (a Buffer): returns
 * [status, the JSON answer]. The HTTP server and the connect client both use one, so a
 * request is answered the same whichever transport carried it. */
function createHandler({ secret = null, maxSkew = DEFAULT_MAX_SKEW } = {}) {
  const guard = new ReplayGuard(maxSkew);
  return function handle(path, timestamp, signature, body) {
    const fields = REQUIRED_FIELDS[path];
    if (!fields) return [404, { error: `no such path: ${path}` }];
    if (secret) {
      try {
        verify(secret, timestamp, signature, body, maxSkew);
      } catch (err) {
        if (err instanceof SignatureError) return [401, { error: err.message }];
        throw err;
      }
    }
    let request;
    try {
      request = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
    } catch {
      return [400, { error: "the body is not UTF-8 JSON" }];
    }
    if (request === null || typeof request !== "object" || Array.isArray(request)) {
      return [400, { error: "the body must be a JSON object" }];
    }
    const missing = fields.filter((f) => !(f in request));
    if (missing.length) return [400, { error: `missing field(s): ${missing.join(", ")}` }];
    const legal = request.legal_actions;
    if (path === "/act" && !(Array.isArray(legal) && legal.length)) {
      return [400, { error: "legal_actions must be a non-empty list" }];
    }
    if (secret) {
      try {
        guard.check(request.request_id, timestamp); // signed and well formed: is it new?
      } catch (err) {
        if (err instanceof SignatureError) return [401, { error: err.message }];
        throw err;
      }
    }
    if (path !== "/act") return [200, {}]; // /start and /end: nothing to remember
    try {
      return [200, { action: choose(request.game, request.view, request.legal_actions) }];
    } catch (err) {
      console.error(err.stack || err); // the bot's author wants to see their bug
      return [500, { error: `the bot raised ${err}`.slice(0, 300) }];
    }
  };
}

// -- the HTTP server ------------------------------------------------------------------------

function createBotServer({ secret = null, maxSkew = DEFAULT_MAX_SKEW, verbose = false } = {}) {
  const handle = createHandler({ secret, maxSkew });
  const server = http.createServer({ noDelay: true });
  server.keepAliveTimeout = IDLE_TIMEOUT_MS;
  server.headersTimeout = IDLE_TIMEOUT_MS + 1000;

  server.on("request", (req, res) => {
    const reply = (status, payload) => {
      const body = Buffer.from(JSON.stringify(payload), "utf8");
      const headers = { "Content-Type": "application/json", "Content-Length": body.length };
      if (status === 401) headers["WWW-Authenticate"] = "Arena-HMAC-SHA256";
      res.writeHead(status, headers);
      res.end(body); // headers and body leave together
      if (verbose) console.error(`${req.method} ${req.url} ${status}`);
    };
    const path = new URL(req.url, "http://bot").pathname;
    if (/chunked/i.test(req.headers["transfer-encoding"] || "")) {
      res.shouldKeepAlive = false;
      return reply(411, { error: "send the body with a Content-Length" });
    }
    const length = Number(req.headers["content-length"] || 0);
    if (length > MAX_BODY) {
      res.shouldKeepAlive = false;
      return reply(413, { error: `the body is larger than ${MAX_BODY} bytes` });
    }
    const chunks = [];
    req.on("data", (chunk) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      if (req.method === "GET") {
        return path === "/" ? reply(200, INFO) : reply(404, { error: `no such path: ${path}` });
      }
      if (req.method !== "POST") return reply(405, { error: `no ${req.method} here` });
      const timestamp = req.headers[TIMESTAMP_HEADER.toLowerCase()];
      const signature = req.headers[SIGNATURE_HEADER.toLowerCase()];
      return reply(...handle(path, timestamp, signature, body));
    });
  });
  return server;
}

// -- connecting out to the arena (no listening socket) --------------------------------------
//
// For a laptop or a network the arena cannot call (docs/protocol.md, "Playing from a
// laptop"): the bot polls the arena. Each poll (signed like the arena's requests, with
// this bot's secret) carries the answers of the last request it brought; the arena holds
// it until it has a request for the bot. INFO.capacity polls are kept open. A failed poll
// is sent again after a short wait (0.1 s doubling up to 3 s, with jitter) carrying the
// answers no 200 acknowledged. Ctrl-C drains: the arena starts no new match, the matches
// in play are played to their end, then the session is closed (exit 0); a second Ctrl-C
// stops at once (130). Exit 1: another copy of the bot replaced this session; exit 2: the
// arena refused the bot, is not an arena, or could not be reached at start.

const SERVER_ENV = "ARENA_SERVER";
const BOT_ID_ENV = "ARENA_BOT_ID";
const SESSION_PATH = "/api/connect/session";
const POLL_PATH = "/api/connect/poll";
const CLOSE_PATH = "/api/connect/close";
const DEFAULT_POLL_SECONDS = 25; // how long the arena holds a poll, unless the session says
const POLL_GRACE_MS = 10000; // a poll may take this much longer before it counts as lost
const CALL_TIMEOUT_MS = 10000; // the session and close calls
const START_WAIT_MS = 10000; // an arena that is down at start is tried this long
const BACKOFF_FIRST_MS = 100;
const BACKOFF_CAP_MS = 3000;
const MAX_ANSWER = 6 * MAX_BODY + 65536; // bytes of a poll's answer (a body is escaped in it)

class ConnectError extends Error {
  constructor(message, status = 2) {
    super(message);
    this.status = status;
  }
}

const requestId = () => crypto.randomBytes(16).toString("hex");
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

class ConnectClient {
  constructor({ url, botId, secret, maxSkew = DEFAULT_MAX_SKEW, verbose = false }) {
    let parsed = null;
    try {
      parsed = new URL(url);
    } catch {}
    if (!parsed || !["http:", "https:"].includes(parsed.protocol) || !parsed.hostname) {
      throw new ConnectError(
        `'${url}' is not an arena's address: give http://host:port or https://host ` +
          `(--connect or $${SERVER_ENV})`,
      );
    }
    this.url = `${parsed.protocol}//${parsed.host}${parsed.pathname.replace(/\/+$/, "")}`;
    this.base = parsed;
    this.prefix = parsed.pathname.replace(/\/+$/, "");
    this.transport = parsed.protocol === "https:" ? https : http;
    this.agent = new this.transport.Agent({ keepAlive: true, maxSockets: INFO.capacity + 2 });
    this.botId = botId;
    this.secret = secret;
    this.verbose = verbose;
    this.handle = createHandler({ secret, maxSkew });
    this.pollSeconds = DEFAULT_POLL_SECONDS;
    this.token = null;
    this.playing = null;
    this.draining = false;
    this.closing = false;
    this.stopped = false;
    this.reachable = true;
    this.reopening = null;
    this.finished = new Promise((resolve) => (this.resolve = resolve));
  }

  /** Play until drained, replaced, refused or stopped; resolves to the exit status. */
  async run() {
    try {
      await this.openSession(START_WAIT_MS);
    } catch (err) {
      if (!(err instanceof ConnectError)) throw err;
      this.finish(err.status, err.message);
      return this.finished;
    }
    const polls = INFO.capacity === 1 ? "1 poll" : `${INFO.capacity} polls`;
    this.say(
      `${INFO.name} ${INFO.version} connected to ${this.url} as bot ${this.botId}: ` +
        `${polls} open, no listening socket (Ctrl-C drains)`,
    );
    for (let i = 0; i < INFO.capacity; i++) this.pollLoop(false);
    return this.finished;
  }

  /** What Ctrl-C does: tell the arena at once (one more poll), then poll until no match is
   * in play. */
  drain() {
    if (this.draining || this.stopped) return;
    this.draining = true;
    // the count once an answer of the arena has said it (not before)
    const inPlay =
      this.playing === null
        ? "the matches in play are finished first"
        : `matches in play: ${this.playing}`;
    this.say(`draining: the arena starts no new match; ${inPlay} (Ctrl-C again to stop at once)`);
    this.pollLoop(true);
  }

  finish(status, message) {
    if (this.stopped) return;
    this.stopped = true;
    if (message) this.say(message);
    this.agent.destroy();
    this.resolve(status);
  }

  say(message) {
    console.error(`bot.js: ${message}`);
  }

  backoff(failures) {
    const delay = Math.min(BACKOFF_CAP_MS, BACKOFF_FIRST_MS * 2 ** Math.min(failures - 1, 30));
    return delay * (0.5 + Math.random() / 2); // many bots cut off at once come back apart
  }

  /** A signed POST: {status, payload (a JSON object or null), contentType, location}; it
   * rejects on a network error or after `timeoutMs`. */
  post(path, body, timeoutMs) {
    const timestamp = String(Math.floor(Date.now() / 1000));
    const headers = {
      "Content-Type": "application/json",
      "Content-Length": body.length,
      "User-Agent": "arena-js-starter",
      [TIMESTAMP_HEADER]: timestamp,
      [SIGNATURE_HEADER]: sign(this.secret, timestamp, body),
    };
    return new Promise((resolve, reject) => {
      const req = this.transport.request(
        {
          protocol: this.base.protocol,
          hostname: this.base.hostname.replace(/^\[|\]$/g, ""),
          port: this.base.port || undefined,
          path: this.prefix + path,
          method: "POST",
          headers,
          agent: this.agent,
        },
        (res) => {
          const chunks = [];
          let size = 0;
          res.on("data", (chunk) => {
            size += chunk.length;
            if (size > MAX_ANSWER) req.destroy(new Error(`an answer over ${MAX_ANSWER} bytes`));
            else chunks.push(chunk);
          });
          res.on("end", () => {
            let payload = null;
            try {
              payload = JSON.parse(Buffer.concat(chunks).toString("utf8"));
            } catch {}
            if (payload === null || typeof payload !== "object" || Array.isArray(payload)) {
              payload = null;
            }
            resolve({
              status: res.statusCode,
              payload,
              contentType: res.headers["content-type"] || "",
              location: res.headers.location,
            });
          });
          res.on("error", reject);
        },
      );
      req.setNoDelay(true);
      req.setTimeout(timeoutMs, () => req.destroy(new Error("timed out")));
      req.on("error", reject);
      req.end(body);
    });
  }

  message(answer) {
    const text = answer.payload && (answer.payload.message || answer.payload.error);
    return typeof text === "string" && text ? text.slice(0, 300) : `HTTP ${answer.status}`;
  }

  /** Open the bot's session; a ConnectError for a refusal, or for an arena still
   * unreachable after `waitMs` (null: try until stopped). */
  async openSession(waitMs) {
    const giveUp = waitMs === null ? null : Date.now() + waitMs;
    let failures = 0;
    for (;;) {
      const body = Buffer.from(
        JSON.stringify({ bot_id: this.botId, request_id: requestId(), info: { sdk: `node ${process.version}`, ...INFO } }),
      );
      let problem;
      try {
        const answer = await this.post(SESSION_PATH, body, CALL_TIMEOUT_MS);
        const payload = answer.payload;
        if (answer.status === 200 && payload && typeof payload.session === "string") {
          const seconds = payload.poll_seconds;
          if (typeof seconds === "number" && seconds > 0) this.pollSeconds = Math.min(seconds, 300);
          this.token = payload.session;
          if (payload.replaced === true) {
            this.say("this session replaced an earlier one of the bot (a copy still running with it stops)");
          }
          return;
        }
        problem = this.refusal(answer); // throws for what will not change
      } catch (err) {
        if (err instanceof ConnectError) throw err;
        if (/certificate|self.signed/i.test(err.code || err.message)) {
          throw new ConnectError(
            `the arena at ${this.url} has a certificate this machine does not trust: ` +
              err.message,
          );
        }
        problem = `cannot reach the arena at ${this.url}: ${reason(err)}`;
      }
      failures += 1;
      if (giveUp !== null && Date.now() >= giveUp) {
        throw new ConnectError(`${problem} (tried for ${waitMs / 1000} s)`);
      }
      if (failures === 1) this.say(`${problem}: trying again`);
      await sleep(this.backoff(failures));
      if (this.stopped) throw new ConnectError("stopped", 130);
    }
  }

  refusal(answer) {
    const { status, payload } = answer;
    const id = this.botId;
    const notArena =
      `${this.url} does not answer as an arena (POST ${this.prefix}${SESSION_PATH}: ` +
      `HTTP ${status}, ${answer.contentType || "no content type"}): check the address ` +
      `(--connect or $${SERVER_ENV})`;
    if (status >= 300 && status < 400) {
      throw new ConnectError(
        `${this.url} redirects to ${answer.location || "elsewhere"}: give that address to ` +
          "--connect (redirects are not followed)",
      );
    }
    if (status >= 500 || status === 429) {
      return `the arena at ${this.url} answers HTTP ${status} (${this.message(answer)})`;
    }
    if (payload === null || status === 200) throw new ConnectError(notArena);
    const words = this.message(answer);
    if (status === 401) {
      throw new ConnectError(
        `the arena refused bot ${id}'s signature (${words}): check the bot id and the ` +
          `secret (--bot-id, --secret or $${SECRET_ENV}) and this machine's clock`,
      );
    }
    if (status === 404) {
      throw new ConnectError(`the arena has no bot ${id} that connects (${words})`);
    }
    if (status === 409) {
      throw new ConnectError(
        `bot ${id} is registered with an endpoint, not to connect (${words}): its owner ` +
          `sets {"connect": true} with PATCH /api/bots/${id}`,
      );
    }
    if (status === 400) {
      throw new ConnectError(
        `the arena refused the bot's info (${words}): it declares games ` +
          `[${INFO.games.join(",")}], capacity ${INFO.capacity}, apiversion ${INFO.apiversion}`,
      );
    }
    throw new ConnectError(`the arena refused the session (HTTP ${status}: ${words})`);
  }

  /** The arena ended the session (409 "closed"): one new session for all the polls. */
  reopen() {
    if (!this.reopening) {
      this.say("the arena closed the session: opening a new one");
      this.token = null;
      this.reopening = this.openSession(null)
        .then(() => this.say("connected again"))
        .catch((err) => this.finish(err.status || 2, err.message))
        .finally(() => (this.reopening = null));
    }
    return this.reopening;
  }

  async close() {
    this.closing = true;
    const body = Buffer.from(
      JSON.stringify({ bot_id: this.botId, session: this.token, request_id: requestId() }),
    );
    try {
      const answer = await this.post(CLOSE_PATH, body, CALL_TIMEOUT_MS);
      if (answer.status >= 300 && answer.status !== 409) {
        this.say(`closing the session: the arena answers ${this.message(answer)}`);
      }
    } catch (err) {
      this.say(`closing the session: ${reason(err)} (the arena ends it by itself)`);
    }
  }

  /** The answer to one request of a poll's answer, as JSON text for the next poll (null
   * for an entry that names no request). */
  answer(item) {
    if (!item || typeof item.path !== "string" || typeof item.body !== "string") {
      this.say("the arena sent a request without a path and a body: ignored");
      return null;
    }
    const raw = Buffer.from(item.body, "utf8");
    const text = (v) => (typeof v === "string" ? v : undefined);
    const [status, payload] =
      raw.length > MAX_BODY
        ? [413, { error: `the body is larger than ${MAX_BODY} bytes` }]
        : this.handle(item.path, text(item.timestamp), text(item.signature), raw);
    if (this.verbose) console.error(`POST ${item.path} ${status}`);
    let id;
    try {
      id = JSON.parse(item.body).request_id;
    } catch {}
    if (typeof id !== "string" || !id || id.length > MAX_REQUEST_ID) {
      this.say(`a request to ${item.path.slice(0, 40)} without a request_id cannot be answered`);
      return null;
    }
    return JSON.stringify({ request_id: id, status, body: payload });
  }

  /** One of the bot's polls, again and again; a `notice` poll tells the arena at once that
   * the bot drains, and ends after a poll answered with no request. */
  async pollLoop(notice) {
    let answers = [];
    let failures = 0;
    while (!this.stopped) {
      if (this.token === null) {
        await this.reopening;
        continue;
      }
      const token = this.token;
      const draining = this.draining || notice;
      const body = Buffer.from(
        `{"bot_id":${this.botId},"session":${JSON.stringify(token)},` +
          `"request_id":"${requestId()}","draining":${draining},"answers":[${answers.join(",")}]}`,
      );
      let answer;
      try {
        answer = await this.post(POLL_PATH, body, this.pollSeconds * 1000 + POLL_GRACE_MS);
      } catch (err) {
        if (this.stopped || (notice && !answers.length)) return;
        failures += 1;
        this.failed(reason(err));
        await sleep(this.backoff(failures));
        continue;
      }
      const { status, payload } = answer;
      if (status === 200 && payload && Array.isArray(payload.requests)) {
        failures = 0;
        if (!this.reachable) {
          this.reachable = true;
          this.say("reconnected to the arena");
        }
        answers = [];
        if (Number.isInteger(payload.playing)) this.playing = payload.playing;
        for (const item of payload.requests) {
          const encoded = this.answer(item);
          if (encoded !== null) answers.push(encoded);
        }
        if (!payload.requests.length && draining && payload.playing === 0) return this.drained();
        if (notice && !payload.requests.length && !answers.length) return;
        continue;
      }
      if (this.closing || this.stopped) return;
      if (status === 409) {
        const why = payload && payload.reason;
        if (why === "closed" && this.draining) return this.drained();
        if (why === "closed") {
          if (this.token === token) await this.reopen();
          continue;
        }
        return this.finish(
          1,
          `another copy of bot ${this.botId} connected to the arena and replaced this one ` +
            `(${this.message(answer)}): stopping`,
        );
      }
      if ([400, 401, 403, 404].includes(status)) {
        const words = this.message(answer);
        const why =
          status === 401
            ? `(${words}): its secret changed (rotated?) or this machine's clock is off`
            : `(HTTP ${status}: ${words})`;
        return this.finish(2, `the arena refused bot ${this.botId}'s poll ${why}`);
      }
      if (notice && !answers.length) return; // a 429: the other polls will say it
      failures += 1;
      this.failed(`HTTP ${status}: ${this.message(answer)}`);
      await sleep(this.backoff(failures));
    }
  }

  failed(why) {
    if (this.reachable) {
      this.reachable = false;
      this.say(`lost the connection to the arena (${why}): polling again`);
    }
  }

  async drained() {
    if (this.closing || this.stopped) return;
    await this.close();
    this.finish(0, "drained: every match is over, session closed");
  }
}

function reason(err) {
  const codes = { ECONNREFUSED: "connection refused", ECONNRESET: "connection reset by peer" };
  if (err.code === "ENOTFOUND") return "unknown host";
  return codes[err.code] || err.message || String(err);
}

// -- the command line -------------------------------------------------------------------------

function parseArgs(argv) {
  const args = {
    host: null,
    port: null,
    secret: process.env[SECRET_ENV] || null,
    maxSkew: DEFAULT_MAX_SKEW,
    verbose: false,
    connect: null,
    botId: null,
  };
  const usage =
    "usage: node bot.js [--host H] [--port N] [--secret S] [--max-skew SECONDS] [--verbose]\n" +
    "       node bot.js --connect URL --bot-id ID [--secret S] [--max-skew SECONDS] [--verbose]";
  const keys = {
    "--host": "host",
    "--port": "port",
    "--secret": "secret",
    "--max-skew": "maxSkew",
    "--connect": "connect",
    "--bot-id": "botId",
  };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === "--help" || flag === "-h") {
      console.log(
        `${usage}\n--secret defaults to $${SECRET_ENV}; --port to ${DEFAULT_PORT}; ` +
          `--connect to $${SERVER_ENV} and --bot-id to $${BOT_ID_ENV} (its being set connects)`,
      );
      process.exit(0);
    }
    if (flag === "--verbose") {
      args.verbose = true;
      continue;
    }
    const value = argv[++i];
    const number = Number(value);
    if (!(flag in keys)) {
      fail(`unknown argument ${flag} (${usage.replace(/\n +/, " | ")})`);
    } else if (value === undefined) {
      fail(`${flag} needs a value`);
    } else if (flag === "--port" && !(Number.isInteger(number) && number >= 0 && number < 65536)) {
      fail(`--port must be a port number, not ${value}`);
    } else if (flag === "--max-skew" && !(number > 0)) {
      fail(`--max-skew must be a number of seconds, not ${value}`);
    } else {
      args[keys[flag]] = flag === "--port" || flag === "--max-skew" ? number : value;
    }
  }
  return args;
}

function fail(message) {
  console.error(`bot.js: error: ${message}`);
  process.exit(2);
}

/** Connect mode: the bot polls the arena and opens no port (see ConnectClient). */
function mainConnected(args) {
  const fromEnv = args.connect === null && args.botId === null;
  const url = args.connect || process.env[SERVER_ENV];
  const botId = args.botId !== null ? args.botId : process.env[BOT_ID_ENV];
  if (args.host !== null || args.port !== null) {
    const flag = args.host !== null ? "--host" : "--port";
    const instead = fromEnv ? `unset $${BOT_ID_ENV}` : "leave out --connect and --bot-id";
    fail(
      `${flag}: a bot that connects to the arena listens on no port ` +
        `(to serve on a port, ${instead})`,
    );
  }
  if (!url) fail(`to connect, give the arena's address: --connect URL (or $${SERVER_ENV})`);
  if (!botId) fail(`to connect, give the bot's id at the arena: --bot-id ID (or $${BOT_ID_ENV})`);
  if (!/^[0-9]+$/.test(botId)) fail(`--bot-id is the bot's number at the arena, not '${botId}'`);
  if (!args.secret) {
    fail(
      `to connect, give the bot's signing secret: --secret S (or $${SECRET_ENV}); ` +
        "the bot signs its polls with it",
    );
  }
  let client;
  try {
    client = new ConnectClient({ ...args, url, botId: Number(botId) });
  } catch (err) {
    fail(err.message);
  }
  let signals = 0;
  const interrupt = () => {
    signals += 1;
    if (signals > 1 || client.token === null) process.exit(130); // at once
    client.drain();
  };
  process.on("SIGINT", interrupt);
  process.on("SIGTERM", interrupt); // a container is stopped with SIGTERM: drain as well
  client.run().then((status) => process.exit(status));
}

function main() {
  const args = parseArgs(process.argv.slice(2));
  if (args.connect !== null || args.botId !== null || process.env[BOT_ID_ENV]) {
    return mainConnected(args);
  }
  args.host = args.host === null ? "127.0.0.1" : args.host;
  args.port = args.port === null ? DEFAULT_PORT : args.port;
  if (!args.secret) {
    console.error(
      `bot.js: ${INFO.name} has no secret: request signatures are NOT checked ` +
        `(local development only; pass --secret or set ${SECRET_ENV})`,
    );
  }
  const server = createBotServer(args);
  server.on("error", (err) => fail(`cannot listen on ${args.host}:${args.port}: ${err.message}`));
  server.listen(args.port, args.host, () => {
    const { address, port } = server.address();
    const host = address.includes(":") ? `[${address}]` : address;
    console.error(`bot.js: ${INFO.name} ${INFO.version} listening on http://${host}:${port}`);
  });
  const stop = () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
}

module.exports = {
  INFO,
  ConnectClient,
  ReplayGuard,
  SignatureError,
  choose,
  createBotServer,
  createHandler,
  sign,
  verify,
};

if (require.main === module) main();
