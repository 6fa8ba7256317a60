/**
 * Finds an RPC budget refusal in whatever error reaches the HTTP layer. web3.js rewraps some
 * errors as plain ones with the original glued into the message (getLatestBlockhash,
 * getAccountInfo: `failed to get recent blockhash: RpcBusyError: …`), so an RpcBusyError thrown
 * in the fetch does not always arrive as itself: it is recognised by the message only it writes.
 * (Marking each request's async context instead would put a cost on every request.)
 */
import { RpcBusyError } from "./rpc-budget.ts";

const WRITTEN_BY_RPC_BUSY_ERROR = /RPC budget: (.+?); retry in (\d+) s/;

export function refusalIn(err: unknown): RpcBusyError | null {
  let e = err;
  for (let depth = 0; e && depth < 5; depth++) {
    if (e instanceof RpcBusyError) return e;
    const m = WRITTEN_BY_RPC_BUSY_ERROR.exec(e instanceof Error ? e.message : String(e));
    if (m) return new RpcBusyError(Number(m[2]) * 1000, m[1]);
    e = (e as { cause?: unknown }).cause;
  }
  return null;
}
