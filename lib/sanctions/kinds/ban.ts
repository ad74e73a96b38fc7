/**
 * A ban's protocol (docs/client-interface.md rule 10): the target's service user (created when unknown), then
 * POST /ban/. An uncertain entry (an earlier attempt's answer lost) is looked up first and counts as delivered when
 * the service has it; one cancelled by an unban meanwhile is looked up too, so that the unban after it lifts a ban
 * that did reach VyHub rather than find nothing. (A ban cancelled before it was ever sent does not come here: the
 * round settles it as cancelled.) Before it is sent, an unban queued after it under the player's service user id
 * cancels it (laterUnban). The answers, for every kind: attempt.ts.
 */
import type { Attempt, Item, SendResult } from "../attempt.ts";
import type { QueueEntry } from "../../store/index.ts";
import { findBan } from "../reconcile.ts";
import { type BanEntry, unbanCancels } from "../schemas.ts";

export async function sendBan(a: Attempt<Extract<Item, { kind: "ban" }>>): Promise<SendResult> {
  const ban = a.item.entry.data;
  const user = await a.round.userOf(ban.target, true);
  if (!user.ok) return a.answered(user.error, false);
  let looked: string | undefined;
  if (a.item.entry.uncertain) {
    const found = await findBan(a.api, user.id, ban);
    if (!found.ok) return a.lookupFailed(found.error);
    if (found.value) return a.done("delivered", { found: true }, found.value);
    if (ban.status === "UNBANNED") return a.done("cancelled");
    looked = "not found";
  }
  const cancelled = await laterUnban(a, user.id);
  if (cancelled === undefined) return undefined;
  if (cancelled) return a.done("cancelled");
  if (!(await a.record(looked))) return undefined;
  const res = await a.api.createBan(
    {
      user_id: user.id,
      serverbundle_id: ban.serverbundle_id,
      length: ban.length,
      reason: ban.reason,
      created_on: ban.created_on,
      status: "ACTIVE",
    },
    { morphUserId: a.morphUserId },
  );
  return res.ok ? a.done("delivered", {}, res.value) : a.answered(res.error, true);
}

/**
 * Rule 11 across the player's two keys: an unban queued after this ban by their service user id (identifier null:
 * the service could not be asked then) could not find it by game id when queued (queueUnban). Found now through
 * the index (`user:<id>`), it cancels the ban as queueUnban would have: marked UNBANNED only if nobody changed the
 * entry since it was read (the same condition as Attempt.record), never sent. False: no such unban; undefined:
 * the entry changed meanwhile (another worker or process has it).
 */
async function laterUnban(a: Attempt<Extract<Item, { kind: "ban" }>>, userId: string) {
  const { entry } = a.item;
  const { queues } = a.round;
  const later = (await queues.unban.byKey(`user:${userId}`)).some(
    (u) => u.id > entry.id && unbanCancels(u.data, entry.data),
  );
  if (!later) return false;
  const unchanged = (cur: QueueEntry<BanEntry>) => cur.attempts === entry.attempts && cur.data.status === "ACTIVE";
  const marked = await queues.ban.update(entry.id, { data: { ...entry.data, status: "UNBANNED" } }, unchanged);
  return marked ? true : undefined;
}
