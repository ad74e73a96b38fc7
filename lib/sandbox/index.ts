// The in-memory VyHub service: `startSandbox()` for tests, `hub-agent sandbox` and `hub-agent demo`.
import { ControlPanel, type SandboxControl } from "./control.ts";
import { createSandboxHandler as handler } from "./handler.ts";
import { listen, type Listener } from "./listen.ts";
import { SEED_IDS, seedExamples } from "./seed.ts";
import { SandboxState } from "./state.ts";

export type { RequestLogEntry, RequestMatch, SandboxControl } from "./control.ts";
export type { HandlerOptions } from "./handler.ts";
export { EXAMPLES_NOW, SEED_IDS, seedExamples } from "./seed.ts";
export * from "./state.ts";
export { ControlPanel };

export interface SandboxOptions {
  /** 0 = any free port (default). */
  port?: number;
  /** Default "127.0.0.1". */
  hostname?: string;
  /** Default "/sandbox/v1": the service lives under a path, like https://api.vyhub.app/<instance>/v1. */
  basePath?: string;
  /** The Bearer token accepted; default a random one. */
  key?: string;
  /** Default "examples": the data of api-examples.json, its times shifted so its "now" is the clock's start. */
  seed?: "examples" | "empty";
  /** Injected clock (epoch ms) for ban expiry, created_on, etc.; default Date.now. */
  now?: () => number;
  /** Keep only the newest this many requests in `control.requests()` (default: all; long benches bound it). */
  requestLog?: number;
}

export interface Sandbox {
  /** Full base URL incl. the base path, e.g. "http://127.0.0.1:41234/sandbox/v1". */
  url: string;
  key: string;
  /** The seeded server and its bundle (empty seed: a bare bundle and server are still created). */
  serverId: string;
  bundleId: string;
  state: SandboxState;
  control: SandboxControl;
  stop(): Promise<void>;
}

/** A state filled according to `seed`; with "empty" only a bundle and a server exist (the agent needs its server). */
export function createSandboxState(
  seed: "examples" | "empty" = "examples",
  now: () => number = Date.now,
): SandboxState {
  const state = new SandboxState(now);
  if (seed === "examples") seedExamples(state);
  else {
    const bundle = state.addServerbundle({ id: SEED_IDS.serverbundle, name: "Sandbox" });
    state.addServer({ id: SEED_IDS.server, name: "Sandbox server", serverbundle_id: bundle.id });
  }
  return state;
}

/** The web-standard handler, for any runtime's server (Deno.serve, Bun.serve, a test calling it directly). */
export function createSandboxHandler(
  state: SandboxState,
  control: ControlPanel = new ControlPanel(),
  opts: { basePath?: string; key: string },
): (req: Request) => Promise<Response> {
  return handler(state, control, { basePath: (opts.basePath ?? "/sandbox/v1").replace(/\/+$/, ""), key: opts.key });
}

export async function startSandbox(opts: SandboxOptions = {}): Promise<Sandbox> {
  const hostname = opts.hostname ?? "127.0.0.1";
  const basePath = (opts.basePath ?? "/sandbox/v1").replace(/\/+$/, "");
  const key = opts.key ?? `sandbox-${crypto.randomUUID()}`;
  const state = createSandboxState(opts.seed, opts.now);
  const control = new ControlPanel(opts.requestLog);
  const fetch = createSandboxHandler(state, control, { basePath, key });
  let listener: Listener | undefined = listen(hostname, opts.port ?? 0, fetch);
  const port = listener.port;
  control.attach({
    async down() {
      await listener?.stop();
      listener = undefined;
    },
    async up() {
      listener ??= listen(hostname, port, fetch);
    },
  });
  return {
    url: `http://${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}${basePath}`,
    key,
    serverId: SEED_IDS.server,
    bundleId: SEED_IDS.serverbundle,
    state,
    control,
    stop: () => control.down(),
  };
}
