import { sha256Hex } from "../util/ids.js";

/**
 * How a model's tool call is identified in its session, so that handling the same tool call
 * twice (a harness retrying a turn, two processes, a restart) sends it once and answers the
 * recorded result:
 * - its **call id**: SHA-256 of the session, the direct tools' labels (sorted: their order does
 *   not matter) and the model's tool call id. The session journal looks a call up by it; a tool
 *   call id is unique only within a conversation (some APIs reuse `call_0`), hence the session
 *   and the labels;
 * - its **idempotency key**, once it has a `seq` in the session: `{session}/{seq}`, the same on
 *   every attempt, as a script's call is `{run}/{seq}` (sent in `_meta`, as `ctx.idempotencyKey`,
 *   as `Idempotency-Key`).
 */

/** Tool call ids longer than this are refused: the APIs' ids are tens of characters. */
export const MAX_TOOL_CALL_ID_LENGTH = 256;

export function directCallId(session: string, labels: Readonly<Record<string, string>>, toolCallId: string): string {
  if (typeof toolCallId !== "string" || toolCallId === "" || toolCallId.length > MAX_TOOL_CALL_ID_LENGTH) {
    // Without an id two different calls would share one record (and one would get the other's result).
    throw new TypeError(
      `direct tools: a tool call needs the model's tool call id (1 to ${MAX_TOOL_CALL_ID_LENGTH} characters): it identifies the call in the session.`,
    );
  }
  const sorted = Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `dc_${sha256Hex(JSON.stringify(["tapedeck direct tool call v1", session, sorted, toolCallId]))}`;
}

export function directIdempotencyKey(session: string, seq: number): string {
  return `${session}/${seq}`;
}
