import type { HttpSpec } from "@tapedeck/protocol";
import { AllowEntryError, normaliseAllowEntry } from "../net/allow-list.js";
import { ToolsetSpecError } from "./spec-error.js";

/**
 * Reads the `http` entry of a toolset file: `{ "allow": ["api.github.com", "*.example.com",
 * "203.0.113.7"] }`. It enables the built-in `http` tool (`fetch` in scripts) for those hosts;
 * each entry is normalised here (see `allow-list.ts`), so a mistake fails at registration.
 * Nothing in it can widen what the tool may reach beyond public addresses.
 */
export function parseHttpSpec(value: unknown): HttpSpec | undefined {
  if (value === undefined) return undefined;
  const example = `{ "allow": ["api.github.com", "*.example.com"] }`;
  if (typeof value !== "object" || value === null || Array.isArray(value)) throw new ToolsetSpecError(`http must be an object such as ${example}`);
  for (const key of Object.keys(value)) {
    if (key !== "allow") throw new ToolsetSpecError(`http has an unknown key "${key}"; allowed keys: allow`);
  }
  const allow = (value as { allow?: unknown }).allow;
  if (!Array.isArray(allow)) throw new ToolsetSpecError(`http.allow must be an array of hosts, as in "http": ${example}`);
  if (allow.length === 0)
    throw new ToolsetSpecError(`http.allow is empty: list the hosts scripts may reach, or remove "http" to give scripts no network at all`);
  return {
    allow: allow.map((entry: unknown, i) => {
      if (typeof entry !== "string") throw new ToolsetSpecError(`http.allow[${i}] must be a string such as "api.github.com"`);
      try {
        return normaliseAllowEntry(entry);
      } catch (error) {
        if (error instanceof AllowEntryError) throw new ToolsetSpecError(`http.allow[${i}]: ${error.message}`);
        throw error;
      }
    }),
  };
}
