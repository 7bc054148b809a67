/**
 * How the library's and the direct API's contract suites (blob, memory, rate-limit stores) run
 * each test: on a store opened for it alone, closed however the test ends, so that no test sees
 * another's data and a failing test leaves nothing open.
 */
import { it } from "node:test";

/** What a suite's factory opens for one test: at least something to close. */
export interface Closable {
  readonly close: () => Promise<void>;
}

/** A test declarer whose body gets what `open` made for it, closed after it. */
export function freshEachTest<Opened extends Closable>(open: () => Promise<Opened>): (title: string, body: (opened: Opened) => Promise<void>) => void {
  return (title, body) =>
    void it(title, async () => {
      const opened = await open();
      try {
        await body(opened);
      } finally {
        await opened.close();
      }
    });
}
