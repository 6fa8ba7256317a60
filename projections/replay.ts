/**
 * Replay: rebuild every projection from the log alone and compare it with the live one.
 * The log is streamed and verified link by link, so memory stays bounded by the projections,
 * not by the length of the history.
 */
import { createHash } from "node:crypto";
import { canonicalJson, GENESIS_HASH } from "../events/hash.ts";
import { HEAD, type LogHead, projectionKey, PROJECTIONS } from "../events/keys.ts";
import { readAhead } from "../events/read-ahead.ts";
import { isLegacy, type ReadEvent, readLog, type ReadStats, recordsAfter } from "../events/log.ts";
import type { StoredEvent } from "../events/types.ts";
import { DigestFolder, LastTouch, type LastTouchPart, splitByTouches } from "./digest-fold.ts";
import { LiveCut } from "./live-cut.ts";
import {
  addStoredDocuments,
  digestLiveProjections,
  Held,
  type ProjectionDigest,
  randomSalt,
} from "./doc-digest.ts";
import { bigintSafe, KeyBloomFilter, keyId } from "./key-hash.ts";
import type { Projection } from "../events/projection.ts";
import { ProjectionsByType } from "./touches.ts";

export interface ChainProblem {
  position: number;
  problem: string;
}

export interface ChainVerification {
  ok: boolean;
  events: number;
  problems: ChainProblem[];
}

/**
 * events/hash.ts `eventHash`, synchronously. Replay hashes every event of the history; an
 * awaited WebCrypto call per event cost more than the rest of the check (benchmarked in
 * bench/); the digest of the same bytes is the same, which tests/reliability pins.
 */
export function eventHashSync(event: Omit<StoredEvent, "hash">): string {
  const { prevHash, ...body } = event;
  return createHash("sha256").update(`${prevHash}\n${canonicalJson(body)}`, "utf8").digest("hex");
}

/** Walks events in order and checks positions, links and hashes. */
export class ChainVerifier {
  #expected = 1;
  #prevHash = GENESIS_HASH;
  readonly problems: ChainProblem[] = [];
  count = 0;

  /** Still returns a promise, as it did when hashing was asynchronous. */
  check(e: StoredEvent): Promise<void> {
    this.checkRead({ event: e, body: null });
    return Promise.resolve();
  }

  /**
   * Checks an event as read from the store. With its stored body text the hash is taken over
   * those bytes (what the store hashed); without it, over the event's canonical JSON.
   */
  checkRead(r: ReadEvent): void {
    const e = r.event;
    this.count++;
    if (e.position !== this.#expected) {
      this.problems.push({
        position: e.position,
        problem: e.position > this.#expected
          ? `events ${this.#expected}..${e.position - 1} are missing`
          : `position ${e.position} out of order`,
      });
    }
    if (e.prevHash !== this.#prevHash) {
      this.problems.push({
        position: e.position,
        problem: "prevHash does not link to the previous event",
      });
    }
    const { hash, ...rest } = e;
    const actual = r.body === null
      ? eventHashSync(rest)
      : createHash("sha256").update(`${e.prevHash}\n${r.body}`, "utf8").digest("hex");
    if (actual !== hash) {
      this.problems.push({
        position: e.position,
        problem: "hash does not match the event's content",
      });
    }
    this.#expected = (typeof e.position === "number" ? e.position : this.#expected) + 1;
    this.#prevHash = hash;
  }

  /** Carries on from a verified point of the log (an audit checkpoint). */
  startAt(position: number, hash: string): this {
    this.#expected = position + 1;
    this.#prevHash = hash;
    return this;
  }

  finish(head: LogHead | null): ChainVerification {
    const h = head ?? { position: 0, hash: GENESIS_HASH };
    if (h.position !== this.#expected - 1 || h.hash !== this.#prevHash) {
      this.problems.push({
        position: h.position,
        problem: `log head (${h.position}) does not match the last event (${this.#expected - 1})`,
      });
    }
    return { ok: this.problems.length === 0, events: this.count, problems: this.problems };
  }
}

export async function verifyChain(kv: Deno.Kv): Promise<ChainVerification> {
  const v = new ChainVerifier();
  const head = (await kv.get<LogHead>(HEAD)).value;
  for await (const batch of readLog(kv, { head })) for (const r of batch) v.checkRead(r);
  const chain = v.finish(head);
  await checkNothingAfter(kv, head, chain);
  return chain;
}

/** Records past a head that has not moved since were put there by something else. */
export async function checkNothingAfter(
  kv: Deno.Kv,
  head: LogHead | null,
  chain: ChainVerification,
): Promise<void> {
  const at = await recordsAfter(kv, head?.position ?? 0, isLegacy(head));
  if (at === null) return;
  const now = (await kv.get<LogHead>(HEAD)).value;
  if ((now?.position ?? 0) === (head?.position ?? 0) && now?.hash === head?.hash) {
    chain.problems.push({
      position: at,
      problem: `events after the log head (${head?.position ?? 0})`,
    });
    chain.ok = false;
  }
}

/** Projection documents held in memory during a rebuild, keyed like the live KV. */
export class ProjectionBuffer {
  readonly docs = new Map<string, { key: Deno.KvKey; doc: unknown }>();

  apply(projections: Projection[], e: StoredEvent): void {
    for (const p of projections) {
      for (const sub of p.keysOf(e)) {
        const key = projectionKey(p.name, sub);
        const id = keyId(key);
        const prev = this.docs.get(id)?.doc ?? null;
        const next = p.evolve(prev as never, e, sub);
        if (next === null) this.docs.delete(id);
        else this.docs.set(id, { key, doc: next });
      }
    }
  }
}

export interface ProjectionMismatch {
  key: string;
  live: unknown;
  rebuilt: unknown;
}

export interface ReplayReport {
  chain: ChainVerification;
  documents: number;
  mismatches: ProjectionMismatch[];
  equal: boolean;
}

/** Rebuilds from the log of `source` and compares with the projections stored in `source`. */
export async function replayAndCompare(
  source: Deno.Kv,
  projections: Projection[],
): Promise<ReplayReport> {
  const verifier = new ChainVerifier();
  const buffer = new ProjectionBuffer();
  const head = (await source.get<LogHead>(HEAD)).value;
  for await (const batch of readLog(source, { head })) {
    for (const r of batch) {
      verifier.checkRead(r);
      buffer.apply(projections, r.event);
    }
  }
  const chain = verifier.finish(head);
  await checkNothingAfter(source, head, chain);
  const mismatches: ProjectionMismatch[] = [];
  const seen = new Set<string>();
  for await (const entry of source.list({ prefix: PROJECTIONS }, { batchSize: 1000 })) {
    const id = keyId(entry.key);
    seen.add(id);
    const rebuilt = buffer.docs.get(id)?.doc;
    if (rebuilt === undefined || canonical(rebuilt) !== canonical(entry.value)) {
      mismatches.push({ key: id, live: entry.value, rebuilt: rebuilt ?? null });
    }
  }
  for (const [id, { doc }] of buffer.docs) {
    if (!seen.has(id)) mismatches.push({ key: id, live: null, rebuilt: doc });
  }
  return {
    chain,
    documents: buffer.docs.size,
    mismatches,
    equal: mismatches.length === 0 && chain.ok,
  };
}

/** Writes a rebuilt projection set into a fresh KV, so it can be served or diffed there. */
export async function writeProjections(target: Deno.Kv, buffer: ProjectionBuffer): Promise<void> {
  let atomic = target.atomic();
  let n = 0;
  for (const { key, doc } of buffer.docs.values()) {
    atomic.set(key, doc);
    if (++n % 500 === 0) {
      await atomic.commit();
      atomic = target.atomic();
    }
  }
  await atomic.commit();
}

const canonical = canonicalJson;

/**
 * A fold whose documents live in a KV, behind a bounded write-back cache: memory stays flat
 * however many documents the projections hold, and the result can be listed in key order.
 * Used by the audit (into a scratch KV) and by events:import (into the KV being rebuilt).
 */
export class ProjectionFolder {
  readonly #cache = new Map<string, { key: Deno.KvKey; doc: unknown }>();
  readonly #cacheSize: number;
  /** Ids ever written to the target; a miss outside it needs no KV read. Made on first spill. */
  #spilled: KeyBloomFilter | null = null;
  /**
   * The batch being committed in the background while the fold goes on (one at a time), by id:
   * a document evicted in it and needed again is read from here, not from the KV.
   */
  #inFlight = new Map<string, unknown>();
  #writing: Promise<void> = Promise.resolve();

  readonly #existing: boolean;
  readonly #byType: ProjectionsByType;

  constructor(
    readonly target: Deno.Kv,
    readonly projections: Projection[],
    /** `existing`: the target already holds documents (an incremental audit's state). */
    opts: { cacheSize?: number; existing?: boolean } = {},
  ) {
    this.#cacheSize = Math.max(1, opts.cacheSize ?? 20_000);
    this.#existing = opts.existing ?? false;
    this.#byType = new ProjectionsByType(projections);
  }

  async apply(e: StoredEvent): Promise<void> {
    for (const p of this.#byType.of(e)) {
      for (const sub of p.keysOf(e)) {
        const key = projectionKey(p.name, sub);
        const id = keyId(key);
        const hit = this.#cache.get(id);
        const prev = hit ? hit.doc : await this.#load(id, key);
        this.#cache.delete(id);
        this.#cache.set(id, { key, doc: p.evolve(prev as never, e, sub) });
      }
    }
    if (this.#cache.size > this.#cacheSize) {
      // Evict a tenth at a time: one batched write instead of a KV commit per new document.
      const low = this.#cacheSize - Math.max(1, Math.floor(this.#cacheSize / 10));
      await this.#evict(this.#cache.size - Math.max(0, low));
    }
  }

  /** Reads the documents of `keys` into the cache, ten to a read (an `existing` target). */
  async preload(keys: Deno.KvKey[]): Promise<void> {
    const todo = keys.filter((k) => !this.#cache.has(keyId(k)));
    for (let i = 0; i < todo.length; i += 10) {
      const batch = todo.slice(i, i + 10);
      const entries = await this.target.getMany(batch);
      entries.forEach((e, j) => {
        if (e.value !== null) this.#cache.set(keyId(batch[j]), { key: batch[j], doc: e.value });
      });
    }
  }

  async #load(id: string, key: Deno.KvKey): Promise<unknown> {
    if (this.#existing) {
      if (this.#inFlight.has(id)) return this.#inFlight.get(id);
      return (await this.target.get(key)).value;
    }
    if (!this.#spilled?.has(id)) return null;
    if (this.#inFlight.has(id)) return this.#inFlight.get(id);
    return (await this.target.get(key)).value;
  }

  async #evict(n: number): Promise<void> {
    const out: { key: Deno.KvKey; doc: unknown }[] = [];
    for (const [id, slot] of this.#cache) {
      if (out.length >= n) break;
      this.#cache.delete(id);
      out.push(slot);
    }
    await this.#write(out);
  }

  /**
   * Writes every pending document; after this the target holds the whole fold and the cache is
   * let go (a later `apply` reads what it needs back from the target).
   */
  async flush(): Promise<void> {
    const out = [...this.#cache.values()];
    this.#cache.clear();
    await this.#write(out);
    await this.#writing;
    this.#inFlight.clear();
  }

  /**
   * Starts committing `docs` once the previous batch is in, and returns without waiting for
   * this one: the KV writes (most of a rebuild's time) overlap with folding the next events.
   */
  async #write(docs: { key: Deno.KvKey; doc: unknown }[]): Promise<void> {
    await this.#writing;
    if (docs.length === 0) return;
    this.#spilled ??= new KeyBloomFilter();
    const batch = new Map<string, unknown>();
    for (const d of docs) {
      const id = keyId(d.key);
      this.#spilled.add(id);
      batch.set(id, d.doc);
    }
    this.#inFlight = batch;
    this.#writing = commitInBatches(
      this.target,
      docs.map((d) => ({ key: d.key, value: d.doc })),
    ).then(() => {
      // Committed: the KV has these now; let them go unless the cache still holds them.
      if (this.#inFlight === batch) this.#inFlight = new Map();
    });
    // A failure surfaces at the next write or flush; keep it from counting as unhandled now.
    this.#writing.catch(() => {});
  }
}

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

export interface ProjectionComparison {
  /** Documents compared on the live side plus those only the rebuild has. */
  documents: number;
  mismatchCount: number;
  /** The first `maxMismatches` mismatches; `mismatchCount` has them all. */
  mismatches: ProjectionMismatch[];
}

/**
 * Compares the live projections with a rebuilt set held in another KV by walking both in key
 * order at once (a merge of two ordered `list`s, no point reads). Every live document under the
 * projections prefix must have a rebuilt twin (a stray document of an unknown projection is a
 * mismatch too); every rebuilt document of `names` must exist live. Mismatches are reported in
 * key order.
 */
export async function compareProjectionStores(
  live: Deno.Kv,
  rebuilt: Deno.Kv,
  names: string[],
  opts: {
    maxMismatches?: number;
    onMismatch?: (m: ProjectionMismatch) => void | Promise<void>;
    /** Decides a mismatch found: the one to report, or null when it is none after all. */
    settle?: (m: ProjectionMismatch) => Promise<ProjectionMismatch | null>;
  } = {},
): Promise<ProjectionComparison> {
  const max = opts.maxMismatches ?? 1000;
  const out: ProjectionComparison = { documents: 0, mismatchCount: 0, mismatches: [] };
  const report = async (found: ProjectionMismatch) => {
    const m = opts.settle ? await opts.settle(found) : found;
    if (!m) return;
    out.mismatchCount++;
    if (out.mismatches.length < max) out.mismatches.push(m);
    await opts.onMismatch?.(m);
  };
  const checked = new Set(names);
  // The rebuilt side may hold extra folds (the audit's) beside the projections it is checked on.
  const counts = (e: Deno.KvEntry<unknown>) =>
    typeof e.key[PROJECTIONS.length] === "string" &&
    checked.has(e.key[PROJECTIONS.length] as string);

  const a = readAhead(live.list({ prefix: PROJECTIONS }, { batchSize: 1000 }))[
    Symbol.asyncIterator
  ]();
  const b = readAhead(rebuilt.list({ prefix: PROJECTIONS }, { batchSize: 1000 }))[
    Symbol.asyncIterator
  ]();
  let l = await a.next();
  let r = await b.next();
  while (!l.done || !r.done) {
    // A comparator that ever ordered two keys wrongly could only report spurious mismatches:
    // documents are compared only under identical keys, and every unmatched one is reported.
    const order = l.done ? 1 : r.done ? -1 : compareKvKeys(l.value.key, r.value.key);
    if (order === 0) {
      out.documents++;
      if (!sameValue(l.value!.value, r.value!.value)) {
        await report({ key: keyId(l.value!.key), live: l.value!.value, rebuilt: r.value!.value });
      }
      l = await a.next();
      r = await b.next();
    } else if (order < 0) {
      out.documents++;
      await report({ key: keyId(l.value!.key), live: l.value!.value, rebuilt: null });
      l = await a.next();
    } else {
      if (counts(r.value!)) {
        out.documents++;
        await report({ key: keyId(r.value!.key), live: null, rebuilt: r.value!.value });
      }
      r = await b.next();
    }
  }
  return out;
}

/** Equal as canonical JSON; the plain JSON text decides first when it already matches. */
function sameValue(a: unknown, b: unknown): boolean {
  try {
    // Same text means same properties in the same order with the same values.
    if (JSON.stringify(a) === JSON.stringify(b)) return true;
  } catch { /* a bigint: canonicalJson decides (and throws the same way) */ }
  return canonical(a) === canonical(b);
}

/**
 * Deno KV's key order: parts compared in turn, a key before any longer key it is a prefix of;
 * by type Uint8Array < string < bigint < number < false < true; strings by UTF-8 bytes (code
 * points), numbers as KV encodes doubles (so -0 before 0), bytes by bytes.
 */
export function compareKvKeys(a: Deno.KvKey, b: Deno.KvKey): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const c = compareKeyPart(a[i], b[i]);
    if (c !== 0) return c;
  }
  return a.length - b.length;
}

const typeRank = (v: Deno.KvKeyPart): number =>
  v instanceof Uint8Array
    ? 0
    : typeof v === "string"
    ? 1
    : typeof v === "bigint"
    ? 2
    : typeof v === "number"
    ? 3
    : v
    ? 5
    : 4;

function compareKeyPart(a: Deno.KvKeyPart, b: Deno.KvKeyPart): number {
  if (typeof a === "string" && typeof b === "string") return compareCodePoints(a, b);
  // Plain numbers order as they compare; only -0 and NaN need the encoded form below.
  if (typeof a === "number" && typeof b === "number" && a !== 0 && b !== 0 && a === a && b === b) {
    return a < b ? -1 : a > b ? 1 : 0;
  }
  const ra = typeRank(a);
  const rb = typeRank(b);
  if (ra !== rb) return ra - rb;
  if (ra === 0) return compareBytes(a as Uint8Array, b as Uint8Array);
  if (ra === 2) return (a as bigint) < (b as bigint) ? -1 : (a as bigint) > (b as bigint) ? 1 : 0;
  if (ra === 3) return compareBytes(orderedDouble(a as number), orderedDouble(b as number));
  return 0;
}

/** UTF-16 strings in code point (= UTF-8 byte) order. */
function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (U+D800..DFFF) encode code points above U+FFFF: they sort after U+E000..FFFF.
    if (x >= 0xd800 && y >= 0xd800) {
      x = x <= 0xdfff ? x + 0x2000 : x - 0x800;
      y = y <= 0xdfff ? y + 0x2000 : y - 0x800;
    }
    return x - y;
  }
  return a.length - b.length;
}

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

/** The big-endian bytes of a double with the sign bit flipped (all bits if negative). */
function orderedDouble(x: number): Uint8Array {
  const bytes = new Uint8Array(8);
  new DataView(bytes.buffer).setFloat64(0, x);
  if (bytes[0] & 0x80) { for (let i = 0; i < 8; i++) bytes[i] ^= 0xff; }
  else bytes[0] ^= 0x80;
  return bytes;
}

export interface StreamingReplayReport extends ReplayReport {
  mismatchCount: number;
  /**
   * How the projections were compared: "digest" when the rebuilt and live digests matched,
   * "documents" when they were compared one by one (asked for, or the digests differed).
   */
  compared: "digest" | "documents";
  /**
   * Wall time of each pass that ran, in order: "chain" (verify, note last touches, the scratch
   * folds), "fold" (the documents into the digest), "live" (the live projections' digest),
   * "documents" (fold into scratch and compare one by one).
   */
  passesMs: Partial<Record<"chain" | "fold" | "live" | "settle" | "documents", number>>;
  /** Documents the service changed after the audit's head, each settled against the log. */
  moved?: number;
}

/**
 * `replayAndCompare` with flat memory. The rebuilt projections are not kept: a first pass over
 * the log verifies the chain, calls `onEvent` and notes where each document is touched last; a
 * second folds them into a digest (`DigestFolder`), compared with a digest of the live ones. Only
 * when the digests differ (or `exact` is set, or too many documents stay open) is the log folded
 * into `scratch` (an empty KV) and compared document by document, which names every mismatch but
 * writes every document. `extra` folds and the projections named in `keepInScratch` are always
 * written to `scratch`, for the caller to read afterwards.
 */
export async function replayIntoAndCompare(
  source: Deno.Kv,
  scratch: Deno.Kv,
  projections: Projection[],
  opts: {
    batchSize?: number;
    /** Documents the scratch folds keep in memory before writing some out (default 20,000). */
    cacheSize?: number;
    /**
     * The most documents the digest fold may hold open at once (default 50,000); past it the
     * projections are compared document by document instead.
     */
    maxOpen?: number;
    maxMismatches?: number;
    /** Skip the digest and compare document by document. */
    exact?: boolean;
    /** Extra folds (e.g. the audit's) written to scratch beside the real projections. */
    extra?: Projection[];
    /** Projections (by name) the caller reads from scratch afterwards: always written there. */
    keepInScratch?: string[];
    onEvent?: (e: StoredEvent) => void | Promise<void>;
    /** Counts the KV entries the log reads take. */
    stats?: ReadStats;
    /** Each live document that went into the digest, as JSON text (the audit's state keeps it). */
    onLiveDoc?: (key: Deno.KvKey, text: string, id: string) => void | Promise<void>;
    /** Each document that moved after the head, with its rebuilt value at the head. */
    onMovedDoc?: (key: Deno.KvKey, rebuilt: unknown) => void | Promise<void>;
    /** Called after a pass ("chain", "live"), for tests that change things between passes. */
    onPass?: (pass: "chain" | "live") => void | Promise<void>;
    onChainProblem?: (p: ChainProblem) => void | Promise<void>;
    onMismatch?: (m: ProjectionMismatch) => void | Promise<void>;
    /**
     * Runs the live pass elsewhere (another thread), started before the chain pass and run
     * alongside it: the digest of the live documents of `names` with `salt`, leaving out those
     * moved by events after `head` up to the position it returns as `seen` (a `LiveCut` of its
     * own). Replaces `onLiveDoc`.
     */
    liveElsewhere?: (req: { head: LogHead | null; names: string[]; salt: string }) => Promise<{
      digest: ProjectionDigest;
      strays: number;
      seen: number;
      /**
       * Folds the projections of `lastTouch` there too (their last touches are handed over), up
       * to `to`, holding out the documents `hold` names; null when too many stay open.
       */
      fold?: (req: {
        lastTouch: LastTouchPart[];
        to: number;
        hold: string[];
        maxOpen?: number;
      }) => Promise<{ digest: ProjectionDigest; held: [string, unknown][] } | null>;
      /** Lets the other thread go (when no fold is asked of it). */
      close?: () => void;
    }>;
  } = {},
): Promise<StreamingReplayReport> {
  const head = (await source.get<LogHead>(HEAD)).value;
  const names = projections.map((p) => p.name);
  const cache = { cacheSize: opts.cacheSize };
  const kept = new Set(opts.keepInScratch ?? []);
  const toScratch = opts.exact ? projections : projections.filter((p) => kept.has(p.name));
  const digested = projections.filter((p) => !toScratch.includes(p));
  const scratchFolds = [...toScratch, ...(opts.extra ?? [])];
  const folder = scratchFolds.length > 0
    ? new ProjectionFolder(scratch, scratchFolds, cache)
    : null;
  let lastTouch = opts.exact ? null : new LastTouch(digested);
  // Stop at the head read up front: a service still writing cannot move the goalposts mid-walk.
  const to = head?.position ?? 0;
  const events = () => readLog(source, { head, to, batchSize: opts.batchSize, stats: opts.stats });

  const passesMs: StreamingReplayReport["passesMs"] = {};
  let passStart = performance.now();
  const passEnded = (pass: keyof StreamingReplayReport["passesMs"]) => {
    const now = performance.now();
    passesMs[pass] = now - passStart;
    passStart = now;
  };

  const salt = randomSalt();
  const elsewhere = lastTouch && opts.liveElsewhere
    ? opts.liveElsewhere({ head, names, salt })
    : null;
  // Awaited after the chain pass; a failure meanwhile must not count as unhandled.
  elsewhere?.catch(() => {});

  const verifier = new ChainVerifier();
  let reported = 0;
  for await (const batch of events()) {
    for (const r of batch) {
      verifier.checkRead(r);
      for (; reported < verifier.problems.length; reported++) {
        await opts.onChainProblem?.(verifier.problems[reported]);
      }
      lastTouch?.record(r.event);
      await folder?.apply(r.event);
      await opts.onEvent?.(r.event);
    }
  }
  const chain = verifier.finish(head);
  await checkNothingAfter(source, head, chain);
  for (; reported < verifier.problems.length; reported++) {
    await opts.onChainProblem?.(verifier.problems[reported]);
  }
  await folder?.flush();
  passEnded("chain");

  // Past the head read up front the service may still be writing: those documents are settled
  // one by one against the log, never counted as mismatches for having moved (live-cut.ts).
  const cut = new LiveCut(source, projections, head);
  await opts.onPass?.("chain");

  if (lastTouch) {
    // The live side first: the documents that move while it is read are known by its end, and
    // the rebuilt side then holds those back instead of adding them.
    let live;
    if (elsewhere) {
      const done = await elsewhere;
      // The same moved documents as the other side's cut: the events after the head up to the
      // position it had polled when it finished.
      if (done.seen > cut.seen) await cut.poll(done.seen);
      live = done;
    } else live = await digestLiveProjections(source, names, salt, cut, opts.onLiveDoc);
    passEnded("live");
    await opts.onPass?.("live");
    const held = new Held(cut.moved);
    let rebuilt: ProjectionDigest | null;
    try {
      rebuilt = await foldSplit(events(), digested, lastTouch, salt, held, {
        to,
        hold: [...cut.moved.keys()],
        maxOpen: opts.maxOpen,
        elsewhere: elsewhere ? live as Awaited<typeof elsewhere> : null,
      });
    } finally {
      (live as { close?: () => void }).close?.();
    }
    lastTouch = null; // tens of MiB at a million documents (the folder let go of it too)
    // The kept projections were rebuilt into scratch in the first pass: digested from there.
    if (rebuilt) {
      await addStoredDocuments(scratch, toScratch.map((p) => p.name), rebuilt, held);
    }
    passEnded("fold");
    if (rebuilt && live.strays === 0 && rebuilt.equals(live.digest)) {
      const mismatches: ProjectionMismatch[] = [];
      for (const [id, key] of cut.moved) {
        await opts.onMovedDoc?.(key, held.docs.get(id) ?? null);
        const wrong = await cut.settle(key, held.docs.get(id) ?? null);
        if (!wrong) continue;
        const m = { key: id, live: wrong.live, rebuilt: wrong.expected };
        mismatches.push(m);
        await opts.onMismatch?.(m);
      }
      passEnded("settle");
      return {
        chain,
        documents: rebuilt.count + cut.moved.size,
        mismatches: mismatches.slice(0, opts.maxMismatches ?? 1000),
        mismatchCount: mismatches.length,
        equal: chain.ok && mismatches.length === 0,
        compared: "digest",
        passesMs,
        moved: cut.moved.size,
      };
    }
    // They differ, or too many documents stayed open: fold the rest into scratch too, to name
    // each mismatch.
    const again = new ProjectionFolder(scratch, digested, cache);
    for await (const batch of events()) for (const r of batch) await again.apply(r.event);
    await again.flush();
  }
  const cmp = await compareProjectionStores(source, scratch, names, {
    maxMismatches: opts.maxMismatches,
    onMismatch: opts.onMismatch,
    settle: async (m) => {
      await cut.poll();
      const key = cut.moved.get(m.key);
      if (!key) return m;
      const wrong = await cut.settle(key, m.rebuilt);
      return wrong ? { key: m.key, live: wrong.live, rebuilt: wrong.expected } : null;
    },
  });
  passEnded("documents");
  return {
    chain,
    documents: cmp.documents,
    mismatches: cmp.mismatches,
    mismatchCount: cmp.mismatchCount,
    equal: cmp.mismatchCount === 0 && chain.ok,
    compared: "documents",
    passesMs,
    moved: cut.moved.size,
  };
}

/**
 * The share of the fold's touches handed to the other thread. It reads the log again first (about
 * a fifth of the fold's time in the benchmark's mix), so an even split of the touches would leave
 * this thread waiting for it.
 */
const FOLD_SHARE_ELSEWHERE = 0.4;

/**
 * The second pass of the digest replay, on this thread or split with the other one by projection
 * (each folds its own projections from the whole log; digests add up). Null when too many
 * documents stayed open at once on either side.
 */
async function foldSplit(
  events: AsyncIterable<ReadEvent[]>,
  projections: Projection[],
  lastTouch: LastTouch,
  salt: string,
  held: Held,
  opts: {
    to: number;
    /** The ids `held` holds out, for the other thread. */
    hold: string[];
    maxOpen?: number;
    elsewhere: {
      fold?: (req: {
        lastTouch: LastTouchPart[];
        to: number;
        hold: string[];
        maxOpen?: number;
      }) => Promise<{ digest: ProjectionDigest; held: [string, unknown][] } | null>;
    } | null;
  },
): Promise<ProjectionDigest | null> {
  const away = opts.elsewhere?.fold
    ? splitByTouches(lastTouch.touches, FOLD_SHARE_ELSEWHERE).there
    : [];
  if (away.length === 0) {
    return await foldIntoDigest(
      events,
      new DigestFolder(projections, lastTouch, salt, { maxOpen: opts.maxOpen, hold: held }),
    );
  }
  const there = opts.elsewhere!.fold!({
    lastTouch: lastTouch.take(away),
    to: opts.to,
    hold: opts.hold,
    maxOpen: opts.maxOpen,
  });
  there.catch(() => {}); // awaited below; a failure meanwhile must not count as unhandled
  const mine = projections.filter((p) => !away.includes(p.name));
  const here = await foldIntoDigest(
    events,
    new DigestFolder(mine, lastTouch, salt, { maxOpen: opts.maxOpen, hold: held }),
  );
  const other = await there;
  if (!here || !other) return null;
  for (const [id, doc] of other.held) held.docs.set(id, doc);
  return here.plus(other.digest);
}

/** One thread's fold of the digest replay; null when too many documents stayed open at once. */
async function foldIntoDigest(
  events: AsyncIterable<ReadEvent[]>,
  folder: DigestFolder,
): Promise<ProjectionDigest | null> {
  for await (const batch of events) {
    for (const r of batch) if (!folder.apply(r.event)) return null;
  }
  return folder.finish();
}
