/**
 * The relay command: accept only an exact message we built (or refreshed) for the calling key in
 * the last hour,
 * signed by its payer, before its blockhash expires; send it with preflight; record the submission
 * and schedule re-broadcasts in one commit with the idempotency record. An update's transaction
 * (POST /v1/tokens/{mint}/update) is matched the same way, by its message, and signed by the
 * update's authority; its submission and its follow-up job (update-follow.ts) go in one commit.
 */
import bs58 from "bs58";
import { Message, SendTransactionError } from "@solana/web3.js";
import { parseTxErrorText } from "../solana/tx-error.ts";
import { describeTransactionError, failureSummary } from "../solana/transaction-error.ts";
import { base64Decode } from "../kernel/encoding.ts";
import { sha256Hex } from "../kernel/hashing.ts";
import { ApiError } from "../kernel/errors.ts";
import type { IdempotencyScope } from "../idempotency/record.ts";
import { verifyEd25519 } from "../kernel/ed25519.ts";
import type { Services } from "../services.ts";
import { ownBuildBy } from "./build-records.ts";
import { clusterHasSeen } from "./chain-reader.ts";
import { recordLifecycle } from "./handle.ts";
import { REBROADCAST_MS } from "./watcher.ts";
import { followEnqueue } from "./update-follow.ts";
import { recordUpdateOutcome } from "./update-verify.ts";
import { kvReads, read } from "../commands/read.ts";
import {
  updateByMessageProjection,
  type UpdateDoc,
  updateIsOpen,
  updatesProjection,
} from "../../projections/updates.ts";
import { messageAccountKeys, splitWireTransaction, type WireTransaction } from "./wire.ts";

const RELAY_WINDOW_S = 3600;

export interface RelayAccepted {
  signature: string;
  mint: string;
  status: "submitted";
  /** Only for an update's transaction. */
  updateId?: string;
}

const refuse = (reason: string) =>
  new ApiError("invalid_request", `Transaction refused: ${reason}`, { transaction: reason });

export async function relayTransaction(
  s: Services,
  caller: { keyId: string },
  transaction: string,
  idem: IdempotencyScope | null,
): Promise<RelayAccepted> {
  const { bytes, wire } = decode(transaction);
  const hash = await sha256Hex(wire.message);
  const b = await ownBuildBy(s.kv, caller.keyId, "build_by_message", hash);
  if (!b) {
    const u = await ownUpdateByMessage(s.kv, caller.keyId, hash);
    if (u) return await relayUpdate(s, u, { bytes, wire, transaction }, idem);
    throw await unknownBuild(s, caller, wire);
  }
  // The hour runs from the build's last issue: a refresh issues every message of it anew (an
  // older one is accepted too, and the cluster refuses it once the mint exists or its blockhash
  // has expired). A durable nonce build is for signers slower than that: it is accepted while it
  // is open, which the watcher ends when its nonce moves on.
  const nonce = b.lastValidBlockHeight === null;
  const open = b.status === "built" || b.status === "submitted";
  if (
    !(nonce && open) &&
    Math.max(b.createdAt, b.refreshedAt ?? 0) + RELAY_WINDOW_S < Math.floor(s.clock() / 1000)
  ) {
    throw refuse("build is older than one hour");
  }
  if (
    wire.signatures.length !== 1 ||
    !(await verifyEd25519(b.payer, wire.message, wire.signatures[0]))
  ) {
    throw refuse("bad signature: not signed by the payer");
  }
  const signature = bs58.encode(wire.signatures[0]);
  const body: RelayAccepted = { signature, mint: b.mint, status: "submitted" };
  // A repeat of a relay already sent is answered the same, and sends nothing new.
  if (b.signature === signature && b.status !== "built") return body;

  // Side by side, so the relay stays at two round trips: a transaction the cluster already has
  // was sent by an earlier try whose commit failed (or by the caller), and sending it again would
  // only be refused as already processed.
  // A durable nonce has no height to check: the send's preflight refuses a spent nonce.
  const [height, seen] = await Promise.all([
    nonce ? null : s.connection.getBlockHeight("confirmed"),
    clusterHasSeen(s.connection, signature),
  ]);
  if (!seen && height !== null && height > b.lastValidBlockHeight!) {
    throw refuse(
      "expired: the blockhash is no longer valid; refresh the build (POST /v1/tokens/{mint}/refresh)",
    );
  }
  if (!seen) await send(s, bytes);
  await recordLifecycle(
    s,
    b.buildId,
    { type: "RecordSubmission", signature, via: "relay" },
    {
      enqueue: [{
        value: { kind: "rebroadcast", buildId: b.buildId, signature, transaction, attempt: 0 },
        delay: REBROADCAST_MS,
      }],
      // Nothing appended (a racing relay or the watcher recorded it first): the middleware
      // stores the answer instead.
      idempotency: { scope: idem, status: 202, body },
    },
  );
  return body;
}

async function ownUpdateByMessage(kv: Deno.Kv, keyId: string, hash: string) {
  const id = await read(kvReads(kv), updateByMessageProjection, [hash]);
  const u = id === null ? null : await read(kvReads(kv), updatesProjection, [id]);
  return u && u.keyId === keyId ? u : null;
}

/**
 * An update's exact message, signed by its authority, before its blockhash expires: sent with
 * preflight, its submission recorded and its follow-up queued in one commit.
 */
async function relayUpdate(
  s: Services,
  u: UpdateDoc,
  t: { bytes: Uint8Array; wire: WireTransaction; transaction: string },
  idem: IdempotencyScope | null,
): Promise<RelayAccepted> {
  if (
    t.wire.signatures.length !== 1 ||
    !(await verifyEd25519(u.authority, t.wire.message, t.wire.signatures[0]))
  ) {
    throw refuse("bad signature: not signed by the update's authority");
  }
  const signature = bs58.encode(t.wire.signatures[0]);
  const body: RelayAccepted = {
    signature,
    mint: u.mint,
    status: "submitted",
    updateId: u.updateId,
  };
  // A repeat (Ed25519 signs one message one way): the same answer, nothing sent again.
  if (u.signature === signature) return body;
  if (!updateIsOpen(u)) throw refuse(`update already ${u.status}`);
  const [height, seen] = await Promise.all([
    s.connection.getBlockHeight("confirmed"),
    clusterHasSeen(s.connection, signature),
  ]);
  if (!seen && height > u.lastValidBlockHeight) {
    throw refuse(
      "expired: the blockhash is no longer valid; build the update again " +
        "(POST /v1/tokens/{mint}/update)",
    );
  }
  if (!seen) await send(s, t.bytes);
  await recordUpdateOutcome(s, u.updateId, {
    type: "TokenUpdateSubmitted",
    v: 1,
    data: {
      updateId: u.updateId,
      buildId: u.buildId,
      keyId: u.keyId,
      mint: u.mint,
      signature,
      via: "relay",
    },
  }, {
    enqueue: [followEnqueue({
      updateId: u.updateId,
      signature,
      transaction: t.transaction,
      attempt: 0,
    })],
    idempotency: { scope: idem, status: 202, body },
  });
  return body;
}

/** The program of each instruction of a wire transaction (null where it can't be read). */
function programOf(bytes: Uint8Array): (index: number) => string | null {
  return (index) => {
    try {
      const m = Message.from(splitWireTransaction(bytes).message);
      const ix = m.instructions[index];
      return ix ? m.accountKeys[ix.programIdIndex]?.toBase58() ?? null : null;
    } catch {
      return null;
    }
  };
}

async function send(s: Services, bytes: Uint8Array): Promise<void> {
  try {
    await s.connection.sendRawTransaction(bytes, {
      skipPreflight: false,
      preflightCommitment: "confirmed",
      maxRetries: 0,
    });
  } catch (e) {
    if (!(e instanceof SendTransactionError)) throw e;
    // Landed between the status check and the send: it is sent.
    if (/AlreadyProcessed|already been processed/.test(e.message)) return;
    // web3.js keeps the node's text of the error, not its JSON: read it back from the text.
    const text = e.transactionError.message ?? e.message;
    const logs = e.logs ?? [];
    const error = parseTxErrorText(text);
    const failed = describeTransactionError(error ?? text, programOf(bytes), logs);
    const reason = failureSummary(failed);
    throw new ApiError("simulation_failed", `The network refused the transaction: ${reason}`, {
      transaction: reason,
      instruction: failed,
      error,
      logs,
    });
  }
}

/** The most bytes a Solana transaction may have on the wire (PACKET_DATA_SIZE). */
const MAX_TRANSACTION_BYTES = 1232;

function decode(transaction: string): { bytes: Uint8Array; wire: WireTransaction } {
  try {
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(transaction)) throw new Error("not base64");
    const bytes = base64Decode(transaction);
    if (bytes.length > MAX_TRANSACTION_BYTES) {
      throw new Error(`over the ${MAX_TRANSACTION_BYTES} bytes a transaction may have`);
    }
    return { bytes, wire: splitWireTransaction(bytes) };
  } catch (e) {
    throw refuse(`not a legacy transaction in base64 (${(e as Error).message})`);
  }
}

/** Names the likelier cause: one of this key's mints in a message we didn't build. */
async function unknownBuild(
  s: Services,
  caller: { keyId: string },
  wire: WireTransaction,
): Promise<ApiError> {
  let keys: string[] = [];
  try {
    keys = messageAccountKeys(wire.message);
  } catch { /* unreadable message: plain unknown */ }
  // At most 1232 bytes (decode), so at most 38 keys; each is looked up once.
  for (const k of new Set(keys)) {
    if (await ownBuildBy(s.kv, caller.keyId, "build_by_mint", k)) {
      return refuse("altered message: it differs from the transaction built for this mint");
    }
  }
  return refuse("unknown build: no transaction with this message was built for this key");
}
