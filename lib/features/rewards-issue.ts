/**
 * What one reward issues in the game (docs/client-interface.md §7.3 rule 4): a COMMAND's console lines or a SCRIPT,
 * with the bridge's escaping, and whether anything reached the game ("yes", "no", "maybe"). Apart from rewards.ts,
 * which decides when a reward runs and keeps a `once` reward single around this call: this module never sees the
 * executed queue. The game's refusals are counted here (lib/rewards/failures.ts); problems with one reward are logged
 * once per process.
 */
import type { FeatureContext } from "../feature.ts";
import type { AppliedReward } from "../api/client.ts";
import { type GamePlayer, mayHaveRun, unreachable } from "../game/bridge.ts";
import type { Logger } from "../log.ts";
import type { RewardFailures } from "../rewards/failures.ts";
import { notSaid } from "../said.ts";
import { type Escaping, TemplateError, commandLines, fillTemplate, rewardValues } from "../rewards/replace.ts";

/** Problems logged once per process are remembered up to this many; then the memory starts again. */
const REPORTED_MAX = 1000;

/** Did anything reach the game? "partly" counts as executed: its first lines may have had effects. */
/** "maybe": the command was written but its reply was lost (a timeout, a dropped connection): it may have run. */
export type Issued = "yes" | "no" | "maybe";

export class RewardIssuer {
  /** Problems with one reward (bad data, refused SCRIPT) are logged once per process, not every round. */
  private reported = new Set<string>();

  constructor(
    private agent: FeatureContext,
    private failures: RewardFailures,
    private log: Logger,
  ) {}

  /** What to issue for this reward, or undefined (with a log line, once) when it cannot run here. */
  prepare(reward: AppliedReward, player: GamePlayer): (() => Promise<Issued>) | undefined {
    const { bridge, config } = this.agent.deps;
    const { type, data } = reward.reward;
    const values = rewardValues(reward, player, bridge.userType);
    const refuse = (why: string) => this.refuse(reward, player, why);
    if (type === "COMMAND") {
      const command = data?.command;
      if (typeof command !== "string") return refuse("its data has no command text");
      const lines = this.fill(reward, player, commandLines(command), values, bridge);
      if (!lines) return undefined;
      // The bridge's escaping must keep every value inside its line; a line break would start another command.
      if (lines.some((l) => /[\r\n]/.test(l)))
        return refuse("a replaced value would have split a console command (the bridge's escaping failed)");
      return () => this.issueLines(reward, player, lines);
    }
    if (type === "SCRIPT") {
      const script = data?.script;
      if (typeof script !== "string") return refuse("its data has no script text");
      const runner = bridge.script;
      if (!config.rewards.allow_script)
        return refuse(
          "it is a SCRIPT reward (Lua code from VyHub, which Garry's Mod runs), and running code from VyHub is off: set rewards.allow_script = true to run it; until then it stays open at VyHub",
        );
      if (!runner) return refuse("this game has no script console (SCRIPT rewards run on Garry's Mod)");
      const [text] = this.fill(reward, player, [script], values, runner) ?? [];
      if (text === undefined) return undefined;
      return async () => {
        try {
          await runner.run(text, player);
          return "yes";
        } catch (e) {
          if (mayHaveRun(e)) return "maybe";
          await this.gameRefused(reward, player, e);
          return "no";
        }
      };
    }
    return refuse(`a game server cannot run ${type} rewards`);
  }

  /**
   * Console lines one by one. When the first is refused nothing happened, so the reward runs again later; when a
   * later one is, the earlier ones had their effect and the reward counts as executed (never twice).
   */
  private async issueLines(reward: AppliedReward, player: GamePlayer, lines: readonly string[]): Promise<Issued> {
    const { bridge } = this.agent.deps;
    if (!lines.length) this.log.warn(`reward ${reward.id} (${reward.reward.name}) has an empty command`);
    for (const [i, line] of lines.entries()) {
      try {
        await bridge.exec(line);
      } catch (e) {
        if (i === 0) {
          // Written and unanswered, it may have run: not run again (never twice), flagged for the operator.
          if (mayHaveRun(e)) return "maybe";
          await this.gameRefused(reward, player, e);
          return "no";
        }
        this.log.error(
          `reward ${reward.id} executed only in part: line ${i + 1} of ${lines.length} and later ones failed (${String(e)}); it counts as executed`,
          { applied_reward_id: reward.id },
        );
        return "yes";
      }
    }
    return "yes";
  }

  /**
   * Nothing ran. Refused by the game: counted, so the reward backs off and is given up in the end (docs/pitfalls.md,
   * pitfall 4). The console out of reach is no answer of the game: not counted, the next round tries again (an
   * outage of a few rounds would otherwise give up every reward due meanwhile).
   */
  private async gameRefused(reward: AppliedReward, player: GamePlayer, e: unknown): Promise<void> {
    const error = String(e);
    if (unreachable(e)) {
      this.once(`${reward.id} unreachable`, () =>
        this.log.warn(
          `reward ${reward.id} (${reward.reward.name}) for ${player.name} waits: the game's console can't be reached (${error}); it runs once the console answers`,
          { applied_reward_id: reward.id },
        ),
      );
      return;
    }
    const data = {
      id: reward.id,
      user_id: reward.user.id,
      player: player.name,
      reward: reward.reward.name,
      packet: reward.applied_packet.packet.title,
    };
    return this.failures.refused(data, error);
  }

  /** The templates filled for this reward, or undefined (logged once) when a token sits where no value may go. */
  private fill(
    reward: AppliedReward,
    player: GamePlayer,
    templates: readonly string[],
    values: Record<string, string>,
    escaping: Escaping,
  ): string[] | undefined {
    const { id } = reward;
    const filled: string[] = [];
    const unknown = new Set<string>();
    for (const template of templates) {
      try {
        const r = fillTemplate(template, values, escaping);
        filled.push(r.text);
        for (const token of r.unknown) unknown.add(token);
      } catch (e) {
        if (!(e instanceof TemplateError)) throw e;
        return this.refuse(reward, player, e.message);
      }
    }
    if (unknown.size)
      this.once(`${id} tokens`, () =>
        this.log.warn(
          `reward ${id}: ${[...unknown].join(", ")} ${unknown.size > 1 ? "are" : "is"} not known here; left as written`,
        ),
      );
    return filled;
  }

  /**
   * Named as every reward line names one: its id, its name and the player (lib/rewards/failures.ts too). Said once
   * per reward and reason, also across runs (remembered in the store, lib/said.ts): cron's `run --once` would
   * otherwise say it every round until the reward is changed at VyHub or the configuration here.
   */
  private refuse(reward: AppliedReward, player: GamePlayer, why: string): undefined {
    const { id } = reward;
    const line = `reward ${id} (${reward.reward.name}) for ${player.name} not executed: ${why}`;
    this.once(`${id} refused`, () => {
      void this.agent.scheduler.run("reward notes", async () => {
        const fresh = await notSaid(this.agent.deps.store, "rewards", [`${id} ${why}`], false);
        if (fresh.length) this.log.warn(line, { applied_reward_id: id });
      });
    });
    return undefined;
  }

  private once(key: string, report: () => void): void {
    if (this.reported.has(key)) return;
    if (this.reported.size >= REPORTED_MAX) this.reported.clear(); // bounded; at worst a line is repeated
    this.reported.add(key);
    report();
  }
}
