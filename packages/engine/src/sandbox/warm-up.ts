import { GuestRuntime, type GuestHost } from "./guest-runtime.js";
import { buildRealm } from "./realm.js";
import type { SandboxOptions } from "./sandbox.js";
import type { WasmModule } from "./sandbox-heap.js";

/**
 * Runs a small script through every path of a sandbox (calls, deliveries, replay, logs, a
 * little CPU) a few times when a worker starts, so that V8 has compiled the WASM and our code
 * before the first real sandbox arrives (the compiled module is shared by every sandbox's instance).
 */
const WARM_SCRIPT = `
import { warm } from "tapedeck:tools";
export default async function (input) {
  let total = 0;
  for (let i = 0; i < 2000; i++) total += Math.random() * i;
  const results = await Promise.all([warm.a({ i: 1 }), warm.b({ i: 2 })]);
  try { await warm.a({ fail: true }); } catch (e) { console.log(e.code, new Date().toISOString()); }
  console.log(input, results, total > 0);
  return { results };
}`;

const OPTIONS: SandboxOptions = {
  runId: "warm-up",
  js: WARM_SCRIPT,
  filename: "warm-up.js",
  tools: { warm: ["a", "b"] },
  input: { warm: true },
  seed: "warm-up",
  startedAt: 0,
  limits: { memoryBytes: 16 * 1024 * 1024, stackBytes: 256 * 1024, cpuMsPerStep: 5_000, logLineChars: 1_000 },
};

export async function warmUp(compiled: WasmModule, host: GuestHost, rounds = 5): Promise<void> {
  for (let round = 0; round < rounds; round++) {
    const sandbox = GuestRuntime.create(host, await buildRealm(compiled), OPTIONS);
    try {
      sandbox.start();
      sandbox.deliverEach([{ seq: 2, at: 1, ok: true, value: [2] }]);
      sandbox.replay([
        { seq: 1, at: 2, ok: true, value: { one: 1 } },
        { seq: 3, at: 3, ok: false, error: { code: "warm", message: "warm" } },
      ]);
    } finally {
      sandbox.dispose();
    }
  }
}
