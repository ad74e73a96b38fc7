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
import { type Sanction, findPlayer, queueSanction } from "../app/sanction.ts";
import { parseLength } from "../duration.ts";
import type { GamePlayer } from "../game/bridge.ts";
import type { Logger } from "../log.ts";
import { knownGroups, appliedGroupsCache } from "../players/groups.ts";
import { recentCache } from "../players/recent.ts";
import { matchNick } from "../players/resolve.ts";
import {
  type Creator,
  type Enforce,
  type PlayerRef,
  formatWarnings,
  lengthText,
  listWarnings,
  playerLabel,
  sameIdentifier,
  sameIssuer,
  queuedKey,
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

/** What every command's steps share. */
interface Commands {
  agent: FeatureContext;
  sanctions: Sanctions;
  log: Logger;
  /** config commands.trusted_groups. */
  trusted: Set<string>;
}

export function sanctionCommands(agent: FeatureContext, sanctions: Sanctions): void {
  const { config, logger } = agent.deps;
  const c: Commands = {
    agent,
    sanctions,
    log: logger.withTag("commands"),
    trusted: new Set(config.commands.trusted_groups),
  };
  const names = config.commands;
  agent.command(names.ban, (call) => fromConsoleOnly(c, call) ?? banCommand(c, call, names.ban));
  agent.command(names.unban, (call) => fromConsoleOnly(c, call) ?? unbanCommand(c, call, names.unban));
  agent.command(names.warn, (call) => fromConsoleOnly(c, call) ?? warnCommand(c, call, names.warn));
  agent.command(names.warns, (call) => warnsCommand(c, call, names.warns));
}

/**
 * Where players are known only by a name anyone can take (OpenArena, Xonotic, Teeworlds, OpenTTD: the preset's
 * identity is "name"), VyHub would check the rights of whoever owns the name typed, not of who typed it: a player
 * who took an admin's name would ban with the admin's rights. There, ban, unban and warn come from the server's
 * console or `hub-agent ban`, never from a player's chat: the refusal's answer, else undefined.
 */
const fromConsoleOnly = (c: Commands, call: CommandCall): Promise<void> | undefined =>
  call.invoker && c.agent.deps.bridge.caps.identity === "name"
    ? call.reply(c.agent.deps.messages.t("command.console_only"))
    : undefined;

/** `ban <player> <length> <reason…>` */
async function banCommand(c: Commands, call: CommandCall, name: string): Promise<void> {
  const { messages } = c.agent.deps;
  const [query, lengthArg, ...words] = call.args;
  const reason = words.join(" ").trim();
  if (!query || !lengthArg) return usage(c, call, `${name} <player> <length> <reason>`);
  const length = parseLength(lengthArg);
  if (!length.ok)
    return call.reply(messages.t(length.tooLong ? "ban.too_long" : "ban.invalid_length", { length: lengthArg }));
  if (!reason) return call.reply(messages.t("command.reason_required"));
  const who = await target(c, call, query);
  if (!who) return;
  const vars = { player: playerLabel(who), length: lengthText(messages, length.seconds), reason };
  await issue(
    c,
    call,
    (on) => ({ kind: "ban", target: who, length: length.seconds, reason, ...on }),
    (enforce) => messages.t(queuedKey("ban", enforce), vars),
  );
}

/** `unban <player>` */
async function unbanCommand(c: Commands, call: CommandCall, name: string): Promise<void> {
  const [query] = call.args;
  if (!query) return usage(c, call, `${name} <player>`);
  const who = await target(c, call, query);
  if (!who) return;
  const { messages } = c.agent.deps;
  const vars = { player: playerLabel(who) };
  await issue(
    c,
    call,
    ({ creator, ...on }) => ({ kind: "unban", target: who, processor: creator, ...on }),
    (enforce) => messages.t(queuedKey("unban", enforce), vars),
  );
}

/** `warn <player> <reason…>` */
async function warnCommand(c: Commands, call: CommandCall, name: string): Promise<void> {
  const { messages } = c.agent.deps;
  const [query, ...words] = call.args;
  const reason = words.join(" ").trim();
  if (!query) return usage(c, call, `${name} <player> <reason>`);
  if (!reason) return call.reply(messages.t("command.reason_required"));
  const who = await target(c, call, query);
  if (!who) return;
  await issue(
    c,
    call,
    ({ creator, serverbundleId }) => ({ kind: "warning", target: who, reason, creator, serverbundleId }),
    () => messages.t("warn.queued", { player: playerLabel(who), reason }),
  );
}

/** `warns <player>`: answered from the service, nothing queued. */
async function warnsCommand(c: Commands, call: CommandCall, name: string): Promise<void> {
  const { agent } = c;
  const { messages, bridge, api } = agent.deps;
  const [query] = call.args;
  if (!query) return usage(c, call, `${name} <player>`);
  const who = await target(c, call, query);
  if (!who) return;
  if (!(await mayShowWarnings(agent, call.invoker, who))) return call.reply(messages.t("command.no_permission"));
  // Without a private message the answer is a public chat line: another player's warnings would be everyone's.
  if (call.invoker && !bridge.caps.privateMessage && !sameIdentifier(call.invoker.id, who.identifier))
    return call.reply(messages.t("warns.not_private", { player: playerLabel(who) }));
  const res = await listWarnings(api, who, agent.bundleId);
  const player = playerLabel(who);
  if (!res.ok) return call.reply(messages.t("warns.failed", { player, error: describeError(res.error) }));
  for (const line of formatWarnings(messages, player, res.warnings, res.total)) await call.reply(line);
}

const usage = (c: Commands, call: CommandCall, text: string) =>
  call.reply(c.agent.deps.messages.t("command.usage", { usage: text }));

/**
 * The shared end of ban, unban and warn: when the invoker's sanction counts here (enforcement), whether they may
 * queue one more, then the entry written to its durable queue (lib/app/sanction.ts, as the CLI writes it), delivered
 * first by `run`'s round, and the answer. `make` writes the sanction with its issuer, bundle and enforcement; the answer
 * depends on the enforcement.
 */
async function issue(
  c: Commands,
  call: CommandCall,
  make: (on: { creator: Creator | null; serverbundleId: string; enforce: Enforce }) => Sanction,
  answer: (enforce: Enforce) => string,
): Promise<void> {
  const { agent, log } = c;
  const enforce = await enforcement(c, call.invoker);
  if (!(await mayQueue(c, call, enforce))) return;
  const sanction = make({ creator: creatorOf(c, call.invoker), serverbundleId: agent.bundleId, enforce });
  const { entryId, cancelled } = await queueSanction(agent.deps.store, sanction, agent.deps.clock.now());
  const by = call.invoker?.name ?? "console";
  const player = playerLabel(sanction.target);
  if (sanction.kind === "unban")
    log.info("unban queued", { entry: entryId, player, cancelled_queued_bans: cancelled, enforce });
  else
    log.info(`${sanction.kind} queued`, {
      entry: entryId,
      player,
      by,
      ...(sanction.kind === "ban" ? { enforce } : {}),
    });
  // Enforced, then delivered first, and the ban list refreshed; tracked, not awaited: before the answer, which may
  // take a while or fail (a game without private messages).
  void agent.scheduler.run("sanctions", () => c.sanctions.deliverNow(sanction.target));
  await call.reply(answer(enforce));
}

/**
 * `<player>`: an online player's id or nick, a platform id, a service user id, or the nick of a player seen lately
 * who left (`!unban` of the player a ban just kicked). Undefined after answering why.
 */
async function target(c: Commands, call: CommandCall, query: string): Promise<PlayerRef | undefined> {
  const { agent } = c;
  const { bridge, clock, api, messages } = agent.deps;
  const players = [...agent.players.values()].map((p) => ({
    id: p.id,
    name: p.name,
    user_id: agent.users.get(p.id)?.id ?? null,
  }));
  const found = await findPlayer(query, {
    userType: bridge.userType,
    online: async () => ({ savedAt: clock.now(), data: { user_type: bridge.userType, players } }),
    recent: () => recent(c),
    ...(bridge.nameId ? { nameId: bridge.nameId } : {}),
    maxAgeMs: Number.POSITIVE_INFINITY,
    now: clock.now(),
    api,
  });
  if (found.ok) return found.ref;
  if (found.kind === "ambiguous") {
    const here = new Set(players.map((p) => p.id));
    const saved = await recent(c);
    const gone = saved?.data.user_type === bridge.userType ? saved.data.players.filter((p) => !here.has(p.id)) : [];
    const list = matchNick(query, [...players, ...gone]).map((p) => `${p.name} (${p.id})`);
    await call.reply(messages.t("command.ambiguous", { query, players: list.join(", ") }));
  } else if (found.kind === "unreachable") await call.reply(messages.t("service.unreachable"));
  else await call.reply(messages.t("command.player_not_found", { query }));
  return undefined;
}

/** Who left lately (lib/players/recent.ts); unreadable is none: the online players still resolve. */
const recent = (c: Commands) =>
  recentCache(c.agent.deps.store)
    .get()
    .catch(() => undefined);

/** The invoker as creator: null for the console; a player is looked up at delivery if not yet known. */
const creatorOf = (c: Commands, invoker: GamePlayer | null): Creator | null =>
  invoker && {
    name: invoker.name,
    user_id: c.agent.users.get(invoker.id)?.id ?? null,
    identifier: invoker.id,
    type: c.agent.deps.bridge.userType,
  };

/**
 * When the invoker's ban or unban counts here: the console at once; a player at once only in a trusted in-game
 * group as far as the agent knows (the game's answer, else what group sync applied); otherwise, or when their
 * groups cannot be read, once the service accepted it.
 */
async function enforcement(c: Commands, invoker: GamePlayer | null): Promise<Enforce> {
  if (!invoker) return "now";
  const { bridge, store } = c.agent.deps;
  // Known by a name anyone can take: a trusted group would be trusted to whoever typed that name.
  if (!c.trusted.size || bridge.caps.identity === "name") return "on_accept";
  try {
    const groups = await knownGroups(bridge, invoker, async () => (await appliedGroupsCache(store).get())?.data ?? {});
    return groups.some((g) => c.trusted.has(g)) ? "now" : "on_accept";
  } catch (e) {
    c.log.warn(`the in-game groups of ${invoker.name} are unknown (${(e as Error).message}); not trusted`);
    return "on_accept";
  }
}

/** Whether the invoker may queue one more: false (after answering why) when MAX_WAITING_PER_PLAYER of theirs wait. */
async function mayQueue(c: Commands, call: CommandCall, enforce: Enforce): Promise<boolean> {
  const me = creatorOf(c, call.invoker);
  if (enforce === "now" || !me) return true;
  const q = sanctionQueues(c.agent.deps.store);
  const [bans, unbans, warnings] = await Promise.all([q.ban.list(), q.unban.list(), q.warning.list()]);
  const waiting =
    bans.filter((e) => sameIssuer(e.data.creator, me)).length +
    unbans.filter((e) => sameIssuer(e.data.processor, me)).length +
    warnings.filter((e) => sameIssuer(e.data.creator, me)).length;
  if (waiting < MAX_WAITING_PER_PLAYER) return true;
  c.log.warn(`${call.invoker?.name} has ${waiting} sanctions waiting for VyHub; not queueing more`);
  await call.reply(c.agent.deps.messages.t("command.too_many_waiting", { count: waiting }));
  return false;
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
