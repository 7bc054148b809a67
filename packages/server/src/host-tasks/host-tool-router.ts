import type { InProcessHostTools, ResumedCall, ToolCallRequest, ToolOutcome, ToolSource } from "@tapedeck/engine";
import type { HostTaskBroker } from "./host-task-broker.js";

/**
 * The server's host tool source: a tool the host module (`--host-module`, `hostTools`)
 * implements runs in the server's process; any other host tool is a task for workers. So a
 * server can keep some tools local and leave the rest to the harness's workers.
 */
export class HostToolRouter implements ToolSource {
  readonly #local: InProcessHostTools | undefined;
  readonly #workers: HostTaskBroker;

  constructor(local: InProcessHostTools | undefined, workers: HostTaskBroker) {
    this.#local = local;
    this.#workers = workers;
  }

  call(request: ToolCallRequest): Promise<ToolOutcome> {
    if (this.#local && this.#local.missing([request.tool]).length === 0) return this.#local.call(request);
    return this.#workers.call(request);
  }

  /** A call of a local tool died with the process that ran it; a worker's task may still stand in the store. */
  resumes(call: ResumedCall): Promise<boolean> | undefined {
    if (this.#local && this.#local.missing([call.tool]).length === 0) return undefined;
    return this.#workers.resumes(call);
  }

  close(): Promise<void> {
    return this.#workers.close();
  }
}
