// A person at the table (docs/play.md).  Two pages use this script:
//
// - /play/<game> (#play-form): the person picks the opponents, the number of players and
//   the rules, and sits down (the button carrying data-start): POST /api/play, then the
//   seat's page;
// - /play/seat/<bot id>#<key> (#seat): the seat's page.  It is one more client of the
//   connect transport, exactly as a bot that connects out (docs/protocol.md): it opens
//   the seat's session (POST /api/connect/session) and polls (POST /api/connect/poll),
//   each request signed with the seat's key (the link's fragment, never sent to the
//   server).  It receives the webhook bodies (/start, /act, /end) of its own seat only,
//   draws the table from the seat's own view with the game's drawing (the replay
//   viewer's, replay.js and the game's viewer.js), and offers every legal action as a
//   button carrying data-action (its JSON).  A reaction window (a snap, a Stop, a
//   rapidité...) is offered for a few seconds with a countdown, then passed; any other
//   decision has the match's deadline, after which the arena plays the default action.
"use strict";

(function () {
  const $ = (id) => document.getElementById(id);
  const root = document.body.dataset.root || "";

  // POST a JSON body; { status, payload } (null when the answer is not JSON).  ``signal``
  // aborts it (a poll that an answer replaces).
  async function postJSON(path, body, headers, signal) {
    const response = await fetch(root + path, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...(headers || {}) },
      body,
      signal,
    });
    let payload = null;
    try {
      payload = await response.json();
    } catch (err) {
      payload = null;
    }
    return { status: response.status, payload };
  }

  function problem(payload, status) {
    if (payload && payload.message) {
      const errors = payload.errors ? " " + JSON.stringify(payload.errors) : "";
      return payload.message + errors;
    }
    return "HTTP " + status;
  }

  // ------------------------------------------------------------------ /play/<game>
  function startForm(form) {
    const players = $("players");
    const rows = Array.from(form.querySelectorAll("[data-opponent]"));
    const status = $("play-status");

    function showRows() {
      const count = Number(players.value);
      rows.forEach((row) => {
        row.hidden = Number(row.dataset.opponent) >= count;
      });
    }
    players.addEventListener("change", showRows);
    showRows();

    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const seats = [{ person: form.elements.person.value.trim() || "guest" }];
      rows
        .filter((row) => !row.hidden)
        .forEach((row) => {
          const value = row.querySelector("select").value;
          seats.push(value.startsWith("house:") ? { house: value.slice(6) } : { bot_id: Number(value) });
        });
      const body = { game: form.dataset.game, seats, deadline_s: Number(form.elements.deadline.value) };
      if (form.elements.preset.value) body.preset = form.elements.preset.value;
      const optionsText = form.elements.options.value.trim();
      if (optionsText) {
        try {
          body.options = JSON.parse(optionsText);
        } catch (err) {
          status.textContent = "The options are not JSON: " + err.message;
          return;
        }
      }
      const button = form.querySelector("[data-start]");
      button.disabled = true;
      status.textContent = "Dealing…";
      try {
        const token = form.elements.token ? form.elements.token.value.trim() : "";
        const headers = token ? { Authorization: "Bearer " + token } : {};
        const { status: code, payload } = await postJSON("/api/play", JSON.stringify(body), headers);
        if (code !== 201) {
          status.textContent = "The match could not start: " + problem(payload, code);
          button.disabled = false;
          return;
        }
        window.location.assign(root + payload.links[0].url);
      } catch (err) {
        status.textContent = "The arena cannot be reached: " + err.message;
        button.disabled = false;
      }
    });
  }

  // ------------------------------------------------------------------ the seat's page
  const REACTIONS = {
    cactus: ["snap"],
    "cactus-game": ["stop"],
    president: ["rapidite", "call", "putsch"],
  };
  const REACTION_SECONDS = 6; // a reaction window is offered this long, then passed
  const MARGIN_MS = 1500; // an answer leaves this long before the arena's deadline

  function requestId() {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
  }

  function seatPage(seatRoot) {
    const botId = Number(seatRoot.dataset.botId);
    const game = seatRoot.dataset.game;
    // no name on a private event's seat shown to a page that is not in the event
    const name = seatRoot.dataset.name || "a person";
    const key = decodeURIComponent(window.location.hash.slice(1));
    const skew = Number(seatRoot.dataset.serverTime) - Date.now() / 1000;
    const tablePane = $("table");
    const actionsPane = $("actions");
    const prompt = $("prompt");
    const clock = $("countdown");
    const status = $("seat-status");
    const outcomePane = $("outcome");
    const log = $("seat-log");

    let token = null;
    let outbox = []; // answers for the next poll
    let current = null; // the /act being shown: { id, body, deadline, reaction }
    let ticker = null;
    let inFlight = null; // the open poll's AbortController
    let stopped = false;
    const tables = new Map(); // match id (as the bodies give it) -> { kit, drawing }
    let table = null; // that of the match being played

    function say(text) {
      status.textContent = text;
    }

    // what happened at the table: the events of each view the seat receives (the ones it
    // observed since its last decision), in the game's words, newest first
    function note(parts, className) {
      const item = document.createElement("li");
      if (className) item.className = className;
      if (table) table.kit.append(item, parts);
      else item.textContent = String(parts);
      log.prepend(item);
      while (log.children.length > 60) log.lastChild.remove();
    }

    // an action as a person would say it (the game's words: its drawing's `action`), as
    // plain text: a card it names is not a card shown
    function words(action, view) {
      if (!table) return JSON.stringify(action);
      return table.kit.el("span", "", [table.kit.actionWords(action, view)]).textContent;
    }

    function logEvents(view) {
      (view && Array.isArray(view.events) ? view.events : []).forEach((e) => {
        const said = table ? table.kit.describe(e) : { known: false };
        if (said.known) note(said.parts, "event");
      });
    }

    if (!key) {
      say("This link has lost its key (the part after #): ask for the seat's link again.");
      return;
    }

    async function signed(path, fields, signal) {
      const body = JSON.stringify({ bot_id: botId, request_id: requestId(), ...fields });
      const timestamp = String(Math.floor(Date.now() / 1000 + skew));
      const signature = "sha256=" + ArenaHmac.hex(key, timestamp + "." + body);
      const headers = { "X-Arena-Timestamp": timestamp, "X-Arena-Signature": signature };
      return postJSON(path, body, headers, signal);
    }

    async function openSession() {
      const info = {
        apiversion: "1",
        name,
        author: "person",
        version: "1",
        games: [game],
        capacity: 1,
        sdk: "browser",
      };
      const { status: code, payload } = await signed("/api/connect/session", { info });
      if (code !== 200) throw new Error(problem(payload, code));
      token = payload.session;
    }

    function answer(id, body) {
      outbox.push({ request_id: id, status: 200, body });
    }

    function drawTable(view) {
      tablePane.replaceChildren();
      if (!table || !table.drawing.table) return;
      try {
        const [center, seatAreas] = table.drawing.table(view, { events: [], decisions: [] });
        tablePane.appendChild(center);
        const row = table.kit.el("div", "seats seats-" + seatAreas.length, seatAreas);
        tablePane.appendChild(row);
      } catch (err) {
        tablePane.appendChild(table.kit.el("p", "muted", ["This table cannot be drawn: " + err.message]));
      }
    }

    function clearActions() {
      actionsPane.replaceChildren();
      if (ticker) clearInterval(ticker);
      ticker = null;
      clock.textContent = "";
      clock.hidden = true;
      current = null;
    }

    function isPass(action) {
      return action && action.type === "pass" && Object.keys(action).length === 1;
    }

    function choose(action) {
      if (!current) return;
      const id = current.id;
      answer(id, { action });
      note("You: " + words(action, current.body.view), "mine");
      clearActions();
      prompt.textContent = "Waiting for the other players…";
      if (inFlight) inFlight.abort(); // the answer leaves now, in a new poll
    }

    function showAct(body, id) {
      clearActions();
      const reactions = REACTIONS[game] || [];
      const phase = body.view && (body.view.phase || body.view.decision);
      const passing = body.legal_actions.find(isPass);
      const reaction = reactions.indexOf(phase) >= 0 && passing !== undefined;
      const seconds = reaction
        ? Math.min(REACTION_SECONDS, (body.deadline_ms - MARGIN_MS) / 1000)
        : (body.deadline_ms - MARGIN_MS) / 1000;
      current = { id, body, reaction, until: Date.now() + seconds * 1000, passing };
      seatRoot.dataset.decision = body.decision_id; // "step:seat", for whoever checks the page
      seatRoot.dataset.matchId = String(body.match_id).split(".")[0];
      logEvents(body.view);
      drawTable(body.view);
      prompt.textContent = reaction
        ? "Quick: " + (phase === "rapidite" ? "rapidité" : phase) + "? It passes by itself when the time runs out."
        : "Your turn: choose an action.";
      const kit = table.kit;
      body.legal_actions.forEach((action, i) => {
        const button = document.createElement("button");
        button.type = "button";
        button.className = "action" + (isPass(action) ? " pass" : "");
        button.dataset.action = JSON.stringify(action);
        if (i < 9) button.dataset.key = String(i + 1);
        kit.append(button, [i < 9 ? el("kbd", String(i + 1)) : "", " ", kit.actionWords(action, body.view)]);
        button.addEventListener("click", () => choose(action));
        actionsPane.appendChild(button);
      });
      const first = actionsPane.querySelector("button");
      if (first) first.focus({ preventScroll: true });
      clock.hidden = false;
      tick();
      ticker = setInterval(tick, 200);
    }

    function el(tag, text) {
      const node = document.createElement(tag);
      node.textContent = text;
      return node;
    }

    function tick() {
      if (!current) return;
      const left = Math.max(0, current.until - Date.now());
      clock.textContent = Math.ceil(left / 1000) + " s";
      clock.classList.toggle("urgent", left < 5000);
      if (left > 0) return;
      if (current.reaction) {
        note("The window closed: you passed");
        choose(current.passing);
      } else {
        clearActions();
        prompt.textContent = "Time is up: the arena plays the default action for you.";
        note("Time ran out: the default action was played");
      }
    }

    function tableOf(body) {
      let found = tables.get(body.match_id);
      if (!found) {
        // a person's seat is named "<their name> · person <tag>" (the tag keeps names
        // unique): the table says the name they gave
        const players = (body.players || []).map((n) => String(n).replace(/ · person [0-9a-f]{6}$/, ""));
        found = ArenaViewer.table(game, { players, perspective: () => String(body.seat) });
        tables.set(body.match_id, found);
      }
      return found;
    }

    function showStart(body) {
      table = tableOf(body);
      const matchId = String(body.match_id).split(".")[0];
      seatRoot.dataset.matchId = matchId;
      outcomePane.hidden = true;
      outcomePane.replaceChildren();
      prompt.textContent = "The match has begun: you are seat " + body.seat + ".";
      note("Match " + matchId + " begins");
    }

    function showEnd(body) {
      clearActions();
      logEvents(body.view);
      drawTable(body.view);
      const outcome = body.outcome || {};
      const rank = (outcome.ranks || [])[body.seat];
      const id = String(body.match_id).split(".")[0];
      outcomePane.hidden = false;
      outcomePane.dataset.outcome = JSON.stringify({ seat: body.seat, rank, ranks: outcome.ranks });
      outcomePane.replaceChildren(
        el("h2", rank === 1 ? "You won!" : "Match over: you finished #" + rank),
        table.kit.el("p", "", ["Ranks: ", table.kit.perSeat(outcome.ranks || [], (r) => "#" + r)]),
      );
      const link = document.createElement("a");
      link.href = root + "/matches/" + id;
      link.textContent = "The whole replay of match " + id;
      link.dataset.replay = id;
      outcomePane.appendChild(link);
      // the outcome says the match is over (and the log has the game's own sentence)
      prompt.textContent = "";
    }

    function handle(item) {
      let body;
      try {
        body = JSON.parse(item.body);
      } catch (err) {
        return;
      }
      const id = body.request_id;
      if (item.path === "/start") {
        showStart(body);
        answer(id, {});
      } else if (item.path === "/act") {
        table = tableOf(body); // its /start came first (the same match, or another one's)
        showAct(body, id);
      } else if (item.path === "/end") {
        answer(id, {});
        table = tableOf(body);
        showEnd(body);
        tables.delete(body.match_id);
      } else {
        answer(id, {});
      }
    }

    async function loop() {
      let failures = 0;
      while (!stopped) {
        const controller = new AbortController();
        inFlight = controller;
        const answers = outbox;
        outbox = [];
        let result;
        try {
          result = await signed("/api/connect/poll", { session: token, answers }, controller.signal);
        } catch (err) {
          inFlight = null;
          outbox = answers.concat(outbox); // sent again (an answer given twice counts once)
          if (err.name === "AbortError") continue; // an answer to send: poll again at once
          failures += 1;
          say("The connection to the arena dropped: trying again…");
          await new Promise((r) => setTimeout(r, Math.min(5000, 500 * failures)));
          continue;
        }
        inFlight = null;
        const { status: code, payload } = result;
        if (code === 200) {
          failures = 0;
          say("Connected as " + name + ".");
          (payload.requests || []).forEach(handle);
          continue;
        }
        if (code === 409) {
          if (payload && payload.reason === "replaced") {
            stopped = true;
            say("This seat was opened in another tab or window: play there.");
            clearActions();
            return;
          }
          await openSession().catch(() => {});
          continue;
        }
        if (code === 429) {
          await new Promise((r) => setTimeout(r, 2000));
          continue;
        }
        outbox = answers.concat(outbox);
        failures += 1;
        say("The arena refused the poll: " + problem(payload, code));
        if (code === 401 || code === 404) {
          stopped = true;
          return;
        }
        await new Promise((r) => setTimeout(r, Math.min(5000, 500 * failures)));
      }
    }

    document.addEventListener("keydown", (event) => {
      if (!current || event.altKey || event.ctrlKey || event.metaKey) return;
      const target = event.target;
      if (target && (target.tagName === "INPUT" || target.tagName === "TEXTAREA")) return;
      if (/^[1-9]$/.test(event.key)) {
        const button = actionsPane.querySelector('[data-key="' + event.key + '"]');
        if (button) {
          event.preventDefault();
          button.click();
        }
      } else if ((event.key === "p" || event.key === "Escape") && current.passing) {
        event.preventDefault();
        choose(current.passing);
      }
    });

    say("Sitting down…");
    openSession()
      .then(() => {
        say("Connected as " + name + ": waiting for the match to begin.");
        prompt.textContent = "Waiting for every player to sit down…";
        return loop();
      })
      .catch((err) => say("The seat cannot be opened: " + err.message));
  }

  function start() {
    const form = $("play-form");
    if (form) startForm(form);
    const seatRoot = $("seat");
    if (seatRoot) seatPage(seatRoot);
  }

  if (document.readyState === "complete") start();
  else document.addEventListener("DOMContentLoaded", start);
})();
