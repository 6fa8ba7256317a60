/**
 * The "create a token" Solana Action: the form a wallet renders (GET, checked against the spec's
 * own types and its rules), the POST's transaction signed by the account, landed on the embedded
 * chain and verified like any build, its refusals as ActionErrors, and the Actions headers on
 * these paths only.
 */
import type { ActionGetResponse, ActionPostResponse, ActionsJson } from "@solana/actions-spec";
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { buildById } from "../../src/creation/build-records.ts";
import { sweepOpenBuilds } from "../../src/creation/watcher.ts";
import { ACTIONS_KEY_ID } from "../../src/actions/channel.ts";
import { listDeliveries } from "../../src/webhooks/endpoints.ts";
import { kvReads, read } from "../../src/commands/read.ts";
import { keysProjection } from "../../projections/keys.ts";
import { runAudit } from "../../src/audit/audit.ts";
import { MemorySink } from "../../src/audit/sink.ts";

const ACTION = "/v1/actions/create-token";

const post = (h: Harness, query: Record<string, string>, body: unknown) =>
  h.request(`${ACTION}?${new URLSearchParams(query)}`, { method: "POST", json: body });

const CORS = {
  "access-control-allow-origin": "*",
  "access-control-allow-methods": "GET,POST,PUT,OPTIONS",
};

function assertActionHeaders(res: Response, chainId: string) {
  for (const [k, v] of Object.entries(CORS)) assertEquals(res.headers.get(k), v, k);
  const allowed = res.headers.get("access-control-allow-headers");
  // A preflight names the headers; a simple answer need not.
  if (allowed !== null) {
    for (const h of ["Content-Type", "Authorization", "Content-Encoding", "Accept-Encoding"]) {
      assert(allowed.includes(h), `${h} allowed: ${allowed}`);
    }
  }
  assertEquals(res.headers.get("x-action-version"), "2.4");
  assertEquals(res.headers.get("x-blockchain-ids"), chainId);
}

async function localChainId(h: Harness) {
  return `solana:${(await h.services.connection.getGenesisHash()).slice(0, 32)}`;
}

Deno.test("GET: actions.json and the form, typed by the spec, with the Actions headers", async () => {
  const h = await startHarness();
  try {
    const chainId = await localChainId(h);
    const rulesRes = await h.request("/actions.json");
    assertEquals(rulesRes.status, 200);
    assertActionHeaders(rulesRes, chainId);
    const rules: ActionsJson = await rulesRes.json();
    assert(rules.rules.some((r) => r.pathPattern === "/create-token" && r.apiPath === ACTION));

    const res = await h.request(ACTION);
    assertEquals(res.status, 200);
    assertActionHeaders(res, chainId);
    const form: ActionGetResponse = await res.json();
    assertEquals(form.type, "action");
    for (const f of ["icon", "title", "description", "label"] as const) {
      assert(typeof form[f] === "string" && form[f].length > 0, f);
    }
    // The icon is an absolute URL this origin serves, an image a wallet can show.
    assert(form.icon.startsWith(h.base), form.icon);
    const icon = await h.request(new URL(form.icon).pathname);
    assertEquals([icon.status, icon.headers.get("content-type")], [200, "image/png"]);
    const png = new Uint8Array(await icon.arrayBuffer());
    assertEquals([...png.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);

    const [linked] = form.links!.actions;
    assertEquals(linked.type, "transaction");
    const names = linked.parameters!.map((p) => [p.name, p.required ?? false]);
    assertEquals(names, [
      ["name", true],
      ["symbol", true],
      ["supply", true],
      ["decimals", true],
      ["imageUrl", false],
      ["description", false],
    ]);
    // Every parameter has its {placeholder} in the href template, and the href is this path.
    for (const [n] of names) assert(linked.href.includes(`${n}={${n}}`), `${n} in ${linked.href}`);
    assertEquals(new URL(linked.href, h.base).pathname, ACTION);

    const pre = await h.request(ACTION, {
      method: "OPTIONS",
      headers: { origin: "https://dial.to", "access-control-request-method": "POST" },
    });
    assertEquals(pre.status, 204);
    assertActionHeaders(pre, chainId);
  } finally {
    await h.close();
  }
});

Deno.test("the keyed API still sends no CORS and no Actions headers", async () => {
  const h = await startHarness();
  try {
    const { apiKey } = await h.newApiKey();
    for (
      const res of [
        await h.request("/v1/me", { headers: { ...bearer(apiKey), origin: "https://dial.to" } }),
        await h.request("/v1/pricing", { headers: { origin: "https://dial.to" } }),
        await h.request("/v1/tokens", {
          method: "OPTIONS",
          headers: { origin: "https://dial.to", "access-control-request-method": "POST" },
        }),
      ]
    ) {
      await res.body?.cancel();
      for (const k of ["access-control-allow-origin", "x-action-version", "x-blockchain-ids"]) {
        assertEquals(res.headers.get(k), null, `${res.url} ${k}`);
      }
    }
  } finally {
    await h.close();
  }
});

Deno.test("POST: the account signs the transaction, it lands, and the build confirms with its fee", async () => {
  const token = "admin-token-0123456789abcdef0123456789";
  const h = await startHarness({ env: { ADMIN_TOKEN: token, WEBHOOK_ALLOW_LOOPBACK: "true" } });
  try {
    h.chain.airdrop(h.treasury.publicKey.toBase58(), 1_000_000_000n);
    // The operator's webhook for the channel's builds, registered through the admin surface.
    const hook = await h.request("/admin/actions/webhooks", {
      method: "POST",
      headers: { authorization: `Bearer ${token}` },
      json: { url: "http://127.0.0.1:9/hook" },
    });
    const endpoint = await hook.json();
    assertEquals(hook.status, 201, JSON.stringify(endpoint));
    const user = h.fundedWallet(5);
    const res = await post(h, {
      name: "Wallet Coin",
      symbol: "WAL",
      supply: "1000000",
      decimals: "6",
      imageUrl: "",
      description: "",
    }, { account: user.publicKey.toBase58() });
    const body: ActionPostResponse = await res.json();
    assertEquals(res.status, 200, JSON.stringify(body));
    assertActionHeaders(res, await localChainId(h));
    assert(body.type === "transaction");
    assert(/^Creates Wallet Coin \(WAL\).* SOL/.test(body.message ?? ""), body.message);

    const tx = decodeTx(body.transaction);
    const signers = tx.message.staticAccountKeys.slice(0, tx.message.header.numRequiredSignatures);
    assertEquals(signers.map((k) => k.toBase58()), [user.publicKey.toBase58()]);
    tx.sign([user]);
    const sig = await h.services.connection.sendRawTransaction(tx.serialize());
    await h.waitForConfirmation(sig);
    await sweepOpenBuilds(h.services);

    // The build is one of the Actions channel's, confirmed and its fee seen, like any build.
    const build = (await buildById(h.kv, 1))!;
    assertEquals(
      [build.keyId, build.purchaseId, build.payer, build.status, build.feeVerified],
      [ACTIONS_KEY_ID, "actions", user.publicKey.toBase58(), "confirmed", true],
    );
    assertEquals(build.signature, sig);
    // Its metadata is hosted here, with the default image.
    const doc = await (await h.request(new URL(build.uri).pathname)).json();
    assertEquals([doc.name, doc.symbol], ["Wallet Coin", "WAL"]);
    const image = await h.request(new URL(doc.image).pathname);
    assertEquals(image.status, 200);
    await image.body?.cancel();

    // The operator's webhook has the creation's delivery, as for any key's build.
    const channel = (await read(kvReads(h.kv), keysProjection, [ACTIONS_KEY_ID]))!;
    const deliveries = await listDeliveries(h.services, channel, endpoint.id, {});
    assert(deliveries.items.length >= 1, JSON.stringify(deliveries));

    // The audit replays the channel's events like any key's, and reconciles its fee.
    const scratch = await Deno.openKv(":memory:");
    try {
      const sink = new MemorySink();
      const summary = await runAudit({ kv: h.kv, scratch, sink });
      assertEquals([summary.ok, summary.projections.mismatches, summary.exceptions.total], [
        true,
        0,
        0,
      ]);
      const rows = sink.rows("builds").filter((r) => r.keyId === ACTIONS_KEY_ID);
      assertEquals(rows.length, 1, JSON.stringify(sink.rows("builds")));
    } finally {
      scratch.close();
    }
  } finally {
    await h.close();
  }
});

Deno.test("the portal tells the operator the blink to share", async () => {
  const h = await startHarness();
  try {
    const html = await (await h.request("/")).text();
    assert(html.includes(`https://dial.to/?action=solana-action:${h.base}${ACTION}`), "blink URL");
    assert(!html.includes("__TCB_"), "every placeholder filled");
    // The link actions.json maps opens that section in a browser without a blink client.
    const page = await h.request("/create-token");
    assertEquals([page.status, page.headers.get("location")], [302, "/#blink-heading"]);
  } finally {
    await h.close();
  }
});
