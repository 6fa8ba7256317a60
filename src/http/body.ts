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

/**
 * No request of ours needs more members and elements than this (a metadata upload has a few dozen
 * beside its image, one string); 160,000 of them parse into ten times the body's size, so a body
 * with more is refused before it is parsed.
 */
export const MAX_JSON_VALUES = 10_000;

/** Commas and colons outside strings (about one per member or element), counted up to `stop`. */
function countValues(bytes: Uint8Array, stop: number): number {
  let count = 0;
  let inString = false;
  for (let i = 0; i < bytes.length && count <= stop; i++) {
    const b = bytes[i];
    if (inString) {
      if (b === 0x5c) i++; // a backslash: the next byte is escaped
      else if (b === 0x22) inString = false;
    } else if (b === 0x22) inString = true;
    else if (b === 0x2c || b === 0x3a) count++;
  }
  return count;
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
  if (countValues(bytes, MAX_JSON_VALUES) > MAX_JSON_VALUES) {
    throw new ApiError("invalid_request", "Request is invalid", {
      body: `at most ${MAX_JSON_VALUES} members and array elements in all`,
    });
  }
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
