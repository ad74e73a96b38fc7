/**
 * The demo's timeline: players of the simulated game joining, chatting, dying and leaving, played on the real clock
 * by `hub-agent demo`.
 */
import type { Clock } from "../clock.ts";
import type { GamePlayer } from "../game/bridge.ts";
import type { SimGame } from "../game/sim.ts";
import { silentLogger, type Logger } from "../log.ts";

export interface TimelineStep {
  /** Milliseconds from the start of the timeline. */
  at: number;
  do: (sim: SimGame) => void;
}

export interface Timeline {
  steps: TimelineStep[];
  /** With `loop`, the timeline restarts this long after its start. */
  period: number;
}

/**
 * Plays a timeline on the sim until it ends (or forever with `loop`), stopping quietly when `signal` aborts.
 * A step that no longer fits (the agent kicked that player already) is skipped with a debug line.
 */
export async function playTimeline(
  sim: SimGame,
  timeline: Timeline,
  o: { clock: Clock; signal?: AbortSignal; loop?: boolean; logger?: Logger },
): Promise<void> {
  const log = (o.logger ?? silentLogger).withTag("sim");
  const steps = [...timeline.steps].sort((a, b) => a.at - b.at);
  try {
    do {
      const start = o.clock.now();
      for (const step of steps) {
        await o.clock.sleep(start + step.at - o.clock.now(), o.signal);
        try {
          step.do(sim);
        } catch (err) {
          log.debug("timeline step skipped", { error: String(err) });
        }
      }
      await o.clock.sleep(start + timeline.period - o.clock.now(), o.signal);
    } while (o.loop);
  } catch (err) {
    if (o.signal?.aborted) return;
    throw err;
  }
}

/** The demo's players: Alice, Bob and Carol from the in-memory service's seed data, plus two unknown newcomers. */
export const DEMO_PLAYERS = {
  alice: { id: "76561198012345671", name: "Alice" },
  bob: { id: "76561198087654322", name: "Bob" },
  carol: { id: "76561198123456783", name: "Carol" },
  dave: { id: "76561198234567894", name: "Dave" },
  erin: { id: "76561198345678905", name: "Erin" },
} as const satisfies Record<string, GamePlayer>;

/**
 * About 20 s: Alice (a VIP reward waiting) and Dave (new) join, Carol (an admin) joins, Bob (banned in the seed) is
 * kicked at once, `!dashboard` is answered, Dave spawn-kills Erin and Carol bans him from the chat, everyone else
 * leaves. The intro of `hub-agent demo` (cli/commands/demo.ts) tells this story: keep them in step.
 */
export function demoTimeline(): Timeline {
  const { alice, bob, carol, dave, erin } = DEMO_PLAYERS;
  const s = (at: number, fn: (sim: SimGame) => void): TimelineStep => ({ at, do: fn });
  return {
    period: 22_000,
    steps: [
      s(0, (sim) => sim.join({ ...alice, extra: { Score: 0, Deaths: 0 } })),
      s(1_500, (sim) => sim.spawn(alice.id)),
      s(2_500, (sim) => sim.join({ ...dave })),
      s(3_000, (sim) => sim.join({ ...carol })),
      s(3_500, (sim) => sim.spawn(dave.id)),
      s(4_500, (sim) => sim.chat(alice.id, "!dashboard")),
      s(6_000, (sim) => sim.join({ ...bob })),
      s(7_500, (sim) => sim.death(dave.id, alice.id)),
      s(8_500, (sim) => sim.join({ ...erin })),
      s(9_000, (sim) => sim.spawn(dave.id)),
      s(9_500, (sim) => sim.spawn(erin.id)),
      s(10_000, (sim) => sim.chat(erin.id, "hello everyone")),
      s(10_500, (sim) => sim.death(erin.id, dave.id)),
      s(11_000, (sim) => sim.spawn(erin.id)),
      s(11_500, (sim) => sim.death(erin.id, dave.id)),
      s(12_500, (sim) => sim.chat(carol.id, "!ban Dave 30m spawn killing")),
      s(14_000, (sim) => sim.death(alice.id)),
      s(15_000, (sim) => sim.spawn(alice.id)),
      s(16_500, (sim) => sim.leave(erin.id, "Disconnect by user.")),
      // Skipped when Carol's ban has kicked him (as it should have).
      s(18_000, (sim) => sim.leave(dave.id, "Disconnect by user.")),
      s(19_000, (sim) => sim.leave(carol.id, "Disconnect by user.")),
      s(19_500, (sim) => sim.leave(bob.id, "Disconnect by user.")),
      s(20_500, (sim) => sim.leave(alice.id, "Disconnect by user.")),
    ],
  };
}
