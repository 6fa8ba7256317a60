/**
 * A large, valid event log written straight into a KV file, for the replay and audit benchmarks.
 *
 * Writing a million events through `EventStore.append` takes far longer than the benchmark budget
 * (every commit re-reads the head and folds projections one commit at a time), so this writes
 * the same layout the store writes (sealed segments, events/bulk.ts), hashed and chained exactly as
 * the store does (events/hash.ts eventHash), plus the live projections folded with the real projection code
 * (src/audit/replay-memory.ts ProjectionBuffer). Replay of the result must therefore find an intact
 * chain and projections equal to the live ones; the benchmark checks that it does.
 *
 * The mix follows the service's real life: a purchase (quote, payment, key) every few hundred
 * tokens, and per token a hosted metadata document, a build, and its outcome (mostly relayed and
 * confirmed; some expired, failed, fee-less or still open), spread over many UTC days.
 */
import { chainHash, eventHash, GENESIS_HASH } from "../../events/hash.ts";
import { SegmentWriter } from "../../events/bulk.ts";
import { bodyText } from "../../events/codec.ts";
import { eventKey, HEAD, type LogHead, streamEventKey, streamKey } from "../../events/keys.ts";
import type { DomainEvent, StoredEvent } from "../../events/types.ts";
import { allProjections } from "../../projections/index.ts";
import { commitInBatches } from "../../src/audit/commit-batches.ts";
import { ProjectionBuffer } from "../../src/audit/replay-memory.ts";
import { utcDay } from "../../src/kernel/time.ts";

/** Bump when the shape of the generated log changes, so a cached file is not reused. */
export const SYNTHETIC_LOG_VERSION = 3;

const B58 = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";
const HEX = "0123456789abcdef";

/** A seeded generator, so two runs write the same log and their timings compare. */
function rng(seed: number) {
  let s = seed >>> 0;
  return () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Gen {
  next: () => number;
  b58(n: number): string;
  hex(n: number): string;
}

function gen(seed: number): Gen {
  const next = rng(seed);
  const pick = (alphabet: string, n: number) => {
    let out = "";
    for (let i = 0; i < n; i++) out += alphabet[Math.floor(next() * alphabet.length)];
    return out;
  };
  return { next, b58: (n) => pick(B58, n), hex: (n) => pick(HEX, n) };
}

const TREASURY = "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin";
const TOKENS_PER_PURCHASE = 400;
const IMAGES = 2_000;
const DAY_MS = 86_400_000;
/** One store commit: streams and the events appended to each. */
export type Commit = { stream: string; events: DomainEvent[] }[];

/** The commits of the log, lazily, until `target` events have been produced. */
export function* syntheticCommits(
  target: number,
  seed = 42,
): Generator<{ at: number; commit: Commit }> {
  yield* commits(target, gen(seed));
}

function* commits(target: number, g: Gen): Generator<{ at: number; commit: Commit }> {
  const start = Date.UTC(2026, 0, 1);
  let produced = 0;
  let at = start;
  let purchase = 0;
  let purchaseId = "";
  let keyId = "";
  let wallet = "";
  let buildId = 0;
  let purchasedAt = -1;
  const images = Array.from({ length: IMAGES }, () => g.hex(64));
  // Outcomes land a little after their build; hold them back so commits interleave as they do.
  const pending: { dueAt: number; commit: Commit; n: number }[] = [];
  const tick = () => (at += 1 + Math.floor(g.next() * 400));

  while (produced < target) {
    while (pending.length && pending[0].dueAt <= at && produced < target) {
      const p = pending.shift()!;
      if (produced + p.n > target) continue;
      produced += p.n;
      yield { at, commit: p.commit };
    }
    if (produced >= target) break;
    if (buildId % TOKENS_PER_PURCHASE === 0 && purchasedAt !== buildId && target - produced >= 3) {
      purchasedAt = buildId;
      purchase++;
      purchaseId = g.hex(32);
      keyId = g.hex(16);
      wallet = g.b58(44);
      const reference = g.b58(44);
      tick();
      produced += 1;
      yield {
        at,
        commit: [{
          stream: `purchase-${purchaseId}`,
          events: [{
            type: "AccessPaymentQuoted",
            v: 1,
            data: {
              purchaseId,
              wallet,
              currency: "SOL",
              amount: "66666667",
              usd: 10,
              solUsd: 150,
              reference,
              treasury: TREASURY,
              lastValidBlockHeight: 1000 + purchase,
            },
          }],
        }],
      };
      tick();
      produced += 2;
      yield {
        at,
        commit: [{
          stream: `purchase-${purchaseId}`,
          events: [
            {
              type: "AccessPurchased",
              v: 1,
              data: {
                purchaseId,
                wallet,
                currency: "SOL",
                amount: "66666667",
                signature: g.b58(88),
                slot: 1000 + purchase,
              },
            },
            {
              type: "KeyIssued",
              v: 1,
              data: { keyId, purchaseId, wallet, secretMac: g.hex(64) },
            },
          ],
        }],
      };
      continue;
    }

    // A hosted metadata document, then the build that uses it.
    const id = g.hex(32);
    const day = utcDay(tick());
    const imageId = images[Math.floor(g.next() * IMAGES)];
    const name = `Token ${buildId + 1}`;
    const symbol = `T${(buildId + 1) % 100000}`;
    const imageUri = `https://tcb.example/i/${imageId}.png`;
    const json = JSON.stringify({
      name,
      symbol,
      description: `A community token number ${buildId + 1}. `.repeat(4),
      image: imageUri,
      external_url: "https://example.org",
      properties: { files: [{ uri: imageUri, type: "image/png" }], category: "image" },
      extensions: { website: "https://example.org", twitter: "https://x.com/example" },
    });
    if (produced + 1 > target) break;
    produced += 1;
    yield {
      at,
      commit: [{
        stream: `metadata-${id}`,
        events: [{
          type: "MetadataHosted",
          v: 1,
          data: {
            id,
            keyId,
            purchaseId,
            day,
            imageId,
            imageExt: "png",
            imageMime: "image/png",
            imageBytes: 48_213,
            imageChunks: 1,
            newImage: false,
            json,
          },
        }],
      }],
    };
    if (produced >= target) break;

    buildId++;
    const mint = g.b58(44);
    const signature = g.b58(88);
    const built: DomainEvent = {
      type: "TokenBuilt",
      v: 1,
      data: {
        buildId,
        keyId,
        purchaseId,
        day: utcDay(tick()),
        mint,
        seed: g.hex(32),
        reference: g.b58(44),
        payer: wallet,
        recipient: wallet,
        recipientTokenAccount: g.b58(44),
        metadataAccount: g.b58(44),
        name,
        symbol,
        uri: `https://tcb.example/m/${id}.json`,
        decimals: 9,
        supplyRaw: "1000000000000000000",
        revokeMint: g.next() < 0.5,
        revokeFreeze: true,
        immutableMetadata: false,
        feeLamports: "19933334",
        feeUsd: 2.99,
        solUsd: 150,
        treasury: TREASURY,
        blockhash: g.b58(44),
        lastValidBlockHeight: 150 + Math.floor((at - start) / 400),
        messageHash: g.hex(64),
      },
    };
    produced += 1;
    yield { at, commit: [{ stream: `build-${buildId}`, events: [built] }] };

    const r = g.next();
    const stream = `build-${buildId}`;
    const due = at + 500 + Math.floor(g.next() * 20_000);
    if (r < 0.80) {
      pending.push({
        dueAt: due,
        n: 1,
        commit: [{
          stream,
          events: [{
            type: "TransactionSubmitted",
            v: 1,
            data: { buildId, mint, signature, via: "relay" },
          }],
        }],
      });
      pending.push({
        dueAt: due + 800,
        n: 1,
        commit: [{
          stream,
          events: [{
            type: "CreationConfirmed",
            v: 1,
            data: {
              buildId,
              mint,
              signature,
              slot: Math.floor((due - start) / 400),
              blockTime: Math.floor(due / 1000),
              feeLamportsSeen: "19933334",
              supplyRaw: "1000000000000000000",
            },
          }],
        }],
      });
    } else if (r < 0.93) {
      pending.push({
        dueAt: due + 60_000,
        n: 1,
        commit: [{
          stream,
          events: [{
            type: "BuildExpired",
            v: 1,
            data: { buildId, mint, blockHeight: 151 + Math.floor((at - start) / 400) },
          }],
        }],
      });
    } else if (r < 0.97) {
      pending.push({
        dueAt: due,
        n: 1,
        commit: [{
          stream,
          events: [{
            type: "CreationFailed",
            v: 1,
            data: { buildId, mint, signature, reason: "InstructionError: [4, Custom(1)]" },
          }],
        }],
      });
    } else if (r < 0.975) {
      pending.push({
        dueAt: due,
        n: 1,
        commit: [{
          stream,
          events: [{
            type: "CreationUnverified",
            v: 1,
            data: {
              buildId,
              keyId,
              mint,
              signature,
              slot: Math.floor((due - start) / 400),
              blockTime: Math.floor(due / 1000),
              feeLamportsSeen: "0",
              supplyRawSeen: "1000000000000000000",
              problems: ["no fee transfer to the treasury"],
            },
          }],
        }],
      });
    } // else: left open, as the newest builds are at any moment.
    pending.sort((a, b) => a.dueAt - b.dueAt);
    // Spread the log over many days, as years of operation would.
    if (buildId % 2_000 === 0) at += DAY_MS;
  }
}

export interface SyntheticLogReport {
  events: number;
  streams: number;
  builds: number;
  documents: number;
  bytesPerEvent: number;
  segments: number;
  ms: number;
}

/**
 * Writes `target` events into `kv`, which must hold no log yet. The projections are folded in
 * memory (set-up only; the replay being measured runs in another process), so expect about
 * 1.5 GiB of RSS for a million events here.
 */
export async function writeSyntheticLog(
  kv: Deno.Kv,
  target: number,
  opts: {
    seed?: number;
    onProgress?: (n: number) => void;
    /** "legacy": the first layout (one entry per event), to test and measure migration. */
    layout?: "current" | "legacy";
  } = {},
): Promise<SyntheticLogReport> {
  const t0 = performance.now();
  if ((await kv.get(HEAD)).value !== null) throw new Error("the KV already holds an event log");
  const buffer = new ProjectionBuffer();
  const versions = new Map<string, number>();
  let position = 0;
  let prevHash = GENESIS_HASH;
  let builds = 0;
  let reported = 0;
  let atomic = kv.atomic();
  let writes = 0;
  let bytes = 0;
  const put = async (key: Deno.KvKey, value: unknown) => {
    atomic.set(key, value);
    bytes += value instanceof Uint8Array ? value.byteLength : 1024;
    // Stay well inside a commit's 1,000 writes and 800 KiB.
    if (++writes >= 400 || bytes >= 400 * 1024) {
      if (!(await atomic.commit()).ok) throw new Error("KV commit failed");
      atomic = kv.atomic();
      writes = 0;
      bytes = 0;
    }
  };
  const legacy = opts.layout === "legacy";
  const log = new SegmentWriter();

  for (const { at, commit } of syntheticCommits(target, opts.seed ?? 42)) {
    for (const { stream, events } of commit) {
      for (const event of events) {
        const streamPosition = (versions.get(stream) ?? 0) + 1;
        versions.set(stream, streamPosition);
        position++;
        const unhashed = { ...event, at, stream, streamPosition, position, prevHash } as Omit<
          StoredEvent,
          "hash"
        >;
        const { prevHash: _, ...body } = unhashed;
        const text = bodyText(body);
        const hash = chainHash(prevHash, text);
        if (position <= 100 || position % 10_000 === 0) {
          if (hash !== await eventHash(unhashed)) throw new Error("hash differs from eventHash");
        }
        const full = { ...unhashed, hash } as StoredEvent;
        prevHash = hash;
        if (full.type === "TokenBuilt") builds++;
        if (legacy) {
          await put(eventKey(position), full);
          await put(streamEventKey(stream, streamPosition), position);
        } else {
          for (const w of log.add(full, text)) await put(w.key, w.value);
        }
        buffer.apply(allProjections, full);
      }
    }
    if (opts.onProgress && position - reported >= 100_000) {
      reported = position;
      opts.onProgress(position);
    }
  }
  if (legacy) {
    for (const [stream, version] of versions) await put(streamKey(stream), version);
  } else {
    for (const w of log.finish()) await put(w.key, w.value);
  }
  if (!(await atomic.commit()).ok) throw new Error("KV commit failed");
  const docs = [...buffer.docs.values()].map((d) => ({ key: d.key, value: d.doc }));
  buffer.docs.clear();
  await commitInBatches(kv, docs);
  // The head last, as the store commits it with the documents its events change: a document
  // written after the head is one the service moved after it (the audit settles those apart).
  const head = legacy ? { position, hash: prevHash } : log.head() ?? { position, hash: prevHash };
  await kv.set(HEAD, head satisfies LogHead);
  return {
    events: position,
    streams: versions.size,
    builds,
    documents: docs.length,
    /** Bytes of stored event lines per event (0 for the first layout: not measured). */
    bytesPerEvent: legacy ? 0 : log.lineBytes / Math.max(1, position),
    segments: log.segments,
    ms: performance.now() - t0,
  };
}
