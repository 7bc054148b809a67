import { observeEngines, type Engine, type Store } from "@tapedeck/engine";
import { Counter, Gauge, Histogram, Registry } from "prom-client";

/**
 * The server's Prometheus metrics (`GET /metrics`, an unlimited API key only), in a registry of
 * its own (never prom-client's global one: two servers in one process do not share gauges):
 *
 * - `tapedeck_runs{status}`: runs by status in the store (every node's, every namespace's), read at each scrape;
 * - `tapedeck_tool_calls_total{source,tool,outcome}` and `tapedeck_tool_call_duration_seconds{source,tool}`:
 *   calls this process's engines sent, from the first attempt to the outcome (retries included);
 * - `tapedeck_journal_commit_duration_seconds`: from a batch handed to the store to it being durable;
 * - `tapedeck_host_tasks{state}`: host tool tasks queued for workers and claimed by them (the store's: every node's);
 * - `tapedeck_workers_connected`: workers polling this node;
 * - `tapedeck_webhook_delivery_failures_total{gave_up}`: failed webhook attempts, the last of a delivery `gave_up="true"`;
 * - `tapedeck_sandbox_workers`, `tapedeck_sandboxes_open`: the sandbox pool.
 *
 * Not Node's process metrics: prom-client's collectors observe the process for good once
 * started, and an embedded server is opened and closed many times in one process.
 *
 * Calls and commits are heard from every engine of the process (`observeEngines`): a process
 * runs one server.
 */
export interface MetricsSources {
  readonly store: Store;
  readonly engine: () => Engine | undefined;
  readonly workers: () => number;
  readonly hostTasks: () => Promise<{ readonly queued: number; readonly claimed: number }>;
}

/** Seconds: a call is a local tool's microseconds or a slow API's minute. */
const CALL_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
/** Seconds: a commit is an fsync, a millisecond or so, or a database's round trip. */
const COMMIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1];

export class ServerMetrics {
  readonly registry = new Registry();
  readonly #webhookFailures: Counter<"gave_up">;
  readonly #stop: () => void;

  constructor(sources: MetricsSources) {
    const registers = [this.registry];
    new Gauge({
      name: "tapedeck_runs",
      help: "Runs in the store by status (every node's, every namespace's).",
      labelNames: ["status"],
      registers,
      async collect() {
        for (const [status, n] of Object.entries(await sources.store.countRuns())) this.set({ status }, n);
      },
    });
    const calls = new Counter({
      name: "tapedeck_tool_calls_total",
      help: "Tool calls sent by this process, by the tool's source, the tool (group.name) and how they ended (ok, error, parked).",
      labelNames: ["source", "tool", "outcome"],
      registers,
    });
    const callSeconds = new Histogram({
      name: "tapedeck_tool_call_duration_seconds",
      help: "Tool calls sent by this process, from the first attempt to the outcome (retries included), by source and tool.",
      labelNames: ["source", "tool"],
      buckets: CALL_BUCKETS,
      registers,
    });
    const commitSeconds = new Histogram({
      name: "tapedeck_journal_commit_duration_seconds",
      help: "Journal batches, from handed to the store to durable.",
      buckets: COMMIT_BUCKETS,
      registers,
    });
    new Gauge({
      name: "tapedeck_host_tasks",
      help: "Host tool tasks in the store: queued for a worker, or claimed by one (every node's).",
      labelNames: ["state"],
      registers,
      async collect() {
        const pending = await sources.hostTasks();
        this.set({ state: "queued" }, pending.queued);
        this.set({ state: "claimed" }, pending.claimed);
      },
    });
    new Gauge({
      name: "tapedeck_workers_connected",
      help: "Workers polling this node for host tasks (connected, not yet lost).",
      registers,
      collect() {
        this.set(sources.workers());
      },
    });
    this.#webhookFailures = new Counter({
      name: "tapedeck_webhook_delivery_failures_total",
      help: "Failed webhook delivery attempts; gave_up=true: the delivery's last attempt.",
      labelNames: ["gave_up"],
      registers,
    });
    const poolOf = () => sources.engine()?.sandboxPool();
    new Gauge({
      name: "tapedeck_sandbox_workers",
      help: "Worker threads of the sandbox pool.",
      registers,
      collect() {
        this.set(poolOf()?.workers ?? 0);
      },
    });
    new Gauge({
      name: "tapedeck_sandboxes_open",
      help: "Sandboxes open on the pool's workers (runs live in this process).",
      registers,
      collect() {
        this.set(poolOf()?.sandboxes ?? 0);
      },
    });
    this.#stop = observeEngines({
      callEnded(call) {
        calls.inc({ source: call.source, tool: call.tool, outcome: call.outcome });
        if (call.outcome !== "parked") callSeconds.observe({ source: call.source, tool: call.tool }, call.seconds);
      },
      committed(seconds) {
        commitSeconds.observe(seconds);
      },
    });
  }

  /** A webhook attempt failed (`gaveUp`: it was the delivery's last). */
  webhookFailed(gaveUp: boolean): void {
    this.#webhookFailures.inc({ gave_up: String(gaveUp) });
  }

  /** The text a scrape answers, and its content type. */
  async scrape(): Promise<{ readonly body: string; readonly contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }

  close(): void {
    this.#stop();
  }
}
