/**
 * The one way a command changes state: `load` reads what the decision needs through typed reads,
 * `decide(command, state, now)` returns the events or a `Rejection`, and the events go to their
 * stream in one atomic commit (`EventStore.transact`), with the request's idempotency record in
 * that same commit. A conflict re-runs load and decide on fresh state; a rejection writes nothing
 * and is thrown as the API error it names. HTTP routes, the CLI and the watcher all come here
 * through their feature's handler.
 */
import type { Enqueue, EventStore, Tx } from "../../events/store.ts";
import type { DomainEvent, StoredEvent } from "../../events/types.ts";
import type { Clock } from "../kernel/clock.ts";
import { isRejection, type Rejection, toApiError } from "../domain/rejection.ts";
import { type IdempotencyScope, recordFor } from "../idempotency/record.ts";

/** A command's three parts and how its answer is made; pure except `load`, which only reads. */
export interface CommandHandler<C, S, E extends DomainEvent, J extends Rejection, R> {
  /** The state the decision needs, read through `read`/`readMany` (src/commands/read.ts). */
  load(tx: Tx, cmd: C): Promise<S>;
  decide(cmd: C, state: S, now: number): E[] | J;
  /** The stream the events go to (an id the decision allocated may name it). */
  stream(cmd: C, state: S, events: E[]): string;
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

export interface CommandResult<E extends DomainEvent, R> {
  result: R;
  /** The events as stored (empty when the decision was that nothing changes). */
  events: StoredEvent<E>[];
}

export async function runCommand<C, S, E extends DomainEvent, J extends Rejection, R>(
  handler: CommandHandler<C, S, E, J, R>,
  cmd: C,
  ctx: RunContext,
): Promise<CommandResult<E, R>> {
  type Outcome = { ok: true; result: R } | { ok: false; rejection: J };
  const { result, events } = await ctx.store.transact<Outcome>(async (tx) => {
    const state = await handler.load(tx, cmd);
    const now = ctx.clock();
    const decided = handler.decide(cmd, state, now);
    if (isRejection(decided)) return { result: { ok: false, rejection: decided } };
    const result = handler.respond(decided, state, cmd);
    if (decided.length === 0) return { result: { ok: true, result } };
    const stream = handler.stream(cmd, state, decided);
    const expected = handler.expectedVersion ?? "read";
    const expectedVersion = expected === "read" ? await tx.streamVersion(stream) : expected;
    const record = ctx.idempotency;
    return {
      append: [{ stream, expectedVersion, events: decided }],
      sets: record ? recordFor(record.scope, record.status, result) : [],
      enqueue: handler.enqueue?.(decided, state, cmd, now) ?? [],
      result: { ok: true, result },
    };
  });
  if (!result.ok) throw handler.rejected?.(result.rejection) ?? toApiError(result.rejection);
  // The commit above held the record; the middleware must neither overwrite nor release it.
  if (ctx.idempotency?.scope && events.length > 0) ctx.idempotency.scope.stored = true;
  return { result: result.result, events: events as StoredEvent<E>[] };
}
