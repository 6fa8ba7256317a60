/**
 * GET /v1/openapi.json and the human page at /docs. The page and its script are served from
 * here and its CSP allows this origin only, so reading the docs loads nothing from elsewhere.
 */
import { type Context, Hono } from "hono";
import type { AppEnv } from "../http/env.ts";
import { openApiDocument } from "../openapi/document.ts";
import { DOCS_CSS, DOCS_HTML, DOCS_JS } from "../openapi/page.ts";
import type { Services } from "../services.ts";

const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; " +
  "connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; " +
  "frame-ancestors 'none'";

export function docsRoutes(s: Services) {
  const app = new Hono<AppEnv>();
  const doc = JSON.stringify(openApiDocument({ serverUrl: s.config.publicBaseUrl }));

  app.get("/v1/openapi.json", (c) => {
    c.header("Content-Type", "application/json; charset=utf-8");
    return c.body(doc);
  });
  const page = (type: string, text: string) => (c: Context<AppEnv>) => {
    c.header("Content-Type", type);
    c.header("Content-Security-Policy", CSP);
    c.header("X-Content-Type-Options", "nosniff");
    c.header("Referrer-Policy", "no-referrer");
    c.header("Cache-Control", "no-cache");
    return c.body(text);
  };
  app.get("/docs", page("text/html; charset=utf-8", DOCS_HTML));
  app.get("/docs/", (c) => c.redirect("/docs", 301));
  app.get("/docs/docs.js", page("text/javascript; charset=utf-8", DOCS_JS));
  app.get("/docs/docs.css", page("text/css; charset=utf-8", DOCS_CSS));
  return app;
}
