/**
 * What an attacker with write access to the KV could do to the stored log, in whichever place
 * (tail line or sealed segment) the event is stored. The stored hashes are kept as they were, as
 * a forger who cannot redo the whole chain up to an anchored head would have to.
 */
import { canonicalJson } from "../../../events/hash.ts";
import {
  decodeSegment,
  encodeLine,
  encodeSegment,
  eventLine,
  recordEvent,
} from "../../../events/codec.ts";
import { LOG_SEGMENTS, segmentKey, tailKey } from "../../../events/keys.ts";
import { hashAt, recordAt } from "../../../events/log.ts";
import type { StoredEvent } from "../../../events/types.ts";

async function segmentHolding(kv: Deno.Kv, position: number) {
  for await (
    const s of kv.list<Uint8Array>({ prefix: LOG_SEGMENTS, start: segmentKey(position) }, {
      limit: 1,
    })
  ) return s;
  return null;
}

export async function storedEvent(kv: Deno.Kv, position: number): Promise<StoredEvent> {
  const r = await recordAt(kv, position);
  if (!r) throw new Error(`no event at ${position}`);
  return recordEvent(r, await hashAt(kv, position - 1));
}

/** Replaces the body stored at `position` (`fn` gets the event), keeping the stored hash. */
export async function rewriteEvent(
  kv: Deno.Kv,
  position: number,
  fn: (e: StoredEvent) => Record<string, unknown>,
): Promise<void> {
  const e = await storedEvent(kv, position);
  const { hash: _h, prevHash: _p, ...body } = fn(e);
  const line = eventLine(e.hash, canonicalJson(body));
  await replaceLine(kv, position, line);
}

async function replaceLine(kv: Deno.Kv, position: number, line: string | null) {
  const t = await kv.get<Uint8Array>(tailKey(position));
  if (t.value !== null) {
    if (line === null) await kv.delete(tailKey(position));
    else await kv.set(tailKey(position), encodeLine(line));
    return;
  }
  const s = await segmentHolding(kv, position);
  if (!s) throw new Error(`no event at ${position}`);
  const records = decodeSegment(s.value);
  const lines = records.flatMap((r) =>
    r.slot !== position ? [eventLine(r.hash, r.body)] : line === null ? [] : [line]
  );
  await kv.set(s.key, encodeSegment(records[0].slot, lines));
}

/** Removes the event at `position` from wherever it is stored. */
export const deleteEvent = (kv: Deno.Kv, position: number) => replaceLine(kv, position, null);

/** Is the event at `position` in a sealed segment (not in the tail)? */
export async function isSealed(kv: Deno.Kv, position: number): Promise<boolean> {
  return (await kv.get(tailKey(position))).value === null &&
    (await segmentHolding(kv, position)) !== null;
}

/** Writes a line into the tail at `position` (for "events past the head"). */
export async function putTail(kv: Deno.Kv, position: number, e: StoredEvent): Promise<void> {
  const { hash, prevHash: _, ...body } = e;
  await kv.set(tailKey(position), encodeLine(eventLine(hash, canonicalJson(body))));
}

/**
 * Replaces the body text stored at `position` with `fn` of it, keeping the stored hash: a body
 * no store writes (`canonicalJson` never writes -0, for one).
 */
export async function rewriteBodyText(
  kv: Deno.Kv,
  position: number,
  fn: (body: string) => string,
): Promise<void> {
  const r = await recordAt(kv, position);
  if (!r) throw new Error(`no event at ${position}`);
  await replaceLine(kv, position, eventLine(r.hash, fn(r.body)));
}
