/** Every route group the service mounts beside pricing and /v1/me, in one list. */
import type { RouteGroup } from "../http/env.ts";
import { portalApiRoutes } from "./portal-api.ts";
import { portalPageRoutes } from "./portal-page.ts";
import { metadataRoutes } from "./metadata.ts";
import { hostedRoutes } from "./hosted.ts";
import { transactionRoutes } from "./transactions.ts";
import { tokensRoutes } from "./tokens.ts";
import { tokenUpdateRoutes } from "./token-updates.ts";
import { adminRoutes } from "./admin.ts";
import { docsRoutes } from "./docs.ts";
import { healthRoutes } from "./health.ts";
import { tokenListRoutes } from "./token-list.ts";
import { webhookRoutes } from "./webhooks.ts";
import { actionsRoutes } from "./actions.ts";

export const routeGroups: RouteGroup[] = [
  portalApiRoutes,
  portalPageRoutes,
  metadataRoutes,
  hostedRoutes,
  transactionRoutes,
  tokensRoutes,
  tokenUpdateRoutes,
  adminRoutes,
  docsRoutes,
  healthRoutes,
  tokenListRoutes,
  webhookRoutes,
  actionsRoutes,
];
