/**
 * Limits of the HTTP API that its schemas hold requests to, each with the reason for its value.
 * Every limit has a clear error (a 400 that names the field).
 */

/** Longest `?wait=` hold: under the idle timeouts of common proxies and load balancers (60–100 s), so a held request is never cut by one. */
export const MAX_WAIT_SECONDS = 60;

/** Runs per `GET /v1/runs` page: default and most. Each run carries its source and values, so a page stays a few MiB at most. */
export const LIST_LIMIT = { default: 100, max: 500 } as const;

/** Journal entries per page: default and most (an entry holds at most one 2 MiB value; most are small). */
export const JOURNAL_LIMIT = { default: 100, max: 1000 } as const;

/** End-user token lifetime, seconds: default one hour (a session); at most 30 days (a run's default TTL). */
export const TOKEN_TTL_SECONDS = { default: 3600, max: 30 * 24 * 3600 } as const;

/** Labels on a run, key or token: how many, and how long a key and a value may be. */
export const LABELS = { maxCount: 64, maxKeyLength: 128, maxValueLength: 1024 } as const;

/** Longest namespace (an end user's id in the harness's application). */
export const NAMESPACE_MAX_LENGTH = 256;
