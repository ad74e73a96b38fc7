/**
 * Dashboard (rule 17): {web_url}/server-dashboard/<server_id>. web_url is `api.web_url` when configured,
 * else the service's GET /general/frontend-url, cached so the link still works while the service is down.
 */
import * as v from "valibot";
import { describeError, type Api } from "../api/client.ts";
import type { Config } from "../config/index.ts";
import type { Store } from "../store/index.ts";
import type { Feature } from "../feature.ts";

export type DashboardLink =
  { ok: true; url: string; source: "config" | "api" | "cache" } | { ok: false; reason: string };

export async function dashboardLink(deps: { api: Api; config: Config; store: Store }): Promise<DashboardLink> {
  const { api, config, store } = deps;
  const link = (web: string) =>
    `${web.replace(/\/+$/, "")}/server-dashboard/${encodeURIComponent(config.api.server_id)}`;
  if (config.api.web_url) return { ok: true, url: link(config.api.web_url), source: "config" };
  const cache = store.cache("frontend_url", v.string());
  const res = await api.getFrontendUrl();
  if (res.ok) {
    await cache.set(res.value);
    return { ok: true, url: link(res.value), source: "api" };
  }
  const cached = await cache.get();
  if (cached) return { ok: true, url: link(cached.data), source: "cache" };
  return { ok: false, reason: `the service did not give its web address (${describeError(res.error)})` };
}

/** `!dashboard` in chat (name from config `commands.dashboard`) answers with the link. */
export const dashboard: Feature = (agent) => {
  const { config, messages } = agent.deps;
  agent.command(config.commands.dashboard, async ({ reply }) => {
    const res = await dashboardLink(agent.deps);
    if (res.ok) await reply(messages.t("dashboard.link", { url: res.url }));
    else await reply(messages.t("dashboard.unavailable"));
  });
};
