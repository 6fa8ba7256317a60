/** The events webhook commands emit (their shapes and versions live in events/types.ts). */
export type { WebhookEvent } from "../../events/types.ts";
