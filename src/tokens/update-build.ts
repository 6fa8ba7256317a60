/**
 * The update command behind POST /v1/tokens/{mint}/update: the shell around `decideUpdate`
 * (update-decide.ts) and `judgeUpdate` (update-verdict.ts).
 *
 * Two round trips. The first reads the token's current state (the mint, the Metaplex account,
 * the signer and every address an authority goes to) in one getMultipleAccountsInfo: the update
 * is decided against it, and refused before anything is built. The second simulates the very
 * transaction (the node's latest blockhash comes back with it) beside the fee market. Then one
 * store commit appends `TokenUpdateBuilt` (with the idempotency record) on the update's stream.
 * Nothing is counted against the daily build limit: no mint is created.
 */
import { PublicKey } from "@solana/web3.js";
import type { TokenUpdateBuilt } from "../../events/types.ts";
import { buildByMintProjection, buildsProjection } from "../../projections/builds.ts";
import { hostedMetadataProjection } from "../../projections/hosted.ts";
import { keysProjection, stillInForce } from "../../projections/keys.ts";
import { kvReads, read } from "../commands/read.ts";
import { type CommandHandler, runCommand } from "../commands/run.ts";
import type { IdempotencyScope } from "../idempotency/record.ts";
import { ApiError } from "../kernel/errors.ts";
import { sha256Hex } from "../kernel/hashing.ts";
import { isRejection, reject, type Rejection, toApiError } from "../kernel/rejection.ts";
import { solPriceOr503 } from "../pricing/quote.ts";
import { updateCharged, updateFeeLamports } from "../pricing/update-fee.ts";
import type { Services } from "../services.ts";
import { metadataPda } from "../solana/token-metadata.ts";
import { clusterRent } from "./build-inputs.ts";
import { type Caller, recentPrioritizationFees } from "./build-token.ts";
import { hostedDocumentId, onOwnOrigin } from "./hosted-match.ts";
import { MAX_COMPUTE_UNIT_LIMIT, retarget, toBase64 } from "./transaction.ts";
import { newReference } from "../solana/reference.ts";
import { decideUpdate, type HostedAnswer, type UpdateChanges } from "./update-decide.ts";
import { CHANGE_FIELDS, type UpdateRequest } from "./update-request.ts";
import { type UpdateBuiltResponse, updateBuiltView } from "./update-response.ts";
import { decodeTokenState, type TokenState } from "./update-state.ts";
import {
  compileUpdate,
  rentTopUp,
  token2022LengthAfter,
  type UpdatePlan,
} from "./update-transaction.ts";
import { judgeUpdate } from "./update-verdict.ts";
import { PLACEHOLDER_BLOCKHASH } from "./build-plan.ts";

/** 16 random bytes as 32 hex characters. */
export const newUpdateId = () =>
  Array.from(crypto.getRandomValues(new Uint8Array(16)), (b) => b.toString(16).padStart(2, "0"))
    .join("");

export async function buildUpdate(
  s: Services,
  caller: Caller,
  mint: string,
  req: UpdateRequest,
  idempotency: IdempotencyScope | null = null,
): Promise<UpdateBuiltResponse> {
  // Another key's mint answers exactly like an unknown one, as GET /v1/tokens/{mint} does.
  const reads = kvReads(s.kv);
  const id = await read(reads, buildByMintProjection, [mint]);
  const found = id === null ? null : await read(reads, buildsProjection, [id]);
  const b = found?.keyId === caller.keyId ? found : null;
  if (!b) throw new ApiError("not_found", "No token built by this key has that mint", {});
  const tokenProgram = b.tokenProgram ?? "spl-token";
  const mintKey = new PublicKey(mint);

  const { state, changes, authorityAccount } = await readAndDecide(s, mintKey, tokenProgram, req);
  const authority = new PublicKey(req.authority);
  const { plan, walletRent, solUsd } = await planOf(s, mintKey, authority, state, changes);
  const { rentTopUpLamports: topUp, feeLamports } = plan;
  const probe = compileUpdate(
    plan,
    { unitLimit: MAX_COMPUTE_UNIT_LIMIT, microLamportsPerUnit: 0n },
    PLACEHOLDER_BLOCKHASH,
  );
  const [recentFees, sim] = await Promise.all([
    recentPrioritizationFees(s, [authority, mintKey, s.treasury]),
    s.connection.simulateTransaction(probe.transaction, {
      sigVerify: false,
      replaceRecentBlockhash: true,
      commitment: "confirmed",
    }),
  ]);
  const verdict = judgeUpdate(
    probe,
    { rentTopUp: topUp, serviceFee: feeLamports, walletRent },
    { authorityAccount, recentFees, simulation: sim.value },
    s.config.maxPriorityFeeMicroLamports,
  );
  if (verdict instanceof ApiError) throw verdict;
  const latest = verdict.blockhash ?? await s.connection.getLatestBlockhash("confirmed");
  const sealed = retarget(
    probe,
    { unitLimit: verdict.unitLimit, microLamportsPerUnit: verdict.microLamports },
    latest.blockhash,
  );
  const messageHash = await sha256Hex(sealed.messageBytes);
  const data: TokenUpdateBuilt["data"] = {
    updateId: newUpdateId(),
    buildId: b.buildId,
    keyId: caller.keyId,
    purchaseId: b.purchaseId,
    mint,
    tokenProgram,
    authority: req.authority,
    changes: CHANGE_FIELDS.filter((f) => asked(req, f)),
    before: changes.before,
    after: changes.after,
    blockhash: latest.blockhash,
    lastValidBlockHeight: latest.lastValidBlockHeight,
    messageHash,
    unitLimit: verdict.unitLimit,
    microLamports: verdict.microLamports.toString(),
    feeLamports: feeLamports.toString(),
    feeUsd: solUsd === null ? 0 : s.config.fees.updateUsd,
    solUsd,
    treasury: s.treasury.toBase58(),
    reference: plan.reference?.toBase58() ?? null,
    rentTopUpLamports: topUp.toString(),
    totalLamports: verdict.costs.totalLamports,
  };
  const response = updateBuiltView(data, toBase64(sealed.wire), verdict.costs);
  await runCommand(updateCommand(caller, response), data, {
    store: s.store,
    clock: s.clock,
    idempotency: { scope: idempotency, status: 201 },
  });
  s.logger.log("info", "token update built", {
    updateId: data.updateId,
    buildId: b.buildId,
    keyId: caller.keyId,
    mint,
    changes: data.changes,
    unitLimit: verdict.unitLimit,
  });
  return response;
}

const asked = (req: UpdateRequest, f: typeof CHANGE_FIELDS[number]) =>
  f === "isMutable"
    ? req.makeImmutable
    : f === "metadataUri" || f === "updateAuthority"
    ? req[f] !== null
    : req[f] !== undefined;

/** The rent top-up, the fee (a price read only when updates are charged) and the plan. */
async function planOf(
  s: Services,
  mint: PublicKey,
  authority: PublicKey,
  state: TokenState,
  changes: UpdateChanges,
): Promise<{ plan: UpdatePlan; walletRent: bigint; solUsd: number | null }> {
  const rent = await clusterRent(s);
  const topUp = state.tokenProgram === "token-2022"
    ? rentTopUp(state, await minimumFor(s, rent.forSize, token2022LengthAfter(state, changes)))
    : 0n;
  const solUsd = updateCharged(s.config.fees)
    ? (await solPriceOr503(s.price, (d) => s.logger.log("warn", "price unavailable", d))).usd
    : null;
  const feeLamports = solUsd === null ? 0n : updateFeeLamports(s.config.fees, solUsd);
  const plan: UpdatePlan = {
    mint,
    authority,
    state,
    changes,
    rentTopUpLamports: topUp,
    treasury: s.treasury,
    reference: feeLamports > 0n ? newReference() : null,
    feeLamports,
  };
  return { plan, walletRent: rent.wallet, solUsd };
}

/** The first round trip and the decision on it; throws the refusal. */
async function readAndDecide(
  s: Services,
  mint: PublicKey,
  tokenProgram: "spl-token" | "token-2022",
  req: UpdateRequest,
): Promise<
  {
    state: TokenState;
    changes: UpdateChanges;
    authorityAccount: Awaited<ReturnType<typeof s.connection.getAccountInfo>>;
  }
> {
  const handed = [req.updateAuthority, req.mintAuthority, req.freezeAuthority]
    .filter((a): a is string => typeof a === "string")
    .filter((a, i, all) => all.indexOf(a) === i);
  const keys = [
    mint,
    ...(tokenProgram === "spl-token" ? [metadataPda(mint)] : []),
    new PublicKey(req.authority),
    ...handed.map((a) => new PublicKey(a)),
  ];
  const [infos, hosted] = await Promise.all([
    s.connection.getMultipleAccountsInfo(keys, "confirmed"),
    hostedAnswer(s, req.metadataUri),
  ]);
  const metaplex = tokenProgram === "spl-token" ? infos[1] : null;
  const at = tokenProgram === "spl-token" ? 2 : 1;
  const state = decodeTokenState(mint, tokenProgram, infos[0], metaplex);
  if (typeof state === "string") {
    throw new ApiError("invalid_request", "Request is invalid", { mint: state });
  }
  const handedAccounts = new Map(handed.map((a, i) => [a, infos[at + 1 + i]]));
  const changes = decideUpdate({ req, state, hosted, handedAccounts });
  if (isRejection(changes)) throw toApiError(changes);
  return { state, changes, authorityAccount: infos[at] };
}

/** The hosted document at a new metadataUri: its name and symbol (KV, no fetch). */
async function hostedAnswer(s: Services, uri: string | null): Promise<HostedAnswer> {
  if (uri === null) return null;
  const id = hostedDocumentId(uri);
  if (!id) return null;
  const doc = await read(kvReads(s.kv), hostedMetadataProjection, [id]);
  const { publicBaseUrl, hostedBaseUrl } = s.config;
  if (!doc) {
    return onOwnOrigin([publicBaseUrl, hostedBaseUrl ?? publicBaseUrl], uri) ? "missing" : null;
  }
  const hosted = JSON.parse(doc.json) as { name?: unknown; symbol?: unknown };
  return { name: String(hosted.name ?? ""), symbol: String(hosted.symbol ?? "") };
}

/** The rent-exempt minimum at a length: from the Rent sysvar's table, else asked of the RPC. */
async function minimumFor(
  s: Services,
  forSize: ((n: number) => bigint) | undefined,
  length: number,
): Promise<bigint> {
  return forSize
    ? forSize(length)
    : BigInt(await s.connection.getMinimumBalanceForRentExemption(length));
}

function updateCommand(
  caller: Caller,
  response: UpdateBuiltResponse,
): CommandHandler<
  TokenUpdateBuilt["data"],
  { keyOk: boolean },
  TokenUpdateBuilt,
  Rejection,
  UpdateBuiltResponse
> {
  return {
    load: async (tx) => ({
      keyOk: stillInForce(await read(tx, keysProjection, [caller.keyId]), caller),
    }),
    decide: (data, state) =>
      state.keyOk
        ? [{ type: "TokenUpdateBuilt", v: 1, data }]
        : reject("unauthorized", "The API key is no longer valid"),
    stream: (data) => `update-${data.updateId}`,
    expectedVersion: 0,
    respond: () => response,
  };
}
