/**
 * `game.bridge = "wrapper"`: hub-agent starts the game server as its child and talks to the server's own console
 * (stdin, stdout and stderr); docs/game-consoles.md. The operator's console passes through.
 */
import { constants } from "node:fs";
import { access, stat } from "../../fsio.ts";
import { delimiter, isAbsolute, join, resolve } from "node:path";
import type { Logger } from "../../log.ts";
import type { BridgeKind } from "./kind.ts";

/** `[game.wrapper]`, as validated. */
export interface WrapperSection {
  command?: string[];
  cwd?: string;
  command_pipe?: string;
  user?: string;
  group?: string;
  env: Record<string, string>;
  restart: boolean;
}

export const wrapper: BridgeKind<WrapperSection> = {
  name: "wrapper",
  title: "the wrapped console",
  help: "wrapper (hub-agent starts the server and uses its console)",
  section: "wrapper",
  console: false,
  validate: (raw) => [
    ...(raw.get("game.wrapper.command") === undefined
      ? [
          `${raw.missing("game.wrapper.command")}: game.bridge = "wrapper" (${raw.where("game.bridge")}) needs the server to start`,
        ]
      : []),
    ...(raw.get("game.wrapper.group") !== undefined && raw.get("game.wrapper.user") === undefined
      ? [
          `game.wrapper.group (${raw.where("game.wrapper.group")}) needs game.wrapper.user: set the user the server runs as, or remove the group`,
        ]
      : []),
  ],
  async create({ section, preset, deps, consoleCommands }) {
    const { WrappedServer, interceptWords } = await import("../wrap/wrapped-server.ts");
    const ready = preset.lines.ready?.[0];
    const output = deps.output === undefined ? process.stdout : deps.output;
    const w = new WrappedServer({
      command: required(section.command, "game.wrapper.command"),
      ...(section.cwd ? { cwd: section.cwd } : {}),
      ...(section.command_pipe ? { commandPipe: section.command_pipe } : {}),
      ...(section.user !== undefined ? { user: section.user } : {}),
      ...(section.group !== undefined ? { group: section.group } : {}),
      env: section.env,
      ...(preset.commands.stop ? { stopCommand: preset.commands.stop } : {}),
      ...(ready ? { ready } : {}),
      ...(preset.echo ? { echo: preset.echo } : {}),
      ...(preset.stdinReadBytes ? { readBytes: preset.stdinReadBytes } : {}),
      ...(preset.replyQuietMs ? { quietMs: preset.replyQuietMs } : {}),
      ...(section.restart ? { restart: {} } : {}),
      input: deps.input ?? process.stdin,
      ...(output ? { output: surviveErrors(output, deps.logger) } : {}),
      ...(deps.redact ? { redact: deps.redact } : {}),
      // The operator's ban/unban/warn/warns typed at the console go to the service, not the game.
      intercept: interceptWords(consoleCommands),
      clock: deps.clock,
      logger: deps.logger,
    });
    return { transport: w.transport, process: w, sources: [w.supervisor] };
  },
  // The server is not started: doctor must not take a second copy of the game's ports.
  async check({ section, preset }) {
    const argv = section.command ?? [];
    const program = argv[0] ?? "";
    const cwd = section.cwd ?? process.cwd();
    const found = await findExecutable(program, cwd);
    if (!found) {
      return {
        name: "game",
        status: "fail",
        message: `game.wrapper.command: ${JSON.stringify(program)} is not an executable file${program.includes("/") ? "" : " on PATH"}`,
        fix: "give the full path to the dedicated server (or its start script) as the first element, and make it executable (chmod +x)",
        kind: "failure",
      };
    }
    const { WrapperSetupError } = await import("../wrap/setup-error.ts");
    const { resolveRunAs } = await import("../wrap/run-as.ts");
    const { checkCommandPipe } = await import("../wrap/command-pipe.ts");
    let as = "";
    try {
      const runAs = section.user !== undefined ? await resolveRunAs(section.user, section.group) : undefined;
      if (runAs) as = ` as ${runAs.name}`;
      const refused = section.command_pipe ? await checkCommandPipe(section.command_pipe, runAs?.uid) : undefined;
      if (refused) throw refused;
    } catch (e) {
      if (!(e instanceof WrapperSetupError)) throw e;
      return { name: "game", status: "fail", message: e.problem, fix: e.fix, kind: "failure" };
    }
    const stop = preset.commands.stop ? `stops it with "${preset.commands.stop}"` : "stops it with SIGTERM";
    const pipe = section.command_pipe ? `, writes its commands to ${section.command_pipe}` : "";
    return {
      name: "game",
      status: "ok",
      message: `hub-agent run starts ${found} (${preset.title})${as} in ${cwd}${pipe} and ${stop}`,
    };
  },
};

async function findExecutable(program: string, cwd: string): Promise<string | undefined> {
  if (!program) return undefined;
  const candidates = program.includes("/")
    ? [isAbsolute(program) ? program : resolve(cwd, program)]
    : (process.env.PATH ?? "").split(delimiter).map((dir) => join(dir, program));
  for (const path of candidates) {
    try {
      if (!(await stat(path)).isFile()) continue;
      await access(path, constants.X_OK);
      return path;
    } catch {
      // next
    }
  }
  return undefined;
}

const guarded = new WeakSet<NodeJS.WritableStream>();

/** A closed stdout (`hub-agent run | head`, a gone terminal) must not end the agent: the copy stops, one warning. */
function surviveErrors(stream: NodeJS.WritableStream, logger: Logger): NodeJS.WritableStream {
  if (guarded.has(stream)) return stream;
  guarded.add(stream);
  let warned = false;
  stream.on("error", (e: Error) => {
    if (warned) return;
    warned = true;
    logger.withTag("wrapper").warn(`the server's console is no longer copied to the output: ${e.message}`);
  });
  return stream;
}

function required<T>(value: T | undefined, key: string): T {
  if (value === undefined) throw new Error(`${key} is missing`);
  return value;
}
