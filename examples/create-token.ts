/**
 * Example integrator client: create an SPL token through the Token-Creation Transaction Builder
 * API, from hosting the metadata to the verified creation. Copy it and adapt.
 *
 *   TCB_API_KEY=tcb_live_… deno run -A examples/create-token.ts \
 *     --base-url https://api.example.com --keypair ~/.config/solana/id.json \
 *     --name "My Token" --symbol MYT --supply 1000000 --decimals 6 --image ./logo.png
 *
 * Token-2022 (metadata inside the mint, no Metaplex account: the network takes about 5.6M
 * lamports instead of about 18.6M), with a 1% transfer fee capped at 1,000 tokens and a mint
 * address ending in "cat":
 *
 *     ... --token-2022 --transfer-fee-bps 100 --transfer-fee-max 1000000000 \
 *     --vanity-suffix cat --vanity-ignore-case
 *
 * Steps:
 *   1. POST /v1/metadata       host the metadata JSON and the image
 *   2. POST /v1/tokens         build the unsigned transaction
 *   3. review                  decode every instruction, check what you are about to sign
 *   4. sign                    with the payer's keypair (Solana CLI JSON file), locally
 *   5. POST /v1/transactions   submit (you could send it through your own RPC instead)
 *   6. GET /v1/transactions/…  poll until the creation is verified
 *
 * Later changes (`updateToken`): a new metadata document, the update authority handed to a team,
 * metadata made immutable, the mint or freeze authority handed over or revoked. POST
 * /v1/tokens/{mint}/update builds one transaction for the token's current authority; it is
 * reviewed, signed and relayed the same way, and the relay records its landing.
 *
 * A signer slower than a blockhash lives (about 60 s): the relay refuses the signed transaction
 * as expired, and the example refreshes the build (POST /v1/tokens/{mint}/refresh: the same mint
 * and instructions under a fresh blockhash, not counted again), reviews it again and signs that.
 *
 * The API key is read from the environment, never from a flag (shell history) and never sent
 * anywhere but the API. The private key never leaves this process.
 *
 * Dependencies: @solana/web3.js and @solana/spl-token (npm), and this repository's typed client
 * (`client/`: openapi-fetch over types generated from the service's OpenAPI document), so every
 * request body and answer below is checked against the API's own schema at compile time.
 */
import {
  ComputeBudgetInstruction,
  ComputeBudgetProgram,
  Keypair,
  PublicKey,
  SystemInstruction,
  SystemProgram,
  Transaction,
  type TransactionInstruction,
} from "@solana/web3.js";
import {
  ASSOCIATED_TOKEN_PROGRAM_ID,
  AuthorityType,
  decodeInitializeTransferFeeConfigInstruction,
  decodeInstruction,
  initializeMetadataPointerData,
  isInitializeMint2Instruction,
  isMintToInstruction,
  isSetAuthorityInstruction,
  TOKEN_2022_PROGRAM_ID,
  TOKEN_PROGRAM_ID,
} from "@solana/spl-token";
import { createHash } from "node:crypto";
import { createClient } from "../client/mod.ts";
import { parseArgs } from "node:util";

const TOKEN_METADATA_PROGRAM_ID = new PublicKey("metaqbxxUerdq28cj1RbAWkYQm3ybzjb6a8bt518x1s");
const LAMPORTS_PER_SOL = 1_000_000_000;

export interface CreateTokenOptions {
  baseUrl: string;
  apiKey: string;
  /** The payer and signer. Load it with `loadKeypair(path)`. */
  payer: Keypair;
  name: string;
  symbol: string;
  /** Whole tokens, as a string of digits. */
  supply: string;
  decimals?: number;
  description?: string;
  /** One of the two. */
  imageBytes?: Uint8Array;
  imageUrl?: string;
  revokeMint?: boolean;
  /** "token-2022": the metadata lives in the mint (no Metaplex account); default "spl-token". */
  tokenProgram?: "spl-token" | "token-2022";
  /** Token-2022 only: basis points of each transfer, at most `maximum` base units. */
  transferFee?: { basisPoints: number; maximum: string; permanent?: boolean };
  /** A mint address with this prefix/suffix (base58, at most 4 characters in total). */
  vanity?: { prefix?: string; suffix?: string; ignoreCase?: boolean };
  /**
   * The treasury you expect the fee to go to. The build response names one; pin the value you
   * were given out of band and any other address stops the example before signing.
   */
  expectTreasury?: string;
  /** Refuse to sign if the fee exceeds this many lamports. */
  maxFeeLamports?: bigint;
  /** Asked once the transaction is reviewed; return false to stop before signing. */
  confirm?: (review: Review) => Promise<boolean> | boolean;
  /**
   * Called with the reviewed build just before it is signed: where a slow signer (a hardware
   * wallet, a second person's approval) spends its time. `deno task demo --refresh` waits past
   * the blockhash here.
   */
  beforeSigning?: (build: SigningBuild) => Promise<void> | void;
  log?: (line: string) => void;
  fetch?: typeof fetch;
  /** How long to poll the verification. */
  verifyTimeoutMs?: number;
}

export interface Review {
  lines: string[];
  feeLamports: bigint;
  treasury: string;
  /** Lamports leaving the payer in the transaction besides the fee (rent, priority fee aside). */
  rentLamports: bigint;
  problems: string[];
}

/** What a build, or a refresh of it, gives the signer. */
export interface SigningBuild {
  mint: string;
  recentBlockhash: string;
  /** null: a durable nonce build, which does not expire. */
  lastValidBlockHeight: number | null;
}

/** The refresh made when the first signed transaction had expired. */
export interface Refreshed {
  /** The blockhash of the message that expired, and of the one signed instead. */
  fromBlockhash: string;
  toBlockhash: string;
  /** "quoted": the build's fee; "repriced": converted again at the current SOL price. */
  feeQuote: "quoted" | "repriced";
  /** Our fee in the expired message and in the refreshed one. */
  feeLamportsBefore: string;
  feeLamports: string;
}

export interface CreateTokenResult {
  metadataUri: string;
  mint: string;
  signature: string;
  /** Set when the build was refreshed because the first transaction expired unsent. */
  refreshed: Refreshed | null;
  /** What the build said the payer spends if it lands (lamports as decimal strings). */
  costs: BuildResponse["costs"];
  verification: Verification;
}

interface Verification {
  signature: string;
  status: "pending" | "confirmed" | "failed" | "unverified";
  mint: string | null;
  supplyRaw: string;
  decimals: number | null;
  recipient: string | null;
  feeVerified: boolean;
  fee: { amount: string; currency: string };
}

interface BuildResponse {
  buildId: number;
  mint: string;
  metadataAccount: string;
  recipientTokenAccount: string;
  transaction: string;
  requiredSigner: string;
  recentBlockhash: string;
  /** Both null on a durable nonce (nonceAccount): valid until the nonce moves on. */
  lastValidBlockHeight: number | null;
  expiresInSeconds: number | null;
  nonceAccount?: string;
  fee: { usd: number; lamports: string; treasury: string };
  /** Present for Token-2022 mints. */
  tokenProgram?: "token-2022";
  vanity?: { tries: number };
  /** Every lamport the payer spends if it lands (decimal strings), from the chain's own rent. */
  costs: {
    networkFeeLamports: string;
    priorityFeeLamports: string;
    mintRentLamports: string;
    tokenAccountRentLamports: string;
    metadataRentLamports: string;
    metadataProtocolFeeLamports: string;
    serviceFeeLamports: string;
    totalLamports: string;
  };
}

export class ApiCallError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fields: Record<string, unknown>,
  ) {
    super(
      `${status} ${code}: ${message}${
        Object.keys(fields).length ? ` ${JSON.stringify(fields)}` : ""
      }`,
    );
  }
}

/** A keypair file as written by `solana-keygen` (a JSON array of 64 numbers). */
export async function loadKeypair(path: string): Promise<Keypair> {
  const bytes = JSON.parse(await Deno.readTextFile(path));
  if (!Array.isArray(bytes) || bytes.length !== 64) {
    throw new Error(`${path} is not a Solana CLI keypair file (64 numbers)`);
  }
  return Keypair.fromSecretKey(Uint8Array.from(bytes));
}

const b64 = (bytes: Uint8Array) => {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) {
    s += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  }
  return btoa(s);
};
const fromB64 = (s: string) => Uint8Array.from(atob(s), (c) => c.charCodeAt(0));
const sol = (lamports: bigint) => `${(Number(lamports) / LAMPORTS_PER_SOL).toFixed(9)} SOL`;

// A retry after a timeout replays the first answer instead of doing the work twice.
const once = () => ({ "idempotency-key": crypto.randomUUID() });

/** The answer's body, or an ApiCallError with the service's error code, message and fields. */
function answer<T>(r: { data?: T; error?: unknown; response: Response }): T {
  if (r.response.ok && r.data !== undefined) return r.data;
  const e = (r.error as { error?: Partial<ApiCallError> } | undefined)?.error ?? {};
  throw new ApiCallError(
    r.response.status,
    e.code ?? "unknown",
    e.message ?? r.response.statusText,
    e.fields ?? {},
  );
}

type Client = ReturnType<typeof createClient>;

export async function createToken(o: CreateTokenOptions): Promise<CreateTokenResult> {
  const log = o.log ?? console.log;
  const doFetch = o.fetch ?? fetch;
  const base = o.baseUrl.replace(/\/+$/, "");
  const decimals = o.decimals ?? 9;
  const payer = o.payer.publicKey.toBase58();

  const client = createClient({ baseUrl: base, apiKey: o.apiKey, fetch: (r) => doFetch(r) });
  // 1. Host the metadata.
  log("1. hosting metadata…");
  const hosted = answer(
    await client.POST("/v1/metadata", {
      headers: once(),
      body: {
        name: o.name,
        symbol: o.symbol,
        ...(o.description ? { description: o.description } : {}),
        ...(o.imageBytes ? { imageBase64: b64(o.imageBytes) } : { imageUrl: o.imageUrl }),
      },
    }),
  );
  log(`   metadata ${hosted.metadataUri}`);
  log(`   image    ${hosted.imageUri}`);

  // 2. Build.
  log("2. building the transaction…");
  const build: BuildResponse = answer(
    await client.POST("/v1/tokens", {
      headers: once(),
      body: {
        payer,
        name: o.name,
        symbol: o.symbol,
        metadataUri: hosted.metadataUri,
        supply: o.supply,
        decimals,
        revokeMint: o.revokeMint ?? false,
        ...(o.tokenProgram ? { tokenProgram: o.tokenProgram } : {}),
        ...(o.transferFee ? { transferFee: o.transferFee } : {}),
        ...(o.vanity ? { vanity: o.vanity } : {}),
      },
    }),
  );
  log(
    `   mint ${build.mint}, ` +
      (build.expiresInSeconds === null
        ? `valid until nonce account ${build.nonceAccount}'s nonce moves on`
        : `valid for about ${build.expiresInSeconds} s`) +
      (build.vanity ? ` (vanity address after ${build.vanity.tries} tries)` : ""),
  );

  // 3. Review what we are about to sign; 4. sign it locally; 5. submit it through the relay.
  const reviewed = (b: BuildResponse, heading: string) =>
    reviewBuild(o, b, { payer, decimals, log, heading });
  let current = build;
  let tx = await reviewed(current, "3. review:");
  let refreshed: Refreshed | null = null;
  let submitted;
  for (;;) {
    await o.beforeSigning?.(current);
    // The service built a legacy transaction whose only signer is the payer.
    tx.sign(o.payer);
    log(refreshed ? "   signed again; submitting…" : "4. signed; 5. submitting…");
    submitted = await submit(client, tx).catch((e) => {
      // Expired unsent (the signer took longer than the blockhash lives): refresh, once.
      if (refreshed || !expiredUnsent(e)) throw e;
      return null;
    });
    if (submitted) break;
    ({ build: current, refreshed } = await refreshExpired(client, current, log));
    // The refreshed message is checked as the first was, against what was asked (same mint).
    tx = await reviewed(current, "3. review of the refreshed transaction:");
  }
  log(`   signature ${submitted.signature}`);

  // 6. Poll the verification until it is final.
  log("6. waiting for verification…");
  const v = await verification(client, submitted.signature, o.verifyTimeoutMs ?? 90_000);
  log(`   ${v.status}; fee verified: ${v.feeVerified}; supply ${v.supplyRaw} base units`);
  return {
    metadataUri: hosted.metadataUri,
    mint: build.mint,
    signature: submitted.signature,
    refreshed,
    costs: current.costs,
    verification: v,
  };
}

async function submit(client: Client, tx: Transaction) {
  return answer(
    await client.POST("/v1/transactions", {
      headers: once(),
      body: { transaction: b64(tx.serialize()) },
    }),
  );
}

/** Re-issues the build whose message expired unsent, and says what changed. */
async function refreshExpired(client: Client, current: BuildResponse, log: (l: string) => void) {
  log("   refused: the blockhash expired before it was sent; refreshing the build…");
  const r = answer(
    await client.POST("/v1/tokens/{mint}/refresh", {
      params: { path: { mint: current.mint } },
      headers: once(),
    }),
  );
  const refreshed: Refreshed = {
    fromBlockhash: current.recentBlockhash,
    toBlockhash: r.recentBlockhash,
    feeQuote: r.feeQuote,
    feeLamportsBefore: current.fee.lamports,
    feeLamports: r.fee.lamports,
  };
  log(
    `   refreshed: the same mint ${r.mint}, blockhash ${r.recentBlockhash}, valid for about ` +
      `${r.expiresInSeconds} s; fee ${
        r.feeQuote === "quoted" ? "as quoted" : "re-priced at the current SOL price"
      }: ${sol(BigInt(r.fee.lamports))}`,
  );
  return { build: r as BuildResponse, refreshed };
}

/** GET /v1/transactions/{signature} until it is final or `timeoutMs` has passed. */
async function verification(client: Client, signature: string, timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v: Verification = answer(
      await client.GET("/v1/transactions/{signature}", { params: { path: { signature } } }),
    );
    if (v.status !== "pending" || Date.now() > deadline) return v;
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** The relay's refusal of a message whose blockhash expired before it was sent. */
function expiredUnsent(e: unknown): boolean {
  if (!(e instanceof ApiCallError) || e.status !== 400) return false;
  const why = String(e.fields.transaction ?? "");
  return why.startsWith("expired") || /Blockhash ?not ?found/i.test(why);
}

/**
 * Step 3: decodes the build's transaction and checks every instruction against what was asked,
 * logging what it finds; throws before anything is signed if something differs.
 */
async function reviewBuild(
  o: CreateTokenOptions,
  build: BuildResponse,
  ctx: { payer: string; decimals: number; log: (line: string) => void; heading: string },
): Promise<Transaction> {
  const { payer, decimals, log } = ctx;
  const tx = Transaction.from(fromB64(build.transaction));
  const expectedSupplyRaw = BigInt(o.supply) * 10n ** BigInt(decimals);
  const review = reviewTransaction(tx, {
    payer,
    mint: build.mint,
    supplyRaw: expectedSupplyRaw,
    feeLamports: BigInt(build.fee.lamports),
    treasury: o.expectTreasury ?? build.fee.treasury,
    revokeMint: o.revokeMint ?? false,
    tokenProgram: o.tokenProgram ?? "spl-token",
    transferFee: o.transferFee
      ? {
        basisPoints: o.transferFee.basisPoints,
        maximum: BigInt(o.transferFee.maximum),
        authority: o.transferFee.permanent ? null : payer,
      }
      : null,
  });
  if (o.maxFeeLamports !== undefined && review.feeLamports > o.maxFeeLamports) {
    review.problems.push(
      `fee ${review.feeLamports} lamports is above your cap ${o.maxFeeLamports}`,
    );
  }
  log(ctx.heading);
  for (const line of review.lines) log(`   ${line}`);
  log(`   fee to treasury ${review.treasury}: ${sol(review.feeLamports)} ($${build.fee.usd})`);
  // The ATA and Token Metadata programs take their share without it showing in the instruction
  // data: the token account's and metadata account's rent and the metadata program's protocol
  // fee. The build names them (read from the chain's rent); the mint's rent is checked above.
  const c = build.costs;
  if (build.tokenProgram === "token-2022") {
    // No metadata account and no metadata-program fee: the mint holds the metadata, and its rent
    // (shown in the transaction) is for its final size, after the metadata is written into it.
    log(
      `   rent from your wallet: about ${
        sol(review.rentLamports + BigInt(c.tokenAccountRentLamports))
      } (the mint's rent ${sol(review.rentLamports)}, metadata included, shows in the ` +
        `transaction; the token account's rent ${sol(BigInt(c.tokenAccountRentLamports))} is ` +
        `taken by the token-account program) + network fee`,
    );
    log(
      "   Token-2022: the metadata lives in the mint; no metadata account, no metadata-program fee",
    );
  } else {
    const programCharged = BigInt(c.tokenAccountRentLamports) + BigInt(c.metadataRentLamports) +
      BigInt(c.metadataProtocolFeeLamports);
    log(
      `   rent and metadata costs from your wallet: about ${
        sol(review.rentLamports + programCharged)
      } (the mint's rent ${sol(review.rentLamports)} shows in the transaction; the token ` +
        `account's and metadata account's rent and the metadata program's fee of ` +
        `${sol(BigInt(c.metadataProtocolFeeLamports))} are taken by those programs) + network fee`,
    );
  }
  log(`   in all, if it lands: ${sol(BigInt(c.totalLamports))}`);
  if (review.problems.length) {
    throw new Error(`refusing to sign:\n  - ${review.problems.join("\n  - ")}`);
  }
  if (o.confirm && !(await o.confirm(review))) throw new Error("stopped before signing");

  return tx;
}

export interface Expectation {
  payer: string;
  mint: string;
  supplyRaw: bigint;
  feeLamports: bigint;
  treasury: string;
  revokeMint: boolean;
  /** Default "spl-token". */
  tokenProgram?: "spl-token" | "token-2022";
  /** The Token-2022 transfer fee you asked for (authority null: permanent), or none. */
  transferFee?: { basisPoints: number; maximum: bigint; authority: string | null } | null;
}

/** The first 8 bytes of SHA-256("spl_token_metadata_interface:<name>"): the interface's tags. */
const metadataInterfaceTag = (name: string) =>
  createHash("sha256").update(`spl_token_metadata_interface:${name}`).digest().subarray(0, 8);
const METADATA_INITIALIZE = metadataInterfaceTag("initialize_account");
const METADATA_UPDATE_AUTHORITY = metadataInterfaceTag("update_the_authority");
const startsWith = (data: Uint8Array, tag: Uint8Array) => tag.every((b, i) => data[i] === b);
/** Token-2022's extension instruction tags (first byte) and their Initialize sub-tag (0). */
const TRANSFER_FEE_EXTENSION = 26;
const METADATA_POINTER_EXTENSION = 39;

/**
 * Decodes every instruction and checks the transaction against what was asked for: only the
 * payer signs, only the expected programs run, the full supply goes to the mint, and exactly one
 * fee transfer of the quoted amount goes to the treasury.
 */
export function reviewTransaction(tx: Transaction, want: Expectation): Review {
  const lines: string[] = [];
  const problems: string[] = [];
  let fee = 0n;
  let feeTransfers = 0;
  let rent = 0n;
  let minted = 0n;
  const message = tx.compileMessage();
  if (
    message.header.numRequiredSignatures !== 1 ||
    !message.accountKeys[0].equals(new PublicKey(want.payer))
  ) {
    problems.push("the transaction must have exactly one signer: your payer wallet");
  }
  const key = (k: PublicKey) => k.toBase58();
  const tokenProgram = want.tokenProgram === "token-2022"
    ? TOKEN_2022_PROGRAM_ID
    : TOKEN_PROGRAM_ID;
  let feeConfigs = 0;

  tx.instructions.forEach((ix: TransactionInstruction, i: number) => {
    const n = `#${i + 1}`;
    const program = ix.programId;
    try {
      if (program.equals(ComputeBudgetProgram.programId)) {
        const type = ComputeBudgetInstruction.decodeInstructionType(ix);
        if (type === "SetComputeUnitLimit") {
          lines.push(
            `${n} ComputeBudget: unit limit ${
              ComputeBudgetInstruction.decodeSetComputeUnitLimit(ix).units
            }`,
          );
        } else if (type === "SetComputeUnitPrice") {
          const p = ComputeBudgetInstruction.decodeSetComputeUnitPrice(ix).microLamports;
          lines.push(`${n} ComputeBudget: priority fee ${p} micro-lamports per unit`);
        } else lines.push(`${n} ComputeBudget: ${type}`);
      } else if (program.equals(SystemProgram.programId)) {
        const type = SystemInstruction.decodeInstructionType(ix);
        // The mint account is funded with its rent, then allocated at the address derived from
        // your wallet and the seed (which only your signature allows).
        if (type === "AllocateWithSeed") {
          const d = SystemInstruction.decodeAllocateWithSeed(ix);
          lines.push(
            `${n} System: allocate mint account ${key(d.accountPubkey)} (${d.space} bytes, ` +
              `owner ${key(d.programId)})`,
          );
          if (key(d.accountPubkey) !== want.mint) {
            problems.push(`${n} allocates ${key(d.accountPubkey)}, not the mint`);
          }
          if (!d.programId.equals(tokenProgram)) {
            problems.push(`${n} gives the mint account to ${key(d.programId)}`);
          }
        } else if (type === "Transfer") {
          const d = SystemInstruction.decodeTransfer(ix);
          const to = key(d.toPubkey);
          const from = key(d.fromPubkey);
          if (to === want.mint && from === want.payer) {
            rent += BigInt(d.lamports);
            lines.push(
              `${n} System: fund mint account ${to} with its rent ${sol(BigInt(d.lamports))}`,
            );
          } else {
            lines.push(`${n} System: transfer ${sol(BigInt(d.lamports))} to ${to}`);
            if (to === want.treasury && from === want.payer) {
              fee += BigInt(d.lamports);
              feeTransfers++;
            } else problems.push(`${n} transfers SOL to ${to}, which is not the treasury`);
          }
        } else problems.push(`${n} unexpected System instruction ${type}`);
      } else if (program.equals(TOKEN_2022_PROGRAM_ID) && !program.equals(tokenProgram)) {
        problems.push(`${n} uses Token-2022, and you asked for the classic token program`);
      } else if (
        program.equals(TOKEN_2022_PROGRAM_ID) && ix.data[0] === METADATA_POINTER_EXTENSION &&
        ix.data[1] === 0
      ) {
        const d = initializeMetadataPointerData.decode(ix.data);
        lines.push(
          `${n} Token-2022: metadata pointer to ${key(d.metadataAddress)}, authority ${
            d.authority.equals(PublicKey.default) ? "none" : key(d.authority)
          }`,
        );
        if (key(d.metadataAddress) !== want.mint) {
          problems.push(`${n} points the metadata at ${key(d.metadataAddress)}, not the mint`);
        }
      } else if (
        program.equals(TOKEN_2022_PROGRAM_ID) && ix.data[0] === TRANSFER_FEE_EXTENSION &&
        ix.data[1] === 0
      ) {
        const d = decodeInitializeTransferFeeConfigInstruction(ix, TOKEN_2022_PROGRAM_ID).data;
        const authority = d.transferFeeConfigAuthority ? key(d.transferFeeConfigAuthority) : null;
        const withdraw = d.withdrawWithheldAuthority ? key(d.withdrawWithheldAuthority) : null;
        feeConfigs++;
        lines.push(
          `${n} Token-2022: transfer fee ${d.transferFeeBasisPoints} basis points, at most ` +
            `${d.maximumFee} base units; fee authority ${authority ?? "none"}, withdraw ` +
            `authority ${withdraw ?? "none"}`,
        );
        const asked = want.transferFee;
        if (
          !asked || asked.basisPoints !== d.transferFeeBasisPoints ||
          asked.maximum !== d.maximumFee || asked.authority !== authority ||
          asked.authority !== withdraw
        ) {
          problems.push(`${n} sets a transfer fee you did not ask for`);
        }
      } else if (
        program.equals(TOKEN_2022_PROGRAM_ID) && startsWith(ix.data, METADATA_INITIALIZE)
      ) {
        const m = decodeStrings(ix.data, 8);
        lines.push(
          `${n} Token-2022: metadata in the mint: name "${m.name}", symbol "${m.symbol}", uri ${m.uri}`,
        );
      } else if (
        program.equals(TOKEN_2022_PROGRAM_ID) && startsWith(ix.data, METADATA_UPDATE_AUTHORITY)
      ) {
        const to = new PublicKey(ix.data.subarray(8, 40));
        lines.push(
          `${n} Token-2022: metadata update authority to ${
            to.equals(PublicKey.default) ? "none (immutable)" : key(to)
          }`,
        );
      } else if (program.equals(TOKEN_PROGRAM_ID) && !program.equals(tokenProgram)) {
        problems.push(`${n} uses the classic token program, and you asked for Token-2022`);
      } else if (program.equals(tokenProgram)) {
        const d = decodeInstruction(ix, tokenProgram);
        const label = `${n} ${tokenProgram.equals(TOKEN_2022_PROGRAM_ID) ? "Token-2022" : "Token"}`;
        if (isInitializeMint2Instruction(d)) {
          lines.push(
            `${label}: initialize mint, ${d.data.decimals} decimals, mint authority ${
              key(d.data.mintAuthority)
            }, ` +
              `freeze authority ${d.data.freezeAuthority ? key(d.data.freezeAuthority) : "none"}`,
          );
        } else if (isMintToInstruction(d)) {
          minted += BigInt(d.data.amount);
          lines.push(
            `${label}: mint ${d.data.amount} base units to ${key(d.keys.destination.pubkey)}`,
          );
          if (key(d.keys.mint.pubkey) !== want.mint) problems.push(`${n} mints another token`);
        } else if (isSetAuthorityInstruction(d)) {
          const what = AuthorityType[d.data.authorityType];
          lines.push(
            `${label}: set ${what} authority to ${
              d.data.newAuthority ? key(d.data.newAuthority) : "none (revoked)"
            }`,
          );
          if (
            !(d.data.authorityType === AuthorityType.MintTokens && d.data.newAuthority === null &&
              want.revokeMint)
          ) {
            problems.push(`${n} changes an authority you did not ask to change`);
          }
        } else problems.push(`${n} unexpected Token instruction ${d.data.instruction}`);
      } else if (program.equals(ASSOCIATED_TOKEN_PROGRAM_ID)) {
        lines.push(
          `${n} AssociatedToken: create the recipient's token account ${
            key(ix.keys[1].pubkey)
          } if missing`,
        );
      } else if (program.equals(TOKEN_METADATA_PROGRAM_ID)) {
        const m = decodeCreateMetadataV3(ix.data);
        lines.push(
          `${n} TokenMetadata: create metadata name "${m.name}", symbol "${m.symbol}", uri ${m.uri}`,
        );
      } else {
        problems.push(`${n} calls an unexpected program ${key(program)}`);
      }
    } catch (e) {
      problems.push(`${n} could not be decoded (${(e as Error).message})`);
    }
  });

  if (feeTransfers !== 1) {
    problems.push(`expected one fee transfer to the treasury, found ${feeTransfers}`);
  }
  if ((want.transferFee ? 1 : 0) !== feeConfigs) {
    problems.push(`expected ${want.transferFee ? "one" : "no"} transfer-fee configuration`);
  }
  if (fee !== want.feeLamports) problems.push(`fee is ${fee} lamports, quoted ${want.feeLamports}`);
  if (minted !== want.supplyRaw) {
    problems.push(`mints ${minted} base units, asked for ${want.supplyRaw}`);
  }
  return { lines, feeLamports: fee, treasury: want.treasury, rentLamports: rent, problems };
}

/** Name, symbol and URI of a CreateMetadataAccountV3 instruction (Borsh: u32 length + bytes). */
function decodeCreateMetadataV3(data: Uint8Array): { name: string; symbol: string; uri: string } {
  if (data[0] !== 33) throw new Error(`not CreateMetadataAccountV3 (discriminator ${data[0]})`);
  return decodeStrings(data, 1);
}

/** Three Borsh strings (u32 length + UTF-8) from `at`. */
function decodeStrings(
  data: Uint8Array,
  at: number,
): { name: string; symbol: string; uri: string } {
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  let off = at;
  const str = () => {
    const len = view.getUint32(off, true);
    off += 4;
    const s = new TextDecoder().decode(data.subarray(off, off + len));
    off += len;
    return s.replace(/\0+$/, "");
  };
  return { name: str(), symbol: str(), uri: str() };
}

/**
 * The command-line flags for the token program, transfer fee and vanity address, shared with
 * `deno task demo` (parseArgs options, the usage text, and the options they make).
 */
export const PROGRAM_ARGS = {
  "token-2022": { type: "boolean", default: false },
  "transfer-fee-bps": { type: "string" },
  "transfer-fee-max": { type: "string" },
  "permanent-fee": { type: "boolean", default: false },
  "vanity-prefix": { type: "string" },
  "vanity-suffix": { type: "string" },
  "vanity-ignore-case": { type: "boolean", default: false },
} as const;

export const PROGRAM_USAGE = "[--token-2022 [--transfer-fee-bps N --transfer-fee-max RAW " +
  "[--permanent-fee]]] [--vanity-prefix P] [--vanity-suffix S] [--vanity-ignore-case]";

/** What an update changes; each left out stays as it is. */
export interface UpdateChanges {
  /** A new metadata document; a hosted one (POST /v1/metadata) sets its name and symbol too. */
  metadataUri?: string;
  name?: string;
  symbol?: string;
  /** Hand the metadata's update authority to this address. */
  updateAuthority?: string;
  /** false: the metadata can never change again. */
  isMutable?: false;
  /** An address to hand the authority to, or null to revoke it. */
  mintAuthority?: string | null;
  freezeAuthority?: string | null;
}

export interface UpdateTokenOptions {
  baseUrl: string;
  apiKey: string;
  mint: string;
  /** The token's current authority: the one signer and fee payer of the update. */
  authority: Keypair;
  changes: UpdateChanges;
  /** Refuse to sign if the update costs more than this many lamports in all. */
  maxTotalLamports?: bigint;
  /** Asked once the transaction is reviewed; return false to stop before signing. */
  confirm?: (review: UpdateReview) => Promise<boolean> | boolean;
  log?: (line: string) => void;
  fetch?: typeof fetch;
  /** How long to wait for the relay to record the landing. */
  landTimeoutMs?: number;
}

export interface UpdateReview {
  lines: string[];
  problems: string[];
}

type TokenView = {
  name: string;
  symbol: string;
  uri: string;
  updateAuthority: string | null;
  isMutable: boolean;
  mintAuthority: string | null;
  freezeAuthority: string | null;
};

export interface UpdateTokenResult {
  updateId: string;
  signature: string;
  status: "built" | "submitted" | "landed" | "failed";
  before: TokenView;
  after: TokenView;
  totalLamports: string;
  reason: string | null;
}

/**
 * Changes a token made through the service: build the update for its current authority, review
 * it, sign it locally, submit it through the relay, and wait until the service records it
 * landed (the relay follows it; nothing to verify by hand).
 */
export async function updateToken(o: UpdateTokenOptions): Promise<UpdateTokenResult> {
  const log = o.log ?? console.log;
  const doFetch = o.fetch ?? fetch;
  const base = o.baseUrl.replace(/\/+$/, "");
  const client = createClient({ baseUrl: base, apiKey: o.apiKey, fetch: (r) => doFetch(r) });
  const authority = o.authority.publicKey.toBase58();

  log(`1. building the update of ${o.mint}…`);
  const built = answer(
    await client.POST("/v1/tokens/{mint}/update", {
      params: { path: { mint: o.mint } },
      headers: once(),
      body: { authority, ...o.changes },
    }),
  );
  const tx = Transaction.from(fromB64(built.transaction));
  const review = reviewUpdate(tx, built, authority, o.maxTotalLamports);
  log("2. review:");
  for (const l of review.lines) log(`   ${l}`);
  if (review.problems.length) {
    throw new Error(`refusing to sign: ${review.problems.join("; ")}`);
  }
  if (o.confirm && !(await o.confirm(review))) throw new Error("not signed: declined");

  tx.sign(o.authority);
  log("3. signed; 4. submitting through the relay…");
  const sent = await submit(client, tx);
  log(`   signature ${sent.signature}`);

  log("5. waiting for the landing…");
  const deadline = Date.now() + (o.landTimeoutMs ?? 90_000);
  for (;;) {
    const r = answer(
      await client.GET("/v1/tokens/{mint}/updates/{updateId}", {
        params: { path: { mint: o.mint, updateId: built.updateId }, query: {} },
      }),
    );
    const final = r.status === "landed" || r.status === "failed";
    if (final || Date.now() > deadline) {
      log(`   ${r.status}${r.reason ? `: ${r.reason}` : ""}`);
      return {
        updateId: built.updateId,
        signature: sent.signature,
        status: r.status,
        before: r.before,
        after: r.after,
        totalLamports: built.costs.totalLamports,
        reason: r.reason,
      };
    }
    await new Promise((res) => setTimeout(res, 500));
  }
}

/** The System instruction's type, or null when its data is none of them. */
function systemType(ix: TransactionInstruction): string | null {
  try {
    return SystemInstruction.decodeInstructionType(ix);
  } catch {
    return null;
  }
}

/**
 * Step 2 of an update: the transaction has one signer, the authority, pays nothing but the
 * costs it states, and carries what was asked; every change is listed as before → after.
 */
export function reviewUpdate(
  tx: Transaction,
  built: {
    costs: { rentTopUpLamports: string; serviceFeeLamports: string; totalLamports: string };
    fee: { treasury: string };
    mint: string;
    before: TokenView;
    after: TokenView;
  },
  authority: string,
  maxTotalLamports?: bigint,
): UpdateReview {
  const lines: string[] = [];
  const problems: string[] = [];
  const msg = tx.compileMessage();
  if (tx.feePayer?.toBase58() !== authority) problems.push("the fee payer is not the authority");
  if (msg.header.numRequiredSignatures !== 1) problems.push("more than one signer is required");
  const allowed = new Set([
    ComputeBudgetProgram.programId.toBase58(),
    SystemProgram.programId.toBase58(),
    TOKEN_METADATA_PROGRAM_ID.toBase58(),
    TOKEN_PROGRAM_ID.toBase58(),
    TOKEN_2022_PROGRAM_ID.toBase58(),
  ]);
  const expected = new Map([
    [built.mint, BigInt(built.costs.rentTopUpLamports)],
    [built.fee.treasury, BigInt(built.costs.serviceFeeLamports)],
  ]);
  for (const ix of tx.instructions) {
    if (!allowed.has(ix.programId.toBase58())) {
      problems.push(`unexpected program ${ix.programId.toBase58()}`);
    }
    if (!ix.programId.equals(SystemProgram.programId)) continue;
    if (systemType(ix) !== "Transfer") {
      problems.push("a System instruction that is not a transfer");
      continue;
    }
    const t = SystemInstruction.decodeTransfer(ix);
    const to = t.toPubkey.toBase58();
    if (expected.get(to) !== t.lamports) {
      problems.push(`a transfer of ${t.lamports} lamports to ${to} that the costs do not state`);
    }
  }
  const data = tx.instructions.map((ix) => new TextDecoder().decode(ix.data)).join("");
  if (built.after.uri !== built.before.uri && !data.includes(built.after.uri)) {
    problems.push("the new uri is not in the transaction");
  }
  for (const k of Object.keys(built.after) as (keyof TokenView)[]) {
    if (built.after[k] !== built.before[k]) {
      lines.push(`${k}: ${String(built.before[k])} → ${String(built.after[k])}`);
    }
  }
  const total = BigInt(built.costs.totalLamports);
  lines.push(
    `costs ${sol(total)} in all (rent top-up ${built.costs.rentTopUpLamports}, ` +
      `service fee ${built.costs.serviceFeeLamports} lamports)`,
  );
  if (maxTotalLamports !== undefined && total > maxTotalLamports) {
    problems.push(`costs ${total} lamports, over the ${maxTotalLamports} allowed`);
  }
  return { lines, problems };
}

export function programChoice(v: {
  "token-2022"?: boolean;
  "transfer-fee-bps"?: string;
  "transfer-fee-max"?: string;
  "permanent-fee"?: boolean;
  "vanity-prefix"?: string;
  "vanity-suffix"?: string;
  "vanity-ignore-case"?: boolean;
}): Pick<CreateTokenOptions, "tokenProgram" | "transferFee" | "vanity"> {
  return {
    tokenProgram: v["token-2022"] ? "token-2022" : "spl-token",
    transferFee: v["transfer-fee-bps"] !== undefined
      ? {
        basisPoints: Number(v["transfer-fee-bps"]),
        maximum: v["transfer-fee-max"] ?? "18446744073709551615",
        permanent: v["permanent-fee"],
      }
      : undefined,
    vanity: v["vanity-prefix"] || v["vanity-suffix"]
      ? {
        prefix: v["vanity-prefix"],
        suffix: v["vanity-suffix"],
        ignoreCase: v["vanity-ignore-case"],
      }
      : undefined,
  };
}

if (import.meta.main) {
  const { values: v } = parseArgs({
    args: Deno.args,
    options: {
      "base-url": {
        type: "string",
        default: Deno.env.get("TCB_BASE_URL") ?? "http://127.0.0.1:8000",
      },
      keypair: { type: "string" },
      name: { type: "string" },
      symbol: { type: "string" },
      supply: { type: "string" },
      decimals: { type: "string", default: "9" },
      description: { type: "string" },
      image: { type: "string" },
      "image-url": { type: "string" },
      "revoke-mint": { type: "boolean", default: false },
      ...PROGRAM_ARGS,
      "expect-treasury": { type: "string" },
      yes: { type: "boolean", default: false },
    },
  });
  const apiKey = Deno.env.get("TCB_API_KEY");
  const missing = ["keypair", "name", "symbol", "supply"].filter((k) => !v[k as keyof typeof v]);
  if (!apiKey || missing.length || (!v.image && !v["image-url"])) {
    console.error(
      "usage: TCB_API_KEY=… deno run -A examples/create-token.ts --base-url URL --keypair FILE " +
        "--name NAME --symbol SYM --supply N [--decimals D] [--description TEXT] " +
        `(--image FILE | --image-url URL) [--revoke-mint] ${PROGRAM_USAGE} ` +
        "[--expect-treasury ADDRESS] [--yes]",
    );
    Deno.exit(2);
  }
  try {
    const result = await createToken({
      baseUrl: v["base-url"]!,
      apiKey,
      payer: await loadKeypair(v.keypair!),
      name: v.name!,
      symbol: v.symbol!,
      supply: v.supply!,
      decimals: Number(v.decimals),
      description: v.description,
      imageBytes: v.image ? await Deno.readFile(v.image) : undefined,
      imageUrl: v["image-url"],
      revokeMint: v["revoke-mint"],
      ...programChoice(v),
      expectTreasury: v["expect-treasury"],
      confirm: v.yes ? undefined : () => confirm("Sign and submit this transaction?"),
    });
    console.log(JSON.stringify(result, null, 2));
    Deno.exit(result.verification.status === "confirmed" ? 0 : 1);
  } catch (e) {
    console.error(`error: ${(e as Error).message}`);
    Deno.exit(1);
  }
}
