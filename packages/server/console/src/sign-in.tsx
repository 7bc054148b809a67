import { useState } from "preact/hooks";
import { api, ApiFailure } from "./api.js";

/** Sign in with an API key or an end user's token, checked against the API before it is kept. */
export function SignIn({ onSignedIn }: { onSignedIn: (token: string) => void }) {
  const [token, setToken] = useState("");
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const submit = async (event: Event) => {
    event.preventDefault();
    const trimmed = token.trim();
    if (trimmed === "") return setError("Paste an API key (td_…) or an end user's token.");
    setBusy(true);
    setError(undefined);
    try {
      await api(trimmed, "GET", "/runs?limit=1");
      onSignedIn(trimmed);
    } catch (failure) {
      setError(
        failure instanceof ApiFailure && failure.status === 401
          ? `Not signed in: ${failure.message}`
          : String(failure instanceof Error ? failure.message : failure),
      );
    } finally {
      setBusy(false);
    }
  };
  return (
    <section class="sign-in" aria-labelledby="sign-in-title">
      <h1 id="sign-in-title">Sign in</h1>
      <p>
        With an API key or an end user's token. It stays in this tab only (session storage) and is sent to this server's <code>/v1</code> API, which shows what
        it may see.
      </p>
      <form onSubmit={(event) => void submit(event)}>
        <label for="token">API key or token</label>
        <input id="token" type="password" autocomplete="off" value={token} onInput={(event) => setToken(event.currentTarget.value)} required />
        <button type="submit" disabled={busy}>
          Sign in
        </button>
        {error === undefined ? null : (
          <p class="error" role="alert">
            {error}
          </p>
        )}
      </form>
    </section>
  );
}
