/**
 * GET /v1/openapi.json, the reference at /docs (Swagger UI, see ../openapi/reference-page.ts) and
 * the example client examples/create-token.ts, as text.
 * The page, the renderer and its start-up script come from this origin, and the CSP allows this
 * origin only: reading the docs, or trying a call, reaches nothing else.
 */
import { type Context, Hono } from "hono";
import type { AppEnv } from "../http/env.ts";
import { openApiDocument } from "../openapi/document.ts";
import {
  BUNDLE_CSS,
  BUNDLE_JS,
  BUNDLE_PATH,
  CSS_PATH,
  DOCS_HTML,
  INIT_JS,
  INIT_PATH,
} from "../openapi/reference-page.ts";
import type { Services } from "../services.ts";
// The integrator example, served as it is in the repository (one example, not a copy).
import EXAMPLE_CLIENT from "../../examples/create-token.ts" with { type: "text" };

export const EXAMPLE_PATH = "/examples/create-token.ts";

// The renderer sets styles from script (style elements and attributes): 'unsafe-inline' for
// styles only; scripts stay 'self'.
export const DOCS_CSP = "default-src 'none'; script-src 'self'; " +
  "style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data: blob:; " +
  "font-src 'self' data:; worker-src 'self' blob:; base-uri 'none'; form-action 'none'; " +
  "frame-ancestors 'none'";

export function docsRoutes(s: Services) {
  const app = new Hono<AppEnv>();
  // Made for this service's configuration: the limits and fees it states are the ones it applies.
  const doc = JSON.stringify(
    openApiDocument({ serverUrl: s.config.publicBaseUrl, config: s.config }),
  );

  app.get("/v1/openapi.json", (c) => {
    c.header("Content-Type", "application/json; charset=utf-8");
    return c.body(doc);
  });
  const page = (type: string, text: string, cache = "no-cache") => (c: Context<AppEnv>) => {
    c.header("Content-Type", type);
    c.header("Content-Security-Policy", DOCS_CSP);
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "no-referrer");
    c.header("Cache-Control", cache);
    return c.body(text);
  };
  app.get("/docs", page("text/html; charset=utf-8", DOCS_HTML));
  app.get("/docs/", (c) => c.redirect("/docs", 301));
  app.get(EXAMPLE_PATH, page("text/plain; charset=utf-8", EXAMPLE_CLIENT));
  app.get(INIT_PATH, page("text/javascript; charset=utf-8", INIT_JS));
  // Versioned URLs: the bytes under them never change.
  app.get(
    BUNDLE_PATH,
    page("text/javascript; charset=utf-8", BUNDLE_JS, "public, max-age=31536000, immutable"),
  );
  app.get(
    CSS_PATH,
    page("text/css; charset=utf-8", BUNDLE_CSS, "public, max-age=31536000, immutable"),
  );
  return app;
}
