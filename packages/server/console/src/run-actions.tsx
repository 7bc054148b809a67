import { useState } from "preact/hooks";
import { api, ApiFailure, type Run } from "./api.js";
import { waitText } from "./format.js";

/**
 * What may be done to a run, through the routes the SDK uses: approve or reject a call waiting
 * for a decision (with a reason), send a signal, cancel. The page's stream shows the outcome.
 */
export function RunActions({ token, run, onUnauthorized }: { token: string; run: Run; onUnauthorized: () => void }) {
  const [message, setMessage] = useState<{ text: string; error: boolean }>();
  const [reasons, setReasons] = useState<Record<number, string>>({});
  const signalWait = run.waits?.find((wait) => wait.kind === "signal");
  const [signalName, setSignalName] = useState(signalWait?.name ?? "");
  const [payload, setPayload] = useState("null");
  const [cancelReason, setCancelReason] = useState("");
  if (["completed", "failed", "cancelled"].includes(run.status)) return null;
  const path = `/runs/${encodeURIComponent(run.id)}`;

  const act = async (what: string, send: () => Promise<unknown>) => {
    setMessage(undefined);
    try {
      await send();
      setMessage({ text: `${what}: done.`, error: false });
    } catch (failure) {
      if (failure instanceof ApiFailure && failure.status === 401) onUnauthorized();
      setMessage({ text: `${what}: ${failure instanceof Error ? failure.message : String(failure)}`, error: true });
    }
  };
  const decisions = (run.waits ?? []).filter((wait) => wait.kind === "approval" || wait.kind === "parked");

  return (
    <section class="actions" aria-labelledby="actions-title">
      <h2 id="actions-title">Actions</h2>
      {decisions.map((wait) => {
        const reason = reasons[wait.seq] ?? "";
        const body = reason.trim() === "" ? {} : { reason: reason.trim() };
        return (
          <div class="decision" key={wait.seq}>
            <p>{waitText(wait)}</p>
            {wait.args === undefined ? null : <pre>{JSON.stringify(wait.args, null, 2)}</pre>}
            <label>
              Reason for call {wait.seq} <input value={reason} onInput={(event) => setReasons({ ...reasons, [wait.seq]: event.currentTarget.value })} />
            </label>
            <button type="button" onClick={() => void act(`Approve call ${wait.seq}`, () => api(token, "POST", `${path}/calls/${wait.seq}/approve`, body))}>
              Approve call {wait.seq}
            </button>
            <button
              type="button"
              class="danger"
              onClick={() => void act(`Reject call ${wait.seq}`, () => api(token, "POST", `${path}/calls/${wait.seq}/reject`, body))}
            >
              Reject call {wait.seq}
            </button>
          </div>
        );
      })}
      <form
        class="signal"
        onSubmit={(event) => {
          event.preventDefault();
          let parsed: unknown;
          try {
            parsed = JSON.parse(payload);
          } catch {
            setMessage({ text: 'The signal\'s payload must be JSON (null, 42, "text", {…}).', error: true });
            return;
          }
          void act(`Signal "${signalName}"`, () => api(token, "POST", `${path}/signal`, { name: signalName, payload: parsed }));
        }}
      >
        <label>
          Signal name <input value={signalName} onInput={(event) => setSignalName(event.currentTarget.value)} required />
        </label>
        <label>
          Payload (JSON) <input value={payload} onInput={(event) => setPayload(event.currentTarget.value)} />
        </label>
        <button type="submit">Send signal</button>
      </form>
      <form
        class="cancel"
        onSubmit={(event) => {
          event.preventDefault();
          void act("Cancel", () => api(token, "POST", `${path}/cancel`, cancelReason.trim() === "" ? {} : { reason: cancelReason.trim() }));
        }}
      >
        <label>
          Cancel reason <input value={cancelReason} onInput={(event) => setCancelReason(event.currentTarget.value)} />
        </label>
        <button type="submit" class="danger">
          Cancel run
        </button>
      </form>
      {message === undefined ? null : (
        <p class={message.error ? "error" : "done"} role="status">
          {message.text}
        </p>
      )}
    </section>
  );
}
