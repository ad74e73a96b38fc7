/**
 * Issuing a sanction, as every process shape does it: `<player>` resolved (findPlayer), the entry written to its
 * durable queue first (queueSanction), then delivered. A one-shot command delivers its own entry at once (own-entry.ts)
 * and answers with what became of it: the operations issueSanction (ban, warning), unban and warns, each returning a
 * typed outcome that cli/ renders and maps to an exit code. Chat and the wrapped console
 * (features/sanction-commands.ts) share findPlayer and queueSanction; `run`'s round delivers theirs.
 */
import { describeError, isRejected } from "../api/errors.ts";
import { formatLength, parseLength } from "../duration.ts";
import { onlineCache } from "../players/online.ts";
import { recentCache } from "../players/recent.ts";
import type { MessageKey } from "../messages.ts";
import { PlayerError, type PlayerErrorKind, type ResolveOptions, resolveTarget } from "../players/resolve.ts";
// The sanction modules one by one, not lib/sanctions/index.ts: a command whose entry is not delivered here (the
// service unreachable moments ago, or a `run` beside it) never loads the delivery round (own-entry.ts); the ban list
// and the warnings (banlist.ts, warnings.ts) are loaded by the operations that use them (warns, a warning's auto-ban).
import type { DeliveryOutcome } from "../sanctions/deliver.ts";
import { announce, findDeliverer, takeOn } from "../sanctions/handoff.ts";
import { type EarlyHandoff, type EntryFate, deliverOwnEntry } from "../sanctions/own-entry.ts";
import {
  type NewBan,
  type NewUnban,
  type NewWarning,
  type Shown,
  banEntry,
  queueBan,
  queueUnban,
  queueWarning,
} from "../sanctions/queue.ts";
import { outcomeMessage, queuedKey } from "../sanctions/report.ts";
import { type Creator, type Enforce, type PlayerRef, playerLabel, sameIdentifier } from "../sanctions/schemas.ts";
import { knownBundle } from "../server-record.ts";
import { flushFailed } from "../store/errors.ts";
import type { Store } from "../store/index.ts";
import {
  type BanIssued,
  type Failed,
  type IssuedBase,
  type Listed,
  type UnbanIssued,
  type WarningIssued,
  type Issued,
  failed,
} from "./outcome.ts";
import type { Session } from "./session.ts";

/** The queues a sanction is delivered from. */
export type DeliveryKind = DeliveryOutcome["kind"];

/** What a delivery result is to the caller: `kept` is "queued". */
const statusOf = (result: EntryFate["result"]) => (result === "kept" ? "queued" : result);
export type FateStatus = ReturnType<typeof statusOf>;

// ── The steps chat and the console share ─────────────────────────────────────

const PLAYER_STATUS: Record<PlayerErrorKind, Failed["status"]> = {
  invalid: "invalid",
  unknown: "not_found",
  stale: "not_found",
  ambiguous: "ambiguous",
  unreachable: "unreachable",
  refused: "refused",
};

export type Found =
  { ok: true; ref: PlayerRef } | { ok: false; kind: PlayerErrorKind; status: Failed["status"]; message: string };

/** `<player>` as the sanction queues need it (lib/players/resolve.ts resolveTarget), or why not. */
export async function findPlayer(input: string, o: ResolveOptions): Promise<Found> {
  try {
    return { ok: true, ref: await resolveTarget(input, o) };
  } catch (e) {
    if (!(e instanceof PlayerError)) throw e;
    return { ok: false, kind: e.kind, status: PLAYER_STATUS[e.kind], message: e.message };
  }
}

/** A sanction with its player resolved: what its queue holds. */
export type Sanction = ({ kind: "ban" } & NewBan) | ({ kind: "warning" } & NewWarning) | ({ kind: "unban" } & NewUnban);

/** Writes the sanction to its durable queue, before anything else is done with it. `cancelled`: an unban's. */
export async function queueSanction(
  store: Store,
  s: Sanction,
  now = Date.now(),
  shown?: Shown,
): Promise<{ entryId: string; cancelled: number }> {
  if (s.kind === "unban") {
    const { entry, cancelled } = await queueUnban(store, s, now, shown);
    return { entryId: entry.id, cancelled };
  }
  const entry = s.kind === "ban" ? await queueBan(store, s, now, shown) : await queueWarning(store, s, now, shown);
  return { entryId: entry.id, cancelled: 0 };
}

/** A one-shot command's entry written: its id, and the handover to a running `run` begun as it was (or why not). */
interface Written {
  entryId: string;
  cancelled: number;
  early: EarlyHandoff;
  /** The entry is queued, but its flush failed: a power cut may still lose it. */
  flushError?: string;
}

/**
 * queueSanction for a one-shot command. The entry is flushed once in place (docs/reliability.md, "Why each fsync": the
 * folder's flush then finds the rename on disk), and the command answers only once it is. With a `run` beside it that
 * takes handed-over entries (lib/sanctions/handoff.ts), a ban is announced to it first on the desk line (kick-line.ts:
 * `run` kicks before anything waits for the disk), and the entry is handed over as soon as it is in place, before
 * its flush (a flush can take hundreds of ms on a busy disk): on that line, or by note where there is none.
 */
async function writeEntry(s: Session, p: Parts, sanction: Sanction): Promise<Written> {
  const { pid, line } = (await findDeliverer(p.store)) ?? {};
  const now = Date.now();
  const kicked =
    line !== undefined &&
    sanction.kind === "ban" &&
    sanction.enforce !== "on_accept" &&
    line.send({ ban: banEntry(sanction, now) });
  if (kicked) s.mark("announced");
  let placed: { id: string; cancelled?: number } | undefined;
  let early: EarlyHandoff = null;
  const shown: Shown = (entry) => {
    placed = entry;
    // From here a Ctrl-C leaves it queued (the flush may still be under way): the operator is told so.
    s.queued(sanction.kind, entry.id);
    if (pid === undefined) return;
    if (line && takeOn(line, sanction.kind, entry.id)) return void (early = { pid, line });
    line?.close();
    const note = announce(p.store, sanction.kind, entry.id);
    early = { pid, note };
    return note.catch(() => {}); // awaited by handOff, which reports it
  };
  try {
    const { entryId, cancelled } = await queueSanction(p.store, sanction, now, shown);
    return { entryId, cancelled, early };
  } catch (e) {
    // Queued all the same when only its flush failed: then handOff waits on the line, and closes it.
    const queued = flushFailed(e) && placed !== undefined;
    if (!queued || !early) line?.close();
    if (kicked && !early)
      s.logger.warn(
        `the running hub-agent (pid ${pid}) was told to kick ${playerLabel(sanction.target)}, but the ban could not be queued: they may be kicked without a ban`,
      );
    if (!queued) throw e;
    s.logger.warn(`the ${sanction.kind} is queued, but the disk did not confirm it: ${(e as Error).message}`);
    const { id, cancelled = 0 } = placed as { id: string; cancelled?: number };
    return { entryId: id, cancelled, early, flushError: (e as Error).message };
  }
}

/** The line a command adds when its entry's flush failed (writeEntry). */
const flushNotes = (kind: DeliveryKind, error: string | undefined): string[] =>
  error ? [`the disk did not confirm the ${kind} is flushed (${error}): a power cut now could still lose it`] : [];

// ── A one-shot command's operations ──────────────────────────────────────────

/** `<player>` and `--as`, as typed. */
export interface Who {
  player: string;
  /** Act as this player's service user (morph_user_id); absent: the console. */
  as?: string;
}
export type SanctionRequest = Who &
  ({ kind: "ban"; length: string; reason: string } | { kind: "warning"; reason: string });

/** A command's ban or unban counts here at once (the operator's); with `--as` (VyHub checks that user) once accepted. */
const enforceOf = (creator: Creator | null): Enforce => (creator ? "on_accept" : "now");

/** A ban or a warning: queued durably first, then this command's own delivery round. */
export async function issueSanction<R extends SanctionRequest>(
  s: Session,
  r: R,
): Promise<Failed | Extract<Issued, { kind: R["kind"] }>>;
export async function issueSanction(s: Session, r: SanctionRequest): Promise<Failed | BanIssued | WarningIssued> {
  const length = r.kind === "ban" ? parseLength(r.length) : undefined;
  if (length && !length.ok) return { status: "invalid", message: length.error };
  const p = await parts(s);
  const a = await address(s, p, r);
  if ("status" in a) return a;
  const { target, creator, serverbundleId } = a;
  const seconds = length?.ok ? length.seconds : null;
  const enforce = enforceOf(creator);
  const sanction: Sanction =
    r.kind === "ban"
      ? { kind: "ban", target, length: seconds, reason: r.reason, creator, serverbundleId, enforce }
      : { kind: "warning", target, reason: r.reason, creator, serverbundleId };
  const { entryId, early, flushError } = await writeEntry(s, p, sanction);
  s.mark("queued");
  const vars = { player: playerLabel(target), length: formatLength(seconds), reason: r.reason };
  const queued = r.kind === "warning" ? "warn.queued" : queuedKey("ban", enforce);
  const d = await delivered(s, r.kind, entryId, queued, vars, early);
  s.mark("delivered");
  if (failed(d)) return d;
  const { outcome: o, ...settled } = d;
  const base = { ...settled, entryId, target, creator, reason: r.reason, notes: flushNotes(r.kind, flushError) };
  if (r.kind === "ban")
    return {
      ...base,
      kind: "ban",
      seconds,
      length: vars.length,
      ...(o?.kind === "ban" && o.ban ? { banId: o.ban.id } : {}),
    };
  const warning = o?.kind === "warning" ? o.warning : undefined;
  // Rule 12: the ban list is refreshed after a warning: the service bans by itself at its warning threshold.
  const autoBanned = warning ? await autoBan(p, serverbundleId, target, warning.created_on) : null;
  const said = autoBanned ? [(await s.messages()).t("warn.auto_banned", { player: vars.player })] : [];
  const notes = [...base.notes, ...said];
  return { ...base, kind: "warning", ...(warning ? { warningId: warning.id } : {}), autoBanned, notes };
}

/** Lifts a player's bans (their queued ones too): queued durably first, then this command's own delivery round. */
export async function unban(s: Session, who: Who): Promise<Failed | UnbanIssued> {
  const p = await parts(s);
  const a = await address(s, p, who);
  if ("status" in a) return a;
  const { target, creator, serverbundleId } = a;
  const enforce = enforceOf(creator);
  const written = await writeEntry(s, p, { kind: "unban", target, processor: creator, serverbundleId, enforce });
  const { entryId, cancelled } = written;
  const player = playerLabel(target);
  const d = await delivered(s, "unban", entryId, queuedKey("unban", enforce), { player }, written.early);
  if (failed(d)) return d;
  const { outcome: _, ...settled } = d;
  const notes = [
    ...flushNotes("unban", written.flushError),
    ...(cancelled ? [(await s.messages()).t("unban.cancelled_queued", { count: cancelled, player })] : []),
  ];
  return { ...settled, kind: "unban", entryId, target, creator, cancelled, notes };
}

/** A player's warnings in this serverbundle, active and inactive, newest first. */
export async function warns(s: Session, who: Pick<Who, "player">): Promise<Failed | Listed> {
  const p = await parts(s);
  const a = await address(s, p, who);
  if ("status" in a) return a;
  const { formatWarnings, listWarnings, warningActive } = await import("../sanctions/warnings.ts");
  const [res, messages] = await Promise.all([listWarnings(p.api, a.target, a.serverbundleId), s.messages()]);
  const player = playerLabel(a.target);
  if (!res.ok)
    return {
      status: isRejected(res.error) ? "refused" : "unreachable",
      message: messages.t("warns.failed", { player, error: describeError(res.error) }),
    };
  const warnings = res.warnings.map((w) => ({
    id: w.id,
    reason: w.reason ?? null,
    creator: w.creator ? { user_id: w.creator.id, name: w.creator.username ?? null } : null,
    created_on: w.created_on,
    active: warningActive(w),
    disabled: w.disabled,
    serverbundle_id: w.serverbundle?.id ?? null,
  }));
  const lines = formatWarnings(messages, player, res.warnings, res.total);
  return { status: "listed", target: a.target, total: res.total, warnings, lines };
}

/**
 * The command's own round (own-entry.ts): its player's queued sanctions, then what became of `entryId`. A refused key
 * or unknown server id met while the entry stays queued is the operator's to fix ("credentials"): nothing is lost.
 * `askAnyway`: also when a round found no service moments ago (`queue retry`).
 */
export async function deliverEntry(
  s: Session,
  kind: DeliveryKind,
  entryId: string,
  opts: { askAnyway?: boolean; early?: EarlyHandoff } = {},
): Promise<{ status: FateStatus; fate: EntryFate } | (Failed & { status: "credentials" })> {
  const [config, api, store] = await Promise.all([s.config(), s.api(), s.store()]);
  const fate = await deliverOwnEntry(
    {
      api,
      store,
      logger: s.logger.withTag("queue"),
      settleMs: s.settleMs,
      messages: s.messages,
      // A running `run` takes the entry (lib/sanctions/handoff.ts): its user lookup and the send itself, each within
      // api.timeout, are what the answer waits for.
      handoffWaitMs: 2 * config.api.timeout * 1000,
      serviceUrl: config.api.url,
      ...(opts.askAnyway ? { askAnyway: true } : {}),
    },
    kind,
    entryId,
    opts.early,
  );
  const refusal = fate.result === "kept" ? await s.refusal() : undefined;
  if (refusal)
    return {
      status: "credentials",
      message: `${refusal}; the ${kind} stays queued (nothing is lost): \`hub-agent run\` sends it once the service accepts this agent, or \`hub-agent queue retry ${entryId}\``,
    };
  return { status: statusOf(fate.result), fate };
}

// ── Their parts ──────────────────────────────────────────────────────────────

type Parts = Awaited<ReturnType<typeof parts>>;

/**
 * What every operation needs of the session, built together; the messages too where sentences are said (a language
 * file that cannot be read stops the command before anything is queued). With --json only a failure's line needs them.
 */
async function parts(s: Session) {
  const config = await s.config();
  const said = s.sentences && s.messages();
  const [api, store, userType, nameId] = await Promise.all([s.api(), s.store(), s.userType(), s.nameId(), said]);
  s.mark("session");
  return { config, api, store, userType, nameId };
}

/**
 * The player, the issuer (--as) and the serverbundle, or why not (nothing is queued then). Nicks come from the
 * "online" list `run` keeps (and, for `<player>`, its list of recently seen players); it counts as stale after two
 * status rounds without an update. A service user id the service cannot be asked about now is queued as given and
 * resolved at delivery.
 */
async function address(
  s: Session,
  p: Parts,
  who: Who,
): Promise<Failed | { target: PlayerRef; creator: Creator | null; serverbundleId: string }> {
  const o = {
    userType: p.userType,
    online: () => onlineCache(p.store).get(),
    maxAgeMs: 2 * p.config.intervals.status * 1000 + 5_000,
    now: Date.now(),
    api: p.api,
  };
  // The target may have left (kicked by the ban being lifted): players `run` saw lately count too. Not for --as:
  // whose permissions a command borrows is named by someone online, or by id.
  // On a game that knows its players by name, a name no list knows is that player's id: an offline player is
  // banned by the name the operator knows.
  const target = await findPlayer(who.player, { ...o, recent: () => recentCache(p.store).get(), nameId: p.nameId });
  if (!target.ok) return { status: target.status, message: target.message };
  let creator: Creator | null = null;
  if (who.as !== undefined) {
    const as = await findPlayer(who.as, { ...o, exactNick: true });
    if (!as.ok) return { status: as.status, message: `--as: ${as.message}` };
    // A creator always has a name in messages; a bare id is better than "Console".
    const { user_id, identifier, type } = as.ref;
    creator = { name: playerLabel(as.ref), user_id, identifier, type };
  }
  const bundle = await bundleOf(p);
  if (typeof bundle !== "string") return bundle;
  s.mark("resolved");
  return { target: target.ref, creator, serverbundleId: bundle };
}

/** The serverbundle sanctions are issued in: from the server record `run` caches, else asked from the service. */
async function bundleOf(p: Parts): Promise<string | Failed> {
  const known = await knownBundle(p.api, p.store, p.config.api.server_id);
  if (known.ok) return known.id;
  const e = known.error;
  return {
    status: !e || e.kind === "NotFound" || e.kind === "ClientError" ? "failed" : "unreachable",
    message:
      `nothing was queued: this server's serverbundle is unknown (${e ? describeError(e) : "the server record names no serverbundle"}) ` +
      "and no server record is cached yet; check with `hub-agent doctor`",
  };
}

/**
 * The entry's own round, and its sentence: what the service did (outcomeMessage), that another process sent it, or
 * `queued` (a lang key) with what kept it.
 */
async function delivered(
  s: Session,
  kind: DeliveryKind,
  entryId: string,
  queued: MessageKey,
  vars: { player: string } & Record<string, string>,
  early: EarlyHandoff,
): Promise<Failed | { status: IssuedBase["status"]; message: string; outcome?: DeliveryOutcome; error?: string }> {
  const d = await deliverEntry(s, kind, entryId, { early });
  if (d.status === "credentials") return d;
  const { outcome, error } = d.fate;
  const issued = d.status === "delivered" || d.status === "elsewhere" || d.status === "queued";
  const messages = issued && !s.sentences ? undefined : await s.messages();
  const message = !messages
    ? ""
    : ((outcome && outcomeMessage(messages, outcome)) ??
      (d.status === "elsewhere"
        ? messages.t("queue.sent_elsewhere", { player: vars.player })
        : messages.t(queued, vars) + (error ? ` (${error})` : "")));
  if (!issued) return { status: d.status, message };
  return { status: d.status, message, ...(outcome ? { outcome } : {}), ...(error ? { error } : {}) };
}

/** Whether the service banned the player at its warning threshold because of the warning made at `since`. */
async function autoBan(p: Parts, serverbundleId: string, target: PlayerRef, since: string): Promise<boolean | null> {
  const { banHolds, fetchBanList } = await import("../sanctions/banlist.ts");
  const list = await fetchBanList(p.api, p.store, serverbundleId);
  if (list.source !== "api") return null;
  const at = Date.parse(since);
  return Object.entries(list.list)
    .filter(([id]) => sameIdentifier(id, target.identifier))
    .some(([, bans]) => bans.some((b) => banHolds(b, Date.now()) && Date.parse(b.created_on) >= at));
}
