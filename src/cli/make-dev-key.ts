/**
 * A local API key the way a buyer gets one, for `deno task dev:key` and `deno task demo`: against
 * a running service on the embedded chain, creates and airdrop-funds a wallet, saves its keypair
 * (Solana CLI JSON) under DATA_DIR/wallets/, and goes through the real purchase flow (sign-in,
 * on-chain payment, key). With `currency: "STABLECOIN"` (a service started with
 * STABLECOIN_MINT=local) it also funds the wallet with 1,000 of the local test stablecoin and pays
 * the access fee in it.
 */
import { Connection, Keypair, LAMPORTS_PER_SOL, Transaction } from "@solana/web3.js";
import bs58 from "bs58";
import { fundLocalStablecoin, LOCAL_STABLECOIN_DECIMALS } from "../chain/local-stablecoin.ts";
import { saveKeypair } from "../local/data-dir.ts";
import { waitConfirmed } from "../solana/wait-confirmed.ts";
import { signWithKeypair } from "../portal/sign-with-keypair.ts";

export interface DevKeyTarget {
  /** The service's base URL, e.g. http://127.0.0.1:8000. */
  service: string;
  /** The embedded chain's JSON-RPC URL. */
  rpcUrl: string;
  dataDir: string;
  /** What the access fee is paid in; SOL unless asked. */
  currency?: "SOL" | "STABLECOIN";
}

export interface DevKey {
  apiKey: string;
  wallet: string;
  keypairPath: string;
}

export async function makeDevKey(t: DevKeyTarget): Promise<DevKey> {
  const service = t.service.replace(/\/+$/, "");
  const connection = new Connection(t.rpcUrl, "confirmed");
  const wallet = Keypair.generate();
  const walletAddress = wallet.publicKey.toBase58();
  let cookie = "";

  async function call(path: string, body?: unknown) {
    const res = await fetch(service + path, {
      method: body === undefined ? "GET" : "POST",
      // No Origin: this is no browser, and the service's origin is its PUBLIC_BASE_URL, which a
      // SERVICE_URL reaching it another way (a port forward, 127.0.0.1 for localhost) need not be.
      headers: { "content-type": "application/json", ...(cookie ? { cookie } : {}) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const setCookie = res.headers.get("set-cookie");
    if (setCookie) cookie = setCookie.split(";")[0];
    const json = await res.json();
    if (!res.ok) throw new Error(`${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  }

  await waitConfirmed(
    connection,
    await connection.requestAirdrop(wallet.publicKey, 2 * LAMPORTS_PER_SOL),
  );
  await Deno.mkdir(`${t.dataDir}/wallets`, { recursive: true });
  const keypairPath = `${t.dataDir}/wallets/${walletAddress}.json`;
  await saveKeypair(keypairPath, wallet);
  const currency = t.currency ?? "SOL";
  if (currency === "STABLECOIN") {
    await fundLocalStablecoin(
      connection,
      wallet.publicKey,
      1_000n * 10n ** BigInt(LOCAL_STABLECOIN_DECIMALS),
    );
  }

  const challenge = await call("/portal/api/challenge", { wallet: walletAddress });
  const signature = await signWithKeypair(wallet, new TextEncoder().encode(challenge.message));
  await call("/portal/api/session", {
    wallet: walletAddress,
    nonce: challenge.nonce,
    signature: bs58.encode(signature),
  });

  const quote = await call("/portal/api/purchases", { currency });
  const tx = Transaction.from(Uint8Array.from(atob(quote.transaction), (c) => c.charCodeAt(0)));
  tx.partialSign(wallet);
  await waitConfirmed(connection, await connection.sendRawTransaction(tx.serialize()));
  for (let i = 0;; i++) {
    const check = await call(`/portal/api/purchases/${quote.purchaseId}/check`, {});
    if (check.status === "paid") break;
    if (i > 50) throw new Error("payment not seen by the service");
    await new Promise((r) => setTimeout(r, 200));
  }
  const key = await call(`/portal/api/purchases/${quote.purchaseId}/key`, {});
  return { apiKey: key.apiKey, wallet: walletAddress, keypairPath };
}
