/**
 * Rule 12's commands in game and at the wrapped console: `ban <player> <length> <reason…>`, `unban <player>`,
 * `warn <player> <reason…>`, `warns <player>` (names from config `commands.*`). A player's command is sent with
 * their service user as `morph_user_id`, so the service checks their permissions; the console (invoker null) acts as
 * the server. Every ban, unban and warning is written to its durable queue before anything else; then one delivery
 * round runs and the ban list is refreshed (a warning may auto-ban). Answers go to the invoker.
 *
 * Only the service knows a player's permissions, so a player's ban or unban takes effect here once the service
 * accepted it ("on_accept"): until then nobody is kicked, nobody let in, and another's queued ban is not cancelled,
 * also while the service is down. The console, and players in a group of `commands.trusted_groups`, are enforced at
 * once ("now").
 */
import type { CommandCall, FeatureContext } from "../feature.ts";
import { describeError } from "../api/client.ts";
import { parseLength } from "../duration.ts";
import type { GamePlayer } from "../game/bridge.ts";
import { knownGroups, appliedGroupsCache } from "../players/groups.ts";
import { recentCache } from "../players/recent.ts";
import { PlayerError, matchNick, resolveTarget } from "../players/resolve.ts";
import {
  type Creator,
  type Enforce,
  type PlayerRef,
  formatWarnings,
  lengthText,
  listWarnings,
  playerLabel,
  queueBan,
  queueUnban,
  queueWarning,
  sameIdentifier,
  sameIssuer,
  sanctionQueues,
} from "../sanctions/index.ts";

/** What the commands need of the ban feature. */
export interface Sanctions {
  /**
   * One delivery round now (coalesced with a round already running), then a ban-list refresh and kick. With the
   * `target` of a sanction just queued: it is enforced at once and that player's entries go first (bans.ts).
   */
  deliverNow(target?: PlayerRef): Promise<void>;
}

/**
 * Sanctions a player whose permission only the service can check may have waiting for it at once. Without a cap,
 * one player could queue thousands while the service is down: disk, memory, and every connect's ban check reads
 * the queues. The console and trusted groups are not capped.
 */
export const MAX_WAITING_PER_PLAYER = 10;

export function sanctionCommands(agent: FeatureContext, sanctions: Sanctions): void {
  const { api, store, clock, config, messages, bridge, logger } = agent.deps;
  const log = logger.withTag("commands");
  const names = config.commands;
  const trusted = new Set(config.commands.trusted_groups);
  const t: typeof messages.t = (key, vars) => messages.t(key, vars);

  const online = () =>
    [...agent.players.values()].map((p) => ({ id: p.id, name: p.name, user_id: agent.users.get(p.id)?.id ?? null }));

  /** Who left lately (lib/players/recent.ts); unreadable is none: the online players still resolve. */
  const recent = () =>
    recentCache(store)
      .get()
      .catch(() => undefined);

  /**
   * `<player>`: an online player's id or nick, a platform id, a service user id, or the nick of a player seen lately
   * who left (`!unban` of the player a ban just kicked). Undefined after answering why.
   */
  const target = async (call: CommandCall, query: string): Promise<PlayerRef | undefined> => {
    const players = online();
    try {
      return await resolveTarget(query, {
        userType: bridge.userType,
        online: async () => ({ savedAt: clock.now(), data: { user_type: bridge.userType, players } }),
        recent,
        maxAgeMs: Number.POSITIVE_INFINITY,
        now: clock.now(),
        api,
      });
    } catch (e) {
      if (!(e instanceof PlayerError)) throw e;
      if (e.kind === "ambiguous") {
        const here = new Set(players.map((p) => p.id));
        const saved = await recent();
        const gone = saved?.data.user_type === bridge.userType ? saved.data.players.filter((p) => !here.has(p.id)) : [];
        const list = matchNick(query, [...players, ...gone]).map((p) => `${p.name} (${p.id})`);
        await call.reply(t("command.ambiguous", { query, players: list.join(", ") }));
      } else if (e.kind === "unreachable") await call.reply(t("service.unreachable"));
      else await call.reply(t("command.player_not_found", { query }));
      return undefined;
    }
  };

  /** The invoker as creator: null for the console; a player is looked up at delivery if not yet known. */
  const creatorOf = (invoker: GamePlayer | null): Creator | null =>
    invoker && {
      name: invoker.name,
      user_id: agent.users.get(invoker.id)?.id ?? null,
      identifier: invoker.id,
      type: bridge.userType,
    };

  /**
   * When the invoker's ban or unban counts here: the console at once; a player at once only in a trusted in-game
   * group as far as the agent knows (the game's answer, else what group sync applied); otherwise, or when their
   * groups cannot be read, once the service accepted it.
   */
  const enforcement = async (invoker: GamePlayer | null): Promise<Enforce> => {
    if (!invoker) return "now";
    // Known by a name anyone can take: a trusted group would be trusted to whoever typed that name.
    if (!trusted.size || bridge.caps.identity === "name") return "on_accept";
    try {
      const groups = await knownGroups(
        bridge,
        invoker,
        async () => (await appliedGroupsCache(store).get())?.data ?? {},
      );
      return groups.some((g) => trusted.has(g)) ? "now" : "on_accept";
    } catch (e) {
      log.warn(`the in-game groups of ${invoker.name} are unknown (${(e as Error).message}); not trusted`);
      return "on_accept";
    }
  };

  /** Whether the invoker may queue one more: false (after answering why) when MAX_WAITING_PER_PLAYER of theirs wait. */
  const mayQueue = async (call: CommandCall, enforce: Enforce): Promise<boolean> => {
    const me = creatorOf(call.invoker);
    if (enforce === "now" || !me) return true;
    const q = sanctionQueues(store);
    const [bans, unbans, warnings] = await Promise.all([q.ban.list(), q.unban.list(), q.warning.list()]);
    const waiting =
      bans.filter((e) => sameIssuer(e.data.creator, me)).length +
      unbans.filter((e) => sameIssuer(e.data.processor, me)).length +
      warnings.filter((e) => sameIssuer(e.data.creator, me)).length;
    if (waiting < MAX_WAITING_PER_PLAYER) return true;
    log.warn(`${call.invoker?.name} has ${waiting} sanctions waiting for VyHub; not queueing more`);
    await call.reply(t("command.too_many_waiting", { count: waiting }));
    return false;
  };

  /** After a sanction of `who` is queued: enforce it, deliver it first, refresh bans. Tracked, not awaited. */
  const deliver = (who: PlayerRef) => void agent.scheduler.run("sanctions", () => sanctions.deliverNow(who));

  const usage = (call: CommandCall, text: string) => call.reply(t("command.usage", { usage: text }));

  agent.command(names.ban, async (call) => {
    const [query, lengthArg, ...words] = call.args;
    const reason = words.join(" ").trim();
    if (!query || !lengthArg) return usage(call, `${names.ban} <player> <length> <reason>`);
    const length = parseLength(lengthArg);
    if (!length.ok) return call.reply(t(length.tooLong ? "ban.too_long" : "ban.invalid_length", { length: lengthArg }));
    if (!reason) return call.reply(t("command.reason_required"));
    const who = await target(call, query);
    if (!who) return;
    const enforce = await enforcement(call.invoker);
    if (!(await mayQueue(call, enforce))) return;
    const entry = await queueBan(
      store,
      {
        target: who,
        length: length.seconds,
        reason,
        creator: creatorOf(call.invoker),
        serverbundleId: agent.bundleId,
        enforce,
      },
      clock.now(),
    );
    log.info("ban queued", { entry: entry.id, player: playerLabel(who), by: call.invoker?.name ?? "console", enforce });
    deliver(who); // before the answer, which may take a while or fail (a game without private messages)
    const vars = { player: playerLabel(who), length: lengthText(messages, length.seconds), reason };
    await call.reply(t(enforce === "now" ? "ban.queued" : "ban.queued_on_accept", vars));
  });

  agent.command(names.unban, async (call) => {
    const [query] = call.args;
    if (!query) return usage(call, `${names.unban} <player>`);
    const who = await target(call, query);
    if (!who) return;
    const enforce = await enforcement(call.invoker);
    if (!(await mayQueue(call, enforce))) return;
    const { entry, cancelled } = await queueUnban(
      store,
      { target: who, processor: creatorOf(call.invoker), serverbundleId: agent.bundleId, enforce },
      clock.now(),
    );
    log.info("unban queued", { entry: entry.id, player: playerLabel(who), cancelled_queued_bans: cancelled, enforce });
    deliver(who);
    await call.reply(t(enforce === "now" ? "unban.queued" : "unban.queued_on_accept", { player: playerLabel(who) }));
  });

  agent.command(names.warn, async (call) => {
    const [query, ...words] = call.args;
    const reason = words.join(" ").trim();
    if (!query) return usage(call, `${names.warn} <player> <reason>`);
    if (!reason) return call.reply(t("command.reason_required"));
    const who = await target(call, query);
    if (!who) return;
    if (!(await mayQueue(call, await enforcement(call.invoker)))) return;
    const entry = await queueWarning(
      store,
      { target: who, reason, creator: creatorOf(call.invoker), serverbundleId: agent.bundleId },
      clock.now(),
    );
    log.info("warning queued", { entry: entry.id, player: playerLabel(who), by: call.invoker?.name ?? "console" });
    deliver(who);
    await call.reply(t("warn.queued", { player: playerLabel(who), reason }));
  });

  agent.command(names.warns, async (call) => {
    const [query] = call.args;
    if (!query) return usage(call, `${names.warns} <player>`);
    const who = await target(call, query);
    if (!who) return;
    if (!(await mayShowWarnings(agent, call.invoker, who))) return call.reply(t("command.no_permission"));
    // Without a private message the answer is a public chat line: another player's warnings would be everyone's.
    if (call.invoker && !bridge.caps.privateMessage && !sameIdentifier(call.invoker.id, who.identifier))
      return call.reply(t("warns.not_private", { player: playerLabel(who) }));
    const res = await listWarnings(api, who, agent.bundleId);
    if (!res.ok) return call.reply(t("warns.failed", { player: playerLabel(who), error: describeError(res.error) }));
    for (const line of formatWarnings(messages, playerLabel(who), res.warnings, res.total)) await call.reply(line);
  });
}

/**
 * Reading warnings has no morph_user_id, so the client checks (the spec's rule for requests without morph): the
 * console and the player themselves may; anyone else needs `warning_show` in one of their groups here, or admin.
 */
async function mayShowWarnings(agent: FeatureContext, invoker: GamePlayer | null, who: PlayerRef): Promise<boolean> {
  if (!invoker || sameIdentifier(invoker.id, who.identifier)) return true;
  const user = await agent.users.ensure(invoker);
  if (!user) return false;
  if (user.admin) return true;
  const groups = await agent.deps.api.getUserGroups(user.id, agent.bundleId);
  return groups.ok && groups.value.some((g) => g.properties?.warning_show?.granted === true);
}
