// Runs the shell sandbox in `rlimit` mode, for the test that RLIMIT_NPROC bounds a command's
// processes when the engine is not root (the test starts this process as another user).
// Usage: node rlimit-child.js <workspace> <maxProcesses>. Prints the run as JSON.
import { ShellSandbox } from "../shell-sandbox.js";

const [workspace, maxProcesses] = process.argv.slice(2);
const sandbox = new ShellSandbox({ processLimit: { kind: "rlimit", prlimit: "/usr/bin/prlimit" }, limits: { maxProcesses: Number(maxProcesses) } });
// Forks 100 sleepers, counting those that started, then counts the sandbox's processes.
const command = String.raw`perl -e 'my $ok = 0; for (1..100) { my $pid = fork(); next unless defined $pid; if ($pid == 0) { sleep 30; exit 0 } $ok++ } opendir(my $d, "/proc"); my $n = grep { /^\d+$/ } readdir $d; print "started $ok running $n\n"'`;
const run = await sandbox.run({ command, workspace: workspace!, writable: true, timeoutMs: 20_000, signal: new AbortController().signal });
process.stdout.write(JSON.stringify(run));
