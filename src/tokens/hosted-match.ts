/**
 * A build whose metadataUri is one of this service's hosted documents must carry that document's
 * name and symbol. Otherwise a token named "Innocent" would point at a hosted "USD Coin" document,
 * and wallets and explorers, which show the document, would show "USD Coin" under our URL.
 *
 * The comparison is exact (the same code points): the chain gets the build's strings and the
 * document is served byte for byte, so any difference is one a reader can see. A caller's own
 * external URI is not fetched: the service cannot know what it will serve tomorrow (docs/tokens.md).
 */
import { hostedMetadataProjection } from "../../projections/hosted.ts";
import { kvReads, read } from "../commands/read.ts";
import { ApiError } from "../kernel/errors.ts";
import type { BuildRequest } from "./request-schema.ts";

/** Throws 400 naming `metadataUri`, or `name` and `symbol`, when the build does not match. */
export async function checkHostedDocumentMatch(
  kv: Deno.Kv,
  hostedBases: readonly string[],
  req: Pick<BuildRequest, "name" | "symbol" | "metadataUri">,
): Promise<void> {
  const id = hostedDocumentId(req.metadataUri);
  if (!id) return;
  const doc = await read(kvReads(kv), hostedMetadataProjection, [id]);
  if (!doc) {
    if (!onOwnOrigin(hostedBases, req.metadataUri)) return;
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

const HOSTED_PATH = /^\/m\/([0-9a-f]{32})\.json$/;

/**
 * The hosted document a URL reaches, whatever its spelling: the path as the server routes it
 * (dot segments resolved, percent-escapes decoded), any host. The same document answers with a
 * query or fragment added, with the host in capitals, with :443 or a trailing dot, and under any
 * other name of the deployment (a Deno Deploy domain beside a custom one, or the portal's origin
 * redirecting to HOSTED_BASE_URL); a prefix test on the text let each of those through.
 */
export function hostedDocumentId(uri: string): string | null {
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return null;
  }
  let path = url.pathname;
  try {
    path = decodeURIComponent(path);
  } catch { /* not decodable: the server would not route it either */ }
  return HOSTED_PATH.exec(path)?.[1] ?? null;
}

/** Whether the URL is on one of our origins (host case, default port and trailing dot aside). */
export function onOwnOrigin(bases: readonly string[], uri: string): boolean {
  const host = (u: URL) => `${u.protocol}//${u.hostname.replace(/\.$/, "")}:${u.port}`;
  try {
    const target = host(new URL(uri));
    return bases.some((b) => host(new URL(b)) === target);
  } catch {
    return false;
  }
}
