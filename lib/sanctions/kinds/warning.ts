/**
 * A warning's protocol (docs/client-interface.md rule 12): the target's service user (created when unknown), then
 * POST /warning/, with `morph_user_id` when a user issued it (the service then checks their permission). A warning
 * has no key of its own: before each send the service's like warnings are recorded with the attempt (`seen`), so an
 * answer lost is matched by id, not by either clock; an uncertain entry is looked up first (reconcile.ts) and a
 * match, claimed for this entry alone, counts as delivered. Callers refresh the ban list afterwards: the service may
 * auto-ban at its threshold.
 */
import type { Attempt, Item, SendResult } from "../attempt.ts";
import { isRejected } from "../../api/client.ts";
import { findWarning, warningsLike } from "../reconcile.ts";

export async function sendWarning(a: Attempt<Extract<Item, { kind: "warning" }>>): Promise<SendResult> {
  const { entry } = a.item;
  const warning = entry.data;
  const user = await a.round.userOf(warning.target, true);
  if (!user.ok) return a.answered(user.error, false);
  let looked: string | undefined;
  if (entry.uncertain) {
    const found = await findWarning(a.api, user.id, warning, entry.firstAttemptAt ?? entry.createdAt, a.round.claimed);
    if (!found.ok) return a.lookupFailed(found.error);
    if (found.value) {
      a.round.claimed.add(found.value.id);
      return a.done("delivered", { found: true }, found.value);
    }
    looked = "not found";
  }
  // An uncertain entry not found keeps its list: nothing outside it is ours yet.
  let seen = warning.seen;
  if (!entry.uncertain || !seen) {
    const like = await warningsLike(a.api, user.id, warning);
    // A key that may not list warnings still sends them (a lost answer is then matched by time).
    if (!like.ok && !isRejected(like.error)) return a.lookupFailed(like.error);
    seen = like.ok ? like.value : undefined;
  }
  if (!(await a.record(looked, { ...warning, seen }))) return undefined;
  const res = await a.api.createWarning(
    { user_id: user.id, serverbundle_id: warning.serverbundle_id, reason: warning.reason },
    { morphUserId: a.morphUserId },
  );
  if (res.ok) a.round.claimed.add(res.value.id);
  return res.ok ? a.done("delivered", {}, res.value) : a.answered(res.error, true);
}
