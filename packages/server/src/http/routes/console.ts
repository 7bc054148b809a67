import { readFileSync } from "node:fs";
import type { FastifyInstance } from "fastify";
import { ApiError } from "../api-error.js";

/**
 * The web console's files (built by scripts/build-console.mjs into the server package's
 * console/dist, which the package publishes). Read once at start: the console is three small
 * files, and a page must never see half of a bundle rebuilt under it.
 */
const CONSOLE_DIST = new URL("../../../console/dist/", import.meta.url);

/** Each file the console is made of, by the path it is served at, with its type. */
const FILES = {
  "/": { file: "index.html", type: "text/html; charset=utf-8" },
  "/console/app.js": { file: "app.js", type: "text/javascript; charset=utf-8" },
  "/console/app.css": { file: "app.css", type: "text/css; charset=utf-8" },
} as const;

/**
 * The page may load only its own files and talk only to this server: no inline script, no
 * other origin, never framed (a console inside someone else's page could be clicked for you).
 * Inline style attributes are refused too; the page sets positions through the DOM's style
 * properties, which CSP does not govern.
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

/** `GET /` (the console's page) and its script and style sheet, outside `/v1`: they hold no data, the page signs in to `/v1` itself. */
export function consoleRoutes(app: FastifyInstance): void {
  for (const [path, { file, type }] of Object.entries(FILES)) {
    const body = readConsoleFile(file);
    app.get(path, { schema: { hide: true } }, async (_request, reply) => {
      if (body === undefined)
        throw new ApiError(
          "unavailable",
          `The console is not built (no ${file} in ${CONSOLE_DIST.pathname}). In a clone of the repository run \`npm run build\`; an installed @tapedeck/server always has it.`,
        );
      return reply
        .header("content-type", type)
        .header("content-security-policy", CONSOLE_CSP)
        .header("x-content-type-options", "nosniff")
        .header("referrer-policy", "no-referrer")
        .header("cache-control", "no-cache")
        .send(body);
    });
  }
}

/** A file of the built console, or undefined when it was not built. */
function readConsoleFile(file: string): Buffer | undefined {
  try {
    return readFileSync(new URL(file, CONSOLE_DIST));
  } catch {
    return undefined;
  }
}
