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

  async function postJSON(url, payload, token) {
    const headers = { "Content-Type": "application/json", Accept: "application/json" };
    if (token) headers.Authorization = "Bearer " + token;
    let response;
    try {
      response = await fetch(url, {
        method: "POST",
        headers: headers,
        body: JSON.stringify(payload),
        credentials: "same-origin",
      });
    } catch (err) {
      return { ok: false, lines: ["The server could not be reached: " + err.message] };
    }
    let body = null;
    try {
      body = await response.json();
    } catch (err) {
      body = null;
    }
    if (!response.ok) return { ok: false, lines: apiErrorText(response.status, body) };
    return { ok: true, body: body };
  }

  function busy(form, on) {
    form.querySelectorAll("button, input, select, textarea").forEach((el) => {
      el.disabled = on;
    });
  }

  // ---------------------------------------------------------------- bot registration
  const register = document.getElementById("register-form");
  if (register) {
    register.addEventListener("submit", async (event) => {
      event.preventDefault();
      const error = register.querySelector(".form-error");
      error.hidden = true;
      const data = new FormData(register);
      const payload = {
        name: data.get("name").trim(),
        endpoint: data.get("endpoint").trim(),
        owner: data.get("owner").trim(),
      };
      const description = data.get("description").trim();
      if (description) payload.description = description;
      const games = data.getAll("games");
      if (games.length) payload.games = games;
      // a secret is sent as typed: the API says what is wrong with it, nothing is dropped
      const secret = data.get("signing_secret");
      if (secret) payload.signing_secret = secret;
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
      if (result.body.id !== undefined) link.href = document.body.dataset.root + "/bots/" + encodeURIComponent(result.body.id);
      document.getElementById("owner-token").textContent = result.body.owner_token || "";
      document.getElementById("signing-secret").textContent = result.body.signing_secret || "";
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

  // ---------------------------------------------------------------- new tournament
  const tournament = document.getElementById("tournament-form");
  if (tournament) {
    const gameSelect = document.getElementById("game-select");
    const presetSelect = document.getElementById("preset-select");
    const seats = document.getElementById("seats-input");
    const games = document.getElementById("games-input");

    const refreshGame = (changed) => {
      const option = gameSelect.selectedOptions[0];
      if (!option) return;
      const game = option.value;
      const presets = JSON.parse(option.dataset.presets || "[]");
      presetSelect.replaceChildren(new Option("default rules", ""));
      presets.forEach((name) => presetSelect.appendChild(new Option(name, name)));
      presetSelect.disabled = presets.length === 0;
      seats.min = option.dataset.min;
      seats.max = option.dataset.max;
      const value = Number(seats.value);
      if (changed || !(value >= Number(seats.min) && value <= Number(seats.max))) {
        seats.value = seats.min; // a new game starts from its smallest table
      }
      fitGames();
      let shown = 0;
      tournament.querySelectorAll(".bot-choice").forEach((label) => {
        const plays = JSON.parse(label.dataset.games || "[]").includes(game);
        label.hidden = !plays;
        if (!plays) label.querySelector("input").checked = false;
        if (plays) shown += 1;
      });
      tournament.querySelector(".no-bots").hidden = shown > 0;
    };
    // games per pairing: a multiple of the seats (every bot plays every seat equally often)
    function fitGames() {
      const per = Number(seats.value) || 2;
      games.min = per;
      games.step = per;
      const value = Number(games.value);
      if (!(value >= per) || value % per !== 0) games.value = per * Math.max(1, Math.round(value / per));
    }
    gameSelect.addEventListener("change", () => refreshGame(true));
    seats.addEventListener("change", fitGames);
    refreshGame(false);

    tournament.addEventListener("submit", async (event) => {
      event.preventDefault();
      const error = tournament.querySelector(".form-error");
      error.hidden = true;
      const data = new FormData(tournament);
      const payload = {
        name: data.get("name").trim(),
        game: data.get("game"),
        bot_ids: data.getAll("bot_ids").map(Number),
        seats_per_match: Number(data.get("seats_per_match")),
        games_per_pairing: Number(data.get("games_per_pairing")),
      };
      if (data.get("preset")) payload.preset = data.get("preset");
      if (String(data.get("seed") || "").trim() !== "") payload.seed = Number(data.get("seed"));
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
      window.location.assign(
        id !== undefined ? document.body.dataset.root + "/tournaments/" + encodeURIComponent(id) : tournament.dataset.page
      );
    });
  }

  // ---------------------------------------------------------------- cancel a tournament
  const cancel = document.getElementById("cancel-form");
  if (cancel) {
    cancel.addEventListener("submit", async (event) => {
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
  }

  // ---------------------------------------------------------------- live pages
  // Reload while matches are being played, unless someone is typing in a form.
  const live = document.querySelector("[data-refresh]");
  if (live) {
    const seconds = Number(live.dataset.refresh) || 5;
    window.setInterval(() => {
      const typing = Array.from(document.querySelectorAll("input, textarea, select")).some(
        (el) => el === document.activeElement || (el.type !== "checkbox" && el.value)
      );
      if (!typing) window.location.reload();
    }, seconds * 1000);
  }
})();
