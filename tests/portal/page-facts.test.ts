/**
 * What the portal page is told before any call, and the calls it makes on load: the currencies
 * offered come from the config; a signed-out visit asks GET /portal/api/session, which answers
 * 200 (a 401 is logged by browsers as an error); the example client it links to is served.
 */
import { Keypair } from "@solana/web3.js";
import { assertEquals, assertMatch } from "../support/assert.ts";
import { startHarness } from "../support/harness.ts";

const meta = (html: string, name: string) =>
  new RegExp(`<meta name="${name}" content="([^"]*)">`).exec(html)?.[1];

Deno.test("portal page: offers only the configured currencies, and names the network", async () => {
  const plain = await startHarness();
  try {
    const html = await (await plain.request("/")).text();
    assertEquals(meta(html, "tcb-currencies"), "SOL");
    assertEquals(meta(html, "tcb-network"), "localnet");
  } finally {
    await plain.close();
  }
  const mint = Keypair.generate().publicKey.toBase58();
  const withStable = await startHarness({ env: { STABLECOIN_MINT: mint } });
  try {
    const html = await (await withStable.request("/")).text();
    assertEquals(meta(html, "tcb-currencies"), "SOL STABLECOIN");
  } finally {
    await withStable.close();
  }
});

Deno.test("GET /portal/api/session: 200 with wallet null when signed out, the wallet when signed in", async () => {
  const h = await startHarness();
  try {
    const out = await h.request("/portal/api/session");
    assertEquals(out.status, 200);
    assertEquals(await out.json(), { wallet: null });
    const bogus = await h.request("/portal/api/session", { headers: { cookie: "tcb_session=x" } });
    assertEquals(await bogus.json(), { wallet: null });

    const wallet = h.fundedWallet();
    const cookie = await h.signIn(wallet);
    const signedIn = await h.portal(cookie, "/portal/api/session");
    assertEquals(await signedIn.json(), { wallet: wallet.publicKey.toBase58() });
  } finally {
    await h.close();
  }
});

Deno.test("GET /examples/create-token.ts serves the repository's example client as text", async () => {
  const h = await startHarness();
  try {
    const res = await h.request("/examples/create-token.ts");
    assertEquals(res.status, 200);
    assertMatch(res.headers.get("content-type") ?? "", /^text\/plain; charset=utf-8/);
    assertEquals(res.headers.get("x-content-type-options"), "nosniff");
    const file = await Deno.readTextFile(
      new URL("../../examples/create-token.ts", import.meta.url),
    );
    assertEquals(await res.text(), file);
  } finally {
    await h.close();
  }
});
