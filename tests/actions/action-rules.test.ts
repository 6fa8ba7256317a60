/**
 * The Action's refusals and limits: every rule of a build, its error as the spec's ActionError
 * (`{ message }`, a 4xx, with the Actions headers still on it), the per-wallet and per-address
 * limits as 429s with Retry-After, and an image URL fetched through the SSRF-safe fetcher.
 */
import type { ActionError, ActionPostResponse } from "@solana/actions-spec";
import { Keypair } from "@solana/web3.js";
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { buildById } from "../../src/creation/build-records.ts";
import { defaultImagePng } from "../../src/actions/default-image.ts";
import { ACTIONS_KEY_ID } from "../../src/actions/channel.ts";

const ACTION = "/v1/actions/create-token";
const TOKEN = { name: "Rule Coin", symbol: "RULE", supply: "1000", decimals: "9" };

const post = (h: Harness, query: Record<string, string>, account: unknown) =>
  h.request(`${ACTION}?${new URLSearchParams(query)}`, { method: "POST", json: { account } });

async function refused(res: Response, status: number): Promise<string> {
  const body: ActionError = await res.json();
  assertEquals(res.status, status, JSON.stringify(body));
  assertEquals(Object.keys(body), ["message"]);
  assertEquals(res.headers.get("access-control-allow-origin"), "*");
  assert(res.headers.get("x-action-version") !== null);
  return body.message;
}

Deno.test("bad parameters: one ActionError naming every bad field, nothing counted", async () => {
  const h = await startHarness({ env: { ACTIONS_BUILDS_PER_WALLET_PER_DAY: "1" } });
  try {
    const user = h.fundedWallet(5);
    const message = await refused(
      await post(h, { name: "", symbol: "RULE", supply: "lots", decimals: "12" }, "not-a-key"),
      400,
    );
    for (const f of ["name", "supply", "decimals", "account"]) {
      assert(message.includes(f), `${f} in ${message}`);
    }
    // A look-alike of a well-known token is refused as on POST /v1/tokens.
    const lookAlike = await refused(
      await post(h, { ...TOKEN, symbol: "USDC" }, user.publicKey.toBase58()),
      400,
    );
    assert(lookAlike.includes("symbol"), lookAlike);
    // An image URL that is no https URL is refused before any fetch.
    const image = await refused(
      await post(h, { ...TOKEN, imageUrl: "ftp://example.com/a.png" }, user.publicKey.toBase58()),
      400,
    );
    assert(image.includes("imageUrl"), image);
    // None of these counted against the wallet's day: its one build still goes through.
    assertEquals((await post(h, TOKEN, user.publicKey.toBase58())).status, 200);
  } finally {
    await h.close();
  }
});

Deno.test("an unfunded wallet: the build's insufficient-funds refusal as an ActionError", async () => {
  const h = await startHarness();
  try {
    const message = await refused(
      await post(h, TOKEN, Keypair.generate().publicKey.toBase58()),
      400,
    );
    assert(/lamports short/.test(message), message);
  } finally {
    await h.close();
  }
});

Deno.test("per wallet per day: the next build is a 429 with Retry-After; another wallet builds", async () => {
  const now = Date.UTC(2026, 0, 10, 12, 0, 0);
  const h = await startHarness({
    env: { ACTIONS_BUILDS_PER_WALLET_PER_DAY: "2" },
    clock: () => now,
  });
  try {
    const user = h.fundedWallet(5);
    for (let i = 0; i < 2; i++) {
      assertEquals((await post(h, TOKEN, user.publicKey.toBase58())).status, 200);
    }
    const res = await post(h, TOKEN, user.publicKey.toBase58());
    const message = await refused(res, 429);
    assertEquals(res.headers.get("retry-after"), String(12 * 3600));
    assert(message.includes("2 tokens"), message);
    const other = h.fundedWallet(5);
    assertEquals((await post(h, TOKEN, other.publicKey.toBase58())).status, 200);
  } finally {
    await h.close();
  }
});

Deno.test("per client address per hour: the next POST is a 429 with Retry-After", async () => {
  const now = Date.UTC(2026, 0, 10, 12, 30, 0);
  const h = await startHarness({
    env: { ACTIONS_REQUESTS_PER_IP_PER_HOUR: "2" },
    clock: () => now,
  });
  try {
    // In-process requests have no address: they share one bucket.
    for (let i = 0; i < 2; i++) {
      const res = await post(h, TOKEN, h.fundedWallet(5).publicKey.toBase58());
      assertEquals(res.status, 200);
      await res.body?.cancel();
    }
    const res = await post(h, TOKEN, h.fundedWallet(5).publicKey.toBase58());
    await refused(res, 429);
    assertEquals(res.headers.get("retry-after"), "1800");
    // The GET form is not counted.
    assertEquals((await h.request(ACTION)).status, 200);
  } finally {
    await h.close();
  }
});

Deno.test("an image URL is fetched through the SSRF-safe fetcher and hosted with the token", async () => {
  const png = defaultImagePng();
  const server = Deno.serve(
    { port: 0, hostname: "127.0.0.1", onListen() {} },
    () => new Response(png.slice(), { headers: { "content-type": "image/png" } }),
  );
  const h = await startHarness({ config: { allowLoopbackImageFetchForTests: true } });
  try {
    const user = h.fundedWallet(5);
    const imageUrl = `http://127.0.0.1:${server.addr.port}/coin.png`;
    const res = await post(
      h,
      { ...TOKEN, imageUrl, description: "A coin" },
      user.publicKey.toBase58(),
    );
    const body: ActionPostResponse = await res.json();
    assertEquals(res.status, 200, JSON.stringify(body));
    assert(body.type === "transaction" && decodeTx(body.transaction).signatures.length === 1);
    const build = (await buildById(h.kv, 1))!;
    const doc = await (await h.request(new URL(build.uri).pathname)).json();
    assertEquals(doc.description, "A coin");
    const hosted = new Uint8Array(
      await (await h.request(new URL(doc.image).pathname)).arrayBuffer(),
    );
    assertEquals(hosted.length > 0, true);
  } finally {
    await h.close();
    await server.shutdown();
  }
});

Deno.test("a ban of the Actions channel pauses the Action; a lift resumes it", async () => {
  const token = "admin-token-0123456789abcdef0123456789";
  const h = await startHarness({ env: { ADMIN_TOKEN: token } });
  try {
    const admin = { authorization: `Bearer ${token}` };
    const user = h.fundedWallet(5).publicKey.toBase58();
    assertEquals((await post(h, TOKEN, user)).status, 200);
    // The operator sees the channel as a key, and bans it like one.
    const key = await (await h.request(`/admin/keys/${ACTIONS_KEY_ID}`, { headers: admin })).json();
    assertEquals(key.purchaseId, "actions");
    // Nobody can use the channel's key on the keyed API: no secret verifies against it.
    const forged = `tcb_live_${ACTIONS_KEY_ID}_${"1".repeat(44)}`;
    assertEquals((await h.request("/v1/me", { headers: bearer(forged) })).status, 401);
    const ban = await h.request(`/admin/keys/${ACTIONS_KEY_ID}/ban`, {
      method: "POST",
      headers: admin,
      json: { reason: "paused" },
    });
    assertEquals(ban.status, 200);
    const message = await refused(await post(h, TOKEN, user), 403);
    assert(message.includes("paused"), message);
    const lift = await h.request(`/admin/keys/${ACTIONS_KEY_ID}/lift`, {
      method: "POST",
      headers: admin,
    });
    assertEquals(lift.status, 200);
    await lift.body?.cancel();
    assertEquals((await post(h, TOKEN, user)).status, 200);
  } finally {
    await h.close();
  }
});
