import type { Feature } from "../feature.ts";
import type { GamePlayer } from "../game/bridge.ts";

/**
 * Rule 6 as a feature: every player let in is looked up (created on 404) and announced with hub_ply_initialized;
 * a lookup that failed otherwise is tried again every intervals.user_retry while the player stays online.
 */
export const users: Feature = (ctx) => {
  const initialize = async (player: GamePlayer) => {
    const user = await ctx.users.ensure(player);
    if (user && ctx.players.has(player.id))
      await ctx.events.emit("hub_ply_initialized", { player, user, resumed: ctx.resumed.has(player.id) });
  };
  ctx.onAdmitted(initialize);
  ctx.job("user-retry", ctx.deps.config.intervals.user_retry, async () => {
    for (const [id, player] of ctx.users.pending) {
      if (ctx.players.has(id)) await initialize(player);
      else ctx.users.left(id);
    }
  });
};
