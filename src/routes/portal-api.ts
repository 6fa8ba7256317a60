/**
 * The portal's JSON API (server side of the page at /): wallet sign-in, the access purchase, the
 * key's life (create, rotate, delete), its webhooks, and its recent builds (refresh one, update one). Authenticated by an HttpOnly, SameSite=Strict session
 * cookie; state-changing calls also require JSON and a same-origin Origin, so a cross-site form
 * or fetch can't ride on the session.
 */
import { Hono } from "hono";
import { deleteCookie, getCookie, setCookie } from "hono/cookie";
import type { MiddlewareHandler } from "hono";
import { z } from "zod";
import { deleteKey, issueKey, rotateKey } from "../domain/access/key-life.ts";
import { isKeyId } from "../keys/api-key.ts";
import { checkPurchase, quotePurchase, quoteTopUp } from "../domain/access/purchase.ts";
import { readBody } from "../http/body.ts";
import type { AppEnv } from "../http/env.ts";
import { ApiError } from "../kernel/errors.ts";
import { isAddress } from "../kernel/base58.ts";
import { byClientAddress, rateLimit } from "../http/rate-limit.ts";
import { bodyLimit, DEFAULT_BODY_LIMIT } from "../http/body-limit.ts";
import {
  completeSignIn,
  createChallenge,
  endSession,
  readSession,
  SESSION_TTL_MS,
} from "../portal/sign-in.ts";
import { walletPurchases } from "../portal/state.ts";
import {
  portalDeleteWebhook,
  portalListWebhooks,
  portalRegisterWebhook,
} from "../portal/webhooks.ts";
import {
  portalListBuilds,
  portalRefreshBuild,
  portalRelay,
  portalUpdateBuild,
  portalUpdateRecord,
} from "../portal/builds.ts";
import { RelayRequest } from "../creation/relay-request.ts";
import { readJson } from "../http/body.ts";
import { RegisterRequest } from "../webhooks/endpoints.ts";
import type { Services } from "../services.ts";

export const SESSION_COOKIE = "tcb_session";

const base58Address = z.string().refine(isAddress, "must be a base58 Solana address");

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

  app.use("/portal/api/*", bodyLimit(DEFAULT_BODY_LIMIT));
  app.use("/portal/api/*", async function portalHeaders(c, next) {
    await next();
    c.header("Cache-Control", "no-store");
  });
  app.use("/portal/api/*", sameOrigin({ origin }));
  app.use("/portal/api/*", portalRateLimit(s));
  signInRoutes(app, s, origin);
  accountRoutes(app, s);
  return app;
}

/** Calls that change state come from the portal's own page only. */
function sameOrigin(opts: { origin: string }): MiddlewareHandler<AppEnv> {
  const { origin } = opts;
  return async function sameOrigin(c, next) {
    if (c.req.method !== "GET" && c.req.method !== "HEAD") {
      // The portal's own origin is PUBLIC_BASE_URL's alone: the request URL is built from the
      // Host header, which the caller chooses.
      const o = c.req.header("origin");
      if (o !== undefined && o !== origin) {
        throw new ApiError("forbidden", "Cross-origin request refused");
      }
      // A browser says where a request comes from: only the page itself (or the user typing)
      // may change state. A same-site sibling origin is refused too.
      const site = c.req.header("sec-fetch-site");
      if (site !== undefined && site !== "same-origin" && site !== "none") {
        throw new ApiError("forbidden", "Cross-site request refused");
      }
      // A JSON body is what no plain HTML form can send cross-site; the page always sends one.
      if (!/^application\/json\b/i.test(c.req.header("content-type") ?? "")) {
        throw new ApiError("invalid_request", "Portal calls take a JSON body", {
          "content-type": "must be application/json",
        });
      }
    }
    await next();
  };
}

/**
 * Sign-in and quotes need no key, and each quote is a permanent event and an RPC call: calls that
 * change state are limited per client address and hour, like API keys are.
 */
function portalRateLimit(s: Services): MiddlewareHandler<AppEnv> {
  const limited = rateLimit({
    kv: s.kv,
    limit: s.config.limits.portalRequestsPerHour,
    clock: s.clock,
    subject: byClientAddress("portal"),
  });
  return async function portalRateLimit(c, next) {
    if (c.req.method === "GET" || c.req.method === "HEAD") return await next();
    return await limited(c, next);
  };
}

/** The signed-in wallet's session, or 401. */
function session(s: Services): MiddlewareHandler<AppEnv> {
  return async function session(c, next) {
    const sess = await readSession(s.kv, s.clock, getCookie(c, SESSION_COOKIE));
    if (!sess) throw new ApiError("unauthorized", "Connect your wallet and sign in first");
    c.set("portalWallet", sess.wallet);
    await next();
  };
}

/** Sign-in with the wallet (a challenge it signs), sign-out, and the session's state. */
function signInRoutes(app: Hono<AppEnv>, s: Services, origin: string) {
  const secure = s.config.publicBaseUrl.startsWith("https:");
  app.post("/portal/api/challenge", async (c) => {
    const { wallet } = await readBody(c, ChallengeBody);
    return c.json(await createChallenge(s.kv, s.clock, origin, wallet));
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

  // The page asks this first: being signed out is an answer here, not a 401 (which a browser
  // logs as an error on every signed-out visit).
  app.get("/portal/api/session", async (c) => {
    const sess = await readSession(s.kv, s.clock, getCookie(c, SESSION_COOKIE));
    return c.json({ wallet: sess?.wallet ?? null });
  });
}

/** The signed-in wallet's purchases, keys and webhook endpoints. */
function accountRoutes(app: Hono<AppEnv>, s: Services) {
  const signedIn = session(s);
  app.get("/portal/api/state", signedIn, async (c) => {
    const wallet = c.get("portalWallet");
    return c.json({ wallet, purchases: await walletPurchases(s, wallet) });
  });

  app.post("/portal/api/purchases", signedIn, async (c) => {
    const { currency } = await readBody(c, PurchaseBody);
    return c.json(await quotePurchase(s, c.get("portalWallet"), currency), 201);
  });

  /** Polled by the page after the wallet sent the payment: looks for it on chain by reference. */
  app.post("/portal/api/purchases/:id/check", signedIn, async (c) => {
    return c.json(await checkPurchase(s, c.req.param("id"), c.get("portalWallet")));
  });

  /** A new quote, at the current price, for what an underpaid purchase still owes. */
  app.post("/portal/api/purchases/:id/top-up", signedIn, async (c) => {
    return c.json(await quoteTopUp(s, c.req.param("id"), c.get("portalWallet")), 201);
  });

  app.post("/portal/api/purchases/:id/key", signedIn, async (c) => {
    return c.json(await issueKey(s, c.req.param("id"), c.get("portalWallet")), 201);
  });

  app.post("/portal/api/keys/:keyId/rotate", signedIn, async (c) => {
    return c.json(await rotateKey(s, keyIdParam(c.req.param("keyId")), c.get("portalWallet")));
  });

  app.post("/portal/api/keys/:keyId/delete", signedIn, async (c) => {
    return c.json(await deleteKey(s, keyIdParam(c.req.param("keyId")), c.get("portalWallet")));
  });

  // The key's webhook endpoints (docs/integrators.md); the secret is in the POST answer only.
  app.get("/portal/api/keys/:keyId/webhooks", signedIn, async (c) => {
    return c.json(
      await portalListWebhooks(s, keyIdParam(c.req.param("keyId")), c.get("portalWallet")),
    );
  });

  app.post("/portal/api/keys/:keyId/webhooks", signedIn, async (c) => {
    const body = await readBody(c, RegisterRequest);
    const keyId = keyIdParam(c.req.param("keyId"));
    return c.json(await portalRegisterWebhook(s, keyId, c.get("portalWallet"), body), 201);
  });

  // The key's newest builds, and the refresh of one a slow signer let expire.
  app.get("/portal/api/keys/:keyId/builds", signedIn, async (c) => {
    return c.json(
      await portalListBuilds(s, keyIdParam(c.req.param("keyId")), c.get("portalWallet")),
    );
  });

  app.post("/portal/api/keys/:keyId/builds/:mint/refresh", signedIn, async (c) => {
    const keyId = keyIdParam(c.req.param("keyId"));
    const mint = c.req.param("mint");
    return c.json(await portalRefreshBuild(s, keyId, c.get("portalWallet"), mint));
  });

  // An update of a confirmed build, signed by the session's wallet, relayed, and its record.
  app.post("/portal/api/keys/:keyId/builds/:mint/update", signedIn, async (c) => {
    const keyId = keyIdParam(c.req.param("keyId"));
    const body = await readJson(c);
    const built = await portalUpdateBuild(
      s,
      keyId,
      c.get("portalWallet"),
      c.req.param("mint"),
      body,
    );
    return c.json(built, 201);
  });

  app.post("/portal/api/keys/:keyId/transactions", signedIn, async (c) => {
    const keyId = keyIdParam(c.req.param("keyId"));
    const { transaction } = await readBody(c, RelayRequest);
    return c.json(await portalRelay(s, keyId, c.get("portalWallet"), transaction), 202);
  });

  app.get("/portal/api/keys/:keyId/builds/:mint/updates/:updateId", signedIn, async (c) => {
    const keyId = keyIdParam(c.req.param("keyId"));
    const { mint, updateId } = c.req.param();
    return c.json(await portalUpdateRecord(s, keyId, c.get("portalWallet"), mint, updateId));
  });

  app.post("/portal/api/keys/:keyId/webhooks/:id/delete", signedIn, async (c) => {
    const keyId = keyIdParam(c.req.param("keyId"));
    return c.json(await portalDeleteWebhook(s, keyId, c.get("portalWallet"), c.req.param("id")));
  });
}

/** A key id from the path; one that cannot be a key id is an unknown key (and no KV read). */
function keyIdParam(raw: string): string {
  if (!isKeyId(raw)) throw new ApiError("not_found", "key not found");
  return raw;
}
