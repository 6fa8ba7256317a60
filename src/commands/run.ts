/**
 * The one way a command changes state: `load` reads what the decision needs through typed reads,
 * `decide(command, state, now)` returns the events or a `Rejection`, and the events go to their
 * stream in one atomic commit (`EventStore.transact`), with the request's idempotency record in
 * that same commit. A conflict re-runs load and decide on fresh state; a rejection writes nothing
 * and is thrown as the API error it names. HTTP routes, the CLI and the watcher all come here
 * through their feature's handler.
 */
import type { Enqueue, EventStore, StreamAppend, Tx } from "../../events/store.ts";
import type { DomainEvent, StoredEvent } from "../../events/types.ts";
import type { Clock } from "../kernel/clock.ts";
import { isRejection, type Rejection, toApiError } from "../kernel/rejection.ts";
import { type IdempotencyScope, recordFor } from "../idempotency/record.ts";

/** A command's three parts and how its answer is made; pure except `load`, which only reads. */
export interface CommandHandler<C, S, E extends DomainEvent, J extends Rejection, R> {
  /** The state the decision needs, read through `read`/`readMany` (src/commands/read.ts). */
  load(tx: Tx, cmd: C): Promise<S>;
  decide(cmd: C, state: S, now: number): E[] | J;
  /** The stream the events go to (an id the decision allocated may name it). */
  stream(cmd: C, state: S, events: E[]): string;
  /**
   * For a decision that also changes another aggregate (a landing that suspends a key): the
   * stream an event goes to instead of `stream`, or null. Appended after the main stream's
   * events, at "any" version (the head guard still orders the commit).
   */
  elsewhere?(event: E, state: S): string | null;
  /**
   * What the main stream's events set off in the same commit (an outcome's webhook deliveries):
   * may read more through `tx`; its appends and queue messages join the commit.
   */
  react?(
    tx: Tx,
    events: E[],
    state: S,
    now: number,
  ): Promise<{ append: StreamAppend[]; enqueue: Enqueue[] }>;
  /**
   * The stream version the events must land on: "read" (default) takes the version read in this
   * attempt, so a concurrent append to the stream re-runs the command; 0 for a stream that must
   * be new; "any" for one new by construction of an id read under the head guard.
   */
  expectedVersion?: "read" | 0 | "any";
  /** The answer, from what was decided: it is also the body of the idempotency record. */
  respond(events: E[], state: S, cmd: C): R;
  /** Queue messages that go out in the events' commit (a delivery's first attempt, a retry). */
  enqueue?(events: E[], state: S, cmd: C, now: number): Enqueue[];
  /** The error a rejection becomes (default: the API error it names). */
  rejected?(r: J): Error;
}

export interface RunContext {
  store: EventStore;
  /** The decision's `now`, read once per attempt. */
  clock: Clock;
  /**
   * The request's idempotency record: written with `status` and the answer in the commit of the
   * command's events (and then marked stored). A rejection, or a decision that nothing changes (a
   * racer recorded it first), leaves the record to the middleware.
   */
  idempotency?: { scope: IdempotencyScope | null; status: number };
}

export interface CommandResult<R> {
  result: R;
  /** The events as stored, reactions included (empty when the decision changes nothing). */
  events: StoredEvent[];
}

export async function runCommand<C, S, E extends DomainEvent, J extends Rejection, R>(
  handler: CommandHandler<C, S, E, J, R>,
  cmd: C,
  ctx: RunContext,
): Promise<CommandResult<R>> {
  type Outcome = { ok: true; result: R } | { ok: false; rejection: J };
  const { result, events } = await ctx.store.transact<Outcome>(async (tx) => {
    const state = await handler.load(tx, cmd);
    const now = ctx.clock();
    const decided = handler.decide(cmd, state, now);
    if (isRejection(decided)) return { result: { ok: false, rejection: decided } };
    const result = handler.respond(decided, state, cmd);
    if (decided.length === 0) return { result: { ok: true, result } };
    const main: E[] = [];
    const others = new Map<string, E[]>();
    for (const e of decided) {
      const other = handler.elsewhere?.(e, state) ?? null;
      if (other === null) main.push(e);
      else others.set(other, [...(others.get(other) ?? []), e]);
    }
    const append: StreamAppend[] = [];
    if (main.length > 0) {
      const stream = handler.stream(cmd, state, main);
      const expected = handler.expectedVersion ?? "read";
      const expectedVersion = expected === "read" ? await tx.streamVersion(stream) : expected;
      append.push({ stream, expectedVersion, events: main });
    }
    for (const [stream, events] of others) append.push({ stream, expectedVersion: "any", events });
    const reaction = handler.react && main.length > 0
      ? await handler.react(tx, main, state, now)
      : { append: [], enqueue: [] };
    const record = ctx.idempotency;
    return {
      append: [...append, ...reaction.append],
      sets: record ? recordFor(record.scope, record.status, result) : [],
      enqueue: [...(handler.enqueue?.(decided, state, cmd, now) ?? []), ...reaction.enqueue],
      result: { ok: true, result },
    };
  });
  if (!result.ok) throw handler.rejected?.(result.rejection) ?? toApiError(result.rejection);
  // The commit above held the record; the middleware must neither overwrite nor release it.
  if (ctx.idempotency?.scope && events.length > 0) ctx.idempotency.scope.stored = true;
  return { result: result.result, events };
}
