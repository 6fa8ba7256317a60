/**
 * The chain's /admin bodies, checked before anything runs: each route's members with zod, unknown
 * members refused, and a refusal in the service's error shape naming every bad field
 * (`{error: {code, message, fields}}`), never the text of an exception.
 */
import { z } from "zod";
import bs58 from "bs58";

const U64_MAX = 18_446_744_073_709_551_615n;

/** "required" for a missing member, `text` for a present one of the wrong kind. */
const says = (text: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? "required" : text;

const nonNegative = z.number({ error: says("must be a number") }).finite().min(0, "must be >= 0");

const lamports = z.union([z.number(), z.string()], {
  error: says("must be a whole number of lamports (a number or a string of digits)"),
}).transform((v, ctx) => {
  const text = typeof v === "number" ? (Number.isSafeInteger(v) ? String(v) : "") : v;
  if (!/^[0-9]{1,20}$/.test(text)) {
    ctx.addIssue({ code: "custom", message: "must be a whole number of lamports, 1 to 2^64-1" });
    return z.NEVER;
  }
  const n = BigInt(text);
  if (n < 1n || n > U64_MAX) {
    ctx.addIssue({ code: "custom", message: "must be a whole number of lamports, 1 to 2^64-1" });
    return z.NEVER;
  }
  return n;
});

const address = z.string({ error: says("must be a base58 address") }).refine((s) => {
  try {
    return bs58.decode(s).length === 32;
  } catch {
    return false;
  }
}, "must be a base58 address (32 bytes)");

export const ADMIN_BODIES = {
  "/admin/faults": z.strictObject({
    latencyMs: nonNegative.optional(),
    failureRate: nonNegative.max(1, "must be <= 1").optional(),
    down: z.boolean({ error: says("must be true or false") }).optional(),
    downForMs: nonNegative.optional(),
  }),
  "/admin/slots": z.strictObject({
    advance: z.number({ error: says("must be a number") }).int("must be a whole number")
      .min(0, "must be >= 0").max(1_000_000, "must be <= 1000000").default(1),
  }),
  "/admin/price": z.strictObject({
    usd: z.number({ error: says("must be a number") }).finite().positive("must be > 0").optional(),
    paused: z.boolean({ error: says("must be true or false") }).optional(),
  }),
  "/admin/airdrop": z.strictObject({ address, lamports }),
} as const;

export type AdminRoute = keyof typeof ADMIN_BODIES;
export type AdminBody<R extends AdminRoute> = z.output<(typeof ADMIN_BODIES)[R]>;

export interface AdminRefusal {
  error: { code: "invalid_request"; message: string; fields: Record<string, string> };
}

export type Parsed<R extends AdminRoute> =
  | { ok: true; body: AdminBody<R> }
  | { ok: false; refusal: AdminRefusal };

const refuse = (fields: Record<string, string>): { ok: false; refusal: AdminRefusal } => ({
  ok: false,
  refusal: { error: { code: "invalid_request", message: "Request is invalid", fields } },
});

export function isAdminRoute(path: string): path is AdminRoute {
  return Object.hasOwn(ADMIN_BODIES, path);
}

/** The body of a POST to `route`: JSON (empty means `{}`), an object, each member valid. */
export function parseAdminBody<R extends AdminRoute>(route: R, text: string): Parsed<R> {
  let json: unknown = {};
  if (text.trim() !== "") {
    try {
      json = JSON.parse(text);
    } catch {
      return refuse({ body: "must be JSON" });
    }
  }
  if (typeof json !== "object" || json === null || Array.isArray(json)) {
    return refuse({ body: "must be a JSON object" });
  }
  const result = ADMIN_BODIES[route].safeParse(json);
  if (result.success) return { ok: true, body: result.data as AdminBody<R> };
  const fields: Record<string, string> = {};
  for (const issue of result.error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const k of issue.keys) fields[k] = "unknown member";
      continue;
    }
    const name = issue.path.length ? issue.path.join(".") : "body";
    fields[name] ??= issue.message;
  }
  return refuse(fields);
}
