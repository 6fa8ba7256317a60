/**
 * GET /v1/tokens: a key's builds, newest first, a page at a time, from the build_by_key
 * projection (a KV range read) and the build records (getMany), never from the log.
 *
 * The cursor is the last build id a page looked at, wrapped so clients treat it as opaque. With a
 * status filter a page reads at most MAX_SCANNED rows, so one request costs a bounded number of KV
 * reads however rare the status: such a page may hold fewer than `limit` items while
 * `nextCursor` still says there is more to look at.
 */
import { z } from "zod";
import { buildsByKeyProjection } from "../../projections/build-list.ts";
import { buildsProjection, type BuildStatus } from "../../projections/builds.ts";
import { kvReads, readList, readMany } from "../commands/read.ts";
import { invalid } from "../kernel/errors.ts";
import { BUILD_STATUSES, type BuildListItem, buildListItem } from "../tokens/build-record.ts";

export const MAX_SCANNED = 500;
const CURSOR_PREFIX = "b1.";

export const ListQuery = z.object({
  status: z.enum(BUILD_STATUSES, {
    error: `one of ${BUILD_STATUSES.join(", ")}`,
  }).optional(),
  limit: z.coerce.number({ error: "an integer from 1 to 100" }).int("an integer from 1 to 100")
    .min(1, "an integer from 1 to 100").max(100, "an integer from 1 to 100").default(20),
  cursor: z.string().optional(),
});

export interface ListRequest {
  status?: BuildStatus;
  limit: number;
  /** List builds with ids below this one; null: from the newest. */
  before: number | null;
}

export function encodeCursor(buildId: number): string {
  return btoa(`${CURSOR_PREFIX}${buildId}`).replace(/=+$/, "").replaceAll("+", "-")
    .replaceAll("/", "_");
}

export function decodeCursor(cursor: string): number | null {
  try {
    const text = atob(cursor.replaceAll("-", "+").replaceAll("_", "/"));
    if (!text.startsWith(CURSOR_PREFIX)) return null;
    const digits = text.slice(CURSOR_PREFIX.length);
    if (!/^[1-9][0-9]{0,15}$/.test(digits)) return null;
    const n = Number(digits);
    return Number.isSafeInteger(n) ? n : null;
  } catch {
    return null;
  }
}

/** Parses the query string; every bad parameter is named in one 400. */
export function parseListQuery(query: Record<string, string>): ListRequest {
  const parsed = ListQuery.safeParse(query);
  const fields: Record<string, string> = {};
  if (!parsed.success) {
    for (const i of parsed.error.issues) fields[String(i.path[0] ?? "query")] ??= i.message;
  }
  let before: number | null = null;
  if (query.cursor !== undefined) {
    before = decodeCursor(query.cursor);
    if (before === null) fields.cursor = "not a cursor this endpoint returned";
  }
  if (Object.keys(fields).length || !parsed.success) throw invalid(fields);
  return { status: parsed.data.status, limit: parsed.data.limit, before };
}

export interface BuildPage {
  items: BuildListItem[];
  nextCursor: string | null;
}

export async function listBuilds(kv: Deno.Kv, keyId: string, req: ListRequest): Promise<BuildPage> {
  // One row more than can be looked at, to know whether anything is left after this page.
  const window = (req.status ? MAX_SCANNED : req.limit) + 1;
  const ids = await readList(kv, buildsByKeyProjection, [keyId], {
    before: req.before ?? undefined,
    reverse: true,
    limit: window,
    batchSize: Math.min(window, 500),
  });
  const lookable = Math.min(ids.length, window - 1);

  const items: BuildListItem[] = [];
  let examined = 0;
  for (let i = 0; i < lookable && items.length < req.limit; i += 10) {
    const chunk = ids.slice(i, Math.min(i + 10, lookable));
    const docs = await readMany(kvReads(kv), chunk.map((id) => [buildsProjection, [id]] as const));
    for (const b of docs) {
      if (items.length >= req.limit) break;
      examined++;
      if (b && (!req.status || b.status === req.status)) items.push(buildListItem(b));
    }
  }
  const more = examined < ids.length;
  return { items, nextCursor: more && examined > 0 ? encodeCursor(ids[examined - 1]) : null };
}
