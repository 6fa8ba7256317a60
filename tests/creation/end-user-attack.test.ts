/**
 * The attack of an integrator's end user: the integrator builds for a wallet it does not
 * control; the wallet drops our fee transfer, signs and lands the creation through its own RPC.
 * On the embedded chain, through the real API and the watcher: such landings are the payer's
 * (refused further builds, on every key), never enough to suspend the integrator's key; the
 * key's own wallet doing the same gets it suspended as the contract says.
 */
import { Keypair, SystemProgram, Transaction, TransactionMessage } from "@solana/web3.js";
import { assert, assertEquals } from "../support/assert.ts";
import { bearer, decodeTx, type Harness, startHarness } from "../support/harness.ts";
import { sweepOpenBuilds } from "../../src/creation/watcher.ts";

const ENV = { TOKENS_PER_DAY: "200", REQUESTS_PER_HOUR: "100000" };

function buildRequest(h: Harness, apiKey: string, payer: Keypair, name: string) {
  return h.request("/v1/tokens", {
    method: "POST",
    headers: bearer(apiKey),
    json: {
      payer: payer.publicKey.toBase58(),
      name,
      symbol: "USR",
      metadataUri: "https://example.com/m/user.json",
      supply: "1000",
    },
  });
}

async function build(h: Harness, apiKey: string, payer: Keypair, name: string) {
  const res = await buildRequest(h, apiKey, payer, name);
  const body = await res.json();
  assertEquals(res.status, 201, JSON.stringify(body));
  return { mint: body.mint as string, tx: decodeTx(body.transaction) };
}

/** The build without its fee transfer (the System transfer that carries the reference), landed. */
async function landWithoutFee(h: Harness, b: { tx: ReturnType<typeof decodeTx> }, payer: Keypair) {
  const tx = Transaction.populate(
    TransactionMessage.decompile(b.tx.message).compileToLegacyMessage(),
  );
  const keep = tx.instructions.filter((ix) =>
    !(ix.programId.equals(SystemProgram.programId) && ix.data[0] === 2 && ix.keys.length === 3)
  );
  assertEquals(keep.length, tx.instructions.length - 1, "exactly the fee transfer dropped");
  const bare = new Transaction({ feePayer: payer.publicKey, recentBlockhash: tx.recentBlockhash! })
    .add(...keep);
  bare.sign(payer);
  const sig = await h.services.connection.sendRawTransaction(bare.serialize());
  await h.waitForConfirmation(sig);
  return sig;
}

async function me(h: Harness, apiKey: string) {
  const res = await h.request("/v1/me", { headers: bearer(apiKey) });
  return { status: res.status, body: await res.json() };
}

async function assertPayerRefused(h: Harness, apiKey: string, payer: Keypair) {
  const res = await buildRequest(h, apiKey, payer, "Again");
  const body = await res.json();
  assertEquals(res.status, 400, JSON.stringify(body));
  assertEquals(body.error.code, "invalid_request");
  assert(/without the service fee/.test(body.error.fields.payer), body.error.fields.payer);
}

Deno.test("one end user landing 4, 10 and 50 creations without the fee: the key keeps working, the wallet is refused on every key", async () => {
  const h = await startHarness({ env: ENV });
  try {
    const integrator = await h.newApiKey();
    const other = await h.newApiKey();
    const user = h.fundedWallet(5);
    // The user asks for 50 builds before landing any: afterwards it would get none.
    const builds = [];
    for (let i = 0; i < 50; i++) builds.push(await build(h, integrator.apiKey, user, `U ${i}`));
    let landed = 0;
    for (const upTo of [4, 10, 50]) {
      for (; landed < upTo; landed++) await landWithoutFee(h, builds[landed], user);
      await sweepOpenBuilds(h.services);
      const view = await me(h, integrator.apiKey);
      assertEquals(view.status, 200, `the key works after ${upTo} landings`);
      const seen = view.body.conduct.unverifiedLandings;
      assertEquals(seen.length, upTo);
      assert(
        seen.every((l: { payer: string; byKeyWallet: boolean }) =>
          l.payer === user.publicKey.toBase58() && !l.byKeyWallet
        ),
      );
      assertEquals(view.body.conduct.recent.payers, 1);
      await assertPayerRefused(h, integrator.apiKey, user);
      await assertPayerRefused(h, other.apiKey, user);
    }
    // Other end users are still served.
    await build(h, integrator.apiKey, h.fundedWallet(1), "Honest");
  } finally {
    await h.close();
  }
});

Deno.test("five end users landing once each without the fee: the key keeps working, each wallet is refused", async () => {
  const h = await startHarness({ env: ENV });
  try {
    const integrator = await h.newApiKey();
    const users = Array.from({ length: 5 }, () => h.fundedWallet(1));
    for (const [i, u] of users.entries()) {
      await landWithoutFee(h, await build(h, integrator.apiKey, u, `F ${i}`), u);
    }
    await sweepOpenBuilds(h.services);
    const view = await me(h, integrator.apiKey);
    assertEquals(view.status, 200);
    assertEquals(view.body.conduct.recent, { window: 100, landings: 5, unverified: 5, payers: 5 });
    for (const u of users) await assertPayerRefused(h, integrator.apiKey, u);
    // The portal shows the buyer the same landings, each with its payer.
    const state = await (await h.request("/portal/api/state", {
      headers: { cookie: integrator.cookie },
    })).json();
    const shown = state.purchases[0].key.conduct;
    assertEquals(shown, view.body.conduct);
    assertEquals(
      shown.unverifiedLandings.map((l: { payer: string }) => l.payer).sort(),
      users.map((u) => u.publicKey.toBase58()).sort(),
    );
  } finally {
    await h.close();
  }
});

Deno.test("the key's own wallet landing creations without the fee past SUSPEND_AFTER_UNVERIFIED suspends the key", async () => {
  const h = await startHarness({ env: { ...ENV, SUSPEND_AFTER_UNVERIFIED: "3" } });
  try {
    const { apiKey, wallet } = await h.newApiKey();
    const builds = [];
    for (let i = 0; i < 4; i++) builds.push(await build(h, apiKey, wallet, `Own ${i}`));
    for (const b of builds.slice(0, 3)) await landWithoutFee(h, b, wallet);
    await sweepOpenBuilds(h.services);
    const view = await me(h, apiKey);
    assertEquals(view.status, 200, "three are tolerated");
    assertEquals(view.body.conduct.byKeyWallet, 3);
    await landWithoutFee(h, builds[3], wallet);
    await sweepOpenBuilds(h.services);
    const refused = await me(h, apiKey);
    assertEquals(refused.status, 401, "the fourth suspends the key");
  } finally {
    await h.close();
  }
});
