/**
 * `atomic.commit()` for check-and-retry loops. Two processes on one local KV file (the service and
 * an operator's `deno task admin --kv` on its DATA_DIR) meet SQLite's write lock now and then; the
 * commit then throws "database is locked" having written nothing. Answered here as a failed check,
 * so the caller's loop re-reads and retries as it does for any other concurrent writer.
 */
/** SQLite's answer when another process holds the KV file's write lock. */
export const isKvBusy = (e: unknown): boolean =>
  e instanceof Error && /database is (locked|busy)/i.test(e.message);

export async function commitOrConflict(
  atomic: Deno.AtomicOperation,
): Promise<Deno.KvCommitResult | Deno.KvCommitError> {
  try {
    return await atomic.commit();
  } catch (e) {
    if (isKvBusy(e)) return { ok: false };
    throw e;
  }
}
