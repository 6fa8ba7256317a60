/** Shared pieces of the reliability tests. */
import type { EventStore } from "../../events/store.ts";
import { readEvents } from "../../events/log.ts";
import type { StoredEvent } from "../../events/types.ts";
import { assert } from "../support/assert.ts";

/** The seed's error body: {error: {code, message, fields}} and nothing else. */
export function assertErrorShape(body: unknown, context: string): void {
  const b = body as { error?: { code?: unknown; message?: unknown; fields?: unknown } };
  assert(
    b && typeof b === "object" && b.error && typeof b.error === "object",
    `${context}: no error object in ${JSON.stringify(body)?.slice(0, 300)}`,
  );
  assert(typeof b.error.code === "string" && b.error.code.length > 0, `${context}: error.code`);
  assert(typeof b.error.message === "string", `${context}: error.message`);
  assert(
    b.error.fields !== null && typeof b.error.fields === "object" && !Array.isArray(b.error.fields),
    `${context}: error.fields must be an object, got ${JSON.stringify(b.error.fields)}`,
  );
  assert(Object.keys(body as object).length === 1, `${context}: extra top-level members`);
}

export async function allEvents(kv: Deno.Kv): Promise<StoredEvent[]> {
  const out: StoredEvent[] = [];
  for await (const e of readEvents(kv)) out.push(e);
  return out;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Holds the store's next `transact` (a request stopped just before its own commit) until
 * `release()`; `restore()` puts the store back.
 */
export function holdNextCommit(store: EventStore) {
  const transact = store.transact.bind(store);
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  let reached!: () => void;
  const atCommit = new Promise<void>((r) => (reached = r));
  let first = true;
  store.transact = (async (fn: Parameters<typeof transact>[0]) => {
    if (first) {
      first = false;
      reached();
      await held;
    }
    return await transact(fn);
  }) as typeof store.transact;
  return { atCommit, release, restore: () => (store.transact = transact) };
}
