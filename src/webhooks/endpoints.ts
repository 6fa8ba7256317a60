/**
 * Commands and reads behind /v1/webhooks: register (the secret is returned once), list, delete,
 * a delivery log per endpoint, and replay of a delivery. Every change is an event.
 */
import { z } from "zod";
import type { Tx } from "../../events/store.ts";
import type { WebhookEventType } from "../../events/types.ts";
import type { KeyDoc } from "../../projections/keys.ts";
import {
  webhookDeliveriesByEndpointProjection,
  type WebhookDeliveryDoc,
  webhookDeliveryProjection,
  type WebhookEndpointDoc,
  webhookEndpointProjection,
} from "../../projections/webhooks.ts";
import { kvReads, readList, readMany } from "../commands/read.ts";
import { runCommand } from "../commands/run.ts";
import { ApiError, invalid } from "../kernel/errors.ts";
import { classifyAddress, isLoopbackAddress } from "../metadata/image/address-policy.ts";
import { parseIp } from "../kernel/ipaddr.ts";
import { imageUrlProblem } from "../metadata/image/fetch-image.ts";
import type { DeliveryScheduler, Services } from "../services.ts";
import { newDeliveryId, newEndpointId, WEBHOOK_EVENT_TYPES } from "./decide.ts";
import { deliveryMessage, kvDeliveryScheduler } from "./scheduler.ts";
import { newWebhookSecret, sealSecret } from "./secret.ts";
import {
  decideDelete,
  decideRegister,
  decideReplay,
  type DeleteEndpoint,
  type RegisterEndpoint,
  type ReplayDelivery,
} from "./commands.ts";
import { keyEndpointIds, loadReplay, readDelivery, readEndpoint } from "./reads.ts";

const registerCommand = {
  load: async (tx: Tx, cmd: RegisterEndpoint) => ({
    endpointIds: await keyEndpointIds(tx.kv, cmd.keyId),
  }),
  decide: decideRegister,
  stream: (cmd: RegisterEndpoint) => `webhook-${cmd.endpointId}`,
  expectedVersion: 0 as const,
  respond: () => null,
};

const deleteCommand = {
  load: (tx: Tx, cmd: DeleteEndpoint) => readEndpoint(tx, cmd.endpointId),
  decide: decideDelete,
  stream: (cmd: DeleteEndpoint) => `webhook-${cmd.endpointId}`,
  expectedVersion: "any" as const,
  respond: () => null,
};

/** The replayed delivery's first attempt goes on the queue in the same commit. */
const replayCommand = (scheduler: DeliveryScheduler) => ({
  load: loadReplay,
  decide: decideReplay,
  stream: (cmd: ReplayDelivery) => `webhook-${cmd.endpointId}`,
  expectedVersion: "any" as const,
  respond: () => null,
  enqueue: (_e: unknown, _s: unknown, cmd: ReplayDelivery) =>
    scheduler.schedule(deliveryMessage(cmd.deliveryId, 1), 0),
});

export const RegisterRequest = z.strictObject({
  url: z.string().max(2000, "at most 2000 characters"),
  events: z.array(z.enum(WEBHOOK_EVENT_TYPES, {
    error: `each one of ${WEBHOOK_EVENT_TYPES.join(", ")}`,
  })).min(1, "at least one event type").max(WEBHOOK_EVENT_TYPES.length).optional(),
  description: z.string().max(200, "at most 200 characters").optional(),
});

/**
 * What is wrong with `url` as a webhook endpoint before any delivery, or null. The address rules
 * are the image fetcher's: an IP literal must be public, and a host name is resolved and checked
 * again on every attempt (a name that is public today may not be tomorrow).
 */
export function webhookUrlProblem(url: string, allowLoopback: boolean): string | null {
  const problem = imageUrlProblem(url, { allowLoopbackHttpForTests: allowLoopback });
  if (problem) return problem;
  const u = new URL(url);
  const host = u.hostname.replace(/^\[|\]$/g, "").replace(/\.$/, "");
  const loopbackOk = allowLoopback &&
    (isLoopbackAddress(host) || host === "localhost");
  // Plain http only to a loopback receiver, and only where loopback is allowed at all.
  if (u.protocol === "http:" && !loopbackOk) return "only https URLs are allowed";
  if (loopbackOk) return null;
  if (host === "localhost" || host.endsWith(".localhost")) return `host ${host} is not public`;
  if (parseIp(host)) {
    const verdict = classifyAddress(host);
    if (!verdict.public) return `address ${verdict.address} is not public (${verdict.reason})`;
  }
  return null;
}

export interface EndpointView {
  id: string;
  url: string;
  events: WebhookEventType[];
  description: string | null;
  status: "enabled" | "disabled";
  failingSince: string | null;
  createdAt: string;
  disabledAt: string | null;
}

const iso = (ms: number | null) => ms === null ? null : new Date(ms).toISOString();

export const endpointView = (e: WebhookEndpointDoc): EndpointView => ({
  id: e.endpointId,
  url: e.url,
  events: e.eventTypes,
  description: e.description,
  status: e.status,
  failingSince: iso(e.failingSince),
  createdAt: iso(e.createdAt)!,
  disabledAt: iso(e.disabledAt),
});

export async function registerEndpoint(
  s: Services,
  key: KeyDoc,
  body: z.infer<typeof RegisterRequest>,
): Promise<EndpointView & { secret: string }> {
  const problem = webhookUrlProblem(body.url, s.config.webhooks.allowLoopback);
  if (problem) throw invalid({ url: problem });
  const secret = newWebhookSecret();
  const secretSealed = await sealSecret(s.config.keyPepper!, secret);
  const endpointId = newEndpointId();
  const eventTypes = [...new Set(body.events ?? WEBHOOK_EVENT_TYPES)] as WebhookEventType[];
  await runCommand(registerCommand, {
    endpointId,
    keyId: key.keyId,
    url: body.url,
    eventTypes,
    description: body.description ?? null,
    secretSealed,
  }, { store: s.store, clock: s.clock });
  const doc = await ownEndpoint(s, key, endpointId);
  return { ...endpointView(doc), secret };
}

/** The key's endpoints, oldest first. */
export async function listEndpoints(s: Services, key: KeyDoc): Promise<EndpointView[]> {
  const ids = await keyEndpointIds(s.kv, key.keyId);
  const docs = await endpointDocs(s.kv, ids);
  return docs.sort((a, b) => a.createdAt - b.createdAt).map(endpointView);
}

export async function endpointDocs(kv: Deno.Kv, ids: string[]): Promise<WebhookEndpointDoc[]> {
  const out: WebhookEndpointDoc[] = [];
  for (let i = 0; i < ids.length; i += 10) {
    const got = await readMany(
      kvReads(kv),
      ids.slice(i, i + 10).map((id) => [webhookEndpointProjection, [id]] as const),
    );
    for (const g of got) if (g) out.push(g);
  }
  return out;
}

/** The endpoint if the caller's key registered it; another key's reads as unknown. */
export async function ownEndpoint(
  s: Services,
  key: KeyDoc,
  id: string,
): Promise<WebhookEndpointDoc> {
  const doc = await readEndpoint(kvReads(s.kv), id);
  if (!doc || doc.keyId !== key.keyId) {
    throw new ApiError("not_found", "No webhook endpoint of this key has that id");
  }
  return doc;
}

export async function deleteEndpoint(s: Services, key: KeyDoc, id: string): Promise<void> {
  await ownEndpoint(s, key, id);
  await runCommand(deleteCommand, { endpointId: id, keyId: key.keyId }, {
    store: s.store,
    clock: s.clock,
  });
}

export interface DeliveryView {
  id: string;
  messageId: string;
  type: WebhookEventType;
  buildId: number;
  status: WebhookDeliveryDoc["status"];
  replayOf: string | null;
  createdAt: string;
  nextAttemptAt: string | null;
  failureReason: string | null;
  attempts: {
    attempt: number;
    at: string;
    ok: boolean;
    httpStatus: number | null;
    error: string | null;
    durationMs: number;
  }[];
  payload: unknown;
}

export const deliveryView = (d: WebhookDeliveryDoc): DeliveryView => ({
  id: d.deliveryId,
  messageId: d.messageId,
  type: d.eventType,
  buildId: d.buildId,
  status: d.status,
  replayOf: d.replayOf,
  createdAt: iso(d.createdAt)!,
  nextAttemptAt: iso(d.nextAttemptAt),
  failureReason: d.failureReason,
  attempts: d.attempts.map((a) => ({ ...a, at: iso(a.at)! })),
  payload: JSON.parse(d.payload),
});

const DELIVERY_CURSOR = /^dlv_[0-9a-z]{10}[0-9a-f]{12}$/;

/** An endpoint's deliveries, newest first; the cursor is the last delivery id of a page. */
export async function listDeliveries(
  s: Services,
  key: KeyDoc,
  endpointId: string,
  query: Record<string, string>,
): Promise<{ items: DeliveryView[]; nextCursor: string | null }> {
  const fields: Record<string, string> = {};
  const limit = query.limit === undefined ? 20 : Number(query.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 100) {
    fields.limit = "an integer from 1 to 100";
  }
  if (query.cursor !== undefined && !DELIVERY_CURSOR.test(query.cursor)) {
    fields.cursor = "not a cursor this endpoint returned";
  }
  if (Object.keys(fields).length) throw invalid(fields);
  await ownEndpoint(s, key, endpointId);
  const ids = await readList(s.kv, webhookDeliveriesByEndpointProjection, [endpointId], {
    before: query.cursor || undefined,
    reverse: true,
    limit: limit + 1,
  });
  const page = ids.slice(0, limit);
  const docs: WebhookDeliveryDoc[] = [];
  for (let i = 0; i < page.length; i += 10) {
    const got = await readMany(
      kvReads(s.kv),
      page.slice(i, i + 10).map((id) => [webhookDeliveryProjection, [id]] as const),
    );
    for (const g of got) if (g) docs.push(g);
  }
  return {
    items: docs.map(deliveryView),
    nextCursor: ids.length > limit ? page[page.length - 1] : null,
  };
}

/**
 * Sends a delivery's message again as a new delivery (same webhook-id and body, so a receiver
 * that deduplicates sees the same message), attempted at once and retried on the schedule.
 */
export async function replayDelivery(
  s: Services,
  key: KeyDoc,
  endpointId: string,
  deliveryId: string,
): Promise<DeliveryView> {
  const scheduler = s.webhookScheduler ?? kvDeliveryScheduler;
  const id = newDeliveryId(s.clock());
  await runCommand(
    replayCommand(scheduler),
    { deliveryId: id, originalId: deliveryId, endpointId, keyId: key.keyId },
    { store: s.store, clock: s.clock },
  );
  return deliveryView((await readDelivery(kvReads(s.kv), id))!);
}
