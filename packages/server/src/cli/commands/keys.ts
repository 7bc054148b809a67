import { openStore } from "@tapedeck/engine";
import { createApiKey } from "../../http/index.js";
import { openServerStores } from "../../store/server-stores.js";
import { namespaceFlag, optionalFlag, parse, UsageError } from "../args.js";
import { requireDataFolder } from "../data-folder.js";
import type { Output } from "../print.js";
import { storeLocation } from "../store-location.js";

/**
 * Creates an API key in the data folder, or the store `--store` / `TAPEDECK_STORE` names (a running server sees it at once) and prints it on
 * stdout, alone, so a script can capture it; what it is limited to goes to stderr. The key is
 * shown this once: only its hash is stored.
 */
export async function keysCommand(args: readonly string[], out: Output): Promise<number> {
  const { values, positionals } = parse(args, { namespace: { type: "string" }, label: { type: "string", multiple: true }, store: { type: "string" } });
  const [verb, extra] = positionals;
  if (verb !== "create") throw new UsageError(`unknown keys command "${verb ?? ""}"`);
  if (extra !== undefined) throw new UsageError(`unexpected argument ${JSON.stringify(extra)}`);
  const namespace = namespaceFlag(values.namespace);
  const labels = parseLabels((values as Readonly<Record<string, unknown>>).label);
  const location = storeLocation(optionalFlag(values.store, "store"), values.data);
  // A key in a folder no server reads would be a key that never works.
  if (location === values.data) requireDataFolder(values.data);
  const store = await openStore(location);
  try {
    const { secret, record } = await createApiKey((await openServerStores(store)).apiKeys, { ...(namespace === undefined ? {} : { namespace }), labels });
    out.stdout(secret);
    const limits = [
      namespace === undefined ? undefined : `namespace "${namespace}"`,
      Object.keys(labels).length === 0
        ? undefined
        : `labels ${Object.entries(labels)
            .map(([k, v]) => `${k}=${v}`)
            .join(", ")}`,
    ].filter(Boolean);
    out.stderr(
      `Created ${record.id}, ${limits.length === 0 ? "not limited (it reaches every run)" : `limited to ${limits.join(" and ")}`}. It is shown this once: only its hash is kept.`,
    );
    return 0;
  } finally {
    await store.close();
  }
}

/** `--label k=v`, repeatable (parseArgs gives an array for a `multiple` flag). */
export function parseLabels(value: unknown): Record<string, string> {
  const items = value === undefined ? [] : Array.isArray(value) ? (value as unknown[]) : [value];
  const labels: Record<string, string> = {};
  for (const item of items) {
    const match = typeof item === "string" ? /^([^=]+)=(.*)$/.exec(item) : null;
    if (!match) throw new UsageError(`--label must be <key>=<value>, not ${JSON.stringify(item)}`);
    const [, key, labelValue] = match as unknown as [string, string, string];
    if (labels[key] !== undefined && labels[key] !== labelValue) throw new UsageError(`--label ${key} is given twice with different values`);
    labels[key] = labelValue;
  }
  return labels;
}
