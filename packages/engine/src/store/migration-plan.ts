/**
 * What both migration runners (`migrations.ts` for SQLite, `postgres/pg-migrations.ts`) decide
 * alike, whatever the database: which history table names are allowed, and which migrations a
 * database still lacks given the versions it has applied.
 *
 * Invariants:
 * - A history table name is a plain lower-case identifier: it is written into SQL unquoted.
 * - A database holding a version above the highest this build lists (wherever it is listed: two
 *   changes in flight may land out of order) was written by a newer Tapedeck: the plan refuses it
 *   before anything is changed.
 * - Pending migrations are applied in ascending version order.
 */
export interface Migration {
  readonly version: number;
  readonly name: string;
  readonly sql: string;
}

/** Throws (a misuse) unless `history` can be written into SQL as a table name. */
export function checkHistoryTable(caller: string, history: string): void {
  if (!/^[a-z_]+$/.test(history)) throw new Error(`${caller}: the history table must be a plain lower-case name, not ${JSON.stringify(history)}`);
}

/**
 * The migrations of `list` not in `applied`, oldest first. Throws when `applied` holds a version
 * newer than `list` knows; `database` names it for the message ("The database x.db"), and
 * `history` is named too unless it is `engineHistory`, the engine's own table.
 */
export function pendingMigrations(
  list: readonly Migration[],
  applied: ReadonlySet<number>,
  at: { readonly database: string; readonly history: string; readonly engineHistory: string },
): Migration[] {
  const latest = Math.max(0, ...list.map((migration) => migration.version));
  const unknown = [...applied].filter((version) => version > latest);
  if (unknown.length > 0) {
    throw new Error(
      `${at.database} has schema version ${Math.max(...unknown)}${at.history === at.engineHistory ? "" : ` (in ${at.history})`}, written by a newer Tapedeck; ` +
        `this Tapedeck knows versions up to ${latest}. Upgrade Tapedeck to open it (nothing was changed).`,
    );
  }
  return list.filter((migration) => !applied.has(migration.version)).sort((a, b) => a.version - b.version);
}
