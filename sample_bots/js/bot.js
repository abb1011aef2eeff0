#!/usr/bin/env node
// A card-bot arena bot in JavaScript: Node 18 or later, no dependencies.
//
//   node bot.js --port 9000 --secret "$SECRET"     (or ARENA_BOT_SECRET=... node bot.js)
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

// -- the HTTP server ------------------------------------------------------------------------

function createBotServer({ secret = null, maxSkew = DEFAULT_MAX_SKEW, verbose = false } = {}) {
  const guard = new ReplayGuard(maxSkew);
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
      const fields = REQUIRED_FIELDS[path];
      if (!fields) return reply(404, { error: `no such path: ${path}` });
      const timestamp = req.headers[TIMESTAMP_HEADER.toLowerCase()];
      if (secret) {
        try {
          verify(secret, timestamp, req.headers[SIGNATURE_HEADER.toLowerCase()], body, maxSkew);
        } catch (err) {
          if (err instanceof SignatureError) return reply(401, { error: err.message });
          throw err;
        }
      }
      let request;
      try {
        request = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body));
      } catch {
        return reply(400, { error: "the body is not UTF-8 JSON" });
      }
      if (request === null || typeof request !== "object" || Array.isArray(request)) {
        return reply(400, { error: "the body must be a JSON object" });
      }
      const missing = fields.filter((f) => !(f in request));
      if (missing.length) return reply(400, { error: `missing field(s): ${missing.join(", ")}` });
      if (path === "/act" && !(Array.isArray(request.legal_actions) && request.legal_actions.length)) {
        return reply(400, { error: "legal_actions must be a non-empty list" });
      }
      if (secret) {
        try {
          guard.check(request.request_id, timestamp); // signed and well formed: is it new?
        } catch (err) {
          if (err instanceof SignatureError) return reply(401, { error: err.message });
          throw err;
        }
      }
      if (path !== "/act") return reply(200, {}); // /start and /end: nothing to remember
      try {
        return reply(200, { action: choose(request.game, request.view, request.legal_actions) });
      } catch (err) {
        console.error(err.stack || err); // the bot's author wants to see their bug
        return reply(500, { error: `the bot raised ${err}`.slice(0, 300) });
      }
    });
  });
  return server;
}

// -- the command line -------------------------------------------------------------------------

function parseArgs(argv) {
  const args = {
    host: "127.0.0.1",
    port: DEFAULT_PORT,
    secret: process.env[SECRET_ENV] || null,
    maxSkew: DEFAULT_MAX_SKEW,
    verbose: false,
  };
  const usage =
    "usage: node bot.js [--host H] [--port N] [--secret S] [--max-skew SECONDS] [--verbose]";
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    if (flag === "--help" || flag === "-h") {
      console.log(`${usage}\n--secret defaults to $${SECRET_ENV}; --port to ${DEFAULT_PORT}`);
      process.exit(0);
    }
    if (flag === "--verbose") {
      args.verbose = true;
      continue;
    }
    const value = argv[++i];
    const number = Number(value);
    if (!["--host", "--port", "--secret", "--max-skew"].includes(flag)) {
      fail(`unknown argument ${flag} (${usage})`);
    } else if (value === undefined) {
      fail(`${flag} needs a value`);
    } else if (flag === "--port" && !(Number.isInteger(number) && number >= 0 && number < 65536)) {
      fail(`--port must be a port number, not ${value}`);
    } else if (flag === "--max-skew" && !(number > 0)) {
      fail(`--max-skew must be a number of seconds, not ${value}`);
    } else {
      const key = { "--host": "host", "--port": "port", "--secret": "secret" }[flag] || "maxSkew";
      args[key] = flag === "--port" || flag === "--max-skew" ? number : value;
    }
  }
  return args;
}

function fail(message) {
  console.error(`bot.js: error: ${message}`);
  process.exit(2);
}

function main() {
  const args = parseArgs(process.argv.slice(2));
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

module.exports = { INFO, ReplayGuard, SignatureError, choose, createBotServer, sign, verify };

if (require.main === module) main();
