// The course's kernel (JupyterLite's Pyodide kernel, in its Web Worker) starts Python through
// this module, shipped as course/kernel.js: the app's jupyter-lite.json names it as the kernel's
// Pyodide (course_app.py). It starts the site's Pyodide (../pyodide/, the one copy the site and
// its course share) and restores Python from the memory the build saved (course_memory.py) with
// the kernel's packages unpacked and the kernel, IPython and micrograd.check imported: the work a
// fresh start repeats on every visit. Where that cannot be done (a build without Node.js, no
// DecompressionStream, a restore that fails) Python starts afresh, as JupyterLite's kernel does.
import { loadPyodide as startPyodide } from "../pyodide/pyodide.mjs";
import createPyodideModule from "../pyodide/pyodide.asm.mjs";

// `memoryURL` and `filesURL` are ours (the kernel made them absolute, as it does every option
// whose name ends in URL); the rest are the kernel's options for loadPyodide, passed on.
export async function loadPyodide({ memoryURL, filesURL, packages = [], ...options }) {
  const indexURL = new URL("../pyodide/", import.meta.url).href;
  if (!memoryURL) return startPyodide({ ...options, indexURL, packages });  // the build saved none
  let why = "this browser cannot unpack it";
  if (typeof DecompressionStream === "function") {
    try {
      return await restore({ ...options, indexURL }, memoryURL, filesURL);
    } catch (err) {
      why = String(err && err.message ? err.message : err).split("\n")[0];
    }
  }
  console.warn(`micrograd: the course's Python starts afresh, its saved start could not be used: ${why}`);
  return startPyodide({ ...options, indexURL, packages });
}

async function gunzipped(url) {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`${url} could not be loaded (HTTP ${response.status})`);
  const unpacked = response.body.pipeThrough(new DecompressionStream("gzip"));
  return new Uint8Array(await new Response(unpacked).arrayBuffer());
}

async function restore(options, memoryURL, filesURL) {
  const [memory, files] = await Promise.all([gunzipped(memoryURL), gunzipped(filesURL)]);
  let pyodide = null;
  // The JavaScript objects the saved Python holds (the build named each by where it lives:
  // pyodide.loadPackage, pyodide._api.public_api, ...): stand-ins that reach the restored
  // Pyodide's own, which exists only once loadPyodide returns; nothing calls them before.
  const named = ([kind, root, key]) => {
    const target = () => {
      if (pyodide === null) throw new Error(`pyodide's ${key} was used before Python was restored`);
      return { pyodide, api: pyodide._api, module: pyodide._module }[root][key];
    };
    const traps = {
      apply: (_, self, args) => Reflect.apply(target(), self, args),
      get: (_, name) => {
        const value = Reflect.get(target(), name);
        return typeof value === "function" ? value.bind(target()) : value;
      },
      has: (_, name) => Reflect.has(target(), name),
    };
    return new Proxy(kind === "function" ? function () {} : {}, traps);
  };
  // Pyodide restores the memory into the module's as it was made, which is smaller than the
  // saved one (this Pyodide does not grow it first): grown here, once the module exists.
  const grown = async (settings) => {
    const module = await createPyodideModule(settings);
    module.growMemory(memory.length);
    return module;
  };
  pyodide = await startPyodide({
    ...options,
    _loadSnapshot: memory,
    _snapshotDeserializer: named,
    createPyodideModule: grown,
  });
  // site-packages' files, where the build unpacked them (the memory holds what was imported, not
  // the file system): course_memory.py's archive, a length, a JSON index of that length, bytes
  const { FS } = pyodide;
  const root = pyodide._api.sitepackages;
  const length = new DataView(files.buffer, files.byteOffset, 4).getUint32(0, true);
  const index = JSON.parse(new TextDecoder().decode(files.subarray(4, 4 + length)));
  let at = 4 + length;
  for (const [rel, size] of index) {
    const path = `${root}/${rel}`;
    FS.mkdirTree(path.slice(0, path.lastIndexOf("/")));
    FS.writeFile(path, files.subarray(at, at + size));
    at += size;
  }
  if (at !== files.length) throw new Error(`${filesURL} is not the archive its index describes`);
  pyodide.runPython("import importlib; importlib.invalidate_caches()");  // the new directories
  // and the lock's packages known as loaded, as loadPackage leaves them: else the kernel, which
  // loads the packages a cell imports before running it, would unpack them again
  await pyodide._api.packageIndexReady;
  for (const name of Object.keys(pyodide._api.lockfile_packages)) {
    pyodide.loadedPackages[name] ??= pyodide._api.packageManager.defaultChannel;
  }
  return pyodide;
}
