/** The portal manages a key's webhook endpoints with the wallet's session, like /v1/webhooks. */
import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";

Deno.test("portal: the buying wallet lists, adds (secret once) and deletes its key's endpoints; another wallet sees 404", async () => {
  const h = await startHarness();
  try {
    const { apiKey, keyId, cookie } = await h.newApiKey();
    const path = `/portal/api/keys/${keyId}/webhooks`;
    assertEquals((await (await h.portal(cookie, path)).json()).items, []);

    const bad = await h.portal(cookie, path, { url: "https://192.168.1.9/hook" });
    assertEquals(bad.status, 400);
    assertMatch((await bad.json()).error.fields.url, /not public/);

    const added = await h.portal(cookie, path, { url: "https://hooks.example.com/t" });
    assertEquals(added.status, 201);
    const ep = await added.json();
    assertMatch(ep.secret, /^whsec_/);
    const listed = await (await h.portal(cookie, path)).json();
    assertEquals(listed.items.map((i: { id: string }) => i.id), [ep.id]);
    assert(!JSON.stringify(listed).includes("whsec_"));
    // The same endpoint, seen with the API key.
    const viaKey = await (await h.request("/v1/webhooks", { headers: bearer(apiKey) })).json();
    assertEquals(viaKey.items.map((i: { id: string }) => i.id), [ep.id]);

    const other = await h.signIn(h.fundedWallet());
    assertEquals((await h.portal(other, path)).status, 404);
    assertEquals((await h.portal(other, `${path}/${ep.id}/delete`, {})).status, 404);
    assertEquals((await h.portal(cookie, `${path}/${ep.id}/delete`, {})).status, 200);
    assertEquals((await (await h.portal(cookie, path)).json()).items, []);
    assertEquals((await h.request(path)).status, 401);
  } finally {
    await h.close();
  }
});
