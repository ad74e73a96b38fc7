/**
 * Rule 1's server record as the store caches it ("server", written by `run` and by one-shot commands that had to
 * ask), and the serverbundle it names: one reading of both for the agent and the CLI.
 */
import type { Api, ApiError, Server } from "./api/client.ts";
import { ServerSchema } from "./api/schemas-server.ts";
import type { Store } from "./store/index.ts";

export const serverCache = (store: Store) => store.cache("server", ServerSchema);

/**
 * The cached record when it is `serverId`'s: a storage directory kept while api.server_id changed (a wrong id fixed, a
 * store moved to another server) holds the other server's, whose serverbundle is not this server's.
 */
export async function cachedServer(store: Store, serverId: string) {
  const cached = await serverCache(store).get();
  return cached && cached.data.id === serverId ? cached : undefined;
}

/** The record's serverbundle id: the nested bundle, else the flat id; undefined when it names none. */
export function bundleOf(server: Pick<Server, "serverbundle" | "serverbundle_id">): string | undefined {
  return server.serverbundle?.id ?? server.serverbundle_id ?? undefined;
}

/**
 * The serverbundle for a one-shot command: from the cached record, else asked from the service (and cached).
 * `error` says why neither knew it (absent: the live record names no serverbundle).
 */
export async function knownBundle(
  api: Api,
  store: Store,
  serverId: string,
): Promise<{ ok: true; id: string } | { ok: false; error?: ApiError }> {
  const cached = await cachedServer(store, serverId);
  const known = cached && bundleOf(cached.data);
  if (known) return { ok: true, id: known };
  const res = await api.getServer(serverId);
  if (!res.ok) return { ok: false, error: res.error };
  const id = bundleOf(res.value);
  if (!id) return { ok: false };
  await serverCache(store).set(res.value);
  return { ok: true, id };
}
