// The chat page of `glove-mcp serve --web`. Plain JavaScript, no build step, no network but
// this server. Untrusted text (model replies, tool results, what MCP servers ask) is only
// ever written with textContent: never innerHTML.
"use strict";

const KEY_ITEM = "glove-api-key";
// Opened from `glove-mcp chat`'s link: this page follows that one conversation (its id here).
const LINKED_ITEM = "glove-linked-session";
const state = { key: null, session: null, cursor: 0, follow: null, nextPage: null, titles: {}, linked: null };

const $ = (id) => document.getElementById(id);

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function pretty(value) {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2);
  } catch (err) {
    return String(value);
  }
}

function setStatus(text) {
  $("status").textContent = text;
}

function showError(where, text) {
  $(where).textContent = text || "";
}

// -- the API --------------------------------------------------------------------------------

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

async function api(method, path, body, signal) {
  const headers = { Authorization: "Bearer " + state.key };
  const init = { method, headers, signal };
  if (body !== undefined) {
    headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const response = await fetch(path, init);
  if (response.status === 401) {
    logout("the server refused the key; enter it again");
    throw new ApiError(401, "wrong API key");
  }
  if (response.status === 429 && response.headers.get("Retry-After") && path === "/principal") {
    throw new ApiError(429, "too many failed sign-ins from here; try again in " +
      response.headers.get("Retry-After") + " s");
  }
  if (!response.ok) {
    let message = response.status + " " + response.statusText;
    try {
      const data = await response.json();
      if (data && data.error) message = data.error;
    } catch (err) {
      // not JSON: keep the status line
    }
    throw new ApiError(response.status, message);
  }
  return response;
}

// Reads a Server-Sent Events body; calls onEvent(name, data, id) per event.
async function readSse(response, onEvent) {
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += decoder.decode(value, { stream: true });
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let name = "message";
      let data = "";
      let id = null;
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const text = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "event") name = text;
        else if (field === "data") data += text;
        else if (field === "id") id = text;
      }
      if (data) onEvent(name, JSON.parse(data), id);
    }
  }
}

// -- the key --------------------------------------------------------------------------------

// Signs in with a key or a token: the server names its principal (GET /principal) before the
// page shows anything; the session list is then that principal's own.
async function signIn(key) {
  state.key = key;
  let who;
  try {
    who = await (await api("GET", "/principal")).json();
  } catch (err) {
    if (err.status !== 401) logout(err.message);  // a 401 has logged out already
    return;
  }
  sessionStorage.setItem(KEY_ITEM, key);
  showPrincipal(who);
  $("login").hidden = true;
  $("app").hidden = false;
  $("forget").hidden = false;
  setStatus("connected");
  if (state.linked) {
    showLinked();
    return;
  }
  loadSessions(false).catch((err) => showError("chat-error", err.message));
  reopenRemembered();
  loadServers().catch((err) => showError("servers-error", err.message));
}

// -- a terminal chat's conversation (the link `glove-mcp chat` prints) ------------------------
// The link's fragment names the session and the key (session=ID, key=SECRET): a fragment
// never reaches a server or a log. The key goes to this tab's sessionStorage and leaves the
// address bar (and the history) at once.
// The page then shows that conversation alone: no list, no other session; messages are typed
// in the terminal, questions of its turns answered there; a view's tool call asks here.
function takeLink() {
  const params = new URLSearchParams(location.hash.slice(1));
  const key = params.get("key");
  const session = params.get("session");
  if (key && session) {
    sessionStorage.setItem(KEY_ITEM, key);
    sessionStorage.setItem(LINKED_ITEM, session);
    rememberSession(session);
  } else if (params.has("key")) {
    rememberSession(null); // a broken link: its key goes from the address all the same
  }
  state.linked = sessionStorage.getItem(LINKED_ITEM);
}

function showLinked() {
  document.body.classList.add("linked");
  $("principal").textContent = "opened from glove-mcp chat";  // not a principal of a server
  document.querySelector("main > nav").hidden = true;
  $("text").placeholder = "Type your messages in the terminal: this page follows the chat";
  openSession(state.linked);
}

function showPrincipal(who) {
  const node = $("principal");
  if (!who) {
    node.hidden = true;
    node.textContent = "";
    return;
  }
  const admin = (who.scopes || []).includes("admin") ? " (admin: every session)" : "";
  node.textContent = "signed in as " + who.principal + admin;
  node.hidden = false;
}

function logout(reason) {
  stopFollowing();
  state.key = null;
  state.session = null;
  state.linked = null;
  sessionStorage.removeItem(KEY_ITEM);
  sessionStorage.removeItem(LINKED_ITEM);
  showPrincipal(null);
  $("app").hidden = true;
  $("forget").hidden = true;
  $("login").hidden = false;
  showError("login-error", reason || "");
  setStatus("not connected");
}

// -- sessions -------------------------------------------------------------------------------

async function loadSessions(more) {
  const after = more && state.nextPage ? "&after=" + encodeURIComponent(state.nextPage) : "";
  const response = await api("GET", "/sessions?limit=50" + after);
  const page = await response.json();
  const list = $("sessions");
  if (!more) list.replaceChildren();
  for (const session of page.sessions) {
    const item = el("li");
    item.append(sessionButton(session));
    list.append(item);
  }
  state.nextPage = page.next;
  $("more-sessions").hidden = !page.next;
  markOpen();
}

// One entry of the list: the session's title (its first message; the id until there is one)
// and when it last changed. The id and the counts are in the tooltip.
function sessionButton(session) {
  const button = el("button", "session");
  button.type = "button";
  button.dataset.id = session.id;
  if (session.title) state.titles[session.id] = session.title;
  const title = el("span", session.title ? "title" : "title untitled", session.title || session.id);
  const time = el("time", null, shortTime(session.updated_at));
  time.dateTime = session.updated_at;
  button.append(title, time);
  button.title = session.id + ": " + session.messages + " messages, started " +
    shortTime(session.created_at) + ", last " + shortTime(session.updated_at) +
    (session.owner ? ", of " + session.owner : "");
  button.addEventListener("click", () => openSession(session.id));
  return button;
}

// "14:05" today, "3 Mar, 14:05" before (the reader's own time zone and language).
function shortTime(iso) {
  const when = new Date(iso);
  if (Number.isNaN(when.getTime())) return String(iso || "");
  const time = when.toLocaleTimeString(undefined, { hour: "2-digit", minute: "2-digit" });
  if (when.toDateString() === new Date().toDateString()) return time;
  const day = when.toLocaleDateString(undefined, { day: "numeric", month: "short" });
  return day + ", " + time;
}

// The open session's entry is marked, and its title heads the chat.
function markOpen() {
  for (const button of $("sessions").querySelectorAll(".session")) {
    button.classList.toggle("open", button.dataset.id === state.session);
  }
  if (state.session) $("session-name").textContent = state.titles[state.session] || state.session;
}

// A reply changes the list (a first message gives a title, the time moves): read it again.
function refreshSessions() {
  loadSessions(false).catch(() => {
    // the list stays as it was; the next action reports a real problem
  });
}

// -- the open session survives a reload: its id is in the URL's fragment (never the key) ------

const HASH_PREFIX = "#session=";

function rememberSession(id) {
  const url = location.pathname + location.search + (id ? HASH_PREFIX + encodeURIComponent(id) : "");
  history.replaceState(null, "", url);
}

function rememberedSession() {
  if (!location.hash.startsWith(HASH_PREFIX)) return null;
  try {
    return decodeURIComponent(location.hash.slice(HASH_PREFIX.length)) || null;
  } catch (err) {
    return null; // a hand-edited fragment that is not percent-encoded
  }
}

function reopenRemembered() {
  const id = rememberedSession();
  if (id && id !== state.session) openSession(id);
}

async function newSession() {
  const response = await api("POST", "/sessions");
  const created = await response.json();
  await loadSessions(false);
  openSession(created.id);
}

async function deleteSession() {
  const id = state.session;
  if (!id || !window.confirm("Delete session " + id + " and its whole history?")) return;
  stopFollowing();
  try {
    await api("DELETE", "/sessions/" + encodeURIComponent(id));
  } catch (err) {
    showError("chat-error", err.message);
    follow();
    return;
  }
  state.session = null;
  rememberSession(null);
  $("session-name").textContent = "no session";
  $("delete-session").hidden = true;
  enableComposer(false);
  $("log").replaceChildren();
  $("live").replaceChildren();
  $("asks").replaceChildren();
  await loadSessions(false);
}

function openSession(id) {
  stopFollowing();
  state.session = id;
  state.cursor = 0;
  rememberSession(id);
  $("session-name").textContent = id;
  markOpen();
  $("delete-session").hidden = !!state.linked;
  $("log").replaceChildren();
  $("live").replaceChildren();
  $("asks").replaceChildren();
  showError("chat-error", "");
  enableComposer(!state.linked);
  follow();
}

function enableComposer(on) {
  $("text").disabled = !on;
  $("send").disabled = !on;
}

// -- following ------------------------------------------------------------------------------

function stopFollowing() {
  if (state.follow) state.follow.abort();
  state.follow = null;
}

async function follow() {
  const id = state.session;
  const control = new AbortController();
  state.follow = control;
  const path = "/sessions/" + encodeURIComponent(id) + "/events?after=" + state.cursor;
  try {
    const response = await api("GET", path, undefined, control.signal);
    setStatus("following " + id);
    let again = true;
    await readSse(response, (name, data, eventId) => {
      if (state.session !== id) return;
      if (name === "deleted") again = false;
      onItem(name, data, eventId);
    });
    if (!again) return;
  } catch (err) {
    if (control.signal.aborted) return;
    if (err instanceof ApiError && err.status < 500) {
      showError("chat-error", err.message);
      if (err.status === 404 && rememberedSession() === id) rememberSession(null);
      return;
    }
  }
  if (state.follow !== control) return;
  // The stream ended (network, server restart, too slow): resume after the last saved message.
  setStatus("reconnecting…");
  setTimeout(() => {
    if (state.follow === control) follow();
  }, 1000);
}

function onItem(name, data, eventId) {
  switch (name) {
    case "message":
      state.cursor = Number(eventId);
      $("live").replaceChildren();
      renderMessage(data.message);
      break;
    case "text_delta":
      liveText(data.agent).append(document.createTextNode(data.text));
      break;
    case "tool_use":
      where(data.agent).append(wrap(data.agent, toolCall(data.name, data.input, data.agent)));
      break;
    case "tool_result":
      where(data.agent).append(wrap(data.agent, toolResult(data.name, data, data.agent)));
      break;
    case "subagent_started":
      $("log").append(item(el("div", "note", "subagent " + data.name + " started")));
      break;
    case "subagent_finished":
      $("log").append(item(el("div", "note", "subagent " + data.name + " " + data.status)));
      break;
    case "slots":
      renderSlots(data.slots);
      break;
    case "ready":
      state.cursor = data.after;
      break;
    case "reconnect":
      state.cursor = data.after;
      break;
    case "deleted":
      setStatus("session deleted");
      enableComposer(false);
      break;
    default:
      break;
  }
  scrollDown();
}

function scrollDown() {
  const log = $("log");
  log.scrollTop = log.scrollHeight;
}

// The main agent's live items preview what is being saved: they wait in #live until the
// saved message replaces them. A subagent's work is never saved in this conversation, so it
// goes straight into the log.
function where(agent) {
  return agent === "main" ? $("live") : $("log");
}

function wrap(agent, node) {
  return agent === "main" ? node : item(node);
}

function liveText(agent) {
  const container = where(agent);
  const last = container.lastElementChild;
  const box0 = last && (agent === "main" ? last : last.firstElementChild);
  if (box0 && box0.dataset.agent === agent && box0.classList.contains("text")) {
    return box0.querySelector(".body");
  }
  const box = el("div", agent === "main" ? "bubble agent text" : "bubble subagent text");
  box.dataset.agent = agent;
  if (agent !== "main") box.append(el("div", "who", "subagent " + agent));
  const body = el("div", "body");
  box.append(body);
  container.append(wrap(agent, box));
  return body;
}

// -- messages -------------------------------------------------------------------------------

function renderMessage(message) {
  const log = $("log");
  if (message.tool_results) {
    for (const r of message.tool_results) {
      log.append(item(toolResult(r.name, r.result, "main")));
      const render = r.result.render_data;
      if (render && typeof render === "object" && render.mcp_app) log.append(item(viewBox(render.mcp_app)));
    }
    return;
  }
  if (message.framework_context === "event") {
    log.append(item(eventBubble(message.text)));
    return;
  }
  if (message.framework_context) {
    const box = el("div", "bubble event");
    box.append(el("div", "who", message.framework_context));
    box.append(el("div", "body", message.text));
    log.append(item(box));
    return;
  }
  if (message.text) {
    const box = el("div", message.sender === "user" ? "bubble user" : "bubble agent");
    box.append(el("div", "body", message.text));
    log.append(item(box));
  }
  for (const call of message.tool_calls || []) log.append(item(toolCall(call.name, call.input, "main")));
}

// Outside events arrive as the framework wrote them for the model: <event source= kind=>…
// Shown as source, kind and content (read with regular expressions, written as text).
function eventBubble(text) {
  const box = el("div", "bubble event");
  box.append(el("div", "who", "outside event"));
  const events = [...text.matchAll(/<event ([^>]*)>\n?([\s\S]*?)\n?<\/event>/g)];
  if (!events.length) {
    box.append(el("div", "body", text));
    return box;
  }
  for (const [, attributes, content] of events) {
    const attrs = Object.fromEntries([...attributes.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    box.append(el("div", "meta", [attrs.source, attrs.kind, attrs.received_at].filter(Boolean).join(" · ")));
    box.append(el("div", "body", content));
  }
  return box;
}

function item(child) {
  const li = el("li");
  li.append(child);
  return li;
}

function toolCall(name, input, agent) {
  const box = el("div", "tool call");
  box.append(el("div", "who", (agent && agent !== "main" ? agent + " → " : "") + "tool call " + name));
  box.append(el("pre", "body", pretty(input)));
  return box;
}

function toolResult(name, result, agent) {
  const box = el("div", "tool result " + (result.status || ""));
  const who = (agent && agent !== "main" ? agent + " → " : "") + "result of " + name + " (" + result.status + ")";
  box.append(el("div", "who", who));
  const shown = result.status === "success" ? result.data : result.message || result.data;
  box.append(el("pre", "body", pretty(shown)));
  return box;
}

// -- what the agent asks a person -------------------------------------------------------------

function renderSlots(slots) {
  const asks = $("asks");
  asks.replaceChildren();
  for (const slot of slots) {
    const input = slot.input || {};
    if (state.linked && !(slot.renderer === "permission_request" && input.requested_by)) {
      asks.append(terminalCard(slot));
      continue;
    }
    if (slot.renderer === "permission_request") asks.append(permissionCard(slot));
    else if (slot.renderer === "mcp_elicitation") asks.append(elicitationCard(slot));
    else if (slot.renderer === "mcp_picker") asks.append(pickerCard(slot));
    else if (slot.renderer === "mcp_sampling") asks.append(samplingCard(slot));
    else asks.append(genericCard(slot));
  }
}

async function answer(slot, body, card) {
  const path = "/sessions/" + encodeURIComponent(state.session) + "/slots/" + encodeURIComponent(slot.id);
  for (const button of card.querySelectorAll("button")) button.disabled = true;
  try {
    await api("POST", path, body);
    card.remove();
  } catch (err) {
    card.querySelector(".error").textContent = err.message;
    for (const button of card.querySelectorAll("button")) button.disabled = false;
  }
}

function card(title, slot) {
  const box = el("div", "ask");
  box.dataset.slot = slot.id;
  box.dataset.renderer = slot.renderer;
  box.append(el("h3", null, title));
  return box;
}

function button(label, onClick) {
  const b = el("button", null, label);
  b.type = "button";
  b.addEventListener("click", onClick);
  return b;
}

function permissionCard(slot) {
  const input = slot.input || {};
  const box = card("Allow " + input.tool + "?", slot);
  if (input.requested_by) box.append(el("p", "requested-by", "asked by " + input.requested_by + ", not the agent"));
  if (input.description) box.append(el("p", null, input.description));
  box.append(el("pre", null, pretty(input.input)));
  const row = el("div", "buttons");
  row.append(button("Allow", () => answer(slot, { value: true }, box)));
  row.append(button("Deny", () => answer(slot, { value: false }, box)));
  box.append(row, el("p", "error"));
  return box;
}

function elicitationCard(slot) {
  const request = slot.input || {};
  const box = card(request.server + " asks", slot);
  box.append(el("p", null, request.message));
  if (request.error) box.append(el("p", "error", request.error));
  const inputs = {};
  if (request.mode === "url") {
    // The host on its own: what the link really opens (the server's text is cleaned of
    // bidirectional and other format characters before it gets here).
    box.append(el("p", "host", "host: " + (request.host || "?")));
    box.append(el("p", "url", request.url));
  } else {
    const schema = request.requested_schema || {};
    const required = new Set(schema.required || []);
    for (const [name, field] of Object.entries(schema.properties || {})) {
      const label = el("label", null, (field.title || name) + (required.has(name) ? " *" : ""));
      let input;
      if (Array.isArray(field.enum)) {
        input = el("select");
        for (const choice of field.enum) {
          const option = el("option", null, choice);
          option.value = choice;
          input.append(option);
        }
      } else if (field.type === "boolean") {
        input = el("input");
        input.type = "checkbox";
        input.checked = field.default === true;
      } else {
        input = el("input");
        input.type = field.type === "number" || field.type === "integer" ? "number" : "text";
        if (field.default !== undefined) input.value = String(field.default);
      }
      input.name = name;
      label.append(input);
      if (field.description) label.append(el("small", null, field.description));
      box.append(label);
      inputs[name] = { input, field };
    }
  }
  const content = () => {
    const out = {};
    for (const [name, { input, field }] of Object.entries(inputs)) {
      if (field.type === "boolean") out[name] = input.checked;
      else if (input.value === "") continue;
      else if (field.type === "integer") out[name] = parseInt(input.value, 10);
      else if (field.type === "number") out[name] = Number(input.value);
      else out[name] = input.value;
    }
    return out;
  };
  const row = el("div", "buttons");
  row.append(button("Accept", () => answer(slot, { value: { action: "accept", content: content() } }, box)));
  row.append(button("Decline", () => answer(slot, { value: { action: "decline" } }, box)));
  row.append(button("Cancel", () => answer(slot, { value: { action: "cancel" } }, box)));
  box.append(row, el("p", "error"));
  return box;
}

function pickerCard(slot) {
  const input = slot.input || {};
  const box = card(input.question || "Which one?", slot);
  const row = el("div", "buttons");
  for (const option of input.options || []) {
    const choice = button(option.name || option.id, () => answer(slot, { value: option.id }, box));
    choice.title = option.description || "";
    row.append(choice);
  }
  row.append(button("None of them", () => answer(slot, { value: "" }, box)));
  box.append(row, el("p", "error"));
  return box;
}

function samplingCard(slot) {
  const input = slot.input || {};
  const box = card(input.server + " asks the model to answer", slot);
  if (input.system_prompt) box.append(el("p", null, input.system_prompt));
  box.append(el("pre", null, pretty(input.messages)));
  const row = el("div", "buttons");
  row.append(button("Allow", () => answer(slot, { value: true }, box)));
  row.append(button("Deny", () => answer(slot, { value: false }, box)));
  box.append(row, el("p", "error"));
  return box;
}

// A question of a turn the terminal started: answered there, where it is asked.
function terminalCard(slot) {
  const input = slot.input || {};
  const what = slot.renderer === "permission_request" ? "Allow " + input.tool + "?" : slot.renderer;
  const box = card(what, slot);
  box.classList.add("terminal");
  box.append(el("p", "hint", "asked in the terminal: answer it there"));
  return box;
}

function genericCard(slot) {
  const box = card(slot.renderer, slot);
  box.append(el("pre", null, pretty(slot.input)));
  const row = el("div", "buttons");
  row.append(button("Reject", () => answer(slot, { reject: "rejected on the web page" }, box)));
  box.append(row, el("p", "error"));
  return box;
}

// -- sending --------------------------------------------------------------------------------

async function send(text) {
  const id = state.session;
  showError("chat-error", "");
  const response = await api("POST", "/sessions/" + encodeURIComponent(id) + "/messages", { text });
  // The follow stream shows the reply as it comes; this stream only reports how it ended.
  await readSse(response, (name, data) => {
    if (name === "error") showError("chat-error", data.error);
  });
  refreshSessions();
}

// -- servers (GET/POST/DELETE /connections) --------------------------------------------------

const SERVER_STATES = { connected: "connected", needs_login: "not connected", open: "no login needed" };

// The principal's servers; the panel stays hidden on a server without /connections.
async function loadServers() {
  let response;
  try {
    response = await api("GET", "/connections");
  } catch (err) {
    if (err.status === 404) return [];
    throw err;
  }
  const connections = (await response.json()).connections;
  const list = $("servers");
  list.replaceChildren(...connections.map(serverRow));
  $("servers-panel").hidden = connections.length === 0;
  return connections;
}

function serverRow(connection) {
  const row = el("li", connection.state);
  row.dataset.server = connection.id;
  row.append(el("span", "server-name", connection.name));
  if (connection.state === "connected") {
    row.append(button("Disconnect", () => disconnectServer(connection.id).catch(serversError)));
  } else if (connection.state === "needs_login") {
    row.append(button("Connect", () => connectServer(connection.id).catch(serversError)));
  } else {
    row.append(el("span"));
  }
  let text = SERVER_STATES[connection.state] || connection.state;
  if (connection.detail) text += " (" + connection.detail + ")";
  row.append(el("span", "server-state", text));
  return row;
}

// Opens the authorization page in a new tab, then watches until the callback stored the
// tokens (the tab is opened first, while the click still counts, so no popup blocker stops it).
async function connectServer(id) {
  showError("servers-error", "");
  const tab = window.open("", "_blank");
  try {
    const response = await api("POST", "/connections/" + encodeURIComponent(id));
    const url = (await response.json()).authorize_url;
    if (tab) {
      tab.opener = null;
      tab.location.href = url;
    } else {
      window.location.assign(url);
    }
  } catch (err) {
    if (tab) tab.close();
    // 409: the server answered without a login (it is open); the panel says so.
    if (err.status !== 409) showError("servers-error", err.message);
    await loadServers();
    return;
  }
  await watchConnection(id);
}

function serversError(err) {
  showError("servers-error", err.message);
}

async function watchConnection(id) {
  const deadline = Date.now() + 10 * 60 * 1000; // a flow expires after ten minutes
  while (state.key && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const connections = await loadServers();
    const found = connections.find((c) => c.id === id);
    if (!found || found.state !== "needs_login") return;
  }
}

async function disconnectServer(id) {
  showError("servers-error", "");
  try {
    await api("DELETE", "/connections/" + encodeURIComponent(id));
  } catch (err) {
    showError("servers-error", err.message);
  }
  await loadServers();
}

// -- start ----------------------------------------------------------------------------------

function start() {
  $("key-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const key = $("key").value;
    $("key").value = "";
    signIn(key.trim());
  });
  $("forget").addEventListener("click", () => logout(""));
  $("new-session").addEventListener("click", () => newSession().catch((err) => showError("chat-error", err.message)));
  $("more-sessions").addEventListener("click", () => loadSessions(true).catch((err) => showError("chat-error", err.message)));
  $("delete-session").addEventListener("click", () => deleteSession());
  $("resume-form").addEventListener("submit", (event) => {
    event.preventDefault();
    const id = $("resume-id").value.trim();
    if (id) openSession(id);
  });
  $("composer").addEventListener("submit", (event) => {
    event.preventDefault();
    const text = $("text").value;
    if (!text.trim() || !state.session) return;
    $("text").value = "";
    send(text).catch((err) => showError("chat-error", err.message));
  });
  $("text").addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      $("composer").requestSubmit();
    }
  });
  takeLink();
  const saved = sessionStorage.getItem(KEY_ITEM);
  if (saved) signIn(saved);
}

document.addEventListener("DOMContentLoaded", start);

// -- views (MCP Apps) -------------------------------------------------------------------------
// A view is a server's HTML: it runs in a frame sandboxed to scripts only (an opaque origin:
// no access to this page, its storage or its key), loaded from /web/app-frame under a policy
// of the origins the view declared and nothing wider. It talks to this page over the
// extension's postMessage JSON-RPC; messages are taken only from the frames this page made.
const views = [];

function viewBox(app) {
  const box = el("div", "view");
  box.append(el("div", "who", "view of " + app.server + " — " + app.uri));
  const frame = document.createElement("iframe");
  frame.setAttribute("sandbox", "allow-scripts");
  frame.title = "view of " + app.server;
  frame.referrerPolicy = "no-referrer";
  const csp = app.csp || {};
  const query = new URLSearchParams();
  const keys = { c: "connectDomains", r: "resourceDomains", f: "frameDomains", b: "baseUriDomains" };
  for (const [short, key] of Object.entries(keys)) {
    if (Array.isArray(csp[key]) && csp[key].length) query.set(short, csp[key].join(","));
  }
  frame.src = "/web/app-frame" + (query.toString() ? "?" + query : "");
  box.append(frame, el("p", "error"));
  views.push({ app, frame, box, session: state.session, initialized: false });
  return box;
}

function viewOf(source) {
  for (let i = views.length - 1; i >= 0; i--) {
    const view = views[i];
    if (!view.frame.isConnected) views.splice(i, 1);
    else if (source && view.frame.contentWindow === source) return view;
  }
  return null;
}

function toView(view, message) {
  view.frame.contentWindow.postMessage(message, "*");
}

function viewReply(view, id, result) {
  toView(view, { jsonrpc: "2.0", id, result });
}

function viewError(view, id, code, message) {
  toView(view, { jsonrpc: "2.0", id, error: { code, message } });
}

window.addEventListener("message", (event) => {
  const view = viewOf(event.source);
  if (!view) return;
  const message = event.data;
  if (message && message.glove === "frame-ready") {
    toView(view, { glove: "view", html: view.app.html });
    return;
  }
  if (!message || message.jsonrpc !== "2.0" || typeof message.method !== "string") return;
  onViewMessage(view, message);
});

function onViewMessage(view, message) {
  const params = message.params || {};
  const isRequest = message.id !== undefined && message.id !== null;
  switch (message.method) {
    case "ui/initialize":
      viewReply(view, message.id, {
        protocolVersion: "2026-01-26",
        hostInfo: { name: "glove-web", version: "1" },
        hostCapabilities: { serverTools: {}, logging: {} },
        hostContext: {
          theme: "light", displayMode: "inline", availableDisplayModes: ["inline"],
          platform: "web", containerDimensions: { maxHeight: 600 },
        },
      });
      return;
    case "ui/notifications/initialized":
      if (view.initialized) return;
      view.initialized = true;
      toView(view, { jsonrpc: "2.0", method: "ui/notifications/tool-input", params: { arguments: view.app.tool_input || {} } });
      toView(view, { jsonrpc: "2.0", method: "ui/notifications/tool-result", params: view.app.tool_result || { content: [] } });
      return;
    case "ui/notifications/size-changed": {
      const height = Number(params.height);
      if (Number.isFinite(height) && height > 0) view.frame.style.height = Math.min(Math.ceil(height), 600) + "px";
      return;
    }
    case "tools/call":
      viewToolCall(view, message.id, params);
      return;
    case "ui/message":
      viewMessage(view, message.id, params);
      return;
    case "ping":
      viewReply(view, message.id, {});
      return;
    case "notifications/message":
      return;
    default:
      if (isRequest) viewError(view, message.id, -32601, "this host does not serve " + message.method);
  }
}

// A view calls the tools of its own server that it may call (visibility "app"), each through
// the server's app-calls route: the person answers the permission card first.
async function viewToolCall(view, id, params) {
  const name = params.name;
  const tools = view.app.app_tools || {};
  if (typeof name !== "string" || !Object.prototype.hasOwnProperty.call(tools, name)) {
    viewError(view, id, -32602, "this view may not call " + String(name));
    return;
  }
  const args = params.arguments && typeof params.arguments === "object" ? params.arguments : {};
  try {
    const path = "/sessions/" + encodeURIComponent(view.session) + "/app-calls";
    const response = await api("POST", path, { tool: tools[name], arguments: args, server: view.app.server });
    viewReply(view, id, callResult(await response.json()));
  } catch (err) {
    viewError(view, id, -32000, err.message);
  }
}

function callResult(result) {
  const render = result.render_data;
  const failed = result.status !== "success";
  if (render && typeof render === "object" && !Array.isArray(render)) {
    const answer = { content: render.content || [], isError: failed || !!render.is_error };
    if (render.structured_content !== null && render.structured_content !== undefined) {
      answer.structuredContent = render.structured_content;
    }
    if (failed && !answer.content.length) answer.content = [{ type: "text", text: result.message || "failed" }];
    return answer;
  }
  const text = failed ? result.message || "failed" : typeof result.data === "string" ? result.data : JSON.stringify(result.data);
  return { content: [{ type: "text", text }], isError: failed };
}

// A view's message to the agent waits in the composer: the person sends it, or not.
function viewMessage(view, id, params) {
  const content = params.content;
  const parts = Array.isArray(content) ? content : [content];
  const text = parts.filter((p) => p && p.type === "text" && typeof p.text === "string").map((p) => p.text).join("\n");
  if (!text) {
    viewError(view, id, -32602, "ui/message takes text content");
    return;
  }
  if (state.linked) {
    // Messages are typed in the terminal: the view's words are shown for the person to copy.
    view.box.querySelector(".error").textContent = "the view suggests a message; type it in the terminal to send it: " + text;
    viewError(view, id, -32000, "this page follows a terminal chat: the person sends messages there");
    return;
  }
  $("text").value = text;
  $("text").focus();
  viewReply(view, id, {});
}
