/**
 * Verification of an update, on demand (GET /v1/tokens/{mint}/updates/{updateId}?signature=):
 * the confirmed transaction is read back and judged by `assessUpdate`, pure. It is the update's
 * when the update's authority signed it and its message is the one issued, compute-budget values
 * aside (a wallet may raise the priority fee): put back, it hashes to the recorded messageHash.
 * Then `TokenUpdateLanded` (it succeeded; the token is as `after` says, its fee as seen) or
 * `TokenUpdateFailed` (it landed with an error) is recorded once, with its webhook deliveries in
 * the same commit; afterwards the record is served without any RPC call.
 */
import type { Enqueue } from "../../events/store.ts";
import type {
  TokenUpdateFailed,
  TokenUpdateLanded,
  TokenUpdateSubmitted,
} from "../../events/types.ts";
import type { TokenView } from "../../events/token-update.ts";
import { keysProjection } from "../../projections/keys.ts";
import { type UpdateDoc, updateIsOpen, updatesProjection } from "../../projections/updates.ts";
import { kvReads, read } from "../commands/read.ts";
import { runCommand } from "../commands/run.ts";
import type { IdempotencyScope } from "../idempotency/record.ts";
import { ApiError } from "../kernel/errors.ts";
import { sha256Hex } from "../kernel/hashing.ts";
import type { Services } from "../services.ts";
import { updateOutcomeDeliveries } from "../webhooks/update-outcomes.ts";
import { retarget } from "../tokens/transaction.ts";
import type { CompiledToken } from "../tokens/transaction.ts";
import { type TokenUpdateRecord, updateRecord } from "../tokens/update-response.ts";

export interface LandedUpdate {
  signature: string;
  slot: number;
  blockTime: number | null;
  err: unknown;
  signers: string[];
  accountKeys: string[];
  /** The landed message's bytes with the update's compute budget and blockhash put back, hashed. */
  normalizedHash: string | null;
  preBalances: number[];
  postBalances: number[];
}

/** Pure: whether the landing is the update's, and what it records; a string: why it is not. */
export function assessUpdate(
  u: UpdateDoc,
  t: LandedUpdate,
): TokenUpdateLanded | TokenUpdateFailed | string {
  if (!t.signers.includes(u.authority)) return "the update's authority did not sign it";
  if (t.normalizedHash !== u.messageHash) {
    return "its instructions are not the ones issued for this update";
  }
  const base = { updateId: u.updateId, buildId: u.buildId, keyId: u.keyId, mint: u.mint };
  if (t.err !== null && t.err !== undefined) {
    return {
      type: "TokenUpdateFailed",
      v: 1,
      data: {
        ...base,
        signature: t.signature,
        reason: `landed with an error: ${JSON.stringify(t.err)}`,
      },
    };
  }
  const at = t.accountKeys.indexOf(u.treasury);
  const seen = at < 0 ? 0 : Math.max(0, t.postBalances[at] - t.preBalances[at]);
  return {
    type: "TokenUpdateLanded",
    v: 1,
    data: {
      ...base,
      signature: t.signature,
      slot: t.slot,
      blockTime: t.blockTime,
      feeLamportsSeen: String(seen),
      after: u.after,
      set: changedFields(u.before, u.after),
    },
  };
}

/** The fields of `after` that differ from `before`. */
export function changedFields(before: TokenView, after: TokenView): Partial<TokenView> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(after) as (keyof TokenView)[]) {
    if (after[k] !== before[k]) out[k] = after[k];
  }
  return out as Partial<TokenView>;
}

export async function verifyUpdate(
  s: Services,
  caller: { keyId: string },
  mint: string,
  updateId: string,
  signature: string | null,
): Promise<TokenUpdateRecord> {
  const u = await read(kvReads(s.kv), updatesProjection, [updateId]);
  if (!u || u.keyId !== caller.keyId || u.mint !== mint) {
    throw new ApiError("not_found", "No update of this key's token has that id", {});
  }
  // Without a signature, no RPC call: a relayed update's landing is its follow-up's to record.
  if (!updateIsOpen(u) || signature === null) return updateRecord(u);
  const landed = await readLandedUpdate(s, u, signature);
  if (!landed) return updateRecord(u);
  const verdict = assessUpdate(u, landed);
  if (typeof verdict === "string") {
    throw new ApiError("invalid_request", "Request is invalid", {
      signature: `is not a transaction of this update: ${verdict}`,
    });
  }
  await recordUpdateOutcome(s, updateId, verdict);
  return updateRecord((await read(kvReads(s.kv), updatesProjection, [updateId]))!);
}

/**
 * Records an update's outcome (or its submission) with its webhook deliveries in the same
 * commit, once: an outcome recorded first (a concurrent verification, the relay's follow-up)
 * wins, and an update already submitted is not submitted again.
 */
export async function recordUpdateOutcome(
  s: Services,
  updateId: string,
  event: TokenUpdateLanded | TokenUpdateFailed | TokenUpdateSubmitted,
  extra: {
    enqueue?: Enqueue[];
    idempotency?: { scope: IdempotencyScope | null; status: number; body: unknown };
  } = {},
): Promise<void> {
  await runCommand(
    {
      load: async (tx) => ({
        update: await read(tx, updatesProjection, [updateId]),
        key: await read(tx, keysProjection, [event.data.keyId]),
      }),
      decide: (_c, st) =>
        st.update &&
          (event.type === "TokenUpdateSubmitted"
            ? st.update.status === "built"
            : updateIsOpen(st.update))
          ? [event]
          : [],
      stream: () => `update-${updateId}`,
      react: (tx, events, st) => updateOutcomeDeliveries(s, tx, st.update!, events),
      respond: () => extra.idempotency?.body ?? null,
      enqueue: () => extra.enqueue ?? [],
    },
    {},
    { store: s.store, clock: s.clock, idempotency: extra.idempotency },
  );
}

export async function readLandedUpdate(
  s: Services,
  u: UpdateDoc,
  signature: string,
): Promise<LandedUpdate | null> {
  const tx = await s.connection.getTransaction(signature, {
    commitment: "confirmed",
    maxSupportedTransactionVersion: 0,
  });
  if (!tx || !tx.meta) return null;
  const msg = tx.transaction.message;
  const accountKeys = msg.staticAccountKeys.map((k) => k.toBase58());
  let normalizedHash: string | null = null;
  try {
    const { messageBytes } = retarget(
      { messageBytes: msg.serialize() } as CompiledToken,
      { unitLimit: u.unitLimit, microLamportsPerUnit: BigInt(u.microLamports) },
      u.blockhash,
    );
    normalizedHash = await sha256Hex(messageBytes);
  } catch { /* not laid out as an update: not this one */ }
  return {
    signature,
    slot: tx.slot,
    blockTime: tx.blockTime ?? null,
    err: tx.meta.err ?? null,
    signers: accountKeys.slice(0, msg.header.numRequiredSignatures),
    accountKeys,
    normalizedHash,
    preBalances: tx.meta.preBalances,
    postBalances: tx.meta.postBalances,
  };
}
