/** `warns <player>` (rule 12): a player's warnings in the bundle, active and inactive, newest first. */
import type { Api, ApiError, Warning } from "../api/client.ts";
import type { Messages } from "../messages.ts";
import { formatDate } from "./banlist.ts";
import type { PlayerRef } from "./schemas.ts";

/** How many warnings `warns` shows (the newest). */
export const WARNS_LIMIT = 50;

/**
 * The player's warnings in the bundle (and global ones), newest first. A player unknown to the service has none
 * (no user is created just to read). Errors are the service's answer (the caller says "unreachable" etc.).
 */
export async function listWarnings(
  api: Api,
  target: PlayerRef,
  bundleId: string,
): Promise<{ ok: true; warnings: Warning[]; total: number } | { ok: false; error: ApiError }> {
  let userId = target.user_id;
  if (!userId) {
    // Without a user id the target has its game id (PlayerRefSchema).
    const user = await api.getUser(target.identifier as string, target.type);
    // Only the service's own 404 (its error code) is a player it does not know; routing's is a wrong api.url path.
    if (!user.ok)
      return user.error.kind === "NotFound" && user.error.code ? { ok: true, warnings: [], total: 0 } : user;
    userId = user.value.id;
  }
  const res = await api.listWarnings(userId, { bundleId, size: WARNS_LIMIT });
  if (!res.ok) return res;
  const warnings = [...res.value.items].sort((a, b) => Date.parse(b.created_on) - Date.parse(a.created_on));
  return { ok: true, warnings, total: res.value.total };
}

/** Active: counts towards the service's auto-ban (not disabled, not expired). */
export function warningActive(w: Warning): boolean {
  return w.active && !w.disabled;
}

/** The lines of `warns` (lang warns.*): a header and one line per warning, or the "none" line. */
export function formatWarnings(messages: Messages, playerName: string, warnings: Warning[], total?: number): string[] {
  if (!warnings.length) return [messages.t("warns.none", { player: playerName })];
  return [
    messages.t("warns.header", { player: playerName, count: total ?? warnings.length }),
    ...warnings.map((w) =>
      messages.t("warns.line", {
        status: messages.t(warningActive(w) ? "warns.active" : "warns.inactive"),
        date: formatDate(Date.parse(w.created_on)),
        reason: w.reason || "-",
        creator: w.creator?.username || messages.t("ban.console"),
      }),
    ),
  ];
}
