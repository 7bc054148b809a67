import type { McpServerSpec } from "@tapedeck/protocol";
import { nullObject } from "../util/null-object.js";
import { checkGroupName, ToolsetSpecError } from "./spec-error.js";

/**
 * Reads the `mcpServers` of a toolset file: `{ "<group>": { "url", "headers" } }` for Streamable
 * HTTP, `{ "<group>": { "command", "args", "env" } }` for stdio, plus the per-server options.
 *
 * Header and env values are kept with the toolset, so a credential must be a reference to
 * Tapedeck's environment (`"Bearer ${GITHUB_TOKEN}"`), expanded when connecting: a literal
 * value where a credential goes (Authorization, Cookie, *TOKEN*, *SECRET*, *KEY*, *PASSWORD*)
 * is refused rather than written to the data folder.
 */
const COMMON_KEYS = ["prefix", "optional", "callTimeoutMs", "clientInfo"];
const HTTP_KEYS = ["url", "headers", "credential", ...COMMON_KEYS];
const STDIO_KEYS = ["command", "args", "env", "cwd", ...COMMON_KEYS];
const SECRET_HEADER = /^(authorization|proxy-authorization|cookie|x-api-key|api-key)$/i;
const SECRET_ENV = /(TOKEN|SECRET|KEY|PASSWORD|PASSWD|CREDENTIAL)/i;
const REFERENCE = /\$\{[A-Za-z_][A-Za-z0-9_]*\}/;

type Obj = Record<string, unknown>;

function isObject(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stringMap(value: unknown, where: string, secret: RegExp): Record<string, string> | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value)) throw new ToolsetSpecError(`${where} must be an object of strings`);
  for (const [key, item] of Object.entries(value)) {
    if (typeof item !== "string") throw new ToolsetSpecError(`${where}.${key} must be a string`);
    if (secret.test(key) && !REFERENCE.test(item)) {
      throw new ToolsetSpecError(
        `${where}.${key} looks like a credential: write it as a reference to Tapedeck's environment, such as "Bearer \${MY_TOKEN}" (an unlimited key registers those), or, for a server reached by URL, name a vault credential ("credential": "NAME"), so the secret is never stored with the toolset: anyone who knows a toolset's id can read it`,
      );
    }
  }
  return value as Record<string, string>;
}

function checkKeys(value: Obj, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw new ToolsetSpecError(`${where} has an unknown key "${key}"; allowed keys: ${allowed.join(", ")}`);
  }
}

function parseOptions(value: Obj, where: string): void {
  if (value.prefix !== undefined && (typeof value.prefix !== "string" || !/^[A-Za-z0-9_-]*$/.test(value.prefix))) {
    throw new ToolsetSpecError(`${where}.prefix must be letters, digits, _ or -`);
  }
  if (value.optional !== undefined && typeof value.optional !== "boolean") throw new ToolsetSpecError(`${where}.optional must be true or false`);
  if (value.callTimeoutMs !== undefined && (!Number.isInteger(value.callTimeoutMs) || (value.callTimeoutMs as number) <= 0)) {
    throw new ToolsetSpecError(`${where}.callTimeoutMs must be a positive integer (milliseconds)`);
  }
  const info = value.clientInfo;
  if (info !== undefined && !(isObject(info) && typeof info.name === "string" && typeof info.version === "string")) {
    throw new ToolsetSpecError(`${where}.clientInfo must be { "name": "…", "version": "…" }`);
  }
}

function parseServer(value: unknown, where: string): McpServerSpec {
  if (!isObject(value)) throw new ToolsetSpecError(`${where} must be an object with "url" (Streamable HTTP) or "command" (stdio)`);
  parseOptions(value, where);
  if (typeof value.url === "string") {
    checkKeys(value, HTTP_KEYS, where);
    let url: URL;
    try {
      url = new URL(value.url);
    } catch {
      throw new ToolsetSpecError(`${where}.url is not a URL: "${value.url}"`);
    }
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new ToolsetSpecError(`${where}.url must be http or https`);
    if (url.username || url.password) throw new ToolsetSpecError(`${where}.url must not carry a user or password; use headers with an environment reference`);
    stringMap(value.headers, `${where}.headers`, SECRET_HEADER);
    if (value.credential !== undefined && (typeof value.credential !== "string" || !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/.test(value.credential))) {
      throw new ToolsetSpecError(`${where}.credential must be the name of a vault credential (letters, digits, _ . -), such as "GITHUB"`);
    }
    return value as unknown as McpServerSpec;
  }
  if (typeof value.command === "string" && value.command.length > 0) {
    checkKeys(value, STDIO_KEYS, where);
    if (value.args !== undefined && !(Array.isArray(value.args) && value.args.every((a) => typeof a === "string"))) {
      throw new ToolsetSpecError(`${where}.args must be an array of strings`);
    }
    if (value.cwd !== undefined && typeof value.cwd !== "string") throw new ToolsetSpecError(`${where}.cwd must be a string`);
    stringMap(value.env, `${where}.env`, SECRET_ENV);
    return value as unknown as McpServerSpec;
  }
  throw new ToolsetSpecError(`${where} needs "url" (Streamable HTTP) or "command" (stdio)`);
}

export function parseMcpServers(value: unknown): Record<string, McpServerSpec> | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value)) throw new ToolsetSpecError(`mcpServers must be an object: { "<group>": { "url": … } }`);
  const servers: Record<string, McpServerSpec> = nullObject();
  for (const [group, server] of Object.entries(value)) {
    checkGroupName(group, "mcpServers");
    servers[group] = parseServer(server, `mcpServers.${group}`);
  }
  return servers;
}
