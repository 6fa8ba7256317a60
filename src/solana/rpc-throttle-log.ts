/**
 * One log line per minute for an RPC that is throttling us (429) or says it is unhealthy (-32005),
 * however many calls meet it: a storm of hundreds a minute is one warning with a count, not
 * hundreds of lines.
 */
import type { Clock } from "../kernel/clock.ts";
import type { Logger } from "../kernel/logger.ts";

export const THROTTLE_LOG_INTERVAL_MS = 60_000;

export interface ThrottleNote {
  /** "429" (HTTP Too Many Requests) or "-32005" (the node's JSON-RPC error). */
  kind: "429" | "-32005";
  methods: string[];
  retryAfterMs: number | null;
  /** What the RPC asked for when it was more than we wait (`retryAfterMs` is then the cap). */
  cappedFromMs?: number;
}

export class ThrottleLog {
  #nextAt = -Infinity;
  #since = 0;
  #byKind = new Map<string, number>();
  #byMethod = new Map<string, number>();

  constructor(
    readonly logger: Logger,
    readonly clock: Clock = Date.now,
    readonly intervalMs = THROTTLE_LOG_INTERVAL_MS,
  ) {}

  note(n: ThrottleNote): void {
    this.#since++;
    this.#byKind.set(n.kind, (this.#byKind.get(n.kind) ?? 0) + 1);
    for (const m of n.methods) this.#byMethod.set(m, (this.#byMethod.get(m) ?? 0) + 1);
    const now = this.clock();
    if (now < this.#nextAt) return;
    this.logger.log("warn", "RPC is throttling or unhealthy", {
      answers: this.#since,
      byKind: Object.fromEntries(this.#byKind),
      byMethod: Object.fromEntries(this.#byMethod),
      retryAfterS: n.retryAfterMs === null ? null : Math.ceil(n.retryAfterMs / 1000),
      ...(n.cappedFromMs === undefined
        ? {}
        : { retryAfterAskedS: Math.ceil(n.cappedFromMs / 1000), capped: true }),
      nextReportInS: this.intervalMs / 1000,
    });
    this.#nextAt = now + this.intervalMs;
    this.#since = 0;
    this.#byKind.clear();
    this.#byMethod.clear();
  }
}
