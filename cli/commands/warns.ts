import { defineCommand } from "citty";
import { globalArgs, createContext } from "../context.ts";
import { CliError, EXIT } from "../exit.ts";
import { PLAYER_HELP, bundleId, openSession, playerJson, resolveRef } from "../sanction.ts";

export default defineCommand({
  meta: { name: "warns", description: "a player's warnings in this serverbundle, active and inactive, newest first" },
  args: {
    ...globalArgs,
    player: { type: "positional", description: PLAYER_HELP, required: true },
  },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const s = await openSession(ctx);
    const target = await resolveRef(s, args.player);
    const serverbundleId = await bundleId(s);
    const [{ listWarnings, formatWarnings, playerLabel, warningActive }, { describeError, isRejected }] =
      await Promise.all([import("../../lib/sanctions/index.ts"), import("../../lib/api/client.ts")]);
    const res = await listWarnings(s.api, target, serverbundleId);
    const who = playerLabel(target);
    if (!res.ok)
      throw new CliError(
        s.messages.t("warns.failed", { player: who, error: describeError(res.error) }),
        isRejected(res.error) ? EXIT.FAILURE : EXIT.UNREACHABLE,
      );
    ctx.emit({
      player: playerJson(target),
      total: res.total,
      warnings: res.warnings.map((w) => ({
        id: w.id,
        reason: w.reason ?? null,
        creator: w.creator ? { user_id: w.creator.id, name: w.creator.username ?? null } : null,
        created_on: w.created_on,
        active: warningActive(w),
        disabled: w.disabled,
        serverbundle_id: w.serverbundle?.id ?? null,
      })),
    });
    for (const line of formatWarnings(s.messages, who, res.warnings, res.total)) ctx.say(line);
  },
});
