import type { ApprovalList, DecisionRequest, PendingApproval, Run, SessionApproval, SessionApprovalList } from "@tapedeck/protocol/api";
import type { HttpClient } from "../http-client.js";
import { runPath } from "./runs.js";

/** Calls waiting for a decision: those whose policy requires approval, and parked ones. */
export class Approvals {
  readonly #http: HttpClient;

  constructor(http: HttpClient) {
    this.#http = http;
  }

  /**
   * The calls waiting for a decision: of one run (a run, such as an agent tool's `result.run`, or
   * its id), or of every run in the client's scope.
   */
  async pending(run?: string | Pick<Run, "id">): Promise<readonly PendingApproval[]> {
    const runId = typeof run === "object" && run !== null ? run.id : run;
    const list = await this.#http.request<ApprovalList>("GET", "/v1/approvals", { query: { run: runId } });
    return list.approvals;
  }

  /** The calls of direct tool sessions waiting for a human, with their summaries, in the client's scope (decide them with `directTools(…).approve`, or `approveSessionCall`). */
  async sessions(): Promise<readonly SessionApproval[]> {
    return (await this.#http.request<SessionApprovalList>("GET", "/v1/session-approvals")).approvals;
  }

  /** Approves call `seq` of session `session` (its name) under the binding it was asked under. */
  approveSessionCall(session: string, seq: number, options: { readonly reason?: string; readonly always?: boolean } = {}): Promise<unknown> {
    return this.#http.request("POST", `/v1/sessions/${encodeURIComponent(session)}/calls/${seq}/approve`, { body: options });
  }

  /** Rejects call `seq` of session `session`: the model gets a result saying so. */
  rejectSessionCall(session: string, seq: number, options: { readonly reason?: string } = {}): Promise<unknown> {
    return this.#http.request("POST", `/v1/sessions/${encodeURIComponent(session)}/calls/${seq}/reject`, { body: options });
  }

  /** Approves call `seq` of a run: the decision is journaled, then the call is sent. Answers the run. */
  approve(runId: string, seq: number, request: DecisionRequest = {}): Promise<Run> {
    return this.#http.request("POST", `${runPath(runId)}/calls/${seq}/approve`, { body: request });
  }

  /** Rejects call `seq`: the script gets a `ToolError` (`approval_rejected`). Answers the run. */
  reject(runId: string, seq: number, request: DecisionRequest = {}): Promise<Run> {
    return this.#http.request("POST", `${runPath(runId)}/calls/${seq}/reject`, { body: request });
  }
}
