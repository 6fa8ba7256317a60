import { assert, assertEquals, assertMatch } from "../support/assert.ts";
import { bearer, startHarness } from "../support/harness.ts";
import { currentWellKnownNames } from "../../src/admin/well-known-names.ts";
import { DEFAULT_WELL_KNOWN_NAMES } from "../../src/config.ts";
import { kvReads, read } from "../../src/commands/read.ts";
import { parseKey } from "../../src/keys/api-key.ts";
import { keysProjection } from "../../projections/keys.ts";

/** Every property name in a parsed JSON value, at any depth. */
const fieldNames = (v: unknown): string[] =>
  Array.isArray(v)
    ? v.flatMap(fieldNames)
    : typeof v === "object" && v !== null
    ? Object.entries(v).flatMap(([k, x]) => [k, ...fieldNames(x)])
    : [];

const TOKEN = "admin-token-abcdefghijklmnopqrstuvwxyz-0123";
const admin = { authorization: `Bearer ${TOKEN}` };

Deno.test("without ADMIN_TOKEN /admin does not exist: 404 like any unknown path", async () => {
  const h = await startHarness();
  try {
    for (
      const [method, path] of [["GET", "/admin/keys"], ["POST", "/admin/keys/ab/ban"], [
        "GET",
        "/admin/well-known-names",
      ]]
    ) {
      const res = await h.request(path, { method, headers: admin });
      assertEquals(res.status, 404, path);
      assertEquals(await res.json(), {
        error: { code: "not_found", message: "No such endpoint", fields: {} },
      });
    }
  } finally {
    await h.close();
  }
});

Deno.test("admin API: its own bearer token, never an API key; no secrets in listings", async () => {
  const h = await startHarness({ env: { ADMIN_TOKEN: TOKEN } });
  try {
    const { apiKey, keyId, purchaseId, wallet } = await h.newApiKey();
    const wrong: Record<string, string>[] = [
      {},
      { authorization: `Bearer ${TOKEN}x` },
      bearer(apiKey),
      { authorization: TOKEN },
    ];
    for (const headers of wrong) {
      const res = await h.request("/admin/keys", { headers });
      assertEquals(res.status, 401);
      assertEquals((await res.json()).error.code, "unauthorized");
      assertEquals(res.headers.get("www-authenticate"), 'Bearer realm="admin"');
    }

    const res = await h.request("/admin/keys", { headers: admin });
    assertEquals(res.status, 200);
    assertEquals(res.headers.get("cache-control"), "no-store");
    const text = await res.text();
    // The names of the fields, and the stored values themselves: a regex over the whole text would
    // also match a random base58 wallet that happens to spell "mac" (a 1-in-a-few-hundred flake).
    const stored = await read(kvReads(h.kv), keysProjection, [keyId]);
    assert(stored !== null, "the key's document exists");
    const secret = parseKey("tcb", apiKey)!.secret;
    for (const value of [stored.secretMac, secret, apiKey]) {
      assert(!text.includes(value), "no secret or keyed hash is listed");
    }
    const listing = JSON.parse(text);
    assertEquals(fieldNames(listing).filter((f) => /mac|secret|pepper/i.test(f)), []);
    const { items, cursor } = listing;
    assertEquals(cursor, null);
    assertEquals(items.length, 1);
    assertEquals(items[0].keyId, keyId);
    assertEquals(items[0].wallet, wallet.publicKey.toBase58());
    assertEquals(items[0].status, "active");

    const one = await (await h.request(`/admin/keys/${keyId}`, { headers: admin })).json();
    assertEquals(one.purchaseId, purchaseId);
    assertEquals((await h.request("/admin/keys/0000", { headers: admin })).status, 404);
    assertEquals((await h.request("/admin/keys/NOT-HEX", { headers: admin })).status, 404);

    const purchases = await (await h.request("/admin/purchases", { headers: admin })).json();
    assertEquals(
      purchases.items.map((p: { purchaseId: string; status: string }) => [p.purchaseId, p.status]),
      [
        [purchaseId, "paid"],
      ],
    );

    // Ban: the key is refused at once; banning twice changes nothing; lift restores it.
    const noReason = await h.request(`/admin/keys/${keyId}/ban`, {
      method: "POST",
      headers: admin,
      json: {},
    });
    assertEquals(noReason.status, 400);
    assertEquals((await noReason.json()).error.fields, { reason: "required" });
    const ban = await h.request(`/admin/keys/${keyId}/ban`, {
      method: "POST",
      headers: admin,
      json: { reason: "impersonation" },
    });
    assertEquals(ban.status, 200);
    assertEquals(await ban.json(), {
      key: { ...one, status: "banned", banned: "impersonation" },
      changed: true,
    });
    assertEquals((await h.request("/v1/me", { headers: bearer(apiKey) })).status, 401);
    const again = await h.request(`/admin/keys/${keyId}/ban`, {
      method: "POST",
      headers: admin,
      json: { reason: "twice" },
    });
    assertEquals((await again.json()).changed, false);
    const banned = await (await h.request("/admin/keys?status=banned", { headers: admin })).json();
    assertEquals(banned.items.length, 1);
    assertEquals(
      (await (await h.request("/admin/keys?status=active", { headers: admin })).json()).items,
      [],
    );
    // A banned key can't be deleted away by its owner either (the access rules).
    const lift = await h.request(`/admin/keys/${keyId}/lift`, { method: "POST", headers: admin });
    assertEquals((await lift.json()).key.status, "active");
    assertEquals((await h.request("/v1/me", { headers: bearer(apiKey) })).status, 200);
    const unknown = await h.request("/admin/keys/00ff/ban", {
      method: "POST",
      headers: admin,
      json: { reason: "x" },
    });
    assertEquals(unknown.status, 404);

    const badQuery = await h.request("/admin/keys?limit=0&bogus=1", { headers: admin });
    assertEquals(badQuery.status, 400);
    const fields = (await badQuery.json()).error.fields;
    assertEquals(Object.keys(fields).sort(), ["bogus", "limit"]);
    assertEquals((await h.request("/admin/keys?cursor=zzz", { headers: admin })).status, 400);
    assertEquals((await h.request("/admin/nothing-here", { headers: admin })).status, 404);
  } finally {
    await h.close();
  }
});

Deno.test("admin API: keys page through with a cursor", async () => {
  const h = await startHarness({ env: { ADMIN_TOKEN: TOKEN } });
  try {
    // Three keys straight into the log: the portal flow is not what this test is about.
    for (const k of ["0a", "0b", "0c"]) {
      await h.services.store.append([{
        stream: `purchase-p${k}`,
        expectedVersion: "any",
        events: [{
          type: "KeyIssued",
          v: 1,
          data: { keyId: k, purchaseId: `p${k}`, wallet: "W", secretMac: "m" },
        }],
      }]);
    }
    const seen: string[] = [];
    let cursor = "";
    for (let i = 0; i < 5; i++) {
      const page = await (await h.request(
        `/admin/keys?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        {
          headers: admin,
        },
      )).json();
      seen.push(...page.items.map((k: { keyId: string }) => k.keyId));
      if (!page.cursor) break;
      cursor = page.cursor;
    }
    assertEquals(seen, ["0a", "0b", "0c"]);
  } finally {
    await h.close();
  }
});

Deno.test("admin API: the well-known-names list is edited in KV and overrides the configuration", async () => {
  const h = await startHarness({ env: { ADMIN_TOKEN: TOKEN } });
  try {
    const get = async () =>
      await (await h.request("/admin/well-known-names", { headers: admin })).json();
    const initial = await get();
    assertEquals(initial.source, "config");
    assertEquals(initial.names, DEFAULT_WELL_KNOWN_NAMES);

    const put = await h.request("/admin/well-known-names", {
      method: "PUT",
      headers: admin,
      json: { names: [" Acme ", "ACME", "Globex"] },
    });
    assertEquals(put.status, 200);
    assertEquals((await put.json()).names, ["Acme", "Globex"]);
    assertEquals(await currentWellKnownNames(h.services), ["Acme", "Globex"]);

    const patch = await h.request("/admin/well-known-names", {
      method: "PATCH",
      headers: admin,
      json: { add: ["Initech"], remove: ["acme"] },
    });
    assertEquals((await patch.json()).names, ["Globex", "Initech"]);
    assertEquals((await get()).source, "kv");

    const bad = await h.request("/admin/well-known-names", {
      method: "PUT",
      headers: admin,
      json: { names: ["ok", "", 7, "x".repeat(65)] },
    });
    assertEquals(bad.status, 400);
    assertEquals(Object.keys((await bad.json()).error.fields), ["names.1", "names.2", "names.3"]);

    const reset = await h.request("/admin/well-known-names", { method: "DELETE", headers: admin });
    assertEquals((await reset.json()).source, "config");
    assertEquals(await currentWellKnownNames(h.services), DEFAULT_WELL_KNOWN_NAMES);
    assertMatch(h.logs.join("\n"), /admin: well-known names edited/);
    assert(!h.logs.join("\n").includes(TOKEN), "the admin token is never logged");
  } finally {
    await h.close();
  }
});
