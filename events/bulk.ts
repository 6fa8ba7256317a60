/**
 * Writes a whole log at once in the store's layout, already sealed: for events:import (a log
 * migrated or restored from NDJSON) and the benchmark's synthetic log. The caller has checked
 * the chain; this only packs lines into segments exactly as the store's seal does.
 */
import { bodyText, eventLine, lineBytes, packSegments, SEGMENT_BYTES } from "./codec.ts";
import { LOG_LAYOUT, type LogHead, segmentKey, streamEventKey, streamKey } from "./keys.ts";
import type { StoredEvent } from "./types.ts";

export interface KvWrite {
  key: Deno.KvKey;
  value: unknown;
}

export class SegmentWriter {
  #lines: string[] = [];
  #bytes = 0;
  #first = 1;
  #last: StoredEvent | null = null;
  readonly #versions = new Map<string, number>();
  /** Bytes of event lines written, for "bytes per event". */
  lineBytes = 0;
  segments = 0;

  /**
   * Takes the next event (with `body`, its canonical text, when the caller has it) and returns
   * the KV writes that are ready: its stream index entry and, now and then, a full segment.
   */
  add(e: StoredEvent, body?: string): KvWrite[] {
    const { hash, prevHash: _, ...rest } = e;
    const line = eventLine(hash, body ?? bodyText(rest));
    const b = lineBytes(line) + 1;
    const out: KvWrite[] = [];
    if (this.#lines.length && this.#bytes + b + 12 > SEGMENT_BYTES) out.push(...this.#seal());
    if (!this.#lines.length) this.#first = e.position;
    this.#lines.push(line);
    this.#bytes += b;
    this.lineBytes += b;
    this.#versions.set(e.stream, e.streamPosition);
    this.#last = e;
    out.push({ key: streamEventKey(e.stream, e.streamPosition), value: e.position });
    return out;
  }

  #seal(): KvWrite[] {
    const out = packSegments(this.#first, this.#lines).map((s) => ({
      key: segmentKey(s.last),
      value: s.value,
    }));
    this.segments += out.length;
    this.#lines = [];
    this.#bytes = 0;
    return out;
  }

  /** The last segment and every stream's version; then `head()` is the head to write last. */
  finish(): KvWrite[] {
    const out = this.#lines.length ? this.#seal() : [];
    for (const [stream, version] of this.#versions) {
      out.push({ key: streamKey(stream), value: version });
    }
    return out;
  }

  head(): LogHead | null {
    const last = this.#last;
    if (!last) return null;
    return {
      position: last.position,
      hash: last.hash,
      layout: LOG_LAYOUT,
      sealed: last.position,
      tailBytes: 0,
    };
  }
}
