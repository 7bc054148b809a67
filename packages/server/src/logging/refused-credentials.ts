/**
 * The server's side of a 401: the caller is told only that its credential was not accepted
 * (an unauthenticated caller learns nothing of the server: no folder, no store, no command), and
 * the operator reads in the log why and how to make a key this server knows.
 *
 * Invariants:
 * - The credential itself is never logged, nor any part of it.
 * - At most one line per `REPEAT_MS` per reason: a client retrying a stale key (or someone
 *   guessing) cannot flood the log; the next line says how many were refused meanwhile.
 */
import type { ServerLogger } from "./server-logger.js";

/** Why a request had no caller. */
export type RefusedCredential =
  /** No `Authorization: Bearer …` header. */
  | "missing"
  /** An API key this server's store does not hold. */
  | "unknown-key"
  /** A token not signed by this server's signing secret, or changed. */
  | "invalid-token"
  /** A token past its expiry. */
  | "expired-token";

/** The shortest time between two lines of one reason: a stale key retried every second logs once a minute. */
export const REPEAT_MS = 60_000;

export class RefusedCredentialLog {
  readonly #last = new Map<RefusedCredential, { at: number; since: number }>();

  /** `keysCreate` is the command that makes a key this server knows (the data folder's, or the store URL's). */
  constructor(
    private readonly logger: ServerLogger,
    private readonly keysCreate: string,
    private readonly now: () => number = Date.now,
  ) {}

  note(reason: RefusedCredential): void {
    const at = this.now();
    const last = this.#last.get(reason);
    if (last !== undefined && at - last.at < REPEAT_MS) {
      last.since++;
      return;
    }
    this.#last.set(reason, { at, since: 0 });
    const more = last !== undefined && last.since > 0 ? { refusedSinceLastLine: last.since } : {};
    this.logger.warn({ reason, ...more }, `a /v1 request was refused (401): ${HINTS[reason](this.keysCreate)}`);
  }
}

const HINTS: Readonly<Record<RefusedCredential, (keysCreate: string) => string>> = {
  missing: (keysCreate) =>
    `it sent no Authorization: Bearer <key> header. Clients need an API key of this server: the admin key printed at the store's first start, or one made with ${keysCreate}`,
  "unknown-key": (keysCreate) =>
    `its API key is not one of this server's (made for another data folder or store, or mistyped). Keys this server knows are made with ${keysCreate}`,
  "invalid-token": () =>
    "its end-user token was not signed by this server's signing secret, or was changed. With several nodes, every node must be given the same TAPEDECK_SIGNING_SECRET",
  "expired-token": () => "its end-user token expired: the client must mint a new one with POST /v1/tokens",
};
