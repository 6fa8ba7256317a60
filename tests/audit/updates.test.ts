/**
 * The audit's updates table: a token update built, signed, landed and read back through the
 * service shows in the table with its fee as quoted and as paid, and in the summary's totals.
 */
import { runAudit } from "../../src/audit/audit.ts";
import { MemorySink } from "../../src/audit/sink.ts";
import { assert, assertEquals } from "../support/assert.ts";
import { startHarness } from "../support/harness.ts";
import { createToken, land, update } from "../support/token-update-flow.ts";

Deno.test("audit: the updates table shows each update and its fee; the summary adds them up", async () => {
  const h = await startHarness({ env: { UPDATE_FEE_USD: "0.5" } });
  const scratch = await Deno.openKv(":memory:");
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const mint = await createToken(h, apiKey, wallet);
    const landed = await update(h, apiKey, mint, {
      authority: wallet.publicKey.toBase58(),
      mintAuthority: null,
    });
    assertEquals(landed.status, 201, JSON.stringify(landed.body));
    await land(h, apiKey, mint, landed.body, wallet);
    // Built and never sent: in the table, not in the fees collected.
    const open = await update(h, apiKey, mint, {
      authority: wallet.publicKey.toBase58(),
      freezeAuthority: null,
    });
    assertEquals(open.status, 201, JSON.stringify(open.body));

    const sink = new MemorySink();
    const summary = await runAudit({ kv: h.kv, scratch, sink });
    assertEquals(sink.rows("exceptions"), []);
    assert(summary.ok);
    const rows = sink.rows("updates");
    const byId = new Map(rows.map((r) => [r.updateId, r]));
    const l = byId.get(landed.body.updateId)!;
    assertEquals([l.mint, l.status, l.changes, l.feeLamports, l.feeLamportsSeen], [
      mint,
      "landed",
      "mintAuthority",
      "3333334",
      "3333334",
    ]);
    assertEquals(l.totalLamports, landed.body.costs.totalLamports);
    assertEquals(byId.get(open.body.updateId)?.status, "built");
    assertEquals(summary.updates, {
      updates: 2,
      landed: 1,
      failed: 0,
      landedQuotedLamports: "3333334",
      collectedLamports: "3333334",
    });
  } finally {
    scratch.close();
    await h.close();
  }
});
