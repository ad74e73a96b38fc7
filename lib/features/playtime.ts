/**
 * Playtime (docs/client-interface.md rule 13). Online seconds per service user are counted from hub_ply_initialized
 * until disconnect or agent stop, and added to a store counter at least every minute, so a crash loses at most a
 * minute. Every `intervals.playtime` and at start each user's hours go to POST /user/attribute/, at most once: a
 * send the service refused or never got keeps its seconds for the next report, one whose answer was lost does not.
 */
import {
  type Api,
  type ApiError,
  type ApiResult,
  AttributeDefinitionSchema,
  describeError,
  isAcceptedWrite,
  type AttributeDefinition,
} from "../api/client.ts";
import type { FeatureContext } from "../feature.ts";
import type { GamePlayer } from "../game/bridge.ts";
import type { Logger } from "../log.ts";
import type { Cache, Counters } from "../store/index.ts";
import { serial } from "../serial.ts";

/** The spec's "User attribute definition (playtime)" fields, exactly. */
export const PLAYTIME_DEFINITION = {
  name: "playtime",
  title: "Play Time",
  unit: "HOURS",
  type: "ACCUMULATED",
  accumulation_interval: "day",
  unspecific: true,
} as const;

/** One connection's counting: its service user, and the time (monotonic) counted up to. */
interface Session {
  userId: string;
  since: number;
}

/** Counters are written at least this often (seconds). */
export const PERSIST_SECONDS = 60;

/** Users whose hours are being sent at once in a report. */
const SEND_AT_ONCE = 4;

/** Seconds per 0.01 h: hours are sent with 2 decimals, so what is sent is always a whole multiple of this. */
const CENTIHOUR_S = 36;

/** Hours to send for `seconds` counted: rounded to 2 decimals (gmod), and the seconds that amounts to. */
export function hoursOf(seconds: number): { hours: number; seconds: number } {
  const centihours = Math.round(seconds / CENTIHOUR_S);
  return { hours: centihours / 100, seconds: centihours * CENTIHOUR_S };
}

export function playtime(agent: FeatureContext): void {
  const { api, store, clock, config, logger } = agent.deps;
  const log = logger.withTag("playtime");
  const counters = store.counters("playtime");
  /** Seconds out in a POST right now, per user: what a crash leaves here may have reached the service. */
  const intents = store.counters("playtime_sending");
  const cache = store.cache("playtime_definition", AttributeDefinitionSchema);
  /** Online players being counted, by player id. */
  const sessions = new Map<string, Session>();

  /** Persists run one after another, so a report that persisted first reads every second counted so far. */
  const writing = serial();

  /** Adds the time since the last write to the counters: every session's, or that of one ended `at` a time. */
  function persist(ended?: { session: Session; at: number }): Promise<void> {
    return writing(async () => {
      const now = ended?.at ?? clock.monotonic();
      const due = ended ? [ended.session] : [...sessions.values()];
      const adds: [string, number][] = [];
      for (const s of due) {
        const seconds = (now - s.since) / 1000;
        s.since = now;
        if (seconds > 0) adds.push([s.userId, seconds]);
      }
      // With thousands online, one at a time would keep the disk busy for most of the minute.
      if (adds.length) await counters.addMany(adds);
    });
  }

  /** One report: every counter's hours to the service; what was sent is subtracted, the rest stays. */
  async function send() {
    await persist();
    await settleIntents(intents, log);
    const def = await playtimeDefinition(api, cache, log);
    if (!def) return;
    const { sent, gone } = await sendHours(agent, { counters, intents }, def, log);
    if (gone) return;
    if (sent) log.info("playtime sent", { users: sent });
    await dropLeftovers();
  }

  /**
   * Counters of users who are not online and hold less than 0.005 h (a report rounds it to 0): a remainder that
   * could only go out with the player's next hours. Kept through one more report (a restart or a player back within
   * the hour keeps it), then removed: otherwise one file per player ever seen would pile up, every one read by every
   * report. What is dropped is the last report's rounding, at most 18 s either way, as the official addons drop
   * it at every report.
   */
  const leftovers = new Set<string>();
  function dropLeftovers(): Promise<void> {
    return writing(async () => {
      const online = new Set([...sessions.values()].map((s) => s.userId));
      const now = new Set<string>();
      for (const [userId, seconds] of Object.entries(await counters.all())) {
        if (online.has(userId) || hoursOf(seconds).hours !== 0) continue;
        if (leftovers.has(userId)) await counters.remove(userId);
        else now.add(userId);
      }
      leftovers.clear();
      for (const id of now) leftovers.add(id);
    });
  }

  followConnections(agent, sessions, (session, at) => persist({ session, at }));
  // The agent stops: count up to now. Started synchronously inside the abort, so stop() waits for it.
  agent.scheduler.signal.addEventListener("abort", () => void agent.scheduler.run("playtime stop", () => persist()), {
    once: true,
  });

  agent.job("playtime", config.intervals.playtime, send, true);
  agent.job("playtime-persist", PERSIST_SECONDS, () => persist(), false, { offline: true });
}

/**
 * One session per connection, from hub_ply_initialized to its disconnect. A session ends at the disconnect, not once
 * its last seconds are written (`ended`): a rejoin meanwhile starts a session of its own.
 */
function followConnections(
  agent: FeatureContext,
  sessions: Map<string, Session>,
  ended: (session: Session, at: number) => Promise<void>,
): void {
  const { clock } = agent.deps;
  /** Connections whose disconnect was seen: a user lookup that ends after it starts no session for them. */
  const left = new WeakSet<GamePlayer>();
  agent.events.on("hub_ply_initialized", ({ player, user }) => {
    if (!left.has(player) && !sessions.has(player.id))
      sessions.set(player.id, { userId: user.id, since: clock.monotonic() });
  });
  agent.onGame("player_disconnect", async ({ player }) => {
    const connection = agent.players.get(player.id);
    if (connection) left.add(connection);
    const session = sessions.get(player.id);
    if (!session) return;
    sessions.delete(player.id);
    await ended(session, clock.monotonic());
  });
}

/** The live definition (created on 404), else the cached one; undefined when neither is available. */
async function playtimeDefinition(
  api: Api,
  cache: Cache<AttributeDefinition>,
  log: Logger,
): Promise<AttributeDefinition | undefined> {
  let res = await api.getAttributeDefinition(PLAYTIME_DEFINITION.name);
  if (!res.ok && res.error.kind === "NotFound") {
    res = await api.createAttributeDefinition({ ...PLAYTIME_DEFINITION });
    if (res.ok) log.info("created the playtime attribute definition", { id: res.value.id });
  }
  if (res.ok) {
    await cache.set(res.value);
    return res.value;
  }
  const cached = await cache.get();
  if (cached) log.warn(`playtime definition unavailable (${describeError(res.error)}); using the cached one`);
  else log.warn(`playtime definition unavailable (${describeError(res.error)}) and none cached; sending later`);
  return cached?.data;
}

/**
 * Every counter's hours to the service, a few users at once: how many users' hours it took, and whether the
 * definition was found deleted (every counter then kept). It stops early when the service is away, or when a 404
 * cannot be told apart from a deleted definition.
 */
async function sendHours(
  agent: FeatureContext,
  { counters, intents }: { counters: Counters; intents: Counters },
  def: AttributeDefinition,
  log: Logger,
): Promise<{ sent: number; gone: boolean }> {
  const { api } = agent.deps;
  // A remainder under 0.005 h stays and accumulates (it would be sent as 0).
  const counted = Object.entries(await counters.all()).filter(([, s]) => hoursOf(s).hours > 0);
  /** The definition read by id, once per report, when a send met 404: does it still exist? */
  let definition: ReturnType<Api["getAttributeDefinition"]> | undefined;
  let stop = false;
  let gone = false;
  let sent = 0;
  /** One user's hours, at most once (sendOnce). */
  const sendOne = async ([userId, seconds]: [string, number]) => {
    const { hours, seconds: sentSeconds } = hoursOf(seconds);
    await agent.pace.take(agent.scheduler.signal);
    if (stop) return;
    const post = () =>
      api.sendAttribute({
        definition_id: def.id,
        user_id: userId,
        // The contract types value `string`: the decimal as text, as the official addons send it.
        value: String(hours),
        ...(agent.bundleId ? { serverbundle_id: agent.bundleId } : {}),
      });
    const res = await sendOnce({ counters, intents }, userId, sentSeconds, post);
    if (res.ok || isAcceptedWrite(res.error)) {
      sent++;
      return;
    }
    const reason = describeError(res.error);
    if (mayHaveArrived(res.error)) {
      log.warn(`playtime counted as sent, its answer lost (${reason}): up to ${sentSeconds} s may be missing`, {
        user_id: userId,
        hours,
      });
      stop = true; // the service is away or slow: the other users would only wait for the same
      return;
    }
    if (res.error.kind === "NotFound") {
      // A 404 names an unknown user only when the definition is known to exist: a deleted definition, or a check
      // that failed (a 503, a timeout), keeps every counter and ends the report (the next one tries again).
      definition ??= api.getAttributeDefinition(def.id);
      const check = await definition;
      if (!check.ok) {
        const deleted = check.error.kind === "NotFound";
        if (!stop && deleted)
          log.warn("the playtime definition no longer exists; it is created again at the next report");
        else if (!stop)
          log.warn(`playtime kept: could not tell whether the definition exists (${describeError(check.error)})`);
        gone ||= deleted;
        stop = true;
        return;
      }
      await counters.remove(userId);
      log.warn(`playtime dropped: user unknown to the service (${reason})`, { user_id: userId, hours });
      return;
    }
    log.warn(`playtime not sent, kept for the next report: ${reason}`, { user_id: userId, hours });
    // The service is away: the other users would only wait for the same timeout.
    if (res.error.kind === "Network" || res.error.kind === "RateLimited") stop = true;
  };
  // A few users at once (each still at the pace): one by one, 5,000 users' requests and counter writes take long.
  let next = 0;
  const worker = async () => {
    while (!stop && next < counted.length) await sendOne(counted[next++] as [string, number]);
  };
  await Promise.all(Array.from({ length: Math.min(SEND_AT_ONCE, counted.length) }, worker));
  return { sent, gone };
}

/**
 * POSTs one user's seconds at most once: they leave the counter before the request, with the intent on record, and
 * come back only when the answer proves the service stored nothing. The API cannot be asked which values it holds,
 * so a lost answer (or a crash before the intent is cleared) counts them as sent: hours missing at the service are
 * better than hours counted twice (docs/reliability.md).
 */
async function sendOnce(
  { counters, intents }: { counters: Counters; intents: Counters },
  userId: string,
  seconds: number,
  post: () => Promise<ApiResult<unknown>>,
): Promise<ApiResult<unknown>> {
  await intents.add(userId, seconds);
  await counters.add(userId, -seconds);
  const res = await post();
  if (!res.ok && !isAcceptedWrite(res.error) && !mayHaveArrived(res.error)) await counters.add(userId, seconds);
  await intents.remove(userId);
  return res;
}

/**
 * No proof that the service stored nothing: a timeout or a connection cut while the request was out, or a 5xx (a
 * gateway's 502 or 504 may come after the service did the work, and a 500 after it committed), as the sanction
 * queues read them too. A failure before a connection was made (refused, no such host, an untrusted certificate),
 * a 503 (the service turning requests away) and a 4xx are answers that it did not.
 */
function mayHaveArrived(e: ApiError): boolean {
  if (e.kind === "ServerError") return e.status !== 503;
  return e.kind === "Network" && !e.unsent;
}

/** Intents a crash (or a failed write) left: their seconds already left the counters and are never sent again. */
async function settleIntents(intents: Counters, log: Logger): Promise<void> {
  const left = Object.entries(await intents.all());
  if (!left.length) return;
  for (const [userId] of left) await intents.remove(userId);
  const seconds = Math.round(left.reduce((sum, [, s]) => sum + s, 0));
  log.warn(`a playtime report was cut short: up to ${seconds} s of playtime may be missing`, { users: left.length });
}
