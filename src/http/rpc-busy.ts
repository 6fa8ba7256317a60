/**
 * A request the Solana RPC budget cannot serve in time answers 503 `rpc_busy` with Retry-After,
 * never 500: `rpcBusyScope` marks each request so a refusal deep in an RPC call is found again
 * (rpc-refusals.ts), and `rpcBusyAnswer` turns the error it caused into that answer.
 */
import type { MiddlewareHandler } from "hono";
import { refusalIn, withRefusalScope } from "../solana/rpc-refusals.ts";
import { ApiError } from "./errors.ts";

export function rpcBusyScope(): MiddlewareHandler {
  return async function rpcBusy(_c, next) {
    await withRefusalScope(next);
  };
}

/** The 503 for an error caused by an RPC refusal; null for any other error. */
export function rpcBusyAnswer(err: unknown): ApiError | null {
  if (err instanceof ApiError) return null;
  const refusal = refusalIn(err);
  if (!refusal) return null;
  const seconds = Math.max(1, Math.ceil(refusal.retryAfterMs / 1000));
  return new ApiError(
    "rpc_busy",
    `The Solana RPC is at its request budget; retry in ${seconds} s`,
    {},
    { "Retry-After": String(seconds) },
  );
}
