import assert from "node:assert/strict";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { createServerLogger } from "../logging/server-logger.js";
import { ADMIN_KEY_FILE, announceAdminKey } from "./admin-key-notice.js";
import { capture, withDir } from "./test-support/in-process.js";

/** Where the admin key goes: once on a terminal's stdout, else a 0600 file the log names; never into the log. */
const KEY = "tdk_admin-key-notice-test-0123456789";

function logged(): { lines: string[]; logger: ReturnType<typeof createServerLogger> } {
  const lines: string[] = [];
  return { lines, logger: createServerLogger({ level: "trace", format: "json", write: (line) => lines.push(line) }) };
}

describe("the admin key of a store's first start", () => {
  it("on a terminal: printed once on stdout, with how to use it; the log says it was made, without it; no file", async () => {
    await withDir((dir) => {
      const io = { ...capture(), stdoutIsTerminal: true };
      const log = logged();
      announceAdminKey({ key: KEY, url: "http://127.0.0.1:7700", dataDir: dir, storeUrl: false }, io, log.logger);
      assert.equal(io.out.join("\n").split(KEY).length - 1, 3, "the key, its header and the client line");
      assert.match(io.out.join("\n"), /tapedeck keys create --data \S+ --namespace <user>/);
      assert.equal(log.lines.length, 1);
      assert.match(log.lines[0]!, /printed once on the terminal/);
      assert.ok(!log.lines.join("\n").includes(KEY) && io.err.length === 0, "the key is not in the log");
      assert.ok(!existsSync(join(dir, ADMIN_KEY_FILE)));
      return Promise.resolve();
    });
  });

  it("otherwise: written to <data>/admin-key, mode 0600 even over an older file, which the log names; stdout and the log never hold it", async () => {
    await withDir((dir) => {
      const data = join(dir, "node-a");
      const io = capture();
      const log = logged();
      announceAdminKey({ key: KEY, url: "http://127.0.0.1:7700", dataDir: data, storeUrl: true }, io, log.logger);
      const file = join(data, ADMIN_KEY_FILE);
      assert.equal(readFileSync(file, "utf8"), `${KEY}\n`);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      const line = JSON.parse(log.lines[0]!) as { file: string; msg: string };
      assert.equal(line.file, file);
      assert.match(
        line.msg,
        /created the admin API key of the store and wrote it to .* \(mode 0600.*then delete the file.*keys create --store <the store's URL>/,
      );
      assert.ok(!log.lines.join("\n").includes(KEY) && io.out.length === 0 && io.err.length === 0);

      writeFileSync(file, "old", { mode: 0o644 });
      announceAdminKey({ key: KEY, url: "http://127.0.0.1:7700", dataDir: data, storeUrl: true }, io, log.logger);
      assert.equal(statSync(file).mode & 0o777, 0o600, "an older file is made this user's alone");
      return Promise.resolve();
    });
  });
});
