import { after, before, describe, it } from "node:test";
import { startHostileServer, type HostileServer } from "./hostile-harness.js";

/** The harness itself: a fresh server serves the victim (the baseline every hostile suite compares against). */
let hostile: HostileServer;

before(async () => {
  hostile = await startHostileServer();
});

after(async () => {
  await hostile.close();
});

describe("hostile harness", () => {
  it("a fresh server serves another tenant's run", async () => {
    await hostile.assertStillServing();
    await hostile.assertStillServing();
  });
});
