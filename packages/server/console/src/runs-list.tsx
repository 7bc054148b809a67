import { useEffect, useState } from "preact/hooks";
import { api, ApiFailure, STATUSES, type Run } from "./api.js";
import { time, waitText } from "./format.js";
import { follow } from "./sse.js";

/**
 * The runs the signed-in key may see, newest first: `GET /v1/runs` once, then kept current by
 * `GET /v1/events` (each change brings the run whole). Filtered by status on the server and as
 * changes arrive; searched by id here.
 */
export function RunsList({ token, onUnauthorized }: { token: string; onUnauthorized: () => void }) {
  const [status, setStatus] = useState("");
  const [search, setSearch] = useState("");
  const [runs, setRuns] = useState<readonly Run[]>();
  const [error, setError] = useState<string>();
  const [live, setLive] = useState(false);

  useEffect(() => {
    const stop = new AbortController();
    const fail = (failure: unknown) => {
      if (failure instanceof ApiFailure && failure.status === 401) onUnauthorized();
      else setError(failure instanceof Error ? failure.message : String(failure));
    };
    const load = () =>
      api<{ runs: Run[] }>(token, "GET", `/runs?limit=200${status === "" ? "" : `&status=${status}`}`).then((list) => {
        if (!stop.signal.aborted) setRuns(list.runs);
      }, fail);
    setRuns(undefined);
    // The stream opens first: a change between the list and the stream would be missed the other way round.
    void follow(
      token,
      "/events",
      stop.signal,
      (event) => {
        if (event.event === "ready") {
          setLive(true);
          void load();
        } else if (event.event === "run") {
          const changed = event.data as Run;
          setRuns((current) => {
            const others = (current ?? []).filter((run) => run.id !== changed.id);
            if (status !== "" && changed.status !== status) return others;
            return [changed, ...others].sort((a, b) => b.createdAt - a.createdAt);
          });
        } else if (event.event === "lost") {
          setLive(false);
          setError("Fell behind the live updates: reload the page.");
        }
      },
      (message) => {
        setLive(false);
        setError(message);
      },
    );
    return () => stop.abort();
  }, [token, status]);

  const needle = search.trim();
  const shown = (runs ?? []).filter((run) => needle === "" || run.id.includes(needle));
  return (
    <section aria-labelledby="runs-title">
      <h1 id="runs-title">Runs</h1>
      <div class="filters">
        <label>
          Status{" "}
          <select value={status} onChange={(event) => setStatus(event.currentTarget.value)}>
            <option value="">any</option>
            {STATUSES.map((name) => (
              <option value={name}>{name}</option>
            ))}
          </select>
        </label>
        <label>
          Search by id <input type="search" value={search} onInput={(event) => setSearch(event.currentTarget.value)} placeholder="run_…" />
        </label>
        <span class={live ? "live on" : "live"} role="status">
          {live ? "live" : "connecting…"}
        </span>
      </div>
      {error === undefined ? null : (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {runs === undefined ? (
        <p>Loading…</p>
      ) : shown.length === 0 ? (
        <p class="empty">
          No runs{needle === "" ? "" : ` whose id contains "${needle}"`}.{" "}
          {/^run_\S+$/.test(needle) ? <a href={`#/runs/${encodeURIComponent(needle)}`}>Open {needle}</a> : null}
        </p>
      ) : (
        <table class="runs">
          <thead>
            <tr>
              <th scope="col">Run</th>
              <th scope="col">Status</th>
              <th scope="col">Waits for</th>
              <th scope="col">Labels</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {shown.map((run) => (
              <tr key={run.id} data-run={run.id}>
                <td>
                  <a href={`#/runs/${encodeURIComponent(run.id)}`}>{run.id}</a>
                </td>
                <td>
                  <span class={`status ${run.status}`}>{run.status}</span>
                </td>
                <td>{(run.waits ?? []).map(waitText).join("; ")}</td>
                <td>
                  {Object.entries(run.labels)
                    .map(([key, value]) => `${key}=${value}`)
                    .join(", ")}
                  {run.namespace === undefined ? "" : ` (${run.namespace})`}
                </td>
                <td>{time(run.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}
