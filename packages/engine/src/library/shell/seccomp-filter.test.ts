import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { seccompBytes, seccompProgram, type Instruction } from "./seccomp-filter.js";

/**
 * The seccomp program run by a small classic-BPF interpreter over made-up `seccomp_data`: what
 * the kernel would answer for system calls a real sandbox cannot make here (another ABI, x32
 * numbers, every call of the other architecture). `shell-isolation.test.ts` checks the filter
 * in a real sandbox.
 */

const ALLOW = 0x7fff0000;
const EPERM = 0x00050001;
const ARCH = { x86_64: 0xc000003e, aarch64: 0xc00000b7, i386: 0x40000003, arm: 0x40000028 } as const;

/** What the program returns for a call: LD (absolute word), JA, JEQ, JGE and RET, the only instructions it uses. */
function verdict(program: readonly Instruction[], arch: number, nr: number, arg0 = 0): number {
  const data = Buffer.alloc(64);
  data.writeInt32LE(nr | 0, 0);
  data.writeUInt32LE(arch, 4);
  data.writeUInt32LE(arg0 >>> 0, 16);
  let a = 0;
  for (let pc = 0; pc < program.length; pc++) {
    const { code, jt, jf, k } = program[pc]!;
    if (code === 0x20) a = data.readUInt32LE(k);
    else if (code === 0x05) pc += k;
    else if (code === 0x15) pc += a === k >>> 0 ? jt : jf;
    else if (code === 0x35) pc += a >= k >>> 0 ? jt : jf;
    else if (code === 0x06) return k >>> 0;
    else throw new Error(`instruction ${pc}: opcode ${code} is not one the filter uses`);
  }
  throw new Error("the program fell off its end");
}

const program = seccompProgram();
const denied = {
  x86_64: { keyctl: 250, io_uring_setup: 425, ptrace: 101, bpf: 321, mount: 165, unshare: 272, init_module: 175, open_by_handle_at: 304 },
  aarch64: { keyctl: 219, io_uring_setup: 425, ptrace: 117, bpf: 280, mount: 40, unshare: 97, init_module: 105, open_by_handle_at: 265 },
};

void describe("the shell's seccomp filter", () => {
  it("refuses every system call of an architecture it does not know (i386 through int 0x80, 32-bit arm)", () => {
    for (const arch of [ARCH.i386, ARCH.arm]) {
      for (let nr = 0; nr < 512; nr++) assert.equal(verdict(program, arch, nr), EPERM, `arch ${arch.toString(16)} nr ${nr}`);
    }
  });

  it("refuses x32 system calls on x86_64, whatever their number", () => {
    for (const nr of [0, 1, 60, 250, 512]) assert.equal(verdict(program, ARCH.x86_64, 0x40000000 + nr), EPERM);
  });

  it("refuses each listed call by its own architecture's number, and allows ordinary calls", () => {
    for (const arch of ["x86_64", "aarch64"] as const) {
      for (const [name, nr] of Object.entries(denied[arch])) assert.equal(verdict(program, ARCH[arch], nr), EPERM, `${arch} ${name}`);
    }
    // read, write, openat, exit_group, clone.
    for (const nr of [0, 1, 257, 231, 56]) assert.equal(verdict(program, ARCH.x86_64, nr), ALLOW, `x86_64 ${nr}`);
    for (const nr of [63, 64, 56, 94, 220]) assert.equal(verdict(program, ARCH.aarch64, nr), ALLOW, `aarch64 ${nr}`);
    // A number refused on one architecture is another call on the other (x86_64's 219 is restart_syscall): each is checked against its own.
    assert.equal(verdict(program, ARCH.aarch64, 250), ALLOW);
    assert.equal(verdict(program, ARCH.x86_64, 219), ALLOW);
  });

  it("allows personality only as PER_LINUX or the query", () => {
    for (const [arch, nr] of [
      [ARCH.x86_64, 135],
      [ARCH.aarch64, 92],
    ] as const) {
      assert.equal(verdict(program, arch, nr, 0), ALLOW);
      assert.equal(verdict(program, arch, nr, 0xffffffff), ALLOW);
      assert.equal(verdict(program, arch, nr, 0x0040000), EPERM, "ADDR_NO_RANDOMIZE");
      assert.equal(verdict(program, arch, nr, 0x0008), EPERM, "PER_LINUX32");
    }
  });

  it("is 8 bytes an instruction, little-endian, as bubblewrap reads it", () => {
    const bytes = seccompBytes(program);
    assert.equal(bytes.length, program.length * 8);
    assert.deepEqual([bytes.readUInt16LE(0), bytes.readUInt32LE(4)], [0x20, 4], "the first instruction loads the architecture");
  });
});
