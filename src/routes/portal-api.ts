/**
 * The portal's JSON API (server side of the page at /): wallet sign-in, the access purchase and
 * the key's life (create, rotate, delete). Authenticated by an HttpOnly, SameSite=Strict session
 * cookie; state-changing calls also require JSON and a same-origin Origin, so a cross-site form
 * or fetch can't ride on the session.
 */
import { Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { MiddlewareHandler } from "hono";
import { PublicKey } from "@solana/web3.js";
import { z } from "zod";
import { projectionKey } from "../../events/keys.ts";
import { type KeyDoc, keyStatus } from "../../projections/keys.ts";
import type { PurchaseDoc } from "../../projections/purchases.ts";
import { handleAccess } from "../domain/access/handle.ts";
import {
  buildPaymentTransaction,
  findPayment,
  newReference,
  type PaymentRequest,
} from "../domain/access/payment.ts";
import { readBody } from "../http/body.ts";
import type { AppEnv } from "../http/env.ts";
import { ApiError } from "../http/errors.ts";
import { formatKey, macSecret, newKeyId, newSecret } from "../keys/api-key.ts";
import {
  completeSignIn,
  createChallenge,
  endSession,
  readSession,
  SESSION_TTL_MS,
} from "../portal/sign-in.ts";
import { usdToLamports } from "../pricing/price-source.ts";
import { solPriceOr503 } from "../pricing/quote.ts";
import type { Services } from "../services.ts";
import { toHex } from "../../events/hash.ts";
import { usageToday } from "./me.ts";

export const SESSION_COOKIE = "tcb_session";

const base58Address = z.string().refine((s) => {
  try {
    return new PublicKey(s).toBase58() === s;
  } catch {
    return false;
  }
}, "must be a base58 Solana address");

const ChallengeBody = z.strictObject({ wallet: base58Address });
const SessionBody = z.strictObject({
  wallet: base58Address,
  nonce: z.string().regex(/^[0-9a-f]{32}$/, "invalid nonce"),
  signature: z.string().min(1).max(120),
});
const PurchaseBody = z.strictObject({ currency: z.enum(["SOL", "STABLECOIN"]).default("SOL") });

export function portalApiRoutes(s: Services) {
  const app = new Hono<AppEnv>();
  const origin = new URL(s.config.publicBaseUrl).origin;
  const secure = s.config.publicBaseUrl.startsWith("https:");

  app.use("/portal/api/*", async function portalHeaders(c, next) {
    await next();
    c.header("Cache-Control", "no-store");
  });

  const sameOrigin: MiddlewareHandler<AppEnv> = async function sameOrigin(c, next) {
    if (c.req.method !== "GET" && c.req.method !== "HEAD") {
      const o = c.req.header("origin");
      const own = new URL(c.req.url).origin;
      if (o !== undefined && o !== origin && o !== own) {
        throw new ApiError("forbidden", "Cross-origin request refused");
      }
      if (c.req.header("sec-fetch-site") === "cross-site") {
        throw new ApiError("forbidden", "Cross-site request refused");
      }
    }
    await next();
  };
  app.use("/portal/api/*", sameOrigin);

  const session: MiddlewareHandler<AppEnv> = async function session(c, next) {
    const sess = await readSession(s.kv, s.clock, getCookie(c, SESSION_COOKIE));
    if (!sess) throw new ApiError("unauthorized", "Connect your wallet and sign in first");
    c.set("portalWallet", sess.wallet);
    await next();
  };

  app.post("/portal/api/challenge", async (c) => {
    const { wallet } = await readBody(c, ChallengeBody);
    const host = new URL(s.config.publicBaseUrl).host;
    return c.json(await createChallenge(s.kv, s.clock, host, wallet));
  });

  app.post("/portal/api/session", async (c) => {
    const body = await readBody(c, SessionBody);
    const done = await completeSignIn(s.kv, s.clock, body);
    if (!done) {
      throw new ApiError(
        "unauthorized",
        "Sign-in failed: the signature, nonce or wallet did not check out",
        {
          signature:
            "not a valid signature of the sign-in message by this wallet, or the nonce expired",
        },
      );
    }
    setCookie(c, SESSION_COOKIE, done.sessionId, {
      httpOnly: true,
      secure,
      sameSite: "Strict",
      path: "/",
      maxAge: SESSION_TTL_MS / 1000,
    });
    return c.json({ wallet: done.session.wallet, expiresAt: done.session.expiresAt });
  });

  app.post("/portal/api/logout", async (c) => {
    const id = getCookie(c, SESSION_COOKIE);
    if (id) await endSession(s.kv, id);
    deleteCookie(c, SESSION_COOKIE, { path: "/" });
    return c.json({ ok: true });
  });

  app.get("/portal/api/state", session, async (c) => {
    const wallet = c.get("portalWallet");
    return c.json({ wallet, purchases: await walletPurchases(s, wallet) });
  });

  app.post("/portal/api/purchases", session, async (c) => {
    const wallet = c.get("portalWallet");
    const { currency } = await readBody(c, PurchaseBody);
    const usd = s.config.fees.accessUsd;
    let amount: bigint;
    let solUsd: number | null = null;
    if (currency === "SOL") {
      solUsd = (await solPriceOr503(s.price)).usd;
      amount = usdToLamports(usd, solUsd);
    } else {
      if (!s.config.stablecoin.mint) {
        throw new ApiError("invalid_request", "No stablecoin is configured on this service", {
          currency: "use SOL",
        });
      }
      amount = BigInt(Math.round(usd * 10 ** s.config.stablecoin.decimals));
    }
    const purchaseId = toHex(crypto.getRandomValues(new Uint8Array(8)));
    const request = paymentRequest(s, {
      wallet,
      currency,
      amount: amount.toString(),
      reference: newReference().toBase58(),
    });
    const built = await buildPaymentTransaction(s.connection, request);
    await handleAccess(s.store, {
      type: "QuotePurchase",
      purchaseId,
      wallet,
      currency,
      amount: amount.toString(),
      usd,
      solUsd,
      reference: request.reference.toBase58(),
      treasury: s.treasury.toBase58(),
      lastValidBlockHeight: built.lastValidBlockHeight,
    });
    return c.json({
      purchaseId,
      currency,
      amount: amount.toString(),
      usd,
      reference: request.reference.toBase58(),
      treasury: s.treasury.toBase58(),
      transaction: built.transaction,
      lastValidBlockHeight: built.lastValidBlockHeight,
    }, 201);
  });

  /** Polled by the page after the wallet sent the payment: looks for it on chain by reference. */
  app.post("/portal/api/purchases/:id/check", session, async (c) => {
    const p = await ownPurchase(s, c.req.param("id"), c.get("portalWallet"));
    if (p.status === "paid") {
      return c.json({ purchaseId: p.purchaseId, status: "paid", signature: p.signature });
    }
    const found = await findPayment(s.connection, paymentRequest(s, p));
    if (!found) return c.json({ purchaseId: p.purchaseId, status: "pending", signature: null });
    await handleAccess(s.store, { type: "RecordPayment", purchaseId: p.purchaseId, ...found });
    return c.json({ purchaseId: p.purchaseId, status: "paid", signature: found.signature });
  });

  app.post("/portal/api/purchases/:id/key", session, async (c) => {
    const wallet = c.get("portalWallet");
    const p = await ownPurchase(s, c.req.param("id"), wallet);
    const keyId = newKeyId();
    const secret = newSecret();
    await handleAccess(s.store, {
      type: "IssueKey",
      purchaseId: p.purchaseId,
      wallet,
      keyId,
      secretMac: await macSecret(s.pepper, secret),
    });
    return c.json(
      { keyId, apiKey: formatKey(s.config.keyPrefix, keyId, secret), shownOnce: true },
      201,
    );
  });

  app.post("/portal/api/keys/:keyId/rotate", session, async (c) => {
    const keyId = c.req.param("keyId");
    const secret = newSecret();
    await handleAccess(s.store, {
      type: "RotateKey",
      keyId,
      wallet: c.get("portalWallet"),
      secretMac: await macSecret(s.pepper, secret),
    });
    return c.json({ keyId, apiKey: formatKey(s.config.keyPrefix, keyId, secret), shownOnce: true });
  });

  app.post("/portal/api/keys/:keyId/delete", session, async (c) => {
    const keyId = c.req.param("keyId");
    await handleAccess(s.store, { type: "DeleteKey", keyId, wallet: c.get("portalWallet") });
    return c.json({ keyId, status: "deleted" });
  });

  return app;
}

function paymentRequest(
  s: Services,
  p: Pick<PurchaseDoc, "wallet" | "currency" | "amount" | "reference">,
): PaymentRequest {
  return {
    wallet: new PublicKey(p.wallet),
    treasury: s.treasury,
    currency: p.currency,
    amount: BigInt(p.amount),
    reference: new PublicKey(p.reference),
    stablecoin: s.config.stablecoin.mint
      ? { mint: new PublicKey(s.config.stablecoin.mint), decimals: s.config.stablecoin.decimals }
      : undefined,
  };
}

async function ownPurchase(s: Services, id: string, wallet: string): Promise<PurchaseDoc> {
  const p = /^[0-9a-f]{16}$/.test(id)
    ? (await s.kv.get<PurchaseDoc>(projectionKey("purchase", [id]))).value
    : null;
  // Another wallet's purchase is "not found", so ids can't be probed.
  if (!p || p.wallet !== wallet) throw new ApiError("not_found", "purchase not found");
  return p;
}

async function walletPurchases(s: Services, wallet: string) {
  const out = [];
  for await (
    const e of s.kv.list<{ purchaseId: string }>({
      prefix: projectionKey("wallet_purchase", [wallet]),
    })
  ) {
    const p = (await s.kv.get<PurchaseDoc>(projectionKey("purchase", [e.value.purchaseId]))).value;
    if (!p) continue;
    const key = p.activeKeyId
      ? (await s.kv.get<KeyDoc>(projectionKey("key", [p.activeKeyId]))).value
      : null;
    out.push({
      purchaseId: p.purchaseId,
      status: p.status,
      currency: p.currency,
      amount: p.amount,
      usd: p.usd,
      signature: p.signature,
      quotedAt: p.quotedAt,
      paidAt: p.paidAt,
      key: key
        ? {
          keyId: key.keyId,
          status: keyStatus(key),
          createdAt: key.createdAt,
          rotatedAt: key.rotatedAt,
          usageToday: await usageToday(s, key.keyId, key.purchaseId),
        }
        : null,
    });
  }
  return out.sort((a, b) => b.quotedAt - a.quotedAt);
}
