/** Every route group the service mounts beside pricing and /v1/me, in one list. */
import type { RouteGroup } from "../app.ts";
import { portalApiRoutes } from "./portal-api.ts";

export const routeGroups: RouteGroup[] = [
  portalApiRoutes,
];
