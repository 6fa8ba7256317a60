/**
 * The hosted metadata JSON (Metaplex fungible-token standard) and the public URLs. The document is
 * built once, deterministically (fixed member order, absent inputs omitted), stored as a string in
 * the event and served byte for byte, so what a wallet reads is exactly what was recorded.
 */
import type { MetadataRequest } from "./request.ts";

export interface HostedImageRef {
  uri: string;
  mime: string;
}

export function metadataUri(publicBaseUrl: string, id: string): string {
  return `${publicBaseUrl}/m/${id}.json`;
}

/** Whether `uri` is one of the metadata URLs this service (at `publicBaseUrl`) hands out. */
export function isOwnMetadataUri(publicBaseUrl: string, uri: string): boolean {
  return hostedMetadataId(publicBaseUrl, uri) !== null;
}

/** The document id of a metadata URL this service (at `base`) hands out, or null. */
export function hostedMetadataId(base: string, uri: string): string | null {
  const prefix = `${base}/m/`;
  if (!uri.startsWith(prefix)) return null;
  return /^([0-9a-f]{32})\.json$/.exec(uri.slice(prefix.length))?.[1] ?? null;
}

export function imageUri(publicBaseUrl: string, imageId: string, ext: string): string {
  return `${publicBaseUrl}/i/${imageId}.${ext}`;
}

export function buildMetadataJson(req: MetadataRequest, image: HostedImageRef): string {
  const links = {
    website: req.website,
    twitter: req.twitter,
    telegram: req.telegram,
    discord: req.discord,
  };
  const hasLinks = Object.values(links).some((v) => v !== undefined);
  // Object literal order is the serialised order; undefined members vanish in JSON.stringify.
  const doc = {
    name: req.name,
    symbol: req.symbol,
    description: req.description,
    image: image.uri,
    external_url: req.website,
    attributes: req.attributes?.length
      ? req.attributes.map((a) => ({ trait_type: a.trait_type, value: a.value }))
      : undefined,
    properties: {
      files: [{ uri: image.uri, type: image.mime }],
      category: "image",
    },
    extensions: hasLinks ? links : undefined,
  };
  return JSON.stringify(doc);
}
