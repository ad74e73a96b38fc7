import { afterEach, describe, expect, test } from "bun:test";
import { adverts } from "../../lib/features/adverts.ts";
import type { SimAction } from "../../lib/game/sim.ts";
import { harness, type Harness } from "./harness.ts";

let h: Harness;
afterEach(() => h?.close());
const broadcasts = () => h.sim.actionsOf("broadcast").map((a: SimAction) => a.text);

/** One advert interval later, with the round finished. */
async function tick() {
  await h.idle();
  await h.clock.advance(180_000);
  await h.idle();
}

describe("adverts (rule 15)", () => {
  test("enabled adverts of the bundle rotate every interval, one chat line per line, with the prefix", async () => {
    h = await harness({ features: [adverts] });
    h.sb.state.addAdvert({ title: "Off", content: "never shown", enabled: false, serverbundle_ids: [h.sb.bundleId] });
    await h.agent.start();
    expect(broadcasts()).toEqual([]); // the first one comes after one interval
    await tick();
    expect(broadcasts()).toEqual(["[★] Join our Discord: discord.gg/example"]);
    await tick();
    expect(broadcasts().slice(1)).toEqual(["[★] Support the server!", "[★] Type !shop to open the shop."]);
    await tick();
    expect(broadcasts().at(-1)).toBe("[★] Join our Discord: discord.gg/example"); // wraps with no silent tick
  });

  test("colour tags become the game's codes; the last list keeps rotating while the service is down", async () => {
    h = await harness({ features: [adverts] });
    Object.assign(h.sim.caps, { colours: "quake" });
    await h.agent.start();
    await tick();
    // A Quake console shows bytes, not UTF-8: the language file's ASCII prefix.
    expect(broadcasts()).toEqual(["[*] Join our Discord: ^4discord.gg/example^7"]);
    await h.sb.control.down();
    await tick();
    expect(broadcasts().at(-1)).toBe("[*] Type ^2!shop^7 to open the shop.");
    expect(h.logger.lines.some((l) => l.msg.startsWith("adverts not refreshed"))).toBe(true);
  });

  test("an advert disabled at the service disappears from the rotation at the next refresh", async () => {
    h = await harness({ features: [adverts] });
    await h.agent.start();
    await tick();
    for (const a of h.sb.state.adverts.values()) if (a.title === "Shop") a.enabled = false;
    await tick();
    await tick();
    expect(broadcasts()).toEqual([
      "[★] Join our Discord: discord.gg/example",
      "[★] Join our Discord: discord.gg/example",
      "[★] Join our Discord: discord.gg/example",
    ]);
  });
});

describe("adverts switched off or far apart", () => {
  for (const [value, what] of [
    ["0", "off"],
    ["604800", "at the longest interval"],
  ] as const)
    test(`intervals.adverts = ${value} (${what}): no advert and no storm over ten minutes`, async () => {
      h = await harness({ features: [adverts], env: { HUB_INTERVALS_ADVERTS: value } });
      await h.agent.start();
      for (let i = 0; i < 10; i++) await h.clock.advance(60_000);
      await h.idle();
      expect(broadcasts()).toEqual([]);
      expect(h.sb.control.requests({ method: "GET", path: "/advert/" })).toEqual([]);
      const off = h.logger.lines.some((l) => l.msg === "adverts are off (intervals.adverts = 0)");
      expect(off).toBe(value === "0");
    });
});
