/**
 * GET /v1/tokens on the embedded chain: the key's own builds, newest first, a cursor that neither
 * skips nor repeats while builds keep arriving, a status filter, and 400s naming each bad field.
 */
import { allProjections } from "../../projections/index.ts";
import { replayAndCompare } from "../../src/audit/replay-memory.ts";
import { BuildList } from "../../src/openapi/integrator.ts";
import * as S from "../../src/openapi/schemas.ts";
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, type Harness, startHarness } from "../support/harness.ts";
import { build, land } from "./support.ts";

async function list(h: Harness, apiKey: string, query = "") {
  const res = await h.request(`/v1/tokens${query}`, { headers: bearer(apiKey) });
  const body = await res.json();
  assertEquals(res.status, 200, JSON.stringify(body));
  return BuildList.strict().parse(body);
}

Deno.test("a key lists only its own builds, newest first; pages follow the cursor without a skip or a repeat while builds keep arriving", async () => {
  const h = await startHarness();
  try {
    const a = await h.newApiKey();
    const b = await h.newApiKey();
    const payer = h.fundedWallet(50);
    const mine: number[] = [];
    for (let i = 0; i < 5; i++) mine.push((await build(h, a.apiKey, payer, `Mine ${i}`)).buildId);
    const theirs = (await build(h, b.apiKey, payer, "Theirs")).buildId;

    const all = await list(h, a.apiKey);
    assertEquals(all.items.map((i) => i.buildId), [...mine].reverse());
    assertEquals(all.nextCursor, null);
    assertEquals(all.items[0].name, "Mine 4");
    assertEquals(all.items[0].status, "built");
    assertEquals((await list(h, b.apiKey)).items.map((i) => i.buildId), [theirs]);

    // Page by two; between pages (and during one) the same key builds more.
    const seen: number[] = [];
    let page = await list(h, a.apiKey, "?limit=2");
    seen.push(...page.items.map((i) => i.buildId));
    const newer: number[] = [];
    while (page.nextCursor) {
      const [next, extra] = await Promise.all([
        list(h, a.apiKey, `?limit=2&cursor=${page.nextCursor}`),
        build(h, a.apiKey, payer, `Later ${newer.length}`),
      ]);
      newer.push(extra.buildId);
      page = next;
      assert(page.items.length <= 2);
      seen.push(...page.items.map((i) => i.buildId));
    }
    assertEquals(seen, [...mine].reverse());
    // The builds made meanwhile are on a fresh first page, newest first.
    const fresh = await list(h, a.apiKey, `?limit=${newer.length}`);
    assertEquals(fresh.items.map((i) => i.buildId), [...newer].reverse());
    assert(fresh.nextCursor !== null);

    const report = await replayAndCompare(h.kv, allProjections);
    assert(report.equal, JSON.stringify(report.mismatches));
  } finally {
    await h.close();
  }
});

Deno.test("?status= filters by the build's current state: a landed build moves from built to confirmed", async () => {
  const h = await startHarness();
  try {
    const { apiKey } = await h.newApiKey();
    const payer = h.fundedWallet(50);
    const first = await build(h, apiKey, payer, "Landed");
    await build(h, apiKey, payer, "Waiting 1");
    await build(h, apiKey, payer, "Waiting 2");
    assertEquals((await list(h, apiKey, "?status=confirmed")).items, []);
    const { signature } = await land(h, apiKey, payer, first);

    const confirmed = await list(h, apiKey, "?status=confirmed");
    assertEquals(confirmed.items.map((i) => [i.buildId, i.signature, i.feeVerified]), [
      [first.buildId, signature, true],
    ]);
    assertEquals(confirmed.nextCursor, null);
    const built = await list(h, apiKey, "?status=built&limit=1");
    assertEquals(built.items.map((i) => i.name), ["Waiting 2"]);
    const rest = await list(h, apiKey, `?status=built&limit=1&cursor=${built.nextCursor}`);
    assertEquals(rest.items.map((i) => i.name), ["Waiting 1"]);
    // One build older than "Waiting 1" is left to look at, so there is a cursor; it finds none.
    const last = await list(h, apiKey, `?status=built&cursor=${rest.nextCursor}`);
    assertEquals([last.items, last.nextCursor], [[], null]);
  } finally {
    await h.close();
  }
});

Deno.test("400 names every bad parameter; no key is 401", async () => {
  const h = await startHarness();
  try {
    const { apiKey } = await h.newApiKey();
    for (
      const [query, fields] of [
        ["?limit=0", ["limit"]],
        ["?limit=101", ["limit"]],
        ["?limit=2.5", ["limit"]],
        ["?limit=ten", ["limit"]],
        ["?status=landed", ["status"]],
        ["?cursor=not-a-cursor", ["cursor"]],
        ["?limit=0&status=nope&cursor=%%%", ["cursor", "limit", "status"]],
      ] as const
    ) {
      const res = await h.request(`/v1/tokens${query}`, { headers: bearer(apiKey) });
      assertEquals(res.status, 400, query);
      const body = S.ErrorBody.parse(await res.json());
      assertEquals(body.error.code, "invalid_request");
      assertEquals(Object.keys(body.error.fields).sort(), [...fields], query);
    }
    assertEquals((await list(h, apiKey, "?limit=1&limit=100")).items, []);
    assertEquals((await h.request("/v1/tokens")).status, 401);
  } finally {
    await h.close();
  }
});
