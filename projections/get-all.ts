/**
 * Reading many KV entries by key: `getMany` takes ten keys, and one read at a time left the KV's
 * thread waiting on the caller between reads.
 */

/** The values of `keys` (null: none), ten to a read, a few reads at a time. */
export async function getAll<T>(kv: Deno.Kv, keys: Deno.KvKey[]): Promise<(T | null)[]> {
  const out: (T | null)[] = new Array(keys.length);
  const batches: number[] = [];
  for (let i = 0; i < keys.length; i += 10) batches.push(i);
  let next = 0;
  const worker = async () => {
    while (next < batches.length) {
      const i = batches[next++];
      const entries = await kv.getMany<T[]>(keys.slice(i, i + 10));
      entries.forEach((e, j) => (out[i + j] = e.value as T | null));
    }
  };
  await Promise.all(Array.from({ length: 4 }, worker));
  return out;
}
