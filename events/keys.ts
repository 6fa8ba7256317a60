/** Where the log lives in Deno KV. One place, so the store, replay and audit agree. */
/** The first layout: one KV entry per event (a `StoredEvent`), read now only to migrate. */
export const LOG = ["ev"] as const;
/** Sealed segments, keyed by the position of their last event (events/codec.ts). */
export const LOG_SEGMENTS = ["log", "s"] as const;
/** The newest events, one line each, until the store seals them into a segment. */
export const LOG_TAIL = ["log", "t"] as const;
/** The layout the store writes; a head without it (and with events) is the first layout. */
export const LOG_LAYOUT = 2;
export const STREAM_INDEX = ["ev_stream"] as const;
export const HEAD = ["log_head"] as const;
export const STREAMS = ["stream"] as const;
export const PROJECTIONS = ["p"] as const;

export const eventKey = (position: number): Deno.KvKey => [...LOG, position];
export const segmentKey = (lastPosition: number): Deno.KvKey => [...LOG_SEGMENTS, lastPosition];
export const tailKey = (position: number): Deno.KvKey => [...LOG_TAIL, position];
export const streamEventKey = (stream: string, pos: number): Deno.KvKey => [
  ...STREAM_INDEX,
  stream,
  pos,
];
export const streamKey = (stream: string): Deno.KvKey => [...STREAMS, stream];
export const projectionKey = (name: string, sub: Deno.KvKey): Deno.KvKey => [
  ...PROJECTIONS,
  name,
  ...sub,
];

export interface LogHead {
  position: number;
  hash: string;
  /** `LOG_LAYOUT` on a log the current store writes. */
  layout?: number;
  /** Events up to here are in sealed segments; the rest are in the tail. */
  sealed?: number;
  /** Bytes of the tail's lines, so the store knows when to seal without reading them. */
  tailBytes?: number;
}
