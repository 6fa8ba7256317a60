/**
 * Waits until a signature is confirmed by polling getSignatureStatuses (no subscription needed,
 * so it works over plain HTTP JSON-RPC), for the local tools that send their own transactions
 * (`dev:key`, `demo`, the local test stablecoin): 30 s at most, then a clear error; a failed
 * transaction throws at once.
 */
import type { Connection } from "@solana/web3.js";

export async function waitConfirmed(connection: Connection, signature: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const { value } = await connection.getSignatureStatuses([signature]);
    if (value[0]?.err) throw new Error(`transaction failed: ${JSON.stringify(value[0].err)}`);
    if (value[0]?.confirmationStatus && value[0].confirmationStatus !== "processed") return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`transaction ${signature} not confirmed in 30 s`);
}
