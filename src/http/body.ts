/**
 * Request bodies: JSON only, parsed with a strict zod schema. Every bad field, unknown fields
 * included, is named in `error.fields`.
 */
import type { Context } from "hono";
import type { z } from "zod";
import { ApiError } from "../kernel/errors.ts";
import { zodFields } from "../kernel/zod-fields.ts";
import { bodyBytes } from "./body-limit.ts";
import type { AppEnv } from "./env.ts";

export function parseWith<S extends z.ZodType>(schema: S, value: unknown): z.infer<S> {
  const r = schema.safeParse(value);
  if (!r.success) throw new ApiError("invalid_request", "Request is invalid", zodFields(r.error));
  return r.data;
}

export async function readJson(c: Context<AppEnv>): Promise<unknown> {
  const type = c.req.header("content-type") ?? "";
  if (!/^application\/([a-z.+-]*\+)?json\b/i.test(type)) {
    throw new ApiError("invalid_request", "Content-Type must be application/json", {
      body: "expected a JSON body with Content-Type: application/json",
    });
  }
  // The bytes were read once (bodyLimit); the text lives only while it is parsed.
  const bytes = await bodyBytes(c);
  try {
    return JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new ApiError("invalid_request", "Body is not valid JSON", { body: "malformed JSON" });
  }
}

export async function readBody<S extends z.ZodType>(
  c: Context<AppEnv>,
  schema: S,
): Promise<z.infer<S>> {
  return parseWith(schema, await readJson(c));
}
