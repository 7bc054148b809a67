import type { FastifyInstance } from "fastify";
import type { CredentialInfo, CredentialScope, CredentialSecret } from "@tapedeck/engine";
import {
  credential,
  credentialList,
  credentialParams,
  credentialScopeQuery,
  deleted,
  rotatedKey,
  rotateKeyRequest,
  setCredentialRequest,
  type Credential,
  type CredentialKind,
  type CredentialList,
  type CredentialParams,
  type CredentialScopeFields,
  type Deleted,
  type RotatedKey,
  type SetCredentialRequest,
} from "@tapedeck/protocol/api";
import { ApiError, runNotFound } from "../api-error.js";
import type { Caller } from "../auth/caller.js";
import { credentialAccess } from "../../tenancy/credential-access.js";
import { mayReachToolset } from "../../tenancy/toolset-access.js";
import { errors } from "../schemas.js";
import type { ServerContext } from "../../runtime/server-context.js";
import { callerOf } from "./request-caller.js";

/**
 * Credentials of the vault over HTTP. A value is accepted by `POST /credentials` and goes
 * nowhere else: no answer carries it, and no error message quotes it (they name the field and
 * what is wrong with it). Who may manage which credential: `tenancy/credential-access.ts`.
 */

/** The longest string a credential's value may hold: far above any real token. */
const VALUE_MAX_LENGTH = 16 * 1024;
/** The most headers of a `headers` credential. */
const MAX_HEADERS = 32;

export function credentialRoutes(app: FastifyInstance, context: ServerContext): void {
  app.post<{ Body: SetCredentialRequest }>(
    "/credentials",
    {
      schema: {
        summary: "Set a credential (create, or replace the one of that name in that scope)",
        description:
          "The `http` tool injects it into a script's `fetch` to the hosts it is bound to; the script never sees it. `value` by kind: bearer, the token (a string); headers, an object of header names to values; basic, `{ username, password }`; query, `{ param, value }`. The value is never returned by any route. Scope: `toolset` (with `namespace` for one end user) or `run`.",
        tags: ["credentials"],
        body: setCredentialRequest,
        response: { 200: credential, ...errors(400, 401, 403, 404, 422) },
      },
    },
    async (request): Promise<Credential> => {
      const caller = callerOf(request);
      const { name, kind, value, hosts, expiresAt } = request.body;
      // The schema holds `value` to a string or an object only; `secretOf` checks it against `kind`.
      const secret = secretOf(kind, value);
      const scope = await placed(context, caller, request.body);
      return view(await context.engine().credentials.set({ name, scope, hosts, secret, ...(expiresAt === undefined ? {} : { expiresAt }) }));
    },
  );

  app.get(
    "/credentials",
    {
      schema: {
        summary: "The credentials in the caller's scope, oldest first, without values",
        tags: ["credentials"],
        response: { 200: credentialList, ...errors(401, 403) },
      },
    },
    async (request): Promise<CredentialList> => {
      const { scope } = callerOf(request);
      const all = await context.engine().credentials.list();
      const visible = await Promise.all(all.map(async (c) => (await credentialAccess(scope, c.scope, context.store)).ok));
      return { credentials: all.filter((_, i) => visible[i]).map(view) };
    },
  );

  app.delete<{ Params: CredentialParams; Querystring: CredentialScopeFields }>(
    "/credentials/:name",
    {
      schema: {
        summary: "Delete a credential",
        description:
          "The credential of that name in the scope the query names (`toolset` [+ `namespace`], or `run`). One outside the caller's scope answers exactly like a missing one.",
        tags: ["credentials"],
        params: credentialParams,
        querystring: credentialScopeQuery,
        response: { 200: deleted, ...errors(400, 401, 403, 404) },
      },
    },
    async (request): Promise<Deleted> => {
      const caller = callerOf(request);
      const { name } = request.params;
      const scope = scopeOf(caller, request.query);
      const engine = context.engine();
      if (!(await credentialAccess(caller.scope, scope, context.store)).ok || !(await engine.credentials.delete(scope, name))) {
        throw new ApiError("not_found", `No credential ${name} in that scope.`);
      }
      return { deleted: true };
    },
  );

  app.post(
    "/credentials/rotate-key",
    {
      schema: {
        summary: "Rotate the master key",
        description:
          "With a key file: re-encrypts every credential under a new master key, in one commit, then replaces the key file. With `TAPEDECK_MASTER_KEY` (every node on a store URL): reseals, in one commit, every credential not under it (opened with `TAPEDECK_MASTER_KEY_PREVIOUS`); run it once, on any node, after every node was restarted with the new key and the old one as previous. An unlimited API key only. Refused (422), changing nothing, when a credential opens with none of the keys at hand.",
        tags: ["credentials"],
        body: rotateKeyRequest,
        response: { 200: rotatedKey, ...errors(400, 401, 403, 422) },
      },
    },
    async (request): Promise<RotatedKey> => {
      if (!callerOf(request).operator)
        throw new ApiError("forbidden", "Only an unlimited API key may rotate the master key: it re-encrypts every tenant's credentials.");
      return context.engine().credentials.rotate();
    },
  );
}

/** The scope a request names, or a 400 saying what to give. A caller limited to a namespace gets it by default. */
function scopeOf(caller: Caller, fields: CredentialScopeFields): CredentialScope {
  if (fields.run !== undefined) {
    if (fields.toolset !== undefined || fields.namespace !== undefined)
      throw new ApiError("invalid_request", "`run` is a scope of its own: give it without `toolset` or `namespace`.");
    return { kind: "run", runId: fields.run };
  }
  if (fields.toolset === undefined)
    throw new ApiError("invalid_request", "Give the credential's scope: `toolset` (with `namespace` for one end user), or `run`.");
  const ns = fields.namespace ?? caller.scope.namespace;
  return ns === undefined ? { kind: "toolset", toolsetId: fields.toolset } : { kind: "namespace", toolsetId: fields.toolset, namespace: ns };
}

/** The scope a new credential goes in, if the caller may put one there (403 if not; 404 for a toolset or run it cannot find). */
async function placed(context: ServerContext, caller: Caller, fields: CredentialScopeFields): Promise<CredentialScope> {
  const scope = scopeOf(caller, fields);
  const access = await credentialAccess(caller.scope, scope, context.store);
  if (scope.kind === "run") {
    if (!access.ok) throw runNotFound(scope.runId);
    return scope;
  }
  if (!access.ok) throw new ApiError("forbidden", access.reason);
  // A toolset outside the caller's reach is answered as a missing one.
  if ((await context.store.getToolset(scope.toolsetId)) === undefined || !(await mayReachToolset(context.store, caller, scope.toolsetId)))
    throw new ApiError("not_found", `No toolset ${scope.toolsetId}. Register it first (POST /v1/toolsets).`);
  return scope;
}

/** The secret of a request, checked for its kind. Messages name fields, never values. */
function secretOf(kind: CredentialKind, value: unknown): CredentialSecret {
  switch (kind) {
    case "bearer":
      return { kind, token: text(value, "body.value (the token)") };
    case "basic": {
      const fields = exactly(value, ["username", "password"], 'an object { "username": …, "password": … }');
      return { kind, username: text(fields.username, "body.value.username"), password: text(fields.password, "body.value.password") };
    }
    case "query": {
      const fields = exactly(value, ["param", "value"], 'an object { "param": <the query parameter\'s name>, "value": … }');
      return { kind, param: text(fields.param, "body.value.param"), value: text(fields.value, "body.value.value") };
    }
    case "headers": {
      if (!isObject(value)) throw invalid('body.value must be an object of header names to values, { "X-Api-Key": … }.');
      const entries = Object.entries(value);
      if (entries.length > MAX_HEADERS) throw invalid(`body.value has more than ${MAX_HEADERS} headers.`);
      return { kind, headers: Object.fromEntries(entries.map(([header, v]) => [header, text(v, "each header's value in body.value")])) };
    }
  }
}

function exactly(value: unknown, keys: readonly string[], shape: string): Record<string, unknown> {
  if (!isObject(value) || Object.keys(value).length !== keys.length || !keys.every((k) => Object.hasOwn(value, k)))
    throw invalid(`body.value must be ${shape} and nothing else.`);
  return value;
}

function text(value: unknown, what: string): string {
  if (typeof value !== "string") throw invalid(`${what} must be a string.`);
  if (value.length > VALUE_MAX_LENGTH) throw invalid(`${what} is longer than ${VALUE_MAX_LENGTH} characters.`);
  return value;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function invalid(message: string): ApiError {
  return new ApiError("invalid_request", message);
}

function view(info: CredentialInfo): Credential {
  const base = {
    name: info.name,
    kind: info.kind,
    hosts: info.hosts,
    ...(info.expiresAt === undefined ? {} : { expiresAt: info.expiresAt }),
    createdAt: info.createdAt,
    updatedAt: info.updatedAt,
  };
  switch (info.scope.kind) {
    case "toolset":
      return { ...base, toolset: info.scope.toolsetId };
    case "namespace":
      return { ...base, toolset: info.scope.toolsetId, namespace: info.scope.namespace };
    case "run":
      return { ...base, run: info.scope.runId };
  }
}
