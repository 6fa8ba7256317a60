/**
 * Which HTTP request an RPC refusal belongs to. web3.js rewraps some errors as plain ones with
 * the message glued on (getLatestBlockhash, getAccountInfo, ...), so an RpcBusyError thrown in
 * the fetch does not always reach the HTTP layer as itself: the refusal is also noted in the
 * request's async context, where the error handler finds it whatever shape the error took.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { RpcBusyError } from "./rpc-budget.ts";

interface Scope {
  refusal: RpcBusyError | null;
}

const scopes = new AsyncLocalStorage<Scope>();

/** Runs `fn` as one request: refusals noted inside it are found by `refusalIn`. */
export function withRefusalScope<T>(fn: () => Promise<T>): Promise<T> {
  return scopes.run({ refusal: null }, fn);
}

export function noteRefusal(e: RpcBusyError): void {
  const scope = scopes.getStore();
  if (scope) scope.refusal = e;
}

/** The refusal behind `err`: the error itself, or one noted in the current request. */
export function refusalIn(err: unknown): RpcBusyError | null {
  if (err instanceof RpcBusyError) return err;
  return scopes.getStore()?.refusal ?? null;
}
