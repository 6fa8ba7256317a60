/**
 * What `deno task demo` and `deno task dev:key` check first: a service that answers, is ours and
 * runs on the local chain (both fund wallets by airdrop), and the chain's RPC beside it. Each
 * failure is one line saying what to do.
 */
import type { Connection } from "@solana/web3.js";

export class LocalServiceError extends Error {}

/** "Connection refused (os error 111)" rather than fetch's bare "fetch failed". */
function reason(e: unknown): string {
  const err = e as Error & { cause?: Error };
  const text = err.cause?.message ?? err.message ?? String(e);
  return text.split("\n")[0].split(": ").at(-1)!;
}

const START_HINT = "start it with `deno task start` (README, Quick start), or point the demo " +
  "or dev:key at it with SERVICE_URL=http://host:port";

/** What GET /v1/pricing says the network takes per token under each program, in lamports. */
export interface NetworkFigures {
  networkLamports?: string;
  token2022NetworkLamports?: string;
}

/**
 * The service must answer, be ours, and run on the local chain (the demo funds by airdrop).
 * Returns the network figures of its pricing, to set the demo's spend beside them.
 */
export async function checkService(service: string): Promise<NetworkFigures> {
  let res: Response;
  try {
    res = await fetch(`${service}/v1/pricing`, { signal: AbortSignal.timeout(10_000) });
  } catch (e) {
    throw new LocalServiceError(
      `no service answers at ${service} (${reason(e)}): ${START_HINT}`,
    );
  }
  const body = await res.json().catch(() => null);
  if (!res.ok || typeof body?.network !== "string" || typeof body?.token?.usd !== "number") {
    throw new LocalServiceError(
      `${service} answered HTTP ${res.status} but is not the token-creation service (wrong ` +
        `port? the service prints "token-creation service ready on http://…" when it starts): ` +
        START_HINT,
    );
  }
  if (body.network !== "localnet") {
    throw new LocalServiceError(
      `${service} runs on ${body.network}; the demo and dev:key fund wallets by airdrop and needs the ` +
        `local chain (the default settings of \`deno task start\`)`,
    );
  }
  return body.token;
}

export async function checkChain(connection: Connection, rpcUrl: string): Promise<void> {
  try {
    await connection.getSlot();
  } catch (e) {
    throw new LocalServiceError(
      `no Solana RPC answers at ${rpcUrl} (${reason(e)}): the ` +
        "service's embedded chain listens on CHAIN_PORT (8899); run the demo or dev:key with the same " +
        "CHAIN_PORT, or SOLANA_RPC_URL",
    );
  }
}
