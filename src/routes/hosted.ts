/**
 * The hosted files: /m/<id>.json and /i/<image_id>.<ext>, public and keyless, GET and HEAD (Hono
 * answers HEAD through the GET handler and drops the body).
 *
 * Both are immutable once they exist, so the ETag is the id in the URL (for images, the SHA-256
 * of the bytes) and documents found once are kept in a bounded in-process map: a revalidation
 * (If-None-Match, answered 304) usually costs no KV read at all. Only existence is cached, never
 * absence, so an item created a moment later is served at once.
 *
 * Every answer under /m/ and /i/ carries `Content-Security-Policy: default-src 'none'; sandbox`:
 * an uploaded file that is also HTML or SVG (a polyglot) can load nothing and run nothing, and a
 * browser treats it as a unique opaque origin, never the portal's, even if opened directly.
 */
import { Hono } from "hono";
import type { Context, MiddlewareHandler } from "hono";
import {
  type HostedImageDoc,
  hostedImageProjection,
  hostedMetadataProjection,
} from "../../projections/hosted.ts";
import { kvReads, read } from "../commands/read.ts";
import type { AppEnv } from "../http/env.ts";
import { ApiError } from "../kernel/errors.ts";
import { readImage } from "../metadata/blobs.ts";
import type { Services } from "../services.ts";

const CACHE_MAX = 20_000;
const METADATA_FILE = /^([0-9a-f]{32})\.json$/;
const IMAGE_FILE = /^([0-9a-f]{64})\.(png|jpg|webp)$/;

const STATIC_HEADERS = {
  "Cache-Control": "public, max-age=31536000, immutable",
  "X-Content-Type-Options": "nosniff",
  "Access-Control-Allow-Origin": "*",
} as const;

/** Insertion-ordered map with a size cap; evicts the oldest entry. */
class BoundedCache<V> {
  readonly #map = new Map<string, V>();
  constructor(readonly max: number) {}
  get(k: string) {
    return this.#map.get(k);
  }
  set(k: string, v: V) {
    if (this.#map.size >= this.max) this.#map.delete(this.#map.keys().next().value!);
    this.#map.set(k, v);
  }
}

interface MetadataEntry {
  etag: string;
  body: Uint8Array;
}

/** If-None-Match uses the weak comparison for GET and HEAD (RFC 9110 13.1.2). */
export function ifNoneMatchHits(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === "*") return true;
  return header.split(",").some((t) => t.trim().replace(/^W\//, "") === etag);
}

function notFound(c: Context<AppEnv>) {
  const e = new ApiError("not_found", "No such hosted file");
  c.header("Cache-Control", "no-store");
  c.header("X-Content-Type-Options", "nosniff");
  c.header("Access-Control-Allow-Origin", "*");
  return c.json(e.body(), 404);
}

function respond(
  c: Context<AppEnv>,
  etag: string,
  type: string,
  length: number,
  body: () => Uint8Array | Promise<Uint8Array>,
) {
  const headers: Record<string, string> = { ...STATIC_HEADERS, ETag: etag };
  if (ifNoneMatchHits(c.req.header("if-none-match"), etag)) return c.body(null, 304, headers);
  headers["Content-Type"] = type;
  headers["Content-Length"] = String(length);
  if (c.req.method === "HEAD") return c.body(null, 200, headers);
  return Promise.resolve(body()).then((b) => c.body(b as Uint8Array<ArrayBuffer>, 200, headers));
}

export const HOSTED_CSP = "default-src 'none'; sandbox";

/** Sets the sandbox policy on every hosted-file answer, 404s and preflights included. */
export function sandboxHostedFiles(): MiddlewareHandler<AppEnv> {
  return async function sandboxHostedFiles(c, next) {
    await next();
    c.res.headers.set("Content-Security-Policy", HOSTED_CSP);
  };
}

export function hostedRoutes(s: Services) {
  const metadata = new BoundedCache<MetadataEntry>(CACHE_MAX);
  const images = new BoundedCache<HostedImageDoc>(CACHE_MAX);
  const app = new Hono<AppEnv>();
  const sandbox = sandboxHostedFiles();
  app.use("/m/*", sandbox);
  app.use("/i/*", sandbox);

  app.get("/m/:file", async (c) => {
    const m = METADATA_FILE.exec(c.req.param("file"));
    if (!m) return notFound(c);
    const id = m[1];
    let entry = metadata.get(id);
    if (!entry) {
      const doc = await read(kvReads(s.kv), hostedMetadataProjection, [id]);
      if (!doc) return notFound(c);
      entry = { etag: `"${id}"`, body: new TextEncoder().encode(doc.json) };
      metadata.set(id, entry);
    }
    const e = entry;
    return respond(c, e.etag, "application/json", e.body.length, () => e.body);
  });

  app.get("/i/:file", async (c) => {
    const m = IMAGE_FILE.exec(c.req.param("file"));
    if (!m) return notFound(c);
    const [, imageId, ext] = m;
    let manifest = images.get(imageId);
    if (!manifest) {
      const doc = await read(kvReads(s.kv), hostedImageProjection, [imageId]);
      if (!doc) return notFound(c);
      manifest = doc;
      images.set(imageId, doc);
    }
    if (manifest.ext !== ext) return notFound(c);
    const doc = manifest;
    return respond(c, `"${imageId}"`, doc.mime, doc.bytes, () => readImage(s.kv, doc));
  });

  // A browser's CORS preflight (a client that adds a header) gets the same open answer.
  app.options("/:dir{[mi]}/*", (c) =>
    c.body(null, 204, {
      "Access-Control-Allow-Origin": "*",
      "Access-Control-Allow-Methods": "GET, HEAD",
      "Access-Control-Allow-Headers": c.req.header("access-control-request-headers") ?? "*",
      "Access-Control-Max-Age": "86400",
    }));
  // Anything else under /m/ and /i/ (another method, a deeper path) is a hosted-file 404 with
  // the same headers, not the app-wide one.
  app.all("/:dir{[mi]}/*", (c) => notFound(c));

  return app;
}
