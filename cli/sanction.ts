/**
 * What the one-shot sanction commands (ban, unban, warn, warns) and `queue retry` share: the command line's session
 * (lib/app/session.ts), the one mapping from an operation's outcome (lib/app/sanction.ts) to an exit code, the
 * arguments' help and --json's words.
 */
import type { Creator, Failed, Issued, Status } from "../lib/app/outcome.ts";
import { type Session, openSession as newSession } from "../lib/app/session.ts";
import type { Context } from "./context.ts";
import { CliError, EXIT, type ExitCode } from "./exit.ts";

/**
 * The command line's session: its configuration, logger and phases; its service client watched for a refused key.
 * Interrupted once its entry is queued (Ctrl-C while it waits for VyHub), the command says the entry stays queued
 * and how to withdraw it: an operator who typed it again would have it twice.
 */
export const sessionOf = (ctx: Context): Session =>
  newSession({
    config: () => ctx.config(),
    gameFacts: () => ctx.gameFacts(),
    logger: ctx.logger,
    watched: ctx.invocation.guards,
    mark: ctx.mark,
    // With --json the outcome's sentence is not said, so its messages are not loaded for it (lib/app/sanction.ts).
    sentences: !ctx.json,
    queued: (kind, id) =>
      ctx.invocation.onInterrupt?.(
        () =>
          `interrupted: the ${kind} is queued (${id}) and will be sent; \`hub-agent queue drop ${id}\` withdraws it`,
        EXIT.QUEUED,
      ),
  });

/** The README's "Exit codes", for every status an operation answers with. */
const EXIT_OF: Record<Status, ExitCode> = {
  delivered: EXIT.OK,
  elsewhere: EXIT.OK,
  listed: EXIT.OK,
  queued: EXIT.QUEUED,
  invalid: EXIT.USAGE,
  ambiguous: EXIT.USAGE,
  not_found: EXIT.NOT_FOUND,
  unreachable: EXIT.UNREACHABLE,
  refused: EXIT.FAILURE,
  cancelled: EXIT.FAILURE,
  failed: EXIT.FAILURE,
  credentials: EXIT.CONFIG,
};

/**
 * The one place an outcome becomes an exit code: a failure is thrown as its one line (the runner prints it, on
 * stdout as JSON with --json); otherwise the command exits with the outcome's code once it has rendered it.
 */
export function settle<O extends { status: Status }>(ctx: Context, o: O): Exclude<O, Failed> {
  const code = EXIT_OF[o.status];
  if (code !== EXIT.OK && code !== EXIT.QUEUED) throw new CliError((o as unknown as Failed).message, code);
  ctx.exit(code);
  return o as Exclude<O, Failed>;
}

/** The sentence and the lines after it. */
export function sayIssued(ctx: Context, o: Issued): void {
  ctx.say(o.message);
  for (const line of o.notes) ctx.say(line);
}

/** JSON status words: `elsewhere` is "sent_by_other_process" to a script. */
const STATUS_WORD: Record<Issued["status"], string> = {
  delivered: "delivered",
  elsewhere: "sent_by_other_process",
  queued: "queued",
};
export const jsonStatus = (status: Issued["status"]) => STATUS_WORD[status];

/** What every issued sanction shows with --json first. */
export const issuedJson = (action: string, o: Issued) => ({
  action,
  status: jsonStatus(o.status),
  entry_id: o.entryId,
  player: playerJson(o.target),
});

/** The player as --json shows them. */
export const playerJson = (p: Issued["target"]) => ({
  id: p.identifier,
  type: p.type,
  user_id: p.user_id,
  name: p.name || null,
});

/** The issuer (--as) as --json shows them; null for the console. */
export const creatorJson = (c: Creator | null) => c && { id: c.identifier, user_id: c.user_id, name: c.name };

// ── Arguments ────────────────────────────────────────────────────────────────

export const PLAYER_HELP =
  "SteamID64 / STEAM_X:Y:Z / [U:1:N], Minecraft UUID, …, a service user id (user:<uuid>), or the nick of a player online or seen recently";

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
