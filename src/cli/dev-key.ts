/**
 * `deno task dev:key`: against a running service on the embedded chain, creates and funds a
 * wallet, saves its keypair (Solana CLI JSON) under DATA_DIR/wallets/, goes through the real
 * purchase flow (sign-in, on-chain payment, key) and prints one JSON line:
 * {"apiKey":"…","wallet":"…","keypairPath":"…"}.
 * `--stablecoin`: with the service started with STABLECOIN_MINT=local, also funds the wallet with
 * 1,000 of the local test stablecoin and pays the access fee in it.
 */
import { defaultRpcUrl } from "./kv.ts";
import { makeDevKey } from "./make-dev-key.ts";
import { Connection } from "@solana/web3.js";
import { checkChain, checkService, LocalServiceError } from "./local-service.ts";

const service = Deno.env.get("SERVICE_URL") ?? `http://127.0.0.1:${Deno.env.get("PORT") ?? 8000}`;
const rpcUrl = defaultRpcUrl();
try {
  await checkService(service);
  await checkChain(new Connection(rpcUrl, "confirmed"), rpcUrl);
} catch (e) {
  if (!(e instanceof LocalServiceError)) throw e;
  console.error(`dev:key failed: ${e.message}`);
  Deno.exit(1);
}
const key = await makeDevKey({
  service,
  rpcUrl,
  dataDir: Deno.env.get("DATA_DIR") ?? ".data",
  currency: Deno.args.includes("--stablecoin") ? "STABLECOIN" : "SOL",
});
console.log(JSON.stringify(key));
