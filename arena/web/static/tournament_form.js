// The new tournament's form (tournaments/new): the game's options, the formats' fields
// from GET /api/formats, the bots to enter, and the POST to /api/tournaments. It uses the
// request and error helpers of forms.js, which the page loads first.
"use strict";

(function () {
  const { showError, postJSON, busy, enhance } = window.arenaForms;

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
    // a bot of the chosen game and of the chosen event (or of none: the open arena); a
    // reference bot (a house bot, or one an organiser offers) is offered to every event
    const offered = (row) => row.dataset.reference === "1" && eventId() !== "";
    const playsGame = (row) =>
      JSON.parse(row.dataset.games || "[]").includes(gameSelect.value) &&
      ((row.dataset.event || "") === eventId() || offered(row));

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
      putNumber(payload, "time_bank_ms", document.getElementById("time-bank-input"));
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
})();
