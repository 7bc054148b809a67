/**
 * The seccomp filter of a shell command: a classic BPF program, built here as bytes (no libseccomp
 * needed), that bubblewrap loads (`--seccomp FD`) just before it starts the command.
 *
 * What it refuses, with EPERM: system calls a build or a script has no use for and that are
 * the kernel's usual attack surface from an unprivileged process (keyrings, io_uring, ptrace,
 * BPF, perf events, userfaultfd, module and kexec loading, mounting, namespaces, swap, reboot,
 * the kernel log, `open_by_handle_at`), and `personality` other than the default or a query
 * (some flags turn off address randomisation). Everything else is allowed.
 *
 * Invariants:
 * - The architecture is checked first: only x86_64 and aarch64 system calls pass, each against
 *   its own numbers; any other (i386 through `int 0x80`, x32) is refused, so the numbers of one
 *   ABI can never be used to reach a call listed under another's.
 * - Each instruction is 8 bytes in the host's byte order (`struct sock_filter`: u16 code, u8 jt,
 *   u8 jf, u32 k); both supported architectures are little-endian.
 */

/** System calls refused, by name, with their numbers on x86_64 and aarch64 (from the kernel's unistd headers). */
const DENIED: readonly (readonly [name: string, x86_64: number, aarch64: number])[] = [
  ["keyctl", 250, 219],
  ["add_key", 248, 217],
  ["request_key", 249, 218],
  ["ptrace", 101, 117],
  ["userfaultfd", 323, 282],
  ["perf_event_open", 298, 241],
  ["bpf", 321, 280],
  ["io_uring_setup", 425, 425],
  ["io_uring_enter", 426, 426],
  ["io_uring_register", 427, 427],
  ["mount", 165, 40],
  ["umount2", 166, 39],
  ["pivot_root", 155, 41],
  ["open_tree", 428, 428],
  ["move_mount", 429, 429],
  ["fsopen", 430, 430],
  ["fsconfig", 431, 431],
  ["fsmount", 432, 432],
  ["fspick", 433, 433],
  ["mount_setattr", 442, 442],
  ["unshare", 272, 97],
  ["setns", 308, 268],
  ["kexec_load", 246, 104],
  ["kexec_file_load", 320, 294],
  ["init_module", 175, 105],
  ["finit_module", 313, 273],
  ["delete_module", 176, 106],
  ["swapon", 167, 224],
  ["swapoff", 168, 225],
  ["reboot", 169, 142],
  ["acct", 163, 89],
  ["syslog", 103, 116],
  ["open_by_handle_at", 304, 265],
];

/** `personality(2)` by architecture: allowed only with PER_LINUX (0) or the query 0xffffffff. */
const PERSONALITY = { x86_64: 135, aarch64: 92 } as const;

/** `AUDIT_ARCH_*` of `<linux/audit.h>`. */
const AUDIT_ARCH = { x86_64: 0xc000003e, aarch64: 0xc00000b7 } as const;
/** x32 system calls on x86_64 have this bit set. */
const X32_SYSCALL_BIT = 0x40000000;

// Classic BPF opcodes (`<linux/filter.h>`) and seccomp's return values (`<linux/seccomp.h>`).
const LD_W_ABS = 0x20;
const JA = 0x05;
const JEQ_K = 0x15;
const JGE_K = 0x35;
const RET_K = 0x06;
const RET_ALLOW = 0x7fff0000;
const RET_ERRNO = 0x00050000;
const EPERM = 1;
// Offsets in `struct seccomp_data`: nr, arch, then args[0] at 16 (its low half first, little-endian).
const NR = 0;
const ARCH = 4;
const ARG0_LOW = 16;

type Arch = keyof typeof AUDIT_ARCH;

/** One instruction with symbolic jump targets (a target left out: the following instruction), or a label naming the next instruction. */
type Line = { readonly code: number; readonly k: number; readonly jt?: string; readonly jf?: string } | { readonly label: string };

/** An instruction of the assembled program (`struct sock_filter`). */
export interface Instruction {
  readonly code: number;
  readonly jt: number;
  readonly jf: number;
  readonly k: number;
}

/** The filter: the architecture check, then each architecture's denials, ALLOW, and the shared EPERM. */
export function seccompProgram(): readonly Instruction[] {
  const lines: Line[] = [
    { code: LD_W_ABS, k: ARCH },
    { code: JEQ_K, k: AUDIT_ARCH.x86_64, jt: "x86_64" },
    { code: JEQ_K, k: AUDIT_ARCH.aarch64, jt: "aarch64" },
    { code: JA, k: 0, jt: "deny" },
    ...archLines("x86_64"),
    ...archLines("aarch64"),
    { label: "allow" },
    { code: RET_K, k: RET_ALLOW },
    { label: "deny" },
    { code: RET_K, k: RET_ERRNO | EPERM },
  ];
  return assemble(lines);
}

function archLines(arch: Arch): Line[] {
  const column = arch === "x86_64" ? 1 : 2;
  const lines: Line[] = [{ label: arch }, { code: LD_W_ABS, k: NR }];
  if (arch === "x86_64") lines.push({ code: JGE_K, k: X32_SYSCALL_BIT, jt: "deny" });
  for (const entry of DENIED) lines.push({ code: JEQ_K, k: entry[column], jt: "deny" });
  lines.push({ code: JEQ_K, k: PERSONALITY[arch], jt: `${arch}-personality`, jf: "allow" });
  lines.push({ label: `${arch}-personality` }, { code: LD_W_ABS, k: ARG0_LOW });
  lines.push({ code: JEQ_K, k: 0, jt: "allow" }, { code: JEQ_K, k: 0xffffffff, jt: "allow", jf: "deny" });
  return lines;
}

/** Resolves labels into the relative jumps of classic BPF (conditional: 8 bits each; JA: its `k`). */
function assemble(lines: readonly Line[]): Instruction[] {
  const at = new Map<string, number>();
  let count = 0;
  for (const line of lines) {
    if ("label" in line) at.set(line.label, count);
    else count++;
  }
  const program: Instruction[] = [];
  const offset = (target: string | undefined): number => {
    if (target === undefined) return 0;
    const index = at.get(target);
    if (index === undefined) throw new Error(`seccomp: no label ${target}`);
    return index - program.length - 1;
  };
  for (const line of lines) {
    if ("label" in line) continue;
    if (line.code === JA) program.push({ code: JA, jt: 0, jf: 0, k: offset(line.jt) });
    else program.push({ code: line.code, jt: offset(line.jt), jf: offset(line.jf), k: line.k });
  }
  return program;
}

/** The program as bubblewrap reads it from `--seccomp FD`: the instructions' bytes, back to back. */
export function seccompBytes(program: readonly Instruction[] = seccompProgram()): Buffer {
  const bytes = Buffer.alloc(program.length * 8);
  program.forEach(({ code, jt, jf, k }, index) => {
    if (jt < 0 || jt > 255 || jf < 0 || jf > 255) throw new Error(`seccomp instruction ${index}: a jump out of range (${jt}, ${jf})`);
    bytes.writeUInt16LE(code, index * 8);
    bytes.writeUInt8(jt, index * 8 + 2);
    bytes.writeUInt8(jf, index * 8 + 3);
    bytes.writeUInt32LE(k >>> 0, index * 8 + 4);
  });
  return bytes;
}
