import { assert, assertEquals, assertRejects } from "../support/assert.ts";
import { EventStore, EventTooLargeError, StreamVersionError } from "../../events/store.ts";
import { deleteEvent, putTail, rewriteEvent, storedEvent } from "./support/tamper.ts";
import type { DomainEvent, StoredEvent } from "../../events/types.ts";
import { allProjections } from "../../projections/index.ts";
import { replayAndCompare } from "../../src/audit/replay-memory.ts";
import { verifyChain } from "../../src/audit/log-chain.ts";
import { type UsageDoc, usageProjection } from "../../projections/usage.ts";

const built = (buildId: number, purchaseId = "p1", day = "2026-11-22"): DomainEvent => ({
  type: "TokenBuilt",
  v: 1,
  data: {
    buildId,
    keyId: "k1",
    purchaseId,
    day,
    mint: `Mint${buildId}`,
    seed: "s",
    reference: `Ref${buildId}`,
    payer: "Payer",
    recipient: "Payer",
    recipientTokenAccount: "Ata",
    metadataAccount: "Meta",
    name: "T",
    symbol: "T",
    uri: "https://x/y.json",
    decimals: 9,
    supplyRaw: "1000",
    revokeMint: false,
    revokeFreeze: true,
    immutableMetadata: false,
    feeLamports: "100",
    feeUsd: 2.99,
    solUsd: 150,
    treasury: "Treasury",
    blockhash: "bh",
    lastValidBlockHeight: 200,
    messageHash: `hash${buildId}`,
  },
});

async function withStore(fn: (kv: Deno.Kv, store: EventStore) => Promise<void>) {
  const kv = await Deno.openKv(":memory:");
  try {
    await fn(kv, new EventStore(kv, { projections: allProjections, now: () => 1_700_000_000_000 }));
  } finally {
    kv.close();
  }
}

async function mixedWorkload(store: EventStore) {
  await store.append([{
    stream: "purchase-p1",
    expectedVersion: 0,
    events: [
      {
        type: "AccessPaymentQuoted",
        v: 1,
        data: {
          purchaseId: "p1",
          wallet: "W",
          currency: "SOL",
          amount: "1",
          usd: 10,
          solUsd: 150,
          reference: "R",
          treasury: "T",
          lastValidBlockHeight: 10,
        },
      },
      {
        type: "AccessPurchased",
        v: 1,
        data: {
          purchaseId: "p1",
          wallet: "W",
          currency: "SOL",
          amount: "1",
          signature: "S",
          slot: 3,
        },
      },
      {
        type: "KeyIssued",
        v: 1,
        data: { keyId: "k1", purchaseId: "p1", wallet: "W", secretMac: "m1" },
      },
    ],
  }]);
  for (let i = 1; i <= 5; i++) {
    await store.append([{ stream: `build-${i}`, expectedVersion: 0, events: [built(i)] }]);
  }
  await store.append([{
    stream: "build-1",
    expectedVersion: 1,
    events: [
      {
        type: "TransactionSubmitted",
        v: 1,
        data: { buildId: 1, mint: "Mint1", signature: "Sig1", via: "relay" },
      },
      {
        type: "CreationConfirmed",
        v: 1,
        data: {
          buildId: 1,
          mint: "Mint1",
          signature: "Sig1",
          slot: 5,
          blockTime: 1_700_000_001,
          feeLamportsSeen: "100",
          supplyRaw: "1000",
        },
      },
    ],
  }]);
  await store.append([{
    stream: "key-k1",
    expectedVersion: "any",
    events: [{
      type: "KeyRotated",
      v: 1,
      data: { keyId: "k1", purchaseId: "p1", secretMac: "m2" },
    }],
  }]);
}

Deno.test("appends chain hashes, positions and stream versions", async () => {
  await withStore(async (kv, store) => {
    await mixedWorkload(store);
    const events: StoredEvent[] = [];
    for await (const e of store.readAll()) events.push(e);
    assertEquals(events.map((e) => e.position), events.map((_, i) => i + 1));
    for (let i = 1; i < events.length; i++) assertEquals(events[i].prevHash, events[i - 1].hash);
    assertEquals((await store.readStream("build-1")).map((e) => e.type), [
      "TokenBuilt",
      "TransactionSubmitted",
      "CreationConfirmed",
    ]);
    assertEquals((await store.head()).position, events.length);
    assert((await verifyChain(kv)).ok);
  });
});

Deno.test("inline projections are updated in the same commit as the events", async () => {
  await withStore(async (kv, store) => {
    await mixedWorkload(store);
    const usage = (await kv.get<UsageDoc>(["p", "usage", "p1", "2026-11-22"])).value;
    assertEquals(usage, { tokens: 5, metadata: 0 });
    const build = (await kv.get<{ status: string; feeVerified: boolean }>(["p", "build", 1]))
      .value!;
    assertEquals([build.status, build.feeVerified], ["confirmed", true]);
    assertEquals((await kv.get(["p", "open_build", 1])).value, null);
    assert((await kv.get(["p", "open_build", 2])).value !== null);
    assertEquals((await kv.get(["p", "build_by_mint", "Mint3"])).value, 3);
  });
});

Deno.test("a stale expected stream version is refused, never overwritten", async () => {
  await withStore(async (_kv, store) => {
    await store.append([{ stream: "build-1", expectedVersion: 0, events: [built(1)] }]);
    await assertRejects(
      () => store.append([{ stream: "build-1", expectedVersion: 0, events: [built(1)] }]),
      StreamVersionError,
    );
    assertEquals((await store.readStream("build-1")).length, 1);
  });
});

Deno.test("a stream version read that another writer overtakes is a conflict, re-run on fresh state", async () => {
  await withStore(async (kv, store) => {
    const other = new EventStore(kv, { projections: allProjections, now: () => 1_700_000_000_000 });
    await store.append([{ stream: "build-1", expectedVersion: 0, events: [built(1)] }]);
    const seen: number[] = [];
    const { result } = await store.transact(async (tx) => {
      const version = await tx.streamVersion("build-1");
      seen.push(version);
      // Between this command's read and its commit, another process appends to the same stream.
      if (seen.length === 1) {
        await other.append([{ stream: "build-1", expectedVersion: 1, events: [built(1)] }]);
      }
      return {
        append: [{ stream: "build-1", expectedVersion: version, events: [built(1)] }],
        result: version,
      };
    });
    assertEquals(seen, [1, 2]);
    assertEquals(result, 2);
    assertEquals((await store.readStream("build-1")).map((e) => e.streamPosition), [1, 2, 3]);
  });
});

Deno.test("concurrent writers are serialised: no lost or duplicated events", async () => {
  await withStore(async (kv, store) => {
    await Promise.all(
      Array.from(
        { length: 60 },
        (_, i) =>
          store.append([{ stream: `build-${i + 1}`, expectedVersion: 0, events: [built(i + 1)] }]),
      ),
    );
    assertEquals((await store.head()).position, 60);
    assertEquals((await kv.get<UsageDoc>(["p", "usage", "p1", "2026-11-22"])).value?.tokens, 60);
    assert((await verifyChain(kv)).ok);
  });
});

Deno.test("a decision read inside transact holds under concurrency (exact limit)", async () => {
  await withStore(async (_kv, store) => {
    const limit = 25;
    const results = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        store.transact(async (tx) => {
          const usage = await tx.projection(usageProjection, ["p1", "2026-11-22"]);
          if ((usage?.tokens ?? 0) >= limit) return { result: false };
          return {
            append: [{ stream: `build-${i + 1}`, expectedVersion: 0, events: [built(i + 1)] }],
            result: true,
          };
        })),
    );
    assertEquals(results.filter((r) => r.result).length, limit);
  });
});

Deno.test("replay from the log alone rebuilds every projection exactly", async () => {
  await withStore(async (kv, store) => {
    await mixedWorkload(store);
    const report = await replayAndCompare(kv, allProjections);
    assert(report.equal, JSON.stringify(report.mismatches));
    assert(report.documents > 10);
    // A projection edited behind the log's back is caught.
    await kv.set(["p", "usage", "p1", "2026-11-22"], { tokens: 99, metadata: 0 });
    const after = await replayAndCompare(kv, allProjections);
    assertEquals(after.mismatches.map((m) => m.key), [
      JSON.stringify(["p", "usage", "p1", "2026-11-22"]),
    ]);
  });
});

Deno.test("editing, inserting or deleting one event is detected by the hash chain", async () => {
  for (const tamper of ["edit", "insert", "delete", "append"] as const) {
    await withStore(async (kv, store) => {
      await mixedWorkload(store);
      const third = await storedEvent(kv, 3);
      if (tamper === "edit") {
        await rewriteEvent(kv, 3, (e) => ({ ...e, data: { ...e.data, secretMac: "evil" } }));
      } else if (tamper === "insert") {
        // Shift a forged event in at position 3, keeping its old hash fields.
        await rewriteEvent(kv, 3, (e) => ({
          ...e,
          type: "KeyDeleted",
          data: { keyId: "k1", purchaseId: "p1" },
        }));
      } else if (tamper === "delete") {
        await deleteEvent(kv, 3);
      } else {
        const last = await store.head();
        await putTail(kv, last.position + 1, {
          ...third,
          position: last.position + 1,
          prevHash: last.hash,
        });
      }
      const v = await verifyChain(kv);
      assert(!v.ok, `${tamper} went unnoticed`);
      assert(v.problems.length > 0);
    });
  }
});

Deno.test("an oversized event is refused cleanly and nothing is written", async () => {
  await withStore(async (kv, store) => {
    const big = built(1) as Extract<DomainEvent, { type: "TokenBuilt" }>;
    big.data.name = "x".repeat(70 * 1024);
    await assertRejects(
      () => store.append([{ stream: "build-1", expectedVersion: 0, events: [big] }]),
      EventTooLargeError,
    );
    assertEquals((await store.head()).position, 0);
    assertEquals((await kv.get(["p", "build", 1])).value, null);
  });
});
