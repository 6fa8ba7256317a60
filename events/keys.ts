/** Where the log lives in Deno KV. One place, so the store, replay and audit agree. */
export const LOG = ["ev"] as const;
export const STREAM_INDEX = ["ev_stream"] as const;
export const HEAD = ["log_head"] as const;
export const STREAMS = ["stream"] as const;
export const PROJECTIONS = ["p"] as const;

export const eventKey = (position: number): Deno.KvKey => [...LOG, position];
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
}
