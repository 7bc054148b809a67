import { probeShell, type ShellProbe } from "../shell-probe.js";

/**
 * Tests of the shell tool run bubblewrap for real. Where it cannot run, they are skipped with the
 * reason and how to get it (a developer's machine without Debian's `bubblewrap`), except in CI
 * (`CI=true`, which `.ci/run` sets after installing it): there a missing sandbox fails them, so
 * they can never pass by not running.
 */
export type BubblewrapForTests = { readonly probe: Extract<ShellProbe, { ok: true }>; readonly skip?: undefined } | { readonly skip: string };

export async function bubblewrapForTests(): Promise<BubblewrapForTests> {
  const probe = await probeShell();
  if (probe.ok) return { probe };
  const why = `bubblewrap cannot run here (${probe.reason}); install Debian's bubblewrap (apt-get install -y bubblewrap) to run these tests`;
  if (process.env.CI === "true") throw new Error(`CI=true and ${why}`);
  return { skip: why };
}
