// Bundles the extension host code (dist/extension.js, CommonJS for Node) and the chat
// webview (dist/webview.js + dist/webview.css, an IIFE for the browser).
//   node esbuild.mjs [--watch] [--dev]
import * as esbuild from "esbuild";

const dev = process.argv.includes("--dev");
const watch = process.argv.includes("--watch");

const common = {
  bundle: true,
  sourcemap: dev ? "inline" : false,
  minify: !dev,
  logLevel: "warning",
  legalComments: "none",
};

const builds = [
  {
    ...common,
    entryPoints: ["src/extension.ts"],
    outfile: "dist/extension.js",
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["vscode"],
  },
  {
    ...common,
    entryPoints: { webview: "webview/main.ts" },
    outdir: "dist",
    platform: "browser",
    format: "iife",
    target: "es2022",
    loader: { ".css": "css" },
  },
];

if (watch) {
  for (const b of builds) (await esbuild.context(b)).watch();
} else {
  await Promise.all(builds.map((b) => esbuild.build(b)));
}
