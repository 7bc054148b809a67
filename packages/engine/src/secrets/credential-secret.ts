import type { CredentialSecret } from "./credential.js";

/**
 * Checks a credential's value before it is sealed, so a bad one is refused when it is set
 * rather than when a run sends it. Messages never quote a value.
 */

/** An HTTP header name (RFC 9110 token). */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Headers the engine sets or that would change how the request is framed or routed. */
const RESERVED_HEADERS = new Set(["host", "content-length", "transfer-encoding", "connection", "idempotency-key", "traceparent"]);

/** Why `secret` cannot be used, or undefined when it can. */
export function checkSecret(secret: CredentialSecret): string | undefined {
  switch (secret.kind) {
    case "bearer":
      return checkValue(secret.token, "the token");
    case "basic":
      if (secret.username === "" || secret.username.includes(":"))
        return "the basic-auth user name must be non-empty and without a colon; give the value as <user>:<password>.";
      return checkValue(secret.username, "the user name") ?? checkValue(secret.password, "the password");
    case "query":
      if (secret.param === "") return "the query parameter needs a name (--param).";
      return checkValue(secret.value, "the value");
    case "headers": {
      const entries = Object.entries(secret.headers);
      if (entries.length === 0) return 'give at least one header, as a JSON object: {"X-Api-Key": "…"}.';
      for (const [name, value] of entries) {
        if (!TOKEN.test(name)) return `${JSON.stringify(name)} is not a valid header name.`;
        if (RESERVED_HEADERS.has(name.toLowerCase())) return `the header ${name} is set by the engine and cannot be a credential.`;
        const problem = checkValue(value, `the value of ${name}`);
        if (problem !== undefined) return problem;
      }
      return undefined;
    }
  }
}

function checkValue(value: string, what: string): string | undefined {
  if (value === "") return `${what} is empty.`;
  // A line break would let a value add headers of its own.
  if (/[\r\n\0]/.test(value)) return `${what} contains a line break or NUL; remove it (a trailing newline from a file or \`echo\` included).`;
  return undefined;
}
