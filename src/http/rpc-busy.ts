/**
 * A request the Solana RPC budget cannot serve in time answers 503 `rpc_busy` with Retry-After,
 * never 500: the app's error handler turns the error such a refusal caused, in whatever shape
 * web3.js passed it on (rpc-refusals.ts), into that answer.
 */
import { refusalIn } from "../solana/rpc-refusals.ts";
import { ApiError } from "../kernel/errors.ts";

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
