/**
 * The portal's origin (CSRF check, sign-in message) comes from PUBLIC_BASE_URL only: a request
 * whose Host header names another origin, with a matching Origin, changes nothing.
 */
import { assert, assertEquals } from "../support/assert.ts";
import { startHarness } from "../support/harness.ts";

Deno.test("given a signed-in wallet, when a call comes with Host: evil.example and a matching Origin, then it is refused and its sign-in message names PUBLIC_BASE_URL", async () => {
  const h = await startHarness({ env: { PUBLIC_BASE_URL: "https://tokens.example.test" } });
  try {
    const w = h.fundedWallet();
    const cookie = await h.signIn(w);
    const evil = "http://evil.example:8000";
    const forged = await h.app.request(`${evil}/portal/api/purchases`, {
      method: "POST",
      headers: {
        host: "evil.example:8000",
        origin: evil,
        cookie,
        "content-type": "application/json",
      },
      body: JSON.stringify({ currency: "SOL" }),
    });
    assertEquals([forged.status, (await forged.json()).error.code], [403, "forbidden"]);
    // Nothing was quoted.
    const types = [];
    for await (const e of h.services.store.readAll()) types.push(e.type);
    assert(!types.includes("AccessPaymentQuoted"), types.join());

    // The sign-in message asked for through that Host names the configured origin only.
    const ch = await (await h.app.request(`${evil}/portal/api/challenge`, {
      method: "POST",
      headers: { host: "evil.example:8000", origin: evil, "content-type": "application/json" },
      body: JSON.stringify({ wallet: w.publicKey.toBase58() }),
    })).json().catch(() => null);
    // Refused outright (the Origin is not the portal's) or, if answered, never naming evil.example.
    assert(!ch?.message?.includes("evil.example"), JSON.stringify(ch));

    // The page's own origin still works.
    const own = await h.request("/portal/api/purchases", {
      method: "POST",
      headers: { cookie, origin: "https://tokens.example.test" },
      json: { currency: "SOL" },
    });
    assertEquals(own.status, 201);
    await own.body?.cancel();
  } finally {
    await h.close();
  }
});
