// `hub-agent demo` through the compiled binary: it introduces itself, plays its script once and ends by itself with
// a summary; --json prints only the summary, as one object; --loop goes on until Ctrl-C; --duration N stops at N s.
import { describe, expect, test } from "bun:test";
import { hub, hubBinary, hubInBackground } from "./binary.ts";
import { until } from "../support/until.ts";

/** The summary's row for `label`, e.g. "players joined  5: Alice, …". */
const row = (stdout: string, label: string) =>
  stdout
    .split("\n")
    .find((l) => l.startsWith(`  ${label} `))
    ?.slice(label.length + 2)
    .trim();

async function loopUntilSecondRound() {
  const { proc: p, stdout, stderr } = await hubInBackground(["demo", "--loop"]);
  // The script starts over after about 22 s: Alice joins a second time.
  const rounds = () => (stderr.text().match(/\[game:sim\] Alice joined/g) ?? []).length;
  await until(() => rounds() >= 2, "the script's second round", {
    timeoutMs: 60_000,
    diagnostics: stderr.text,
    abort: () => (p.exitCode === null ? undefined : `demo --loop exited with ${p.exitCode}`),
  });
  p.kill("SIGINT");
  return { code: await p.exited, stdout: await stdout.done, stderr: await stderr.done };
}

describe("hub-agent demo", () => {
  test(
    "introduces itself, plays the script once, ends by itself and sums up; --json, --loop and --duration",
    async () => {
      const [once, json, short, loop] = await Promise.all([
        // A lasting command with its signals: the compiled binary, each in a process of its own.
        hubBinary(["demo"]),
        hubBinary(["demo", "--json"]),
        hubBinary(["demo", "--duration", "2"]),
        loopUntilSecondRound(),
      ]);

      // One script, then a summary of what the reader saw happen.
      expect(once.code).toBe(0);
      expect(once.stdout).toStartWith("hub-agent demo: the agent as it runs beside a game server");
      expect(once.stderr).toContain("[game:sim] Bob was kicked");
      expect(once.stderr).toContain("[game:sim] Dave was kicked");
      expect(row(once.stdout, "players joined")).toBe("5: Alice, Dave, Carol, Bob, Erin");
      expect(row(once.stdout, "kicked")).toBe("2: Bob, Dave");
      expect(row(once.stdout, "bans issued")).toBe("1: Dave for 30m by Carol (spawn killing)");
      expect(row(once.stdout, "rewards run")).toBe("1: VIP rank (in-game) for Alice");
      expect(row(once.stdout, "adverts shown")).toMatch(/^[1-9]\d*: Discord/);
      expect(row(once.stdout, "service")).toMatch(/^\d+ requests \(200: \d+/);
      const took = Number(once.stdout.match(/what happened in (\d+) s:/)?.[1]);
      expect(took).toBeGreaterThanOrEqual(20);
      expect(took).toBeLessThan(40);

      // --json: nothing but one JSON object on stdout; the log stays on stderr.
      expect(json.code).toBe(0);
      const summary = JSON.parse(json.stdout);
      expect(summary.players_joined.map((p: { name: string }) => p.name)).toEqual([
        "Alice",
        "Dave",
        "Carol",
        "Bob",
        "Erin",
      ]);
      expect(summary.kicked.map((k: { name: string }) => k.name)).toEqual(["Bob", "Dave"]);
      expect(summary.kicked[0].reason).toContain("RDM x3");
      expect(summary.bans_issued).toEqual([{ player: "Dave", reason: "spawn killing", length_s: 1800, by: "Carol" }]);
      expect(summary.rewards_run).toEqual([{ player: "Alice", reward: "VIP rank (in-game)", packet: "VIP (30 days)" }]);
      expect(summary.adverts_shown[0]).toBe("Discord");
      expect(summary.requests.total).toBeGreaterThan(10);
      expect(summary.requests.by_endpoint["POST /ban/"]).toBe(1);
      expect(json.stderr).toContain("[bans] kicking a banned player");

      // --duration 2: stopped two seconds in, before Bob (at 6 s) even came.
      expect(short.code).toBe(0);
      expect(short.stdout).toMatch(/what happened in [23] s:/);
      expect(row(short.stdout, "players joined")).toMatch(/^[1-3]: Alice/);
      expect(row(short.stdout, "kicked")).toBe("none");

      // --loop: the script again, until Ctrl-C, which still ends with the summary.
      expect(loop.code).toBe(0);
      expect(row(loop.stdout, "players joined")).toStartWith("5: Alice (2×)");
      expect(loop.stderr).toContain("stopping (SIGINT)");
    },
    { timeout: 90_000 },
  );

  test("a bad --duration is a usage error naming the value", async () => {
    for (const bad of ["0", "soon", "1e9"]) {
      const r = await hub(["demo", "--duration", bad]);
      expect(r.code).toBe(2);
      expect(r.stderr.trim()).toBe(`error: --duration ${bad} is not a number of seconds: use e.g. --duration 20`);
    }
  });
});
