import type { Hono } from "hono";
import type { KeyDoc } from "../../projections/keys.ts";
import type { IdempotencyScope } from "../idempotency/record.ts";
import type { Services } from "../services.ts";

/** What middleware hands to handlers through the Hono context. */
export interface AppEnv {
  Variables: {
    requestId: string;
    key: KeyDoc;
    idempotency: IdempotencyScope | null;
    portalWallet: string;
    /** The request body, read once by `bodyLimit` when first asked for (src/http/body-limit.ts). */
    body: { bytes(): Promise<Uint8Array> } | undefined;
  };
}

/** One area's routes, built from the services; the app mounts the groups it is given. */
export type RouteGroup = (s: Services) => Hono<AppEnv>;
