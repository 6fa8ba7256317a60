/** A small but complete history written through the real store, for the audit tests. */
import { EventStore } from "../../events/store.ts";
import type { DomainEvent } from "../../events/types.ts";
import { allProjections } from "../../projections/index.ts";
import { AUDIT_TABLES, type AuditSummary, runAudit } from "../../src/audit/audit.ts";
import { MemorySink } from "../../src/audit/sink.ts";

export const DAY1 = Date.UTC(2026, 10, 22, 10);
export const DAY2 = Date.UTC(2026, 10, 23, 9);
export const TREASURY = "Treasury1111111111111111111111111111111111";

export function storeAt(kv: Deno.Kv, clock: { now: number }) {
  return new EventStore(kv, { projections: allProjections, now: () => clock.now });
}

export const built = (
  buildId: number,
  keyId: string,
  purchaseId: string,
  day: string,
  feeLamports = "19933334",
): DomainEvent => ({
  type: "TokenBuilt",
  v: 1,
  data: {
    buildId,
    keyId,
    purchaseId,
    day,
    mint: `Mint${buildId}`,
    seed: "seed",
    reference: `Ref${buildId}`,
    payer: `Payer${keyId}`,
    recipient: `Payer${keyId}`,
    recipientTokenAccount: `Ata${buildId}`,
    metadataAccount: `Meta${buildId}`,
    name: buildId === 2 ? '=HYPERLINK("x")' : `Token ${buildId}`,
    symbol: `T${buildId}`,
    uri: "https://example.test/m/1.json",
    decimals: 9,
    supplyRaw: "1000000000000",
    revokeMint: false,
    revokeFreeze: true,
    immutableMetadata: false,
    feeLamports,
    feeUsd: 2.99,
    solUsd: 150,
    treasury: TREASURY,
    blockhash: "bh",
    lastValidBlockHeight: 300,
    messageHash: `msg${buildId}`,
  },
});

export const confirmed = (buildId: number, fee = "19933334"): DomainEvent => ({
  type: "CreationConfirmed",
  v: 1,
  data: {
    buildId,
    mint: `Mint${buildId}`,
    signature: `Sig${buildId}`,
    slot: 100 + buildId,
    blockTime: null,
    feeLamportsSeen: fee,
    supplyRaw: "1000000000000",
  },
});

export const unverified = (buildId: number, keyId: string, fee: string): DomainEvent => ({
  type: "CreationUnverified",
  v: 1,
  data: {
    buildId,
    keyId,
    mint: `Mint${buildId}`,
    signature: `Sig${buildId}`,
    slot: 100 + buildId,
    blockTime: null,
    feeLamportsSeen: fee,
    supplyRawSeen: "1000000000000",
    problems: [fee === "0" ? "no fee transfer to the treasury" : "fee below the quote"],
  },
});

export async function purchaseWithKey(store: EventStore, p: string, k: string, wallet: string) {
  await store.append([{
    stream: `purchase-${p}`,
    expectedVersion: 0,
    events: [
      {
        type: "AccessPaymentQuoted",
        v: 1,
        data: {
          purchaseId: p,
          wallet,
          currency: "SOL",
          amount: "66666667",
          usd: 10,
          solUsd: 150,
          reference: `PRef${p}`,
          treasury: TREASURY,
          lastValidBlockHeight: 50,
        },
      },
      {
        type: "AccessPurchased",
        v: 1,
        data: {
          purchaseId: p,
          wallet,
          currency: "SOL",
          amount: "66666667",
          signature: `PSig${p}`,
          slot: 3,
        },
      },
      { type: "KeyIssued", v: 1, data: { keyId: k, purchaseId: p, wallet, secretMac: `mac-${k}` } },
    ],
  }]);
}

/**
 * Two keys over two days: confirmed, fee-less, short-fee, failed, expired and open builds, an
 * unpaid purchase, and one confirmation for a build that was never built.
 */
export async function workload(kv: Deno.Kv) {
  const clock = { now: DAY1 };
  const store = storeAt(kv, clock);
  await purchaseWithKey(store, "p1", "k1", "WalletA");
  await purchaseWithKey(store, "p2", "k2", "WalletB");
  await store.append([{
    stream: "purchase-p3",
    expectedVersion: 0,
    events: [{
      type: "AccessPaymentQuoted",
      v: 1,
      data: {
        purchaseId: "p3",
        wallet: "WalletC",
        currency: "SOL",
        amount: "66666667",
        usd: 10,
        solUsd: 150,
        reference: "PRefp3",
        treasury: TREASURY,
        lastValidBlockHeight: 50,
      },
    }],
  }]);
  const day1 = "2026-11-22";
  const day2 = "2026-11-23";
  const b = (id: number, events: DomainEvent[]) =>
    store.append([{ stream: `build-${id}`, expectedVersion: "any", events }]);
  await b(1, [built(1, "k1", "p1", day1), confirmed(1)]);
  await b(2, [built(2, "k1", "p1", day1), unverified(2, "k1", "0")]);
  await b(3, [built(3, "k2", "p2", day1), unverified(3, "k2", "100")]);
  clock.now = DAY2;
  await b(4, [built(4, "k2", "p2", day2), {
    type: "CreationFailed",
    v: 1,
    data: { buildId: 4, mint: "Mint4", signature: "Sig4", reason: "InstructionError" },
  }]);
  await b(5, [built(5, "k2", "p2", day2), {
    type: "BuildExpired",
    v: 1,
    data: { buildId: 5, mint: "Mint5", blockHeight: 301 },
  }]);
  await b(6, [built(6, "k1", "p1", day2), {
    type: "TransactionSubmitted",
    v: 1,
    data: { buildId: 6, mint: "Mint6", signature: "Sig6", via: "relay" },
  }]);
  await b(7, [built(7, "k1", "p1", day2), confirmed(7, "20000000")]);
  await b(99, [confirmed(99)]);
  return store;
}

/** The same history without anything an auditor would flag. */
export async function cleanWorkload(kv: Deno.Kv) {
  const clock = { now: DAY1 };
  const store = storeAt(kv, clock);
  await purchaseWithKey(store, "p1", "k1", "WalletA");
  for (let i = 1; i <= 6; i++) {
    if (i === 4) clock.now = DAY2;
    const day = i < 4 ? "2026-11-22" : "2026-11-23";
    await store.append([{
      stream: `build-${i}`,
      expectedVersion: 0,
      events: i % 3 === 0 ? [built(i, "k1", "p1", day)] : [built(i, "k1", "p1", day), confirmed(i)],
    }]);
  }
  return store;
}

/** An audit with its state in a KV file of its own and its tables in memory. */
export interface Audited {
  summary: AuditSummary;
  sink: MemorySink;
  state: string;
}

/** Audits `kv` into the state `${dir}/${name}.sqlite3`: full, or incremental from a copy of `from`'s state. */
export async function auditInto(
  kv: Deno.Kv,
  dir: string,
  name: string,
  opts: { from?: Audited } = {},
): Promise<Audited> {
  const state = `${dir}/${name}.sqlite3`;
  if (opts.from) await Deno.copyFile(opts.from.state, state);
  const scratch = await Deno.openKv(state);
  const sink = new MemorySink();
  try {
    const summary = await runAudit({
      kv,
      scratch,
      sink,
      from: opts.from?.summary.checkpoint ?? null,
      now: () => 0,
    });
    return { summary, sink, state };
  } finally {
    scratch.close();
  }
}

export const tablesOf = (a: Audited) =>
  Object.fromEntries(Object.keys(AUDIT_TABLES).map((t) => [t, a.sink.rows(t)]));

/**
 * A service KV file (`${dir}/service.sqlite3`) in a temp dir, its store sealing after 2 KiB (so
 * a checkpoint covers sealed segments and tail lines alike) on `clock`, seeded, for `fn`.
 */
export async function withFileLog(
  prefix: string,
  seed: (store: EventStore) => Promise<void>,
  fn: (kv: Deno.Kv, store: EventStore, dir: string) => Promise<void>,
  clock: { now: number } = { now: DAY1 },
): Promise<void> {
  const dir = await Deno.makeTempDir({ prefix });
  const kv = await Deno.openKv(`${dir}/service.sqlite3`);
  const store = new EventStore(kv, {
    projections: allProjections,
    sealBytes: 2048,
    now: () => clock.now,
  });
  try {
    await seed(store);
    await fn(kv, store, dir);
  } finally {
    kv.close();
    await Deno.remove(dir, { recursive: true });
  }
}

/** Build i: confirmed, except every fourth (left open) and every fifth (fee-less). */
export async function builds(store: EventStore, i: number) {
  const events = [built(i, "k1", "p1", "2026-11-22")];
  if (i % 5 === 0) events.push(unverified(i, "k1", "0"));
  else if (i % 4 !== 0) events.push(confirmed(i));
  await store.append([{ stream: `build-${i}`, expectedVersion: 0, events }]);
}

/** Builds `from` to `to`, an outcome for build 4 (an old document changes) and a new purchase. */
export async function more(store: EventStore, from: number, to: number) {
  for (let i = from; i <= to; i++) await builds(store, i);
  await store.append([{ stream: "build-4", expectedVersion: "any", events: [confirmed(4)] }]);
  await purchaseWithKey(store, `p${from}`, `k${from}`, "WalletB");
}

/** `withFileLog` seeded with a purchase and builds 1 to 12, for the incremental audit's tests. */
export const withIncrementalLog = (
  prefix: string,
  fn: (kv: Deno.Kv, store: EventStore, dir: string) => Promise<void>,
) =>
  withFileLog(prefix, async (store) => {
    await purchaseWithKey(store, "p1", "k1", "WalletA");
    for (let i = 1; i <= 12; i++) await builds(store, i);
  }, fn);
