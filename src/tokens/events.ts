/** The event the build command emits (its shape and version live in events/types.ts). */
export type { TokenBuilt as TokenEvent } from "../../events/types.ts";
