import { schemaFor } from "./schema-for.js";

/** `GET /health` and `GET /ready`: probes for supervisors and load balancers (no API key). */
export interface HealthStatus {
  /** `ok` (200); `starting`, `stopping`, or `unavailable` (its store does not answer) with 503. */
  readonly status: "ok" | "starting" | "stopping" | "unavailable";
}

export const healthStatus = schemaFor<HealthStatus>()({
  type: "object",
  properties: { status: { type: "string", enum: ["ok", "starting", "stopping", "unavailable"] } },
  required: ["status"],
});
