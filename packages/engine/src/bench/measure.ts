/**
 * Small timing helpers and the table every benchmark prints (the engine's and the server's, through
 * the `@tapedeck/engine/bench/measure` subpath: tooling, not the engine's API). Not for tests:
 * tests never time things.
 */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? NaN;
}

export function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? NaN;
}

/** Milliseconds `fn` takes. */
export async function time(fn: () => unknown): Promise<number> {
  const start = performance.now();
  await fn();
  return performance.now() - start;
}

export interface Row {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  readonly baselineName: string;
  readonly baseline: number;
  readonly goal: string;
}

export function printTable(rows: readonly Row[]): void {
  const lines = [
    ["benchmark", "value", "baseline (same run)", "ratio", "goal"],
    ...rows.map((r) => [
      r.name,
      `${fmt(r.value)} ${r.unit}`,
      `${r.baselineName}: ${fmt(r.baseline)} ${r.unit}`,
      `${(r.value / r.baseline).toFixed(2)}×`,
      r.goal,
    ]),
  ];
  const widths = lines[0]!.map((_, i) => Math.max(...lines.map((l) => l[i]!.length)));
  for (const [i, line] of lines.entries()) {
    console.log(line.map((cell, j) => cell.padEnd(widths[j]!)).join("  "));
    if (i === 0) console.log(widths.map((w) => "-".repeat(w)).join("  "));
  }
}

function fmt(n: number): string {
  return n >= 100 ? n.toFixed(0) : n >= 1 ? n.toFixed(2) : n >= 0.01 ? n.toFixed(3) : n.toPrecision(2);
}
