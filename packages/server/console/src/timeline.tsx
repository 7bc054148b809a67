import type { JournalEntry, Run } from "./api.js";
import { duration } from "./format.js";
import { timelineOf } from "./timeline-model.js";

/**
 * The journal as a picture: a row per call, its bar from scheduled to result over the run's time,
 * coloured by outcome; the time it was waited on (approval, park, sleep, signal) is striped over
 * it, and a call the run waits on now is drawn up to now. A bar is a button:
 * it opens the call's result entry (or its scheduling, while it has none).
 */
export function TimelineView({
  run,
  entries,
  now,
  onOpen,
}: {
  run: Run | undefined;
  entries: readonly JournalEntry[];
  now: number;
  onOpen: (index: number) => void;
}) {
  const timeline = timelineOf(run, entries, now);
  const span = Math.max(1, timeline.end - timeline.start);
  const left = (at: number) => `${(((at - timeline.start) / span) * 100).toFixed(3)}%`;
  if (timeline.bars.length === 0) return <p class="empty">No calls yet.</p>;
  return (
    <figure class="timeline" aria-label="Timeline of the run's calls">
      <div class="axis" aria-hidden="true">
        <span>0</span>
        <span>{duration(span)}</span>
      </div>
      <ol>
        {timeline.bars.map((bar) => (
          <li key={bar.seq} class="row">
            <span class="row-label">
              #{bar.seq} {bar.tool}
            </span>
            <span class="track">
              <button
                type="button"
                class={`bar ${bar.outcome}`}
                style={{ left: left(bar.start), width: `max(4px, ${(((bar.end - bar.start) / span) * 100).toFixed(3)}%)` }}
                aria-label={`Call ${bar.seq} ${bar.tool}: ${bar.outcome}${bar.wait === undefined ? "" : ` (waits for ${bar.wait})`}, ${duration(bar.end - bar.start)}. Open its entry.`}
                title={`${bar.tool}: ${bar.outcome}, ${duration(bar.end - bar.start)}`}
                onClick={() => onOpen(bar.entry)}
              />
              {bar.waited === undefined ? null : (
                <span
                  class={`wait-span ${bar.waited.kind}`}
                  style={{ left: left(bar.waited.from), width: `${(((bar.waited.to - bar.waited.from) / span) * 100).toFixed(3)}%` }}
                  title={`waited for ${bar.waited.kind}: ${duration(bar.waited.to - bar.waited.from)}`}
                  aria-hidden="true"
                />
              )}
              {bar.marks.map((mark) => (
                <span class={`mark ${mark.kind.replace("call.", "")}`} style={{ left: left(mark.at) }} title={mark.kind} aria-hidden="true" />
              ))}
            </span>
            <span class="row-outcome">
              {bar.outcome}
              {bar.wait === undefined ? "" : ` · ${bar.wait}`} · {duration(bar.end - bar.start)}
              {bar.waited === undefined || bar.wait !== undefined ? "" : ` (${duration(bar.waited.to - bar.waited.from)} waiting for ${bar.waited.kind})`}
            </span>
          </li>
        ))}
      </ol>
      <figcaption>
        <span class="key completed">completed</span> <span class="key failed">failed</span> <span class="key rejected">rejected</span>{" "}
        <span class="key waiting">waiting</span> <span class="key pending">in flight</span> <span class="key waited">waited</span>
      </figcaption>
    </figure>
  );
}
