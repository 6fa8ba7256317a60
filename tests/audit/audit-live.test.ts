/** The auditor over a history the real service wrote: a purchase, a key and a confirmed token. */
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";
import { makePng } from "../metadata/image/fixtures.ts";
import { createToken } from "../../examples/create-token.ts";
import { runAudit } from "../../src/audit/audit.ts";
import { rpcTxReader } from "../../src/audit/chain-check.ts";
import { MemorySink } from "../../src/audit/sink.ts";

Deno.test("audit of a real service history: no exceptions, fees match the chain", async () => {
  const h = await startHarness({ env: { PUBLIC_BASE_URL: "https://tokens.example.test" } });
  const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen: () => {} }, h.app.fetch);
  const scratch = await Deno.openKv(":memory:");
  try {
    const wallet = h.fundedWallet(5);
    const { apiKey, keyId } = await h.newApiKey(wallet);
    const probe = await h.request("/v1/tokens", {
      method: "POST",
      headers: bearer(apiKey),
      json: {},
    });
    if (probe.status === 404) {
      console.warn("SKIPPED: POST /v1/tokens is not served yet");
      return;
    }
    const made = await createToken({
      baseUrl: `http://127.0.0.1:${server.addr.port}`,
      apiKey,
      payer: wallet,
      name: "Audited",
      symbol: "AUD",
      supply: "42",
      decimals: 0,
      imageBytes: makePng(8, 8),
      log: () => {},
      verifyTimeoutMs: 30_000,
    });
    assertEquals(made.verification.status, "confirmed");

    const sink = new MemorySink();
    const summary = await runAudit({
      kv: h.kv,
      scratch,
      sink,
      readTx: rpcTxReader(h.services.connection),
    });
    assertEquals(sink.rows("exceptions"), []);
    assert(summary.ok);
    assertEquals(summary.verifiedOnChain, 1);
    const [b] = sink.rows("builds");
    assertEquals(b.keyId, keyId);
    assertEquals(b.mint, made.mint);
    assertEquals(b.status, "confirmed");
    assertEquals(b.signature, made.signature);
    assertEquals(b.feeSeenLamports, b.quotedLamports);
    assertEquals(b.chainFeeLamports, b.quotedLamports);
    const [k] = sink.rows("totals_by_key");
    assertEquals([k.keyId, k.builds, k.confirmed, k.collectedLamports], [
      keyId,
      1,
      1,
      b.quotedLamports,
    ]);
    assertEquals(sink.rows("purchases").map((p) => p.status), ["paid"]);
  } finally {
    scratch.close();
    await server.shutdown();
    await h.close();
  }
});
