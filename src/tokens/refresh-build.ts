/**
 * The refresh command behind POST /v1/tokens/{mint}/refresh: the shell around `decideRefresh`
 * (refresh.ts). It reads the build's record and events, rebuilds the same plan from what the
 * `TokenBuilt` recorded (same seed, reference and instructions), makes the build's one round trip
 * (build-token.ts `issue`: accounts, fee market, simulation with the latest blockhash) and commits
 * `BuildRefreshed` with the idempotency record and what `react` adds (the `token.refreshed`
 * webhook deliveries). The fee is the quote in force while it holds (QUOTE_TTL_S from its
 * making), else re-priced at the current SOL price.
 */
import { PublicKey } from "@solana/web3.js";
import type { Enqueue, StreamAppend, Tx } from "../../events/store.ts";
import type { BuildRefreshed, TokenBuilt } from "../../events/types.ts";
import {
  buildByMintProjection,
  type BuildDoc,
  buildsProjection,
} from "../../projections/builds.ts";
import { keysProjection } from "../../projections/keys.ts";
import { kvReads, read, readMany } from "../commands/read.ts";
import { type CommandHandler, runCommand } from "../commands/run.ts";
import type { IdempotencyScope } from "../idempotency/record.ts";
import { ApiError } from "../kernel/errors.ts";
import { type Rejection, toApiError } from "../kernel/rejection.ts";
import type { Services } from "../services.ts";
import { rentAndPrice, type Timed } from "./build-inputs.ts";
import { type BuildSettings, planBuild, shapeToken } from "./build-plan.ts";
import type { RefreshResponse } from "./build-response.ts";
import { type Caller, issue } from "./build-token.ts";
import { builtToken } from "./build-verdict.ts";
import {
  decideRefresh,
  quoteHolds,
  quoteInForce,
  type RefreshCall,
  refreshRefusal,
  type RefreshState,
  requestOf,
} from "./refresh.ts";
import { deriveAddresses } from "./transaction.ts";

const untimed: Timed = (_bucket, p) => p();

/**
 * What a refresh sets off in its own commit: its `token.refreshed` webhook deliveries
 * (src/webhooks/outcomes.ts). Passed in by the caller because webhooks sit above tokens.
 */
export type RefreshReaction = (
  tx: Tx,
  build: BuildDoc,
  events: BuildRefreshed[],
) => Promise<{ append: StreamAppend[]; enqueue: Enqueue[] }>;

export async function refreshBuild(
  s: Services,
  caller: Caller,
  mint: string,
  react: RefreshReaction,
  idempotency: IdempotencyScope | null = null,
): Promise<RefreshResponse> {
  // Another key's mint answers exactly like an unknown one, as GET /v1/tokens/{mint} does.
  const reads = kvReads(s.kv);
  const id = await read(reads, buildByMintProjection, [mint]);
  const found = id === null ? null : await read(reads, buildsProjection, [id]);
  const b = found?.keyId === caller.keyId ? found : null;
  if (!b) throw new ApiError("not_found", "No token built by this key has that mint", {});
  const refused = refreshRefusal(b);
  if (refused) throw toApiError(refused);

  const events = await s.store.readStream(`build-${b.buildId}`);
  const first = events.find((e) => e.type === "TokenBuilt") as TokenBuilt | undefined;
  const quote = quoteInForce(events);
  if (!first || !quote) throw new Error(`build ${b.buildId} has no TokenBuilt in its stream`);
  const d = first.data;
  const req = requestOf(d);
  const addresses = await deriveAddresses(req.payer, d.seed, req.recipient, req.tokenProgram);
  if (addresses.mint.toBase58() !== d.mint) throw new Error(`build ${b.buildId}: mint differs`);
  const shape = shapeToken(req, {
    seed: d.seed,
    reference: new PublicKey(d.reference),
    addresses,
    vanityTries: null,
  });

  const now = s.clock();
  const quoted = quoteHolds(quote, now, s.config.quoteTtlS);
  const { rent, price } = await rentAndPrice(s, shape, untimed);
  const solUsd = quoted ? quote.solUsd : price.usd;
  const settings: BuildSettings = {
    // The build's treasury: the reference's fee transfer goes where the first message sent it.
    treasury: new PublicKey(d.treasury),
    tokenUsd: quoted ? quote.feeUsd : s.config.fees.tokenUsd,
    maxPriorityFeeMicroLamports: s.config.maxPriorityFeeMicroLamports,
  };
  const plan = planBuild(shape, rent, solUsd, settings);
  const { verdict, latest, sealed, messageHash } = await issue(s, plan, settings, untimed);
  const built = builtToken(plan, verdict, latest, { wire: sealed.wire, messageHash });
  // requestOf carries no nonce account (refreshRefusal turns nonce builds away).
  if (latest.lastValidBlockHeight === null) throw new Error("a refresh is never on a nonce");

  const feeQuote = quoted ? "quoted" as const : "repriced" as const;
  const call: RefreshCall = {
    buildId: b.buildId,
    authenticated: caller,
    refreshed: {
      buildId: b.buildId,
      mint: d.mint,
      reference: d.reference,
      blockhash: latest.blockhash,
      lastValidBlockHeight: latest.lastValidBlockHeight,
      messageHash,
      feeLamports: plan.plan.feeLamports.toString(),
      feeUsd: plan.feeUsd,
      solUsd: plan.solUsd,
      feeQuote,
    },
  };
  const { result } = await runCommand(refreshCommand(caller, built.respond, react), call, {
    store: s.store,
    clock: s.clock,
    idempotency: { scope: idempotency, status: 200 },
  });
  s.logger.log("info", "build refreshed", {
    buildId: b.buildId,
    keyId: caller.keyId,
    mint: d.mint,
    feeQuote,
    refreshes: result.refreshes,
  });
  return result;
}

function refreshCommand(
  caller: Caller,
  respond: (buildId: number) => Omit<RefreshResponse, "feeQuote" | "refreshes">,
  react: RefreshReaction,
): CommandHandler<RefreshCall, RefreshState, BuildRefreshed, Rejection, RefreshResponse> {
  return {
    load: async (tx, cmd) => {
      const [key, build] = await readMany(
        tx,
        [[keysProjection, [caller.keyId]], [buildsProjection, [cmd.buildId]]] as const,
      );
      return { key, build: build && build.keyId === caller.keyId ? build : null };
    },
    decide: decideRefresh,
    stream: (cmd) => `build-${cmd.buildId}`,
    // `token.refreshed` is scheduled in the refresh's own commit, as outcomes are.
    react: (tx, events, { build }) => react(tx, build!, events),
    respond: (_events, state, cmd) => ({
      ...respond(cmd.buildId),
      feeQuote: cmd.refreshed.feeQuote,
      refreshes: (state.build?.refreshes ?? 0) + 1,
    }),
  };
}
