/**
 * A pino JSON line as one line for people: `2026-01-02T03:04:05.678Z INFO  message key=value …`.
 * No dependency (pino-pretty would bring a dozen): the fields are printed in the order logged,
 * strings bare when they are one word, everything else as JSON. A line that is not a pino
 * object is printed as it is.
 */

const LEVEL_NAMES = new Map([
  [10, "TRACE"],
  [20, "DEBUG"],
  [30, "INFO"],
  [40, "WARN"],
  [50, "ERROR"],
  [60, "FATAL"],
]);

/** Fields every line has, printed in its head (or not at all: `pid`, `v`). */
const HEAD_FIELDS = new Set(["level", "time", "msg", "pid", "hostname", "v"]);

export function prettyLine(json: string): string {
  let entry: unknown;
  try {
    entry = JSON.parse(json);
  } catch {
    return json;
  }
  if (typeof entry !== "object" || entry === null || Array.isArray(entry)) return json;
  const fields = entry as Record<string, unknown>;
  const time = typeof fields.time === "number" ? new Date(fields.time).toISOString() : "";
  const level = (LEVEL_NAMES.get(Number(fields.level)) ?? String(fields.level)).padEnd(5);
  const rest = Object.entries(fields)
    .filter(([key]) => !HEAD_FIELDS.has(key))
    .map(([key, value]) => `${key}=${valueText(value)}`);
  return [time, level, typeof fields.msg === "string" ? fields.msg : "", ...rest].filter((part) => part !== "").join(" ");
}

function valueText(value: unknown): string {
  if (typeof value === "string" && /^[^\s"=]+$/.test(value)) return value;
  if (typeof value === "object" && value !== null && "stack" in value && typeof value.stack === "string") return `\n${value.stack}`;
  return JSON.stringify(value) ?? String(value);
}
