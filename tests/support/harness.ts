/**
 * A whole service for tests: the embedded chain on a free port, an in-memory KV, the real app,
 * and helpers that go through the real portal flow (sign-in, on-chain payment, key).
 */
import { Keypair, LAMPORTS_PER_SOL, Transaction, VersionedTransaction } from "@solana/web3.js";
import bs58 from "bs58";
import { type Booted, bootstrap } from "../../src/bootstrap.ts";
import { type ChainOptions, type EmbeddedChain, startChain } from "../../src/chain/mod.ts";
import type { Clock } from "../../src/clock.ts";
import { type Config, loadConfig } from "../../src/config.ts";
import { memoryLogger } from "../../src/http/logger.ts";
import type { PriceSource } from "../../src/pricing/price-source.ts";
import { FixedPriceSource } from "../../src/pricing/price-source.ts";

export interface HarnessOptions {
  env?: Record<string, string>;
  config?: Partial<Config>;
  clock?: Clock;
  price?: PriceSource | "pyth";
  chain?: ChainOptions;
  rpcFetch?: typeof fetch;
  watch?: boolean;
}

export interface Harness extends Booted {
  chain: EmbeddedChain;
  kv: Deno.Kv;
  logs: string[];
  treasury: Keypair;
  base: string;
  request(path: string, init?: RequestInit & { json?: unknown }): Promise<Response>;
  fundedWallet(sol?: number): Keypair;
  signIn(wallet: Keypair): Promise<string>;
  portal(cookie: string, path: string, json?: unknown): Promise<Response>;
  buyAccess(wallet: Keypair): Promise<{ cookie: string; purchaseId: string }>;
  newApiKey(
    wallet?: Keypair,
  ): Promise<
    { apiKey: string; keyId: string; wallet: Keypair; cookie: string; purchaseId: string }
  >;
  waitForConfirmation(signature: string): Promise<void>;
}

export const TEST_PEPPER = "test-pepper-0123456789abcdef0123456789";

export async function startHarness(opts: HarnessOptions = {}): Promise<Harness> {
  const chain = await startChain({ port: 0, slotMs: 40, quiet: true, ...opts.chain });
  const kv = await Deno.openKv(":memory:");
  const treasury = Keypair.generate();
  const config: Config = {
    ...loadConfig({
      SOLANA_RPC_URL: chain.url,
      KEY_PEPPER: TEST_PEPPER,
      TREASURY_ADDRESS: treasury.publicKey.toBase58(),
      PYTH_SOL_USD_ACCOUNT: chain.pythSolUsdAccount,
      LOG_LEVEL: "debug",
      ...opts.env,
    }),
    ...opts.config,
  };
  const logger = memoryLogger();
  const clock = opts.clock ?? Date.now;
  const booted = await bootstrap(config, {
    kv,
    clock,
    logger,
    price: opts.price === "pyth" ? undefined : opts.price ?? new FixedPriceSource(150, clock),
    rpcFetch: opts.rpcFetch,
    watch: opts.watch,
  });
  const base = config.publicBaseUrl;

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
    request(path, {
      method: json === undefined ? "GET" : "POST",
      headers: { cookie },
      json,
    });

  const h: Harness = {
    ...booted,
    chain,
    kv,
    logs: logger.lines,
    treasury,
    base,
    request,
    portal,
    fundedWallet(sol = 10) {
      const w = Keypair.generate();
      chain.airdrop(w.publicKey.toBase58(), BigInt(sol * LAMPORTS_PER_SOL));
      return w;
    },
    async signIn(wallet) {
      const ch = await (await request("/portal/api/challenge", {
        method: "POST",
        json: { wallet: wallet.publicKey.toBase58() },
      })).json();
      const sig = await signMessage(wallet, new TextEncoder().encode(ch.message));
      const res = await request("/portal/api/session", {
        method: "POST",
        json: { wallet: wallet.publicKey.toBase58(), nonce: ch.nonce, signature: bs58.encode(sig) },
      });
      if (res.status !== 200) throw new Error(`sign-in failed: ${res.status} ${await res.text()}`);
      return res.headers.get("set-cookie")!.split(";")[0];
    },
    async buyAccess(wallet) {
      const cookie = await h.signIn(wallet);
      const quote = await (await portal(cookie, "/portal/api/purchases", { currency: "SOL" }))
        .json();
      const tx = Transaction.from(Uint8Array.from(atob(quote.transaction), (c) => c.charCodeAt(0)));
      tx.partialSign(wallet);
      const signature = await booted.services.connection.sendRawTransaction(tx.serialize());
      await h.waitForConfirmation(signature);
      const check =
        await (await portal(cookie, `/portal/api/purchases/${quote.purchaseId}/check`, {})).json();
      if (check.status !== "paid") throw new Error(`payment not seen: ${JSON.stringify(check)}`);
      return { cookie, purchaseId: quote.purchaseId };
    },
    async newApiKey(wallet = h.fundedWallet()) {
      const { cookie, purchaseId } = await h.buyAccess(wallet);
      const res = await portal(cookie, `/portal/api/purchases/${purchaseId}/key`, {});
      if (res.status !== 201) {
        throw new Error(`key creation failed: ${res.status} ${await res.text()}`);
      }
      const { apiKey, keyId } = await res.json();
      return { apiKey, keyId, wallet, cookie, purchaseId };
    },
    async waitForConfirmation(signature) {
      for (let i = 0; i < 200; i++) {
        const st = await booted.services.connection.getSignatureStatuses([signature]);
        const s = st.value[0];
        if (s?.err) throw new Error(`transaction failed: ${JSON.stringify(s.err)}`);
        if (s?.confirmationStatus === "confirmed" || s?.confirmationStatus === "finalized") return;
        if (chain.slot !== undefined && opts.chain?.slotMs === "manual") chain.advanceSlots(1);
        await new Promise((r) => setTimeout(r, 20));
      }
      throw new Error(`transaction ${signature} not confirmed in time`);
    },
    async close() {
      await booted.close();
      kv.close();
      await chain.close();
    },
  };
  return h;
}

export { signWithKeypair as signMessage } from "../../src/portal/sign-with-keypair.ts";
import { signWithKeypair as signMessage } from "../../src/portal/sign-with-keypair.ts";

export const bearer = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` });

/** Decodes a base64 transaction the service returned. */
export const decodeTx = (b64: string) =>
  VersionedTransaction.deserialize(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0)));
