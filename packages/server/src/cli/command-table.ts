import type { Output } from "./print.js";

/**
 * The subcommands of `tapedeck`, in the order `tapedeck help` lists them: what help says of each,
 * and how to load what runs it. A command's module is imported only when it runs, so `--help`
 * (and a command that needs no engine) does not load the engine, TypeScript and every tool
 * source, which cost 1.5 to 2.2 s of CPU per invocation.
 */
export interface CommandEntry {
  readonly usage: string;
  /** What it does, in one line: `tapedeck <command> --help` and `tapedeck help` print it. */
  readonly summary: string;
  /** The command's implementation, imported on first use. */
  readonly load: () => Promise<(args: readonly string[], out: Output) => Promise<number>>;
}

export const COMMANDS: ReadonlyMap<string, CommandEntry> = new Map([
  [
    "check",
    {
      usage: "tapedeck check <script.ts> --toolset <file>",
      summary: "Type-checks a script against a toolset file; prints diagnostics with code frames (writes nothing).",
      load: async () => (await import("./commands/check.js")).checkCommand,
    },
  ],
  [
    "run",
    {
      usage: "tapedeck run <script.ts> --toolset <file> [--host <module>] [--input <json>] [--detach] [--data <dir>]",
      summary: "Runs a script to its end: the output on stdout, or the error on stderr, then the run's id. Creates the data folder if needed.",
      load: async () => (await import("./commands/run.js")).runCommand,
    },
  ],
  [
    "runs",
    {
      usage:
        "tapedeck runs [--status <status>] [--limit <n>] [--data <dir>]\n  tapedeck runs purge --before <ISO time | duration ago> [--dry-run] [--data <dir>]\n  tapedeck runs --watch [--status <status>] [--url <server>]   (key: TAPEDECK_API_KEY)\n  tapedeck runs follow <run_id> [--url <server>]   (key: TAPEDECK_API_KEY)",
      summary:
        "Lists runs, newest first (a waiting run with what it waits for); purge deletes the runs ended before a time (a dry run counts them); --watch prints the runs, then a line each time one is created or changes, live from a running server until Ctrl-C; follow prints a run's entries and states live from a running server until it ends.",
      load: async () => (await import("./commands/runs.js")).runsCommand,
    },
  ],
  [
    "namespaces",
    {
      usage: "tapedeck namespaces erase <namespace> [--cancel] [--dry-run] [--url <server> | --data <dir>]   (with --url, key: TAPEDECK_API_KEY)",
      summary:
        "Erases an end user: every run, session, credential, rate-limit window, schedule, workspace file, memory document and webhook delivery of the namespace; prints the counts. Refused while a run of it has not ended, unless --cancel; --dry-run counts.",
      load: async () => (await import("./commands/namespaces.js")).namespacesCommand,
    },
  ],
  [
    "show",
    {
      usage: "tapedeck show <run_id> [--data <dir>]\n  tapedeck show <run_id> --follow [--url <server>]   (key: TAPEDECK_API_KEY)",
      summary: "Prints a run's state and its whole journal; --follow prints its entries and states live from a running server until it ends (as runs follow).",
      load: async () => (await import("./commands/show.js")).showCommand,
    },
  ],
  [
    "resume",
    {
      usage: "tapedeck resume [<run_id>] [--host <module>] [--detach] [--data <dir>]",
      summary: "Resumes runs an engine left running and waiting runs that are due (or the run given), and keeps them as run does.",
      load: async () => (await import("./commands/resume.js")).resumeCommand,
    },
  ],
  [
    "fork",
    {
      usage: "tapedeck fork <run_id> <script.ts> [--host <module>] [--input <json>] [--detach] [--data <dir>]",
      summary: "Reruns a run with a corrected script: calls the parent completed are reused, not sent again.",
      load: async () => (await import("./commands/fork.js")).forkCommand,
    },
  ],
  [
    "cancel",
    {
      usage: "tapedeck cancel <run_id> [--reason <text>] [--data <dir>]",
      summary: "Cancels a run that has not ended.",
      load: async () => (await import("./commands/cancel.js")).cancelCommand,
    },
  ],
  [
    "signal",
    {
      usage: "tapedeck signal <run_id> <name> [--payload <json>] [--key <key>] [--host <module>] [--data <dir>]",
      summary: "Sends a signal to a run; a run parked on it goes on here.",
      load: async () => (await import("./commands/signal.js")).signalCommand,
    },
  ],
  [
    "approvals",
    {
      usage: "tapedeck approvals [<run_id> | <session_id>] [--data <dir>]",
      summary: "Lists the calls waiting for a decision (approve or reject).",
      load: async () => (await import("./commands/approvals.js")).approvalsCommand,
    },
  ],
  [
    "approve",
    {
      usage: "tapedeck approve <approval_id> | <run_id> <seq> [--reason <text>] [--host <module>] [--data <dir>]",
      summary: "Approves a call waiting for approval (or parked): it is sent, and the run goes on here.",
      load: async () => (await import("./commands/decide.js")).approveCommand,
    },
  ],
  [
    "reject",
    {
      usage: "tapedeck reject <approval_id> | <run_id> <seq> [--reason <text>] [--host <module>] [--data <dir>]",
      summary: "Rejects a call waiting for approval (or parked): the script gets a ToolError.",
      load: async () => (await import("./commands/decide.js")).rejectCommand,
    },
  ],
  [
    "schedules",
    {
      usage:
        "tapedeck schedules create --toolset <id|file> (--script <file.ts> | --workflow <name>) (--cron <expr> [--timezone <IANA zone>] | --every <duration>) [--input <json>] [--start-at <ISO time>] [--end-at <ISO time>] [--max-fires <n>] [--overlap skip|buffer_one|allow|cancel_previous] [--catchup latest|all|none] [--catchup-window <duration>] [--label <k>=<v>]… [--namespace <ns>] [--ttl <duration>] [--paused] [--note <text>] [--data <dir>]\n" +
        "  tapedeck schedules list [--namespace <ns>] [--label <k>=<v>]… [--limit <n>] [--data <dir>]\n" +
        "  tapedeck schedules show|pause|resume|delete <schedule_id> [--data <dir>]\n" +
        "  tapedeck schedules trigger <schedule_id> [--host <module>] [--data <dir>]",
      summary:
        "Creates, lists, shows (next fires, last fires), pauses, resumes, fires now or deletes schedules: a script or workflow started on a cron expression in a time zone or an interval, fired by every tapedeck serve on the store, each fire once.",
      load: async () => (await import("./commands/schedules.js")).schedulesCommand,
    },
  ],
  [
    "toolset",
    {
      usage: "tapedeck toolset register <file> [--data <dir>]",
      summary: "Registers a toolset file: prints its id and declarations. Creates the data folder if needed.",
      load: async () => (await import("./commands/toolset.js")).toolsetCommand,
    },
  ],
  [
    "verify",
    {
      usage: "tapedeck verify <run_id> [--data <dir>]",
      summary: "Replays a run's journal in a fresh sandbox, sending nothing, and says whether the script still does what was recorded.",
      load: async () => (await import("./commands/verify.js")).verifyCommand,
    },
  ],
  [
    "test",
    {
      usage: "tapedeck test <script.ts> --toolset <file> [--scenario <file>] [--input <json>] [--host <module>] [--json]",
      summary: "Tests a script against a scenario or cassette in virtual time: nothing is sent, no run is kept.",
      load: async () => (await import("./commands/test.js")).testCommand,
    },
  ],
  [
    "cassette",
    {
      usage: "tapedeck cassette <run_id> [--out <file>]",
      summary: "Exports a run's recorded calls, signals and decisions as a scenario for tapedeck test.",
      load: async () => (await import("./commands/cassette.js")).cassetteCommand,
    },
  ],
  [
    "serve",
    {
      usage:
        "tapedeck serve [--port 7700] [--host 127.0.0.1] [--host-module <tools.ts>] [--public-url <url>] [--log-level info] [--log-format json|pretty] [--data <dir>] [--store <dir or postgres://… URL>] [--signing-secret-file <file>] [--lease-ms 30000] [--retention 30d] [--user-tool-ceilings deadlineMs=60000,memoryBytes=67108864,…] [--namespace-quotas concurrentRuns=10,runsPerMinute=30,runsPerDay=2000] [--key-quotas runsPerMinute=120,…] [--mcp-max-sessions 1000] [--mcp-max-sessions-per-key 100] [--mcp-session-idle 30m]",
      summary: "Runs the HTTP server until SIGINT or SIGTERM. Creates the data folder if needed.",
      load: async () => (await import("./commands/serve.js")).serveCommand,
    },
  ],
  [
    "mcp",
    {
      usage: "tapedeck mcp --toolset <file|id> [--mode code] [--namespace <ns>] [--labels k=v,…] [--data <dir>] [--store <dir or postgres://… URL>]",
      summary:
        "Serves the agent tools (run_script, get_run, …) as an MCP server on stdio, runs executing in this process; stdout carries only JSON-RPC. Creates the data folder if needed.",
      load: async () => (await import("./commands/mcp.js")).mcpCommand,
    },
  ],
  [
    "keys",
    {
      usage: "tapedeck keys create [--namespace <ns>] [--label <k>=<v>]… [--data <dir>] [--store <dir or postgres://… URL>]",
      summary: "Creates an API key in a server's data folder, printed once.",
      load: async () => (await import("./commands/keys.js")).keysCommand,
    },
  ],
  [
    "credentials",
    {
      usage:
        "tapedeck credentials set <name> --kind bearer|headers|basic|query --host <pattern>… (--toolset <id> [--namespace <ns>] | --run <id>) [--param <query name>] [--from-env <VAR>] [--expires-at <ISO time> | --expires-in <duration>] [--data <dir>]\n" +
        "  tapedeck credentials list | delete <name> (--toolset <id> [--namespace <ns>] | --run <id>) | rotate-key   [--data <dir>]",
      summary: "Sets, lists, deletes credentials of the vault, or rotates its master key.",
      load: async () => (await import("./commands/credentials.js")).credentialsCommand,
    },
  ],
]);
