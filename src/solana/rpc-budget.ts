/**
 * The RPC budget: at most `total` requests, and at most `perMethod` requests of any one method, in
 * any sliding window of `windowMs` (the public Solana endpoints: 100 and 40 per 10 s per IP).
 * Every JSON-RPC call of a batch counts once for the total and once for its method.
 *
 * Safe against any window the server may use, whatever the network latency: a request is counted
 * from the moment it is let through until it has finished, and its place in the window is the time
 * it finished (a server saw it no later than that). So for any request let through at time t, the
 * requests that finished at or before t - window are outside every server window holding it.
 *
 * Two priorities. `user` requests (an HTTP caller is waiting) may use the whole budget; when they
 * cannot be served within `maxWaitMs` they are refused with an `RpcBusyError` that says when to
 * retry (the HTTP layer answers 503 with Retry-After). `background` requests (watcher,
 * rebroadcast) wait as long as it takes, use at most `backgroundShare` of each limit, and don't
 * go while a user request is waiting: a steady background load can't starve users.
 *
 * Users can't starve background either (anyone can drive user requests, e.g. through the portal):
 * once a background request has waited a whole window, `backgroundReserve` of each limit is held
 * for background. User requests cannot take it, and background within it goes before waiting users.
 * The reserve stays held for a window after each background request it let through, so under a
 * sustained user load background keeps its share of every window, not one request per window.
 *
 * Own code, not a library: the rate limiters on npm (bottleneck, limiter, p-throttle, rate-
 * limiter-flexible) count from the start of a request, keep one key per limiter and don't answer
 * "how long until this would go", which a Retry-After needs; one of each per method and priority
 * would still not count from completion.
 */
import type { Clock } from "../kernel/clock.ts";

export type RpcPriority = "user" | "background";

export interface RpcLimits {
  /** Requests per window over all methods; null = unlimited. */
  total: number | null;
  /** Requests per window of any one method; null = unlimited. */
  perMethod: number | null;
  windowMs: number;
}

export const PUBLIC_RPC_LIMITS: RpcLimits = { total: 100, perMethod: 40, windowMs: 10_000 };
export const UNLIMITED_RPC: RpcLimits = { total: null, perMethod: null, windowMs: 10_000 };

export interface RpcBudgetOptions {
  clock?: Clock;
  /** Share of each limit background work may hold at once (default 0.5). */
  backgroundShare?: number;
  /**
   * Share of each limit held for background once it has waited a whole window for users (default
   * 0.1; 0 = users may always take everything).
   */
  backgroundReserve?: number;
  /** How long a user request may wait for room before it is refused (default 2000 ms). */
  userWaitMs?: number;
  /** Waits (ended early by the signal); injected by tests together with the clock. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** A request the budget cannot serve in time: answer 503 and say when to come back. */
export class RpcBusyError extends Error {
  constructor(readonly retryAfterMs: number, reason: string) {
    super(`RPC budget: ${reason}; retry in ${Math.ceil(retryAfterMs / 1000)} s`);
    this.name = "RpcBusyError";
  }
}

/** One request let through: finished (`done`) when its answer or failure is in. */
export interface RpcTicket {
  done(): void;
}

interface Entry {
  /** When the request finished; Infinity while in flight. */
  at: number;
  priority: RpcPriority;
}

export type TakeResult = { ticket: RpcTicket } | { waitMs: number; reason: string };

export class RpcBudget {
  readonly limits: RpcLimits;
  readonly userWaitMs: number;
  readonly #clock: Clock;
  readonly #share: number;
  readonly #reserve: number;
  readonly #sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  #all: Entry[] = [];
  #byMethod = new Map<string, Entry[]>();
  #pausedUntil = 0;
  #userWaiting = 0;
  /** Start times of the background requests waiting now. */
  #backgroundWaiting = new Set<{ since: number }>();
  /** Until when the background reserve is held (see the opening comment). */
  #reserveUntil = -Infinity;
  #wake = new Set<() => void>();

  constructor(limits: RpcLimits, opts: RpcBudgetOptions = {}) {
    this.limits = limits;
    this.#clock = opts.clock ?? Date.now;
    this.#share = opts.backgroundShare ?? 0.5;
    // The reserve is part of background's share, never more.
    this.#reserve = Math.min(opts.backgroundReserve ?? 0.1, this.#share);
    this.userWaitMs = opts.userWaitMs ?? 2_000;
    this.#sleep = opts.sleep ?? abortableSleep;
    if (!(this.#share > 0 && this.#share <= 1)) {
      throw new Error("backgroundShare must be in (0, 1]");
    }
    if (!(this.#reserve >= 0)) throw new Error("backgroundReserve must be at least 0");
  }

  get unlimited(): boolean {
    return this.limits.total === null && this.limits.perMethod === null;
  }

  /** Requests counted in the window now (in flight or finished within it), for reports. */
  inWindow(method?: string): number {
    this.#prune();
    return method === undefined ? this.#all.length : this.#byMethod.get(method)?.length ?? 0;
  }

  /** The RPC said to wait (429 Retry-After): nothing goes until then. */
  pauseFor(ms: number): void {
    this.#pausedUntil = Math.max(this.#pausedUntil, this.#clock() + ms);
  }

  /** Lets the calls through now, or says how long until they could go. Never waits. */
  tryTake(methods: string[], priority: RpcPriority): TakeResult {
    const now = this.#clock();
    if (now < this.#pausedUntil) {
      return { waitMs: this.#pausedUntil - now, reason: "the RPC asked us to wait" };
    }
    if (this.unlimited) return { ticket: NO_TICKET };
    this.#prune();
    const reserveHeld = this.#reserveHeld(now);
    const counts = new Map<string, number>();
    for (const m of methods) counts.set(m, (counts.get(m) ?? 0) + 1);
    if (priority === "background" && this.#userWaiting > 0) {
      // Users first, except for what the reserve holds for background.
      const withinReserve = reserveHeld &&
        this.#withinReserve(this.#all, methods.length, this.limits.total) &&
        [...counts].every(([m, n]) =>
          this.#withinReserve(this.#byMethod.get(m) ?? [], n, this.limits.perMethod)
        );
      if (!withinReserve) return { waitMs: this.limits.windowMs, reason: "user requests first" };
    }
    let waitMs = 0;
    let reason = "";
    const need = (entries: Entry[], n: number, limit: number | null, what: string) => {
      if (limit === null) return;
      const fits = (cap: number, mine: Entry[]) => {
        const over = mine.length + Math.min(n, cap) - cap;
        if (over <= 0) return;
        const w = this.#waitFor(mine, over, now);
        if (w > waitMs) [waitMs, reason] = [w, `${what} limit reached`];
      };
      if (priority === "background") {
        fits(limit, entries);
        const cap = Math.max(1, Math.floor(limit * this.#share));
        fits(cap, entries.filter((e) => e.priority === "background"));
      } else if (reserveHeld) {
        // The part of the reserve background has not used yet is not the user's.
        const unused = Math.max(0, this.#reserveOf(limit) - background(entries).length);
        fits(limit - unused, entries);
        if (waitMs > 0 && reason === `${what} limit reached`) {
          reason = `${what} limit reached (${unused} held for background work)`;
        }
      } else {
        fits(limit, entries);
      }
    };
    need(this.#all, methods.length, this.limits.total, `${this.limits.total} requests`);
    for (const [m, n] of counts) {
      need(
        this.#byMethod.get(m) ?? [],
        n,
        this.limits.perMethod,
        `${this.limits.perMethod} ${m}`,
      );
    }
    if (waitMs > 0) return { waitMs, reason: `${reason} per ${this.limits.windowMs / 1000} s` };

    if (priority === "background" && reserveHeld) this.#reserveUntil = now + this.limits.windowMs;
    const taken: Entry[] = methods.map(() => ({ at: Infinity, priority }));
    taken.forEach((e, i) => {
      this.#all.push(e);
      const list = this.#byMethod.get(methods[i]) ?? [];
      list.push(e);
      this.#byMethod.set(methods[i], list);
    });
    let finished = false;
    return {
      ticket: {
        done: () => {
          if (finished) return;
          finished = true;
          const at = this.#clock();
          for (const e of taken) e.at = at;
          this.#notify();
        },
      },
    };
  }

  /**
   * Waits for room. A user request that would wait longer than `userWaitMs` in all (or that the
   * signal aborts) is refused with RpcBusyError; a background one waits as long as it takes.
   */
  async acquire(
    methods: string[],
    priority: RpcPriority,
    signal?: AbortSignal,
  ): Promise<RpcTicket> {
    const start = this.#clock();
    let waiting = false;
    const backgroundWait = { since: start };
    if (priority === "background") this.#backgroundWaiting.add(backgroundWait);
    try {
      for (;;) {
        const r = this.tryTake(methods, priority);
        if ("ticket" in r) return r.ticket;
        if (priority === "user") {
          const waited = this.#clock() - start;
          if (waited + r.waitMs > this.userWaitMs) throw new RpcBusyError(r.waitMs, r.reason);
          if (!waiting) {
            waiting = true;
            this.#userWaiting++;
          }
        }
        signal?.throwIfAborted();
        await this.#nap(r.waitMs);
      }
    } finally {
      this.#backgroundWaiting.delete(backgroundWait);
      if (waiting) {
        this.#userWaiting--;
        this.#notify();
      }
    }
  }

  /**
   * Whether the reserve is held now: a background request has waited a whole window, or one went
   * under the reserve less than a window ago.
   */
  #reserveHeld(now: number): boolean {
    if (this.#reserve === 0) return false;
    for (const w of this.#backgroundWaiting) {
      if (now - w.since >= this.limits.windowMs) {
        this.#reserveUntil = Math.max(this.#reserveUntil, now + this.limits.windowMs);
      }
    }
    return now < this.#reserveUntil;
  }

  /** At least one request of each limit, so a small limit still lets background through. */
  #reserveOf(limit: number): number {
    return Math.max(1, Math.floor(limit * this.#reserve));
  }

  #withinReserve(entries: Entry[], n: number, limit: number | null): boolean {
    return limit === null || background(entries).length + n <= this.#reserveOf(limit);
  }

  /** Sleeps until the wait is over or something finishes, whichever is first. */
  #nap(ms: number): Promise<void> {
    const stop = new AbortController();
    return new Promise((resolve) => {
      const wake = () => {
        this.#wake.delete(wake);
        stop.abort();
        resolve();
      };
      this.#wake.add(wake);
      this.#sleep(Math.max(1, Math.min(ms, this.limits.windowMs)), stop.signal).then(wake, wake);
    });
  }

  #notify(): void {
    for (const w of [...this.#wake]) w();
  }

  /** How long until `over` of these entries have left the window. */
  #waitFor(entries: Entry[], over: number, now: number): number {
    const finished = entries.map((e) => e.at).filter(Number.isFinite).sort((a, b) => a - b);
    // Not enough finished ones: it depends on requests still in flight; a whole window at most.
    if (finished.length < over) return this.limits.windowMs;
    return Math.max(1, finished[over - 1] + this.limits.windowMs - now + 1);
  }

  #prune(): void {
    const cutoff = this.#clock() - this.limits.windowMs;
    const live = (e: Entry) => e.at > cutoff;
    this.#all = this.#all.filter(live);
    for (const [m, list] of this.#byMethod) {
      const kept = list.filter(live);
      if (kept.length) this.#byMethod.set(m, kept);
      else this.#byMethod.delete(m);
    }
  }
}

const NO_TICKET: RpcTicket = { done() {} };

const background = (entries: Entry[]) => entries.filter((e) => e.priority === "background");

function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener("abort", () => {
      clearTimeout(timer);
      resolve();
    }, { once: true });
  });
}
