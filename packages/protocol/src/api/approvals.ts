import type { DecisionWait } from "../run.js";
import { id } from "./fields.js";
import type { Labels } from "./labels.js";
import { REASON_MAX_LENGTH } from "./run-actions.js";
import { runIdParams } from "./runs.js";
import { schemaFor } from "./schema-for.js";

/** The wire format of calls waiting for a decision: listed (`GET /v1/approvals`), approved, rejected. */

/** A call waiting for a decision (approval, or parked), with its run. `id` is `<run_id>/<seq>` (the call's idempotency key). */
export type PendingApproval = DecisionWait & { readonly id: string; readonly runId: string; readonly labels?: Labels; readonly namespace?: string };

/** The query string of `GET /v1/approvals`. */
export interface ApprovalsQuery {
  /** Only this run's calls. Default: every run inside the caller's scope. */
  readonly run?: string;
}

export const approvalsQuery = schemaFor<ApprovalsQuery>()({ type: "object", properties: { run: id }, additionalProperties: false });

/** `GET /v1/approvals`. */
export interface ApprovalList {
  /** Oldest run first. */
  readonly approvals: readonly PendingApproval[];
}

export const approvalList = schemaFor<ApprovalList>()({
  type: "object",
  properties: { approvals: { type: "array", items: { type: "object" } } },
  required: ["approvals"],
});

/** `/v1/runs/:id/calls/:seq/…`. */
export interface CallParams {
  readonly id: string;
  readonly seq: number;
}

export const callParams = schemaFor<CallParams>()({
  type: "object",
  properties: { ...runIdParams.properties, seq: { type: "integer", minimum: 1, description: "The call's number in the run (`seq`)." } },
  required: ["id", "seq"],
  additionalProperties: false,
});

/** `POST /v1/runs/:id/calls/:seq/approve` and `/reject`. */
export interface DecisionRequest {
  readonly reason?: string;
}

export const decisionRequest = schemaFor<DecisionRequest>()({
  type: "object",
  properties: { reason: { type: "string", maxLength: REASON_MAX_LENGTH } },
  additionalProperties: false,
});
