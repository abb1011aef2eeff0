// The pages' forms post JSON to the arena's own API; nothing here talks to another host.
"use strict";

(function () {
  // ---------------------------------------------------------------- helpers
  function apiErrorText(status, body) {
    // {"code", "status", "message", "errors"?}: the message, then each field's problem
    const lines = [];
    if (body && typeof body === "object") {
      lines.push(body.message || body.status || "Request refused (" + status + ")");
      flattenErrors(body.errors, [], lines);
    } else {
      lines.push("Request refused (" + status + ")");
    }
    return lines;
  }

  function flattenErrors(errors, path, out) {
    if (errors === null || errors === undefined) return;
    if (Array.isArray(errors)) {
      if (errors.every((e) => typeof e !== "object" || e === null)) {
        out.push((path.length ? path.join(".") + ": " : "") + errors.join(" "));
      } else {
        errors.forEach((e, i) => flattenErrors(e, path.concat(String(i)), out));
      }
    } else if (typeof errors === "object") {
      Object.keys(errors).forEach((key) => {
        // marshmallow nests by location ("json"); that level says nothing to a person
        const next = key === "json" && path.length === 0 ? path : path.concat(key);
        flattenErrors(errors[key], next, out);
      });
    } else {
      out.push((path.length ? path.join(".") + ": " : "") + String(errors));
    }
  }

  function showError(box, lines) {
    box.replaceChildren();
    lines.forEach((line, i) => {
      if (i) box.appendChild(document.createElement("br"));
      box.appendChild(document.createTextNode(line));
    });
    box.hidden = false;
  }

  // the page's CSRF token (base.html): a write that a login session signs in carries it,
  // or the API refuses it (400); a bearer token needs none but it does no harm
  function csrfToken() {
    const meta = document.querySelector('meta[name="csrf-token"]');
    return meta ? meta.content : "";
  }

  function postJSON(url, payload, token) {
    return sendJSON("POST", url, payload, token);
  }

  function sendJSON(method, url, payload, token) {
    if (payload === undefined) return send(method, url, undefined, undefined, token);
    return send(method, url, JSON.stringify(payload), "application/json", token);
  }

  // a request to the API with a body of any type (JSON, a file as it is); its JSON answer
  // as { ok, body } or the error's lines
  async function send(method, url, body, contentType, token) {
    const headers = { Accept: "application/json", "X-CSRFToken": csrfToken() };
    if (contentType !== undefined) headers["Content-Type"] = contentType;
    if (token) headers.Authorization = "Bearer " + token;
    let response;
    try {
      response = await fetch(url, {
        method: method,
        headers: headers,
        body: body,
        credentials: "same-origin",
      });
    } catch (err) {
      return { ok: false, lines: ["The server could not be reached: " + err.message] };
    }
    let answer = null;
    try {
      answer = await response.json();
    } catch (err) {
      answer = null;
    }
    if (!response.ok) return { ok: false, lines: apiErrorText(response.status, answer) };
    return { ok: true, body: answer };
  }

  function busy(form, on) {
    form.querySelectorAll("button, input, select, textarea").forEach((el) => {
      el.disabled = on;
    });
  }

  // ---------------------------------------------------------------- bot registration
  const register = document.getElementById("register-form");
  if (register) {
    // a bot that connects out or is hosted has no endpoint, and a hosted one no use for a
    // signing secret: the fields go away with the choice
    const endpointField = register.querySelector(".endpoint-field");
    const connectHint = register.querySelector(".connect-hint");
    const hostedHint = register.querySelector(".hosted-hint");
    const transport = () => register.querySelector('input[name="transport"]:checked').value;
    const showTransport = () => {
      const chosen = transport();
      endpointField.hidden = chosen !== "endpoint";
      endpointField.querySelector("input").required = chosen === "endpoint";
      connectHint.hidden = chosen !== "connect";
      hostedHint.hidden = chosen !== "hosted";
      register.querySelectorAll(".secret-field").forEach((el) => {
        el.hidden = chosen === "hosted";
      });
    };
    register.querySelectorAll('input[name="transport"]').forEach((radio) => {
      radio.addEventListener("change", showTransport);
    });
    showTransport();
    register.addEventListener("submit", async (event) => {
      event.preventDefault();
      const error = register.querySelector(".form-error");
      error.hidden = true;
      const data = new FormData(register);
      const connect = data.get("transport") === "connect";
      const hosted = data.get("transport") === "hosted";
      const payload = { name: data.get("name").trim() };
      // signed in, the owner defaults to the account and the bot may enter one of its events
      const owner = data.get("owner").trim();
      if (owner) payload.owner = owner;
      const eventId = data.get("event_id");
      if (eventId) payload.event_id = Number(eventId);
      if (connect) payload.connect = true;
      else if (hosted) payload.hosted = true;
      else payload.endpoint = data.get("endpoint").trim();
      const description = data.get("description").trim();
      if (description) payload.description = description;
      const games = data.getAll("games");
      if (games.length) payload.games = games;
      if (data.get("playable")) payload.playable = true;
      // a secret is sent as typed: the API says what is wrong with it, nothing is dropped
      const secret = data.get("signing_secret");
      if (secret && !hosted) payload.signing_secret = secret;
      busy(register, true);
      const result = await postJSON(register.dataset.api, payload);
      busy(register, false);
      if (!result.ok) {
        showError(error, result.lines);
        return;
      }
      // shown once: the secrets live only in this page's DOM, never in a URL or storage
      const box = document.getElementById("register-result");
      const link = box.querySelector(".bot-link");
      link.textContent = result.body.name || payload.name;
      const page = document.body.dataset.root + "/bots/" + encodeURIComponent(result.body.id);
      if (result.body.id !== undefined) link.href = page;
      document.getElementById("owner-token").textContent = result.body.owner_token || "";
      document.getElementById("signing-secret").textContent = result.body.signing_secret || "";
      const command = box.querySelector(".connect-command");
      command.hidden = !connect;
      if (connect) {
        const arena = window.location.origin + document.body.dataset.root;
        document.getElementById("connect-command").textContent =
          `python bot.py --connect ${arena} --bot-id ${result.body.id} --secret ${result.body.signing_secret || ""}`;
      }
      box.querySelector(".hosted-next").hidden = !hosted;
      box.querySelectorAll(".signing-secret-row").forEach((el) => {
        el.hidden = hosted; // the arena never calls a hosted bot over HTTP
      });
      box.querySelectorAll(".code-link").forEach((a) => {
        a.href = page + "#code";
      });
      register.reset();
      register.hidden = true;
      box.hidden = false;
      box.scrollIntoView({ block: "start" });
    });
    document.querySelectorAll("button.copy").forEach((button) => {
      button.addEventListener("click", async () => {
        const text = document.getElementById(button.dataset.copy).textContent;
        try {
          await navigator.clipboard.writeText(text);
          button.textContent = "Copied";
        } catch (err) {
          // no clipboard (plain http): select the text so Ctrl+C works
          const range = document.createRange();
          range.selectNodeContents(document.getElementById(button.dataset.copy));
          const selection = window.getSelection();
          selection.removeAllRanges();
          selection.addRange(range);
          button.textContent = "Selected: press Ctrl+C";
        }
      });
    });
  }

  // what only works with JavaScript is hidden in the page and shown here
  function enhance(root) {
    root.querySelectorAll("[data-needs-js]").forEach((el) => {
      el.hidden = false;
    });
  }

  // ---------------------------------------------------------------- new tournament
  const tournament = document.getElementById("tournament-form");
  if (tournament) {
    const gameSelect = document.getElementById("game-select");
    const presetSelect = document.getElementById("preset-select");
    const formatSelect = document.getElementById("format-select");
    const dealSelect = document.getElementById("deal-select");
    const seats = document.getElementById("seats-input");
    const games = document.getElementById("games-input");
    const matches = document.getElementById("matches-input");
    const sprtOn = document.getElementById("sprt-on");
    const passKind = document.getElementById("pass-kind");
    const sprtParams = document.getElementById("sprt-params");
    const filter = document.getElementById("bot-filter");
    const count = document.getElementById("bot-count");
    const rows = Array.from(tournament.querySelectorAll(".bot-choice"));
    const entrant = (row) => row.querySelector("input[name=bot_ids]");
    const challenger = (row) => row.querySelector("input[name=challenger_ids]");
    const eventSelect = document.getElementById("event-select"); // only for an event's organisers
    const eventId = () => (eventSelect ? eventSelect.value : "");
    // a bot of the chosen game and of the chosen event (or of none: the open arena)
    const playsGame = (row) =>
      JSON.parse(row.dataset.games || "[]").includes(gameSelect.value) &&
      (row.dataset.event || "") === eventId();

    // -------------------------------------------------------------- the game's options
    // One field per option of the chosen game, built from the list embedded in the page.
    // A field shows the value matches will be played with (the preset's, else the game's
    // default); only the fields changed from it are sent, and the API judges them.
    const optionData = JSON.parse(document.getElementById("game-options").textContent || "{}");
    const optionList = document.getElementById("option-list");
    const presetHint = document.getElementById("preset-hint");
    let optionsGame = null; // the game the fields were built for
    let shown = {}; // the values the fields were last set to (the preset's or the defaults)

    const gameOptions = () => optionData[gameSelect.value] || { options: [], defaults: {}, presets: [] };
    const chosenPreset = () => gameOptions().presets.find((p) => p.name === presetSelect.value);
    const baseline = () => (chosenPreset() || {}).values || gameOptions().defaults;

    function same(a, b) {
      if (a === b) return true;
      if (!a || !b || typeof a !== "object" || typeof b !== "object") return false;
      const keys = Object.keys(a);
      return keys.length === Object.keys(b).length && keys.every((k) => same(a[k], b[k]));
    }
    // {"A": 1, "2": 2}: one line that wraps, as a person would type it, keys in the game's
    // order (a parsed object puts "2" before "A")
    function showJSON(value, order) {
      const keys = Object.keys(value);
      const known = (order || []).filter((k) => keys.includes(k));
      return (
        "{" +
        known.concat(keys.filter((k) => !known.includes(k)))
          .map((k) => JSON.stringify(k) + ": " + JSON.stringify(value[k]))
          .join(", ") +
        "}"
      );
    }

    // a field's value as JSON; undefined when left empty (the game's value), and a
    // SyntaxError for an object field that is not JSON
    function readOption(control, option) {
      if (option.type === "boolean") return control.checked;
      const text = String(control.value || "").trim();
      if (text === "") return undefined;
      if (option.type === "object") return JSON.parse(text);
      return option.type === "integer" ? Number(text) : text;
    }
    function writeOption(control, option, value) {
      if (option.type === "boolean") {
        control.checked = Boolean(value);
      } else if (option.type === "object") {
        control.value = value && typeof value === "object" ? showJSON(value, option.allowed_keys) : "";
        fitText(control);
      } else {
        control.value = value === null || value === undefined ? "" : String(value);
      }
    }
    // an object's field grows with its text: the whole value is in view
    function fitText(area) {
      area.style.height = "auto";
      const border = area.offsetHeight - area.clientHeight;
      area.style.height = area.scrollHeight + border + "px";
    }
    function changedValue(control, option) {
      const value = readOption(control, option);
      return value === undefined || same(value, shown[option.name]) ? undefined : value;
    }

    function optionField(option) {
      const id = "option-" + option.name;
      const box = document.createElement("div");
      box.className = "option";
      box.dataset.option = option.name;
      const help = document.createElement("p");
      help.className = "hint";
      help.id = id + "-help";
      help.textContent = option.description;
      let control;
      if (option.type === "boolean") {
        control = document.createElement("input");
        control.type = "checkbox";
      } else if (option.enum) {
        control = document.createElement("select");
        if (option.nullable) control.appendChild(new Option("default", ""));
        option.enum.forEach((value) => control.appendChild(new Option(String(value), String(value))));
      } else if (option.type === "integer") {
        control = document.createElement("input");
        control.type = "number";
        control.step = "1";
        if (option.minimum !== undefined) control.min = option.minimum;
        if (option.maximum !== undefined) control.max = option.maximum;
        control.placeholder = "default";
      } else if (option.type === "object") {
        control = document.createElement("textarea");
        control.rows = 2;
        control.spellcheck = false;
        control.placeholder = "{}";
      } else {
        control = document.createElement("input");
        control.placeholder = "default";
      }
      control.id = id;
      control.dataset.option = option.name;
      control.setAttribute("aria-describedby", help.id);
      const label = document.createElement("label");
      label.htmlFor = id;
      const name = document.createElement("span");
      name.className = "option-name";
      name.textContent = option.name;
      if (option.type === "boolean") {
        label.className = "check";
        label.append(control, name);
      } else {
        label.append(name, control);
      }
      box.append(label, help);
      return box;
    }
    const controls = () =>
      gameOptions().options.map((option) => [optionList.querySelector('[id="option-' + option.name + '"]'), option]);

    // changed fields are marked: they are what will be sent
    function markChanged() {
      controls().forEach(([control, option]) => {
        let changed;
        try {
          changed = changedValue(control, option) !== undefined;
        } catch (err) {
          changed = true; // not JSON: sent to be refused, with the reason
        }
        control.closest(".option").classList.toggle("changed", changed);
      });
    }
    // a new game: new fields; a new preset: the fields not changed follow it
    function refreshOptions() {
      if (optionsGame !== gameSelect.value) {
        optionsGame = gameSelect.value;
        optionList.replaceChildren(...gameOptions().options.map(optionField));
        shown = {};
      }
      const fresh = baseline();
      controls().forEach(([control, option]) => {
        let keep;
        try {
          keep = changedValue(control, option) !== undefined;
        } catch (err) {
          keep = true;
        }
        if (!keep || !(option.name in shown)) writeOption(control, option, fresh[option.name]);
      });
      shown = fresh;
      const preset = chosenPreset();
      presetHint.textContent = preset
        ? preset.description
        : gameOptions().presets.length
          ? "The game's default options."
          : "This game has no presets: change the options below.";
      markChanged();
    }
    optionList.addEventListener("input", (event) => {
      if (event.target instanceof HTMLTextAreaElement) fitText(event.target);
      markChanged();
    });
    optionList.addEventListener("change", markChanged);
    presetSelect.addEventListener("change", refreshOptions);

    // -------------------------------------------------------------- the formats
    // The formats and the fields each takes come from the API (GET /api/formats), as the
    // server's registry lists them: the page names none.  An element marked
    // data-field="name" belongs to that field, shown only when the chosen format takes it.
    let formatList = [];
    const chosenFormat = () => formatList.find((f) => f.name === formatSelect.value) || { fields: [] };
    const takes = (name) => chosenFormat().fields.find((field) => field.name === name);
    const formatHint = document.getElementById("format-hint");

    async function loadFormats() {
      let list = [];
      try {
        const response = await fetch(formatSelect.dataset.api, {
          headers: { Accept: "application/json" },
          credentials: "same-origin",
        });
        if (response.ok) list = await response.json();
      } catch (err) {
        list = [];
      }
      formatList = Array.isArray(list) ? list : [];
      formatSelect.replaceChildren(
        ...formatList.map((f) => new Option(f.title, f.name, Boolean(f.default), Boolean(f.default)))
      );
      if (!formatList.length) {
        showError(tournament.querySelector(".form-error"), ["The formats could not be loaded: reload the page."]);
      }
      applyFormat();
      tournament.dataset.formatsLoaded = "";
    }

    // only the chosen format's fields are shown (and enabled: hidden ones are not sent)
    function applyFormat() {
      const format = chosenFormat();
      formatHint.replaceChildren();
      if (format.title) {
        const title = document.createElement("strong");
        title.textContent = format.title + ":";
        formatHint.append(title, " " + format.hint);
      }
      tournament.querySelectorAll("[data-field]").forEach((el) => {
        const shown = Boolean(takes(el.dataset.field));
        el.hidden = !shown;
        if (el.matches("input, select")) el.disabled = !shown;
        el.querySelectorAll("input, select").forEach((input) => {
          input.disabled = !shown;
        });
      });
      tournament.querySelectorAll("[data-label-of]").forEach((el) => {
        const field = takes(el.dataset.labelOf);
        if (field) el.textContent = field.label;
      });
      if (takes("sprt")) {
        sprtParams.querySelectorAll("input").forEach((input) => {
          input.disabled = !sprtOn.checked;
        });
        sprtParams.classList.toggle("off", !sprtOn.checked);
      }
      if (takes("pass_rule")) {
        // only the chosen rule's parameters are shown (and sent)
        tournament.querySelectorAll("[data-rule]").forEach((el) => {
          const shown = el.dataset.rule === passKind.value;
          el.hidden = !shown;
          el.querySelectorAll("input").forEach((input) => {
            input.disabled = !shown;
          });
        });
      }
      fitMatches();
      countChosen();
    }

    const refreshGame = (changed) => {
      const option = gameSelect.selectedOptions[0];
      if (!option) return;
      const presets = JSON.parse(option.dataset.presets || "[]");
      const preset = presetSelect.value;
      presetSelect.replaceChildren(new Option("default rules", ""));
      const described = (optionData[option.value] || { presets: [] }).presets;
      presets.forEach((name) => {
        const choice = new Option(name, name);
        choice.title = (described.find((p) => p.name === name) || {}).description || "";
        presetSelect.appendChild(choice);
      });
      if (!changed && presets.includes(preset)) presetSelect.value = preset;
      presetSelect.disabled = presets.length === 0;
      refreshOptions();
      seats.min = option.dataset.min;
      seats.max = option.dataset.max;
      const value = Number(seats.value);
      if (changed || !(value >= Number(seats.min) && value <= Number(seats.max))) {
        seats.value = seats.min; // a new game starts from its smallest table
      }
      fitGames();
      showBots();
      applyFormat();
    };
    // the bots of the chosen game, narrowed by the filter; a bot of another game is untaken
    function showBots() {
      const needle = filter.value.trim().toLowerCase();
      let plays = 0;
      rows.forEach((row) => {
        const ok = playsGame(row);
        if (ok) plays += 1;
        else row.querySelectorAll("input").forEach((input) => { input.checked = false; });
        row.hidden = !ok || (needle !== "" && !row.dataset.search.includes(needle));
      });
      tournament.querySelector(".no-bots").hidden = plays > 0;
    }
    function countChosen() {
      const chosen = rows.filter((row) => entrant(row).checked).length;
      const challengers = rows.filter((row) => challenger(row).checked).length;
      let text = chosen + (chosen === 1 ? " bot" : " bots") + " selected";
      if (takes("challenger_ids")) {
        text += ", " + challengers + (challengers === 1 ? " challenger" : " challengers");
      }
      count.textContent = text;
    }
    // games per pairing: a multiple of the seats (every bot plays every seat equally often)
    function fitGames() {
      const per = Number(seats.value) || 2;
      games.min = per;
      games.step = per;
      const value = Number(games.value);
      if (!(value >= per) || value % per !== 0) games.value = per * Math.max(1, Math.round(value / per));
    }
    // duplicate deals: matches per bot a multiple of the seats (one match per rotation)
    function fitMatches() {
      const per = dealSelect.value === "duplicate" ? Number(seats.value) || 2 : 1;
      matches.min = per;
      matches.step = per;
      const value = Number(matches.value);
      if (matches.value.trim() !== "" && (!(value >= per) || value % per !== 0)) {
        matches.value = per * Math.max(1, Math.round(value / per));
      }
    }
    gameSelect.addEventListener("change", () => refreshGame(true));
    formatSelect.addEventListener("change", applyFormat);
    dealSelect.addEventListener("change", fitMatches);
    sprtOn.addEventListener("change", applyFormat);
    passKind.addEventListener("change", applyFormat);
    seats.addEventListener("change", () => {
      fitGames();
      fitMatches();
    });
    matches.addEventListener("change", fitMatches);
    filter.addEventListener("input", showBots);
    if (eventSelect) eventSelect.addEventListener("change", showBots);
    // a challenger is an entrant; a bot taken out is no challenger
    tournament.querySelector(".bot-list").addEventListener("change", (event) => {
      const row = event.target.closest(".bot-choice");
      if (!row) return;
      if (event.target.name === "challenger_ids" && event.target.checked) entrant(row).checked = true;
      if (event.target.name === "bot_ids" && !event.target.checked) challenger(row).checked = false;
      countChosen();
    });
    document.getElementById("select-all").addEventListener("click", () => {
      rows.forEach((row) => {
        if (playsGame(row)) entrant(row).checked = true;
      });
      countChosen();
    });
    document.getElementById("select-none").addEventListener("click", () => {
      rows.forEach((row) => row.querySelectorAll("input").forEach((input) => { input.checked = false; }));
      countChosen();
    });
    enhance(tournament);
    refreshGame(false);
    const formatsLoaded = loadFormats();

    // a number field as typed: left out when empty (the API says what is missing)
    function putNumber(payload, key, input) {
      const text = String(input.value || "").trim();
      if (text !== "") payload[key] = Number(text);
    }

    tournament.addEventListener("submit", async (event) => {
      event.preventDefault();
      await formatsLoaded;
      const error = tournament.querySelector(".form-error");
      error.hidden = true;
      const data = new FormData(tournament);
      const format = formatSelect.value;
      const chosen = rows.filter((row) => playsGame(row));
      const payload = {
        name: String(data.get("name") || "").trim(),
        game: gameSelect.value,
        format: format,
        deal: dealSelect.value,
        bot_ids: chosen
          .filter((row) => entrant(row).checked || (takes("challenger_ids") && challenger(row).checked))
          .map((row) => Number(entrant(row).value)),
      };
      if (eventId()) payload.event_id = Number(eventId());
      putNumber(payload, "seats_per_match", seats);
      if (takes("games_per_pairing")) putNumber(payload, "games_per_pairing", games);
      if (takes("matches_per_bot")) putNumber(payload, "matches_per_bot", matches);
      if (takes("challenger_ids")) {
        payload.challenger_ids = chosen
          .filter((row) => challenger(row).checked)
          .map((row) => Number(challenger(row).value));
      }
      if (takes("sprt") && sprtOn.checked) {
        const sprt = {};
        putNumber(sprt, "elo0", document.getElementById("sprt-elo0"));
        putNumber(sprt, "elo1", document.getElementById("sprt-elo1"));
        putNumber(sprt, "alpha", document.getElementById("sprt-alpha"));
        putNumber(sprt, "beta", document.getElementById("sprt-beta"));
        payload.sprt = sprt;
      }
      if (takes("pass_rule")) {
        const rule = { kind: passKind.value };
        if (rule.kind === "score") putNumber(rule, "min_score", document.getElementById("pass-min-score"));
        if (rule.kind === "consecutive") {
          putNumber(rule, "wins", document.getElementById("pass-wins"));
          putNumber(rule, "of", document.getElementById("pass-of"));
        }
        payload.pass_rule = rule;
      }
      if (presetSelect.value) payload.preset = presetSelect.value;
      // only the options changed from what the fields showed; a field that is not JSON is
      // sent as typed, for the API to say what it expects
      const options = {};
      controls().forEach(([control, option]) => {
        let value;
        try {
          value = changedValue(control, option);
        } catch (err) {
          value = String(control.value).trim();
        }
        if (value !== undefined) options[option.name] = value;
      });
      if (Object.keys(options).length) payload.options = options;
      if (String(data.get("seed") || "").trim() !== "") payload.seed = Number(data.get("seed"));
      if (data.get("live_everyone")) payload.live_view = "everyone";
      const people = String(data.get("people") || "")
        .split(/[\n,]/)
        .map((name) => name.trim())
        .filter((name) => name);
      if (people.length) {
        payload.people = people;
        putNumber(payload, "person_deadline_s", document.getElementById("person-deadline"));
      }
      if (data.get("rated")) payload.rated = true;
      const token = String(data.get("token") || "").trim();
      busy(tournament, true);
      const result = await postJSON(tournament.dataset.api, payload, token);
      busy(tournament, false);
      refreshGame(false);
      if (!result.ok) {
        showError(error, result.lines);
        return;
      }
      const id = result.body && result.body.id;
      const links = (result.body && result.body.seat_links) || [];
      if (links.length && id !== undefined) {
        // each person's link is shown this once: the page stays until they are copied
        const list = document.getElementById("seat-link-list");
        list.replaceChildren();
        links.forEach((link) => {
          const item = document.createElement("li");
          const url = window.location.origin + document.body.dataset.root + link.url;
          const anchor = document.createElement("a");
          anchor.href = url;
          anchor.textContent = url;
          anchor.dataset.seatLink = String(link.bot_id);
          item.append(link.name + ": ", anchor);
          list.appendChild(item);
        });
        const to = document.getElementById("tournament-link");
        to.href = document.body.dataset.root + "/tournaments/" + encodeURIComponent(id);
        tournament.hidden = true;
        document.getElementById("seat-links").hidden = false;
        return;
      }
      window.location.assign(
        id !== undefined ? document.body.dataset.root + "/tournaments/" + encodeURIComponent(id) : tournament.dataset.page
      );
    });
  }

  // ---------------------------------------------------------------- cancel a tournament
  // listened to on the document: a live update replaces the section the form is in
  document.addEventListener("submit", async (event) => {
    const cancel = event.target;
    if (!(cancel instanceof HTMLFormElement) || cancel.id !== "cancel-form") return;
    event.preventDefault();
    if (!window.confirm("Cancel this tournament? Matches not started yet will not be played.")) {
      return;
    }
    const error = cancel.querySelector(".form-error");
    error.hidden = true;
    const token = String(new FormData(cancel).get("token") || "").trim();
    busy(cancel, true);
    const result = await postJSON(cancel.dataset.api, {}, token);
    busy(cancel, false);
    if (!result.ok) {
      showError(error, result.lines);
      return;
    }
    window.location.reload();
  });
  const cancelForm = document.getElementById("cancel-form");
  if (cancelForm) enhance(cancelForm.parentElement);

  // ---------------------------------------------------------------- small API forms
  // <form class="json-form" data-method="PATCH" data-url="/api/..." data-done="reload">:
  // the fields become the JSON body, typed by their data-type (int, bool, list,
  // datetime: a datetime-local in the browser's time, sent as UTC; path: fills {name}
  // in data-url and is not sent); an empty text field is left out unless it has
  // data-keep-empty.  data-done: "reload", "goto" (data-goto, {id} from the answer) or
  // "show" (the answer's fields into the form's .json-result [data-field], shown once:
  // a token or a reset link lives only in this page).
  function localInput(iso) {
    const when = new Date(iso);
    const pad = (n) => String(n).padStart(2, "0");
    return `${when.getFullYear()}-${pad(when.getMonth() + 1)}-${pad(when.getDate())}T${pad(when.getHours())}:${pad(when.getMinutes())}`;
  }
  document.querySelectorAll("input[data-utc]").forEach((input) => {
    input.value = localInput(input.dataset.utc);
  });

  function formBody(form) {
    const payload = {};
    let url = form.dataset.url;
    Array.from(form.elements).forEach((el) => {
      if (!el.name || el.name === "csrf_token" || el.disabled) return;
      const kind = el.dataset.type || "string";
      const checkable = el.type === "checkbox" || el.type === "radio";
      if (kind === "list") {
        if (!(el.name in payload)) payload[el.name] = [];
        if (!checkable || el.checked) payload[el.name].push(el.value);
      } else if (kind === "bool") {
        payload[el.name] = checkable ? el.checked : el.value === "true";
      } else if (kind === "path") {
        url = url.replace("{" + el.name + "}", encodeURIComponent(el.value.trim()));
      } else if (kind === "int") {
        if (el.value.trim() !== "") payload[el.name] = Number(el.value);
      } else if (kind === "datetime") {
        payload[el.name] = el.value ? new Date(el.value).toISOString() : null;
      } else if (checkable) {
        if (el.checked) payload[el.name] = el.value;
      } else {
        // a password is sent as typed; other text without its surrounding spaces
        const value = el.type === "password" ? el.value : el.value.trim();
        if (value !== "" || "keepEmpty" in el.dataset) payload[el.name] = value;
      }
    });
    return { url: url, payload: payload };
  }

  document.addEventListener("submit", async (event) => {
    const form = event.target;
    if (!(form instanceof HTMLFormElement) || !form.classList.contains("json-form")) return;
    event.preventDefault();
    if (form.dataset.confirm && !window.confirm(form.dataset.confirm)) return;
    const error = form.querySelector(".form-error");
    if (error) error.hidden = true;
    const method = (form.dataset.method || "POST").toUpperCase();
    const { url, payload } = formBody(form);
    busy(form, true);
    const result = await sendJSON(method, url, method === "DELETE" ? undefined : payload);
    busy(form, false);
    if (!result.ok) {
      if (error) showError(error, result.lines);
      return;
    }
    const done = form.dataset.done || "reload";
    if (done === "goto") {
      const id = result.body && result.body.id !== undefined ? String(result.body.id) : "";
      window.location.assign(document.body.dataset.root + form.dataset.goto.replace("{id}", encodeURIComponent(id)));
    } else if (done === "show") {
      const box = form.querySelector(".json-result");
      box.querySelectorAll("[data-field]").forEach((el) => {
        const raw = (result.body || {})[el.dataset.field];
        const value = raw === undefined || raw === null ? "" : String(raw); // 0 is shown
        if ("link" in el.dataset) {
          el.href = window.location.origin + value;
          el.textContent = window.location.origin + value;
        } else {
          el.textContent = value;
        }
      });
      form.querySelectorAll('input[type="password"]').forEach((input) => {
        input.value = "";
      });
      box.hidden = false;
    } else {
      window.location.reload();
    }
  });

  // ---------------------------------------------------------------- a hosted bot's code
  // The file goes as it is, the raw body of PUT /api/bots/<id>/code (the API takes a
  // Python file or a zip, told apart by Content-Type): what is accepted is the API's to say.
  const CODE_TYPES = { py: "text/x-python", zip: "application/zip" };
  const codeForm = document.getElementById("code-form");
  if (codeForm) {
    codeForm.addEventListener("submit", async (event) => {
      event.preventDefault();
      const error = codeForm.querySelector(".form-error");
      error.hidden = true;
      const file = codeForm.querySelector('input[type="file"]').files[0];
      if (!file) {
        showError(error, ["Choose a .py file or a .zip first."]);
        return;
      }
      const suffix = file.name.includes(".") ? file.name.split(".").pop().toLowerCase() : "";
      const type = CODE_TYPES[suffix] || file.type || "application/octet-stream";
      busy(codeForm, true);
      const result = await send("PUT", codeForm.dataset.url, file, type);
      busy(codeForm, false);
      if (!result.ok) {
        showError(error, result.lines);
        return;
      }
      // the page lists the new version (validating) and follows it from there
      window.location.hash = "code";
      window.location.reload();
    });
  }

  // While a version is being validated, ask the API now and then whether its match was
  // played; once no version is validating, the page is read again with the verdict.
  const validating = document.querySelector("table.code-versions[data-poll]");
  if (validating) {
    const chosen = () => codeForm && codeForm.querySelector('input[type="file"]').files.length > 0;
    const timer = window.setInterval(async () => {
      try {
        const response = await fetch(validating.dataset.poll, {
          headers: { Accept: "application/json" },
          cache: "no-store",
          credentials: "same-origin",
        });
        if (!response.ok) return;
        const versions = await response.json();
        if (versions.some((v) => v.status === "validating") || chosen()) return;
        window.clearInterval(timer);
        window.location.hash = "code";
        window.location.reload();
      } catch (err) {
        // the server could not be reached: the next poll tries again
      }
    }, 3000);
  }

  // copy buttons of the pages without the registration form (which has its own)
  if (!register) {
    document.addEventListener("click", async (event) => {
      const button = event.target.closest && event.target.closest("button.copy[data-copy]");
      if (!button) return;
      const source = document.getElementById(button.dataset.copy);
      try {
        await navigator.clipboard.writeText(source.textContent);
        button.textContent = "Copied";
      } catch (err) {
        const range = document.createRange();
        range.selectNodeContents(source);
        window.getSelection().removeAllRanges();
        window.getSelection().addRange(range);
        button.textContent = "Selected: press Ctrl+C";
      }
    });
  }

  // ---------------------------------------------------------------- live pages
  // While matches are being played, ask every few seconds whether the page changed (a
  // conditional request with the page's ETag: 304 when it did not) and, when it did,
  // put in the sections marked data-live that differ, keeping the scroll position.
  // Nothing happens while someone is typing in a form.  A page without such sections
  // (a match waiting to be played) is reloaded when it changed.
  const live = document.querySelector("[data-refresh]");
  if (live) {
    const seconds = Number(live.dataset.refresh) || 5;
    let etag = live.dataset.etag || "";
    // what the server last sent for each section (the page's own copy may have been
    // changed by the script since, e.g. a form shown)
    const sent = new Map();
    document.querySelectorAll("[data-live][id]").forEach((el) => sent.set(el.id, el.outerHTML));
    let timer = null;
    let polling = false;

    const typing = () =>
      Array.from(document.querySelectorAll("input, textarea, select")).some(
        (el) => el === document.activeElement || (el.type !== "checkbox" && el.value)
      );

    const poll = async () => {
      if (polling || typing()) return;
      polling = true;
      try {
        const headers = { Accept: "text/html" };
        if (etag) headers["If-None-Match"] = etag;
        // no-store: the answer (304 included) comes to this script as the server sent it
        const response = await fetch(window.location.href, {
          headers: headers,
          cache: "no-store",
          credentials: "same-origin",
        });
        if (response.status === 304 || !response.ok) return;
        const text = await response.text();
        if (typing()) return; // someone started typing meanwhile: the next poll will do
        const fresh = new DOMParser().parseFromString(text, "text/html");
        etag = response.headers.get("ETag") || etag;
        const ids = Array.from(fresh.querySelectorAll("[data-live][id]"), (el) => el.id);
        const same = ids.length === sent.size && ids.every((id) => sent.has(id));
        if (sent.size === 0 || !same) {
          window.location.reload();
          return;
        }
        const x = window.scrollX;
        const y = window.scrollY;
        ids.forEach((id) => {
          const incoming = fresh.getElementById(id);
          const html = incoming.outerHTML;
          if (sent.get(id) === html) return;
          sent.set(id, html);
          const node = document.importNode(incoming, true);
          enhance(node);
          document.getElementById(id).replaceWith(node);
        });
        window.scrollTo(x, y);
        document.title = fresh.title || document.title;
        const still = fresh.querySelector("[data-refresh]");
        if (!still) window.clearInterval(timer); // the matches are played: nothing to follow
      } catch (err) {
        // the server could not be reached: the next poll tries again
      } finally {
        polling = false;
      }
    };
    timer = window.setInterval(poll, seconds * 1000);
  }
})();
