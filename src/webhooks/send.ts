/**
 * One signed delivery attempt: Standard Webhooks headers from the `standardwebhooks` package,
 * sent through the image fetcher's pinned-address POST (public addresses only, no redirects).
 */
import { Webhook } from "standardwebhooks";
import { postPinned } from "../metadata/image/fetch-image.ts";
import { ATTEMPT_TIMEOUT_MS, type AttemptResult } from "./decide.ts";

export interface SendOptions {
  allowLoopback: boolean;
  timeoutMs?: number;
}

export async function sendSigned(
  url: string,
  secret: string,
  messageId: string,
  payload: string,
  now: number,
  opts: SendOptions,
): Promise<AttemptResult> {
  const started = performance.now();
  const at = new Date(now);
  const result = await postPinned(url, {
    timeoutMs: opts.timeoutMs ?? ATTEMPT_TIMEOUT_MS,
    allowLoopbackHttpForTests: opts.allowLoopback,
    headers: {
      "Content-Type": "application/json",
      "User-Agent": "token-creation-webhooks/1.0",
      "webhook-id": messageId,
      "webhook-timestamp": String(Math.floor(now / 1000)),
      "webhook-signature": new Webhook(secret).sign(messageId, at, payload),
    },
    body: payload,
  });
  const durationMs = Math.round(performance.now() - started);
  return result.ok
    ? { ok: true, httpStatus: result.status, error: null, durationMs }
    : { ok: false, httpStatus: result.status, error: result.reason, durationMs };
}
