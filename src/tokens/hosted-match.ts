/**
 * A build whose metadataUri is one of this service's hosted documents must carry that document's
 * name and symbol. Otherwise a token named "Innocent" would point at a hosted "USD Coin" document,
 * and wallets and explorers, which show the document, would show "USD Coin" under our URL.
 *
 * The comparison is exact (the same code points): the chain gets the build's strings and the
 * document is served byte for byte, so any difference is one a reader can see. A caller's own
 * external URI is not fetched: the service cannot know what it will serve tomorrow (docs/tokens.md).
 */
import { projectionKey } from "../../events/keys.ts";
import type { HostedMetadataDoc } from "../../projections/hosted.ts";
import { ApiError } from "../kernel/errors.ts";
import { hostedMetadataId } from "../metadata/document.ts";
import type { BuildRequest } from "./request-schema.ts";

/** Throws 400 naming `metadataUri`, or `name` and `symbol`, when the build does not match. */
export async function checkHostedDocumentMatch(
  kv: Deno.Kv,
  hostedBases: readonly string[],
  req: Pick<BuildRequest, "name" | "symbol" | "metadataUri">,
): Promise<void> {
  const id = hostedBases.map((b) => hostedMetadataId(b, req.metadataUri)).find((x) => x !== null);
  if (!id) return;
  const doc = (await kv.get<HostedMetadataDoc>(projectionKey("metadata", [id]))).value;
  if (!doc) {
    throw new ApiError("invalid_request", "Request is invalid", {
      metadataUri: "no document is hosted at this URL; POST /v1/metadata first",
    });
  }
  const hosted = JSON.parse(doc.json) as { name?: unknown; symbol?: unknown };
  const fields: Record<string, string> = {};
  for (const f of ["name", "symbol"] as const) {
    if (req[f] !== hosted[f]) {
      fields[f] = `must be ${JSON.stringify(hosted[f])}, the ${f} of the hosted document at ` +
        "metadataUri";
    }
  }
  if (Object.keys(fields).length) {
    throw new ApiError(
      "invalid_request",
      "The name and symbol must be those of the hosted metadata document",
      fields,
    );
  }
}
