import { defineCommand } from "citty";
import { globalArgs, createContext, type Context } from "../context.ts";
import { CliError, EXIT, type ExitCode } from "../exit.ts";
import { withSignals } from "../run-signals.ts";
import { loadConfig } from "../../lib/app/config.ts";
import { useRunSettings } from "../../lib/app/runtime.ts";
import { runAgent as serveAgent, startRun, type RunAgentOptions, type RunOutcome } from "../../lib/app/run.ts";
import { helpMeta } from "../args.ts";

export default defineCommand({
  meta: helpMeta({
    examples: [
      ["hub-agent run", "until SIGINT/SIGTERM"],
      [
        "hub-agent run --once --quiet",
        "one round of every job, for cron: 0 all delivered, 6 something waits, 4 no service",
      ],
      ["hub-agent run --once --json", "the same, then one JSON object: each job, each queue, the exit code"],
      ["hub-agent run --config /etc/hub-agent/hub-agent.toml", "another configuration file"],
    ],
  }),
  args: {
    ...globalArgs,
    once: { type: "boolean", description: "one round of every periodic job, then exit (for cron)" },
  },
  async run({ args, data }) {
    // Before anything is opened: a serving run may execute this process again (lib/app/runtime.ts). `--once` is a
    // one-shot round, over in seconds, and keeps the start-up's policy.
    if (!args.once) useRunSettings();
    const ctx = createContext(args, data);
    const choice = await ctx.servers();
    // The only server of servers.d is hosted (a SIGHUP may add more); `--once` runs it alone, as one-shot commands do.
    if (choice.kind === "all" || (choice.kind === "one" && choice.implied && !args.once))
      return runServers(ctx, !!args.once, args.config);
    const config = await ctx.config({ warnings: "changed", timePatterns: true });
    // SIGHUP reads the configuration again (the same file and environment, and the same server's file over them)
    // and applies what can change live.
    const server = choice.kind === "one" ? { server: choice.name } : {};
    const reread = async () => {
      const { env, cwd } = ctx.invocation;
      if (choice.kind === "single") await saidNewServers(ctx, args.config);
      const result = await loadConfig({ file: args.config, env, cwd, timePatterns: true, ...server });
      for (const secret of result.secrets) ctx.secret(secret); // a new key or password never reaches the log
      return result;
    };
    const once = !!args.once;
    const outcome = await withSignals({ logger: ctx.logger, hangup: true }, (control) =>
      startRun({ config, logger: ctx.logger, control, once, reread, copyConsole: !ctx.json, redact: ctx.redact }),
    );
    const { code, result, error } = exitOf(outcome);
    // --once --json: one object on stdout, the round's summary with the exit code (an error too, instead of the
    // runner's {"error": …}); the error's line still goes to the log.
    const summary = "summary" in outcome ? outcome.summary : undefined;
    if (once && ctx.json && summary) {
      if (error) ctx.logger.error(error);
      ctx.emit({ exit_code: code, result, error, ...summary });
    } else if (error) throw new CliError(error, code);
    ctx.exit(code);
  },
});

/**
 * SIGHUP of a run of the shared file alone (no server in servers.d at its start) after servers.d got servers: this
 * run cannot become a host, so it says a restart hosts them (rather than "valid and unchanged" alone).
 */
async function saidNewServers(ctx: Context, file: string | undefined): Promise<void> {
  const { env, cwd } = ctx.invocation;
  const { hostServers } = await import("../../lib/app/servers.ts");
  const list = await hostServers({ file, env, cwd }).catch(() => undefined);
  if (list?.names.length)
    ctx.logger.warn(
      `SIGHUP: ${list.dir} now holds servers (${list.names.join(", ")}): this run goes on as the shared file's one server; a restart (systemctl restart hub-agent) hosts them`,
    );
}

/** Every server of servers.d in one process (lib/app/host.ts); `--once` takes one server (--server). */
async function runServers(ctx: Context, once: boolean, file: string | undefined): Promise<void> {
  if (once)
    throw new CliError(
      "run --once runs one server: name it with --server <name> (one cron line per server)",
      EXIT.USAGE,
    );
  const { env, cwd } = ctx.invocation;
  const [{ runHost }, { hostServers, sharedStoreDir }] = await Promise.all([
    import("../../lib/app/host.ts"),
    import("../../lib/app/servers.ts"),
  ]);
  const load = async (server: string) => {
    const result = await loadConfig({ file, env, cwd, server, timePatterns: true });
    for (const secret of result.secrets) ctx.secret(secret); // a key or password never reaches the log
    return result;
  };
  const outcome = await withSignals({ logger: ctx.logger, hangup: true }, (control) =>
    runHost({
      list: () => hostServers({ file, env, cwd }),
      load,
      logger: ctx.logger,
      control,
      copyConsole: !ctx.json,
      redact: ctx.redact,
      sharedStore: () => sharedStoreDir({ file, env, cwd }),
    }),
  );
  const { code, error } = exitOf(outcome);
  if (error) throw new CliError(error, code);
  ctx.exit(code);
}

/** The run of `demo` (and bench/agent-sim.ts): its signals, then its exit code, or its failure as a CliError. */
export async function runAgent(opts: Omit<RunAgentOptions, "control">): Promise<number> {
  const hangup = !!opts.reread; // without a reread SIGHUP keeps its default action
  const outcome = await withSignals({ logger: opts.logger, hangup }, (control) => serveAgent({ ...opts, control }));
  const { code, error } = exitOf(outcome);
  if (error) throw new CliError(error, code);
  return code;
}

/** A run's outcome as its exit code (README, "Exit codes"), its `result` word for --json, and its error line. */
function exitOf(o: RunOutcome): { code: ExitCode; result: string; error: string | null } {
  switch (o.kind) {
    case "stopped":
      return { code: EXIT.OK, result: "ok", error: null };
    case "once":
      return o.waiting
        ? { code: EXIT.QUEUED, result: "queued", error: null }
        : { code: EXIT.OK, result: "ok", error: null };
    case "unreachable":
      return { code: EXIT.UNREACHABLE, result: "unreachable", error: o.line };
    case "credentials":
      return { code: EXIT.CONFIG, result: "refused", error: o.line };
    case "instance-held":
      return { code: EXIT.INSTANCE, result: "failed", error: o.line };
    case "store-error":
      return { code: EXIT.STORE, result: "failed", error: o.line };
    case "failed":
      return { code: EXIT.FAILURE, result: "failed", error: o.line };
    case "config":
      return { code: EXIT.CONFIG, result: "failed", error: o.line };
  }
}
