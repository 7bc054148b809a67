import type { JsonValue, SubCallAnswer } from "@tapedeck/protocol";
import type { Clock } from "../clock.js";
import type { SubCall, SubCallJournal } from "../sources/sub-call-journal.js";
import type { RunJournal } from "./run-journal.js";

/**
 * The sub-call journal of one call of a run: each host call its source makes (a user tool's
 * `fetch`, invocations, workspace access) is a `call.sub` entry of the run's journal, and a later
 * attempt of the call — a retry after an interruption, or the run resumed by another engine —
 * is answered from those entries instead of performing the host call again.
 *
 * Invariants:
 * - An answer is recorded once per key; the source acts on nothing it leads to before its entry is durable.
 * - `recorded` knows what the journal held when the run was resumed (`History`) and everything
 *   recorded since, for every attempt of the call in this execution; it answers one only once
 *   durable.
 */
export class RunSubCalls implements SubCallJournal {
  constructor(
    private readonly seq: number,
    private readonly journal: Pick<RunJournal, "append">,
    private readonly clock: Clock,
    /** Shared by the call's attempts: what the journal holds for the call. */
    private readonly answers: Map<string, SubCallAnswer>,
    /** The arguments as journaled: a tool's `sensitiveParams` hashed (sub-calls are matched by key, never by arguments). */
    private readonly redact: (tool: string, args: JsonValue) => JsonValue = (_tool, args) => args,
    /** Shared by the call's attempts like `answers`: the commits of answers not yet durable. */
    private readonly writing = new Map<string, Promise<void>>(),
  ) {}

  /** The answer recorded for `key`, once durable (rejects if its commit failed: it must not be acted on). */
  async recorded(key: string): Promise<SubCallAnswer | undefined> {
    const answer = this.answers.get(key);
    if (answer !== undefined) await this.writing.get(key);
    return answer;
  }

  record(call: SubCall, answer: SubCallAnswer): Promise<void> {
    if (this.answers.has(call.key)) return this.writing.get(call.key) ?? Promise.resolve();
    this.answers.set(call.key, answer);
    const written = this.journal.append(
      [{ kind: "call.sub", seq: this.seq, key: call.key, tool: call.tool, args: this.redact(call.tool, call.args), answer }],
      this.clock.now(),
    );
    this.writing.set(call.key, written);
    // Forgotten once durable; a failed commit stays, so that nothing acts on its answer.
    written.then(
      () => this.writing.delete(call.key),
      () => undefined,
    );
    return written;
  }
}
