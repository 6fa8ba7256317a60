/**
 * Typed reads of the projections inside a command: `read(tx, keysProjection, [keyId])` returns a
 * `KeyDoc | null`, named by the projection itself rather than by a string and a cast. The one
 * cast from KV's untyped value to the document type lives here, where the projection that wrote
 * the document is the argument.
 */
import { projectionKey } from "../../events/keys.ts";
import type { Projection } from "../../events/projection.ts";
import type { Tx } from "../../events/store.ts";

/** What a read needs of the transaction: the store's `Tx`, or any view that reads KV the same way. */
export type ReadTx = Pick<Tx, "getMany">;

/** One document to read: the projection that folds it and its key below the projection. */
export type Query<D> = readonly [projection: Projection<D>, key: Deno.KvKey];

/** The documents a list of queries returns, position by position. */
export type Docs<Q extends readonly Query<unknown>[]> = {
  -readonly [I in keyof Q]: Q[I] extends Query<infer D> ? D | null : never;
};

/** The projection's document under `key`, as its own type (null: none yet). */
export async function read<D>(tx: ReadTx, projection: Projection<D>, key: Deno.KvKey) {
  const [doc] = await readMany(tx, [[projection, key]] as const);
  return doc as D | null;
}

/** Several documents in one batched KV read (a command's whole state, usually). */
export async function readMany<const Q extends readonly Query<unknown>[]>(
  tx: ReadTx,
  queries: Q,
): Promise<Docs<Q>> {
  const keys = queries.map(([p, key]) => projectionKey(p.name, key));
  return (await tx.getMany<unknown>(keys)) as Docs<Q>;
}

/** A projection's key outside a command (a plain KV read), from the projection itself. */
export const keyOf = <D>(projection: Projection<D>, key: Deno.KvKey): Deno.KvKey =>
  projectionKey(projection.name, key);

/**
 * Typed reads outside a command, straight from KV (a cheap early check, a view): no head guard,
 * so what they return may be stale by the time a command commits.
 */
export const kvReads = (kv: Deno.Kv): ReadTx => ({
  async getMany<T>(keys: Deno.KvKey[]) {
    const out: (T | null)[] = [];
    // Deno KV reads at most 10 keys per getMany.
    for (let i = 0; i < keys.length; i += 10) {
      for (const e of await kv.getMany<unknown[]>(keys.slice(i, i + 10))) out.push(e.value as T);
    }
    return out;
  },
});

/**
 * The documents of a projection under a key prefix (an index such as an API key's endpoints), in
 * key order: from a command's `tx.kv` (the head guard covers what it returns) or a plain KV.
 * `before`: only those whose next key part sorts before it (a page's cursor, with `reverse`).
 */
export async function readList<D>(
  kv: Deno.Kv,
  projection: Projection<D>,
  prefix: Deno.KvKey,
  options: Deno.KvListOptions & { before?: Deno.KvKeyPart } = {},
): Promise<D[]> {
  return await Array.fromAsync(listDocs(kv, projection, prefix, options));
}

/** `readList` one document at a time, for listings too long to hold (the audit's tables). */
export async function* listDocs<D>(
  kv: Deno.Kv,
  projection: Projection<D>,
  prefix: Deno.KvKey,
  options: Deno.KvListOptions & { before?: Deno.KvKeyPart } = {},
): AsyncGenerator<D> {
  for await (const { doc } of listEntries(kv, projection, prefix, options)) yield doc;
}

/**
 * `listDocs` with each document's key below `prefix` (`sub`), for a reader that needs to know
 * where it is.
 */
export async function* listEntries<D>(
  kv: Deno.Kv,
  projection: Projection<D>,
  prefix: Deno.KvKey,
  { before, ...options }: Deno.KvListOptions & { before?: Deno.KvKeyPart } = {},
): AsyncGenerator<{ sub: Deno.KvKey; doc: D }> {
  const at = projectionKey(projection.name, prefix);
  const selector = before === undefined ? { prefix: at } : { prefix: at, end: [...at, before] };
  for await (const row of kv.list<D>(selector, options)) {
    yield { sub: row.key.slice(at.length), doc: row.value };
  }
}
