import type { CredentialSecret } from "./credential.js";

/**
 * Puts a credential into one outgoing request: into a copy of its headers and URL, so the
 * request the script described (and the journal recorded) is never changed, and a redirect
 * to another origin starts again from the script's headers, without the credential.
 * A credential's headers win over the script's of the same name.
 */
export function injectCredential(secret: CredentialSecret, headers: Readonly<Record<string, string>>, url: URL): { headers: Record<string, string>; url: URL } {
  const out = { ...headers };
  switch (secret.kind) {
    case "bearer":
      out.authorization = `Bearer ${secret.token}`;
      return { headers: out, url };
    case "basic":
      out.authorization = `Basic ${Buffer.from(`${secret.username}:${secret.password}`).toString("base64")}`;
      return { headers: out, url };
    case "headers":
      for (const [name, value] of Object.entries(secret.headers)) out[name.toLowerCase()] = value;
      return { headers: out, url };
    case "query": {
      const withParam = new URL(url.href);
      withParam.searchParams.set(secret.param, secret.value);
      return { headers: out, url: withParam };
    }
  }
}
