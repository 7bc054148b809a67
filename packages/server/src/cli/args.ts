import { parseArgs } from "node:util";
import { namespaceError } from "@tapedeck/protocol/api";

/** A mistake on the command line: printed with the command's usage, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UsageError";
  }
}

/** The data folder when neither `--data` nor `TAPEDECK_DATA` names one. */
export const BUILTIN_DATA_DIR = ".tapedeck";
/** Names the data folder of every command that is given no `--data`. */
export const DATA_ENV = "TAPEDECK_DATA";

/** The data folder of a command given no `--data`: `TAPEDECK_DATA`, else `./.tapedeck`. */
export function defaultDataDir(): string {
  return process.env[DATA_ENV] || BUILTIN_DATA_DIR;
}

/**
 * Whether a command printed for pasting may leave `--data` out: only for `./.tapedeck` with no
 * `TAPEDECK_DATA` (which may have been set for this one command and be gone from the next).
 */
export function dataFlagImplied(data: string): boolean {
  return data === BUILTIN_DATA_DIR && !process.env[DATA_ENV];
}

type Options = NonNullable<NonNullable<Parameters<typeof parseArgs>[0]>["options"]>;

export interface Parsed {
  readonly values: { readonly data: string; readonly [flag: string]: string | boolean | undefined };
  readonly positionals: readonly string[];
}

/** Parses a command's arguments (every command takes `--data`, default `defaultDataDir()`); unknown flags are a `UsageError`. */
export function parse(args: readonly string[], options: Options): Parsed {
  try {
    const parsed = parseArgs({
      args: [...args],
      options: { ...options, data: { type: "string", default: defaultDataDir() } },
      allowPositionals: true,
      strict: true,
    });
    return parsed;
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

export function optionalFlag(value: string | boolean | undefined, flag: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== "string") throw new UsageError(`--${flag} needs a value`);
  return value;
}

/** `--namespace`, refused (naming what is wrong) unless it is one end user's id spelled one way (`namespaceProblem`). */
export function namespaceFlag(value: string | boolean | undefined): string | undefined {
  const namespace = optionalFlag(value, "namespace");
  if (namespace === undefined) return undefined;
  if (namespace === "") throw new UsageError("--namespace needs a value: the end user's id");
  const problem = namespaceError(namespace, "--namespace");
  if (problem !== undefined) throw new UsageError(problem);
  return namespace;
}

export function requireFlag(value: string | boolean | undefined, flag: string): string {
  if (typeof value !== "string" || value.length === 0) throw new UsageError(`missing --${flag}`);
  return value;
}

/** Positional arguments past the first `count` are a `UsageError` (a payload given without `--payload` must not be dropped silently). */
export function noExtraArguments(positionals: readonly string[], count: number): void {
  const extra = positionals[count];
  if (extra !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(extra)}`);
}
