/**
 * `deno task dev:key`: against a running service on the embedded chain, creates and funds a
 * wallet, saves its keypair (Solana CLI JSON) under DATA_DIR/wallets/, goes through the real
 * purchase flow (sign-in, on-chain payment, key) and prints one JSON line:
 * {"apiKey":"…","wallet":"…","keypairPath":"…"}.
 * `--stablecoin`: with the service started with STABLECOIN_MINT=local, also funds the wallet with
 * 1,000 of the local test stablecoin and pays the access fee in it.
 */
import { Connection, Keypair, LAMPORTS_PER_SOL, Transaction } from "@solana/web3.js";
import bs58 from "bs58";
import {
  confirmed,
  fundLocalStablecoin,
  LOCAL_STABLECOIN_DECIMALS,
} from "../chain/local-stablecoin.ts";
import { saveKeypair } from "../local/data-dir.ts";
import { signWithKeypair } from "../portal/sign-with-keypair.ts";
import { defaultRpcUrl } from "./kv.ts";

const service = (Deno.env.get("SERVICE_URL") ?? `http://127.0.0.1:${Deno.env.get("PORT") ?? 8000}`)
  .replace(/\/+$/, "");
const rpcUrl = defaultRpcUrl();
const dataDir = Deno.env.get("DATA_DIR") ?? ".data";
const currency = Deno.args.includes("--stablecoin") ? "STABLECOIN" : "SOL";

const connection = new Connection(rpcUrl, "confirmed");
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

await confirmed(
  connection,
  await connection.requestAirdrop(wallet.publicKey, 2 * LAMPORTS_PER_SOL),
);
await Deno.mkdir(`${dataDir}/wallets`, { recursive: true });
const keypairPath = `${dataDir}/wallets/${walletAddress}.json`;
await saveKeypair(keypairPath, wallet);

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
await confirmed(connection, await connection.sendRawTransaction(tx.serialize()));
for (let i = 0;; i++) {
  const check = await call(`/portal/api/purchases/${quote.purchaseId}/check`, {});
  if (check.status === "paid") break;
  if (i > 50) throw new Error("payment not seen by the service");
  await new Promise((r) => setTimeout(r, 200));
}
const key = await call(`/portal/api/purchases/${quote.purchaseId}/key`, {});
console.log(JSON.stringify({ apiKey: key.apiKey, wallet: walletAddress, keypairPath }));
