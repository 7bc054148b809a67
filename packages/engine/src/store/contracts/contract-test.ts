/**
 * What every contract suite shares: how a store implementation hands the suites fresh stores,
 * and how each test gets one. Public API for store implementers (`@tapedeck/engine/testing`).
 */
import { it } from "node:test";
import type { TestContext } from "node:test";
import type { Store } from "../store.js";

/** A fresh, empty store for one test, and what the test may do with its data. */
export interface OpenedStore {
  readonly store: Store;
  /** Opens the same data again, after the test closed `store`. Absent for stores that cannot (in memory). */
  readonly reopen?: () => Promise<Store>;
  /**
   * Opens another store on the same data while `store` is open, as another process (another
   * node) would: it hears `store`'s notifications only the way other processes do. Absent for
   * stores nothing else can open (in memory). The suite closes what it opens before `cleanup`.
   */
  readonly peer?: () => Promise<Store>;
  /** Closes what is still open and deletes the data. */
  readonly cleanup: () => Promise<void>;
}

/** Makes a fresh, empty store for each test: what every `describe…Contract` suite takes. */
export type StoreFactory = () => Promise<OpenedStore>;

/** One test of a contract: its body gets a fresh store from the factory, cleaned up however it ends. */
export type ContractTest = (title: string, body: (opened: OpenedStore, t: TestContext) => Promise<void>) => void;

/** A test that waits on a write that never settles fails instead of hanging the run. */
const TEST_TIMEOUT_MS = 20_000;

export function contractTest(open: StoreFactory): ContractTest {
  return (title, body) => {
    void it(title, { timeout: TEST_TIMEOUT_MS }, async (t) => {
      const opened = await open();
      try {
        await body(opened, t);
      } finally {
        await opened.cleanup();
      }
    });
  };
}

/**
 * Resolves once `check` holds, looking again every few milliseconds; fails naming `what` if it
 * notifier (and at once); fails naming `what` if it does not hold within `ms` of real time
 * (longer than any implementation's fallback poll).
 */
export async function eventually(what: string, check: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`gave up waiting: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
