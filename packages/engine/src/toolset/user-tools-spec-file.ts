import type { JsonObject, UserToolFileSpec, UserToolGrantsSpec, UserToolLimitsSpec } from "@tapedeck/protocol";
import { grantsProblems, type UserToolGrants } from "./user-tool-grants.js";
import { limitsProblems } from "./user-tool-limits.js";
import { nullObject } from "../util/null-object.js";
import { checkGroupName, checkToolName, ToolsetSpecError } from "./spec-error.js";

/**
 * Reads the `userTools` entry of a toolset file: sandboxed user tools by group, then by name,
 * each `{ "description", "code", "inputSchema", "outputSchema", "grants", "limits" }`. Every
 * field is checked here, so a mistake fails at registration and says where; the code itself is
 * type-checked when the toolset is registered (`user-tools/check-user-tools.ts`), against
 * exactly what it is granted.
 */

const TOOL_KEYS = ["description", "code", "wasm", "entry", "inputSchema", "outputSchema", "grants", "limits"] as const;
const GRANT_KEYS = ["http", "secrets", "workspace", "tools"] as const;
const HTTP_GRANT_KEYS = ["host", "pathPrefix", "methods"] as const;

type Obj = Record<string, unknown>;

const EXAMPLE = `{ "<group>": { "<name>": { "description": "…", "code": "export default async (input: { q: string }) => …", "inputSchema": { … }, "grants": { "http": [{ "host": "api.example.com", "pathPrefix": "/v1/", "methods": ["GET"] }] } } } }`;

export function parseUserToolsSpec(value: unknown): Record<string, Record<string, UserToolFileSpec>> | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value)) throw new ToolsetSpecError(`userTools must be an object: ${EXAMPLE}`);
  const groups: Record<string, Record<string, UserToolFileSpec>> = nullObject();
  for (const [group, tools] of Object.entries(value)) {
    checkGroupName(group, "userTools");
    if (!isObject(tools)) throw new ToolsetSpecError(`userTools.${group} must be an object of tools by name`);
    const byName: Record<string, UserToolFileSpec> = nullObject();
    for (const [name, tool] of Object.entries(tools)) {
      checkToolName(name, `userTools.${group}`);
      byName[name] = parseUserTool(tool, `userTools.${group}["${name}"]`);
    }
    groups[group] = byName;
  }
  return groups;
}

function parseUserTool(value: unknown, where: string): UserToolFileSpec {
  if (!isObject(value)) throw new ToolsetSpecError(`${where} must be an object with code, and description, inputSchema, outputSchema, grants, limits`);
  checkKeys(value, TOOL_KEYS, where);
  const { description, code, inputSchema, outputSchema } = value;
  if (description !== undefined && typeof description !== "string") throw new ToolsetSpecError(`${where}.description must be a string`);
  const { wasm, entry } = value;
  if (wasm !== undefined) {
    if (code !== undefined) throw new ToolsetSpecError(`${where} has both code and wasm; a tool is one or the other`);
    if (typeof wasm !== "string" || wasm === "" || !/^[A-Za-z0-9+/]+={0,2}$/.test(wasm))
      throw new ToolsetSpecError(`${where}.wasm must be a WebAssembly module in base64`);
    if (entry !== undefined && (typeof entry !== "string" || !/^[A-Za-z_][A-Za-z0-9_]{0,63}$/.test(entry)))
      throw new ToolsetSpecError(`${where}.entry must be the name of the function the module exports (default run)`);
  } else if (typeof code !== "string" || code.trim() === "") {
    throw new ToolsetSpecError(
      `${where}.code must be the tool's TypeScript: a module whose default export takes the arguments and returns the result (or give wasm: a WebAssembly module in base64)`,
    );
  } else if (entry !== undefined) throw new ToolsetSpecError(`${where}.entry is for wasm tools only`);
  for (const [key, schema] of [
    ["inputSchema", inputSchema],
    ["outputSchema", outputSchema],
  ] as const) {
    if (schema !== undefined && !isObject(schema)) throw new ToolsetSpecError(`${where}.${key} must be a JSON Schema object such as { "type": "object" }`);
  }
  const grants = parseGrants(value.grants, `${where}.grants`);
  const limits = parseLimits(value.limits, `${where}.limits`);
  return {
    ...(typeof code === "string" ? { code } : {}),
    ...(typeof wasm === "string" ? { wasm, ...(typeof entry === "string" ? { entry } : {}) } : {}),
    ...(description === undefined ? {} : { description }),
    ...(inputSchema === undefined ? {} : { inputSchema: inputSchema as JsonObject }),
    ...(outputSchema === undefined ? {} : { outputSchema: outputSchema as JsonObject }),
    ...(grants === undefined ? {} : { grants }),
    ...(limits === undefined ? {} : { limits }),
  };
}

function parseGrants(value: unknown, where: string): UserToolGrantsSpec | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value))
    throw new ToolsetSpecError(`${where} must be an object with http, secrets, workspace, tools (each optional: nothing is granted unless listed)`);
  checkKeys(value, GRANT_KEYS, where);
  const { http, secrets, tools } = value;
  if (http !== undefined) {
    if (!Array.isArray(http))
      throw new ToolsetSpecError(`${where}.http must be an array such as [{ "host": "api.example.com", "pathPrefix": "/v1/", "methods": ["GET"] }]`);
    http.forEach((grant: unknown, i) => {
      if (!isObject(grant)) throw new ToolsetSpecError(`${where}.http[${i}] must be an object with host, pathPrefix, methods`);
      checkKeys(grant, HTTP_GRANT_KEYS, `${where}.http[${i}]`);
      if (typeof grant.host !== "string") throw new ToolsetSpecError(`${where}.http[${i}].host must be a host such as "api.example.com"`);
      if (grant.pathPrefix !== undefined && typeof grant.pathPrefix !== "string")
        throw new ToolsetSpecError(`${where}.http[${i}].pathPrefix must be a path such as "/v1/"`);
      if (grant.methods !== undefined && !(Array.isArray(grant.methods) && grant.methods.every((m) => typeof m === "string")))
        throw new ToolsetSpecError(`${where}.http[${i}].methods must be an array of methods such as ["GET", "POST"]`);
    });
  }
  for (const [key, list] of [
    ["secrets", secrets],
    ["tools", tools],
  ] as const) {
    if (list !== undefined && !(Array.isArray(list) && list.every((item) => typeof item === "string")))
      throw new ToolsetSpecError(`${where}.${key} must be an array of names`);
  }
  const grants = value as UserToolGrantsSpec;
  const problems = grantsProblems(grants as UserToolGrants);
  if (problems.length > 0) throw new ToolsetSpecError(problems.map((problem) => `${where}.${problem}`).join("; "));
  return grants;
}

function parseLimits(value: unknown, where: string): UserToolLimitsSpec | undefined {
  if (value === undefined) return undefined;
  if (!isObject(value)) throw new ToolsetSpecError(`${where} must be an object of limits such as { "fuel": 50000, "deadlineMs": 30000 }`);
  const problems = limitsProblems(value).map((problem) => problem.replace(/^limits\./, `${where}.`));
  if (problems.length > 0) throw new ToolsetSpecError(problems.join("; "));
  return value;
}

function isObject(value: unknown): value is Obj {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function checkKeys(value: Obj, allowed: readonly string[], where: string): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw new ToolsetSpecError(`${where} has an unknown key "${key}"; allowed keys: ${allowed.join(", ")}`);
  }
}
