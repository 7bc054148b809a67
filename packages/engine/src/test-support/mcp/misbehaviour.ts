/** Ways a fixture breaks the protocol on purpose when a tool is called (initialize and tools/list still work). */
export const MISBEHAVIOURS = [
  /** Writes output that is not a valid JSON-RPC message instead of the call's answer. */
  "malformed",
  /** Drops the connection: over stdio the process exits, over HTTP the socket is destroyed. */
  "exit-mid-call",
  /** Accepts the call and never answers it. */
  "never-answer",
  /** Writes lines to stderr (the last one naming `FIXTURE_DATABASE_URL` from its environment), then drops the connection as `exit-mid-call`. */
  "stderr-exit",
] as const;

export type Misbehaviour = (typeof MISBEHAVIOURS)[number];

/** Exit code of a stdio fixture that `drop()` or `exit-mid-call` ended. */
export const DROPPED_EXIT_CODE = 75;

/** The non-JSON line a `malformed` stdio fixture writes. */
export const MALFORMED_LINE = "this line is not JSON-RPC {";

export function parseMisbehaviour(value: string): Misbehaviour {
  const found = MISBEHAVIOURS.find((mode) => mode === value);
  if (found === undefined) throw new Error(`unknown misbehaviour ${JSON.stringify(value)}; use one of ${MISBEHAVIOURS.join(", ")}`);
  return found;
}

/** Lines of noise a `stderr-exit` fixture writes before its last line. */
export const STDERR_NOISE_LINES = 100;

/** The last line a `stderr-exit` fixture writes to stderr. */
export function stderrLastLine(env: NodeJS.ProcessEnv): string {
  return `fixture: cannot reach the database at ${env.FIXTURE_DATABASE_URL ?? "(unset)"}; giving up`;
}
