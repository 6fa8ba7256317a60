import { assert, assertEquals } from "../support/assert.ts";
import { bearer, signMessage, startHarness } from "../support/harness.ts";
import { addressBucket } from "../../src/http/client-address.ts";
import bs58 from "bs58";
import {
  PublicKey,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
} from "@solana/web3.js";

Deno.test("purchase -> key -> rotate -> delete -> create again on the same purchase", async () => {
  const h = await startHarness();
  try {
    const { apiKey, keyId, cookie, purchaseId } = await h.newApiKey();
    assertEquals((await h.request("/v1/me", { headers: bearer(apiKey) })).status, 200);

    // One active key per purchase.
    const second = await h.portal(cookie, `/portal/api/purchases/${purchaseId}/key`, {});
    assertEquals(second.status, 400);

    const rotated = await (await h.portal(cookie, `/portal/api/keys/${keyId}/rotate`, {})).json();
    assertEquals(rotated.keyId, keyId);
    assert(rotated.apiKey !== apiKey);
    assertEquals((await h.request("/v1/me", { headers: bearer(apiKey) })).status, 401);
    assertEquals((await h.request("/v1/me", { headers: bearer(rotated.apiKey) })).status, 200);

    assertEquals((await h.portal(cookie, `/portal/api/keys/${keyId}/delete`, {})).status, 200);
    assertEquals((await h.request("/v1/me", { headers: bearer(rotated.apiKey) })).status, 401);

    const again = await h.portal(cookie, `/portal/api/purchases/${purchaseId}/key`, {});
    assertEquals(again.status, 201);
    const fresh = await again.json();
    assert(fresh.keyId !== keyId);
    assertEquals((await h.request("/v1/me", { headers: bearer(fresh.apiKey) })).status, 200);

    const state = await (await h.portal(cookie, "/portal/api/state")).json();
    assertEquals(state.purchases.length, 1);
    assertEquals(state.purchases[0].status, "paid");
    assertEquals(state.purchases[0].key.keyId, fresh.keyId);
    assert(!JSON.stringify(state).includes(fresh.apiKey.split("_").at(-1)));

    const types = [];
    for await (const e of h.services.store.readAll()) types.push(e.type);
    assertEquals(types, [
      "AccessPaymentQuoted",
      "AccessPurchased",
      "KeyIssued",
      "KeyRotated",
      "KeyDeleted",
      "KeyIssued",
    ]);
  } finally {
    await h.close();
  }
});

Deno.test("the treasury received the access fee on chain", async () => {
  const h = await startHarness();
  try {
    const before = await h.services.connection.getBalance(h.treasury.publicKey);
    await h.newApiKey();
    const after = await h.services.connection.getBalance(h.treasury.publicKey);
    // USD 10 at 150 USD/SOL, rounded up to the lamport.
    assertEquals(after - before, 66_666_667);
  } finally {
    await h.close();
  }
});

Deno.test("a key cannot be created before the payment is confirmed; nor by another wallet", async () => {
  const h = await startHarness();
  try {
    const w = h.fundedWallet();
    const cookie = await h.signIn(w);
    const quote = await (await h.portal(cookie, "/portal/api/purchases", { currency: "SOL" }))
      .json();
    const pending =
      await (await h.portal(cookie, `/portal/api/purchases/${quote.purchaseId}/check`, {})).json();
    assertEquals(pending.status, "pending");
    const early = await h.portal(cookie, `/portal/api/purchases/${quote.purchaseId}/key`, {});
    assertEquals(early.status, 400);

    const other = await h.signIn(h.fundedWallet());
    const foreign = await h.portal(other, `/portal/api/purchases/${quote.purchaseId}/key`, {});
    assertEquals(foreign.status, 404);
  } finally {
    await h.close();
  }
});

Deno.test("sign-in refuses a bad signature, a replayed nonce and cross-origin calls", async () => {
  const h = await startHarness();
  try {
    const w = h.fundedWallet();
    const wallet = w.publicKey.toBase58();
    const ch =
      await (await h.request("/portal/api/challenge", { method: "POST", json: { wallet } })).json();
    const forged = await h.request("/portal/api/session", {
      method: "POST",
      json: { wallet, nonce: ch.nonce, signature: bs58.encode(new Uint8Array(64)) },
    });
    assertEquals(forged.status, 401);
    // The nonce was consumed by the failed attempt too: it can't be replayed.
    const sig = bs58.encode(await signMessage(w, new TextEncoder().encode(ch.message)));
    const replay = await h.request("/portal/api/session", {
      method: "POST",
      json: { wallet, nonce: ch.nonce, signature: sig },
    });
    assertEquals(replay.status, 401);

    const cookie = await h.signIn(w);
    const cross = await h.request("/portal/api/purchases", {
      method: "POST",
      headers: { cookie, origin: "https://evil.example" },
      json: { currency: "SOL" },
    });
    assertEquals(cross.status, 403);
    const setCookie = (await (async () => {
      const c2 =
        await (await h.request("/portal/api/challenge", { method: "POST", json: { wallet } }))
          .json();
      const s2 = bs58.encode(await signMessage(w, new TextEncoder().encode(c2.message)));
      return h.request("/portal/api/session", {
        method: "POST",
        json: { wallet, nonce: c2.nonce, signature: s2 },
      });
    })()).headers.get("set-cookie")!;
    assert(/HttpOnly/i.test(setCookie) && /SameSite=Strict/i.test(setCookie));
    assertEquals((await h.request("/portal/api/state")).status, 401);
  } finally {
    await h.close();
  }
});

Deno.test("one transfer carrying two purchases' references pays for neither; a transfer each pays both", async () => {
  const h = await startHarness();
  try {
    const w = h.fundedWallet();
    const cookie = await h.signIn(w);
    const quote = async () =>
      await (await h.portal(cookie, "/portal/api/purchases", { currency: "SOL" })).json();
    const check = async (id: string) =>
      (await (await h.portal(cookie, `/portal/api/purchases/${id}/check`, {})).json()).status;
    const send = async (...ixs: TransactionInstruction[]) => {
      const { blockhash } = await h.services.connection.getLatestBlockhash("confirmed");
      const tx = new Transaction({ feePayer: w.publicKey, recentBlockhash: blockhash }).add(...ixs);
      tx.sign(w);
      const sig = await h.services.connection.sendRawTransaction(tx.serialize());
      await h.waitForConfirmation(sig);
    };
    const transfer = (lamports: string, ...references: string[]) => {
      const ix = SystemProgram.transfer({
        fromPubkey: w.publicKey,
        toPubkey: h.treasury.publicKey,
        lamports: BigInt(lamports),
      });
      for (const r of references) {
        ix.keys.push({ pubkey: new PublicKey(r), isSigner: false, isWritable: false });
      }
      return ix;
    };

    const [a, b] = [await quote(), await quote()];
    assertEquals(a.amount, b.amount);
    await send(transfer(a.amount, a.reference, b.reference));
    assertEquals([await check(a.purchaseId), await check(b.purchaseId)], ["pending", "pending"]);
    const key = await h.portal(cookie, `/portal/api/purchases/${a.purchaseId}/key`, {});
    assertEquals(key.status, 400);

    await send(transfer(a.amount, a.reference), transfer(b.amount, b.reference));
    assertEquals([await check(a.purchaseId), await check(b.purchaseId)], ["paid", "paid"]);
  } finally {
    await h.close();
  }
});

Deno.test("a key id that cannot be one is 404 on rotate and delete, however long", async () => {
  const h = await startHarness();
  try {
    const { cookie, keyId } = await h.newApiKey();
    for (const bad of ["a".repeat(3000), "nothex0000000000", keyId.toUpperCase(), `${keyId}0`]) {
      for (const action of ["rotate", "delete"]) {
        const res = await h.portal(cookie, `/portal/api/keys/${bad}/${action}`, {});
        assertEquals(res.status, 404, `${action} ${bad.slice(0, 20)}`);
        assertEquals((await res.json()).error.code, "not_found");
      }
    }
    // The real one still works.
    assertEquals((await h.portal(cookie, `/portal/api/keys/${keyId}/rotate`, {})).status, 200);
  } finally {
    await h.close();
  }
});

Deno.test("sign-in refuses small-order public keys, whose 'signatures' anyone can make", async () => {
  const h = await startHarness();
  try {
    // The all-zero address (a point of order 4) with an all-zero signature verifies under plain
    // Ed25519 for about one message in four; 40 challenges make a miss by chance negligible.
    const zero = new PublicKey(new Uint8Array(32)).toBase58();
    const identity = new PublicKey(new Uint8Array([1, ...new Uint8Array(31)])).toBase58();
    for (const wallet of [zero, identity]) {
      for (let i = 0; i < 40; i++) {
        const ch = await (await h.request("/portal/api/challenge", {
          method: "POST",
          json: { wallet },
        })).json();
        const res = await h.request("/portal/api/session", {
          method: "POST",
          json: { wallet, nonce: ch.nonce, signature: bs58.encode(new Uint8Array(64)) },
        });
        assertEquals(res.status, 401, `${wallet}, challenge ${i}`);
        await res.body?.cancel();
      }
    }
    // A real wallet still signs in.
    assert((await h.signIn(h.fundedWallet())).length > 0);
  } finally {
    await h.close();
  }
});

Deno.test("portal calls: a body over 64 KiB is 413 unread; state changes need JSON from the page's own origin", async () => {
  const h = await startHarness();
  try {
    // No sign-in needed to reach these: the limit must hold before anything is read.
    const big = await h.request("/portal/api/challenge", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ wallet: "x", pad: "a".repeat(70_000) }),
    });
    assertEquals([big.status, (await big.json()).error.code], [413, "payload_too_large"]);

    const { cookie, keyId } = await h.newApiKey();
    const rotate = (headers: Record<string, string>) =>
      h.request(`/portal/api/keys/${keyId}/rotate`, {
        method: "POST",
        headers: { cookie, ...headers },
        body: "{}",
      });
    const plain = await rotate({ "content-type": "text/plain" });
    assertEquals([plain.status, (await plain.json()).error.code], [400, "invalid_request"]);
    const sibling = await rotate({
      "content-type": "application/json",
      "sec-fetch-site": "same-site",
    });
    assertEquals([sibling.status, (await sibling.json()).error.code], [403, "forbidden"]);
    // Nothing rotated so far; the page's own call does.
    const own = await rotate({
      "content-type": "application/json",
      "sec-fetch-site": "same-origin",
    });
    assertEquals(own.status, 200);
    await own.body?.cancel();
  } finally {
    await h.close();
  }
});

Deno.test("portal calls that change state are limited per client address and hour; reads are not", async () => {
  const h = await startHarness({ env: { PORTAL_REQUESTS_PER_HOUR: "5" } });
  try {
    const wallet = h.fundedWallet().publicKey.toBase58();
    const challenge = () =>
      h.request("/portal/api/challenge", { method: "POST", json: { wallet } });
    for (let i = 0; i < 5; i++) {
      const res = await challenge();
      assertEquals(res.status, 200, `challenge ${i}`);
      await res.body?.cancel();
    }
    const refused = await challenge();
    assertEquals([refused.status, (await refused.json()).error.code], [429, "rate_limited"]);
    assert(Number(refused.headers.get("retry-after")) > 0);
    // Reading the page's state is not a change: still answered (401 without a session).
    const state = await h.request("/portal/api/state");
    assertEquals(state.status, 401);
    await state.body?.cancel();
  } finally {
    await h.close();
  }
});

Deno.test("the sign-in message names the portal's own origin, scheme included", async () => {
  for (const base of ["http://127.0.0.1:8000", "https://tokens.example.test"]) {
    const h = await startHarness({ env: { PUBLIC_BASE_URL: base } });
    try {
      const wallet = h.fundedWallet().publicKey.toBase58();
      const ch =
        await (await h.request("/portal/api/challenge", { method: "POST", json: { wallet } }))
          .json();
      const lines = ch.message.split("\n");
      assertEquals(
        lines[0],
        `${new URL(base).host} wants you to sign in with your Solana account:`,
      );
      assert(lines.includes(`URI: ${base}`), ch.message);
    } finally {
      await h.close();
    }
  }
});

Deno.test("the portal limit counts an IPv4 address or an IPv6 /64 as one caller", async () => {
  assertEquals(addressBucket("203.0.113.7"), "203.0.113.7");
  assertEquals(addressBucket("2001:db8:1:2::5"), "2001:db8:1:2::/64");
  assertEquals(addressBucket("2001:0db8:0001:0002:aaaa:bbbb:cccc:dddd"), "2001:db8:1:2::/64");
  assertEquals(addressBucket("[2001:db8::1%eth0]"), "2001:db8:0:0::/64");
  assertEquals(addressBucket("::ffff:203.0.113.7"), "203.0.113.7");

  const h = await startHarness({ env: { PORTAL_REQUESTS_PER_HOUR: "2" } });
  try {
    const wallet = h.fundedWallet().publicKey.toBase58();
    // As Deno.serve hands each request its peer's address.
    const from = (hostname: string) =>
      h.app.fetch(
        new Request("http://127.0.0.1/portal/api/challenge", {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: JSON.stringify({ wallet }),
        }),
        { remoteAddr: { hostname, port: 1, transport: "tcp" } },
      );
    const statuses = [];
    for (
      const host of ["2001:db8:1:2::5", "2001:db8:1:2::6", "2001:db8:1:2::7", "2001:db8:9:9::1"]
    ) {
      const res = await from(host);
      statuses.push(res.status);
      await res.body?.cancel();
    }
    // Three addresses of one /64 share two calls; another /64 has its own.
    assertEquals(statuses, [200, 200, 429, 200]);
  } finally {
    await h.close();
  }
});
