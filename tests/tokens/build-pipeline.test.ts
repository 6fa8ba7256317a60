/**
 * The build's pure steps, without a chain: given a request, the ids drawn for it, the rent and
 * the price (shapeToken, planBuild), when the round trip's facts come back (judgeBuild), then
 * the error or the verdict, and the sealed transaction with its event and answer (builtToken).
 */
import { Keypair, PublicKey, SystemProgram } from "@solana/web3.js";
import { TOKEN_PROGRAM_ID } from "@solana/spl-token";
import { assert, assertEquals } from "../support/assert.ts";
import { ApiError } from "../../src/kernel/errors.ts";
import {
  admitBuild,
  type BuildSettings,
  PLACEHOLDER_BLOCKHASH,
  planBuild,
  shapeToken,
} from "../../src/tokens/build-plan.ts";
import {
  builtToken,
  type ChainFacts,
  judgeBuild,
  sealBuild,
  type Verdict,
} from "../../src/tokens/build-verdict.ts";
import { spend } from "../../src/tokens/costs.ts";
import type { BuildRequest } from "../../src/tokens/request-schema.ts";
import { rentTable } from "../../src/tokens/rent.ts";
import { token2022Rent } from "../../src/tokens/token-2022.ts";
import {
  compileToken,
  deriveAddresses,
  MAX_COMPUTE_UNIT_LIMIT,
} from "../../src/tokens/transaction.ts";
import { tokenFeeLamports } from "../../src/pricing/token-fee.ts";

const payer = Keypair.generate().publicKey;
const treasury = Keypair.generate().publicKey;
const reference = Keypair.generate().publicKey;
const settings: BuildSettings = { treasury, tokenUsd: 2, maxPriorityFeeMicroLamports: 50_000 };
const rent = rentTable({ lamportsPerByteYear: 3480n, exemptionThreshold: 2 });
const SOL_USD = 150;

const request = (over: Partial<BuildRequest> = {}): BuildRequest => ({
  payer,
  recipient: payer,
  name: "Pipeline",
  symbol: "PIPE",
  metadataUri: "https://example.com/p.json",
  decimals: 6,
  supplyRaw: 1_000_000_000n,
  revokeMint: true,
  revokeFreeze: true,
  immutableMetadata: false,
  ...over,
});

async function given(over: Partial<BuildRequest> = {}, vanityTries: number | null = null) {
  const req = request(over);
  const seed = "0123456789abcdef0123456789abcdef";
  const addresses = await deriveAddresses(payer, seed, req.recipient, req.tokenProgram);
  const shape = shapeToken(req, { seed, reference, addresses, vanityTries });
  const tokenRent = shape.token2022Sizes
    ? token2022Rent(rent, shape.token2022Sizes, rent.forSize!)
    : rent;
  return planBuild(shape, tokenRent, SOL_USD, settings);
}

/** The verdict must be a refusal; it is returned typed as one. */
function refused(v: Verdict | ApiError): ApiError {
  assert(v instanceof ApiError, "expected the build to be refused");
  return v;
}

const wallet = (lamports: number) => ({
  owner: SystemProgram.programId,
  executable: false,
  lamports,
  data: new Uint8Array(0),
});

const facts = (over: Partial<ChainFacts> & { balance?: number } = {}): ChainFacts => ({
  accounts: over.accounts ?? [wallet(over.balance ?? 1e9), null],
  recentFees: over.recentFees ?? [],
  simulation: over.simulation ?? {
    err: null,
    logs: [],
    unitsConsumed: 60_000,
    replacementBlockhash: {
      blockhash: Keypair.generate().publicKey.toBase58(),
      lastValidBlockHeight: 99,
    },
  } as ChainFacts["simulation"],
});

Deno.test("plan: the fee follows the price, the probe runs with the unit limit wide open", async () => {
  const p = await given();
  assertEquals(p.plan.feeLamports, tokenFeeLamports(settings, SOL_USD));
  assertEquals(p.plan.mintRentLamports, rent.mint);
  assertEquals(p.feeUsd, 2);
  // The payer is the recipient: read once, beside its token account.
  assertEquals(p.accounts.map(String), [payer, p.plan.recipientTokenAccount].map(String));
  assertEquals(p.writable.length, 5);
  const wideOpen = compileToken(
    p.plan,
    { unitLimit: MAX_COMPUTE_UNIT_LIMIT, microLamportsPerUnit: 0n },
    PLACEHOLDER_BLOCKHASH,
  );
  assertEquals(p.probe.messageBytes, wideOpen.messageBytes);
});

Deno.test("plan: another recipient is read too", async () => {
  const recipient = Keypair.generate().publicKey;
  const p = await given({ recipient });
  assertEquals(
    p.accounts.map(String),
    [payer, recipient, p.plan.recipientTokenAccount].map(String),
  );
});

Deno.test("plan: a Token-2022 build sizes the mint once and pays its rent at that size", async () => {
  const p = await given({
    tokenProgram: "token-2022",
    transferFee: { basisPoints: 50, maximum: 10n, permanent: true },
  });
  const sizes = p.shape.token2022Sizes!;
  assert(sizes.final > sizes.allocated);
  assertEquals(p.plan.token2022Sizes, sizes);
  assertEquals(p.plan.mintRentLamports, rent.forSize!(sizes.final));
  assertEquals(p.rent.metadata, 0n);
  assertEquals(p.shape.transferFee, { basisPoints: 50, maximum: 10n, authority: null });
  assertEquals(p.plan.metadataAccount.toBase58(), p.plan.mint.toBase58());
});

Deno.test("judge: a payer that is not a plain wallet and a token-account recipient are named together", async () => {
  const recipient = Keypair.generate().publicKey;
  const p = await given({ recipient });
  const tokenOwned = { ...wallet(1e9), owner: TOKEN_PROGRAM_ID };
  const v = refused(judgeBuild(p, facts({ accounts: [tokenOwned, tokenOwned, null] }), settings));
  assertEquals(v.code, "invalid_request");
  assertEquals(Object.keys(v.fields).sort(), ["payer", "recipient"]);
});

Deno.test("judge: a payer short of the costs gets insufficient_funds before the simulation's verdict", async () => {
  const p = await given();
  const v = judgeBuild(
    p,
    facts({
      balance: 1_000,
      simulation: { err: "AccountNotFound", logs: [] } as ChainFacts["simulation"],
    }),
    settings,
  ) as Verdict | ApiError;
  assert(v instanceof ApiError);
  assertEquals(v.code, "insufficient_funds");
  assertEquals(v.fields.available, "1000");
});

Deno.test("judge: a failing simulation of a funded payer is simulation_failed with its logs", async () => {
  const p = await given();
  const v = judgeBuild(
    p,
    facts({
      simulation: {
        err: { InstructionError: [3, { Custom: 0 }] },
        logs: ["Program log: no"],
      } as ChainFacts["simulation"],
    }),
    settings,
  ) as Verdict | ApiError;
  assert(v instanceof ApiError);
  assertEquals(v.code, "simulation_failed");
  assertEquals(v.fields.logs, ["Program log: no"]);
});

Deno.test("judge: a payer holding exactly the spend passes its own rent-only failure", async () => {
  const p = await given();
  const ok = judgeBuild(p, facts(), settings) as Verdict;
  const exact = Number(spend(ok.costs));
  const v = judgeBuild(
    p,
    facts({
      balance: exact,
      simulation: {
        err: { InsufficientFundsForRent: { account_index: 0 } },
        logs: [],
        unitsConsumed: 60_000,
      } as ChainFacts["simulation"],
    }),
    settings,
  );
  assert(!(v instanceof ApiError));
  assertEquals(v.unitLimit, ok.unitLimit);
  assertEquals(v.blockhash, null);
});

Deno.test("judge then seal: the verdict's budget and blockhash are what the transaction carries", async () => {
  const p = await given();
  const f = facts({ recentFees: [{ prioritizationFee: 10 }, { prioritizationFee: 90_000 }] });
  const v = judgeBuild(p, f, settings) as Verdict;
  assertEquals(v.microLamports, 50_000n); // the 75th percentile, capped
  assertEquals(v.blockhash!.lastValidBlockHeight, 99);
  const sealed = sealBuild(p, v, v.blockhash!);
  const fresh = compileToken(
    p.plan,
    { unitLimit: v.unitLimit, microLamportsPerUnit: v.microLamports },
    v.blockhash!.blockhash,
  );
  assertEquals(sealed.messageBytes, fresh.messageBytes);
});

Deno.test("built: the event draft and the answer say the same build", async () => {
  const p = await given({ vanity: { prefix: "ab", suffix: "", ignoreCase: false } }, 12);
  const v = judgeBuild(p, facts(), settings) as Verdict;
  const sealed = sealBuild(p, v, v.blockhash!);
  const b = builtToken(p, v, v.blockhash!, { wire: sealed.wire, messageHash: "ff" });
  assertEquals(b.draft.supplyRaw, "1000000000");
  assertEquals(b.draft.uri, "https://example.com/p.json");
  assertEquals(b.draft.messageHash, "ff");
  assertEquals(b.draft.vanity, { prefix: "ab", suffix: "", ignoreCase: false, tries: 12 });
  assertEquals("tokenProgram" in b.draft, false);
  const r = b.respond(7);
  assertEquals(r.buildId, 7);
  assertEquals(r.mint, b.draft.mint);
  assertEquals(r.fee, { usd: 2, lamports: b.draft.feeLamports, treasury: treasury.toBase58() });
  assertEquals(r.costs.totalLamports, spend(v.costs).toString());
  assertEquals(r.vanity, { tries: 12 });
  assertEquals(new PublicKey(r.requiredSigner).toBase58(), payer.toBase58());
});

const conduct = { refusePayerAfter: 1, keyWalletTolerated: 3, share: 0.5, minPayers: 10 };

Deno.test("admit: given builds left today, the build starts; at the limit, 429 before any RPC", () => {
  const now = Date.UTC(2030, 0, 2, 23, 0, 0);
  const fresh = { payer: null };
  assertEquals(admitBuild({ usage: null, ...fresh }, { tokensPerDay: 1 }, conduct, now), null);
  assertEquals(
    admitBuild({ usage: { tokens: 4 }, ...fresh }, { tokensPerDay: 5 }, conduct, now),
    null,
  );
  const e = refused(
    admitBuild({ usage: { tokens: 5 }, ...fresh }, { tokensPerDay: 5 }, conduct, now)!,
  );
  assertEquals([e.status, e.code, e.headers["Retry-After"]], [429, "daily_limit", "3600"]);
});

Deno.test("admit: given a payer that landed a creation without the fee, then 400 naming payer before any RPC", () => {
  const last = { mint: "MintX", signature: "SigX", keyId: "k", at: 0 };
  const e = refused(
    admitBuild({ usage: null, payer: { unverified: 1, last } }, { tokensPerDay: 5 }, conduct, 0)!,
  );
  assertEquals([e.status, e.code], [400, "invalid_request"]);
  assert(String(e.fields.payer).includes("MintX"));
});
