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
