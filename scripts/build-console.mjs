// Builds the web console (packages/server/console/src, Preact) into packages/server/console/dist:
// index.html, app.js (one esbuild bundle, minified, no CDN) and app.css. Run by the root
// `prepare`/`build` after `tsc -b`, so `npm ci` in a fresh clone leaves a console that
// `tapedeck serve` can serve, and `npm pack` of the server package carries it.
// Usage: node scripts/build-console.mjs
import { copyFileSync, mkdirSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const CONSOLE = fileURLToPath(new URL("../packages/server/console/", import.meta.url));
const OUT = `${CONSOLE}dist/`;

mkdirSync(OUT, { recursive: true });
await build({
  entryPoints: [`${CONSOLE}src/main.tsx`],
  outfile: `${OUT}app.js`,
  bundle: true,
  minify: true,
  format: "esm",
  target: "es2022",
  jsx: "automatic",
  jsxImportSource: "preact",
  legalComments: "eof",
  logLevel: "warning",
});
copyFileSync(`${CONSOLE}src/index.html`, `${OUT}index.html`);
copyFileSync(`${CONSOLE}src/app.css`, `${OUT}app.css`);
