/**
 * The CAIP-2 id of the configured cluster, for the Actions header `X-Blockchain-Ids`: the
 * published ids of mainnet and devnet, and for a local chain the genesis hash it reports (asked
 * once, then kept).
 */
import type { Services } from "../services.ts";

export const CAIP2 = {
  "mainnet-beta": "solana:5eykt4UsFv8P8NJdTREpY1vzqKqZKvdp",
  devnet: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1",
} as const;

const localIds = new WeakMap<Services, Promise<string>>();

export function blockchainId(s: Services): Promise<string> {
  const network = s.config.network;
  if (network !== "localnet") return Promise.resolve(CAIP2[network]);
  let id = localIds.get(s);
  if (!id) {
    // CAIP-2 for Solana: the first 32 characters of the base58 genesis hash.
    id = s.connection.getGenesisHash().then((h) => `solana:${h.slice(0, 32)}`);
    id.catch(() => localIds.delete(s));
    localIds.set(s, id);
  }
  return id;
}
