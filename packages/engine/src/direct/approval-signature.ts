import { createHmac, timingSafeEqual } from "node:crypto";
import type { JsonValue } from "@tapedeck/protocol";
import { canonicalJson } from "../util/canonical-json.js";
import { diffBindings, bindingNote, type BindingSection } from "./binding-diff.js";
import { bindingId, type DirectBinding } from "./direct-binding.js";

/**
 * A call paused for approval is signed with the binding it was asked under (seed 002): deciding
 * or resuming it under another tool table fails with `config_mismatch` before anything is
 * written, unless the caller passes `allowConfigDrift` — the approver approved a call under the
 * rules, tools and definitions they saw, and the library does not silently swap them.
 *
 * The signature is HMAC-SHA-256, keyed by the caller (the server's key), over the canonical JSON
 * of the pending call's identity: session, seq, tool, a digest of the arguments and the binding
 * id. A journal row edited by hand (another binding id, other arguments) fails the check as
 * `bad_signature`, so no stored field can be trusted without the key.
 *
 * Invariant: `checkPendingApproval` compares signatures in constant time, never throws for a
 * malformed signature, and reports drift only after the signature holds.
 */

export interface PendingApproval {
  readonly session: string;
  readonly seq: number;
  /** The tool's path, `group.name`. */
  readonly tool: string;
  /** SHA-256 of the canonical JSON of the call's arguments. */
  readonly argsDigest: string;
  /** The id of the binding the call was asked under. */
  readonly binding: string;
}

const DOMAIN = "tapedeck direct approval v1";

export function signPendingApproval(key: string | Uint8Array, pending: PendingApproval): string {
  if (key.length < 16) throw new TypeError("signPendingApproval: the key must have at least 16 bytes (use the server's secret key, never a constant)");
  const fields = { domain: DOMAIN, ...pending } as unknown as JsonValue;
  return createHmac("sha256", key).update(canonicalJson(fields)).digest("base64url");
}

export type ApprovalCheck =
  /** Same binding (or drift allowed): decide or resume. `note` tells the model what changed, on drift. */
  | { readonly ok: true; readonly drift: false }
  | { readonly ok: true; readonly drift: true; readonly sections: readonly BindingSection[]; readonly note?: string }
  /** Asked under another binding and drift not allowed: write nothing. */
  | { readonly ok: false; readonly code: "config_mismatch"; readonly sections: readonly BindingSection[]; readonly message: string }
  /** The record does not carry a valid signature: it was not written by this key, or was changed since. */
  | { readonly ok: false; readonly code: "bad_signature"; readonly message: string };

export interface ApprovalCheckInput {
  readonly key: string | Uint8Array;
  readonly pending: PendingApproval;
  readonly signature: string;
  /** The binding of the direct tools that decide or resume the call now. */
  readonly current: DirectBinding;
  /** The binding the call was asked under, as the session recorded it (to say what changed). */
  readonly recorded: DirectBinding;
  readonly allowConfigDrift?: boolean;
}

export function checkPendingApproval(input: ApprovalCheckInput): ApprovalCheck {
  const expected = Buffer.from(signPendingApproval(input.key, input.pending));
  const given = Buffer.from(typeof input.signature === "string" ? input.signature : "");
  if (expected.length !== given.length || !timingSafeEqual(expected, given) || bindingId(input.recorded) !== input.pending.binding) {
    return {
      ok: false,
      code: "bad_signature",
      message: `The approval of call ${input.pending.seq} of session ${input.pending.session} does not carry a valid signature: its record was changed or written with another key. Nothing was written; reject the call or start a new session.`,
    };
  }
  const currentId = bindingId(input.current);
  if (currentId === input.pending.binding) return { ok: true, drift: false };
  const diff = diffBindings(input.recorded, input.current);
  if (input.allowConfigDrift) {
    const note = bindingNote(diff);
    return { ok: true, drift: true, sections: diff.sections, ...(note !== undefined ? { note } : {}) };
  }
  const what = [
    diff.added.length > 0 ? `tools added: ${diff.added.join(", ")}` : "",
    diff.removed.length > 0 ? `tools removed: ${diff.removed.join(", ")}` : "",
    diff.changed.length > 0 ? `definitions changed: ${diff.changed.join(", ")}` : "",
    ...diff.sections.filter((s) => s !== "tools").map((s) => `${s} changed`),
  ].filter((part) => part !== "");
  return {
    ok: false,
    code: "config_mismatch",
    sections: diff.sections,
    message:
      `Call ${input.pending.seq} of session ${input.pending.session} (${input.pending.tool}) waits for an approval asked under binding ${input.pending.binding}, ` +
      `but the direct tools now have binding ${currentId} (${what.join("; ") || "configuration changed"}). Nothing was written. ` +
      "Decide it with the configuration it was asked under, reject it, or pass allowConfigDrift: true to decide it under the new one (the model is then told what changed).",
  };
}
