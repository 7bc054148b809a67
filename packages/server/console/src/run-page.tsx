import { useEffect, useState } from "preact/hooks";
import { api, ApiFailure, type JournalEntry, type Run } from "./api.js";
import { RunActions } from "./run-actions.js";
import { json, time, waitText } from "./format.js";
import { follow } from "./sse.js";
import { TimelineView } from "./timeline.js";

/**
 * A run: its state, what it waits for, output, the timeline of its journal, and the actions it
 * allows. Everything comes from `GET /v1/runs/:id/events`, which sends the run, then its whole
 * journal entry by entry, then every change until it ends.
 */
export function RunPage({ token, id, onUnauthorized }: { token: string; id: string; onUnauthorized: () => void }) {
  const [run, setRun] = useState<Run>();
  const [entries, setEntries] = useState<readonly JournalEntry[]>([]);
  const [error, setError] = useState<string>();
  const [opened, setOpened] = useState<{ index: number; entry?: unknown; error?: string }>();
  const [now, setNow] = useState(Date.now());

  useEffect(() => {
    const stop = new AbortController();
    void follow(
      token,
      `/runs/${encodeURIComponent(id)}/events`,
      stop.signal,
      (event) => {
        if (event.event === "run" || event.event === "end") setRun(event.data as Run);
        else if (event.event === "entry") {
          const entry = event.data as JournalEntry;
          setEntries((current) => (current.some((known) => known.index === entry.index) ? current : [...current, entry]));
        } else if (event.event === "lost") setError("Fell behind the run's live events: reload the page.");
      },
      setError,
    );
    return () => stop.abort();
  }, [token, id]);

  // Open calls grow with time: the picture moves on each second while the run has not ended.
  const ended = run !== undefined && ["completed", "failed", "cancelled"].includes(run.status);
  useEffect(() => {
    if (ended) return;
    const timer = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(timer);
  }, [ended]);

  const open = (index: number) => {
    setOpened({ index });
    api<unknown>(token, "GET", `/runs/${encodeURIComponent(id)}/journal/${index}`).then(
      (entry) => setOpened({ index, entry }),
      (failure: unknown) => {
        if (failure instanceof ApiFailure && failure.status === 401) onUnauthorized();
        setOpened({ index, error: failure instanceof Error ? failure.message : String(failure) });
      },
    );
  };

  return (
    <section aria-labelledby="run-title">
      <p>
        <a href="#/runs">← Runs</a>
      </p>
      <h1 id="run-title">{id}</h1>
      {error === undefined ? null : (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {run === undefined ? (
        error === undefined ? (
          <p>Loading…</p>
        ) : null
      ) : (
        <>
          <dl class="facts">
            <dt>Status</dt>
            <dd>
              <span class={`status ${run.status}`} data-testid="run-status">
                {run.status}
              </span>
            </dd>
            <dt>Waits for</dt>
            <dd>{(run.waits ?? []).length === 0 ? "nothing" : (run.waits ?? []).map(waitText).join("; ")}</dd>
            <dt>Toolset</dt>
            <dd>{run.toolset}</dd>
            <dt>Created</dt>
            <dd>{time(run.createdAt)}</dd>
            <dt>Journal</dt>
            <dd>{run.journalLength} entries</dd>
          </dl>
          {run.output === undefined ? null : (
            <>
              <h2>Output</h2>
              <pre class="output" data-testid="run-output">
                {json(run.output)}
              </pre>
            </>
          )}
          {run.error === undefined ? null : (
            <>
              <h2>Error</h2>
              <pre class="output error-text">{json(run.error)}</pre>
            </>
          )}
          <RunActions token={token} run={run} onUnauthorized={onUnauthorized} />
        </>
      )}
      <h2>Timeline</h2>
      <TimelineView run={run} entries={entries} now={now} onOpen={open} />
      {opened === undefined ? null : (
        <section class="entry" aria-labelledby="entry-title" aria-live="polite">
          <h3 id="entry-title">Entry {opened.index}</h3>
          {opened.error !== undefined ? (
            <p class="error">{opened.error}</p>
          ) : opened.entry === undefined ? (
            <p>Loading…</p>
          ) : (
            <pre data-testid="entry-json">{json(opened.entry)}</pre>
          )}
        </section>
      )}
      <h2>Journal</h2>
      <ol class="journal">
        {entries.map((entry) => (
          <li key={entry.index}>
            <button type="button" class="link" onClick={() => open(entry.index)}>
              {entry.index}. {entry.kind}
              {entry.seq === undefined ? "" : ` #${entry.seq}`}
              {typeof entry.tool === "string" ? ` ${entry.tool}` : ""}
            </button>{" "}
            <span class="when">{time(entry.at)}</span>
          </li>
        ))}
      </ol>
      {run === undefined ? null : (
        <>
          <h2>Source</h2>
          <pre class="source">{run.source}</pre>
        </>
      )}
    </section>
  );
}
