/**
 * The portal page at `/` and its static assets under `/portal/assets/`: plain files from
 * `src/portal/page/`, read as they are. `app.js` is the committed bundle of the page's checked
 * JavaScript in `src/portal/browser/` (`deno task portal:build`), so serving needs no build step.
 *
 * Everything is served with a CSP that allows only our own origin and no inline script, so an
 * injected string can't run code on the page that holds the API key for a moment.
 */
import { Hono } from "hono";
import type { Context } from "hono";
import type { AppEnv } from "../http/env.ts";
import { sha256Hex } from "../kernel/hashing.ts";
import type { Services } from "../services.ts";
import { ACTION_PATH } from "../actions/create-token.ts";

export const PORTAL_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "object-src 'none'",
].join("; ");

export const PORTAL_SECURITY_HEADERS: Record<string, string> = {
  "Content-Security-Policy": PORTAL_CSP,
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  // Older browsers ignore frame-ancestors; this keeps the page out of frames there too.
  "X-Frame-Options": "DENY",
  "Permissions-Policy": "camera=(), microphone=(), geolocation=(), payment=()",
};

/** The only files served: a fixed list, so no request path ever reaches the file system. */
export const PORTAL_ASSETS: Record<string, string> = {
  "app.js": "text/javascript; charset=utf-8",
  "styles.css": "text/css; charset=utf-8",
};

const PAGE_DIR = new URL("../portal/page/", import.meta.url);

interface Asset {
  body: Uint8Array;
  type: string;
  etag: string;
}

const NETWORK_PLACEHOLDER = "__TCB_NETWORK__";
const CURRENCIES_PLACEHOLDER = "__TCB_CURRENCIES__";
const ACTION_URL_PLACEHOLDER = "__TCB_ACTION_URL__";

/** What the page is told in <meta>s: the chain, and the currencies a purchase can be paid in. */
interface PageFacts {
  network: string;
  currencies: string;
  /** The Solana Action's URL, for the blink the page tells operators to share. */
  actionUrl: string;
}

async function loadAsset(name: string, type: string, facts: PageFacts): Promise<Asset> {
  let body = await Deno.readFile(new URL(name, PAGE_DIR));
  if (name === "index.html") {
    // The network goes into a <meta>, not a script, so the page knows which chain to ask the
    // wallet for even while the price feed (and so /v1/pricing) is down; the currencies, so it
    // offers only those configured.
    const html = new TextDecoder().decode(body).replaceAll(NETWORK_PLACEHOLDER, facts.network)
      .replaceAll(CURRENCIES_PLACEHOLDER, facts.currencies)
      .replaceAll(ACTION_URL_PLACEHOLDER, escapeHtml(facts.actionUrl));
    body = new TextEncoder().encode(html);
  }
  return { body, type, etag: `"${(await sha256Hex(body)).slice(0, 32)}"` };
}

export function portalPageRoutes(s: Services) {
  const app = new Hono<AppEnv>();
  // Read once per process: the files only change with a deploy.
  const cache = new Map<string, Promise<Asset>>();
  const asset = (name: string, type: string) => {
    let a = cache.get(name);
    if (!a) {
      a = loadAsset(name, type, {
        network: s.config.network,
        currencies: s.config.stablecoin.mint ? "SOL STABLECOIN" : "SOL",
        actionUrl: `${s.config.publicBaseUrl}${ACTION_PATH}`,
      });
      // A failed read is retried on the next request instead of being cached forever.
      a.catch(() => cache.delete(name));
      cache.set(name, a);
    }
    return a;
  };

  const send = async (c: Context<AppEnv>, name: string, type: string) => {
    const a = await asset(name, type);
    for (const [k, v] of Object.entries(PORTAL_SECURITY_HEADERS)) c.header(k, v);
    // Revalidate every time (cheap 304s): a deploy must never leave an old app.js beside a new
    // index.html.
    c.header("Cache-Control", "no-cache");
    c.header("ETag", a.etag);
    if (c.req.header("if-none-match") === a.etag) return c.body(null, 304);
    c.header("Content-Type", a.type);
    return c.body(a.body as Uint8Array<ArrayBuffer>, 200);
  };

  app.get("/", (c) => send(c, "index.html", "text/html; charset=utf-8"));
  app.get("/portal", (c) => c.redirect("/", 308));
  app.get("/portal/assets/:name", (c) => {
    const name = c.req.param("name");
    const type = Object.hasOwn(PORTAL_ASSETS, name) ? PORTAL_ASSETS[name] : undefined;
    if (!type) return c.notFound();
    return send(c, name, type);
  });
  return app;
}

const escapeHtml = (s: string) =>
  s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;").replaceAll(
    '"',
    "&quot;",
  );
