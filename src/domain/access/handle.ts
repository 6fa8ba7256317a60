/** Runs an access command through the one runner: load key and purchase, decide, append. */
import type { EventStore } from "../../../events/store.ts";
import type { StoredEvent } from "../../../events/types.ts";
import { type Clock, systemClock } from "../../kernel/clock.ts";
import { type CommandHandler, runCommand } from "../../commands/run.ts";
import type { Rejection } from "../../kernel/rejection.ts";
import { type AccessCommand, type AccessState, accessStream, decideAccess } from "./decide.ts";
import type { AccessEvent } from "./events.ts";
import { loadAccess } from "./reads.ts";

export const accessCommands: CommandHandler<
  AccessCommand,
  AccessState,
  AccessEvent,
  Rejection,
  AccessEvent[]
> = {
  load: loadAccess,
  decide: decideAccess,
  stream: accessStream,
  respond: (events) => events,
};

/** The stored events (none when nothing changed); a rejection throws its API error. */
export async function handleAccess(
  store: EventStore,
  cmd: AccessCommand,
  clock: Clock = systemClock,
): Promise<StoredEvent[]> {
  return (await runCommand(accessCommands, cmd, { store, clock })).events;
}
