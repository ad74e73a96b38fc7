import { defineCommand } from "citty";
import { globalArgs, createContext } from "../context.ts";
import { CliError, EXIT } from "../exit.ts";
import {
  AS_ARG,
  PLAYER_HELP,
  RESULT_EXIT,
  STATUS_JSON,
  bundleId,
  deliver,
  openSession,
  playerJson,
  reasonOf,
  resolveCreator,
  resolveRef,
} from "../sanction.ts";

export default defineCommand({
  meta: {
    name: "ban",
    description:
      "ban a player: queued durably first, then sent at once; exit 0 delivered, 6 queued (the service did not answer)",
  },
  args: {
    ...globalArgs,
    player: { type: "positional", description: PLAYER_HELP, required: true },
    length: {
      type: "positional",
      description: "minutes (90), a duration (30m, 1d12h, 2w), or 0/perm for permanent",
      required: true,
    },
    reason: { type: "positional", description: "why: the rest of the line", required: true },
    as: AS_ARG,
  },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const reason = reasonOf(args._, 2, "ban <player> <length> <reason…>");
    const { parseLength, formatLength } = await import("../../lib/duration.ts");
    const length = parseLength(args.length);
    if (!length.ok) throw new CliError(length.error, EXIT.USAGE);

    const s = await openSession(ctx);
    ctx.mark("session");
    const target = await resolveRef(s, args.player);
    const creator = await resolveCreator(s, args.as);
    const serverbundleId = await bundleId(s);
    ctx.mark("resolved");
    const { queueBan, outcomeMessage, playerLabel } = await import("../../lib/sanctions/index.ts");
    const entry = await queueBan(s.store, { target, length: length.seconds, reason, creator, serverbundleId });
    ctx.mark("queued");
    const d = await deliver(s, "ban", entry.id);
    ctx.mark("delivered");

    const who = playerLabel(target);
    const text =
      (d.outcome && outcomeMessage(s.messages, d.outcome)) ??
      (d.result === "elsewhere"
        ? s.messages.t("queue.sent_elsewhere", { player: who })
        : s.messages.t("ban.queued", { player: who, length: formatLength(length.seconds), reason }) +
          (d.error ? ` (${d.error})` : ""));
    const code = RESULT_EXIT[d.result];
    if (code !== EXIT.OK && code !== EXIT.QUEUED) throw new CliError(text, code);
    ctx.emit({
      action: "ban",
      status: STATUS_JSON[d.result],
      entry_id: entry.id,
      player: playerJson(target),
      length_s: length.seconds,
      length: formatLength(length.seconds),
      reason,
      as: creator && { id: creator.identifier, user_id: creator.user_id, name: creator.name },
      ...(d.outcome?.kind === "ban" && d.outcome.ban ? { ban_id: d.outcome.ban.id } : {}),
      ...(d.error ? { error: d.error } : {}),
    });
    ctx.say(text);
    ctx.exit(code);
  },
});
