// ESLint (flat config) for the views' JavaScript; tests/test_js_lint.py runs it and fails on
// any error or warning. The modules are ES modules that tfprof_widgets/views/_bundle.py joins
// into the scripts a page gets; the vendored plotly.js bundle is not ours to lint.
import js from "@eslint/js";
import globals from "globals";

export default [
  // .venv: the test command installs into a venv inside the checkout (its packages ship JS).
  {
    ignores: [
      "node_modules/**",
      ".venv/**",
      "**/plotly-basic.min.js",
      "build/**",
      "benchmarks/**",
      "docs/**",
    ],
  },
  js.configs.recommended,
  {
    files: ["tfprof_widgets/views/static/**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "module",
      globals: {
        ...globals.browser,
        // VS Code's notebook renderer API, tested for with typeof.
        acquireVsCodeApi: "readonly",
      },
    },
    linterOptions: { reportUnusedDisableDirectives: "error" },
  },
];
