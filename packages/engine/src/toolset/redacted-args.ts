import { randomBytes } from "node:crypto";
import { toolFailure, type JsonValue, type PinnedTool, type ToolFailure } from "@tapedeck/protocol";
import type { KnownSecret } from "../secrets/leak-scanner.js";
import { parsePointer, readPointer } from "./json-pointer.js";
import { REDACTED_PREFIX, redactSensitive } from "./sensitive-params.js";

/**
 * A run's view of its tools' `sensitiveParams` (`policy.sensitiveParams`, JSON pointers): what
 * the journal, the events, the waits shown and every message get (`redact`: each value replaced
 * by its keyed hash, `"[redacted hmac-sha256:<32 hex>]"`), and what the tool gets (the arguments
 * as the script made them). The script path keeps both: the intake journals the redacted form
 * and sends the live one; a resumed run re-executes its script, whose calls carry the live
 * values again, and replay compares their redacted form with the journal's.
 *
 * Invariants:
 * - `redact` is a pure function of the key, the tool's pointers and the arguments; applying it
 *   to arguments it redacted already changes nothing (a marker stays as it is).
 * - Live arguments never hold a marker at a sensitive pointer (`markerRefusal` refuses such a
 *   call): so a marker in arguments about to be sent means the live values were lost (a direct
 *   session restarted without a sealed copy that opens) and the call must not be sent (`lostValues`).
 * - Tools without `sensitiveParams` cost nothing: their arguments come back as the same object.
 */
export class ArgsRedaction {
  constructor(private readonly key: () => Uint8Array) {}

  /** A redaction with a key of its own (tests, engines without a master key): its hashes compare only with themselves. */
  static ephemeral(): ArgsRedaction {
    const key = randomBytes(32);
    return new ArgsRedaction(() => key);
  }

  /** `args` as they may be recorded and shown: each value at the tool's sensitive pointers replaced by its keyed hash. */
  redact(tool: PinnedTool | undefined, args: JsonValue): JsonValue {
    const pointers = tool?.policy.sensitiveParams;
    if (pointers === undefined || pointers.length === 0) return args;
    return redactSensitive(args, pointers, this.key());
  }

  /** The sensitive values of a call as text, for the leak scan of its result (a tool echoing a password back). */
  secrets(tool: PinnedTool, args: JsonValue): readonly KnownSecret[] {
    return sensitiveValues(tool, args);
  }

  /** A call whose live arguments hold a marker where a secret goes: refused, or it could not be told from a redacted one. */
  markerRefusal(tool: PinnedTool, path: string, args: JsonValue): ToolFailure | undefined {
    const pointer = markerPointer(tool, args);
    if (pointer === undefined) return undefined;
    return toolFailure(
      "invalid_arguments",
      `The arguments of ${path} are refused: ${pointer} is a sensitive parameter and holds a redaction marker ("${REDACTED_PREFIX}…]"), not a value. Pass the real value; the journal keeps its hash.`,
    );
  }

  /** Why a call about to be sent cannot be: its arguments hold markers (the live values were not kept, or `why` not), or undefined. */
  lostValues(tool: PinnedTool, path: string, args: JsonValue, why?: string): ToolFailure | undefined {
    const pointer = markerPointer(tool, args);
    if (pointer === undefined) return undefined;
    const lost = why ?? "this session (which has no script to compute it again) kept no copy of the value when the engine restarted";
    return toolFailure(
      "refused",
      `The call to ${path} was not sent: the value of its sensitive parameter ${pointer} is journaled only as a hash, and ${lost}. Make the call again.`,
    );
  }
}

/** The values at `tool`'s sensitive pointers in `args` as text (named `argument <pointer>`), for a leak scan; empty without `sensitiveParams`. */
export function sensitiveValues(tool: PinnedTool, args: JsonValue): KnownSecret[] {
  const found: KnownSecret[] = [];
  for (const [pointer, value] of valuesAt(tool, args)) {
    for (const text of leaves(value)) found.push({ value: text, name: `argument ${pointer}` });
  }
  return found;
}

function* valuesAt(tool: PinnedTool, args: JsonValue): Generator<[string, JsonValue]> {
  for (const pointer of tool.policy.sensitiveParams ?? []) {
    const parsed = parsePointer(pointer);
    if (!parsed.ok || parsed.tokens.length === 0) continue;
    const found = readPointer(args, parsed.tokens);
    if (found.found) yield [pointer, found.value];
  }
}

function markerPointer(tool: PinnedTool, args: JsonValue): string | undefined {
  for (const [pointer, value] of valuesAt(tool, args)) if (typeof value === "string" && value.startsWith(REDACTED_PREFIX)) return pointer;
  return undefined;
}

/** Every string and number within `value`, as text. */
function leaves(value: JsonValue): string[] {
  if (typeof value === "string") return [value];
  if (typeof value === "number") return [String(value)];
  if (value === null || typeof value === "boolean") return [];
  return (Array.isArray(value) ? value : Object.values(value)).flatMap(leaves);
}
