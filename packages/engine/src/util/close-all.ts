/**
 * Runs every closer in order, each whatever the ones before did, then rejects with the first
 * failure (if any): one part that fails to close must not leave the others open (a sandbox
 * worker left running keeps the whole process alive).
 */
export async function closeAll(closers: readonly (() => Promise<unknown>)[]): Promise<void> {
  let failure: { readonly error: unknown } | undefined;
  for (const close of closers) {
    try {
      await close();
    } catch (error) {
      failure ??= { error };
    }
  }
  if (failure) throw failure.error;
}
