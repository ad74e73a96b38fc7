/**
 * `hub-agent dashboard`: this server's dashboard link, as `!dashboard` answers in chat (lib/features/dashboard.ts):
 * from api.web_url, else the service's web address (cached for when it does not answer).
 */
import type { DashboardLink } from "../features/dashboard.ts";
import type { Config } from "./config.ts";
import { type Watched, serviceApi } from "./service.ts";
import { type StoreDeps, openConfiguredStore } from "./storage.ts";

export type { DashboardLink } from "../features/dashboard.ts";

/** `watched`: where the command keeps its service clients (a refused key decides its outcome). */
export async function dashboardLink(deps: StoreDeps & { config: Config; watched: Watched[] }): Promise<DashboardLink> {
  const { config, watched } = deps;
  const [{ dashboardLink: link }, { api }, store] = await Promise.all([
    import("../features/dashboard.ts"),
    serviceApi(config, { watched }),
    openConfiguredStore(deps),
  ]);
  return link({ api, config, store });
}
