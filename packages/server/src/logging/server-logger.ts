/**
 * The server's log: Fastify's own logger (pino), one JSON object per line or a pretty line per
 * event, on stderr by default (stdout carries only `tapedeck listening on <url>`).
 *
 * Invariants:
 * - No request body, header, query string or webhook token is ever logged: request lines carry
 *   the method, the route and its path with sensitive parameters redacted (`request-log.ts`);
 *   `authorization` and `cookie` are redacted wherever they would appear.
 * - Every line is escaped for a terminal (`escapeTerminal`): what runs carry cannot drive the
 *   terminal of whoever tails the log; JSON lines stay JSON.
 */
import type { FastifyBaseLogger } from "fastify";
import pino from "pino";
import { escapeTerminal } from "../terminal-text.js";
import { prettyLine } from "./pretty-line.js";

/** pino's logger as Fastify types it (what its routes' `request.log` is). */
export type ServerLogger = FastifyBaseLogger;

/** pino's levels, quietest last. `silent` logs nothing. */
export const LOG_LEVELS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/** `json`: one pino JSON object per line, for machines. `pretty`: `time LEVEL message key=value…`, for people. */
export const LOG_FORMATS = ["json", "pretty"] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];

export interface LoggerOptions {
  readonly level: LogLevel;
  readonly format: LogFormat;
  /** Where each line goes, without its newline. */
  readonly write: (line: string) => void;
}

/** Paths pino censors if a value there is ever logged (a serialized request, an error's headers). */
const REDACTED_PATHS = [
  "authorization",
  "cookie",
  "headers.authorization",
  "headers.cookie",
  "req.headers.authorization",
  "req.headers.cookie",
  "*.authorization",
];

export function createServerLogger(options: LoggerOptions): ServerLogger {
  const format = options.format === "pretty" ? prettyLine : (line: string) => line;
  const destination = {
    write: (chunk: string) => {
      for (const line of chunk.split("\n")) if (line !== "") options.write(escapeTerminal(format(line)));
    },
  };
  return pino(
    {
      level: options.level,
      base: { pid: process.pid },
      redact: { paths: REDACTED_PATHS, censor: "[redacted]" },
      serializers: { err: pino.stdSerializers.err },
    },
    destination,
  );
}

/** The default format: pretty on a terminal, JSON otherwise (a file, a pipe, a log collector). */
export function defaultLogFormat(): LogFormat {
  return process.stderr.isTTY ? "pretty" : "json";
}
