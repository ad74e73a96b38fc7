import { defineCommand } from "citty";
import { globalArgs, createContext } from "../context.ts";
import { CliError, EXIT, type ExitCode } from "../exit.ts";
import type { Check, FailureKind } from "../../lib/doctor.ts";
import { helpMeta } from "../args.ts";

const MARK = { ok: "✔", warn: "!", fail: "✘", skipped: "-" } as const;
const EXIT_OF: Record<FailureKind, ExitCode> = {
  config: EXIT.CONFIG,
  unreachable: EXIT.UNREACHABLE,
  store: EXIT.STORE,
  failure: EXIT.FAILURE,
};

export default defineCommand({
  meta: helpMeta({
    examples: [
      ["hub-agent doctor", "check ./hub-agent.toml, the storage, the service, the key and the clock"],
      ["hub-agent doctor --config /etc/hub-agent/hub-agent.toml", "another configuration file"],
    ],
  }),
  args: { ...globalArgs },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const checks: Check[] = [];
    /** Lines printed under a check's own (each escaped on its own, so the breaks between them stay breaks). */
    const below = new Map<Check, string[]>();
    try {
      let exposed: { message: string; fix: string }[] = [];
      const config = await ctx.config({ warnings: true, timePatterns: true, exposed: (files) => (exposed = files) });
      checks.push({ name: "config", status: "ok", message: "valid" });
      for (const f of exposed) checks.push({ name: "config", status: "warn", message: f.message, fix: f.fix });
      const { runChecks } = await import("../../lib/doctor.ts");
      checks.push(...(await runChecks(config, { logger: ctx.logger.withTag("api") })));
    } catch (e) {
      if (!(e instanceof CliError) || e.code !== EXIT.CONFIG) throw e;
      const check: Check = {
        name: "config",
        status: "fail",
        message: [e.message, ...e.details].join("\n    "),
        fix: "fix the keys named above (`hub-agent init` writes a commented template)",
        kind: "config",
      };
      checks.push(check);
      below.set(check, [e.message, ...e.details.map((d) => `    ${d}`)]);
    }
    // --json: each check with the exit code its failure gives.
    ctx.emit(checks.map(({ kind, ...c }) => (kind ? { ...c, exitCode: EXIT_OF[kind] } : c)));
    for (const c of checks) {
      const [first = c.message, ...rest] = below.get(c) ?? [];
      ctx.say(`${MARK[c.status]} ${c.name.padEnd(8)} ${first}`);
      for (const line of rest) ctx.say(line);
      if (c.fix && c.status !== "ok") ctx.say(`  fix: ${c.fix}`);
    }
    const failed = checks.find((c) => c.status === "fail");
    ctx.exit(failed?.kind ? EXIT_OF[failed.kind] : failed ? EXIT.FAILURE : EXIT.OK);
  },
});
