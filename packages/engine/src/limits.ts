/**
 * Default limits, each with the reason for its value. All are configurable per engine.
 */

/** Calls in flight per run: enough parallelism for fan-out, small enough to be polite to servers. */
export const RUN_CONCURRENCY = 16;

/** Attempts of one call under `retry`: interruptions are rare; five in a row means something is broken. */
export const MAX_ATTEMPTS = 5;

/**
 * Attempts of one call made because the engine stopped while it was in flight: these do not
 * count against `MAX_ATTEMPTS`, which bounds what the tool's side did (connections dropped,
 * workers lost), since a server killed or restarted under a slow call is no fault of the call.
 * This bound is for a call whose answer kills the engine itself, sent again at every restart.
 */
export const MAX_ENGINE_STOP_ATTEMPTS = 25;

/** MCP tools' (and built-ins') default per-attempt timeout (seed 000). Host tools have none: the heartbeat governs a claimed call. */
export const DEFAULT_TIMEOUT_MS = 5 * 60_000;

/**
 * A host tool's call no worker has taken for this long is written into its run's `waits`, so
 * `show`, `get_run` and the agent tools say it waits for a worker. Most calls are taken within
 * milliseconds: the grace keeps the write off the path of every call.
 */
export const UNSERVED_NOTICE_MS = 2_000;

/** Host tools' default heartbeat timeout (seed 000). */
export const DEFAULT_HEARTBEAT_TIMEOUT_MS = 60_000;

/** One recorded value (arguments, a result, an output). Temporal fails payloads at 2 MB too. */
export const MAX_VALUE_BYTES = 2 * 1024 * 1024;

/** Journal entries per run; past it the run fails with a limit error. */
export const MAX_JOURNAL_ENTRIES = 200_000;

/** Guest heap per run. Scripts orchestrate calls; 64 MiB holds a lot of JSON. */
export const SANDBOX_MEMORY_BYTES = 64 * 1024 * 1024;

/** Guest stack: more than 256 KiB overflows Node's own stack inside WASM (measured). */
export const SANDBOX_STACK_BYTES = 256 * 1024;

/** CPU a script may spend between two host interactions before it is stopped. */
export const SANDBOX_CPU_MS_PER_STEP = 10_000;

/**
 * Sandboxes rebuilt (by replay) for one run after their worker died while running that run's own
 * script: past it the run is failed, since its script is what kills its sandbox.
 */
export const MAX_SANDBOX_REBUILDS = 3;

/**
 * Sandboxes rebuilt for one run after their worker died under another run's script: a run is not
 * failed for its neighbours' faults, but past this many in one execution it is left for `resume`.
 */
export const MAX_NEIGHBOUR_LOSSES = 50;

/**
 * Executions of a run that may end in a fault of the host (its process died under it, the
 * engine failed) in a row, without the run making progress, before it is failed instead of
 * executed again: one fault may be bad luck (a crash elsewhere), three in a row at the same
 * point are the run itself. So a run that takes a server down does so at most this many times.
 */
export const MAX_HOST_FAULTS = 3;

/** Longest log line kept. */
export const LOG_LINE_CHARS = 8 * 1024;

/**
 * A run whose only open calls are waits keeps its sandbox when its next timer is due within
 * this long (a short `sleep`, a `setTimeout` used as a yield); otherwise it is parked: its
 * sandbox is freed and it wakes by replay. Replay costs far less than holding a sandbox idle.
 */
export const HOLD_WAIT_MS = 2_000;

/** The `http` tool: longest a request may take, redirects and body included (DESIGN §8). */
export const HTTP_TIMEOUT_MS = 30_000;

/** The `http` tool: largest response body read (DESIGN §8); more fails the call without reading on. */
export const HTTP_MAX_RESPONSE_BYTES = 5 * 1024 * 1024;

/** The `http` tool: redirects followed, each checked again like the first URL (DESIGN §8). */
export const HTTP_MAX_REDIRECTS = 5;

/**
 * A run's default budget (`RunBudget`), where neither its start nor its toolset gives one: far
 * past what a working run does (the seeds' largest runs make a few hundred calls and receive a
 * few MiB), low enough that a loop gone wrong (one agent run made 8,910 MCP calls) is stopped
 * within minutes rather than at the journal's 200,000 entries.
 */
export const BUDGET_MAX_CALLS = 5_000;

/** Bytes of tool results a run receives by default: 128 results of the largest value the engine records. */
export const BUDGET_MAX_RESULT_BYTES = 256 * 1024 * 1024;

/** Child runs (workflow starts) a run makes by default: a fan-out of hundreds fits, a loop starting runs forever does not. */
export const BUDGET_MAX_CHILD_RUNS = 1_000;
