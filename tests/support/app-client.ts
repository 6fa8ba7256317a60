/**
 * Talking to a booted app the way a user does: JSON requests, the portal session, the real
 * purchase flow (sign-in, on-chain payment, key). Shared by the test harness and the benchmark's,
 * which differ only in where the chain runs.
 */
import { Keypair, Transaction } from "@solana/web3.js";
import bs58 from "bs58";
import type { Booted } from "../../src/bootstrap.ts";
import { signWithKeypair } from "../../src/portal/sign-with-keypair.ts";

export interface NewApiKey {
  apiKey: string;
  keyId: string;
  wallet: Keypair;
  cookie: string;
  purchaseId: string;
}

export interface AppClient {
  request(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  portal(cookie: string, path: string, json?: unknown): Promise<Response>;
  signIn(wallet: Keypair): Promise<string>;
  buyAccess(wallet: Keypair): Promise<{ cookie: string; purchaseId: string }>;
  /** Buys access with a funded wallet and creates its key. */
  newApiKey(wallet: Keypair): Promise<NewApiKey>;
  waitForConfirmation(signature: string): Promise<void>;
}

export interface AppClientOptions {
  /** Called between status polls: a chain with manual slots needs them advanced. */
  advanceSlot?: () => unknown;
  /** Status polls, 20 ms apart, before giving up on a confirmation. */
  confirmPolls?: number;
}

export function appClient(booted: Booted, base: string, opts: AppClientOptions = {}): AppClient {
  const request = (path: string, init: RequestInit & { json?: unknown } = {}) => {
    const { json, ...rest } = init;
    const headers = new Headers(rest.headers);
    if (json !== undefined) headers.set("content-type", "application/json");
    return Promise.resolve(booted.app.request(base + path, {
      ...rest,
      headers,
      body: json !== undefined ? JSON.stringify(json) : rest.body,
    }));
  };
  const portal = (cookie: string, path: string, json?: unknown) =>
    request(path, { method: json === undefined ? "GET" : "POST", headers: { cookie }, json });

  const client: AppClient = {
    request,
    portal,
    async signIn(wallet) {
      const ch = await (await request("/portal/api/challenge", {
        method: "POST",
        json: { wallet: wallet.publicKey.toBase58() },
      })).json();
      const sig = await signWithKeypair(wallet, new TextEncoder().encode(ch.message));
      const res = await request("/portal/api/session", {
        method: "POST",
        json: { wallet: wallet.publicKey.toBase58(), nonce: ch.nonce, signature: bs58.encode(sig) },
      });
      if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
      return res.headers.get("set-cookie")!.split(";")[0];
    },
    async buyAccess(wallet) {
      const cookie = await client.signIn(wallet);
      const quote = await (await portal(cookie, "/portal/api/purchases", { currency: "SOL" }))
        .json();
      const tx = Transaction.from(Uint8Array.from(atob(quote.transaction), (c) => c.charCodeAt(0)));
      tx.partialSign(wallet);
      const signature = await booted.services.connection.sendRawTransaction(tx.serialize());
      await client.waitForConfirmation(signature);
      const check =
        await (await portal(cookie, `/portal/api/purchases/${quote.purchaseId}/check`, {})).json();
      if (check.status !== "paid") throw new Error(`payment not seen: ${JSON.stringify(check)}`);
      return { cookie, purchaseId: quote.purchaseId };
    },
    async newApiKey(wallet) {
      const { cookie, purchaseId } = await client.buyAccess(wallet);
      const res = await portal(cookie, `/portal/api/purchases/${purchaseId}/key`, {});
      if (res.status !== 201) {
        throw new Error(`key creation failed: ${res.status} ${await res.text()}`);
      }
      const { apiKey, keyId } = await res.json();
      return { apiKey, keyId, wallet, cookie, purchaseId };
    },
    async waitForConfirmation(signature) {
      for (let i = 0; i < (opts.confirmPolls ?? 200); i++) {
        const st = await booted.services.connection.getSignatureStatuses([signature]);
        const s = st.value[0];
        if (s?.err) throw new Error(`transaction failed: ${JSON.stringify(s.err)}`);
        if (s?.confirmationStatus === "confirmed" || s?.confirmationStatus === "finalized") return;
        await opts.advanceSlot?.();
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`transaction ${signature} not confirmed in time`);
    },
  };
  return client;
}
