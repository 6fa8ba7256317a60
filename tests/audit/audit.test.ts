import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { projectionKey } from "../../events/keys.ts";
import { deleteEvent, putTail, rewriteEvent, storedEvent } from "../events/support/tamper.ts";
import { AUDIT_TABLES, runAudit } from "../../src/audit/audit.ts";
import { checkOnChain, type TxView } from "../../src/audit/chain-check.ts";
import { unverifiedLabel } from "../../src/audit/build-table.ts";
import type { AuditProgress } from "../../src/audit/progress.ts";
import { csvCell, FileSink, MemorySink } from "../../src/audit/sink.ts";
import { built, cleanWorkload, TREASURY, workload } from "./fixtures.ts";
import { auditFiles, goldenFiles, tamper } from "./golden.ts";
import { withKvs } from "../support/kv.ts";

const byKind = (sink: MemorySink) => {
  const out: Record<string, string[]> = {};
  for (const r of sink.rows("exceptions")) {
    (out[r.kind as string] ??= []).push(`${r.buildId ?? r.position ?? r.keyId}: ${r.detail}`);
  }
  return out;
};

Deno.test("a clean history audits clean: chain ok, projections equal, totals add up", async () => {
  await withKvs(async (kv, scratch) => {
    await cleanWorkload(kv);
    const sink = new MemorySink();
    const summary = await runAudit({ kv, scratch, sink, now: () => 0 });
    assertEquals(sink.rows("exceptions"), []);
    assert(summary.ok);
    assertEquals(summary.chain, { ok: true, problems: 0 });
    assertEquals(summary.projections.mismatches, 0);
    assertEquals(summary.projections.compared, "digest");
    assertEquals(summary.events, 3 + 6 + 4);
    assertEquals(sink.rows("builds").map((r) => [r.buildId, r.status]), [
      [1, "confirmed"],
      [2, "confirmed"],
      [3, "built"],
      [4, "confirmed"],
      [5, "confirmed"],
      [6, "built"],
    ]);
    assertEquals(sink.rows("totals_by_day").map((r) => [r.day, r.builds, r.confirmed, r.open]), [
      ["2026-11-22", 3, 2, 1],
      ["2026-11-23", 3, 2, 1],
    ]);
    const [k1] = sink.rows("totals_by_key");
    assertEquals(k1.keyId, "k1");
    assertEquals(k1.wallet, "WalletA");
    assertEquals(k1.collectedLamports, (4n * 19933334n).toString());
    assertEquals(k1.confirmedFeeUsd, 11.96);
    assertEquals(sink.rows("purchases").length, 1);
  });
});

Deno.test("an audit reports its progress: events as they are verified, then the replay, then the tables", async () => {
  await withKvs(async (kv, scratch) => {
    await cleanWorkload(kv);
    const steps: AuditProgress[] = [];
    await runAudit({
      kv,
      scratch,
      sink: new MemorySink(),
      now: () => 0,
      progressEvery: 4,
      onProgress: (p) => steps.push(p),
    });
    const lines = steps.map((p) => p.step === "events" ? `${p.pass} ${p.done}/${p.of}` : p.step);
    assertEquals(lines, [
      "touches 4/13",
      "touches 8/13",
      "touches 12/13",
      "fold 4/13",
      "fold 8/13",
      "fold 12/13",
      "replayed",
      "tables",
    ]);
    const replayed = steps.find((p) => p.step === "replayed");
    assertEquals(
      replayed?.step === "replayed" && Object.keys(replayed.passesMs),
      ["touches", "live", "fold", "settle"],
    );
  });
});

Deno.test("the reconciliation lists every build, per-key and per-day totals, purchases and exceptions", async () => {
  await withKvs(async (kv, scratch) => {
    await workload(kv);
    const sink = new MemorySink();
    const summary = await runAudit({ kv, scratch, sink });
    assert(!summary.ok);

    const builds = sink.rows("builds");
    assertEquals(
      builds.map((r) => [r.buildId, r.keyId, r.status, r.quotedLamports, r.feeSeenLamports]),
      [
        [1, "k1", "confirmed", "19933334", "19933334"],
        [2, "k1", "unverified", "19933334", "0"],
        [3, "k2", "unverified", "19933334", "100"],
        [4, "k2", "failed", "19933334", null],
        [5, "k2", "expired", "19933334", null],
        [6, "k1", "submitted", "19933334", null],
        [7, "k1", "confirmed", "19933334", "20000000"],
        [99, null, "confirmed", null, "19933334"],
      ],
    );
    assertEquals(builds[0].signature, "Sig1");
    assertEquals(builds[0].mint, "Mint1");
    assertEquals(builds[0].day, "2026-11-22");
    assertEquals(builds[0].builtAt, "2026-11-22T10:00:00.000Z");

    const keys = Object.fromEntries(sink.rows("totals_by_key").map((r) => [r.keyId, r]));
    assertEquals(keys.k1.builds, 4);
    assertEquals(keys.k1.confirmed, 2);
    assertEquals(keys.k1.unverified, 1);
    assertEquals(keys.k1.open, 1);
    assertEquals(keys.k1.unverifiedCount, 1);
    assertEquals(keys.k1.landedQuotedLamports, String(3n * 19933334n));
    assertEquals(keys.k1.collectedLamports, String(19933334n + 20000000n));
    assertEquals(keys.k1.shortfallLamports, "19933334");
    assertEquals(keys.k2.builds, 3);
    assertEquals(keys.k2.failed, 1);
    assertEquals(keys.k2.expired, 1);
    assertEquals(keys.k2.shortfallLamports, String(19933334n - 100n));

    assertEquals(
      sink.rows("totals_by_day").map((r) => [r.day, r.builds, r.confirmed, r.unverified]),
      [["2026-11-22", 3, 1, 2], ["2026-11-23", 4, 1, 0]],
    );
    assertEquals(
      sink.rows("purchases").map((r) => [r.purchaseId, r.status, r.signature]),
      [["p1", "paid", "PSigp1"], ["p2", "paid", "PSigp2"], ["p3", "quoted", null]],
    );
    assertEquals(summary.purchases, { total: 3, paid: 2, paidByCurrency: { SOL: "133333334" } });

    const ex = byKind(sink);
    assertEquals(Object.keys(ex).sort(), ["creation_unverified", "outcome_without_build"]);
    // Each names its payer, the wallet refused further builds.
    assertMatch(ex.creation_unverified[0], /^2: fee-less creation paid by Payerk1: /);
    assertMatch(ex.creation_unverified[1], /^3: short-fee \(100 of 19933334 lamports\)/);
    assertMatch(ex.outcome_without_build[0], /^99: confirmed for build 99/);
    assertEquals(summary.exceptions.total, 3);
  });
});

Deno.test("an edited projection document and an edited event are both exceptions", async () => {
  await withKvs(async (kv, scratch) => {
    await cleanWorkload(kv);
    // Position 4 is the first TokenBuilt: lowering its quoted fee changes its build record.
    assertEquals((await storedEvent(kv, 4)).type, "TokenBuilt");
    await tamper(kv);
    const sink = new MemorySink();
    const summary = await runAudit({ kv, scratch, sink });
    const ex = byKind(sink);
    assertEquals(summary.chain.ok, false);
    assertEquals(summary.projections.compared, "documents");
    assertMatch(ex.chain_broken.join("\n"), /^4: hash does not match/);
    // The ghost key (live only), the doctored usage, and the build whose event was edited.
    assertEquals(summary.projections.mismatches, 3);
    assertEquals(ex.projection_mismatch.sort(), [
      'null: ["p","build",1]: feeLamports: live "19933334" rebuilt "1"',
      'null: ["p","key","ghost"]: live {"keyId":"ghost"} rebuilt null',
      'null: ["p","usage","p1","2026-11-22"]: tokens: live 1 rebuilt 3',
    ]);
  });
});

Deno.test("a deleted event and events past the head are chain problems", async () => {
  await withKvs(async (kv, scratch) => {
    await cleanWorkload(kv);
    const e4 = await storedEvent(kv, 4);
    await deleteEvent(kv, 4);
    await putTail(kv, 99, { ...e4, position: 99 });
    const sink = new MemorySink();
    const summary = await runAudit({ kv, scratch, sink });
    const problems = byKind(sink).chain_broken.join("\n");
    assertMatch(problems, /5: events 4\.\.4 are missing/);
    assertMatch(problems, /99: events after the log head/);
    assertEquals(summary.chain.ok, false);
    assertEquals(summary.checkpoint, null);
  });
});

Deno.test("two events swapped, each with its own hash, are a broken chain at both places", async () => {
  await withKvs(async (kv, scratch) => {
    await cleanWorkload(kv);
    const [e5, e6] = [await storedEvent(kv, 5), await storedEvent(kv, 6)];
    await putTail(kv, 5, e6);
    await putTail(kv, 6, e5);
    const sink = new MemorySink();
    const summary = await runAudit({ kv, scratch, sink });
    const problems = byKind(sink).chain_broken.join("\n");
    // Slot 5 holds event 6 and slot 6 event 5: each is out of place, and neither links.
    assertMatch(problems, /^6: events 5\.\.5 are missing\n6: hash does not match/);
    assertMatch(problems, /5: position 5 out of order\n5: hash does not match/);
    assertEquals(summary.chain.ok, false);
    assertEquals(summary.checkpoint, null);
  });
});

Deno.test("a damaged log entry is a broken chain, not an uncaught error", async () => {
  for (const value of [new Uint8Array([0xff, 0xfe, 0x00]), "not\ta log line", 42]) {
    await withKvs(async (kv, scratch) => {
      await cleanWorkload(kv);
      // A tail line the store never wrote that way, and a sealed segment overwritten.
      await kv.set(["log", "t", 5], value);
      for await (const s of kv.list({ prefix: ["log", "s"] }, { limit: 1 })) {
        await kv.set(s.key, value);
      }
      const sink = new MemorySink();
      const summary = await runAudit({ kv, scratch, sink });
      assertEquals(summary.chain.ok, false);
      assert(byKind(sink).chain_broken.length > 0);
    });
  }
});

Deno.test("an event a fold cannot take (valid JSON, rehashed) is a broken chain at its position", async () => {
  await withKvs(async (kv, scratch) => {
    await cleanWorkload(kv);
    await rewriteEvent(kv, 4, (e) => ({ ...e, data: { ...e.data, buildId: undefined, mint: 7 } }));
    const sink = new MemorySink();
    const summary = await runAudit({ kv, scratch, sink });
    assertEquals(summary.chain.ok, false);
    assertMatch(byKind(sink).chain_broken.join("\n"), /^4: /);
  });
});

Deno.test("a live document stored with its properties in another order is compared one by one and passes", async () => {
  await withKvs(async (kv, scratch) => {
    const store = await cleanWorkload(kv);
    const key = projectionKey("purchase", ["p1"]);
    const doc = (await kv.get<Record<string, unknown>>(key)).value!;
    await kv.set(key, Object.fromEntries(Object.entries(doc).reverse()));
    // The edit before the audit's head, or it would be settled as a document that moved.
    await store.append([{
      stream: "build-7",
      expectedVersion: 0,
      events: [built(7, "k1", "p1", "2026-11-23")],
    }]);
    const summary = await runAudit({ kv, scratch, sink: new MemorySink() });
    // The digests differ (they hash the stored text), the documents do not.
    assertEquals(summary.projections.compared, "documents");
    assertEquals(summary.projections.mismatches, 0);
    assert(summary.ok);
  });
});

Deno.test("the tables are byte for byte those of the audit this one replaced, for the same log", async () => {
  for (const name of ["workload", "tampered"] as const) {
    const dir = await Deno.makeTempDir();
    try {
      await withKvs(async (kv, scratch) => {
        if (name === "workload") await workload(kv);
        else {
          await cleanWorkload(kv);
          await tamper(kv);
        }
        const sink = await FileSink.create(dir, AUDIT_TABLES);
        await runAudit({ kv, scratch, sink, now: () => 0 });
      });
      assertEquals(await auditFiles(dir), await goldenFiles(name), name);
    } finally {
      await Deno.remove(dir, { recursive: true });
    }
  }
});

Deno.test("--verify-chain: recorded fees are checked against the treasury's balance change", async () => {
  await withKvs(async (kv, scratch) => {
    await workload(kv);
    const tx = (fee: number, mint: string, payer = "Payerk1"): TxView => ({
      err: null,
      accountKeys: [payer, mint, TREASURY],
      signers: [payer],
      preBalances: [10_000_000_000, 0, 5],
      postBalances: [9_000_000_000, 1, 5 + fee],
    });
    const chain: Record<string, TxView> = {
      Sig1: tx(19933334, "Mint1"),
      Sig2: tx(0, "Mint2"),
      Sig3: tx(100, "Mint3", "Payerk2"),
      // Recorded 20000000, chain shows less: someone's records are wrong.
      Sig7: tx(19000000, "Mint7"),
    };
    const reads: string[] = [];
    const sink = new MemorySink();
    const summary = await runAudit({
      kv,
      scratch,
      sink,
      readTx: (sig) => {
        reads.push(sig);
        return Promise.resolve(chain[sig] ?? null);
      },
    });
    assertEquals(reads.sort(), ["Sig1", "Sig2", "Sig3", "Sig7"]);
    assertEquals(summary.verifiedOnChain, 4);
    const b = Object.fromEntries(sink.rows("builds").map((r) => [r.buildId, r.chainFeeLamports]));
    assertEquals(b[1], "19933334");
    assertEquals(b[2], "0");
    assertEquals(b[4], null);
    const checks = byKind(sink).chain_check;
    assertEquals(checks, [
      "7: recorded fee 20000000 lamports, chain shows 19000000",
      "7: confirmed with 19000000 lamports to the treasury, quoted 19933334",
    ]);
  });
});

Deno.test("chain check: missing transaction, failed transaction, wrong mint, RPC error", async () => {
  const b = {
    signature: "S",
    mint: "M",
    payer: "P",
    treasury: "T",
    status: "confirmed" as const,
    quotedLamports: "10",
    feeSeenLamports: "10",
  };
  assertEquals((await checkOnChain(() => Promise.resolve(null), b)).problems, [
    "transaction not found on chain",
  ]);
  const failed = await checkOnChain(() =>
    Promise.resolve({
      err: { InstructionError: [0, "Custom"] },
      accountKeys: ["P", "X", "T"],
      signers: ["P"],
      preBalances: [0, 0, 0],
      postBalances: [0, 0, 10],
    }), b);
  assertEquals(failed.problems, [
    'transaction failed on chain: {"InstructionError":[0,"Custom"]}',
    "mint is not an account of the transaction",
  ]);
  assertEquals(
    (await checkOnChain(() => Promise.reject(new Error("429")), b)).problems,
    ["RPC error: 429"],
  );
  // Someone else's transaction that carries the mint and pays the treasury: not the build's.
  const foreign = await checkOnChain(() =>
    Promise.resolve({
      err: null,
      accountKeys: ["A", "M", "T"],
      signers: ["A"],
      preBalances: [0, 0, 0],
      postBalances: [0, 0, 10],
    }), b);
  assertEquals(foreign.problems, [
    "not signed by the build's payer P: another party's transaction",
  ]);
});

Deno.test("CSV cells are quoted and defused against spreadsheet formulas", () => {
  assertEquals(csvCell('a,"b"'), '"a,""b"""');
  assertEquals(csvCell("=HYPERLINK(1)"), "'=HYPERLINK(1)");
  assertEquals(csvCell("-5"), "-5");
  assertEquals(csvCell(null), "");
  assertEquals(csvCell(12), "12");
});

Deno.test("FileSink writes a CSV and a JSON file per table and a summary", async () => {
  const dir = await Deno.makeTempDir();
  try {
    await withKvs(async (kv, scratch) => {
      await workload(kv);
      const sink = await FileSink.create(dir, AUDIT_TABLES);
      await runAudit({ kv, scratch, sink });
    });
    const files = [];
    for await (const f of Deno.readDir(dir)) files.push(f.name);
    assertEquals(files.sort(), [
      "builds.csv",
      "builds.json",
      "exceptions.csv",
      "exceptions.json",
      "purchases.csv",
      "purchases.json",
      "summary.json",
      "totals_by_day.csv",
      "totals_by_day.json",
      "totals_by_key.csv",
      "totals_by_key.json",
      "updates.csv",
      "updates.json",
    ]);
    const csv = (await Deno.readTextFile(`${dir}/builds.csv`)).split("\r\n");
    assertEquals(csv[0], AUDIT_TABLES.builds.join(","));
    assertEquals(csv.length, 1 + 8 + 1);
    assertMatch(csv[2], /,"'=HYPERLINK\(""x""\)",/);
    const json = JSON.parse(await Deno.readTextFile(`${dir}/builds.json`));
    assertEquals(json.length, 8);
    assertEquals(json[1].name, '=HYPERLINK("x")');
    assertEquals(JSON.parse(await Deno.readTextFile(`${dir}/exceptions.json`)).length, 3);
    assertEquals(JSON.parse(await Deno.readTextFile(`${dir}/summary.json`)).ok, false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("an unverified creation is labelled by what it did with the fee", () => {
  assertEquals(unverifiedLabel(0n, "500"), "fee-less");
  assertEquals(unverifiedLabel(100n, "500"), "short-fee (100 of 500 lamports)");
  // The fee in full: only the supply or the mint was wrong.
  assertEquals(unverifiedLabel(500n, "500"), "fee-paid");
  assertEquals(unverifiedLabel(900n, "500"), "fee-paid");
});
