/**
 * Comparing a running service's projections with a rebuild from its log, without false
 * mismatches. The rebuild stops at the head read when the audit starts (H0); the service goes on
 * writing. Every store commit writes its events and the documents they change together, so a
 * live document that changed after H0 was changed by an event after H0 that was already in the
 * log when the document was read. `LiveCut` follows the log past H0 (`poll`) and names those
 * documents "moved"; the comparison leaves them out and settles each one apart (`settle`): it
 * reads the document and the head in one consistent `getMany`, folds the events after H0 up to
 * that head onto the document rebuilt at H0, and compares. A document edited behind the store's
 * back is never explained by events, so it stays a mismatch.
 */
import { canonicalJson } from "../events/hash.ts";
import { HEAD, type LogHead, projectionKey, PROJECTIONS } from "../events/keys.ts";
import { readEvents } from "../events/log.ts";
import type { StoredEvent } from "../events/types.ts";
import { keyId } from "./key-hash.ts";
import type { Projection } from "../events/projection.ts";

export class LiveCut {
  /** Documents touched by events after H0, by id. */
  readonly moved = new Map<string, Deno.KvKey>();
  /**
   * The events after H0 that touch each moved document, in log order, with the sub-key they touch
   * it under: settling a document folds only its own events (all of them for every document would
   * be quadratic on a busy service).
   */
  readonly #touches = new Map<string, { e: StoredEvent; sub: Deno.KvKey }[]>();
  #seen: number;
  #prevHash: string;
  readonly #byName: Map<string, Projection>;

  constructor(
    readonly kv: Deno.Kv,
    readonly projections: Projection[],
    readonly cut: LogHead | null,
  ) {
    this.#seen = cut?.position ?? 0;
    this.#prevHash = cut?.hash ?? "";
    this.#byName = new Map(projections.map((p) => [p.name, p]));
  }

  /** Reads the events committed since the last poll (up to `to`, or the head now). */
  async poll(to?: number): Promise<void> {
    const opts = { from: this.#seen + 1, prevHash: this.#prevHash, ...(to ? { to } : {}) };
    for await (const e of readEvents(this.kv, opts)) {
      this.#seen = e.position;
      this.#prevHash = e.hash;
      for (const p of this.projections) {
        for (const sub of p.keysOf(e)) {
          const key = projectionKey(p.name, sub);
          const id = keyId(key);
          this.moved.set(id, key);
          const list = this.#touches.get(id);
          if (list) list.push({ e, sub });
          else this.#touches.set(id, [{ e, sub }]);
        }
      }
    }
  }

  get seen(): number {
    return this.#seen;
  }

  /**
   * Whether the live document `key` is what the log explains: `rebuilt` is its value at H0.
   * Returns the mismatch (live and expected) or null.
   */
  async settle(
    key: Deno.KvKey,
    rebuilt: unknown,
  ): Promise<{ live: unknown; expected: unknown } | null> {
    return (await this.settleMany([{ key, rebuilt }]))[0];
  }

  /**
   * `settle` for many documents, nine to a consistent read with the head. A few reads are in
   * flight at a time (each waits on the KV's own thread); their results are compared in order,
   * each against the head its own read saw.
   */
  async settleMany(
    docs: { key: Deno.KvKey; rebuilt: unknown }[],
  ): Promise<({ live: unknown; expected: unknown } | null)[]> {
    const out: ({ live: unknown; expected: unknown } | null)[] = [];
    const read = (i: number) =>
      this.kv.getMany<unknown[]>([HEAD, ...docs.slice(i, i + 9).map((d) => d.key)]);
    const ahead: Promise<Deno.KvEntryMaybe<unknown>[]>[] = [];
    for (let i = 0; i < docs.length && ahead.length < 4; i += 9) ahead.push(read(i));
    for (let i = 0; i < docs.length; i += 9) {
      const [headEntry, ...entries] = await ahead.shift()!;
      if (i + 9 * 4 < docs.length) ahead.push(read(i + 9 * 4));
      const at = (headEntry.value as LogHead | null)?.position ?? 0;
      if (at > this.#seen) await this.poll(at);
      docs.slice(i, i + 9).forEach((d, j) =>
        out.push(this.#compare(d.key, d.rebuilt, at, entries[j].value))
      );
    }
    return out;
  }

  #compare(
    key: Deno.KvKey,
    rebuilt: unknown,
    at: number,
    liveValue: unknown,
  ): { live: unknown; expected: unknown } | null {
    const name = key[PROJECTIONS.length] as string;
    const p = this.#byName.get(name);
    const id = keyId(key);
    let doc: unknown = rebuilt ?? null;
    if (p) {
      for (const { e, sub } of this.#touches.get(id) ?? []) {
        if (e.position > at) break;
        doc = p.evolve(doc as never, e, sub) as unknown;
      }
    }
    const live = liveValue ?? null;
    return canonicalJson(live) === canonicalJson(doc ?? null) ? null : { live, expected: doc };
  }
}
