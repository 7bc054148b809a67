import type { Labels } from "@tapedeck/protocol/api";

/**
 * What a caller may reach: the runs of one namespace (when set) carrying these labels. An
 * unlimited key has neither. A run outside a caller's scope does not exist for it: every
 * route answers for it exactly as for a missing run.
 */
export interface Scope {
  readonly namespace?: string;
  readonly labels: Labels;
}

export const UNLIMITED: Scope = { labels: {} };

/** Whether a run (its namespace and labels) is inside the scope. */
export function sees(scope: Scope, run: { readonly namespace?: string; readonly labels?: Labels }): boolean {
  if (scope.namespace !== undefined && run.namespace !== scope.namespace) return false;
  return Object.entries(scope.labels).every(([key, value]) => run.labels !== undefined && Object.hasOwn(run.labels, key) && run.labels[key] === value);
}

export type Narrowed =
  /** The scope with what was asked added. */
  | { readonly ok: true; readonly scope: Scope }
  /** What was asked contradicts the scope; `message` says how. */
  | { readonly ok: false; readonly message: string };

/**
 * The scope narrowed to a namespace and labels: for placing a new run, minting a token,
 * filtering a list. It may only narrow: another namespace than the scope's, or another value
 * for one of its labels, is a contradiction.
 */
export function narrow(scope: Scope, wanted: { readonly namespace?: string | undefined; readonly labels?: Labels | undefined }): Narrowed {
  if (wanted.namespace !== undefined && scope.namespace !== undefined && wanted.namespace !== scope.namespace) {
    return { ok: false, message: `This key or token is limited to namespace "${scope.namespace}"; it cannot act for "${wanted.namespace}".` };
  }
  for (const [key, value] of Object.entries(wanted.labels ?? {})) {
    // Own labels only: a label key such as `constructor` is not `Object.prototype`'s.
    const limit = Object.hasOwn(scope.labels, key) ? scope.labels[key] : undefined;
    if (limit !== undefined && limit !== value) {
      return { ok: false, message: `This key or token is limited to runs labelled ${key}=${limit}; it cannot use ${key}=${value}.` };
    }
  }
  const namespace = wanted.namespace ?? scope.namespace;
  return { ok: true, scope: { ...(namespace === undefined ? {} : { namespace }), labels: { ...wanted.labels, ...scope.labels } } };
}
