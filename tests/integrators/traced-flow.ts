/**
 * Run by tracing.test.ts in a child process with OTEL_DENO=true: the real app behind Deno.serve
 * on the embedded chain, one build created, relayed and verified through HTTP. Prints the build id and the
 * signature as JSON.
 */
import bs58 from "bs58";
import { bearer, decodeTx, startHarness } from "../support/harness.ts";

const h = await startHarness();
const server = Deno.serve({ port: 0, hostname: "127.0.0.1", onListen() {} }, h.app.fetch);
const base = `http://127.0.0.1:${server.addr.port}`;
try {
  const { apiKey } = await h.newApiKey();
  const payer = h.fundedWallet(10);
  const res = await fetch(`${base}/v1/tokens`, {
    method: "POST",
    headers: { ...bearer(apiKey), "content-type": "application/json" },
    body: JSON.stringify({
      payer: payer.publicKey.toBase58(),
      name: "Traced",
      symbol: "TRC",
      metadataUri: "https://example.com/m/traced.json",
      supply: "10",
    }),
  });
  const built = await res.json();
  if (res.status !== 201) throw new Error(JSON.stringify(built));
  const tx = decodeTx(built.transaction);
  tx.sign([payer]);
  const signature = bs58.encode(tx.signatures[0]);
  const relayed = await fetch(`${base}/v1/transactions`, {
    method: "POST",
    headers: { ...bearer(apiKey), "content-type": "application/json" },
    body: JSON.stringify({ transaction: btoa(String.fromCharCode(...tx.serialize())) }),
  });
  if (relayed.status !== 202) throw new Error(await relayed.text());
  await h.waitForConfirmation(signature);
  const verified = await fetch(`${base}/v1/transactions/${signature}`, { headers: bearer(apiKey) });
  const v = await verified.json();
  if (v.status !== "confirmed") throw new Error(JSON.stringify(v));
  console.log(JSON.stringify({ buildId: built.buildId, signature }));
} finally {
  await server.shutdown();
  await h.close();
}
