// ESLint (flat config): typescript-eslint's strict, type-checked rules over the extension host
// (src), the webview (webview), the code they share (shared), the unit tests (test) and the
// code-server e2e driver (e2e).
//   npx eslint .       (run by tests/extension/test_unit.py)
import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "dist/**",
      "node_modules/**",
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      // Numbers in messages ("3 files", "exit code 2") read as they should.
      "@typescript-eslint/restrict-template-expressions": ["error", { allowNumber: true }],
      // `(a) => this.dispatch(a)` as a callback is this code's idiom, not a confusing void use.
      "@typescript-eslint/no-confusing-void-expression": ["error", { ignoreArrowShorthand: true }],
      // vscode.d.ts declares Disposable as a class, yet its API returns and takes structural
      // disposables (EventEmitter, OutputChannel, subscriptions): every use would be flagged.
      "@typescript-eslint/no-unsafe-class-instance-assignment": "off",
      // A leading underscore marks a parameter kept for the signature (fakes of the editor API).
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
    },
  },
  {
    files: ["test/**/*.ts"],
    rules: {
      // A test that dereferences a missing element fails, which is what it should do.
      "@typescript-eslint/no-non-null-assertion": "off",
      // Test doubles are async like the API they stand in for, awaiting nothing.
      "@typescript-eslint/require-await": "off",
    },
  },
  {
    // Build scripts and this file: plain JavaScript for Node, not in the TypeScript project.
    files: ["**/*.mjs"],
    extends: [tseslint.configs.disableTypeChecked],
    languageOptions: { globals: { process: "readonly" } },
  },
);
