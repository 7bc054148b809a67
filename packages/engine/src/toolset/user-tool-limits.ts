/**
 * The limits of one user tool call (issue 15): CPU as deterministic fuel plus a wall deadline,
 * memory and stack, and how many host calls and log lines a call may make. Defaults follow
 * IronClaw's WASM tools where they have one (50 requests, 20 invocations, 1,000 lines of 4 KiB).
 */

export interface UserToolLimits {
  /** Interrupt polls (about 10,000 bytecode branches and calls each) the call may use: it stops at the same point every time. */
  readonly fuel: number;
  /** Wall-clock time the whole call may take, host calls included, ms. */
  readonly deadlineMs: number;
  /** The sandbox's whole heap (QuickJS itself takes about 5 MiB of it), bytes; at least 16 MiB. */
  readonly memoryBytes: number;
  /** Guest stack, bytes; at most 256 KiB. */
  readonly stackBytes: number;
  /** `fetch` requests per call. */
  readonly httpRequests: number;
  /** Other tools invoked per call. */
  readonly toolCalls: number;
  /** `console.*` lines kept per call; more are dropped, and the log says how many. */
  readonly logLines: number;
  /** Longest line kept, characters. */
  readonly logLineChars: number;
}

/**
 * The default fuel of a TypeScript tool: 500 interrupt polls. Measured on the 2-core dev machine
 * (docs/design/tool-library.md, "Fuel against the deadline"), QuickJS burns 4,800 polls/s in a bare loop and 400–700/s building strings and
 * objects on an idle core, 2–4× fewer beside `yes > /dev/null` ×2 or at load 20–28; so 500 is
 * 0.1–1.3 s of CPU idle, and under 15 s — half the default deadline — even at 10× slowdown of the
 * slowest of those: fuel, not the wall clock, stops a CPU-bound tool, at the same point every time.
 */
export const DEFAULT_TS_FUEL = 500;

/**
 * The default fuel of a WebAssembly tool: 50,000 units of 10,000 ticks (`wasm-fuel.ts`). A
 * module burns 20,000–30,000 units/s at load 20 on the dev machine, so 50,000 is 2–3 s there.
 */
export const DEFAULT_WASM_FUEL = 50_000;

export const DEFAULT_USER_TOOL_LIMITS: UserToolLimits = {
  fuel: DEFAULT_TS_FUEL,
  deadlineMs: 30_000,
  memoryBytes: 16 * 1024 * 1024,
  stackBytes: 256 * 1024,
  httpRequests: 50,
  toolCalls: 20,
  logLines: 1_000,
  logLineChars: 4_096,
};

/** Every limit of a tool of `kind`, `limits` over the defaults (the fuel's default differs by kind: its unit does). */
export function withDefaultLimits(kind: "code" | "wasm", limits: Partial<UserToolLimits> = {}): UserToolLimits {
  return { ...DEFAULT_USER_TOOL_LIMITS, ...(kind === "wasm" ? { fuel: DEFAULT_WASM_FUEL } : {}), ...limits };
}

/** What is wrong with `limits` (empty when nothing is). */
export function limitsProblems(limits: Partial<UserToolLimits>): readonly string[] {
  const problems: string[] = [];
  for (const [field, value] of Object.entries(limits) as [keyof UserToolLimits, number | undefined][]) {
    if (!(field in DEFAULT_USER_TOOL_LIMITS)) problems.push(`limits.${field}: there is no such limit (${Object.keys(DEFAULT_USER_TOOL_LIMITS).join(", ")})`);
    else if (value !== undefined && !(Number.isInteger(value) && value > 0)) problems.push(`limits.${field}: ${value} is not a positive whole number`);
  }
  if (limits.memoryBytes !== undefined && limits.memoryBytes < 16 * 1024 * 1024) problems.push("limits.memoryBytes: at least 16 MiB (16777216)");
  if (limits.stackBytes !== undefined && limits.stackBytes > 256 * 1024) problems.push("limits.stackBytes: at most 256 KiB (262144)");
  return problems;
}

/**
 * The server's ceilings on every per-tool limit (an operator's `EngineOptions.userToolCeilings`,
 * `tapedeck serve --user-tool-ceilings name=value,…`): a toolset whose user tool asks for more is
 * refused, naming the ceiling. Without them a tenant registered a 1-hour deadline, 3 GiB of
 * memory and 1e12 fuel, and one call held 419 M characters. The defaults leave room for real
 * tools (ten times a TypeScript tool's default fuel is 5–13 s of CPU idle) and bound the harm.
 */
export const DEFAULT_USER_TOOL_CEILINGS: UserToolLimits = {
  // TypeScript fuel is bounded by the deadline below long before this; WebAssembly's 1e6 units are 10^10 ticks (under a minute here).
  fuel: 1_000_000,
  deadlineMs: 120_000,
  memoryBytes: 256 * 1024 * 1024,
  stackBytes: 256 * 1024,
  httpRequests: 500,
  toolCalls: 100,
  logLines: 10_000,
  logLineChars: 65_536,
};

/** What is wrong with `limits` (every limit of a tool, defaults filled in) against `ceilings`: one text per limit past its ceiling. */
export function ceilingProblems(limits: UserToolLimits, ceilings: UserToolLimits): string[] {
  const problems: string[] = [];
  for (const field of Object.keys(DEFAULT_USER_TOOL_LIMITS) as (keyof UserToolLimits)[]) {
    if (limits[field] > ceilings[field])
      problems.push(
        `limits.${field}: ${limits[field]} is past this server's ceiling of ${ceilings[field]} (set by its operator: userToolCeilings, tapedeck serve --user-tool-ceilings ${field}=…); ask for at most ${ceilings[field]}`,
      );
  }
  return problems;
}

/** What is wrong with ceilings an operator gives (empty when nothing is): the same fields as limits, positive whole numbers. */
export function ceilingsProblems(ceilings: Partial<UserToolLimits>): readonly string[] {
  return limitsProblems(ceilings).map((problem) => problem.replace(/^limits\./, "userToolCeilings."));
}
