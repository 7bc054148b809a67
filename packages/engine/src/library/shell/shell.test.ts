import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { chmodSync, chownSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { Workspace } from "../files/workspace.js";
import type { ToolContext } from "../library-tool.js";
import { resultOf } from "../test-support/call-tool.js";
import { probeShell, type ShellProbe } from "./shell-probe.js";
import { DEFAULT_MAX_STDERR_BYTES, DEFAULT_MAX_STDOUT_BYTES, ShellSandbox } from "./shell-sandbox.js";
import { shellTools } from "./shell-tool.js";
import { bubblewrapForTests } from "./test-support/needs-bubblewrap.js";

/**
 * The shell sandbox for real: bubblewrap (Debian's bubblewrap, which CI installs), a real
 * workspace folder, a real TCP server on loopback that the sandbox must not reach, a fork bomb
 * and an endless loop that must be stopped.
 */

const bubblewrap = await bubblewrapForTests();
let dir: string;
let probe: Extract<ShellProbe, { ok: true }>;
let ctx: ToolContext<"workspace">;
let roCtx: ToolContext<"workspace">;
let n = 0;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "tapedeck-shell-"));
  if (bubblewrap.skip !== undefined) return;
  probe = bubblewrap.probe;
  console.log(`shell sandbox: ${probe.processLimit.kind} mode, first start ${probe.startMs} ms`);
  ctx = { now: () => 0, signal: new AbortController().signal, workspace: await Workspace.open(join(dir, "ws"), "rw") };
  roCtx = { now: () => 0, signal: new AbortController().signal, workspace: await Workspace.open(join(dir, "ro"), "ro") };
});
after(() => rmSync(dir, { recursive: true, force: true }));

/** Forks 100 sleepers (perl, which Debian always has: a shell exits when a fork fails), then counts the processes the sandbox has. */
const COUNT_PROCESSES = String.raw`perl -e 'my $ok = 0; for (1..100) { my $pid = fork(); next unless defined $pid; if ($pid == 0) { sleep 30; exit 0 } $ok++ } opendir(my $d, "/proc"); my $n = grep { /^\d+$/ } readdir $d; print "started $ok running $n\n"'`;

const shell = () => shellTools(probe.sandbox)[0]!;
const run = (command: string, context = ctx, timeoutSeconds?: number) =>
  resultOf(shell(), { command, ...(timeoutSeconds === undefined ? {} : { timeoutSeconds }) }, context);

void describe("shell.run in a bubblewrap sandbox", { skip: bubblewrap.skip ?? false }, () => {
  it("runs in the workspace: what it writes there is on the host, and it sees the files there", async () => {
    writeFileSync(join(ctx.workspace.root, "input.txt"), "from the host\n");
    const ran = await run("pwd; cat input.txt; echo made > output.txt; mkdir -p sub && echo deep > sub/f");
    assert.equal(ran.exitCode, 0);
    assert.equal(ran.stdout, "/workspace\nfrom the host\n");
    assert.equal(readFileSync(join(ctx.workspace.root, "output.txt"), "utf8"), "made\n");
    assert.equal(readFileSync(join(ctx.workspace.root, "sub/f"), "utf8"), "deep\n");
  });

  it("has no network: a server listening on the host's loopback cannot be reached, and only lo exists", async () => {
    const connections: unknown[] = [];
    const server: Server = createServer((socket) => {
      connections.push(socket.remoteAddress);
      socket.end("hello");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const { port } = server.address() as { port: number };
    try {
      const ran = await run(`bash -c 'echo hi > /dev/tcp/127.0.0.1/${port}' 2>&1; echo "exit $?"; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '`);
      assert.match(ran.stdout as string, /Connection refused/);
      assert.match(ran.stdout as string, /exit 1\nlo\n$/);
      assert.deepEqual(connections, [], "the host's server got no connection");
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  it("the system is read-only, only the workspace and a fresh /tmp can be written, and the host's /tmp and home are not there", async () => {
    writeFileSync(join(tmpdir(), `tapedeck-host-secret-${process.pid}`), "host secret");
    const ran = await run(
      `for f in /usr/x /etc/x /x /bin/x /workspace/../escape; do (echo x > $f) 2>/dev/null && echo "wrote $f" || echo "refused $f"; done; ` +
        `echo t > /tmp/scratch && echo "tmp ok"; ls /tmp; ls /root /home 2>&1 | head -2; cat /etc/shadow 2>&1`,
    );
    assert.equal(
      ran.stdout,
      "refused /usr/x\nrefused /etc/x\nrefused /x\nrefused /bin/x\nrefused /workspace/../escape\ntmp ok\nscratch\n" +
        "ls: cannot access '/root': No such file or directory\nls: cannot access '/home': No such file or directory\ncat: /etc/shadow: No such file or directory\n",
    );
    assert.equal((await run("ls /tmp")).stdout, "", "every command gets a fresh /tmp");
    rmSync(join(tmpdir(), `tapedeck-host-secret-${process.pid}`));
  });

  it("a read-only workspace can be read, not written", async () => {
    writeFileSync(join(roCtx.workspace.root, "keep.txt"), "kept");
    const ran = await run("cat keep.txt; echo changed > keep.txt", roCtx);
    assert.equal(ran.stdout, "kept");
    assert.match(ran.stderr as string, /Read-only file system/);
    assert.match(ran.note as string, /read-only for this toolset/);
    assert.equal(readFileSync(join(roCtx.workspace.root, "keep.txt"), "utf8"), "kept");
  });

  it("gets no environment from the engine: only a safe PATH, HOME, TMPDIR, LANG, PWD", async () => {
    process.env.TAPEDECK_TEST_SECRET = "sk-should-not-leak";
    try {
      const ran = await run("env | cut -d= -f1 | sort");
      assert.equal(ran.stdout, "HOME\nLANG\nPATH\nPWD\nTMPDIR\n");
    } finally {
      delete process.env.TAPEDECK_TEST_SECRET;
    }
  });

  it("an endless loop is stopped at its time limit", async () => {
    const ran = await run("while :; do :; done", ctx, 1);
    assert.equal(ran.timedOut, true);
    assert.equal(ran.exitCode, null);
    assert.equal(ran.signal, "SIGKILL");
    assert.match(ran.note as string, /stopped after 1 s, its time limit/);
  });

  it("processes are bounded (checked with 100 sleeps first), and a fork bomb stalls at the bound until the time limit ends it", async () => {
    const sandbox = new ShellSandbox({ processLimit: probe.processLimit, limits: { maxProcesses: 16 } });
    const workspace = join(dir, `bomb${n++}`);
    mkdirSync(workspace);
    const signal = new AbortController().signal;
    const counted = await sandbox.run({
      command: COUNT_PROCESSES,
      workspace,
      writable: true,
      timeoutMs: 20_000,
      signal,
    });
    const [, started, running] = (/started (\d+) running (\d+)/.exec(counted.stdout) ?? []).map(Number);
    assert.ok(
      started! > 0 && running! > started! && running! <= 16,
      `at most 16 processes ran (${counted.stdout}); the fork bomb is not tried without a working bound`,
    );
    // bash retries a fork that fails, so the bomb stalls at the bound; its first shell stays, so only the time limit ends it.
    const bomb = await sandbox.run({ command: "bash -c 'f() { f | f & }; f; while :; do wait; done'", workspace, writable: true, timeoutMs: 2_000, signal });
    assert.equal(bomb.stopped, "timeout");
    assert.match(bomb.stderr, /fork: (retry: )?Resource temporarily unavailable/);
    if (probe.processLimit.kind === "cgroup") {
      assert.equal(bomb.processLimitReached, true);
      // Other test files' commands may have cgroups of their own for a while: each seen now must go; a leaked one would stay.
      const ours = (): string[] => readdirSync("/sys/fs/cgroup/pids").filter((name) => name.startsWith("tapedeck-shell-"));
      const seen = ours();
      for (let waited = 0; waited < 10_000 && seen.some((name) => ours().includes(name)); waited += 100)
        await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(
        seen.filter((name) => ours().includes(name)),
        [],
        "every cgroup is emptied and removed",
      );
    }
  });

  it(
    "when not root, RLIMIT_NPROC inside the sandbox's user namespace bounds the processes",
    { skip: process.getuid?.() !== 0 && "runs only where it can start a child as another user" },
    async () => {
      const workspace = join(dir, `rlimit${n++}`);
      mkdirSync(workspace);
      chownSync(workspace, 65534, 65534);
      chmodSync(dir, 0o755);
      const child = fileURLToPath(new URL("./test-support/rlimit-child.js", import.meta.url));
      const { stdout } = await promisify(execFile)(process.execPath, [child, workspace, "16"], { uid: 65534, gid: 65534, env: {} });
      const ran = JSON.parse(stdout) as { stdout: string; exitCode: number };
      const [, started, running] = (/started (\d+) running (\d+)/.exec(ran.stdout) ?? []).map(Number);
      assert.ok(started! > 0 && running! > started! && running! <= 16, `at most 16 processes ran (${ran.stdout})`);
    },
  );

  it("output is capped per stream, says how much was left out, never splits a character; endless output is stopped", async () => {
    const ran = await run("printf 'é%.0s' $(seq 1 40000); yes error | head -c 50000 >&2");
    assert.equal(Buffer.byteLength(ran.stdout as string), DEFAULT_MAX_STDOUT_BYTES, "32768 é are 65536 bytes");
    assert.equal(ran.stdoutOmittedBytes, 80_000 - DEFAULT_MAX_STDOUT_BYTES);
    assert.equal(Buffer.byteLength(ran.stderr as string), DEFAULT_MAX_STDERR_BYTES);
    assert.equal(ran.stderrOmittedBytes, 50_000 - DEFAULT_MAX_STDERR_BYTES);
    assert.match(ran.note as string, /14464 more bytes of stdout were left out/);
    const odd = await run("printf 'a'; printf 'é%.0s' $(seq 1 40000)");
    assert.ok(!(odd.stdout as string).includes("\ufffd"), "a character cut at the end is dropped, not garbled");
    const endless = await run("yes", ctx, 60);
    assert.equal(endless.timedOut, false);
    assert.match(endless.note as string, /printed far more than is kept/);
  });

  it("a cancelled call stops its command", async () => {
    const controller = new AbortController();
    const pending = resultOf(shell(), { command: "sleep 30" }, { ...ctx, signal: controller.signal });
    controller.abort();
    const ran = await pending;
    assert.match(ran.note as string, /the call was cancelled/);
  });

  it("the probe says why the shell cannot be offered", async () => {
    const missing = await probeShell({ bwrap: "/nonexistent/bwrap" });
    assert.deepEqual(missing, {
      ok: false,
      reason: "The shell tool needs bubblewrap at /nonexistent/bwrap, which is missing or not executable: install Debian's bubblewrap package.",
    });
    const broken = join(dir, "fake-bwrap");
    writeFileSync(broken, "#!/bin/sh\necho 'bwrap: No permissions to creating new namespace' >&2\nexit 1\n", { mode: 0o755 });
    const refused = await probeShell({ bwrap: broken });
    assert.ok(!refused.ok);
    assert.match(refused.reason, /bubblewrap cannot start a sandbox here \(bwrap: No permissions to creating new namespace\): user namespaces may be disabled/);
  });
});
