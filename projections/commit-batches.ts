/** Many KV writes in as few commits as the KV's limits allow (the audit's state and scratch, imports). */
import { bigintSafe } from "./key-hash.ts";

/**
 * Sets (value null: delete) in as few commits as KV's per-commit limits allow
 * (1000 mutations, 800 KiB); we stay well under both.
 */
export async function commitInBatches(
  kv: Deno.Kv,
  writes: { key: Deno.KvKey; value: unknown }[],
): Promise<void> {
  let atomic = kv.atomic();
  let n = 0;
  let bytes = 0;
  for (const w of writes) {
    const size = w.value === null
      ? 64
      : (w.value instanceof Uint8Array
        ? w.value.byteLength
        : JSON.stringify(w.value, bigintSafe).length) + 64;
    if (n > 0 && (n >= 500 || bytes + size > 512 * 1024)) {
      await mustCommit(atomic);
      atomic = kv.atomic();
      n = 0;
      bytes = 0;
    }
    if (w.value === null) atomic.delete(w.key);
    else atomic.set(w.key, w.value);
    n++;
    bytes += size;
  }
  if (n > 0) await mustCommit(atomic);
}

async function mustCommit(atomic: Deno.AtomicOperation): Promise<void> {
  const res = await atomic.commit();
  if (!res.ok) throw new Error("KV commit failed");
}
