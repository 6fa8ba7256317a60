/**
 * Runs an admin command through the one runner (src/commands/run.ts): load the key, decide,
 * append to its purchase's stream in one atomic commit. The /admin routes and the admin CLI
 * (`--kv`, and `--url` through those routes) both come here.
 */
import type { EventStore } from "../../events/store.ts";
import type { StoredEvent } from "../../events/types.ts";
import { type Clock, systemClock } from "../kernel/clock.ts";
import { type CommandHandler, runCommand } from "../commands/run.ts";
import type { Rejection } from "../kernel/rejection.ts";
import { type AdminCommand, type AdminState, adminStream, decideAdmin } from "./decide.ts";
import type { AdminEvent } from "./events.ts";
import type { KeyView } from "./keys.ts";
import { getKey, loadAdmin } from "./reads.ts";

export const adminCommands: CommandHandler<
  AdminCommand,
  AdminState,
  AdminEvent,
  Rejection,
  AdminEvent[]
> = {
  load: loadAdmin,
  decide: decideAdmin,
  stream: adminStream,
  respond: (events) => events,
};

export interface AdminOutcome {
  /** The key as it is after the command. */
  key: KeyView;
  /** False when the command changed nothing (already banned, nothing to lift). */
  changed: boolean;
  events: StoredEvent[];
}

/** A rejection (an unknown key: 404) throws its API error and writes nothing. */
export async function handleAdmin(
  store: EventStore,
  cmd: AdminCommand,
  clock: Clock = systemClock,
): Promise<AdminOutcome> {
  const { events } = await runCommand(adminCommands, cmd, { store, clock });
  return { key: (await getKey(store.kv, cmd.keyId))!, changed: events.length > 0, events };
}
