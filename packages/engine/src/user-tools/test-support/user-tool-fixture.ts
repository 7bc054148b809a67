import type { JsonObject, JsonValue, PinnedTool } from "@tapedeck/protocol";
import type { ToolDefinition } from "../../library/tool-definition.js";
import { ScriptChecker } from "../../script/checker.js";
import type { CredentialResolver } from "../../secrets/credential-resolver.js";
import { HttpToolSource } from "../../sources/http/http-tool-source.js";
import { pinHttpTool } from "../../toolset/pin-http.js";
import type { ToolOutcome } from "../../sources/tool-source.js";
import { tableResolver } from "../../test-support/loopback-http.js";
import type { UserToolGrants } from "../../toolset/user-tool-grants.js";
import type { UserToolHost } from "../user-tool-host.js";
import type { UserToolLimits } from "../../toolset/user-tool-limits.js";
import { registerUserTool, type UserTool } from "../user-tool-registration.js";

/**
 * What the engine's wiring will provide a user tool, made of real parts for the tests: `fetch`
 * through the real `http` tool source (allow-list = the grant's hosts, SSRF checks, pinned
 * address) to a loopback server reached by the test-only allowance and a resolver mapping test
 * names to 127.0.0.1, with a credential resolver that injects `API_KEY` for the named host.
 */

export const SECRET_VALUE = "sk-live-4f9c2a7e1b8d3f6a0c5e9b2d7a4f1c8e";

export const TEST_HOSTS = ["api.test.example", "other.test.example"];

export function httpSource(): HttpToolSource {
  const credentials: CredentialResolver = (_run, host, origin, name) => {
    if (name === undefined) return Promise.resolve({ kind: "ok" });
    if (name !== "API_KEY" || host !== "api.test.example") {
      return Promise.resolve({ kind: "failure", failure: { code: "refused", message: `no credential ${name} for ${host}` } });
    }
    return Promise.resolve({
      kind: "ok",
      credential: { name, secret: { kind: "bearer", token: SECRET_VALUE }, origin, secrets: [{ value: SECRET_VALUE, name }] },
    });
  };
  return new HttpToolSource({
    resolver: tableResolver(Object.fromEntries(TEST_HOSTS.map((host) => [host, ["127.0.0.1"]]))),
    unsafeAllowLoopbackForTests: true,
    credentials,
  });
}

let seq = 0;

/** A host whose fetch goes through `source` with the grant's hosts as allow-list, and whose tools are `tools`. */
export function hostFor(
  source: HttpToolSource,
  tool: UserTool,
  tools: Readonly<Record<string, (args: JsonValue) => ToolOutcome>> = {},
  extra: Partial<UserToolHost> = {},
): UserToolHost & { readonly fetched: string[]; readonly invoked: string[] } {
  const fetched: string[] = [];
  const invoked: string[] = [];
  const allow = [...new Set((tool.grants.http ?? []).map((grant) => grant.host))];
  return {
    fetched,
    invoked,
    fetch: (args, key, signal, within) => {
      fetched.push(key);
      seq++;
      return source.call({
        tool: pinHttpTool(allow, {}),
        args,
        runId: "run_user_tool",
        seq,
        idempotencyKey: key,
        attempt: 1,
        traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
        signal,
        targetCheck: within,
      });
    },
    invoke: (name, args, key) => {
      invoked.push(`${key} ${name}`);
      const handler = tools[name];
      return Promise.resolve(handler ? handler(args) : { kind: "failure", failure: { code: "unknown_tool", message: name } });
    },
    ...extra,
  };
}

const checker = new ScriptChecker();

export function definition(name: string, inputSchema: JsonObject = { type: "object" }, outputSchema?: JsonObject): ToolDefinition {
  return {
    name,
    description: `The test tool ${name}.`,
    inputSchema,
    ...(outputSchema === undefined ? {} : { outputSchema }),
    risk: "low",
    approval: { kind: "never" },
  };
}

/** Registers a tool that must register; throws with every problem otherwise. */
export function userTool(
  code: string,
  grants: UserToolGrants = {},
  options: {
    readonly limits?: Partial<UserToolLimits>;
    readonly input?: JsonObject;
    readonly output?: JsonObject;
    readonly name?: string;
    readonly toolset?: readonly PinnedTool[];
  } = {},
): UserTool {
  const registration = registerUserTool(
    { definition: definition(options.name ?? "tool", options.input, options.output), code, grants, ...(options.limits ? { limits: options.limits } : {}) },
    options.toolset ?? [],
    checker,
  );
  if (!registration.ok) throw new Error([...registration.problems, ...registration.diagnostics.map((d) => `${d.line}:${d.column} ${d.message}`)].join("\n"));
  return registration.tool;
}

export { checker };
