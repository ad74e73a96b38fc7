/**
 * An unban's protocol (docs/client-interface.md rule 11). The user's active bans in the bundle are looked up every
 * time (an unban may wait in the queue while a new ban is issued on the web, and must never lift that): none issued
 * up to the unban → delivered (nothing left to lift); only such → PATCH /user/<user_id>/ban; older and newer ones →
 * PATCH /ban/<id> for each older one. The user unknown to the service → not_found (nothing to unban). First, a ban
 * of the same person queued before it under their other key (game id vs service user id) is settled: cancelled when
 * the unban may, else the unban waits for it.
 */
import type { Attempt, Item, SendResult } from "../attempt.ts";
import { type ApiError, type Ban, isAcceptedWrite, isRejected } from "../../api/client.ts";
import { isUncertain, type QueueEntry } from "../../store/index.ts";
import { type Lookup, bansAround } from "../reconcile.ts";
import { type BanEntry, type UnbanEntry, entriesByKeys, playerKey, playerLabel, unbanCancels } from "../schemas.ts";

export async function sendUnban(a: Attempt<Extract<Item, { kind: "unban" }>>): Promise<SendResult> {
  const unban = a.item.entry.data;
  const user = await a.round.userOf(unban.target, false);
  if (!user.ok) return a.answered(user.error, false);
  const other = await otherKeyBans(a, a.item.entry, user.id);
  if (!other.ok) return a.lookupFailed(other.error);
  if (other.value) {
    const message = `waits for the ban of the same player queued before it as ${playerLabel(other.value.target)}`;
    return a.keep({ lastError: message }, message);
  }
  const around = await bansAround(a.api, user.id, unban.serverbundle_id, unban.created_on, a.round.now());
  if (!around.ok) return a.lookupFailed(around.error);
  const { older, newer } = around.value;
  if (older.length === 0)
    return a.done("delivered", a.item.entry.uncertain ? { found: true } : { nothingToLift: true });
  if (!(await a.record(`${older.length} older, ${newer.length} newer active ban(s)`))) return undefined;
  const morphUserId = a.morphUserId;
  if (newer.length === 0) {
    const res = await a.api.unbanUser(user.id, { morphUserId, bundleId: unban.serverbundle_id });
    return res.ok ? a.done("delivered") : a.answered(res.error, true);
  }
  // A ban issued after the unban stays: lift the older ones one by one.
  return liftEach(a, older);
}

/**
 * PATCH /ban/<id> for each ban. One gone meanwhile (the service's own 404) has nothing left to lift; one refused
 * (403: a ban outside the processor's rights) does not stop the others, and the unban is then reported refused.
 * Any other failure keeps the unban, uncertain once a PATCH before it went through (even when this one provably
 * was not carried out): its next lookup finds what is still active, and `queue drop` never calls it unsent.
 */
async function liftEach(a: Attempt, bans: Ban[]): Promise<SendResult> {
  let refused: ApiError | undefined;
  let lifted = false;
  for (const b of bans) {
    const res = await a.api.patchBan(b.id, { status: "UNBANNED" }, { morphUserId: a.morphUserId });
    if (res.ok || isAcceptedWrite(res.error)) lifted = true;
    if (res.ok || isAcceptedWrite(res.error) || (res.error.kind === "NotFound" && res.error.code)) continue;
    if (res.error.kind !== "NotFound" && isRejected(res.error)) refused ??= res.error;
    else return a.answered(res.error, true, lifted);
  }
  return refused ? a.answered(refused, true, lifted) : a.done("delivered");
}

/**
 * A ban of the unban's user queued before it under the player's other key (game id vs `user:<uuid>`), which
 * queueUnban could not match offline: cancelled like one of the same key when the unban may; otherwise returned,
 * and the unban waits for it (sent first, it is then lifted as an older ban). Players with an unban go after the
 * others in a round (round.ts), so such a ban is sent or kept, never in flight while this looks.
 */
async function otherKeyBans(
  a: Attempt,
  unban: QueueEntry<UnbanEntry>,
  userId: string,
): Promise<Lookup<BanEntry | undefined>> {
  const { api, queues, userOf } = a.round;
  const key = playerKey(unban.data.target);
  // Through the index: bans queued under the user id, or (for an unban by user id) under that user's game id.
  const keys = [`user:${userId}`];
  if (unban.data.target.identifier === null) {
    const user = await api.getUser(userId);
    if (!user.ok && user.error.kind !== "NotFound") return user;
    if (user.ok) keys.push(`id:${user.value.identifier.toLowerCase()}`);
  }
  for (const e of await entriesByKeys(queues.ban, keys)) {
    const ban = e.data;
    if (e.id > unban.id || ban.status !== "ACTIVE" || playerKey(ban.target) === key) continue;
    // Two game ids are two players: only a service user id on one side can hide the same person.
    if (ban.target.identifier !== null && unban.data.target.identifier !== null) continue;
    const owner = await userOf(ban.target, false);
    if (!owner.ok) {
      if (owner.error.kind === "NotFound") continue;
      return owner;
    }
    if (owner.id !== userId) continue;
    // Not cancelled while it may already be at VyHub (its answer lost): the unban waits for its lookup.
    if (!unbanCancels(unban.data, ban) || isUncertain(e)) return { ok: true, value: ban };
    // Only while nobody is sending it: a worker that recorded its attempt first makes the unban wait for it.
    const idle = (cur: QueueEntry<BanEntry>) => cur.data.status === "ACTIVE" && !isUncertain(cur);
    const cancelled = await queues.ban.update(e.id, { data: { ...ban, status: "UNBANNED" } }, idle);
    if (!cancelled && (await queues.ban.get(e.id))) return { ok: true, value: ban };
  }
  return { ok: true, value: undefined };
}
