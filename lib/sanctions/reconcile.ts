/**
 * Looking a write up at the service before it is sent again. A request whose answer was lost (a timeout, a network
 * error after sending, a 5xx from a gateway that may have forwarded it, a crash after the attempt was recorded) may
 * have been carried out; sending it blindly would ban or warn twice. These lookups say whether it was.
 */
import type { Api, ApiError, ApiResult, Ban, Page, Warning } from "../api/client.ts";
import type { BanEntry, WarningEntry } from "./schemas.ts";

/**
 * The service sets a warning's created_on itself, by its own clock: a warning it made for our request may carry a
 * time up to this much before our first attempt when our clock runs ahead (`hub-agent doctor` warns from 5 s of
 * skew on). A same-reason warning older than that is not taken for ours.
 */
export const WARNING_CLOCK_SKEW_MS = 5_000;

const PAGE_SIZE = 50;

/**
 * Whether a ban dated `banAt` came after an unban dated `unbanAt` (epoch ms), judged at `now`: such a ban is never
 * lifted by it. A ban dated further ahead of `now` than two clocks in agreement allow (WARNING_CLOCK_SKEW_MS) was
 * dated by a clock running ahead: most likely ours, before NTP stepped it back (an unban typed since is dated earlier
 * than the ban it lifts); it counts as older, as it would with the clocks right.
 */
export function issuedAfter(banAt: number, unbanAt: number, now: number): boolean {
  return banAt > unbanAt && banAt <= now + WARNING_CLOCK_SKEW_MS;
}

export type Lookup<T> = { ok: true; value: T } | { ok: false; error: ApiError };

/**
 * An ISO-8601 timestamp as epoch ms (sub-millisecond digits dropped), with the precision it was written in: the
 * service may echo our created_on with another offset, microseconds, or whole seconds.
 */
export function instant(text: string): { ms: number; wholeSeconds: boolean } {
  const m = /^(.*T\d{2}:\d{2}(?::\d{2})?)(?:\.(\d+))?(Z|[+-]\d{2}:?\d{2})?$/i.exec(text.trim());
  if (!m) return { ms: Date.parse(text), wholeSeconds: false };
  const [, base, fraction, zone = "Z"] = m;
  const offset = zone.toUpperCase() === "Z" ? "Z" : zone.replace(/^([+-]\d{2})(\d{2})$/, "$1:$2");
  const ms = Date.parse(`${base}${offset}`) + (fraction ? Number(fraction.slice(0, 3).padEnd(3, "0")) : 0);
  return { ms, wholeSeconds: !fraction };
}

/** Two timestamps name the same instant, at the coarser of their two precisions. */
export function sameInstant(ours: string, theirs: string): boolean {
  const a = instant(ours);
  const b = instant(theirs);
  if (a.ms === b.ms) return true;
  return (a.wholeSeconds || b.wholeSeconds) && Math.floor(a.ms / 1000) === Math.floor(b.ms / 1000);
}

/**
 * Pages of a newest-first list until `enough` says the rest is older than what we look for (or the list ends).
 * Returns every item read, and how many were left out as unreadable (logged by the client, with their ids): one
 * of those may be the one looked for, so a caller about to conclude "not found" (and send a write again, or settle
 * an unban with a ban still active) must fail instead (`unreadable`); a readable hit stands.
 */
async function newestFirst<T>(
  fetchPage: (page: number) => Promise<ApiResult<Page<T>>>,
  enough: (items: T[]) => boolean,
): Promise<Lookup<{ items: T[]; skipped: number }>> {
  const all: T[] = [];
  let skipped = 0;
  for (let page = 1; ; page++) {
    const res = await fetchPage(page);
    if (!res.ok) return res;
    skipped += res.skipped ?? 0;
    const { items, total } = res.value;
    all.push(...items);
    if (items.length === 0 || all.length + skipped >= total || enough(items))
      return { ok: true, value: { items: all, skipped } };
  }
}

/** A lookup that found nothing among what it could read, with unreadable items left out: it has failed. */
function unreadable(endpoint: string, count: number): { ok: false; error: ApiError } {
  return {
    ok: false,
    error: {
      kind: "InvalidResponse",
      endpoint,
      field: "items",
      message: `${count} unreadable item(s) left out of the lookup; one may be the one looked for`,
    },
  };
}

/**
 * The ban this entry created, if the service has it: the agent sets created_on, so it is the ban's idempotency key
 * (with the reason and bundle to be sure). GET /ban/?user_id=&serverbundle_id= newest first, until older bans.
 */
export async function findBan(api: Api, userId: string, ban: BanEntry): Promise<Lookup<Ban | undefined>> {
  const ours = instant(ban.created_on).ms;
  const res = await newestFirst(
    (page) => api.listBans(userId, { bundleId: ban.serverbundle_id, page, size: PAGE_SIZE }),
    (items) => instant((items.at(-1) as Ban).created_on).ms < ours - 1000,
  );
  if (!res.ok) return res;
  const hit = res.value.items.find(
    (b) =>
      sameInstant(ban.created_on, b.created_on) &&
      (b.reason ?? "") === ban.reason &&
      (b.serverbundle?.id ?? null) === ban.serverbundle_id,
  );
  if (!hit && res.value.skipped) return unreadable("GET /ban/", res.value.skipped);
  return { ok: true, value: hit };
}

/** Same user (the list's), bundle and reason: a warning this entry could have created. */
const likeWarning = (warning: WarningEntry) => (w: Warning) =>
  (w.reason ?? "") === warning.reason && (w.serverbundle?.id ?? null) === warning.serverbundle_id;

/**
 * The ids of the service's warnings this entry could be mistaken for, taken just before it is sent (the entry's
 * `seen`): any other such warning found later is one the send created, whatever either clock says.
 */
export async function warningsLike(api: Api, userId: string, warning: WarningEntry): Promise<Lookup<string[]>> {
  const res = await newestFirst(
    (page) => api.listWarnings(userId, { bundleId: warning.serverbundle_id, page, size: PAGE_SIZE }),
    () => false,
  );
  // An unreadable old warning is left out: unreadable at the lookup too, it is never taken for this entry's (and
  // failing here would stop every warning of that user for good).
  return res.ok ? { ok: true, value: res.value.items.filter(likeWarning(warning)).map((w) => w.id) } : res;
}

/**
 * The warning this entry created, if the service has it: same user, bundle and reason, not `claimed` by another
 * entry already, and not one of those it had before the entry was sent (`seen`); the oldest such one. An entry sent
 * before `seen` existed is matched by time instead: created since its first attempt, less WARNING_CLOCK_SKEW_MS.
 */
export async function findWarning(
  api: Api,
  userId: string,
  warning: WarningEntry,
  firstAttemptAt: number,
  claimed: ReadonlySet<string>,
): Promise<Lookup<Warning | undefined>> {
  const from = firstAttemptAt - WARNING_CLOCK_SKEW_MS;
  const seen = warning.seen && new Set(warning.seen);
  const res = await newestFirst(
    (page) => api.listWarnings(userId, { bundleId: warning.serverbundle_id, page, size: PAGE_SIZE }),
    (items) => !seen && instant((items.at(-1) as Warning).created_on).ms < from,
  );
  if (!res.ok) return res;
  const hits = res.value.items.filter(
    (w) => !claimed.has(w.id) && likeWarning(warning)(w) && (seen ? !seen.has(w.id) : instant(w.created_on).ms >= from),
  );
  hits.sort((a, b) => instant(a.created_on).ms - instant(b.created_on).ms);
  if (!hits[0] && res.value.skipped) return unreadable("GET /warning/", res.value.skipped);
  return { ok: true, value: hits[0] };
}

/**
 * What an unban issued at `createdOn` may lift: the user's active bans in the bundle (and global ones), split into
 * those issued up to then and those issued after it (which it must never lift). GET /ban/ is asked without
 * serverbundle_id: that filter is only said to narrow to the bundle (PATCH /user/{id}/ban alone says it keeps global
 * bans), so a global ban could be missing from its answer; the bundle is chosen here.
 */
export async function bansAround(
  api: Api,
  userId: string,
  bundleId: string,
  createdOn: string,
  now: number,
): Promise<Lookup<{ older: Ban[]; newer: Ban[] }>> {
  const res = await newestFirst(
    (page) => api.listBans(userId, { active: true, page, size: PAGE_SIZE }),
    () => false,
  );
  if (!res.ok) return res;
  // An unreadable active ban cannot be told older or newer: not lifted blindly, nor left standing unseen.
  if (res.value.skipped) return unreadable("GET /ban/", res.value.skipped);
  const at = instant(createdOn).ms;
  const here = (b: Ban) => !b.serverbundle || b.serverbundle.id === bundleId;
  const active = res.value.items.filter((b) => here(b) && b.active && b.status !== "UNBANNED");
  const newer = (b: Ban) => issuedAfter(instant(b.created_on).ms, at, now);
  return { ok: true, value: { older: active.filter((b) => !newer(b)), newer: active.filter(newer) } };
}
