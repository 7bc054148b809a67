import type { RunWait } from "./api.js";

export function time(at: number): string {
  return new Date(at).toLocaleString();
}

/** A duration, from milliseconds to days, in the unit that reads best. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 2 : 1)} s`;
  if (ms < 3_600_000) return `${(ms / 60_000).toFixed(1)} min`;
  if (ms < 86_400_000) return `${(ms / 3_600_000).toFixed(1)} h`;
  return `${(ms / 86_400_000).toFixed(1)} d`;
}

/** What a run waits for, in words. */
export function waitText(wait: RunWait): string {
  switch (wait.kind) {
    case "approval":
      return `approval of call ${wait.seq} (${wait.tool ?? "?"})`;
    case "parked":
      return `call ${wait.seq} (${wait.tool ?? "?"}) parked: ${wait.message ?? wait.reason ?? ""}`;
    case "signal":
      return `signal "${wait.name ?? "?"}"${wait.until === undefined ? "" : ` until ${time(wait.until)}`}`;
    case "sleep":
      return `a timer, due ${wait.until === undefined ? "?" : time(wait.until)}`;
    case "worker":
      return `a worker for call ${wait.seq} (${wait.tool ?? "?"})`;
  }
}

export function json(value: unknown): string {
  return JSON.stringify(value, null, 2) ?? "undefined";
}
