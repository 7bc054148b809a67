import { defineTool, failure, result } from "../library-tool.js";

/**
 * `time.now`: the current time, in a format and an IANA time zone. The time is the run's clock
 * (`ctx.now`: virtual in tests) and the zone arithmetic is the host's `Intl` (the sandbox has
 * none), so a script gets a correct local time without a time-zone database of its own.
 */

export type TimeFormat = "iso8601" | "unix" | "human";

interface TimeArgs {
  readonly format?: TimeFormat;
  readonly timezone?: string;
}

export const timeTool = defineTool<TimeArgs>({
  name: "now",
  description:
    "The current date and time. format: iso8601 (default; 2026-03-03T14:30:05.123-08:00), unix (seconds since 1970, a number) or human " +
    '("Tuesday, March 3, 2026 at 2:30:05 PM PST"). timezone: an IANA name such as "America/Los_Angeles" or "Europe/Paris" (default UTC).',
  inputSchema: {
    type: "object",
    properties: {
      format: { type: "string", enum: ["iso8601", "unix", "human"], description: "Default iso8601." },
      timezone: { type: "string", minLength: 1, maxLength: 64, description: 'An IANA time zone ("Asia/Tokyo"); default "UTC".' },
    },
    additionalProperties: false,
  },
  outputSchema: {
    type: "object",
    properties: {
      value: { type: ["string", "number"], description: "The time in the format asked: a number for unix, else a string." },
      format: { type: "string", enum: ["iso8601", "unix", "human"] },
      timezone: { type: "string", description: "The zone's canonical IANA name." },
      utcOffset: { type: "string", description: 'The zone\'s offset from UTC at that time, "+05:30".' },
    },
    required: ["value", "format", "timezone", "utcOffset"],
    additionalProperties: false,
  },
  risk: "low",
  approval: { kind: "never" },
  needs: [],
  execute: (args, ctx) => Promise.resolve(now(ctx.now(), args)),
});

function now(at: number, { format = "iso8601", timezone = "UTC" }: TimeArgs) {
  let zone: string;
  try {
    zone = new Intl.DateTimeFormat("en-US", { timeZone: timezone }).resolvedOptions().timeZone;
  } catch {
    return failure(
      "invalid_arguments",
      `"${timezone}" is not a time zone. Give an IANA name such as "UTC", "Europe/Paris", "America/New_York" or "Asia/Kolkata".`,
    );
  }
  const utcOffset = offsetAt(at, zone);
  const value = format === "unix" ? Math.floor(at / 1000) : format === "human" ? human(at, zone) : iso8601(at, zone, utcOffset);
  return result({ value, format, timezone: zone, utcOffset });
}

/** `+hh:mm` / `-hh:mm` of `zone` at `at` (from Intl's `longOffset`: "GMT-08:00", or "GMT" for zero). */
function offsetAt(at: number, zone: string): string {
  const name = new Intl.DateTimeFormat("en-US", { timeZone: zone, timeZoneName: "longOffset" }).formatToParts(at).find((p) => p.type === "timeZoneName");
  const offset = /^GMT([+-]\d{2}:\d{2})$/.exec(name?.value ?? "");
  return offset?.[1] ?? "+00:00";
}

function iso8601(at: number, zone: string, utcOffset: string): string {
  const parts = new Intl.DateTimeFormat("en-US", {
    timeZone: zone,
    hourCycle: "h23",
    year: "numeric",
    month: "2-digit",
    day: "2-digit",
    hour: "2-digit",
    minute: "2-digit",
    second: "2-digit",
  }).formatToParts(at);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? "";
  const millis = String(((at % 1000) + 1000) % 1000).padStart(3, "0");
  const year = part("year").padStart(4, "0");
  const suffix = zone === "UTC" ? "Z" : utcOffset;
  return `${year}-${part("month")}-${part("day")}T${part("hour")}:${part("minute")}:${part("second")}.${millis}${suffix}`;
}

function human(at: number, zone: string): string {
  return new Intl.DateTimeFormat("en-US", { timeZone: zone, dateStyle: "full", timeStyle: "long" }).format(at);
}
