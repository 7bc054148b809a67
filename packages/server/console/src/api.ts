/**
 * The console's client of the /v1 API: the same routes the SDK uses, with the key or token the
 * user signed in with (kept in sessionStorage: gone when the tab closes).
 */

const TOKEN_KEY = "tapedeck.console.token";

export function savedToken(): string | undefined {
  return sessionStorage.getItem(TOKEN_KEY) ?? undefined;
}

export function saveToken(token: string | undefined): void {
  if (token === undefined) sessionStorage.removeItem(TOKEN_KEY);
  else sessionStorage.setItem(TOKEN_KEY, token);
}

/** An error answer of the API, with its code and message as the server wrote them. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export interface RunWait {
  readonly kind: "sleep" | "signal" | "approval" | "parked" | "worker";
  readonly seq: number;
  readonly tool?: string;
  readonly name?: string;
  readonly until?: number;
  readonly args?: Json;
  readonly reason?: string;
  readonly message?: string;
}

export interface Run {
  readonly id: string;
  readonly toolset: string;
  readonly status: string;
  readonly source: string;
  readonly input: Json;
  readonly output?: Json;
  readonly error?: { readonly kind: string; readonly message: string };
  readonly waits?: readonly RunWait[];
  readonly labels: Record<string, string>;
  readonly namespace?: string;
  readonly createdAt: number;
  readonly updatedAt: number;
  readonly journalLength: number;
}

export interface JournalEntry {
  readonly index: number;
  readonly at: number;
  readonly kind: string;
  readonly seq?: number;
  readonly tool?: string;
  readonly [field: string]: Json | undefined;
}

export async function api<T>(token: string, method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
  const response = await fetch(`/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { "content-type": "application/json" }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const parsed: unknown = text === "" ? undefined : JSON.parse(text);
  if (!response.ok) {
    const error = (parsed as { error?: { code?: string; message?: string } } | undefined)?.error;
    throw new ApiFailure(response.status, error?.code ?? "unknown", error?.message ?? `HTTP ${response.status}`);
  }
  return parsed as T;
}

export const STATUSES = ["running", "waiting", "completed", "failed", "cancelled"] as const;
