import assert from "node:assert/strict";
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { Workspace } from "../files/workspace.js";
import type { ToolContext } from "../library-tool.js";
import { resultOf } from "../test-support/call-tool.js";
import { SANDBOX_ID } from "./bubblewrap-args.js";
import { DEFAULT_SHELL_LIMITS } from "./shell-limits.js";
import { ShellSandbox } from "./shell-sandbox.js";
import { shellTools } from "./shell-tool.js";
import { bubblewrapForTests } from "./test-support/needs-bubblewrap.js";

/**
 * What a command cannot be or do, checked from inside the sandbox and from the host, through
 * `shell.run` (the probe's own sandbox, at the default limits). In CI these run as root, where
 * bubblewrap alone would make the command the host's root: they check that it is not.
 */

const bubblewrap = await bubblewrapForTests();
let dir: string;
let ctx: ToolContext<"workspace">;
let sandbox: ShellSandbox;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), "tapedeck-shell-isolation-"));
  if (bubblewrap.skip !== undefined) return;
  sandbox = bubblewrap.probe.sandbox;
  ctx = { now: () => 0, signal: new AbortController().signal, workspace: await Workspace.open(join(dir, "ws"), "rw") };
});
after(() => rmSync(dir, { recursive: true, force: true }));

const run = (command: string, context = ctx, on = sandbox) => resultOf(shellTools(on)[0]!, { command }, context);
const MiB = 1024 * 1024;
/** The uid a command's files get on the host: the engine's own, or the sandbox user's when the engine is root. */
const hostUid = process.getuid?.() === 0 ? SANDBOX_ID : process.getuid?.();

void describe("the shell sandbox's isolation", { skip: bubblewrap.skip ?? false }, () => {
  it("the command is not root inside its user namespace, nor outside: its files are the host's unprivileged uid", async () => {
    const ran = await run("id -u; id -g; cat /proc/self/uid_map; echo made > mine.txt");
    const [uid, gid, map] = (ran.stdout as string).split("\n");
    assert.deepEqual([uid, gid], [String(SANDBOX_ID), String(SANDBOX_ID)]);
    assert.doesNotMatch(map!, /^\s*0\s+0\s+1\s*$/, "a user namespace of its own, not the host's uid 0 mapped onto itself");
    const owner = lstatSync(join(ctx.workspace.root, "mine.txt")).uid;
    assert.notEqual(owner, 0, "what the command writes is not owned by the host's root");
    assert.equal(owner, hostUid);
  });

  it("the engine's root-owned files in the workspace stay writable by the command, and so do the command's files by the engine", async () => {
    writeFileSync(join(ctx.workspace.root, "from-engine.txt"), "engine\n");
    const ran = await run("echo command >> from-engine.txt && mkdir -p made/deep && echo x > made/deep/f && chmod 700 made && cat from-engine.txt");
    assert.equal(ran.stdout, "engine\ncommand\n", ran.stderr as string);
    writeFileSync(join(ctx.workspace.root, "made/deep/f"), "engine again\n");
    assert.equal(readFileSync(join(ctx.workspace.root, "made/deep/f"), "utf8"), "engine again\n");
  });

  it(
    "giving the workspace to the sandbox user follows no link out of it: files outside stay root's",
    { skip: process.getuid?.() !== 0 && "only an engine running as root gives the workspace's files to the sandbox user" },
    async () => {
      const outside = join(dir, "outside");
      mkdirSync(join(outside, "folder"), { recursive: true });
      writeFileSync(join(outside, "secret"), "root's");
      writeFileSync(join(outside, "folder", "inner"), "root's too");
      // Links a command could leave for the next one: to a file and a folder outside, absolute and relative.
      symlinkSync(join(outside, "secret"), join(ctx.workspace.root, "abs-link"));
      symlinkSync(join(outside, "folder"), join(ctx.workspace.root, "folder-link"));
      symlinkSync("../outside/secret", join(ctx.workspace.root, "rel-link"));
      const ran = await run("ls -l abs-link folder-link rel-link | wc -l");
      assert.equal(ran.stdout, "3\n", ran.stderr as string);
      for (const path of [outside, join(outside, "secret"), join(outside, "folder"), join(outside, "folder", "inner")]) {
        assert.equal(lstatSync(path).uid, 0, `${path} is still root's`);
      }
      assert.equal(lstatSync(join(ctx.workspace.root, "abs-link")).uid, SANDBOX_ID, "the link itself is the sandbox user's");
    },
  );

  it("has no capabilities and cannot make a user namespace of its own", async () => {
    const ran = await run("grep '^Cap' /proc/self/status; unshare --user true 2>/dev/null && echo 'made a user namespace' || echo 'no user namespace'");
    const caps = (ran.stdout as string).split("\n").filter((line) => line.startsWith("Cap"));
    assert.deepEqual(
      caps.map((line) => line.split(/\s+/)[0]),
      ["CapInh:", "CapPrm:", "CapEff:", "CapBnd:", "CapAmb:"],
    );
    for (const line of caps) assert.match(line, /:\s+0{16}$/, line);
    assert.match(ran.stdout as string, /no user namespace\n$/);
  });

  it("kernel settings cannot be written: /proc/sys and /proc/sysrq-trigger are read-only", async () => {
    const before = readFileSync("/proc/sys/kernel/printk_ratelimit", "utf8");
    const next = String(Number(before) + 1);
    const ran = await run(
      `echo ${next} > /proc/sys/kernel/printk_ratelimit; echo "sysctl $?"; echo h > /proc/sysrq-trigger; echo "sysrq $?"; grep -c ' /proc/sys proc ro,' /proc/self/mounts`,
    );
    assert.match(ran.stdout as string, /^sysctl [1-9]\d*\nsysrq [1-9]\d*\n1\n$/);
    // Read-only as a mount, whatever the uid: not only refused by permissions.
    assert.match(ran.stderr as string, /printk_ratelimit: Read-only file system/);
    assert.equal(readFileSync("/proc/sys/kernel/printk_ratelimit", "utf8"), before, "the host's setting is unchanged");
  });

  it(
    "a seccomp filter refuses keyrings, io_uring, ptrace, BPF and address-randomisation switches with EPERM; a personality query still works",
    { skip: process.arch !== "x64" && process.arch !== "arm64" && "the filter knows x86_64 and aarch64 only" },
    async () => {
      // Numbers of keyctl, io_uring_setup, ptrace, bpf, personality (the kernel's unistd headers).
      const nr =
        process.arch === "x64"
          ? { keyctl: 250, io_uring: 425, ptrace: 101, bpf: 321, personality: 135 }
          : { keyctl: 219, io_uring: 425, ptrace: 117, bpf: 280, personality: 92 };
      // Each call that the filter lets through succeeds for an unprivileged process here (a keyring id, an io_uring fd, PTRACE_TRACEME), so EPERM is the filter's.
      const script =
        `sub t { my ($name, $n, @a) = @_; push @a, 0 while @a < 4; $! = 0; my $r = syscall($n, $a[0], $a[1], $a[2], $a[3]); printf "%s %d %d\\n", $name, $r, $! + 0 } my $p = "\\0" x 120; ` +
        `t("keyctl", ${nr.keyctl}, 0, -3, 0); t("io_uring_setup", ${nr.io_uring}, 1, $p); t("ptrace", ${nr.ptrace}, 0, 0, 0, 0); t("bpf", ${nr.bpf}, 0, $p, 48); ` +
        `t("personality_norandom", ${nr.personality}, 0x0040000); t("personality_query", ${nr.personality}, 0xffffffff)`;
      const ran = await run(`perl -e '${script}'`);
      assert.equal(
        ran.stdout,
        "keyctl -1 1\nio_uring_setup -1 1\nptrace -1 1\nbpf -1 1\npersonality_norandom -1 1\npersonality_query 0 0\n",
        ran.stderr as string,
      );
    },
  );

  it("memory, file size, open files, processes and CPU time are bounded by rlimits it cannot raise", async () => {
    const ran = await run(
      "grep -E '^Max (address space|file size|open files|processes|cpu time)' /proc/self/limits | tr -s ' ' | sed 's/ $//'; ulimit -v; ulimit -f; ulimit -v unlimited 2>/dev/null && echo raised || echo 'cannot raise'",
    );
    const l = DEFAULT_SHELL_LIMITS;
    assert.equal(
      ran.stdout,
      `Max cpu time ${l.cpuSeconds} ${l.cpuSeconds + 1} seconds\nMax file size ${l.fileSizeBytes} ${l.fileSizeBytes} bytes\nMax processes ${l.maxProcesses} ${l.maxProcesses} processes\n` +
        `Max open files ${l.maxOpenFiles} ${l.maxOpenFiles} files\nMax address space ${l.memoryBytes} ${l.memoryBytes} bytes\n` +
        `${l.memoryBytes / 1024}\n${l.fileSizeBytes / 512}\ncannot raise\n`,
    );
  });

  it("a 512 MiB allocation fails, and the note names the memory limit", async () => {
    const ran = await run(`awk 'BEGIN { s = "x"; while (length(s) < 512 * 1024 * 1024) s = s s; print "allocated", length(s) }'`);
    assert.notEqual(ran.exitCode, 0);
    assert.doesNotMatch(ran.stdout as string, /allocated/);
    assert.match(ran.note as string, /ran out of memory: each process may use at most 256 MiB of address space/);
  });

  it("a 256 MiB file stops at the 64 MiB file-size limit, and the note names it", async () => {
    const ran = await run("head -c 268435456 /dev/zero > big.bin");
    assert.notEqual(ran.exitCode, 0);
    assert.equal(statSync(join(ctx.workspace.root, "big.bin")).size, DEFAULT_SHELL_LIMITS.fileSizeBytes);
    assert.match(ran.note as string, /A file reached the file-size limit of 64 MiB/);
    rmSync(join(ctx.workspace.root, "big.bin"));
  });

  it("/tmp is a 64 MiB tmpfs: past it a write fails, and the note says so", async () => {
    const ran = await run("df -k /tmp | tail -1 | tr -s ' ' | cut -d' ' -f2; head -c 40M /dev/zero > /tmp/a && head -c 40M /dev/zero > /tmp/b");
    assert.match(ran.stdout as string, /^65536\n$/);
    assert.notEqual(ran.exitCode, 0);
    assert.match(ran.note as string, /\/tmp holds at most 64 MiB/);
  });

  it("the limits are the sandbox's options: smaller ones apply, and their notes name them", async () => {
    const small = new ShellSandbox({
      processLimit: bubblewrap.skip === undefined ? bubblewrap.probe.processLimit : { kind: "rlimit", prlimit: "/usr/bin/prlimit" },
      limits: {
        memoryBytes: 128 * MiB,
        totalMemoryBytes: 256 * MiB,
        fileSizeBytes: 1 * MiB,
        tmpBytes: 2 * MiB,
        maxOpenFiles: 64,
        maxProcesses: 32,
        cpuSeconds: 1,
      },
    });
    const limits = await run("ulimit -v; ulimit -n; df -k /tmp | tail -1 | tr -s ' ' | cut -d' ' -f2", ctx, small);
    assert.equal(limits.stdout, `${128 * 1024}\n64\n2048\n`);
    const file = await run("head -c 2M /dev/zero > two.bin", ctx, small);
    assert.match(file.note as string, /file-size limit of 1 MiB/);
    assert.equal(statSync(join(ctx.workspace.root, "two.bin")).size, MiB);
    const forks = await run("for i in $(seq 40); do sleep 3 & done; wait", ctx, small);
    assert.match(forks.note as string, /reached the limit of 32 processes: some could not be started/, forks.stderr as string);
    const cpu = await run("while :; do :; done", ctx, small);
    assert.equal(cpu.timedOut, false, "stopped by its CPU time, well before the 60 s time limit");
    assert.match(cpu.note as string, /stopped at the CPU time limit of 1 s/);
    assert.throws(
      () => new ShellSandbox({ processLimit: { kind: "rlimit", prlimit: "/usr/bin/prlimit" }, limits: { memoryBytes: 0 } }),
      /memoryBytes must be a positive integer, not 0/,
    );
    assert.throws(
      () => new ShellSandbox({ processLimit: { kind: "rlimit", prlimit: "/usr/bin/prlimit" }, user: { uid: 0, gid: 1000 } }),
      /sandbox user must have a uid other than root's: a positive integer below 4294967295, not 0/,
    );
  });
});

const memoryCgroup = bubblewrap.skip === undefined && bubblewrap.probe.processLimit.kind === "cgroup" ? bubblewrap.probe.processLimit.memory : undefined;

void describe(
  "the shell sandbox's memory cgroup",
  {
    skip:
      bubblewrap.skip ??
      (memoryCgroup === undefined && "no memory cgroup can be made here: needs root and cgroup v1's memory hierarchy or v2 delegating memory"),
  },
  () => {
    it("bounds the memory of all the command's processes together: past it the kernel kills one, and the note names the limit", async () => {
      const small = new ShellSandbox({
        processLimit: bubblewrap.skip === undefined ? bubblewrap.probe.processLimit : { kind: "rlimit", prlimit: "" },
        limits: { totalMemoryBytes: 128 * MiB },
      });
      // Four processes of 60 MiB each: each is well within its own 256 MiB, together they are past 128 MiB.
      const ran = await run(`for i in 1 2 3 4; do perl -e '$x = "x" x (60 * 1024 * 1024); sleep 3; print "kept\\n"' & done; wait`, ctx, small);
      assert.ok(((ran.stdout as string).match(/kept/g) ?? []).length < 4, `not every process kept its memory (${ran.stdout as string})`);
      assert.match(ran.note as string, /its processes together reached the memory limit of 128 MiB/);
      const alone = await run(`perl -e '$x = "x" x (60 * 1024 * 1024); print "kept\\n"'`, ctx, small);
      assert.equal(alone.stdout, "kept\n", "one of them alone fits");
      // Each command's memory cgroup is removed after it (other files' commands may still have theirs for a while).
      const parent = memoryCgroup!.parent;
      const ours = (): string[] => readdirSync(parent).filter((name) => name.startsWith("tapedeck-shell-"));
      const seen = ours();
      for (let waited = 0; waited < 10_000 && seen.some((name) => ours().includes(name)); waited += 100)
        await new Promise((resolve) => setTimeout(resolve, 100));
      assert.deepEqual(
        seen.filter((name) => ours().includes(name)),
        [],
      );
    });
  },
);
