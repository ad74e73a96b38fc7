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
  resolveCreator,
  resolveRef,
} from "../sanction.ts";

export default defineCommand({
  meta: {
    name: "unban",
    description:
      "lift a player's bans (queued ones too): queued durably first, then sent at once; exit 0 delivered, 6 queued",
  },
  args: {
    ...globalArgs,
    player: { type: "positional", description: PLAYER_HELP, required: true },
    as: AS_ARG,
  },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const s = await openSession(ctx);
    const target = await resolveRef(s, args.player);
    const processor = await resolveCreator(s, args.as);
    const serverbundleId = await bundleId(s);
    const { queueUnban, outcomeMessage, playerLabel } = await import("../../lib/sanctions/index.ts");
    const { entry, cancelled } = await queueUnban(s.store, { target, processor, serverbundleId });
    const d = await deliver(s, "unban", entry.id);

    const who = playerLabel(target);
    const text =
      (d.outcome && outcomeMessage(s.messages, d.outcome)) ??
      (d.result === "elsewhere"
        ? s.messages.t("queue.sent_elsewhere", { player: who })
        : s.messages.t("unban.queued", { player: who }) + (d.error ? ` (${d.error})` : ""));
    const code = RESULT_EXIT[d.result];
    if (code !== EXIT.OK && code !== EXIT.QUEUED) throw new CliError(text, code);
    ctx.emit({
      action: "unban",
      status: STATUS_JSON[d.result],
      entry_id: entry.id,
      player: playerJson(target),
      /** Queued bans of the player that will now never be sent. */
      cancelled_queued_bans: cancelled,
      as: processor && { id: processor.identifier, user_id: processor.user_id, name: processor.name },
      ...(d.error ? { error: d.error } : {}),
    });
    ctx.say(text);
    if (cancelled) ctx.say(s.messages.t("unban.cancelled_queued", { count: cancelled, player: who }));
    ctx.exit(code);
  },
});
