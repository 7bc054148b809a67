import type { JsonValue } from "../json.js";
import { anyJson } from "./fields.js";
import { schemaFor } from "./schema-for.js";

/** The wire format of what a caller does to a run it can see: cancel it (`/cancel`), signal it (`/signal`). */

/** Longest cancel or decision reason: a sentence or a paragraph, for whoever reads the run. */
export const REASON_MAX_LENGTH = 4096;
/** Longest signal name: names are words a script waits for, not data. */
const SIGNAL_NAME_MAX_LENGTH = 256;

/** `POST /v1/runs/:id/cancel`. */
export interface CancelRunRequest {
  readonly reason?: string;
}

export const cancelRunRequest = schemaFor<CancelRunRequest>()({
  type: "object",
  properties: { reason: { type: "string", maxLength: REASON_MAX_LENGTH } },
  additionalProperties: false,
});

/** `POST /v1/runs/:id/signal`. */
export interface SignalRequest {
  /** The name the script waits for with `signal(name)`. */
  readonly name: string;
  /** Default null. */
  readonly payload?: JsonValue;
  /** Sending the same key twice to a run delivers the signal once. */
  readonly idempotencyKey?: string;
}

export const signalRequest = schemaFor<SignalRequest>()({
  type: "object",
  properties: {
    name: { type: "string", minLength: 1, maxLength: SIGNAL_NAME_MAX_LENGTH },
    payload: anyJson,
    idempotencyKey: { type: "string", minLength: 1, maxLength: 512 },
  },
  required: ["name"],
  additionalProperties: false,
});

export interface SignalResult {
  readonly signalId: number;
  /** True when the key was used before: nothing was sent again. */
  readonly duplicate: boolean;
}

export const signalResult = schemaFor<SignalResult>()({
  type: "object",
  properties: { signalId: { type: "integer" }, duplicate: { type: "boolean" } },
  required: ["signalId", "duplicate"],
});
