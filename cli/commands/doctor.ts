import { defineCommand } from "citty";
import { globalArgs, createContext, serverHeading, type Context } from "../context.ts";
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
      ["hub-agent doctor --server ttt-1", "one server of several (servers.d); without it, every one"],
    ],
  }),
  args: { ...globalArgs },
  async run({ args, data }) {
    const ctx = createContext(args, data);
    const choice = await ctx.servers();
    if (choice.kind !== "all") {
      const r = await checksOf(ctx);
      ctx.emit(jsonOf(r.checks)); // --json: each check with the exit code its failure gives
      say(ctx, r);
      return ctx.exit(exitOf(r.checks));
    }
    // Several servers and no --server: each one's checks under its name.
    const all: Record<string, Check[]> = {};
    for (const server of choice.names) {
      const r = await checksOf(ctx, server);
      all[server] = r.checks;
      ctx.say(serverHeading(server));
      say(ctx, r);
    }
    ctx.emit({ servers: Object.fromEntries(Object.entries(all).map(([n, c]) => [n, jsonOf(c)])) });
    ctx.exit(
      Object.values(all)
        .map(exitOf)
        .find((code) => code !== EXIT.OK) ?? EXIT.OK,
    );
  },
});

/** Lines printed under a check's own (each escaped on its own, so the breaks between them stay breaks). */
type Checked = { checks: Check[]; below: Map<Check, string[]> };

/** The configuration (of `server`, or the one --server or the layout names), then every check. */
async function checksOf(ctx: Context, server?: string): Promise<Checked> {
  const checks: Check[] = [];
  const below = new Map<Check, string[]>();
  try {
    let exposed: { message: string; fix: string }[] = [];
    const config = await ctx.config({
      warnings: true,
      timePatterns: true,
      exposed: (files) => (exposed = files),
      ...(server ? { server } : {}),
    });
    checks.push((await languageProblem(ctx, config.lang)) ?? { name: "config", status: "ok", message: "valid" });
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
  return { checks, below };
}

/** `lang` as `run` loads it: an unknown name or a file it can't use fails the config check, as `run` would fail. */
async function languageProblem(ctx: Context, lang: string): Promise<Check | undefined> {
  const { MessagesError, loadMessages } = await import("../../lib/messages.ts");
  try {
    await loadMessages(lang, { logger: ctx.logger });
    return undefined;
  } catch (e) {
    if (!(e instanceof MessagesError)) throw e;
    return {
      name: "config",
      status: "fail",
      message: `lang: ${e.message}`,
      fix: "set lang to en, de or the path of a language file",
      kind: "config",
    };
  }
}

const jsonOf = (checks: Check[]) => checks.map(({ kind, ...c }) => (kind ? { ...c, exitCode: EXIT_OF[kind] } : c));

function say(ctx: Context, { checks, below }: Checked): void {
  for (const c of checks) {
    const [first = c.message, ...rest] = below.get(c) ?? [];
    ctx.say(`${MARK[c.status]} ${c.name.padEnd(8)} ${first}`);
    for (const line of rest) ctx.say(line);
    if (c.fix && c.status !== "ok") ctx.say(`  fix: ${c.fix}`);
  }
}

function exitOf(checks: Check[]): ExitCode {
  const failed = checks.find((c) => c.status === "fail");
  return failed?.kind ? EXIT_OF[failed.kind] : failed ? EXIT.FAILURE : EXIT.OK;
}
