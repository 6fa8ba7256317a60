/**
 * The live projections as the audit compares them, on a service that may be writing meanwhile.
 *
 * The audit covers the log up to the head it read first (H0), whose KV entry carries the
 * versionstamp of the commit that wrote it. The store writes events, the documents they change and
 * the head in one commit, so a live document whose versionstamp is not later than H0's is the
 * document as of H0. A later one has "moved": so has one that an event after H0 changes (or
 * deletes). Moved documents stay out of the comparison in bulk and are settled one by one: the
 * document and the head are read in one consistent read, the events after H0 up to that head are
 * folded onto the document rebuilt at H0, and the two must be equal. A document edited behind the
 * store's back is explained by no event, and is named.
 */
import { canonicalJson } from "../../events/hash.ts";
import { HEAD, type LogHead, PROJECTIONS } from "../../events/keys.ts";
import { readLog } from "../../events/log.ts";
import type { StoredEvent } from "../../events/types.ts";
import type { Digests } from "./digest.ts";
import { keyText, type Touch, type Touches } from "./fold.ts";

/** The head an audit covers, with the versionstamp of the commit that wrote it. */
export interface AuditHead {
  head: LogHead | null;
  versionstamp: string;
}

export async function readAuditHead(kv: Deno.Kv): Promise<AuditHead> {
  const h = await kv.get<LogHead>(HEAD);
  return { head: h.value, versionstamp: h.versionstamp ?? "" };
}

/** A document that differs from its rebuild; `id` is its key as text. */
export interface Mismatch {
  id: string;
  live: unknown;
  rebuilt: unknown;
}

/** Equal as JSON values, whatever the order of their properties. */
export function sameDoc(a: unknown, b: unknown): boolean {
  const text = (v: unknown) => {
    try {
      return canonicalJson(v ?? null);
    } catch {
      return `unserializable ${String(v)}`;
    }
  };
  return text(a) === text(b);
}

export class LiveSide {
  /** Moved documents, by id. */
  readonly moved = new Map<string, Deno.KvKey>();
  /** The events after H0 read so far, each with the documents it touches. */
  readonly #after: { e: StoredEvent; touches: Touch[] }[] = [];
  #through: number;

  constructor(
    readonly kv: Deno.Kv,
    readonly at: AuditHead,
    readonly touches: Touches,
  ) {
    this.#through = at.head?.position ?? 0;
  }

  get position(): number {
    return this.at.head?.position ?? 0;
  }

  #isMoved(versionstamp: string): boolean {
    return versionstamp > this.at.versionstamp;
  }

  /** Adds every live projection document not moved to `digest`; returns how many were read. */
  async digestAll(digest: Digests): Promise<number> {
    let n = 0;
    // Small pages: a page of entries lives until it is digested, and what outlives a young
    // collection is only freed by a full one.
    for await (const e of this.kv.list({ prefix: PROJECTIONS }, { batchSize: 100 })) {
      n++;
      const id = keyText(e.key);
      if (this.#isMoved(e.versionstamp)) this.moved.set(id, e.key);
      else digest.add(String(e.key[PROJECTIONS.length]), id, e.value);
    }
    return n;
  }

  /** The live values of `keys` (null: none), noting the moved ones. */
  async read(keys: Deno.KvKey[]): Promise<unknown[]> {
    const out: unknown[] = [];
    for (let i = 0; i < keys.length; i += 10) {
      for (const e of await this.kv.getMany(keys.slice(i, i + 10))) {
        if (e.versionstamp !== null && this.#isMoved(e.versionstamp)) {
          this.moved.set(keyText(e.key), e.key);
        }
        out.push(e.value);
      }
    }
    return out;
  }

  /**
   * Reads the log past H0 up to the head now, noting the documents its events touch as moved
   * (only those in `only`, when given).
   */
  async follow(only?: ReadonlySet<string>): Promise<void> {
    const now = (await this.kv.get<LogHead>(HEAD)).value?.position ?? 0;
    for (const { touches } of await this.#readTo(now)) {
      for (const t of touches) if (!only || only.has(t.id)) this.moved.set(t.id, t.key);
    }
  }

  /** Reads the events after those read so far, up to `to`; returns the new ones. */
  async #readTo(to: number) {
    const fresh: { e: StoredEvent; touches: Touch[] }[] = [];
    if (to <= this.#through) return fresh;
    for await (const batch of readLog(this.kv, { from: this.#through + 1, to })) {
      for (const { event } of batch) {
        fresh.push({ e: event, touches: this.touches.ofOrNone(event) });
      }
    }
    this.#after.push(...fresh);
    this.#through = Math.max(this.#through, to);
    return fresh;
  }

  /**
   * Settles one document against the log: null when the live one is what the events up to the
   * head read with it make of `rebuilt` (its value at H0), else the mismatch.
   */
  async settle(key: Deno.KvKey, id: string, rebuilt: unknown): Promise<Mismatch | null> {
    const [live, head] = await this.kv.getMany<[unknown, LogHead]>([key, HEAD]);
    const to = head.value?.position ?? 0;
    await this.#readTo(to);
    let doc = rebuilt;
    try {
      for (const { e, touches } of this.#after) {
        if (e.position > to) break;
        for (const t of touches) if (t.id === id) doc = t.fold.evolve(doc, e, t.sub);
      }
    } catch {
      return {
        id,
        live: live.value,
        rebuilt: "(an event after the audit's head cannot be folded)",
      };
    }
    return sameDoc(live.value, doc) ? null : { id, live: live.value, rebuilt: doc };
  }
}
