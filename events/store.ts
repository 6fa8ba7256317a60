/**
 * The append-only event log on Deno KV.
 *
 * Every append is one `kv.atomic()` commit that writes the events, advances the global head of
 * the hash chain, bumps the stream version and folds the inline projections. The commit is
 * guarded by the head's versionstamp, so appends are serialised and whatever a command read
 * after `transact` loaded the head is still true when its events land; a conflict re-runs the
 * command, it never overwrites.
 */
import { commitOrConflict } from "./commit.ts";
import { Turns } from "./turns.ts";
import { chainHash, GENESIS_HASH } from "./hash.ts";
import { bodyText, encodeLine, eventLine, lineBytes, packSegments } from "./codec.ts";
import {
  HEAD,
  LOG_LAYOUT,
  type LogHead,
  projectionKey,
  segmentKey,
  STREAM_INDEX,
  streamEventKey,
  streamKey,
  tailKey,
} from "./keys.ts";
import { eventsAt, isLegacy, LegacyLayoutError, readEvents } from "./log.ts";
import type { DomainEvent, StoredEvent } from "./types.ts";
import type { Projection } from "./projection.ts";

/** Deno KV refuses values over 64 KiB; we stay clear of it with room for the envelope. */
export const MAX_EVENT_BYTES = 60 * 1024;

/**
 * The tail is sealed into segments once its lines reach this many bytes (or `SEAL_EVENTS`
 * events), in the commit of the append that crosses it: most appends write one short line, and
 * one in about a hundred also rewrites the tail as a segment and deletes its lines.
 */
export const SEAL_BYTES = 48 * 1024;
export const SEAL_EVENTS = 400;
/** A commit whose tail would be larger than this leaves sealing to a later append. */
const SEAL_MAX_BYTES = 320 * 1024;

export interface StreamAppend {
  stream: string;
  /** The stream version the command decided on; "any" skips the check (the head guards order). */
  expectedVersion: number | "any";
  events: DomainEvent[];
}

export interface ExtraSet {
  key: Deno.KvKey;
  value: unknown;
  expireIn?: number;
  /**
   * Set only while the key still has this versionstamp (null: absent). When it has changed, the
   * commit is not retried: `GuardChangedError`. The idempotency record uses it, so a request whose
   * in-flight marker was taken over by a retry writes nothing.
   */
  ifVersionstamp?: string | null;
}

/** An `ExtraSet` guard no longer holds: someone else owns that key now. */
export class GuardChangedError extends Error {
  constructor(readonly key: Deno.KvKey) {
    super(`the guarded key ${JSON.stringify(key)} changed under this command`);
  }
}

export interface Enqueue {
  value: unknown;
  delay?: number;
  keysIfUndelivered?: Deno.KvKey[];
}

/** What a command hands back: events to append (maybe none) plus writes that ride along. */
export interface Decision<R> {
  append?: StreamAppend[];
  sets?: ExtraSet[];
  deletes?: Deno.KvKey[];
  enqueue?: Enqueue[];
  result: R;
}

export class ConflictError extends Error {
  constructor(message = "too many concurrent writers; retry") {
    super(message);
  }
}

export class StreamVersionError extends Error {
  constructor(readonly stream: string, readonly expected: number, readonly actual: number) {
    super(`stream ${stream} is at version ${actual}, expected ${expected}`);
  }
}

export class EventTooLargeError extends Error {
  constructor(readonly type: string, readonly bytes: number) {
    super(`event ${type} is ${bytes} bytes, above the ${MAX_EVENT_BYTES} byte limit`);
  }
}

/** A read view that only exists inside `transact`: the head it saw guards the commit. */
export interface Tx {
  readonly kv: Deno.Kv;
  readonly head: LogHead;
  get<T>(key: Deno.KvKey): Promise<T | null>;
  getMany<T>(keys: Deno.KvKey[]): Promise<(T | null)[]>;
  /** The document `projection` folds under `sub`, typed by the projection itself. */
  projection<D>(projection: Projection<D>, sub: Deno.KvKey): Promise<D | null>;
  streamVersion(stream: string): Promise<number>;
}

export interface EventStoreOptions {
  projections: Projection[];
  /** Seal the tail once it holds this many bytes (default `SEAL_BYTES`; tests seal sooner). */
  sealBytes?: number;
  now?: () => number;
  maxAttempts?: number;
  /** Wraps each KV commit with the events it writes (tracing); injected so the log imports nothing. */
  aroundCommit?: <T>(events: StoredEvent[], commit: () => Promise<T>) => Promise<T>;
}

export interface TransactResult<R> {
  result: R;
  events: StoredEvent[];
}

export class EventStore {
  readonly projections: Projection[];
  readonly #now: () => number;
  readonly #maxAttempts: number;
  readonly #sealBytes: number;
  readonly #turns = new Turns();
  readonly #aroundCommit: NonNullable<EventStoreOptions["aroundCommit"]>;

  constructor(readonly kv: Deno.Kv, opts: EventStoreOptions) {
    this.projections = opts.projections;
    this.#aroundCommit = opts.aroundCommit ?? ((_events, commit) => commit());
    this.#now = opts.now ?? Date.now;
    this.#maxAttempts = opts.maxAttempts ?? 200;
    this.#sealBytes = opts.sealBytes ?? SEAL_BYTES;
  }

  /**
   * Runs a command: `fn` reads what it needs through `tx` and decides. Its events are committed
   * only if nothing was appended since `tx.head` was read; otherwise `fn` runs again on fresh
   * state. `fn` must therefore be free of side effects beyond reading.
   */
  transact<R>(fn: (tx: Tx) => Promise<Decision<R>>): Promise<TransactResult<R>> {
    // Every append moves the one log head, so concurrent writers in this process would only
    // collide and re-run each other's commands, doing the work twice. They take turns here
    // instead; the head guard still settles races between processes or isolates. `fn` must therefore never call `transact` on this store itself.
    return this.#turns.run("head", () => this.#transact(fn));
  }

  async #transact<R>(fn: (tx: Tx) => Promise<Decision<R>>): Promise<TransactResult<R>> {
    for (let attempt = 0; attempt < this.#maxAttempts; attempt++) {
      const headEntry = await this.kv.get<LogHead>(HEAD);
      const head = headEntry.value ?? { position: 0, hash: GENESIS_HASH };
      if (isLegacy(head)) throw new LegacyLayoutError();
      const decision = await fn(this.#tx(head));
      const hasWrites = (decision.append?.some((a) => a.events.length > 0)) ||
        decision.sets?.length || decision.deletes?.length || decision.enqueue?.length;
      if (!hasWrites) return { result: decision.result, events: [] };
      const committed = await this.#commit(headEntry.versionstamp, head, decision);
      if (committed) return { result: decision.result, events: committed };
      await this.#assertGuards(decision);
      // Jittered backoff keeps a crowd of writers from colliding in lock-step.
      await new Promise((r) => setTimeout(r, Math.random() * Math.min(2 + attempt, 20)));
    }
    throw new ConflictError();
  }

  /** After a failed commit: a guard that changed is final, not a conflict to retry. */
  async #assertGuards(decision: Decision<unknown>): Promise<void> {
    for (const s of decision.sets ?? []) {
      if (s.ifVersionstamp === undefined) continue;
      const now = await this.kv.get(s.key);
      if (now.versionstamp !== s.ifVersionstamp) throw new GuardChangedError(s.key);
    }
  }

  /** Appends without a decision function, for callers that already hold all they need. */
  async append(appends: StreamAppend[], extra: Omit<Decision<unknown>, "append" | "result"> = {}) {
    const { events } = await this.transact(() =>
      Promise.resolve({ ...extra, append: appends, result: null })
    );
    return events;
  }

  #tx(head: LogHead): Tx {
    const kv = this.kv;
    const getMany = async <T>(keys: Deno.KvKey[]) => {
      const out: (T | null)[] = [];
      // Deno KV reads at most 10 keys per getMany.
      for (let i = 0; i < keys.length; i += 10) {
        const entries = await kv.getMany<unknown[]>(keys.slice(i, i + 10));
        for (const e of entries) out.push(e.value as T | null);
      }
      return out;
    };
    return {
      kv,
      head,
      get: async <T>(key: Deno.KvKey) => (await kv.get<T>(key)).value,
      getMany,
      projection: async <D>(projection: Projection<D>, sub: Deno.KvKey) =>
        (await kv.get<D>(projectionKey(projection.name, sub))).value,
      streamVersion: async (stream: string) => (await kv.get<number>(streamKey(stream))).value ?? 0,
    };
  }

  async #commit(
    headStamp: string | null,
    head: LogHead,
    decision: Decision<unknown>,
  ): Promise<StoredEvent[] | null> {
    const at = this.#now();
    const atomic = this.kv.atomic().check({ key: HEAD, versionstamp: headStamp });
    const stored: StoredEvent[] = [];
    const lines: string[] = [];
    let position = head.position;
    let prevHash = head.hash;

    for (const append of decision.append ?? []) {
      if (append.events.length === 0) continue;
      const versionEntry = await this.kv.get<number>(streamKey(append.stream));
      const version = versionEntry.value ?? 0;
      if (append.expectedVersion !== "any" && append.expectedVersion !== version) {
        // The caller's expectation came from a read under `head`; if another writer has moved the
        // head since, that read is stale: a conflict to re-run, not a wrong expectation.
        const now = await this.kv.get(HEAD);
        if (now.versionstamp !== headStamp) return null;
        throw new StreamVersionError(append.stream, append.expectedVersion, version);
      }
      atomic.check(versionEntry);
      let streamPosition = version;
      for (const event of append.events) {
        position += 1;
        streamPosition += 1;
        const unhashed = {
          ...event,
          at,
          stream: append.stream,
          streamPosition,
          position,
          prevHash,
        } as Omit<StoredEvent, "hash">;
        const { prevHash: _, ...body } = unhashed;
        const text = bodyText(body);
        // The hash covers exactly the text stored.
        const hash = chainHash(prevHash, text);
        const full = { ...unhashed, hash } as StoredEvent;
        const bytes = new TextEncoder().encode(JSON.stringify(full)).length;
        if (bytes > MAX_EVENT_BYTES) throw new EventTooLargeError(event.type, bytes);
        stored.push(full);
        lines.push(eventLine(hash, text));
        atomic.set(streamEventKey(append.stream, streamPosition), position);
        prevHash = hash;
      }
      atomic.set(streamKey(append.stream), streamPosition);
    }

    if (stored.length > 0) {
      atomic.set(HEAD, await this.#writeLines(atomic, head, lines, prevHash));
      for (const [key, doc] of await this.#fold(stored)) {
        if (doc === null) atomic.delete(key);
        else atomic.set(key, doc);
      }
    }
    for (const s of decision.sets ?? []) {
      if (s.ifVersionstamp !== undefined) {
        atomic.check({ key: s.key, versionstamp: s.ifVersionstamp });
      }
      atomic.set(s.key, s.value, s.expireIn ? { expireIn: s.expireIn } : undefined);
    }
    for (const key of decision.deletes ?? []) atomic.delete(key);
    for (const q of decision.enqueue ?? []) {
      atomic.enqueue(q.value, { delay: q.delay, keysIfUndelivered: q.keysIfUndelivered });
    }
    const res = await this.#aroundCommit(stored, () => commitOrConflict(atomic));
    return res.ok ? stored : null;
  }

  /** Folds new events into the projection documents they touch, reading each document once. */
  async #fold(events: StoredEvent[]): Promise<[Deno.KvKey, unknown][]> {
    const docs = new Map<string, { key: Deno.KvKey; doc: unknown }>();
    const touched: { id: string; p: Projection; sub: Deno.KvKey; e: StoredEvent }[] = [];
    for (const e of events) {
      for (const p of this.projections) {
        for (const sub of p.keysOf(e)) {
          const key = projectionKey(p.name, sub);
          const id = JSON.stringify(key, (_k, v) => typeof v === "bigint" ? `${v}n` : v);
          if (!docs.has(id)) docs.set(id, { key, doc: null });
          touched.push({ id, p, sub, e });
        }
      }
    }
    const pending = [...docs.values()];
    for (let i = 0; i < pending.length; i += 10) {
      const batch = pending.slice(i, i + 10);
      const entries = await this.kv.getMany(batch.map((d) => d.key));
      entries.forEach((entry, j) => (batch[j].doc = entry.value));
    }
    for (const t of touched) {
      const slot = docs.get(t.id)!;
      slot.doc = t.p.evolve(slot.doc as never, t.e, t.sub);
    }
    return [...docs.values()].map((d) => [d.key, d.doc]);
  }

  /**
   * Writes the new lines to the tail, or seals the tail with them into segments when it has grown
   * past `SEAL_BYTES`; returns the new head. The tail's lines are read here, not under a check of
   * their own: they only change in commits that also move the head, which the commit checks.
   */
  async #writeLines(
    atomic: Deno.AtomicOperation,
    head: LogHead,
    lines: string[],
    hash: string,
  ): Promise<LogHead> {
    const sealed = head.sealed ?? 0;
    const position = head.position + lines.length;
    const added = lines.reduce((n, l) => n + lineBytes(l) + 1, 0);
    const tailBytes = (head.tailBytes ?? 0) + added;
    const tailEvents = position - sealed;
    if (tailBytes >= this.#sealBytes || tailEvents >= SEAL_EVENTS) {
      const old: string[] = [];
      const iter = this.kv.list<Uint8Array>({
        start: tailKey(sealed + 1),
        end: tailKey(head.position + 1),
      });
      for await (const e of iter) old.push(new TextDecoder().decode(e.value));
      // A tail that is not whole (tampered with) is left as it is, for the audit to find.
      if (old.length === head.position - sealed) {
        // The new lines go in too unless that would make the commit too large.
        const withNew = tailBytes <= SEAL_MAX_BYTES;
        for (const seg of packSegments(sealed + 1, withNew ? [...old, ...lines] : old)) {
          atomic.set(segmentKey(seg.last), seg.value);
        }
        for (let p = sealed + 1; p <= head.position; p++) atomic.delete(tailKey(p));
        if (withNew) return { position, hash, layout: LOG_LAYOUT, sealed: position, tailBytes: 0 };
        lines.forEach((l, i) => atomic.set(tailKey(head.position + 1 + i), encodeLine(l)));
        return { position, hash, layout: LOG_LAYOUT, sealed: head.position, tailBytes: added };
      }
    }
    lines.forEach((l, i) => atomic.set(tailKey(head.position + 1 + i), encodeLine(l)));
    return { position, hash, layout: LOG_LAYOUT, sealed, tailBytes };
  }

  /** The whole log in order, a page at a time, so memory stays flat however long it is. */
  readAll(opts: { from?: number; batchSize?: number } = {}): AsyncGenerator<StoredEvent> {
    return readEvents(this.kv, opts);
  }

  async readStream(stream: string): Promise<StoredEvent[]> {
    const positions: number[] = [];
    for await (const e of this.kv.list<number>({ prefix: [...STREAM_INDEX, stream] })) {
      positions.push(e.value);
    }
    return await eventsAt(this.kv, positions);
  }

  async head(): Promise<LogHead> {
    return (await this.kv.get<LogHead>(HEAD)).value ?? { position: 0, hash: GENESIS_HASH };
  }
}
