/** Many KV writes in as few commits as the KV's limits allow (the audit's state and scratch, imports). */

import { serialize } from "node:v8";
import { keyText } from "./fold.ts";

/** Mutations per commit: Deno KV takes at most 1000 (and 800 KiB in all). */
const PER_COMMIT = 500;

/** The largest value Deno KV stores, serialized. */
const KV_VALUE_LIMIT = 65_536;

/**
 * Sets (value null: delete) in as few commits as KV's per-commit limits allow. Batches of 500;
 * a batch the KV refuses as too large is split in two and tried again (sizing every value first,
 * by its JSON, cost more than the commits themselves).
 */
export async function commitInBatches(
  kv: Deno.Kv,
  writes: { key: Deno.KvKey; value: unknown }[],
): Promise<void> {
  for (let i = 0; i < writes.length; i += PER_COMMIT) {
    await commitSplitting(kv, writes.slice(i, i + PER_COMMIT));
  }
}

async function commitSplitting(
  kv: Deno.Kv,
  writes: { key: Deno.KvKey; value: unknown }[],
): Promise<void> {
  const atomic = kv.atomic();
  for (const w of writes) {
    if (w.value === null) atomic.delete(w.key);
    else atomic.set(w.key, w.value);
  }
  let res: Deno.KvCommitResult | Deno.KvCommitError;
  try {
    res = await atomic.commit();
  } catch (e) {
    const tooLarge = /too large/i.test(String((e as Error)?.message));
    if (tooLarge && writes.length === 1) {
      // Name the entry: the KV's own message names neither key nor size.
      const bytes = writes[0].value === null ? 0 : serialize(writes[0].value).byteLength;
      throw new Error(
        `the KV entry ${keyText(writes[0].key)} is ${bytes} bytes, over the ` +
          `${KV_VALUE_LIMIT} a KV value takes`,
        { cause: e },
      );
    }
    if (writes.length < 2 || !tooLarge) throw e;
    const half = writes.length >> 1;
    await commitSplitting(kv, writes.slice(0, half));
    await commitSplitting(kv, writes.slice(half));
    return;
  }
  if (!res.ok) throw new Error("KV commit failed");
}
