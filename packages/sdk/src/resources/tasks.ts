import type { CompleteTaskRequest, FailTaskRequest, LeaseAnswer, LeaseStatus, PolledTasks, PollTasksRequest } from "@tapedeck/protocol/api";
import type { HttpClient } from "../http-client.js";

/**
 * The host-task routes, as a worker uses them. `worker()` drives them; use these directly only
 * to write a worker of your own (another language's, a queue bridge).
 */
export class Tasks {
  readonly #http: HttpClient;

  constructor(http: HttpClient) {
    this.#http = http;
  }

  /** Claims up to `max` tasks of the given tools: at once if some wait, else when one arrives or after `waitMs` (none). Aborting `signal` ends the poll. */
  async poll(request: PollTasksRequest, signal?: AbortSignal): Promise<PolledTasks> {
    return this.#http.request("POST", "/v1/tasks/poll", { body: request, ...(signal ? { signal } : {}) });
  }

  /** Keeps the lease: call within the task's `heartbeatTimeoutMs`. */
  heartbeat(taskId: string, lease: string): Promise<LeaseStatus> {
    return this.#lease(taskId, "heartbeat", { lease });
  }

  /** Answers the call with a result. */
  complete(taskId: string, request: CompleteTaskRequest): Promise<LeaseStatus> {
    return this.#lease(taskId, "complete", request);
  }

  /** Answers the call with a failure: the script gets a `ToolError`; never retried. */
  fail(taskId: string, request: FailTaskRequest): Promise<LeaseStatus> {
    return this.#lease(taskId, "fail", request);
  }

  async #lease(taskId: string, action: string, body: object): Promise<LeaseStatus> {
    const answer = await this.#http.request<LeaseAnswer>("POST", `/v1/tasks/${encodeURIComponent(taskId)}/${action}`, { body });
    return answer.status;
  }
}
