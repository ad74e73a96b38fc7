/**
 * A storage directory with bans of fresh players queued, as `ban` leaves them while the service is down: the
 * drain test and `bench:backlog` start from it.
 */
import { mkdtempSync } from "node:fs";
import { join } from "node:path";
import { queueBan } from "../../lib/sanctions/index.ts";
import { openStore, type Store } from "../../lib/store/index.ts";

export async function queuedBans(
  parent: string,
  n: number,
  opts: { prefix: string; player: () => string; serverbundleId: string },
): Promise<{ dir: string; store: Store }> {
  const dir = mkdtempSync(join(parent, "hub-backlog-"));
  const store = await openStore({ dir: join(dir, "store"), fsync: false });
  for (let i = 0; i < n; i++) {
    const target = { identifier: opts.player(), type: "STEAM", user_id: null, name: "" };
    const reason = `${opts.prefix} ${i}`;
    await queueBan(store, { target, length: 3600, reason, creator: null, serverbundleId: opts.serverbundleId });
  }
  return { dir, store };
}
