import { schemaFor } from "./schema-for.js";

/** `GET /health` and `GET /ready`: probes for supervisors and load balancers (no API key). */
export interface HealthStatus {
  /** `ok` (200); `starting`, `stopping`, or `unavailable` (its store does not answer) with 503. */
  readonly status: "ok" | "starting" | "stopping" | "unavailable";
  /** With `unavailable`: what is wrong with the store (the node takes no work until it answers again). */
  readonly problem?: string;
  /** Present only when the server was started with test-only switches (never in production): each one, and what it opens or changes. */
  readonly unsafe?: readonly string[];
}

export const healthStatus = schemaFor<HealthStatus>()({
  type: "object",
  properties: {
    status: { type: "string", enum: ["ok", "starting", "stopping", "unavailable"] },
    problem: { type: "string" },
    unsafe: { type: "array", items: { type: "string" } },
  },
  required: ["status"],
});
