/**
 * The Actions channel: the key and purchase the Action's builds and hosted documents belong to.
 * A Solana Action has no API key, so the channel is one pseudo-key (id `0000000000000000`), issued by an
 * ordinary `KeyIssued` event the first time the Action is used (purchase `actions`, wallet the
 * treasury). Its secret MAC is empty, which no bearer secret ever verifies against, so nobody can
 * call the keyed API with it; but every fold that reads builds and hosted items (usage, the build
 * list, verification, the conduct rules, the audit) sees the channel's as any key's, and an
 * operator's ban of the key stops the Action.
 */
import type { KeyIssued } from "../../events/types.ts";
import { type KeyDoc, keysProjection } from "../../projections/keys.ts";
import { kvReads, read } from "../commands/read.ts";
import { runCommand } from "../commands/run.ts";
import type { Config } from "../config.ts";
import type { Services } from "../services.ts";

/**
 * Key ids are 16 hex digits (src/keys/api-key.ts), so the operator's admin commands (view, ban,
 * lift) address the channel like any key; real ones are random, and all zeros is reserved here.
 */
export const ACTIONS_KEY_ID = "0000000000000000";
export const ACTIONS_PURCHASE_ID = "actions";

/** The channel's key as it is now, issued by its first use. */
export async function actionsChannel(s: Services): Promise<KeyDoc> {
  const now = await read(kvReads(s.kv), keysProjection, [ACTIONS_KEY_ID]);
  if (now) return now;
  return await runCommand(
    {
      load: (tx) => read(tx, keysProjection, [ACTIONS_KEY_ID]),
      decide: (_cmd, key): KeyIssued[] =>
        key ? [] : [{
          type: "KeyIssued",
          v: 1,
          data: {
            keyId: ACTIONS_KEY_ID,
            purchaseId: ACTIONS_PURCHASE_ID,
            wallet: s.treasury.toBase58(),
            secretMac: "",
          },
        }],
      stream: () => `purchase-${ACTIONS_PURCHASE_ID}`,
      expectedVersion: "any",
      respond: () => null,
    },
    null,
    { store: s.store, clock: s.clock, idempotency: { scope: null, status: 201 } },
  )
    .then(() => read(kvReads(s.kv), keysProjection, [ACTIONS_KEY_ID]))
    .then((k) => k!);
}

/**
 * The services the channel's commands run with: the per-key limits (tokens and metadata per day,
 * hosted items per key) would cap every Action user together, so the channel has none of its own;
 * its limits are per wallet and per client address (src/actions/limits.ts).
 */
export function channelServices(s: Services): Services {
  let channel = channels.get(s);
  if (!channel) channels.set(s, channel = unboundedKeyLimits(s));
  return channel;
}

const channels = new WeakMap<Services, Services>();

function unboundedKeyLimits(s: Services): Services {
  const unbounded = Number.MAX_SAFE_INTEGER;
  const limits: Config["limits"] = {
    ...s.config.limits,
    tokensPerDay: unbounded,
    metadataPerDay: unbounded,
    hostedItemsPerKey: unbounded,
  };
  return { ...s, config: { ...s.config, limits } };
}
