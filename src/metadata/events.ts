/** The events metadata commands emit (their shapes and versions live in events/types.ts). */
import type { MetadataHosted, MetadataImageUnfetchable } from "../../events/types.ts";

export type MetadataEvent = MetadataHosted | MetadataImageUnfetchable;
