/**
 * `deno task demo`: the newcomer's whole path against a running local service, in one go. Makes a
 * dev key (or reuses the one it made before), then runs the integrator example
 * (examples/create-token.ts, the same code, not a copy): host metadata with a small image, build,
 * review, sign with the dev wallet, submit, wait for the verification. Prints the mint, the hosted
 * metadata URL, the signature, feeVerified, the token program that owns the mint and the lamports
 * the wallet spent (both read from the chain). The example client's program flags pass through:
 * `--token-2022`, a transfer fee, a vanity prefix/suffix (`deno task demo --help`).
 *
 * `--refresh` plays a signer slower than a blockhash lives: before signing, it moves the embedded
 * chain's slots past the build's last valid block height (POST /admin/slots), so the relay refuses
 * the signed transaction as expired; the example client then refreshes the build (same mint, a
 * fresh blockhash, not counted again), reviews and signs that, and it lands. The demo prints both
 * blockhashes, the one the landed transaction carries (read from the chain) and how the fee was set.
 *
 * `--update` then changes the token (src/cli/demo-update.ts): a second hosted document and the
 * update authority handed to a new address, signed and relayed through the example client's
 * `updateToken`; it prints the metadata before and after, read from the chain.
 *
 * Talks to SERVICE_URL (else http://127.0.0.1:$PORT, 8000) and the embedded chain at
 * SOLANA_RPC_URL (else http://127.0.0.1:$CHAIN_PORT, 8899); keeps its key in
 * DATA_DIR/demo-key.json (DATA_DIR defaults to .data, like the service). Exit 0 on a verified
 * creation, 1 with one clear line otherwise.
 */
import { parseArgs } from "node:util";
import { Connection, LAMPORTS_PER_SOL, PublicKey } from "@solana/web3.js";
import { TOKEN_2022_PROGRAM_ID, TOKEN_PROGRAM_ID } from "@solana/spl-token";
import {
  ApiCallError,
  createToken,
  type CreateTokenOptions,
  loadKeypair,
  PROGRAM_ARGS,
  PROGRAM_USAGE,
  programChoice,
  type Refreshed,
  type SigningBuild,
} from "../../examples/create-token.ts";
import { defaultRpcUrl } from "./kv.ts";
import { checkChain, checkService, LocalServiceError } from "./local-service.ts";
import { type DevKey, makeDevKey } from "./make-dev-key.ts";
import { waitConfirmed } from "../solana/wait-confirmed.ts";
import { demoUpdate, DemoUpdateError, type DemoUpdateResult } from "./demo-update.ts";

/** A 32×32 PNG (194 bytes): the token's image. */
const DEMO_IMAGE_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAACAAAAAgCAIAAAD8GO2jAAAAiUlEQVR42u2W0Q2AIBBDO4QrOaIfjukE+C9Qi941GiV897UJ3BUl+eARgGlbmjcA0JPWMbgjrWAQok4YENXXuRyuyMCpei3NMQwwJE0wEkBXrxltwGX7PARC7JMQCLFPQiDKfi/ED/gmIOWZpn80x6hIH3aOcZ2+cBwr07H0HbXFUbxM1fEF7XoHE9jw9U+lPc0AAAAASUVORK5CYII=";

/** Below this the dev wallet gets another airdrop: a creation costs about 0.03 SOL. */
const TOP_UP_BELOW_LAMPORTS = LAMPORTS_PER_SOL / 10;

export class DemoError extends Error {}

export interface DemoOptions {
  service: string;
  rpcUrl: string;
  dataDir: string;
  /** Token program, transfer fee and vanity address, as the example client takes them. */
  program?: Pick<CreateTokenOptions, "tokenProgram" | "transferFee" | "vanity">;
  /** Wait past the blockhash before signing (on the embedded chain), then refresh and land. */
  refresh?: boolean;
  /** Then update the token: a second hosted document, the update authority to a new address. */
  update?: boolean;
  log?: (line: string) => void;
}

export interface DemoResult {
  mint: string;
  metadataUri: string;
  signature: string;
  feeVerified: boolean;
  /** The owner of the mint account on the chain. */
  tokenProgram: "spl-token" | "token-2022";
  lamportsSpent: bigint;
  reusedKey: boolean;
  /** With --refresh: the refresh the example client made, and the landed message's blockhash. */
  refreshed: (Refreshed & { landedBlockhash: string }) | null;
  /** With --update: the update, and the metadata before and after it, read from the chain. */
  updated: DemoUpdateResult | null;
}

/** The key this demo made before, if it still works and has room for one more token today. */
async function savedKey(o: DemoOptions, path: string): Promise<DevKey | null> {
  let saved: DevKey & { service?: string };
  try {
    saved = JSON.parse(await Deno.readTextFile(path));
    await Deno.stat(saved.keypairPath);
  } catch {
    return null;
  }
  const me = await fetch(`${o.service}/v1/me`, {
    headers: { authorization: `Bearer ${saved.apiKey}` },
  });
  const body = await me.json().catch(() => null);
  if (!me.ok || body?.wallet !== saved.wallet) return null;
  const { usageToday: used, limits } = body;
  if (used.tokens >= limits.tokensPerDay || used.metadata >= limits.metadataPerDay) return null;
  return saved;
}

async function newKey(o: DemoOptions, path: string): Promise<DevKey> {
  const key = await makeDevKey(o);
  await Deno.writeTextFile(path, JSON.stringify({ ...key, service: o.service }) + "\n", {
    mode: 0o600,
  });
  return key;
}

export async function runDemo(o: DemoOptions): Promise<DemoResult> {
  const log = o.log ?? console.log;
  const service = o.service.replace(/\/+$/, "");
  const opts = { ...o, service };
  const started = performance.now();
  const connection = new Connection(o.rpcUrl, "confirmed");
  const updateArgs = { service, connection, imageBase64: DEMO_IMAGE_BASE64, log };

  log(`service ${service}, chain ${o.rpcUrl}`);
  const pricing = await checkService(service);
  await checkChain(connection, o.rpcUrl);

  await Deno.mkdir(o.dataDir, { recursive: true });
  const keyPath = `${o.dataDir}/demo-key.json`;
  let key = await savedKey(opts, keyPath);
  const reusedKey = key !== null;
  if (key) {
    log(`dev key: reusing the one this demo made (wallet ${key.wallet}, saved in ${keyPath})`);
  } else {
    log("dev key: buying one through the portal flow with an airdropped wallet…");
    key = await newKey(opts, keyPath);
    log(`dev key: made (wallet ${key.wallet}, saved in ${keyPath})`);
  }
  const payer = await loadKeypair(key.keypairPath);
  const wallet = new PublicKey(key.wallet);
  if ((await connection.getBalance(wallet)) < TOP_UP_BELOW_LAMPORTS) {
    log("dev wallet low: airdropping 1 SOL on the local chain…");
    await waitConfirmed(connection, await connection.requestAirdrop(wallet, LAMPORTS_PER_SOL));
  }
  const before = BigInt(await connection.getBalance(wallet));

  const result = await createToken({
    baseUrl: service,
    apiKey: key.apiKey,
    payer,
    name: "Demo Token",
    symbol: "DEMO",
    supply: "1000000",
    decimals: 6,
    description: "Made by deno task demo on the local chain.",
    imageBytes: Uint8Array.from(atob(DEMO_IMAGE_BASE64), (c) => c.charCodeAt(0)),
    ...o.program,
    ...(o.refresh ? { beforeSigning: slowSigner(o.rpcUrl, connection, log) } : {}),
    log: (line) => log(line),
    verifyTimeoutMs: 25_000,
  });
  const v = checkOutcome(o, result);
  const after = BigInt(await connection.getBalance(wallet));
  const lamportsSpent = before - after;
  const tokenProgram = await mintOwner(connection, result.mint);
  const serviceFee = BigInt(result.costs.serviceFeeLamports);
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  log("");
  log(`token created and verified in ${seconds} s`);
  log(`  mint           ${result.mint}`);
  log(`  metadata       ${result.metadataUri}`);
  log(`  signature      ${result.signature}`);
  log(`  feeVerified:   ${v.feeVerified}`);
  log(`  program        ${PROGRAM_NAMES[tokenProgram]} (the mint's owner on the chain)`);
  log(
    `  lamports spent ${lamportsSpent} (${
      (Number(lamportsSpent) / LAMPORTS_PER_SOL).toFixed(6)
    } SOL): service fee ${serviceFee}, network ${lamportsSpent - serviceFee} (${
      NETWORK_SHARE[tokenProgram]
    }); the build's costs said ${result.costs.totalLamports}`,
  );
  if (pricing.networkLamports && pricing.token2022NetworkLamports) {
    log(
      `  per token      the network takes ${pricing.networkLamports} lamports for SPL Token, at ` +
        `most ${pricing.token2022NetworkLamports} for Token-2022 (GET /v1/pricing; ` +
        `${
          tokenProgram === "spl-token" ? "--token-2022 makes one" : "this build's costs are exact"
        })`,
    );
  }
  const refreshed = result.refreshed
    ? { ...result.refreshed, landedBlockhash: await landedBlockhash(connection, result.signature) }
    : null;
  if (refreshed) logRefresh(log, refreshed);
  log(`  check it again: curl -H "Authorization: Bearer ${key.apiKey}" \\`);
  log(`                    ${service}/v1/transactions/${result.signature}`);
  const updated = o.update
    ? await demoUpdate({ ...updateArgs, apiKey: key.apiKey, authority: payer, mint: result.mint })
    : null;
  return {
    mint: result.mint,
    metadataUri: result.metadataUri,
    signature: result.signature,
    feeVerified: v.feeVerified,
    tokenProgram,
    lamportsSpent,
    reusedKey,
    refreshed,
    updated,
  };
}

/** The verification, if the creation went as the demo says it does; else why not. */
function checkOutcome(o: DemoOptions, result: Awaited<ReturnType<typeof createToken>>) {
  if (o.refresh && !result.refreshed) {
    throw new DemoError(`--refresh: the first transaction was not refused as expired`);
  }
  const v = result.verification;
  if (v.status !== "confirmed") {
    throw new DemoError(
      `the creation is ${v.status}, not confirmed (signature ${result.signature})`,
    );
  }
  if (!v.feeVerified) {
    throw new DemoError(`confirmed, but the service fee was not verified (${result.signature})`);
  }
  return v;
}

/**
 * The slow signer of --refresh: the first time it is about to sign, it moves the embedded chain
 * past the build's last valid block height, as 60 s and more at a hardware wallet would.
 */
function slowSigner(rpcUrl: string, connection: Connection, log: (line: string) => void) {
  let waited = false;
  return async (build: SigningBuild) => {
    // A durable nonce build has no height to wait past.
    if (waited || build.lastValidBlockHeight === null) return;
    waited = true;
    const height = await connection.getBlockHeight("confirmed");
    const advance = Math.max(0, build.lastValidBlockHeight - height) + 2;
    log(
      `   --refresh: a slow signer; moving the local chain ${advance} slots on, past block ` +
        `height ${build.lastValidBlockHeight} where this blockhash ends…`,
    );
    const res = await fetch(`${rpcUrl.replace(/\/+$/, "")}/admin/slots`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ advance }),
    }).catch((e) => new Response(String(e), { status: 599 }));
    await res.body?.cancel();
    if (!res.ok) {
      throw new DemoError(
        `--refresh needs the embedded chain's POST /admin/slots at ${rpcUrl} (deno task start ` +
          `or deno task chain); it answered HTTP ${res.status}`,
      );
    }
  };
}

async function landedBlockhash(connection: Connection, signature: string): Promise<string> {
  const tx = await connection.getTransaction(signature, {
    commitment: "confirmed",
    maxSupportedTransactionVersion: 0,
  });
  if (!tx) throw new DemoError(`the landed transaction ${signature} is not on the chain`);
  return tx.transaction.message.recentBlockhash;
}

function logRefresh(log: (line: string) => void, r: Refreshed & { landedBlockhash: string }) {
  log(`  refreshed      the first message expired unsent; the same build, re-issued:`);
  log(`    blockhash    ${r.fromBlockhash} (expired)`);
  log(`              -> ${r.toBlockhash} (refreshed)`);
  log(`    landed with  ${r.landedBlockhash} (read from the chain)`);
  log(
    r.feeQuote === "quoted"
      ? `    fee          as quoted: ${r.feeLamports} lamports (the expired message's: ` +
        `${r.feeLamportsBefore})`
      : `    fee          re-priced: ${r.feeLamportsBefore} -> ${r.feeLamports} lamports (the ` +
        `quote had run out)`,
  );
}

const PROGRAM_NAMES = { "spl-token": "SPL Token", "token-2022": "Token-2022" } as const;
const NETWORK_SHARE = {
  "spl-token": "rent of the mint, token and metadata accounts, the metadata program's fee, " +
    "network fee",
  "token-2022": "rent of the mint with its metadata and of the token account, network fee",
} as const;

async function mintOwner(connection: Connection, mint: string) {
  const account = await connection.getAccountInfo(new PublicKey(mint), "confirmed");
  if (account?.owner.equals(TOKEN_2022_PROGRAM_ID)) return "token-2022";
  if (account?.owner.equals(TOKEN_PROGRAM_ID)) return "spl-token";
  throw new DemoError(`the mint ${mint} is not owned by a token program on the chain`);
}

const USAGE = `usage: deno task demo [--refresh] [--update] ${PROGRAM_USAGE}

Creates a token on the local chain through the running service (\`deno task start\`): a dev key,
hosted metadata, the build, your review, the signature, the submission, the verification.

  --token-2022            the Token-2022 program: metadata inside the mint, no Metaplex account
                          (the network takes less: GET /v1/pricing shows both figures)
  --transfer-fee-bps N    Token-2022 only: a transfer fee of N basis points (0-10000)…
  --transfer-fee-max RAW  …of at most RAW base units per transfer (default: no cap)
  --permanent-fee         …that nobody can ever change or withdraw (irreversible)
  --vanity-prefix P       a mint address starting with P (base58; at most 4 characters in
  --vanity-suffix S       all) and/or ending with S
  --vanity-ignore-case    match the vanity pattern in either case (much faster)
  --refresh               play a slow signer: wait past the blockhash on the local chain before
                          signing, so the relay refuses it as expired; the build is refreshed
                          (same mint, fresh blockhash, not counted again) and that one lands
  --update                then update the token: its metadata to a second hosted document and
                          its update authority to a new address (POST /v1/tokens/{mint}/update,
                          signed, relayed); prints before and after, read from the chain
  -h, --help              this text

Environment: SERVICE_URL (default http://127.0.0.1:$PORT, PORT 8000), SOLANA_RPC_URL (default
http://127.0.0.1:$CHAIN_PORT, CHAIN_PORT 8899), DATA_DIR (default .data, where the key is kept).`;

if (import.meta.main) {
  const env = Deno.env.toObject();
  let args;
  try {
    args = parseArgs({
      args: Deno.args,
      options: {
        ...PROGRAM_ARGS,
        refresh: { type: "boolean", default: false },
        update: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    }).values;
  } catch (e) {
    console.error(`demo: ${(e as Error).message}\n\n${USAGE}`);
    Deno.exit(2);
  }
  if (args.help) {
    console.log(USAGE);
    Deno.exit(0);
  }
  try {
    await runDemo({
      service: env.SERVICE_URL ?? `http://127.0.0.1:${env.PORT ?? 8000}`,
      rpcUrl: defaultRpcUrl(env),
      dataDir: env.DATA_DIR ?? ".data",
      program: programChoice(args),
      refresh: args.refresh,
      update: args.update,
    });
    Deno.exit(0);
  } catch (e) {
    const message = e instanceof DemoError || e instanceof LocalServiceError ||
        e instanceof ApiCallError || e instanceof DemoUpdateError
      ? e.message
      : `${(e as Error).message ?? e}`;
    console.error(`demo failed: ${message}`);
    Deno.exit(1);
  }
}
