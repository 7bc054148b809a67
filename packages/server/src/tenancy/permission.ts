/**
 * Whether tenancy lets a caller do something. Tenancy only decides; each face says it its own way
 * (the HTTP API: a 403 `forbidden` with the reason).
 */
export type Permission =
  /** Allowed. */
  | { readonly ok: true }
  /** Refused; `reason` says why and what the caller could use instead. */
  | { readonly ok: false; readonly reason: string };
