import type { CreateScheduleRequest, Fire, FireList, Labels, Run, RunList, Schedule, ScheduleList } from "@tapedeck/protocol/api";
import type { HttpClient } from "../http-client.js";

/** The label each fire's run carries, set to its schedule's id (the engine's `SCHEDULE_LABEL`). */
export const SCHEDULE_RUN_LABEL = "tapedeck.schedule";

/** Filters of `td.schedules.list`. */
export interface ListSchedulesQuery {
  readonly namespace?: string;
  /** Only schedules carrying every one of these labels. */
  readonly labels?: Labels;
  /** Default 100, at most 500. */
  readonly limit?: number;
  /** The `next` of the previous page. */
  readonly after?: string;
}

/**
 * Schedules: a workflow or a script started on a cron expression (in an IANA time zone) or an
 * interval, by whichever server on the store fires first, each fire exactly once. A schedule
 * belongs to the client's scope; its runs carry its labels and namespace. Managed with an API key.
 */
export class Schedules {
  readonly #http: HttpClient;

  constructor(http: HttpClient) {
    this.#http = http;
  }

  /** Creates a schedule; a wrong one is refused whole (a `TapedeckError` 400 naming every problem, or 422 `script_refused` with diagnostics). */
  create(request: CreateScheduleRequest): Promise<Schedule> {
    return this.#http.request("POST", "/v1/schedules", { body: request });
  }

  /** The schedules in the client's scope, oldest first, with their next fire times. */
  async list(query: ListSchedulesQuery = {}): Promise<readonly Schedule[]> {
    const labels = Object.fromEntries(Object.entries(query.labels ?? {}).map(([key, value]) => [`label.${key}`, value]));
    const list = await this.#http.request<ScheduleList>("GET", "/v1/schedules", {
      query: { namespace: query.namespace, limit: query.limit, after: query.after, ...labels },
    });
    return list.schedules;
  }

  /** A schedule, with its next fire times (`upcoming`). */
  get(id: string): Promise<Schedule> {
    return this.#http.request("GET", schedulePath(id));
  }

  /** Stops firing until resumed. */
  pause(id: string): Promise<Schedule> {
    return this.#http.request("POST", `${schedulePath(id)}/pause`);
  }

  /** Fires again from now on (what was due while paused is not caught up). */
  resume(id: string): Promise<Schedule> {
    return this.#http.request("POST", `${schedulePath(id)}/resume`);
  }

  /** Fires now, under the schedule's overlap policy: the fire, with its run when it started one. */
  trigger(id: string): Promise<Fire> {
    return this.#http.request("POST", `${schedulePath(id)}/trigger`);
  }

  /** Fires each of the schedule's times in [from, to) (ms since the epoch) that has no fire yet, oldest first. */
  async backfill(id: string, range: { readonly from: number; readonly to: number }): Promise<readonly Fire[]> {
    return (await this.#http.request<FireList>("POST", `${schedulePath(id)}/backfill`, { body: range })).fires;
  }

  /** The schedule's fires, newest first: when, and what became of each (its run, or why not). */
  async fires(id: string, options: { readonly limit?: number; readonly before?: number } = {}): Promise<readonly Fire[]> {
    return (await this.#http.request<FireList>("GET", `${schedulePath(id)}/fires`, { query: { limit: options.limit, before: options.before } })).fires;
  }

  /** The runs the schedule's fires started, newest first (those the client sees). */
  async runs(id: string, options: { readonly limit?: number } = {}): Promise<readonly Run[]> {
    const list = await this.#http.request<RunList>("GET", "/v1/runs", { query: { [`label.${SCHEDULE_RUN_LABEL}`]: id, limit: options.limit } });
    return list.runs;
  }

  /** Deletes the schedule (its runs stay). */
  async delete(id: string): Promise<void> {
    await this.#http.request("DELETE", schedulePath(id));
  }
}

function schedulePath(id: string): string {
  return `/v1/schedules/${encodeURIComponent(id)}`;
}
