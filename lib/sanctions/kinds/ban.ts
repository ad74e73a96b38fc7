/**
 * A ban's protocol (docs/client-interface.md rule 10): the target's service user (created when unknown), then
 * POST /ban/. An uncertain entry (an earlier attempt's answer lost) is looked up first and counts as delivered when
 * the service has it; one cancelled by an unban meanwhile is looked up too, so that the unban after it lifts a ban
 * that did reach VyHub rather than find nothing. (A ban cancelled before it was ever sent does not come here: the
 * round settles it as cancelled.) The answers, for every kind: attempt.ts.
 */
import type { Attempt, Item, SendResult } from "../attempt.ts";
import { findBan } from "../reconcile.ts";

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
