/**
 * The tables the audit wrote before it was rewritten (tests/audit/golden/, from the same
 * histories), to hold the rewrite to them byte for byte. The updates table came after (token
 * updates are newer than both histories): its golden files are the empty table.
 */
import { projectionKey } from "../../events/keys.ts";
import { AUDIT_TABLES } from "../../src/audit/audit.ts";
import { rewriteEvent } from "../events/support/tamper.ts";

/** The clean workload with one event and two projection documents edited behind the store. */
export async function tamper(kv: Deno.Kv) {
  await kv.set(projectionKey("usage", ["p1", "2026-11-22"]), { tokens: 1, metadata: 0 });
  await kv.set(projectionKey("key", ["ghost"]), { keyId: "ghost" });
  await rewriteEvent(kv, 4, (e) => ({ ...e, data: { ...e.data, feeLamports: "1" } }));
}

const files = Object.keys(AUDIT_TABLES).flatMap((t) => [`${t}.csv`, `${t}.json`]);

/** Every table file of the audit written to `dir`, by name (`suffix`: after each file's name). */
export async function auditFiles(dir: string, suffix = ""): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const f of files) out[f] = await Deno.readTextFile(`${dir}/${f}${suffix}`);
  return out;
}

/** Stored as `<file>.golden`, which no formatter rewrites. */
export const goldenFiles = (name: "workload" | "tampered") =>
  auditFiles(new URL(`./golden/${name}`, import.meta.url).pathname, ".golden");
