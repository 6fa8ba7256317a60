/** A zod failure as the error body's `fields`: one message per path, unknown members named. */
import type { z } from "zod";

export function zodFields(error: z.ZodError): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const issue of error.issues) {
    if (issue.code === "unrecognized_keys") {
      for (const k of issue.keys) fields[[...issue.path, k].join(".")] = "unknown field";
      continue;
    }
    const path = issue.path.join(".") || "body";
    fields[path] ??= issue.message;
  }
  return fields;
}
