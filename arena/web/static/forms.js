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

  // what the other scripts of the pages (tournament_form.js) use of these
  window.arenaForms = { showError, postJSON, sendJSON, send, busy, enhance };

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
      // the event chosen, or null for the open arena: without the field the API would
      // enter the bot in the account's only event
      const eventId = data.get("event_id");
      if (eventId) payload.event_id = Number(eventId);
      else if (eventId !== null) payload.event_id = null;
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
          // the secret from the environment, never the command line (other users of the
          // machine read a process's arguments; the SDK reads ARENA_BOT_SECRET)
          `export ARENA_BOT_SECRET=${result.body.signing_secret || ""}\n` +
          `python bot.py --connect ${arena} --bot-id ${result.body.id}`;
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
  // its section: the form may sit in a folded "Use an organiser token" (tournament.html)
  if (cancelForm) enhance(cancelForm.closest("section") || cancelForm.parentElement);

  // ---------------------------------------------------------------- small API forms
  // <form class="json-form" data-method="PATCH" data-url="/api/..." data-done="reload">:
  // the fields become the JSON body, typed by their data-type (int, id: a number or
  // null, bool, list, datetime: a datetime-local in the browser's time, sent as UTC; path: fills {name}
  // in data-url and is not sent); an empty text field is left out unless it has
  // data-keep-empty; a list's data-item="auto" sends digits as a number and leaves ""
  // out.  data-done: "reload", "goto" (data-goto, {id} from the answer) or "show" (the
  // answer's fields into the form's .json-result [data-field], shown once: a token or a
  // reset link lives only in this page; data-links="/matches/{id}": a list of ids as links).
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
        if (checkable && !el.checked) return;
        // data-item="auto": an id (digits) goes as a number, a name as text, "" not at all
        if ("item" in el.dataset && el.value === "") return;
        const auto = el.dataset.item === "auto" && /^\d+$/.test(el.value);
        payload[el.name].push(auto ? Number(el.value) : el.value);
      } else if (kind === "bool") {
        payload[el.name] = checkable ? el.checked : el.value === "true";
      } else if (kind === "path") {
        url = url.replace("{" + el.name + "}", encodeURIComponent(el.value.trim()));
      } else if (kind === "int") {
        if (el.value.trim() !== "") payload[el.name] = Number(el.value);
      } else if (kind === "id") {
        // an id, or null when none is chosen (a bot's event: null is the open arena)
        payload[el.name] = el.value.trim() === "" ? null : Number(el.value);
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
        if ("links" in el.dataset && Array.isArray(raw)) {
          // a list of ids: one link each (data-links="/matches/{id}", under the site's root)
          el.replaceChildren(
            ...raw.map((id) => {
              const item = document.createElement("li");
              const a = document.createElement("a");
              a.href = document.body.dataset.root + el.dataset.links.replace("{id}", encodeURIComponent(String(id)));
              a.textContent = "#" + id;
              item.appendChild(a);
              return item;
            })
          );
        } else if ("link" in el.dataset) {
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
