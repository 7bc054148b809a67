/**
 * Where a command's store is: `--store` (a data folder or a store URL such as
 * `postgres://user:password@host:5432/db`), else `TAPEDECK_STORE`, else the data folder
 * (`--data`). With a store URL the data folder still holds what is the server's own (its signing
 * secret), and the vault's master key comes from `TAPEDECK_MASTER_KEY`.
 */
export const STORE_ENV = "TAPEDECK_STORE";

export function storeLocation(flag: string | undefined, dataDir: string): string {
  return flag ?? (process.env[STORE_ENV] || dataDir);
}

/** Whether `location` is a store URL (not a data folder's path): two letters or more, then a colon. */
export function isStoreUrl(location: string): boolean {
  return /^[A-Za-z][A-Za-z0-9+.-]+:/.test(location) && !location.startsWith("file:");
}
