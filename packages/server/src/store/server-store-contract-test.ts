/**
 * What the server's store suites share (as `@tapedeck/engine/testing`'s harness does for the
 * engine's): fresh server stores on a fresh engine store for each test, cleaned up however it ends.
 */
import { it } from "node:test";
import type { Store } from "@tapedeck/engine";
import type { ServerStores } from "./server-stores.js";

export interface OpenedServerStores {
  /** The engine's store the server's stores share a database with. */
  readonly store: Store;
  readonly server: ServerStores;
  /** Opens the same data again, after the test closed `store`. Absent for stores that cannot. */
  readonly reopen?: () => Promise<{ readonly store: Store; readonly server: ServerStores }>;
  /** Closes what is still open and deletes the data. */
  readonly cleanup: () => Promise<void>;
}

export type ServerStoreFactory = () => Promise<OpenedServerStores>;

export type ServerContractTest = (title: string, body: (opened: OpenedServerStores) => Promise<void>) => void;

/** A test that waits on a write that never settles fails instead of hanging the run. */
const TEST_TIMEOUT_MS = 20_000;

export function serverContractTest(open: ServerStoreFactory): ServerContractTest {
  return (title, body) => {
    void it(title, { timeout: TEST_TIMEOUT_MS }, async () => {
      const opened = await open();
      try {
        await body(opened);
      } finally {
        await opened.cleanup();
      }
    });
  };
}
