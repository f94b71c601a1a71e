// The page's address as its state, for both pages, in one place. The Train view keeps its
// settings in the query string (?dataset=moons&hidden=8,8: reload or share the link, the same
// run); the explorer reads ?layout= and ?from=train there, and keeps its program in the fragment
// (#program=..., as TensorFlow Playground keeps its state: the server never sees it). `page` is
// false in a notebook widget, which has no address of its own: everything reads empty, nothing
// is written.

// The query string's settings (empty in a widget).
export function readQuery(page) {
  return new URLSearchParams(page ? location.search : "");
}

// The query string made `q`, the fragment dropped (a new run's link).
export function writeQuery(page, q) {
  if (page) history.replaceState(null, "", `${location.pathname}?${q}`);
}

// The fragment's keys (empty in a widget).
export function readHash(page) {
  return new URLSearchParams(page ? location.hash.slice(1) : "");
}

// The fragment's `key` set to `value` (deleted for null), its other keys and the query string
// kept; the history is not touched when nothing changes.
export function writeHashKey(page, key, value) {
  if (!page) return;
  const q = readHash(page);
  if (value === null) q.delete(key);
  else q.set(key, value);
  const hash = q.toString();
  if (hash === readHash(page).toString()) return;
  history.replaceState(history.state, "", `${location.pathname}${location.search}${hash ? `#${hash}` : ""}`);
}
