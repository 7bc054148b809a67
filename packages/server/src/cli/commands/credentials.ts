import { join } from "node:path";
import {
  CREDENTIAL_KINDS,
  credentialReach,
  CredentialVault,
  describeScope,
  EngineError,
  MasterKeySource,
  parseDuration,
  openStore,
  type CredentialKind,
  type CredentialScope,
  type CredentialSecret,
  type Engine,
  type RegisteredToolset,
} from "@tapedeck/engine";
import { namespaceFlag, optionalFlag, parse, UsageError } from "../args.js";
import { withEngine } from "../context.js";
import { requireDataFolder } from "../data-folder.js";
import { storeLocation } from "../store-location.js";
import { followRun, printSettled } from "../follow-run.js";
import type { Output } from "../print.js";

/**
 * Credentials of the vault in the data folder (or the store `TAPEDECK_STORE` names). A value is read from stdin or from the
 * environment variable `--from-env` names, never from an argument (arguments show in `ps` and
 * shell history), and is never printed: `list` shows names, kinds, scopes and hosts.
 * The value's form by kind: bearer, the token; basic, `<user>:<password>`; query, the value
 * (with `--param` its name); headers, a JSON object of header names to values.
 */
export async function credentialsCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, {
    kind: { type: "string" },
    host: { type: "string", multiple: true },
    toolset: { type: "string" },
    namespace: { type: "string" },
    run: { type: "string" },
    param: { type: "string" },
    "from-env": { type: "string" },
    "expires-at": { type: "string" },
    "expires-in": { type: "string" },
  });
  const [verb, name, extra] = positionals;
  // Not quoted: an extra argument may well be a secret given by mistake.
  if (extra !== undefined) throw new UsageError("unexpected extra argument (not shown); a value is read from stdin or --from-env, never from an argument");
  // TAPEDECK_STORE (a postgres:// URL) names the store, as for every command; its vault's key
  // then comes from TAPEDECK_MASTER_KEY (and TAPEDECK_MASTER_KEY_PREVIOUS), as on its nodes.
  const location = storeLocation(undefined, values.data);
  if (location === values.data) requireDataFolder(values.data);
  const store = await openStore(location);
  const vault = new CredentialVault(store.credentials, new MasterKeySource(location === values.data ? { keyFile: join(values.data, "master.key") } : {}));
  try {
    switch (verb) {
      case "set": {
        const kind = parseKind(values.kind);
        const scope = parseScope(values);
        const secret = secretOf(kind, await readValue(optionalFlag(values["from-env"], "from-env"), out), optionalFlag(values.param, "param"));
        // Through an engine: calls parked because the old credential was refused are sent again
        // now, and followed here like `tapedeck approve` follows its run.
        return withEngine(values.data, undefined, async (engine) => {
          // A parked run this process cannot continue (it needs host tools) is said so, not hidden.
          engine.on((event) => {
            if (event.type === "engine.error") out.stderr(`tapedeck: ${event.error instanceof Error ? event.error.message : String(event.error)}`);
          });
          const expiresAt = expiryOf(optionalFlag(values["expires-at"], "expires-at"), optionalFlag(values["expires-in"], "expires-in"));
          const toolset = await scopeToolset(engine, scope, values.data);
          const info = await engine.credentials.set({
            name: requireName(name),
            scope,
            hosts: hostsOf(values),
            secret,
            ...(expiresAt === undefined ? {} : { expiresAt }),
          });
          out.stderr(`Set ${info.kind} credential ${info.name} for ${describeScope(info.scope)}, sent to ${info.hosts.join(", ")}.`);
          const reach = credentialReach(toolset.toolset, info);
          if (reach.kind === "unreached") out.stderr(unreachedWarning(info.name, toolset.id, info.hosts, reach.destinations));
          let status = 0;
          for (const runId of engine.executing()) {
            out.stderr(`run ${runId}: a call that waited for this credential was sent again`);
            status = Math.max(
              status,
              printSettled(out, runId, await followRun(engine, runId, out, { until: "park", flags: { data: values.data } }), { data: values.data }),
            );
          }
          return status;
        });
      }
      case "list":
        for (const c of await vault.list())
          out.stdout(
            `${c.name}\t${c.kind}\t${describeScope(c.scope)}\t${c.hosts.join(",")}${c.expiresAt === undefined ? "" : `\texpires ${new Date(c.expiresAt).toISOString()}`}`,
          );
        return 0;
      case "delete": {
        const deleted = await vault.delete(parseScope(values), requireName(name));
        out.stderr(deleted ? `Deleted ${name}.` : `No credential ${name} in that scope; nothing was deleted.`);
        return deleted ? 0 : 1;
      }
      case "rotate-key": {
        const { keyId, rewrapped } = await vault.rotate();
        out.stderr(`Rotated the master key (now ${keyId}); ${rewrapped} credential(s) re-encrypted.`);
        return 0;
      }
      default:
        throw new UsageError(`unknown credentials command "${verb ?? ""}"`);
    }
  } finally {
    await store.close();
  }
}

/**
 * The toolset whose runs a credential of `scope` serves: the scope's toolset, or the run's.
 * A toolset (or run) this data folder does not have is refused (`not_found`) before anything is stored.
 */
async function scopeToolset(engine: Engine, scope: CredentialScope, data: string): Promise<RegisteredToolset> {
  const toolsetId = scope.kind === "run" ? (await engine.getRun(scope.runId)).toolsetId : scope.toolsetId;
  try {
    return await engine.toolset(toolsetId);
  } catch (error) {
    if (!(error instanceof EngineError) || error.code !== "not_found") throw error;
    throw new EngineError(
      "not_found",
      `No toolset ${toolsetId} in the data folder ${data}; nothing was stored. Register the toolset in this data folder first (\`tapedeck toolset register <file> --data ${data}\`, or POST /v1/toolsets to its server) and give the id it prints.`,
    );
  }
}

/** Said when a credential was stored but no request of the toolset's runs would carry it. */
function unreachedWarning(name: string, toolsetId: string, hosts: readonly string[], destinations: readonly string[]): string {
  const where =
    destinations.length === 0
      ? "it sends no HTTP request (it has no `http.allow` and no MCP server naming the credential)"
      : `its requests go to ${destinations.join(", ")}`;
  return `warning: ${name} is bound to ${hosts.join(", ")}, but toolset ${toolsetId} never sends a request there: ${where}. It is stored, and not sent until a host matches; set it again with --host <one of those hosts>.`;
}

/** `--expires-at` (an ISO time) or `--expires-in` (a duration from now), as ms since the epoch. */
function expiryOf(at: string | undefined, within: string | undefined): number | undefined {
  if (at !== undefined && within !== undefined) throw new UsageError("give --expires-at or --expires-in, not both");
  if (within !== undefined) {
    try {
      return Date.now() + parseDuration(within, "--expires-in");
    } catch (error) {
      throw new UsageError((error as Error).message);
    }
  }
  if (at === undefined) return undefined;
  const time = Date.parse(at);
  if (Number.isNaN(time)) throw new UsageError(`--expires-at must be an ISO time such as 2027-01-31T00:00:00Z; got ${JSON.stringify(at)}`);
  return time;
}

function requireName(name: string | undefined): string {
  if (name === undefined) throw new UsageError("missing the credential's name");
  return name;
}

function parseKind(value: string | boolean | undefined): CredentialKind {
  const kind = optionalFlag(value, "kind");
  if (!CREDENTIAL_KINDS.includes(kind as CredentialKind)) throw new UsageError(`--kind must be one of ${CREDENTIAL_KINDS.join(", ")}`);
  return kind as CredentialKind;
}

function hostsOf(values: Readonly<Record<string, unknown>>): string[] {
  const hosts = values.host;
  const list = hosts === undefined ? [] : Array.isArray(hosts) ? (hosts as unknown[]) : [hosts];
  if (list.length === 0) throw new UsageError("missing --host: the hosts the credential is sent to (e.g. api.github.com, *.example.com)");
  return list.map(String);
}

/** `--run` alone, or `--toolset` with an optional `--namespace`. */
function parseScope(values: Readonly<Record<string, string | boolean | undefined>>): CredentialScope {
  const toolset = optionalFlag(values.toolset, "toolset");
  const namespace = namespaceFlag(values.namespace);
  const run = optionalFlag(values.run, "run");
  if (run !== undefined) {
    if (toolset !== undefined || namespace !== undefined) throw new UsageError("--run is a scope of its own: give it without --toolset or --namespace");
    return { kind: "run", runId: run };
  }
  if (toolset === undefined) throw new UsageError("give the scope: --toolset <id> (with --namespace <ns> for one end user), or --run <id>");
  return namespace === undefined ? { kind: "toolset", toolsetId: toolset } : { kind: "namespace", toolsetId: toolset, namespace };
}

/** The value from the environment variable, or stdin; one trailing newline (from `echo` or a file) is dropped. */
async function readValue(fromEnv: string | undefined, out: Output): Promise<string> {
  let text: string;
  if (fromEnv !== undefined) {
    const value = process.env[fromEnv];
    if (value === undefined || value === "") throw new UsageError(`the environment variable ${fromEnv} (--from-env) is not set`);
    text = value;
  } else {
    if (out.readStdin === undefined) throw new UsageError("no value: pipe it on stdin, or name an environment variable with --from-env");
    text = await out.readStdin();
  }
  return text.replace(/\r?\n$/, "");
}

function secretOf(kind: CredentialKind, value: string, param: string | undefined): CredentialSecret {
  if (param !== undefined && kind !== "query") throw new UsageError("--param is only for --kind query");
  switch (kind) {
    case "bearer":
      return { kind, token: value };
    case "basic": {
      const colon = value.indexOf(":");
      if (colon <= 0) throw new UsageError("a basic credential's value is <user>:<password>");
      return { kind, username: value.slice(0, colon), password: value.slice(colon + 1) };
    }
    case "query":
      if (param === undefined) throw new UsageError("--kind query needs --param <the query parameter's name>");
      return { kind, param, value };
    case "headers": {
      let headers: unknown;
      try {
        headers = JSON.parse(value);
      } catch {
        // Never quote the value: it is a secret.
        throw new UsageError('a headers credential\'s value is a JSON object, {"X-Api-Key": "…"}; what was given is not JSON');
      }
      if (typeof headers !== "object" || headers === null || Array.isArray(headers) || !Object.values(headers).every((v) => typeof v === "string")) {
        throw new UsageError("a headers credential's value is a JSON object of header names to string values");
      }
      return { kind, headers: headers as Record<string, string> };
    }
  }
}
