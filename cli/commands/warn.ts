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
    name: "warn",
    description:
      "warn a player: queued durably first, then sent at once; exit 0 delivered, 6 queued (the service did not answer)",
  },
  args: {
    ...globalArgs,
    player: { type: "positional", description: PLAYER_HELP, required: true },
    reason: { type: "positional", description: "why: the rest of the line", required: true },
    as: AS_ARG,
  },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const reason = reasonOf(args._, 1, "warn <player> <reason…>");
    const s = await openSession(ctx);
    const target = await resolveRef(s, args.player);
    const creator = await resolveCreator(s, args.as);
    const serverbundleId = await bundleId(s);
    const sanctions = await import("../../lib/sanctions/index.ts");
    const entry = await sanctions.queueWarning(s.store, { target, reason, creator, serverbundleId });
    const d = await deliver(s, "warning", entry.id);

    const who = sanctions.playerLabel(target);
    const text =
      (d.outcome && sanctions.outcomeMessage(s.messages, d.outcome)) ??
      (d.result === "elsewhere"
        ? s.messages.t("queue.sent_elsewhere", { player: who })
        : s.messages.t("warn.queued", { player: who, reason }) + (d.error ? ` (${d.error})` : ""));
    const code = RESULT_EXIT[d.result];
    if (code !== EXIT.OK && code !== EXIT.QUEUED) throw new CliError(text, code);
    // Rule 12: the ban list is refreshed after a warning: the service bans by itself at its warning threshold.
    let autoBanned: boolean | null = null;
    const warning = d.outcome?.kind === "warning" ? d.outcome.warning : undefined;
    if (warning) {
      const list = await sanctions.fetchBanList(s.api, s.store, serverbundleId);
      const since = Date.parse(warning.created_on);
      if (list.source === "api")
        autoBanned = Object.entries(list.list)
          .filter(([id]) => sanctions.sameIdentifier(id, target.identifier))
          .some(([, bans]) => bans.some((b) => sanctions.banHolds(b, Date.now()) && Date.parse(b.created_on) >= since));
    }
    ctx.emit({
      action: "warn",
      status: STATUS_JSON[d.result],
      entry_id: entry.id,
      player: playerJson(target),
      reason,
      as: creator && { id: creator.identifier, user_id: creator.user_id, name: creator.name },
      ...(warning ? { warning_id: warning.id } : {}),
      /** Whether the service banned the player because of this warning (null: not known). */
      auto_banned: autoBanned,
      ...(d.error ? { error: d.error } : {}),
    });
    ctx.say(text);
    if (autoBanned) ctx.say(s.messages.t("warn.auto_banned", { player: who }));
    ctx.exit(code);
  },
});
