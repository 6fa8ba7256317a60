/**
 * The Solana Action (src/actions/create-token.ts): `GET /actions.json`, and `GET`, `OPTIONS` and
 * `POST /v1/actions/create-token`. Only these paths send the CORS headers and `X-Action-Version`
 * / `X-Blockchain-Ids` the Actions spec asks for (any wallet's page calls them); the keyed API
 * sends none. Errors here are the spec's ActionError, `{ message }`, with the status and headers
 * (Retry-After) of the API's error.
 */
import { Hono, type MiddlewareHandler } from "hono";
import type { ActionsJson } from "@solana/actions-spec";
import type { AppEnv } from "../http/env.ts";
import { bodyLimit, DEFAULT_BODY_LIMIT } from "../http/body-limit.ts";
import { readJson } from "../http/body.ts";
import { byClientAddress, rateLimit } from "../http/rate-limit.ts";
import { ApiError } from "../kernel/errors.ts";
import type { Services } from "../services.ts";
import {
  ACTION_PATH,
  actionErrorMessage,
  actionForm,
  createTokenAction,
  ICON_PATH,
} from "../actions/create-token.ts";
import { blockchainId } from "../actions/chain-id.ts";
import { defaultImagePng } from "../actions/default-image.ts";

/** The spec version these responses follow (@solana/actions-spec 2.4). */
export const ACTION_VERSION = "2.4";

export function actionsRoutes(s: Services) {
  const app = new Hono<AppEnv>();
  const headers = actionHeaders(s);
  app.use("/actions.json", headers);
  app.use(`${ACTION_PATH}`, headers);
  app.use(`${ACTION_PATH}/*`, headers);

  app.get("/actions.json", (c) => {
    const rules: ActionsJson = {
      rules: [
        { pathPattern: "/create-token", apiPath: ACTION_PATH },
        { pathPattern: `${ACTION_PATH}`, apiPath: ACTION_PATH },
      ],
    };
    return c.json(rules);
  });
  // The page a shared `/create-token` link opens in a browser without a blink client: the
  // portal's section on the Action (blink clients map the link through actions.json instead).
  app.get("/create-token", (c) => c.redirect("/#blink-heading", 302));
  app.get(ACTION_PATH, (c) => c.json(actionForm(s)));
  app.get(ICON_PATH, (c) => {
    c.header("Content-Type", "image/png");
    c.header("Cache-Control", "public, max-age=86400");
    return c.body(defaultImagePng().slice().buffer);
  });
  // Answered by `actionHeaders`; the routes make OPTIONS a method these paths serve.
  app.options(ACTION_PATH, (c) => c.body(null, 204));
  app.options("/actions.json", (c) => c.body(null, 204));

  const perAddress = rateLimit({
    kv: s.kv,
    limit: s.config.limits.actionsRequestsPerIpPerHour,
    clock: s.clock,
    subject: byClientAddress("actions"),
  });
  app.post(ACTION_PATH, bodyLimit(DEFAULT_BODY_LIMIT), perAddress, async (c) => {
    const body = await readJson(c);
    const account = typeof body === "object" && body !== null && !Array.isArray(body)
      ? (body as Record<string, unknown>).account
      : undefined;
    return c.json(await createTokenAction(s, c.req.query(), account), 200);
  });
  return app;
}

/**
 * The Actions headers and CORS on every answer of these paths, errors included; an error of the
 * API's shape becomes an ActionError here.
 */
function actionHeaders(s: Services): MiddlewareHandler<AppEnv> {
  return async function actionHeaders(c, next) {
    // A preflight is answered here, with the same headers as every other answer.
    if (c.req.method === "OPTIONS") c.res = c.body(null, 204);
    else await next();
    const e = c.error;
    if (e instanceof ApiError) {
      // Setting `c.res` keeps the headers already on the answer (Retry-After).
      c.res = c.json({ message: actionErrorMessage(e) }, e.status as 400);
    }
    for (const [k, v] of Object.entries(ACTIONS_CORS)) c.header(k, v);
    c.header("X-Action-Version", ACTION_VERSION);
    c.header("X-Blockchain-Ids", await blockchainId(s));
  };
}

/** The spec's CORS: every answer, preflights included, so any page's wallet client passes. */
const ACTIONS_CORS = {
  "Access-Control-Allow-Origin": "*",
  "Access-Control-Allow-Methods": "GET,POST,PUT,OPTIONS",
  "Access-Control-Allow-Headers":
    "Content-Type, Authorization, Content-Encoding, Accept-Encoding, X-Action-Version, " +
    "X-Blockchain-Ids",
  "Access-Control-Expose-Headers": "X-Action-Version, X-Blockchain-Ids",
};
