// test-budget-seconds: 240 (a real Chromium starts twice and drives two pages)
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";
import { chromium, type Browser, type Page } from "playwright-core";
import type { Tapedeck } from "@tapedeck/sdk";
import { CONSOLE_CSP } from "./routes/console.js";
import { createKey, startServeChild, type ServeChild } from "./test-support/serve-child.js";

/**
 * The web console in a real browser (Debian's Chromium, headless, driven by playwright-core)
 * against a real `tapedeck serve` on loopback: signing in, a run waiting for approval appearing
 * in the list live (started after the page loaded), its timeline, approving it in the page and
 * seeing it complete; and a key limited to labels seeing none of another tenant's runs.
 * Screenshots go to the tests' output folder (TAPEDECK_TEST_OUTPUT, default test-output/ at the
 * repository's root), and with TAPEDECK_UPDATE_DOCS=1 the list and the timeline into docs/.
 */

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const OUTPUT = join(process.env["TAPEDECK_TEST_OUTPUT"] ?? join(ROOT, "test-output"), "console");
const CHROMIUM = "/usr/bin/chromium";

const HOST = `export const ops = { deploy: async ({ service }) => ({ deployed: service }), check: async () => "healthy" };`;
const SPEC = {
  hostTools: {
    ops: {
      deploy: { description: "Deploys a service.", inputSchema: { type: "object", properties: { service: { type: "string" } } } },
      check: { description: "Checks a service.", inputSchema: { type: "object" } },
    },
  },
  policies: { "ops.deploy": { approval: true } },
};
const SOURCE = `import { ops } from "tapedeck:tools";
export default async () => {
  const health = await ops.check({});
  await sleep(30);
  const deployed = await ops.deploy({ service: "billing" });
  return { health, deployed };
};`;

let server: ServeChild;
let admin: Tapedeck;
let toolset: string;
let browser: Browser;

before(async () => {
  assert.ok(existsSync(CHROMIUM), `${CHROMIUM} is missing: install Debian's chromium (apt-get install chromium), as .ci/run does.`);
  server = await startServeChild({ hostModule: HOST });
  admin = server.client(server.adminKey!);
  toolset = (await admin.toolsets.create(SPEC)).id;
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
  mkdirSync(OUTPUT, { recursive: true });
});

after(async () => {
  await browser?.close();
  assert.equal(await server.stop(), 0, server.stderr());
  server.cleanup();
});

async function start(client: Tapedeck): Promise<string> {
  const started = await client.runs.start({ toolset, source: SOURCE });
  return started.kind === "started" ? started.run.id : assert.fail(`refused: ${JSON.stringify(started)}`);
}

/** A new page signed in with `token`, on the runs list once it is live (its stream open and the list loaded). */
async function signedIn(token: string): Promise<Page> {
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  const problems: string[] = [];
  page.on("console", (message) => {
    if (message.type() === "error") problems.push(message.text());
  });
  page.on("pageerror", (error) => problems.push(error.message));
  await page.goto(`${server.url}/`);
  await page.getByLabel("API key or token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Runs" }).waitFor();
  await page.getByRole("status").filter({ hasText: "live" }).waitFor();
  await page.locator("table.runs, p.empty").first().waitFor();
  assert.deepEqual(problems, [], "the page logged errors (a CSP refusal shows here)");
  return page;
}

describe("the web console", () => {
  it("serves its page and files with their types and a CSP, and serve logs its address", async () => {
    const line = await server.stderrLine((text) => text.includes('"msg":"listening"'));
    assert.equal((JSON.parse(line) as { console: string }).console, `${server.url}/`);
    for (const [path, type] of [
      ["/", "text/html; charset=utf-8"],
      ["/console/app.js", "text/javascript; charset=utf-8"],
      ["/console/app.css", "text/css; charset=utf-8"],
    ] as const) {
      const response = await fetch(`${server.url}${path}`);
      assert.equal(response.status, 200, path);
      assert.equal(response.headers.get("content-type"), type, path);
      assert.equal(response.headers.get("content-security-policy"), CONSOLE_CSP, path);
      assert.ok((await response.text()).length > 100, path);
    }
    // The page holds no data: /v1 still wants a key.
    assert.equal((await fetch(`${server.url}/v1/runs`)).status, 401);
  });

  it("refuses a wrong key at sign in, and keeps a good one in the tab's session storage only", async () => {
    const page = await (await browser.newContext()).newPage();
    await page.goto(`${server.url}/`);
    await page.getByLabel("API key or token").fill("td_not_a_key");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").filter({ hasText: "Not signed in" }).waitFor();
    await page.getByLabel("API key or token").fill(server.adminKey!);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("heading", { name: "Runs" }).waitFor();
    // A string, run in the page: this file is compiled without the DOM's types.
    const stored = await page.evaluate<unknown>(
      "({ session: Object.values(sessionStorage), local: Object.keys(localStorage).length, cookie: document.cookie })",
    );
    assert.deepEqual(stored, { session: [server.adminKey], local: 0, cookie: "" });
    await page.context().close();
  });

  it("shows a run waiting for approval live, its timeline and entries, and approves it to completion", async () => {
    const page = await signedIn(server.adminKey!);
    // Started after the list loaded: only the live stream can bring it.
    const id = await start(admin);
    const row = page.locator(`tr[data-run="${id}"]`);
    await row.filter({ hasText: "waiting" }).waitFor();
    assert.match(await row.innerText(), /approval of call 3 \(ops\.deploy\)/);
    await page.screenshot({ path: join(OUTPUT, "runs-list.png") });

    await row.getByRole("link", { name: id }).click();
    await page.getByRole("heading", { name: id }).waitFor();
    const waiting = page.getByRole("button", { name: /^Call 3 ops\.deploy: waiting \(waits for approval\)/ });
    await waiting.waitFor();
    await page.getByRole("button", { name: /^Call 1 ops\.check: completed/ }).waitFor();
    // The script's sleep is a call that was all wait.
    await page.locator("li.row").filter({ hasText: "tapedeck.sleep" }).filter({ hasText: "waiting for sleep" }).waitFor();
    // A bar opens its entry as GET /v1/runs/:id/journal/:index answers it.
    await waiting.focus();
    await page.keyboard.press("Enter");
    const entry = page.getByTestId("entry-json");
    await entry.filter({ hasText: '"call.scheduled"' }).waitFor();
    assert.match(await entry.innerText(), /"service": "billing"/);
    await page.screenshot({ path: join(OUTPUT, "run-waiting.png"), fullPage: true });

    await page.getByLabel("Reason for call 3").fill("billing freeze is over");
    await page.getByRole("button", { name: "Approve call 3" }).click();
    await page.getByTestId("run-status").filter({ hasText: "completed" }).waitFor();
    assert.deepEqual(JSON.parse(await page.getByTestId("run-output").innerText()), { health: "healthy", deployed: { deployed: "billing" } });
    await page.getByRole("button", { name: /^Call 3 ops\.deploy: completed/ }).waitFor();
    await page.locator("li.row").filter({ hasText: "ops.deploy" }).filter({ hasText: "waiting for approval" }).waitFor();
    await page.screenshot({ path: join(OUTPUT, "run-timeline.png"), fullPage: true });
    await page.emulateMedia({ colorScheme: "dark" });
    await page.screenshot({ path: join(OUTPUT, "run-timeline-dark.png"), fullPage: true });

    const decided = (await admin.runs.journal(id, { limit: 100 })).entries.find((item) => item.kind === "call.decided");
    assert.deepEqual(decided === undefined ? undefined : { kind: decided.kind, reason: (decided as { reason?: string }).reason }, {
      kind: "call.decided",
      reason: "billing freeze is over",
    });
    if (process.env["TAPEDECK_UPDATE_DOCS"] === "1") {
      copyFileSync(join(OUTPUT, "runs-list.png"), join(ROOT, "docs", "console-runs.png"));
      copyFileSync(join(OUTPUT, "run-timeline.png"), join(ROOT, "docs", "console-timeline.png"));
    }
    await page.context().close();
  });

  it("shows a key limited to labels none of another tenant's runs, in the list, live, or by address", async () => {
    const red = server.client(await createKey(server.dataDir, "--label", "team=red"));
    const blue = server.client(await createKey(server.dataDir, "--label", "team=blue"));
    const blueBefore = await start(blue);
    const redRun = await start(red);
    const page = await signedIn(await createKey(server.dataDir, "--label", "team=red"));
    await page.locator(`tr[data-run="${redRun}"]`).waitFor();
    // A blue run and then a red one start under the open page: the red one arriving live means the blue one was passed over.
    const blueLive = await start(blue);
    const redLive = await start(red);
    await page.locator(`tr[data-run="${redLive}"]`).waitFor();
    const shown = await Promise.all((await page.locator("tr[data-run]").all()).map((row) => row.getAttribute("data-run")));
    assert.deepEqual(shown.sort(), [redRun, redLive].sort());
    assert.equal(shown.includes(blueBefore) || shown.includes(blueLive), false);

    await page.goto(`${server.url}/#/runs/${blueBefore}`);
    await page
      .getByRole("alert")
      .filter({ hasText: /not found|No run/i })
      .waitFor();
    assert.equal(await page.getByTestId("run-status").count(), 0);
    await page.context().close();
  });
});
