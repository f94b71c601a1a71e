// The JavaScript linter's rules (ESLint, pinned in package.json; tests/test_lint.py runs it over
// every static JS file of the playground): ESLint's recommended set, with each file's globals.
import js from "@eslint/js";
import globals from "globals";

export default [
  { ignores: ["node_modules/", ".venv/", "build/"] },
  js.configs.recommended,
  {
    files: ["micrograd/**/*.js"],
    languageOptions: { ecmaVersion: 2022, sourceType: "module", globals: { ...globals.browser } },
    linterOptions: { reportUnusedDisableDirectives: "error" },
  },
  { // the static site's Web Worker
    files: ["micrograd/playground/static/worker.js"],
    languageOptions: { globals: { ...globals.worker } },
  },
];
