/** Hosted metadata documents and the content-addressed images they point at. */
import type { DeclaredProjection } from "../events/projection.ts";

export interface HostedMetadataDoc {
  id: string;
  keyId: string;
  json: string;
  imageId: string;
  imageExt: string;
}

export interface HostedImageDoc {
  imageId: string;
  ext: string;
  mime: string;
  bytes: number;
  chunks: number;
}

export const hostedMetadataProjection: DeclaredProjection<HostedMetadataDoc> = {
  name: "metadata",
  handles: ["MetadataHosted"],
  keysOf: (e) => (e.type === "MetadataHosted" ? [[e.data.id]] : []),
  evolve: (doc, e) =>
    e.type === "MetadataHosted"
      ? {
        id: e.data.id,
        keyId: e.data.keyId,
        json: e.data.json,
        imageId: e.data.imageId,
        imageExt: e.data.imageExt,
      }
      : doc,
};

/** The manifest is what makes an image servable; it only exists once its event is committed. */
export const hostedImageProjection: DeclaredProjection<HostedImageDoc> = {
  name: "image",
  handles: ["MetadataHosted"],
  keysOf: (e) => (e.type === "MetadataHosted" ? [[e.data.imageId]] : []),
  evolve: (doc, e) =>
    e.type === "MetadataHosted"
      ? doc ?? {
        imageId: e.data.imageId,
        ext: e.data.imageExt,
        mime: e.data.imageMime,
        bytes: e.data.imageBytes,
        chunks: e.data.imageChunks,
      }
      : doc,
};
