/**
 * What the one-shot sanction commands (ban, unban, warn, warns) share: the configuration, store, service client and
 * game user type; `<player>` and `--as` resolution with one-line errors; the serverbundle; the command's own
 * delivery round (lib/sanctions/own-entry.ts) and the exit codes of its outcomes.
 */
import type { Api } from "../lib/api/client.ts";
import type { Config } from "../lib/config/index.ts";
import type { Messages } from "../lib/messages.ts";
import type { PlayerErrorKind } from "../lib/players/resolve.ts";
import type { Creator, DeliveryOutcome, EntryFate, PlayerRef } from "../lib/sanctions/index.ts";
import type { Store } from "../lib/store/index.ts";
import type { Context } from "./context.ts";
import { CliError, EXIT, type ExitCode } from "./exit.ts";

export interface Session {
  ctx: Context;
  config: Config;
  store: Store;
  api: Api;
  messages: Messages;
  /** The service's user type of this game's ids (STEAM, MINECRAFT, …), from the configured bridge. */
  userType: string;
  /** How long an uncertain entry waits before it is looked up (settleTime of api.timeout). */
  settleMs: number;
}

export async function openSession(ctx: Context): Promise<Session> {
  const config = await ctx.config();
  const [{ serviceApi }, { openStore }, { loadMessages }, { userTypeOf }, { settleTime }] = await Promise.all([
    import("../lib/app/service.ts"),
    import("../lib/store/index.ts"),
    import("../lib/messages.ts"),
    import("../lib/game/user-type.ts"),
    import("../lib/sanctions/deliver.ts"),
  ]);
  const logger = ctx.logger;
  // One attempt: an unanswered request is the queue's to retry, not a reason to keep the operator waiting.
  const invocation = ctx.invocation;
  const { api } = await serviceApi(config, { retries: 0, logger: logger.withTag("api"), watched: invocation.guards });
  const [store, messages] = await Promise.all([
    openStore({ dir: config.storage.dir, logger, sweep: false }),
    loadMessages(config.lang, { logger }),
  ]);
  const userType = await userTypeOf(config);
  return { ctx, config, store, api, messages, userType, settleMs: settleTime(config.api.timeout * 1000) };
}

const PLAYER_EXIT: Record<PlayerErrorKind, ExitCode> = {
  invalid: EXIT.USAGE,
  unknown: EXIT.NOT_FOUND,
  stale: EXIT.NOT_FOUND,
  ambiguous: EXIT.USAGE,
  unreachable: EXIT.UNREACHABLE,
  refused: EXIT.FAILURE,
};

/**
 * `<player>` (or `--as`) as the sanction queues need it (lib/players/resolve.ts resolveTarget). Nicks come from the "online"
 * list `run` keeps (and, for `<player>`, its list of recently seen players); it counts as stale after two status
 * rounds without an update. A service user id the service
 * cannot be asked about now is queued as given and resolved at delivery.
 */
export async function resolveRef(s: Session, input: string, what = "player"): Promise<PlayerRef> {
  const [{ resolveTarget, PlayerError }, { onlineCache }, { recentCache }] = await Promise.all([
    import("../lib/players/resolve.ts"),
    import("../lib/players/online.ts"),
    import("../lib/players/recent.ts"),
  ]);
  try {
    return await resolveTarget(input, {
      userType: s.userType,
      online: () => onlineCache(s.store).get(),
      // The target may have left (kicked by the ban being lifted): players `run` saw lately count too. Not for
      // --as: whose permissions a command borrows is named by someone online, or by id.
      ...(what === "player" ? { recent: () => recentCache(s.store).get() } : {}),
      maxAgeMs: 2 * s.config.intervals.status * 1000 + 5_000,
      now: Date.now(),
      api: s.api,
    });
  } catch (e) {
    if (!(e instanceof PlayerError)) throw e;
    throw new CliError(what === "player" ? e.message : `${what}: ${e.message}`, PLAYER_EXIT[e.kind]);
  }
}

/** `--as <player>`: the user whose permissions the service checks (morph_user_id); absent = the console. */
export async function resolveCreator(s: Session, as: string | undefined): Promise<Creator | null> {
  if (as === undefined) return null;
  const ref = await resolveRef(s, as, "--as");
  const { playerLabel } = await import("../lib/sanctions/index.ts");
  // A creator always has a name in messages; a bare id is better than "Console".
  return {
    name: playerLabel(ref),
    user_id: ref.user_id,
    identifier: ref.identifier,
    type: ref.type,
  };
}

/** The serverbundle sanctions are issued in: from the server record `run` caches, else asked from the service. */
export async function bundleId(s: Session): Promise<string> {
  const [{ describeError }, { knownBundle }] = await Promise.all([
    import("../lib/api/client.ts"),
    import("../lib/server-record.ts"),
  ]);
  const known = await knownBundle(s.api, s.store, s.config.api.server_id);
  if (known.ok) return known.id;
  const e = known.error;
  const why = e ? describeError(e) : "the server record names no serverbundle";
  throw new CliError(
    `nothing was queued: this server's serverbundle is unknown (${why}) and no server record is cached yet; ` +
      "check with `hub-agent doctor`",
    !e || e.kind === "NotFound" || e.kind === "ClientError" ? EXIT.FAILURE : EXIT.UNREACHABLE,
  );
}

/** What became of the command's own entry after a delivery round (lib/sanctions/own-entry.ts). */
export type Delivery = EntryFate;

/**
 * The command's own round: its player's queued sanctions, then what became of `entryId`. `askAnyway`: also when a
 * round found no service moments ago (`queue retry`).
 */
export async function deliver(
  s: Session,
  kind: DeliveryOutcome["kind"],
  entryId: string,
  opts: { askAnyway?: boolean } = {},
): Promise<Delivery> {
  const [{ deliverOwnEntry }, { credentialRefusal }] = await Promise.all([
    import("../lib/sanctions/own-entry.ts"),
    import("../lib/app/service.ts"),
  ]);
  const deps = { api: s.api, store: s.store, logger: s.ctx.logger.withTag("queue"), settleMs: s.settleMs };
  // A running `run` takes the entry (lib/sanctions/handoff.ts): its user lookup and the send itself, each within
  // api.timeout, are what the answer waits for.
  const handoffWaitMs = 2 * s.config.api.timeout * 1000;
  const serviceUrl = s.config.api.url;
  const d = await deliverOwnEntry({ ...deps, messages: s.messages, handoffWaitMs, serviceUrl, ...opts }, kind, entryId);
  // A refused key or unknown server id is the operator's to fix (exit 3), but the entry is safe in its queue.
  const refusal = d.result === "kept" ? await credentialRefusal(s.ctx.invocation.guards) : undefined;
  if (refusal)
    throw new CliError(
      `${refusal}; the ${kind} stays queued (nothing is lost): \`hub-agent run\` sends it once the service accepts this agent, or \`hub-agent queue retry ${entryId}\``,
      EXIT.CONFIG,
    );
  return d;
}

/** Exit codes of a delivery result: done at the service 0, queued 6, refused 1, unknown user 5. */
export const RESULT_EXIT: Record<Delivery["result"], ExitCode> = {
  delivered: EXIT.OK,
  elsewhere: EXIT.OK,
  kept: EXIT.QUEUED,
  not_found: EXIT.NOT_FOUND,
  refused: EXIT.FAILURE,
  cancelled: EXIT.FAILURE,
};

/** The player as --json shows them. */
export const playerJson = (p: PlayerRef) => ({
  id: p.identifier,
  type: p.type,
  user_id: p.user_id,
  name: p.name || null,
});

/** JSON status words: `kept` is "queued" to a script. */
export const STATUS_JSON: Record<Delivery["result"], string> = {
  delivered: "delivered",
  elsewhere: "sent_by_other_process",
  kept: "queued",
  not_found: "not_found",
  refused: "refused",
  cancelled: "cancelled",
};

// ── Arguments ────────────────────────────────────────────────────────────────

export const PLAYER_HELP =
  "SteamID64 / STEAM_X:Y:Z / [U:1:N], Minecraft UUID, …, a service user id (user:<uuid>), or the nick of an online player";

export const AS_ARG = {
  type: "string",
  description: "act as this player's service user (sent as morph_user_id; the service checks their permissions)",
  valueHint: "player",
} as const;

/** The reason: every positional from `from` on, joined; empty is refused. */
export function reasonOf(positionals: string[], from: number, usage: string): string {
  const reason = positionals.slice(from).join(" ").trim();
  if (!reason) throw new CliError(`the reason is empty: hub-agent ${usage}`, EXIT.USAGE);
  return reason;
}
