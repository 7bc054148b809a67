import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { saveToken, savedToken } from "./api.js";
import { RunPage } from "./run-page.js";
import { RunsList } from "./runs-list.js";
import { SignIn } from "./sign-in.js";

/** The page shown, from the location's hash: `#/runs/<id>` a run, anything else the runs list. */
function route(): { page: "runs" } | { page: "run"; id: string } {
  const match = /^#\/runs\/([^/?#]+)/.exec(location.hash);
  return match?.[1] === undefined ? { page: "runs" } : { page: "run", id: decodeURIComponent(match[1]) };
}

function App() {
  const [token, setToken] = useState(savedToken());
  const [where, setWhere] = useState(route());
  useEffect(() => {
    const onHash = () => setWhere(route());
    addEventListener("hashchange", onHash);
    return () => removeEventListener("hashchange", onHash);
  }, []);
  const signOut = () => {
    saveToken(undefined);
    setToken(undefined);
  };
  return (
    <>
      <header class="top">
        <a class="brand" href="#/runs">
          Tapedeck
        </a>
        {token === undefined ? null : (
          <nav aria-label="Main">
            <a href="#/runs">Runs</a>
            <button type="button" onClick={signOut}>
              Sign out
            </button>
          </nav>
        )}
      </header>
      <main>
        {token === undefined ? (
          <SignIn
            onSignedIn={(signed) => {
              saveToken(signed);
              setToken(signed);
            }}
          />
        ) : where.page === "run" ? (
          <RunPage key={where.id} token={token} id={where.id} onUnauthorized={signOut} />
        ) : (
          <RunsList token={token} onUnauthorized={signOut} />
        )}
      </main>
    </>
  );
}

const root = document.getElementById("app");
if (root !== null) {
  root.textContent = "";
  render(<App />, root);
}
