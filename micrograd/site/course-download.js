// "Download my work", in the course in the browser (the JupyterLite app `micrograd site` writes
// in course/, as course/download.js): the learner's notebooks, and the files they wrote beside
// them, in one zip archive named for them, to hand in (`micrograd grade` takes it in a class
// folder). The start page and each page of the app load this module; a link to
// "#download-my-work" (the start page's, each notebook's save line) runs it.
//
// The work is where JupyterLite keeps it: this browser's IndexedDB, the database JupyterLite
// names after the app's folder, store "files" (one record per file, a notebook's JSON in its
// `content`). A course notebook never saved there is the course's own copy, files/NAME.

const LINK = "#download-my-work";
const NAME_KEY = "micrograd-course-learner"; // the learner's name, asked once
const COURSE = new URL(".", import.meta.url); // the app's folder (this file is in it)

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

function crc32(bytes) {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

// A zip archive (stored, names in UTF-8) of [name, Uint8Array] entries, as a Blob.
export function zipArchive(entries, when = new Date()) {
  const encoder = new TextEncoder();
  const time = (when.getHours() << 11) | (when.getMinutes() << 5) | (when.getSeconds() >> 1);
  const date = ((when.getFullYear() - 1980) << 9) | ((when.getMonth() + 1) << 5) | when.getDate();
  const local = [];
  const central = [];
  let offset = 0;
  for (const [name, data] of entries) {
    const path = encoder.encode(name);
    const crc = crc32(data);
    const head = new DataView(new ArrayBuffer(30));
    head.setUint32(0, 0x04034b50, true);
    head.setUint16(4, 20, true); // version needed: 2.0
    head.setUint16(6, 0x0800, true); // the name is UTF-8
    head.setUint16(10, time, true);
    head.setUint16(12, date, true);
    head.setUint32(14, crc, true);
    head.setUint32(18, data.length, true);
    head.setUint32(22, data.length, true);
    head.setUint16(26, path.length, true);
    local.push(new Uint8Array(head.buffer), path, data);
    const entry = new DataView(new ArrayBuffer(46));
    entry.setUint32(0, 0x02014b50, true);
    entry.setUint16(4, 20, true);
    entry.setUint16(6, 20, true);
    entry.setUint16(8, 0x0800, true);
    entry.setUint16(12, time, true);
    entry.setUint16(14, date, true);
    entry.setUint32(16, crc, true);
    entry.setUint32(20, data.length, true);
    entry.setUint32(24, data.length, true);
    entry.setUint16(28, path.length, true);
    entry.setUint32(42, offset, true);
    central.push(new Uint8Array(entry.buffer), path);
    offset += 30 + path.length + data.length;
  }
  const size = central.reduce((sum, part) => sum + part.length, 0);
  const end = new DataView(new ArrayBuffer(22));
  end.setUint32(0, 0x06054b50, true);
  end.setUint16(8, entries.length, true);
  end.setUint16(10, entries.length, true);
  end.setUint32(12, size, true);
  end.setUint32(16, offset, true);
  return new Blob([...local, ...central, new Uint8Array(end.buffer)], { type: "application/zip" });
}

function request(req) {
  return new Promise((resolve, reject) => {
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

// Every record of JupyterLite's "files" store for this app ([] when nothing was ever saved).
async function savedFiles() {
  const name = `JupyterLite Storage - ${COURSE.pathname}`;
  if (indexedDB.databases && !(await indexedDB.databases()).some((d) => d.name === name)) {
    return [];
  }
  const db = await request(indexedDB.open(name));
  try {
    if (!db.objectStoreNames.contains("files")) return [];
    return await request(db.transaction("files", "readonly").objectStore("files").getAll());
  } finally {
    db.close();
  }
}

function bytesOf(record) {
  if (record.type === "notebook") {
    return new TextEncoder().encode(JSON.stringify(record.content, null, 1) + "\n");
  }
  if (record.format === "base64") {
    return Uint8Array.from(atob(record.content), (ch) => ch.charCodeAt(0));
  }
  return new TextEncoder().encode(String(record.content ?? ""));
}

// The learner's work: path -> bytes (their saved files, and the course's notebooks untouched).
export async function work() {
  if (window.jupyterapp && window.jupyterapp.commands.hasCommand("docmanager:save-all")) {
    await window.jupyterapp.commands.execute("docmanager:save-all"); // the last seconds' too
  }
  const files = new Map();
  for (const record of await savedFiles()) {
    if (record.type === "notebook" || record.type === "file") files.set(record.path, bytesOf(record));
  }
  const listing = await fetch(new URL("api/contents/all.json", COURSE));
  if (!listing.ok) throw new Error(`the course's list of notebooks: HTTP ${listing.status}`);
  for (const item of (await listing.json()).content) {
    if (item.type !== "notebook" || files.has(item.path)) continue;
    const got = await fetch(new URL(`files/${encodeURI(item.path)}`, COURSE));
    if (!got.ok) throw new Error(`${item.path}: HTTP ${got.status}`);
    files.set(item.path, new Uint8Array(await got.arrayBuffer()));
  }
  return files;
}

// The learner's name as a file name: letters, digits, . _ - (the rest one "-").
export function fileName(name) {
  const safe = name.normalize("NFKC").replace(/[^\p{L}\p{N}._-]+/gu, "-");
  return safe.replace(/^[-.]+|-+$/g, "") || "learner";
}

function learner() {
  let name = localStorage.getItem(NAME_KEY);
  if (!name) {
    const asked = window.prompt(
      "Your name, for the archive of your work (asked once, kept in this browser):",
    );
    if (!asked || !asked.trim()) return null;
    name = asked.trim();
    localStorage.setItem(NAME_KEY, name);
  }
  return fileName(name);
}

export async function downloadMyWork() {
  const who = learner();
  if (!who) return;
  const files = await work();
  const entries = [...files].sort(([a], [b]) => (a < b ? -1 : 1));
  const blob = zipArchive(entries.map(([path, data]) => [`${who}/${path}`, data]));
  const link = document.createElement("a");
  link.href = URL.createObjectURL(blob);
  link.download = `${who}.zip`;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(link.href), 60_000);
}

document.addEventListener(
  "click",
  (event) => {
    const link = event.target instanceof Element && event.target.closest(`a[href$="${LINK}"]`);
    if (!link) return;
    event.preventDefault();
    event.stopPropagation();
    downloadMyWork().catch((err) => {
      console.error(err);
      window.alert(`Download my work failed: ${err.message}`);
    });
  },
  true,
);
