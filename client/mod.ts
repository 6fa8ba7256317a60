/**
 * The typed client for /v1: `openapi-fetch` over types that `openapi-typescript` generates from
 * the OpenAPI document the service serves (client/openapi.json -> client/schema.d.ts). Regenerate
 * both with `deno task client:generate`; tests/client fails while they are stale.
 *
 *   const api = createClient({ baseUrl: "http://127.0.0.1:8000", apiKey });
 *   const { data, error } = await api.GET("/v1/tokens", { params: { query: { limit: 10 } } });
 */
import createFetchClient, { type Client } from "openapi-fetch";
import type { components, operations, paths } from "./schema.d.ts";

export type { components, operations, paths };
export type Schemas = components["schemas"];
export type ApiClient = Client<paths>;

export interface ClientOptions {
  /** The service's base URL, without /v1. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer <apiKey>` on every call (public endpoints ignore it). */
  apiKey?: string;
  /** Another fetch (tests hand in the app's own). */
  fetch?: (request: Request) => Promise<Response>;
}

export function createClient(opts: ClientOptions): ApiClient {
  const client = createFetchClient<paths>({
    baseUrl: opts.baseUrl.replace(/\/+$/, ""),
    ...(opts.fetch ? { fetch: opts.fetch } : {}),
  });
  const apiKey = opts.apiKey;
  if (apiKey) {
    client.use({
      onRequest({ request }) {
        request.headers.set("Authorization", `Bearer ${apiKey}`);
        return request;
      },
    });
  }
  return client;
}
