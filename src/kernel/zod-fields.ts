/** A zod failure as the error body's `fields`: one message per path, unknown members named. */
import type { z } from "zod";
import { FIELDS_OMITTED, MAX_LISTED_FIELDS } from "./errors.ts";

/**
 * Unknown members are named only while the answer has room for them (`MAX_LISTED_FIELDS`); the
 * rest are counted, so a body of 160,000 of them costs a count, not a map of 160,000 entries.
 */
export function zodFields(
  error: z.ZodError,
): Record<string, string> & { [FIELDS_OMITTED]?: number } {
  const fields: Record<string, string> & { [FIELDS_OMITTED]?: number } = {};
  let size = 0;
  let omitted = 0;
  for (const issue of error.issues) {
    if (issue.code === "unrecognized_keys") {
      const prefix = issue.path.join(".");
      for (const k of issue.keys) {
        if (size >= MAX_LISTED_FIELDS) {
          omitted++;
          continue;
        }
        const name = prefix ? `${prefix}.${k}` : k;
        if (!(name in fields)) size++;
        fields[name] = "unknown field";
      }
      continue;
    }
    const path = issue.path.join(".") || "body";
    if (!(path in fields)) size++;
    fields[path] ??= issue.message;
  }
  if (omitted > 0) fields[FIELDS_OMITTED] = omitted;
  return fields;
}

/**
 * A request body's first pass, shared by the requests whose schema depends on this service's base
 * URL (its own hosted documents may be http): the schema for that URL, built on first use, its
 * parse, the fields it refused, and the body as an object for the rules across fields.
 */
export function firstPass<S extends z.ZodType>(make: (publicBaseUrl: string | null) => S) {
  const byBase = new Map<string | null, S>();
  return (raw: unknown, publicBaseUrl: string | null) => {
    let schema = byBase.get(publicBaseUrl);
    if (!schema) byBase.set(publicBaseUrl, schema = make(publicBaseUrl));
    const parsed = schema.safeParse(raw) as z.ZodSafeParseResult<z.output<S>>;
    const fields: Record<string, string> = parsed.success ? {} : zodFields(parsed.error);
    const body =
      (typeof raw === "object" && raw !== null && !Array.isArray(raw) ? raw : {}) as Record<
        string,
        unknown
      >;
    return { parsed, fields, body };
  };
}
