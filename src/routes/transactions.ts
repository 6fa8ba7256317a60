/**
 * POST /v1/transactions (relay) and GET /v1/transactions/{signature} (verify).
 *
 * The relay accepts only the exact message we built for the calling key in the last hour, signed
 * by its payer, before its blockhash expires. Verification reads the confirmed transaction back
 * and checks mint, full supply and fee; a final answer is recorded once and then served from the
 * projection without touching the RPC.
 */
import { Hono } from "hono";
import bs58 from "bs58";
import { SendTransactionError } from "@solana/web3.js";
import { z } from "zod";
import { projectionKey } from "../../events/keys.ts";
import { sha256Hex } from "../../events/hash.ts";
import type { BuildDoc } from "../../projections/builds.ts";
import { assessCreation } from "../creation/assess.ts";
import { readLanded } from "../creation/chain-reader.ts";
import { recordLifecycle } from "../creation/handle.ts";
import { REBROADCAST_MS } from "../creation/watcher.ts";
import { messageAccountKeys, splitWireTransaction } from "../creation/wire.ts";
import { readBody } from "../http/body.ts";
import type { AppEnv } from "../http/env.ts";
import { ApiError } from "../http/errors.ts";
import { recordFor } from "../http/idempotency.ts";
import { verifyEd25519 } from "../portal/sign-in.ts";
import type { Services } from "../services.ts";

const RELAY_WINDOW_S = 3600;
const RelayBody = z.strictObject({
  transaction: z.string().min(1, "base64 of the signed transaction").max(4096),
});

const refuse = (reason: string) =>
  new ApiError("invalid_request", `Transaction refused: ${reason}`, { transaction: reason });

export function transactionRoutes(s: Services) {
  const app = new Hono<AppEnv>();
  const build = async (id: number | null) =>
    id === null ? null : (await s.kv.get<BuildDoc>(projectionKey("build", [id]))).value;
  const byIndex = async (index: string, k: string) =>
    (await s.kv.get<number>(projectionKey(index, [k]))).value;

  app.post("/v1/transactions", async (c) => {
    const key = c.get("key");
    const { transaction } = await readBody(c, RelayBody);
    let bytes: Uint8Array;
    let wire;
    try {
      if (!/^[A-Za-z0-9+/]+={0,2}$/.test(transaction)) throw new Error("not base64");
      bytes = Uint8Array.from(atob(transaction), (ch) => ch.charCodeAt(0));
      wire = splitWireTransaction(bytes);
    } catch (e) {
      throw refuse(`not a legacy transaction in base64 (${(e as Error).message})`);
    }

    const hash = await sha256Hex(wire.message);
    const b = await build(await byIndex("build_by_message", hash));
    if (!b || b.keyId !== key.keyId) {
      // Name the likelier cause: one of this key's mints in a message we didn't build.
      let keys: string[] = [];
      try {
        keys = messageAccountKeys(wire.message);
      } catch { /* unreadable message: plain unknown */ }
      for (const k of keys) {
        const other = await build(await byIndex("build_by_mint", k));
        if (other && other.keyId === key.keyId) {
          throw refuse("altered message: it differs from the transaction built for this mint");
        }
      }
      throw refuse("unknown build: no transaction with this message was built for this key");
    }
    if (b.createdAt + RELAY_WINDOW_S < Math.floor(s.clock() / 1000)) {
      throw refuse("build is older than one hour");
    }
    if (
      wire.signatures.length !== 1 ||
      !(await verifyEd25519(b.payer, wire.message, wire.signatures[0]))
    ) {
      throw refuse("bad signature: not signed by the payer");
    }
    const signature = bs58.encode(wire.signatures[0]);
    const body = { signature, mint: b.mint, status: "submitted" as const };
    // A repeat of a relay already sent is answered the same, and sends nothing new.
    if (b.signature === signature && b.status !== "built") return c.json(body, 202);

    const height = await s.connection.getBlockHeight("confirmed");
    if (height > b.lastValidBlockHeight) {
      throw refuse("expired: the blockhash is no longer valid; build again");
    }
    try {
      await s.connection.sendRawTransaction(bytes, {
        skipPreflight: false,
        preflightCommitment: "confirmed",
        maxRetries: 0,
      });
    } catch (e) {
      if (e instanceof SendTransactionError) {
        const logs = e.logs ?? [];
        throw new ApiError("simulation_failed", "The network refused the transaction", {
          transaction: e.message.split("\n")[0],
          logs,
        });
      }
      throw e;
    }
    await recordLifecycle(s, b.buildId, { type: "RecordSubmission", signature, via: "relay" }, {
      enqueue: [{
        value: { kind: "rebroadcast", buildId: b.buildId, signature, transaction, attempt: 0 },
        delay: REBROADCAST_MS,
      }],
    });
    const idem = c.get("idempotency");
    if (idem) {
      const [rec] = recordFor(idem, 202, body);
      await s.kv.set(rec.key, rec.value, { expireIn: rec.expireIn });
      idem.stored = true;
    }
    return c.json(body, 202);
  });

  app.get("/v1/transactions/:signature", async (c) => {
    const key = c.get("key");
    const signature = c.req.param("signature");
    let decoded: Uint8Array | null = null;
    try {
      decoded = bs58.decode(signature);
    } catch { /* reported below */ }
    if (!decoded || decoded.length !== 64) {
      throw new ApiError("invalid_request", "Not a transaction signature", {
        signature: "base58 of 64 bytes",
      });
    }
    let b = await build(await byIndex("build_by_signature", signature));
    if (b && b.keyId !== key.keyId) b = null;
    if (
      b && b.signature === signature && ["confirmed", "failed", "unverified"].includes(b.status)
    ) {
      return c.json(verification(b, signature));
    }

    const landed = await readLanded(s.connection, signature);
    if (!landed) {
      if (!b) throw new ApiError("not_found", "No such transaction on chain or in our records");
      const view = verification(b, signature);
      if (view.status === "pending") {
        const height = await s.connection.getBlockHeight("confirmed");
        if (height > b.lastValidBlockHeight) view.status = "failed";
      }
      return c.json(view);
    }
    if (!b) {
      for (const k of landed.accountKeys) {
        const cand = await build(await byIndex("build_by_reference", k)) ??
          await build(await byIndex("build_by_mint", k));
        if (cand && cand.keyId === key.keyId) {
          b = cand;
          break;
        }
      }
    }
    if (!b) {
      // Landed, but not one of this key's builds: nothing of ours to vouch for.
      return c.json({
        signature,
        status: "unverified",
        mint: null,
        supplyRaw: "0",
        decimals: null,
        recipient: null,
        feeVerified: false,
        fee: { amount: "0", currency: "SOL" },
      });
    }
    const { build: after } = await recordLifecycle(s, b.buildId, {
      type: "RecordLanding",
      signature,
      slot: landed.slot,
      blockTime: landed.blockTime,
      assessment: assessCreation(b, landed),
    });
    return c.json(verification(after ?? b, signature));
  });

  return app;
}

function verification(b: BuildDoc, signature: string) {
  const status = b.signature !== signature && b.status !== "built" && b.status !== "submitted"
    ? "unverified"
    : b.status === "confirmed" || b.status === "failed" || b.status === "unverified"
    ? b.status
    : b.status === "expired"
    ? "failed"
    : "pending";
  return {
    signature,
    status: status as "pending" | "confirmed" | "failed" | "unverified",
    mint: b.mint,
    supplyRaw: b.supplyRaw,
    decimals: b.decimals,
    recipient: b.recipient,
    feeVerified: status === "confirmed" && b.feeVerified,
    fee: { amount: b.feeLamportsSeen ?? b.feeLamports, currency: "SOL" as const },
  };
}
