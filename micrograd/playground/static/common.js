// Shared by every playground page: this tab's session id, a fetch helper, error display.
// Each tab makes its own session id and keeps it in sessionStorage (a reload keeps it, a new tab
// gets a new one); the server keeps one state per id.
"use strict";

const SESSION_KEY = "micrograd-session";

function sessionId() {
  let id = sessionStorage.getItem(SESSION_KEY);
  if (!id || !/^[A-Za-z0-9_-]{8,64}$/.test(id)) {
    const bytes = new Uint8Array(16);
    crypto.getRandomValues(bytes);
    id = Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    sessionStorage.setItem(SESSION_KEY, id);
  }
  return id;
}

// Show `message` in the element with id `errorId` (role=alert), or clear it when message is "".
function showError(errorId, message) {
  const el = document.getElementById(errorId);
  if (!el) return;
  el.textContent = message || "";
  el.hidden = !message;
}

// A promise's failure handler: the failure's one line in `errorId`. `api` shows the server's
// answers itself; this also catches what our own code throws after it (a drawing bug).
function showIn(errorId) {
  return (err) => showError(errorId, err.message);
}

// POST `body` as JSON to `path` (GET when body is undefined); resolve to the JSON answer.
// On an error answer, show its one-line message in `errorId` (if given) and reject.
async function api(path, body, errorId) {
  const init = { method: body === undefined ? "GET" : "POST", headers: { "X-Session": sessionId() } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  let answer;
  try {
    const response = await fetch(path, init);
    const text = await response.text();
    try {
      answer = JSON.parse(text);
    } catch (err) { // not JSON (a proxy's page, a crash): say what came back, in one line
      throw new Error(`HTTP ${response.status}: the server's answer is not JSON (${text.slice(0, 80)})`);
    }
    if (!response.ok) throw new Error(answer.error || `HTTP ${response.status}`);
  } catch (err) {
    const message = err instanceof TypeError ? "the playground server is not answering (is it still running?)" : err.message;
    if (errorId) showError(errorId, message);
    throw new Error(message);
  }
  if (errorId) showError(errorId, "");
  return answer;
}

// An EventSource for `path` carrying this tab's session (EventSource cannot set headers).
function eventSource(path) {
  const sep = path.includes("?") ? "&" : "?";
  return new EventSource(`${path}${sep}session=${encodeURIComponent(sessionId())}`);
}

// A number as micrograd shows it: micrograd/formatting.py's format_number, mirrored exactly
// (tests/test_formatting.py runs both on the same numbers). 4 decimals as the lecture prints, never
// fewer than 4 significant digits, exponent form below 1e-4 and from 1e12 up; 'nan'/'inf' strings
// from the server as is.
function fmt(x) {
  if (typeof x === "string") return x;
  if (Number.isNaN(x)) return "nan";
  if (!Number.isFinite(x)) return x > 0 ? "inf" : "-inf";
  const size = Math.abs(x);
  if (size === 0) return Object.is(x, -0) ? "-0.0000" : "0.0000";
  if (size >= 1e12 || size < 1e-4) return x.toExponential(4);
  return x.toFixed(size >= 0.1 ? 4 : size >= 0.01 ? 5 : size >= 0.001 ? 6 : 7);
}
